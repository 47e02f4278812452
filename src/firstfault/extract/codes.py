"""Code tables as data: CUDA errors, NCCL results (catalog/cuda.yaml), signals and errno (the stdlib).

Every wording of one fact meets here: `CUDA error: an illegal memory access
was encountered`, `cuda runtime error (700)`, `THCudaCheck FAIL ... error=700`,
`CUDA_ERROR_ILLEGAL_ADDRESS`, `cudaErrorIllegalAddress` and NCCL's `Cuda
failure 'an illegal memory access was encountered'` all give class
`illegal_address`; `Signal 9 (SIGKILL)`, `exitcode: -9`, `exit code 137`
and `Killed` all give SIGKILL; `[Errno 28]`, `ENOSPC` and `No space left on
device` all give ENOSPC.
"""

from __future__ import annotations

import errno as _errno
import os
import signal as _signal
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, NamedTuple

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import (
    LIBRARY_PREFIXES,
    ErrnoInfo,
    ExitPrinter,
    cuda_spellings,
    cuda_table,
    cudnn_status_table,
    errno_table,
    exit_printers,
    hccl_result_table,
    library_status_table,
    mpich_classes,
    nccl_result_table,
    pseudo_fs_table,
    runtime_result_table,
    version_key,
    windows_error_table,
)

# --------------------------------------------------------------------------
# Signals
# --------------------------------------------------------------------------

# Signals a process raises on itself (a fault), as opposed to ones sent from outside. SIGABRT is not
# among them: abort() is as often the runtime's reaction to another failure (the c10d watchdog,
# std::terminate) as a crash, so only the process's own report of it counts as one (extract/signals.py).
SELF_SIGNALS: Final = frozenset({"SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGTRAP", "SIGSYS"})


@lru_cache(maxsize=1)
def _signal_names() -> dict[int, str]:
    return {int(s): s.name for s in _signal.Signals if not s.name.startswith("SIG_") and s.name[3:4] != "R"}


def signal_name(num: int) -> str:
    return _signal_names().get(num, f"SIG{num}")


@lru_cache(maxsize=1)
def signal_names() -> frozenset[str]:
    """Every signal name signal_name gives (SIGKILL, SIGSEGV, ...)."""
    return frozenset(_signal_names().values())


@lru_cache(maxsize=1)
def strsignal_table() -> dict[str, str]:
    """strsignal() texts ("Segmentation fault", "Killed", "Bus error") -> signal name."""
    out: dict[str, str] = {}
    for num, name in sorted(_signal_names().items()):
        text = _signal.strsignal(num)
        if text and not text.startswith(("Unknown signal", "Real-time signal")):
            out.setdefault(text, name)
    return out


def _text_key(text: str) -> str:
    return " ".join(text.strip().rstrip(".").lower().replace("-", " ").split())


@lru_cache(maxsize=1)
def _strsignal_keys() -> dict[str, str]:
    out: dict[str, str] = {}
    for text, name in strsignal_table().items():
        out.setdefault(_text_key(text), name)
    return out


def signal_of_text(text: str) -> str | None:
    """The signal a strsignal() text names, in any case and with `-` for a space
    (the DataLoader writes "floating-point exception" for "Floating point exception")."""
    return _strsignal_keys().get(_text_key(text))


def strsignal_alternation() -> str:
    """A regex alternation of every strsignal() text, longest first."""
    return re.alternation(strsignal_table())


def exit_signal(exitcode: int) -> str | None:
    """The signal a number no reader knows the printer of means: Python's -N and the shell's 128+N
    (catalog/exits.yaml, the `generic` printer)."""
    return exit_reading("generic", exitcode).signal


# --------------------------------------------------------------------------
# Exit numbers, read by their printer's meaning (catalog/exits.yaml)
# --------------------------------------------------------------------------

_SHELL_SIGNALS: Final = 64  # 128+N is a signal for N up to SIGRTMAX


class ExitReading(NamedTuple):
    """What a printed exit number says: the process's exit value (if it exited), the signal that ended it (if
    one did), and whether the printer's versions read the number differently (then: the weaker reading)."""

    exit: int | None
    signal: str | None
    ambiguous: bool = False


def _shell(n: int) -> ExitReading:
    if 128 < n <= 128 + _SHELL_SIGNALS:
        return ExitReading(n, signal_name(n - 128))
    return ExitReading(n, None)


def _wait(n: int) -> ExitReading | None:
    if n < 0 or n > 0xFFFF:
        return None  # no wait status
    low = n & 0x7F
    if low == 0:
        return _shell(n >> 8)
    if low == 0x7F:
        return ExitReading(None, None)  # a stopped process: no end
    return ExitReading(None, signal_name(low))


def _readings(means: str, n: int) -> list[ExitReading]:
    """Every reading one row's meaning gives a number (none: the number cannot be printed so)."""
    if means == "shell":
        return [_shell(n)]
    if means == "negative":
        if n < 0:
            # -N for a signal up to SIGRTMAX; beyond, a value of the program's own (Windows' NTSTATUS as a console
            # prints it: `exit code -1073741819`)
            return [ExitReading(None, signal_name(-n))] if -n <= _SHELL_SIGNALS else [ExitReading(n, None)]
        return [_shell(n)]
    if means == "wait":
        w = _wait(n)
        return [w] if w is not None else []
    if means == "either":
        # The exit value of a process that exited, or the raw status of one a signal ended (never a status whose
        # low bits say it exited: that one was printed as its exit value).
        if not 0 < n <= 0xFF:
            return []
        w = _wait(n)
        return [_shell(n)] + ([w] if w is not None and w.signal is not None else [])
    if means == "signal":
        return [ExitReading(None, signal_name(n))] if n > 0 else []
    if means == "offset":
        if 256 < n <= 256 + _SHELL_SIGNALS:
            return [ExitReading(None, signal_name(n - 256))]
        return [_shell(n)] if 0 <= n <= 0xFF else [ExitReading(n, None)]
    return [ExitReading(n, None)]  # value: the program's own code


@lru_cache(maxsize=1)
def _printer_rows() -> dict[str, tuple[ExitPrinter, ...]]:
    out: dict[str, tuple[ExitPrinter, ...]] = {}
    for row in exit_printers():
        out[row.printer] = (*out.get(row.printer, ()), row)
    return out


def signal_number(name: str) -> int | None:
    """A signal's number from the name signal_name gives it (`SIGKILL` 9, `SIG70` 70)."""
    num = next((n for n, s in _signal_names().items() if s == name), None)
    if num is None and name.startswith("SIG") and name[3:].isdigit():
        num = int(name[3:])
    return num


def exit_signum(printer: str, value: int) -> int | None:
    """The number of the signal `value` means as `printer` prints it, if it means one (exit_reading)."""
    sig = exit_reading(printer, value).signal
    return signal_number(sig) if sig is not None else None


def exit_reading(printer: str, value: int, *, since: str | None = None, until: str | None = None,
                 version: str | None = None) -> ExitReading:
    """What `value` means as `printer` prints it (catalog/exits.yaml), over the printer's versions from `since` to
    before `until`, or at the one `version` the evidence names (None: any). Where the versions read it differently,
    the weaker reading: its exit value where one reads it as one, no signal, and `ambiguous`."""
    rows = _printer_rows().get(printer)
    if rows is None:
        raise KeyError(f"catalog/exits.yaml: no printer {printer!r}")
    lo = version_key(since) if since else None
    hi = version_key(until) if until else None
    at = version_key(version) if version else None
    readings: list[ExitReading] = []
    for row in rows:
        if hi is not None and row.since is not None and version_key(row.since) >= hi:
            continue
        if lo is not None and row.until is not None and version_key(row.until) <= lo:
            continue
        if at is not None and ((row.since is not None and version_key(row.since) > at)
                               or (row.until is not None and version_key(row.until) <= at)):
            continue
        readings += [r for r in _readings(row.means, value) if r not in readings]
    if not readings:
        return ExitReading(value, None, ambiguous=True)  # no version prints it so: read as a bare number
    signals = {r.signal for r in readings}
    if len(signals) == 1:
        # One meaning (139: a wrapper's 128+11 or a status with the core flag, SIGSEGV either way).
        values = {r.exit for r in readings}
        return ExitReading(values.pop() if len(values) == 1 else None, signals.pop())
    exits = {r.exit for r in readings if r.signal is None and r.exit is not None}
    return ExitReading(exits.pop() if len(exits) == 1 else None, None, ambiguous=True)


def by_whom(signal: str, reporter: str) -> str:
    """`self` for a fault the process raised on itself, else who reported the kill."""
    return "self" if signal in SELF_SIGNALS else reporter


# --------------------------------------------------------------------------
# errno
# --------------------------------------------------------------------------

# Whose side an errno is on (catalog/exceptions.yaml `errnos`): a full file system, a dead disk, a stale
# NFS handle, a FUSE daemon gone are the storage's (unless the path is the node's /dev/shm, which the
# workload's container sizes); a port in use or an address the node lacks the job's own set-up; a
# connection refused or reset a peer's.


@lru_cache(maxsize=1)
def storage_errnos() -> frozenset[str]:
    """The errno names on the storage's side whatever the call (not a row that is so only on some calls: ENODEV,
    storage only on mmap, where its strerror is any device's words elsewhere)."""
    return frozenset(name for name, row in errno_table().items() if row.side == "storage" and not row.calls)


def errno_row(name: str | None) -> ErrnoInfo | None:
    """The errno table's row for an errno name, if it has one."""
    return errno_table().get(name) if name else None


@lru_cache(maxsize=1)
def _class_errnos() -> dict[str, str]:
    return {cls: name for name, row in errno_table().items() for cls in row.classes}


def class_errno(cls: str) -> str | None:
    """The errno an OSError subclass stands for alone (catalog/exceptions.yaml `errnos` `classes`:
    ConnectionResetError -> ECONNRESET), read where the message carries none."""
    return _class_errnos().get(cls)

_ERRNO_NUM = re.compile(r"\[Errno (?P<num>-?\d+)\]\s*(?P<text>[^:'\"]*)")
# Python's OSError on Windows: `[WinError 112] There is not enough space on the disk` (a Windows system error code,
# catalog/exceptions.yaml `windows_errors`)
_WINERROR_NUM = re.compile(r"\[WinError (?P<num>-?\d{1,10})\]")
_ERRNO_NAME = re.compile(r"\b(?P<name>E[A-Z0-9]{2,15})\b")  # E2BIG, EL2HLT: digits too
# HDF5's report of a failed system call (HDFGroup/hdf5 src/H5Eprivate.h HSYS_GOTO_ERROR / HSYS_DONE_ERROR: `"%s,
# errno = %d, error message = '%s'"`, the call's words, errno and strerror(errno); src/H5FDsec2.c's open, read, write,
# truncate and lock, `unable to open file: name = '%s', errno = %d, error message = '%s', flags = %x, ...`), which
# h5py and PyTables put in their exception's message and netCDF's HDF5 layer in its error stack: the number decides
# (strerror may be `Unknown error 524`, the kernel's own code a mount let through: the table's `numbers`).
_ERRNO_EQUALS = re.compile(r"\berrno = (?P<num>\d{1,4}), error message = '")
ERRNO_EQUALS_LITERAL: Final = ", error message = '"


