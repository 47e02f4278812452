"""Application output: Python exceptions, CUDA errors, NaN/Inf, torchrun and srun reports.

The scanner hands an extractor only the lines holding one of its literals, so
multi-line records are followed through the per-stream `ctx.state`:
a traceback is opened by its `Traceback (most recent call last):` line and
closed by the first later line shaped like an exception (`pkg.mod.XError:
msg`); the frames in between may never arrive. torchrun's ChildFailedError
summary is a small state machine over its section and field lines.

Ownership, so one line never counts twice: the NCCL extractors (nccl.py) own
every line `nccl_owns` accepts; the numerics extractor owns NaN/Inf lines;
the exception extractor emits `app.exception` only for a traceback's last
line that no other kind describes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import status_anchors, status_word_table
from firstfault.extract import traceback as tb
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.codes import (
    ACCEL_OOM_PHRASES,
    CODED_CUDA_MESSAGE,
    CUDA_LITERALS,
    MESSAGE_CUDA_CODE,
    WEAK_CUDA_ANCHORS,
    by_whom,
    cuda_message_literals,
    exit_signal,
    signal_name,
    signal_of_text,
    storage_strerror_texts,
    strsignal_alternation,
)
from firstfault.extract.excclass import logged_words, setup_errno_words
from firstfault.extract.jobend import memory_limit_kill
from firstfault.extract.launcher import reports_exit
from firstfault.extract.memo import ON, Memo, digits_zeroed
from firstfault.extract.nccl import NCCL_ERROR_LITERALS, NCCL_MARK, clip, nccl_owns, recent, split_rank_prefix
from firstfault.model import FieldValue

_STRSIGNAL_ALT = strsignal_alternation()
_FAULT_ALT = "Segmentation fault|Aborted|Bus error|Floating point exception|Illegal instruction"


# --------------------------------------------------------------------------
# NaN / Inf
# --------------------------------------------------------------------------

# `lm loss: nan`, `grad norm: nan`, `'loss': nan`, `loss is nan`, `loss=nan`, `loss\tnan`,
# `train_loss=nan`, `Loss: NaN`, `loss: tensor(nan, ...)`, `loss nan`; the value must be
# a whole word (`nanoseconds` is not NaN) right after a loss / norm name. The regex and the
# prefilter literals are built from the same pieces, so a line the regex reads always holds
# a literal: a value form added here reaches the prefilter too.
_METRIC_NAMES: Final = ("loss", "Loss", "LOSS", "norm", "Norm", "ppl", "PPL", "perplexity")
_JOINERS: Final = (":", ": ", ":\t", "=", "= ", " = ", " is ", " was ", " ", "  ", "\t", "': ", '": ')
_OPENS: Final = ("", "tensor(")
_VALUES: Final = tuple(f"{sign}{v}" for sign in ("", "-") for v in ("nan", "NaN", "NAN", "Nan", "inf", "Inf", "INF"))


def _alt(items: tuple[str, ...]) -> str:
    return "|".join(re.escape(i) for i in sorted(items, key=len, reverse=True))


_METRIC_VALUE = re.compile(
    r"(?P<metric>(?:\b(?:lm|train|training|val|valid|validation|eval|test|grad|global|total|avg|mean)[ _])?"
    rf"\b[A-Za-z_]*(?:{_alt(_METRIC_NAMES)})[A-Za-z_]*)"
    rf"(?:{_alt(_JOINERS)})(?:{_alt(_OPENS)})"
    rf"(?P<v>(?:{_alt(_VALUES)})(?:inity)?)(?![A-Za-z0-9_])"
)
_FOUND_NAN = re.compile(r"found (?P<v>NaN|Inf) in local grad norm")
_MEGATRON_RANK = re.compile(r"\bRank (?P<rank>\d+)[,:]")
_MEGATRON_NODE = re.compile(r"\bnode:? (?P<node>[A-Za-z0-9][\w.\-]*?)[,.]?(?:\s|$)")
_MEGATRON_DEVICE = re.compile(r"\b[Dd]evice:? (?P<dev>\d+)")
_DS_OVERFLOW = re.compile(r"OVERFLOW!(?: Rank (?P<rank>\d+))? Skipping step")
# apex `Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0`; fairseq
# `NOTE: overflow detected, setting loss scale to: 64.0` (`gradient overflow detected, ignoring gradient, ...`).
_APEX_OVERFLOW = re.compile(r"Gradient overflow\.\s+Skipping step"
                            r"|overflow detected, (?:ignoring gradient, )?setting loss scale to")
# The scale an overflow moved the scaler from and to (DeepSpeed names both; apex and fairseq only the new one;
# DeepSpeed's `... but hysteresis is 2. Reducing hysteresis to 1` is an overflow that does not lower it yet).
_ATTEMPTED_SCALE = re.compile(r"Attempted loss scale: (?P<v>\d+(?:\.\d+)?)")
_NEW_SCALE = re.compile(r"(?:reducing(?: loss scale)? to|setting loss scale to:?)\s*(?P<v>\d+(?:\.\d+)?(?:e[-+]?\d+)?)")
# A collapse of the fp16 loss scale: this many halvings in a row with no rise between them (each overflow's
# attempted scale is the previous one's reduced scale), ending at or below COLLAPSE_SCALE. One overflow now
# and then, or a run at the start while the scaler finds its level from a high initial scale, is routine; the
# scaler driven down and never recovering is the loss diverging (the run ends at the scaler's floor, often
# after the log a user posts stops). At or below SCALE_FLOOR is DeepSpeed's default min_loss_scale itself.
COLLAPSE_HALVINGS: Final = 6
COLLAPSE_SCALE: Final = 1024.0
SCALE_FLOOR: Final = 1.0
_SCALE_RUNS: Final = "ff.app.loss_scale_runs"
_NAN_ITERATIONS = re.compile(r"number of nan iterations:\s*[1-9]\d*")
# DeepSpeed's fp16 loss scaler gives up after overflowing down to its floor.
_SCALE_FLOOR = re.compile(r"loss scale already at minimum|Minimum loss scale reached")
_OTHER_NAN = re.compile(
    r"NaN or Inf found in input tensor|Loss became infinite or NaN|returned nan values in its \d\w*+ output"
)


def _numerics_literals() -> tuple[str, ...]:
    # The value with the two characters before it: `: nan`, `=nan`, `s nan` (loss nan), `(nan`
    # (tensor(nan): specific enough for NaN, while Megatron's `number of nan iterations: 0` (`f nan`)
    # stays out. An Inf value is not (`: info`, `=inference`), so it keeps the whole name and joiner.
    nan_combos = {f"{(n + j + o)[-2:]}{v}" for n in _METRIC_NAMES for j in _JOINERS for o in _OPENS for v in _VALUES
                  if v.lstrip("-").lower() == "nan"}
    inf_combos = {f"{n}{j}{o}{v}" for n in _METRIC_NAMES for j in _JOINERS for o in _OPENS for v in _VALUES
                  if v.lstrip("-").lower() == "inf"}
    combos = nan_combos | inf_combos
    fixed = {
        # `found NaN in local grad norm`, `NaN or Inf found in input tensor` (`Loss is NaN` is a combination
        # above). Not a bare `NaN`: one three-letter word made the prefilter's scan of a log a quarter slower.
        "found NaN",
        "NaN or Inf",
        "found Inf",
        "Loss became infinite",
        "OVERFLOW!",
        "Gradient overflow",
        "setting loss scale to",
        "loss scale already at minimum",
        "Minimum loss scale reached",
        "returned nan values",
    } | {f"nan iterations: {d}" for d in "123456789"}
    return tuple(sorted(combos | fixed))


_NUMERICS_LITERALS = _numerics_literals()


def numerics(body: str) -> Draft | None:
    """The app.numerics event a line holds, if any (stateless, used for ownership too)."""
    message = clip(body)
    m = _FOUND_NAN.search(body)
    if m:
        # Megatron names the global rank, the node and the local device.
        draft = Draft("app.numerics", {"value": m.group("v").lower(), "metric": "grad_norm", "message": message})
        r = _MEGATRON_RANK.search(body)
        if r:
            draft.rank = int(r.group("rank"))
        n = _MEGATRON_NODE.search(body)
        if n:
            draft.host = n.group("node")
        d = _MEGATRON_DEVICE.search(body)
        if d:
            draft.device = f"gpu{d.group('dev')}"
        return draft
    m = _DS_OVERFLOW.search(body)
    if m:
        # fp16 loss-scale overflow: inf/nan gradients, skipped step.
        fields: dict[str, FieldValue] = {"value": "inf", "metric": "loss_scale", "message": message}
        return Draft("app.numerics", fields, rank=int(m.group("rank")) if m.group("rank") else None)
    if _SCALE_FLOOR.search(body):
        # The scaler gave up: overflow on every step, training cannot go on.
        return Draft("app.numerics", {"value": "inf", "metric": "loss_scale_floor", "message": message})
    if _APEX_OVERFLOW.search(body):
        return Draft("app.numerics", {"value": "inf", "metric": "loss_scale", "message": message})
    m = _METRIC_VALUE.search(body)
    if m:
        value = "nan" if m.group("v").lstrip("+-").lower() == "nan" else "inf"
        metric = re.sub(r"\s+", "_", m.group("metric").strip()).lower()
        return Draft("app.numerics", {"value": value, "metric": metric, "message": message})
    if _NAN_ITERATIONS.search(body):
        return Draft("app.numerics", {"value": "nan", "metric": "nan_iterations", "message": message})
    m = _OTHER_NAN.search(body)
    if m:
        return Draft("app.numerics", {"value": "nan", "message": message})
    return None


class NumericsExtractor:
    """NaN / Inf loss and gradient norms (Megatron, DeepSpeed, NeMo, HF, plain prints)."""

    name = "app.numerics"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "app.numerics": frozenset({"message", "metric", "value", "from_scale", "to_scale"}),
    }
    sources: frozenset[str] = frozenset({"application"})
    # A bare "nan" or "=inf" would pass every Megatron step line ("number of
    # nan iterations: 0") and every logfmt "level=info" line: the literals pair
    # the value with the metric name before it, as _METRIC_VALUE reads them.
    literals: tuple[str, ...] = _NUMERICS_LITERALS

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        draft = numerics(body)
        if draft is not None:
            if rank is not None:
                draft.rank = rank
            yield draft
            if draft.fields.get("metric") == "loss_scale":
                collapse = _scale_collapse(body, draft.rank if draft.rank is not None else ctx.rank, ctx.state)
                if collapse is not None:
                    collapse.rank = draft.rank
                    yield collapse


@dataclass(slots=True)
class _ScaleRun:
    """One stream's overflows since the loss scale last rose."""

    start: float
    last: float
    emitted: bool = False


