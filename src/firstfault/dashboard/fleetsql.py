"""The fleet view's counts, aggregated by the database over the daily rollups and the fleet tables.

The same counts as fleet.count_rows over queries.fleet_rows (the reference,
which reads every verdict of the window into Python). A window is cut in
two: its whole UTC days are read from the daily rollups the store writes
with each verdict (store/rollups.py: a few rows per day and entity), the
partial days at its edges (a window "since 7d" starts mid-day) from the
narrow per-verdict tables fleet_hits / fleet_exposure (store/fleetrows.py),
so the counts are exact for any since/until. Grouping, ranking and the top
`limit` happen in SQL; the same SQL runs on SQLite and PostgreSQL (domains
are a bit mask; day buckets are integer division of the UTC day number).
Entities seen in the window are counted from the keys' day bits
(fleet_key_blocks: a row or two per key for a 30-day window) rather than a
distinct over every key and day of the window.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Select,
    and_,
    case,
    func,
    literal,
    or_,
    select,
    union,
    union_all,
)

from firstfault.dashboard.fleet import EntityCount, FleetCounts, Kind, KindCounts, buckets_for, count_rows
from firstfault.dashboard.queries import fleet_rows
from firstfault.store import schema as t
from firstfault.store.fleetrows import EPOCH, day_number, domain_mask
from firstfault.store.rollups import COUNTED_ROLES, day_masks, has_blocks

# fleet_hits.kind for each table of the report.
KINDS: dict[Kind, str] = {"nodes": "node", "devices": "device", "host_ports": "host_port",
                          "switch_ports": "switch_port", "switches": "switch", "cables": "cable"}


@dataclass(frozen=True, slots=True)
class Span:
    """A window as whole UTC days [lo, hi) (rollups) and the partial edges (fleet tables)."""

    lo: int
    hi: int
    parts: tuple[tuple[datetime, datetime], ...]

    @property
    def whole(self) -> bool:
        return self.lo < self.hi


def _midnight(day: int) -> datetime:
    return EPOCH + timedelta(days=day)


def split(since: datetime, until: datetime) -> Span:
    """[since, until) as the whole UTC days inside it and at most two partial ranges at its edges."""
    if until <= since:
        return Span(0, 0, ())
    lo = day_number(since)
    if _midnight(lo) < since:
        lo += 1
    hi = day_number(until)
    if lo >= hi:  # no whole day inside: all of it from the fleet tables
        return Span(0, 0, ((since, until),))
    parts = []
    if since < _midnight(lo):
        parts.append((since, _midnight(lo)))
    if _midnight(hi) < until:
        parts.append((_midnight(hi), until))
    return Span(lo, hi, tuple(parts))


def _clusters(table: Any, clusters: Sequence[str]) -> list[ColumnElement[bool]]:
    return [table.c.cluster.in_(list(clusters))] if clusters else []


def _days(table: Any, span: Span, clusters: Sequence[str]) -> list[ColumnElement[bool]]:
    return [table.c.failed_day >= span.lo, table.c.failed_day < span.hi, *_clusters(table, clusters)]


def _edges(table: Any, span: Span, clusters: Sequence[str]) -> list[ColumnElement[bool]]:
    c = table.c.failed_at
    return [or_(*(and_(c >= a, c < b) for a, b in span.parts)), *_clusters(table, clusters)]


def _key_order(engine: Engine, col: Any) -> Any:
    # Code-point order on both databases (SQLite's BINARY is; a PostgreSQL database may use a locale).
    return col.collate("C") if engine.dialect.name == "postgresql" else col


def _both(rolled: Select[Any] | None, edges: Select[Any] | None) -> Any:
    parts = [q for q in (rolled, edges) if q is not None]
    return (parts[0] if len(parts) == 1 else union_all(*parts)).subquery()


def fleet_counts(engine: Engine, since: datetime, until: datetime, domains: Sequence[str], limit: int,
                 clusters: Sequence[str] = (), kinds: Sequence[str] | None = None) -> FleetCounts:
    """`kinds`: the report's tables to count (fleet.KINDS, the default: all)."""
    size, starts = buckets_for(since, until)
    with engine.connect() as conn:
        rolled = has_blocks(conn)
    if not rolled:  # a store not yet at 0004_key_blocks (opened without migrating): the reference reading, exact
        counts = count_rows(fleet_rows(engine, since, until, clusters), domains, starts, size, limit)
        if kinds is not None:
            counts.kinds = {k: c for k, c in counts.kinds.items() if k in kinds}
        return counts
    first_day = day_number(starts[0])
    span = split(since, until)
    mask = domain_mask(domains)
    n = len(starts)

    def ranked(conn: Connection, hk: str) -> tuple[list[EntityCount], int]:
        top, total_root = _top(conn, engine, span, clusters, hk, mask, limit, n)
        if top:
            _trends(conn, span, clusters, hk, mask, {e.key: e for e in top}, first_day, size, n)
        return top, total_root

    # Longest first (devices and nodes are the most keys), so that side by side they finish together.
    tasks: dict[object, Callable[[Connection], Any]] = {}
    wanted = {KINDS[k] for k in KINDS if kinds is None or k in kinds}
    for hk in ("device", "node", "host_port", "switch_port", "switch", "cable"):
        if hk not in wanted:
            continue
        tasks[("top", hk)] = partial(ranked, hk=hk)
        tasks[("seen", hk)] = partial(_seen, span=span, clusters=clusters, kind=hk)
    tasks["job_nodes"] = partial(_seen, span=span, clusters=clusters, kind="node", jobs_only=True)
    tasks["totals"] = partial(_totals, span=span, clusters=clusters, mask=mask, first_day=first_day, size=size,
                              buckets=n)
    got = _run(engine, tasks)
    verdicts, node_jobs, failures = got["totals"]
    counted: dict[Kind, KindCounts] = {}
    for kind, hk in KINDS.items():
        if hk in wanted:
            top, total_root = got[("top", hk)]
            counted[kind] = KindCounts(seen=got[("seen", hk)], total_root=total_root, top=top)
    listed = sorted({e.node for k in counted.values() for e in k.top if e.node})
    with engine.connect() as conn:
        jobs = _jobs(conn, span, clusters, listed)
    return FleetCounts(verdicts=verdicts, jobs=jobs, failures=failures, node_jobs=node_jobs,
                       job_nodes=got["job_nodes"], kinds=counted)


