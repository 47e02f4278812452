"""NVIDIA's bug report (nvidia-bug-report.sh's nvidia-bug-report.log, or .log.gz) cut into its sections.

The report is one file of many sections: each opens with a line of
underscores, then (after an empty line) a header that says what follows: a
file the script copied (`*** /var/log/kern.log`, then `*** ls: ...`), a command
it ran (`/usr/bin/nvidia-smi --query`, `journalctl -b -1 _COMM=Xorg`), a title
(`dmesg:`). Read as one kernel log, its `nvidia-smi -q` records would not be
read (they are an `application` source's), an earlier boot's Xid would be taken
for this run's, and an X server's core dump for the job's crash. So a file is
known as a report by its opening (`Start of NVIDIA bug report log file` in its
first lines: never by its name), and each section's lines go to the readers of
the line kind its header says (catalog/platform.yaml `bug_report_sections`);
every other section is not the job's evidence, and the source's coverage note
names it.

This module only cuts: `Splitter.feed` takes the chunk reader's buffers (whole
lines, collect/chunks.py) and gives the pieces of each buffer to read, with
their kind and line numbers; collect/scan.py reads each piece with that kind's
scanner. A section's lines cost a byte search for the next separator; only
the two kinds of section with headers inside (the kernel-message scan's
`  FILE:` blocks and nvidia-smi's commands) are walked line by line, and a header
is read for at most HEADER_CLIP bytes, so a section or a header of any size
costs no more than its lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, NamedTuple

from firstfault.catalog.tables import BugReportSection, bug_report_sections
from firstfault.collect.chunks import count_newlines
from firstfault.timeparse import TimeParser

__all__ = ["CLOSING", "OPENING", "Piece", "Splitter", "ThisBoot", "opens_report"]

OPENING: Final = b"Start of NVIDIA bug report log file"
CLOSING: Final = b"End of NVIDIA bug report log file"  # the epilogue: the script's own last words, no section
OPENING_LINES: Final = 8  # the opening is the third line (underscores, an empty line, then it); a little slack
SEPARATOR_MIN: Final = 20  # the script's separator is 44 underscores
HEADER_CLIP: Final = 256  # bytes of a header line that are read
NAMED_MAX: Final = 8  # sections named in the note, per list; the rest are counted

_UNDERSCORES = b"_" * SEPARATOR_MIN
_NL_UNDERSCORES = b"\n" + _UNDERSCORES
_SPACES = b" \t\r"


def opens_report(head: bytes) -> bool:
    """Whether a file whose first bytes are `head` is an NVIDIA bug report: a line of its first OPENING_LINES
    starts with the script's opening words (after blanks). A log that quotes them further on is no report."""
    if OPENING not in head:  # (one memmem: a rank log's head holds no such words, and its lines need no walk)
        return False
    pos = 0
    for _ in range(OPENING_LINES):
        end = head.find(b"\n", pos)
        if head[pos:pos + HEADER_CLIP].lstrip(_SPACES).startswith(OPENING):
            return True
        if end < 0:
            return False
        pos = end + 1
    return False


class Piece(NamedTuple):
    """Lines of one section to read: buf[start:end] (whole lines), after `line` lines of the file, as `kind`;
    `section` counts the sections (a section cut by a chunk's end gives two pieces of one number)."""

    kind: str
    start: int
    end: int
    line: int
    section: int
    boot: bool = False  # a section of the boot the report was taken in (its row's `boot: this`)


class _Table:
    """catalog/platform.yaml `bug_report_sections` as lookups."""

    def __init__(self, rows: tuple[BugReportSection, ...]) -> None:
        self.exact = {r.header: r for r in rows if r.match != "prefix"}
        self.prefixes = sorted((r for r in rows if r.match == "prefix"), key=lambda r: -len(r.header))
        self.programs = frozenset(r.header.split(" ", 1)[0].encode() for r in rows if r.match == "command")

    def row(self, header: str) -> BugReportSection | None:
        found = self.exact.get(header)
        if found is not None:
            return found
        return next((r for r in self.prefixes if header.startswith(r.header)), None)


_TABLE: list[_Table] = []


def _table() -> _Table:
    if not _TABLE:
        _TABLE.append(_Table(bug_report_sections()))
    return _TABLE[0]


def _header(raw: bytes) -> str:
    """A header line as the table spells it: blanks around it dropped, and a command's directory
    (`/usr/bin/nvidia-smi --query` is `nvidia-smi --query`; a file's `/var/log/kern.log:` stays)."""
    text = raw[:HEADER_CLIP].decode("utf-8", errors="replace").strip()
    if text.startswith("/") and not text.endswith(":"):
        word, sep, rest = text.partition(" ")
        text = word.rsplit("/", 1)[1] + sep + rest
    return text


