"""The video readers' own words (catalog/exceptions.yaml DALI's enforce, extract/unrecognized.py FFmpeg's context
log): a DALI check that failed on a line of its own is the job's exception; FFmpeg's per-input complaints are known
context, never a failure of their own.

Provenance: the DALI line as posted in NVIDIA/DALI#2212 (its format NVIDIA/DALI include/dali/core/error_handling.h
DALI_ENFORCE); the FFmpeg lines as posted in DAMO-NLP-SG/VideoLLaMA2#20 (their format libavutil/log.c). The near
misses are ours."""

from __future__ import annotations

import pytest

from firstfault.extract.base import LineContext
from firstfault.extract.unrecognized import ErrorWords
from tests.extract import helpers

DALI_VFR = ('[/opt/dali/dali/operators/reader/video_reader_op.h:66] [/opt/dali/dali/operators/reader/loader/'
            'video_loader.cc:375] Assert on "skip_vfr_check_ || almost_equal(av_q2d(file.frame_base_), pkt.duration * '
            'av_q2d(file.stream_base_), 2)" failed: Variable frame rate videos are unsupported.')


def test_a_dali_check_alone_is_the_jobs_exception() -> None:
    assert [e.kind for e in helpers.events([DALI_VFR])] == ["app.exception"]


@pytest.mark.parametrize("line", [
    # the same words in prose, without DALI's file and line
    'the reader said Assert on "x" failed: bad input, then went on',
    # C's assert(3) is another program's form (read elsewhere, not by this row)
    "python3: video.c:42: main: Assertion `n > 0' failed.",
])
def test_near_miss_no_dali_check(line: str) -> None:
    assert [e for e in helpers.events([line]) if e.kind == "app.exception" and "Assert on" in str(e.fields)] == []


def claimed(line: str) -> bool:
    ctx = LineContext(source="application", file="f", lineno=1, node=None, rank=None, time=None, state={})
    list(ErrorWords().extract(line, ctx))
    return bool(ctx.claimed)


@pytest.mark.parametrize("line", [
    "[h264 @ 0x1f0acd40] mmco: unref short failure",
    "[h264 @ 0x55d3c2a1e940] error while decoding MB 53 20, bytestream -7",
    "[mov,mp4,m4a,3gp,3g2,mj2 @ 0x19a50700] moov atom not found",
])
def test_ffmpegs_per_input_log_is_known_context(line: str) -> None:
    assert claimed(line)


@pytest.mark.parametrize("line", [
    # a rank's tag and a mail address are no FFmpeg context
    "[rank0] @ step 10: loss failure",
    "[E socket.cpp:957] [c10d] The client socket has failed to connect to [node-1]:29500",
])
def test_near_miss_other_bracketed_lines_stay_error_looking(line: str) -> None:
    assert not claimed(line)
