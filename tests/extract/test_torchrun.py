"""The torchrun extractor (extract/torchrun.py) on real lines: the elastic agent's ChildFailedError summary
and its signal lines, fed line by line through one shared state.

Lines are verbatim from the public issues cited next to them unless marked
`synthetic`.
"""

from __future__ import annotations

import pytest

from firstfault.extract import nccl, torchrun
from firstfault.extract.base import LineExtractor
from tests.extract.helpers import APPLICATION, TB, assert_fields, holds_literal, kinds
from tests.extract.helpers import one_application as one
from tests.extract.helpers import scan_application as scan

TORCHRUN = torchrun.TorchrunExtractor()
ALL: tuple[LineExtractor, ...] = (*nccl.EXTRACTORS, *APPLICATION)


# ---------------------------------------------------------------- torch.child_failed

CPPO_BLOCK = [
    # lzhxmu/CPPO#6
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    "============================================================",
    "src/open_r1/grpo_gsm.py FAILED",
    "------------------------------------------------------------",
    "Failures:",
    "  <NO_OTHER_FAILURES>",
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2025-05-21_15:43:03",
    "  host      : mlxlab115rp2n7682d40d9-20250521025625-6dyyd3-8nir8b-worker",
    "  rank      : 0 (local_rank: 0)",
    "  exitcode  : -9 (pid: 14750)",
    "  error_file: <N/A>",
    "  traceback : Signal 9 (SIGKILL) received by PID 14750",
    "============================================================",
]


def test_child_failed_root_cause_sigkill() -> None:
    for line in ("Failures:", "Root Cause (first observed failure):", CPPO_BLOCK[10], CPPO_BLOCK[11], CPPO_BLOCK[12]):
        assert holds_literal(TORCHRUN, line), line
    drafts = scan(ALL, [TB, *CPPO_BLOCK])
    assert kinds(drafts) == ["torch.child_failed"], drafts
    d = drafts[0]
    assert d.fields == {"exitcode": -9, "signal": "SIGKILL", "root_cause": True, "failed_rank": 0}
    assert d.rank == 0
    assert d.host == "mlxlab115rp2n7682d40d9-20250521025625-6dyyd3-8nir8b-worker"


def test_child_failed_with_other_failures_and_signal_suffix() -> None:
    """Several entries: the Failures section (SIGTERM'd siblings) and the root (2.7+ `(SIGSEGV)` suffix)."""
    lines = [
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
        "============================================================",
        "pretrain_gpt.py FAILED",
        "------------------------------------------------------------",
        "Failures:",
        "[1]:",
        "  time      : 2026-11-02_10:05:01",
        "  host      : node-02",
        "  rank      : 9 (local_rank: 1)",
        "  exitcode  : -15 (pid: 6422)",
        "  error_file: <N/A>",
        "  traceback : Signal 15 (SIGTERM) received by PID 6422",
        "[2]:",
        "  time      : 2026-11-02_10:05:01",
        "  host      : node-02",
        "  rank      : 10 (local_rank: 2)",
        "  exitcode  : -15 (pid: 6423)",
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2026-11-02_10:05:00",
        "  host      : node-02",
        "  rank      : 8 (local_rank: 0)",
        "  exitcode  : -11 (pid: 5277) (SIGSEGV)",
        "  error_file: <N/A>",
        "  traceback : Signal 11 (SIGSEGV) received by PID 5277",
        "============================================================",
    ]
    drafts = scan(TORCHRUN, lines)
    got = [(d.rank, d.fields["exitcode"], d.fields.get("signal"), d.fields["root_cause"]) for d in drafts]
    assert got == [(9, -15, "SIGTERM", False), (10, -15, "SIGTERM", False), (8, -11, "SIGSEGV", True)]
    assert all(d.host == "node-02" for d in drafts)


