"""Python exceptions (tracebacks, std::terminate, fatal log records) and CUDA errors printed on their own.

The scanner hands an extractor only the lines holding one of its literals, so
a traceback is followed through the per-stream `ctx.state`: it is opened by
its `Traceback (most recent call last):` line and closed by the first later
line shaped like an exception (`pkg.mod.XError: msg`); the frames in between
may never arrive (extract/traceback.py holds the model). A lone exception
line, with no traceback before it, is read as its last line would be.

Ownership, so one line never counts twice: the NCCL extractors (nccl.py) own
every line `nccl_owns` accepts; the numerics extractor (numerics.py) owns
NaN/Inf lines; this extractor emits `app.exception` only for a traceback's
last line that no other kind describes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import (
    PlatformProgram,
    platform_program_of,
    platform_program_table,
    platform_programs,
    provisioning_program,
    provisioning_step,
    status_anchors,
    status_word_table,
)
from firstfault.extract import cann
from firstfault.extract import traceback as tb
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.codes import (
    ACCEL_OOM_PHRASES,
    ALLOC_LITERALS,
    BFC_OOM_LITERAL,
    CUDA_LITERALS,
    CUDNN_LITERAL,
    LIBRARY_LITERALS,
    NGC_BUILT_FOR,
    NGC_DRIVER_CHECK,
    RUNTIME_LITERALS,
    WEAK_CUDA_ANCHORS,
    by_whom,
    cuda_message_literals,
    cuda_spelling_literals,
    ngc_check_failed,
    ngc_need,
    storage_strerror_texts,
)
from firstfault.extract.container import container_owns, quoted_storage, quoting_runtime
from firstfault.extract.excclass import (
    GRPC_STATUS_LITERAL,
    STORE_DIGIT_WORDS,
    STORE_SPELLED_WORDS,
    class_words,
    logged_words,
    setup_errno_words,
    symptom_status_texts,
)
from firstfault.extract.jobend import reason_owned
from firstfault.extract.memo import ON, Memo, digits_zeroed
from firstfault.extract.nccl import NCCL_ERROR_LITERALS, mark_failure, marked_before, nccl_owns, split_rank_prefix
from firstfault.extract.numerics import numerics
from firstfault.extract.prefix import MARKUP_TAG_LITERALS
from firstfault.extract.reasons import text_reasons
from firstfault.extract.slingshot import CXI_STACK
from firstfault.extract.torchrun import torchrun_entry

# UCX's own log record (`[host:pid:tid] ucp_worker.c:1498 UCX  ERROR uct_iface_open(rc_verbs/mlx5_0:1) failed:
# Input/output error`): its words are UCX's statuses (catalog/transport.yaml `ucx_statuses`, extract/verbs.py), and a
# device it names (`rc_verbs/mlx5_0:1`) is no path of a file system. So are those an Open MPI component over UCX
# prints after a UCX call (ompi/mca/pml/ucx/pml_ucx.c `ucp_ep_create(proc=%d) failed: %s` with ucs_status_string():
# `pml_ucx.c:431  Error: ucp_ep_create(proc=546) failed: Input/output error` is UCS_ERR_IO_ERROR, no disk's EIO;
# osc/ucx, oshmem's spml/ucx alike: extract/verbs.py `_UCX_WORD`).
_UCX_RECORD: Final = re.compile(r"\bUCX {1,3}(?:ERROR|WARN|DIAG)\b|\b(?:pml|osc|spml)_ucx\w*\.c:\d+")


def _alone_read(body: str) -> tuple[list[Draft], bool]:
    """The drafts of a line read alone, and whether a "nothing" may be shared by the body's digit-zeroed shape: not
    where a container runtime's row (whose words may hold a digit: `enroot-aufs2ovlfs`) took the line from the storage
    reading, since another body of the same shape may not hold those words."""
    drafts = tb.cuda_drafts(body, None)
    # NCCL's `posix_fallocate failed : No space ...` is its own, UCX's records UCX's
    if not drafts and not nccl_owns(body) and _UCX_RECORD.search(body) is None:
        one = tb.standalone(body)
        if one is not None and one.kind == "storage.error" and container_owns(body):
            # a container runtime's scratch space on the node (extract/container.py), not the job's storage
            return [], False
        if one is not None and one.kind == "storage.error" and CXI_STACK.search(body) is not None:
            # the Slingshot NIC's own resources in its stack's words (libcxi's `cxil_alloc_svc: No space left on
            # device`, a CXI device's), not the job's storage (extract/slingshot.py)
            return [], False
        drafts = [one] if one is not None else []
    return drafts, True


def _alone_uncached(body: str) -> list[Draft]:
    return _alone_read(body)[0]


# What a line outside any traceback or abort says on its own is a pure function of its body (cuda_drafts,
# nccl_owns, standalone read nothing else), remembered two ways (extract/memo.py):
# - by the body: any answer, replayed as fresh drafts;
# - by the body with its digits zeroed, only the answer "nothing", and only for a body that holds none of
#   _DIGIT_WORDS (cuda_drafts' own, traceback.CUDA_DIGIT_WORDS, NCCL's, the errno's and an object store's numbered
#   codes, excclass.STORE_DIGIT_WORDS) nor the other places where cuda_drafts reads a digit's value
#   (traceback.cuda_digit_blind). Without them the steps decide "nothing" by words and by digit-blind patterns
#   alone (\d, \w, [^:\s], lengths all unchanged by zeroing): the CUDA error code and OOM allocator names, the
#   `[Errno N]` number, NCCL's status codes and those store codes are the only digits they compare, and each of
#   those needs one of these words first, or the shape of a CUDA code before or after its message (`Error 803: `,
#   `(error 803)`, which a body holds exactly when its zeroed form does). `_zeroed_safe` checks at first use
#   that the words the steps compare (storage strerror texts, exec failure reasons) hold no digit; if one
#   did, only exact repeats would be remembered.
_DIGIT_WORDS: Final = (*tb.CUDA_DIGIT_WORDS, *NCCL_ERROR_LITERALS, "[Errno", *STORE_DIGIT_WORDS)
_DIGIT_WORDS_RX: Final = tb.digit_reads(_DIGIT_WORDS)
_K_NGC_NEED = "ff.app.ngc_need"  # the driver release an NGC banner's first line said the image needs
_ALONE: Memo[tuple[Draft, ...]] = Memo("app.alone")
_ALONE_QUIET: Memo[bool] = Memo("app.alone.zeroed")  # holds True only: a known-quiet template
_zeroed_ok: list[bool] = []


def _zeroed_safe() -> bool:
    if not _zeroed_ok:
        words = (*storage_strerror_texts(), *tb.EXEC_WHY_TEXTS, "No module named", "shared memory", "/dev/shm",
                 *status_anchors(), *(t for r in status_word_table().values() for t in (r.word, *r.texts)),
                 *cuda_message_literals(), *cuda_spelling_literals(), *_DIGIT_WORDS)
        _zeroed_ok.append(not any(c.isdigit() for w in words for c in w))
    return _zeroed_ok[0]


def _alone(body: str) -> list[Draft]:
    """The drafts of a line that no traceback or abort around it explains (fresh objects: callers set ranks)."""
    if not ON[0]:
        return _alone_uncached(body)
    # An exact repeat first: whichever way its body was read, the memo holds _alone_uncached's answer for it (each
    # rank's `terminate called after throwing ...` holds a word of _DIGIT_WORDS, and searched for them, 10 us, again
    # before the body's own memo was asked).
    got = _ALONE.find(body)
    if got is None:
        if _zeroed_ok[0] if _zeroed_ok else _zeroed_safe():
            # No word of _DIGIT_WORDS holds a digit, so a body holds one exactly when its zeroed form does:
            # a known-quiet key came from a body without them, and this body has none either.
            key = digits_zeroed(body)
            if _ALONE_QUIET.find(key) is not None:
                return []
            if tb.cuda_digit_blind(body, key, _DIGIT_WORDS_RX):
                drafts, shared = _alone_read(body)
                if not drafts and shared:
                    _ALONE_QUIET.put(key, True)
                return drafts  # an answer with words of this very body is not shared between bodies
        got = tuple(_alone_uncached(body))
        _ALONE.put(body, got)
    return [Draft(d.kind, dict(d.fields), d.device, d.rank, d.host) for d in got]


# A lone uncaught exception line (extract/traceback.py `lone_exception`): a log that holds the last line of a
# traceback without the traceback; and an exception a line spells elsewhere than at its head (`spelled_exception`:
# after a logger's or a person's words, in repr form, in a framework's wrapper, Rust's panic, gRPC's status line),
# looked for only in a line that the lone-line reading and every step before it left alone. Each is read as the
# traceback's last line would be, and what it gives is marked `terminal` (the engine takes it only as the last word
# of its stream, and only where no cause read from fuller evidence stands: engine/normalise.py `terminal_lines`,
# engine/attribute.py). Its reading is a pure function of the body (classify reads no frames here), remembered by
# the body; whether a line has the shape at all reads only the shape and the class's name (no digit's value),
# remembered by the body with its digits zeroed.
class _TerminalLine:
    """One way a line may hold an uncaught exception's last line without its traceback, read and remembered."""

    def __init__(self, name: str, shape: Callable[[str], tb.Exc | None]) -> None:
        self.shape = shape
        self.got: Memo[tuple[Draft, ...]] = Memo(name)
        self.quiet: Memo[bool] = Memo(name + ".zeroed")  # holds True only: a line shape that holds no such line

    def uncached(self, body: str) -> list[Draft]:
        exc = self.shape(body)
        if exc is None:
            return []
        drafts, _ = tb.classify(body, exc, nccl_owns(body), numerics(body) is not None,
                                other_owned=reason_owned(body))
        for d in drafts:
            if d.kind != "process.signal":  # a crash on a fault signal is the process's exit report, not its last word
                d.fields["terminal"] = True
        return drafts

    def __call__(self, body: str) -> list[Draft]:
        """The drafts of the line (fresh objects: callers set ranks)."""
        if not ON[0]:
            return self.uncached(body)
        key = digits_zeroed(body)
        if self.quiet.find(key) is not None:
            return []
        if self.shape(body) is None:
            self.quiet.put(key, True)
            return []
        got = self.got.get(body, lambda: tuple(self.uncached(body)))
        return [Draft(d.kind, dict(d.fields), d.device, d.rank, d.host) for d in got]