def _program(raw: bytes) -> bytes:
    """The program a command line at a line's start runs: its first word, without its directory."""
    word = raw[:HEADER_CLIP].split(b" ", 1)[0].rstrip(_SPACES)
    return word.rsplit(b"/", 1)[-1]


def _is_separator(buf: bytes, s: int, e: int) -> bool:
    """Is buf[s:e] a line of underscores (blanks after them allowed)?"""
    return buf.startswith(_UNDERSCORES, s) and not buf[s:e].rstrip(_SPACES).strip(b"_")


@dataclass(slots=True)
class Splitter:
    """Cuts a bug report, buffer by buffer (each of whole lines, in the file's order), into the pieces to read.

    `read` and `skipped` name the sections met (at most NAMED_MAX each, then counted): what the source's
    coverage note says of the file."""

    read: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    n_read: int = 0
    n_skipped: int = 0
    _awaiting: int = 0  # 0: in a section's lines; 1: after a separator, before the header; 2: the line after `***`
    _kind: str | None = None  # what the current lines are read as; None: not read
    _boot: bool = False  # the current lines are of the boot the report was taken in
    _mode: int = 0  # 0: only a separator ends the lines; 1: `  FILE:` sub-sections; 2: nvidia-smi's commands
    _section: int = 0
    _started: bool = False  # a separator was seen (the opening lines before the first are the script's own)

    def _enter(self, header: str, sub: bool) -> None:
        """A section (or a sub-section) begins under `header`."""
        table = _table()
        row = table.row(header)
        self._section += 1
        self._kind = None
        self._boot = row is not None and row.boot == "this"
        if not sub:
            self._mode = 0
            if row is not None and row.read_as == "sections":
                self._mode = 1
            elif _program(header.encode()) in table.programs:
                self._mode = 2
        if row is not None and row.read_as not in ("none", "sections"):
            self._kind = row.read_as
            self.n_read += 1
            if len(self.read) < NAMED_MAX:
                self.read.append(f"{header} ({row.read_as})")
        elif row is None or row.read_as == "none":
            self.n_skipped += 1
            if row is not None and row.why is not None and len(self.skipped) < NAMED_MAX:
                self.skipped.append(f"{header} ({row.why})")

    def feed(self, buf: bytes, before: int) -> list[Piece]:
        """The pieces of `buf` (whole lines, the last ending in a newline) to read; `before`: the lines of the file
        before it."""
        out: list[Piece] = []
        n = len(buf)
        pos, line = 0, before
        start = 0 if self._kind is not None else -1  # the current piece's start in buf; -1: none
        start_line = before

        def close(at: int) -> None:
            if start >= 0 and at > start and self._kind is not None:
                out.append(Piece(self._kind, start, at, start_line, self._section, self._boot))

        while pos < n:
            if self._awaiting == 0 and self._mode == 0:
                # only a separator ends these lines: find the next one (a byte search, not a walk)
                nxt = pos if buf.startswith(_UNDERSCORES, pos) else -1
                while nxt < 0:
                    at = buf.find(_NL_UNDERSCORES, pos)
                    if at < 0:
                        break
                    cand = at + 1
                    end = buf.find(b"\n", cand)
                    if _is_separator(buf, cand, n if end < 0 else end):
                        nxt = cand
                    else:
                        pos = cand  # a line that starts with underscores: search on after its start
                if nxt < 0:
                    pos = n
                    break
                if nxt != pos:
                    line += count_newlines(buf, pos, nxt)
                    pos = nxt
            e = buf.find(b"\n", pos)
            if e < 0:
                e = n
            if _is_separator(buf, pos, e):
                close(pos)
                start = -1
                self._awaiting, self._kind, self._mode, self._started = 1, None, 0, True
            elif self._awaiting == 1:
                raw = buf[pos:min(e, pos + HEADER_CLIP)]
                if raw.strip(_SPACES):
                    if self._started and not raw.lstrip(_SPACES).startswith((OPENING, CLOSING)):
                        self._enter(_header(raw), sub=False)
                    self._awaiting = 2 if raw.startswith(b"*** ") else 0
                    start, start_line = e + 1, line + 1
            elif self._awaiting == 2:
                self._awaiting = 0
                if buf.startswith(b"*** ls:", pos):  # the copied file's metadata: its mtime is no stamp of the file's
                    start, start_line = e + 1, line + 1
            elif self._mode == 1 and buf.startswith(b"  ", pos) and buf[pos + 2:pos + 3] not in b" \t\r\n":
                raw = buf[pos:min(e, pos + HEADER_CLIP)].rstrip(_SPACES)
                if raw.endswith(b":"):  # `  /var/log/kern.log:`, `  journalctl -b -1:`
                    close(pos)
                    self._enter(_header(raw), sub=True)
                    start, start_line = e + 1, line + 1
            elif self._mode == 2 and buf[pos:pos + 1] not in b" \t\r\n" and _program(buf[pos:e]) in _table().programs:
                close(pos)  # the next of nvidia-smi's commands
                self._enter(_header(buf[pos:min(e, pos + HEADER_CLIP)]), sub=True)
                start, start_line = e + 1, line + 1
            pos = e + 1
            line += 1
        close(n)
        return out

    def note(self, rel: str) -> str:
        """What the source's coverage says of the file: the sections read, and those not read as the job's
        evidence (the ones whose row says why by name, the rest counted)."""
        read = ", ".join(self.read) + (f", {self.n_read - len(self.read)} more" if self.n_read > len(self.read) else "")
        named = "; ".join(self.skipped)
        rest = self.n_skipped - len(self.skipped)
        skipped = f"{named}{'; ' if named and rest else ''}{f'{rest} other(s)' if rest else ''}"
        return (f"{rel}: an NVIDIA bug report: {self.n_read} section(s) read ({read or 'none'}); "
                f"{self.n_skipped} not read as the job's evidence ({skipped or 'none'})")