@lru_cache(maxsize=1)
def _strerror_table() -> dict[str, str]:
    out: dict[str, str] = {}
    for num, name in sorted(_errno.errorcode.items()):
        text = os.strerror(num)
        if text and not text.startswith("Unknown error"):
            out.setdefault(text, name)
    # ... and Windows' texts for its system error codes (FormatMessage's), each as the errno it stands for: a program
    # on Windows prints these where a Linux one prints strerror (Rust's `... (os error 112)`, Python's `[WinError N]`)
    for row in windows_error_table().values():
        out.setdefault(row.text, row.errno)
    # ... and the other spellings of an errno's text the table lists (catalog/exceptions.yaml `spellings`)
    for info in errno_table().values():
        for text in info.spellings:
            out.setdefault(text, info.name)
    return out


def is_strerror(text: str) -> bool:
    """Whether `text` is, whole and as spelled, the host's strerror words for an errno (`No such device`)."""
    name = _strerror_table().get(text)
    num = getattr(_errno, name, None) if name is not None else None
    return isinstance(num, int) and os.strerror(num) == text  # the host's words, not Windows' or an older spelling


@lru_cache(maxsize=1)
def _strerror_rx() -> re.Literals:
    # Case-blind: Go programs (containerd, kubelet, docker) and TensorFlow's statuses print strerror lower-case
    # (`write /var/lib/docker/...: no space left on device`, `disk quota exceeded [Op:SaveV2]`).
    return re.Literals((t for t in _strerror_table() if len(t) >= 12), re.IGNORECASE, keep=True)


@lru_cache(maxsize=1)
def _strerror_folded() -> dict[str, str]:
    return {t.lower(): name for t, name in _strerror_table().items()}


@lru_cache(maxsize=1)
def _other_numbers() -> dict[int, str]:
    """The other numbers programs print for an errno (catalog/exceptions.yaml `errnos` `numbers`: Linux's
    kernel-internal ENOTSUPP 524) -> the errno's name."""
    return {n: name for name, row in errno_table().items() for n in row.numbers}


def errno_of(text: str) -> str | None:
    """The errno name a message carries: `[Errno 28]`, `[WinError 112]` (the errno the Windows code stands for),
    `ENOSPC`, or the strerror text (the host's, or Windows' for one of its codes: catalog/exceptions.yaml
    `windows_errors`)."""
    m = _ERRNO_NUM.search(text)
    # A negative number is no errno: Python's socket.gaierror carries getaddrinfo's EAI_* code and gai_strerror's
    # words (CPython Modules/socketmodule.c set_gaierror: `[Errno -3] Temporary failure in name resolution`,
    # `[Errno -2] Name or service not known`, `[Errno -5] No address associated with hostname`: glibc's netdb.h
    # EAI_AGAIN -3, EAI_NONAME -2, EAI_NODATA -5), which urllib3's NewConnectionError quotes; its absolute value is
    # an unrelated errno (5 is EIO).
    if m and not m.group("num").startswith("-"):
        name = _errno.errorcode.get(int(m.group("num")))
        if name:
            return name
    if ERRNO_EQUALS_LITERAL in text and (e := _ERRNO_EQUALS.search(text)) is not None:
        code = int(e.group("num"))
        name = _errno.errorcode.get(code) or _other_numbers().get(code)
        if name:
            return name
    if "[WinError " in text and (w := _WINERROR_NUM.search(text)) is not None:
        row = windows_error_table().get(abs(int(w.group("num"))))
        if row is not None:
            return row.errno
    for m2 in _ERRNO_NAME.finditer(text):
        num = getattr(_errno, m2.group("name"), None)
        if isinstance(num, int):
            # an alias as the table names its number (EWOULDBLOCK is EAGAIN, EOPNOTSUPP the errno module's ENOTSUP)
            return _errno.errorcode.get(num, m2.group("name"))
    # TensorFlow's (tsl's) file system error: `<context>; <strerror>` (tsl/platform/errors.cc IOError: StrCat(context,
    # "; ", strerror(err_number))), under a status whose own words may be another errno's strerror (EROFS and EPERM
    # are reported as PERMISSION_DENIED: `Permission denied: /mnt/out/variables_temp/part-00000; Read-only file
    # system`): the strerror after the last `; ` is the errno, whatever words stand before it.
    if "; " in text:
        tail = _strerror_folded().get(text.rpartition("; ")[2].strip().rstrip(".").lower())
        if tail is not None:
            return tail
    m3 = _strerror_rx().search(text)
    return _strerror_folded()[m3.group(0).lower()] if m3 else None


@lru_cache(maxsize=1)
def storage_strerror_rx() -> re.Pattern[str]:
    """A program's own error report ending in a storage errno's strerror: `tee: out.log: No space left on device`,
    `cp: error writing 'ckpt.pt': Disk quota exceeded`, `write /var/lib/...: no space left on device`. The strerror
    may follow the errno's number (`open64(...) failed, errno 28, No space left on device`, IOR's and mdtest's
    form) or a call's `failed` with no colon (`write(20, 0x25385000, 3901) failed No space left on device`,
    `mmap failed with Disk quota exceeded`: C programs that print strerror after their own words) and be followed
    by the number (`(28)`, Rust's `(os error 28)`) or the C source line that reported it (`(aiori-POSIX.c:413)`)."""
    alternation = re.alternation(t.lower() for t, name in _strerror_table().items() if name in storage_errnos())
    # Possessive after the text: each run of blanks is read once (three `\s*` in a row over one run were cubic).
    return re.compile(r"(?::|\berrno \d+,|\bfailed(?: with)?)\s+(?P<text>" + alternation + r")\s*+[.)\]'\"]*+"
                      r"(?:\s*+\((?:os error |errno )?\d++\)|\s*+\([\w.\-]+\.(?:c|cc|cpp|h):\d+\))?"
                      r"(?:\s*+\[[^\]]*+\])?\s*+$", re.IGNORECASE, keep=True)


def storage_strerror_texts() -> tuple[str, ...]:
    """The strerror texts of the storage errnos, as printed and lower-case (prefilter words for
    storage_strerror_rx)."""
    texts = {t for t, name in _strerror_table().items() if name in storage_errnos()}
    return tuple(sorted(texts | {t.lower() for t in texts}))


def file_only_strerror_texts() -> tuple[str, ...]:
    """The strerror texts of the errnos only a file system says (catalog/exceptions.yaml `file_only`), as
    printed and lower-case."""
    texts = {t for t, name in _strerror_table().items() if (row := errno_row(name)) is not None and row.file_only}
    return tuple(sorted(texts | {t.lower() for t in texts}))


_PATH = re.compile(r"""(?:'|"|\s|^)(?P<path>/[^\s'":,]+)""")


def path_of(text: str) -> str | None:
    m = _PATH.search(text)
    return m.group("path") if m else None


def pseudo_fs(path: str | None) -> str | None:
    """The pseudo file system a path is on (catalog/exceptions.yaml `pseudo_filesystems`: /proc, /sys, a cgroup
    mount), or None: an errno of such a path is the kernel object's answer (a cpuset without CPUs says ENOSPC), never
    a storage's."""
    if not path or not path.startswith("/"):
        return None
    probe = path if path.endswith("/") else path + "/"
    return next((row.fs for row in pseudo_fs_table() if probe.startswith(row.prefix)), None)


# PyTorch's name for a tensor's POSIX shared-memory object (aten/src/ATen/MapAllocator.cpp NewProcessWideShmHandle:
# `/torch_<pid>_<counter>`; before it THManagedMapAllocator's `/torch_<pid>_<random>_<n>`), which shm_open makes under
# /dev/shm, as MapAllocator's errors print it between angle brackets (`unable to write to file
# </torch_31911_952036340_6686>: No space left on device (28)`, idiap/ESLAM#20).
_TORCH_SHM = re.compile(r"</?torch_\d+_\d+")
_TORCH_SHM_PATH = re.compile(r"/torch_\d+_\d+(?:_\d+)?$")


def is_shm(path: str | None, text: str) -> bool:
    """Whether an error is about the node's shared memory (/dev/shm, or PyTorch's shared-memory object there), which
    the job's container or pod sizes: never the storage's. A directory of the job's own at the root that only starts
    like PyTorch's name (`/torch_models/x.pt`) is a file system's."""
    if path and (path.startswith(("/dev/shm", "/run/shm")) or _TORCH_SHM_PATH.match(path) is not None):
        return True
    return "shared memory" in text.lower() or ("torch_" in text and _TORCH_SHM.search(text) is not None)


# --------------------------------------------------------------------------
# CUDA errors
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CudaError:
    """A CUDA error as the vendor table names it: code, name, message and class."""

    code: int | None
    name: str
    message: str
    cls: str


