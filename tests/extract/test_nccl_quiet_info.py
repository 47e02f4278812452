"""An NCCL INFO line the NCCL error reader understands as no failure (catalog/transport.yaml `nccl_info_lines`, a
`benign` row of `nccl_node_warns`, a routine adapter event) is claimed and read to nothing whatever the stream holds:
the scanner reads it without its candidate where no other reader's words are on it (extract/nccl.py
NcclErrorExtractor.quiet_claim, collect/scan.py Extraction.read_quiet), and the reader's decision is remembered by the
line's template (nccl._no_failure): every rank of a job prints `NCCL INFO TUNER/Plugin: Using internal tuner plugin.`
under its own host, pid and device (issue 27).

The verdict is the one of reading every line in full, with the fast paths on and off. The near misses: an `announced`
row's INFO line (noted in the stream's state: read in full), an INFO line another reader's words reach, an INFO line
no row names, and lines of one template that differ in a word with a digit (no answer remembered for them).
"""

from __future__ import annotations

import copy

import pytest

from firstfault.extract import memo, nccl
from firstfault.extract.base import LineContext
from tests.conftest import BundleMaker
from tests.extract.helpers import assert_same_without_quiet, read_rank_logs_quietly

# NCCL's src/plugin/tuner.cc, INFO(NCCL_TUNING, "TUNER/Plugin: Using internal tuner plugin."), behind NCCL's
# `host:pid:tid [dev] NCCL INFO` prefix; the host, pid and device ours
TUNER = "node-00{r}:2345:239{r} [{r}] NCCL INFO TUNER/Plugin: Using internal tuner plugin."
# src/transport/net_ib.cc's GID table change (a routine adapter event), the device ours
GID = "node-00{r}:2345:239{r} [{r}] NCCL INFO NET/IB : mlx5_{r}:1 Got async event : GID table changed"
# the `announced` row nccl_too_old (src/enqueue.cc: a kernel's shared memory over the device's), at INFO
TOO_OLD = ("node-00{r}:2345:239{r} [{r}] NCCL INFO Kernel shared memory size 90000 exceeds device/fn maxSharedMem "
           "49152")
# an INFO line no row names, and one whose plugin words reach the exception reader too (`: No such file or directory`)
PLAIN = "node-00{r}:2345:239{r} [{r}] NCCL INFO Using network IB"
LOAD = ("node-00{r}:2345:239{r} [{r}] NCCL INFO TUNER/Plugin: Plugin load returned 11 : libnccl-net.so: cannot open "
        "shared object file: No such file or directory : when loading libnccl-tuner.so")
TIMEOUT = ("[rank{r}]:[E1102 10:30:27.278656085 ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective "
           "operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1) ran for 90 "
           "milliseconds before timing out.")
# the near misses, one a rank
EXTRAS = [TOO_OLD, LOAD, PLAIN, GID, "", "NCCL INFO TUNER/Plugin: Using internal tuner plugin, which failed to load"]


def test_the_verdict_is_the_one_of_reading_every_line(make_bundle: BundleMaker,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    n = len(EXTRAS)
    on, quiet, verdict = read_rank_logs_quietly(
        make_bundle, monkeypatch, [[TUNER.format(r=r), EXTRAS[r].format(r=r), TIMEOUT.format(r=r)] for r in range(n)])
    assert sorted(t for t in quiet if "TUNER" in t) == sorted(TUNER.format(r=r) for r in range(n))
    for near in (TOO_OLD.format(r=0), LOAD.format(r=1), PLAIN.format(r=2), EXTRAS[-1]):
        assert near not in quiet, near
    assert_same_without_quiet(monkeypatch, verdict, on)


def test_quiet_claim_reads_as_extract_does() -> None:
    ex = nccl.NcclErrorExtractor()
    lines = [TUNER.format(r=1), GID.format(r=2), TOO_OLD.format(r=3), PLAIN.format(r=4), LOAD.format(r=5),
             "node-001:2345:2391 [1] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1234> with error 12, "
             "opcode 0, len 0, vendor err 129"]
    for fast in (True, False):
        with memo.fastpath(fast):
            for state_before in ({}, {nccl._ANNOUNCED: {"nccl_too_old": 1}}):
                for i, line in enumerate(lines):
                    mine, theirs = copy.deepcopy(state_before), copy.deepcopy(state_before)
                    said = ex.quiet_claim(line, mine, None)
                    ctx = LineContext("application", "a.log", i + 3, None, None, None, theirs)
                    got = list(ex.extract(line, ctx))
                    assert mine == state_before, line  # (quiet_claim changes nothing)
                    if said:  # nothing, claimed, and the state as extract leaves it
                        assert got == [] and ctx.claimed and theirs == state_before, line
                    assert said == (i in (0, 1, 4)), line  # (LOAD: the exception reader reads it too)


def test_no_failure_is_remembered_by_template_only_where_the_template_decides() -> None:
    ex = nccl.NcclErrorExtractor()
    # one template (digits aside), a word with a digit apart: `Failed to open libmlx5` is an error word
    # (catalog/transport.yaml), `libmlx4` is none
    pair = ["node-001:2345:2391 [1] NCCL INFO NET/IB : Failed to open libmlx5, using ibverbs",
            "node-001:2345:2391 [1] NCCL INFO NET/IB : Failed to open libmlx4, using ibverbs"]
    assert "Failed to open libmlx0" in (nccl._digit_words_zeroed() or ())
    lines = [TUNER.format(r=r) for r in range(3)] + [TOO_OLD.format(r=r) for r in range(3)] + pair + pair[::-1]
    with memo.fastpath(False):
        off = [nccl._no_failure(line) for line in lines]
    with memo.fastpath(True):
        on = [nccl._no_failure(line) for line in lines]
        assert on == off
        # the TUNER lines' template is remembered, the pair's is not
        assert nccl._NO_FAILURE.find(memo.digits_zeroed(TUNER.format(r=7))) is True
        assert nccl._NO_FAILURE.find(memo.digits_zeroed(pair[1])) is None
    assert off[:3] == [True] * 3 and all(isinstance(r, nccl.NcclNodeWarn) for r in off[3:6])
    del ex
