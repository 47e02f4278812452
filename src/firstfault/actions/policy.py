"""The one policy every recovery action obeys (Slurm drain, Kubernetes cordon).

Pure decisions over a verdict and a snapshot of the nodes' states; the
backends (slurm.py, kube.py) read the states and carry decisions out, the
actor (actor.py) records every decision in the store.

- Only verdicts with a root cause whose category matches one of
  `categories` (category-prefix semantics, as the rule engine's: `gpu.*`
  and `gpu` both cover `gpu.memory.dbe`), and never a verdict attributed to
  software, the scheduler, or one that is unknown, ambiguous or did not
  fail: those domains are refused whatever the list says.
- Only the root cause's own nodes (never the nodes that merely reported
  symptoms), and of those only the ones the attempt held (the verdict's
  `workload.nodes`): a node outside the allocation is refused, whatever
  the verdict says of it.
- At most `max_per_hour` nodes per hour and per cluster, and never so many
  that more than `max_share` of a partition (Slurm) or node pool
  (Kubernetes) is out of service, counting nodes already out for any reason.
- A node already drained / cordoned is left alone (skipped, recorded).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Protocol

from firstfault.model import Verdict
from firstfault.spec import category_matches

DEFAULT_CATEGORIES = ("gpu.*", "host.hardware", "network.link")
# Never acted on, whatever `categories` says: the node is not at fault.
NEVER_DOMAINS = ("software", "scheduler", "unknown", "ambiguous", "none")
# Category families of those domains (firstfault.spec):
# naming one in `categories` is a configuration error, not a silent no-op.
NEVER_CATEGORIES = ("app", "host.oom", "scheduler")


@dataclass(frozen=True, slots=True)
class Policy:
    categories: tuple[str, ...] = DEFAULT_CATEGORIES
    max_per_hour: int = 2
    max_share: float = 0.1
    dry_run: bool = True

    def __post_init__(self) -> None:
        if not self.categories:
            raise ValueError("categories: give at least one category (e.g. gpu.*)")
        for c in self.categories:
            if forbidden_category(c):
                raise ValueError(f"categories: {c!r} names a software or scheduler category; "
                                 "actions never take a node out for those")
        if self.max_per_hour < 0:
            raise ValueError("max_per_hour must not be negative")
        if not 0 <= self.max_share <= 1:
            raise ValueError("max_share is a fraction between 0 and 1")


def forbidden_category(pattern: str) -> bool:
    base = pattern[:-2] if pattern.endswith(".*") else pattern
    # `*` alone, or a family that contains a forbidden one ("host" holds host.oom).
    if base in ("*", ""):
        return True
    return any(category_matches(pattern, f) or category_matches(f, base) for f in NEVER_CATEGORIES)


def eligible(policy: Policy, v: Verdict) -> tuple[list[str], str | None]:
    """The nodes this verdict asks to take out of service, or ([], why not)."""
    rc = v.root_cause
    if v.attributed_domain in NEVER_DOMAINS:
        what = f" ({rc.category})" if rc is not None else ""
        return [], (f"{v.attributed_domain} verdict{what}: no action is ever taken for software, scheduler, "
                    "unknown, ambiguous or not-failed verdicts")
    if rc is None:
        return [], "the verdict has no root cause"
    if rc.domain in NEVER_DOMAINS:
        return [], f"root cause {rc.category} is in domain {rc.domain}: never acted on"
    if not any(category_matches(p, rc.category) for p in policy.categories):
        return [], f"category {rc.category} is not in the configured categories ({', '.join(policy.categories)})"
    nodes = sorted(dict.fromkeys(n for n in rc.nodes if n))
    if not nodes:
        return [], f"root cause {rc.category} names no node"
    if not v.workload.nodes:
        return [], (f"the verdict names no allocation: no node of root cause {rc.category} is known to be the "
                    "attempt's")
    return nodes, None


@dataclass(frozen=True, slots=True)
class NodeState:
    name: str
    groups: tuple[str, ...]  # the partitions (Slurm) or the pool (Kubernetes) it belongs to
    out: bool  # out of service already, for any reason (drained, down, cordoned, not ready)
    acted: bool  # drained / cordoned already: nothing to do
    state: str  # as the backend spells it, for the record ("idle", "drained", "unschedulable")


@dataclass(slots=True)
class Inventory:
    nodes: dict[str, NodeState] = field(default_factory=dict)

    def group(self, name: str) -> list[NodeState]:
        return [n for n in self.nodes.values() if name in n.groups]


def decide(policy: Policy, node: str, inv: Inventory, recent: int, taken: Collection[str], *, kind: str,
           group_word: str, allocation: Collection[str]) -> tuple[str, str]:
    """("act" | "skipped" | "refused", why) for one node.

    `recent`: actions of this kind counted in the last hour (this run's included);
    `taken`: nodes taken out but not yet in `inv` (by this run, or by others since `inv` was read);
    `allocation`: the nodes the attempt held (the verdict's `workload.nodes`): no other node is ever acted on.
    """
    if node not in allocation:
        shown = ", ".join(sorted(allocation)[:8]) + (", ..." if len(allocation) > 8 else "")
        return "refused", f"node {node} is not in the attempt's allocation ({shown}): never {kind}ed for it"
    st = inv.nodes.get(node)
    if st is None:
        return "refused", f"node {node} is not known to the scheduler"
    if st.acted:
        return "skipped", f"node {node} is already {st.state}: not {kind}ed twice"
    if recent >= policy.max_per_hour:
        return "refused", (f"rate limit: {recent} {kind}(s) in the last hour on this cluster "
                           f"(max_per_hour {policy.max_per_hour})")
    if not st.groups:
        return "refused", f"node {node} is in no {group_word}: its share cannot be bounded"
    for g in st.groups:
        members = inv.group(g)
        out = sum(1 for m in members if m.out or m.name in taken or m.name == node)
        if out > policy.max_share * len(members):
            return "refused", (f"share limit: {kind}ing {node} would leave {out} of {len(members)} nodes of "
                               f"{group_word} {g} out of service ({out / len(members):.0%}), over max_share "
                               f"{policy.max_share:.0%}")
    return "act", ""


class ActionError(Exception):
    """A backend could not read node states or carry an action out (the message says which and why)."""


class AlreadyDone(Exception):
    """The node turned out to be drained / cordoned already when the backend came to act (recorded as skipped)."""


class Backend(Protocol):
    """What the actor needs of a scheduler: node states, and the one action."""

    kind: str  # "drain", "cordon": the action's name in the ledger
    group_word: str  # what the share is bounded over: "partition", "pool"

    def inventory(self) -> Inventory: ...

    def command(self, node: str, reason: str, category: str) -> str: ...  # what act() would do, for dry runs

    def act(self, node: str, reason: str, category: str, verdict_id: int | None) -> str: ...  # raises ActionError
