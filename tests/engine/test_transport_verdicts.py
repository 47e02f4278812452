"""Verdicts over the transports' words and the prefix layers, through the embedded engine on small bundles.

The Xid texts are posted lines (their threads named); the layers around them are real output of the programs
named, run here (tests/extract/test_prefix_time.py holds them as printed).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.model import Verdict

# illinois-scicomp/machine-shop-maintenance#80
XID79 = "NVRM: Xid (PCI:0000:02:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
# NVIDIA/open-gpu-kernel-modules#446
XID119 = ("NVRM: Xid (PCI:0000:61:00): 119, pid=1365232, name=nvidia-smi, Timeout waiting for RPC from GSP! Expected "
          "function 76 (GSP_RM_CONTROL) (0x20801348 0x410).")


def bundle(tmp: Path, files: dict[str, str], nodes: tuple[str, ...] = ("node-a", "node-b"),
           window: tuple[str, str] = ("2026-12-03T15:00:00Z", "2026-12-03T16:30:00Z")) -> Verdict:
    for rel, text in files.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text)
    (tmp / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\nworkload:\n  id: '7'\n  scheduler: static\n"
        f"  window: {{start: '{window[0]}', end: '{window[1]}'}}\n  nodes: [{', '.join(nodes)}]\n"
        "  terminal_state: FAILED\n  timezone: UTC\n"
        "sources:\n  - {kind: kernel, path: 'nodes/{node}/kern.log'}\n"
        "  - {kind: application, path: 'logs/{node}/app.log'}\n")
    return Analyzer().analyze_path(str(tmp))


# One Xid, the first, wrapped by a layer; the other, two minutes later on the other node, plain. Each layer as
# its program printed it here (util-linux 2.38.1 logger, GNU grep 3.8, dmesg --decode's layout; rsyslog's
# RSYSLOG_ForwardFormat by its documented template).
LAYERED_15_54_42 = {
    "rfc5424": f"<11>1 2026-12-03T15:54:42.513181+00:00 vm kernel - - - {XID79}",
    "rfc5424-sd": f'<11>1 2026-12-03T15:54:42.513181+00:00 vm kernel - - [timeQuality tzKnown="1"] {XID79}',
    "rfc3164-pri": f"<11>Dec  3 15:54:42 vm kernel: {XID79}",
    "rsyslog-forward": f"<4>2026-12-03T15:54:42.513181+00:00 node-a kernel: [ 817.312044] {XID79}",
    "grep-H": f"logs/kern.log:Dec  3 15:54:42 node-a kernel: [ 817.312044] {XID79}",
    "grep-Hn": f"kern.log:1:Dec  3 15:54:42 node-a kernel: [ 817.312044] {XID79}",
    "dmesg-decode": f"kern  :err   : 2026-12-03T15:54:42,513181+00:00 {XID79}",
}


@pytest.mark.parametrize("layer", sorted(LAYERED_15_54_42))
def test_the_first_xid_wins_whatever_layer_wraps_it(tmp_path: Path, layer: str) -> None:
    v = bundle(tmp_path, {
        "nodes/node-a/kern.log": LAYERED_15_54_42[layer] + "\n",
        "nodes/node-b/kern.log": f"Dec  3 15:56:42 node-b kernel: [ 901.000000] {XID119}\n",
    })
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes) == ("gpu.fallen_off_bus", ["node-a"])
    assert v.root_cause.first_seen is not None and "T15:54:42" in str(v.root_cause.first_seen)


@pytest.mark.parametrize("layer", ["rfc5424", "grep-H", "dmesg-decode"])
def test_the_layer_does_not_make_a_line_first_the_time_does(tmp_path: Path, layer: str) -> None:
    # the same two Xids, the layered one now the later: the plain one on node-b is where it began
    v = bundle(tmp_path, {
        "nodes/node-a/kern.log": LAYERED_15_54_42[layer] + "\n",
        "nodes/node-b/kern.log": f"Dec  3 15:52:42 node-b kernel: [ 901.000000] {XID119}\n",
    })
    assert v.root_cause is not None and v.root_cause.nodes == ["node-b"]


def test_a_port_error_in_a_ranks_own_log_is_the_link(tmp_path: Path) -> None:
    # NCCL 2.23-2.27's wording (net_ib's format string, synthetic host and time), then the other node's ranks time
    # out on the collective (LlamaFactory#6269's watchdog line)
    v = bundle(tmp_path, {
        "logs/node-a/app.log": "2026-12-03 15:40:00,000 INFO step 10\n"
                               "node-a:4242:4300 [0] NCCL WARN NET/IB : mlx5_2:1 Got async error event: port error\n",
        "logs/node-b/app.log": "[rank0]:[E1203 15:50:00.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught "
                               "collective operation timeout: WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, "
                               "NumelIn=544997376, NumelOut=68124672, Timeout(ms)=600000) ran for 600061 milliseconds "
                               "before timing out.\n",
    })
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes) == ("network.link", ["node-a"])


def test_peers_that_stopped_answering_name_no_cause(tmp_path: Path) -> None:
    # openucx/ucx#5159: every rank's UD endpoint timed out; that a peer stopped answering is all it says
    v = bundle(tmp_path, {
        "logs/node-a/app.log": "[jazz15:39570:0:39570]       ud_ep.c:248  Fatal: UD endpoint 0x3b9a060: unhandled "
                               "timeout error\n",
        "logs/node-b/app.log": "[jazz18:165449:0:165449]       ud_ep.c:248  Fatal: UD endpoint 0x21ead80: unhandled "
                               "timeout error\n",
    })
    assert v.attributed_domain == "unknown" and v.root_cause is None
    assert [s.category for s in v.symptoms] == ["nccl.remote_error"]