# PostgreSQL runs the view's independent statements side by side, each on a pooled connection of its own
# (the figures are read under READ COMMITTED either way: each statement sees its own snapshot). SQLite runs
# them one after the other on one connection (one writer file; an in-memory database is one connection).
FLEET_THREADS = 4


def _run(engine: Engine, tasks: dict[object, Callable[[Connection], Any]]) -> dict[object, Any]:
    if engine.dialect.name != "postgresql":
        with engine.connect() as conn:
            return {key: fn(conn) for key, fn in tasks.items()}

    def one(fn: Callable[[Connection], Any]) -> Any:
        with engine.connect() as conn:
            return fn(conn)

    with ThreadPoolExecutor(max_workers=FLEET_THREADS, thread_name_prefix="fleet") as pool:
        futures = {key: pool.submit(one, fn) for key, fn in tasks.items()}
        return {key: f.result() for key, f in futures.items()}


def _totals(conn: Connection, span: Span, clusters: Sequence[str], mask: int, first_day: int, size: int,
            buckets: int) -> tuple[int, int, list[int]]:
    """(verdicts, node-jobs, failures per bucket) of the window."""
    dv, h, x, v = t.fleet_day_verdicts, t.fleet_hits, t.fleet_exposure, t.verdicts
    verdicts = node_jobs = 0
    failures = [0] * buckets

    def fail(day: int, domains: int, n: int) -> None:
        b = (day - first_day) // size
        if domains & mask and 0 <= b < buckets:
            failures[b] += n

    if span.whole:
        for day, domains, n, jobs in conn.execute(
                select(dv.c.failed_day, dv.c.domains, func.sum(dv.c.verdicts), func.sum(dv.c.node_jobs))
                .where(*_days(dv, span, clusters)).group_by(dv.c.failed_day, dv.c.domains)):
            verdicts += int(n)
            node_jobs += int(jobs)
            fail(int(day), int(domains), int(n))
    if span.parts:
        verdicts += int(conn.execute(select(func.count()).select_from(v).where(
            *_edges(v, span, clusters))).scalar_one())
        node_jobs += int(conn.execute(select(func.count()).select_from(x).where(
            *_edges(x, span, clusters))).scalar_one())
        for day, domains, n in conn.execute(
                select(h.c.failed_day, h.c.domains, func.count()).where(*_edges(h, span, clusters),
                                                                        h.c.kind == "verdict")
                .group_by(h.c.failed_day, h.c.domains)):
            fail(int(day), int(domains), int(n))
    return verdicts, node_jobs, failures


