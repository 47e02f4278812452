"""A rank's own abort after it reported a peer's loss is its reaction, not a crash of its own (extract/signals.py:
the stream's collective-failure mark, extract/nccl.py `mark_failure`), whichever extractor read the loss: NCCL's own
lines, or a traceback whose exception names the peer (gloo's `Connection closed by peer`).

The lines are the failure lab's own (lab/faults.py `sigkill_external` under torchrun, PyTorch 2.13 on gloo): rank 1
is SIGKILLed from outside; rank 2's backward raises gloo's error, and on its way out the C++ runtime aborts with no
exception in flight, which faulthandler reports. That teardown abort is a race: most runs print only the traceback.
"""

from __future__ import annotations

import copy

from firstfault.analysis.analyze import Analyzer
from firstfault.extract import nccl
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers

ALL = (*nccl.EXTRACTORS, *helpers.APPLICATION)

TRACEBACK = [
    "[default2]:[rank2]: Traceback (most recent call last):",
    '[default2]:[rank2]:   File "/work/main/lab/train.py", line 378, in main',
    "[default2]:[rank2]:     loss.backward()",
    "[default2]:[rank2]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] "
    "Connection closed by peer [127.0.0.1]:1944. This is typically caused by a remote worker crashing. Check the logs "
    "of the remote worker before reporting an error.",
]
ABORT = ["[default2]:terminate called without an active exception", "[default2]:Fatal Python error: Aborted"]


def _signals(lines: list[str]) -> list[tuple[str, object]]:
    return [(d.fields["signal"], d.fields.get("by")) for d in helpers.scan(ALL, lines, "application")
            if d.kind == "process.signal"]


def test_the_abort_after_a_peers_loss_in_a_traceback_is_the_ranks_reaction() -> None:
    assert _signals(TRACEBACK + ABORT) == [("SIGABRT", "runtime")]


def test_near_miss_the_same_abort_alone_is_the_processs_own_crash() -> None:
    assert _signals(ABORT) == [("SIGABRT", "self")]


def test_near_miss_an_exception_of_the_workloads_own_before_the_abort_leaves_it_the_processs() -> None:
    own = [*TRACEBACK[:3], "[default2]:[rank2]: ValueError: shapes (3, 4) and (5,) not aligned"]
    assert _signals(own + ABORT) == [("SIGABRT", "self")]


def test_the_verdict_names_no_crash(make_bundle: BundleMaker) -> None:
    log = "\n".join(TRACEBACK + ABORT) + "\n"
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-2.log": log}, copy.deepcopy(WORKLOAD), "peer-abort")))
    assert v.attributed_domain not in ("software", "hardware", "infrastructure", "network", "storage", "scheduler")
    assert v.root_cause is None or v.root_cause.category != "app.crash"
