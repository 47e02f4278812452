"""The Python traceback model: one failure, however many tracebacks print it.

Python prints an exception as a chain of tracebacks joined by "During handling
of the above exception, another exception occurred:" or "The above exception
was the direct cause of the following exception:". The first traceback of
the chain holds the exception that began it; the later ones are envelopes
(a DataLoader's "worker exited unexpectedly" around the worker's signal, a
DistBackendError around an NCCL error, a RuntimeError a framework re-raises).

Per stream (the scanner's: file, rank, launcher host), the model follows
`Traceback (most recent call last):` headers, the chain markers and the final
`pkg.XError: message` lines; the frames in between are claimed (understood,
never "unrecognized") and otherwise ignored. Text before a header that no
prefix layer took off (a workflow engine's, a process multiplexer's or a
logger's tag: Metaflow's `<stamp> [run/step/task (pid N)] `, `concurrently`'s
`[1] `) is that writer's tag: the later lines that start with it (its clock
aside; else, a logger that numbers each line, its digits aside) are read
without it, in a stream of their own per tag, so interleaved writers stay
apart; a line without it is read as before. Each final line is classified
through data (`classify`); the first member of a chain whose class decides
(a cause or a symptom) is the chain's event, and every later member is
folded into it. Members that decide nothing (`queue.Empty`, a bare
"exited unexpectedly") leave the decision to the next member.

Classification, in order: CUDA OOM and CUDA errors (extract/codes.py), lines
an NCCL extractor owns, envelopes (the exception table's: a launcher's summary
of its workers' exceptions), signals (KeyboardInterrupt, SystemExit(-N),
a DataLoader worker "killed by signal"), the exception table
(catalog/exceptions.yaml through extract/excclass.py: an errno on the job's
own set-up side, then the class and its module: an object store's client, the
job's set-up, the dynamic loader unable to load a library (the job's build, or
the node's driver where the library is the driver's), a collective library or runtime reporting another worker's
death, a status word of XLA / TensorFlow), messages that say a peer failed or
timed out (symptoms of another rank's failure, whatever the exception type),
torch.distributed's own types, errno (a storage errno on a storage path is a
storage error; on /dev/shm it is the workload's configuration), and last, any
other exception: `app.exception`.

A Python 3.11 exception group prints its own traceback and each sub-exception's inside a `| ` frame: the model
takes the frame off and reads what is inside as above (the group's own line is an envelope; each sub-exception
decides as a plain traceback's last line would). Other languages' uncaught errors are one table (`LANGUAGES`: each
runtime's error line, its class or the runtime's own word, the messages its runtime raises for a fault signal),
read through the same classification (`foreign_exception`).

The same classification reads a lone uncaught exception line (`lone_exception`:
a log that holds the last line without its `Traceback` header); extract/exceptions.py
marks what it gives `terminal`, and the engine attributes it only as the last
word of its stream and only when no cause read from fuller evidence stands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final, NamedTuple

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import (
    ExceptionClassInfo,
    cuda_table,
    fortran_runtime_error_table,
    is_driver_library,
    object_store_code_table,
    platform_executable,
)
from firstfault.extract.base import Draft, LineContext
from firstfault.extract.codes import (
    ACCEL_OOM_PHRASES,
    CODED_CUDA_MESSAGE,
    CUDA_LITERALS,
    CUDNN_LITERAL,
    LIBRARY_LITERALS,
    MESSAGE_CUDA_CODE,
    NGC_DRIVER_CHECK,
    NGC_DRIVER_CODE,
    RUNTIME_LITERALS,
    WEAK_CUDA_ANCHORS,
    CudaError,
    accelerator_oom,
    by_whom,
    cache_race,
    class_errno,
    cuda_error_of,
    cudnn_status_of,
    digit_message,
    errno_of,
    errno_row,
    exit_signal,
    host_allocator,
    is_shm,
    is_strerror,
    library_status_of,
    nccl_result_of,
    numbered_library_status,
    path_of,
    pseudo_fs,
    relays_result,
    runtime_result_of,
    signal_name,
    signal_names,
    signal_of_text,
    storage_strerror_rx,
    strsignal_alternation,
)
from firstfault.extract.excclass import (
    GRPC_STATUS_LITERAL,
    STORE_SPELLED_WORDS,
    SYMPTOM_KINDS,
    FileStatus,
    class_row,
    envelope,
    errno_limit,
    failed_task,
    file_status,
    loader_library,
    logged_row,
    logged_status,
    message_status,
    named_class,
    peer_errno,
    setup_errno,
    spelled_store_code,
    status_family,
    status_head,
    store_cause,
    store_code,
    store_setup,
    store_side,
    ucx_peer_status,
)
from firstfault.extract.memo import ON, Memo, digits_zeroed
from firstfault.extract.stalls import read_stall
from firstfault.model import FieldValue

_CLIP: Final = 400

TRACEBACK: Final = "Traceback (most recent call last)"
CHAIN_MARKERS: Final = (
    "During handling of the above exception, another exception occurred",
    "The above exception was the direct cause of the following exception",
)
# A traceback longer than this (in file lines) is not waited for: a later
# stray `XError: ...` line must not close a traceback that was cut off.
TB_WINDOW: Final = 5000
# How far after a closed traceback a chain marker may come.
CHAIN_GAP: Final = 8
# A wrapper's text before the header (a workflow engine's or log shipper's tag that no prefix layer knows:
# Metaflow's `2024-08-04 20:06:04.881 [1722801944329017/optimize/6 (pid 19491)] `): at most this long, and at
# most this many such tags remembered per stream (each names one writer: interleaved tasks keep theirs apart).
MAX_LEAD: Final = 200
MAX_LEADS: Final = 16
# What of a tag changes from line to line of one writer: its date and time of day (their digits are zeroed
# in the tag's key; a pid, a task id or a host stay, so two tasks' tags stay two keys).
_LEAD_CLOCK = re.compile(r"\d{4}-\d\d-\d\d|\d{1,2}:\d\d:\d\d(?:[.,]\d+)?")


def clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _CLIP else text[: _CLIP - 3] + "..."


class Exc(NamedTuple):
    qual: str  # as printed: torch.distributed.DistBackendError, c10::Error
    cls: str  # unqualified: DistBackendError, Error
    msg: str


# The last line of a traceback: `ValueError: msg`, `torch.OutOfMemoryError: ...`,
# a bare `KeyboardInterrupt`; torchrun reprints a child's traceback indented.
# TensorFlow 1.x's session reprints the error after the op's creation stack: `InternalError (see above for
# traceback): Error writing (tmp) checkpoint file: ...`.
_EXC_LINE = re.compile(r"^\s*(?P<qual>(?:[A-Za-z_]\w*\.)*(?P<cls>[A-Za-z_]\w*))(?: \(see above for traceback\))?"
                       r"(?::[ \t]?(?P<msg>.*))?$")
EXC_SUFFIXES: Final = ("Error", "Exception", "Exit", "Interrupt", "Iteration", "Failure", "Fault", "Timeout")
# A class name in lower camel case, as a C++ library's Python binding names its exceptions (NIXL's
# src/bindings/python/nixl_bindings.cpp: `nixlBackendError`, `nixlRemoteDisconnectError`): a capital after the start.
_CAMEL = re.compile(r"^[a-z][a-z0-9]*[A-Z]")
_BARE: Final = ("KeyboardInterrupt", "SystemExit", "StopIteration", "GeneratorExit", "Empty")


def exception_shape(body: str) -> Exc | None:
    m = _EXC_LINE.match(body)
    if not m:
        return None
    cls, qual = m.group("cls"), m.group("qual")
    if (not cls[0].isupper() and not ("." in qual and cls.endswith(EXC_SUFFIXES) and _CAMEL.search(cls))
            and not named_class(qual, cls)):
        # (a binding's own lower-camel classes, qualified: `nixl._bindings.nixlBackendError`; a lower-case class the
        # exception table names itself: the standard library's `socket.gaierror`, `struct.error`)
        return None
    # A bare name must look like an exception class; a qualified one
    # (`torch.foo.Bar`, `_queue.Empty`) only needs its capitalised tail.
    if not (cls.endswith(EXC_SUFFIXES) or cls in _BARE or "." in qual or named_class(qual, cls)):
        return None  # (a class the exception table names itself is one however it is spelled: `InvalidArgument`)
    return Exc(qual, cls, (m.group("msg") or "").strip())


@lru_cache(maxsize=1)
def _builtin_exceptions() -> frozenset[str]:
    """The names of Python's built-in exceptions (warnings are not: `UserWarning: ...` is no failure)."""
    import builtins

    return frozenset(name for name, v in vars(builtins).items()
                     if isinstance(v, type) and issubclass(v, BaseException) and not issubclass(v, Warning))


# Where Python packages keep their exception classes: `botocore.exceptions`, `minio.error`,
# `tensorflow.python.framework.errors_impl`, `botocore.errorfactory`; and the same names as private modules that the
# package re-exports the classes from (filelock's `filelock._error.Timeout` in 3.x, `filelock._core._errors.Timeout`
# later: tox-dev/filelock src/filelock/_error.py; Python prints the class's defining module).
_EXCEPTION_MODULES: Final = frozenset({"exceptions", "errors", "error", "errorfactory", "errors_impl",
                                       "_exceptions", "_errors", "_error"})
# Prefilter words for a class of such a module whose name holds neither `Error` nor `Exception`
# (`google.api_core.exceptions.TooManyRequests`, `minio.error.NoSuchKey`).
EXCEPTION_MODULE_LITERALS: Final = tuple(f".{m}." for m in sorted(_EXCEPTION_MODULES))


# Python's OSError printed without its class (CPython Objects/exceptions.c OSError_str: `[Errno N] <strerror>`,
# `[Errno N] <strerror>: '<filename>'`, `... -> '<filename2>'`): what `print(e)`, `str(e)` in a program's own
# message or a logger's `%s` of the exception leave of it. A form only CPython prints, read as an OSError where the
# words after the number are the host's strerror words whole (codes.is_strerror) and the line is the exception's
# record: the whole line, or the message of a logger's ERROR / CRITICAL / FATAL record that ends with it after
# `: ` (gpustack's `gpustack.worker.collector - ERROR - Failed to detect GPU devices: [Errno 19] No such device:
# '/dev/dri/card1'`). Not after other words (`download failed: <url> [Errno 32] Broken pipe`: a program's note, which
# it may have gone on from), nor a line a posting wrapped before the filename (`[Errno 13] Permission denied:` alone:
# Python prints the filename's repr after the colon). The shape reads no digit's value (the memo's key zeroes them).
_BARE_OSERROR = re.compile(r"\[Errno \d{1,4}\] (?P<text>[A-Z][^:'\"\[\]]{2,80}?)"
                           r"(?:: (?P<q>['\"])[^'\"]{0,2000}(?P=q)(?: -> (?P<q2>['\"])[^'\"]{0,2000}(?P=q2))?)?\s*$")
_ERROR_LEVEL = re.compile(r"(?:^|[\s\[|(])(?:ERROR|CRITICAL|FATAL)(?=[\s\]|):-])")
BARE_OSERROR_LITERAL: Final = "[Errno "


def bare_oserror(body: str, *, after_words: bool) -> Exc | None:
    """Python's OSError without its class (_BARE_OSERROR): the whole line (`after_words` False), or at the end of a
    logger's error record after `: ` (`after_words` True); None where the line is no such record."""
    at = body.find(BARE_OSERROR_LITERAL)
    if at < 0:
        return None
    m = _BARE_OSERROR.match(body, at)
    if m is None or not is_strerror(m.group("text")):
        return None
    lead = body[:at]
    if not lead.strip():
        return None if after_words else Exc("OSError", "OSError", body[at:].strip())
    if not after_words or not lead.endswith(": ") or _ERROR_LEVEL.search(lead) is None or _went_on(lead, body):
        return None
    return Exc("OSError", "OSError", body[at:].strip())


def lone_exception(body: str) -> Exc | None:
    """A line shaped as Python prints an uncaught exception's last line, outside any traceback: a built-in
    exception (`ValueError: ...`, `KeyboardInterrupt`), a class named like one (`XlaRuntimeError: ...`;
    not a bare `Error: ...`, which command-line tools print), any class of a package's exceptions module
    (`google.api_core.exceptions.TooManyRequests: 429 ...`), or a class the exception table names itself
    (excclass.named_class: `InvalidArgument: 400 ...`); a bare unqualified name that is not a built-in
    exception (`AError` alone on its line) is not one. Only the shape and the class's name decide,
    never the message or a digit (extract/exceptions.py keys its memo of the shape by the line with digits zeroed).
    """
    exc = exception_shape(body)
    if exc is None:
        return bare_oserror(body, after_words=False) if BARE_OSERROR_LITERAL in body else None
    cls = exc.cls
    if cls in _builtin_exceptions():
        return exc
    if not exc.msg and "." not in exc.qual:
        # A bare word shaped like a class (`AError`, `ConnectionError` of a program's own) with nothing after it
        # is a word, not an uncaught exception: Python prints a bare name for a built-in raised without args.
        return None
    if any(cls.endswith(s) and len(cls) > len(s) for s in EXC_SUFFIXES):
        return exc
    if any(part in _EXCEPTION_MODULES for part in exc.qual.split(".")[:-1]):
        return exc
    if named_class(exc.qual, cls):
        return exc  # a class the exception table names itself, however it is spelled (Toil's, google-api-core's)
    return None


# --------------------------------------------------------------------------
# An exception spelled elsewhere in a line
# --------------------------------------------------------------------------
# Where the uncaught exception is not at the head of its line: after a logger's or a launcher's own words (`ERROR
# root: RuntimeError: ...`, `... failed with error.AssertionError: ...`, `Caused by: java.io.IOException: ...`), in
# repr form (`MisconfigurationException('...')`, `OSError(28, 'No space left on device')`), inside a framework's
# wrapper that names the exception it carries (`ray.exceptions.RayTaskError(ValueError): ...`), as a class repr
# (`<class 'KeyError'>: ...`), as Rust's panic (`thread 'main' panicked at ...`), or as the status gRPC prints on a
# line of its own under its error (`status = StatusCode.UNAVAILABLE`). The class must be shaped like an exception's
# (a name ending in `Error` or `Exception`, or a built-in exception); what follows it must be one of those
# spellings; a line whose words before the class call it a warning or an info or debug record, a line that says
# it retries, ignores or recovers, and code or a stack's frame (`raise`, `except`, `class X(Exception):`, `at`, an
# address) hold none. Only the shape and the class's name decide, never a digit's value.
_SPELL_SUFFIXES: Final = ("Error", "Exception")
_SPELL_TRIES: Final = 8  # class-shaped words looked at per line, at most
_LEAD_READ: Final = 200  # how much of the text before the class is read for code or a frame
_CLASS_MAX: Final = 100  # the longest class name read, and the longest module path before it
_QUAL_MAX: Final = 200
_IDENT_RUN = re.compile(r"[A-Za-z0-9_]+")

_IDENT_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# After the class: a wrapper's inner class, a repr's arguments (a quote, a number, a nested class, or none), a
# class repr's close, or `: message`.
_AFTER_CLASS = re.compile(r"\((?P<inner>[A-Z]\w{0,80})\)(?::[ \t]?(?P<wmsg>.*))?$"
                          r"|\((?P<args>['\"\d\-]|[A-Z]\w{0,80}\(|\)(?P<bare>)).*$"
                          r"|(?P<classrepr>'>)[: \t]*(?P<cmsg>.*)$"
                          r"|:(?:[ \t](?P<msg>.*))?$")
# Text before the class that makes the line code (a keyword, then only words, spaces, dots, commas and parentheses
# up to the class: `raise ValueError(`, `except (KeyError, ValueError)`, `class XError(RuntimeError)`).
_CODE_WORD = re.compile(r"\b(?:raise|except|class|def|isinstance|issubclass|import|throws?|catch|new|[Rr]aises)\b")
_CODE_TAIL_REVERSED = re.compile(r"[\s\w.,(]*")
# ... or a stack's frame: an address (absl's `@ 0x7f... xla::...`, gdb's), or `at`/`in`/`#N` at the line's head or
# `at` right before the class (Java's, JavaScript's, gdb's frames).
_HEX_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{4,}\b")
_FRAME_HEAD = re.compile(r"^\s*(?:(?:at|in)\s|#)")
# The words of a step gone on from, a level that is no error's, anywhere in the line (looked for only where their
# lower-cased stems are in it: `retr`, `ignor`, ...).
_WENT_ON = re.compile(r"\b(?:[Ii]gnor(?:e|ed|ing)|IGNORED|[Ss]kipp(?:ed|ing)|[Ff]all(?:ing)? ?back|[Rr]ecover(?:ed|ing)"
                      r"|[Cc]ontinuing)\b")
_WENT_ON_STEMS: Final = ("ignor", "skipp", "fall", "recover", "continuing")
_LEVEL_WORD = re.compile(r"\b(?:[Ww]arning|WARNING|WARN|INFO|DEBUG|TRACE|NOTICE)\b")
_LEVEL_STEMS: Final = ("warn", "info", "debug", "trace", "notice")
# glog's and absl's levels (`W0612 10:00:00`, `I0612 ...`) and TensorFlow's (`: I tensorflow/...cc:77]`), at the head.
_GLOG_CALM = re.compile(r"\b[WID]\d{4} \d\d:\d\d:\d\d|: [WID] \S+:\d+\]")


def _code_or_frame(lead: str) -> bool:
    """Whether the text before a class makes its line code or a stack's frame (bounded: the lead's last
    _LEAD_READ characters, its head)."""
    near = lead[-_LEAD_READ:]
    code = _CODE_TAIL_REVERSED.match(near[::-1])
    tail = near[len(near) - code.end():] if code is not None else ""
    if tail and _CODE_WORD.search(tail):
        return True
    if near.rstrip().endswith(("Raises:", "raises:")):
        return True  # a docstring's `Raises: ValueError: if ...`
    if "0x" in near and _HEX_ADDRESS.search(near):
        return True
    if _FRAME_HEAD.match(lead):
        return True
    return bool(near[-1:].isspace() and (near.rstrip().endswith(" at") or near.strip() == "at"))


def _is_count(msg: str) -> bool:
    """Whether a message is a number alone, or a number that a list goes on from (`3, TimeoutError: 0`)."""
    head, _, rest = msg.partition(" ")
    number = head.rstrip(",;|%")
    if not number or not number.replace(".", "", 1).isdigit() or not number.isascii():
        return False
    return not rest or head[-1] in ",;|"


def _went_on(lead: str, body: str) -> bool:
    """Whether the line calls itself a warning or an info / debug record (the words before the class), or says
    what it reports is retried, ignored, skipped, fallen back from or recovered (anywhere in it)."""
    low_lead = lead.lower()
    if any(w in low_lead for w in _LEVEL_STEMS) and _LEVEL_WORD.search(lead):
        return True
    if _GLOG_CALM.search(lead[:_LEAD_READ]):
        return True
    low = body.lower()
    if any(w in low for w in _RETRY_STEMS) and _RETRYING.search(body):
        return True
    return any(w in low for w in _WENT_ON_STEMS) and _WENT_ON.search(body) is not None


