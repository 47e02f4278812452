"""Apply the policy to a stored verdict through one backend, and record every decision.

Runs after the sinks, on a verdict that the verdict store holds (its id is
in the drain reason and the dashboard shows the decisions on its page): no
ledger, no action, because without one the hourly limit cannot be kept.
All of one verdict's decisions are taken inside one ledger transaction
(firstfault.store.actions.ActionLedger.locked), node states read inside it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from firstfault.actions.policy import ActionError, AlreadyDone, Backend, Policy, decide, eligible
from firstfault.model import Verdict
from firstfault.store.actions import ActionLedger, ActionRecord
from firstfault.store.repo import VerdictStore

HOUR = timedelta(hours=1)
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
        out: list[ActionRecord] = []
        with ledger.locked() as conn:
            def settle(target: str, outcome: str, detail: str) -> None:
                rec = ledger.record(conn, self._rec(vid, target, outcome, v, detail, ledger))
                self.log(rec.line())
                out.append(rec)

            if why is not None:
                prior = ledger.decided(conn, vid, kind, "", dry)
                if prior is None:
                    settle("", "ineligible", why)
                else:
                    out.append(prior)
                return out
            todo = []
            for node in nodes:
                prior = ledger.decided(conn, vid, kind, node, dry)
                if prior is not None:
                    out.append(prior)  # decided before: the same verdict never acts twice
                else:
                    todo.append(node)
            if not todo:
                return out
            try:
                inv = self.backend.inventory()
            except ActionError as exc:
                for node in todo:
                    settle(node, "error", f"could not read node states: {exc}")
                return out
            counted = ("done", "dry_run") if dry else ("done",)
            recent = ledger.recent(conn, kind, self.cluster, ledger.now() - HOUR, counted)
            taken: list[str] = []
            assert v.root_cause is not None  # eligible() gave nodes
            category = v.root_cause.category
            reason = reason_for(category, vid)
            for node in todo:
                verdict_, detail = decide(self.policy, node, inv, recent, taken, kind=kind,
                                          group_word=self.backend.group_word)
                if verdict_ != "act":
                    settle(node, verdict_, detail)
                    continue
                if dry:
                    settle(node, "dry_run", f"would run: {self.backend.command(node, reason, category)}")
                    recent += 1
                    taken.append(node)
                    continue
                try:
                    detail = self.backend.act(node, reason, category, vid)
                except AlreadyDone as exc:
                    settle(node, "skipped", str(exc))
                    continue
                except ActionError as exc:
                    settle(node, "error", str(exc))
                    continue
                settle(node, "done", detail)
                recent += 1
                taken.append(node)
        return out
