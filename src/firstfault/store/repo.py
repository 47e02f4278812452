"""VerdictStore: write verdicts once, read them back, count them per node/device/port.

Every write is one transaction: the verdict row, all its child rows and (when
given) the daemon's "processed" mark commit together or not at all, so a
crash (kill -9, power cut) never leaves half a verdict or a verdict the
daemon would write a second time.

Writes are idempotent on (workload id, attempt, catalog sha256, cluster): a
second write of the same key returns the stored id and changes nothing.

Time filters (`since` inclusive, `until` exclusive) apply to `analyzed_at`,
the column lists are sorted by (newest first).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy import ColumnElement, Connection, Engine, and_, case, exists, func, insert, or_, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from firstfault import records
from firstfault.model import Cause, Enrichment, EvidenceItem, Verdict
from firstfault.store import rollups
from firstfault.store import schema as t
from firstfault.store.db import WRITE, StoreError, create_store_engine, migrate
from firstfault.store.fleetrows import failure_time, hit_rows

REPLAY_CAP = 4 << 20  # = firstfault.replay.DEFAULT_CAP (not imported: the store must not load the engine)

Clock = Callable[[], datetime]


def _utcnow() -> datetime:
    return datetime.now(UTC)


class StoreConflict(StoreError):
    """A write refused: its key is stored already for another attempt (window or nodes differ)."""


@dataclass(frozen=True, slots=True)
class ProcessedMark:
    """An ended attempt as the watch daemon names it (e.g. source "slurm", ref "4242")."""

    source: str
    ref: str
    attempt: int


@dataclass(frozen=True, slots=True)
class VerdictSummary:
    """One row of `VerdictStore.list`: what a dashboard table shows."""

    id: int
    workload_id: str
    attempt: int
    scheduler: str
    cluster: str | None
    name: str | None
    terminal_state: str | None
    outcome: str
    attributed_domain: str
    root_category: str | None
    root_summary: str | None
    root_rule: str | None
    first_seen: datetime | None
    window_start: datetime | None
    window_end: datetime | None
    analyzed_at: datetime
    catalog_version: str
    owner: str | None
    links: dict[str, str]
    affected_nodes: tuple[str, ...]
    candidate_categories: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StoredVerdict:
    id: int
    verdict: Verdict
    enrichment: Enrichment
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ReplayEvidence:
    """A verdict's stored replay evidence (firstfault.replay.pack makes it; docs/storage.md, "Catalog replay")."""

    codec: str
    data: bytes
    raw_bytes: int
    truncated: bool
    lines_kept: int
    lines_total: int
    documents_kept: int
    documents_total: int


class ReplayPacker(Protocol):
    """What a writer hands the store with a verdict (firstfault.replay.Captured): packs itself to a cap.

    A protocol, so the store never imports the engine's types (it does not parse evidence).
    """

    def pack(self, verdict: Verdict, cap: int) -> ReplayEvidence | None: ...


@dataclass(frozen=True, slots=True)
class ReplayRecord:
    id: int
    verdict: Verdict
    cluster: str | None
    evidence: ReplayEvidence | None  # None: stored without (before revision 0002_alerts, or capture off)


@dataclass(frozen=True, slots=True)
class FleetCount:
    """How often one node, device or port was where a failure began.

    `root`: verdicts whose root cause names it; `candidate`: ambiguous
    verdicts that list it among the candidates. `last_seen`: the latest
    first-seen time of those causes (analysis time when unknown).
    """

    node: str | None
    key: str  # the node, the device ("node-02/gpu3") or the port ("mlx5_5:1")
    root: int
    candidate: int
    last_seen: datetime | None


@dataclass(frozen=True, slots=True)
class Fleet:
    nodes: list[FleetCount] = field(default_factory=list)
    devices: list[FleetCount] = field(default_factory=list)
    ports: list[FleetCount] = field(default_factory=list)


# ---------------------------------------------------------------------------
# Ports named by cause evidence (host HCA ports, netdevs, NVSwitch ports).
# ---------------------------------------------------------------------------

