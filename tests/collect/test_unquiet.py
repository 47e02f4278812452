"""The sparse path's prefilter passes over the lines of the kind's quiet shapes (issue 27, shape b: a rank log's
training steps, nine lines in ten of it, were each scanned for the catalog's 3,000 words). `_lines.unquiet` keeps
the lines whose shape is not in `LineFold.quiet` (every line of a quiet shape holds none of the prefilter's words:
`quiet_add`'s rule), joined, with their places; `LineScanner.hit_lines` scans those and puts each hit back at its
line. The hits and their words are `matcher.line_hits`' on the whole chunk, whatever the quiet shapes.

Test lines: a training step as Megatron-LM's `training_log` prints it (the bench generator's rank logs:
bench/gen_bundle.py), NCCL's INFO and WARN lines (NVIDIA/nccl's `INFO`/`WARN` macros, as the corpus's jobs print
them), and a task's `exitCode` in a Google Cloud Batch record (catalog/scheduler.yaml: its reserved codes
50001-50006 are prefilter words, with their digits; any other code is none).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault.collect import fold, scan
from firstfault.collect.events import EventStore
from firstfault.extract import memo
from tests import tier

needs_c = pytest.mark.skipif(scan._unquiet is None, reason="the C module (_lines) is not built")

STEP = (b"2026-11-02 10:01:29,%03d INFO iteration    %05d/  100000 | consumed samples:     %08d | elapsed time per "
        b"iteration (ms): 4312.5 | learning rate: 2.999400E-04 | global batch size:  1024 | lm loss: 1.934512E+00 |")
INIT = b"node-001:26347:26401 [0] NCCL INFO Channel %02d/0 : 0[0] -> 1[1] via P2P/CUMEM/read"
WARN = b"node-001:26347:26401 [0] misc/socket.cc:%d NCCL WARN Net : Connection closed by remote peer"
# A Batch task's exit code: 40001 holds no word, 50001 (a reserved code) the table's literal; one shape.
CODE_QUIET = b'task 3 status: {"exitCode": 40001}'
CODE_WORD = b'task 3 status: {"exitCode": 50001}'


def _scanner() -> scan.LineScanner:
    return scan.LineScanner("application", scan.all_line_extractors())


def _fold(sc: scan.LineScanner) -> fold.LineFold:
    lf = fold.LineFold(None, EventStore())  # type: ignore[arg-type]
    m = sc.matcher
    lf.start_file(m.digit_words, m.hex_words, None, 2026, None, ("application", id(m.key)), m.hex_literals)
    return lf


def _whole(sc: scan.LineScanner, buf: bytes) -> tuple[list[int], list[list[int]] | None]:
    starts, ids = sc.matcher.line_hits(buf)
    return list(starts), None if ids is None else [sorted(ids[k]) for k in range(len(ids))]


def _past_quiet(sc: scan.LineScanner, buf: bytes, lf: fold.LineFold) -> tuple[list[int], list[list[int]] | None]:
    starts, ids = sc.hit_lines(buf, lf)
    return list(starts), None if ids is None else [sorted(ids[k]) for k in range(len(ids))]


@needs_c
def test_unquiet_keeps_the_lines_of_other_shapes_joined_with_their_places() -> None:
    """A quiet shape's lines are left out, digits aside (one shape); a line of another length, one with a byte
    over 0x7f, one longer than the fold's lines and a last line without its newline are kept whole. Near misses:
    no quiet line, or quiet lines under half the bytes of the first `sample` lines: None (the prefilter scans the
    whole chunk)."""
    u = scan._unquiet
    quiet = {memo.line_shape(b"step 1 loss 2.5")}
    long_line = b"x" * 2100
    lines = [b"step 1 loss 2.5", b"NCCL WARN a", b"step 7 loss 3.1", b"step 12 loss 3.5", b"step 3 loss \xc3\xa9.5",
             long_line, b"step 4 loss 9.9", b"tail without newline"]
    buf = b"\n".join(lines)
    kept = u(buf, quiet, 256)
    assert kept is not None
    joined, at, starts = kept
    want = [1, 3, 4, 5, 7]
    offsets = [sum(len(x) + 1 for x in lines[:i]) for i in range(len(lines))]
    assert joined == b"".join(lines[i] + b"\n" for i in want[:-1]) + lines[-1]
    assert starts == [offsets[i] for i in want]
    assert [joined[a:].split(b"\n", 1)[0] for a in at] == [lines[i] for i in want]
    assert u(buf, set(), 256) is None
    assert u(b"a1\nb2\n", {memo.line_shape(b"zz")}, 256) is None
    few = b"NCCL WARN a\nNCCL WARN b\n" + b"step 1 loss 2.5\n" * 40
    assert u(few, quiet, 2) is None  # the first two lines hold no quiet byte
    assert u(few, quiet, 256) is not None


@needs_c
def test_a_rank_log_after_the_first_is_scanned_past_its_training_steps_with_the_same_hits() -> None:
    """The first rank log is scanned whole and teaches the steps' shape (a sample spread over it: its first lines
    are its set-up); the next one's steps are passed over and its hits, with their words, are the whole scan's."""
    sc = _scanner()
    lf = _fold(sc)

    def rank_log(r: int) -> bytes:
        head = [INIT % c for c in range(24)] + [WARN % (1000 + r)]
        steps = [STEP % (r, 12000 + i, 1024 * i) for i in range(400)]
        return b"\n".join([*head, *steps[:200], WARN % (2000 + r), *steps[200:]]) + b"\n"

    calls: list[bool] = []
    real = scan._unquiet

    def spy(buf: bytes, quiet: set[bytes], sample: int) -> object:
        got = real(buf, quiet, sample)
        calls.append(got is not None)
        return got

    first = rank_log(0)
    assert _past_quiet(sc, first, lf) == _whole(sc, first)
    assert memo.line_shape(STEP % (0, 12000, 0)) in lf.quiet
    with pytest.MonkeyPatch.context() as m:
        m.setattr(scan, "_unquiet", spy)
        for r in (1, 2, 3):
            buf = rank_log(r)
            got = _past_quiet(sc, buf, lf)
            assert got == _whole(sc, buf) and len(got[0]) == 2
    assert calls == [True, True, True]


@needs_c
def test_a_quiet_looking_line_whose_digits_spell_a_word_is_still_scanned() -> None:
    """Near miss: a task's `"exitCode": 40001` holds no word, and its shape is the one of `"exitCode": 50001`,
    which does (a literal with a digit): the shape is never quiet (quiet_add's rule), so the 50001 line is found
    among a chunk of 40001 lines. The test fails with that rule taken out (every no-word line's shape quiet)."""
    sc = _scanner()
    lf = _fold(sc)
    noise = b"\n".join([CODE_QUIET] * 50 + [STEP % (0, 12000 + i, i) for i in range(50)]) + b"\n"
    assert _past_quiet(sc, noise, lf) == _whole(sc, noise) == ([], [])
    assert memo.line_shape(CODE_QUIET) == memo.line_shape(CODE_WORD) and memo.line_shape(CODE_QUIET) not in lf.quiet
    buf = b"\n".join([STEP % (0, 13000 + i, i) for i in range(50)] + [CODE_QUIET] * 5 + [CODE_WORD]) + b"\n"
    got = _past_quiet(sc, buf, lf)
    assert got == _whole(sc, buf) and len(got[0]) == 1
    assert buf[got[0][0]:].startswith(CODE_WORD)


POOL = [STEP % (1, 12001, 1024), STEP % (2, 12002, 2048), INIT % 3, INIT % 17, WARN % 1203, CODE_QUIET, CODE_WORD,
        b"", b"NCCL WARN", b"caf\xc3\xa9 NCCL WARN x", b"y" * 2050, b"0x1f3a NCCL INFO", b"[rank3]: Traceback (most "
        b"recent call last):"]


@needs_c
@given(st.lists(st.lists(st.sampled_from(POOL), max_size=40), min_size=1, max_size=4),
       st.lists(st.sampled_from(POOL), max_size=60), st.booleans())
@settings(max_examples=tier.examples(300), deadline=None)
def test_the_hits_past_the_quiet_shapes_are_the_whole_scans(teach: list[list[bytes]], lines: list[bytes],
                                                           newline: bool) -> None:
    """Whatever chunks taught the quiet shapes first, a chunk's hits and their words past them are the whole
    scan's (a chunk the scanner reads ends with a newline; one that does not is held to it too)."""
    sc = _scanner()
    lf = _fold(sc)
    for chunk in teach:
        buf = b"\n".join(chunk) + b"\n"
        assert _past_quiet(sc, buf, lf) == _whole(sc, buf)
    buf = b"\n".join(lines) + (b"\n" if newline else b"")
    assert _past_quiet(sc, buf, lf) == _whole(sc, buf)
