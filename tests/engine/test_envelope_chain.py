"""An exception chain whose every member only wraps another (catalog/exceptions.yaml `envelope`) is a failure seen,
not a cause (extract/traceback.py `TracebackModel.unsettled`, extract/exceptions.py and extract/torchrun.py `at_end`,
analysis/analyze.py `finish`, engine/verdict.py `failure_seen`).

torchrun's ChildFailedError printed without its summary's entries, or a traceback that ends in a bare EOFError (a
pipe whose writer died), says that a process failed and not why. With no terminal state in the bundle the verdict was
`none` (the job did not fail), though the log shows a failure: it must stay `unknown`, with the line as the place to
look, and never become a cause. The near misses: the same chain where a later member decides (the worker's own
exception), the full ChildFailedError summary (its entries are the symptom), a frame or prose that names the class,
an EOFError with a message (the workload's own I/O), an envelope chain that ended a thread, a run that succeeded."""

from __future__ import annotations

from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from tests.conftest import BundleMaker

# LlamaFactory's issue whose whole post is torchrun's class line (hiyouga/LlamaFactory#8082: "```text
# torch.distributed.elastic.multiprocessing.errors.ChildFailedError```")
CHILD_LINE = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError"]
# torchrun's own traceback up to the class's line, its summary not posted (hpcaitech/ColossalAI#3571's frames, paths
# shortened; the `====` summary after the class line left out)
CHILD_CHAIN = [
    "Traceback (most recent call last):",
    '  File "/usr/local/bin/torchrun", line 8, in <module>',
    "    sys.exit(main())",
    '  File "/usr/local/lib/python3.8/dist-packages/torch/distributed/launcher/api.py", line 245, in launch_agent',
    "    raise ChildFailedError(",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
]
# ... and the summary with its entries (Vision-CAIR/MiniGPT-4#237, one entry kept)
CHILD_SUMMARY = [
    *CHILD_CHAIN,
    "============================================================",
    "train.py FAILED",
    "------------------------------------------------------------",
    "Failures:",
    "  <NO_OTHER_FAILURES>",
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2023-05-19_16:39:58",
    "  host      : node-001",
    "  rank      : 0 (local_rank: 0)",
    "  exitcode  : 1 (pid: 78970)",
    "  error_file: <N/A>",
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
    "============================================================",
]
# multiprocessing reading a pipe whose writer died (Qi-Zhangyang/GPT4Scene-and-VLN-R1#43: the post ends `raise
# EOFError` / `EOFError: `; the first frames ours)
EOF_CHAIN = [
    "Traceback (most recent call last):",
    '  File "/opt/train.py", line 41, in <module>',
    "    batch = conn.recv()",
    '  File "/home/myb/miniconda3/envs/vlnce/lib/python3.7/multiprocessing/connection.py", line 407, in _recv_bytes',
    "    buf = self._recv(4)",
    '  File "/home/myb/miniconda3/envs/vlnce/lib/python3.7/multiprocessing/connection.py", line 383, in _recv',
    "    raise EOFError",
    "EOFError: ",
]
# the same, then the chain's next member that names what happened (a DataLoader worker killed: PyTorch's
# `DataLoader worker (pid(s) N) exited unexpectedly` wording's sibling, `is killed by signal: Killed.`)
EOF_DECIDED = [
    *EOF_CHAIN,
    "",
    "The above exception was the direct cause of the following exception:",
    "",
    "Traceback (most recent call last):",
    '  File "/opt/train.py", line 41, in <module>',
    "    batch = next(it)",
    "RuntimeError: DataLoader worker (pid 3313) is killed by signal: Killed. ",
]


def _analyze(make_bundle: BundleMaker, lines: list[str], state: str | None = None) -> Any:
    wl: dict[str, Any] = {"id": "t", "scheduler": "static", "nodes": ["node-001"]}
    if state:
        wl["terminal_state"] = state
    root = make_bundle({"app/train.log": "".join(x + "\n" for x in ["step 1 loss 0.5", *lines])},
                       {"apiVersion": "firstfault/v1", "workload": wl,
                        "sources": [{"kind": "application", "path": "app/train.log"}]})
    return Analyzer().analyze_path(str(root))


