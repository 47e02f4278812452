"""Two speed paths of the fold for noise that repeats from file to file (issue 27, shape b: the same kernel noise
on every node), and what they must not change:

- the fold's C loops keep the shapes of recent lines by their digit-masked bytes (_lines.fold_shape): the shape
  given back is memo.line_shape_py's, line after line, memo hit or miss;
- a file's first chunk read through the prefilter, when it ended as the dense loop's, teaches the kind its quiet
  shapes from its first lines (LineFold.quiet_from): the lines that hold no prefilter word, never a hit line, never
  a shape that could hold a word.

The verdict bytes with each on and off: tests/collect/test_scan_matches.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault.collect import fold
from firstfault.extract import memo
from tests import tier

try:
    from firstfault._lines import fold_shape, fold_shape_memo
except ImportError:  # pragma: no cover - a build without the C module
    fold_shape = fold_shape_memo = None  # type: ignore[assignment]
needs_c = pytest.mark.skipif(fold_shape is None, reason="the C module (_lines) is not built")

# Pieces whose joins make lines that differ only in digits (one memo entry), only in hex letters (another shape of
# the same digits), and near misses of a hex id (7 hex digits, a `g`), a UUID, `0x`.
_PIECES = [b"deadbeef", b"deadbeeg", b"DEADBEEF0", b"-", b"d609577e-baff-4330-9c9f-2ba1fa227274", b"0x", b"0x1fA",
           b"cafe", b"x", b"_", b" ", b":", b"9c9f", b"1", b"7", b"12345678", b"1234567", b"Z", b"a"]


@needs_c
@given(st.lists(st.lists(st.sampled_from(_PIECES), max_size=10), min_size=1, max_size=30))
@settings(max_examples=tier.examples(400), deadline=None)
def test_the_fold_loops_shape_is_the_python_shape_line_after_line(lines: list[list[bytes]]) -> None:
    for parts in lines:
        raw = b"".join(parts)
        assert fold_shape(raw) == memo.line_shape_py(raw), raw


@needs_c
def test_a_memo_hit_needs_the_same_bytes_but_digits() -> None:
    # The same digit-masked bytes: one shape (the memo's hit gives the object back).
    first = fold_shape(b"pid 1234 comm 0xab12")
    assert first == b"pid 0000 comm 0x0000"
    assert fold_shape(b"pid 9876 comm 0xab34") is first
    # Near misses: other hex letters in the same place are another line, and so is a byte more; a hex letter where a
    # digit was makes `0x` plus hex digits the same shape all the same, but by working it out, not by the memo.
    assert fold_shape(b"pid 1234 comm 0xcd12") == b"pid 0000 comm 0x0000"
    assert fold_shape(b"pid 1234 comm 0xab12 ") == b"pid 0000 comm 0x0000 "
    assert fold_shape(b"pid 12345 x deadbee") == b"pid 00000 x deadbee"
    assert fold_shape(b"pid 12345 x deadbeef") == b"pid 00000 x 00000000"
    assert fold_shape(b"\xc3\xa9 1") is None and fold_shape(b"x" * 2001) is None


@needs_c
def test_the_memo_can_be_turned_off_and_gives_the_same_shapes() -> None:
    raws = [b"Nov  2 10:00:%02d node-0%02d kernel: AER: id %08x" % (i, i % 7, i * 2654435761 % (1 << 32))
            for i in range(60)]
    with_memo = [fold_shape(r) for r in raws + raws]
    was = fold_shape_memo(False)
    try:
        without = [fold_shape(r) for r in raws + raws]
    finally:
        fold_shape_memo(was)
    assert with_memo == without == [memo.line_shape_py(r) for r in raws + raws]


def _lf() -> fold.LineFold:
    lf = fold.LineFold(None, None)  # type: ignore[arg-type]
    lf.start_file(digit_words=(b"Xid 00",), hex_words=memo.hex_words([b"dead"]))
    return lf


def test_a_first_chunk_teaches_the_quiet_shapes_of_its_lines_without_a_hit() -> None:
    buf = (b"Nov  2 10:00:05 node-002 systemd[1]: Started Session 4501 of User root.\n"
           b"Nov  2 10:00:05 node-002 kernel: pcieport 0000:00:1c.5: AER: Corrected error received\n"
           b"Nov  2 10:00:06 node-002 CRON[105006]: (root) CMD (/usr/sbin/nhc -t 60)\n")
    lf = _lf()
    second = buf.index(b"Nov  2 10:00:05 node-002 kernel")
    lf.quiet_from(buf, [second])
    lines = buf.split(b"\n")
    # The two lines without a hit, by their shapes: a later node's copies (other digits) are known.
    assert lf.quiet == {memo.line_shape(lines[0]), memo.line_shape(lines[2])}
    assert memo.line_shape(lines[0].replace(b"node-002", b"node-117").replace(b"4501", b"4977")) in lf.quiet
    # Near miss: the hit line's shape is not quiet.
    assert memo.line_shape(lines[1]) not in lf.quiet


def test_quiet_from_reads_the_first_lines_only_and_keeps_quiet_adds_rule() -> None:
    lines = [b"step %d loss 3.5" % i + b" x" * (i % 3) for i in range(100)]
    buf = b"\n".join(lines) + b"\n"
    lf = _lf()
    lf.quiet_from(buf, [], sample=2)
    assert lf.quiet == {memo.line_shape(lines[0]), memo.line_shape(lines[1])}  # not the third shape (` x x`)
    # Near misses: a shape that holds a word with a digit (`Xid 13`: `Xid 79` could be a word) or a masked hex id
    # that could hold a word (`dead` in `deadbeef12`) is not quiet, though the line itself held no word.
    lf = _lf()
    lf.quiet_from(b"NVRM: Xid 13 on bus\nid deadbeef12 ok\nid cafe ok\n", [])
    assert lf.quiet == {b"id cafe ok"}


def test_quiet_from_stops_at_a_chunk_without_a_newline() -> None:
    lf = _lf()
    lf.quiet_from(b"id cafe ok\nid beef", [])
    assert lf.quiet == {b"id cafe ok"}
