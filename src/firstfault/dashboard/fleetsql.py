"""The fleet view's counts, aggregated by the database over the fleet tables.

The same counts as fleet.count_rows over queries.fleet_rows (the reference,
which reads every verdict of the window into Python), from the narrow
fleet_hits and fleet_exposure tables the store writes with each verdict
(store/fleetrows.py): grouping, ranking and the top `limit` happen in SQL,
so a 30-day window of a fleet costs a few index range scans and returns a
few thousand rows, not the window's verdicts. Same SQL on SQLite and
PostgreSQL (domains are a bit mask; day buckets are integer division of the
stored UTC day number).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Engine, and_, case, func, literal, select

from firstfault.dashboard.fleet import EntityCount, FleetCounts, Kind, KindCounts, buckets_for
from firstfault.store import schema as t
from firstfault.store.fleetrows import day_number, domain_mask

# fleet_hits.kind for each table of the report.
KINDS: dict[Kind, str] = {"nodes": "node", "devices": "device", "host_ports": "host_port",
                          "switch_ports": "switch_port"}


def _window(table: Any, since: datetime, until: datetime, clusters: Sequence[str]) -> list[ColumnElement[bool]]:
    conds: list[ColumnElement[bool]] = [table.c.failed_at >= since, table.c.failed_at < until]
    if clusters:
        conds.append(table.c.cluster.in_(list(clusters)))
    return conds


def _key_order(engine: Engine, col: Any) -> Any:
    # Code-point order on both databases (SQLite's BINARY is; a PostgreSQL database may use a locale).
    return col.collate("C") if engine.dialect.name == "postgresql" else col


def fleet_counts(engine: Engine, since: datetime, until: datetime, domains: Sequence[str], limit: int,
                 clusters: Sequence[str] = ()) -> FleetCounts:
    size, starts = buckets_for(since, until)
    first_day = day_number(starts[0])
    h, x, v = t.fleet_hits, t.fleet_exposure, t.verdicts
    mask = domain_mask(domains)
    in_domains = h.c.domains.op("&")(mask) != 0
    hit_window = _window(h, since, until, clusters)
    bucket = ((h.c.failed_day - first_day) // size).label("bucket")
    with engine.connect() as conn:
        verdicts = int(conn.execute(select(func.count()).select_from(v).where(
            *_window(v, since, until, clusters))).scalar_one())
        jobs = {str(n): int(c) for n, c in conn.execute(
            select(x.c.node, func.count()).where(*_window(x, since, until, clusters)).group_by(x.c.node))}
        failures = [0] * len(starts)
        for b, c in conn.execute(select(bucket, func.count()).where(
                *hit_window, h.c.kind == "verdict", in_domains).group_by(bucket)):
            if 0 <= int(b) < len(failures):
                failures[int(b)] += int(c)
        seen = {str(k): int(c) for k, c in conn.execute(
            select(h.c.kind, func.count(func.distinct(h.c.key))).where(*hit_window).group_by(h.c.kind))}
        hit_nodes = {str(k) for (k,) in conn.execute(
            select(h.c.key).where(*hit_window, h.c.kind == "node").distinct())}
        counted = and_(*hit_window, h.c.role.in_(("root", "candidate", "lead")), in_domains)
        totals = {str(k): int(c) for k, c in conn.execute(
            select(h.c.kind, func.count()).where(*hit_window, h.c.role == "root", in_domains).group_by(h.c.kind))}
        kinds: dict[Kind, KindCounts] = {}
        for kind, hk in KINDS.items():
            root = func.sum(case((h.c.role == "root", 1), else_=0)).label("root")
            cand = func.sum(case((h.c.role == "candidate", 1), else_=0)).label("cand")
            lead = func.sum(case((h.c.role == "lead", 1), else_=0)).label("lead")
            node = func.min(h.c.node).label("node")
            last = func.max(case((h.c.role != "lead", h.c.failed_at))).label("last")
            q = (select(h.c.key, node, root, cand, lead, last).where(counted, h.c.kind == hk).group_by(h.c.key)
                 .order_by(root.desc(), cand.desc(), lead.desc(), _key_order(engine, func.coalesce(node, literal(""))),
                           _key_order(engine, h.c.key))
                 .limit(limit))
            top = [EntityCount(str(r.key), r.node, int(r.root), int(r.cand), int(r.lead), r.last, [0] * len(starts))
                   for r in conn.execute(q)]
            if top:
                by_key = {e.key: e for e in top}
                tq = (select(h.c.key, bucket, func.count())
                      .where(*hit_window, h.c.kind == hk, h.c.role.in_(("root", "candidate")), in_domains,
                             h.c.key.in_(list(by_key)))
                      .group_by(h.c.key, bucket))
                for k, b, c in conn.execute(tq):
                    if 0 <= int(b) < len(starts):
                        by_key[str(k)].trend[int(b)] += int(c)
            n_seen = len(set(jobs) | hit_nodes) if kind == "nodes" else seen.get(hk, 0)
            kinds[kind] = KindCounts(seen=n_seen, total_root=totals.get(hk, 0), top=top)
    return FleetCounts(verdicts=verdicts, jobs=jobs, failures=failures, kinds=kinds)
