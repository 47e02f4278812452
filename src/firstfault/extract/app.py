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

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, NamedTuple

from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.common import exit_signal, signal_name
from firstfault.extract.nccl import PEER_LOSS, clip, nccl_owns, nccl_result, recent, split_rank_prefix
from firstfault.model import FieldValue

# Signals a process raises on itself (a fault or abort()), as opposed to ones
# sent from outside; the latter are attributed to whoever reported them.
_SELF_SIGNALS: Final = frozenset({"SIGSEGV", "SIGABRT", "SIGBUS", "SIGFPE", "SIGILL", "SIGTRAP", "SIGSYS"})


def _by(signal: str, reporter: str) -> str:
    return "self" if signal in _SELF_SIGNALS else reporter


# strsignal() texts, as srun and the shell print them.
_STRSIGNAL: Final[dict[str, str]] = {
    "Segmentation fault": "SIGSEGV",
    "Killed": "SIGKILL",
    "Aborted": "SIGABRT",
    "Terminated": "SIGTERM",
    "Bus error": "SIGBUS",
    "Floating point exception": "SIGFPE",
    "Illegal instruction": "SIGILL",
    "Hangup": "SIGHUP",
    "Interrupt": "SIGINT",
    "Quit": "SIGQUIT",
    "Trace/breakpoint trap": "SIGTRAP",
    "User defined signal 1": "SIGUSR1",
    "User defined signal 2": "SIGUSR2",
}
_STRSIGNAL_ALT = "|".join(re.escape(k) for k in sorted(_STRSIGNAL, key=len, reverse=True))
_FAULT_ALT = "Segmentation fault|Aborted|Bus error|Floating point exception|Illegal instruction"


# --------------------------------------------------------------------------
# CUDA errors and CUDA OOM
# --------------------------------------------------------------------------

# cudaError_t messages and names -> our class (docs/events.md app.cuda_error).
# Checked in order; the first hit wins, else `other`.
_CUDA_CLASSES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("illegal_address", re.compile(r"illegal memory access|ILLEGAL_ADDRESS|IllegalAddress")),
    ("launch_failure", re.compile(r"unspecified launch failure|LAUNCH_FAILED|cudaErrorLaunchFailure")),
    ("ecc", re.compile(r"uncorrectable ECC error|ECC_UNCORRECTABLE|ECCUncorrectable")),
    ("nvlink", re.compile(r"uncorrectable NVLink error|NVLINK_UNCORRECTABLE|NvlinkUncorrectable")),
    ("device_assert", re.compile(r"device-side assert|CUDA_ERROR_ASSERT\b|cudaErrorAssert\b")),
    ("misaligned_address", re.compile(r"misaligned address|MISALIGNED_ADDRESS|MisalignedAddress")),
    ("illegal_instruction", re.compile(r"illegal instruction|ILLEGAL_INSTRUCTION|IllegalInstruction")),
    (
        "unavailable",
        re.compile(
            r"busy or unavailable|no CUDA-capable device|No CUDA GPUs are available"
            r"|CUDA_ERROR_NO_DEVICE|DEVICES_UNAVAILABLE|cudaErrorNoDevice|DevicesUnavailable"
        ),
    ),
)
# Where a CUDA error is reported: PyTorch / c10 `CUDA error: msg`, Triton,
# driver-API and runtime names (CuPy, JAX), the device-availability texts.
_CUDA_ERROR = re.compile(
    r"CUDA error(?: \d+)?:\s*(?P<msg>.*)"
    r"|Triton Error \[CUDA\]:\s*(?P<triton>.*)"
    r"|(?P<name>(?:CUDA_ERROR_[A-Z_]+|cudaError[A-Z]\w*).*)"
    r"|(?P<avail>CUDA-capable device\(s\) is/are busy or unavailable.*|no CUDA-capable device.*"
    r"|No CUDA GPUs are available.*)"
)
# PyTorch's hint after the error names the enum again: not a second error.
_CUDA_HINT = re.compile(r"^\s*Search for `cudaError")
_OOM = re.compile(r"(?:CUDA|HIP) out of memory|CUDA error: out of memory|CUDA_ERROR_OUT_OF_MEMORY")