def _scale_collapse(body: str, who: int | None, state: dict[str, object]) -> Draft | None:
    """The overflow that completes a collapse of the loss scale (see COLLAPSE_HALVINGS), once per run."""
    att = _ATTEMPTED_SCALE.search(body)
    new = _NEW_SCALE.search(body)
    attempted = float(att.group("v")) if att else None
    reduced = float(new.group("v")) if new else None
    runs = state.setdefault(_SCALE_RUNS, {})
    if not isinstance(runs, dict):
        return None
    run = runs.get(who)
    rose = isinstance(run, _ScaleRun) and (
        (attempted is not None and attempted > run.last)
        or (attempted is None and reduced is not None and reduced >= run.last))
    if not isinstance(run, _ScaleRun) or rose:
        start = attempted if attempted is not None else (reduced * 2 if reduced is not None else None)
        if start is None or start <= 0:
            return None
        run = _ScaleRun(start, start)
        runs[who] = run
    if reduced is not None and reduced < run.last:
        run.last = reduced
    if run.emitted or run.last <= 0:
        return None
    floor = run.last <= SCALE_FLOOR
    if not floor and not (run.last <= COLLAPSE_SCALE and run.start / run.last >= 2 ** COLLAPSE_HALVINGS):
        return None
    run.emitted = True
    return Draft("app.numerics", {
        "value": "inf", "metric": "loss_scale_floor" if floor else "loss_scale_collapse",
        "from_scale": run.start, "to_scale": run.last, "message": clip(body)})


