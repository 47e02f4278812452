"""Apply the policy to a stored verdict through one backend, and record every decision.

Runs after the sinks, on a verdict that the verdict store holds (its id is
in the drain reason and the dashboard shows the decisions on its page): no
ledger, no action, because without one the hourly limit cannot be kept.

All of one verdict's decisions are taken inside one ledger transaction
(firstfault.store.actions.ActionLedger.locked), but no external command runs
inside it: the node states are read just before it (`sinfo`, the API), a
node to act on is claimed inside it (a `pending` record that counts against
the limits), the command runs after the commit, and a second short
transaction settles each claim. Nodes other runs took out after the states
were read count as taken, so the share limit holds across concurrent runs.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from sqlalchemy import Connection

from firstfault.actions.policy import ActionError, AlreadyDone, Backend, Inventory, Policy, decide, eligible
from firstfault.model import Verdict
from firstfault.store.actions import PENDING, ActionLedger, ActionRecord
from firstfault.store.repo import VerdictStore

HOUR = timedelta(hours=1)
# A claim younger than this whose command has not answered is another run acting now (a command takes at most the
# backend's timeout); an older one was left by a run that died, and the node is tried again.
CLAIM_TTL = timedelta(minutes=10)
Log = Callable[[str], None]


def reason_for(category: str, verdict_id: int) -> str:
    """The drain reason / cordon annotation: `firstfault: <category> <verdict id>`."""
    return f"firstfault: {category} {verdict_id}"


class Actor:
    """One action (a backend) under one policy; `act` returns the decisions it took (or found taken)."""

    def __init__(self, backend: Backend, policy: Policy, *, store_url: str | None = None,
                 store: VerdictStore | None = None, cluster: str | None = None,
                 log: Log | None = None) -> None:
        if (store_url is None) == (store is None):
            raise ValueError("Actor needs a store URL or a VerdictStore (one of them)")
        self.backend = backend
        self.policy = policy
        self.store_url = store_url
        self._store = store
        self.cluster = cluster or ""
        self.log = log or (lambda _m: None)

    @property
    def name(self) -> str:
        return self.backend.kind

    def act(self, verdict: Verdict, verdict_id: int | None) -> list[ActionRecord]:
        if verdict_id is None:
            rec = self._rec(None, "", "refused", verdict, "the verdict is not in the verdict store (outputs.database "
                                                         "failed or is missing): no action without a ledger")
            self.log(rec.line())
            return [rec]
        if self._store is not None:
            return self._act(ActionLedger(self._store), verdict, verdict_id)
        assert self.store_url is not None
        with VerdictStore.open(self.store_url) as store:
            return self._act(ActionLedger(store), verdict, verdict_id)

    def _rec(self, vid: int | None, target: str, outcome: str, v: Verdict, detail: str,
             ledger: ActionLedger | None = None) -> ActionRecord:
        from datetime import UTC, datetime

        now = ledger.now() if ledger is not None else datetime.now(UTC)
        return ActionRecord(verdict_id=vid, kind=self.backend.kind, cluster=self.cluster, target=target,
                            outcome=outcome, dry_run=self.policy.dry_run,
                            category=v.root_cause.category if v.root_cause else None, detail=detail, created_at=now)

    def _act(self, ledger: ActionLedger, v: Verdict, vid: int) -> list[ActionRecord]:
        kind, dry = self.backend.kind, self.policy.dry_run
        nodes, why = eligible(self.policy, v)
        if why is not None:
            with ledger.locked() as conn:
                prior = ledger.decided(conn, vid, kind, "", dry)
                return [prior] if prior is not None else [self._settle(ledger, conn, vid, "", "ineligible", v, why)]
        with ledger.reading() as conn:
            undecided = [n for n in nodes if ledger.decided(conn, vid, kind, n, dry) is None]
        inv: Inventory | None = None
        failed = ""
        read_at = ledger.now()
        if undecided:  # the node states, read outside the transaction (a command: sinfo, an API call)
            try:
                inv = self.backend.inventory()
            except ActionError as exc:
                failed = f"could not read node states: {exc}"
        out: list[ActionRecord] = []
        claims: list[ActionRecord] = []
        assert v.root_cause is not None  # eligible() gave nodes
        category = v.root_cause.category
        reason = reason_for(category, vid)
        with ledger.locked() as conn:
            counted = ("done", PENDING, "dry_run") if dry else ("done", PENDING)
            recent = ledger.recent(conn, kind, self.cluster, ledger.now() - HOUR, counted)
            # What the states read may not show: nodes other runs took out since, or are taking out now.
            since = ledger.taken_since(conn, kind, self.cluster, read_at, ledger.now() - CLAIM_TTL)
            taken = list(since)
            for node in nodes:
                prior = ledger.decided(conn, vid, kind, node, dry)
                if prior is not None:
                    out.append(prior)  # decided before: the same verdict never acts twice
                    continue
                running = None if dry else ledger.claim(conn, vid, kind, node, ledger.now() - CLAIM_TTL)
                if running is not None:
                    out.append(running)  # another run of this verdict is acting on it right now
                    continue
                if inv is None:
                    out.append(self._settle(ledger, conn, vid, node, "error", v, failed))
                    continue
                by = since.get(node)
                if by is not None and by != vid and not dry:
                    out.append(self._settle(ledger, conn, vid, node, "skipped", v, (
                        f"node {node} was {kind}ed by firstfault (verdict {by}) after the node states were read: "
                        f"not {kind}ed twice")))
                    continue
                verdict_, detail = decide(self.policy, node, inv, recent, taken, kind=kind,
                                          group_word=self.backend.group_word, allocation=v.workload.nodes)
                if verdict_ != "act":
                    out.append(self._settle(ledger, conn, vid, node, verdict_, v, detail))
                    continue
                command = self.backend.command(node, reason, category)
                if dry:
                    out.append(self._settle(ledger, conn, vid, node, "dry_run", v, f"would run: {command}"))
                else:
                    claim = ledger.record(conn, self._rec(vid, node, PENDING, v, f"running: {command}", ledger))
                    out.append(claim)
                    claims.append(claim)
                recent += 1
                taken.append(node)
        if not claims:
            return out
        results: dict[int | None, tuple[str, str]] = {}
        for claim in claims:  # the commands, after the claims are committed
            try:
                results[claim.id] = ("done", self.backend.act(claim.target, reason, category, vid))
            except AlreadyDone as exc:
                results[claim.id] = ("skipped", str(exc))
            except ActionError as exc:
                results[claim.id] = ("error", str(exc))
        settled: dict[int | None, ActionRecord] = {}
        with ledger.locked() as conn:
            for claim in claims:
                outcome, detail = results[claim.id]
                rec = settled[claim.id] = ledger.settle(conn, claim, outcome, detail)
                self.log(rec.line())
        return [settled.get(r.id, r) if r.outcome == PENDING else r for r in out]

    def _settle(self, ledger: ActionLedger, conn: Connection, vid: int, target: str, outcome: str, v: Verdict,
                detail: str) -> ActionRecord:
        rec = ledger.record(conn, self._rec(vid, target, outcome, v, detail, ledger))
        self.log(rec.line())
        return rec