def _seen(conn: Connection, span: Span, clusters: Sequence[str], kind: str, *, jobs_only: bool = False) -> int:
    """Keys of `kind` seen in the window (any fleet_hits row; a node also by a job it ran), or with
    jobs_only the nodes that ran a job.

    Whole days: the keys whose fleet_key_blocks bits (rollups.day_masks) meet the window's days, a row or
    two per key. Partial days: the keys of their fleet_hits rows and the nodes of their fleet_exposure rows.
    """
    kb, h, x = t.fleet_key_blocks, t.fleet_hits, t.fleet_exposure
    parts: list[Select[Any]] = []
    if span.whole:
        bits = kb.c.jobs if jobs_only else kb.c.seen
        parts.append(select(kb.c.key).where(
            kb.c.kind == kind, *_clusters(kb, clusters),
            or_(*(and_(kb.c.block == block, bits.op("&")(mask) != 0)
                  for block, mask in day_masks(span.lo, span.hi)))))
    if span.parts:
        if not jobs_only:
            parts.append(select(h.c.key).where(*_edges(h, span, clusters), h.c.kind == kind))
        if kind == "node":
            parts.append(select(x.c.node.label("key")).where(*_edges(x, span, clusters)))
    if not parts:
        return 0
    keys = union(*parts).subquery() if len(parts) > 1 else parts[0].distinct().subquery()
    return int(conn.execute(select(func.count()).select_from(keys)).scalar_one())


# The most keys a ranking's second pass names in an IN list (ties at the cut-off root count); past it the
# first pass saves nothing and the ranking aggregates every key of the window.
MAX_RANKED_KEYS = 1000


def _hit_rows(span: Span, clusters: Sequence[str], kind: str, mask: int, roles: Sequence[str],
              keys: Sequence[str] | None = None) -> Any:
    """(key, node, role, n, last) of a kind's counted rows in the window, whole days from the rollup and the
    edges from fleet_hits; only `keys` when given. None when the window has neither."""
    dh, h = t.fleet_day_hits, t.fleet_hits
    rolled = edges = None
    if span.whole:
        rolled = select(dh.c.key, func.nullif(dh.c.node, "").label("node"), dh.c.role, dh.c.n, dh.c.last).where(
            dh.c.kind == kind, *_days(dh, span, clusters), dh.c.role.in_(list(roles)),
            dh.c.domains.op("&")(mask) != 0, *([dh.c.key.in_(list(keys))] if keys is not None else []))
    if span.parts:
        edges = select(h.c.key, h.c.node, h.c.role, literal(1).label("n"), h.c.failed_at.label("last")).where(
            h.c.kind == kind, *_edges(h, span, clusters), h.c.role.in_(list(roles)),
            h.c.domains.op("&")(mask) != 0, *([h.c.key.in_(list(keys))] if keys is not None else []))
    if rolled is None and edges is None:
        return None
    return _both(rolled, edges)