# --------------------------------------------------------------------------
# Python exceptions (tracebacks, std::terminate) and CUDA errors on their own
# --------------------------------------------------------------------------


def _alone_uncached(body: str) -> list[Draft]:
    drafts = tb.cuda_drafts(body, None)
    if not drafts and not nccl_owns(body):  # NCCL's `posix_fallocate failed : No space ...` is its own
        one = tb.standalone(body)
        drafts = [one] if one is not None else []
    return drafts


# What a line outside any traceback or abort says on its own is a pure function of its body (cuda_drafts,
# nccl_owns, standalone read nothing else), remembered two ways (extract/memo.py):
# - by the body: any answer, replayed as fresh drafts;
# - by the body with its digits zeroed, only the answer "nothing", and only for a body that holds none of
#   _DIGIT_WORDS. Without them the steps decide "nothing" by words and by digit-blind patterns alone
#   (\d, \w, [^:\s], lengths all unchanged by zeroing): the CUDA error code and OOM allocator names, the
#   `[Errno N]` number and NCCL's status codes are the only digits they compare, and each of those needs
#   one of these words first, or the shape of a CUDA code before or after its message (`Error 803: `,
#   `(error 803)`, which a body holds exactly when its zeroed form does). `_zeroed_safe` checks at first use
#   that the words the steps compare (storage strerror texts, exec failure reasons) hold no digit; if one
#   did, only exact repeats would be remembered.
_DIGIT_WORDS: Final = (*CUDA_LITERALS, *WEAK_CUDA_ANCHORS, *ACCEL_OOM_PHRASES, *NCCL_ERROR_LITERALS, "[Errno")
_DIGIT_WORDS_RX: Final = re.compile(re.alternation(_DIGIT_WORDS)
                                    + "|" + CODED_CUDA_MESSAGE.pattern.replace("?P<code>", "?:")
                                    + "|" + MESSAGE_CUDA_CODE.pattern.replace("?P<code>", "?:"))
_ALONE: Memo[tuple[Draft, ...]] = Memo("app.alone")
_ALONE_QUIET: Memo[bool] = Memo("app.alone.zeroed")  # holds True only: a known-quiet template
_zeroed_ok: list[bool] = []


