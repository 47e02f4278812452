"""What a checkpoint/restore tool says when it refuses: CRIU's error records and cuda-checkpoint's answers.

CRIU (and its CUDA plugin) logs an error as `Error (FILE:LINE): MESSAGE` (catalog/exceptions.yaml level_headers `criu`):
the check that failed first, then each caller's `... failed with -1`, then `Dumping FAILED.` / `Restoring FAILED.` (the
tool's end: catalog/ends.yaml, extract/runend.py). The message of each error record is read the way any error line's
words are (extract/traceback.py `words_cause`: a storage errno, a set-up errno), for a signal that killed a task CRIU
restored, and for the tool's own words (catalog/exceptions.yaml `checkpoint_messages`: a descriptor, mapping or mount it
cannot handle, a time limit a plugin's action outgrew, a driver below the tool's minimum or whose settings refuse it, a
file of the restored container's own file system it cannot re-create; and cuda-checkpoint's `Error toggling CUDA in
process ID N: "WORDS"`, the driver's words quoted). A warning record (`Warn  (FILE:LINE): `) is claimed: CRIU goes on
after it, so it is neither a cause nor an unrecognized error. The callers' lines and the end say nothing of their own;
the earliest line that names a cause is the cause (the engine's order).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import CheckpointMessageInfo, checkpoint_message_table, level_header_table
from firstfault.extract.base import Draft, LineContext, LineExtractor, state_set
from firstfault.extract.codes import by_whom, signal_name
from firstfault.extract.traceback import clip, words_cause

# criu/cr-restore.c (`%d killed by signal %d: %s`, strsignal's words after it): a task CRIU restored died on a signal
_KILLED = re.compile(r"\b\d{1,10} killed by signal (?P<num>\d{1,2})\b")
# NVIDIA's cuda-checkpoint answering that the driver's checkpoint API refused (`Error toggling CUDA in process ID 98145:
# "operation not permitted"`): the quoted words are the driver's error string (catalog/exceptions.yaml rows `quoted`)
_ANSWER = re.compile(r'^Error [a-z]{1,20}ing CUDA in process ID \d{1,10}: "(?P<msg>[^"]{1,200})"$')
_ANSWER_WORDS: Final = " CUDA in process ID "
# the signals a task raises on itself by faulting (a crash), as the other readers' (extract/signals.py)
_CRASH: Final = frozenset({"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"})
_K_SEEN: Final = "ff.criu.seen"
_ENDS: Final = ("Dumping FAILED", "Restoring FAILED", "Pre-dumping FAILED")


@lru_cache(maxsize=1)
def _header() -> re.Pattern[str]:
    """CRIU's record header (catalog/exceptions.yaml level_headers `criu`): one model, the table's."""
    return re.compile(next(r.header for r in level_header_table() if r.logger == "criu"), keep=True)


@lru_cache(maxsize=1)
def _rows() -> tuple[tuple[CheckpointMessageInfo, ...], tuple[str, ...]]:
    """The table's rows, and the words of their `after` lists (what a stream's earlier errors are looked at for)."""
    rows = checkpoint_message_table()
    return rows, tuple(dict.fromkeys(w for r in rows for w in r.after))


class CheckpointToolExtractor:
    """CRIU's error records (and its CUDA plugin's) and cuda-checkpoint's one-line answers."""

    name = "checkpoint"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    # (words_cause's kinds too: a storage errno's storage.error, a set-up errno's app.exception)
    emits: Mapping[str, frozenset[str]] = {
        "app.exception": frozenset({"errno", "exc_type", "limit", "message", "path", "setup", "store_code", "tool"}),
        "app.cuda_error": frozenset({"error", "message", "tool"}),
        "container.error": frozenset({"error", "message", "runtime", "text"}),
        "process.signal": frozenset({"by", "detail", "signal"}),
        "storage.error": frozenset({"detail", "errno", "exc_type", "fs", "path", "store_cause", "store_code"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})
    literals: tuple[str, ...] = ("Error (", "Warn  (", _ANSWER_WORDS,
                                 *sorted({r.text for r in checkpoint_message_table() if r.bare or r.whole}))

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rows, after_words = _rows()
        m = _header().match(line) if ("Error (" in line or "Warn  (" in line) else None
        if m is None:
            yield from self._unheaded(line, rows)
            return
        if m.group("level") != "E":
            ctx.claimed = True  # a warning: CRIU goes on
            return
        msg = line[m.end():].strip()
        seen = state_set(ctx.state, _K_SEEN)
        if any(w in msg for w in _ENDS):
            seen.clear()  # the run's end: what its errors said is no later run's
            return
        draft = self._read(msg, rows, seen)
        seen.update(w for w in after_words if w in msg)
        if draft is not None:
            yield draft

    @staticmethod
    def _unheaded(line: str, rows: tuple[CheckpointMessageInfo, ...]) -> Iterator[Draft]:
        """A row's words on a line without CRIU's header: a tool's whole answer (`whole`), or CRIU's own words in a log
        copied without its headers (`bare`)."""
        text = line.strip()
        answer = _ANSWER.match(text) if _ANSWER_WORDS in text else None
        for row in rows:
            if answer is not None and row.quoted and answer.group("msg") == row.text:
                yield _reading(row, text)
                return
            if row.whole and text == row.text:
                yield _reading(row, text)
                return
            if row.bare and text.startswith(row.text):
                said = words_cause(text)
                yield said if said is not None else _reading(row, text)
                return

    @staticmethod
    def _read(msg: str, rows: tuple[CheckpointMessageInfo, ...], seen: set[str]) -> Draft | None:
        """The cause one CRIU error message names: its errno and words (words_cause), a crash signal of a restored
        task, else a row of the tool's own words; None for a caller's `failed with -1` and any other."""
        said = words_cause(msg)
        if said is not None:
            return said
        if "killed by signal" in msg and (k := _KILLED.search(msg)) is not None:
            sig = signal_name(int(k.group("num")))
            if sig in _CRASH:
                return Draft("process.signal", {"signal": sig, "by": by_whom(sig, "criu"), "detail": clip(msg)})
            return None
        for row in rows:
            if row.text in msg and all(w in seen for w in row.after):
                return _reading(row, msg)
        return None


def _reading(row: CheckpointMessageInfo, msg: str) -> Draft:
    if row.reading == "driver":
        return Draft("app.cuda_error", {"error": "driver", "message": clip(msg), "tool": row.printer})
    if row.reading == "node":
        return Draft("container.error", {"runtime": row.printer, "error": "node", "text": row.text,
                                         "message": clip(msg)})
    return Draft("app.exception", {"message": clip(msg), "setup": True, "tool": row.printer})


EXTRACTORS: tuple[LineExtractor, ...] = (CheckpointToolExtractor(),)
