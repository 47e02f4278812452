"""`watch --follow`: attribute attempts while they run, and tie each provisional verdict to the final one.

Every `list_interval` seconds the scheduler says which attempts run (identify's
`running()`); each new one (a new ref, or a ref whose run began anew: a
requeue) is identified once and gets an engine Analysis of its own and a
follower per configured evidence source (collect/follow.py). Every `interval`
seconds each follower feeds what was written since; an attempt that got new
evidence is judged by the same engine, on everything fed so far, as a
provisional verdict (`Analysis.finish(provisional=True)`: outcome `running`;
a cause stands only as engine/verdict.py `provisional_root` says, never from
symptoms alone).

A provisional verdict with a root cause whose category this attempt has not
had one for is sent, in this order: to the outputs that are not the store
(stdout, webhooks, Alertmanager under its provisional alert name), then
recorded in the provisional ledger (one row per attempt and cause, unique;
the attempt's cursor in the same transaction), then handed to the
provisional actions (drain, then requeue or cancel the job; docs/actions.md).
A restart finds the ledger's row and sends nothing again; a crash between
the outputs and the ledger sends it again under the same ids (the webhook
delivery id and the alert's labels are derived from the attempt and the
cause), as `watch` does for final verdicts.

An attempt that leaves the running list stops being followed; its final
verdict is the watch daemon's (blueprint/watch.py), which lists the
provisional verdicts it supersedes and whether each cause held
(`supersedes`), settles them in its own transaction and resolves their
alerts (`settle_provisional` below).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import Context
from firstfault.collect.follow import Follower
from firstfault.identify.base import Identified, IdentifyError, Running, RunningSource
from firstfault.model import Enrichment, Superseded, Verdict, iso
from firstfault.records import replace
from firstfault.sinks.base import Sink
from firstfault.spec import category_matches

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from firstfault.store.actions import ActionRecord
    from firstfault.store.provisional import ProvisionalLedger, ProvisionalRecord
    from firstfault.store.repo import VerdictStore

MakeFollowers = Callable[[Identified, dict[str, Any] | None], list[Follower]]
Log = Callable[[str, dict[str, Any]], None]


class ProvisionalAction:
    """What the follower asks of an action on a provisional verdict (firstfault.actions.actor.Actor)."""

    name: str

    def act_provisional(self, verdict: Verdict, provisional_id: int, ref: str) -> list[ActionRecord]:
        raise NotImplementedError


@dataclass(slots=True)
class Followed:
    """One running attempt: its context, its engine state, its followers, the causes already sent."""

    ref: str
    since: str
    identified: Identified
    analysis: Any  # analysis.analyze.Analysis
    followers: list[Follower]
    cursor_name: str
    sent: set[str] = field(default_factory=set)
    judged: bool = False
    cursor_saved: str = ""
    polls: int = 0


def cursor_name(ledger: str, workload_id: str, attempt: int) -> str:
    return f"follow:{ledger}:{workload_id}#{attempt}"


class FollowDaemon:
    def __init__(
        self,
        *,
        source: RunningSource,
        store: VerdictStore,
        make_followers: MakeFollowers,
        sinks: Sequence[Sink],
        cluster: str,
        ledger: str,
        analyzer: Analyzer | None = None,
        actions: Sequence[ProvisionalAction] = (),
        interval: float = 2.0,
        list_interval: float = 10.0,
        max_attempts: int = 1000,
        log: Log | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        from firstfault.store.provisional import ProvisionalLedger

        self.source = source
        self.store = store
        self.ledger = ProvisionalLedger(store)
        self.make_followers = make_followers
        self.sinks = [s for s in sinks if s.name != "database"]  # provisional verdicts go to the ledger
        self.cluster = cluster
        self.ledger_name = ledger
        self.analyzer = analyzer or Analyzer()
        self.actions = list(actions)
        self.interval = interval
        self.list_interval = list_interval
        self.max_attempts = max_attempts
        self._log = log or (lambda msg, fields: None)
        self._clock = clock
        self.attempts: dict[str, Followed] = {}
        self._listed_at: float | None = None
        self._stop = threading.Event()
        self.sent: list[tuple[Verdict, int]] = []  # what this daemon sent (tests, the bench)

    def stop(self) -> None:
        self._stop.set()

    def log(self, msg: str, **fields: Any) -> None:
        self._log(msg, fields)

    # ------------------------------------------------------------------------------------------------ attempts

    def _refresh(self) -> None:
        try:
            running = self.source.running()
        except IdentifyError as exc:
            self.log(f"follow: cannot list running attempts: {exc}", error=str(exc))
            return
        now_running = {r.ref: r for r in running}
        for ref in [r for r in self.attempts if r not in now_running or now_running[r].since
                    != self.attempts[r].since]:
            self._drop(ref, "ended" if ref not in now_running else "began again")
        stored = self.store.cursors(f"follow:{self.ledger_name}:")
        for r in running:
            if r.ref in self.attempts:
                continue
            if len(self.attempts) >= self.max_attempts:
                self.log(f"follow: {len(running) - len(self.attempts)} running attempt(s) not followed: "
                         f"max_attempts {self.max_attempts} reached", waiting=len(running) - len(self.attempts))
                break
            self._add(r, stored)

    def _add(self, r: Running, stored: dict[str, str]) -> None:
        try:
            identified = self.source.identify(r.ref)
        except IdentifyError as exc:
            self.log(f"follow {r.ref}: cannot identify: {exc}", ref=r.ref, error=str(exc))
            return
        wl = identified.workload
        if wl.terminal_state is not None:
            return  # ended between the two questions: the watch daemon's
        name = cursor_name(self.ledger_name, wl.id, wl.attempt)
        cursor: dict[str, Any] | None = None
        if name in stored:
            try:
                cursor = json.loads(stored[name])
            except ValueError:
                cursor = None
        # The scheduler's documents are the final verdict's: while it runs they say RUNNING, and a document
        # read once would be stale by the next poll.
        analysis = self.analyzer.start(Context.from_spec(wl))
        try:
            followers = self.make_followers(identified, (cursor or {}).get("sources"))
        except Exception as exc:  # a connector that cannot be built: said, and the attempt is not followed
            self.log(f"follow {r.ref}: {type(exc).__name__}: {exc}", ref=r.ref, error=str(exc))
            return
        f = Followed(r.ref, r.since, identified, analysis, followers, name)
        f.sent = {rec.category for rec in self.ledger.open_for(wl.id, wl.attempt, self.cluster)}
        self.attempts[r.ref] = f
        self.log(f"follow {r.ref} attempt {wl.attempt}: following {len(wl.nodes)} node(s)", ref=r.ref,
                 attempt=wl.attempt, nodes=len(wl.nodes), restored=cursor is not None)

    def _drop(self, ref: str, why: str) -> None:
        """Stop following `ref`; unless the daemon is only stopping, its cursor goes too (the attempt ended
        or began again: the final verdict, or a new run, reads its evidence afresh)."""
        f = self.attempts.pop(ref)
        if why != "stopping":
            try:
                self.store.drop_cursor(f.cursor_name)
            except Exception as exc:  # the store is down: the cursor stays, harmless
                self.log(f"follow {ref}: cursor kept: {exc}", ref=ref, error=str(exc))
        for fo in f.followers:
            try:
                fo.close()
            except Exception as exc:  # closing must not stop the others
                self.log(f"follow {ref}: closing {fo.name}: {exc}", ref=ref, error=str(exc))
        self.log(f"follow {ref}: {why}; no longer followed", ref=ref, why=why)

    # ---------------------------------------------------------------------------------------------------- step

    def step(self) -> list[tuple[Verdict, int]]:
        """One round: the running list when due, then every followed attempt's new evidence, judged."""
        tick = time.monotonic()
        if self._listed_at is None or tick - self._listed_at >= self.list_interval:
            self._listed_at = tick
            self._refresh()
        out = []
        for ref in list(self.attempts):
            if self._stop.is_set():
                break
            got = self._poll(self.attempts[ref])
            if got is not None:
                out.append(got)
        return out

    def _poll(self, f: Followed) -> tuple[Verdict, int] | None:
        now = self._clock()
        fed = 0
        for fo in f.followers:
            try:
                fed += fo.poll(f.analysis, now)
            except Exception as exc:  # one source failing never stops the others
                from firstfault.model import ErrorItem

                f.analysis.errors.append(ErrorItem(source=fo.name, message=f"follower {fo.name} failed: "
                                                                             f"{type(exc).__name__}: {exc}"))
        f.polls += 1
        if fed == 0 and f.judged:
            return None
        f.judged = True
        return self._judge(f, now)

    def _cursor(self, f: Followed) -> str:
        return json.dumps({"since": f.since, "sources": {fo.name: fo.cursor() for fo in f.followers}},
                          sort_keys=True)

    def _judge(self, f: Followed, now: datetime) -> tuple[Verdict, int] | None:
        f.analysis.coverage[:] = [c for fo in f.followers for c in fo.coverage()]
        verdict = f.analysis.finish(now=now, provisional=True)
        cursor = self._cursor(f)
        rc = verdict.root_cause
        if rc is None or rc.category in f.sent:
            if cursor != f.cursor_saved:
                self.store.set_cursor(f.cursor_name, cursor)
                f.cursor_saved = cursor
            return None
        from firstfault.sinks.webhook import delivery_id

        wl = verdict.workload
        enrichment = Enrichment(cluster=self.cluster, links=dict(f.identified.links), owner=f.identified.owner,
                                previous_attempts=[f"{wl.id}#{k}" for k in range(wl.attempt)])
        if self.ledger.sent(wl.id, wl.attempt, self.cluster, rc.category) is not None:
            f.sent.add(rc.category)  # sent before a restart
            return None
        failed = []
        for s in self.sinks:
            try:
                s.write(verdict, enrichment)
            except Exception as exc:  # one output failing never stops the others
                failed.append(f"{s.name}: {type(exc).__name__}: {exc}")
        pid, new = self.ledger.record(verdict, cluster=self.cluster, ref=f.ref,
                                      delivery=delivery_id(verdict, enrichment), cursor=(f.cursor_name, cursor))
        f.cursor_saved = cursor
        f.sent.add(rc.category)
        self.sent.append((verdict, pid))
        first = next((e for e in verdict.evidence if e.role == "cause"), None)
        self.log(f"{f.ref} attempt {wl.attempt}: provisional {rc.domain} {rc.category} on "
                 f"{', '.join(rc.nodes) or '?'}", ref=f.ref, attempt=wl.attempt, provisional_id=pid,
                 domain=rc.domain, category=rc.category, nodes=list(rc.nodes), first_seen=rc.first_seen,
                 evidence=f"{first.file}:{first.line}" if first else None, sent_at=iso(now), new=new,
                 failed_outputs=failed)
        for a in self.actions:
            try:
                for rec in a.act_provisional(verdict, pid, f.ref):
                    self.log(f"{f.ref} attempt {wl.attempt}: action {rec.line()}", ref=f.ref, attempt=wl.attempt,
                             action=rec.kind, target=rec.target, outcome=rec.outcome)
            except Exception as exc:  # a backend bug: said, the next action still runs
                self.log(f"{f.ref}: action {a.name} failed: {type(exc).__name__}: {exc}", ref=f.ref, error=str(exc))
        return verdict, pid

    # ---------------------------------------------------------------------------------------------------- loop

    def run_forever(self, max_steps: int | None = None) -> None:
        steps = 0
        try:
            while not self._stop.is_set():
                began = time.monotonic()
                self.step()
                steps += 1
                if max_steps is not None and steps >= max_steps:
                    return
                self._stop.wait(max(0.0, self.interval - (time.monotonic() - began)))
        finally:
            self.close()

    def close(self) -> None:
        for ref in list(self.attempts):
            self._drop(ref, "stopping")