def _zeroed_safe() -> bool:
    if not _zeroed_ok:
        words = (*storage_strerror_texts(), *tb.EXEC_WHY_TEXTS, "No module named", "shared memory", "/dev/shm",
                 *status_anchors(), *(t for r in status_word_table().values() for t in (r.word, *r.texts)),
                 *cuda_message_literals(), *_DIGIT_WORDS)
        _zeroed_ok.append(not any(c.isdigit() for w in words for c in w))
    return _zeroed_ok[0]


def _alone(body: str) -> list[Draft]:
    """The drafts of a line that no traceback or abort around it explains (fresh objects: callers set ranks)."""
    if not ON[0]:
        return _alone_uncached(body)
    if _zeroed_ok[0] if _zeroed_ok else _zeroed_safe():
        # No word of _DIGIT_WORDS holds a digit, so a body holds one exactly when its zeroed form does:
        # a known-quiet key came from a body without them, and this body has none either.
        key = digits_zeroed(body)
        if _ALONE_QUIET.find(key) is not None:
            return []
        if _DIGIT_WORDS_RX.search(body) is None:
            drafts = _alone_uncached(body)
            if not drafts:
                _ALONE_QUIET.put(key, True)
            return drafts  # an answer with words of this very body is not shared between bodies
    got = _ALONE.get(body, lambda: tuple(_alone_uncached(body)))
    return [Draft(d.kind, dict(d.fields), d.device, d.rank, d.host) for d in got]


# A lone uncaught exception line (extract/traceback.py `lone_exception`): a log that holds the last line of a
# traceback without the traceback. It is read as the traceback's last line would be, and what it gives is marked
# `terminal` (the engine takes it only as the last word of its stream, and only where no cause read from fuller
# evidence stands: engine/normalise.py `terminal_lines`, engine/attribute.py). Its reading is a pure function of
# the body (classify reads no frames here), remembered by the body; whether a line has the shape at all reads only
# the shape and the class's name (no digit's value), remembered by the body with its digits zeroed.
_LONE: Memo[tuple[Draft, ...]] = Memo("app.lone")
_NOT_LONE: Memo[bool] = Memo("app.lone.zeroed")  # holds True only: a line shape that is no exception's last line


def _lone_uncached(body: str) -> list[Draft]:
    exc = tb.lone_exception(body)
    if exc is None:
        return []
    drafts, _ = tb.classify(body, exc, nccl_owns(body), numerics(body) is not None,
                            other_owned=memory_limit_kill(body) is not None)
    for d in drafts:
        d.fields["terminal"] = True
    return drafts


def _lone(body: str) -> list[Draft]:
    """The drafts of a lone uncaught exception line (fresh objects: callers set ranks)."""
    if not ON[0]:
        return _lone_uncached(body)
    key = digits_zeroed(body)
    if _NOT_LONE.find(key) is not None:
        return []
    if tb.lone_exception(body) is None:
        _NOT_LONE.put(key, True)
        return []
    got = _LONE.get(body, lambda: tuple(_lone_uncached(body)))
    return [Draft(d.kind, dict(d.fields), d.device, d.rank, d.host) for d in got]


_TERMINATE = re.compile(r"terminate called after throwing an instance of '(?P<type>[^']+)'")
_WHAT = re.compile(r"what\(\):\s*(?P<msg>.*)$")
_WHAT_WINDOW: Final = 3
_MODEL: Final = "ff.app.traceback_model"
_TERMINATED: Final = "ff.app.terminated"  # line of the stream's last `terminate called after throwing` or fatal record


def _model(state: dict[str, object]) -> tb.TracebackModel:
    m = state.get(_MODEL)
    if not isinstance(m, tb.TracebackModel):
        m = tb.TracebackModel()
        state[_MODEL] = m
    return m


@dataclass(slots=True)
class _Terminate:
    """A `terminate called after throwing` line awaiting its `what():`."""

    lineno: int
    type: str


