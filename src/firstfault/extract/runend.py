"""How the run ended, in the words of the programs that ran it (catalog/ends.yaml).

Where no scheduler record and no workload.yaml says how an attempt ended (a log posted in a thread, a bare
torchrun on a workstation, a `ray job submit` console), the programs that ran it still often say it: a
launcher's final summary (torchrun's `[default] worker group successfully finished`, DeepSpeed's `Process 4242
exits successfully.`, Open MPI's `Per user-direction, the job has been aborted.`, Horovod's `... exited with
non-zero status, thus causing the job to be terminated.`, Ray's `Job 'raysubmit_...' succeeded`), a framework's
end of training (Lightning's `` `Trainer.fit` stopped: `max_epochs=10` reached. ``, the Hugging Face Trainer's
`Training completed. ...`), an IDE console's `Process finished with exit code 0`, or a notice a library prints
only while its process exits (PyTorch's `destroy_process_group() was not called before program exit`, UCX's
`object ... was not returned to mpool`). Each row of the table is one such line: its words (the prefilter's
literal and the row's gate), a pattern that must run to the end of the line (so prose, a help text or a
document that quotes the words does not match), the outcome it gives and what it is about (`scope`).

Each becomes `launcher.exit` (`state` SUCCEEDED, FAILED or RESTART; `system`, `scope`, and `code`, `pid`,
`aborted` where the line gives them). The engine reads them as the attempt's end state only as its last resort,
with its guards (engine/normalise.py `own_end`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import EndReport, end_reports
from firstfault.extract.base import Draft, LineContext
from firstfault.extract.prefix import split_prefixes
from firstfault.model import FieldValue


@lru_cache(maxsize=1)
def _rows() -> tuple[tuple[EndReport, re.Pattern[str]], ...]:
    return tuple((row, re.compile(row.pattern, keep=True)) for row in end_reports())


def literals() -> tuple[str, ...]:
    """The table's literals: the words that bring a line to this extractor."""
    return tuple(row.literal for row in end_reports())


def read_end(body: str) -> dict[str, FieldValue] | None:
    """The end report a line's body (its launcher prefixes peeled) is, as `launcher.exit`'s fields; None if none."""
    for row, pattern in _rows():
        if row.literal not in body:
            continue
        m = pattern.search(body)
        if m is None:
            continue
        fields: dict[str, FieldValue] = {"system": row.system, "scope": row.scope}
        groups = m.groupdict()
        if groups.get("pid"):
            fields["pid"] = int(groups["pid"])
        if row.outcome == "code":
            code = int(groups["code"])
            fields["code"] = code
            fields["state"] = "SUCCEEDED" if code == 0 else "FAILED"
        else:
            fields["state"] = {"succeeded": "SUCCEEDED", "failed": "FAILED", "stopped": "CANCELLED",
                               "restart": "RESTART"}[row.outcome]
        if row.stops_others and fields["state"] == "FAILED":
            fields["aborted"] = True
        return fields
    return None


class EndReportExtractor:
    """A line that says how the run (or one of its processes) ended: launcher.exit."""

    name = "launcher.exit"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "launcher.exit": frozenset({"state", "system", "scope", "code", "pid", "aborted"}),
    }
    sources: frozenset[str] = frozenset({"application"})

    def __init__(self) -> None:
        self.literals: tuple[str, ...] = literals()

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        p = split_prefixes(line)
        fields = read_end(p.body)
        if fields is not None:
            yield Draft("launcher.exit", fields, host=p.host)


EXTRACTORS = (EndReportExtractor(),)
