"""The scanner's stamp resolver: a candidate line's time, its own stamp's or the nearest earlier line's.

Only candidate lines are stamped (collect/scan.py): a line without a stamp
takes the nearest earlier stamped line of its file, found by walking back
from it over the buffer, so the lines between are never parsed unless one is
needed. A kernel line stamped with an uptime alone takes its wall-clock time
from the boot time of the last line that had both.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from firstfault.timeparse import Stamp, TimeParser, _fast

__all__ = ["SRUN", "Clock", "line_stamp", "prev_stamped", "walk_back", "walk_back_py"]

SRUN = re.compile(rb"^\s*(\d{1,9}): ")  # srun --label: a task id (more digits: no rank, MAX_RANK)

try:  # stamps looked for in C (firstfault/_lines.c), when built; optional.
    from firstfault._lines import prev_stamped
except ImportError:  # pragma: no cover - depends on the build
    prev_stamped = None  # type: ignore[assignment]


class Clock:
    """One file's clock: the wall-clock time of a stamp. The boot time (wall - uptime) comes from the last line
    with both; it is worked out only when a line with an uptime alone needs it (a kernel log stamps every line
    with both)."""

    __slots__ = ("_both",)

    def __init__(self) -> None:
        self._both: tuple[datetime, float] | None = None

    def wall_of(self, st: Stamp | None) -> datetime | None:
        if st is None:
            return None
        if st.wall is not None:
            if st.uptime is not None:
                self._both = (st.wall, st.uptime)
            return st.wall
        b = self._both
        if st.uptime is not None and b is not None:
            return b[0] - timedelta(seconds=b[1]) + timedelta(seconds=st.uptime)
        return None


def line_stamp(raw: bytes, tp: TimeParser, srun_prefix: bool) -> Stamp | None:
    """The stamp of one line of a walk back (its srun label off, its first 200 bytes read)."""
    if srun_prefix:
        m = SRUN.match(raw)
        if m:
            raw = raw[m.end() :]
    return tp.parse(raw[:200].decode("utf-8", errors="replace"))


def walk_back(buf: bytes, end: int, tp: TimeParser, srun_prefix: bool, stop: int, limit: int) -> Stamp | None:
    """The stamp of the nearest line before offset `end` that has one (lines after `stop` only, and `limit` of
    them at most)."""
    if prev_stamped is None or not _fast[0]:
        return walk_back_py(buf, end, tp, srun_prefix, stop, limit)
    # The C loop passes over the lines that cannot hold a stamp (none of the forms' characters:
    # _lines.c may_hold_stamp), so a burst of unstamped lines costs no parse each.
    left = limit
    while left > 0:
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
    """walk_back parsing every line (without the C module, and FIRSTFAULT_FASTPATH=0)."""
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