class ExceptionExtractor:
    """Python tracebacks (extract/traceback.py), C++ `terminate called` aborts, CUDA errors printed on their own."""

    name = "app.exception"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "app.cuda_error": frozenset({"cuda_code", "cuda_error", "error", "message", "terminal"}),
        "app.exception": frozenset({"errno", "exc_type", "message", "path", "shm", "signal", "cache_race", "exec",
                                    "setup", "store_code", "terminal"}),
        "nccl.communicator_aborted": frozenset({"detail", "terminal"}),
        "nccl.error": frozenset({"detail", "nccl_result", "terminal"}),
        "nccl.remote_error": frozenset({"detail", "phase", "terminal"}),
        "nccl.timeout": frozenset({"detail", "terminal"}),
        "process.signal": frozenset({"by", "detail", "signal", "terminal"}),
        "storage.error": frozenset({"detail", "errno", "exc_type", "fs", "path", "store_code", "terminal"}),
        "app.cuda_oom": frozenset({"message", "terminal"}),
    }
    sources: frozenset[str] = frozenset({"application"})
    literals: tuple[str, ...] = (
        tb.TRACEBACK,
        *tb.CHAIN_MARKERS,
        *tb.EXC_SUFFIXES[:2],  # "Error", "Exception": the final line of a traceback
        *tb.EXCEPTION_MODULE_LITERALS,  # ... or a class of an exceptions module (`...exceptions.TooManyRequests`)
        *status_anchors(),  # a status JAX / TensorFlow log about the coordination service or a collective
        "KeyboardInterrupt",
        "SystemExit",
        "StopIteration",
        "Empty",
        *ACCEL_OOM_PHRASES,
        *CUDA_LITERALS,
        *WEAK_CUDA_ANCHORS,
        *cuda_message_literals(),  # a CUDA error's message followed by its number (`... combination (error 803)`)
        "CUDA-capable device",
        "No CUDA GPUs are available",
        "terminate called after throwing",
        "what():",
        *tb.FATAL_LOG_LITERALS,
        *tb.THREAD_LITERALS,
        *logged_words(),  # a line the exception table reads on its own (`No OpKernel was registered`)
        *setup_errno_words(),  # ... and a logged bind that failed with a set-up errno
        'File "',
        "frame #",
        "Exception raised from",
        "[Errno ",
        "No module named",
        *tb.EXEC_LITERALS,
        *storage_strerror_texts(),
    )

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        who = rank if rank is not None else ctx.rank
        owner = _torchrun_entry(ctx.state) if "traceback :" in body else None
        was, ctx.claimed = ctx.claimed, False
        closed = _model(ctx.state).feed(body, who, ctx, owner)
        consumed, ctx.claimed = ctx.claimed, was or ctx.claimed
        exc: tb.Exc | None = None
        owner_entry: tuple[int | None, str | None] | None = None
        drafts: list[Draft]
        if closed is not None:
            exc, owner_entry, text = closed.exc, closed.owner, closed.text
            drafts, decisive = tb.classify(text, exc, nccl_owns(text), numerics(text) is not None, closed.frames,
                                           other_owned=memory_limit_kill(text) is not None,
                                           in_library_thread=closed.library_thread)
            if closed.chained:
                ctx.claimed = True  # an envelope of a chain that already decided
                return
            _model(ctx.state).decided(closed.who, decisive)
            ctx.claimed = True
        elif consumed:
            return  # a traceback header, chain marker or frame
        else:
            exc = self._terminate(body, who, ctx)
            if exc is not None:
                drafts, _ = tb.classify(body, exc, nccl_owns(body), numerics(body) is not None)
            else:
                drafts = _alone(body) or self._fatal(body, ctx) or _lone(body)
        for draft in drafts:
            if rank is not None:
                draft.rank = rank
            elif owner_entry is not None:
                draft.rank, draft.host = owner_entry
            yield draft

    def _fatal(self, body: str, ctx: LineContext) -> list[Draft]:
        """A C++ framework's fatal log record (extract/traceback.py `fatal_log`), read as an uncaught exception;
        the abort that follows it is its consequence, as after `terminate called`."""
        exc = tb.fatal_log(body)
        if exc is None:
            return []
        ctx.state[_TERMINATED] = ctx.lineno
        ctx.claimed = True
        drafts, _ = tb.classify(body, exc, nccl_owns(body), numerics(body) is not None)
        return drafts

    def _terminate(self, body: str, who: int | None, ctx: LineContext) -> tb.Exc | None:
        """`terminate called after throwing an instance of 'T'` + `what(): msg` (same or next lines)."""
        pending = ctx.state.setdefault("ff.app.terminate", {})
        if not isinstance(pending, dict):
            return None
        if "what():" not in body and "terminate called after throwing" not in body:
            return None  # neither regex below can match (both hold these words)
        t = _TERMINATE.search(body)
        if t:
            ctx.state[_TERMINATED] = ctx.lineno
            w = _WHAT.search(body, t.end())
            if w is None:
                pending[who] = _Terminate(ctx.lineno, t.group("type"))
                ctx.claimed = True
                return None
            qual, msg = t.group("type"), w.group("msg")
        else:
            w = _WHAT.search(body)
            if w is None:
                return None
            prior = pending.pop(who, None)
            if not isinstance(prior, _Terminate) or ctx.lineno - prior.lineno > _WHAT_WINDOW:
                return None
            qual, msg = prior.type, w.group("msg")
        return tb.Exc(qual, qual.rsplit("::", 1)[-1].rsplit(".", 1)[-1], msg.strip())


# --------------------------------------------------------------------------
# torchrun (torch.distributed.elastic) agent output
# --------------------------------------------------------------------------