# dmesg's line (`[ 1843.308145] NVRM: ...`: the uptime alone) and a journal's kernel line (`Nov 02 10:01:44 node-02
# kernel: NVRM: ...`: the wall clock alone), each with its message; a message is compared on its first MESSAGE_CLIP
# bytes, its blanks at the end dropped.
_UPTIME_LINE = re.compile(rb"^\[ {0,12}(\d{1,10}\.\d{1,9})\] ([^\n]*)", re.MULTILINE)
_KERNEL_LINE = re.compile(rb"^[^\n]{6,64}? kernel: ([^\n]*)", re.MULTILINE)
MESSAGE_CLIP: Final = 400
MESSAGES_MAX: Final = 1 << 16  # the journal's messages kept to date dmesg's by


@dataclass(slots=True)
class ThisBoot:
    """The boot time of the boot the report was taken in, from the report itself: the script prints dmesg (uptime
    stamps alone) and this boot's journal (`journalctl -b -0`: wall-clock stamps alone), and prints no /proc/uptime
    beside its `Date:`; a kernel message in both (the kernel-message scan's NVRM lines come before dmesg) gives the
    boot's wall-clock time, wall - uptime, to the journal stamp's second. Read from the sections whose row says
    `boot: this`, in the file's order: a journal after dmesg dates nothing. Where no message is in both, dmesg's
    uptime stamps are not dated (an Xid of this boot but before the job is not placed in the job's window) and the
    source's coverage note says so."""

    journal: dict[bytes, datetime] = field(default_factory=dict)  # message -> its wall-clock time
    found: dict[int, tuple[datetime, float] | None] = field(default_factory=dict)  # section -> (wall, uptime)
    undated: bool = False  # a section's uptime stamps found no boot time

    def read(self, piece: Piece, data: bytes, tp: TimeParser) -> tuple[datetime, float] | None:
        """Learn this boot's wall-clock messages from `data` (a piece of a `boot: this` section), and give the
        (wall, uptime) of a message its uptime lines share with them: the boot time of the section's uptimes."""
        journal = self.journal
        if len(journal) < MESSAGES_MAX and b" kernel: " in data:
            saved = tp.counts()
            try:
                for m in _KERNEL_LINE.finditer(data):
                    msg = m.group(1)[:MESSAGE_CLIP].rstrip()
                    if msg and msg not in journal:
                        st = tp.parse(data[m.start():m.start() + 200].decode("utf-8", errors="replace"))
                        if st is not None and st.wall is not None and st.uptime is None:
                            journal[msg] = st.wall
                            if len(journal) >= MESSAGES_MAX:
                                break
            finally:  # (the journal's stamps are read again as its lines are: counted once, there)
                tp.put_back(saved, clock12=True)
        if piece.section in self.found:
            return self.found[piece.section]
        pair: tuple[datetime, float] | None = None
        seen = False
        for m in _UPTIME_LINE.finditer(data):
            seen = True
            wall = journal.get(m.group(2)[:MESSAGE_CLIP].rstrip())
            if wall is not None:
                pair = (wall, float(m.group(1)))
                break
        if pair is not None:
            self.found[piece.section] = pair
        elif seen:
            self.undated = True
        return pair

    def note(self, rel: str) -> str | None:
        """The coverage note of a report whose uptime stamps could not be dated."""
        if not self.undated or any(v is not None for v in self.found.values()):
            return None
        return (f"{rel}: dmesg's uptime stamps not dated: no kernel message of this boot's journal in the report "
                "is also in dmesg (their lines keep their order, unplaced in time)")
