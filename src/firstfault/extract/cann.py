"""Huawei Ascend's CANN reports (catalog/cann.yaml) and torch_npu's RuntimeErrors over them.

torch_npu raises a RuntimeError that only says a call into CANN failed (`RuntimeError: ACL stream synchronize
failed.`) and appends CANN's report lines under it (`EI9999: Inner Error!`, `EI9999: <time> The error from device(...),
... hccl fftsplus task timeout occurred during task execution, ...`): the report says what failed, as a CUDA error's
name does in CUDA's RuntimeError. So such an exception (catalog/cann.yaml `envelopes`) is held (`hold`, called by
extract/exceptions.py) until a report line within `_WINDOW` lines of it decides: its code (`report_codes`), else its
words (`device_words`), else torch_npu's aclError result after `error code is` (`result_codes`) give what the line is
read as (`reads`): a collective's timeout or a peer's failure (the nccl.* symptoms NCCL's own lines give), the
device's memory exhausted (app.cuda_oom), the job's set-up (app.exception, setup); the device's own faults are
catalog/accel.yaml's rows (extract/gpu.py AccelExtractor: gpu.accel_error), which decide the held exception too. A
report of the call's own arguments (`workload`), or none, leaves the exception as raised: it is given back where the
stream ends (`at_end`), at its own line. The same lines on their own (a report with no exception over it) are read the
same way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import cann_table
from firstfault.extract.base import Draft, LineContext
from firstfault.extract.gpu import accel_message
from firstfault.extract.memo import hex_words
from firstfault.extract.nccl import clip, mark_failure, split_rank_prefix

# A report line's code (`EE1002: 2024-09-03-16:50:00.041.231 Stream synchronize timeout.`), behind a warning's header
# (`[W612 09:47:56.859970564 compiler_depend.ts:57] Warning: EI0002: [PID: 11394] ...`) or, in later releases, after
# the code's name (`Get_Socket_Timeout(EI0006): Getting socket times out.`).
_CODE_LINE = re.compile(r"(?<![\w.-])(?P<code>E[1-9A-Z]\d{4})\)?:(?:\s|$)")
# torch_npu's aclError result after the call that failed (`NPU warning, error code is 507046`, `ACL stream synchronize
# failed, error code:507046`).
_RESULT = re.compile(r"\berror code(?: is |:) ?(?P<code>[125]0\d{4})\b")
_RESULT_WORDS: Final = ("error code is ", "error code:")
# ... and HCCL's own result after torch_npu's HCCL call (HCCLUtils.hpp: `HCCL function error: HcclCommInitRootInfo(...),
# error code is 11`), read after those words only.
_HCCL_CALL: Final = "HCCL function error: "
_HCCL_RESULT = re.compile(r", error code is (?P<code>\d{1,2})\b")
# torch_npu's tag of the error it raised (formatErrorCode: `[ERROR] <time> (PID:1, Device:0, RankID:-1) ERR00100 PTA
# call acl api failed`; of an exception it did not raise itself, `ERR99999 UNKNOWN applicaiton exception`,
# vllm-project/vllm-ascend#1127): the exception's own, read with it.
_ERR_TAG = re.compile(r"\bERR(?:0[0-4]\d{3} (?:PTA|OPS|DIST|GRAPH|PROF)|99999 UNKNOWN) ")
_ERR_WORDS: Final = ("ERR0", "ERR99999")
_K_HELD: Final = "cann.held"  # the torch_npu exceptions awaiting CANN's report (_Held), in the order they came
_WINDOW: Final = 16  # lines after the exception within which a report line decides it


@dataclass(frozen=True, slots=True)
class _Held:
    """A torch_npu exception awaiting CANN's report: its place, line, class and what it would be read as alone."""

    ctx: LineContext
    text: str
    exc_type: str
    drafts: tuple[Draft, ...]


@lru_cache(maxsize=1)
def _internal_codes() -> frozenset[str]:
    """Each module's internal report code (`EI9999`): its words decide, not its number."""
    return frozenset(f"E{m.letter}9999" for m in cann_table().modules)


# Words every report line holds after its code, in CANN's two layouts (`EI0002: [PID: 4242] 2025-... The wait
# execution ...`; an internal report's `EI9999: Inner Error!` and `EI9999: 2025-...  The error from device(chipId:1,
# ...`): the prefilter's words for the codes that are hex digits alone (below).
_REPORT_WORDS: Final = ("[PID: ", "Inner Error", "The error from device(")


def literals() -> tuple[str, ...]:
    """What a line must hold for CannExtractor to read it. Not a code that is hex digits alone (EE1002, E19999,
    EA9999): a hex id could spell it, and such a prefilter word makes every line whose shape holds a hex id be
    read in Python, one by one (collect/fold.py; a noisy 2M-line log took three times as long); the report words
    find those codes' lines, and the code is read from the line (_CODE_LINE)."""
    t = cann_table()
    words = (*t.codes, *sorted(_internal_codes()), *(w.text for w in t.words), *_RESULT_WORDS, *_ERR_WORDS,
             *_REPORT_WORDS)
    return tuple(dict.fromkeys(w for w in words if not hex_words([w.encode()])))