_ROOT = re.compile(r"^\s*Root Cause(?: \(first observed failure\))?:\s*$")
_FAILURES = re.compile(r"^\s*(?:Other )?Failures:\s*$")
_HOST_FIELD = re.compile(r"^\s*host\s*:\s*(?P<host>\S+)\s*$")
_RANK_FIELD = re.compile(r"^\s*rank\s*:\s*(?P<rank>\d+)\s*\(local_rank:\s*(?P<local>\d+)\)")
_EXIT_FIELD = re.compile(r"^\s*exitcode\s*:\s*(?P<code>-?\d+)\s*\(pid:\s*(?P<pid>\d+)\)")
_SENDING = re.compile(r"Sending process (?P<pid>\d+) closing signal (?P<sig>SIG[A-Z0-9]+)")
_AGENT_FAILED = re.compile(r"failed \(exitcode: (?P<code>-?\d+)\) local_rank: (?P<local>\d+) \(pid: (?P<pid>\d+)\)")
_BLOCK: Final = "ff.app.torchrun"
# The pids this agent sent a closing signal to. A worker that died of SIGTERM / SIGINT the agent never sent
# was signalled from outside the launcher (a person, a script, a node agent): `unprompted`, a first exit
# the leads may name, where the agent's own SIGTERMs to the survivors are collateral.
_SENT: Final = "ff.app.torchrun.sent"
_STOP_SIGNALS: Final = ("SIGTERM", "SIGINT")


def _sent(state: dict[str, object]) -> set[int]:
    sent = state.get(_SENT)
    if not isinstance(sent, set):
        sent = set()
        state[_SENT] = sent
    return sent


def _unprompted(state: dict[str, object], sig: str | None, pid: int) -> bool:
    return sig in _STOP_SIGNALS and pid not in _sent(state)


@dataclass(slots=True)
class _Block:
    """Where we are in one agent's ChildFailedError summary."""

    section: str | None = None  # "failures" | "root"
    host: str | None = None
    rank: int | None = None
    emitted: bool = False
    last: tuple[int | None, str | None] | None = None  # (rank, host) of the last entry


def _block(state: dict[str, object]) -> _Block:
    blk = state.get(_BLOCK)
    if not isinstance(blk, _Block):
        blk = _Block()
        state[_BLOCK] = blk
    return blk


def _torchrun_entry(state: dict[str, object]) -> tuple[int | None, str | None] | None:
    blk = state.get(_BLOCK)
    return blk.last if isinstance(blk, _Block) else None


class TorchrunExtractor:
    """ChildFailedError summaries and the elastic agent's signal / failure lines."""

    name = "torch.child_failed"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "process.signal": frozenset({"by", "detail", "local_rank", "signal", "unprompted"}),
        "torch.child_failed": frozenset({"exitcode", "failed_rank", "root_cause", "signal", "unprompted"}),
    }
    sources: frozenset[str] = frozenset({"application"})
    literals: tuple[str, ...] = (
        "ChildFailedError",
        "Failures:",
        "Root Cause",
        "host      : ",
        "(local_rank: ",
        "exitcode  : ",
        "exitcode: ",
        "closing signal SIG",
    )

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        prefix_rank, body = split_rank_prefix(line)
        blk = _block(ctx.state)
        ctx.claimed = True  # the agent's summary and signal lines, all understood here
        if "ChildFailedError" in body:
            # A new summary (or the agent's traceback announcing one).
            blk.section, blk.host, blk.rank, blk.emitted = None, None, None, False
            return
        if _ROOT.match(body):
            blk.section = "root"
            return
        if _FAILURES.match(body):
            blk.section = "failures"
            return
        m = _SENDING.search(body)
        if m:
            sig = m.group("sig")
            _sent(ctx.state).add(int(m.group("pid")))
            yield Draft(
                "process.signal",
                {"signal": sig, "by": "launcher", "detail": clip(body)},
                rank=prefix_rank,
            )
            return
        m = _AGENT_FAILED.search(body)
        if m:
            sig_or_none = exit_signal(int(m.group("code")))
            if sig_or_none is not None:
                fields: dict[str, FieldValue] = {
                    "signal": sig_or_none,
                    "by": by_whom(sig_or_none, "launcher"),
                    "detail": clip(body),
                    "local_rank": int(m.group("local")),  # the leads map it to the node's rank
                }
                if _unprompted(ctx.state, sig_or_none, int(m.group("pid"))):
                    fields["unprompted"] = True
                yield Draft("process.signal", fields, rank=prefix_rank)
            return
        if blk.section is None:
            return
        m = _HOST_FIELD.match(body)
        if m:
            blk.host, blk.rank, blk.emitted = m.group("host"), None, False
            return
        m = _RANK_FIELD.match(body)
        if m:
            if blk.emitted:  # pre-2.0 summaries print no host line
                blk.host = None
            blk.rank, blk.emitted = int(m.group("rank")), False
            return
        m = _EXIT_FIELD.match(body)
        if m and blk.rank is not None and not blk.emitted:
            code = int(m.group("code"))
            fields = {
                "exitcode": code,
                "root_cause": blk.section == "root",
                "failed_rank": blk.rank,
            }
            sig = exit_signal(code)
            if sig is not None:
                fields["signal"] = sig
                if _unprompted(ctx.state, sig, int(m.group("pid"))):
                    fields["unprompted"] = True
            blk.emitted = True
            blk.last = (blk.rank, blk.host)
            yield Draft("torch.child_failed", fields, rank=blk.rank, host=blk.host)