def _top(conn: Connection, engine: Engine, span: Span, clusters: Sequence[str], kind: str, mask: int,
         limit: int, buckets: int) -> tuple[list[EntityCount], int]:
    """The `limit` entities of a kind ranked by root, candidate, lead, node, key; and the kind's root total.

    Two passes. The first sums only the root rows per key (one aggregate, the kind's total with it): when
    at least `limit` keys have a root, the top holds only keys whose root reaches the `limit`-th one, R, so
    the full ranking (five aggregates) runs over those keys alone, every key tied at R included. Otherwise
    (fewer roots than rows to show, or too many ties) it ranks every key of the window.
    """
    roots = _hit_rows(span, clusters, kind, mask, ("root",))
    if roots is None:
        return [], 0
    rsum = func.sum(roots.c.n).label("root")
    first = conn.execute(select(roots.c.key, rsum, func.sum(rsum).over().label("total")).group_by(roots.c.key)
                         .order_by(rsum.desc(), _key_order(engine, roots.c.key)).limit(limit + 1)).all()
    total = int(first[0].total) if first else 0
    keys: list[str] | None = None
    if limit > 0 and len(first) >= limit:
        cut = int(first[limit - 1].root)
        if len(first) == limit or int(first[limit].root) < cut:
            keys = [str(r.key) for r in first[:limit]]
        else:  # ties at the cut-off: every key with root >= R
            tied = conn.execute(select(roots.c.key).group_by(roots.c.key).having(func.sum(roots.c.n) >= cut)
                                .limit(MAX_RANKED_KEYS + 1)).scalars().all()
            keys = [str(k) for k in tied] if len(tied) <= MAX_RANKED_KEYS else None
    s = _hit_rows(span, clusters, kind, mask, COUNTED_ROLES, keys)
    root = func.sum(case((s.c.role == "root", s.c.n), else_=0)).label("root")
    cand = func.sum(case((s.c.role == "candidate", s.c.n), else_=0)).label("cand")
    lead = func.sum(case((s.c.role == "lead", s.c.n), else_=0)).label("lead")
    node = func.min(s.c.node).label("node")
    last = func.max(case((s.c.role != "lead", s.c.last))).label("last")
    q = (select(s.c.key, node, root, cand, lead, last).group_by(s.c.key)
         .order_by(root.desc(), cand.desc(), lead.desc(), _key_order(engine, func.coalesce(node, literal(""))),
                   _key_order(engine, s.c.key))
         .limit(limit))
    top = [EntityCount(str(r.key), r.node, int(r.root), int(r.cand), int(r.lead), r.last, [0] * buckets)
           for r in conn.execute(q)]
    return top, total


def _trends(conn: Connection, span: Span, clusters: Sequence[str], kind: str, mask: int,
            by_key: dict[str, EntityCount], first_day: int, size: int, buckets: int) -> None:
    """Root + candidate per bucket of the listed entities (by the rollup's (kind, key, day) index)."""
    dh, h = t.fleet_day_hits, t.fleet_hits
    keys = sorted(by_key)
    rolled = edges = None
    if span.whole:
        rolled = select(dh.c.key, dh.c.failed_day, dh.c.n).where(
            dh.c.kind == kind, dh.c.key.in_(keys), *_days(dh, span, clusters),
            dh.c.role.in_(("root", "candidate")), dh.c.domains.op("&")(mask) != 0)
    if span.parts:
        edges = select(h.c.key, h.c.failed_day, literal(1).label("n")).where(
            h.c.kind == kind, h.c.key.in_(keys), *_edges(h, span, clusters), h.c.role.in_(("root", "candidate")),
            h.c.domains.op("&")(mask) != 0)
    if rolled is None and edges is None:
        return
    s = _both(rolled, edges)
    bucket = ((s.c.failed_day - first_day) // size).label("bucket")
    for k, b, c in conn.execute(select(s.c.key, bucket, func.sum(s.c.n)).group_by(s.c.key, bucket)):
        if 0 <= int(b) < buckets:
            by_key[str(k)].trend[int(b)] += int(c)


def _jobs(conn: Connection, span: Span, clusters: Sequence[str], nodes: list[str]) -> dict[str, int]:
    """Jobs in the window of the listed nodes (those with at least one)."""
    if not nodes:
        return {}
    dk, x = t.fleet_day_keys, t.fleet_exposure
    jobs: dict[str, int] = {}
    if span.whole:
        for n, c in conn.execute(select(dk.c.key, func.sum(dk.c.jobs)).where(
                dk.c.kind == "node", dk.c.key.in_(nodes), *_days(dk, span, clusters)).group_by(dk.c.key)):
            jobs[str(n)] = jobs.get(str(n), 0) + int(c)
    if span.parts:
        for n, c in conn.execute(select(x.c.node, func.count()).where(
                x.c.node.in_(nodes), *_edges(x, span, clusters)).group_by(x.c.node)):
            jobs[str(n)] = jobs.get(str(n), 0) + int(c)
    return {n: c for n, c in jobs.items() if c > 0}