# ------------------------------------------------------------------------------------ the final verdict's part


def supersedes(records: Sequence[ProvisionalRecord], final: Verdict) -> tuple[list[Superseded], dict[int, bool]]:
    """What the final verdict says of each provisional verdict of its attempt, and (id -> held) for the ledger.

    A provisional cause held when the final verdict names its category (or a finer one, by the rule
    engine's prefix matching) as its root cause or a candidate, on at least one of its nodes."""
    finals = ([final.root_cause] if final.root_cause is not None else []) + list(final.candidates)
    out: list[Superseded] = []
    held: dict[int, bool] = {}
    for r in records:
        ok = any(category_matches(r.category, c.category) and (not r.nodes or bool(set(r.nodes) & set(c.nodes)))
                 for c in finals)
        held[r.id] = ok
        out.append(Superseded(category=r.category, nodes=list(r.nodes), first_seen=iso(r.first_seen),
                              sent_at=iso(r.sent_at), delivery=r.delivery, held=ok))
    return out, held


def settle_provisional(ledger: ProvisionalLedger, verdict: Verdict, cluster: str | None
                       ) -> tuple[Verdict, list[ProvisionalRecord], Callable[[Connection, int], None] | None]:
    """Before the final verdict is written: it, with `supersedes` filled; the records it settles; and what
    VerdictStore.write runs in its transaction to settle them (None: nothing to settle)."""
    records = ledger.open_for(verdict.workload.id, verdict.workload.attempt, cluster)
    if not records:
        return verdict, [], None
    notes, held = supersedes(records, verdict)
    final = replace(verdict, supersedes=notes)

    def also(conn: Connection, vid: int) -> None:
        ledger.settle(conn, held, vid)

    return final, records, also


def resolve_provisional(sinks: Sequence[Sink], records: Sequence[ProvisionalRecord], enrichment: Enrichment) -> None:
    """After the final verdict is stored: each provisional verdict's alerts are resolved (sinks that can)."""
    for s in sinks:
        resolve = getattr(getattr(s, "sink", s), "resolve", None)  # through the watch daemon's lock wrapper
        if resolve is None:
            continue
        for r in records:
            resolve(r.verdict, enrichment)


__all__ = ["FollowDaemon", "ProvisionalAction", "cursor_name", "resolve_provisional", "settle_provisional",
           "supersedes"]
