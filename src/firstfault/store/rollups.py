"""The fleet view's daily rollups: written with each verdict, taken back out when verdicts are deleted.

A 30-day fleet window of a large fleet holds hundreds of thousands of
fleet_hits / fleet_exposure rows (store/fleetrows.py); the fleet view reads
these instead, a few rows per day and entity (docs/storage.md, "Rollups"):

- `fleet_day_verdicts` (failed_day, cluster, domains) -> verdicts, node_jobs:
  the window's verdicts, failures per day (`domains` is the verdict's
  cause-domain mask, its "verdict" fleet_hits row; 0 without a cause) and
  the total node-jobs;
- `fleet_day_keys` (kind, key, failed_day, cluster) -> hits, jobs: whether a
  node, device or port was seen on a day (any fleet_hits row, or for a node
  a job it ran: fleet_exposure) and a node's jobs;
- `fleet_day_hits` (kind, failed_day, cluster, key, role, domains, node) ->
  n, last: the root / candidate / lead rows of fleet_hits counted, with the
  latest failure time;
- `fleet_keys` (kind, key): every key ever seen (bounded by the fleet's
  hardware, not by the number of verdicts; never pruned);
- `fleet_key_blocks` (kind, block, key, cluster) -> seen, jobs (0004): the
  days of fleet_day_keys as bits, BLOCK_DAYS days a row, `seen` for every
  row and `jobs` for the rows with jobs. "Entities seen in the window" reads
  one or two rows per key (a 30-day window spans at most two blocks) and
  tests a mask, where fleet_day_keys has a row per key and day (a node is
  on nearly every day).

Every change is an increment, `INSERT ... ON CONFLICT DO UPDATE SET n = n +
excluded.n` (both databases), in the writer's transaction, so it commits
with the verdict or not at all. Concurrent writers: the rows are upserted
table by table in one fixed order and, within a table, in key order, so two
transactions touching the same keys lock them in the same order (no
deadlock), and row locks serialise the increments (none lost). A deletion
(retention) applies the same deltas negated, drops rows that reach zero and
recomputes `last` where the deleted rows may have held it; the day bits of
the keys it touched are recomputed from the fleet_day_keys rows left.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Table, and_, bindparam, case, delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite

from firstfault.store import schema as t
from firstfault.store.fleetrows import day_number

COUNTED_ROLES = ("root", "candidate", "lead")
# Days per fleet_key_blocks row: 63, so that every bit of a day mask is below the sign bit of a 64-bit integer.
BLOCK_DAYS = 63
ENTITY_KINDS = ("node", "device", "host_port", "switch_port", "switch", "cable")

DayVerdictKey = tuple[int, str, int]  # failed_day, cluster, domains
DayKeyKey = tuple[str, str, int, str]  # kind, key, failed_day, cluster
DayHitKey = tuple[str, int, str, str, str, int, str]  # kind, failed_day, cluster, key, role, domains, node


@dataclass(slots=True)
class Deltas:
    """What a set of verdicts adds to (or, negated, takes from) the rollups."""

    keys: set[tuple[str, str]] = field(default_factory=set)
    day_verdicts: dict[DayVerdictKey, list[int]] = field(default_factory=dict)  # [verdicts, node_jobs]
    day_keys: dict[DayKeyKey, list[int]] = field(default_factory=dict)  # [hits, jobs]
    day_hits: dict[DayHitKey, tuple[int, datetime]] = field(default_factory=dict)  # (n, last)

    def empty(self) -> bool:
        return not (self.keys or self.day_verdicts or self.day_keys or self.day_hits)


def deltas(verdicts: Mapping[int, tuple[datetime, str]], hits: Iterable[Mapping[str, Any]],
           exposure: Iterable[Mapping[str, Any]]) -> Deltas:
    """The rollup increments of some verdicts: id -> (failed_at, cluster), and their fleet rows."""
    d = Deltas()
    mask: dict[int, int] = {}
    jobs: dict[int, int] = {}
    for h in hits:
        day, cluster, kind, key = int(h["failed_day"]), str(h["cluster"]), str(h["kind"]), str(h["key"])
        if kind == "verdict":
            mask[int(h["verdict_id"])] = int(h["domains"])
            continue
        d.keys.add((kind, key))
        dk = d.day_keys.setdefault((kind, key, day, cluster), [0, 0])
        dk[0] += 1
        if h["role"] in COUNTED_ROLES:
            hk = (kind, day, cluster, key, str(h["role"]), int(h["domains"]), h["node"] or "")
            at: datetime = h["failed_at"]
            old = d.day_hits.get(hk)
            d.day_hits[hk] = (1, at) if old is None else (old[0] + 1, max(old[1], at))
    for x in exposure:
        vid, node, cluster = int(x["verdict_id"]), str(x["node"]), str(x["cluster"])
        jobs[vid] = jobs.get(vid, 0) + 1
        d.keys.add(("node", node))
        dk = d.day_keys.setdefault(("node", node, day_number(x["failed_at"]), cluster), [0, 0])
        dk[1] += 1
    for vid, (at, cluster) in verdicts.items():
        dv = d.day_verdicts.setdefault((day_number(at), cluster, mask.get(vid, 0)), [0, 0])
        dv[0] += 1
        dv[1] += jobs.get(vid, 0)
    return d


def _insert(conn: Connection, table: Table) -> Any:
    return (postgresql.insert(table) if conn.dialect.name == "postgresql" else sqlite.insert(table))


def _upsert(conn: Connection, table: Table, rows: list[dict[str, Any]], adds: Sequence[str],
            latest: str | None = None) -> None:
    if not rows:
        return
    ins = _insert(conn, table)
    set_: dict[str, Any] = {c: table.c[c] + ins.excluded[c] for c in adds}
    if latest is not None:  # the later of the two (portable: SQLite's max(a, b) is NULL if either is)
        col = table.c[latest]
        set_[latest] = case((ins.excluded[latest] > col, ins.excluded[latest]), else_=col)
    pk = [c.name for c in table.primary_key.columns]
    conn.execute(ins.on_conflict_do_update(index_elements=pk, set_=set_), rows)


def block_of(day: int) -> tuple[int, int]:
    """The fleet_key_blocks block of a UTC day number, and the day's bit in it."""
    return day // BLOCK_DAYS, 1 << (day % BLOCK_DAYS)