# Where a line reports a CUDA error, in any wording; the error itself is then
# found by message, by name, or by number (`error=700`, `(39)`, `error 214`).
CUDA_ANCHORS: Final = (
    "CUDA error", "cuda runtime error", "CUDA kernel failed", "Cuda failure", "THCudaCheck FAIL",
    "CUDA driver error", "CUDA_ERROR_", "cudaError", "CUDA Error", "CUresult", "cuCtxCreate", "cuInit",
    "cudaGetLastError", "CUDA call failed", "Triton Error [CUDA]", "No CUDA GPUs are available",
    "CUDA-capable device",
    # TensorFlow's GPU device set-up quoting cudaGetErrorString after its own words (`CUDA runtime implicit
    # initialization on GPU:0 failed. Status: device kernel image is invalid`), as it reaches a Python
    # InternalError, Triton's model loader and the C++ session log alike.
    "CUDA runtime implicit initialization",
    # FasterTransformer's and TensorRT-LLM's check_cuda_error (`[FT][ERROR] CUDA runtime error: the provided PTX
    # was compiled with an unsupported toolchain. .../cuda_utils.h:393`, `[TensorRT-LLM][ERROR] CUDA runtime error
    # in cudaMalloc...`), capitalised where PyTorch's THC wrote `cuda runtime error (2)`.
    "CUDA runtime error",
    # PyTorch's check of the driver's CUDA version (cuda.yaml, 35's alias).
    "The NVIDIA driver on your system is too old",
    # PyTorch's words before 999's message from its device count (c10/cuda/CUDAFunctions.cpp device_count_impl, `case
    # cudaErrorUnknown`: `CUDA unknown error - this may be due to an incorrectly set up environment, ...`, as an
    # exception and as the `CUDA initialization:` warning). The line names no call of INIT_CALLS, so 999 there is
    # `other`, as from any call (cuda.yaml `at_init`).
    "CUDA unknown error - this may be due to",
    # HIP (ROCm) mirrors the CUDA runtime: hipError_t keeps cudaError_t's numbers and hipGetErrorString its messages
    # (ROCm/HIP include/hip/hip_runtime_api.h), and PyTorch on ROCm prints `HIP error: an illegal memory access was
    # encountered` where a CUDA build prints `CUDA error: ...`: the same table reads it.
    "HIP error", "hipError",
    # NCCL's examples' CUDACHECK macro (`printf("Failed: Cuda error %s:%d '%s'\n", __FILE__, __LINE__,
    # cudaGetErrorString(e))`), copied into many programs: vLLM's custom all-reduce, SGLang, nccl-tests' users.
    "Cuda error",
    # CTranslate2's CUDA_CHECK (`THROW_RUNTIME_ERROR("CUDA failed with error " + cudaGetErrorString(code))`, its
    # src/cuda/utils.h), under faster-whisper and the other CTranslate2 servers, and its ROCm build's HIP twin.
    "CUDA failed with error", "HIP failed with error",
    # ggml's CUDA backend (llama.cpp, Ollama, whisper.cpp; ggml/src/ggml-cuda/ggml-cuda.cu ggml_cuda_init) when
    # cudaGetDeviceCount fails: `ggml_cuda_init: failed to initialize CUDA: <cudaGetErrorString>`, `ROCm` for its
    # HIP build (GGML_CUDA_NAME). It is the call that starts CUDA in the process: INIT_CALLS. (The function's name
    # is in the anchor: every anchor holds one of _ANCHOR_KEYS.)
    "ggml_cuda_init: failed to initialize",
    # Geryon, the GPU library of LAMMPS' GPU package (lammps/lammps lib/gpu/geryon/nvd_macros.h CU_SAFE_CALL: `Cuda
    # driver error %d in call at file '%s' in line %i.`; its older copies `Cuda driver error %d in file ...`): the
    # CUresult a driver API call returned, by its number alone (`Cuda driver error 804 in call at file
    # '.../geryon/nvd_device.h' in line 333.`), then MPI_Abort.
    "Cuda driver error",
    # The cudaAssert / cuda_assert helper copied into many CUDA programs (DeePMD-kit's source/lib/include/
    # gpu_cuda.h before its DPErrcheck, and others': `fprintf(stderr, "cuda assert: %s %s %d\\n",
    # cudaGetErrorString(code), file, line); exit(code);`, spelled `CUDA assert` and `CUDA Assert` too): the error
    # string of the call that failed, then its file and line, then the program exits. (The `GPUassert: %s %s %d`
    # twin is read by the message's own words; a message too short for that, `invalid argument`, needs the anchor.)
    "cuda assert:", "CUDA assert:", "CUDA Assert:",
    # DeePMD-kit's DPAssert since 2.2 (deepmodeling/deepmd-kit source/lib/include/gpu_cuda.h: `"CUDA Runtime library
    # throws an error: " + cudaGetErrorString(code) + ", in file " + file + ": " + line`, thrown as a
    # deepmd_exception; gpu_rocm.h's twin `HIP runtime library throws an error: ` with hipGetErrorString), as LAMMPS'
    # pair deepmd and TensorFlow's op status pass it on (`INTERNAL: Operation received an exception: DeePMD-kit
    # Error: CUDA Runtime library throws an error: an illegal memory access was encountered, in file
    # .../prod_env_mat.cu: 625`).
    "CUDA Runtime library throws an error:", "HIP runtime library throws an error:",
    # tensorview's TV_CHECK_CUDA_ERR and TV_CHECK_CUDA_ERR_V2 (traveller59/spconv include/tensorview/tensor.h, carried
    # on in FindDefinition/cumm under spconv 2.x: `__macro_s << __FILE__ << " " << __LINE__ << "\n"; __macro_s <<
    # "cuda execution failed with error " << __macro_err;` then, in _V2, `" " << cudaGetErrorString(__macro_err)`),
    # thrown as std::runtime_error under spconv's and its users' (mmdetection3d, OpenPCDet) sparse convolutions:
    # `cuda execution failed with error 700 an illegal memory access was encountered`, spconv 1.x's `... with error 2`
    # (the number alone: 2 is the accelerator's memory).
    "cuda execution failed with error",
)
# A CUDA API call reporting its own failure (`call to cuMemAlloc returned error 2`): `returned error` is an
# anchor only after the call's name; other programs say it too (the Azure SDK for Go's `storage: service
# returned error: StatusCode=503, ErrorCode=ServerBusy`).
_CALL_RETURNED = re.compile(r"\bcu(?:da)?[A-Z]\w*(?:\([^()]*\))? returned error\b")
# A device allocation call's own failure with cudaGetErrorString after it: ggml's CUDA backend under llama.cpp's
# server and Ollama (ggml-org/llama.cpp ggml/src/ggml-cuda/ggml-cuda.cu ggml_backend_cuda_buffer_type_alloc_buffer:
# `allocating 144817.04 MiB on device 0: cudaMalloc failed: out of memory`, ggml-org/llama.cpp#20431), and any program
# that prints `cudaMallocAsync failed: ...` or `cuMemAlloc failed: ...`; MXNet's GPU storage managers (src/storage/
# pooled_storage_manager.h: `cudaMalloc failed: out of memory` before 1.6, then `cudaMalloc retry failed: out of
# memory` once its pool released its cached blocks and tried again, raised as MXNetError, apache/mxnet#17126,
# deepinsight/insightface#1240). The status after it decides (cudaErrorMemoryAllocation's `out of memory` is the
# accelerator's memory, `invalid device ordinal` the job's configuration). Only the device's allocators: a pinned host
# allocation that failed (cudaMallocHost, cudaHostAlloc) ran out of host memory, not the GPU's.
_ALLOC_FAILED = re.compile(r"\b(?:cudaMalloc(?:Async|Managed|Pitch|3D|FromPoolAsync)?|cuMemAlloc(?:_v2|Async|Managed|"
                           r"Pitch)?)(?:\([^()]*\))?(?: retry)? failed: ")
ALLOC_LITERALS: Final = ("cudaMalloc", "cuMemAlloc")
# A failed status check on a CUDA call, as glog's CHECK prints it (`Check failed: <expression> <streamed words>`):
# Caffe's CUDA_CHECK (`Check failed: error == cudaSuccess (8 vs. 0)  invalid device function`, BVLC/caffe
# include/caffe/util/device_alternate.hpp), mshadow's MSHADOW_CUDA_CALL and MXNet's CUDA_CALL (`Check failed: e ==
# cudaSuccess || e == cudaErrorCudartUnloading CUDA: out of memory`), Minerva's (`Check failed: (e) == (cudaSuccess)
# CudaPerformNormAddOnRow CUDA: invalid device function`), and ROCm's ports of them with `hipSuccess`. The expression
# names codes the call did not return (cudaSuccess, and the cudaErrorCudartUnloading that MXNet tolerates): the
# error is the one cudaGetErrorString printed after it, after `CUDA: ` where the macro says so. The `(8 vs. 0)`
# numbers are the toolkit's of the day (before CUDA 10.1, 8 was invalid device function; today it is 98), so only
# the message names the error; without one, a CUDA error whose kind is not said.
# The same check in an assertion's words, the expression quoted and then ` failed`: the C library's assert()
# (glibc assert/assert.c `%s%s%s:%u: %s%sAssertion `%s' failed.`: `Assertion `err == cudaSuccess' failed.`) and
# FAISS's GPU code (facebookresearch/faiss faiss/impl/FaissAssert.h: FAISS_ASSERT_FMT's `Faiss assertion '%s' failed
# in %s at %s:%d; details: ` + its format, which faiss/gpu/utils/DeviceUtils.h CUDA_VERIFY makes `CUDA error %d %s`
# with cudaGetErrorString; FAISS_THROW_IF_NOT_FMT's `Error: '%s' failed: ` + its format, raised to Python as
# RuntimeError, which faiss/gpu/StandardGpuResources.cpp's allocator fills with `Failed to cudaMalloc <n> bytes on
# device <d> (error 2 out of memory` before 1.7.1 and `StandardGpuResources: alloc fail ... (cudaMalloc error out of
# memory [2])` since). Its bare FAISS_ASSERT (`Faiss assertion 'err == cudaSuccess' failed in ... at
# utils/StackDeviceMemory.cpp:33`) prints no status: a CUDA error whose kind is not said.
_CHECK_FAILED: Final = ("Check failed", "Success' failed", "Success)' failed")
_CHECKED_SUCCESS: Final = ("cudaSuccess", "hipSuccess")
_CHECK_MESSAGE_AFTER: Final = "CUDA: "
# The pinned host allocators, whose `out of memory` is the host's (as _ALLOC_FAILED says): a failed check on one
# (FAISS's `failed to cudaHostAlloc <n> bytes for CPU <-> GPU async copy buffer (error 2 out of memory)`) is no
# accelerator OOM.
_HOST_ALLOC_CALLS: Final = ("cudaHostAlloc", "cudaMallocHost", "cuMemHostAlloc", "cuMemAllocHost", "hipHostMalloc",
                            "hipMallocHost", "hipHostAlloc")
# A CUDA driver call (or a shim's wrapper of one, named as the driver's calls are: `cu` and a capital) reporting its
# own failure with the CUresult it got, as `<call> failed res=<N>`: HAMi-core, the vGPU layer a Kubernetes pod's
# CUDA calls go through under HAMi (Project-HAMi/HAMi-core src/allocator/allocator.c `LOG_ERROR("cuMemoryAllocate
# failed res=%d", res)`, the same for cuMemAllocFromPoolAsync, cuDeviceGetMemPool and its other hooks), whose limit
# on the pod's device memory answers CUDA_ERROR_OUT_OF_MEMORY (2). The number is the call's result: the CUDA table
# reads it (2 the accelerator's memory, another code its own class, one the table lacks a CUDA error of no kind).
_CALL_FAILED_RES = re.compile(r"\bcu[A-Z]\w*(?:\([^()]*\))? failed,? (?:res|ret|rc|result)=(?P<code>-?\d{1,3})\b")
_CALL_FAILED_LITERALS: Final = (" failed res=", " failed ret=", " failed rc=", " failed result=",
                                " failed, res=", " failed, ret=", " failed, rc=", " failed, result=")