def cuda_error_class(message: str) -> str:
    for cls, rx in _CUDA_CLASSES:
        if rx.search(message):
            return cls
    return "other"


class _Exc(NamedTuple):
    qual: str  # as printed: torch.distributed.DistBackendError, c10::Error
    cls: str  # unqualified: DistBackendError, Error
    msg: str


def _oom(body: str, exc: _Exc | None) -> Draft | None:
    m = _OOM.search(body)
    torch_oom = exc is not None and exc.cls == "OutOfMemoryError" and exc.qual.startswith("torch")
    if not m and not torch_oom:
        return None
    message = exc.msg if exc is not None and exc.msg else body[m.start() :] if m else body
    return Draft("app.cuda_oom", {"message": clip(message)})


def _cuda_error(body: str) -> Draft | None:
    if _CUDA_HINT.match(body):
        return None
    m = _CUDA_ERROR.search(body)
    if not m:
        return None
    message = next(g for g in (m.group("msg"), m.group("triton"), m.group("name"), m.group("avail")) if g is not None)
    return Draft("app.cuda_error", {"error": cuda_error_class(message), "message": clip(message)})


# --------------------------------------------------------------------------
# NaN / Inf
# --------------------------------------------------------------------------

_NAN_WORDS = r"nan|NaN|NAN|Nan"
_INF_WORDS = r"inf|Inf|INF|infinity|Infinity"
# `lm loss: nan`, `grad norm: nan`, `'loss': nan`, `loss is nan`, `loss=nan`,
# `train_loss=nan`, `Loss: NaN`, `loss: tensor(nan, ...)`, `loss nan`; the value must be
# a whole word (`nanoseconds` is not NaN) right after a loss / norm name.
_METRIC_VALUE = re.compile(
    r"(?P<metric>(?:\b(?:lm|train|training|val|valid|validation|eval|test|grad|global|total|avg|mean)[ _])?"
    r"\b[A-Za-z_]*(?:loss|Loss|LOSS|norm|Norm|ppl|PPL|perplexity)[A-Za-z_]*)"
    r"['\"]?(?:\s*[:=]\s*|\s+is\s+|\s+)['\"]?(?:tensor\()?"
    rf"(?P<v>[-+]?(?:{_NAN_WORDS}|{_INF_WORDS}))(?![A-Za-z0-9_])"
)
_FOUND_NAN = re.compile(r"found (?P<v>NaN|Inf) in local grad norm")
_MEGATRON_RANK = re.compile(r"\bRank (?P<rank>\d+)[,:]")
_MEGATRON_NODE = re.compile(r"\bnode:? (?P<node>[A-Za-z0-9][\w.\-]*?)[,.]?(?:\s|$)")
_MEGATRON_DEVICE = re.compile(r"\b[Dd]evice:? (?P<dev>\d+)")
_DS_OVERFLOW = re.compile(r"OVERFLOW! Rank (?P<rank>\d+) Skipping step")
_APEX_OVERFLOW = re.compile(r"Gradient overflow\.\s+Skipping step")
_NAN_ITERATIONS = re.compile(r"number of nan iterations:\s*[1-9]\d*")
# DeepSpeed's fp16 loss scaler gives up after overflowing down to its floor.
_SCALE_FLOOR = re.compile(r"loss scale already at minimum")
_OTHER_NAN = re.compile(
    r"NaN or Inf found in input tensor|Loss became infinite or NaN|returned nan values in its \d+\w* output"
)