def day_masks(lo: int, hi: int) -> list[tuple[int, int]]:
    """(block, mask of its days) covering the UTC days [lo, hi), in block order."""
    out: list[tuple[int, int]] = []
    day = lo
    while day < hi:
        block = day // BLOCK_DAYS
        end = min(hi, (block + 1) * BLOCK_DAYS)
        out.append((block, ((1 << (end - day)) - 1) << (day - block * BLOCK_DAYS)))
        day = end
    return out


def has_blocks(conn: Connection) -> bool:
    """Whether the store is at 0004_key_blocks (fleet_key_blocks exists)."""
    from sqlalchemy import inspect

    return inspect(conn).has_table(t.fleet_key_blocks.name)


def _blocks_added(conn: Connection, d: Deltas) -> None:
    """OR the days of new fleet_day_keys increments into their blocks (rows in key order)."""
    bits: dict[tuple[str, int, str, str], list[int]] = {}
    for (kind, key, day, cluster), (_hits, jobs) in d.day_keys.items():
        block, bit = block_of(day)
        b = bits.setdefault((kind, block, key, cluster), [0, 0])
        b[0] |= bit
        if jobs > 0:
            b[1] |= bit
    if not bits:
        return
    table = t.fleet_key_blocks
    ins = _insert(conn, table)
    set_ = {c: table.c[c].op("|")(ins.excluded[c]) for c in ("seen", "jobs")}
    conn.execute(ins.on_conflict_do_update(index_elements=["kind", "block", "key", "cluster"], set_=set_),
                 [{"kind": k[0], "block": k[1], "key": k[2], "cluster": k[3], "seen": v[0], "jobs": v[1]}
                  for k, v in sorted(bits.items())])