# --------------------------------------------------------------------------
# Other languages' uncaught errors: one grammar per language, as data
# --------------------------------------------------------------------------
# Each language's runtime prints the error that ended its program in a line of its own shape; the line is read
# as a Python traceback's last line is (`classify`, through the same exception, errno, status and object-store
# tables), its class being the one the language names, or the runtime's own word where it names none. Learnt
# from each runtime's printing code:
# - Rust (library/std/src/panicking.rs): `thread 'main' panicked at 'msg', src/main.rs:2:5`; since 1.73
#   `thread 'main' panicked at src/main.rs:2:5:` with the message on the next line.
# - Go (src/runtime/panic.go `printpanics`, `fatalthrow`/`throw`; src/runtime/traceback.go): an unrecovered
#   panic prints `panic: <value>` (`[recovered]` after a value recovered, each panic of a nested chain on a line
#   of its own, the last the one that ended the program; since Go 1.25 `[recovered, reraised]` for a value
#   re-panicked, go.dev/issue/71517), for a fault the runtime turned into
#   a panic `panic: runtime error: invalid memory address or nil pointer dereference` then `[signal SIGSEGV:
#   segmentation violation code=... addr=... pc=...]`, then `goroutine N [running]:` and the frames (a function,
#   then `\t/path/file.go:N +0x..`); the runtime's own fatal errors print `fatal error: <what>` (`all
#   goroutines are asleep - deadlock!`, `runtime: out of memory`, `concurrent map writes`). The process exits
#   with status 2. A goroutine dump after `SIGQUIT: quit` is a dump someone asked for (the signal came from
#   outside): it has no `panic:` / `fatal error:` line and is not read.
# - Julia (base/client.jl `display_error`, base/loading.jl's LoadError around an included file's error):
#   `ERROR: LoadError: SystemError: opening file "x": No such file or directory`, `ERROR: LoadError:
#   OutOfMemoryError()`; LoadError (and a worker's `On worker 2:`) only carry the error that decides.
# - Rust's error report (library/std/src/process.rs: `main` returning `Err(e)` prints `Error: {e:?}`): with anyhow
#   (src/fmt.rs) or eyre's default handler the Debug form is the outermost context, a blank line, `Caused by:` alone
#   on its line, then the chain, one cause a line: unnumbered (`    <cause>`) where there is one cause, numbered
#   (`    0: <cause>`, `    1: ...`, the number right-aligned in five columns) where there are more, a cause's further
#   lines indented under it; eyre adds a `Location:` block, anyhow a `Stack backtrace:`. color-eyre (handler.rs)
#   prints `Error:` with nothing after it and the whole chain numbered under it, the outermost first (`   0: <outer>`,
#   `   1: <cause>`), then `Location:`, sections, and `Backtrace omitted. Run with RUST_BACKTRACE=1 ...`. The chain
#   goes from the outermost context to the deepest cause: the deepest decides, as a Python chain's first member does.
#   `Error: <words>` alone is any command-line tool's last line (clap's, a shell script's): no report without
#   its chain (`Language.chain`).
# - Fortran, Intel's runtime (ifort, ifx: libifcore): `forrtl: severe (38): error during write, unit 50, file /x`,
#   `forrtl: error (78): process killed (SIGTERM)`; its number decides (catalog/exceptions.yaml
#   `fortran_runtime_errors`: an errno, a signal, or a read or write that failed with no errno), its text read after
#   `forrtl: ` with the number. `forrtl: warning (N)` and `info` are no end. The OS's error it printed before the
#   numbered line (`forrtl: No space left on device`) is any program's `prog: <strerror>` (the storage reader's).
# - Fortran, GNU's runtime (libgfortran/runtime/error.c): `Fortran runtime error: Cannot open file 'x': No such file
#   or directory`, after `At line 12 of file io.f90 (unit = 10)`; the message's errno decides as an OSError's does.
# - Fortran's ERROR STOP with a character stop code (gfortran's libgfortran/runtime/stop.c `error_stop_string`:
#   `ERROR STOP ` and the code's text, then exit status 1; Fortran 2008): the program's own words for why it stopped.
#   A numeric code or none (`ERROR STOP 1`, `ERROR STOP`) says nothing of why: no record (the program's message, if
#   any, is on the lines before).
# The abort conventions of the HPC frameworks many scientific codes are built on, read as a language's are (their
# message through the same tables: a CUDA/HIP error, an errno, a device's memory; else the program's own exception):
# - AMReX (AMReX-Codes/amrex Src/Base/AMReX.cpp `Error_host` through `write_lib_id` and
#   `write_to_stderr_without_buffering`): `amrex::Error::<rank>::<msg> !!!` for amrex::Error, `amrex::Abort::<rank>::
#   <msg> !!!` for amrex::Abort (PeleC, WarpX, Nyx, MFIX-Exa, ERF, every AMReX code), then ParallelDescriptor::Abort;
#   its signal handler's `SIGABRT` and `See Backtrace.<rank> file for details` after it are the abort's.
# - QUDA's errorQuda (lattice/quda include/util_quda.h and lib/util_quda.cpp `errorQuda_`): the output prefix (`MG
#   level 0 (GPU): `), `ERROR: <msg>`, then ` (rank <N>, host <H>, <file>:<line> in <func>())`, then comm_abort(1);
#   the `last kernel called was (...)` line after it is part of the record.
# The MPI launchers' MPI_ABORT report (extract/launcher.py) and the Fortran runtimes' errors (above) are read where
# they are; PETSc's `[N]PETSC ERROR:` banner and Kokkos::abort's bare message are not read here.
# Java's `Exception in thread "main" java.io.IOException: msg` and its `Caused by: ...` chain, and C++'s
# `terminate called after throwing an instance of 'T'` + `what(): msg` are read elsewhere (`spelled_exception`:
# the words before the class; extract/exceptions.py `_terminate`: a two-line record).


@dataclass(frozen=True, slots=True)
class Chain:
    """How a language's error report prints the error's causes on the lines after its error line, one a line, from
    the outermost to the deepest (Rust's anyhow / eyre `Caused by:` block, see above)."""

    opens: re.Pattern[str]  # the line that opens the chain, alone on its line (`Caused by:`)
    gap: int  # at most this many lines after the error's line
    item: re.Pattern[str]  # a cause's line: its number (`n`, where numbered) and its text (`msg`)
    span: int  # a cause's line at most this many lines after the chain opened
    literals: tuple[str, ...]  # prefilter words of the opening line and of a cause's line the readers know
    ends: re.Pattern[str]  # a line that ends the chain: what the report prints after it (a backtrace, a location)
    end_literals: tuple[str, ...]  # prefilter words of those lines


@dataclass(frozen=True, slots=True)
class Language:
    """How one language's runtime prints the error that ended its program (see above)."""

    name: str
    line: re.Pattern[str]  # the error's line: groups `msg`, and `cls` where the language names a class
    cls: str  # the exc_type where the line names no class (Go's `panic`, `fatal error`)
    literals: tuple[str, ...]  # prefilter words: every such line holds one of them
    # messages its runtime raises for a fault signal (the program crashed on it: app.crash) -> the signal, or ""
    # where the signal is named only on the line after (`signal_line`)
    signals: tuple[tuple[str, str], ...] = ()
    signal_line: re.Pattern[str] | None = None  # the line naming the signal after the error's (group `sig`)
    # classes its runtime throws for a signal it caught (a language that names a class) -> the signal
    signal_classes: tuple[tuple[str, str], ...] = ()
    frame: re.Pattern[str] | None = None  # a line of its stack (claimed: part of the record, never unrecognized)
    # the chain of causes after the error's line; where set, the error's line alone is no record of the language
    # (`Error: x` is any tool's words): only the line with its chain is (`report_line`, `chain_opens`, `chain_item`)
    chain: Chain | None = None
    # ... but for a message in a form only the language prints, a report by itself (group `msg`: what it says)
    alone: re.Pattern[str] | None = None
    # the runtime's own mark at the end of the message's line, no word of the program's (AMReX's ` !!!`): cut off
    tail: str = ""


PANIC_CLASS: Final = "panic"  # the exc_type of a panic's reading (Rust's, Go's)
RUST_REPORT_CLASS: Final = "Error"  # the exc_type of a Rust error report's reading (what `main` printed it as)
# Go's runtime names the signal behind a panic or a fatal error on the line after it (runtime/signal_unix.go
# `sighandler` / traceback printing): `[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1092953]`.
# ... and a frame's file line (runtime/traceback.go): `\t/go/src/app/main.go:42 +0x111`, with GOTRACEBACK=system
# ` fp=0x... sp=0x... pc=0x...` after it.
_GO_FRAME = re.compile(r"^\s*[^\s]{0,300}\.go:\d+ \+0x[0-9a-f]+(?: fp=0x[0-9a-f]+ sp=0x[0-9a-f]+ pc=0x[0-9a-f]+)?\s*$")
_GO_SIGNAL_LINE = re.compile(r"^\s*\[signal (?P<sig>SIG[A-Z0-9]{2,10}): [^\]]{0,200}\]\s*$")
GO_FATAL_CLASS: Final = "fatal error"  # the exc_type of Go's runtime's fatal error
_JULIA_CLASS = r"(?P<cls>(?:[A-Z]\w{0,80}\.){0,4}[A-Z]\w{0,80}(?:Error|Exception))"
LANGUAGES: Final[tuple[Language, ...]] = (
    Language("rust", re.compile(r"^\s*thread '[^']{0,200}' panicked at "
                                r"(?:'(?P<rmsg>.*)', \S+:\d+:\d+|\S+:\d+:\d+:?\s*(?P<rnext>.*))$"),
             PANIC_CLASS, ("panicked at",)),
    Language("go", re.compile(r"^\s*panic: (?P<msg>.*)$"), PANIC_CLASS,
             ("panic: ",),
             # runtime/panic.go `panicmem`: a SIGSEGV or SIGBUS on a bad address (runtime/signal_unix.go sigpanic)
             signals=(("runtime error: invalid memory address or nil pointer dereference", "SIGSEGV"),),
             signal_line=_GO_SIGNAL_LINE, frame=_GO_FRAME),
    # runtime/signal_unix.go sigpanic / `fatalsignal`: a fault signal in the runtime or in C code called through cgo
    # (`unexpected signal during runtime execution`), a fault on memory the program asked to be told of (`fault`);
    # the signal is named on the next line
    Language("go-fatal", re.compile(r"^\s*fatal error: (?P<msg>\S.*)$"), GO_FATAL_CLASS, ("fatal error: ",),
             signals=(("unexpected signal during runtime execution", ""), ("fault", "")),
             signal_line=_GO_SIGNAL_LINE, frame=_GO_FRAME),
    Language("rust-report", re.compile(r"^Error:(?:[ \t]+(?P<msg>.*))?$"), RUST_REPORT_CLASS, ("Error",),
             chain=Chain(re.compile(r"^\s*Caused by:\s*$"), 3,
                         re.compile(r"^\s*(?:(?P<n>\d{1,3}): )?(?P<msg>\S.*)$"), 40, ("Caused by:", "(os error "),
                         # anyhow's `Stack backtrace:`, eyre's `Location:`, color-eyre's section rules and its
                         # `Backtrace omitted. Run with RUST_BACKTRACE=1 ...` (color-eyre/src/writers.rs)
                         re.compile(r"^\s*+(?:Stack backtrace:|Location:|Backtrace omitted\b"
                                    r"|\u2501*+ ?(?:SPANTRACE|BACKTRACE)\b)"),
                         ("Stack backtrace:", "Location:", "Backtrace omitted", "SPANTRACE", "BACKTRACE")),
             # std's io::Error in its Debug form (library/std/src/io/error/repr_bitpacked.rs, error.rs `Debug`):
             # `Os { code: 28, kind: StorageFull, message: "No space left on device" }` (`main` returning an
             # io::Result), the message the OS's text for the code; `Custom { kind: Other, error: "..." }`
             alone=re.compile(r'^(?:Os \{ code: -?\d{1,10}, kind: \w{1,40}, message: '
                              r'|Custom \{ kind: \w{1,40}, error: )"(?P<msg>[^"]{0,500})" \}$')),
    # Fortran's runtimes (`FORTRAN_CLASS`, `GFORTRAN_CLASS` below): their message decides through the tables
    Language("fortran", re.compile(r"^\s*forrtl: (?P<msg>(?:severe|error) \(\d{1,4}\): \S.*)$"), "forrtl",
             ("forrtl: ",)),
    Language("gfortran", re.compile(r"^\s*Fortran runtime error: (?P<msg>\S.*)$"), "Fortran runtime error",
             ("Fortran runtime error: ",)),
    Language("gfortran-stop", re.compile(r"^\s*ERROR STOP (?P<msg>(?!-?\d{1,12}\s*$)\S.*)$"), "ERROR STOP",
             ("ERROR STOP ",)),
    Language("amrex", re.compile(r"^\s*(?P<cls>amrex::(?:Error|Abort))::\d{1,9}::(?P<msg>.*)$"),
             "amrex::Abort", ("amrex::Error::", "amrex::Abort::"), tail="!!!"),
    Language("quda", re.compile(r"^(?:[^\n]{0,120}?: )?ERROR: (?P<msg>\S.*) \(rank \d{1,9}, host [^\s,()]{1,255}, "
                                r"[^\s:()]{1,255}:\d{1,9} in [^\s()]{1,300}\(\)\)\s*$"), "errorQuda", (", host ",)),
    # Julia's signal handlers (src/signals-unix.c) throw into the running task: a SIGSEGV on a write to a mapped page
    # as ReadOnlyMemoryError (`segv_handler`, is_write_fault: jl_readonlymemory_exception; "Julia's report of a
    # SIGSEGV", openucx/ucx#5061), a SIGINT as InterruptException (jl_interrupt_exception)
    Language("julia", re.compile(r"^\s*ERROR: (?:LoadError: |On worker \d+:\s*){0,4}" + _JULIA_CLASS
                                 + r"(?:\((?P<args>.*)\))?(?::[ \t]?(?P<msg>.*))?$"), "", ("Error", "Exception"),
             signal_classes=(("ReadOnlyMemoryError", "SIGSEGV"), ("InterruptException", "SIGINT"))),
)
# JavaScript on Node.js: V8 prints an Error as its `name: message` line and then its stack, one frame a line, `    at
# <function> (<file>:<line>:<column>)`, `    at <file>:<line>:<column>` for an anonymous one, `node:<module>` for
# Node's own (the V8 stack trace API, v8.dev/docs/stack-trace-api; Node's `util.inspect` of an Error). The name line
# alone is any `word: words`; the frame right after it makes it an error (extract/exceptions.py holds the line until
# the next one comes). The AWS SDK for JavaScript v3 names a service's error by the service's own code
# (`SlowDown: UnknownError` thrown from @smithy/smithy-client `throwDefaultError`, as in huridocs/uwazi#7319), so an
# error thrown from its modules whose name is an object store's code reads through that table.
JS_FRAME_LITERALS: Final = (".js:", ".mjs:", ".cjs:", ".ts:", "(node:")
_JS_FRAME = re.compile(r"\s{0,16}at (?:[^()\n]{1,300} \()?(?P<file>(?:file://)?[^\s()]{1,500}?\.(?:js|mjs|cjs|ts)"
                       r"|node:[\w./\-]{1,200}):\d+:\d+\)?\s*$")
_JS_HEAD = re.compile(r"^(?P<cls>[A-Za-z_$][\w$]{0,80}): (?P<msg>\S.*)$")
_AWS_SDK_JS: Final = ("/@aws-sdk/", "/@smithy/", "/aws-sdk/")


def js_frame(body: str) -> str | None:
    """The file of a JavaScript stack frame line (`    at fn (/app/x.js:1:2)`), or None where the line is none."""
    if body.lstrip()[:3] != "at ":  # (the prefix layer took the frame's indentation)
        return None
    m = _JS_FRAME.match(body)
    return m.group("file") if m else None


def js_error_line(body: str) -> Exc | None:
    """A JavaScript error's `name: message` line, as the exception it would be if a stack follows it."""
    m = _JS_HEAD.match(body)
    return Exc(m.group("cls"), m.group("cls"), m.group("msg").strip()) if m else None


def js_exception(body: str, exc: Exc, frame_file: str) -> list[Draft]:
    """What a JavaScript error whose stack begins in `frame_file` says, read as a traceback's last line (terminal)."""
    if any(p in frame_file for p in _AWS_SDK_JS) and exc.cls in object_store_code_table():
        drafts = [_object_store(exc, exc.cls)]
    else:
        drafts, _ = classify(body, exc, False, False)
    for d in drafts:
        if d.kind != "process.signal":
            d.fields["terminal"] = True
    return drafts


# Go's mark of a value re-panicked after a recover (runtime/panic.go printpanics), not part of the value.
_REPANICKED = re.compile(r" \[recovered(?:, reraised)?\]$")
SIGNAL_LINE_LITERALS: Final = ("[signal SIG",)  # every `signal_line` holds it
FRAME_LITERALS: Final = (" +0x",)  # every `frame` holds it
# the prefilter's words for them (a class's suffix is the final line's own word already: EXC_SUFFIXES)
LANGUAGE_LITERALS: Final = (*dict.fromkeys(w for lang in LANGUAGES for w in lang.literals if w not in EXC_SUFFIXES),
                            *(w for lang in LANGUAGES if lang.chain is not None
                              for w in (*lang.chain.literals, *lang.chain.end_literals)),
                            *SIGNAL_LINE_LITERALS, *FRAME_LITERALS)
PANIC_LITERALS: Final = LANGUAGES[0].literals  # Rust's (kept for the readers that name it)
_SIGNAL_MESSAGES: Final = {(lang.cls, msg): sig for lang in LANGUAGES for msg, sig in lang.signals}
_SIGNAL_CLASSES: Final = {cls: sig for lang in LANGUAGES for cls, sig in lang.signal_classes}


def signal_named_after(exc: Exc) -> bool:
    """Whether another runtime's error says its signal only on the line after it (`Language.signal_line`)."""
    return _SIGNAL_MESSAGES.get((exc.qual, exc.msg)) == ""


def foreign_frame(body: str) -> bool:
    """Whether the line is a frame of another runtime's stack (`Language.frame`)."""
    return " +0x" in body and any(lang.frame is not None and lang.frame.match(body) for lang in LANGUAGES)


def signal_line(body: str) -> str | None:
    """The signal a runtime's signal line names (`[signal SIGSEGV: ...]`), if the line is one."""
    for lang in LANGUAGES:
        if lang.signal_line is not None and "[signal " in body:
            m = lang.signal_line.match(body)
            if m is not None:
                return m.group("sig")
    return None


def foreign_exception(body: str) -> Exc | None:
    """Another language's uncaught error at the head of its line (LANGUAGES), as the exception it stands for;
    None where the line is no such record, or says it is a warning or a step retried or gone on from."""
    for lang in LANGUAGES:
        if lang.chain is not None or not any(w in body for w in lang.literals):
            continue  # (a report's error line is one only with its chain: report_line)
        m = lang.line.match(body)
        if m is None:
            continue
        groups = m.groupdict()
        msg = groups.get("msg") or groups.get("rmsg") or groups.get("rnext") or ""
        if not msg and groups.get("args"):
            msg = _unquote(groups["args"])
        msg = _REPANICKED.sub("", msg.strip())  # the runtime's own mark, no word of the program's that it went on
        if lang.tail and msg.endswith(lang.tail):
            msg = msg[:-len(lang.tail)]
        cls = groups.get("cls") or lang.cls
        if _went_on("", _REPANICKED.sub("", body.rstrip())):
            return None
        return Exc(cls, cls.rsplit(".", 1)[-1], msg.strip())
    return None


class ReportLine(NamedTuple):
    """A language's error line whose chain of causes may follow (`Language.chain`)."""

    lang: Language
    msg: str  # the outermost error's text ("" where the chain holds it too: color-eyre's `Error:` alone)


def report_line(body: str) -> ReportLine | None:
    """The line at which a language's error report begins (Rust's `Error: <outer context>`), if the line has its
    shape; it is a report only if its chain follows (`chain_opens`, `chain_item`)."""
    for lang in LANGUAGES:
        if lang.chain is None or not any(w in body for w in lang.literals):
            continue
        m = lang.line.match(body)
        if m is not None:
            return ReportLine(lang, (m.group("msg") or "").strip())
    return None