def platform_program(file: str, body: str) -> bool:
    """Whether the file's path or the line names a program of the platform under the workload (a device plugin,
    an operator, the kubelet, a container runtime, a FUSE mount's daemon: catalog/exceptions.yaml)."""
    low = (file + " " + body).lower()
    return any(name in low for name in platform_programs())


# Ray's C++ logger before each record of its own processes' logs, with the component that wrote it
# (src/ray/util/logging.cc: `[2022-06-10 00:49:17,113 E 44686 99451332] (raylet) logging.cc:325: ...`).
_RAY_CXX_LOG = re.compile(
    r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [DIWEFC] \d{1,10} \d{1,20}\] \((?P<comp>[a-z_]{4,32})\) "
)


def printer(body: str, ctx: LineContext) -> PlatformProgram | None:
    """The program of the platform under the workload (catalog/platform.yaml `platform_programs`) that printed a line:
    the one a prefix named (Ray's `(raylet)`, an idle worker's `(pid=N)`: LineContext.program), else the component
    Ray's C++ logger names in its record, else the one the file's name names (raylet.err, gcs_server.out)."""
    if ctx.program is not None:
        return next((row for row in platform_program_table() if row.program == ctx.program), None)
    m = _RAY_CXX_LOG.match(body) if body[:1] == "[" else None
    if m is not None and (row := platform_program_of(m.group("comp"))) is not None:
        return row
    stem = ctx.file.replace("\\", "/").rsplit("/", 1)[-1].split(".", 1)[0]
    return platform_program_of(stem)