def reading(text: str) -> tuple[str, str] | None:
    """What CANN's words on a line are read as (catalog/cann.yaml `reads`) and the name of what decided it: the report
    code's row, else the first of the device words the line holds, else HCCL's result after torch_npu's HCCL call, else
    torch_npu's aclError result. None: no row."""
    t = cann_table()
    m = _CODE_LINE.search(text)
    if m is not None and (row := t.codes.get(m.group("code"))) is not None:
        return row.reads, row.code
    for w in t.words:
        if w.text in text:
            return w.reads, w.text
    at = text.find(_HCCL_CALL)
    if at >= 0 and (h := _HCCL_RESULT.search(text, at)) is not None:
        hccl = t.hccl.get(int(h.group("code")))
        return (hccl.reads, hccl.name) if hccl is not None else None
    if any(w in text for w in _RESULT_WORDS) and (r := _RESULT.search(text)) is not None:
        res = t.results.get(int(r.group("code")))
        if res is not None:
            return res.reads, res.name
    return None


def device_fault(text: str) -> bool:
    """The line holds a row of catalog/accel.yaml's CANN family (the device's own fault, extract/gpu.py reads it)."""
    read = accel_message(text)
    return read is not None and read.vendor == "huawei"


def drafts_for(reads: str, text: str, exc_type: str | None = None) -> list[Draft]:
    """The events a reading gives: NCCL's symptoms for a timeout or a peer's failure, the device's memory exhausted,
    the job's set-up; none for the call's own arguments (the exception over it is read as raised)."""
    if reads == "timeout":
        return [Draft("nccl.timeout", {"detail": clip(text)})]
    if reads == "remote":
        return [Draft("nccl.remote_error", {"detail": clip(text)})]
    if reads == "oom":
        return [Draft("app.cuda_oom", {"message": clip(text)})]
    if reads == "setup":
        fields: dict[str, str | bool] = {"message": clip(text), "setup": True}
        if exc_type:
            fields["exc_type"] = exc_type
        return [Draft("app.exception", dict(fields))]
    return []


def envelope(message: str) -> bool:
    """torch_npu's message only says a call into CANN failed (catalog/cann.yaml `envelopes`)."""
    return any(e in message for e in cann_table().envelopes)


def hold(ctx: LineContext, text: str, drafts: list[Draft]) -> list[Draft]:
    """What an exception's line (a traceback's last, or one of its own) gives where the exception is torch_npu's over
    CANN (`text`, the line, holds one of catalog/cann.yaml's `envelopes`): nothing where its own message's
    words decide (the line is read as any line is: a device fault by extract/gpu.py, the rest by CannExtractor), else
    nothing yet, the exception held for the report lines under it (CannExtractor). Any other exception's drafts as they
    are."""
    if len(drafts) != 1 or drafts[0].kind != "app.exception" or not envelope(text):
        return drafts
    read = reading(text)
    if device_fault(text) or (read is not None and read[0] != "workload"):
        return []
    _held(ctx.state).append(_Held(ctx, text, str(drafts[0].fields.get("exc_type") or ""), tuple(drafts)))
    return []


def _held(state: dict[str, object]) -> list[_Held]:
    """The stream's held exceptions, in the order they came."""
    held = state.get(_K_HELD)
    if not isinstance(held, list):
        held = []
        state[_K_HELD] = held
    return held


class CannExtractor:
    """CANN's report lines and torch_npu's result codes (catalog/cann.yaml), on their own or deciding the torch_npu
    exception held over them (`hold`)."""

    name = "app.cann"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "nccl.timeout": frozenset({"detail"}),
        "nccl.remote_error": frozenset({"detail"}),
        "app.cuda_oom": frozenset({"message"}),
        "app.exception": frozenset({"exc_type", "message", "setup"}),
    }
    sources: frozenset[str] = frozenset({"application"})
    literals: tuple[str, ...] = literals()

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        if any(w in body for w in _ERR_WORDS) and _ERR_TAG.search(body):
            ctx.claimed = True  # torch_npu's tag of the exception it raised: read with it
            return
        # (no held list made for a line that finds none: a line of another program's with `[PID: ` moves no state)
        got = ctx.state.get(_K_HELD)
        waiting: list[_Held] = got if isinstance(got, list) else []
        held = waiting[-1] if waiting and 0 < ctx.lineno - waiting[-1].ctx.lineno <= _WINDOW else None
        if device_fault(body):
            if held is not None:
                waiting.pop()  # the device's fault, which extract/gpu.py reads, decides it
            return
        read = reading(body)
        if read is None:
            m = _CODE_LINE.search(body)
            if m is not None and held is not None:
                ctx.claimed = True  # a line of the report under the exception (`EI9999: Inner Error!`)
            return
        ctx.claimed = True
        drafts = drafts_for(read[0], body, held.exc_type if held is not None else None)
        if not drafts:
            return  # the call's own arguments: the exception over it stands as raised
        if held is not None:
            waiting.pop()
        for d in drafts:
            if rank is not None:
                d.rank = rank
            if d.kind.startswith("nccl."):
                mark_failure(ctx, rank if rank is not None else ctx.rank)
            yield d

    def at_end(self, state: dict[str, object]) -> list[tuple[Draft, LineContext, str]]:
        """Each held torch_npu exception no report line decided: read as raised, at its own line."""
        held = state.get(_K_HELD)
        if not isinstance(held, list):
            return []
        return [(Draft(d.kind, dict(d.fields), d.device, d.rank, d.host), h.ctx, h.text)
                for h in held if isinstance(h, _Held) for d in h.drafts]


EXTRACTORS: Final = (CannExtractor(),)