def report_alone(report: ReportLine) -> str | None:
    """What a report's error line says where its message is in a form only the language prints (`Language.alone`:
    Rust's `Os { code: 28, kind: StorageFull, message: "No space left on device" }`): a report with no chain."""
    alone = report.lang.alone
    m = alone.match(report.msg) if alone is not None else None
    return m.group("msg") if m is not None else None


def chain_opens(report: ReportLine, body: str) -> bool:
    """Whether the line opens the report's chain of causes (`Caused by:` alone on its line; Java's `Caused by:
    <class>: ...` is no such line)."""
    chain = report.lang.chain
    return chain is not None and any(w in body for w in chain.literals) and chain.opens.match(body) is not None


def chain_ends(report: ReportLine, body: str) -> bool:
    """Whether the line is what the report prints after its chain (a backtrace's or a location's header)."""
    chain = report.lang.chain
    return (chain is not None and any(w in body for w in chain.end_literals)
            and chain.ends.match(body) is not None)


def chain_item(report: ReportLine, body: str, after: int, last: int) -> tuple[int, str] | None:
    """The cause a line of an open chain holds, `after` lines after the chain opened (the error's line where the
    chain is numbered right under it), with its number (`last` where the line has none: a cause's further line, or
    the one cause anyhow prints unnumbered), or None where the line is no cause of it: past the chain's span,
    numbered `n` where fewer than n+1 lines came since the chain opened, or numbered no higher than the last cause
    seen (a numbered list after the chain: a backtrace's frames, a span trace's)."""
    chain = report.lang.chain
    if chain is None or not 0 < after <= chain.span:
        return None
    m = chain.item.match(body)
    if m is None:
        return None
    n = m.group("n")
    if n is not None and (int(n) >= after or int(n) <= last):
        return None
    return (last if n is None else int(n)), m.group("msg").strip()


def report_drafts(report: ReportLine, chain: str) -> list[Draft]:
    """A report's reading at one of its chain's lines: the chain so far, the outermost error to the cause on this
    line joined as anyhow's `{:#}` prints it (`outer: cause: deeper cause`), read as a traceback's last line's message
    (errno, storage, network, CUDA words, the exception table's rows; the causes above the deepest say what it is
    about: a `connect` that was refused). Marked `terminal`: the report is what `main` printed as it returned, its
    process's last word; each deeper cause's reading comes on a later line of the stream and so supersedes the one
    before it (engine/normalise.py `terminal_lines`): the deepest cause that a reader knows decides. Marked `report`
    too: the cause's `why` names the report, not a traceback missing from the evidence (engine/verdict.py)."""
    exc = Exc(report.lang.cls, report.lang.cls, chain)
    drafts, _ = classify(chain, exc, False, False)
    for d in drafts:
        if d.kind == "app.exception":
            d.fields["message"] = clip(chain)
        if d.kind != "process.signal":
            d.fields["terminal"] = True
            d.fields["report"] = True
    return drafts


# HDF5's error stack (HDFGroup/hdf5 src/H5Eint.c, H5E__walk_cb / H5E__print: the library prints it to stderr where a
# call of its API fails, unless the program turned the automatic printing off). One record: a header per error class,
# `HDF5-DIAG: Error detected in HDF5 (1.14.0) MPI-process 14:` (`thread N` where MPI is not initialised, or in a
# serial build), then one frame a line from the API call down to the failure, `  #000: <file> line <N> in
# <function>(): <message>` numbered from 0, each with its `    major: <class>` and `    minor: <class>` lines
# (H5Epubgen.h's major and minor messages). The innermost frame is the failure itself, the frames above it the calls
# that passed it up; its message decides as an exception's would (the errno HDF5 quotes from the system call that
# failed, `unable to lock file, errno = 524, ...`: extract/codes.py errno_of; else the library's own refusal, the
# program's use of it). A stack's frames may be posted without their header (a thread's excerpt): a frame alone is one.
HDF5_CLASS: Final = "HDF5"  # the exc_type of an HDF5 stack's reading
_HDF5_HEAD = re.compile(r"^\s*[\w -]{1,40}-DIAG: Error detected in [\w -]{1,40} "
                        r"\(\d{1,3}\.\d{1,3}\.\d{1,4}[\w.-]{0,20}\)(?: MPI-process \d{1,9}| thread \d{1,24})?:\s*$")
_HDF5_FRAME = re.compile(r"^\s*#(?P<n>\d{3,4}): \S{1,1000} line \d{1,7} in (?P<func>H5\w{0,100})\(\)"
                         r"(?:: (?P<msg>\S.{0,4000}))?$")
_HDF5_CLASS_LINE = re.compile(r"^\s*(?:major|minor): \S")
# HDF5's sec2 (and log, direct, core) driver's report of a read or write that failed puts ctime(3)'s text in it,
# newline and all (src/H5FDsec2.c H5FD__sec2_read / _write: `file write failed: time = %s, filename = '%s', file
# descriptor = %d, errno = %d, error message = '%s', buf = %p, ...` with HDctime(&mytime)): the message is cut after the
# year, and its errno is on the next line, `, filename = '...', ..., errno = 28, error message = 'No space left on
# device', ...` (h5py/h5py#1120). The two lines are one message.
_CTIME_CUT = re.compile(r"\btime = [A-Za-z]{3} [A-Za-z]{3} [ \d]?\d \d\d:\d\d:\d\d \d{4}\s*$")
_CTIME_REST = re.compile(r"^\s*, filename = '")
CTIME_REST_LITERAL: Final = ", filename = '"
HDF5_LITERALS: Final = ("-DIAG: Error detected in ", " in H5", "major: ", "minor: ", CTIME_REST_LITERAL)


def ctime_cut(body: str) -> bool:
    """Whether the line ends in HDF5's `time = <ctime>`, its message going on on the next line (_CTIME_CUT)."""
    return "time = " in body and _CTIME_CUT.search(body) is not None


def ctime_rest(body: str) -> bool:
    """Whether the line is the rest of an HDF5 driver's message that ctime's newline cut (`, filename = '...`)."""
    return CTIME_REST_LITERAL in body and _CTIME_REST.match(body) is not None


def hdf5_head(body: str) -> bool:
    """Whether the line is an HDF5 error stack's header (`HDF5-DIAG: Error detected in HDF5 (x.y.z) ...:`)."""
    return "-DIAG: " in body and _HDF5_HEAD.match(body) is not None


def hdf5_frame(body: str) -> tuple[int, str] | None:
    """An HDF5 error stack's frame: its number and its message (the function's name where it has none)."""
    if " in H5" not in body:
        return None
    m = _HDF5_FRAME.match(body)
    if m is None:
        return None
    return int(m.group("n")), (m.group("msg") or m.group("func")).strip()


def hdf5_class_line(body: str) -> bool:
    """Whether the line is a frame's `major:` or `minor:` line."""
    return _HDF5_CLASS_LINE.match(body) is not None


def hdf5_drafts(message: str) -> list[Draft]:
    """What an HDF5 stack's frame says, read as a traceback's last line's message (errno, set-up, the exception
    table's rows). Marked `terminal` and `report`, as a report's chain is (report_drafts): each deeper frame comes on a
    later line of the stream and so supersedes the one before it, unless it says less (engine/normalise.py
    `terminal_lines`): the innermost frame that says something decides."""
    exc = Exc(HDF5_CLASS, HDF5_CLASS, message)
    drafts, _ = classify(message, exc, False, False)
    for d in drafts:
        if d.kind != "process.signal":
            d.fields["terminal"] = True
            d.fields["report"] = True
    return drafts


# gRPC's Python error prints its status on a line of its own under the class's (`grpc._channel._InactiveRpcError:
# <_InactiveRpcError of RPC that terminated with:`, then `\tstatus = StatusCode.UNAVAILABLE`): the status the RPC
# ended with, read as that error's message (the class line before it says nothing the status does not).
_GRPC_STATUS_LINE = re.compile(r"^\s*status = StatusCode\.[A-Z_]+\s*$")
GRPC_STATUS_CLASS: Final = "StatusCode"
# ... and the same error with its status on the class's own line (its lines joined, as a post or a collector flattens
# them: `grpc._channel._MultiThreadedRendezvous: <_MultiThreadedRendezvous of RPC that terminated with: status =
# StatusCode.RESOURCE_EXHAUSTED details = "Sent message larger than max (...)"`, flwrlabs/flower#3006), in any of gRPC
# Python's RPC error classes (grpc/grpc src/python/grpcio/grpc/_channel.py `_InactiveRpcError`,
# `_MultiThreadedRendezvous`, before 1.2x `_Rendezvous`; grpc/aio `AioRpcError`), after a logger's words too: the
# status and the details after it are the error's message. The class line without a status says nothing.
_GRPC_CALL_ERROR = re.compile(r"<(?:_InactiveRpcError|_MultiThreadedRendezvous|_Rendezvous|AioRpcError) of RPC that "
                              r"terminated with:\s{0,40}(?=status = StatusCode\.)")
GRPC_CALL_LITERAL: Final = " of RPC that terminated with:"


def _unquote(args: str) -> str:
    """A repr's arguments as the message: the first quoted string's text (`'boom'` -> boom), else the arguments."""
    args = args.strip()
    if args[:1] in "'\"":
        end = args.find(args[0], 1)
        return args[1:end] if end > 0 else args[1:]
    return args[:-1] if args.endswith(")") else args


# A Go error chain's link words at the head of their line: the error on the line is the cause of the one above it,
# printed in Go's words (`Code: message`), not an uncaught exception however its code is spelled. aws-sdk-go's awserr
# (aws/awserr/types.go SprintError: `<code>: <message>`, then `\n\t<extra>` and `\ncaused by: <origErr>`: `caused by:
# UnmarshalError: failed to unmarshal error message` under `SerializationError: failed to decode S3 XML error
# response` and `\tstatus code: 417, request id: ...`), the store client of JuiceFS, Mountpoint's predecessors, and
# every Go program built on the SDK's v1. Lower case and at the line's head: Java's `Caused by: java.io.IOException:
# ...` (a JVM's chain, read by the traceback model) and anyhow's `Caused by:` block are not it.
GO_CHAIN_LINKS: Final = frozenset({"caused by:"})


def spelled_exception(body: str) -> Exc | None:
    """The uncaught exception a line spells somewhere other than at its head (see above), if any: the first
    class-shaped word followed by one of the spellings, or a panic. None where the line is no such record."""
    if "panicked at" in body:
        rust = foreign_exception(body)  # Rust's panic: not at the line's head when a logger's words come first
        if rust is not None:
            return rust
    g = _GRPC_STATUS_LINE.match(body) if GRPC_STATUS_LITERAL in body else None
    if g is not None:
        return Exc(GRPC_STATUS_CLASS, GRPC_STATUS_CLASS, body.strip())
    call = _GRPC_CALL_ERROR.search(body) if GRPC_CALL_LITERAL in body and GRPC_STATUS_LITERAL in body else None
    if call is not None:
        return Exc(GRPC_STATUS_CLASS, GRPC_STATUS_CLASS, body[call.end():].strip())
    spots = sorted(i for s in _SPELL_SUFFIXES for i in _find_all(body, s))
    if not spots:
        # Python's OSError without its class, ending a logger's error record
        return bare_oserror(body, after_words=True) if BARE_OSERROR_LITERAL in body else None
    seen_end = -1
    for at in spots[:_SPELL_TRIES]:
        found = _spelled_at(body, at, seen_end)
        if found is not None:
            exc, lead = found
            if _went_on(lead, body):
                return None  # a warning's, an info's, a step retried or gone on from: not what the process ended with
            if lead.strip() in GO_CHAIN_LINKS:
                return None  # a Go error chain's link: the cause of the error above it, in Go's words, no exception
            return exc
        seen_end = at
    # Python's OSError without its class, ending a logger's error record
    return bare_oserror(body, after_words=True) if BARE_OSERROR_LITERAL in body else None


def _find_all(body: str, word: str) -> list[int]:
    out: list[int] = []
    i = body.find(word)
    while i >= 0 and len(out) < _SPELL_TRIES:
        out.append(i)
        i = body.find(word, i + len(word))
    return out


def _spelled_at(body: str, at: int, seen_end: int) -> tuple[Exc, str] | None:
    """The exception spelled by the class-shaped word around `at` (where a suffix begins), if that word is one,
    with the text before it."""
    tail = _IDENT_RUN.match(body, at, at + _CLASS_MAX)
    end = tail.end() if tail is not None else at
    start = at
    while start > 0 and body[start - 1] in _IDENT_CHARS:
        start -= 1
        if at - start > _CLASS_MAX:
            return None  # a run of word characters longer than any class's name
    if start <= seen_end or end - at >= _CLASS_MAX:
        return None  # the same word as a spot already looked at, or no class's name
    cls = body[start:end]
    if not cls[:1].isupper():
        return None  # a private class (gRPC's `_InactiveRpcError`) says nothing its status line under it does not
    if not (any(cls.endswith(s) and len(cls) > len(s) for s in _SPELL_SUFFIXES) or cls in _builtin_exceptions()):
        return None
    qstart = start
    while qstart > 1 and body[qstart - 1] == "." and body[qstart - 2] in _IDENT_CHARS and start - qstart < _QUAL_MAX:
        j = qstart - 1
        while j > 0 and body[j - 1] in _IDENT_CHARS and qstart - j < _CLASS_MAX:
            j -= 1
        qstart = j
    before = body[qstart - 1] if qstart > 0 else " "
    if before in "/\\-$%@#&*+~" or before in _IDENT_CHARS or body[max(qstart - 2, 0):qstart] == "::":
        return None  # a path's, an option's, a variable's or a C++ name's part
    m = _AFTER_CLASS.match(body, end)
    if m is None:
        return None
    lead = body[:qstart]
    if _code_or_frame(lead):
        return None
    qual = body[qstart:end]
    if m.group("classrepr"):
        if not lead.endswith(("<class '", "<type '")):
            return None
        return Exc(qual, cls, (m.group("cmsg") or "").strip()), lead
    inner = m.group("inner")
    if inner is not None:
        if not (any(inner.endswith(s) for s in EXC_SUFFIXES) or inner in _builtin_exceptions()):
            return None
        return Exc(inner, inner, (m.group("wmsg") or "").strip()), lead
    args = m.group("args")
    if args is not None:
        if m.group("bare") is not None and cls not in _builtin_exceptions():
            return None  # `Name()`: a call, unless a built-in exception's repr (`TimeoutError()`)
        return Exc(qual, cls, _unquote(body[m.start("args"):])), lead
    msg = (m.group("msg") or "").strip()
    if before in "'\"`" and before in msg:
        msg = msg[:msg.rindex(before)].rstrip()  # quoted (a JSON string, a person's quote): up to its close
    if _is_count(msg):
        return None  # a count by class (`ConnectionError: 0, TimeoutError: 3`): a table of numbers, no exception
    return Exc(qual, cls, msg), lead


# A failed assert's line (the process aborts right after: SIGABRT), read only where it says what it is:
# - glibc's __assert_fail (assert/assert.c: `prog: file.c:291: func: Assertion `expr' failed.`) is not read: the
#   invariant of a program or of a library inside it (the Neuron runtime's `tdrv_get_number_devices_on_instance:
#   Assertion `device_count != 0' failed.`) broken by what it met, a device, a short read, a runtime it did not
#   expect (AlexeyAB/darknet#3496: a K80's ECC; marbl/canu#734: the file system), which names no cause of its own.
# - CUDA's device-side assert (the device runtime's __assertfail, as PyTorch's kernels print it: `EmbeddingBag.cu:128:
#   EmbeddingBag_updateOutputKernel_sum_mean: block: [0,0,0], thread: [0,0,0] Assertion `input[emb] >= 0 && ...`
#   failed.`, the expression closed by a backtick, one line per failing thread): the kernel's assert, which the host
#   sees as CUDA's result 710, cudaErrorAssert (`device-side assert triggered`): read as that result
#   (catalog/cuda.yaml), as the host's later `CUDA error: device-side assert triggered` is.
# The whole line (a title or prose that quotes one is not read).
_DEVICE_ASSERT = re.compile(r"^\s*[^\s:][^:]{0,500}:\d{1,7}: .{1,2000}?: block: \[\d+,\d+,\d+\], thread: "
                            r"\[\d+,\d+,\d+\] Assertion `(?P<expr>.{0,4000})` failed\.\s*$")
ASSERT_LITERALS: Final = ("Assertion `",)
DEVICE_ASSERT_CODE: Final = 710  # cudaErrorAssert


def device_assert(body: str) -> list[Draft]:
    """A CUDA kernel's failed assert (_DEVICE_ASSERT), read as the CUDA result it makes (cudaErrorAssert); [] where
    the line is none."""
    if "Assertion `" not in body or "` failed." not in body or _DEVICE_ASSERT.match(body) is None:
        return []
    row = cuda_table()[DEVICE_ASSERT_CODE]
    return [Draft("app.cuda_error", _fields(error=row.cuda_class, message=clip(body.strip()), cuda_error=row.name,
                                            cuda_code=DEVICE_ASSERT_CODE))]


