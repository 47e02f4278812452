"""A line of a C++ exception's stack, claimed and read to nothing whatever the stream holds, is read without its
candidate (collect/scan.py Extraction.quiet_hits / read_quiet, extract/exceptions.py quiet_claim, extract/traceback.py
TracebackModel.stack_line), issue 27: every rank of a job prints the watchdog's stack under its abort.

The verdict is the one of reading each such line in full; the near misses are stack lines that are read in full: one
another extractor's word reaches, one in a stream where a tagged traceback header named a writer, one that holds a
chain marker, an NGC banner's words.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from pathlib import Path

import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.extract import exceptions, memo
from firstfault.extract import traceback as tb
from firstfault.extract.base import LineContext
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract.helpers import assert_same_without_quiet, count_quiet

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)

# instructlab/training#520 (PyTorch's ProcessGroupNCCL abort, its stack as c10 prints it), behind the rank's own
# stamped lines as PyTorch 2.4 prefixes them (`[rank3]:[E1102 ...]`), the times and rank ours
ABORT = """\
[rank{r}]:[E1102 10:30:27.278656085 ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective operation timeout: \
WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1) ran for 90 milliseconds before timing out.
Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632 \
(most recent call first):
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f83f296c1b6 in /venv/lib64/python3.11/\
site-packages/torch/lib/libc10.so)
frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, \
1000l> > >) + 0x2b4 (0x7f83a09fec74 in /venv/lib64/python3.11/site-packages/torch/lib/libtorch_cuda.so)
frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x890 (0x7f83a0a007d0 in /venv/lib64/python3.11/\
site-packages/torch/lib/libtorch_cuda.so)
{extra}
terminate called after throwing an instance of 'c10::DistBackendError'
  what():  [PG ID 0 PG GUID 0(default_pg) Rank {r}] Process group watchdog thread terminated with exception: \
[Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, \
Timeout(ms)=1) ran for 90 milliseconds before timing out.
"""
# pytorch/pytorch#113128 (tests/wild's amb-pytorch-deepspeed-chat-...-113128): the watchdog's CUDA error and its stack
CUDA = """\
[E ProcessGroupNCCL.cpp:915] [Rank {r}] NCCL watchdog thread terminated with exception: CUDA error: unknown error
Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 (most recent call first):
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7fd75cf92617 in /usr/anaconda3/envs/train/\
lib/python3.10/site-packages/torch/lib/libc10.so)
"""
# Metaflow's tag before a traceback's header (extract/traceback.py MAX_LEAD's example): a tagged header names a writer
TAGGED = """\
2024-08-04 20:06:04.881 [1722801944329017/optimize/6 (pid 19491)] Traceback (most recent call last):
2024-08-04 20:06:04.882 [1722801944329017/optimize/6 (pid 19491)]   File "train.py", line 3, in <module>
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7fd75cf92617 in libc10.so)
2024-08-04 20:06:04.883 [1722801944329017/optimize/6 (pid 19491)] RuntimeError: boom
"""
EXTRAS = [
    "",
    # another reader's words on a stack line (ours): the NCCL timeout reader reads it too, so it is read in full
    "frame #3: Watchdog caught collective operation timeout (0x7f83a0a01 in libtorch_cuda.so)",
    # a chain marker on a stack line (ours): the traceback model marks the chain there
    "frame #3: The above exception was the direct cause of the following exception (0x7f in libpython.so)",
    # the NGC containers' driver check's words (codes.NGC_DRIVER_CHECK) on a stack line (ours)
    "frame #3: ERROR: This container was built for NVIDIA Driver Release 550 or later (0x7f in libc10.so)",
    CUDA.format(r=9),
    TAGGED,
]


def _bundle(make_bundle: BundleMaker) -> Path:
    wl = copy.deepcopy(WORKLOAD)
    files = {f"app/rank-{r}.log": ABORT.format(r=r, extra=EXTRAS[r]) for r in range(6)}
    return make_bundle(files, wl)


def _verdict(root: Path) -> str:
    return records.dumps(Analyzer().analyze_path(str(root), now=NOW), indent=2)


def test_the_verdict_is_the_one_of_reading_every_stack_line(make_bundle: BundleMaker,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    root = _bundle(make_bundle)
    quiet = count_quiet(monkeypatch)
    with memo.fastpath(True):
        on = _verdict(root)
    assert len(quiet) == 6 * 4 + 2  # each rank's `Exception raised from` and three frames, rank 4's CUDA stack
    assert not [t for t in quiet if "Watchdog" in t or "above exception" in t or "NVIDIA Driver" in t
                or t.endswith(" in libc10.so)")]  # (TAGGED's: its stream's writer was named by a tag)
    assert_same_without_quiet(monkeypatch, lambda: _verdict(root), on)


def test_a_stack_line_is_claimed_quietly_whatever_the_model_holds_but_a_tagged_writer() -> None:
    line = "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x890 (0x7f83a0a007d0 in libtorch_cuda.so)"
    m = tb.TracebackModel()
    assert m.stack_line(line, 3) and 3 in m.streams
    # an open Python traceback: a C++ stack's line is claimed all the same (feed tests CXX_FRAME first)
    ctx = LineContext("application", "a.log", 1, None, 3, None, {})
    m.feed("Traceback (most recent call last):", 3, ctx)
    assert m.streams[3].opened == 1 and m.stack_line(line, 3)
    # a tagged header named a writer in the stream: feed may send the line's rest to the tag's stream
    m.feed("2024-08-04 20:06:04.881 [task/6 (pid 19491)] Traceback (most recent call last):", 4, ctx)
    assert m.leads.get(4) and not m.stack_line(line, 4)
    # not a stack's line: a chain marker, a traceback's header, another line
    assert not m.stack_line(line + " " + tb.CHAIN_MARKERS[0], 3)
    assert not m.stack_line("frame #2: " + tb.TRACEBACK, 3)
    assert not m.stack_line("  File \"train.py\", line 3, in <module>", 3)


def test_feeds_tests_before_the_stack_never_take_a_stack_line() -> None:
    # _peel_group's and _feed's headers, which feed tests before CXX_FRAME, never start a line CXX_FRAME reads
    lines = ["frame #0: Exception in thread worker: x", "Exception raised from ignored at x.cc:1 "
             "(most recent call first): Exception ignored in thread", "  frame #1: | + Exception Group Traceback"]
    for line in lines:
        assert tb.CXX_FRAME.match(line)
        assert not tb._THREAD_HEADER.match(line) and not tb._IGNORED_HEADER.match(line)
        assert not tb._GROUP_OPEN.match(line) and not tb._GROUP_FRAME.match(line)


def test_quiet_claim_reads_as_extract_does() -> None:
    ex = exceptions.ExceptionExtractor()
    line = "Exception raised from checkTimeout at /pytorch/ProcessGroupNCCL.cpp:632 (most recent call first):"
    state: dict[str, object] = {}
    assert ex.quiet_claim(line, state, 5)
    ctx = LineContext("application", "a.log", 1, None, 5, None, other := {})
    assert list(ex.extract(line, ctx)) == [] and ctx.claimed
    assert list(state) == list(other) and list(state[exceptions._MODEL].streams) == [5]  # type: ignore[attr-defined]
    banner = "frame #3: ERROR: This container was built for NVIDIA Driver Release 550 or later (0x7f in libc10.so)"
    fresh: dict[str, object] = {}
    assert not ex.quiet_claim(banner, fresh, 5) and fresh == {}
