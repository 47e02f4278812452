"""The actions ledger: every drain / cordon decision, in the verdict store's `actions` table.

The actions layer (firstfault.actions) decides under `ActionLedger.locked()`:
one write transaction that, on PostgreSQL, also holds an advisory lock (on
SQLite, BEGIN IMMEDIATE already admits one writer at a time). So two
Blueprints finishing at the same moment (fifty epilogs after one fabric
fault) take turns: the second one counts the first one's drain against the
hourly limit instead of both seeing "none yet".

No external command runs inside that transaction (a `scontrol` that takes
its time would hold SQLite's write lock, and a concurrent `run` would lose
its verdict to "database is locked"): a node to act on is claimed inside it
(a `pending` record, which counts as done), the command runs after the
commit, and its result settles the claim in a second short transaction.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from sqlalchemy import Connection, func, insert, select, text, update

from firstfault.store import schema as t
from firstfault.store.db import WRITE
from firstfault.store.repo import VerdictStore, clean

# Any constant will do: the same for every firstfault, distinct from the migration lock's.
PG_ACTIONS_LOCK = 0x66666163746E  # "ffactn"

# Outcomes that settle a decision: running the same verdict again changes nothing.
# An `error` (the command failed) is not final: the next run tries again.
FINAL = ("done", "dry_run", "refused", "skipped", "ineligible")
# A node claimed for the action, its command not yet answered (settled to done, skipped or error after it ran).
PENDING = "pending"


@dataclass(frozen=True, slots=True)
class ActionRecord:
    verdict_id: int | None
    kind: str  # drain | cordon
    cluster: str
    target: str  # the node; '' for a decision about the whole verdict
    outcome: str  # done | dry_run | refused | skipped | ineligible | error | pending (claimed, command running)
    dry_run: bool
    category: str | None
    detail: str
    created_at: datetime
    id: int | None = None  # None: not stored (e.g. no ledger to store it in)
    provisional_id: int | None = None  # a decision on a provisional verdict (watch --follow; 0006_provisional)

    def line(self) -> str:
        """One line for a terminal or a log: `drain ffnode1: done: scontrol update ...`."""
        where = f" {self.target}" if self.target else ""
        mode = " (dry run)" if self.dry_run and self.outcome != "dry_run" else ""
        return f"{self.kind}{where}: {self.outcome}{mode}: {self.detail}"


class ActionLedger:
    def __init__(self, store: VerdictStore) -> None:
        self.store = store

    def now(self) -> datetime:
        return self.store._clock()  # the store's clock: tests move both together

    @contextmanager
    def locked(self) -> Iterator[Connection]:
        """One write transaction, serialised against every other firstfault deciding actions."""
        with self.store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": PG_ACTIONS_LOCK})
            yield conn

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A connection for reads outside any write transaction."""
        with self.store.engine.connect() as conn:
            yield conn

    def decided(self, conn: Connection, verdict_id: int | None, kind: str, target: str, dry_run: bool, *,
                provisional_id: int | None = None) -> ActionRecord | None:
        """The settled decision for this verdict (or, with `provisional_id`, this provisional verdict), action
        and node in this mode, if there is one."""
        a = t.actions.c
        which = a.provisional_id == provisional_id if provisional_id is not None else a.verdict_id == verdict_id
        row = conn.execute(
            select(t.actions).where(which, a.kind == kind, a.target == target,
                                    a.dry_run == dry_run, a.outcome.in_(FINAL)).order_by(a.id).limit(1)
        ).first()
        return None if row is None else _record(row)

    def taken(self, conn: Connection, provisional_id: int, kinds: tuple[str, ...],
              outcomes: tuple[str, ...]) -> list[ActionRecord]:
        """Inside the lock: the decisions of these kinds and outcomes already taken on a provisional verdict."""
        a = t.actions.c
        rows = conn.execute(select(t.actions).where(a.provisional_id == provisional_id, a.kind.in_(kinds),
                                                    a.outcome.in_(outcomes)).order_by(a.id)).all()
        return [_record(r) for r in rows]

    def for_provisional(self, provisional_id: int) -> list[ActionRecord]:
        """Every decision taken on a provisional verdict, oldest first."""
        a = t.actions.c
        with self.store.engine.connect() as conn:
            rows = conn.execute(select(t.actions).where(a.provisional_id == provisional_id).order_by(a.id)).all()
        return [_record(r) for r in rows]

    def claim(self, conn: Connection, verdict_id: int | None, kind: str, target: str, since: datetime, *,
              provisional_id: int | None = None) -> ActionRecord | None:
        """A live claim on this node for this verdict (or provisional verdict) made since `since` and not yet
        settled (a run of the same verdict acting at this moment), if there is one."""
        a = t.actions.c
        which = a.provisional_id == provisional_id if provisional_id is not None else a.verdict_id == verdict_id
        row = conn.execute(
            select(t.actions).where(which, a.kind == kind, a.target == target,
                                    a.dry_run.is_(False), a.outcome == PENDING, a.created_at >= since)
            .order_by(a.id.desc()).limit(1)
        ).first()
        return None if row is None else _record(row)

    def taken_since(self, conn: Connection, kind: str, cluster: str, since: datetime,
                    claimed_since: datetime) -> dict[str, tuple[int | None, int | None]]:
        """Nodes this action took out live on this cluster that a node-state snapshot read at `since` may not show,
        with the verdict each was taken for (its id, or its provisional verdict's id): those done since (a
        settled record's time is when its command answered), and those claimed since `claimed_since` whose
        command has not answered yet."""
        a = t.actions.c
        rows = conn.execute(
            select(a.target, a.verdict_id, a.provisional_id).where(
                a.kind == kind, a.cluster == cluster, a.dry_run.is_(False),
                ((a.outcome == "done") & (a.created_at >= since))
                | ((a.outcome == PENDING) & (a.created_at >= claimed_since)))
            .order_by(a.id)
        ).all()
        return {str(r[0]): (r[1], r[2]) for r in rows if r[0]}

    def settle(self, conn: Connection, claim: ActionRecord, outcome: str, detail: str) -> ActionRecord:
        """A claim's result: its record's outcome and detail, and its time: when the command answered."""
        assert claim.id is not None
        detail = clean(detail) or ""
        now = self.now()
        conn.execute(update(t.actions).where(t.actions.c.id == claim.id).values(outcome=outcome, detail=detail,
                                                                                  created_at=now))
        return replace(claim, outcome=outcome, detail=detail, created_at=now)

    def recent(self, conn: Connection, kind: str, cluster: str, since: datetime, outcomes: tuple[str, ...]) -> int:
        a = t.actions.c
        q = select(func.count()).select_from(t.actions).where(
            a.kind == kind, a.cluster == cluster, a.created_at >= since, a.outcome.in_(outcomes))
        return int(conn.execute(q).scalar_one())

    def record(self, conn: Connection, r: ActionRecord) -> ActionRecord:
        r = replace(r, cluster=clean(r.cluster) or "", target=clean(r.target) or "", category=clean(r.category),
                    detail=clean(r.detail) or "", id=None)
        values = {f: getattr(r, f) for f in ("verdict_id", "kind", "cluster", "target", "outcome", "dry_run",
                                             "category", "detail", "created_at")}
        if r.provisional_id is not None:  # a store before 0006_provisional has no such column
            values["provisional_id"] = r.provisional_id
        pk = conn.execute(insert(t.actions).values(values)).inserted_primary_key
        assert pk is not None
        return replace(r, id=int(pk[0]))

    def for_verdict(self, verdict_id: int) -> list[ActionRecord]:
        """Every decision taken on a verdict, oldest first (the dashboard's Actions section)."""
        a = t.actions.c
        with self.store.engine.connect() as conn:
            rows = conn.execute(select(t.actions).where(a.verdict_id == verdict_id).order_by(a.id)).all()
        return [_record(r) for r in rows]


def _record(row: object) -> ActionRecord:
    m = row._mapping  # type: ignore[attr-defined]
    created = m["created_at"]
    return ActionRecord(id=m["id"], verdict_id=m["verdict_id"], kind=m["kind"], cluster=m["cluster"],
                        target=m["target"], outcome=m["outcome"], dry_run=bool(m["dry_run"]),
                        category=m["category"], detail=m["detail"],
                        created_at=created if created.tzinfo else created.replace(tzinfo=UTC),
                        provisional_id=m.get("provisional_id"))