# A C++ framework's fatal log record: glog's and absl's `LOG(FATAL)` and failed `CHECK`s (`F0407 01:31:07.673615
# 5759 math_functions.cpp:250] Check failed: a <= b`, absl's `F0000 00:00:1739961418.129995 ...`, glog 0.6's with the
# year, `F20230424 13:28:15.469203 2128115 logging_unittest.cc:680] ...`, google/glog src/logging.cc
# LogMessage::Init's `FLAGS_log_year_in_prefix`; absl's before its log is initialised, the seconds since the epoch
# after `00:00:`, behind a prefix as well as at the line's head) and TensorFlow's own form (`2017-11-28
# 16:36:15.720252: F tensorflow/core/lib/io/zlib_outputbuffer.cc:77] Check failed: ...`, before 1.0 without the
# date). The process aborts right after it: the C++ counterpart of an uncaught exception's last line. glog's header is
# read where it starts the line, else behind a prefix the prefix layer leaves (a logger's stamp) after a space, `]`
# or `:`.
_FATAL_LOG = re.compile(
    r"^\s*\[?(?:F\d{4}(?:\d{4})? \d\d:\d\d:\d+(?:\.\d+)?\s+\d+"
    r"|(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?: )?F)"
    r" (?P<where>[\w.@/\\-]+:\d+)\]\s?(?P<msg>.*)$"
)
_FATAL_LOG_BEHIND = re.compile(
    r"(?<=[\s\]:>])\[?F\d{4}(?:\d{4})? \d\d:\d\d:\d+(?:\.\d+)? {1,8}\d{1,10}"
    r" (?P<where>[\w.@/\\-]+:\d+)\]\s?(?P<msg>.*)$"
)
# The raw loggers' failed check (RAW_CHECK: what a library logs where the full logger cannot run, in a signal
# handler, an allocator or a mutex): absl's `[mutex.cc : 1908] RAW: Check (v & kMuWriter) != 0 failed: ...`
# (abseil/abseil-cpp absl/base/internal/raw_logging.cc: `[file : line] RAW: ` and no severity, ABSL_RAW_CHECK's
# `Check %s failed: %s`, always FATAL), and glog's RAW_CHECK behind its own header (`F0407 ... file.cc:526] RAW:
# Check false failed: failure 1`, google/glog src/raw_logging.cc), which _FATAL_LOG reads. absl's other RAW records
# name no severity (`[failure_signal_handler.cc : 331] RAW: Signal 11 raised at PC=...` is a warning): not read.
_RAW_CHECK = re.compile(r"(?:^|(?<=[\s\]:>]))\[(?P<where>[\w.@/\\-]+ : \d+)\] RAW: (?P<msg>Check .*)$")
_RAW = "RAW: "
# Ray's C++ logger's fatal record (src/ray/util/logging.cc: severity `C`, a failed RAY_CHECK or RAY_LOG(FATAL); in its
# own processes' logs with the component after the stamp): `[2021-05-25 17:19:12,506 C 30268 30268] pull_manager.cc:338:
#  Check failed: ...` (ray-project/ray#15990), `[... C 44686 99451332] (raylet) node_manager.cc:395: ...`.
_RAY_FATAL_LOG = re.compile(
    r"^\s*\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} C \d{1,10} \d{1,20}\] (?:\([a-z_]{1,32}\) )?"
    r"(?P<where>[\w.@/\\-]+:\d+): ?(?P<msg>.*)$"
)
# Go's logrus at its fatal level (sirupsen/logrus: `Fatal` logs the record, then calls os.Exit(1)), in its text
# formatter's key=value form (`time="2022-07-20T01:54:12Z" level=fatal msg="Error watching fields: Feature not
# supported"`, its message quoted with Go's escapes) and its terminal form (`FATA[0000] validate service connection:
# ...`, the level's first four letters and the seconds since start): the program's last word, the Go counterpart of
# an uncaught exception's line.
_LOGRUS_FATAL = re.compile(r'\blevel=fatal msg="(?P<msg>(?:[^"\\]|\\.){0,4000})"|^\s*FATA\[\d{4,10}\] (?P<tty>\S.*)$')
_LOGRUS_FATAL_WORDS: Final = ("level=fatal msg=", "FATA[")
# A library's own logger that names itself and then the level in brackets, at its fatal level: LightGBM's
# (include/LightGBM/utils/log.h Log::Fatal: `fprintf(stderr, "[LightGBM] [Fatal] %s\n", str_buf)`, then `throw
# std::runtime_error`, which the Python package raises as LightGBMError; `[LightGBM] [Fatal] Machine list file
# doesn't contain the local machine`, microsoft/LightGBM#5918) and its forks' under their own names (GPBoost's
# `[GPBoost] [Fatal] `). The library stops there: the record is the exception's message, its class's line may follow.
_BRACKET_FATAL = re.compile(r"^\s*\[[A-Za-z][\w.\-]{0,40}\] \[Fatal\] (?P<msg>\S.*)$")
_BRACKET_FATAL_WORD: Final = "] [Fatal] "
# Prefilter words for the records read: TensorFlow's dated form, a failed CHECK in glog's form, a raw logger's check,
# logrus's fatal level.
# The prefilter's words for a fatal record: TensorFlow's form, a failed check's words, and TF_CHECK_OK's (TSL's and
# XLA's too: tensorflow/core/platform/status.cc TfCheckOpHelperOutOfLine, `Non-OK-status: <the call> status: <the
# status>`, which only a fatal record prints), so that a status check that failed is read with no other word on its
# line (pytorch/xla's `F0000 00:00:1717141650.890307 9276 pjrt_computation_client.cc:487] Non-OK-status: status
# status: INTERNAL: Core halted unexpectedly: ...`).
FATAL_LOG_LITERALS: Final = (": F ", "Check failed", "] RAW: Check ", "Non-OK-status: ", *_LOGRUS_FATAL_WORDS,
                              _BRACKET_FATAL_WORD)
FATAL_LOG_CLASS: Final = "FATAL"  # the exc_type of a fatal record's reading


def fatal_log(body: str) -> Exc | None:
    """A glog / absl / TensorFlow / Ray / logrus / LightGBM fatal log record (_FATAL_LOG, _RAW_CHECK, _RAY_FATAL_LOG,
    _LOGRUS_FATAL, _BRACKET_FATAL) as the exception it stands for: its message as printed (a raw logger's `RAW: `
    off: the check's words; logrus's quoted message with its escapes undone)."""
    if any(w in body for w in _LOGRUS_FATAL_WORDS):
        g = _LOGRUS_FATAL.search(body)
        if g is not None:
            msg = g.group("tty") if g.group("msg") is None else g.group("msg").replace('\\"', '"')
            return Exc(FATAL_LOG_CLASS, FATAL_LOG_CLASS, msg.strip())
    if "] " not in body:
        return None
    if _BRACKET_FATAL_WORD in body:
        b = _BRACKET_FATAL.match(body)
        if b is not None:
            return Exc(FATAL_LOG_CLASS, FATAL_LOG_CLASS, b.group("msg").strip())
    m = _FATAL_LOG.match(body) or _RAY_FATAL_LOG.match(body)
    if m is None and "RAW: Check " in body:
        m = _RAW_CHECK.search(body)
        if m is not None and " failed" not in m.group("msg"):
            return None
    if m is None and " F" in body:
        m = _FATAL_LOG_BEHIND.search(body)
    if m is None:
        return None
    msg = m.group("msg").strip()
    if msg.startswith(_RAW):
        msg = msg[len(_RAW):]  # (glog's RAW_LOG: its header's F says fatal, as the full logger's)
    return Exc(FATAL_LOG_CLASS, FATAL_LOG_CLASS, msg)


# --------------------------------------------------------------------------
# Classification tables
# --------------------------------------------------------------------------

# Messages that say another rank failed: whatever exception carries them, they
# are symptoms of that failure, never its cause (gloo, c10d stores, NCCL,
# PyTorch's elastic agent).
PEER_FAILURE: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("nccl.communicator_aborted", re.compile(r"communicator was aborted|ncclCommAbort")),
    ("nccl.timeout", re.compile(
        r"Timed out waiting \d+ ?ms for (?:recv|send) operation|timed out after \d+ ?m?s\b"
        r"|Timed out (?:after \d+ seconds )?waiting for clients|[Ss]ocket Timeout|wait timeout after"
        r"|Timeout waiting for key|Watchdog caught collective operation timeout|[Bb]arrier timed out"
        r"|failed to pass monitoredBarrier")),
    ("nccl.remote_error", re.compile(
        r"Connection closed by (?:remote )?peer|Connection closed by localRank|Connection reset by peer|Broken pipe"
        r"|Connection refused"
        # `remote process exited`, JAX's `This most likely indicates that another task died` (a task: a process).
        r"|(?:remote|another|other) (?:worker|process|peer|rank|task)(?:e?s)? (?:\w+ )?"
        r"(?:crash|hang|exit|fail|die|disconnect)\w*"
        r"|typically caused by a remote|remote process exited or there was a network error"
        r"|peer (?:process )?(?:has )?(?:exited|crashed|died|closed|disconnected)"
        r"|failed to recv, got 0 bytes|unexpected EOF|Read error \[|Write error \[|ncclRemoteError"
        # Horovod's shutdown after another rank's exception: "This was caused by an exception on one of the ranks".
        r"|(?:exception|error|failure) on (?:one of the|another|other)"
        r" (?:ranks?|workers?|process(?:es)?)\b(?! group)")),
)
PEER_FAILURE_PATTERNS: Final[dict[str, re.Pattern[str]]] = dict(PEER_FAILURE)
# torch.distributed exception classes (and CuPy's NCCL one) -> nccl.* kind, for the ones whose
# message says nothing the table above knows (a store or rendezvous failure).
DIST_TYPES: Final[dict[str, str]] = {
    "DistBackendError": "nccl.error",
    "DistError": "nccl.error",
    "DistStoreError": "nccl.error",
    "DistNetworkError": "nccl.remote_error",
    "RendezvousError": "nccl.error",
    "RendezvousTimeoutError": "nccl.timeout",
    "RendezvousClosedError": "nccl.error",
    "RendezvousStateError": "nccl.error",
    "RendezvousGracefulExitError": "nccl.error",
    "RendezvousConnectionError": "nccl.remote_error",
    # CuPy's (and so vLLM 0.3's) NCCL wrapper: `cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_INVALID_USAGE: ...`
    "NcclError": "nccl.error",
}
_DIST_MESSAGE = re.compile(r"\bNCCL\b|ncclUniqueId|ProcessGroup|\bc10d\b|[Pp]rocess group|\bgloo\b")
_SIGNAL_EXCEPTION = re.compile(r"got signal:?\s*(?P<num>\d+)")
_KILLED_BY = re.compile(rf"killed by signal: (?P<what>{strsignal_alternation()})")
_SIGNALS_REPR = re.compile(r"<Signals\.(?P<sig>SIG[A-Z0-9]+): \d+>")
# mp.spawn's join: `ProcessExitedException: process 1 terminated with signal SIGKILL`.
_TERMINATED_BY = re.compile(r"\bterminated with signal (?P<sig>SIG[A-Z0-9]+)\b")
# PyTorch's pointer to the enum's documentation after a CUDA (or, on ROCm, HIP) error it raised (c10/cuda's
# c10_cuda_check_implementation: `Search for `cudaErrorX' in https://docs.nvidia.com/cuda/cuda-runtime-api/...`; ROCm's
# hipified build: `Search for `hipErrorInvalidValue' in .../group__HIPRT__TYPES.html`, ROCm/TheRock#2707): a link to
# the docs, not a second error.
_CUDA_HINT = re.compile(r"^\s*Search for `(?:cuda|hip)Error")
# A record of its own at a calm level that names a CUDA error: glog's, absl's and TensorFlow's warning, info and debug
# records (TensorFlow's `W tensorflow/core/common_runtime/gpu/gpu_device.cc:1690] Unable to enable peer access between
# device ordinals 0 and 9, status: Internal: failed to enable peer access from ...: CUDA_ERROR_TOO_MANY_PEERS: peer
# mapping resources exhausted`, tensorflow/tensorflow#58935, after which the job goes on), a record whose level word is
# INFO, DEBUG or TRACE, and libfabric's `<info>`/`<debug>` (its CUDA memory interface logs cudaErrorStubLibrary there
# where it goes on without CUDA, ofiwg/libfabric#7655): a result the program answered itself. A warning word is not
# calm here: PyTorch warns `UserWarning: CUDA initialization: ... Error 804: ...` of the driver it will then lack, and
# NCCL's failures are `NCCL WARN` records. Nor is a calm record of an error that ends the process's use of the GPU
# (the kernel faults and their ECC and NVLink causes, "any further CUDA work will return the same error", the CUDA
# Runtime API's enum says): a program that logs it at INFO has caught it on its way down (icefall's `INFO
# [train.py:1060] Caught exception: CUDA error: an illegal memory access was encountered`).
# The record's level is read by calm_record (below, one definition with says_calm's), and glog's W, I and D headers by
# _GLOG_CALM.
_CALM_LITERALS: Final = ("INFO", "DEBUG", "TRACE", "NOTICE", "<info>", "<debug>", "<trace>", "] ")
_STICKY_CLASSES: Final = frozenset({
    "illegal_address", "misaligned_address", "illegal_instruction", "device_assert", "invalid_pc", "hardware_stack",
    "launch_failure", "launch_timeout", "ecc", "nvlink"})
# Checkpoint writers that report a full or failing file system without an errno. AMReX's plotfile and checkpoint
# writer, VisMF, checks its file stream after each header it writes and stops on a stream gone bad (AMReX-Codes/amrex
# Src/Base/AMReX_VisMF.cpp: `amrex::Error("Write of Vector<Vector<Real>> failed")`, `Write of VisMF::Header failed`,
# `Write of VisMF::FabOnDisk failed`, `Write of Vector<VisMF::FabOnDisk> failed`; Src/Base/AMReX_FArrayBox.cpp's FAB
# data: `FABio_binary::write() failed`, `FABio_ascii::...`, `FABio_8bit::...`): an ofstream's write that failed, no
# errno (Pele-Suite/PeleC#889: the cluster's storage full). Its reads (`Read of ...`) are no row's.
_WRITE_FAILED = re.compile(r"PytorchStreamWriter failed writing file|file write failed|unexpected pos \d+ vs \d+"
                           r"|\bWrite of (?:VisMF::\w{1,20}|Vector<(?:VisMF::FabOnDisk|Vector<Real>)>) failed\b"
                           r"|\bFABio_(?:binary|ascii|8bit)::write\(\) failed")
# ... and torch.save's zip writer that could not create its file (`RuntimeError: File ckpt.pt cannot be opened.`):
# a failed checkpoint write too, when the frames show the save (elsewhere the words mean nothing certain).
_OPEN_FAILED = re.compile(r"\bcannot be opened\b")
# A C++ stream's failure with no errno (`basic_ios::clear: iostream error`) is a failed write when the
# frames show a checkpoint being written (torch.save's zip writer, safetensors).
_IOSTREAM = re.compile(r"iostream error|basic_ios::clear")
_CHECKPOINT_FRAME = re.compile(r"torch/serialization\.py\S*, line \d+, in _?save\b|write_record|safetensors\S*, line"
                               r" \d+, in save")
MAX_FRAMES: Final = 16  # the innermost frames a traceback keeps for classification


_DATALOADER = re.compile(r"DataLoader worker|dataloader's workers|in worker\b|shared memory")
# An exception raised inside torch.distributed's own rendezvous (the env:// and tcp:// handlers, TCPStore
# creation, the elastic rendezvous backends) that says the store or a peer could not be reached or joined in
# time: the rendezvous failed, and what kept the peers apart (an endpoint not up yet, a wrong address, a
# firewall, name resolution) is not in the exception. A symptom, like a peer's failure; a rendezvous error
# about the workload's own settings (an unset MASTER_ADDR, a bad world size) stays the workload's exception.
# The innermost frame of a traceback where fork(2) itself raised: multiprocessing's fork start method
# (Lib/multiprocessing/popen_fork.py `_launch`: `self.pid = os.fork()`) and subprocess's child (Lib/subprocess.py
# `_execute_child`: `_fork_exec(...)`). EAGAIN there is the process / thread limit the job's processes were given
# (fork(2): RLIMIT_NPROC, a cgroup's pids.max), where the same errno elsewhere is a non-blocking call's answer
# (facebookresearch/detectron2#3900: `BlockingIOError: [Errno 11] Resource temporarily unavailable` from a
# DataLoader's workers, `during fork is a system limitation`).
_EXECUTE_CHILD: Final = r"[/\\]subprocess\.py\S*, line \d+, in _execute_child\b"  # (subprocess's child)
_FORK_FRAME = re.compile(r"multiprocessing[/\\]popen_fork\.py\S*, line \d+, in _launch\b|" + _EXECUTE_CHILD)
# A program the process asked the OS to run, where exec(2) or CreateProcess itself raised: subprocess's child
# (Lib/subprocess.py `_execute_child`, which re-raises the child's exec errno, or CreateProcess's on Windows), os.py's
# `_execvpe` under os.execvp / execlp, and the os module's own exec and spawn calls (C functions with no frame of
# their own: the call is the source line under the innermost frame, torchpack's launcher `os.execve('/bin/sh', ...)`).
# ENOENT or EACCES there is a program (or the working directory subprocess was given) that is not on the path the
# job's image or environment gives it, or not executable: the job's set-up, as catalog/exceptions.yaml reads Java's
# `Cannot run program`, Node's `spawn mpirun ENOENT` and Rust's spawn error, never the storage's.
_EXEC_FRAME = re.compile(_EXECUTE_CHILD + r"|[/\\]os\.py\S*, line \d+, in _execvpe\b")
_EXEC_CALL = re.compile(r"\bos\.(?:exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?)\(")
_EXEC_ERRNOS: Final = frozenset({"ENOENT", "EACCES"})
_RENDEZVOUS_FRAME = re.compile(r"torch[/\\]distributed[/\\](?:rendezvous\.py|elastic[/\\]rendezvous[/\\])")
_UNREACHABLE = re.compile(r"timed out|[Tt]imeout|host not found|Name or service not known|name resolution"
                          r"|nodename nor servname|No route to host|Network is unreachable|Connection refused"
                          r"|failed to connect")

# The launcher's own code around the workers: torchrun's elastic agent that starts, polls and reaps the
# worker processes and reads the error files they leave (torch.distributed.elastic.multiprocessing, the agent
# server) and its launch API around the agent (torch/distributed/launcher/api.py: elastic_launch's `__call__` and
# `launch_agent`, which raises ChildFailedError for the workers that failed); torch.multiprocessing.spawn's join
# (mp.spawn: ProcessRaisedException around a worker's traceback,
# ProcessExitedException for a worker's exit code or signal); `accelerate launch`, which waits on its one
# child and raises CalledProcessError with the exit status. An exception whose innermost frame outside the
# Python standard library is here (`JSONDecodeError` from an error.json a dying worker left empty; `process 1
# terminated with exit code 3`) is the launcher failing, or reporting, while it handles a worker's exit:
# never the workload's exception, and nothing about why the worker exited (a worker's own traceback, which
# mp.spawn prints inside its message, is read as a traceback of its own). Signal and errno readings come
# first (`terminated with signal SIGKILL`, `died with <Signals.SIGKILL: 9>`, a full disk under a log tailer).
_LAUNCHER_PLUMBING = re.compile(r"torch[/\\]distributed[/\\]elastic[/\\](?:multiprocessing|agent[/\\]server)[/\\]"
                                r"|torch[/\\]distributed[/\\]launcher[/\\]api\.py"
                                r"|torch[/\\]multiprocessing[/\\]spawn\.py|accelerate[/\\]commands[/\\]launch\.py")
# ... and a program that runs the job as its one child and raises subprocess's CalledProcessError with the child's
# exit status, whatever its own code (LLaMA-Factory's `llamafactory-cli train` running `torchrun`, a GUI running
# `python.exe train.py`, a wrapper running `deepspeed` or `mpirun`): the command it names is a launcher of the job's
# processes or the interpreter running the job's script. It says only that the child failed; the child's own output
# says why. A CalledProcessError of any other command (a build's `ninja`, `git`, `nvidia-smi`) is the workload's, and
# a negative status is the child's signal (read before this, extract/signals.py).
_CHILD_LAUNCH = re.compile(r"^Command '(?:\[')?(?:[^' ,\]]*[/\\])?(?:torchrun|deepspeed|accelerate|mpirun|mpiexec|srun"
                           r"|horovodrun|python[\d.]*(?:\.exe)?)(?:'|\s)")
# A frame's file: `File "/usr/lib/python3.11/json/decoder.py", line 355, in raw_decode`.
_FRAME_FILE = re.compile(r'File "(?P<path>[^"\n]+)"')
# The standard library's directory (`/usr/lib/python3.11/`, pyenv's `.../lib/python3.11/`, Windows `\Lib\`);
# a path under site- or dist-packages is an installed package, not the standard library.
_STDLIB_DIR = re.compile(r"[/\\]lib[/\\]python\d+(?:\.\d+)?[/\\]|\\Lib\\", re.IGNORECASE)


def _stdlib(frame: str) -> bool:
    """A frame of the Python standard library, or of generated code (`File "<string>"`, a dataclass's __init__)."""
    m = _FRAME_FILE.search(frame)
    if m is None:
        return False
    path = m.group("path")
    if path.startswith("<"):
        return True
    return "site-packages" not in path and "dist-packages" not in path and _STDLIB_DIR.search(path) is not None


# Ray's own code from its source tree (`python/ray/...`, its Cython `_raylet.pyx`); installed, under site-packages.
# (Not any `/ray/`: Ray's images run as the user `ray`, the job's code under /home/ray.)
_RAY_SOURCE = re.compile(r"[/\\]python[/\\]ray[/\\]|\.pyx$")