def _numerics_literals() -> tuple[str, ...]:
    names = ("loss", "Loss", "LOSS", "norm", "Norm", "ppl", "PPL", "perplexity")
    seps = (": ", ":", "=", "= ", " = ", " is ", " ", "': ", '": ', "': tensor(", ": tensor(", "=tensor(")
    values = ("nan", "-nan", "inf", "-inf", "Inf", "-Inf", "INF")
    combos = {f"{n}{s}{v}" for n in names for s in seps for v in values}
    fixed = {
        "NaN",  # found NaN in local grad norm, Loss is NaN, NaN or Inf found ...
        "found Inf",
        "Loss became infinite",
        "OVERFLOW!",
        "Gradient overflow",
        "loss scale already at minimum",
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
        return Draft("app.numerics", fields, rank=int(m.group("rank")))
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


# --------------------------------------------------------------------------
# Python exceptions (tracebacks, std::terminate)
# --------------------------------------------------------------------------

_TRACEBACK = "Traceback (most recent call last)"
# The last line of a traceback: `ValueError: msg`, `torch.OutOfMemoryError: ...`,
# a bare `KeyboardInterrupt`; torchrun reprints a child's traceback indented.
_EXC_LINE = re.compile(r"^\s*(?P<qual>(?:[A-Za-z_]\w*\.)*(?P<cls>[A-Za-z_]\w*))(?::[ \t]?(?P<msg>.*))?$")
_EXC_SUFFIXES: Final = ("Error", "Exception", "Exit", "Interrupt", "Iteration", "Failure", "Fault", "Timeout")
_BARE_EXCEPTIONS: Final = ("KeyboardInterrupt", "SystemExit", "StopIteration", "GeneratorExit")
_TERMINATE = re.compile(r"terminate called after throwing an instance of '(?P<type>[^']+)'")
_WHAT = re.compile(r"what\(\):\s*(?P<msg>.*)$")
# A traceback longer than this (in file lines) is not waited for: a later
# stray `XError: ...` line must not close a traceback that was cut off.
_TB_WINDOW: Final = 5000
_WHAT_WINDOW: Final = 3

# torch.distributed exception classes -> nccl.* kind, for the ones whose
# message no NCCL extractor recognises (a store or rendezvous failure).
_DIST_TYPES: Final[dict[str, str]] = {
    "DistBackendError": "nccl.error",
    "DistError": "nccl.error",
    "DistStoreError": "nccl.error",
    "DistNetworkError": "nccl.remote_error",
    "RendezvousError": "nccl.error",
    "RendezvousTimeoutError": "nccl.error",
    "RendezvousClosedError": "nccl.error",
    "RendezvousStateError": "nccl.error",
    "RendezvousGracefulExitError": "nccl.error",
    "RendezvousConnectionError": "nccl.remote_error",
}
_DIST_MESSAGE = re.compile(r"\bNCCL\b|ncclUniqueId|ProcessGroup|\bc10d\b|[Pp]rocess group")
_SIGNAL_EXCEPTION = re.compile(r"got signal:?\s*(?P<num>\d+)")


def _exception_shape(body: str) -> _Exc | None:
    m = _EXC_LINE.match(body)
    if not m:
        return None
    cls, qual = m.group("cls"), m.group("qual")
    if not cls[0].isupper():
        return None
    # A bare name must look like an exception class; a qualified one
    # (`torch.foo.Bar`) only needs its capitalised tail.
    if not (cls.endswith(_EXC_SUFFIXES) or cls in _BARE_EXCEPTIONS or "." in qual):
        return None
    return _Exc(qual, cls, (m.group("msg") or "").strip())


def _dist(exc: _Exc) -> Draft | None:
    kind = _DIST_TYPES.get(exc.cls)
    if kind is None and _DIST_MESSAGE.search(exc.msg):
        kind = "nccl.error"
    if kind is None:
        return None
    if kind == "nccl.error" and PEER_LOSS.search(exc.msg):
        kind = "nccl.remote_error"
    fields: dict[str, FieldValue] = {"detail": clip(f"{exc.cls}: {exc.msg}" if exc.msg else exc.cls)}
    if kind == "nccl.error":
        result = nccl_result(exc.msg)
        if result is not None:
            fields["nccl_result"] = result
    return Draft(kind, fields)


def _exc_signal(exc: _Exc) -> Draft | None:
    detail = clip(f"{exc.cls}: {exc.msg}" if exc.msg else exc.cls)
    if exc.cls == "KeyboardInterrupt":
        return Draft("process.signal", {"signal": "SIGINT", "by": "launcher", "detail": detail})
    if exc.cls == "SignalException":
        # torchrun's agent was signalled from above it (scancel, kubelet).
        m = _SIGNAL_EXCEPTION.search(exc.msg)
        if m:
            sig = signal_name(int(m.group("num")))
            return Draft("process.signal", {"signal": sig, "by": _by(sig, "scheduler"), "detail": detail})
    if exc.cls == "SystemExit" and re.fullmatch(r"-?\d+", exc.msg):
        sig_or_none = exit_signal(int(exc.msg))
        if sig_or_none is not None:
            fields: dict[str, FieldValue] = {
                "signal": sig_or_none,
                "by": _by(sig_or_none, "launcher"),
                "detail": detail,
            }
            return Draft("process.signal", fields)
    return None


def _classify(body: str, exc: _Exc | None) -> list[Draft]:
    """Every event one line holds, at most one per kind (see module docstring)."""
    out: list[Draft] = []
    oom = _oom(body, exc)
    if oom is not None:
        out.append(oom)
    else:
        cuda = _cuda_error(body)
        if cuda is not None:
            out.append(cuda)
    if exc is None:
        return out
    owned = nccl_owns(body)
    if not owned and not out:  # a distributed wrapper around a CUDA error is the CUDA error
        dist = _dist(exc)
        if dist is not None:
            out.append(dist)
    sig = _exc_signal(exc)
    if sig is not None:
        out.append(sig)
    if not out and not owned and exc.cls != "ChildFailedError" and numerics(body) is None:
        out.append(Draft("app.exception", {"exc_type": exc.cls, "message": clip(exc.msg)}))
    return out


@dataclass(slots=True)
class _Terminate:
    lineno: int
    type: str


class ExceptionExtractor:
    """Python tracebacks, C++ `terminate called` aborts, and CUDA errors printed on their own."""

    name = "app.exception"
    sources: frozenset[str] = frozenset({"application"})
    literals: tuple[str, ...] = (
        _TRACEBACK,
        "Error",
        "Exception",
        "KeyboardInterrupt",
        "SystemExit",
        "StopIteration",
        "CUDA out of memory",
        "HIP out of memory",
        "CUDA error",
        "CUDA_ERROR_",
        "CUDA-capable device",
        "No CUDA GPUs are available",
        "terminate called after throwing",
        "what():",
    )

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        who = rank if rank is not None else ctx.rank
        open_tbs = recent(ctx.state, "ff.app.traceback")
        if _TRACEBACK in body:
            open_tbs[who] = ctx.lineno
            owner = _torchrun_entry(ctx.state) if "traceback :" in body else None
            owners = ctx.state.setdefault("ff.app.traceback_owner", {})
            if isinstance(owners, dict):
                owners[who] = owner
            return
        exc: _Exc | None = None
        owner_entry: tuple[int | None, str | None] | None = None
        opened = open_tbs.get(who)
        if opened is not None and ctx.lineno - opened <= _TB_WINDOW:
            exc = _exception_shape(body)
            if exc is not None:
                del open_tbs[who]
                owners = ctx.state.get("ff.app.traceback_owner")
                if isinstance(owners, dict):
                    owner_entry = owners.pop(who, None)
        if exc is None:
            exc = self._terminate(body, who, ctx)
        for draft in _classify(body, exc):
            if rank is not None:
                draft.rank = rank
            elif owner_entry is not None:
                draft.rank, draft.host = owner_entry
            yield draft

    def _terminate(self, body: str, who: int | None, ctx: LineContext) -> _Exc | None:
        """`terminate called after throwing an instance of 'T'` + `what(): msg` (same or next lines)."""
        pending = ctx.state.setdefault("ff.app.terminate", {})
        if not isinstance(pending, dict):
            return None
        t = _TERMINATE.search(body)
        if t:
            w = _WHAT.search(body, t.end())
            if w is None:
                pending[who] = _Terminate(ctx.lineno, t.group("type"))
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
        return _Exc(qual, qual.rsplit("::", 1)[-1].rsplit(".", 1)[-1], msg.strip())


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
                    "by": _by(sig_or_none, "launcher"),
                    "detail": clip(body),
                    "local_rank": int(m.group("local")),  # the leads map it to the node's rank
                }
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
_SLURM_CANCELLED = re.compile(
    r"\*\*\* (?P<scope>STEP|JOB) (?P<id>\S+) ON (?P<host>\S+) CANCELLED AT (?P<at>\S+)(?P<rest>[^*]*)\*\*\*"
)
_FATAL_PYTHON = re.compile(rf"Fatal Python error: (?P<what>{_FAULT_ALT})")
# The shell's report: `Segmentation fault (core dumped)`, `line 12: 4242 Aborted
# (core dumped) python train.py`; UCX `Caught signal 11 (Segmentation fault: ...`.
_SHELL_FAULT = re.compile(
    rf"(?:^|\s|\d)(?P<what>{_FAULT_ALT})\s*\(core dumped\)"
    rf"|^\s*(?:\S+: line \d+:\s+\d+\s+)?(?P<bare>Segmentation fault)\b"
    rf"|Caught signal \d+ \((?P<ucx>{_FAULT_ALT})"
)


