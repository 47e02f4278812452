"""A regular file's reads ask for what it holds (collect/chunks.py `chunks`' `left`, from its size at its open in
LineScanner.scan_file), not for a whole chunk: FileIO.read(n) allocates n bytes first, and a bundle of thousands of
small rank logs paid a chunk's allocation twice a file. The lines and their numbers are those of whole-chunk reads,
and a file that grew after its size was taken is still read to its end."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from firstfault.collect import chunks as ch
from firstfault.collect import scan
from firstfault.collect.chunks import FileStats
from firstfault.timeparse import TimeParser


class _Recording(io.RawIOBase):
    """A raw stream over `data` that records each read's request."""

    def __init__(self, data: bytes) -> None:
        self._data, self._at = data, 0
        self.asked: list[int] = []

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        self.asked.append(n)
        out = self._data[self._at : self._at + n]
        self._at += len(out)
        return out


def _lines(data: bytes, left: int | None, chunk: int) -> tuple[list[tuple[bytes, int]], list[int]]:
    fh = _Recording(data)
    stats = FileStats()
    first = fh.read(chunk if left is None else min(chunk, left + 1))
    return list(ch.chunks(fh, stats, None, first, chunk, None if left is None else left - len(first))), fh.asked


@pytest.mark.parametrize("size", [0, 1, 99, 4095, 4096, 4097, 20000])
def test_reads_sized_by_the_file_give_the_chunks_of_whole_chunk_reads(size: int) -> None:
    data = b"".join(b"line %d of the log\n" % i for i in range(size // 19 + 1))[:size]
    whole, asked_whole = _lines(data, None, 4096)
    sized, asked = _lines(data, len(data), 4096)
    assert sized == whole
    assert max(asked) <= min(4096, len(data) + 1)  # never a whole chunk's request for a smaller file
    assert max(asked_whole) == 4096
    assert len(asked) <= len(asked_whole) + 1


def test_a_file_that_grew_after_its_size_was_taken_is_read_to_its_end() -> None:
    """Near miss: the size is a hint, not the end: a read that returns all it asked for is followed by another."""
    data = b"first line\nsecond line\n"
    more = b"third line, written meanwhile\n" * 300
    fh = _Recording(data + more)  # grew between the size (of `data`) and the reads
    stats = FileStats()
    first = fh.read(len(data) + 1)
    got = b"".join(buf for buf, _ in ch.chunks(fh, stats, None, first, 4096, len(data) - len(first)))
    assert got == data + more
    assert stats.lines == 2 + 300


def test_scan_file_sizes_its_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the scanner: a small file is read with requests of its size and one byte, its candidates found."""
    from datetime import UTC, datetime

    from firstfault.collect.scan import all_line_extractors

    path = tmp_path / "rank-0.log"
    # PyTorch's watchdog line (PyTorch issue #112926's form), after a stamped start-up line.
    path.write_bytes(b"2026-11-02 10:00:01,000 INFO Starting\n"
                     b"[rank0]:[E1102 10:22:33.123456 ProcessGroupNCCL.cpp:1590] [PG ID 0 PG GUID 0 Rank 0] "
                     b"Watchdog caught collective operation timeout\n")
    asked: list[int] = []
    real = ch.reader

    def recording(fh: object) -> object:
        read = real(fh)  # type: ignore[arg-type]

        def r(n: int) -> bytes:
            asked.append(n)
            return read(n)
        return r

    monkeypatch.setattr(scan, "reader", recording)
    monkeypatch.setattr(ch, "reader", recording)
    sc = scan.LineScanner("application", all_line_extractors())
    tp = TimeParser(UTC, datetime(2026, 11, 2, tzinfo=UTC), datetime(2026, 11, 3, tzinfo=UTC))
    got: list[object] = []
    stats = sc.scan_file(str(path), "app/rank-0.log", node="node-01", rank=0, srun_prefix=False, tp=tp,
                         emit=got.append)
    assert got and stats.lines == 2
    assert asked and max(asked) <= path.stat().st_size + 1


def test_a_read_that_gives_nothing_ends_the_stream() -> None:
    """chunks reads no more once a read gave nothing (the stream's end): a small file is two reads, its size and one
    byte, then the one that finds the end, not a third after the chunk was handed on. Near miss: a read that gave all
    it asked for is followed by another (a file that grew: test_a_file_that_grew_after_its_size_was_taken_...)."""
    data = b"line one\nline two\n"
    lines, asked = _lines(data, len(data), 4096)
    assert lines == [(data, 0)]
    assert asked == [len(data) + 1, 1]
    tail = b"no newline at the end"
    lines, asked = _lines(data + tail, len(data), 4096)  # grew: its last line still read
    assert lines == [(data, 0), (tail + b"\n", 2)]
    n = len(data) + 1
    assert asked == [n, 4096 - n, 4096 - n - (len(tail) - 1)]  # the last one gave nothing: no read after it


def test_scan_files_size_is_the_opens_own(tmp_path: Path) -> None:
    """bundle.open_evidence_sized: the size its fstat saw, the file open at its start."""
    from firstfault.bundle import open_evidence_sized

    path = tmp_path / "rank-0.log"
    path.write_bytes(b"x" * 1234)
    fh, size = open_evidence_sized(str(path))
    with fh:
        assert size == 1234 and fh.read(size + 1) == b"x" * 1234
