"""The shared policy, decided without a scheduler: which verdicts qualify, and the hourly and share limits.

Verdicts are real analyses (tests/actions/conftest.py and the shipped example and scenario bundles); their
domains and categories are the catalog's (docs/rules.md), known before the policy runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from firstfault import records
from firstfault.actions.policy import Inventory, NodeState, Policy, decide, eligible, forbidden_category
from firstfault.analysis.analyze import Analyzer
from tests.actions.conftest import NOW, Verdicts

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("bundle", "domain"), [
    ("examples/cuda-oom", "software"),
    ("examples/ambiguous", "ambiguous"),
    ("tests/scenarios/sch-slurm-timeout", "scheduler"),
    ("tests/scenarios/unk-watchdog-only", "unknown"),
    ("tests/scenarios/ok-completed-nccl-noise", "none"),
])
def test_never_for_software_scheduler_unknown_ambiguous_or_none(bundle: str, domain: str) -> None:
    v = Analyzer().analyze_path(str(ROOT / bundle), now=NOW)
    assert v.attributed_domain == domain
    # Even a policy that lists every hardware and network family refuses these.
    nodes, why = eligible(Policy(categories=("gpu", "host.hardware", "network", "node", "storage")), v)
    assert nodes == [] and why is not None and why.startswith(f"{domain} verdict")


def test_hardware_and_network_roots_qualify_by_category_prefix() -> None:
    a = Analyzer()
    xid149 = a.analyze_path(str(ROOT / "examples/nvlink-xid149"), now=NOW)
    port = a.analyze_path(str(ROOT / "tests/scenarios/net-ib-port-down-mlx5"), now=NOW)
    lustre = a.analyze_path(str(ROOT / "tests/scenarios/st-lustre-hang"), now=NOW)
    assert xid149.root_cause and xid149.root_cause.category.startswith("gpu.nvlink")
    assert port.root_cause and port.root_cause.category.startswith("network.link")
    default = Policy()
    assert eligible(default, xid149) == (sorted(xid149.root_cause.nodes), None)
    assert eligible(default, port) == (sorted(port.root_cause.nodes), None)
    # storage is not in the default list; `gpu.nvlinkx` is no prefix of gpu.nvlink.*.
    nodes, why = eligible(default, lustre)
    assert nodes == [] and why is not None and "not in the configured categories" in why
    assert eligible(Policy(categories=("gpu.nvlinkx",)), xid149)[0] == []
    assert eligible(Policy(categories=("gpu.nvlink",)), xid149)[0] == sorted(xid149.root_cause.nodes)


def test_only_the_root_causes_nodes(verdicts: Verdicts) -> None:
    v = verdicts.hardware()
    assert eligible(Policy(), v) == (["ffact1"], None)


@pytest.mark.parametrize("pattern", ["app.*", "app", "app.cuda_oom", "host", "host.*", "host.oom", "scheduler.*",
                                     "*", "scheduler.time_limit"])
def test_software_and_scheduler_categories_are_refused_in_the_config(pattern: str) -> None:
    assert forbidden_category(pattern)
    with pytest.raises(ValueError, match="software or scheduler"):
        Policy(categories=(pattern,))


@pytest.mark.parametrize("pattern", ["gpu.*", "gpu", "host.hardware", "network.link", "node.kernel", "storage"])
def test_device_categories_are_allowed(pattern: str) -> None:
    assert not forbidden_category(pattern)


ALL = frozenset({"a", "b", "c", "d", "zz", *(f"n{i}" for i in range(10))})  # the attempts held every node here


def _inv(states: dict[str, tuple[str, bool, bool]], group: str = "debug") -> Inventory:
    return Inventory({n: NodeState(n, (group,), out, acted, st) for n, (st, out, acted) in states.items()})


def test_share_counts_nodes_out_for_any_reason() -> None:
    # 10 nodes, one down already: a second one out is 20%.
    inv = _inv({f"n{i}": ("idle", False, False) for i in range(10)} | {"n9": ("down", True, False)})
    p = Policy(max_share=0.2, max_per_hour=10, dry_run=False)
    assert decide(p, "n0", inv, 0, [], kind="drain", group_word="partition", allocation=ALL) == ("act", "")
    # This run took n0 already: n1 would make three of ten.
    outcome, why = decide(p, "n1", inv, 1, ["n0"], kind="drain", group_word="partition", allocation=ALL)
    assert outcome == "refused"
    assert why == ("share limit: draining n1 would leave 3 of 10 nodes of partition debug out of service (30%), "
                   "over max_share 20%")


def test_rate_limit_and_already_drained_and_unknown() -> None:
    inv = _inv({"a": ("idle", False, False), "b": ("drained", True, True)})
    p = Policy(max_share=1.0, max_per_hour=2, dry_run=False)
    assert decide(p, "a", inv, 1, [], kind="drain", group_word="partition", allocation=ALL)[0] == "act"
    assert decide(p, "a", inv, 2, [], kind="drain", group_word="partition", allocation=ALL) == (
        "refused", "rate limit: 2 drain(s) in the last hour on this cluster (max_per_hour 2)")
    # Already drained beats the rate limit: nothing would be done anyway.
    assert decide(p, "b", inv, 5, [], kind="drain", group_word="partition", allocation=ALL) == (
        "skipped", "node b is already drained: not drained twice")
    assert decide(p, "zz", inv, 0, [], kind="drain", group_word="partition", allocation=ALL) == (
        "refused", "node zz is not known to the scheduler")


def test_a_node_in_several_partitions_is_bounded_in_each() -> None:
    inv = Inventory({
        "a": NodeState("a", ("big", "small"), False, False, "idle"),
        "b": NodeState("b", ("big",), False, False, "idle"),
        "c": NodeState("c", ("big",), False, False, "idle"),
        "d": NodeState("d", ("small",), True, False, "down"),
    })
    p = Policy(max_share=0.5, max_per_hour=10, dry_run=False)
    # big: 1 of 3 is fine; small: a and d would be 2 of 2.
    outcome, why = decide(p, "a", inv, 0, [], kind="drain", group_word="partition", allocation=ALL)
    assert outcome == "refused" and "2 of 2 nodes of partition small" in why


def test_a_node_outside_the_attempts_allocation_is_never_acted_on() -> None:
    # Issue 26, item 1: whatever a verdict names, only nodes its attempt held are drained or cordoned.
    inv = _inv({"a": ("idle", False, False), "n7": ("idle", False, False)})
    p = Policy(max_share=1.0, max_per_hour=10, dry_run=False)
    assert decide(p, "n7", inv, 0, [], kind="drain", group_word="partition", allocation=["a", "b"]) == (
        "refused", "node n7 is not in the attempt's allocation (a, b): never drained for it")
    # near miss: the held node passes
    assert decide(p, "a", inv, 0, [], kind="drain", group_word="partition", allocation=["a", "b"]) == ("act", "")


def test_a_verdict_that_names_no_allocation_is_ineligible() -> None:
    v = Analyzer().analyze_path(str(ROOT / "examples/nvlink-xid149"), now=NOW)
    assert eligible(Policy(), v)[0] == ["node-02"]
    nodes, why = eligible(Policy(), records.replace(v, workload=records.replace(v.workload, nodes=[])))
    assert nodes == [] and why == ("the verdict names no allocation: no node of root cause "
                                   "gpu.nvlink.signal_integrity is known to be the attempt's")