def job_frame(body: str) -> bool:
    """A Python traceback's frame in the job's own code: a `File "..."` line whose file is no installed package's
    (site- or dist-packages), not the standard library's or generated code's, and not Ray's own source."""
    if FRAME.match(body) is None:
        return False
    m = _FRAME_FILE.search(body)
    if m is None or _stdlib(body):
        return False
    path = m.group("path")
    return "site-packages" not in path and "dist-packages" not in path and _RAY_SOURCE.search(path) is None


# torchelastic's @record decorator runs in the worker, around the workload's main: its `wrapper` frame is the
# workload's outermost, and innermost only where the frames below it were cut (a summary's clipped reprint).
_RECORD_WRAPPER = re.compile(r"[/\\]errors[/\\]__init__\.py\S*, line \d+, in wrapper\b")


# Python's report of an exception that ended a thread, not the process (threading's excepthook, `_thread`'s):
# `Exception in thread Thread-4:` / `Exception in thread prefetch (worker):`, `Unhandled exception in thread
# started by <function f at 0x...>`, `Exception ignored in thread started by: <function f at 0x...>`; its
# traceback follows on the next line.
_THREAD_HEADER = re.compile(r"^\s*(?:Exception in thread \S.*:|(?:Unhandled exception|Exception ignored) in thread "
                            r"started by\b.*)\s*$")
THREAD_LITERALS: Final = ("Exception in thread", "exception in thread", "Exception ignored in thread")
# ... and the same report without its header line (a posted excerpt that starts at `Traceback`, a log that cut it):
# threading's excepthook prints the thread's whole stack, whose outermost frame is always the thread's bootstrap in
# the standard library (CPython Lib/threading.py Thread._bootstrap_inner; Python 2's __bootstrap_inner).
_THREAD_ENTRY = re.compile(r'[/\\]threading\.py", line \d+, in _{1,2}bootstrap(?:_inner)?\b')
# An installed package's code (not the workload's own files): where a thread whose first frame is there was started.
_INSTALLED = re.compile(r"[/\\](?:site|dist)-packages[/\\]")


# Python's report of an exception it could not raise and went on from (sys.unraisablehook's default output, CPython
# Python/errors.c `PyErr_FormatUnraisable` / `write_unraisable_exc`): `Exception ignored in: <function X.__del__ at
# 0x...>` (a finaliser, a weakref callback, a generator closed at exit: PyTorch's `_MultiProcessingDataLoaderIter.
# __del__` at every shutdown), `Exception ignored in atexit callback: <function f at 0x...>`, `Exception ignored on
# calling ctypes callback function: ...`, `Exception ignored in sys.unraisablehook: ...`, 3.13's `Exception ignored
# while ...`; its traceback follows on the next line. Nothing was raised into the program: no failure of the run.
_IGNORED_HEADER = re.compile(r"^\s*Exception ignored (?:in|on|while)\b.*$")
IGNORED_LITERALS: Final = ("Exception ignored",)
# The standard library's helper processes, whose tracebacks are theirs and end no part of the workload: the
# resource tracker multiprocessing starts beside a program (`python -c 'from multiprocessing.resource_tracker import
# main;main(N)'`, CPython Lib/multiprocessing/resource_tracker.py) reports the names it could not clean up and
# goes on (`cache[rtype].remove(name)` / `KeyError: '/psm_...'`, a shared-memory segment the program unlinked itself).
_HELPER_ENTRY = re.compile(r'[/\\]multiprocessing[/\\]resource_tracker\.py", line \d+, in main\b')


def ignored(frames: tuple[str, ...]) -> bool:
    """Whether a traceback's outermost frame is a standard-library helper process's entry (_HELPER_ENTRY)."""
    return bool(frames) and _HELPER_ENTRY.search(frames[0]) is not None


def library_thread(entry: str | None) -> bool:
    """Whether a thread's first frame outside the standard library (its target, or its `run`) is an installed
    package's: a framework's own background thread (a watcher, a prefetcher, a logger), not the workload's."""
    return entry is not None and _INSTALLED.search(entry) is not None


# The standard library's logging handlers catch what their emit raises and print it through Handler.handleError
# (CPython Lib/logging/__init__.py: `--- Logging error ---`, or in Python 2 the traceback then `Logged from file X,
# line N`), and the program goes on: a traceback whose frames start in a handler's emit is that report.
_LOGGING_EMIT = re.compile(r'[/\\]logging[/\\](?:__init__|handlers)\.py", line \d+, in emit\b')


def logging_handler_error(frames: tuple[str, ...]) -> bool:
    """Whether a traceback is the logging module's report of a handler that failed to write a record: handled,
    the program went on (_LOGGING_EMIT), whatever the exception says (a log file on a stale or full file system)."""
    return bool(frames) and _LOGGING_EMIT.search(frames[0]) is not None


# CPython's own words for code that does not fit the code it calls (Objects/call.c, Python/ceval.c and getargs.c for
# a call's arguments; Objects/object.c for a missing attribute; Python/import.c for a name or module an import did not
# find): raised in the launcher's own code (a DeepSpeed agent calling torchrun's agent with an older signature), they
# are the job's software stack at odds with itself, the launcher failing on its own and no report of a worker's exit.
# (A None without an attribute is a value missing, which the agent meets reaping a worker that left none: its report.)
_CODE_MISMATCH: Final = frozenset({"TypeError", "AttributeError", "ImportError", "ModuleNotFoundError"})
_MISMATCH_WORDS = re.compile(r"\btakes (?:from )?\d+ (?:to \d+ )?positional arguments? but \d+ (?:were|was) given"
                             r"|\bgot an unexpected keyword argument\b"
                             r"|\bmissing \d+ required (?:positional|keyword-only) arguments?\b"
                             r"|(?<!'NoneType' object )\bhas no attribute\b|^cannot import name\b|^No module named\b")


def launcher_plumbing(frames: tuple[str, ...], exc_cls: str = "", message: str = "") -> bool:
    """Whether the innermost frame outside the standard library is the launcher's code around its workers, or the
    exception is a CalledProcessError of a command that launches the job (_CHILD_LAUNCH). Not where the launcher's
    code does not fit the code it calls (_MISMATCH_WORDS): that is the launcher's own failure."""
    if exc_cls == "CalledProcessError" and _CHILD_LAUNCH.search(message) is not None:
        return True
    if exc_cls.rsplit(".", 1)[-1] in _CODE_MISMATCH and _MISMATCH_WORDS.search(message):
        return False
    for f in reversed(frames):
        if not _stdlib(f):
            return _LAUNCHER_PLUMBING.search(f) is not None and _RECORD_WRAPPER.search(f) is None
    return False


def shm_exhausted(exc_type: str, message: str) -> Draft:
    """A DataLoader worker's bus error: its shared-memory tensors outgrew /dev/shm (the container's size)."""
    return Draft("app.exception", {"exc_type": exc_type, "message": clip(message), "signal": "SIGBUS", "shm": True,
                                    "limit": "shm"})


def standalone(body: str) -> Draft | None:
    """An error a program logged without a traceback that still names its cause.

    Only forms that cannot be a passing remark: a storage errno with its
    `[Errno N]` (a logger's line about a checkpoint write), a program's error
    line that ends in a storage errno's strerror (`tee: x: No space left on
    device`; codes.storage_strerror_rx), Python's `No module named X` from
    `python -m` or an import in a launcher, a launcher that could not start
    the program (`_EXEC_FAILED`); and, as a symptom, a status that JAX or
    TensorFlow logs about its coordination service or a collective
    (excclass.logged_status); and what the exception table reads in a line of its own (`_logged`).
    """
    shell = shell_setup(body) if any(w in body for w in SHELL_SETUP_LITERALS) else None
    if shell is not None:
        return shell
    m5 = _EXEC_FAILED.search(body)
    if m5:
        prog = next((g for g in m5.group("p1", "p2", "p3", "p4", "p5") if g), None)
        return exec_failure(prog, m5.group("why"), body)
    if any(w in body for w in SOCKET_CALL_LITERALS):
        call = socket_call_failed(body)
        if call is not None:
            return call
    m = _LOGGED_ERRNO.search(body)
    if m:
        exc = Exc(m.group("type") or "OSError", m.group("type") or "OSError", body[m.start("errno"):].strip())
        if shared_without_path(exc.msg):
            return None  # a logged `[Errno 5] Input/output error` alone: a transport's or a device's as well
        d = _errno(exc, body)
        if d is not None and d.kind == "storage.error":
            return d
        return None
    m4 = storage_strerror_rx().search(body)
    if m4 and not is_shm(path_of(body), body) and pseudo_fs(path_of(body)) is None:
        name = errno_of(m4.group("text"))
        return Draft("storage.error", _fields(fs="posix", errno=name, path=path_of(body), detail=clip(body)))
    m2 = _NO_MODULE.search(body)
    if m2:
        # the exception table reads it as it reads the class's line in a traceback (a module of the interpreter's
        # own start-up: the job's environment); its words without the `: ` before them
        exc = Exc("ModuleNotFoundError", "ModuleNotFoundError", m2.group(0).lstrip(": \t").rstrip())
        read = _by_class(exc, body)
        if read is not None and read[0]:
            return read[0][0]
        return Draft("app.exception", {"exc_type": exc.cls, "message": clip(exc.msg)})
    kind = SYMPTOM_KINDS.get(logged_status(body) or "")
    if kind is not None and any(w in body for w in STORE_SPELLED_WORDS) and spelled_store_code(body) is not None:
        kind = None  # the status wraps an object store's own answer, which _logged reads
    if kind is not None:
        # JAX's / TensorFlow's own report that the coordination service or a collective lost a peer: a symptom.
        fields: dict[str, FieldValue] = {"detail": clip(body)}
        return Draft(kind, _with_task(fields, body) if kind in TASK_KINDS else fields)
    alone = _status_alone(body)
    if alone is not None:
        return alone
    if lone_exception(body) is not None:
        return None  # an exception's line: the traceback model reads it (a lone one as its traceback's last line)
    # a line of an exception's shape that no lone reading takes (click's bare `Error: No such option: --force`):
    # only what the table reads on a line of its own
    return _logged(body)


# gcloud's report of the answer an API gave the command's request (`ERROR: (gcloud.GROUP.COMMAND) STATUS: message`,
# the status in absl's canonical words, as public notes quote it: `ERROR: (gcloud.ai.custom-jobs.create)
# INVALID_ARGUMENT: Machine type "a2-highgpu-1g" is not supported.`).
GCLOUD_LITERAL: Final = "ERROR: (gcloud."
_GCLOUD_HEAD: Final = re.compile(r"^\s*ERROR: \(gcloud\.[\w.-]{1,160}\) (?=[A-Z][A-Z_]{4,18}: )")
# The statuses with which a service refuses a request for what the request asked (absl::StatusCode's descriptions:
# an argument it does not take, a state of the system the request needs and does not have, credentials or
# permissions it lacks, an entity it names that is not there or already is, a value past the range): the job's
# own request, its set-up, where the job's command made it. The service failing on its side (INTERNAL, UNKNOWN,
# UNAVAILABLE) and its capacity or quota (RESOURCE_EXHAUSTED: catalog/scheduler.yaml reads a quota's words) are not.
_REQUEST_STATUSES: Final = frozenset({"INVALID_ARGUMENT", "FAILED_PRECONDITION", "PERMISSION_DENIED", "UNAUTHENTICATED",
                                      "NOT_FOUND", "ALREADY_EXISTS", "OUT_OF_RANGE"})


def _status_alone(body: str) -> Draft | None:
    """gcloud's report of a request the API refused for what it asked (`_REQUEST_STATUSES`, the status in absl's words
    after gcloud's `ERROR: (gcloud.GROUP.COMMAND) `): the job's set-up, where the job's command made the request. A
    status alone with no command's report before it decides nothing here (the line an ERROR record goes on with: the
    record decides, logged_status), nor does the service's own failure or a symptom's status."""
    gcloud = _GCLOUD_HEAD.match(body) if GCLOUD_LITERAL in body else None
    if gcloud is None:
        return None
    msg = body[gcloud.end():]
    word = status_head(msg)
    if word not in _REQUEST_STATUSES or message_status(msg) != "exception":
        return None
    return _setup(Exc("", "", msg.strip()))  # no class: the summary says the line was logged, as _logged's readings


# A socket library's own report that one of its calls failed, with the C library's strerror() of the call's errno:
# rabit's, XGBoost's collective of old (dmlc/rabit include/rabit/internal/socket.h Socket::Error: `utils::Error("Socket
# %s Error:%s", msg, strerror(errsv))`, `Socket Connect Error:Invalid argument`, dmlc/dask-xgboost#5), LightGBM's
# (src/network/socket_wrapper.hpp TcpSocket: `Log::Fatal("Socket recv error, %s (code: %d)", ...)` and its send and
# accept twins, `[LightGBM] [Fatal] Socket recv error, Connection reset by peer (code: 104)`, LightGBM#6197), DGL's
# (src/graph/network/tcp_socket.cc TCPSocket::Receive: `LOG(ERROR) << "recv error: " << strerror(errno)`,
# awslabs/dgl-ke#229). The errno table decides (catalog/exceptions.yaml `errnos`), as for any network error: a peer's
# side (refused, reset, gone) is the peer's loss, a symptom; EAGAIN / EWOULDBLOCK on a receive or a send is the
# socket's own timeout run out (socket(7) SO_RCVTIMEO / SO_SNDTIMEO: "the call returns -1 with errno set to EAGAIN or
# EWOULDBLOCK ... if no data was received"; DGL's TCPSocket::SetTimeout sets it), a peer that did not answer in time: a
# timeout's symptom; the set-up side, the report being the job's own transport's (`transport_only` rows count: EINVAL,
# an address or argument the call was given, which no peer answers with, connect(2), bind(2); EADDRINUSE on a bind),
# the job's own set-up. ENOMEM's `memlock` reading is a transport pinning its buffers, which no socket call does: no
# reading. Any other errno decides nothing here.
_SOCKET_CALL_FAILED = re.compile(
    r"\bSocket (?P<a>Connect|Recv|RecvAll|Send|SendAll|Bind|Listen|Accept) Error:"
    r"|\bSocket (?P<b>recv|send|accept|connect|bind|listen) error, "
    r"|(?:^|[\]:] )(?P<c>recv|send|accept|connect|bind|listen) error: ")
SOCKET_CALL_LITERALS: Final = ("Socket ", "recv error", "send error", "accept error", "connect error", "bind error",
                               "listen error")
_SOCKET_WAITS: Final = frozenset({"recv", "recvall", "send", "sendall"})


def socket_call_failed(body: str) -> Draft | None:
    """A socket library's report of its call that failed (_SOCKET_CALL_FAILED), read by the call's errno."""
    m = _SOCKET_CALL_FAILED.search(body)
    if m is None:
        return None
    call = (m.group("a") or m.group("b") or m.group("c")).lower()
    name = errno_of(body[m.end():])
    row = errno_row(name) if name is not None else None
    if row is None:
        return None
    if row.side == "peer":
        return Draft("nccl.remote_error", {"detail": clip(body)})
    if name == "EAGAIN" and call in _SOCKET_WAITS:
        return Draft("nccl.timeout", {"detail": clip(body)})
    set_up = setup_errno(body, transport=True)
    if set_up is None or errno_limit(set_up) == "memlock":
        return None
    return _setup(Exc("", "", body.strip()), set_up)


def _logged(body: str) -> Draft | None:
    """A line of its own that the exception table reads without an exception around it: a row whose message
    decides alone (excclass.logged_row), or a socket's bind / listen that failed with a set-up errno (c10d's
    `[W socket.cpp:436] [c10d] The server socket has failed to bind to [::]:50002 (errno: 98 - Address already in
    use).`). A cause read so is `terminal`, as a lone exception line's: the last word of its stream only, and weak
    (a logged line is no record of what ended the process); a symptom is a symptom."""
    exc = Exc("", "", body.strip())
    name = setup_errno(body, on_socket=True)
    if name is not None:
        drafts: list[Draft] = [_setup(exc, name)]
    else:
        row = logged_row(body)
        got = _by_row(row, exc, body) if row is not None else None
        if got is None and row is not None and row.family == "exception":
            # the workload's own exception in the words its runtime logs where it raises it (Ray's core worker on
            # the put that raises ObjectStoreFullError): what the class would be, read as a lone exception line is
            got = [Draft("app.exception", _fields(message=clip(exc.msg)))], True
        drafts = got[0] if got is not None else []
        code = (spelled_store_code(body) if not drafts and any(w in body for w in STORE_SPELLED_WORDS)
                else None)
        if code is not None and (_LEVEL_WORD.search(body) or _RETRYING.search(body)):
            code = None  # a warning, a debug record of a response, a retry it announces: met and gone on from
        if code is not None:
            # an object store's code in a store client's own words (the AWS SDK for Java's or Go's error logged by
            # a program that is no Python)
            drafts = [_object_store(exc, code)]
    if not drafts:
        return None
    d = drafts[0]
    if d.kind in ("app.exception", "storage.error", "app.cuda_error"):
        d.fields["terminal"] = True
    return d


# A launcher that could not start the workload's program: slurmstepd's `error: execve(): /opt/venv/bin/python3:
# No such file or directory`, bash's `/var/spool/slurmd/job42/slurm_script: line 7: /opt/venv/bin/python3: No such
# file or directory` / `line 7: pythn: command not found`, `/usr/bin/env: 'python3': No such file or directory`,
# python's `python3: can't open file '/work/train.py': [Errno 2] No such file or directory`, a shell's exec of a program
# path outside a script's line (bash execute_cmd.c shell_execve's file_error under its `bash: ` prolog, `bash -c` over
# ssh or pdsh: `bash: /opt/venv/bin/python: No such file or directory`; an absolute path only). A program path the job
# names that is not there (or not executable) is the workload's configuration: app.exception, not storage.
EXEC_LITERALS: Final = ("execve(", "command not found", "can't open file", ": No such file or directory",
                         ": Permission denied", ": Exec format error")
_EXEC_WHY: Final = {"No such file or directory": "FileNotFoundError", "command not found": "FileNotFoundError",
                    "Permission denied": "PermissionError", "Exec format error": "OSError"}
EXEC_WHY_TEXTS: Final = tuple(_EXEC_WHY)  # the reasons _EXEC_FAILED compares (extract/exceptions.py's memo checks them)
_EXEC_FAILED = re.compile(
    r"(?:\bexecve\(\):\s*(?P<p1>\S+?)"
    r"|: line \d+: (?P<p2>[^:\s]+)"
    r"|^(?:\S*/)?env: ['\u2018]?(?P<p3>[^':\s\u2019]+)['\u2019]?"
    r"|can't open file ['\"](?P<p4>[^'\"]+)['\"]: \[Errno \d+\]"
    r"|(?:^|\s)-?(?:ba|da|z|k)?sh: (?P<p5>/[^:\s]+)"
    r")(?::\s*|(?<=\])\s+)(?P<why>No such file or directory|command not found|Permission denied|Exec format error)"
    r"\s*$")


# The shell's own record that a line of the job's script could not have the working directory or output file it named:
# its `cd` builtin unable to enter a directory (bash builtins/cd.def: builtin_error `cd: DIR: STRERROR` after the
# prolog `SCRIPT: line N: `; dash src/cd.c: sh_error `can't cd to DIR` after exvwarning2's prolog `ARG0: N: cd: `),
# or a redirection unable to create its file (dash src/redir.c: sh_error `cannot create FILE: ` + errmsg(E_CREAT),
# `Directory nonexistent` for ENOENT). What the job named that the node cannot give it: its set-up (docs/verdict.md
# app.exception.setup; rule app-setup, weak). A cd to a path that exists but is no directory, or a redirection
# refused for another reason, names nothing the node lacks and is not read.
SHELL_SETUP_LITERALS: Final = ("cd: ", "can't cd to ", "cannot create ")
_SHELL_SETUP = re.compile(
    r":[ ](?:line[ ])?\d{1,9}:[ ]"
    r"(?:cd:[ ](?:(?P<dir>[^:\n]{1,400}):[ ]No[ ]such[ ]file[ ]or[ ]directory|can't[ ]cd[ ]to[ ](?P<dir2>\S{1,400}))"
    r"|(?:[^:\n]{1,400}:[ ])?cannot[ ]create[ ](?P<file>[^:\n]{1,400}):[ ]Directory[ ]nonexistent)"
    r"\s*$")