def port_of(e: EvidenceItem) -> str | None:
    """The host or switch port an evidence item names: the engine's structured `port` (engine/ports.py),
    never a re-reading of the line's text. HCA port "mlx5_5:1", netdev "ibp94s0", NVSwitch link
    "nvswitch2:30", "nvswitch-phys2:30" (Fabric Manager's physical id)."""
    return e.port


# ---------------------------------------------------------------------------
# Verdict -> rows
# ---------------------------------------------------------------------------


def clean(s: str | None) -> str | None:
    """PostgreSQL text cannot hold NUL; log lines sometimes do. Same on both databases."""
    return None if s is None else s.replace("\x00", "\ufffd")


def _ts(s: str | None) -> datetime | None:
    if not s:
        return None
    try:
        d = datetime.fromisoformat(s)
    except ValueError:
        return None  # the document keeps the original string; the column is for sorting only
    return d.replace(tzinfo=UTC) if d.tzinfo is None else d


def _causes(v: Verdict) -> list[tuple[str, int, Cause]]:
    out: list[tuple[str, int, Cause]] = []
    if v.root_cause is not None:
        out.append(("root", 0, v.root_cause))
    out += [("candidate", i, c) for i, c in enumerate(v.candidates)]
    out += [("secondary", i, c) for i, c in enumerate(v.secondary_causes)]
    return out


def _first_seen(v: Verdict) -> datetime | None:
    if v.root_cause is not None:
        return _ts(v.root_cause.first_seen)
    seen = [d for c in v.candidates if (d := _ts(c.first_seen)) is not None]
    return min(seen) if seen else None


def _verdict_row(v: Verdict, enr: Enrichment, now: datetime) -> dict[str, Any]:
    rc = v.root_cause
    return {
        "workload_id": clean(v.workload.id),
        "attempt": v.workload.attempt,
        "scheduler": clean(v.workload.scheduler),
        "cluster": clean(enr.cluster) or "",
        "name": clean(v.workload.name),
        "window_start": _ts(v.workload.window.start),
        "window_end": _ts(v.workload.window.end),
        "terminal_state": clean(v.terminal_state),
        "outcome": v.outcome,
        "attributed_domain": v.attributed_domain,
        "root_category": clean(rc.category) if rc else None,
        "root_summary": clean(rc.summary) if rc else None,
        "root_rule": clean(rc.rule) if rc else None,
        "first_seen": _first_seen(v),
        "catalog_version": clean(v.catalog.version),
        "catalog_sha256": clean(v.catalog.sha256),
        "analyzed_at": _ts(v.analyzed_at) or now,
        "api_version": clean(v.apiVersion),
        "owner": clean(enr.owner),
        "links": dict(enr.links),
        "previous_attempts": list(enr.previous_attempts),
        "verdict_json": records.dumps(v),
        "created_at": now,
        "failed_at": failure_time(_ts(v.workload.window.end), _ts(v.analyzed_at) or now),
    }


CABLE_COLUMNS = ("cable_switch", "cable_switch_port", "cable_node", "cable_port")


def _cable_columns(e: EvidenceItem) -> dict[str, str | None]:
    c = e.cable
    return {"cable_switch": clean(c.switch) if c else None, "cable_switch_port": clean(c.switch_port) if c else None,
            "cable_node": clean(c.node) if c else None, "cable_port": clean(c.port) if c else None}


def _device_node(device: str, cause: Cause) -> str | None:
    if "/" in device:
        return device.split("/", 1)[0]
    return cause.nodes[0] if len(cause.nodes) == 1 else None