def _blocks_recomputed(conn: Connection, d: Deltas) -> None:
    """After fleet_day_keys rows were decremented (and the empty ones dropped): the blocks they touched,
    rebuilt from what is left there; a block left without a day is deleted."""
    touched = sorted({(k[0], block_of(k[2])[0], k[1], k[3]) for k in d.day_keys})
    if not touched:
        return
    dk, table = t.fleet_day_keys, t.fleet_key_blocks
    # Lock the blocks first, in the writers' order (kind, block, key): a writer that holds one has its day
    # committed before this reads fleet_day_keys (READ COMMITTED: each statement sees what was committed
    # before it); one that comes after ORs its day into what this writes. Without the lock, an UPDATE
    # waiting on a writer's row would then overwrite that writer's bit with a mask read before it committed.
    by_block: dict[tuple[str, int], list[str]] = {}
    for kind, block, key, _cluster in touched:
        by_block.setdefault((kind, block), []).append(key)
    for (kind, block), keys_here in sorted(by_block.items()):
        unique = sorted(set(keys_here))
        for i in range(0, len(unique), 500):
            conn.execute(select(table.c.key).where(table.c.kind == kind, table.c.block == block,
                                                   table.c.key.in_(unique[i:i + 500]))
                         .order_by(table.c.key, table.c.cluster).with_for_update()).all()
    bits: dict[tuple[str, int, str, str], list[int]] = {k: [0, 0] for k in touched}
    by_kind: dict[str, list[tuple[int, str]]] = {}
    for kind, block, key, _cluster in touched:
        by_kind.setdefault(kind, []).append((block, key))
    for kind, blocks_keys in by_kind.items():
        keys = sorted({key for _b, key in blocks_keys})
        lo = min(b for b, _k in blocks_keys) * BLOCK_DAYS
        hi = (max(b for b, _k in blocks_keys) + 1) * BLOCK_DAYS
        for i in range(0, len(keys), 500):
            for key, day, cluster, jobs in conn.execute(
                    select(dk.c.key, dk.c.failed_day, dk.c.cluster, dk.c.jobs).where(
                        dk.c.kind == kind, dk.c.key.in_(keys[i:i + 500]), dk.c.failed_day >= lo,
                        dk.c.failed_day < hi)):
                block, bit = block_of(int(day))
                b = bits.get((kind, block, str(key), str(cluster)))
                if b is not None:
                    b[0] |= bit
                    if int(jobs) > 0:
                        b[1] |= bit
    pk = ("kind", "block", "key", "cluster")
    where = [table.c[c] == bindparam(f"k_{c}") for c in pk]
    kept = [{**{f"k_{c}": v for c, v in zip(pk, k, strict=True)}, "n_seen": b[0], "n_jobs": b[1]}
            for k, b in bits.items() if b[0]]
    gone = [{f"k_{c}": v for c, v in zip(pk, k, strict=True)} for k, b in bits.items() if not b[0]]
    if kept:
        conn.execute(update(table).where(*where).values(seen=bindparam("n_seen"), jobs=bindparam("n_jobs")), kept)
    if gone:
        conn.execute(delete(table).where(*where), gone)


