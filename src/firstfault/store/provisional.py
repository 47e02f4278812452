"""The provisional verdicts' ledger: what the follower sent while an attempt ran, once per attempt and cause.

`watch --follow` (blueprint/follow.py) judges running attempts as their evidence
is written. A provisional verdict is recorded here under (workload id, attempt,
cluster, root-cause category), unique: `record` says whether this cause of this
attempt is new, and writes the follower's read cursor for the attempt in the
same transaction, so a restarted follower neither sends a cause again nor reads
evidence it has judged. When the attempt's final verdict is stored, `settle`
(run inside that verdict's own transaction, VerdictStore.write's `also`) links
each open provisional verdict to it and records whether its cause held.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import ColumnElement, Connection, insert, select, update
from sqlalchemy.exc import IntegrityError

from firstfault import records
from firstfault.model import Verdict
from firstfault.store import schema as t
from firstfault.store.repo import VerdictStore, clean


@dataclass(frozen=True, slots=True)
class ProvisionalRecord:
    id: int
    workload_id: str
    attempt: int
    cluster: str
    ref: str
    category: str
    domain: str
    summary: str
    nodes: tuple[str, ...]
    first_seen: datetime | None
    delivery: str
    sent_at: datetime
    verdict_json: str
    final_verdict_id: int | None
    held: bool | None
    settled_at: datetime | None

    @property
    def verdict(self) -> Verdict:
        return records.decode(self.verdict_json, Verdict)


def _ts(s: str | None) -> datetime | None:
    if not s:
        return None
    try:
        d = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None
    return d if d.tzinfo else d.replace(tzinfo=UTC)


def _record(row: object) -> ProvisionalRecord:
    m = row._mapping  # type: ignore[attr-defined]
    return ProvisionalRecord(
        id=m["id"], workload_id=m["workload_id"], attempt=m["attempt"], cluster=m["cluster"], ref=m["ref"],
        category=m["category"], domain=m["domain"], summary=m["summary"], nodes=tuple(m["nodes"] or ()),
        first_seen=m["first_seen"], delivery=m["delivery"], sent_at=m["sent_at"], verdict_json=m["verdict_json"],
        final_verdict_id=m["final_verdict_id"], held=None if m["held"] is None else bool(m["held"]),
        settled_at=m["settled_at"])


class ProvisionalLedger:
    def __init__(self, store: VerdictStore) -> None:
        self.store = store

    def _key(self, workload_id: str, attempt: int, cluster: str | None) -> list[ColumnElement[bool]]:
        p = t.provisional.c
        return [p.workload_id == clean(workload_id), p.attempt == attempt, p.cluster == (clean(cluster) or "")]

    def sent(self, workload_id: str, attempt: int, cluster: str | None, category: str) -> ProvisionalRecord | None:
        """The provisional verdict recorded for this attempt and cause, if one was."""
        p = t.provisional.c
        q = select(t.provisional).where(*self._key(workload_id, attempt, cluster), p.category == clean(category))
        with self.store.engine.connect() as conn:
            row = conn.execute(q).first()
        return None if row is None else _record(row)

    def record(self, verdict: Verdict, *, cluster: str | None, ref: str, delivery: str,
               cursor: tuple[str, str] | None = None) -> tuple[int, bool]:
        """Record provisional `verdict` (it has a root cause); (its id, whether it is new). With `cursor`
        ((name, value)), the follower's cursor is written in the same transaction."""
        rc = verdict.root_cause
        if rc is None:
            raise ValueError("a provisional verdict is recorded only with a root cause")
        wl = verdict.workload
        values = {"workload_id": clean(wl.id), "attempt": wl.attempt, "cluster": clean(cluster) or "",
                  "ref": clean(ref) or "", "category": clean(rc.category), "domain": rc.domain,
                  "summary": clean(rc.summary) or "", "nodes": list(rc.nodes), "first_seen": _ts(rc.first_seen),
                  "delivery": delivery, "verdict_json": records.dumps(verdict), "sent_at": self.store._clock()}
        p = t.provisional.c
        for retry in range(3):
            try:
                with self.store._write_tx() as conn:
                    found = conn.execute(select(p.id).where(*self._key(wl.id, wl.attempt, cluster),
                                                            p.category == values["category"])).scalar_one_or_none()
                    new = found is None
                    if found is None:
                        pk = conn.execute(insert(t.provisional).values(values)).inserted_primary_key
                        assert pk is not None
                        found = int(pk[0])
                    if cursor is not None:
                        self.store.put_cursor(conn, *cursor)
                    return int(found), new
            except IntegrityError:  # another follower recorded the same cause at the same moment
                if retry == 2:
                    raise
        raise AssertionError("unreachable")

    def open_for(self, workload_id: str, attempt: int, cluster: str | None) -> list[ProvisionalRecord]:
        """The attempt's provisional verdicts that no final verdict has settled yet, oldest first."""
        p = t.provisional.c
        q = (select(t.provisional).where(*self._key(workload_id, attempt, cluster), p.settled_at.is_(None))
             .order_by(p.id))
        with self.store.engine.connect() as conn:
            return [_record(r) for r in conn.execute(q)]

    def settle(self, conn: Connection, held: Mapping[int, bool], verdict_id: int) -> None:
        """Inside the final verdict's transaction: each provisional verdict (id -> held) is superseded by it."""
        now = self.store._clock()
        p = t.provisional.c
        for pid, ok in held.items():
            conn.execute(update(t.provisional).where(p.id == pid, p.settled_at.is_(None))
                         .values(final_verdict_id=verdict_id, held=ok, settled_at=now))

    def running(self, limit: int = 50) -> list[ProvisionalRecord]:
        """Provisional verdicts of attempts that have no final verdict yet (the dashboard's running list)."""
        p = t.provisional.c
        q = select(t.provisional).where(p.settled_at.is_(None)).order_by(p.sent_at.desc(), p.id.desc()).limit(limit)
        with self.store.engine.connect() as conn:
            return [_record(r) for r in conn.execute(q)]

    def superseded_by(self, verdict_id: int) -> list[ProvisionalRecord]:
        p = t.provisional.c
        q = select(t.provisional).where(p.final_verdict_id == verdict_id).order_by(p.id)
        with self.store.engine.connect() as conn:
            return [_record(r) for r in conn.execute(q)]

    def get(self, pid: int) -> ProvisionalRecord | None:
        with self.store.engine.connect() as conn:
            row = conn.execute(select(t.provisional).where(t.provisional.c.id == pid)).first()
        return None if row is None else _record(row)