def _platform_crash(file: str, body: str) -> list[Draft]:
    """A platform program's own uncaught error (a Go or Rust panic in its container's log: the device plugin's
    `panic: Unable to load resource managers to manage plugin devices: ...`) is that program failing on the node:
    `platform.error` with its `part` (catalog/platform.yaml `platform_programs`), which the part's rule reads
    (node-device-plugin) or none does; the program named by the file's path (its container's or pod's log)."""
    stems = [p.rsplit(".", 1)[0] for p in reversed(file.replace("\\", "/").split("/")) if p]
    row = platform_program_of(*stems)
    if row is None:
        return []
    return [Draft("platform.error", {"program": row.program, "part": row.part, "text": "panic",
                                     "message": tb.clip(body)})]


def _provisioning(drafts: list[Draft], frames: tuple[str, ...], text: str) -> list[Draft] | None:
    """A cluster's provisioning program failing in a Python exception (catalog/platform.yaml `platform_programs`, part
    provision): the traceback's outermost frame is one of its own files (slurm-gcp's `/slurm/scripts/setup.py`: the
    program itself raised), or a `CalledProcessError` names one of its steps as the command (HyperPod's
    `Command '['sudo', 'bash', './utils/install_docker.sh']' returned non-zero exit status 100.`). That program's
    `platform.error` (`text` `traceback` or `step`), not the workload's exception; None where it is not, and where a
    row of catalog/scheduler.yaml reads the exception's words (a cloud API's quota refusal or stock-out that the
    program passed on: what that row says decides, docs/verdict.md)."""
    exc = next((d for d in drafts if d.kind == "app.exception"), None)
    if exc is None or exc.fields.get("envelope") or exc.fields.get("thread"):
        return None
    row, how = provisioning_program(frames), "traceback"
    if row is None and exc.fields.get("exc_type") == "CalledProcessError":
        row, how = provisioning_step(str(exc.fields.get("message", ""))), "step"
    if row is None or text_reasons(text):
        return None
    return [Draft("platform.error", {"program": row.program, "part": row.part, "text": how,
                                     "message": tb.clip(text)})]


_lone = _TerminalLine("app.lone", tb.lone_exception)
_spelled = _TerminalLine("app.spelled", tb.spelled_exception)
_foreign = _TerminalLine("app.foreign", tb.foreign_exception)


_CHAIN_MAX: Final = 1600  # the most of a report's chain of causes kept (its deepest causes)
_HDF5: Final = "ff.app.hdf5"  # per stream: the line of the HDF5 error stack's last header or frame
_HDF5_CLASS_GAP: Final = 2  # a frame's `major:` and `minor:` lines, right under it
_CTIME: Final = "ff.app.ctime"  # (line, body) of a line HDF5's ctime newline cut (traceback.ctime_cut)
_REPORT: Final = "ff.app.report"  # per stream: the error report (traceback.report_line) whose chain may follow
_JS_WAIT: Final = "ff.app.js_wait"  # (line, body, exc) of an error line a JavaScript stack frame may follow
_SIGNAL_WAIT: Final = "ff.app.signal_wait"  # (line, text) of an error whose signal the next line names
_SIGNAL_WINDOW: Final = 2
_DEVICE_ASSERTS: Final = "ff.app.device_asserts"  # per stream: the kernel asserts (file:line: function) read once
_DEVICE_ASSERTS_MAX: Final = 64  # the most remembered (a stream's distinct asserts beyond it are each read)

_TERMINATE = re.compile(r"terminate called after throwing an instance of '(?P<type>[^']+)'")
# libc++abi's default terminate handler (LLVM libcxxabi src/cxa_default_handlers.cpp `demangling_terminate_handler`,
# through abort_message.cpp, which puts `libc++abi: ` before it; `libc++abi.dylib: ` on macOS before 11): the same
# record as libstdc++'s two lines above, on one line, `terminating due to uncaught exception of type T: <what()>`
# (`terminating with ...` before LLVM 15; `unexpected` for an exception a dynamic exception specification refused; no
# `: <what()>` where T is not a std::exception). What macOS (Apple's libc++), Android's NDK and clang builds with
# libc++ print where a C++ exception escapes: read as the libstdc++ record is.
_LIBCXXABI = re.compile(r"terminating (?:due to|with) (?:uncaught|unexpected) exception of type "
                        r"(?P<type>(?:[^:]|::){1,300}?)(?:: (?P<msg>.*))?\s*$")