# The literals of every anchor (the prefilter's words for the lines cuda_error_of reads).
CUDA_LITERALS: Final = (*CUDA_ANCHORS, "returned error", *ALLOC_LITERALS, *_CHECKED_SUCCESS, *_CALL_FAILED_LITERALS)
_CODE = re.compile(r"(?:error[ =(:]+|\()(?P<code>\d{1,3})\)?(?:\s*[:(]|\s|$)")
# The number a named call returned, before any other number of the line (the call's own arguments among them):
# the NGC containers' start-up check `[[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]`, `call to cuCtxCreate
# returned error 2`.
_RETURNED_CODE = re.compile(r"\bcu(?:da)?[A-Z]\w*(?:\([^()]*\))? returned (?:error )?(?P<code>\d{1,3})\b")
# A code followed by its own message, as a caller prints cudaGetErrorString after the number: PyTorch's
# `Unexpected error from cudaGetDeviceCount(). ... Error 803: system has unsupported display driver / cuda
# driver combination`, onnxruntime's `CUDA failure 804: forward compatibility was attempted on non supported HW`.
# The number and the table's message for it must agree, so no anchor word is needed.
CODED_CUDA_MESSAGE: Final = re.compile(r"(?:[Ee]rror|ERROR|[Ff]ailure)[ =(:]*(?P<code>\d{1,3})\)?:\s+")
# ... and a message followed by its own number in parentheses, as cudaGetErrorString's caller prints it after the
# text: the NGC containers' banner `[[ System has unsupported display driver / cuda driver combination (error 803)
# ]]`, cuSZ's `CUDA API failed at src/cusz.cu:154 with error: initialization error (3)`. Again the number and the
# message before it must agree.
MESSAGE_CUDA_CODE: Final = re.compile(r"\((?:[Ee]rror |[Cc]ode )?(?P<code>\d{1,3})\)")
# A table message must be this long to count without an anchor word (`unknown error (999)` says nothing of CUDA).
_UNANCHORED_MIN: Final = 16
# A call of CUDA's runtime or driver API, named with its arguments (`cudaMalloc(&a_new, n)`, `cuMemAlloc(&p, n)`).
_CUDA_CALL = re.compile(r"\bcu(?:da)?[A-Z][A-Za-z0-9_]{1,60}\(")


def hip_names(runtime: str | None, driver: str | None) -> tuple[str, ...]:
    """HIP's names for a CUDA error (lower-case). HIP mirrors the CUDA runtime (ROCm/HIP
    include/hip/hip_runtime_api.h): hipError_t keeps cudaError_t's numbers, and each name is CUDA's with `hip` for
    `cuda` (`cudaErrorInvalidDeviceFunction` -> `hipErrorInvalidDeviceFunction`) or, where the runtime's name
    differs, the driver API's in CamelCase (`CUDA_ERROR_NO_BINARY_FOR_GPU` -> `hipErrorNoBinaryForGpu`,
    `CUDA_ERROR_OUT_OF_MEMORY` -> `hipErrorOutOfMemory`)."""
    names = []
    if runtime and runtime.startswith("cudaError"):
        names.append("hip" + runtime[4:])
    if driver and driver.startswith("CUDA_ERROR_"):
        names.append("hipError" + "".join(w.capitalize() for w in driver[11:].split("_")))
    return tuple(n.lower() for n in names)


@lru_cache(maxsize=1)
def _cuda_index() -> tuple[dict[str, CudaError], re.Literals, dict[int, CudaError]]:
    by_key: dict[str, CudaError] = {}
    by_code: dict[int, CudaError] = {}
    for code, row in sorted(cuda_table().items()):
        err = CudaError(code, row.name, row.message, row.cuda_class)
        by_code[code] = err
        for key in (row.message.lower(), (row.runtime or "").lower(), (row.driver or "").lower(),
                    *(a.lower() for a in row.aliases), *hip_names(row.runtime, row.driver)):
            if key:
                by_key.setdefault(key, err)
    return by_key, re.Literals(by_key, re.IGNORECASE, keep=True), by_code


_ZERO_DIGITS: Final = str.maketrans("0123456789", "0" * 10)


@lru_cache(maxsize=1)
def _digit_keys() -> tuple[str, ...]:
    """The table's texts (_cuda_index's keys) that hold a digit, their digits made `0` and case-folded: 27's `...
    32-bit non float type`, 32's `... fit in 32 bit`."""
    return tuple(sorted({k.translate(_ZERO_DIGITS).casefold() for k in _cuda_index()[0]
                         if any(c.isdigit() for c in k)}))


def digit_message(zeroed: str) -> bool:
    """Whether a text, given with its digits made `0` (memo.digits_zeroed), may hold one of the table's texts that
    hold a digit (_digit_keys), whatever its digits were: where it does, the digits decide whether it is that text
    (`too large to fit in 32 bit` is 32's, `... in 64 bit` no error's), so its reading is not a function of its digits
    made `0` (extract/traceback.py `cuda_drafts`' memo). Case-folded, as the table's search ignores case."""
    keys = _digit_keys()
    if not keys:
        return False
    folded = zeroed.casefold()
    return any(k in folded for k in keys)


# The other accelerator runtimes' results (catalog/cuda.yaml `runtime_results`: Level Zero's ze_result_t, Unified
# Runtime's ur_result_t, HIP's own codes, Synapse's synStatus), read as CUDA's errors of the row's class: by the name a
# line prints, and a synStatus by its number after the word as the Habana PyTorch bridge prints it (`synStatus=8
# [Device not found] Device acquire failed.`). The names are whole words of their enums' spelling (a prefix, capitals:
# `ZE_RESULT_ERROR_DEVICE_LOST`, `synDeviceReset`); a name no row holds (`ZE_RESULT_SUCCESS`) is none.
_RUNTIME_NAME = re.compile(r"\b(?:ZE_RESULT_[A-Z_]{2,60}|UR_RESULT_[A-Z_]{2,60}|hipError[A-Z][A-Za-z]{1,60}"
                           r"|syn[A-Z][A-Za-z]{2,60})\b")
_SYN_STATUS = re.compile(r"\bsynStatus[= ](?P<code>\d{1,3})\b")
# The words that bring a line to the readers of runtime_result_of (`synStatus` also the one whose digits it reads).
RUNTIME_LITERALS: Final = ("ZE_RESULT_", "UR_RESULT_", "synStatus")


@lru_cache(maxsize=1)
def _synapse_codes() -> dict[int, str]:
    return {r.code: r.name for r in runtime_result_table().values() if r.api == "synapse"}


def runtime_result_of(text: str) -> CudaError | None:
    """Another accelerator runtime's result a line names (catalog/cuda.yaml `runtime_results`), as a CUDA error of the
    row's class with no CUDA code: the first name of a row on the line, else a synStatus by its number."""
    if "RESULT_" not in text and "syn" not in text and "hipError" not in text:
        return None
    table = runtime_result_table()
    for m in _RUNTIME_NAME.finditer(text):
        row = table.get(m.group(0))
        if row is not None:
            return CudaError(None, row.name, "", row.cuda_class)
    if "synStatus" in text:
        for c in _SYN_STATUS.finditer(text):
            name = _synapse_codes().get(int(c.group("code")))
            if name is not None:
                return CudaError(None, name, "", table[name].cuda_class)
    return None


# Generic words before which a CUDA sample or library prints cudaGetErrorString():
# `(error code system not yet initialized)!`. Only a whole table message counts after these, and not one that is
# also the C library's strerror (800's `operation not permitted` is EPERM's, 801's `operation not supported`
# EOPNOTSUPP's, 1's `invalid argument` EINVAL's): after `error code ` any program prints those.
WEAK_CUDA_ANCHORS: Final = ("error code ", "CUDA failure", "cuda error")


def _coded(text: str, by_code: dict[int, CudaError], shortest: int = _UNANCHORED_MIN) -> CudaError | None:
    """The error of `Error N: <the table's message for N>` (CODED_CUDA_MESSAGE) or `<the message> (error N)`
    (MESSAGE_CUDA_CODE), if the line has one: the number and the message agree (a message shorter than `shortest`
    only where something else on the line says CUDA: a call that starts it)."""
    # (The pattern's words hold `rror`, `RROR` or `ailure`: without one it finds nothing, and Python's engine tried it
    # at every offset of the line, 10 us on a 300-character watchdog line.)
    coded = CODED_CUDA_MESSAGE.finditer(text) if "rror" in text or "ailure" in text or "RROR" in text else ()
    for m in coded:
        err = by_code.get(int(m.group("code")))
        if err is not None and len(err.message) >= shortest and text.startswith(err.message, m.end()):
            return err
    if ")" not in text:
        return None
    for m2 in MESSAGE_CUDA_CODE.finditer(text):
        err = by_code.get(int(m2.group("code")))
        if err is None or len(err.message) < shortest:
            continue
        before = text[:m2.start()].rstrip()
        if before[-len(err.message):].lower() == err.message.lower():
            return err
    return None


@lru_cache(maxsize=1)
def cuda_message_literals() -> tuple[str, ...]:
    """Prefilter words for a table message that its number follows (MESSAGE_CUDA_CODE): each message long enough
    to count alone, less its first letter (the NGC banner capitalises it: `System has unsupported ...`). Not one that
    holds a digit (27's and 32's `32-bit`, `32 bit`, CUDA 3.1's deprecated codes): the exception extractor's memo keys
    a quiet line by its digits zeroed, which is sound only while no prefilter word holds one
    (exceptions._zeroed_safe); such a message still counts after an anchor word."""
    return tuple(sorted({row.message[1:] for row in cuda_table().values()
                         if len(row.message) >= _UNANCHORED_MIN and not any(c.isdigit() for c in row.message)}))


# The HIP runtime's own log (AMD_LOG_LEVEL, ROCm's clr rocclr/utils/debug.hpp): `:<level>:<file> :<line> : <N> us:
# [pid:N tid:0x..] ...`, level 1 an error, 2 a warning, 3 info (every API call's return: `hipSetDevice: Returned
# hipSuccess :`, and `init: Returned hipErrorNoBinaryForGpu : continue parsing remaining modules`, which each
# library without code for one GPU prints on the way to finding the one that has it), 4 debug.
_HIP_TRACE = re.compile(r":[2-4]:[\w.]+\s*+:\s*+\d+\s*+:\s*+\d+ us:")
# ... but the trace of a kernel launch that returned an error is the launch's own answer: AMD's HIP API trace
# (AMD_LOG_LEVEL=3, `hip_module.cpp :678 : ... hipLaunchKernel: Returned hipErrorInvalidDeviceFunction :`; ROCm/ROCm
# issue 4208's log; clr hipamd/src/hip_module.cpp's launch entry points, traced by HIP_RETURN as `<api>: Returned
# <hipError_t name>`): the kernel never ran, whatever the caller does with the status after. Only the launch family
# (hipLaunchKernel, hipModuleLaunchKernel, hipExtLaunchKernel, hipLaunchCooperativeKernel, ...): other calls' errors
# in the trace are probes a library answers itself (`init: Returned hipErrorNoBinaryForGpu : continue parsing`, an
# allocator's hipMalloc that PyTorch's caching allocator retries after freeing its cache).
_HIP_LAUNCH_RETURNED = re.compile(r"\] hip(?:Ext)?(?:Module)?Launch(?:Cooperative)?Kernel\w{0,24}: Returned "
                                  r"(?P<err>hipError[A-Z]\w{0,60})")


