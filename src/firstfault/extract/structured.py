"""Result types shared by the structured-source readers (scheduler, metrics, dumps).

Structured sources are not scanned line by line through the prefilter: each
file is read whole by a format-specific reader that returns ready events,
the problems it met (so coverage can say "partial" instead of failing), how
much it read, and which raw host names it saw.

A document's problems are capped: the first MAX_ISSUES are kept and the rest
only counted (IssueList), so a broken file of a million records costs a
count, not a million errors in the verdict.

People paste a tool's output with the command that printed it, often after
their shell's prompt (`user@login:~$ qacct -j 42`, `[root@node ~]# bjobs -l 12`,
`❯ flux job info ƒ42 eventlog`, `$ kubectl describe pod x`, or the bare
`tracejob 42 -n 2`), and several outputs in one file. `outputs` splits a
document at those command lines, which are no output of the tool: every
reader reads each output on its own, and may take a hint from its command.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final, SupportsIndex

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
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


# --------------------------------------------------------------------------
# A tool's output pasted with its command line
# --------------------------------------------------------------------------

# The tools whose output the scheduler formats are (docs/evidence-bundle.md): a line that starts with one of
# them (after `sudo`) and an argument is the command that printed what follows, even without a prompt (none of
# their outputs starts a line so: `qstat: Unknown Job Id` is an error, `flux-shell[0]:` another program).
SCHEDULER_TOOLS: Final = frozenset({"sacct", "scontrol", "squeue", "sinfo", "qacct", "qstat", "tracejob", "bjobs",
                                    "bhist", "bacct", "flux", "kubectl", "oc"})
# A shell's prompt, then the command. The forms that cannot be anything else take any command: bash's
# `user@host:~/dir$` and `[user@host dir]$` (`#` for root), zsh's `user@host dir %`, a directory alone (`~#`,
# `/tmp$`), a lone `$` or starship's `❯`, each after an optional `(venv)`. A lone `#`, `>` or `%` starts comments
# and quotes too: after one of those only a SCHEDULER_TOOLS command counts. Each part is one run of a class: the
# match is linear.
_PROMPT = re.compile(
    r"^[ \t]*(?:\([\w.\-]{1,64}\)[ \t]+)?"
    r"(?:(?P<strong>\[[^\]\n]{1,200}\][$#%]|[\w.\-]+@[\w.\-]+(?::[^\s$#%]*| [^\s$#%]+)?[ ]?[$#%]"
    r"|[~/][^\s$#%]*[$#]|[$\u276f])"
    r"|(?P<weak>[#>%]))"
    r"(?:[ \t]+(?P<command>\S.*?))?\s*$")
_SUDO = "sudo "


@dataclass(slots=True)
class Output:
    """What one command printed: its lines, numbered as in the document. The lines before the first command line
    (or a whole document without one) are an output whose `command` is None."""

    command: str | None  # as typed, without the prompt
    line: int | None  # the command's own line
    lines: list[tuple[int, str]] = field(default_factory=list)

    def words(self) -> list[str]:
        """The command's words, `sudo` left out."""
        words = (self.command or "").split()
        return words[1:] if words[:1] == ["sudo"] else words


def command_line(line: str) -> str | None:
    """The command a pasted line types (its prompt taken off), or None for a line of output."""
    m = _PROMPT.match(line)
    if m is not None:
        command = m.group("command") or ""
        if m.group("strong") is not None:
            return command  # (a prompt alone, "", ends the output above it too)
        line = command  # after a weak prompt, only a tool's command
    words = line.removeprefix(_SUDO).split(None, 2) if line[:1] not in (" ", "\t") else []
    if len(words) >= 2 and words[0] in SCHEDULER_TOOLS:
        return line.strip()
    return None


def output_spans(lines: list[str]) -> list[tuple[str | None, int, int]]:
    """Where each command's output lies in a document's `lines`: (the command, the index of its first line, the
    index past its last). The lines before the first command line are a span whose command is None."""
    spans: list[tuple[str | None, int, int]] = []
    command: str | None = None
    start = 0
    for i, line in enumerate(lines):
        typed = command_line(line)
        if typed is not None:
            spans.append((command, start, i))
            command, start = typed, i + 1
    spans.append((command, start, len(lines)))
    return [(c, a, b) for c, a, b in spans if c is not None or any(ln.strip() for ln in lines[a:b])]


def outputs(text: str) -> list[Output]:
    """`text` split at its command lines (command_line): each command's output, its lines numbered, in order."""
    lines = text.splitlines()
    return [Output(command, start if command is not None else None,
                   [(n, lines[n - 1]) for n in range(start + 1, end + 1)])
            for command, start, end in output_spans(lines)]


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    """Evidence text is for a human to recognise the record, not a copy of it."""
    text = text.rstrip("\r\n")
    if len(text) <= limit:
        return text
    return text[: limit - 3] + "..."
