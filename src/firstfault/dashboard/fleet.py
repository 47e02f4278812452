"""Fleet figures: which nodes, devices, host ports and switch ports failures began on.

Counting. Over a window of failure time (a verdict's window end, else its
analysis time: a week back-filled today lands on the days it failed), an
entity (a node, a device such as "node-02/gpu3", a port such as "mlx5_5:1"
or "nvswitch2:30") is counted once
per verdict whose root cause names it (`root`), and once per ambiguous
verdict whose candidates name it (`candidate`). Only causes in the chosen
domains count: by default hardware, network and infrastructure, the ones a
repair crew can act on (a CUDA OOM or a time limit on node-02 says nothing
about node-02). Tables rank by `root`, then `candidate`, then name.

Repeat offenders (the rule, also printed on the page and in the JSON).
Exposure is what makes a count high or low: a node that ran 40 jobs may fail
more than one that ran 2. So, per kind of entity:

- node-jobs J: every verdict in the window counts once for each node its
  workload ran on (failed or not);
- fleet rate p = (root causes of that kind) / J;
- an entity on node n is expected to cause E = p * jobs(n) failures
  (jobs(n): verdicts whose workload ran on n; the fleet's mean when the node
  is unknown);
- it is flagged when root >= 3 and P(Poisson(E) >= root) < 0.05 / m, where m
  is the number of entities of that kind seen in the window: a Bonferroni
  correction, so a whole table of healthy entities has under a 5% chance of
  showing one flag by luck.

For devices and ports, E uses the node's job count: one GPU of eight is
expected to fail less than its node, so this errs towards not flagging.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import BaseModel

from firstfault.dashboard.queries import FleetRows, Hit

DEFAULT_DOMAINS: tuple[str, ...] = ("hardware", "network", "infrastructure")
MIN_REPEAT = 3
ALPHA = 0.05
MAX_BUCKETS = 60

Kind = Literal["nodes", "devices", "host_ports", "switch_ports", "switches", "cables"]
KINDS: tuple[Kind, ...] = ("nodes", "devices", "host_ports", "switch_ports", "switches", "cables")
TITLES: dict[str, str] = {
    "nodes": "Nodes",
    "devices": "GPUs and other devices",
    "host_ports": "Host ports",
    "switch_ports": "Switch ports",
    "switches": "Switches",
    "cables": "Cables",
}

RULE = (
    "Fleet rate p = root causes of this kind / node-jobs in the window (each analysed attempt counts once per "
    f"node it ran on). Expected E = p x jobs on the entity's node. Flagged when root >= {MIN_REPEAT} and "
    f"P(Poisson(E) >= root) < {ALPHA} / m (m = entities of this kind seen in the window; Bonferroni)."
)


class FleetEntry(BaseModel):
    key: str
    node: str | None
    root: int
    candidate: int
    lead: int = 0  # verdicts whose leads (laggard, desync, first exit, stuck frame) name it
    jobs: int  # verdicts in the window whose workload ran on the entity's node
    expected: float  # E of the rule above
    ratio: float | None  # root / E
    p_value: float | None  # P(Poisson(E) >= root)
    repeat_offender: bool
    last_seen: datetime | None
    trend: list[int]  # root + candidate per bucket


class FleetTable(BaseModel):
    kind: Kind
    title: str
    seen: int  # m: entities of this kind seen in the window (any role)
    total_root: int
    rate: float  # p
    flag_below: float  # the p-value an entity must beat (ALPHA / m)
    entries: list[FleetEntry]


class FleetReport(BaseModel):
    since: datetime
    until: datetime
    domains: list[str]
    clusters: list[str] = []  # the clusters counted; empty: all
    bucket_days: int
    buckets: list[datetime]  # start of each trend bucket (UTC)
    verdicts: int  # verdicts analysed in the window (any outcome)
    node_jobs: int  # J
    failures: list[int]  # verdicts per bucket whose cause (or a candidate) is in the domains
    rule: str
    tables: list[FleetTable]

    def table(self, kind: str) -> FleetTable:
        return next(t for t in self.tables if t.kind == kind)


def poisson_tail(k: int, lam: float) -> float:
    """P(X >= k) for X ~ Poisson(lam).

    Summed from k away from the mode, where the terms fall: upward (the tail itself) when k is above lam,
    downward (what lies below k, taken from 1) otherwise. The first term comes from log space (no overflow
    for large counts), the others by the ratio of neighbours, until a term no longer changes the sum: a few
    dozen terms however large k is (a repeat offender's count of hundreds summed each of them before).
    """
    if k <= 0:
        return 1.0
    if lam <= 0:
        return 0.0
    if k > lam:
        i, total = k, 0.0
        term = math.exp(k * math.log(lam) - lam - math.lgamma(k + 1))
        while term > 0.0 and term > total * 1e-17:
            total += term
            i += 1
            term *= lam / i
        return min(1.0, total)
    i, below = k - 1, 0.0
    term = math.exp(i * math.log(lam) - lam - math.lgamma(i + 1))
    while i >= 0 and term > 0.0 and term > below * 1e-17:
        below += term
        term *= i / lam
        i -= 1
    return max(0.0, 1.0 - below)


def port_kind(port: str) -> Kind:
    """NVSwitch links (the store spells them nvswitchN:L / nvswitch-physN:L) are switch ports."""
    return "switch_ports" if port.lower().startswith(("nvswitch", "switch", "sw")) else "host_ports"


def buckets_for(since: datetime, until: datetime) -> tuple[int, list[datetime]]:
    """Whole UTC days from since's midnight, widened so there are at most MAX_BUCKETS."""
    start = since.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    days = max(1, math.ceil((until - start) / timedelta(days=1)))
    size = max(1, math.ceil(days / MAX_BUCKETS))
    count = math.ceil(days / size)
    return size, [start + timedelta(days=i * size) for i in range(count)]


def _bucket(at: datetime, starts: Sequence[datetime], size: int) -> int | None:
    if not starts or at < starts[0]:
        return None
    i = int((at - starts[0]) / timedelta(days=size))
    return i if i < len(starts) else None


def _in(domains: Sequence[str], hit: Hit) -> bool:
    return hit.role == "lead" or any(d in domains for d in hit.domains)


@dataclass(slots=True)
class EntityCount:
    """One entity's counts in the window (only causes in the chosen domains; leads always)."""

    key: str
    node: str | None
    root: int
    candidate: int
    lead: int
    last_seen: datetime | None
    trend: list[int]  # root + candidate per bucket


@dataclass(slots=True)
class KindCounts:
    seen: int  # m: entities of this kind seen in the window (any role)
    total_root: int
    top: list[EntityCount]  # ranked (root, candidate, lead desc; node, key), at most `limit`


@dataclass(slots=True)
class FleetCounts:
    """What a report is computed from: counted in Python (count_rows) or in SQL (fleetsql.fleet_counts)."""

    verdicts: int
    # node -> verdicts in the window whose workload ran on it, for the nodes of the top entries (the rest is
    # summed up in node_jobs and job_nodes: a fleet's 20,000 nodes are not read to rank twenty entries)
    jobs: dict[str, int]
    failures: list[int]  # per bucket: verdicts whose cause (or a candidate) is in the domains
    node_jobs: int  # J: the sum of every node's jobs
    job_nodes: int  # nodes that ran a job in the window
    kinds: dict[Kind, KindCounts] = field(default_factory=dict)


def rank_key(e: EntityCount) -> tuple[int, int, int, str, str]:
    return (-e.root, -e.candidate, -e.lead, e.node or "", e.key)


def _counts(hits: list[Hit], seen: int, starts: list[datetime], size: int, limit: int) -> KindCounts:
    roots: dict[str, set[int]] = defaultdict(set)
    cands: dict[str, set[int]] = defaultdict(set)
    leads: dict[str, set[int]] = defaultdict(set)
    nodes: dict[str, str | None] = {}
    last: dict[str, datetime] = {}
    for h in hits:
        (roots if h.role == "root" else leads if h.role == "lead" else cands)[h.key].add(h.verdict_id)
        nodes.setdefault(h.key, h.node)
        if h.role != "lead" and (h.key not in last or h.at > last[h.key]):
            last[h.key] = h.at
    at_of: dict[int, datetime] = {h.verdict_id: h.at for h in hits}
    entries: list[EntityCount] = []
    for key, node in nodes.items():
        cands[key] -= roots[key]
        trend = [0] * len(starts)
        for vid in roots[key] | cands[key]:
            if (i := _bucket(at_of[vid], starts, size)) is not None:
                trend[i] += 1
        entries.append(EntityCount(key, node, len(roots[key]), len(cands[key]), len(leads[key]), last.get(key),
                                   trend))
    entries.sort(key=rank_key)
    return KindCounts(seen=seen, total_root=sum(len(r) for r in roots.values()), top=entries[:limit])


def count_rows(rows: FleetRows, domains: Sequence[str], starts: list[datetime], size: int,
               limit: int) -> FleetCounts:
    """The counts of a report, from the reference reading (queries.fleet_rows)."""
    jobs: dict[str, int] = defaultdict(int)
    for _vid, _at, wnodes in rows.verdicts:
        for n in set(wnodes):
            jobs[n] += 1
    host_hits = [h for h in rows.ports if _in(domains, h) and port_kind(h.key) == "host_ports"]
    switch_hits = [h for h in rows.ports if _in(domains, h) and port_kind(h.key) == "switch_ports"]
    switch_hits += [h for h in rows.fabric_ports if _in(domains, h)]
    seen_host = {p for p in rows.seen_ports if port_kind(p) == "host_ports"}
    seen_switch_ports = (rows.seen_ports - seen_host) | rows.seen_fabric_ports
    kinds: dict[Kind, KindCounts] = {
        "nodes": _counts([h for h in rows.nodes if _in(domains, h)], len(set(jobs) | {h.key for h in rows.nodes}),
                         starts, size, limit),
        "devices": _counts([h for h in rows.devices if _in(domains, h)], len(rows.seen_devices), starts, size,
                           limit),
        "host_ports": _counts(host_hits, len(seen_host), starts, size, limit),
        "switch_ports": _counts(switch_hits, len(seen_switch_ports), starts, size, limit),
        "switches": _counts([h for h in rows.switches if _in(domains, h)], len(rows.seen_switches), starts, size,
                            limit),
        "cables": _counts([h for h in rows.cables if _in(domains, h)], len(rows.seen_cables), starts, size, limit),
    }
    failures = [0] * len(starts)
    for vid, at, _nodes in rows.verdicts:
        if rows.cause_domains.get(vid, set()) & set(domains) and (i := _bucket(at, starts, size)) is not None:
            failures[i] += 1
    listed = {e.node for k in kinds.values() for e in k.top if e.node}
    return FleetCounts(verdicts=len(rows.verdicts), jobs={n: c for n, c in jobs.items() if n in listed},
                       failures=failures, node_jobs=sum(jobs.values()), job_nodes=len(jobs), kinds=kinds)


def _table(kind: Kind, counts: KindCounts, jobs: dict[str, int], node_jobs: int, mean_jobs: float) -> FleetTable:
    rate = counts.total_root / node_jobs if node_jobs else 0.0
    m = max(1, counts.seen)
    entries: list[FleetEntry] = []
    for e in counts.top:
        r = e.root
        n_jobs = jobs.get(e.node, 0) if e.node else 0
        expected = rate * (n_jobs if e.node and n_jobs else mean_jobs)
        p = poisson_tail(r, expected) if r else None
        entries.append(FleetEntry(
            key=e.key, node=e.node, root=r, candidate=e.candidate, lead=e.lead, jobs=n_jobs,
            expected=round(expected, 4),
            ratio=round(r / expected, 2) if expected > 0 and r else None,
            p_value=p, repeat_offender=r >= MIN_REPEAT and p is not None and p < ALPHA / m,
            last_seen=e.last_seen, trend=e.trend,
        ))
    return FleetTable(kind=kind, title=TITLES[kind], seen=counts.seen, total_root=counts.total_root,
                      rate=round(rate, 6), flag_below=ALPHA / m, entries=entries)


def report_from(counts: FleetCounts, since: datetime, until: datetime, domains: Sequence[str],
                clusters: Sequence[str] = ()) -> FleetReport:
    """The report of one window from its counts (the buckets are buckets_for(since, until))."""
    size, starts = buckets_for(since, until)
    node_jobs = counts.node_jobs
    mean_jobs = node_jobs / counts.job_nodes if counts.job_nodes else 0.0
    tables = [_table(k, counts.kinds[k], counts.jobs, node_jobs, mean_jobs) for k in KINDS if k in counts.kinds]
    return FleetReport(since=since, until=until, domains=list(domains), clusters=list(clusters), bucket_days=size,
                       buckets=starts, verdicts=counts.verdicts, node_jobs=node_jobs, failures=counts.failures,
                       rule=RULE, tables=tables)


def build_report(rows: FleetRows, since: datetime, until: datetime, domains: Sequence[str] | None = None,
                 limit: int = 20) -> FleetReport:
    """The fleet figures for one window (rows from queries.fleet_rows over the same window)."""
    doms = list(domains) if domains else list(DEFAULT_DOMAINS)
    size, starts = buckets_for(since, until)
    return report_from(count_rows(rows, doms, starts, size, limit), since, until, doms)