# Every anchor of CUDA_ANCHORS holds one of these, lower-cased (checked here: were an anchor added without one, the
# test is off): a line that, lower-cased, holds none of them holds no anchor (lower-casing maps each character on its
# own, so an anchor's ASCII letters stay adjacent, lower-cased). Most lines _anchored is asked about hold none, and its
# 25 finds over a 300-character line cost about 7 us; lower-casing and three finds, about one.
_ANCHOR_KEYS: Final = ("cu", "hip", "nvidia")
_ANCHOR_TEST: Final = all(any(k in a.lower() for k in _ANCHOR_KEYS) for a in CUDA_ANCHORS)


def _anchored(text: str) -> bool:
    """Whether the text holds an anchor of CUDA_ANCHORS as a word of its own: not one a lower-case letter goes on
    from, as prose's plural does (vLLM's `This may lead to incorrect model outputs or CUDA errors.` names no error;
    `cudaErrorMemoryAllocation`, `CUDA_ERROR_OUT_OF_MEMORY` go on in capitals or after `_`)."""
    if _ANCHOR_TEST:
        low = text.lower()
        if "cu" not in low and "hip" not in low and "nvidia" not in low:  # (_ANCHOR_KEYS, spelled out: no loop)
            return False
    for a in CUDA_ANCHORS:
        at = text.find(a)
        while at >= 0:
            end = at + len(a)
            if end >= len(text) or not text[end].islower():
                return True
            at = text.find(a, end)
    return False


# A compiler's diagnostic about the program's source (gcc's and clang's `src/hmem_cuda.c:434:7: error:
# 'cudaErrorStubLibrary' undeclared (first use in this function)`, ofiwg/libfabric#7655; nvcc's and EDG's
# `kernel.cu(12): error: identifier "cudaErrorContained" is undefined`): a name of the enum in code being built, no
# error any CUDA call returned.
_COMPILER_DIAGNOSTIC = re.compile(r"\.(?:c|cc|cpp|cxx|cu|cuh|h|hh|hpp|hip)(?::\d{1,7}(?::\d{1,5})?|\(\d{1,7}\)): "
                                  r"(?:fatal )?(?:error|warning|note)\b")
_DIAGNOSTIC_LITERALS: Final = (": error", ": warning", ": note", ": fatal error")


# The calls that start CUDA in a process, as a line names them (catalog/cuda.yaml `at_init`): the driver API's cuInit
# (TensorFlow's stream executor: `failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error`; Triton's `cuInit(0)
# returned ...`), the runtime's device count, every framework's first call (PyTorch's `Unexpected error from
# cudaGetDeviceCount()`), and THC's THCudaInit in THCGeneral.c / .cpp (its `THCudaCheck FAIL file=.../THCGeneral.c
# line=70 error=30 : unknown error`, cutorch's `cuda runtime error (30) : unknown error at .../THCGeneral.c:70`).
INIT_CALLS: Final = ("cuInit", "cudaGetDeviceCount", "THCGeneral.c", "ggml_cuda_init")
_INIT_CALL = re.compile(r"\b(?:cuInit\b|cudaGetDeviceCount\b|THCGeneral\.c(?:pp)?\b|ggml_cuda_init\b)")


def cuda_error_of(text: str) -> CudaError | None:
    """The CUDA error a line reports (_cuda_error_of), in the class its row gives it where the line names the call
    that starts CUDA in the process (INIT_CALLS, catalog/cuda.yaml `at_init`)."""
    err = _cuda_error_of(text)
    if not any(w in text for w in INIT_CALLS) or _INIT_CALL.search(text) is None:
        return err
    if err is None:
        # the call that starts CUDA, named on the line, says the number after it is CUDA's: a short message (`Error
        # 999: unknown error` after PyTorch's `Unexpected error from cudaGetDeviceCount()`) counts where it agrees
        err = _coded(text, _cuda_index()[2], shortest=0)
    if err is None or err.code is None:
        return err
    row = cuda_table().get(err.code)
    if row is None or row.at_init is None:
        return err
    if not any(w in text for w in (row.message, row.runtime, row.driver) if w):
        # not CUDA's own words for it (case as the driver prints them), only a program's: TensorFlow's `UNKNOWN ERROR
        # (-1)` is its text for a result the driver could not even name (cuGetErrorName failed), no 999
        return err
    return CudaError(err.code, err.name, err.message, row.at_init)


def _cuda_error_of(text: str) -> CudaError | None:
    """The CUDA error a line reports, if it reports one (see CUDA_ANCHORS and CODED_CUDA_MESSAGE). A warning,
    info or debug record of the HIP runtime's log reports none (it traces a call's return: _HIP_TRACE), but for a
    kernel launch that returned an error (_HIP_LAUNCH_RETURNED); nor does a compiler's diagnostic that names one in
    the source it builds (_COMPILER_DIAGNOSTIC)."""
    if any(w in text for w in _DIAGNOSTIC_LITERALS) and _COMPILER_DIAGNOSTIC.search(text):
        return None
    if text.startswith(":") and _HIP_TRACE.match(text):
        launch = _HIP_LAUNCH_RETURNED.search(text) if "Launch" in text else None
        return _cuda_index()[0].get(launch.group("err").lower()) if launch is not None else None
    if any(w in text for w in _CHECK_FAILED) and any(w in text for w in _CHECKED_SUCCESS):
        return _checked(text)
    failed_res = (_CALL_FAILED_RES.search(text) if any(a in text for a in _CALL_FAILED_LITERALS) else None)
    strong = failed_res is not None or _anchored(text) or (
        "returned error" in text and _CALL_RETURNED.search(text) is not None) or (
        any(a in text for a in ALLOC_LITERALS) and _ALLOC_FAILED.search(text) is not None)
    if not strong and any(w in text for w in _AT_SOURCE_LITERALS) and (sourced := _at_source(text)) is not None:
        return sourced
    if not strong and not any(a in text for a in WEAK_CUDA_ANCHORS):
        # A CUDA API call named on the line (NVIDIA's samples' CUDA_RT_CALL: `ERROR: CUDA RT call "cudaMalloc(&p, n)"
        # in line 378 of file jacobi.cpp failed with out of memory (2).`) says the number after a message is CUDA's:
        # a message of any length counts where its number agrees with it.
        shortest = 0 if "cu" in text and _CUDA_CALL.search(text) is not None else _UNANCHORED_MIN
        coded_err = (_coded(text, _cuda_index()[2], shortest)
                     if "rror" in text or "ailure" in text or ")" in text else None)
        return coded_err if coded_err is not None else _lone_message(text)
    by_key, rx, by_code = _cuda_index()
    coded = _coded(text, by_code)
    if coded is not None:
        return coded
    m = rx.search(text)
    if m and (strong or (len(m.group(0)) >= _UNANCHORED_MIN and m.group(0).lower() not in _strerror_folded())):
        return by_key[m.group(0).lower()]
    if not strong:
        return None
    c = failed_res or _RETURNED_CODE.search(text) or _CODE.search(text)
    if c:
        hit = by_code.get(int(c.group("code")))
        if hit is not None:
            return hit
    return CudaError(None, "unknown", "", "other") if _reports_failure(text) else None


# The anchors that are a CUDA call's name: an anchor only where the line says more than the name (a line of the name
# alone, a trace's or a listing's `cuInit`, reports no error of any kind), unlike `CUDA error` and the other anchors
# that are words of a report.
_CALL_ANCHORS: Final = ("cuCtxCreate", "cuInit", "cudaGetLastError")
_FAILURE_WORDS: Final = ("fail", "error", "returned", "unable", "cannot")


def _reports_failure(text: str) -> bool:
    """Whether an anchored line with no error the table names reports a failure: an anchor other than a call's name,
    or a word of failure besides the call's name (`failed call to cuInit: UNKNOWN ERROR (303)`)."""
    rest = text
    for name in _CALL_ANCHORS:
        rest = rest.replace(name, " ")
    return _anchored(rest) or any(w in rest.lower() for w in _FAILURE_WORDS)


# A C++ check macro's exception: cudaGetErrorString's words, then ` at FILE:LINE` of the check that threw them
# (Horovod's horovod/common/ops/cuda_operations.cc and torch/cuda_util.cc `throw std::logic_error(std::string(
# cudaGetErrorString(err)) + " at " + __FILE__ + ":" + ...)`, and the many CUDA_CHECK macros of its shape). The
# source location right after the table's message says a CUDA call's status was checked there: as strong as an
# anchor. Only a C, C++ or CUDA source file, and a message as long and as CUDA's own as an unanchored one must be.
# The check macros print __FILE__ and __LINE__ after cudaGetErrorString's words in a few orders, one alternative each:
#   ` at FILE:LINE`            the CUDA_CHECK shape above
#   ` in FILE at line N`       "CUDA by Example"'s HANDLE_ERROR (`printf("%s in %s at line %d\n",
#                              cudaGetErrorString(err), file, line)`) and its many copies
#   ` at line N in file FILE`  bitsandbytes' csrc CUDA_CHECK_RETURN (`Error invalid configuration argument at line
#                              216 in file .../bitsandbytes/csrc/ops.cu`, hiyouga/LlamaFactory#2965)
#   ` (..., FILE:LINE in F())` a CUDA source's location in a parenthesis right after the words, QUDA's errorQuda
#                              (`ERROR: (CUDA) invalid resource handle (rank 0, host blast, dslash_quda.cu:1434 in
#                              wilsonDslashCuda())`, lattice/quda#93): a .cu or .cuh file only, as the parenthesis
#                              says less than ` at ` does
#   ` CALL(...) at F (FILE:LINE)` the call that returned the error, then the function and the place of its check: the
#                              place line HugeCTR's exceptions carry under cudaGetErrorString's words (`Runtime error:
#                              an illegal memory access was encountered` / `\tcudaStreamSynchronize(local_gpu->
#                              get_stream()) at sync_all_gpus (/hugectr/.../sync_all_gpus_functor.cu:28)`,
#                              NVIDIA-Merlin/HugeCTR#417), read joined to it (collect/scan.py `_CALL_PLACE`)
_SOURCE_FILE = r"[\w./\\-]{1,300}\.(?:cc|cpp|cxx|cu|cuh|c|h|hpp)"
_AT_SOURCE = re.compile(
    rf" (?:at {_SOURCE_FILE}:\d{{1,6}}\b|in {_SOURCE_FILE} at line \d{{1,6}}\b"
    rf"|cu(?:da)?[A-Z]\w{{0,60}}\([^\n]{{0,300}}?\) at [\w:~<>]{{1,200}} \({_SOURCE_FILE}:\d{{1,6}}\)"
    rf"|at line \d{{1,6}} in file {_SOURCE_FILE}\b|\((?:[^()\n]{{1,80}}, )?[\w./\\-]{{1,300}}\.cuh?:\d{{1,6}}\b)")
