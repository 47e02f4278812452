"""The contract between the scanner and the extractors.

A line extractor declares which source kinds it reads and the literal words
that any line it can match must contain. The scanner builds one prefilter
from the words of every extractor (the catalog's prefilter), runs it over
large chunks of each file, and hands only the lines that contain a word to
the extractors that declared that word. So an extractor never sees a line
without one of its literals: keep literals specific (never "error").

Extractors are stateless objects; per-file state for multi-line records
(tracebacks, torchrun failure blocks) lives in `LineContext.state`, one dict
per (file, rank) stream.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from firstfault.model import FieldValue


@dataclass(slots=True)
class Draft:
    """What an extractor found on one line; the scanner makes it an Event."""

    kind: str
    fields: dict[str, FieldValue] = field(default_factory=dict)
    device: str | None = None
    rank: int | None = None  # a rank named by the line itself
    host: str | None = None  # a host named by the line (mapped to a node later)


@dataclass(slots=True)
class LineContext:
    """Where a line was read and what is known of it before an extractor looks: file, line, node, rank, time."""

    source: str  # source kind of the file
    file: str  # bundle-relative path
    lineno: int  # 1-based
    node: str | None  # node bound by the path placeholder, if any
    rank: int | None  # rank bound by placeholder or line prefix, if any
    time: datetime | None  # the line's time (own stamp or nearest earlier)
    state: dict[str, object]  # per-stream scratch space for multi-line records
    host: str | None = None  # host named by a launcher prefix (pdsh, DeepSpeed), if any
    # A program of the platform under the workload that a prefix names as the line's printer (extract/prefix.py
    # `Prefixed.program`: Ray's `(raylet)`, an idle worker's `(pid=N)`): what it reports is that program's, no rank's.
    program: str | None = None
    # The process a prefix names (extract/prefix.py `Prefixed.proc`: Ray's worker pid or daemon, kubectl's
    # pod/container, compose's service), if any.
    proc: str | None = None
    # Set by an extractor that understood the line without emitting an event
    # (a traceback's first line, a repeat it folded): not an unrecognized line.
    claimed: bool = False
    # Set by an extractor whose reading of the line looked a value the line spells in its digits (a record's number)
    # up in the stream's state, while the state held such values: a copy with other digits may read otherwise (a
    # line of an open record, or not), so no copy of it may be counted for another (collect/fold.py `keyed`).
    keyed: bool = False


def worded_at(line: str, text: str, also: Iterable[str] = (), after: str | None = None) -> tuple[int, int] | None:
    """Where a table row's words stand on a line: the row's `text`, every one of its `also` words anywhere on the
    line, and its `after` word (a printer's tag) somewhere before the text. (start, at): where the row's words start
    (the `after` word, else the text) and where its text is; None where the line does not hold them so."""
    at = line.find(text)
    if at < 0 or any(w not in line for w in also):
        return None
    if after is None:
        return at, at
    start = line.rfind(after, 0, at)
    return (start, at) if start >= 0 else None


def state_set(state: dict[str, object], key: str) -> set[Any]:
    """The set a stream's state holds under `key` (what an extractor has seen in the stream: pids, tests), made there
    on its first use."""
    got = state.get(key)
    if not isinstance(got, set):
        got = set()
        state[key] = got
    return got


class LineExtractor(Protocol):
    name: str
    sources: frozenset[str]
    literals: tuple[str, ...]

    @property
    def emits(self) -> Mapping[str, frozenset[str]]:
        """The event kinds it emits, each with the fields it may set (docs/events.md)."""
        ...

    def extract(self, line: str, ctx: LineContext) -> Iterable[Draft]: ...


@dataclass(slots=True)
class Candidate:
    """A line that passed the prefilter, with its place and its resolved time.

    This is also the wire form of a log observation (the Blueprint ships
    candidates to the Service), so the embedded engine and the Service run
    the very same extraction on the very same records.
    """

    source: str
    file: str
    line: int
    node: str | None
    rank: int | None
    time: datetime | None
    text: str
    # The prefilter's own finding, not part of the wire form: which literals (indices into the
    # word list `hits_key`) the scanner saw on this line. None: the extraction looks for itself.
    hits: tuple[int, ...] | None = field(default=None, compare=False, repr=False)
    hits_key: tuple[str, ...] | None = field(default=None, compare=False, repr=False)
    # The line after it when the message looks wrapped there (collect/scan.py `continuation`): read joined to the
    # line only where the line alone gives nothing (Extraction.drafts). Not part of the wire form either.
    cont: str | None = field(default=None, compare=False, repr=False)
