"""Remote log streams to candidates: the scanner's rules for lines that arrive one by one.

Loki entries and kubelet log lines come with a transport timestamp (Loki's
nanosecond stamp, the `--timestamps` RFC 3339 prefix). A line keeps its own
stamp when it has one, because that is when the writer saw the event; the
transport stamp is when the collector read it. A line with neither takes the
nearest earlier stamped line of the same stream, as in a bundle file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from firstfault.collect.scan import MAX_LINE, _Matcher
from firstfault.extract.base import Candidate
from firstfault.hostlist import NodeNames
from firstfault.model import CoverageItem
from firstfault.timeparse import Stamp, TimeParser

_SRUN = re.compile(r"^\s*(\d{1,9}): ")  # as collect/stamps.py's SRUN


class WordFilter:
    """Plain substring test against any of the prefilter words, on the scanner's matcher (collect/scan.py
    _Matcher: Hyperscan where it loads; a Python alternation of the catalog's words took about 5 ms a line)."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words = sorted({w for w in words if w})
        self._ids = _Matcher(self.words).line_ids

    def __call__(self, text: str) -> bool:
        ids = self._ids(text.encode("utf-8", "surrogatepass"))
        return ids is None or bool(ids)


@dataclass(slots=True)
class StreamStats:
    lines: int = 0
    candidates: int = 0
    last_time: datetime | None = None  # the stream's last placed line (own stamp or transport)


class StreamReader:
    """Feeds one stream's lines, in order, and emits the candidates among them."""

    def __init__(
        self,
        *,
        source: str,
        file: str,
        node: str | None,
        rank: int | None,
        words: WordFilter,
        tp: TimeParser,
        emit: Callable[[Candidate], None],
        srun_prefix: bool = False,
    ) -> None:
        self.source, self.file, self.node, self.rank = source, file, node, rank
        self.words, self.tp, self.emit, self.srun_prefix = words, tp, emit, srun_prefix
        self.stats = StreamStats()
        self._boot: datetime | None = None  # wall - uptime, learnt from lines that carry both
        self._last_stamp: datetime | None = None  # nearest earlier stamped line, for unstamped lines

    def _wall(self, st: Stamp | None) -> datetime | None:
        if st is None:
            return None
        if st.wall is not None:
            if st.uptime is not None:
                self._boot = st.wall - timedelta(seconds=st.uptime)
            return st.wall
        if st.uptime is not None and self._boot is not None:
            return self._boot + timedelta(seconds=st.uptime)
        return None

    def feed(self, raw: str, transport: datetime | None = None) -> None:
        self.stats.lines += 1
        lineno = self.stats.lines
        text = raw.rstrip("\r\n")
        rank = self.rank
        if self.srun_prefix:
            m = _SRUN.match(text)
            if m:
                text, rank = text[m.end() :], int(m.group(1))
        keep = self.words(text)
        own: datetime | None = None
        # Unstamped transports need every line's own stamp (the fallback for the
        # next unstamped candidate); stamped ones only need the candidates'.
        if keep or transport is None:
            own = self._wall(self.tp.parse(text[:400]))
        placed = own or transport
        if keep:
            t = placed or self._last_stamp
            self.stats.candidates += 1
            self.emit(Candidate(self.source, self.file, lineno, self.node, rank, t, text[:MAX_LINE]))
        if placed is not None:
            self._last_stamp = placed
            self.stats.last_time = placed


def match_node(value: str | None, nodes: Sequence[str] | NodeNames) -> str | None:
    """An allocation node for a label value (FQDN or short name), or None."""
    return (nodes if isinstance(nodes, NodeNames) else NodeNames(nodes)).lookup(value)


def remote_window(
    window_start: datetime | None, window_end: datetime | None, before: timedelta, after: timedelta,
    now: datetime,
) -> tuple[datetime, datetime] | None:
    """The time range a remote query covers: the attempt's window widened by margins.

    A running attempt has no end yet (now is used); without a start there is
    nothing sane to ask for, so the caller reports an error.
    """
    if window_start is None:
        return None
    end = window_end or now
    return window_start - before, end + after


def coverage_item(
    source: str,
    *,
    expected: Sequence[str],
    seen: set[str],
    lines: int,
    files: int,
    failures: int,
    requests: int,
    notes: Sequence[str] = (),
) -> CoverageItem:
    """One coverage entry for a remote source kind, by the rules of a bundle's coverage.

    error: every request failed; partial: some failed or nodes are missing;
    empty: requests answered but nothing came back; complete otherwise.
    """
    exp = sorted(set(expected))
    seen_in = sorted(n for n in seen if not exp or n in exp)
    missing = [n for n in exp if n not in seen]
    status: Literal["complete", "partial", "missing", "empty", "error"]
    note_parts = list(notes)
    if requests == 0:
        status = "missing"
    elif failures >= requests:
        status = "error"
    elif failures:
        status = "partial"
        note_parts.insert(0, f"{failures} of {requests} request(s) failed")
    elif lines == 0 and not seen:
        status = "empty"
    elif missing:
        status = "partial"
    else:
        status = "complete"
    if missing and status == "partial":
        note_parts.insert(0, f"{source}: {len(seen_in)} of {len(exp)} nodes")
    return CoverageItem(
        source=source, status=status, nodes_seen=len(seen_in), nodes_expected=len(exp), lines=lines,
        files=files, missing_nodes=missing, note="; ".join(note_parts[:6]) or None,
    )
