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
from typing import Any

from sqlalchemy import Connection

from firstfault.actions.policy import ActionError, AlreadyDone, Backend, Inventory, Policy, decide, eligible
from firstfault.actions.slurm import SlurmJob
from firstfault.model import Verdict
from firstfault.store.actions import PENDING, ActionLedger, ActionRecord
from firstfault.store.repo import VerdictStore

HOUR = timedelta(hours=1)
# A claim younger than this whose command has not answered is another run acting now (a command takes at most the
# backend's timeout); an older one was left by a run that died, and the node is tried again.
CLAIM_TTL = timedelta(minutes=10)
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
        if why is not None:
            with ledger.locked() as conn:
                prior = ledger.decided(conn, vid, kind, "", dry, provisional_id=pid)
                return [prior] if prior is not None else [self._settle(ledger, conn, vid, "", "ineligible", v, why,
                                                                       pid)]
        with ledger.reading() as conn:
            undecided = [n for n in nodes if ledger.decided(conn, vid, kind, n, dry, provisional_id=pid) is None]
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
        reason = reason_for(category, vid if vid is not None else f"p{pid}")
        me = (vid, pid)
        with ledger.locked() as conn:
            counted = ("done", PENDING, "dry_run") if dry else ("done", PENDING)
            recent = ledger.recent(conn, kind, self.cluster, ledger.now() - HOUR, counted)
            # What the states read may not show: nodes other runs took out since, or are taking out now.
            since = ledger.taken_since(conn, kind, self.cluster, read_at, ledger.now() - CLAIM_TTL)
            taken = list(since)
            for node in nodes:
                prior = ledger.decided(conn, vid, kind, node, dry, provisional_id=pid)
                if prior is not None:
                    out.append(prior)  # decided before: the same verdict never acts twice
                    continue
                running = None if dry else ledger.claim(conn, vid, kind, node, ledger.now() - CLAIM_TTL,
                                                           provisional_id=pid)
                if running is not None:
                    out.append(running)  # another run of this verdict is acting on it right now
                    continue
                if inv is None:
                    out.append(self._settle(ledger, conn, vid, node, "error", v, failed, pid))
                    continue
                by = since.get(node)
                if by is not None and by != me and not dry:
                    out.append(self._settle(ledger, conn, vid, node, "skipped", v, (
                        f"node {node} was {kind}ed by firstfault ({_which(*by)}) after the node states were read: "
                        f"not {kind}ed twice"), pid))
                    continue
                verdict_, detail = decide(self.policy, node, inv, recent, taken, kind=kind,
                                          group_word=self.backend.group_word, allocation=v.workload.nodes)
                if verdict_ != "act":
                    out.append(self._settle(ledger, conn, vid, node, verdict_, v, detail, pid))
                    continue
                command = self.backend.command(node, reason, category)
                if dry:
                    out.append(self._settle(ledger, conn, vid, node, "dry_run", v, f"would run: {command}", pid))
                else:
                    claim = ledger.record(conn, self._rec(vid, node, PENDING, v, f"running: {command}", ledger, pid))
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

    def _settle(self, ledger: ActionLedger, conn: Connection, vid: int | None, target: str, outcome: str,
                v: Verdict, detail: str, pid: int | None = None) -> ActionRecord:
        rec = ledger.record(conn, self._rec(vid, target, outcome, v, detail, ledger, pid))
        self.log(rec.line())
        return rec


def _which(verdict_id: int | None, provisional_id: int | None) -> str:
    return f"verdict {verdict_id}" if verdict_id is not None else f"provisional verdict p{provisional_id}"


class JobActor(_Decider):
    """Requeue or cancel a provisional verdict's Slurm job (watch --follow), under the same policy, once its
    cause's nodes are out of service: drained by this verdict's drain decision (a dry-run drain counts in a
    dry run), or out already. Never for a final verdict: the job has ended. As with `Actor`, no command runs
    inside the ledger's transaction: the node states are read before it, the job is claimed inside it, and
    `scontrol` runs after it."""

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

        def record(conn: Connection, outcome: str, detail: str) -> ActionRecord:
            rec = ledger.record(conn, ActionRecord(
                verdict_id=None, kind=kind, cluster=self.cluster, target=target, outcome=outcome, dry_run=dry,
                category=verdict.root_cause.category if verdict.root_cause else None, detail=detail,
                created_at=ledger.now(), provisional_id=pid))
            if outcome != PENDING:
                self.log(rec.line())
            return rec

        with ledger.reading() as conn:
            prior = ledger.decided(conn, None, kind, target, dry, provisional_id=pid)
        if prior is not None:
            return [prior]
        inv: Inventory | None = None
        failed = ""
        if why is None and ref:  # the node states, read outside the transaction (sinfo)
            try:
                inv = self.nodes.inventory()
            except ActionError as exc:
                failed = f"could not read node states: {exc}"
        with ledger.locked() as conn:
            prior = ledger.decided(conn, None, kind, target, dry, provisional_id=pid)
            if prior is not None:
                return [prior]
            running = None if dry else ledger.claim(conn, None, kind, target, ledger.now() - CLAIM_TTL,
                                                    provisional_id=pid)
            if running is not None:
                return [running]  # another run is acting on this job right now
            if why is not None:
                return [record(conn, "ineligible", why)]
            if not ref:
                return [record(conn, "refused", "the attempt's job id is not known")]
            if inv is None:
                return [record(conn, "error", failed)]
            drained = {r.target for r in ledger.taken(conn, pid, ("drain", "cordon"),
                                                       ("done", "skipped", "dry_run") if dry else ("done", "skipped"))}
            left = [n for n in nodes if n not in drained and not (n in inv.nodes and inv.nodes[n].out)]
            if left:
                return [record(conn, "refused", f"node(s) {', '.join(left)} still in service: the job could start "
                                                "on them again (drain them first: actions.drain)")]
            counted = ("done", PENDING, "dry_run") if dry else ("done", PENDING)
            recent = ledger.recent(conn, kind, self.cluster, ledger.now() - HOUR, counted)
            if recent >= self.policy.max_per_hour:
                return [record(conn, "refused", f"rate limit: {recent} {kind}(s) in the last hour on this cluster "
                                                f"(max_per_hour {self.policy.max_per_hour})")]
            if dry:
                return [record(conn, "dry_run", f"would run: {self.backend.command(ref)}")]
            claim = record(conn, PENDING, f"running: {self.backend.command(ref)}")
        try:  # the command, after the claim is committed
            outcome, detail = "done", self.backend.act(ref)
        except ActionError as exc:
            outcome, detail = "error", str(exc)
        with ledger.locked() as conn:
            rec = ledger.settle(conn, claim, outcome, detail)
        self.log(rec.line())
        return [rec]
