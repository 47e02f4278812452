"""Result types shared by the structured-source readers (scheduler, metrics, dumps).

Structured sources are not scanned line by line through the prefilter: each
file is read whole by a format-specific reader that returns ready events,
the problems it met (so coverage can say "partial" instead of failing), how
much it read, and which raw host names it saw.

A document's problems are capped: the first MAX_ISSUES are kept and the rest
only counted (IssueList), so a broken file of a million records costs a
count, not a million errors in the verdict.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import SupportsIndex

from firstfault.model import Event

TEXT_LIMIT = 500
MAX_ISSUES = 100  # problems listed per document; the rest are counted
CHECK_EVERY = 4096  # records (lines, objects) a reader reads between two calls of its deadline check
# Digits of a 64-bit integer. A longer number in a document is a problem naming its field, never converted:
# an int of 5,000 digits cannot even be printed (sys.get_int_max_str_digits) and costs quadratic time.
MAX_INT_DIGITS = 19


@dataclass(slots=True)
class ParseIssue:
    """A problem in a structured document (sacct, a Kueue object, metrics): the line and what is wrong."""

    line: int | None
    message: str  # names the field / key path and what is wrong


class IssueList(list[ParseIssue]):
    """A document's problems: the first MAX_ISSUES kept, the rest counted in `unlisted`."""

    __slots__ = ("unlisted",)

    def __init__(self, issues: Iterable[ParseIssue] = ()) -> None:
        super().__init__()
        self.unlisted = 0
        self.extend(issues)

    def append(self, issue: ParseIssue) -> None:
        if len(self) < MAX_ISSUES:
            super().append(issue)
        else:
            self.unlisted += 1

    def extend(self, issues: Iterable[ParseIssue]) -> None:
        for issue in issues:
            self.append(issue)

    def insert(self, index: SupportsIndex, issue: ParseIssue) -> None:
        if len(self) < MAX_ISSUES:
            super().insert(index, issue)
        else:
            self.unlisted += 1

    def __iadd__(self, issues: Iterable[ParseIssue]) -> IssueList:  # type: ignore[override,misc]
        self.extend(issues)
        return self


@dataclass(slots=True)
class StructuredResult:
    """The events a structured document gave, its problems (capped), and the hosts it names."""

    events: list[Event] = field(default_factory=list)
    issues: list[ParseIssue] = field(default_factory=IssueList)
    lines: int = 0  # lines (or records) read
    hosts: set[str] = field(default_factory=set)  # host names seen (raw, unmapped)

    def __post_init__(self) -> None:
        if not isinstance(self.issues, IssueList):
            self.issues = IssueList(self.issues)

    def problems(self) -> list[tuple[int | None, str]]:
        """The (line, message) problems, with one more that counts those not listed."""
        out = [(i.line, i.message) for i in self.issues]
        unlisted = self.issues.unlisted if isinstance(self.issues, IssueList) else 0
        if unlisted:
            out.append((None, f"{unlisted} more issues not listed"))
        return out


def fits_int64(value: int) -> bool:
    """Whether an integer fits a signed 64-bit column (SQLite, PostgreSQL bigint) and prints quickly."""
    return -(1 << 63) <= value < (1 << 63)


def int_or_text(text: str) -> int | str:
    """json's `parse_int` for documents from a failed job: a number longer than 64 bits stays text."""
    return int(text) if len(text) <= MAX_INT_DIGITS + 1 else text


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    """Evidence text is for a human to recognise the record, not a copy of it."""
    text = text.rstrip("\r\n")
    if len(text) <= limit:
        return text
    return text[: limit - 3] + "..."
