"""The scanner's stamp resolver: a candidate line's time, its own stamp's or the nearest earlier line's.

Only candidate lines are stamped (collect/scan.py): a line without a stamp
takes the nearest earlier stamped line of its file, found by walking back
from it over the buffer, so the lines between are never parsed unless one is
needed. A kernel line stamped with an uptime alone takes its wall-clock time
from the boot time of the nearest line before it in the file that has both
(Clock).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from datetime import UTC, datetime, timedelta
from typing import Final, TypeAlias

from firstfault.collect.fold import yearless_clock
from firstfault.timeparse import Stamp, TimeParser, _fast, _new_stamp

__all__ = ["CARRY_LINES", "DAY_US", "SRUN", "CClock", "Clock", "c_clock", "c_time", "line_stamp", "prev_stamped",
           "walk_back", "walk_back_py"]

SRUN = re.compile(rb"^\s*(\d{1,9}): ")  # srun --label: a task id (more digits: no rank, MAX_RANK)

try:  # stamps looked for in C (firstfault/_lines.c), when built; optional.
    from firstfault._lines import prev_stamped
except ImportError:  # pragma: no cover - depends on the build
    prev_stamped = None  # type: ignore[assignment]
try:  # the stamp a line reads to, in C (_lines.c), where it is sure of it: the same as TimeParser.parse's
    from firstfault._lines import prev_stamp_us as _prev_stamp_us
    from firstfault._lines import stamp_local_us as _stamp_local_us
except ImportError:  # pragma: no cover - depends on the build
    _stamp_local_us = _prev_stamp_us = None  # type: ignore[assignment]
try:  # the lines that may hold both a wall-clock stamp and an uptime, in C (an older build lacks them)
    from firstfault._lines import booted_starts, prev_booted
except ImportError:  # pragma: no cover - depends on the build
    booted_starts = prev_booted = None  # type: ignore[assignment]
_UNREAD: Final = object()

# _lines.stamp_local_us counts a stamp's local date and time in microseconds since 0001-01-01 (fold._count): this
# day's count is 86,400 s. In a zone of one UTC offset (fold.fixed_offset_us), the count less that day and the
# offset is the instant's microseconds since 0001-01-01 UTC.
DAY_US: Final = 86_400_000_000
_YEAR1: Final = datetime(1, 1, 1, tzinfo=UTC)
# The clock a C reading is turned into a time with: (fold.yearless_clock's tuple, DAY_US plus the zone's offset).
CClock: TypeAlias = "tuple[tuple[int, int, int | None], int]"


def c_clock(tp: TimeParser) -> CClock | None:
    """The clock _lines.stamp_local_us reads tp's stamps with, where its answer becomes a time without the zone's
    rules (a zone of one UTC offset) and the C module is built; else None (TimeParser reads every stamp)."""
    if _stamp_local_us is None or not _fast[0]:
        return None
    ck = yearless_clock(tp.tz, tp.year, tp.window_end)
    if ck is None or ck[2] is None:
        return None
    return ck, DAY_US + ck[2]


# c_time's answers by the instant's count (us - clock[1]): a rank log's lines read a handful of stamps, and every rank
# of a job the same ones (its watchdog's abort, its set-up); a datetime built is a microsecond, a look-up a twentieth.
# Bounded as memo.py's memos are (emptied when full), and unused with the fast paths off.
_TIMES: dict[int, datetime] = {}
_TIMES_MAX: Final = 4096


def c_time(us: int, clock: CClock) -> datetime:
    """The time of a stamp _lines.stamp_local_us read as `us` (>= 0) with `clock`: TimeParser.parse's wall, built
    without the parse (tests/collect/test_fold.py compares the two readings on generated stamps)."""
    at = us - clock[1]
    t = _TIMES.get(at)
    if t is None:
        t = _YEAR1 + timedelta(0, 0, at)  # (positional: a keyword costs a third more)
        if _fast[0]:
            if len(_TIMES) >= _TIMES_MAX:
                _TIMES.clear()
            _TIMES[at] = t
    return t


# The lines at a chunk's end walked back for the boot time carried into the next chunk (Clock): a bound, so that
# a file of many chunks with no uptime in them is not walked whole at each chunk's end.
CARRY_LINES = 400


class Clock:
    """One file's clock: the wall-clock time of a stamp. A stamp with an uptime alone (dmesg's `[77530.123456]`)
    takes its boot time (wall - uptime) from the nearest line before its own in the file that has both (a kernel
    log's syslog line, `Dec  4 10:00:05 host kernel: [77528.410571] ...`), looked for when such a stamp needs it
    among the chunk's lines that may hold both (listed in C in one pass: _lines.booted_starts; without it, a walk
    back parsing each line), the last answer remembered; before the chunk's first such line, the boot time carried
    into the chunk: that of the nearest line with both among the last CARRY_LINES of the chunk before, else the one
    carried into that. A function of the file's bytes alone, so every path that reads the stamp gives it one time:
    the fold reads some copies of a line and counts the others, and a boot time taken from the last line with both
    that was *read* moved with the copies it counted (the syslog stamp drops the second's fraction, so each copy's
    wall - uptime differs; a reboot moves it by days). `at` is the offset in `buf` of the line whose stamp it is (or
    whose walk back found it); without a buffer, the boot time carried into the chunk (a chunk's last stamp,
    carried)."""

    __slots__ = ("_carry", "_ended", "_found_at", "_index", "_memo", "_quiet", "_srun", "_tp")

    def __init__(self, tp: TimeParser | None = None, srun_prefix: bool = False,
                 boot: tuple[datetime, float] | None = None) -> None:
        self._tp = tp
        self._srun = srun_prefix
        # (wall, uptime) of the line with both carried in; `boot`: one known before the file's first line (a bug
        # report's dmesg, dated by a message of this boot's journal: collect/bugreport.py ThisBoot)
        self._carry: tuple[datetime, float] | None = boot
        self._ended: bytes | None = None  # the last chunk ended, its carry not worked out yet (end_chunk)
        # The last walk: its buffer, the offset it walked back from, the line with both it found (None: none in the
        # buffer before that offset) and where that line starts (-1: none). A later walk goes back to the offset;
        # an earlier one that starts after the line found has the same answer (no walk: a line read again, a
        # held copy, after a later copy's time was worked out).
        self._memo: tuple[bytes, int, tuple[datetime, float] | None, int] | None = None
        self._found_at = -1  # where _find's last line with both starts
        # The chunk whose lines that may hold both are listed (_lines.booted_starts), the list, and what each line
        # read to.
        self._index: tuple[bytes, list[int], dict[int, object]] | None = None
        self._quiet: bytes | None = None  # the chunk of the index when it lists no line (wall_of's shortcut)

    def wall_of(self, st: Stamp | None, buf: bytes | None = None, at: int = 0) -> datetime | None:
        if st is None:
            return None
        if st.wall is not None:
            return st.wall
        if st.uptime is None:
            return None
        if buf is not None and buf is self._quiet:  # a chunk none of whose lines may hold both (dmesg's): the carry
            b = self._carry
        else:
            b = self._carried() if buf is None else self.both_before(buf, at)
        if b is None:
            return None
        return b[0] - timedelta(seconds=b[1]) + timedelta(seconds=st.uptime)

    def both_before(self, buf: bytes, at: int) -> tuple[datetime, float] | None:
        """The stamp (wall, uptime) of the nearest line with both before offset `at` of `buf`, else the carry."""
        m = self._memo
        if m is not None and m[0] is buf and m[3] < at:
            if at <= m[1]:  # between the last answer's line and the last walk's start: no line with both
                return m[2] if m[2] is not None else self._carried()
            found, pos = self._walk(buf, m[1] - 1, at)  # the lines between the last walk's start and `at`
            if found is None:
                found, pos = m[2], m[3]
        else:
            found, pos = self._walk(buf, -1, at)
        self._memo = (buf, at, found, pos)
        return found if found is not None else self._carried()

    def _walk(self, buf: bytes, stop: int, at: int) -> tuple[tuple[datetime, float] | None, int]:
        """The nearest line with both before offset `at` (lines after `stop` only) and its start, else (None, -1).
        With the C module, the chunk's lines that may hold both are listed in one pass the first time (none in a
        dmesg chunk: each uptime's query then costs a look at an empty list), and each is read once."""
        if booted_starts is None or not _fast[0]:
            found = self._find(buf, stop, at, 1 << 62)
            return found, (self._found_at if found is not None else -1)
        ix = self._index
        if ix is None or ix[0] is not buf:
            ix = self._index = (buf, booted_starts(buf), {})
            if not ix[1]:
                self._carried()  # (the carry into this chunk worked out: wall_of takes it from now on)
                self._quiet = buf
        starts, read = ix[1], ix[2]
        k = bisect_left(starts, at) - 1
        while k >= 0:
            s = starts[k]
            if s <= stop:
                break
            got = read.get(s, _UNREAD)
            if got is _UNREAD:
                e = buf.find(b"\n", s)
                got = read[s] = self._both_of(buf[s : e if e >= 0 else len(buf)])
            if got is not None:
                return got, s  # type: ignore[return-value]
            k -= 1
        return None, -1

    def _both_of(self, raw: bytes) -> tuple[datetime, float] | None:
        """The (wall, uptime) of a line whose stamp has both, else None; what the reading counts is put back."""
        tp = self._tp
        if tp is None:
            return None
        saved = tp.counts()
        st = line_stamp(raw, tp, self._srun)
        tp.put_back(saved, clock12=True)
        return (st.wall, st.uptime) if st is not None and st.wall is not None and st.uptime is not None else None

    def end_chunk(self, buf: bytes) -> None:
        """A chunk read to its end: its carry is worked out when a stamp needs it or the next chunk ends (a file of
        one chunk never needs it)."""
        self._carried()
        self._ended = buf
        self._memo = self._index = self._quiet = None

    def end_file(self) -> None:
        """Let go of the buffers (the scanner's nested functions hold this clock in a cycle)."""
        self._ended = None
        self._memo = self._index = self._quiet = None

    def _carried(self) -> tuple[datetime, float] | None:
        ended = self._ended
        if ended is not None:
            self._ended = None
            found = self._find(ended, -1, len(ended), CARRY_LINES)
            if found is not None:
                self._carry = found
        return self._carry

    def _find(self, buf: bytes, stop: int, end: int, limit: int) -> tuple[datetime, float] | None:
        """The nearest line before offset `end` (lines after `stop` only, `limit` of them at most) whose stamp has
        both a wall-clock time and an uptime, as stamps.line_stamp reads it; what the reading counts (stamps outside
        the years, the 12-hour clock's last stamp) is put back: a walk back taken by one path and not another must
        leave nothing behind."""
        tp = self._tp
        if tp is None:
            return None
        saved = tp.counts()
        try:
            if prev_booted is not None and _fast[0]:
                while limit > 0:
                    s, e, n = prev_booted(buf, stop, end, limit)
                    if s < 0:
                        return None
                    st = line_stamp(buf[s:e], tp, self._srun)
                    if st is not None and st.wall is not None and st.uptime is not None:
                        self._found_at = s
                        return (st.wall, st.uptime)
                    end = s
                    limit -= n
                return None
            n = 0
            while end > 0 and n < limit:  # every line parsed (without the C module, FIRSTFAULT_FASTPATH=0)
                s = buf.rfind(b"\n", 0, end - 1) + 1
                if s <= stop:
                    return None
                st = line_stamp(buf[s : end - 1] if buf[end - 1 : end] == b"\n" else buf[s:end], tp, self._srun)
                if st is not None and st.wall is not None and st.uptime is not None:
                    self._found_at = s
                    return (st.wall, st.uptime)
                end = s
                n += 1
            return None
        finally:
            tp.put_back(saved, clock12=True)