# One of these is in every line _AT_SOURCE can match after a message (` at ` in the first three shapes).
_AT_SOURCE_LITERALS: Final = (" at ", ".cu:", ".cuh:")


def _at_source(text: str) -> CudaError | None:
    """The error whose table message (the first on the line) a check's source location follows (_AT_SOURCE), or None."""
    by_key, rx, _by_code = _cuda_index()
    m = rx.search(text)
    if m is None or _AT_SOURCE.match(text, m.end()) is None:
        return None
    said = m.group(0)
    # a short message or an errno's strerror (`invalid argument at foo.cc:12`) is any C++ program's own words
    return by_key[said.lower()] if len(said) >= _UNANCHORED_MIN and said.lower() not in _strerror_folded() else None


# A table message that names its error with no anchor, no number and no `CUDA error:` before it (catalog/cuda.yaml
# `alone`): a library or a server that writes cudaGetErrorString's words after its own (Triton's `failed to load 'm'
# version 1: Internal: unable to create stream: the provided PTX was compiled with an unsupported toolchain.`, 222).
# Other messages are any program's words (`invalid argument`, `out of memory`) or a fallback's on a run that goes on
# (Triton's pinned-memory pool on a CPU-only server: `failed to allocate pinned system memory: CUDA driver version is
# insufficient for CUDA runtime version`), and need an anchor.
@lru_cache(maxsize=1)
def _lone_index() -> tuple[dict[str, CudaError], re.Literals, int]:
    rows = {row.message.lower(): CudaError(code, row.name, row.message, row.cuda_class)
            for code, row in sorted(cuda_table().items()) if row.alone}
    return rows, re.Literals(rows, re.IGNORECASE, keep=True), min((len(k) for k in rows), default=0)


@lru_cache(maxsize=1)
def _spelling_index() -> tuple[tuple[str, tuple[str, ...], CudaError], ...]:
    """Each program's spelling of a CUDA status (catalog/cuda.yaml `cuda_spellings`): its longest literal run (the
    prefilter's word), its runs in order, and the error of its row."""
    table = cuda_table()
    out = []
    for sp in cuda_spellings():
        row = table[sp.code]
        runs = sp.runs
        out.append((max(runs, key=len), runs, CudaError(sp.code, row.name, row.message, row.cuda_class)))
    return tuple(out)


def cuda_spelling_literals() -> tuple[str, ...]:
    """Prefilter words for a program's own spelling of a CUDA status (each spelling's longest literal run; none holds
    a digit: catalog/tables.py cuda_spellings)."""
    return tuple(sorted({word for word, _runs, _err in _spelling_index()}))


def _spelled(text: str) -> CudaError | None:
    """The error a program's own words for it name (catalog/cuda.yaml `cuda_spellings`): every literal run of its
    format on the line, in order."""
    for word, runs, err in _spelling_index():
        if word not in text:
            continue
        at = 0
        for run in runs:
            at = text.find(run, at)
            if at < 0:
                break
            at += len(run)
        else:
            return err
    return None


def _lone_message(text: str) -> CudaError | None:
    """The error whose `alone` table message the text holds whole, or that a program's own words for it name
    (_spelled), or None."""
    spelled = _spelled(text)
    if spelled is not None:
        return spelled
    rows, rx, shortest = _lone_index()
    if not rows or len(text) < shortest:
        return None
    m = rx.search(text)
    return rows[m.group(0).lower()] if m is not None else None


def _checked(text: str) -> CudaError | None:
    """The CUDA error of a failed CHECK on a CUDA call's status (_CHECKED_SUCCESS): the table's message after the
    checked expression, else a CUDA error whose kind is not said. None for the runtime unloading (`driver shutting
    down`, class deinitialized): a destructor's check as the process exits, which catalog/ends.yaml reads as a notice
    of a normal exit, not a failure."""
    at = max(text.rfind(w) for w in _CHECKED_SUCCESS)
    tail = text[at:]
    said = tail.find(_CHECK_MESSAGE_AFTER)
    # after `CUDA: ` where the macro prints it, else after the checked name (`cudaSuccess`, `hipSuccess`)
    skip = said + len(_CHECK_MESSAGE_AFTER) if said >= 0 else tail.find("Success") + len("Success")
    tail = tail[skip:]
    by_key, rx, _by_code = _cuda_index()
    m = rx.search(tail)
    if m is not None:
        err = by_key[m.group(0).lower()]
        if err.cls == "oom" and any(w in tail for w in _HOST_ALLOC_CALLS):
            return CudaError(err.code, err.name, err.message, "other")  # the host's memory (_HOST_ALLOC_CALLS)
        return None if err.cls == "deinitialized" else err
    return CudaError(None, "unknown", "", "other")


CUDNN_LITERAL: Final = "CUDNN_STATUS_"
_CUDNN_STATUS = re.compile(r"\bCUDNN_STATUS_[A-Z_]{2,40}\b")


@lru_cache(maxsize=1)
def _cudnn_index() -> dict[str, CudaError]:
    return {row.name: CudaError(code, row.name, row.name, row.cuda_class)
            for code, row in sorted(cudnn_status_table().items())}


def cudnn_status_of(text: str) -> CudaError | None:
    """The cuDNN status a line names (catalog/cuda.yaml `cudnn_statuses`), if it names one of the table's."""
    if CUDNN_LITERAL not in text:
        return None
    for m in _CUDNN_STATUS.finditer(text):
        hit = _cudnn_index().get(m.group(0))
        if hit is not None:
            return hit
    return None


# The NGC containers' start-up check of the host's driver (their nvidia_entrypoint.sh, as triton-inference-server/server
# ships it; NVIDIA/nvidia-docker#1479 and NVIDIA/TensorRT-LLM#23 quote it): `ERROR: This container was built for NVIDIA
# Driver Release ${CUDA_DRIVER_VERSION} or later, but` / `       version ${DRIVER_VERSION} was detected and
# compatibility mode is UNAVAILABLE.` then `[[${_CUDA_COMPAT_STATUS}]]`: the host's driver is older than the image's
# CUDA and the forward compatibility that would bridge it is not there. The driver stack's answer, as CUDA's 35
# (insufficient driver) is; `NOTE: Legacy NVIDIA Driver detected.  Compatibility mode ENABLED.` is the check passed.
# The check compares major driver releases only, so it also fires where CUDA's minor version compatibility runs the
# image (NVIDIA's CUDA Compatibility guide, "Minor Version Compatibility", Table 1: a CUDA 13.x build runs on drivers
# >= 580, 12.x on >= 525, 11.x on >= 450; "This is non-fatal - the images run correctly" of a 595 image on a DGX
# Spark's 580 driver): it names a failure only where the image's release and the driver found belong to different
# families (or the driver predates them all), both read from the banner (its first line names the release the image
# needs, the line with the check the one found).
NGC_DRIVER_CHECK: Final = "compatibility mode is UNAVAILABLE"
NGC_BUILT_FOR: Final = "This container was built for NVIDIA Driver Release"
NGC_DRIVER_CODE: Final = 35
_NGC_NEED = re.compile(r"NVIDIA Driver Release (?P<need>\d{3})\b")
_NGC_HAVE = re.compile(r"\bversion (?P<have>\d{3})(?:\.\d{1,6}){0,3} was detected")
MINOR_COMPAT_FLOORS: Final = (580, 525, 450)  # the lowest driver of the CUDA 13.x, 12.x and 11.x families


def _driver_family(release: int) -> int | None:
    return next((floor for floor in MINOR_COMPAT_FLOORS if release >= floor), None)


def ngc_need(text: str) -> int | None:
    """The driver release an NGC banner's line says the image was built for, if it names one."""
    m = _NGC_NEED.search(text) if NGC_BUILT_FOR in text else None
    return int(m.group("need")) if m else None


def ngc_check_failed(text: str, need: int | None) -> bool:
    """Whether the NGC banner's check line (NGC_DRIVER_CHECK), with the release its first line named (`need`, or the
    line's own), names a driver that cannot run the image: releases of two compatibility families. A release or a
    driver the banner does not give (`version  was detected`: no driver found) establishes nothing."""
    need = ngc_need(text) or need
    m = _NGC_HAVE.search(text)
    if need is None or m is None:
        return False
    wanted = _driver_family(need)
    return wanted is None or _driver_family(int(m.group("have"))) != wanted

# The CUDA math libraries' statuses (catalog/cuda.yaml `library_statuses`: cuBLAS, cuSOLVER, cuSPARSE, cuFFT, cuRAND;
# ROCm's hipBLAS (and hipBLASLt, which returns hipblasStatus_t), rocBLAS, MIOpen and hipFFT), by the names the
# frameworks print (PyTorch's `CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling ...`, on ROCm `CUDA error:
# HIPBLAS_STATUS_NOT_SUPPORTED when calling ...` and `RuntimeError: miopenStatusUnknownError`, `cusolver error:
# CUSOLVER_STATUS_EXECUTION_FAILED, when calling ...`, `cuFFT error: CUFFT_INTERNAL_ERROR`): each library's prefix
# (catalog/tables.py LIBRARY_PREFIXES), then its status's own words, a word of its own.
_NAME_LITERALS: Final = tuple(LIBRARY_PREFIXES.values())
# ... or by its number, as the check macro copied into many programs prints a status it got: `<library> error <N> at
# <file>:<line>` (NVIDIA's CUDALibrarySamples' utils, cuBLAS/utils/cublas_utils.h CUBLAS_CHECK `cublas error %d at
# %s:%d` and its cuSOLVER and cuRAND twins; NCCL's own tests before 2.0, test/include/test_utilities.h CURAND_CHK
# `CuRAND error %i at %s:%i`; others' `cuBLAS Error: %d at %s:%d`, `CURAND error %i at line %d in file %s`). The
# library named before the number says whose enum it is; only cuBLAS, cuSOLVER, cuSPARSE and cuRAND, whose numbers are
# their headers' in every release (cuFFT 12.x renumbered some of its results; ROCm's libraries are read by name). A
# number its library's table has no row of names none.
_NUMBERED_LIBRARIES: Final = ("cublas", "cusolver", "cusparse", "curand")
_NUMBERED_STATUS = re.compile(r"\b(?P<lib>" + "|".join(_NUMBERED_LIBRARIES)
                              + r") error(?::? )(?P<code>\d{1,4}) at\b", re.IGNORECASE)
