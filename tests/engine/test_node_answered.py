"""slurmctld's `not responding` taken back by the same node's `now responding` (extract/host.py `sched.node_back`,
engine/normalise.py `_answered_nodes`).

slurmctld marks a node that missed its pings NO_RESPOND (`error: Nodes X not responding`) and clears it when the node
answers again (`Node X now responding`; `node X returned to service` for a DOWN node of reason `Not responding` that
ReturnToService puts back): a busy or restarting slurmd, a node power saving was still booting. HP's XC guide tells
the same transition as `alloc*` then `alloc` for transient network congestion (HP XC System Software Administration
Guide 3.1, table 14-4). A node that answered again is no lost node, so it must not be the cause. The near misses: the
node set DOWN for it (`not responding, setting DOWN`: its jobs were killed), another node's answer, an answer before
the loss, a file that never says the node answered. Lines ours, in slurmctld's formats (SchedMD/slurm
src/slurmctld/ping_nodes.c, node_mgr.c `_node_did_resp`)."""

from __future__ import annotations

from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from tests.conftest import BundleMaker

LOST = "[2024-03-01T10:13:00.675] error: Nodes node-02 not responding"
BACK = "[2024-03-01T10:14:10.001] Node node-02 now responding"


def _analyze(make_bundle: BundleMaker, lines: list[str]) -> Any:
    wl = {"apiVersion": "firstfault/v1",
          "workload": {"id": "t", "scheduler": "static", "nodes": ["node-01", "node-02", "node-03"],
                       "terminal_state": "FAILED",
                       "window": {"start": "2024-03-01T10:00:00Z", "end": "2024-03-01T12:00:00Z"}},
          "sources": [{"kind": "syslog", "path": "slurmctld.log"}]}
    root = make_bundle({"slurmctld.log": "".join(x + "\n" for x in lines)}, wl)
    return Analyzer().analyze_path(str(root))


@pytest.mark.parametrize("back", [
    BACK,
    "[2024-03-01T10:14:10.001] node node-02 returned to service",
    "[2024-03-01T10:14:10.001] node_did_resp: node node-02 returned to service",
    "[2024-03-01T10:14:10.001] Nodes node-[02-03] returned to service",
])
def test_a_node_that_answered_again_is_no_lost_node(make_bundle: BundleMaker, back: str) -> None:
    v = _analyze(make_bundle, [LOST, back])
    assert v.root_cause is None and not v.candidates
    assert v.attributed_domain == "unknown"


def test_of_a_hostlist_only_the_node_that_answered_is_taken_back(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, ["[2024-03-01T10:13:00.675] error: Nodes node-[02-03] not responding", BACK])
    assert v.root_cause is not None and v.root_cause.category == "node.unreachable"
    assert v.root_cause.nodes == ["node-03"]


@pytest.mark.parametrize("lines", [
    [LOST],  # nothing says it answered
    ["[2024-03-01T10:13:00.675] error: Nodes node-02 not responding, setting DOWN", BACK],  # DOWN: its jobs killed
    [LOST, "[2024-03-01T10:14:10.001] Node node-01 now responding"],  # another node answered
    [BACK, "[2024-03-01T10:15:00.000] error: Nodes node-02 not responding"],  # it answered before it was lost
])
def test_a_node_lost_and_not_answered_again_is_still_lost(make_bundle: BundleMaker, lines: list[str]) -> None:
    v = _analyze(make_bundle, lines)
    assert v.root_cause is not None and v.root_cause.category == "node.unreachable"
    assert v.root_cause.nodes == ["node-02"]