# How far the shell's report of a fault may trail faulthandler's (which dumps
# every thread's stack in between).
_FAULT_REPORT_LINES: Final = 300


class ProcessSignalExtractor:
    """srun task kills, slurmstepd cancellations, Python / shell fault reports."""

    name = "process.signal"
    sources: frozenset[str] = frozenset({"application"})
    literals: tuple[str, ...] = (
        ": task ",
        ": tasks ",
        "*** STEP ",
        "*** JOB ",
        "Fatal Python error: ",
        "Segmentation fault",
        "(core dumped)",
    )

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        draft = self._match(body)
        if draft is None:
            return
        if rank is not None:
            draft.rank = rank
        if draft.fields["by"] == "self":
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

    def _match(self, body: str) -> Draft | None:
        detail = clip(body)
        m = _SRUN_TASK.search(body)
        if m:
            sig = _STRSIGNAL[m.group("what")]
            tasks = m.group("tasks")
            draft = Draft("process.signal", {"signal": sig, "by": _by(sig, "launcher"), "detail": detail})
            draft.host = m.group("host")
            if tasks.isdigit():
                draft.rank = int(tasks)  # srun task id == rank
            return draft
        m = _SLURM_CANCELLED.search(body)
        if m:
            # Slurm cancels with SIGTERM, then SIGKILL after KillWait.
            draft = Draft("process.signal", {"signal": "SIGTERM", "by": "scheduler", "detail": detail})
            draft.host = m.group("host")
            return draft
        m = _FATAL_PYTHON.search(body) or _SHELL_FAULT.search(body)
        if m:
            what = next(g for g in m.groups() if g is not None)
            sig = _STRSIGNAL[what]
            return Draft("process.signal", {"signal": sig, "by": _by(sig, "launcher"), "detail": detail})
        return None


EXTRACTORS: tuple[LineExtractor, ...] = (
    ExceptionExtractor(),
    NumericsExtractor(),
    TorchrunExtractor(),
    ProcessSignalExtractor(),
)