def test_child_failed_exitcode_1_with_traceback_reprint() -> None:
    """An @record'ed worker: exitcode 1 and its traceback under the entry (synthetic, torch 2.x layout)."""
    lines = [
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2026-11-02_10:03:07",
        "  host      : node-03",
        "  rank      : 17 (local_rank: 1)",
        "  exitcode  : 1 (pid: 4242)",
        "  error_file: /tmp/torchelastic_x/attempt_0/1/error.json",
        "  traceback : Traceback (most recent call last):",
        '    File "/usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py"'
        ", line 346, in wrapper",
        "      return f(*args, **kwargs)",
        "  ValueError: tokenizer vocab size 32000 does not match model 32001",
    ]
    drafts = scan(ALL, lines)
    assert kinds(drafts) == ["torch.child_failed", "app.exception"], drafts
    cf, exc = drafts
    assert cf.fields == {"exitcode": 1, "root_cause": True, "failed_rank": 17}
    assert (exc.rank, exc.host, exc.fields["exc_type"]) == (17, "node-03", "ValueError")


def test_child_failed_pre_2_0_layout() -> None:
    """torch 1.9/1.10: `Root Cause:` / `Other Failures:`, no host line (synthetic from the 1.9 template)."""
    lines = [
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "***************************************",
        "           train.py FAILED",
        "=======================================",
        "Root Cause:",
        "[0]:",
        "  time: 2021-08-10_19:34:03",
        "  rank: 2 (local_rank: 2)",
        "  exitcode: -6 (pid: 2817)",
        "  error_file: <N/A>",
        '  msg: "Signal 6 (SIGABRT) received by PID 2817"',
        "=======================================",
        "Other Failures:",
        "[1]:",
        "  time: 2021-08-10_19:34:03",
        "  rank: 3 (local_rank: 3)",
        "  exitcode: -15 (pid: 2818)",
        "***************************************",
    ]
    drafts = scan(TORCHRUN, lines)
    got = [(d.fields["failed_rank"], d.fields["signal"], d.fields["root_cause"], d.host) for d in drafts]
    assert got == [(2, "SIGABRT", True, None), (3, "SIGTERM", False, None)]


def test_field_lines_outside_a_summary_are_ignored() -> None:
    assert scan(TORCHRUN, ["  rank      : 0 (local_rank: 0)", "  exitcode  : -9 (pid: 1)"]) == []


# ---------------------------------------------------------------- process.signal (torchrun agent)


@pytest.mark.parametrize(
    ("line", "signal", "by"),
    [
        # hpcaitech/ColossalAI#3514
        (
            "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 812914 closing signal SIGTERM",
            "SIGTERM",
            "launcher",
        ),
        (
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 3 (pid: 812917) "
            "of binary: /data/miniconda3/envs/coati/bin/python",
            "SIGKILL",
            "launcher",
        ),
        # lmzpai/roboMamba#10 (2.x glog-style prefix)
        (
            "E0325 20:57:27.620000 2606 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed "
            "(exitcode: -9) local_rank: 5 (pid: 2630) of binary: /usr/bin/python3",
            "SIGKILL",
            "launcher",
        ),
        # NVIDIA/Megatron-LM#1880
        (
            "E1102 10:04:00.000000 1 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: -11) "
            "local_rank: 0 (pid: 6421) of binary: /usr/bin/python",
            "SIGSEGV",
            "self",
        ),
        (
            "W1102 10:04:00.100000 1 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 6422 "
            "closing signal SIGTERM",
            "SIGTERM",
            "launcher",
        ),
    ],
)
def test_torchrun_agent_lines(line: str, signal: str, by: str) -> None:
    d = one(TORCHRUN, line)
    assert d.kind == "process.signal"
    assert_fields(d, {"signal": signal, "by": by})


def test_agent_failed_with_plain_exit_code_is_not_a_signal() -> None:
    """A worker's own exit status is no signal: the agent's record that a process of the job failed (how the run
    ended where nothing else says it, engine/normalise.py own_end); a status of 0 is none."""
    line = (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 12) of "
        "binary: /usr/bin/python"
    )
    assert holds_literal(TORCHRUN, line)
    (d,) = scan(TORCHRUN, [line])
    assert d.kind == "launcher.exit"
    assert_fields(d, {"state": "FAILED", "system": "torchrun", "code": 1, "pid": 12})
    assert scan(TORCHRUN, [line.replace("exitcode: 1", "exitcode: 0")]) == []