LIBCXXABI_LITERALS: Final = ("terminating due to uncaught", "terminating with uncaught",
                             "terminating due to unexpected", "terminating with unexpected")
_WHAT = re.compile(r"what\(\):\s*(?P<msg>.*)$")
_WHAT_WINDOW: Final = 3
_MODEL: Final = "ff.app.traceback_model"
TERMINATED: Final = "ff.app.terminated"  # line of the stream's last `terminate called after throwing` or fatal record


def _model(state: dict[str, object]) -> tb.TracebackModel:
    m = state.get(_MODEL)
    if not isinstance(m, tb.TracebackModel):
        m = tb.TracebackModel()
        state[_MODEL] = m
    return m


@dataclass(slots=True)
class _Report:
    """A language's error line (Rust's `Error: <outer>`) awaiting its chain, or with its chain open."""

    lineno: int
    line: tb.ReportLine
    chain_at: int | None = None  # the line that opened the chain (`Caused by:`), once it came
    chain: str = ""  # the chain read so far, joined as anyhow's `{:#}` prints it (`outer: cause: ...`)
    last: int = -1  # the number of the last numbered cause seen


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
        "app.cuda_error": frozenset({"cuda_code", "cuda_error", "error", "message", "terminal", "report"}),
        "app.exception": frozenset({"errno", "exc_type", "message", "path", "shm", "signal", "cache_race", "exec",
                                    "setup", "store_code", "terminal", "report", "truncated", "limit", "thread",
                                    "envelope"}),
        "nccl.communicator_aborted": frozenset({"detail", "failed_task", "terminal", "report"}),
        "nccl.error": frozenset({"detail", "nccl_result", "terminal", "report"}),
        "nccl.remote_error": frozenset({"detail", "exit_report", "failed_task", "phase", "terminal", "report"}),
        "nccl.timeout": frozenset({"detail", "terminal", "report"}),
        "process.signal": frozenset({"by", "detail", "signal", "terminal", "report"}),
        "storage.error": frozenset({"detail", "errno", "exc_type", "fs", "path", "store_cause", "store_code",
                                    "terminal", "report"}),
        "app.cuda_oom": frozenset({"message", "terminal", "report"}),
        # a storage errno in a container runtime's quoted output (extract/container.py quoted_storage)
        "container.error": frozenset({"runtime", "error", "text", "message"}),
        "platform.error": frozenset({"program", "part", "text", "message"}),
        "launcher.exit": frozenset({"state", "system", "scope"}),
    }
    sources: frozenset[str] = frozenset({"application"})
    literals: tuple[str, ...] = (
        tb.TRACEBACK,
        *tb.CHAIN_MARKERS,
        *tb.EXC_SUFFIXES[:2],  # "Error", "Exception": the final line of a traceback
        *tb.EXCEPTION_MODULE_LITERALS,  # ... or a class of an exceptions module (`...exceptions.TooManyRequests`)
        *class_words(),  # ... or a class the table names that is spelled neither way (Dask's `KilledWorker`)
        *status_anchors(),  # a status JAX / TensorFlow log about the coordination service or a collective
        *symptom_status_texts(),  # ... or in an ERROR record of their own (`E ...] ... failed: UNAVAILABLE: ...`)
        tb.GCLOUD_LITERAL,  # gcloud's report of a request the API refused (`ERROR: (gcloud.X) INVALID_ARGUMENT: ...`)
        "KeyboardInterrupt",
        "SystemExit",
        "StopIteration",
        "Empty",
        *ACCEL_OOM_PHRASES,
        BFC_OOM_LITERAL,  # ... and the BFC allocator's failure, read past its words (codes.accelerator_oom)
        *CUDA_LITERALS,
        *WEAK_CUDA_ANCHORS,
        *RUNTIME_LITERALS,  # another accelerator runtime's result (catalog/cuda.yaml `runtime_results`)
        CUDNN_LITERAL,  # a cuDNN status (catalog/cuda.yaml `cudnn_statuses`)
        *LIBRARY_LITERALS,  # a math library's status (catalog/cuda.yaml `library_statuses`), or cuBLAS's in THC's words
        NGC_DRIVER_CHECK,  # the NGC containers' check of the host's driver ...
        NGC_BUILT_FOR,  # ... and its first line, the release the image needs
        *cuda_message_literals(),  # a CUDA error's message followed by its number (`... combination (error 803)`)
        *cuda_spelling_literals(),  # a program's own words for a CUDA status (catalog/cuda.yaml `cuda_spellings`)
        "CUDA-capable device",
        "No CUDA GPUs are available",
        "terminate called after throwing",
        "what():",
        *LIBCXXABI_LITERALS,
        *tb.ASSERT_LITERALS,  # a CUDA kernel's failed assert (traceback.device_assert)
        *tb.FATAL_LOG_LITERALS,
        *tb.LANGUAGE_LITERALS,  # another language's uncaught error (Rust's and Go's panic, Go's fatal error, Julia's)
        *tb.HDF5_LITERALS,  # HDF5's error stack: its header, frames and their class lines, a message ctime cut
        *tb.JS_FRAME_LITERALS,  # a JavaScript stack's frame, after its error's line
        GRPC_STATUS_LITERAL,  # gRPC's status line under its Python error
        *tb.THREAD_LITERALS,
        *tb.IGNORED_LITERALS,  # `Exception ignored in: ...` before the traceback Python ignored
        *logged_words(),  # a line the exception table reads on its own (`No OpKernel was registered`)
        # ... whose words a person's code span splits after a program's tag (`vllm: error: `unrecognized arguments:
        # ...``): the prefix layer takes the span's marks off (prefix.py `_tagged_markup`), but the words the
        # prefilter knows it by are not whole in the raw line
        *MARKUP_TAG_LITERALS,
        *STORE_SPELLED_WORDS,  # ... and an object store's code in a store client's own words
        *setup_errno_words(),  # ... and a logged bind that failed with a set-up errno
        *tb.SOCKET_CALL_LITERALS,  # ... and a socket library's report of its call that failed (traceback.py)
        'File "',
        *tb.CXX_STACK_LITERALS,
        "[Errno ",
        "No module named",
        *tb.EXEC_LITERALS,
        *tb.SHELL_SETUP_LITERALS,
        *storage_strerror_texts(),
    )

    # A line of a C++ exception's stack (`frame #3: ...`, `Exception raised from ...`) is claimed and read to nothing
    # whatever the stream holds (TracebackModel.stack_line): the scanner reads it without its candidate
    # (collect/scan.py Extraction.read_quiet), each rank's stack under its abort (issue 27).
    quiet_literals: tuple[str, ...] = tb.CXX_STACK_LITERALS

    def quiet_claim(self, body: str, state: dict[str, object], rank: int | None) -> bool:
        """Whether extract(body, ctx) claims the line and gives nothing whatever `ctx.state` (`state`) holds, for a
        `ctx` of rank `rank`: a line of a C++ exception's stack (TracebackModel.stack_line) that is no NGC banner's;
        then what extract does to the state is done (the model and the writer's stream made where missing). False:
        nothing done that extract would not do the same way."""
        line_rank, body = split_rank_prefix(body)
        if NGC_BUILT_FOR in body or NGC_DRIVER_CHECK in body:
            return False
        return _model(state).stack_line(body, line_rank if line_rank is not None else rank)

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        if NGC_BUILT_FOR in body or NGC_DRIVER_CHECK in body:
            # the NGC containers' driver check (codes.ngc_check_failed): its first line names the release the image
            # needs, the next the driver found; a pair the minor-version compatibility runs is no failure
            need = ngc_need(body)
            if NGC_DRIVER_CHECK not in body:
                ctx.state[_K_NGC_NEED] = need
                ctx.claimed = True
                return
            held = ctx.state.pop(_K_NGC_NEED, None)
            if not ngc_check_failed(body, held if isinstance(held, int) else None):
                ctx.claimed = True
                return
        who = rank if rank is not None else ctx.rank
        if tb.CTIME_REST_LITERAL in body and tb.ctime_rest(body):
            joined = self._ctime_joined(body, who, ctx)
            if joined is not None:
                for draft in joined:
                    if rank is not None:
                        draft.rank = rank
                    yield draft
                return
        if tb.ctime_cut(body):
            ctx.state[_CTIME] = (ctx.lineno, body.rstrip())
        owner = torchrun_entry(ctx.state) if "traceback :" in body else None
        was, ctx.claimed = ctx.claimed, False
        closed = _model(ctx.state).feed(body, who, ctx, owner)
        consumed, ctx.claimed = ctx.claimed, was or ctx.claimed
        exc: tb.Exc | None = None
        owner_entry: tuple[int | None, str | None] | None = None
        drafts: list[Draft]
        if closed is not None and (closed.ignored or tb.logging_handler_error(closed.frames)):
            # a logging handler's failed write, an exception Python ignored, a standard-library helper process's
            # own report: reported and gone on from, no failure of the run
            ctx.claimed = True
            return
        if closed is not None:
            exc, owner_entry, text = closed.exc, closed.owner, closed.text
            drafts, decisive = tb.classify(text, exc, nccl_owns(text), numerics(text) is not None, closed.frames,
                                           other_owned=reason_owned(text),
                                           in_library_thread=closed.library_thread, in_thread=closed.thread,
                                           call=closed.call)
            if closed.chained:
                ctx.claimed = True  # an envelope of a chain that already decided
                return
            # a chain of envelopes only is kept as a failure seen (at_end), unless it ended a thread, not the process
            _model(ctx.state).decided(closed.who, decisive, None if closed.thread or closed.library_thread
                                      else (ctx, text))
            ctx.claimed = True
        elif consumed:
            return  # a traceback header, chain marker or frame
        else:
            exc = self._terminate(body, who, ctx)
            report = self._report(body, who, ctx) if exc is None else None
            hdf5 = self._hdf5(body, who, ctx) if exc is None and report is None else None
            if report is not None:
                drafts = report
            elif hdf5 is not None:
                drafts = hdf5
            elif exc is not None:
                drafts, _ = tb.classify(body, exc, nccl_owns(body), numerics(body) is not None)
                if _bare_check(exc, drafts) and marked_before(ctx, who):
                    # a C++ library's failed CHECK on the call that just reported a peer's loss or timeout (DGL's
                    # `Check failed: tmp != -1 (-1 vs. -1)` on its socket's receive): the rank's reaction, as its
                    # abort after one is (extract/signals.py); a failure seen, no cause of its own
                    drafts = [Draft("app.exception", {"envelope": True, "message": tb.clip(f"{exc.cls}: {exc.msg}")})]
            else:
                js = self._javascript(body, ctx)
                drafts = js if js is not None else (
                    self._device_assert(body, ctx) or _alone(body) or self._fatal(body, ctx) or self._foreign(body, ctx)
                    or _lone(body) or _spelled(body))
                if not drafts and not ctx.claimed and ": " in body:
                    head = tb.js_error_line(body)
                    if head is not None:  # a JavaScript error's line if a stack frame comes next (_javascript)
                        ctx.state[_JS_WAIT] = (ctx.lineno, body, head)
        if not drafts:
            # (what follows only reworks drafts: a provisioning program's, a quoted storage errno, ranks, CANN's hold,
            # NCCL's mark; none of it reads or changes anything for a line that gave none, most lines this reads)
            return
        if (provisioned := _provisioning(drafts, closed.frames if closed is not None else (),
                                         closed.text if closed is not None else body)) is not None:
            drafts = provisioned
        if any(d.kind == "storage.error" for d in drafts) and (quoter := quoting_runtime(ctx.state, ctx.lineno)):
            # a storage errno in the quoted output of a container runtime's failed step (a hook's stderr on the lines
            # after runc's report): the node's container plumbing, not the job's storage (extract/container.py)
            drafts = [quoted_storage(quoter, body) if d.kind == "storage.error" else d for d in drafts]
        for draft in drafts:
            if rank is not None:
                draft.rank = rank
            elif owner_entry is not None:
                draft.rank, draft.host = owner_entry
        if len(drafts) == 1 and drafts[0].kind == "app.exception":
            # torch_npu's RuntimeError over CANN: the report lines under it decide (extract/cann.py)
            drafts = cann.hold(ctx, closed.text if closed is not None else body, drafts)
        for draft in drafts:
            if draft.kind.startswith("nccl."):
                # a peer's loss or a collective's failure in a traceback's words (gloo's `Connection closed by
                # peer`, DistNetworkError): the same mark NCCL's own lines leave, so the rank's abort after it is its
                # reaction, not a crash of its own
                mark_failure(ctx, who)
            yield draft

    def at_end(self, state: dict[str, object]) -> list[tuple[Draft, LineContext, str]]:
        """What a stream's end tells: a Python traceback still open there (its frames came, its exception line did
        not: the process was killed while printing it, or the log was cut) is an uncaught exception of a class the
        evidence does not hold. Marked `terminal` and `truncated`: weak, and only its stream's last word
        (engine/normalise.py `terminal_lines`), at the place of its header, with its innermost frame. And a chain that
        closed with envelopes only (`TracebackModel.unsettled`): marked `envelope`, a failure seen, no cause."""
        m = state.get(_MODEL)
        if not isinstance(m, tb.TracebackModel):
            return []
        out: list[tuple[Draft, LineContext, str]] = []
        for end in m.open_ends(provisioning=provisioning_program):
            row = provisioning_program(end.frames)
            if row is not None:
                # a provisioning program's own traceback cut before its exception line (its frames alone, a header
                # cut off too: such a program prints them only in an exception's report): that program failing
                d = Draft("platform.error", {"program": row.program, "part": row.part, "text": "traceback",
                                             "message": tb.clip(end.frames[-1])})
                out.append((d, end.head, end.text))
                continue
            if tb.launcher_plumbing(end.frames):
                # the launcher's own traceback cut where it reports its workers' failure (torchrun's launch_agent,
                # whose exception line would be ChildFailedError: an envelope): a failure seen, no cause of its own
                d = Draft("app.exception", {"envelope": True, "message": tb.clip(end.frames[-1])})
                out.append((d, end.head, end.text))
                continue
            d = Draft("app.exception", {"terminal": True, "truncated": True, "message": tb.clip(end.frames[-1])})
            who = end.who[0] if isinstance(end.who, tuple) else end.who
            if isinstance(who, int) and who != end.head.rank:
                d.rank = who
            elif end.owner is not None:
                d.rank, d.host = end.owner
            out.append((d, end.head, end.text))
        for at, text, who in m.unsettled():
            # A chain whose every member only wraps another (catalog/exceptions.yaml `envelope`: torchrun's
            # ChildFailedError, a bare EOFError) and that nothing after it in the stream decided: a failure was seen,
            # its cause is not in the evidence. Marked `envelope`: never a cause or symptom, only what keeps a run
            # whose end is not shown from being called well (analysis/analyze.py `finish`, docs/verdict.md).
            d = Draft("app.exception", {"envelope": True, "message": tb.clip(text)})
            owner = who[0] if isinstance(who, tuple) else who
            if isinstance(owner, int) and owner != at.rank:
                d.rank = owner
            out.append((d, at, text))
        return out

    def _javascript(self, body: str, ctx: LineContext) -> list[Draft] | None:
        """A JavaScript stack frame (traceback.js_frame): claimed; the first one right after an error's `name:
        message` line that nothing else read makes that line a JavaScript error (traceback.js_exception). None: the
        line is no frame."""
        file = tb.js_frame(body)
        if file is None:
            return None
        ctx.claimed = True
        waiting = ctx.state.pop(_JS_WAIT, None)
        if not isinstance(waiting, tuple) or ctx.lineno - waiting[0] != 1 or platform_program(ctx.file, waiting[1]):
            return []
        return tb.js_exception(waiting[1], waiting[2], file)

    def _foreign(self, body: str, ctx: LineContext) -> list[Draft]:
        """Another language's uncaught error (traceback.LANGUAGES). A platform program's (catalog/exceptions.yaml
        `platform_programs`: its name in the file's path or in the line) is not the workload's failure: the line is
        claimed and gives nothing (what the program's failure did to the job is read from the job's own lines)."""
        if tb.foreign_frame(body):
            ctx.claimed = True  # a line of a Go stack: the error is its record's first line
            return []
        if "[signal " in body:
            sig = tb.signal_line(body)
            if sig is not None:
                # the runtime's line naming the signal behind the error just before it: a crash on that signal
                # where that error waits for it (Go's `fatal error: unexpected signal ...`), else part of its record
                ctx.claimed = True
                waiting = ctx.state.pop(_SIGNAL_WAIT, None)
                if (isinstance(waiting, tuple) and ctx.lineno - waiting[0] <= _SIGNAL_WINDOW
                        and not platform_program(ctx.file, waiting[1])):
                    return [Draft("process.signal", {"signal": sig, "by": by_whom(sig, "self"),
                                                     "detail": tb.clip(waiting[1])})]
                return []
        drafts = _foreign(body)
        if drafts and platform_program(ctx.file, body):
            ctx.claimed = True
            return _platform_crash(ctx.file, body)
        if drafts:
            exc = tb.foreign_exception(body)
            if exc is not None and tb.signal_named_after(exc):
                ctx.state[_SIGNAL_WAIT] = (ctx.lineno, body)  # a crash on the signal the next line names
                ctx.claimed = True
                return []
        return drafts

    def _device_assert(self, body: str, ctx: LineContext) -> list[Draft]:
        """A CUDA kernel's failed assert (traceback.device_assert), read once per assert of a stream: the device
        runtime prints one line per failing thread (`block: [0,0,0], thread: [1,0,0]`, ...), one fault; the repeats
        are claimed."""
        drafts = tb.device_assert(body)
        if drafts:
            ctx.claimed = True
            seen = ctx.state.setdefault(_DEVICE_ASSERTS, set())
            site = body.split(" block: [", 1)[0].strip()
            if not isinstance(seen, set) or site in seen:
                return []
            if len(seen) < _DEVICE_ASSERTS_MAX:
                seen.add(site)
        return drafts

    def _fatal(self, body: str, ctx: LineContext) -> list[Draft]:
        """A C++ framework's fatal log record (extract/traceback.py `fatal_log`), read as an uncaught exception;
        the abort that follows it is its consequence, as after `terminate called`."""
        exc = tb.fatal_log(body)
        if exc is None:
            return []
        ctx.state[TERMINATED] = ctx.lineno
        ctx.claimed = True
        row = printer(body, ctx)
        if row is not None:
            # a platform program's own fatal record (Ray's raylet aborting on a failed check: its log file, Ray's tag
            # before the line): that program failing on its node, no rank's exception (platform.error, which the
            # part's rule reads or none does)
            return [Draft("platform.error", {"program": row.program, "part": row.part, "text": "fatal",
                                             "message": tb.clip(body)})]
        drafts, _ = tb.classify(body, exc, nccl_owns(body), numerics(body) is not None)
        return drafts

    def _hdf5(self, body: str, who: int | None, ctx: LineContext) -> list[Draft] | None:
        """HDF5's error stack (traceback.hdf5_head, hdf5_frame): its header, its frames and each frame's `major:` /
        `minor:` lines are claimed; each frame is read (traceback.hdf5_drafts, terminal: the innermost frame that says
        something decides). None: the line is no part of one."""
        stacks = ctx.state.setdefault(_HDF5, {})
        if not isinstance(stacks, dict):
            return None
        if tb.hdf5_head(body):
            stacks[who] = ctx.lineno
            ctx.claimed = True
            return []
        frame = tb.hdf5_frame(body)
        if frame is not None:
            stacks[who] = ctx.lineno
            ctx.claimed = True
            return tb.hdf5_drafts(frame[1])
        at = stacks.get(who)
        if isinstance(at, int) and 0 < ctx.lineno - at <= _HDF5_CLASS_GAP and tb.hdf5_class_line(body):
            ctx.claimed = True  # (the frame's line stays the mark: its two class lines, no more)
            return []
        return None

    def _ctime_joined(self, body: str, who: int | None, ctx: LineContext) -> list[Draft] | None:
        """The rest of a message HDF5's ctime newline cut (traceback.ctime_rest), right after the cut line this stream
        read: the two read as one line, an HDF5 frame's or a lone exception's, at the rest's place (it says more: the
        errno). None: no cut line right before it."""
        cut = ctx.state.pop(_CTIME, None)
        if not isinstance(cut, tuple) or ctx.lineno - cut[0] != 1:
            return None
        joined = f"{cut[1]}{body.strip()}"
        ctx.claimed = True
        frame = tb.hdf5_frame(joined)
        if frame is None:
            return _lone(joined)
        stacks = ctx.state.setdefault(_HDF5, {})
        if isinstance(stacks, dict):
            stacks[who] = ctx.lineno  # the frame's class lines come under its rest
        return tb.hdf5_drafts(frame[1])

    def _report(self, body: str, who: int | None, ctx: LineContext) -> list[Draft] | None:
        """A language's error report with its chain of causes (traceback.LANGUAGES `chain`: Rust's anyhow / eyre
        `Error: <outer>`, `Caused by:`, then one cause a line). The error's line is remembered per stream and read by
        the other readers as before (`Error: <words>` alone is any tool's last line); the chain's opening line makes
        it a report: claimed, the outermost error read; each cause's line after it within the chain's span is
        claimed and read (traceback.report_drafts, terminal: the deepest cause seen decides). color-eyre's `Error:`
        with nothing after it opens its numbered chain itself. None: the line is no part of a report."""
        reports = ctx.state.setdefault(_REPORT, {})
        if not isinstance(reports, dict):
            return None
        head = tb.report_line(body)
        if head is not None:
            # a new error line: the report before it (if any) is over; one with nothing after `Error:` is
            # color-eyre's, its numbered chain right under it; one whose message only the language prints a report
            # by itself (std's io::Error: `Error: Os { code: 28, kind: StorageFull, message: "..." }`)
            alone = tb.report_alone(head)
            if alone is not None:
                reports.pop(who, None)
                ctx.claimed = True
                return tb.report_drafts(head, alone)
            reports[who] = _Report(ctx.lineno, head, ctx.lineno if not head.msg else None)
            return None
        prior = reports.get(who)
        if not isinstance(prior, _Report):
            return None
        if prior.chain_at is None:
            if ctx.lineno - prior.lineno > (prior.line.lang.chain.gap if prior.line.lang.chain else 0):
                reports.pop(who, None)
                return None
            if not tb.chain_opens(prior.line, body):
                return None
            prior.chain_at = ctx.lineno
            prior.chain = prior.line.msg
            ctx.claimed = True
            return tb.report_drafts(prior.line, prior.chain) if prior.chain else []
        if tb.chain_ends(prior.line, body):
            reports.pop(who, None)  # a backtrace or a location after the chain: the report's chain is over
            ctx.claimed = True
            return []
        item = tb.chain_item(prior.line, body, ctx.lineno - prior.chain_at, prior.last)
        if item is None:
            reports.pop(who, None)  # past the chain's span, or a numbered list of something else after it
            return None
        prior.last, cause = item
        ctx.claimed = True
        # (color-eyre's chain holds the outermost error too, first)
        prior.chain = f"{prior.chain}: {cause}" if prior.chain else cause
        if len(prior.chain) > _CHAIN_MAX:
            prior.chain = prior.chain[-_CHAIN_MAX:]  # the deepest causes are the ones that decide
        return tb.report_drafts(prior.line, prior.chain)

    def _terminate(self, body: str, who: int | None, ctx: LineContext) -> tb.Exc | None:
        """`terminate called after throwing an instance of 'T'` + `what(): msg` (same or next lines), and
        libc++abi's one-line `terminating due to uncaught exception of type T: msg` (_LIBCXXABI)."""
        pending = ctx.state.setdefault("ff.app.terminate", {})
        if not isinstance(pending, dict):
            return None
        if "exception of type " in body and any(w in body for w in LIBCXXABI_LITERALS):
            lib = _LIBCXXABI.search(body)
            if lib is not None:
                ctx.state[TERMINATED] = ctx.lineno
                qual = lib.group("type").strip()
                return tb.Exc(qual, qual.rsplit("::", 1)[-1], (lib.group("msg") or "").strip())
        if "what():" not in body and "terminate called after throwing" not in body:
            return None  # neither regex below can match (both hold these words)
        t = _TERMINATE.search(body)
        if t:
            ctx.state[TERMINATED] = ctx.lineno
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