def line_stamp(raw: bytes, tp: TimeParser, srun_prefix: bool) -> Stamp | None:
    """The stamp of one line of a walk back (its srun label off, its first 200 bytes read)."""
    if srun_prefix:
        m = SRUN.match(raw)
        if m:
            raw = raw[m.end() :]
    return tp.parse(raw[:200].decode("utf-8", errors="replace"))


def walk_back(buf: bytes, end: int, tp: TimeParser, srun_prefix: bool, stop: int, limit: int,
              clock: CClock | None = None) -> Stamp | None:
    """The stamp of the nearest line before offset `end` that has one (lines after `stop` only, and `limit` of
    them at most). With `clock` (c_clock), a line whose stamp _lines.stamp_local_us reads is not parsed.

    A walk back counts no stamp: one it reads as none (outside the years, TimeParser.out_of_range) is put back,
    as Clock's walks put theirs back. Which walks are taken hangs on which lines are read (the fold counts a copy
    without walking back from it; a copy's walk goes over the copies not read), so only a line's own stamp,
    read where the line is read, is counted; that is the same on every path."""
    saved = tp.counts()
    try:
        if prev_stamped is None or not _fast[0]:
            return _walk_py(buf, end, tp, srun_prefix, stop, limit)
        return _walk_c(buf, end, tp, srun_prefix, stop, limit, clock)
    finally:
        tp.put_back(saved)