@pytest.mark.parametrize(("lines", "line"), [(CHILD_LINE, 2), (CHILD_CHAIN, 7), (EOF_CHAIN, 9)])
def test_a_chain_of_envelopes_only_is_a_failure_seen(make_bundle: BundleMaker, lines: list[str], line: int) -> None:
    v = _analyze(make_bundle, lines)
    assert (v.outcome, v.attributed_domain, v.root_cause, v.candidates) == ("unknown", "unknown", None, [])
    assert not v.symptoms
    assert v.explanation[0].startswith("A failure was seen that says no cause of its own; look at "
                                       f"app/train.log:{line} (")


@pytest.mark.parametrize("lines", [CHILD_LINE, EOF_CHAIN])
def test_a_chain_of_envelopes_only_names_no_cause_in_a_failed_run(make_bundle: BundleMaker, lines: list[str]) -> None:
    v = _analyze(make_bundle, lines, state="FAILED")
    assert (v.outcome, v.attributed_domain, v.root_cause, v.candidates) == ("failed", "unknown", None, [])
    assert "A failure was seen" in v.explanation[0]


def test_a_later_member_that_decides_is_the_chains_reading(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, EOF_DECIDED)
    assert not any("A failure was seen" in n for n in v.explanation)
    assert v.attributed_domain != "none"


def test_the_summary_with_its_entries_is_the_symptom_not_an_envelope(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, CHILD_SUMMARY)
    assert [s.category for s in v.symptoms] == ["torch.child_failed"]
    assert not any("A failure was seen" in n for n in v.explanation)


@pytest.mark.parametrize("lines", [
    # a frame's source line and prose that name the class, no exception raised
    ["    raise ChildFailedError("],
    ["see https://pytorch.org/docs/stable/elastic/errors.html for what a ChildFailedError reports"],
    # an envelope chain that ended a thread, not the process (YOLOX's pin-memory thread, Megvii-BaseDetection/YOLOX#34,
    # its frames shortened)
    ["Exception in thread Thread-1:", "Traceback (most recent call last):",
     '  File "/usr/lib/python3.8/threading.py", line 932, in _bootstrap_inner',
     "    self.run()",
     '  File "/usr/lib/python3.8/multiprocessing/connection.py", line 383, in _recv',
     "    raise EOFError",
     "EOFError"],
])
def test_what_is_not_a_chain_of_envelopes_keeps_a_quiet_run_none(make_bundle: BundleMaker, lines: list[str]) -> None:
    v = _analyze(make_bundle, lines)
    assert (v.outcome, v.attributed_domain) == ("unknown", "none")


def test_an_eoferror_with_a_message_is_the_workloads_own(make_bundle: BundleMaker) -> None:
    # pickle's `Ran out of input` (kkoutini/PaSST#48): an exception of the workload, read whole
    v = _analyze(make_bundle, [*EOF_CHAIN[:-1], "EOFError: Ran out of input"], state="FAILED")
    assert v.root_cause is not None and v.root_cause.category.startswith("app.exception")
    assert not any("A failure was seen" in n for n in v.explanation)


def test_a_run_that_succeeded_stays_none(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, EOF_CHAIN, state="COMPLETED")
    assert (v.outcome, v.attributed_domain) == ("succeeded", "none")


def test_one_process_and_two_workers_read_an_envelope_chain_alike(make_bundle: BundleMaker,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # the workers read the files and send each stream's unsettled chain with the file's events
    from datetime import UTC, datetime

    from firstfault import records
    from firstfault.analysis import parallel
    from firstfault.bundle import load_bundle

    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    wl: dict[str, Any] = {"apiVersion": "firstfault/v1",
                          "workload": {"id": "t", "scheduler": "static", "nodes": ["node-001"]},
                          "sources": [{"kind": "application", "path": "app/*.log"}]}
    root = make_bundle({"app/rank-0.log": "".join(x + "\n" for x in ["step 1", *EOF_CHAIN]),
                        "app/rank-1.log": "step 1\nstep 2\n"}, wl)
    an = Analyzer()
    now = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
    out = [records.dumps(an.analyze_bundle(load_bundle(str(root)), now=now, workers=n), indent=2) for n in (1, 2)]
    assert out[0] == out[1]
    assert "A failure was seen" in out[0]