# --------------------------------------------------------------------------
# Signals reported by srun, slurmstepd and the process itself
# --------------------------------------------------------------------------

# `srun: error: node-03: task 17: Killed`, `... tasks 0-3: Segmentation fault (core dumped)`.
_SRUN_TASK = re.compile(
    r"error:\s+(?P<host>[A-Za-z0-9][\w.\-]*):\s+tasks?\s+(?P<tasks>\d+(?:\s*[-,]\s*\d+)*):\s+"
    rf"(?P<what>{_STRSIGNAL_ALT})"
)
# `slurmstepd: error: *** STEP 4242.0 ON node-01 CANCELLED AT 2026-11-02T10:05:00 ***`
# and `*** JOB 4242 ON node-01 CANCELLED AT ... DUE TO TIME LIMIT ***`.
# Before Slurm 17.11 the node came last:
# `*** JOB 830329 CANCELLED AT 2018-08-06T17:21:44 DUE TO TIME LIMIT on n447 ***`.
_SLURM_CANCELLED = re.compile(
    r"\*\*\* (?P<scope>STEP|JOB) (?P<id>\S+) (?:ON (?P<host>\S+) )?CANCELLED AT (?P<at>\S+)(?P<rest>[^*]*)\*\*\*"
)
_LEGACY_ON = re.compile(r"\bon (?P<host>[A-Za-z0-9][\w.\-]*)\s*$")
_FATAL_PYTHON = re.compile(rf"Fatal Python error: (?P<what>{_FAULT_ALT})")
# The shell's report: `Segmentation fault (core dumped)`, `line 12: 4242 Aborted
# (core dumped) python train.py`; UCX `Caught signal 11 (Segmentation fault: ...`.
_SHELL_FAULT = re.compile(
    rf"(?:^|\s|\d)(?P<what>{_FAULT_ALT})\s*\(core dumped\)"
    rf"|^\s*(?:\S+: line \d+:\s+\d+\s+)?(?P<bare>Segmentation fault)\b"
    rf"|^\s*\S+: line \d+:\s+\d+\s+(?P<job>{_STRSIGNAL_ALT})\s"
    rf"|Caught signal \d+ \((?P<ucx>{_FAULT_ALT})"
)


# The DataLoader's worker signal handler: `ERROR: Unexpected segmentation fault
# encountered in worker.`, `... bus error ...` (a too-small /dev/shm), `... floating-point exception ...`:
# strsignal() texts in lower case (codes.signal_of_text reads them).
_WORKER_FAULT = re.compile(r"Unexpected (?P<what>segmentation fault|bus error|floating-point exception) encountered"
                           r" in worker")
# The elastic agent's own signal: `Signal 9 (SIGKILL) received by PID 4242`;
# `subprocess` / multiprocessing reprs `<Signals.SIGKILL: 9>`.
_AGENT_SIGNAL = re.compile(r"Signal (?P<num>\d+) \((?P<sig>SIG[A-Z0-9]+)\) received by PID")
# A container's or process's exit code: `exited with exit code 137`, `exit status 139`,
# `Exit code: 137`, `ExitCode 9`, `returned non-zero exit status -9`; 128+N and -N are signals.
_EXIT_CODE = re.compile(
    r"\b(?:exit(?:ed)?(?: with)?(?: exit)? (?:code|status)|[Ee]xit [Cc]ode|returned non-zero exit status"
    r"|exits with return code)"
    r"[:= ]+\(?(?P<code>-?\d+)\b"
)

# PBS/Torque's `Exit_status=271`: above 256 the job was killed by signal N-256.
_PBS_EXIT = re.compile(r"\bExit_status=(?P<code>-?\d+)")

# How far the shell's report of a fault may trail faulthandler's (which dumps
# every thread's stack in between).
_FAULT_REPORT_LINES: Final = 300