def _walk_c(buf: bytes, end: int, tp: TimeParser, srun_prefix: bool, stop: int, limit: int,
            clock: CClock | None) -> Stamp | None:
    """walk_back's loop in C (prev_stamped, prev_stamp_us)."""
    assert prev_stamped is not None
    # The C loop passes over the lines that cannot hold a stamp (none of the forms' characters:
    # _lines.c may_hold_stamp), so a burst of unstamped lines costs no parse each.
    left = limit
    if srun_prefix or _prev_stamp_us is None:
        clock = None  # (the label is peeled in Python: line_stamp)
    while left > 0:
        if clock is not None:
            # The line it stops at read in C too, as line_stamp reads its first 200 bytes, where C is sure of it.
            s, e, n, us = _prev_stamp_us(buf, stop, end, left, clock[0])
            if s >= 0 and us >= 0:
                return _new_stamp(Stamp, (c_time(us, clock), None))
        else:
            s, e, n = prev_stamped(buf, stop, end, left, not srun_prefix)
        if s < 0:
            return None
        st = line_stamp(buf[s:e], tp, srun_prefix)
        if st is not None:
            return st
        end = s
        left -= n
    return None


def walk_back_py(buf: bytes, end: int, tp: TimeParser, srun_prefix: bool, stop: int, limit: int) -> Stamp | None:
    """walk_back parsing every line (without the C module, and FIRSTFAULT_FASTPATH=0); it too counts no stamp."""
    saved = tp.counts()
    try:
        return _walk_py(buf, end, tp, srun_prefix, stop, limit)
    finally:
        tp.put_back(saved)


def _walk_py(buf: bytes, end: int, tp: TimeParser, srun_prefix: bool, stop: int, limit: int) -> Stamp | None:
    """The walk back's loop, every line parsed."""
    n = 0
    while end > 0 and n < limit:
        s = buf.rfind(b"\n", 0, end - 1) + 1
        if s <= stop:
            return None
        raw = buf[s : end - 1] if buf[end - 1 : end] == b"\n" else buf[s:end]
        st = line_stamp(raw, tp, srun_prefix)
        if st is not None:
            return st
        end = s
        n += 1
    return None
