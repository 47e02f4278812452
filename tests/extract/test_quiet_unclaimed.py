"""Lines read to nothing without being claimed, read without their candidate (collect/scan.py Extraction.quiet_hits /
read_quiet), issue 27: a line only the error words' probe reads and that is known context (ErrorWords.known: PyTorch's
`Stack trace of the failed collective not found` on every rank of a watchdog timeout), and a line an extractor reads to
nothing without claiming it (extract/gpu.py SmiQueryExtractor: nvidia-smi's key `Total` inside NCCL's `NVLS comm ...
nvlsTotalSize N` line, printed by every rank at its communicator's set-up).

Such a line is read in full where anything else may read it: the probe among its hits (it offers an unclaimed line), a
next line that may continue its message (the line is read again joined to it), nvidia-smi's own `key : value` lines, a
probe-only line that is not known context (offered as unrecognized). The verdict is the one of reading every line in
full, with the fast paths on and off.
"""

from __future__ import annotations

import copy

import pytest

from firstfault.collect import scan
from firstfault.extract import gpu, memo
from firstfault.extract.base import LineContext
from tests.conftest import BundleMaker
from tests.extract.helpers import assert_same_without_quiet, read_rank_logs_quietly
from tests.extract.test_memory_printers import SMI_V100_DBE

# NCCL's src/transport/nvls.cc, INFO(NCCL_INIT | NCCL_NVLS, "NVLS comm %p headRank %d nHeads %d buffSize %zu
# nvlsPerRankSize %zu nvlsTotalSize %zu", ...), behind NCCL's `host:pid:tid [dev] NCCL INFO` prefix; the values ours
NVLS = ("node-00{r}:2345:2390 [{r}] NCCL INFO NVLS comm 0x7f3b2c00d3a{r} headRank 0 nHeads 4 buffSize 1048576 "
        "nvlsPerRankSize 201326592 nvlsTotalSize 805306368")
# PyTorch's torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (LOG(ERROR) where FlightRecorder holds no trace), behind
# the rank's glog prefix as PyTorch 2.4 prints it; the times ours
NOT_FOUND = ("[rank{r}]:[E1102 10:30:27.278656085 ProcessGroupNCCL.cpp:670] Stack trace of the failed collective not "
             "found, potentially because FlightRecorder is disabled. You can enable it by setting "
             "TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.")
TIMEOUT = ("[rank{r}]:[E1102 10:30:27.278656085 ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective "
           "operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1) ran for 90 "
           "milliseconds before timing out.")
# The near misses, one a rank (ours but for the quoted program's words)
EXTRAS = [
    "",
    # nvidia-smi -q's own `Total : N` lines (tests/extract/test_memory_printers.py's V100 dump): read in full
    "\n".join(SMI_V100_DBE),
    # a key's word and an error word: the probe reads the line after the smi reader, and offers it
    "Total failed steps: 3",
    # known context (c10/cuda's `CUDA kernel errors might be asynchronously reported ...`) wrapped at a terminal's
    # width: the next line may continue it, and the line is read joined to it
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be\n"
    "incorrect.",
    # a line only the probe reads that is no known context: offered as unrecognized; and, in lower case after the
    # NVLS line (which ends in a digit), what may continue it: the NVLS line is read in full, joined to it
    "worker 3 failed to load the checkpoint shard",
    # nvidia-smi's key word with its ` : ` on another program's line: read in full (the smi reader reads it as a key)
    "Total steps : 1200",
]
NEAR = ("Total failed", "asynchronously reported", "failed to load", " : ")


def test_the_verdict_is_the_one_of_reading_every_line(make_bundle: BundleMaker,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    n = len(EXTRAS)
    on, quiet, verdict = read_rank_logs_quietly(
        make_bundle, monkeypatch, [[NVLS.format(r=r), EXTRAS[r], NOT_FOUND.format(r=r), TIMEOUT.format(r=r)]
                                   for r in range(n)])
    assert sorted(quiet) == sorted([NVLS.format(r=r) for r in range(n) if r != 4]
                                   + [NOT_FOUND.format(r=r) for r in range(n)])
    assert not [t for t in quiet if any(w in t for w in NEAR)]
    assert '"Total failed steps: 3"' in on and "failed to load the checkpoint" in on  # (offered, unrecognized)
    assert_same_without_quiet(monkeypatch, verdict, on)


def test_smi_quiet_claim_reads_as_extract_does() -> None:
    ex = gpu.SmiQueryExtractor()
    lines = [NVLS.format(r=1), "Total failed steps: 3", "Total steps : 1200", *SMI_V100_DBE,
             "GPU 00000000:3B:00.0", "Fabric", "  Total   "]
    for state_before in ({}, {"gpu.smi": {"ECC Errors": 0, "Volatile": 1, "Double Bit": 2}}):
        for i, line in enumerate(lines):
            mine, theirs = copy.deepcopy(state_before), copy.deepcopy(state_before)
            said = ex.quiet_claim(line, mine, None)
            ctx = LineContext("application", "a.log", i + 3, None, None, None, theirs)
            got = list(ex.extract(line, ctx))
            if said:  # nothing, unclaimed, and the state as extract leaves it
                assert got == [] and not ctx.claimed and mine == theirs, line
            else:  # nothing done: a header, a GPU's line, a `key : value` (read in full)
                assert mine == state_before and (ctx.claimed or " : " in line), line
    assert ex.quiet_claim(NVLS.format(r=1), {}, None) and not ex.quiet_claim("    Total : 2", {}, None)


def test_a_line_only_the_probe_reads_is_quiet_where_it_is_known_context() -> None:
    def quiet(ex: scan.Extraction, line: str, wraps: bool = False) -> bool:
        d = ex._by_source["application"]
        ids = tuple(d.matcher.ids_in(line.encode()))
        return ex.quiet_hits("application", ids, d.matcher.key) and ex.read_quiet(
            "application", "a.log", 3, line, ids, wraps)

    with memo.fastpath(True):
        ex = scan.Extraction(scan.all_line_extractors())
        assert quiet(ex, NOT_FOUND.format(r=3))
        assert not quiet(ex, NOT_FOUND.format(r=3), wraps=True)  # (read again joined to the next line)
        assert not quiet(ex, "worker 3 failed to load the checkpoint shard")  # no known context: offered
        assert not quiet(ex, TIMEOUT.format(r=3))  # another reader's words
        assert ex._states == {}  # (the probe reads the body alone: no stream made)
        # a rank no int() reads in the line's prefix: _drafts offers it, and read_quiet leaves it to _drafts
        assert not quiet(ex, "[rank" + "9" * 5000 + "]: Stack trace of the failed collective not found")
        # ... and a C++ stack's line so (the exception extractor's quiet claim: read_quiet raised there before)
        assert not quiet(ex, "[rank" + "9" * 5000 + "]: frame #0: c10::Error::Error() + 0x96 (0x7f3c in libc10.so)")
    with memo.fastpath(False):
        assert not quiet(scan.Extraction(scan.all_line_extractors()), NOT_FOUND.format(r=3))