def child_rows(v: Verdict, vid: int) -> dict[str, list[dict[str, Any]]]:
    """The child-table rows a verdict is spelled out into (also used by consistency checks)."""
    rows: dict[str, list[dict[str, Any]]] = {tb.name: [] for tb in t.CHILD_TABLES}
    for role, pos, c in _causes(v):
        rows["causes"].append({
            "verdict_id": vid, "role": role, "position": pos, "category": clean(c.category),
            "domain": clean(c.domain), "summary": clean(c.summary), "rule": clean(c.rule),
            "first_seen": _ts(c.first_seen), "recommended_action": clean(c.recommended_action),
            "count": c.count, "nodes": list(c.nodes),
        })
        for d in dict.fromkeys(c.devices):
            rows["devices"].append({"verdict_id": vid, "role": role, "node": clean(_device_node(d, c)),
                                    "device": clean(d)})
    for n in dict.fromkeys(v.affected_nodes):
        rows["affected_nodes"].append({"verdict_id": vid, "node": clean(n)})
    for i, s in enumerate(v.symptoms):
        rows["symptoms"].append({
            "verdict_id": vid, "position": i, "category": clean(s.category), "nodes": list(s.nodes),
            "ranks_count": len(s.ranks), "count": s.count, "first_seen": _ts(s.first_seen),
            "explained_by": clean(s.explained_by),
        })
    for i, e in enumerate(v.evidence):
        rows["evidence"].append({
            "verdict_id": vid, "position": i, "role": e.role, "source": clean(e.source), "node": clean(e.node),
            "file": clean(e.file), "line": e.line, "time": _ts(e.time), "event": clean(e.event),
            "category": clean(e.category), "rank": e.rank, "query": clean(e.query), "text": clean(e.text),
            "port": clean(port_of(e)), **_cable_columns(e),
        })
    for i, cv in enumerate(v.coverage):
        rows["coverage"].append({
            "verdict_id": vid, "position": i, "source": clean(cv.source), "status": cv.status,
            "nodes_seen": cv.nodes_seen, "nodes_expected": cv.nodes_expected, "lines": cv.lines, "files": cv.files,
        })
    for i, er in enumerate(v.errors):
        rows["errors"].append({
            "verdict_id": vid, "position": i, "source": clean(er.source), "file": clean(er.file), "line": er.line,
            "message": clean(er.message),
        })
    return rows