class ProcessSignalExtractor:
    """srun task kills, slurmstepd cancellations, Python / shell fault reports."""

    name = "process.signal"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "app.exception": frozenset({"exc_type", "message", "shm", "signal"}),
        "process.signal": frozenset({"by", "detail", "due_to", "exitcode", "signal", "slurm_scope", "unprompted"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})  # slurmstepd also logs to syslog
    literals: tuple[str, ...] = (
        ": task ",
        ": tasks ",
        "*** STEP ",
        "*** JOB ",
        "Fatal Python error: ",
        "Segmentation fault",
        "(core dumped)",
        "encountered in worker",
        ") received by PID",
        "exit code",
        "exited with code",
        "exit status",
        "Exit code",
        "Exit Code",
        "return code",
        ": line ",
        "Exit_status=",
    )

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        draft = self._match(body, ctx.state, ctx.lineno)
        if draft is None:
            return
        if rank is not None:
            draft.rank = rank
        if draft.fields.get("signal") == "SIGABRT" and draft.fields.get("by") == "self" and (
                ctx.state.get(NCCL_MARK) or ctx.state.get(_TERMINATED)):
            # The stream already reported an NCCL failure or a C++ terminate: the abort is the runtime's
            # reaction (the c10d watchdog, std::terminate), not a crash of its own.
            draft.fields["by"] = "runtime"
        if draft.fields.get("by") == "self":
            # faulthandler's "Fatal Python error: Segmentation fault", its
            # thread dump, then the shell's "Segmentation fault (core dumped)":
            # one fault of one process.
            key = (draft.fields["signal"], draft.rank if draft.rank is not None else ctx.rank, draft.host)
            seen = recent(ctx.state, "ff.app.self_signal")
            prev = seen.get(key)
            seen[key] = ctx.lineno
            if prev is not None and ctx.lineno - prev <= _FAULT_REPORT_LINES:
                return
        yield draft

    def _match(self, body: str, state: Mapping[str, object], lineno: int) -> Draft | None:
        detail = clip(body)
        m = _SRUN_TASK.search(body)
        if m:
            sig = signal_of_text(m.group("what")) or "SIGKILL"
            tasks = m.group("tasks")
            draft = Draft("process.signal", {"signal": sig, "by": by_whom(sig, "launcher"), "detail": detail})
            draft.host = m.group("host")
            if tasks.isdigit():
                draft.rank = int(tasks)  # srun task id == rank
            return draft
        m = _SLURM_CANCELLED.search(body)
        if m:
            # Slurm cancels with SIGTERM, then SIGKILL after KillWait. A JOB banner means the
            # allocation was ended (scancel, or the reason after DUE TO); a STEP banner alone
            # is also printed when srun tears a step down after one task failed.
            due = re.search(r"DUE TO ([A-Z][A-Z ]*[A-Z])", m.group("rest"))
            fields: dict[str, FieldValue] = {"signal": "SIGTERM", "by": "scheduler", "detail": detail,
                                             "slurm_scope": m.group("scope").lower()}
            if due:
                fields["due_to"] = due.group(1).lower().replace(" ", "_")
            draft = Draft("process.signal", fields)
            legacy = _LEGACY_ON.search(m.group("rest")) if m.group("host") is None else None
            draft.host = m.group("host") or (legacy.group("host") if legacy else None)
            return draft
        m = _WORKER_FAULT.search(body)
        if m and m.group("what") == "bus error":
            return tb.shm_exhausted("DataLoader worker bus error", body)
        fatal = _FATAL_PYTHON.search(body)
        m = m or fatal or _SHELL_FAULT.search(body)
        if m:
            what = next(g for g in m.groups() if g is not None)
            sig = signal_of_text(what) or "SIGSEGV"
            # faulthandler's "Fatal Python error: Aborted" is the process's own word on an abort.
            by = "self" if fatal is not None and sig == "SIGABRT" else by_whom(sig, "launcher")
            return Draft("process.signal", {"signal": sig, "by": by, "detail": detail})
        m = _PBS_EXIT.search(body)
        if m:
            code = int(m.group("code"))
            if code > 256:
                sig = signal_name(code - 256)
                return Draft("process.signal", {"signal": sig, "by": by_whom(sig, "scheduler"), "detail": detail,
                                                "exitcode": code})
            return None
        m = _AGENT_SIGNAL.search(body) if "traceback :" not in body else None
        if m:
            # Sent to torchrun's agent from above it (scancel, the kubelet, an operator).
            sig = m.group("sig")
            return Draft("process.signal", {"signal": sig, "by": by_whom(sig, "scheduler"), "detail": detail})
        if "exitcode" not in body and "local_rank" not in body:  # torchrun's own lines: TorchrunExtractor
            m = _EXIT_CODE.search(body)
            if m and not reports_exit(body, state, lineno):  # srun's or Open MPI's, with the rank: launcher.py
                sig_or_none = exit_signal(int(m.group("code")))
                if sig_or_none is not None:
                    return Draft("process.signal", {"signal": sig_or_none, "by": by_whom(sig_or_none, "launcher"),
                                                    "detail": detail, "exitcode": int(m.group("code"))})
        return None


EXTRACTORS: tuple[LineExtractor, ...] = (
    ExceptionExtractor(),
    NumericsExtractor(),
    TorchrunExtractor(),
    ProcessSignalExtractor(),
)
