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
from typing import Any

from firstfault.actions.policy import ActionError, AlreadyDone, Backend, Policy, decide, eligible
from firstfault.actions.slurm import SlurmJob
from firstfault.model import Verdict
from firstfault.store.actions import ActionLedger, ActionRecord
from firstfault.store.repo import VerdictStore

HOUR = timedelta(hours=1)
Log = Callable[[str], None]


def reason_for(category: str, verdict_id: int | str) -> str:
    """The drain reason / cordon annotation: `firstfault: <category> <verdict id>` (`p<id>` for a provisional
    verdict, which has no verdict id yet)."""
    return f"firstfault: {category} {verdict_id}"


class _Decider:
    """What every action holds: its policy, the store its ledger is in, the cluster, where decisions are logged."""

    backend: Any  # its `kind` names the action in the ledger

    def __init__(self, policy: Policy, *, store_url: str | None = None, store: VerdictStore | None = None,
                 cluster: str | None = None, log: Log | None = None) -> None:
        if (store_url is None) == (store is None):
            raise ValueError(f"{type(self).__name__} needs a store URL or a VerdictStore (one of them)")
        self.policy = policy
        self.store_url = store_url
        self._store = store
        self.cluster = cluster or ""
        self.log = log or (lambda _m: None)

    @property
    def name(self) -> str:
        return str(self.backend.kind)


class Actor(_Decider):
    """One action (a backend) under one policy; `act` returns the decisions it took (or found taken)."""

    def __init__(self, backend: Backend, policy: Policy, *, store_url: str | None = None,
                 store: VerdictStore | None = None, cluster: str | None = None,
                 log: Log | None = None) -> None:
        self.backend = backend
        super().__init__(policy, store_url=store_url, store=store, cluster=cluster, log=log)

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

    def act_provisional(self, verdict: Verdict, provisional_id: int, ref: str = "") -> list[ActionRecord]:
        """The same policy on a provisional verdict (watch --follow), recorded under its provisional id; the
        drain reason names it `p<id>`. The final verdict's own decision later finds the node drained."""
        if self._store is not None:
            return self._act(ActionLedger(self._store), verdict, None, provisional_id)
        assert self.store_url is not None
        with VerdictStore.open(self.store_url) as store:
            return self._act(ActionLedger(store), verdict, None, provisional_id)

    def _rec(self, vid: int | None, target: str, outcome: str, v: Verdict, detail: str,
             ledger: ActionLedger | None = None, pid: int | None = None) -> ActionRecord:
        from datetime import UTC, datetime

        now = ledger.now() if ledger is not None else datetime.now(UTC)
        return ActionRecord(verdict_id=vid, kind=self.backend.kind, cluster=self.cluster, target=target,
                            outcome=outcome, dry_run=self.policy.dry_run,
                            category=v.root_cause.category if v.root_cause else None, detail=detail, created_at=now,
                            provisional_id=pid)

    def _act(self, ledger: ActionLedger, v: Verdict, vid: int | None, pid: int | None = None) -> list[ActionRecord]:
        kind, dry = self.backend.kind, self.policy.dry_run
        nodes, why = eligible(self.policy, v)
        out: list[ActionRecord] = []
        with ledger.locked() as conn:
            def settle(target: str, outcome: str, detail: str) -> None:
                rec = ledger.record(conn, self._rec(vid, target, outcome, v, detail, ledger, pid))
                self.log(rec.line())
                out.append(rec)

            if why is not None:
                prior = ledger.decided(conn, vid, kind, "", dry, provisional_id=pid)
                if prior is None:
                    settle("", "ineligible", why)
                else:
                    out.append(prior)
                return out
            todo = []
            for node in nodes:
                prior = ledger.decided(conn, vid, kind, node, dry, provisional_id=pid)
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
            reason = reason_for(category, vid if vid is not None else f"p{pid}")
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


class JobActor(_Decider):
    """Requeue or cancel a provisional verdict's Slurm job (watch --follow), under the same policy, once its
    cause's nodes are out of service: drained by this verdict's drain decision (a dry-run drain counts in a
    dry run), or out already. Never for a final verdict: the job has ended."""

    def __init__(self, backend: SlurmJob, policy: Policy, nodes: Backend, *, store: VerdictStore,
                 cluster: str | None = None, log: Log | None = None) -> None:
        self.backend = backend
        self.nodes = nodes  # the node states (a SlurmDrain's inventory)
        super().__init__(policy, store=store, cluster=cluster, log=log)

    def act(self, verdict: Verdict, verdict_id: int | None) -> list[ActionRecord]:
        return []  # the attempt ended: nothing to requeue or cancel

    def act_provisional(self, verdict: Verdict, provisional_id: int, ref: str = "") -> list[ActionRecord]:
        assert self._store is not None
        ledger = ActionLedger(self._store)
        kind, dry, pid = self.backend.kind, self.policy.dry_run, provisional_id
        target = f"job {ref}" if ref else "job"
        nodes, why = eligible(self.policy, verdict)
        out: list[ActionRecord] = []
        with ledger.locked() as conn:
            def settle(outcome: str, detail: str) -> None:
                rec = ledger.record(conn, ActionRecord(
                    verdict_id=None, kind=kind, cluster=self.cluster, target=target, outcome=outcome, dry_run=dry,
                    category=verdict.root_cause.category if verdict.root_cause else None, detail=detail,
                    created_at=ledger.now(), provisional_id=pid))
                self.log(rec.line())
                out.append(rec)

            prior = ledger.decided(conn, None, kind, target, dry, provisional_id=pid)
            if prior is not None:
                return [prior]
            if why is not None:
                settle("ineligible", why)
                return out
            if not ref:
                settle("refused", "the attempt's job id is not known")
                return out
            drained = {r.target for r in ledger.taken(conn, pid, ("drain", "cordon"),
                                                       ("done", "skipped", "dry_run") if dry else ("done", "skipped"))}
            try:
                inv = self.nodes.inventory()
            except ActionError as exc:
                settle("error", f"could not read node states: {exc}")
                return out
            left = [n for n in nodes if n not in drained and not (n in inv.nodes and inv.nodes[n].out)]
            if left:
                settle("refused", f"node(s) {', '.join(left)} still in service: the job could start on them again "
                                  "(drain them first: actions.drain)")
                return out
            counted = ("done", "dry_run") if dry else ("done",)
            recent = ledger.recent(conn, kind, self.cluster, ledger.now() - HOUR, counted)
            if recent >= self.policy.max_per_hour:
                settle("refused", f"rate limit: {recent} {kind}(s) in the last hour on this cluster "
                                  f"(max_per_hour {self.policy.max_per_hour})")
                return out
            if dry:
                settle("dry_run", f"would run: {self.backend.command(ref)}")
                return out
            try:
                settle("done", self.backend.act(ref))
            except ActionError as exc:
                settle("error", str(exc))
        return out