# The spellings of the libraries' names that programs print before such a number (the prefilter's words): all lower,
# all upper, and the documentation's own (cuBLAS, cuRAND), with NCCL's `CuRAND`.
_NUMBERED_LITERALS: Final = tuple(sorted({w for lib in _NUMBERED_LIBRARIES for w in (
    lib, lib.upper(), "cu" + lib[2:].upper(), "Cu" + lib[2:].upper(), "Cu" + lib[2:])}))
LIBRARY_LITERALS: Final = (*_NAME_LITERALS, "cublas runtime error", *_NUMBERED_LITERALS)
_LIBRARY_STATUS = re.compile(r"\b(?:" + "|".join(_NAME_LITERALS) + r")[A-Za-z0-9_]{2,60}\b")
# PyTorch's THC before 1.0 (aten/src/THC/THCGeneral.cpp __THCublasCheck): `cublas runtime error : <words> at FILE:LINE`
_THC_CUBLAS = "cublas runtime error : "


@lru_cache(maxsize=1)
def _library_index() -> tuple[dict[str, CudaError], dict[str, CudaError], dict[tuple[str, int], CudaError]]:
    by_name: dict[str, CudaError] = {}
    by_thc: dict[str, CudaError] = {}
    by_code: dict[tuple[str, int], CudaError] = {}
    for name, row in sorted(library_status_table().items()):
        err = CudaError(row.code, name, name, row.cuda_class)
        by_name[name] = err
        if row.thc:
            by_thc[row.thc] = err
        if row.library in _NUMBERED_LIBRARIES:
            by_code[(row.library, row.code)] = err
    return by_name, by_thc, by_code


def numbered_library_status(text: str) -> CudaError | None:
    """The math library status a check macro's line gives by its number (_NUMBERED_STATUS: `CuRAND error 204 at
    test/include/test_utilities.h:112` is CURAND_STATUS_ARCH_MISMATCH), or None."""
    if not any(w in text for w in _NUMBERED_LITERALS):
        return None
    m = _NUMBERED_STATUS.search(text)
    return None if m is None else _library_index()[2].get((m.group("lib").lower(), int(m.group("code"))))


def library_status_of(text: str) -> CudaError | None:
    """The CUDA math library status a line names (catalog/cuda.yaml `library_statuses`): by its name, a cuBLAS
    status by the words PyTorch's THC printed for it right after `cublas runtime error : `, or by its number after a
    check macro's `<library> error` (numbered_library_status). A name the table does not
    hold (cuFFT's `CUFFT_FORWARD`, `CUFFT_R2C`: no status) names none."""
    by_name, by_thc, _ = _library_index()
    if any(w in text for w in _NAME_LITERALS):
        for m in _LIBRARY_STATUS.finditer(text):
            hit = by_name.get(m.group(0))
            if hit is not None:
                return hit
    at = text.find(_THC_CUBLAS)
    if at >= 0:
        rest = text[at + len(_THC_CUBLAS):]
        for words, err in by_thc.items():
            if rest.startswith(words):
                return err
    return numbered_library_status(text)


def nccl_result_of(text: str) -> str | None:
    """The ncclResult_t a line names, by enum name, PyTorch's phrase, or `retcode N` / `res=N`."""
    table = nccl_result_table()
    rows = [row for _code, row in sorted(table.items())]
    for row in rows:  # an enum the line names wins over PyTorch's phrases
        if row.name in text or any(a in text for a in row.aliases):
            return row.name
    for row in rows:
        if any(p in text for p in row.phrases):
            return row.name
    if ", NCCL version" in text:
        for row in rows:
            if any(f", {w}, NCCL version" in text for w in row.framed):
                return row.name
    m = re.search(r"\b(?:retcode|res)[ =](?P<code>\d)\b", text)
    if m:
        row2 = table.get(int(m.group("code")))
        return row2.name if row2 else None
    return None


# Where a line names Habana's HCCL (its calls `hcclAllReduce(`, its name in a report `HCCL demo error`): only there are
# hcclGetErrorString's plain words (`The call to HCCL is incorrect` aside, `One argument has an invalid value`) its.
_HCCL_NAMED = re.compile(r"\bhccl[A-Z]\w{1,40}\b|\bHCCL\b")


@lru_cache(maxsize=1)
def _hccl_rows() -> tuple[dict[str, str], tuple[tuple[str, str], ...]]:
    rows = sorted(hccl_result_table().values(), key=lambda r: r.code)
    return {r.name: r.name for r in rows}, tuple((p, r.name) for r in rows for p in r.phrases)


@lru_cache(maxsize=1)
def hccl_literals() -> tuple[str, ...]:
    """The words that bring a line to the collective readers for hccl_result_of: the results' names and
    hcclGetErrorString's words (catalog/cuda.yaml `hccl_results`)."""
    names, phrases = _hccl_rows()
    return tuple(sorted({*names, *(p for p, _ in phrases)}))


def hccl_result_of(text: str) -> str | None:
    """The hcclResult_t a line names (catalog/cuda.yaml `hccl_results`): by its enum name, or by hcclGetErrorString's
    words where the line names HCCL (_HCCL_NAMED). Huawei's HCCL (Ascend's, `HCCL_E_*`, extract/cann.py) is not this."""
    if "hccl" not in text and "HCCL" not in text:
        return None
    names, phrases = _hccl_rows()
    for m in re.finditer(r"\bhccl[A-Z]\w{1,40}\b", text):
        if m.group(0) in names:
            return m.group(0)
    if _HCCL_NAMED.search(text) is None:
        return None
    for words, name in phrases:
        if words in text:
            return name
    return None


class CollectiveResult(NamedTuple):
    """A collective library's result a line names, and whose failure it names (catalog/tables.py `Whose`)."""

    library: str  # nccl (RCCL's are the same), hccl (Habana's), mpi
    name: str  # ncclSystemError, MPI_ERR_OTHER
    whose: str  # program, environment, peer, none
    failed: str  # an environment result's words for what failed ("" where the table gives none)


# An MPI error class by its name (`MPI_ERR_OTHER: known error not in list`, Open MPI's MPI_Error_string as mpi4py
# raises it); MPICH's words for a class are its error stack's, read by extract/launcher.py.
_MPI_CLASS_NAME = re.compile(r"\bMPIX?_ERR_[A-Z_]+\b")
# The failed call itself in the same message: NCCL's own report of it (`Cuda failure 'out of memory'`, `NCCL WARN
# ...`), or the `Last error:` NCCL 2.19+ appends to its result (ncclGetLastError, as PyTorch prints it).
_FAILED_CALL = re.compile(r"Cuda failure|NCCL WARN|Last error:\s*\S")


@lru_cache(maxsize=1)
def _collective_rows() -> tuple[dict[str, CollectiveResult], dict[str, CollectiveResult]]:
    """The results of NCCL's (Habana HCCL's beside them) and MPI's tables by name, as collective_result gives them
    (built once)."""
    nccl = {r.name: CollectiveResult("nccl", r.name, r.whose, r.failed) for r in nccl_result_table().values()}
    nccl.update({r.name: CollectiveResult("hccl", r.name, r.whose, r.failed) for r in hccl_result_table().values()})
    mpi = {c.name: CollectiveResult("mpi", c.name, c.whose, "") for c in mpich_classes()}
    return nccl, mpi


def collective_result(text: str) -> CollectiveResult | None:
    """The result of a collective library that a message names: NCCL's (and RCCL's) ncclResult_t by any of its
    spellings (nccl_result_of), Habana HCCL's hcclResult_t (hccl_result_of), else an MPI error class by its name."""
    nccl, mpi = _collective_rows()
    name = nccl_result_of(text) or hccl_result_of(text)
    if name is not None:
        return nccl[name]
    if "_ERR_" in text:
        for m in _MPI_CLASS_NAME.finditer(text):
            res = mpi.get(m.group(0))
            if res is not None:
                return res
    return None


def relays_result(text: str) -> CollectiveResult | None:
    """A collective library's result of the environment's or a peer's that a message only relays: it names the
    result and not the call that failed (a symptom whose cause, where the evidence has it, is that call's line)."""
    res = collective_result(text)
    if res is None or res.whose not in ("environment", "peer") or _FAILED_CALL.search(text):
        return None
    return res


# --------------------------------------------------------------------------
# Accelerator out-of-memory, in every framework's wording
# --------------------------------------------------------------------------

# A framework's report that the device's own memory is exhausted: PyTorch, HIP, the CUDA driver and
# runtime enums, JAX/XLA (`XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate N
# bytes`, `... Out of memory allocating N bytes`), TensorFlow's BFC allocator (`Resource exhausted: OOM when
# allocating tensor with shape[...] ... on /job:localhost/replica:0/task:0/device:GPU:0 by allocator
# GPU_0_bfc`) and XLA on TPUs (`Error allocating device buffer`, a memory space of the chip). Not one:
# `RESOURCE_EXHAUSTED` alone (gRPC and cloud quotas say it too), and the BFC allocator's warning `Allocator
# (GPU_0_bfc) ran out of memory trying to allocate 2.18GiB ... The caller indicates that this is not a failure`
# (it retries with less).
# The allocators' statuses that say the device's memory ran out, after their status word: XLA's allocator on a GPU
# that cannot serve a request (xla/stream_executor/stream_executor_pimpl.cc StreamExecutorMemoryAllocator::Allocate,
# a ResourceExhausted status: `XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 2.99GiB
# (3206250496B) on device ordinal 0`) and the allocator's `Out of memory while trying to allocate N bytes`. The word
# is spelled as absl's Status::ToString spells it (`RESOURCE_EXHAUSTED: `) and as TensorFlow's and XLA's Status did
# before they moved to absl (`Resource exhausted: `; jaxlib 0.1.x: `RuntimeError: Resource exhausted: Failed to
# allocate request for 3.25GiB (3488555008B) on device ordinal 0`, YoshitakaMo/localcolabfold#22): the spellings of
# RESOURCE_EXHAUSTED in catalog/exceptions.yaml `status_words` (a test keeps the two the same). Never the message
# without its word: the Linux crypto self-tests print `alg: hash: Failed to allocate request for %s` (crypto/testmgr.c).
_RESOURCE_EXHAUSTED_SPELLINGS: Final = ("RESOURCE_EXHAUSTED", "Resource exhausted")
_STATUS_OOM: Final = tuple(f"{word}: {message}" for word in _RESOURCE_EXHAUSTED_SPELLINGS
                           for message in ("Out of memory", "Failed to allocate request for"))
