"""Engine semantics end to end on small bundles written by the tests."""

from __future__ import annotations

import copy

from firstfault.analysis.analyze import Analyzer
from tests.conftest import WORKLOAD, XID79, BundleMaker


def _app(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def test_node_fail_names_the_node_that_fell_silent(make_bundle: BundleMaker) -> None:
    wl = copy.deepcopy(WORKLOAD)
    wl["workload"]["terminal_state"] = "NODE_FAIL"
    steps = [f"2026-11-02 10:{m:02d}:00,000 INFO step {m}" for m in range(0, 20)]
    files = {
        "app/rank-0.log": _app(steps),
        "app/rank-2.log": _app(steps[:8]),  # node-02 stops at 10:07
        "app/rank-4.log": _app(steps),
    }
    v = Analyzer().analyze_path(str(make_bundle(files, wl)))
    assert v.attributed_domain == "infrastructure"
    assert v.root_cause is not None and v.root_cause.category.startswith("node.unreachable")
    assert v.affected_nodes == ["node-02"]


def test_clock_skew_symptom_stamped_before_the_cause_is_still_a_symptom(make_bundle: BundleMaker) -> None:
    files = {
        # node-02's clock is behind: its Xid is stamped 10:05:00, node-01's NCCL error 10:04:58.
        "nodes/node-02/kern.log": XID79,
        "app/rank-0.log": _app([
            "2026-11-02 10:04:58,000 INFO step 9",
            "node-01:1:2 [0] NCCL WARN NCCL error: remote process exited or there was a network error",
        ]),
    }
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert v.attributed_domain == "hardware" and v.affected_nodes == ["node-02"]
    remote = next(s for s in v.symptoms if s.category == "nccl.remote_error")
    assert remote.explained_by == "gpu.fallen_off_bus"


def test_two_independent_causes_are_ambiguous(make_bundle: BundleMaker) -> None:
    files = {
        "nodes/node-02/kern.log": XID79,
        "nodes/node-03/kern.log": "Nov  2 10:05:04 node-03 kernel: Out of memory: Killed process 999 (python) "
                                  "total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB\n",
    }
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert v.attributed_domain == "ambiguous" and v.root_cause is None
    assert sorted(c.category for c in v.candidates) == ["gpu.fallen_off_bus", "host.oom"]
    assert v.affected_nodes == ["node-02", "node-03"]


def test_a_later_independent_cause_is_secondary(make_bundle: BundleMaker) -> None:
    files = {
        "nodes/node-02/kern.log": XID79,
        "nodes/node-03/kern.log": "Nov  2 10:15:00 node-03 kernel: Out of memory: Killed process 999 (python) "
                                  "total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB\n",
    }
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"
    assert [c.category for c in v.secondary_causes] == ["host.oom"]


def test_same_xid_everywhere_is_not_n_bad_gpus(make_bundle: BundleMaker) -> None:
    line = "Nov  2 10:05:0{i} {n} kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, DBE\n"
    files = {f"nodes/{n}/kern.log": line.format(i=i, n=n) for i, n in enumerate(["node-01", "node-02", "node-03"])}
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert v.attributed_domain == "software"
    assert v.root_cause is not None and v.root_cause.category.startswith("app.")
    assert v.affected_nodes == ["node-01", "node-02", "node-03"]


def test_only_symptoms_is_unknown_with_gaps(make_bundle: BundleMaker) -> None:
    wl = copy.deepcopy(WORKLOAD)
    wl["sources"] = [{"kind": "application", "path": "app/rank-{rank}.log"}]
    files = {
        f"app/rank-{r}.log": _app([
            "2026-11-02 10:15:00,000 INFO step 9",
            f"[rank{r}]:[E1102 10:15:01.000000 42 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
            "ran for 600011 milliseconds before timing out.",
        ])
        for r in range(6)
    }
    v = Analyzer().analyze_path(str(make_bundle(files, wl)))
    assert v.attributed_domain == "unknown" and v.root_cause is None
    assert any(s.category == "nccl.timeout" and s.explained_by is None for s in v.symptoms)
    kernel = next(c for c in v.coverage if c.source == "kernel")
    assert kernel.status == "missing"
    assert any("Coverage gaps" in n for n in v.explanation)


def test_fqdn_hosts_and_peer_addresses_map_to_allocation_nodes(make_bundle: BundleMaker) -> None:
    files = {
        "app/rank-0.log": _app([
            "node-01.cluster.local:11:11 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.1<0>",
            "2026-11-02 10:05:00,000 INFO step 9",
            "node-01.cluster.local:11:12 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer "
            "10.0.0.3<5000> with status=12 opcode=0 len=0 vendor err 129 (Recv)",
        ]),
        "app/rank-2.log": _app([
            "node-02.cluster.local:21:21 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.2<0>",
            "2026-11-02 10:05:01,000 INFO step 9",
            "node-02.cluster.local:21:22 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer "
            "10.0.0.3<5001> with status=12 opcode=0 len=0 vendor err 129 (Recv)",
        ]),
        "app/rank-4.log": _app(["node-03.cluster.local:31:31 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.3<0>"]),
    }
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert v.root_cause is not None and v.root_cause.category == "network.transport"
    assert v.affected_nodes == ["node-03"]