def fleet_rows_of(v: Verdict, vid: int, row: dict[str, Any],
                  children: dict[str, list[dict[str, Any]]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The verdict's fleet_hits and fleet_exposure rows (fleetrows.py), from its row and child rows."""
    return hit_rows(vid, row["failed_at"], row["cluster"], causes=children["causes"], devices=children["devices"],
                    ports=[e for e in children["evidence"] if e["port"] is not None],
                    leads=[records.to_builtins(ld) for ld in v.leads], workload_nodes=v.workload.nodes,
                    cables=[e for e in children["evidence"] if e["cable_switch"] is not None])


def _many(values: str | Sequence[str] | None) -> list[str]:
    if values is None:
        return []
    return [values] if isinstance(values, str) else list(values)


def _prefix(col: Any, prefix: str) -> ColumnElement[bool]:
    # autoescape: categories contain "_", a LIKE wildcard (gpu.fallen_off_bus).
    return or_(col == prefix, col.startswith(prefix + ".", autoescape=True))


class VerdictStore:
    """The verdict database (SQLite or PostgreSQL). Thread-safe: one engine, pooled connections."""

    def __init__(self, engine: Engine, clock: Clock = _utcnow, *, replay_cap: int = REPLAY_CAP) -> None:
        self.engine = engine
        self._clock = clock
        self.replay_cap = replay_cap  # compressed bytes of replay evidence per verdict; 0 keeps none
        self._rollups = False  # the rollup tables are known to exist (see _has_rollups)
        self._blocks = False  # ... and fleet_key_blocks (0004_key_blocks)
        self._cables = False  # ... and the evidence's cable columns (0005_fabric)

    @classmethod
    def open(cls, url: str | URL, *, auto_migrate: bool = True, clock: Clock = _utcnow,
             replay_cap: int = REPLAY_CAP) -> VerdictStore:
        """Connect and bring the schema up to date (a no-op when it already is)."""
        engine = create_store_engine(url)
        if auto_migrate:
            try:
                migrate(engine)
            except SQLAlchemyError as e:
                engine.dispose()
                where = engine.url.render_as_string(hide_password=True)
                raise StoreError(f"cannot open or migrate the verdict store {where}: {e}") from e
            except BaseException:
                engine.dispose()
                raise
        return cls(engine, clock, replay_cap=replay_cap)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> VerdictStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @contextmanager
    def _write_tx(self) -> Iterator[Connection]:
        with self.engine.connect().execution_options(**WRITE) as conn, conn.begin():
            yield conn

    # -- writing ----------------------------------------------------------------

    def write(self, verdict: Verdict, enrichment: Enrichment | None = None, *,
              mark: ProcessedMark | None = None, evidence: ReplayPacker | None = None,
              also: Callable[[Connection, int], None] | None = None) -> int:
        """Store a verdict (and the daemon's processed mark) in one transaction; returns its id.

        Idempotent on (workload id, attempt, catalog sha256, cluster): when the
        key is stored already, the stored id comes back and no verdict row
        changes (a given `mark` is still recorded if it is missing). When the
        stored verdict is for another window or node set, this is another
        attempt under the same key, not a re-analysis: StoreConflict, and
        nothing is written. `evidence` (what the analysis was fed) is packed
        to at most `replay_cap` bytes and stored with a new verdict, for
        `firstfault rules replay`. `also(connection, verdict id)` runs inside the same transaction (the
        follower settles the attempt's provisional verdicts there: store/provisional.py).
        """
        if verdict.provisional:
            raise StoreError(f"workload {verdict.workload.id!r} attempt {verdict.workload.attempt}: a provisional "
                             "verdict is not a stored verdict (the follower records it in store/provisional.py)")
        enr = enrichment or Enrichment()
        packed = None
        if evidence is not None and self.replay_cap > 0:
            packed = evidence.pack(verdict, self.replay_cap)
        # Two writers racing on one key: the loser's INSERT violates the unique
        # key, it rolls back and the retry finds the winner's row.
        for retry in range(3):
            try:
                with self._write_tx() as conn:
                    vid = self._existing(conn, verdict, enr)
                    if vid is not None:
                        self._same_attempt(conn, vid, verdict, enr)
                    if vid is None:
                        vid = self._insert(conn, verdict, enr)
                        if packed is not None:
                            self._insert_evidence(conn, vid, packed)
                    if mark is not None:
                        self._mark(conn, mark, vid)
                    if also is not None:
                        also(conn, vid)
                    return vid
            except IntegrityError:
                if retry == 2:
                    raise
        raise AssertionError("unreachable")

    def _existing(self, conn: Connection, v: Verdict, enr: Enrichment) -> int | None:
        q = select(t.verdicts.c.id).where(
            t.verdicts.c.workload_id == clean(v.workload.id),
            t.verdicts.c.attempt == v.workload.attempt,
            t.verdicts.c.catalog_sha256 == clean(v.catalog.sha256),
            t.verdicts.c.cluster == (clean(enr.cluster) or ""),
        )
        return conn.execute(q).scalar_one_or_none()

    def _same_attempt(self, conn: Connection, vid: int, v: Verdict, enr: Enrichment) -> None:
        """Raises StoreConflict when stored verdict `vid` is for another window or node set than `v`."""
        row = conn.execute(select(t.verdicts.c.window_start, t.verdicts.c.window_end, t.verdicts.c.verdict_json)
                           .where(t.verdicts.c.id == vid)).one()
        stored = records.decode(row.verdict_json, Verdict).workload
        window = (_ts(v.workload.window.start), _ts(v.workload.window.end))
        if (row.window_start, row.window_end) == window and sorted(stored.nodes) == sorted(v.workload.nodes):
            return
        wl = v.workload

        def desc(start: object, end: object, nodes: list[str]) -> str:
            return f"window {start or '?'} .. {end or '?'} on {len(nodes)} node(s)"

        raise StoreConflict(
            f"workload {wl.id!r} attempt {wl.attempt} (cluster {enr.cluster or '-'!r}) is stored already "
            f"(verdict {vid}, {desc(stored.window.start, stored.window.end, stored.nodes)}); this verdict "
            f"({desc(wl.window.start, wl.window.end, wl.nodes)}) was not stored: give the attempt its own id")

    def _insert(self, conn: Connection, v: Verdict, enr: Enrichment) -> int:
        row = _verdict_row(v, enr, self._clock())
        res = conn.execute(insert(t.verdicts).values(row))
        pk = res.inserted_primary_key
        assert pk is not None
        vid = int(pk[0])
        children = child_rows(v, vid)
        for name, rows in children.items():
            if rows and name == t.evidence.name and not self._has_cables(conn):
                # a store not yet at 0005_fabric: the document keeps the cables, and the migration spells
                # them out (the fleet rows below have them already)
                rows = [{k: val for k, val in r.items() if k not in CABLE_COLUMNS} for r in rows]
            if rows:  # executemany: one round trip per table
                conn.execute(insert(t.metadata.tables[name]), rows)
        fleet = fleet_rows_of(v, vid, row, children)
        for table, rows in zip(t.FLEET_TABLES, fleet, strict=True):
            if rows:
                conn.execute(insert(table), rows)
        # 0003_rollup: the fleet view's daily rollups, in this same transaction (store/rollups.py).
        if self._has_rollups(conn):
            if not self._blocks:
                self._blocks = rollups.has_blocks(conn)
            rollups.apply(conn, rollups.deltas({vid: (row["failed_at"], row["cluster"])}, *fleet),
                          blocks=self._blocks)
        return vid

    def _has_cables(self, conn: Connection) -> bool:
        """Whether the evidence table has the cable columns (0005_fabric). Only a yes is remembered."""
        if not self._cables:
            from sqlalchemy import inspect

            self._cables = any(c["name"] == "cable_switch" for c in inspect(conn).get_columns(t.evidence.name))
        return self._cables

    def _has_rollups(self, conn: Connection) -> bool:
        """Whether the store is at 0003_rollup (a store opened without migrating may not be yet; once it is
        migrated, the migration rolls up what was written before). Only a yes is remembered."""
        if not self._rollups:
            from sqlalchemy import inspect

            self._rollups = inspect(conn).has_table(t.fleet_day_verdicts.name)
        return self._rollups

    def _insert_evidence(self, conn: Connection, vid: int, e: ReplayEvidence) -> None:
        conn.execute(insert(t.replay_evidence).values(
            verdict_id=vid, codec=e.codec, data=e.data, raw_bytes=e.raw_bytes, truncated=e.truncated,
            lines_kept=e.lines_kept, lines_total=e.lines_total, documents_kept=e.documents_kept,
            documents_total=e.documents_total, created_at=self._clock()))

    def _mark(self, conn: Connection, m: ProcessedMark, vid: int | None) -> bool:
        values = {"source": m.source, "ref": m.ref, "attempt": m.attempt, "verdict_id": vid,
                  "done_at": self._clock()}
        # RETURNING says whether a row went in (rowcount is not reliable across drivers here).
        if conn.dialect.name == "postgresql":
            pq = postgresql.insert(t.processed).values(values).on_conflict_do_nothing()
            return conn.execute(pq.returning(t.processed.c.ref)).first() is not None
        sq = sqlite.insert(t.processed).values(values).on_conflict_do_nothing()
        return conn.execute(sq.returning(t.processed.c.ref)).first() is not None

    def mark_processed(self, source: str, ref: str, attempt: int, verdict_id: int | None = None) -> bool:
        """Record that an ended attempt is settled; False when it was already (the first mark stays)."""
        with self._write_tx() as conn:
            return self._mark(conn, ProcessedMark(source, ref, attempt), verdict_id)

    def is_processed(self, source: str, ref: str, attempt: int) -> bool:
        q = select(t.processed.c.source).where(
            t.processed.c.source == source, t.processed.c.ref == ref, t.processed.c.attempt == attempt
        )
        with self.engine.connect() as conn:
            return conn.execute(q).first() is not None

    def set_cursor(self, name: str, value: str) -> None:
        with self._write_tx() as conn:
            self.put_cursor(conn, name, value)

    def put_cursor(self, conn: Connection, name: str, value: str) -> None:
        """set_cursor inside a transaction of the caller's."""
        values = {"name": name, "value": value, "updated_at": self._clock()}
        update = {"value": value, "updated_at": values["updated_at"]}
        if conn.dialect.name == "postgresql":
            pq = postgresql.insert(t.cursors).values(values)
            conn.execute(pq.on_conflict_do_update(index_elements=["name"], set_=update))
        else:
            sq = sqlite.insert(t.cursors).values(values)
            conn.execute(sq.on_conflict_do_update(index_elements=["name"], set_=update))

    def cursors(self, prefix: str) -> dict[str, str]:
        """Every cursor whose name starts with `prefix` (the follower's, one per followed attempt)."""
        c = t.cursors.c
        with self.engine.connect() as conn:
            rows = conn.execute(select(c.name, c.value).where(c.name.startswith(prefix, autoescape=True)))
            return {r.name: r.value for r in rows}

    def drop_cursor(self, name: str) -> None:
        from sqlalchemy import delete

        with self._write_tx() as conn:
            conn.execute(delete(t.cursors).where(t.cursors.c.name == name))

    def get_cursor(self, name: str) -> str | None:
        with self.engine.connect() as conn:
            return conn.execute(select(t.cursors.c.value).where(t.cursors.c.name == name)).scalar_one_or_none()

    # -- reading ----------------------------------------------------------------

    def get(self, verdict_id: int) -> Verdict | None:
        with self.engine.connect() as conn:
            doc = conn.execute(
                select(t.verdicts.c.verdict_json).where(t.verdicts.c.id == verdict_id)
            ).scalar_one_or_none()
        return None if doc is None else records.decode(doc, Verdict)

    def find(self, workload_id: str, attempt: int, cluster: str | None = None,
             catalog_sha256: str | None = None) -> int | None:
        """The id of the verdict stored under this key (without a catalog: the newest for any catalog)."""
        v = t.verdicts.c
        q = select(v.id).where(v.workload_id == clean(workload_id), v.attempt == attempt,
                               v.cluster == (clean(cluster) or ""))
        if catalog_sha256:
            q = q.where(v.catalog_sha256 == clean(catalog_sha256))
        with self.engine.connect() as conn:
            return conn.execute(q.order_by(v.analyzed_at.desc(), v.id.desc()).limit(1)).scalar_one_or_none()

    def get_record(self, verdict_id: int) -> StoredVerdict | None:
        """The verdict with what the Blueprint added to it (cluster, links, owner, previous attempts)."""
        v = t.verdicts.c
        q = select(v.verdict_json, v.cluster, v.links, v.owner, v.previous_attempts, v.created_at).where(
            v.id == verdict_id
        )
        with self.engine.connect() as conn:
            row = conn.execute(q).first()
        if row is None:
            return None
        enr = Enrichment(cluster=row.cluster or None, links=dict(row.links or {}), owner=row.owner,
                         previous_attempts=builtins.list(row.previous_attempts or []))
        return StoredVerdict(verdict_id, records.decode(row.verdict_json, Verdict), enr, row.created_at)

    def replay_evidence(self, verdict_id: int) -> ReplayEvidence | None:
        r = t.replay_evidence.c
        q = select(r.codec, r.data, r.raw_bytes, r.truncated, r.lines_kept, r.lines_total, r.documents_kept,
                   r.documents_total).where(r.verdict_id == verdict_id)
        with self.engine.connect() as conn:
            row = conn.execute(q).first()
        return None if row is None else ReplayEvidence(row.codec, bytes(row.data), row.raw_bytes, bool(row.truncated),
                                                       row.lines_kept, row.lines_total, row.documents_kept,
                                                       row.documents_total)

    def replay_records(self, *, since: datetime | None = None,
                       until: datetime | None = None) -> Iterator[ReplayRecord]:
        """Every verdict analysed in [since, until), oldest first, with its replay evidence (one at a time)."""
        from sqlalchemy import inspect

        v = t.verdicts.c
        ids_q = select(v.id).where(*self._where(None, None, None, None, since, until)).order_by(v.analyzed_at, v.id)
        with self.engine.connect() as conn:
            ids = builtins.list(conn.execute(ids_q).scalars())
            # A store not yet migrated to 0002_alerts (opened without auto_migrate) has no evidence at all.
            has_evidence = inspect(conn).has_table(t.replay_evidence.name)
        for vid in ids:
            with self.engine.connect() as conn:
                row = conn.execute(select(v.verdict_json, v.cluster).where(v.id == vid)).first()
            if row is None:  # pruned meanwhile
                continue
            yield ReplayRecord(vid, records.decode(row.verdict_json, Verdict), row.cluster or None,
                               self.replay_evidence(vid) if has_evidence else None)

    def _where(self, outcome: str | Sequence[str] | None, domain: str | Sequence[str] | None,
               category: str | None, node: str | None, since: datetime | None,
               until: datetime | None) -> builtins.list[ColumnElement[bool]]:
        v = t.verdicts.c
        conds: builtins.list[ColumnElement[bool]] = []
        if outcomes := _many(outcome):
            conds.append(v.outcome.in_(outcomes))
        if domains := _many(domain):
            conds.append(v.attributed_domain.in_(domains))
        if category:
            c = t.causes.c
            conds.append(exists().where(c.verdict_id == v.id, c.role.in_(("root", "candidate")),
                                        _prefix(c.category, category)))
        if node:
            a = t.affected_nodes.c
            conds.append(exists().where(a.verdict_id == v.id, a.node == node))
        if since is not None:
            conds.append(v.analyzed_at >= since)
        if until is not None:
            conds.append(v.analyzed_at < until)
        return conds

    def count(self, *, outcome: str | Sequence[str] | None = None, domain: str | Sequence[str] | None = None,
              category: str | None = None, node: str | None = None, since: datetime | None = None,
              until: datetime | None = None) -> int:
        """How many verdicts `list` would page through with the same filters."""
        if category:
            # Driven by the causes alone (their category index), not a semi-join probing every verdict id.
            c = t.causes.c
            picked = and_(c.role.in_(("root", "candidate")), _prefix(c.category, category))
            rest = self._where(outcome, domain, None, node, since, until)
            if not rest:
                q = select(func.count(func.distinct(c.verdict_id))).where(picked)
            else:
                ids = select(c.verdict_id).where(picked).distinct().subquery()
                q = (select(func.count()).select_from(ids.join(t.verdicts, t.verdicts.c.id == ids.c.verdict_id))
                     .where(*rest))
        else:
            q = select(func.count()).select_from(t.verdicts).where(
                *self._where(outcome, domain, category, node, since, until)
            )
        with self.engine.connect() as conn:
            return int(conn.execute(q).scalar_one())

    def list(self, *, outcome: str | Sequence[str] | None = None, domain: str | Sequence[str] | None = None,
             category: str | None = None, node: str | None = None, since: datetime | None = None,
             until: datetime | None = None, limit: int = 100, offset: int = 0) -> builtins.list[VerdictSummary]:
        """Summaries, newest analysis first.

        `category` is a prefix on dotted ids ("gpu.nvlink" matches
        "gpu.nvlink.signal_integrity", not "gpu.nvlinkx") over the root cause
        and ambiguous candidates; `node` matches affected nodes.
        """
        if limit < 0 or offset < 0:
            raise ValueError("limit and offset must not be negative")
        v = t.verdicts.c
        q = (
            select(t.verdicts.c.id, v.workload_id, v.attempt, v.scheduler, v.cluster, v.name, v.terminal_state,
                   v.outcome, v.attributed_domain, v.root_category, v.root_summary, v.root_rule, v.first_seen,
                   v.window_start, v.window_end, v.analyzed_at, v.catalog_version, v.owner, v.links)
            .where(*self._where(outcome, domain, category, node, since, until))
            .order_by(v.analyzed_at.desc(), v.id.desc())
            .limit(limit)
            .offset(offset)
        )
        with self.engine.connect() as conn:
            rows = conn.execute(q).all()
            ids = [r.id for r in rows]
            nodes: dict[int, builtins.list[str]] = {i: [] for i in ids}
            cands: dict[int, builtins.list[str]] = {i: [] for i in ids}
            if ids:
                a = t.affected_nodes.c
                for vid, n in conn.execute(select(a.verdict_id, a.node).where(a.verdict_id.in_(ids))
                                           .order_by(a.verdict_id, a.id)):
                    nodes[vid].append(n)
                c = t.causes.c
                for vid, cat in conn.execute(select(c.verdict_id, c.category)
                                             .where(c.verdict_id.in_(ids), c.role == "candidate")
                                             .order_by(c.verdict_id, c.position)):
                    cands[vid].append(cat)
        return [
            VerdictSummary(
                id=r.id, workload_id=r.workload_id, attempt=r.attempt, scheduler=r.scheduler,
                cluster=r.cluster or None, name=r.name, terminal_state=r.terminal_state, outcome=r.outcome,
                attributed_domain=r.attributed_domain, root_category=r.root_category, root_summary=r.root_summary,
                root_rule=r.root_rule, first_seen=r.first_seen, window_start=r.window_start,
                window_end=r.window_end, analyzed_at=r.analyzed_at, catalog_version=r.catalog_version,
                owner=r.owner, links=dict(r.links or {}), affected_nodes=tuple(nodes[r.id]),
                candidate_categories=tuple(cands[r.id]),
            )
            for r in rows
        ]

    def fleet(self, since: datetime | None = None, until: datetime | None = None) -> Fleet:
        """Per node, device and port: how many verdicts named it the root cause (or a candidate)."""
        v = t.verdicts.c
        window = and_(True, *self._where(None, None, None, None, since, until))
        last = func.max(func.coalesce(v.first_seen, v.analyzed_at))
        a = t.affected_nodes.c
        is_root = v.root_category.is_not(None)
        node_q = (
            select(a.node, func.sum(case((is_root, 1), else_=0)),
                   func.sum(case((v.attributed_domain == "ambiguous", 1), else_=0)), last)
            .join(t.verdicts, v.id == a.verdict_id)
            .where(window, or_(is_root, v.attributed_domain == "ambiguous"))
            .group_by(a.node)
        )
        d = t.devices.c
        dev_q = (
            select(d.node, d.device, self._distinct(d.role == "root", d.verdict_id),
                   self._distinct(d.role == "candidate", d.verdict_id), last)
            .join(t.verdicts, v.id == d.verdict_id)
            .where(window, d.role.in_(("root", "candidate")))
            .group_by(d.node, d.device)
        )
        e = t.evidence.c
        port_q = (
            select(e.node, e.port, self._distinct(e.role == "cause", e.verdict_id),
                   self._distinct(e.role == "candidate", e.verdict_id), last)
            .join(t.verdicts, v.id == e.verdict_id)
            .where(window, e.port.is_not(None), e.role.in_(("cause", "candidate")))
            .group_by(e.node, e.port)
        )
        with self.engine.connect() as conn:
            nodes = [FleetCount(n, n, int(r or 0), int(c or 0), ls) for n, r, c, ls in conn.execute(node_q)]
            devs = [FleetCount(n, dv, int(r), int(c), ls) for n, dv, r, c, ls in conn.execute(dev_q)]
            ports = [FleetCount(n, p, int(r), int(c), ls) for n, p, r, c, ls in conn.execute(port_q)]

        def order(xs: builtins.list[FleetCount]) -> builtins.list[FleetCount]:
            return sorted(xs, key=lambda x: (-x.root, -x.candidate, x.node or "", x.key))

        return Fleet(order(nodes), order(devs), order(ports))

    @staticmethod
    def _distinct(cond: ColumnElement[bool], col: Any) -> Any:
        # A device may appear in two candidates of one verdict: count verdicts, not rows.
        return func.count(func.distinct(case((cond, col))))