ACCEL_OOM_PHRASES: Final = (
    # The CUDA libraries' own allocation failures (cuBLAS handle, cuDNN workspace, cuSOLVER, cuFFT), also as TensorFlow
    # and XLA log a cuDNN handle they could not create (stream_executor/cuda/cuda_dnn.cc: `Could not create cudnn
    # handle: CUDNN_STATUS_ALLOC_FAILED`). Not the same line with CUDNN_STATUS_INTERNAL_ERROR, however often a GPU
    # whose memory another allocator took is its cause: cuDNN's status names no allocation (cudnnCreate's own
    # failure to allocate is ALLOC_FAILED), and TensorFlow's and XLA's code only print the free memory beside it (and
    # suspect the driver for NOT_INITIALIZED; pytorch/xla#6771 logs a quarter of its GPU free beside it); the exception
    # the job raises after it decides.
    "CUBLAS_STATUS_ALLOC_FAILED",
    "CUDNN_STATUS_ALLOC_FAILED",
    "CUSOLVER_STATUS_ALLOC_FAILED",
    "CUSPARSE_STATUS_ALLOC_FAILED",
    "CUFFT_ALLOC_FAILED",
    "CUDA out of memory",
    "HIP out of memory",
    "hipErrorOutOfMemory",
    "CUDA error: out of memory",
    "CUDA_ERROR_OUT_OF_MEMORY",
    "cudaErrorMemoryAllocation",
    # XLA's and TensorFlow's allocators' own statuses, in each spelling of their status word (_STATUS_OOM, above).
    *_STATUS_OOM,
    "OOM when allocating tensor",
    "Error allocating device buffer",
    # XLA on a TPU running out of a memory space of the chip (`RESOURCE_EXHAUSTED: XLA:TPU compile permanent error.
    # Ran out of memory in memory space vmem.`, `... in memory space hbm`).
    "Ran out of memory in memory space",
    # The TPU runtime's allocator refusing a buffer or a program's reservation in the chip's HBM, with the
    # status word or without it, as PyTorch/XLA, JAX and TensorFlow pass it on (`Resource exhausted:
    # Attempting to allocate 180.59M. That was not possible. There are 142.58M free.; (0x3x0_HBM1)`,
    # `RESOURCE_EXHAUSTED: Attempting to reserve 10.51G at the bottom of memory. That was not possible.`; a program
    # that did not fit, XLA's error 0101, tensorflow/tensorflow third_party/xla/docs/errors/error_0101.md: `Error
    # loading program 'jit_...': Attempting to reserve 29.49G at the bottom of memory. That was not possible. There
    # are 147.64M free, ...`, which a post may stop before its free memory).
    "That was not possible. There are",
    "at the bottom of memory. That was not possible.",
    # The other accelerators' allocators, in PyTorch's and their runtimes' words: Intel GPUs through PyTorch's XPU
    # caching allocator (c10/xpu/XPUCachingAllocator.cpp: `XPU out of memory. Tried to allocate 20.00 MiB. GPU 0 has
    # a total capacity of ...`), and below it the oneAPI runtimes' result codes as SYCL and IPEX pass them on (Level
    # Zero's ze_api.h and Unified Runtime's ur_api.h: `Native API failed. Native API returns: 39
    # (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)`; a device's memory, not the host's OUT_OF_HOST_MEMORY); OpenCL's buffer
    # allocation failure (the OpenCL specification's CL_MEM_OBJECT_ALLOCATION_FAILURE, -4); Apple GPUs through
    # PyTorch's MPS allocator (aten/src/ATen/mps/MPSAllocator.mm: `MPS backend out of memory (MPS allocated: ...`);
    # Intel Gaudi through the Habana PyTorch bridge's device memory module (`RuntimeError: [Rank:0] FATAL ERROR ::
    # MODULE:PT_DEVMEM Allocation failed for size::939524096 (896)MB`, as HabanaAI's vLLM and Optimum Habana
    # documents quote it), and the bridge's Synapse helpers when the device had no room for the workspace a recipe
    # (a compiled graph) needs to run (HabanaAI/gaudi-pytorch-bridge pytorch_helpers/synapse_helpers/device.cpp
    # device::get_workspace_buffer: `PT_SYNHELPER_FATAL("workspace Allocation of size ::", size, " failed!")`, printed
    # `FATAL ERROR :: MODULE:SYNHELPER workspace Allocation of size ::14493510400 failed!`; Habana's advice is a
    # smaller batch). Its debug record `workspace Allocation of size is zero` has no module tag.
    "XPU out of memory",
    "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
    "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
    "CL_MEM_OBJECT_ALLOCATION_FAILURE",
    "MPS backend out of memory",
    "MODULE:PT_DEVMEM Allocation failed",
    "MODULE:SYNHELPER workspace Allocation of size",
    # Huawei Ascend NPUs through torch_npu's caching allocator (Ascend/pytorch torch_npu/csrc/core/npu/
    # NPUCachingAllocator.cpp: `NPU out of memory. Tried to allocate 5.03 GiB (NPU 3; 60.96 GiB total capacity; ...`,
    # raised as RuntimeError before torch.OutOfMemoryError), and Cambricon MLUs through torch_mlu's (its
    # MLUCachingAllocator: `MLU out of memory. Tried to allocate 20.00 MiB (MLU 0; ...`): the words CUDA's allocator
    # uses, with the device's own name.
    "NPU out of memory. Tried to allocate",
    "MLU out of memory. Tried to allocate",
    # The RAPIDS stack's allocators: RMM's `rmm::out_of_memory`, which its device memory resources throw when the
    # device (or a pool or arena carved from it) cannot serve a request, and whose what() is std::bad_alloc's word,
    # then `out_of_memory: `, then the failed call or the pool's reason (rapidsai/rmm cpp/include/rmm/error.hpp and
    # detail/error.hpp: `std::bad_alloc: out_of_memory: CUDA error (failed to allocate 576000000 bytes) at: ...`,
    # `... RMM failure at: ...arena_memory_resource.hpp:158: Maximum pool size exceeded`), as cuDF, Dask and the
    # Spark plugin raise it (MemoryError, java.lang.OutOfMemoryError); and CuPy's memory pool (cupy/cuda/memory.pyx
    # OutOfMemoryError: `Out of memory allocating 1,073,741,824 bytes (allocated so far: 0 bytes).`), by the words
    # after the size, since `Out of memory allocating` alone is any program's.
    "std::bad_alloc: out_of_memory:",
    " bytes (allocated so far: ",
    # Apple GPUs below PyTorch's MPS: a Metal command buffer the GPU driver failed for want of memory, by the IOGPU
    # status name Metal's programs print with its error (MTLCommandBufferErrorOutOfMemory, 8: ggml-metal under
    # llama.cpp and Ollama, MLX's `[METAL] Command buffer execution failed: Insufficient Memory
    # (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)`, ds4's `Metal model warmup failed: Insufficient Memory
    # (kIOGPUCommandBufferCallbackErrorOutOfMemory)`, antirez/ds4#676): the GPU's share of the unified memory (its
    # wired limit), not the host's. The same status family's other names (`...ErrorInnocentVictim`, a buffer
    # discarded for another's fault, `...ErrorTimeout`) are not the memory's.
    "kIOGPUCommandBufferCallbackErrorOutOfMemory",
)
# TensorFlow's (TSL's) BFC allocator failing a request for good (tsl/framework/bfc_allocator.cc
# BFCAllocator::AllocateRawInternal: `Allocator (GPU_0_bfc) ran out of memory trying to allocate 163.17GiB (rounded to
# 175203296000)requested by op ...`, a space before `requested` in some releases, then its allocation summary and the
# op's `OOM when allocating tensor`; AlphaFold's google-deepmind/alphafold#651 posted the line alone), told from its
# retry warning of the same start (`... ran out of memory trying to allocate 2.18GiB with freed_by_count=0. The caller
# indicates that this is not a failure ...`, above) by the rounded size only the failure prints.
BFC_OOM_LITERAL: Final = "ran out of memory trying to allocate"
_BFC_FAILED = re.compile(r"\bran out of memory trying to allocate [\d.]{1,16}(?:[KMGTPE]i)?B \(rounded to \d{1,20}\)")
# The device a TensorFlow / XLA report names; a host allocator (`device:CPU:0 by allocator cpu`) ran out
# of host memory, which is not the accelerator's.
_OOM_DEVICE = re.compile(r"device:(?P<dev>[A-Za-z]+):\d+|by allocator (?P<alloc>\w+)|Allocator \((?P<alloc2>\w+)\)")
_HOST_DEVICES: Final = frozenset({"cpu", "cpu_0_bfc"})


@lru_cache(maxsize=1)
def _accel_oom_rx() -> re.Pattern[str]:
    return re.compile(re.alternation(ACCEL_OOM_PHRASES), keep=True)


def host_allocator(text: str) -> bool:
    """Does a memory report name a host device or allocator (`device:CPU:0`, `by allocator cpu`)?"""
    for d in _OOM_DEVICE.finditer(text):
        dev = (d.group("dev") or d.group("alloc") or d.group("alloc2") or "").lower()
        if dev in _HOST_DEVICES:
            return True
    return False


def accelerator_oom(text: str) -> int | None:
    """Where an accelerator OOM report starts in `text`, or None (also for a host allocator's OOM)."""
    m = _accel_oom_rx().search(text)
    if m is None and BFC_OOM_LITERAL in text:
        m = _BFC_FAILED.search(text)
    if m is None or host_allocator(text):
        return None
    return m.start()


# --------------------------------------------------------------------------
# Writers of shared caches
# --------------------------------------------------------------------------

# Code that creates, renames, chmods and deletes files in a cache that every rank of every node shares
# (the HF datasets / hub cache, filelock's lock files, torch.hub, compiler caches). On NFS a stale handle
# (ESTALE) there means another client removed or replaced a file this one still held: the ranks raced on
# the cache (a workload or library bug, e.g. filelock deleting its lock files), not a failing file system.
# A stale handle anywhere else, or with the file system's own errors, stays storage.
SHARED_CACHE_WRITER_FRAMES: Final = re.compile(
    r"""File "[^"]*/(?:datasets|filelock|huggingface_hub|fsspec|triton/runtime|torch/_inductor|torch/hub"""
    r"""|transformers/utils/hub|modelscope/hub)[/.]"""
)
RACE_ERRNOS: Final = frozenset({"ESTALE"})


def cache_race(errno_name: str | None, frames: tuple[str, ...]) -> bool:
    """A stale handle raised inside a shared-cache writer (see SHARED_CACHE_WRITER_FRAMES)."""
    return errno_name in RACE_ERRNOS and any(SHARED_CACHE_WRITER_FRAMES.search(f) for f in frames)