def apply(conn: Connection, d: Deltas, sign: int = 1, *, blocks: bool = True) -> None:
    """Add (sign 1) or take away (sign -1) the deltas, in the writer's transaction.

    Tables in a fixed order, rows in key order (see the module's note on
    concurrent writers). Taking away drops the rows that reach zero; the
    caller recomputes `last` (fix_last) once the verdicts' fleet rows are gone.
    `blocks`: the store has fleet_key_blocks (0004_key_blocks; has_blocks).
    """
    if sign not in (1, -1):
        raise ValueError("sign must be 1 or -1")
    if sign == 1 and d.keys:
        ins = _insert(conn, t.fleet_keys)
        conn.execute(ins.on_conflict_do_nothing(index_elements=["kind", "key"]),
                     [{"kind": k, "key": key} for k, key in sorted(d.keys)])
    dh = [{"kind": k[0], "failed_day": k[1], "cluster": k[2], "key": k[3], "role": k[4], "domains": k[5],
           "node": k[6], "n": sign * n, "last": last} for k, (n, last) in sorted(d.day_hits.items())]
    _upsert(conn, t.fleet_day_hits, dh, ("n",), latest="last" if sign == 1 else None)
    dk = [{"kind": k[0], "key": k[1], "failed_day": k[2], "cluster": k[3], "hits": sign * v[0], "jobs": sign * v[1]}
          for k, v in sorted(d.day_keys.items())]
    _upsert(conn, t.fleet_day_keys, dk, ("hits", "jobs"))
    if blocks and sign == 1:
        _blocks_added(conn, d)
    # Last: every writer of a cluster and day updates this row, so it is held for the shortest time.
    dv = [{"failed_day": k[0], "cluster": k[1], "domains": k[2], "verdicts": sign * v[0], "node_jobs": sign * v[1]}
          for k, v in sorted(d.day_verdicts.items())]
    _upsert(conn, t.fleet_day_verdicts, dv, ("verdicts", "node_jobs"))
    if sign == -1:
        _drop_zeros(conn, t.fleet_day_hits, dh, t.fleet_day_hits.c.n <= 0)
        _drop_zeros(conn, t.fleet_day_keys, dk, and_(t.fleet_day_keys.c.hits <= 0, t.fleet_day_keys.c.jobs <= 0))
        if blocks:
            _blocks_recomputed(conn, d)
        _drop_zeros(conn, t.fleet_day_verdicts, dv, and_(t.fleet_day_verdicts.c.verdicts <= 0,
                                                         t.fleet_day_verdicts.c.node_jobs <= 0))


def _drop_zeros(conn: Connection, table: Table, rows: list[dict[str, Any]], zero: Any) -> None:
    if not rows:
        return
    pk = [c.name for c in table.primary_key.columns]
    stmt = delete(table).where(zero, *(table.c[c] == bindparam(f"k_{c}") for c in pk))
    conn.execute(stmt, [{f"k_{c}": r[c] for c in pk} for r in rows])


def fix_last(conn: Connection, d: Deltas) -> None:
    """After deleting verdicts: where a deleted row may have been the latest of its group, recompute `last`
    from the fleet_hits rows left (retention deletes oldest first, so this rarely changes anything)."""
    if not d.day_hits:
        return
    r, h = t.fleet_day_hits, t.fleet_hits
    keys = ("kind", "failed_day", "cluster", "key", "role", "domains", "node")
    latest = (select(func.max(h.c.failed_at))
              .where(h.c.failed_day == r.c.failed_day, h.c.kind == r.c.kind, h.c.cluster == r.c.cluster,
                     h.c.key == r.c.key, h.c.role == r.c.role, h.c.domains == r.c.domains,
                     func.coalesce(h.c.node, "") == r.c.node)
              .scalar_subquery())
    stmt = (update(r).where(*(r.c[c] == bindparam(f"k_{c}") for c in keys), r.c.last <= bindparam("k_removed"))
            .values(last=latest))
    conn.execute(stmt, [{**{f"k_{c}": v for c, v in zip(keys, k, strict=True)}, "k_removed": last}
                        for k, (_n, last) in sorted(d.day_hits.items())])


def of_verdicts(conn: Connection, ids: Sequence[int]) -> Deltas:
    """The deltas of stored verdicts, read back from their fleet rows (before deleting them)."""
    if not ids:
        return Deltas()
    v, h, x = t.verdicts.c, t.fleet_hits.c, t.fleet_exposure.c
    verdicts = {int(r.id): (r.failed_at, r.cluster) for r in conn.execute(
        select(v.id, v.failed_at, v.cluster).where(v.id.in_(list(ids))))}
    hits = [r._asdict() for r in conn.execute(
        select(h.verdict_id, h.failed_at, h.failed_day, h.cluster, h.kind, h.key, h.node, h.role, h.domains)
        .where(h.verdict_id.in_(list(ids))))]
    exposure = [r._asdict() for r in conn.execute(
        select(x.verdict_id, x.failed_at, x.cluster, x.node).where(x.verdict_id.in_(list(ids))))]
    return deltas(verdicts, hits, exposure)


def remove(conn: Connection, ids: Sequence[int], *, blocks: bool = True) -> Deltas:
    """Take verdicts `ids` out of the rollups (call before deleting them, then fix_last after)."""
    d = of_verdicts(conn, ids)
    apply(conn, d, -1, blocks=blocks)
    return d
