"""cuda_drafts' answer "nothing" remembered by the line's digits made `0` (extract/traceback.py), issue 27.

Every rank of a job whose collective timed out prints the same `what():` line but for its rank and counters, and the
exception extractor reads it through `classify`, whose first step is cuda_drafts (25 us a line). A body that holds
none of the words and shapes ahead of which cuda_drafts reads a digit's value is read once per zeroed form; the near
misses are bodies whose digits do decide, read afresh each time: each pair below puts the quiet twin first.
"""

from __future__ import annotations

import pytest

from firstfault.extract import codes, memo
from firstfault.extract import traceback as tb

# instructlab/training#520 (a CI run with the watchdog's timeout set to 1 ms: PyTorch's ProcessGroupNCCL abort), and
# the same line as another rank prints it (its rank, sequence number and times ours)
WHAT = ("what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with exception: "
        "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)=1) ran for 90 milliseconds before timing out.")
WHAT_OTHER_RANK = WHAT.replace("Rank 3", "Rank 7").replace("SeqNum=1", "SeqNum=4").replace("ran for 90", "ran for 82")
DIST = tb.Exc("c10::DistBackendError", "DistBackendError", WHAT.split("what():", 1)[1].strip())


@pytest.fixture(autouse=True)
def _fresh() -> None:
    for m in tb._CUDA_QUIET:
        m.clear()


def test_a_ranks_twin_is_answered_by_the_first_reading() -> None:
    raised = tb._CUDA_QUIET[True]
    assert tb.cuda_drafts(WHAT, DIST) == []
    assert len(raised) == 1 and raised.hits == 0
    assert tb.cuda_drafts(WHAT_OTHER_RANK, DIST) == []
    assert raised.hits == 1
    # a line of its own is remembered apart (calm records and a math library's status read differently there)
    assert tb.cuda_drafts(WHAT_OTHER_RANK, None) == [] and len(tb._CUDA_QUIET[False]) == 1


def test_the_memo_answers_what_a_fresh_reading_gives() -> None:
    for body, exc in ((WHAT, DIST), (WHAT_OTHER_RANK, DIST), (WHAT, None)):
        assert tb.cuda_drafts(body, exc) == tb._cuda_drafts(body, exc, False)


@pytest.mark.parametrize(
    ("quiet", "loud", "code"),
    [
        # A table text that holds a digit (catalog/cuda.yaml 32, CUDA's runtime API: cudaErrorMemoryValueTooLarge),
        # its message before a check's ` at FILE:LINE` (codes._at_source); 64 is no error's
        ("memory size or pointer value too large to fit in 64 bit at src/alloc.cu:88",
         "memory size or pointer value too large to fit in 32 bit at src/alloc.cu:88", 32),
        # The HIP runtime's log (ROCm clr rocclr/utils/debug.hpp: `:<level>:<file> :<line> : <N> us: ...`): level 3 is
        # a call's trace (its answer, no error), level 1 an error record, read for the table's message (222)
        (":3:rocdevice.cpp :2654: 1234 us: [pid:1] the provided PTX was compiled with an unsupported toolchain.",
         ":1:rocdevice.cpp :2654: 1234 us: [pid:1] the provided PTX was compiled with an unsupported toolchain.",
         222),
        # A code before its own message (codes.CODED_CUDA_MESSAGE): only the code the message is 3's
        ("Error 4: initialization error", "Error 3: initialization error", 3),
    ],
)
@pytest.mark.parametrize("raised", [False, True])
def test_a_zeroed_twin_whose_digits_decide_is_read_afresh(quiet: str, loud: str, code: int, raised: bool) -> None:
    exc = tb.Exc("RuntimeError", "RuntimeError", "x") if raised else None
    assert memo.digits_zeroed(quiet) == memo.digits_zeroed(loud)
    assert tb.cuda_drafts(quiet, exc) == []
    assert [d.fields.get("cuda_code") for d in tb.cuda_drafts(loud, exc)] == [code]
    assert len(tb._CUDA_QUIET[raised]) == 0


def test_the_fast_paths_off_read_every_line() -> None:
    memo.set_enabled(False)
    try:
        assert tb.cuda_drafts(WHAT, DIST) == [] and len(tb._CUDA_QUIET[True]) == 0
    finally:
        memo.set_enabled(True)


# What cuda_drafts reads past cuda_digit_blind: these patterns ask a digit only its class, and these words hold none.
_BLIND = (tb._CUDA_HINT, tb._GLOG_CALM, tb._CALM_RECORD, tb._LOUD_LEVEL, codes._COMPILER_DIAGNOSTIC,
          codes._CALL_FAILED_RES, codes._CALL_RETURNED, codes._AT_SOURCE, codes._CUDA_CALL, codes._INIT_CALL,
          codes._CUDNN_STATUS, codes._LIBRARY_STATUS, codes._RETURNED_CODE, codes._CODE)


@pytest.mark.parametrize("pattern", _BLIND, ids=lambda p: p.pattern[:40])
def test_the_patterns_past_the_gate_are_digit_blind(pattern: object) -> None:
    assert memo.digit_blind(pattern)  # type: ignore[arg-type]


def test_what_reads_a_digit_is_behind_the_gate() -> None:
    # the patterns that name digits of their own are reached only through the gate's words or shapes
    assert not memo.digit_blind(codes._HIP_TRACE)  # (a line that starts with `:`)
    assert not memo.digit_blind(codes._ALLOC_FAILED)
    assert set(codes.ALLOC_LITERALS) <= set(tb.CUDA_DIGIT_WORDS)
    words = (*tb._CALM_LITERALS, *codes.INIT_CALLS, *codes._DIAGNOSTIC_LITERALS, codes.NGC_DRIVER_CHECK,
             codes._CHECK_FAILED, "Cuda failure", *codes.cuda_message_literals(), *codes._lone_index()[0])
    assert not [w for w in words if any(c.isdigit() for c in w)]
    # the table's texts that hold a digit are found by their zeroed form, in any case
    assert codes.digit_message(memo.digits_zeroed("MEMORY SIZE OR POINTER VALUE TOO LARGE TO FIT IN 16 BIT"))
    assert not codes.digit_message(memo.digits_zeroed(WHAT))