def shell_setup(body: str) -> Draft | None:
    """The job's set-up from the shell's record of a `cd` or a redirection it could not carry out (_SHELL_SETUP)."""
    m = _SHELL_SETUP.search(body)
    if m is None:
        return None
    path = m.group("dir") or m.group("dir2") or m.group("file")
    return Draft("app.exception", _fields(exc_type="FileNotFoundError", message=clip(body), path=path.strip(),
                                          setup=True, shell=True))


def exec_failure(prog: str | None, why: str, body: str) -> Draft:
    return Draft("app.exception", _fields(exc_type=_EXEC_WHY.get(why, "OSError"), message=clip(body), path=prog,
                                          exec=True))


_LOGGED_ERRNO = re.compile(r"(?:(?P<type>[A-Z]\w*Error):\s*)?(?P<errno>\[Errno \d+\][^\n]*)")
_NO_MODULE = re.compile(r"(?:^|:\s)No module named ['\"]?[\w.]+['\"]?\s*$")
FRAME = re.compile(r'^\s*File "[^"\n]+", line \d+')
# A C++ exception's stack as c10 prints it: `Exception raised from checkTimeout at .../ProcessGroupNCCL.cpp:618
# (most recent call first):` then `frame #0: c10::Error::Error(...) + 0x96 (0x7f... in .../libc10.so)`.
CXX_FRAME = re.compile(r"^\s*(?:frame #\d+: |Exception raised from \S+ at \S+ \(most recent call first\))")
# The prefilter's words for those lines: a CXX_FRAME line holds one (extract/exceptions.py `quiet_literals`).
CXX_STACK_LITERALS: Final = ("frame #", "Exception raised from")


def _fields(**kw: FieldValue) -> dict[str, FieldValue]:
    return {k: v for k, v in kw.items() if v is not None}


# cuda_drafts' answer "nothing" remembered by the body's digits made `0` (extract/memo.py), apart for a raised
# exception and a line of its own, and only for a body that holds none of the words and shapes ahead of which its
# steps read a digit's value (cuda_digit_blind): the CUDA error's code (`Error 803: `, `(error 803)`, after an anchor
# of CUDA_LITERALS or WEAK_CUDA_ANCHORS), an allocator's name in ACCEL_OOM_PHRASES, a math library's status name
# (LIBRARY_LITERALS: `CUFFT_R2C`), a cuDNN status; the HIP runtime's trace level (`:3:`, a line that starts with a
# colon); a table text that holds a digit (codes.digit_message). Past those the steps compare words without digits
# and digit-blind patterns (`\d`, `\w`, `\b`: tests/extract/test_cuda_memo.py holds both), so every body of one
# zeroed form gives what the first gave. Each rank's `what():  [PG ID 0 PG GUID 0(default_pg) Rank 7121] ... Watchdog
# caught collective operation timeout: WorkNCCL(SeqNum=24311, ...)` is one key: 25 us a rank, read once (issue 27).
CUDA_DIGIT_WORDS: Final = (*CUDA_LITERALS, *WEAK_CUDA_ANCHORS, *ACCEL_OOM_PHRASES, *LIBRARY_LITERALS, CUDNN_LITERAL,
                            *RUNTIME_LITERALS)
_CODE_SHAPES: Final = (CODED_CUDA_MESSAGE.pattern.replace("?P<code>", "?:") + "|"
                       + MESSAGE_CUDA_CODE.pattern.replace("?P<code>", "?:"))


def digit_reads(words: tuple[str, ...]) -> re.Pattern[str]:
    """A pattern that finds any of `words` or a CUDA code's shape before or after its message: where a line holds
    none, the readers that compare only these words' digits read it alike with its digits made `0`."""
    return re.compile(re.alternation(words) + "|" + _CODE_SHAPES)


_CUDA_DIGIT_READS: Final = digit_reads(CUDA_DIGIT_WORDS)


def cuda_digit_blind(body: str, zeroed: str, reads: re.Pattern[str] = _CUDA_DIGIT_READS) -> bool:
    """Whether what cuda_drafts gives `body` is what it gives any body whose digits made `0` are `zeroed` (see
    CUDA_DIGIT_WORDS); `reads`: digit_reads of a superset of CUDA_DIGIT_WORDS (a caller whose other steps read more)."""
    return body[:1] != ":" and reads.search(body) is None and not digit_message(zeroed)


_CUDA_QUIET: Final[tuple[Memo[bool], Memo[bool]]] = (Memo("tb.cuda.zeroed"), Memo("tb.cuda.raised.zeroed"))


def cuda_drafts(body: str, exc: Exc | None) -> list[Draft]:
    """CUDA OOM or a CUDA error, from a traceback's last line or a line of its own (`exc` None)."""
    torch_oom = exc is not None and exc.cls == "OutOfMemoryError" and exc.qual.startswith("torch")
    if torch_oom or not ON[0]:
        return _cuda_drafts(body, exc, torch_oom)
    quiet = _CUDA_QUIET[exc is not None]  # (the exception's class and message read only where drafts come)
    key = digits_zeroed(body)
    if quiet.find(key) is not None:
        return []
    drafts = _cuda_drafts(body, exc, torch_oom)
    if not drafts and cuda_digit_blind(body, key):
        quiet.put(key, True)
    return drafts


def _cuda_drafts(body: str, exc: Exc | None, torch_oom: bool) -> list[Draft]:
    """cuda_drafts, read afresh."""
    at = accelerator_oom(body)
    if at is not None or torch_oom:
        message = exc.msg if exc is not None and exc.msg else body[at:] if at is not None else body
        return [Draft("app.cuda_oom", {"message": clip(message)})]
    if _CUDA_HINT.match(body):
        return []
    status = cudnn_status_of(body) if "CUDNN_STATUS_" in body else None
    if status is not None:
        return _cudnn_drafts(body, exc, status)
    if NGC_DRIVER_CHECK in body:
        # the NGC entrypoint's driver check (codes.NGC_DRIVER_CHECK): a banner at the container's start, which the
        # job may outlive (a driver of the same major release runs the image): its stream's last word only
        row = cuda_table()[NGC_DRIVER_CODE]
        return [Draft("app.cuda_error", {"error": row.cuda_class, "message": clip(body.strip()),
                                         "cuda_error": row.name, "cuda_code": NGC_DRIVER_CODE, "terminal": True})]
    calm = exc is None and any(w in body for w in _CALM_LITERALS) and (
        calm_record(body) or _GLOG_CALM.search(body) is not None)
    err = cuda_error_of(body)
    # another accelerator runtime's result (Level Zero, Unified Runtime, HIP's own, Synapse: catalog/cuda.yaml
    # `runtime_results`), read as a CUDA error of its class where no CUDA error is on the line
    runtime = runtime_result_of(body) if err is None else None
    err = err if runtime is None else runtime
    if calm and err is not None and err.cls not in _STICKY_CLASSES:
        err = None
    blas = (library_status_of(body) if any(w in body for w in LIBRARY_LITERALS)
            and (exc is not None or err is not None or "cublas runtime error" in body) else None)
    if blas is None and err is None:
        # a check macro's own report of the status by its number (`CuRAND error 204 at file:line`), then its exit
        blas = numbered_library_status(body)
    if blas is not None and blas.cls == "oom":
        return [Draft("app.cuda_oom", {"message": clip(exc.msg if exc and exc.msg else body)})]
    if blas is not None and blas.cls in ("config", "launch_failure", "unavailable"):
        # a math library's status of the classes CUDA's errors have (catalog/cuda.yaml `library_statuses`), raised or
        # in a CUDA error's words: read as cuDNN's (a logged record of one, `E ... failed: Internal:
        # CUBLAS_STATUS_...`, is none)
        return [Draft("app.cuda_error", _fields(error=blas.cls, message=clip(exc.msg if exc and exc.msg else body),
                                                cuda_error=blas.name))]
    if err is None:
        return []
    if err.cls == "oom":
        return [Draft("app.cuda_oom", {"message": clip(body)})]
    if err.cls in ("other", "usage") and "Cuda failure" in body:
        return []  # a line of NCCL's own report, which the NCCL extractor reads
    fields = _fields(error=err.cls, message=clip(err.message or (exc.msg if exc and exc.msg else body)),
                     cuda_error=err.name if err.code is not None or runtime is not None else None, cuda_code=err.code)
    return [Draft("app.cuda_error", fields)]


def _cudnn_drafts(body: str, exc: Exc | None, status: CudaError) -> list[Draft]:
    """A cuDNN status (catalog/cuda.yaml `cudnn_statuses`): the device's memory exhausted is the accelerator's OOM; the
    job's build for another GPU or cuDNN of two versions is its configuration (app.cuda_error, config), a driver older
    than cuDNN needs the node's (driver); a kernel that failed to run (EXECUTION_FAILED) or a handle not
    created (NOT_INITIALIZED) is a CUDA error of that class, a symptom; any other status in a raised exception is
    read as the exception (the generic steps); a line of its own at error level (TensorFlow's `E ... Could not
    create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR`) is a call of the job's framework that failed, naming no cause:
    the workload's failure, weak (`terminal`: its stream's last word only). A warning or info record of one names
    none."""
    if status.cls == "oom":
        # the accelerator's memory in cuDNN's words (cuDNN 9's INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED; 8's
        # ALLOC_FAILED is found first by codes.ACCEL_OOM_PHRASES)
        return [Draft("app.cuda_oom", {"message": clip(exc.msg if exc and exc.msg else body)})]
    if status.cls in ("config", "driver", "launch_failure", "unavailable"):
        # the classes CUDA's errors have (catalog/cuda.yaml): the job's configuration, the node's driver older than
        # cuDNN needs, or a kernel that failed to run and a handle cuDNN could not create, symptoms whose cause is said
        # elsewhere (as CUDA's launch failure is)
        return [Draft("app.cuda_error", _fields(error=status.cls, message=clip(exc.msg if exc and exc.msg else body),
                                                cuda_error=status.name))]
    if exc is not None or _LEVEL_WORD.search(body) or _GLOG_CALM.search(body) or exception_shape(body) is not None:
        return []  # (a lone exception line's class is read by the lone-line reader)
    return [Draft("app.exception", {"exc_type": "cudnnStatus_t", "message": clip(body), "terminal": True})]


def _detail(exc: Exc) -> str:
    return clip(f"{exc.cls}: {exc.msg}" if exc.msg and exc.cls else exc.msg or exc.cls)


def _symptom(kind: str, exc: Exc) -> Draft:
    """A symptom kind read from an exception; an nccl.error keeps the NCCL result its message names."""
    fields: dict[str, FieldValue] = {"detail": _detail(exc)}
    if kind == "nccl.error":
        result = nccl_result_of(exc.msg)
        if result is not None:
            fields["nccl_result"] = result
    return Draft(kind, _with_task(fields, exc.msg) if kind in TASK_KINDS else fields)


# The symptoms whose words may name the task the coordination service saw fail (excclass.failed_task): a lead on
# that task (engine/leads.py), never a cause.
TASK_KINDS: Final = frozenset({"nccl.remote_error", "nccl.communicator_aborted"})


def _with_task(fields: dict[str, FieldValue], text: str) -> dict[str, FieldValue]:
    task = failed_task(text)
    if task is not None:
        fields["failed_task"] = task
    return fields


def _peer(exc: Exc, body: str) -> Draft | None:
    for peer_kind, rx in PEER_FAILURE:
        if rx.search(body):
            fields: dict[str, FieldValue] = {"detail": _detail(exc)}
            return Draft(peer_kind, _with_task(fields, exc.msg) if peer_kind in TASK_KINDS else fields)
    if read_stall(exc.msg) is not None:  # a stall detector's words as the message (catalog/ends.yaml `stalls`)
        return Draft("nccl.timeout", {"detail": _detail(exc)})
    if peer_errno(exc.msg) is not None or ucx_peer_status(exc.cls, exc.msg) is not None:
        # a socket a peer refused, reset or left; a UCX endpoint to a peer that timed out, was reset or is gone
        return Draft("nccl.remote_error", {"detail": _detail(exc)})
    by_cls = errno_row(class_errno(exc.cls))
    if by_cls is not None and by_cls.side == "peer" and errno_of(exc.msg) is None:
        # the class is the errno (ConnectionResetError with asyncio's `Connection lost`, no `[Errno 104]`): a
        # connection a peer refused, reset or left, which no message of its own says (catalog/exceptions.yaml `classes`)
        return Draft("nccl.remote_error", {"detail": _detail(exc)})
    kind = DIST_TYPES.get(exc.cls)
    if kind is None and _DIST_MESSAGE.search(exc.msg):
        kind = "nccl.error"
    if kind is None:
        return None
    return _symptom(kind, exc)


def _setup(exc: Exc, errno: str | None = None, limit: str | None = None) -> Draft:
    """The job's own set-up failed (a port in use, a backend or device the build lacks, sizes that do not fit, a
    limit its processes were given: `limit`, else the errno's own, catalog/exceptions.yaml)."""
    return Draft("app.exception", _fields(exc_type=exc.cls or None, message=clip(exc.msg), errno=errno, setup=True,
                                          limit=limit or errno_limit(errno)))


def _loader(exc: Exc, body: str) -> Draft:
    """The dynamic loader could not load or link a library the program needs (catalog/exceptions.yaml `loader`): the
    job's build or image (app.exception, setup); where the library is one of the NVIDIA driver's own
    (catalog/platform.yaml `driver_libraries`: libcuda, libnvidia-*) the node's driver is not installed, or not mounted
    into the job's container: the driver stack (what CUDA says as a driver class: node.driver)."""
    message = exc.msg or body.strip()
    started = _LOADER_PROGRAM.search(message)
    row = platform_executable(started.group("prog")) if started is not None else None
    if row is not None:
        # the program the loader could not start is one of the platform's under the job (catalog/platform.yaml
        # `platform_programs` `executables`: slurmstepd): that program failed on the node, whatever library it lacks
        return Draft("platform.error", {"program": row.program, "part": row.part, "text": "loader",
                                        "message": clip(message)})
    lib = loader_library(message)
    if lib is not None and is_driver_library(lib):
        return Draft("app.cuda_error", {"error": "driver", "message": clip(message)})
    return _setup(exc)


# The program glibc's loader names before its fatal words (elf/dl-error-skeleton.c _dl_signal_error: `%s: %s: %s`,
# the program's argv[0] first): `/usr/sbin/slurmstepd: error while loading shared libraries: libslurmfull.so: ...`.
_LOADER_PROGRAM = re.compile(r"(?:^|\s)(?P<prog>[^\s:'\"]{1,200}): "
                             r"(?:error while loading shared libraries|symbol lookup error|relocation error): ")


def _object_store(exc: Exc, code: str | None = None) -> Draft:
    """An object store's error: the store's side (throttling, its own errors, timeouts) is storage; a key or
    bucket the job got wrong is the workload's; credentials or permissions the store refused (a code's `setup`,
    catalog/exceptions.yaml) the job's set-up."""
    code = code or store_code(exc.cls, exc.msg, shared=True)  # a store's error: its shared messages name a code too
    if store_side(code) == "store":
        return Draft("storage.error", _fields(fs="object_store", store_code=code, store_cause=store_cause(code),
                                              exc_type=exc.cls or None, detail=_detail(exc)))
    return Draft("app.exception", _fields(exc_type=exc.cls or None, message=clip(exc.msg), store_code=code,
                                          setup=store_setup(code) or None))


# A message that says the file was being written (TensorFlow's `Error writing (tmp) checkpoint file: ...`).
_WRITING = re.compile(r"\b[Ww]rit(?:e|es|ing)\b")
# CUDA's cudaErrorNoKernelImageForDevice: the code a `gpu_arch` row of the exception table is read as
NO_KERNEL_IMAGE_CODE: Final = 209


def _file_failed(exc: Exc, body: str, about: FileStatus) -> Draft:
    """A status about one file (excclass.file_status): the errno it names decides; else the status's meaning for a
    file being written (a full file system), where the message says it was; else the workload's exception."""
    by_errno = _errno(exc, body) if errno_of(exc.msg) is not None else None
    if by_errno is not None:
        return by_errno
    if about.on_write == "storage" and _WRITING.search(exc.msg) and not is_shm(about.path, exc.msg):
        return Draft("storage.error", _fields(fs="posix", path=about.path, exc_type=exc.cls, detail=_detail(exc)))
    return Draft("app.exception", _fields(exc_type=exc.cls, message=clip(exc.msg), path=about.path))


def _by_class(exc: Exc, body: str, frames: tuple[str, ...] = ()) -> tuple[list[Draft], bool] | None:
    """What the exception table (catalog/exceptions.yaml, extract/excclass.py) makes of an exception: its
    errno on the job's own side (on a network call its frames name, for a row's `network_setup`), then its class (and
    message), then a status word. None: it decides nothing here (a class the table does not list, or the
    workload's own exception), the generic steps go on."""
    name = setup_errno(exc.msg, network=_socket_frame(frames))
    if name is not None:
        return [_setup(exc, name)], True
    row = class_row(exc.qual, exc.cls, exc.msg)
    about_file = file_status(exc.msg, row.status if row is not None else None)
    if about_file is not None:
        return [_file_failed(exc, body, about_file)], True
    if row is None:
        return None
    return _by_row(row, exc, body)


def _by_row(row: ExceptionClassInfo, exc: Exc, body: str) -> tuple[list[Draft], bool] | None:
    """What a row of the exception table makes of the exception (or the logged line) it fits."""
    family: str | None = row.family
    if family == "status":
        code = spelled_store_code(exc.msg) if exc.msg else None
        if code is not None:
            # a status class (TensorFlow's AbortedError after `All 10 retry attempts failed`) around an object
            # store's own answer (`HTTP response code 429` from its GCS file system): the store's word is the finer
            return [_object_store(exc, code)], True
        family = status_family(exc.msg, row.status)
    if family == "object_store":
        return [_object_store(exc)], True
    if family == "setup":
        return [_setup(exc, limit=row.limit)], True
    if family == "shm":
        # a program's own word that the node's /dev/shm was too small for the region it asked for (the size the
        # job's container or pod gave it, docs/verdict.md): the workload's configuration, as a DataLoader's bus error
        return [Draft("app.exception", _fields(exc_type=exc.cls or "shared memory", message=clip(exc.msg or body),
                                               shm=True, limit="shm"))], True
    if family == "fs_service":
        # a file system's own client saying its service (master, workers) did not answer (catalog/exceptions.yaml
        # `fs_service`): the file system failed under the job, as a FUSE daemon gone is
        return [Draft("storage.error", _fields(fs=row.fs, exc_type=exc.cls, detail=_detail(exc)))], True
    if family == "disk_full":
        # The node's disk said full by the class alone (Ray's OutOfDiskError): a file system full, as ENOSPC is.
        return [Draft("storage.error", _fields(fs="posix", exc_type=exc.cls, detail=_detail(exc)))], True
    if family == "envelope":
        return [], False
    if family == "loader":
        return [_loader(exc, body)], True
    if family == "gpu_arch":
        # a program's own words that its build or image holds no code for this GPU (catalog/exceptions.yaml
        # `gpu_arch`): what CUDA says as 209, no kernel image for the device: the workload's build
        row209 = cuda_table()[NO_KERNEL_IMAGE_CODE]
        return [Draft("app.cuda_error", _fields(error=row209.cuda_class, message=clip(exc.msg or body.strip()),
                                                cuda_error=row209.name, cuda_code=NO_KERNEL_IMAGE_CODE))], True
    if family == "accelerator_oom" and errno_of(exc.msg) is not None:
        return None  # what ran out is named by an errno (`disk quota exceeded`): the errno step reads it
    if family == "accelerator_oom" and not host_allocator(body):
        return [Draft("app.cuda_oom", {"message": clip(exc.msg or exc.cls)})], True
    kind = SYMPTOM_KINDS.get(family or "")
    if kind is None:
        return None
    d = _symptom(kind, exc)
    if row.exit_report:
        d.fields["exit_report"] = True  # a server's word that a process it started exited (engine/normalise.py)
    return [d], True


