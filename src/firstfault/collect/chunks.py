"""The scanner's chunk reader: a file's text in buffers of whole lines, a few MiB each, never the whole file.

It knows nothing of extractors or stamps: it opens the text (gunzipped when
the name says so), cuts over-long lines, counts lines and bytes, and tells
text from binary by the first bytes (collect/scan.py drives it).
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, cast

__all__ = ["BINARY_SHARE", "CHUNK", "MAX_LINE", "FileStats", "binary_share", "chunks", "count_newlines", "decoded",
           "reader"]

CHUNK = 8 << 20  # bytes gathered per buffer (the scanner passes its own, which tests make small)
MAX_LINE = 1 << 20  # longer lines are clipped to this and reported

try:  # newlines counted with memchr (firstfault/_lines.c), when built; optional.
    from firstfault._lines import count as count_newlines
except ImportError:  # pragma: no cover - depends on the build

    def count_newlines(buf: bytes, start: int, end: int, /) -> int:
        """The number of newlines in buf[start:end]."""
        return buf.count(b"\n", start, end)


@dataclass(slots=True)
class FileStats:
    """What reading one file gave: its lines, bytes, candidates, events, bad UTF-8 lines, errors, coverage notes."""

    lines: int = 0
    bytes: int = 0
    candidates: int = 0
    events: int = 0
    bad_utf8: int = 0
    last_time: datetime | None = None  # the file's last stamped line
    errors: list[tuple[int | None, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the source's coverage says of the file (a bug report's)


def decoded(raw: IO[bytes], name: str) -> IO[bytes]:
    """The text of an opened file: gunzipped when its name ends in .gz (closing it leaves `raw` open).

    `raw` is unbuffered (bundle.open_evidence): each read is one read(2) into the bytes object it
    returns. Through a buffer, a look at the head first would leave 8 KB in it, and the chunk built
    from that and the rest would copy every byte of the file once more."""
    if name.endswith(".gz"):
        return cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb"))
    return raw


def reader(fh: IO[bytes]) -> Callable[[int], bytes]:
    """The read that returns what the stream has now: read1 for a compressed stream (a truncated .gz
    still yields everything before the cut), read (one system call) for a raw file."""
    # The type as a string: `Callable[[int], bytes]` written out builds a generic alias on every call (twice a file).
    return cast("Callable[[int], bytes]", getattr(fh, "read1", fh.read))


def chunks(fh: IO[bytes], stats: FileStats, seen: list[int] | None = None,
           first: bytes = b"", chunk: int = CHUNK, left: int | None = None) -> Iterator[tuple[bytes, int]]:
    """Yields (buffer of whole lines, number of lines before it).

    With `seen`, the consumer counts the newlines of each buffer it was given (it walks them
    anyway, candidate to candidate) and adds them to seen[0] before asking for the next one, so
    no byte is counted twice; without it, each buffer is counted here. `first` is what the
    caller already read of the stream (its head, to tell text from binary). `left`: the bytes a regular file
    held past `first` when it was opened (its size less `first`): a read then asks for what is left and one byte
    more (to find the end, or that the file grew, whose bytes are then read as any file's), not for a whole
    chunk: FileIO.read(n) allocates n bytes before it reads, and a bundle of many small files (a rank log each)
    paid a chunk's allocation twice a file.
    """
    carry = b""
    lines_before = 0
    skipping = False  # inside an over-long line, dropping until its end
    read = reader(fh)
    failed = False
    ended = False  # a read gave nothing: the stream's end (no read after it: a rank log's third read(2))
    while not failed:
        # Gather about `chunk` bytes.
        parts: list[bytes] = [first] if first else []
        size = len(first)
        first = b""
        while size < chunk and not ended:
            want = chunk - size
            if left is not None and left >= 0:
                want = min(want, left + 1)
            try:
                piece = read(want)
            except (EOFError, OSError, zlib.error) as exc:
                stats.errors.append((None, f"read stopped early: {exc}; what was read is kept"))
                failed = True
                break
            if not piece:
                ended = True
                break
            parts.append(piece)
            size += len(piece)
            if left is not None:
                left -= len(piece)
        data = b"".join(parts)
        if not data:
            break
        stats.bytes += len(data)
        if skipping:
            nl = data.find(b"\n")
            if nl < 0:
                continue
            data = data[nl + 1 :]
            skipping = False
            lines_before += 1
        buf = carry + data if carry else data
        cut = buf.rfind(b"\n")
        if cut < 0:
            if len(buf) > MAX_LINE:
                stats.errors.append((lines_before + 1, f"line longer than {MAX_LINE} bytes: clipped"))
                yield buf[:MAX_LINE] + b"\n", lines_before
                carry = b""
                skipping = True
            else:
                carry = buf
            continue
        whole, carry = buf[: cut + 1], buf[cut + 1 :]
        if seen is None:
            n = whole.count(b"\n")
            yield whole, lines_before
        else:
            seen[0] = 0
            yield whole, lines_before
            n = seen[0]
        lines_before += n
        if len(carry) > MAX_LINE:
            stats.errors.append((lines_before + 1, f"line longer than {MAX_LINE} bytes: clipped"))
            yield carry[:MAX_LINE] + b"\n", lines_before
            carry = b""
            skipping = True
    if carry and not skipping:
        yield carry + b"\n", lines_before
        lines_before += 1
    stats.lines = lines_before + (1 if skipping else 0)


# Bytes a text log may hold besides printable text: tab, newline, CR, form feed, backspace, ESC (colours).
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\b\x1b")
_ODD_BYTES = bytes(b for b in range(32) if b not in _TEXT_CONTROLS) + b"\x7f"
_ZERO_RUN = 64
_ZERO_RUNS = re.compile(rb"\x00{%d,}" % _ZERO_RUN)
_ZERO_FLOOR = b"\x00" * _ZERO_RUN  # the shortest run _ZERO_RUNS takes
BINARY_SHARE = 0.30  # above this share of odd bytes (binary_share), a file is not text


def binary_share(head: bytes) -> float:
    """The share of a file's first bytes, runs of zeros aside, that no text log holds: NULs, other control
    bytes, invalid UTF-8.

    A crash often leaves zeros in a log: a stray NUL, or a whole block of them
    (a 4 KiB page at the end of the file). A run of _ZERO_RUN or more is left
    out of the sample, as the scanner reads around it; a stray NUL counts. An
    executable, an image or a compressed file read as-is is still mostly such
    bytes besides its runs of zeros (the ELF files of a Debian system: 30% and
    more, their NULs between other bytes counted).
    """
    sample = head[:8192]
    # Each step only where it can change the answer: a bundle of 18k rank logs asks this 18k times, and the
    # regex walks the 8 KiB byte by byte where `in` (memmem) and isascii skip through it.
    if _ZERO_FLOOR in sample:
        sample = _ZERO_RUNS.sub(b"", sample)
    if not sample:
        return 0.0
    odd = len(sample) - len(sample.translate(None, _ODD_BYTES))
    if not sample.isascii():  # ASCII is valid UTF-8 and holds no U+FFFD
        odd += sample.decode("utf-8", errors="replace").count("\ufffd")
    return odd / len(sample)