# glog's and dmlc-core's failed CHECK (`Check failed: cond (a vs. b)`, glog src/logging.cc CheckOpMessageBuilder; dmlc
# include/dmlc/logging.h LogCheckFormat): the library's assertion on a value, which names no cause of its own.
_CHECK_FAILED = re.compile(r"\bCheck failed: ")


def _bare_check(exc: tb.Exc, drafts: list[Draft]) -> bool:
    """A C++ exception that is a failed CHECK and that no table read further (one plain app.exception)."""
    if len(drafts) != 1 or drafts[0].kind != "app.exception" or _CHECK_FAILED.search(exc.msg) is None:
        return False
    return not any(k in drafts[0].fields for k in ("setup", "errno", "limit", "shm", "store_code", "path"))


class JournalOomExtractor:
    """An accelerator's memory exhausted, in a program's own words in the node's journal or syslog (app.cuda_oom): a
    workload run as a service (Ollama's and llama.cpp's servers, vLLM under systemd) writes its stderr there, and the
    syslog header before it is the journal's (extract/prefix.py takes it off). Only the accelerator-OOM words are read
    there (codes.ACCEL_OOM_PHRASES, and a device allocation call's failure with CUDA's out-of-memory result, the
    CUDA table's class `oom`: ggml's `allocating 24289.03 MiB on device 0: cudaMalloc failed: out of memory`); every
    other exception word in a journal stays the application reader's to decide (ExceptionExtractor reads application
    files only)."""

    name = "app.cuda_oom.journal"
    emits: Mapping[str, frozenset[str]] = {"app.cuda_oom": frozenset({"message"})}
    sources: frozenset[str] = frozenset({"syslog"})
    literals: tuple[str, ...] = (*ACCEL_OOM_PHRASES, BFC_OOM_LITERAL, *ALLOC_LITERALS)

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        for d in tb.cuda_drafts(line, None):
            if d.kind == "app.cuda_oom":
                yield Draft(d.kind, {"message": d.fields["message"]})
                return


EXTRACTORS: tuple[LineExtractor, ...] = (ExceptionExtractor(),)
# The journal's reader, apart from the training processes' output's (extract/registry.py runs both).
JOURNAL_EXTRACTORS: tuple[LineExtractor, ...] = (JournalOomExtractor(),)