def _signal(exc: Exc) -> Draft | None:
    detail = _detail(exc)
    sig: str | None = None
    reporter = "launcher"
    if exc.cls == "KeyboardInterrupt":
        sig = "SIGINT"
    elif exc.cls == "SignalException":
        # torchrun's agent was signalled from above it (scancel, kubelet).
        m = _SIGNAL_EXCEPTION.search(exc.msg)
        if m:
            sig, reporter = signal_name(int(m.group("num"))), "scheduler"
    elif exc.cls == "SystemExit" and re.fullmatch(r"-?\d+", exc.msg):
        sig = exit_signal(int(exc.msg))
    else:
        m2 = _KILLED_BY.search(exc.msg)
        if m2:
            sig = signal_of_text(m2.group("what"))
        else:
            m3 = _SIGNALS_REPR.search(exc.msg) or _TERMINATED_BY.search(exc.msg)
            if m3 and m3.group("sig") in signal_names():
                sig = m3.group("sig")
    if sig is None:
        sig = _SIGNAL_MESSAGES.get((exc.qual, exc.msg)) or None  # another runtime's fault-signal error (Go's nil)
    if sig is None:
        sig = _SIGNAL_CLASSES.get(exc.cls)  # ... or the class its runtime throws for a signal (Julia's)
    if sig is None:
        return None
    return Draft("process.signal", {"signal": sig, "by": by_whom(sig, reporter), "detail": detail})


# A read-only file system answering for an entry right under `/` (`Read-only file system: '/media'`, `'/sites/'`,
# `'/.environment'`, `'//logdir'` joined from an empty prefix): the job asked to create a directory of its own at
# the root of a host whose root is read-only by design (macOS's sealed system volume since 10.15, a container's
# read-only root), a path it hard-coded, not a file system that failed under it (UltimaHoarder/UltimaScraper#110,
# project-chip/connectedhomeip#25451, matterport/Mask_RCNN#2880). A file system that went read-only under the job
# answers for the paths on it (`/data/ckpt/step_100.pt`), and a deeper path cannot tell the two apart.
_ROOT_ENTRY = re.compile(r"^/+[^/]+/?$")


def _root_entry_read_only(name: str | None, path: str | None) -> bool:
    return name == "EROFS" and path is not None and _ROOT_ENTRY.match(path) is not None


_SHM_FULL: Final = frozenset({"ENOSPC", "ENOMEM"})


# The call an OSError's errno came from, where the message or the innermost frame names it: mmap (PyTorch's
# MapAllocator `unable to mmap 5000 bytes from file </m/model.bin>: No such device (19)`, numpy's memmap.py, Python's
# `mmap.mmap` in a function of that name). Linear: one word, bounded on both sides.
_MMAP_CALL = re.compile(r"(?<![A-Za-z])(?:mmap|memmap)(?![A-Za-z])")


def _failed_call(msg: str, frames: tuple[str, ...]) -> str | None:
    """`mmap` where the message, or the innermost frame, names it; else None (catalog/exceptions.yaml `calls`)."""
    if _MMAP_CALL.search(msg) or (frames and _MMAP_CALL.search(frames[-1])):
        return "mmap"
    return None


# A socket's own call as a frame names the function it was in (`in bind`, pyzmq's `in
# zmq.backend.cython._zmq.Socket.bind`, `in connect`): the name itself, after `in ` or a dot, at the frame's end; a
# function of another name that holds the word (`bind_addr`, `rdma_bind_addr`) is not it. Linear: one word, bounded.
_SOCKET_CALL_FRAME = re.compile(r"(?:\bin |\.)(?:bind|listen|connect)\s*$")
# How many of the innermost frames may name it: the call's own frame, or the one above the error checker it returns
# through (pyzmq's `_check_rc`, innermost).
_SOCKET_CALL_FRAMES: Final = 2


def _socket_frame(frames: tuple[str, ...]) -> bool:
    """One of the innermost frames is a socket's bind, listen or connect (catalog/exceptions.yaml `network_setup`)."""
    return any(_SOCKET_CALL_FRAME.search(f) for f in frames[-_SOCKET_CALL_FRAMES:])


def _errno(exc: Exc, body: str, frames: tuple[str, ...] = (), name: str | None = None) -> Draft | None:
    """The errno the message carries (or `name`, where the record's code stands for one) read by the errno table."""
    name = name or errno_of(exc.msg)
    in_save = any(_CHECKPOINT_FRAME.search(f) for f in frames)
    write_failed = _WRITE_FAILED.search(exc.msg) is not None or (
        in_save and (_IOSTREAM.search(exc.msg) is not None or _OPEN_FAILED.search(exc.msg) is not None))
    if name is None and not write_failed:
        return None
    path = path_of(exc.msg)
    if cache_race(name, frames):
        # Ranks racing on a shared cache (extract/codes.py): the workload's I/O, not the file system.
        return Draft("app.exception", _fields(exc_type=exc.cls, message=clip(exc.msg), errno=name, path=path,
                                              cache_race=True))
    row = errno_row(name)
    # a path of a pseudo file system (/proc, /sys, a cgroup): the kernel object's answer, no storage's
    storage = (row is not None and row.side == "storage" and not _root_entry_read_only(name, path)
               and (not row.calls or _failed_call(exc.msg, frames) in row.calls) and pseudo_fs(path) is None)
    if (storage or (name is None and write_failed and pseudo_fs(path) is None)) and not is_shm(path, exc.msg):
        # The errno may name the kind of file system: ENOTCONN, a FUSE mount whose daemon (s3fs, gcsfuse,
        # blobfuse, JuiceFS) is gone.
        fs = (row.fs if row is not None else None) or "posix"
        return Draft("storage.error", _fields(fs=fs, errno=name, path=path, exc_type=exc.cls,
                                              detail=_detail(exc)))
    shm = is_shm(path, exc.msg)
    # the limit only where the errno says it ran out of room (ENOSPC, ENOMEM, or a write that failed with none): a
    # segment or object that is not there any more (ENOENT) is the node's /dev/shm, but no size of it
    full = shm and (name in _SHM_FULL or name is None)
    return Draft("app.exception", _fields(exc_type=exc.cls, message=clip(exc.msg), errno=name, path=path,
                                          shm=True if shm else None, limit="shm" if full else None))


FORTRAN_CLASS: Final = "forrtl"  # the exc_type of Intel's Fortran runtime's record (LANGUAGES)
_FORTRAN_RECORD = re.compile(r"^(?:severe|error) \((?P<code>\d{1,4})\): ")
# the file the record names last (`..., unit 50, file /scratch1/x/PET473.ESMF_LogFile`)
_FORTRAN_FILE = re.compile(r",[ \t]*+file[ \t]++(?P<file>[^,\s][^,]*+)$")


def _fortran(exc: Exc, body: str, frames: tuple[str, ...]) -> Draft:
    """Intel's Fortran runtime's numbered record, read by its number (catalog/exceptions.yaml
    `fortran_runtime_errors`); a number with no row, or a read or write that failed on no file of a file system, is
    the program's own error."""
    m = _FORTRAN_RECORD.match(exc.msg)
    row = fortran_runtime_error_table().get(int(m.group("code"))) if m is not None else None
    if row is not None and row.signal is not None:
        return Draft("process.signal", {"signal": row.signal, "by": by_whom(row.signal, "launcher"),
                                        "detail": _detail(exc)})
    if row is not None and row.errno is not None:
        err = _errno(exc, body, frames, row.errno)
        if err is not None:
            return err
    if row is not None and row.io is not None:
        f = _FORTRAN_FILE.search(exc.msg)
        path = f.group("file").rstrip() if f is not None else ""
        # a pseudo file system's path, or a device file named as the unit (/dev: its device's), is no storage's
        if (path.startswith("/") and pseudo_fs(path) is None and not path.startswith("/dev/")
                and not is_shm(path, exc.msg)):
            return Draft("storage.error", _fields(fs="posix", errno=None, path=path, exc_type=exc.cls,
                                                  detail=_detail(exc)))
    return Draft("app.exception", {"exc_type": exc.cls, "message": clip(exc.msg)})


# An error line's head word, where a program that is no Python names its error class (`SlowDown: ...`,
# `OSError: ...` quoted inside a launcher's line is not at the head and stays part of the message).
# A line that calls itself a warning (a level word, glog's `W0612 ...]`, c10's older `[W socket.cpp:601]`, a Python
# warning's category: `UserWarning: ...`, `FutureWarning`, any `<Name>Warning` class the warnings module prints).
_WARNING_WORD = re.compile(r"\b(?:[Ww]arning|WARNING|WARN|W\d{4} \d\d:\d\d:\d\d\.\d+|[A-Z]\w{0,40}Warning)\b"
                           r"|\[W [\w.]{1,200}:\d+\]")
# ... or says what it reports will be retried (`Error No space left on device. Retrying in five minutes.`), or that
# it is one try of a loop that goes on, by the try's number alone (JuiceFS's `Upload chunks/...: ... EOF (try 1)`,
# juicedata/juicefs pkg/chunk/cached_store.go: a loop whose end, where every try failed, is a line of its own);
# retries that ran out (`reached max retries`) are final and stay, and so does a try counted against its total
# (`attempt 5/5`, `try 3 of 3`: the last may be the end).
_RETRYING = re.compile(r"\b(?:[Rr]etrying|RETRYING|will (?:be )?(?:automatically )?retr(?:y|ied))\b"
                       r"|\((?:try|attempt) \d{1,4}\)")
_RETRY_STEMS: Final = ("retr", "(try ", "(attempt ")
_HEAD_WORD = re.compile(r"^\s*(?P<qual>(?:[A-Za-z_]\w*\.)*(?P<cls>[A-Za-z_]\w{2,60})):\s")


# A program's own limit on how long what it started may take to come up, reached: a server whose worker, runner or
# model did not become ready in the time it allows (mlx-openai-server's `Handler process for 'M' did not become ready
# within 300 s`, cubist38/mlx-openai-server#293, made configurable by #297; aprender's `Server failed to become ready
# within 120s`, paiml/aprender#362; Ollama's `timed out waiting for llama runner to start`, ollama/ollama#4131, its
# OLLAMA_LOAD_TIMEOUT). The program's own start-up limit, the workload's (app.exception): what made the start slow
# (a slow mount, a download) says nothing of its own there, and where something does (an OOM kill, a device fault)
# it stands first, as this is read only as the last resort.
_STARTUP_LIMIT = re.compile(
    r"\b(?:did not|didn't|failed to|could not) become (?:ready|healthy|available) (?:with)?in \d+(?:\.\d+)? ?"
    r"(?:ms|s|secs?|seconds|m|mins?|minutes)\b"
    r"|\btimed out waiting for [\w .'-]{1,80}? to (?:start|become ready|be ready|come up)\b")


# A record that calls itself below a warning: a level word among the line's first words (NCCL's `host:pid:tid [0]
# NCCL INFO ...`, a logger's `DEBUG`, `TRACE`, `NOTICE`; libfabric's `<info>`, `<debug>`, `<trace>`), glog's and
# absl's `I0612 10:00:00` / `D...` at its head. What it reports is information the program gave on its way (NCCL's
# `NET/Plugin: Failed to find ncclNetPlugin_v8 symbol.` is its search for an optional plugin, NVIDIA/nccl#1292;
# libfabric's CUDA memory interface logs cudaErrorStubLibrary at `<info>` where it goes on without CUDA). Only at the
# head: a level word inside a message is the message's; and not a setting's value (`run with NCCL_DEBUG=INFO for
# details` closes NCCL's errors). A higher level word before it (`ERROR ... INFO block missing`) makes the record
# that level.
_CALM_RECORD = re.compile(r"^(?P<lead>.{0,120}?)(?:(?<![=\w])(?:INFO|DEBUG|TRACE|NOTICE)\b|<(?:info|debug|trace)>)"
                          r"|^\s*[ID]\d{4} \d\d:\d\d:\d\d")
_LOUD_LEVEL = re.compile(r"\b(?:ERROR|FATAL|CRITICAL|SEVERE|PANIC)\b")


def calm_record(text: str) -> bool:
    """Is the line a record below a warning (an info, debug, trace or notice record: _CALM_RECORD)?"""
    m = _CALM_RECORD.search(text)
    return m is not None and not _LOUD_LEVEL.search(m.group("lead") or "")


def says_calm(text: str) -> bool:
    """Does the line call itself a warning or a record below one (calm_record)? What it reports was met and gone
    on from."""
    return _WARNING_WORD.search(text) is not None or calm_record(text)


def says_retrying(text: str) -> bool:
    """Does the line say what it reports will be retried, or that it is one numbered try of a loop that goes on
    (`Retrying in 5 s`, `(try 1)`)? What it reports is not the loop's end."""
    return _RETRYING.search(text) is not None


# A Kubernetes controller's own record of an error about an API object it works on, in the forms its Go logging stacks
# print: klog's header at the error letter naming a Go source file (k8s.io/klog `E1116 08:24:00.746178       1
# coscheduling.go:133] `: glog's layout, which C++ programs print with their `.cc` / `.cpp` files, PyTorch's c10 among
# them) or klog's structured record alone (klog.ErrorS: the quoted message, then `err="..."`, as a paste that lost the
# header shows it), either with the object it is about as klog.KObj writes it (`pod="kubedl/mnist-worker-0"`: a
# namespace and a name); and controller-runtime's zap JSON record at the error level with its Go `caller`
# (`{"level":"error",...,"caller":"multikueue/multikueuecluster.go:200",...}`). Such a controller runs a loop that goes
# on past the error: controller-runtime logs `Reconciler error` and requeues the request with backoff
# (sigs.k8s.io/controller-runtime pkg/internal/controller/controller.go reconcileHandler), the scheduler logs a plugin's
# refusal and puts the pod back in its queue (kubernetes-sigs/scheduler-plugins#450: Coscheduling's `PreFilter failed
# ... cannot find enough sibling pods` until the gang is whole), a watch logs an object it cannot key and takes the next
# (kubernetes-sigs/kueue#1814, MultiKueue's `Cannot get workload key` "during normal operation"). What it reports is
# one pass of that loop, no failure of a workload by itself; what its words name (a placement, an eviction, an NVML
# error) is read by the extractors that know them before a line is left unrecognized. A node agent's klog record about
# a path or a device (a CSI driver's `"check volume path" err="function timeout" volumePath="/var/lib/kubelet/..."`,
# juicedata/juicefs-csi-driver#1640) names no object so and stays error-looking. Bounded runs of one class each,
# anchored or bounded before a literal: linear.
_KLOG_ERROR = re.compile(r'^\s*(?:E\d{4} \d\d:\d\d:\d\d\.\d{1,9}\s{1,40}\d{1,10} [\w-]{1,200}\.go:\d{1,6}\] )?'
                         r'"[^"\n]{1,300}" err="')
_KOBJ = re.compile(r' [A-Za-z]{1,40}="[a-z0-9][a-z0-9.-]{0,252}/[a-z0-9][a-z0-9.-]{0,252}"')
_ZAP_ERROR = re.compile(r'^\s*\{"level":"error",.{0,300}?"caller":"[\w/@-]{1,300}\.go:\d{1,6}"')


def controller_record(text: str) -> bool:
    """Is the line a Kubernetes controller's record of an error about an object it works on (_KLOG_ERROR with a
    _KOBJ, _ZAP_ERROR): one pass of a loop that goes on?"""
    if _ZAP_ERROR.search(text) is not None:
        return True
    return _KLOG_ERROR.search(text) is not None and _KOBJ.search(text) is not None


def shared_without_path(msg: str) -> bool:
    """Is the message's errno one of the storage errnos that a transport, a socket or a device says too (EIO,
    ENOTCONN: catalog/exceptions.yaml `errnos` side storage without `file_only`), with no path to say it is a file
    system's? Such a line of its own, with no traceback to name the call that failed, names no storage."""
    row = errno_row(errno_of(msg))
    return row is not None and row.side == "storage" and not row.file_only and path_of(msg) is None


def words_cause(text: str) -> Draft | None:
    """The cause an error line's own words name through the exception table, for a line no extractor read
    (a scheduler's hold reason, a daemon's or a tool's error in words of its own): what its message would
    make of the same words in an exception, and only where that is a cause of the shared kinds that need no
    context, a storage errno (by number, name or strerror text: `(errno 28) No space left on device`,
    `open ... failed: Read-only file system (os error 30)`), an object store's own code on the store's side
    in a store's own spelling (`<Code>SlowDown</Code>`, `code: ServerBusy`), a port or address the job's
    own set-up could not have (EADDRINUSE, EADDRNOTAVAIL), a program's own start-up limit reached (what it started
    did not become ready in the time it allows: _STARTUP_LIMIT). A peer's errno is a symptom, anything else says
    nothing here; an errno on the node's /dev/shm is the workload's configuration. The caller decides when
    such a reading may stand (analysis: a failed attempt where nothing else established a cause)."""
    if _WARNING_WORD.search(text) or _RETRYING.search(text):
        return None  # a warning, a step to be retried: what it reports was met and gone on from
    head = _HEAD_WORD.match(text)
    if head is not None and not any(ch.islower() for ch in head.group("cls")):
        head = None  # a log level (`ERROR: ...`), not a class
    exc = (Exc(head.group("qual"), head.group("cls"), text[head.end():].strip()) if head
           else Exc("", "", text.strip()))
    name = errno_of(exc.msg)
    row = errno_row(name)
    if row is not None and row.side == "storage":
        if shared_without_path(exc.msg):
            return None  # EIO, ENOTCONN: a transport's or a socket's too (libfabric's `Input/output error`)
        d = _errno(exc, text)
        return d if d is not None and d.kind == "storage.error" else None
    if row is not None and row.side == "setup" and not (row.network_only or row.transport_only):
        return _setup(exc, name)
    code = store_code("", exc.msg)  # the store's own spellings only: a class-like head word may be anyone's
    if code is not None and not code.isdigit() and code in object_store_code_table() and store_side(code) == "store":
        return _object_store(exc)
    if ("ready" in text or "start" in text or "come up" in text or "healthy" in text or "available" in text) and (
            _STARTUP_LIMIT.search(text) is not None):
        return Draft("app.exception", _fields(exc_type=exc.cls or None, message=clip(exc.msg)))
    return None


