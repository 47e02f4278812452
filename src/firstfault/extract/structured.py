"""Result types shared by the structured-source readers (scheduler, metrics).

Structured sources are not scanned line by line through the prefilter: each
file is read whole by a format-specific reader that returns ready events,
the problems it met (so coverage can say "partial" instead of failing), how
much it read, and which raw host names it saw.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from firstfault.model import Event

TEXT_LIMIT = 500


@dataclass(slots=True)
class ParseIssue:
    """A problem in a structured document (sacct, a Kueue object, metrics): the line and what is wrong."""

    line: int | None
    message: str  # names the field / key path and what is wrong


@dataclass(slots=True)
class StructuredResult:
    """The events a structured document gave, its problems, and the hosts it names."""

    events: list[Event] = field(default_factory=list)
    issues: list[ParseIssue] = field(default_factory=list)
    lines: int = 0  # lines (or records) read
    hosts: set[str] = field(default_factory=set)  # host names seen (raw, unmapped)


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    """Evidence text is for a human to recognise the record, not a copy of it."""
    text = text.rstrip("\r\n")
    if len(text) <= limit:
        return text
    return text[: limit - 3] + "..."