def classify(body: str, exc: Exc, nccl_owned: bool, numerics_owned: bool,
             frames: tuple[str, ...] = (), other_owned: bool = False,
             in_library_thread: bool = False, in_thread: bool = False, call: str = "") -> tuple[list[Draft], bool]:
    """The events a traceback's final line holds, and whether it decides its chain.

    `other_owned`: another extractor reads this line as its own event (a memory-limit kill raised as an
    exception, such as Ray's OutOfMemoryError; a quota a cloud's client raised: extract/jobend.py `reason_owned`), so
    the chain is decided without an exception of its own.
    `in_library_thread`: the traceback ended a thread that an installed package started (`library_thread`);
    the thread's death does not end the process, so what would be the workload's own exception is none of its
    failures (a CUDA error, a storage errno, a signal or a peer's failure is still read as such).
    `in_thread`: it ended a thread of the workload's own: its exception is marked `thread`, which names a cause only
    in an attempt that failed (analysis/analyze.py: the thread's death alone ends no process).
    `call`: the source line under the innermost frame (Closed.call), the call that raised.
    """
    drafts, decisive = _classify(body, exc, nccl_owned, numerics_owned, frames, other_owned, call)
    if in_library_thread:
        drafts = [d for d in drafts if d.kind != "app.exception"]
    elif in_thread:
        for d in drafts:
            if d.kind == "app.exception":
                d.fields["thread"] = True
    return drafts, decisive


def _classify(body: str, exc: Exc, nccl_owned: bool, numerics_owned: bool,
              frames: tuple[str, ...], other_owned: bool, call: str = "") -> tuple[list[Draft], bool]:
    cuda = cuda_drafts(body, exc)
    if cuda:
        return cuda, True
    if nccl_owned or other_owned:
        return [], True  # the NCCL (or memory-limit) extractor reads this line
    if envelope(exc.qual, exc.cls, exc.msg):
        return [], False  # it wraps other exceptions (catalog/exceptions.yaml `envelope`): they decide
    if exc.qual == FORTRAN_CLASS:
        return [_fortran(exc, body, frames)], True
    sig = _signal(exc)
    if sig is not None:
        if sig.fields.get("signal") == "SIGBUS" and _DATALOADER.search(exc.msg):
            return [shm_exhausted(exc.cls, exc.msg)], True
        return [sig], True
    if frames and _FORK_FRAME.search(frames[-1]) and errno_of(exc.msg) == "EAGAIN":
        return [_setup(exc, "EAGAIN", limit="nproc")], True  # fork(2) refused by the process limit
    if (((frames and _EXEC_FRAME.search(frames[-1])) or ("os." in call and _EXEC_CALL.search(call)))
            and (name := errno_of(exc.msg)) in _EXEC_ERRNOS):
        return [_setup(exc, name)], True  # a program the job asked to run is not there, or not executable
    by_class = _by_class(exc, body, frames)
    if by_class is not None:
        return by_class
    peer = _peer(exc, body)
    if peer is not None:
        return [peer], True
    if frames and _RENDEZVOUS_FRAME.search(frames[-1]) and _UNREACHABLE.search(exc.msg):
        return [Draft("nccl.remote_error", {"detail": _detail(exc), "phase": "rendezvous"})], True
    err = _errno(exc, body, frames)
    if err is not None:
        return [err], True
    said = message_status(exc.msg)
    if said == "envelope":
        return [], False  # CANCELLED: cancelled because of something else, which decides
    code = spelled_store_code(exc.msg)
    if code is not None:
        # an object store's own code, whatever client's exception or status carries it (Triton's `UNAVAILABLE:
        # ... curlCode: 28, Timeout was reached`: the status wraps the store's answer, which is the finer word)
        return [_object_store(exc, code)], True
    if said in SYMPTOM_KINDS:
        return [_symptom(SYMPTOM_KINDS[said], exc)], True  # a status that names another's failure, whatever the class
    relayed = relays_result(exc.msg)
    if relayed is not None:
        # a collective library's result of the environment's or a peer's, relayed by a wrapper whose words are not
        # PyTorch's (Horovod's `ncclCommInitRank failed: unhandled system error`, CuPy's NCCL_ERROR_SYSTEM_ERROR,
        # HugeCTR's, cuML's `NCCL_ERROR: b'unhandled system error'`, mpi4py's `MPI_ERR_OTHER`): the program did
        # nothing wrong that it shows; the call that failed is said before it (NCCL's WARN lines), or not at all
        # (catalog/cuda.yaml `whose`). The program's own results (invalid usage / argument) stay its exception.
        return [_symptom("nccl.remote_error" if relayed.whose == "peer" else "nccl.error", exc)], True
    if launcher_plumbing(frames, exc.cls, exc.msg):
        # the launcher's fallout of a worker's exit: nothing about why the worker exited, but its word that one
        # failed (the run's end, where nothing else says it: engine/normalise.py `own_end`)
        return [Draft("launcher.exit", {"state": "FAILED", "system": "python", "scope": "process"})], True
    if numerics_owned:
        return [], True
    return [Draft("app.exception", {"exc_type": exc.cls, "message": clip(exc.msg)})], True


# --------------------------------------------------------------------------
# The per-stream model
# --------------------------------------------------------------------------


@dataclass(slots=True)
class _Stream:
    """The state of one output stream's Python traceback, as its lines come."""

    opened: int | None = None  # line of the open traceback's header
    closed: int | None = None  # line of the last final exception line
    marker: int | None = None  # line of the last chain marker
    decided: bool = False  # the current chain already produced its event
    owner: tuple[int | None, str | None] | None = None  # torchrun summary entry owning the open traceback
    frames: list[str] = field(default_factory=list)  # the open traceback's `File "..."` lines, innermost last
    call: str | None = None  # the source line under its innermost frame, once one came (Closed.call)
    thread_header: int | None = None  # line of the last `Exception in thread ...:`
    in_thread: bool = False  # the open traceback (and its chain) ended a thread, not the process
    ignored_header: int | None = None  # line of the last `Exception ignored in: ...` (_IGNORED_HEADER)
    ignored: bool = False  # the open traceback (and its chain) is one Python ignored: nothing was raised
    entry: str | None = None  # the open traceback's first frame outside the standard library
    head: LineContext | None = None  # where the open traceback began (its header, or its first frame if cut off)
    who: object = None  # the torchrun or rank prefix's owner of the open traceback (`feed`'s `who`)
    head_text: str = ""  # the line that opened it
    # The last line of a chain whose members all decided nothing (envelopes only: a launcher's summary of its workers'
    # exceptions, a bare EOFError from a pipe whose writer died) and that no later member of the stream decided: a
    # failure was seen, its cause is not in the stream (`TracebackModel.unsettled`). Its place and the line.
    unsettled: tuple[LineContext, str] | None = None


class OpenEnd(NamedTuple):
    """A traceback still open where its stream ended: its exception line never came (`TracebackModel.open_ends`)."""

    head: LineContext  # the header's (or first frame's) place, time, node and rank
    frames: tuple[str, ...]  # its `File "..."` lines, innermost last
    owner: tuple[int | None, str | None] | None
    who: object
    text: str  # the line that opened it


@dataclass(slots=True)
class Closed:
    """A traceback's final line, with what the model knows of its chain."""

    exc: Exc
    chained: bool  # a later member of a chain that already decided
    owner: tuple[int | None, str | None] | None
    frames: tuple[str, ...] = ()
    library_thread: bool = False  # it ended a thread an installed package started (traceback.library_thread)
    text: str = ""  # the final line as its process wrote it (a wrapper's tag, read off the header, taken off)
    who: object = None  # the stream it closed (`who`, or `who` and the tag's key)
    # Python ignored it (`Exception ignored in: ...`) or a standard-library helper process printed it (`ignored`):
    # nothing of the workload's failed
    ignored: bool = False
    thread: bool = False  # it ended a thread, not the process (its header, or its thread's bootstrap frame)
    call: str = ""  # the source line Python printed under the innermost frame: the call that raised, where it was kept


def _lead_key(lead: str) -> str:
    """The key of a wrapper's tag: the tag with its clock's digits zeroed (_LEAD_CLOCK)."""
    return _LEAD_CLOCK.sub(lambda m: digits_zeroed(m.group(0)), lead)


# Python 3.11's exception group (CPython Lib/traceback.py `TracebackException.format`): `+ Exception Group Traceback
# (most recent call last):` opens it, every line of the group's and of its sub-exceptions' tracebacks comes in a
# `| ` frame (indented four more per nesting level), and a rule of dashes (`+-+---------------- 1 ----------------`,
# `+------------------------------------`) separates the sub-exceptions. The model peels the frame off and reads
# what is inside as it reads any traceback: the group's own line (`ExceptionGroup: msg (N sub-exceptions)`) is an
# envelope (catalog/exceptions.yaml), each sub-exception decides as a plain traceback's last line would, and a
# sub-exception printed without a traceback of its own (`| ValueError: 1`) is one too. A `| ` line is peeled only
# within a group's window after its header, so a table's `| a | b |` rows elsewhere stay as they are.
GROUP_HEADER: Final = "Exception Group Traceback (most recent call last)"
_GROUP_OPEN = re.compile(r"^[ \t]*\+ Exception Group Traceback \(most recent call last\):?\s*$")
_GROUP_FRAME = re.compile(r"^[ \t]*\| ?")


@dataclass(slots=True)
class TracebackModel:
    """Per-stream traceback state (one per rank or `who` within a stream)."""

    streams: dict[object, _Stream] = field(default_factory=dict)
    # Per stream, the wrappers' tags seen before a header: key (_lead_key) -> its length and its digits zeroed.
    leads: dict[object, dict[str, tuple[int, str]]] = field(default_factory=dict)
    # Per stream, the line of the last exception group's header (or of a line inside its frame).
    groups: dict[object, int] = field(default_factory=dict)

    def _peel_group(self, body: str, who: object, ctx: LineContext) -> tuple[str, bool]:
        """The line with an exception group's frame taken off (GROUP_HEADER), and whether it was in one."""
        if GROUP_HEADER in body and _GROUP_OPEN.match(body):
            self.groups[who] = ctx.lineno
            return TRACEBACK + ":", True
        at = self.groups.get(who)
        if at is None or ctx.lineno - at > TB_WINDOW or "|" not in body:
            return body, False
        m = _GROUP_FRAME.match(body)
        if m is None:
            return body, False
        self.groups[who] = ctx.lineno
        return body[m.end():], True

    def feed(self, body: str, who: object, ctx: LineContext,
             owner: tuple[int | None, str | None] | None = None) -> Closed | None:
        """Feeds one candidate line; returns the exception when the line closes a traceback.

        A header behind text no prefix layer took off (`<stamp> [run/step/task (pid N)] Traceback ...`) names
        that text as its writer's tag: the later lines of the stream that start with the same tag (its clock
        aside) are that writer's, read without it in a stream of their own, so its frames and final line are
        read as the traceback's and another writer's lines interleaved with them stay apart. A line without a
        remembered tag is read as before. An exception group's frame is taken off first (_peel_group)."""
        body, grouped = self._peel_group(body, who, ctx)
        if grouped:
            return self._member(body, who, ctx, owner)
        at = body.find(TRACEBACK)
        if 0 < at <= MAX_LEAD and body[:at].strip():
            lead = body[:at]
            key = _lead_key(lead)
            seen = self.leads.setdefault(who, {})
            seen.pop(key, None)
            seen[key] = (at, digits_zeroed(lead))
            while len(seen) > MAX_LEADS:
                del seen[next(iter(seen))]
            self._feed(body, who, ctx, owner)  # the stream reads its headers as before: its other lines stay its own
            return self._feed(body[at:], (who, key), ctx, owner)
        tags = self.leads.get(who)
        if tags:
            # The tag of the same writer (its clock aside) first; else the latest tag that differs from the
            # line's only in digits (a logger that numbers each line of the traceback it logs: `traceback-001: `).
            like: tuple[str, int] | None = None
            for key, (n, zkey) in reversed(tags.items()):
                if len(body) > n and digits_zeroed(body[:n]) == zkey:
                    if _lead_key(body[:n]) == key:
                        return self._settled(who, (who, key), body[n:], ctx, owner)
                    like = like or (key, n)
            if like is not None:
                return self._settled(who, (who, like[0]), body[like[1]:], ctx, owner)
            return self._settled(who, who, body, ctx, owner)
        return self._feed(body, who, ctx, owner)

    def _member(self, body: str, who: object, ctx: LineContext,
                owner: tuple[int | None, str | None] | None) -> Closed | None:
        """A line inside an exception group's frame: read as any traceback's line; a sub-exception printed without a
        traceback of its own closes as a member of the group."""
        ctx.claimed = True
        st = self.streams.get(who)
        if (st is None or st.opened is None) and TRACEBACK not in body and not FRAME.match(body):
            exc = exception_shape(body)
            if exc is None:
                return None
            st = st if st is not None else self.streams.setdefault(who, _Stream())
            st.closed, st.decided = ctx.lineno, False  # a sibling of the group's other members, not a chain's
            return Closed(exc, False, owner, (), False, body, who)
        return self._feed(body, who, ctx, owner)

    def _settled(self, who: object, stream: object, body: str, ctx: LineContext,
                 owner: tuple[int | None, str | None] | None) -> Closed | None:
        """`_feed` into one of the two streams a tagged header opened (the plain one and the tag's): when one
        closes, the other, opened by that header and given no frame since, is closed too, so that a logger's
        header whose frames came bare (`... ERROR - Traceback ...`, then `  File ...`) leaves no open stream
        behind to take the logger's later lines for frames."""
        st = self.streams.get(stream)
        at = st.opened if st is not None else None
        closed = self._feed(body, stream, ctx, owner)
        if closed is not None and at is not None:
            for other in (who, *((who, key) for key in self.leads.get(who, {}))):
                twin = self.streams.get(other)
                if other != stream and twin is not None and twin.opened == at and not twin.frames:
                    twin.opened = None
        return closed

    def _feed(self, body: str, who: object, ctx: LineContext,
              owner: tuple[int | None, str | None] | None) -> Closed | None:
        st = self.streams.get(who)
        if st is None:
            st = self.streams[who] = _Stream()
        if TRACEBACK in body:
            continuing = (st.marker is not None and st.closed is not None and st.marker >= st.closed
                          and st.marker - st.closed <= CHAIN_GAP)
            if not continuing:
                st.decided = False
                st.in_thread = st.thread_header is not None and ctx.lineno - st.thread_header <= 1
                st.ignored = st.ignored_header is not None and ctx.lineno - st.ignored_header <= 1
            st.opened, st.owner, st.frames, st.entry, st.call = ctx.lineno, owner, [], None, None
            st.head, st.who, st.head_text = ctx, who, body
            ctx.claimed = True
            return None
        if _THREAD_HEADER.match(body):
            st.thread_header = ctx.lineno
            ctx.claimed = True
            return None
        if _IGNORED_HEADER.match(body):
            st.ignored_header = ctx.lineno
            ctx.claimed = True
            return None
        for marker in CHAIN_MARKERS:
            if marker in body:
                st.marker = ctx.lineno
                ctx.claimed = True
                return None
        if CXX_FRAME.match(body):
            ctx.claimed = True  # a line of a C++ exception's stack: the exception itself is reported apart
            return None
        if st.opened is None:
            if not FRAME.match(body):
                return None
            # A traceback whose header was cut off (a posted or clipped log): its frames open it.
            if not (st.marker is not None and st.closed is not None and 0 <= st.marker - st.closed <= CHAIN_GAP):
                st.decided = False
                st.in_thread = False
                st.ignored = False
            st.opened, st.owner, st.frames, st.call = ctx.lineno, owner, [body.strip()], None
            st.head, st.who, st.head_text = ctx, who, body
            st.entry = None if _stdlib(body) else body.strip()
            st.in_thread = st.in_thread or _THREAD_ENTRY.search(body) is not None
            ctx.claimed = True
            return None
        if ctx.lineno - st.opened > TB_WINDOW:
            st.opened = None
            return None
        exc = exception_shape(body)
        if exc is None:
            ctx.claimed = True  # a frame or source line of the open traceback
            if FRAME.match(body):
                if not st.frames and _THREAD_ENTRY.search(body):
                    st.in_thread = True  # the thread's bootstrap: a thread's report whose header was not kept
                st.frames.append(body.strip())
                del st.frames[:-MAX_FRAMES]
                if st.entry is None and not _stdlib(body):
                    st.entry = body.strip()
                st.call = None
            elif st.frames and st.call is None:
                st.call = body.strip()  # the frame's source line (3.11's caret lines after it are not)
            return None
        chained = st.decided
        frames = tuple(st.frames)
        closed = Closed(exc, chained, st.owner, frames, st.in_thread and library_thread(st.entry),
                        body, who, st.ignored or ignored(frames), st.in_thread, st.call or "")
        st.opened, st.closed, st.owner, st.frames, st.call = None, ctx.lineno, None, [], None
        return closed

    def stack_line(self, body: str, who: object) -> bool:
        """Whether feed reads `body` as a line of a C++ exception's stack (CXX_FRAME: claimed, nothing closed, nothing
        kept) whatever this model holds, and then what feed does to the model with it: the writer's stream made where
        missing. Not a line that holds a traceback's header (a tagged header: leads) or a chain marker, which feed
        tests before; nor one in a stream where a tagged header named a writer (leads: its tag before the line would
        send the rest to the tag's stream). _peel_group leaves such a line as it is (a group's frame starts with `|`
        or `+` after blanks, a C++ stack's line with `frame #` or `Exception raised from`), and so do _feed's tests
        before CXX_FRAME (a thread's or an ignored exception's header starts `Exception in` / `Exception ignored`,
        `Unhandled exception`): tests/extract/test_quiet_claim.py."""
        if (TRACEBACK in body or self.leads.get(who) or not CXX_FRAME.match(body)
                or any(marker in body for marker in CHAIN_MARKERS)):
            return False
        if who not in self.streams:
            self.streams[who] = _Stream()
        return True

    def decided(self, who: object, value: bool, at: tuple[LineContext, str] | None = None) -> None:
        """Whether the chain's member just closed decided it; `at`: that member's place and line, kept while no member
        of the stream decides (`unsettled`)."""
        st = self.streams.setdefault(who, _Stream())
        if value:
            st.unsettled = None
        elif not st.decided and at is not None and st.unsettled is None:
            st.unsettled = at
        st.decided = st.decided or value

    def unsettled(self) -> list[tuple[LineContext, str, object]]:
        """The chains that ended without a member that decided (`_Stream.unsettled`): each one's last place, line and
        stream, where no later member of its stream decided. What such a chain says is that something failed, not
        what: an exception that only wraps the one that began it, which the stream does not hold."""
        return [(st.unsettled[0], st.unsettled[1], who) for who, st in self.streams.items()
                if st.unsettled is not None and not st.decided]

    def open_ends(self, provisioning: Callable[[tuple[str, ...]], object] | None = None) -> list[OpenEnd]:
        """The tracebacks still open where the stream ends, opened by their header and with at least one frame: the
        process stopped (or the log was cut) before Python printed the exception line (frames without a header are
        as often a stack dump of a live process: py-spy's, gdb's `py-bt`). Not a later member of a chain that already
        decided (an envelope), not one that ended a thread or that Python ignored, and at most one per place
        (a tagged header opens two streams: the first opened is kept). `provisioning`: where it names the frames
        (its outermost first) a cluster's provisioning program's own, they count without a header too (no one dumps
        such a program's live stack; it prints its frames only in an exception's report)."""
        out: list[OpenEnd] = []
        seen: set[tuple[str, int]] = set()
        for st in self.streams.values():
            head = st.head
            headed = TRACEBACK in st.head_text or (provisioning is not None and bool(st.frames)
                                                   and provisioning(tuple(st.frames)) is not None)
            if (st.opened is None or head is None or not headed or not st.frames or st.decided
                    or st.in_thread or st.ignored or ignored(tuple(st.frames))):
                continue
            at = (head.file, st.opened)
            if at in seen:
                continue
            seen.add(at)
            out.append(OpenEnd(head, tuple(st.frames), st.owner, st.who, st.head_text))
        return out
