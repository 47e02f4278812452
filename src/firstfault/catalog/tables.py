"""The vendor tables shipped beside the rules: NVIDIA Xids, NVSwitch SXids, CUDA errors, NCCL results, the GPU
platform from user space, other vendors' accelerators, the transports' statuses, exception classes, status words,
errno and object-store codes, the schedulers' reasons, the lines that say how a run ended, and what a launcher's or
a scheduler's exit number means, and the node health checks by name.

The data lives in `xid.yaml` / `sxid.yaml` / `cuda.yaml` / `platform.yaml` / `accel.yaml` / `transport.yaml` /
`exceptions.yaml` / `scheduler.yaml` / `ends.yaml` / `exits.yaml` / `health.yaml` (vendor knowledge is data, not
code branches); this module only reads and validates it, once, on first use. The rows are the records below, each
declared once with its constraints (records.py validates a row of the YAML into one, on a miss of the on-disk cache;
the cache gives them back); the last, how each printer's exit number reads, by version.
"""

import re
from collections import abc
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import suppress
from functools import lru_cache, wraps
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import (
    Annotated,
    Any,
    Final,
    Literal,
    NamedTuple,
    Protocol,
    TypeVar,
    cast,
    get_args,
    get_origin,
    get_type_hints,
)

from msgspec import Meta

from firstfault import records
from firstfault.catalog.vocab import (
    AccelClass,
    AsyncMeans,
    CatalogTableError,
    CompletionStack,
    ContainerClass,
    CudaClass,
    CudaLibrary,
    EndKeyRole,
    EndOutcome,
    EndScope,
    ErrnoSide,
    ExceptionFamily,
    ExitMeans,
    FmEvent,
    HealthPart,
    HostSeverity,
    IbWcClass,
    IpmiPowerState,
    IpmiSeverity,
    LocalStack,
    MemoryErrorSource,
    ModulePart,
    ModuleReasonClass,
    NodeReasonMeans,
    NvmlClass,
    NvrmEvent,
    NvrmNoneReason,
    NvrmResetReason,
    PeerMeans,
    PeerStack,
    PlatformPart,
    ReasonField,
    ReasonState,
    ResourceLimit,
    SchedReasonName,
    SchedulerName,
    SlurmSide,
    StallReading,
    StorageWordClass,
    StoreCause,
    StoreSide,
    SxidClass,
    XidClass,
    check_regex,
    checked_rows,
    rows_checked,
)

XID_CLASSES: frozenset[str] = frozenset(get_args(XidClass))
SXID_CLASSES: frozenset[str] = frozenset(get_args(SxidClass))


# The rows: one record per row kind, declared once with its constraints (records.py; a `class:` key of the YAML is
# the record's `<table>_class`), read-only, hashed and compared by value. records.convert validates a row of the
# YAML into its record on a miss of the cache; the cache gives the records back typed.
Code = Annotated[int, Meta(gt=0)]  # a row's code in a vendor's numbering (an Xid, a CUDA error, ...)
Text = Annotated[str, Meta(min_length=1)]


class _Row(records.FrozenRecord, kw_only=True, frozen=True):
    """A row of a vendor table."""


class XidInfo(_Row, frozen=True):
    code: Code
    mnemonic: Text
    description: Text
    xid_class: XidClass = records.field(name="class")  # firstfault's attribution class (see the header of xid.yaml)
    immediate: str | None = None  # NVIDIA immediate resolution bucket
    investigatory: str | None = None  # NVIDIA investigatory resolution bucket
    legacy_causes: tuple[str, ...] = ()

class SxidInfo(_Row, frozen=True):
    code: Code
    name: Text
    sxid_class: SxidClass = records.field(name="class")

class CudaErrorInfo(_Row, frozen=True):
    code: Code
    message: Annotated[str, Meta(min_length=3)]
    cuda_class: CudaClass = records.field(name="class")
    runtime: Annotated[str, Meta(pattern=r"^cudaError[A-Z]\w*$")] | None = None  # cudaErrorX
    driver: Annotated[str, Meta(pattern=r"^CUDA_ERROR_[A-Z0-9_]+$")] | None = None  # CUDA_ERROR_X
    aliases: tuple[str, ...] = ()  # other texts that name the same error (PyTorch's, HIP's, old CUDA's)
    # its message names it with no anchor, name or number before it (codes.cuda_error_of): words only CUDA writes
    alone: bool = False
    # the class it takes where the call that returned it is the one that starts CUDA in the process (cuInit, the
    # runtime's first call cudaGetDeviceCount, THC's init: codes.INIT_CALLS): what the driver answered to being started
    at_init: CudaClass | None = None

    def __post_init__(self) -> None:
        if self.runtime is None and self.driver is None:
            raise ValueError("a CUDA error needs its runtime (cudaError_t) or driver (CUresult) name")

    @property
    def name(self) -> str:
        """The error's name: the runtime API's, else the driver API's (a CUresult the runtime has no name for)."""
        return self.runtime or self.driver or ""

class CudnnStatusInfo(_Row, frozen=True):
    code: Code
    name: Annotated[str, Meta(pattern=r"^CUDNN_STATUS_[A-Z_]+$")]  # cudnnStatus_t's name
    cuda_class: CudaClass = records.field(name="class")

# Each library's prefix of its status names (cublas_api.h, cusolver_common.h, cusparse.h, cufft.h, curand.h; ROCm's
# hipblas.h, rocblas-types.h, miopen.h, hipfft.h): the names the libraries' own to-string calls return, as frameworks
# print them
LIBRARY_PREFIXES: Mapping[str, str] = MappingProxyType({
    "cublas": "CUBLAS_STATUS_", "cusolver": "CUSOLVER_STATUS_", "cusparse": "CUSPARSE_STATUS_", "cufft": "CUFFT_",
    "curand": "CURAND_STATUS_", "hipblas": "HIPBLAS_STATUS_", "rocblas": "rocblas_status_", "miopen": "miopenStatus",
    "hipfft": "HIPFFT_"})


class LibraryStatusInfo(_Row, frozen=True):
    code: Code  # the status's number in its library's enum (numbers repeat across libraries: rows are by name)
    library: CudaLibrary
    # the library's prefix (LIBRARY_PREFIXES, checked below), then the status's own words
    name: Annotated[str, Meta(pattern=r"^[A-Za-z][A-Za-z0-9_]{6,80}$")]
    cuda_class: CudaClass = records.field(name="class")
    thc: Annotated[str, Meta(min_length=8)] | None = None  # PyTorch's THC words for it (`cublas runtime error : W`)

    def __post_init__(self) -> None:
        if not self.name.startswith(LIBRARY_PREFIXES[self.library]) or self.name == LIBRARY_PREFIXES[self.library]:
            raise ValueError(f"{self.library}'s statuses are named {LIBRARY_PREFIXES[self.library]}*")
        if self.thc is not None and self.library != "cublas":
            raise ValueError("`thc` is PyTorch THC's words for a cuBLAS status")

# Whose failure a collective library's result names (catalog/cuda.yaml `nccl_results`, catalog/transport.yaml
# `mpich_error_classes`): the calling program's, its environment's (a call the library made failed), a peer's, or
# no one's.
Whose = Literal["program", "environment", "peer", "none"]


class NcclResultInfo(_Row, frozen=True):
    code: Code
    name: Annotated[str, Meta(pattern=r"^nccl[A-Z]\w*$")]  # ncclX
    whose: Whose
    phrases: tuple[str, ...] = ()  # ncclGetErrorString's words since 2.18, found anywhere
    framed: tuple[str, ...] = ()  # its words before 2.18, found only as PyTorch frames them (`, W, NCCL version`)
    aliases: tuple[Annotated[str, Meta(pattern=r"^NCCL_ERROR_[A-Z_]+$")], ...] = ()  # CuPy's names
    failed: str = ""  # an environment result's words for what failed (the verdict's note on where to look)

# Each accelerator runtime's prefix of its result names (catalog/cuda.yaml `runtime_results`): Level Zero's ze_api.h,
# Unified Runtime's ur_api.h, HIP's hip_runtime_api.h (its codes with no CUDA twin), Synapse's synapse_common_types.h
RUNTIME_PREFIXES: Mapping[str, str] = MappingProxyType({
    "level_zero": "ZE_RESULT_", "unified_runtime": "UR_RESULT_", "hip": "hipError", "synapse": "syn"})


class RuntimeResultInfo(_Row, frozen=True):
    """An accelerator runtime's result code other than CUDA's, read as a CUDA error of its class (codes.py
    runtime_result_of)."""

    code: Code  # the result's number in its runtime's enum (numbers repeat across runtimes: rows are read by name)
    api: Literal["level_zero", "unified_runtime", "hip", "synapse"]
    name: Annotated[str, Meta(pattern=r"^[A-Za-z][A-Za-z0-9_]{4,80}$")]
    cuda_class: CudaClass = records.field(name="class")

    def __post_init__(self) -> None:
        if not self.name.startswith(RUNTIME_PREFIXES[self.api]) or self.name == RUNTIME_PREFIXES[self.api]:
            raise ValueError(f"{self.api}'s results are named {RUNTIME_PREFIXES[self.api]}*")


class HcclResultInfo(_Row, frozen=True):
    """Habana's HCCL (Intel Gaudi's collective library, NCCL's API with its own results): hcclResult_t and the words
    hcclGetErrorString prints for it (catalog/cuda.yaml `hccl_results`)."""

    code: Code
    name: Annotated[str, Meta(pattern=r"^hccl[A-Z]\w*$")]  # hcclX
    whose: Whose
    phrases: tuple[str, ...] = ()  # hcclGetErrorString's words, found where the line names HCCL
    failed: str = ""  # an environment result's words for what failed


class _Coded(Protocol):
    @property
    def code(self) -> int: ...


R = TypeVar("R")
C = TypeVar("C", bound=_Coded)
T = TypeVar("T")


def _kept(file: str) -> Callable[[Callable[[], T]], Callable[[], T]]:
    """A table built from catalog/<file> and validated once, then kept in the on-disk cache (firstfault/cache.py)
    as msgpack, typed by the build's return annotation (msgspec decodes it back into the same rows, checking their
    types: no pickle), by the sha256 of the file, of this module and its schema and of the pydantic that validated
    it: a start-up reads the records back instead of parsing and validating them (and imports neither yaml nor
    pydantic). A table that cannot be encoded, or an entry that does not decode, is built again."""

    def wrap(build: Callable[[], T]) -> Callable[[], T]:
        @wraps(build)
        def load() -> T:
            import sys

            import msgspec

            from firstfault import cache

            kind = get_type_hints(build)["return"]
            name = "tables-" + cache.key(build.__name__, file, _sources_key(file), sys.version,
                                         cache.stamp("msgspec", "__init__.py")) + ".msgpack"
            data = cache.get(name)
            if data is not None:
                try:
                    with checked_rows():  # (validated when the entry was written: its key holds the sources)
                        value = msgspec.msgpack.decode(data, type=kind)
                    return cast(T, _read_only(value, kind))
                except (msgspec.DecodeError, TypeError, ValueError):  # a corrupt or foreign entry: build it again
                    pass
            table = build()
            with suppress(Exception):  # the cache is an optimisation only
                cache.put(name, msgspec.msgpack.encode(table, enc_hook=_plain))
            return table

        return load

    return wrap


def _plain(obj: object) -> object:
    """A table's read-only mapping (a MappingProxyType, the table's or a field's), encoded as the dict it shows: a
    table holding one was built again at every start-up, where its entry could not be written (CANN's: cann.yaml
    unmarshalled for it, 5-8 ms)."""
    if isinstance(obj, MappingProxyType):
        return dict(obj)
    raise NotImplementedError(type(obj))


def _read_only(value: Any, kind: Any) -> Any:
    """A table decoded from its entry as its build gives it: where it is a mapping, or a NamedTuple of rows with
    mapping fields, each mapping a read-only view (msgspec decodes a Mapping as a dict)."""
    if get_origin(kind) is abc.Mapping:
        return MappingProxyType(value)
    if hasattr(kind, "_fields"):  # a NamedTuple
        views = {f: MappingProxyType(getattr(value, f)) for f, hint in get_type_hints(kind).items()
                 if get_origin(hint) is abc.Mapping}
        return value._replace(**views) if views else value
    return value


@lru_cache(maxsize=32)  # one per table file
def _sources_key(file: str) -> str:
    """The sha256 of catalog/<file> and of the sources that build and check its rows (this module, vocab.py,
    records.py): a table entry's key part, worked out once a file, not once a table (48 tables hashed the 170 kB of
    sources each at every start-up)."""
    from firstfault import cache

    return cache.key(resources.files("firstfault").joinpath("catalog", file).read_bytes(), _module_key())


@lru_cache(maxsize=1)
def _module_key() -> str:
    from firstfault import cache

    here = Path(__file__)
    return cache.key(here.read_bytes(), here.with_name("vocab.py").read_bytes(),
                     here.parent.with_name("records.py").read_bytes())


@lru_cache(maxsize=16)  # one per table file
def _document(name: str) -> Any:
    """catalog/<name> parsed: once per process, and kept in the on-disk cache (firstfault/cache.py) by
    the sha256 of the file and of the parser, so a start-up reads it back instead of parsing its YAML.

    Shared by every table of the file: read it, never change it. A document that marshal cannot hold
    (a YAML date, say) is parsed each time; a corrupt entry is parsed again.
    """
    import marshal
    import sys

    import yaml

    from firstfault import cache, yamlio

    raw = resources.files("firstfault").joinpath("catalog", name).read_bytes()
    entry = "table-" + cache.key(name, raw, sys.version, yaml.__version__, str(yamlio.StrictLoader)) + ".marshal"
    data = cache.get(entry)
    if data is not None:
        try:
            return marshal.loads(data)
        except (EOFError, ValueError, TypeError):
            pass
    doc = yamlio.load(raw.decode("utf-8"))
    try:
        blob = marshal.dumps(doc)
    except ValueError:
        return doc
    cache.put(entry, blob)
    return doc


def _rows(name: str, key: str, row: type[R]) -> Iterator[tuple[str, R]]:
    """The rows of catalog/<name> under `key` in order, each validated (records.convert) as a `row` record, with
    where it is; a problem raises CatalogTableError naming the file, the line and the field."""
    data = _document(name)
    rows = data.get(key) if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise CatalogTableError(f"catalog/{name}: `{key}` must be a list")
    for i, raw in enumerate(rows):
        where = f"catalog/{name}: {key}[{i}]"
        try:
            item = records.convert(raw, row)
        except records.ValidationError as exc:
            loc, msg = records.location(exc)
            raise CatalogTableError(f"{_line(name, data, (key, i, *loc))}{key}[{i}]"
                                    f"{''.join(f'.{x}' for x in loc)}: {msg}") from exc
        yield where, item


def _line(name: str, data: Any, loc: tuple[str | int, ...]) -> str:
    """`catalog/<name>:<line>: `, the line of the key path in the file (when `data` is the file's document)."""
    from firstfault import yamlio

    text = resources.files("firstfault").joinpath("catalog", name).read_text(encoding="utf-8")
    line = yamlio.line_of(text, loc) if yamlio.load(text) == data else None
    return f"catalog/{name}:{line}: " if line else f"catalog/{name}: "


def _keyed(name: str, key: str, row: type[R], field: str) -> Mapping[Any, R]:
    """Rows of catalog/<name> under `key`, by their `field`, which no two rows share (`_unique`)."""
    return MappingProxyType({getattr(item, field): item for item in _unique(name, key, row, field)})


def _table(name: str, key: str, row: type[C]) -> Mapping[int, C]:
    """Rows of catalog/<name> under `key`, by code; each problem names its row and field."""
    return _keyed(name, key, row, "code")


@lru_cache(maxsize=1)
@_kept("xid.yaml")
def xid_table() -> Mapping[int, XidInfo]:
    """Every Xid of catalog/xid.yaml by code (read-only, loaded once)."""
    return _table("xid.yaml", "xids", XidInfo)


@lru_cache(maxsize=1)
@_kept("sxid.yaml")
def sxid_table() -> Mapping[int, SxidInfo]:
    """Every NVSwitch SXid of catalog/sxid.yaml by code (read-only, loaded once)."""
    return _table("sxid.yaml", "sxids", SxidInfo)


@lru_cache(maxsize=1)
@_kept("cuda.yaml")
def cuda_table() -> Mapping[int, CudaErrorInfo]:
    """CUDA runtime / driver errors of catalog/cuda.yaml by code."""
    return _table("cuda.yaml", "cuda_errors", CudaErrorInfo)


@lru_cache(maxsize=1)
@_kept("cuda.yaml")
def cudnn_status_table() -> Mapping[int, CudnnStatusInfo]:
    """cuDNN's statuses (cudnnStatus_t) of catalog/cuda.yaml by code."""
    return _table("cuda.yaml", "cudnn_statuses", CudnnStatusInfo)


@lru_cache(maxsize=1)
@_kept("cuda.yaml")
def library_status_table() -> Mapping[str, LibraryStatusInfo]:
    """The CUDA math libraries' statuses (cublasStatus_t, cusolverStatus_t, cusparseStatus_t, cufftResult,
    curandStatus_t) and ROCm's (hipblasStatus_t, rocblas_status, miopenStatus_t, hipfftResult) of catalog/cuda.yaml
    `library_statuses`, by name (their numbers repeat across libraries)."""
    return _keyed("cuda.yaml", "library_statuses", LibraryStatusInfo, "name")


class CudaSpelling(_Row, frozen=True):
    """A program's own words for one CUDA status (catalog/cuda.yaml `cuda_spellings`): the format its source prints
    them with (printf's conversions where it prints a value: its literal runs are what a line must hold, in order),
    the `cuda_errors` code whose condition they report, who prints them and the public source they were read from."""

    code: Code  # a row of `cuda_errors`: the status whose class the line takes
    format: Annotated[str, Meta(min_length=16)]  # as the program's source prints it, `%d` for a number it fills in
    printed_by: Annotated[str, Meta(min_length=8)]  # the program and its source file that print it

    @property
    def runs(self) -> tuple[str, ...]:
        """The format's literal runs in order (dcgm_format_runs), each stripped of blanks at its ends."""
        return tuple(w for r in dcgm_format_runs(self.format) if (w := r.strip()))


@lru_cache(maxsize=1)
@_kept("cuda.yaml")
def cuda_spellings() -> tuple[CudaSpelling, ...]:
    """Programs' own words for CUDA statuses (catalog/cuda.yaml `cuda_spellings`), in the table's order. Each row's
    code is a `cuda_errors` row's; its longest literal run (the prefilter's word) is at least _SPELLING_MIN_ANCHOR
    characters and holds no digit (the exception extractor's memo keys a quiet line by its digits made `0`)."""
    codes = cuda_table()
    rows: list[CudaSpelling] = []
    for where, item in _rows("cuda.yaml", "cuda_spellings", CudaSpelling):
        if item.code not in codes:
            raise CatalogTableError(f"{where}: code {item.code} is no row of cuda_errors")
        runs = item.runs
        if not runs or len(max(runs, key=len)) < _SPELLING_MIN_ANCHOR:
            raise CatalogTableError(f"{where}: the format's longest literal run is under {_SPELLING_MIN_ANCHOR} "
                                    f"characters")
        if any(c.isdigit() for c in max(runs, key=len)):
            raise CatalogTableError(f"{where}: the format's longest literal run holds a digit")
        if any(r.format == item.format for r in rows):
            raise CatalogTableError(f"{where}: duplicate format {item.format!r}")
        rows.append(item)
    return tuple(rows)


_SPELLING_MIN_ANCHOR: Final = 20


@lru_cache(maxsize=1)
@_kept("cuda.yaml")
def nccl_result_table() -> Mapping[int, NcclResultInfo]:
    """NCCL result codes of catalog/cuda.yaml by code."""
    return _table("cuda.yaml", "nccl_results", NcclResultInfo)


@lru_cache(maxsize=1)
@_kept("cuda.yaml")
def runtime_result_table() -> Mapping[str, RuntimeResultInfo]:
    """The accelerator runtimes' result codes of catalog/cuda.yaml `runtime_results` (Level Zero, Unified Runtime,
    HIP's own, Synapse), by name (their numbers repeat across runtimes)."""
    return _keyed("cuda.yaml", "runtime_results", RuntimeResultInfo, "name")


@lru_cache(maxsize=1)
@_kept("cuda.yaml")
def hccl_result_table() -> Mapping[int, HcclResultInfo]:
    """Habana HCCL result codes of catalog/cuda.yaml by code."""
    return _table("cuda.yaml", "hccl_results", HcclResultInfo)


def xid_info(code: int) -> XidInfo | None:
    return xid_table().get(code)


def sxid_info(code: int) -> SxidInfo | None:
    return sxid_table().get(code)


def xid_class(code: int) -> str:
    """The attribution class of a Xid; codes newer than the table are `other`."""
    info = xid_info(code)
    return info.xid_class if info is not None else "other"


def sxid_class(code: int) -> str:
    info = sxid_info(code)
    return info.sxid_class if info is not None else "other"


# --------------------------------------------------------------------------
# The GPU platform from user space (catalog/platform.yaml)
# --------------------------------------------------------------------------


class NvmlErrorInfo(_Row, frozen=True):
    code: Code
    name: Annotated[str, Meta(pattern=r"^[A-Z][A-Z0-9_]+$")]
    message: Annotated[str, Meta(min_length=3)]
    nvml_class: NvmlClass = records.field(name="class")
    aliases: tuple[str, ...] = ()
    also: tuple[str, ...] = ()  # words the line must hold as well (case as printed), else the row's text says nothing

class NcclTransportInfo(_Row, frozen=True):
    file: Annotated[str, Meta(min_length=3)]  # a file name, or a prefix ending in `*`
    transport: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]*$")]

class NcclTransportName(_Row, frozen=True):
    name: Annotated[str, Meta(min_length=3)]  # the words NCCL's own messages name the transport by
    transport: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]*$")]

@lru_cache(maxsize=1)
@_kept("platform.yaml")
def nvml_table() -> Mapping[int, NvmlErrorInfo]:
    """NVML / nvidia-smi errors of catalog/platform.yaml by code."""
    return _table("platform.yaml", "nvml_errors", NvmlErrorInfo)


_NVRM_REASONS: Mapping[str, frozenset[str]] = MappingProxyType({
    "reset_required": frozenset(get_args(NvrmResetReason)),
    "nvml_error": frozenset(get_args(NvmlClass)),
    "none": frozenset(get_args(NvrmNoneReason)),
})


class NvrmMessage(_Row, frozen=True):
    text: Annotated[str, Meta(min_length=8)]  # the anchor: a prefilter literal, case as the driver prints it
    event: NvrmEvent
    reason: Annotated[str, Meta(pattern=r"^[a-z][a-z_]*$")]  # the event's reason (gpu.reset_required) or class
    printed_by: Annotated[str, Meta(pattern=r"^(?:kernel-open|src)/[\w./-]+\.[ch]$")]  # a file of the driver's source
    status: Annotated[int, Meta(gt=0)] | None = None  # the `status=0x...` the line must carry

    def __post_init__(self) -> None:
        if self.reason not in _NVRM_REASONS[self.event]:
            raise ValueError(f"reason {self.reason!r} is not one of {self.event}'s: "
                             f"{', '.join(sorted(_NVRM_REASONS[self.event]))}")
        if self.status is not None and self.event != "reset_required":
            raise ValueError("`status` narrows a reset_required row only")


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def nvrm_messages() -> tuple[NvrmMessage, ...]:
    """The NVIDIA kernel driver's messages without an Xid, in the table's order (catalog/platform.yaml)."""
    return _unique("platform.yaml", "nvrm_messages", NvrmMessage, "text")


class FmMessage(_Row, frozen=True):
    """A line of NVIDIA Fabric Manager's or the IMEX daemon's own log (or systemd's about their units) and what it is
    (catalog/platform.yaml `fabric_manager_messages`)."""

    text: Annotated[str, Meta(min_length=8)]  # the anchor: a prefilter literal, case as printed
    event: FmEvent  # gpu.fabricmanager's `fm_event`; `none`: understood, and nothing
    printed_by: Annotated[str, Meta(min_length=8)]  # who prints it, and the public source its words were read from
    also: tuple[Text, ...] = ()  # words the line must hold as well
    unless: tuple[Text, ...] = ()  # words that, on the line, make the row not hold (systemd's `status=0/SUCCESS`)


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def fabric_manager_messages() -> tuple[FmMessage, ...]:
    """Fabric Manager's and the IMEX daemon's words, in the table's order (catalog/platform.yaml)."""
    return _unique("platform.yaml", "fabric_manager_messages", FmMessage, "text")


class ContainerError(_Row, frozen=True):
    """A container runtime's or container launcher's words for a container that could not be made or started."""

    text: Annotated[str, Meta(min_length=8)]  # a prefilter literal, case as printed
    runtime: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9-]*$")]  # who prints it (the event's `runtime`)
    container_class: ContainerClass = records.field(name="class")
    printed_by: Annotated[str, Meta(min_length=8)]  # the repository and source file (or document) that prints it
    # the text counts only where one of `container_contexts` (or a `start` row's text) stands before it on the line:
    # its words alone are any program's (a Go program's own exec, a registry's answer to another client)
    quoted: bool = False
    # the text counts only where these words stand before it on the line (an errno's words are any program's; after
    # one stage's words of one tool they say what that stage found)
    after: str | None = None


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def container_errors() -> tuple[ContainerError, ...]:
    """Container runtimes' and launchers' errors, in the table's order (catalog/platform.yaml)."""
    return _unique("platform.yaml", "container_errors", ContainerError, "text")


class ContainerLevel(_Row, frozen=True):
    """A container runtime's own level tag at the start of its error lines, as its source spells it."""

    prefix: Annotated[str, Meta(min_length=6)]  # a prefilter literal, spaces and case as printed
    runtime: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9-]*$")]  # who prints it (the event's `runtime`)
    printed_by: Annotated[str, Meta(min_length=8)]  # the repository and source file that prints it


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def container_levels() -> tuple[ContainerLevel, ...]:
    """Container runtimes' level tags before their own error lines (catalog/platform.yaml)."""
    return _unique("platform.yaml", "container_levels", ContainerLevel, "prefix")


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def container_contexts() -> tuple[str, ...]:
    """Words that say a line reports a container's start or its image's pull (catalog/platform.yaml)."""
    return _strings("platform.yaml", "container_contexts")


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def container_retries() -> tuple[str, ...]:
    """The kubelet's words for one try of a container it retries (catalog/platform.yaml)."""
    return _strings("platform.yaml", "container_retries")


# Accelerators other than NVIDIA's (catalog/accel.yaml)
class AccelMessage(_Row, frozen=True):
    """A message of another vendor's accelerator driver or runtime, and the Xid-like class it stands for."""

    text: Annotated[str, Meta(min_length=6)]  # the anchor: a prefilter literal, case as printed
    accel_class: AccelClass = records.field(name="class")
    reason: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]*$")]  # the event's `reason`: the row's own name
    printed_by: Annotated[str, Meta(min_length=8)]  # the vendor's source file or document that prints it
    after: str | None = None  # a word that must stand before `text` (the driver's name as its printer puts it)
    also: tuple[Text, ...] = ()  # words the line must hold as well
    code: Annotated[int, Meta(gt=0)] | None = None  # the status's number, where the runtime prints one
    # What the driver does about an error it reported just before on the same device (a reset, a ring it gave up
    # on): that error names the cause, this row is its consequence (`cause_class` on the event), as Xid 43/45 are.
    follows: bool = False
    # The text is a count's key (`TOTAL_UNCORRECTABLE_COUNT: 2`): the row holds only where the number after it is
    # above 0; a count of 0 is understood and nothing.
    counted: bool = False


class AccelBlock(_Row, frozen=True):
    """A RAS block amdgpu names in its counts whose errors are not a memory's."""

    block: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]*$")]
    accel_class: AccelClass = records.field(name="class")


class SmiQueryRow(_Row, frozen=True):
    """A `key : value` line of nvidia-smi -q's memory sections and the Xid-like class it stands for
    (catalog/accel.yaml `nvidia_smi_query`)."""

    section: Literal["ECC Errors", "Retired Pages", "Remapped Rows", "Fabric", "Clocks Event Reasons",
                     "Clocks Throttle Reasons", "vGPU Software Licensed Product"]
    key: Annotated[str, Meta(min_length=4)]  # the line's key, or the start of it
    when: Literal["yes", "nonzero", "equals"]
    accel_class: AccelClass = records.field(name="class")
    reason: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]*$")]
    printed_by: Annotated[str, Meta(min_length=8)]
    scope: Literal["Volatile", "Aggregate"] | None = None
    bits: Literal["Single Bit", "Double Bit"] | None = None
    unless_zero: str | None = None  # a key of the same block: where its count is 0, the row is `else_class`
    else_class: AccelClass | None = None
    equals: str | None = None  # `when: equals`: the value the row holds for

    def __post_init__(self) -> None:
        if (self.when == "equals") != (self.equals is not None):
            raise ValueError("`equals` goes with `when: equals`, and only with it")
        if (self.unless_zero is None) != (self.else_class is None):
            raise ValueError("`unless_zero` and `else_class` go together")
        if (self.scope is not None or self.bits is not None) and self.section != "ECC Errors":
            raise ValueError("`scope` and `bits` narrow an `ECC Errors` row only")


class DcgmDiagTest(_Row, frozen=True):
    """A test of `dcgmi diag`'s table whose failure is a device fault, and its Xid-like class (catalog/accel.yaml
    `dcgm_diag_tests`)."""

    test: Annotated[str, Meta(min_length=4)]
    accel_class: AccelClass = records.field(name="class")
    reason: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]*$")]
    printed_by: Annotated[str, Meta(min_length=8)]


@lru_cache(maxsize=1)
@_kept("accel.yaml")
def dcgm_diag_tests() -> Mapping[str, DcgmDiagTest]:
    """`dcgmi diag`'s tests by name (catalog/accel.yaml `dcgm_diag_tests`)."""
    return MappingProxyType({r.test: r for r in _unique("accel.yaml", "dcgm_diag_tests", DcgmDiagTest, "test")})


# What a DCGM failure code says of the device (catalog/accel.yaml `dcgm_errors`): the device's fault by its class
# (`memory_info`: corrected errors, no fault by themselves), or that a test could not run as meant.
DcgmClass = Literal["memory", "memory_info", "pcie", "nvlink", "thermal", "power", "other",
                    "not_run", "config", "environment", "internal"]
DCGM_REASONS_NOT_RUN: Final = frozenset({"not_run", "config", "environment", "internal"})
# The classes a code read on a line by itself may have, as the accelerator rows' classes (catalog/vocab.py AccelClass):
# DCGM's `nvlink` is the Xid classes' `link`.
_DCGM_LINE_CLASSES: Final[Mapping[str, AccelClass]] = MappingProxyType({
    "memory": "memory", "memory_info": "memory_info", "nvlink": "link", "pcie": "pcie", "thermal": "thermal",
    "other": "other"})
# A printf conversion in DCGM's formats (the flags take every 0 before a width, which starts 1-9)
_DCGM_CONVERSION: Final = re.compile(r"%[-+ #0]*(?:[1-9]\d*)?(?:\.\d+)?(?:hh|h|ll|l|z)?[diouxXeEfgGsc%]")
_DCGM_MIN_ANCHOR: Final = 12  # the characters of a format's longest run below which it names no code on a line


class DcgmError(_Row, frozen=True):
    """A DCGM failure code (DCGM_FR_*): its number, its message's format (empty where DCGM writes the message in
    place), the older formats of the same code, what it says of the device, and, where a line may report it by
    itself, the event's name for it (catalog/accel.yaml `dcgm_errors`)."""

    code: Annotated[int, Meta(gt=0)]
    name: Annotated[str, Meta(pattern=r"^DCGM_FR_[A-Z0-9_]+$")]
    message: str
    reason_class: DcgmClass = records.field(name="class")
    printed_by: Annotated[str, Meta(min_length=8)]
    aliases: tuple[Annotated[str, Meta(min_length=8)], ...] = ()
    # the event's `reason` where a line reports the code by itself (its name, its message's words): extract/gpu.py
    # AccelExtractor reads the codes that have one
    reason: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]*$")] | None = None

    def __post_init__(self) -> None:
        if self.reason is not None and self.reason_class not in _DCGM_LINE_CLASSES:
            raise ValueError(f"a code read on a line by itself (`reason`) has a device's class "
                             f"({', '.join(_DCGM_LINE_CLASSES)}), not {self.reason_class!r}")


@lru_cache(maxsize=1)
@_kept("accel.yaml")
def dcgm_errors() -> Mapping[int, DcgmError]:
    """DCGM's failure codes by number (catalog/accel.yaml `dcgm_errors`): the reasons of a failed `dcgmi diag` test,
    and, through dcgm_lines, the codes a line reports by itself."""
    table = _table("accel.yaml", "dcgm_errors", DcgmError)
    names: dict[str, int] = {}
    for row in table.values():
        if row.name in names:
            raise CatalogTableError(f"catalog/accel.yaml: dcgm_errors: {row.name} is code {names[row.name]} and "
                                    f"{row.code}")
        names[row.name] = row.code
    return table


def dcgm_format_runs(fmt: str) -> tuple[str, ...]:
    """A format of DCGM's as its literal runs between %-conversions, in order (`%%` is a `%` of the run's words);
    the runs as printed, spaces kept, empty ones left out."""
    runs: list[str] = []
    lit, at = "", 0
    for m in _DCGM_CONVERSION.finditer(fmt):
        lit += fmt[at:m.start()]
        if m.group(0).endswith("%"):
            lit += "%"
        elif lit:
            runs.append(lit)
            lit = ""
        at = m.end()
    lit += fmt[at:]
    if lit:
        runs.append(lit)
    return tuple(runs)


def _dcgm_anchor(row: DcgmError, fmt: str, formats: tuple[tuple[int, str], ...]) -> tuple[str, ...] | None:
    """The words a line must hold to be `fmt` (a format of `row`'s): its longest run (spaces and the `.,:;` at its
    ends taken off) first, then its other runs, longest first, only as many as it takes for no other code's format to
    hold them all; None where every run stands in another code's format too, or the longest is under
    _DCGM_MIN_ANCHOR characters (catalog/accel.yaml `dcgm_errors`)."""
    runs = sorted(dict.fromkeys(w for r in dcgm_format_runs(fmt) if (w := r.strip().strip(".,:;").strip())),
                  key=lambda w: -len(w))
    if not runs or len(runs[0]) < _DCGM_MIN_ANCHOR:
        return None
    for n in range(1, len(runs) + 1):
        words = runs[:n]
        if not any(code != row.code and all(w in other for w in words) for code, other in formats):
            return tuple(words)
    return None


@lru_cache(maxsize=1)
def dcgm_lines() -> tuple[AccelMessage, ...]:
    """The accelerator rows of DCGM's codes that a line reports by itself (catalog/accel.yaml `dcgm_errors`, the rows
    with a `reason`), in the codes' order: each code by its name, then by each of its formats' words (_dcgm_anchor);
    `code` is the DCGM code."""
    table = dcgm_errors()
    formats = tuple((r.code, f) for r in table.values() for f in (r.message, *r.aliases) if f)
    rows: list[AccelMessage] = []
    for row in table.values():
        if row.reason is None and row.reason_class in DCGM_REASONS_NOT_RUN:
            # a code that says the check could not run or found the node's set-up, not a device, wanting (an IMEX
            # daemon not ready where no IMEX domain is in use: NVIDIA/NVSentinel#1471), named by a monitor that
            # passes DCGM's code on: understood, and nothing (its name only: its words may be any program's)
            rows.append(AccelMessage(text=row.name, accel_class="informational", reason=row.name[8:].lower(),
                                     printed_by=row.printed_by, code=row.code))
            continue
        if row.reason is None:
            continue
        cls = _DCGM_LINE_CLASSES[row.reason_class]
        anchors: list[tuple[str, ...]] = [(row.name,)]
        for fmt in (row.message, *row.aliases):
            words = _dcgm_anchor(row, fmt, formats) if fmt else None
            if words is not None and words not in anchors:
                anchors.append(words)
        rows += [AccelMessage(text=text, also=tuple(also), accel_class=cls, reason=row.reason,
                              printed_by=row.printed_by, code=row.code) for text, *also in anchors]
    return tuple(rows)


@lru_cache(maxsize=1)
@_kept("accel.yaml")
def nvidia_smi_query() -> tuple[SmiQueryRow, ...]:
    """nvidia-smi -q's memory-section rows, in the file's order (catalog/accel.yaml `nvidia_smi_query`)."""
    return tuple(item for _, item in _rows("accel.yaml", "nvidia_smi_query", SmiQueryRow))


class NvlinkRow(_Row, frozen=True):
    """A line of `nvidia-smi nvlink -e` / `-s` about one link and the Xid-like class it stands for (catalog/accel.yaml
    `nvidia_smi_nvlink`): a count's key, or `<inactive>`."""

    key: Annotated[str, Meta(min_length=4)]
    accel_class: AccelClass = records.field(name="class")
    reason: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]*$")]
    printed_by: Annotated[str, Meta(min_length=8)]


@lru_cache(maxsize=1)
@_kept("accel.yaml")
def nvidia_smi_nvlink() -> Mapping[str, NvlinkRow]:
    """`nvidia-smi nvlink`'s per-link rows by key (catalog/accel.yaml `nvidia_smi_nvlink`)."""
    return MappingProxyType({r.key: r for r in _unique("accel.yaml", "nvidia_smi_nvlink", NvlinkRow, "key")})


class NvlinkGpuModel(_Row, frozen=True):
    """A word of a GPU's product name and whether a GPU so named is built into an NVLink fabric (catalog/accel.yaml
    `nvlink_gpu_models`)."""

    word: Annotated[str, Meta(min_length=3, pattern=r"^[a-z0-9 -]+$")]  # in lower case
    fabric: bool
    source: Annotated[str, Meta(min_length=8)]


@lru_cache(maxsize=1)
@_kept("accel.yaml")
def nvlink_gpu_models() -> tuple[NvlinkGpuModel, ...]:
    """The GPU models' words, in the file's order (catalog/accel.yaml `nvlink_gpu_models`)."""
    return _unique("accel.yaml", "nvlink_gpu_models", NvlinkGpuModel, "word")


def nvlink_fabric_model(name: str) -> bool | None:
    """Is a GPU of product name `name` built into an NVLink fabric: False where a word of a `fabric: false` row stands
    in it, else True where a word of a `fabric: true` row does, else None (a model the table does not know)."""
    low = name.lower()
    hits = [r.fabric for r in nvlink_gpu_models() if r.word in low]
    if not hits:
        return None
    return all(hits)


class AccelTable(NamedTuple):
    """catalog/accel.yaml: one table per vendor family, each with its vendor and the driver it names."""

    families: tuple[tuple[str, str, tuple[AccelMessage, ...]], ...]  # (vendor, driver, rows) in the file's order
    ras_blocks: tuple[AccelBlock, ...]


# The families of catalog/accel.yaml: its key, the vendor and the driver or runtime that prints the rows.
_ACCEL_FAMILIES: tuple[tuple[str, str, str], ...] = (
    ("amdgpu_messages", "amd", "amdgpu"),
    ("hsa_runtime_messages", "amd", "rocr"),
    ("habanalabs_messages", "intel", "habanalabs"),
    ("i915_messages", "intel", "i915"),
    ("xe_messages", "intel", "xe"),
    ("dcgm_errors", "nvidia", "dcgm"),  # derived from DCGM's codes by number (dcgm_lines)
    ("nvidia_pci_messages", "nvidia", "nvidia"),
    ("gpu_burn_results", "nvidia", "gpu-burn"),
    ("cuda_memtest_results", "nvidia", "cuda_memtest"),
    ("amd_smi_counts", "amd", "amd-smi"),
    ("neuron_statuses", "aws", "neuron"),
    ("cann_messages", "huawei", "cann"),
    ("tenstorrent_messages", "tenstorrent", "tt-umd"),
)


@lru_cache(maxsize=1)
@_kept("accel.yaml")
def accel_table() -> AccelTable:
    """Other vendors' accelerator messages, one table per family, in the file's order (catalog/accel.yaml)."""
    families = []
    for key, vendor, driver in _ACCEL_FAMILIES:
        rows: list[AccelMessage] = []
        # a row is its words and its printer's (the same words under two drivers' names are two rows)
        seen: set[tuple[str, tuple[str, ...], str | None]] = set()
        items = (((f"catalog/accel.yaml: {key}: code {r.code}", r) for r in dcgm_lines()) if key == "dcgm_errors" else
                 _rows("accel.yaml", key, AccelMessage))
        for where, item in items:
            if (item.text, item.also, item.after) in seen:
                raise CatalogTableError(f"{where}: duplicate text {item.text!r}")
            seen.add((item.text, item.also, item.after))
            rows.append(item)
        families.append((vendor, driver, tuple(rows)))
    blocks = _unique("accel.yaml", "amdgpu_ras_blocks", AccelBlock, "block")
    return AccelTable(tuple(families), blocks)


# Huawei Ascend's CANN reports that are no device's fault (catalog/cann.yaml)
CannReads = Literal["timeout", "remote", "oom", "setup", "workload"]


class CannModule(_Row, frozen=True):
    """A CANN module's letter, the second character of its report codes (`EI0002`: HCCL)."""

    letter: Annotated[str, Meta(pattern=r"^[1-9A-Z]$")]
    module: Annotated[str, Meta(min_length=2)]


class CannCode(_Row, frozen=True):
    """A CANN report code (`E<module><4 digits>`) whose number decides what its line is read as."""

    code: Annotated[str, Meta(pattern=r"^E[1-9A-Z]\d{4}$")]
    reads: CannReads
    name: Annotated[str, Meta(min_length=4)]
    printed_by: Annotated[str, Meta(min_length=8)]


class CannResult(_Row, frozen=True):
    """An aclError result torch_npu prints after the call that failed, that is no device's fault."""

    code: Annotated[int, Meta(ge=100000, le=599999)]
    reads: CannReads
    name: Annotated[str, Meta(pattern=r"^ACL_ERROR_[A-Z0-9_]+$")]
    printed_by: Annotated[str, Meta(min_length=8)]


class HcclResult(_Row, frozen=True):
    """An HcclResult torch_npu prints after the HCCL call that failed."""

    code: Annotated[int, Meta(ge=1, le=99)]
    reads: CannReads
    name: Annotated[str, Meta(pattern=r"^HCCL_E_[A-Z0-9_]+$")]
    printed_by: Annotated[str, Meta(min_length=8)]


class CannWords(_Row, frozen=True):
    """Words of an internal CANN report or of torch_npu's message that decide where no code does."""

    text: Annotated[str, Meta(min_length=8)]
    reads: CannReads
    printed_by: Annotated[str, Meta(min_length=8)]


class CannTable(NamedTuple):
    """catalog/cann.yaml."""

    modules: tuple[CannModule, ...]
    codes: Mapping[str, CannCode]
    results: Mapping[int, CannResult]
    hccl: Mapping[int, HcclResult]
    words: tuple[CannWords, ...]
    envelopes: tuple[str, ...]


@lru_cache(maxsize=1)
@_kept("cann.yaml")
def cann_table() -> CannTable:
    """CANN's report codes, torch_npu's results and words, and the messages that wait for CANN's report."""
    modules = _unique("cann.yaml", "modules", CannModule, "letter")
    letters = {m.letter for m in modules}
    codes = _unique("cann.yaml", "report_codes", CannCode, "code")
    for c in codes:
        if c.code[1] not in letters:
            raise CatalogTableError(f"catalog/cann.yaml: report_codes: {c.code}: no module has the letter "
                                    f"{c.code[1]!r}")
    results = _unique("cann.yaml", "result_codes", CannResult, "code")
    hccl = _unique("cann.yaml", "hccl_results", HcclResult, "code")
    words = _unique("cann.yaml", "device_words", CannWords, "text")
    return CannTable(modules, MappingProxyType({c.code: c for c in codes}),
                     MappingProxyType({r.code: r for r in results}), MappingProxyType({h.code: h for h in hccl}),
                     words, _strings("cann.yaml", "envelopes"))


def _strings(name: str, key: str) -> tuple[str, ...]:
    data = _document(name)
    rows = data.get(key) if isinstance(data, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, str) and r for r in rows):
        raise CatalogTableError(f"catalog/{name}: `{key}` must be a list of non-empty strings")
    return tuple(rows)


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def nvml_anchors() -> tuple[str, ...]:
    """Words before which a line reports an NVML result (catalog/platform.yaml)."""
    return _strings("platform.yaml", "nvml_anchors")


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def nvml_not_reports() -> tuple[str, ...]:
    """Words that make a line with an anchor's words the program's own failure, not an NVML result
    (catalog/platform.yaml)."""
    return _strings("platform.yaml", "nvml_not_reports")


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def nvml_quote_anchors() -> tuple[str, ...]:
    """Words of programs that quote NVML's result after them; a line counts only with a result of the table
    (catalog/platform.yaml)."""
    return _strings("platform.yaml", "nvml_quote_anchors")


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def nvml_device_anchors() -> tuple[str, ...]:
    """Anchors of NVML messages about one named GPU (catalog/platform.yaml)."""
    return _strings("platform.yaml", "nvml_device_anchors")


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def nvidia_smi_field_errors() -> tuple[str, ...]:
    """What nvidia-smi prints in a table cell it could not read (catalog/platform.yaml)."""
    return _strings("platform.yaml", "nvidia_smi_field_errors")


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def driver_libraries() -> tuple[str, ...]:
    """File-name prefixes of the NVIDIA driver's user-space libraries."""
    return _strings("platform.yaml", "driver_libraries")


def is_driver_library(path: str) -> bool:
    """Whether a shared object (a file name or a path: `libcuda.so.1`, `/usr/lib64/libnvidia-ml.so.535.54.03`) is one
    of the NVIDIA driver's user-space libraries (`driver_libraries`)."""
    name = path.rsplit("/", 1)[-1]
    return bool(name) and name.startswith(driver_libraries())


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def nccl_transports() -> Mapping[str, str]:
    """NCCL source file (`transport/nvls.cc`, or a prefix `nccl_net_ofi*`) -> transport / subsystem name."""
    return MappingProxyType({item.file: item.transport
                             for _, item in _rows("platform.yaml", "nccl_transports", NcclTransportInfo)})


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def nccl_transport_names() -> Mapping[str, str]:
    """The words an NCCL message names its transport by (`NVLink SHARP (NVLS)`) -> transport name: where a WARN
    stands without its `file.cc:line` (quoted after PyTorch's `Last error:`, posted alone)."""
    return MappingProxyType({item.name: item.transport
                             for _, item in _rows("platform.yaml", "nccl_transport_names", NcclTransportName)})


# --------------------------------------------------------------------------
# The transports' statuses and events, spelled by each stack (catalog/transport.yaml)
# --------------------------------------------------------------------------


class CompletionStatus(_Row, frozen=True):
    """One work-completion status in one stack's numbering; `same_as` rows (mlx5) take the ibv row's class."""

    stack: CompletionStack
    code: Annotated[int, Meta(ge=0)]
    name: Annotated[str, Meta(pattern=r"^[A-Z][A-Z0-9_]+$")]  # IBV_WC_X, MLX5_CQE_SYNDROME_X, EFA_IO_COMP_STATUS_X
    wc_class: IbWcClass | None = records.field(default=None, name="class")
    same_as: Annotated[int, Meta(ge=0)] | None = None  # the ibv status this one reports (mlx5 syndromes)
    texts: tuple[str, ...] = ()  # the stack's words for it (extract/verbs.py)
    numbered: bool = False  # its words are everyday ones: read only beside the status's own number

class AsyncEvent(_Row, frozen=True):
    """An RDMA adapter's asynchronous event (enum ibv_event_type) and the words ibv_event_type_str() gives it."""

    code: Annotated[int, Meta(ge=0)]
    name: Annotated[str, Meta(pattern=r"^IBV_EVENT_[A-Z_]+$")]  # IBV_EVENT_X
    text: Annotated[str, Meta(min_length=3)]
    means: AsyncMeans

class PeerStatus(_Row, frozen=True):
    """A stack's words for a peer that stopped answering or went away."""

    stack: PeerStack
    name: Annotated[str, Meta(pattern=r"^[A-Za-z][A-Za-z0-9_]+$")]
    means: PeerMeans
    texts: Annotated[tuple[str, ...], Meta(min_length=1)]

# The local statuses' stacks whose rows may wait for words of a later line (`confirm`): MPICH's error stack, read as
# a record; Mooncake's devices, each left out alone until none is left; a remote shell's failure, until the launcher
# that ran it gives up.
_CONFIRMED_STACKS: Final = frozenset({"mpich", "mooncake", "ssh"})


class LocalStatus(_Row, frozen=True):
    """A stack's words for its node, as the job set it up, lacking what it needs (the job's own set-up)."""

    stack: LocalStack
    name: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]+$")]
    texts: Annotated[tuple[str, ...], Meta(min_length=1)]
    # the label of the help text's line that names the node (`Host:`), if any
    host_label: Annotated[str, Meta(pattern=r"^[A-Z][A-Za-z ]*:$")] | None = None
    # (mpich) the MPI calls the error stack's record must have failed in; none: any
    during: tuple[Annotated[str, Meta(pattern=r"^MPI_[A-Z][a-z_]+$")], ...] = ()
    # (mpich, mooncake) words one of the record's later lines (mpich), or of the lines after the row's (mooncake),
    # must hold before the status counts
    confirm: tuple[Annotated[str, Meta(min_length=3)], ...] = ()
    # (ssh) the text is followed by the host the resolver was asked for and its answer (OpenSSH's `%s: Could not
    # resolve hostname %.100s: %s`): the row counts only where the answer is catalog/transport.yaml
    # `name_not_found_words` (a name that does not exist), and only for a host outside the job's known allocation
    # (engine/normalise.py `unknown_hosts`; the event's `peer` is the host)
    resolver: bool = False

class MpichErrorClass(_Row, frozen=True):
    """An MPI error class as MPICH's error stack names it (`Other MPI error`)."""

    name: Annotated[str, Meta(pattern=r"^(?:MPIX?_ERR_[A-Z_]+|unknown_class)$")]
    text: Annotated[str, Meta(min_length=3)]
    whose: Whose  # `program`: an error in the arguments of the program's own call, the workload's exception

    @property
    def argument(self) -> bool:
        """The class is an error in the arguments of the program's own call (`whose: program`)."""
        return self.whose == "program"

class TransportTable(NamedTuple):
    """catalog/transport.yaml, validated: completion statuses, adapter async events, peer and local statuses
    (kept in the cache)."""

    completions: tuple[CompletionStatus, ...]  # every row with its class (an mlx5 row has its ibv status's)
    async_events: tuple[AsyncEvent, ...]
    peers: tuple[PeerStatus, ...]
    local: tuple[LocalStatus, ...] = ()
    mpich_classes: tuple[MpichErrorClass, ...] = ()


@lru_cache(maxsize=1)
@_kept("transport.yaml")
def transport_table() -> TransportTable:
    """catalog/transport.yaml, its rows validated one by one and against each other: a stack's codes are unique,
    an ibv or efa row has a class, an mlx5 row names an ibv status it is `same_as` (and takes its class)."""
    name = "transport.yaml"
    ibv: dict[int, CompletionStatus] = {}
    rows: list[tuple[str, CompletionStatus]] = []
    seen: set[tuple[str, int]] = set()
    for where, row in _rows(name, "completion_statuses", CompletionStatus):
        if (row.stack, row.code) in seen:
            raise CatalogTableError(f"{where}: duplicate code {row.code} for stack {row.stack}")
        seen.add((row.stack, row.code))
        if (row.same_as is None) == (row.wc_class is None):
            raise CatalogTableError(f"{where}: give exactly one of `class` and `same_as`")
        if row.numbered and not row.texts:
            raise CatalogTableError(f"{where}: `numbered` words need `texts`")
        if row.stack == "ibv":
            if row.same_as is not None:
                raise CatalogTableError(f"{where}: an ibv row is the reference, it has no `same_as`")
            ibv[row.code] = row
        rows.append((where, row))
    completions: list[CompletionStatus] = []
    for where, row in rows:
        if row.same_as is not None:
            ref = ibv.get(row.same_as)
            if ref is None:
                raise CatalogTableError(f"{where}: same_as {row.same_as} is no ibv status of the table")
            row = records.replace(row, wc_class=ref.wc_class)
        completions.append(row)
    events = tuple(item for _, item in _rows(name, "async_events", AsyncEvent))
    if len({e.text for e in events}) != len(events) or len({e.code for e in events}) != len(events):
        raise CatalogTableError(f"catalog/{name}: async_events: a code or text appears twice")
    peers = tuple(item for _, item in _rows(name, "peer_statuses", PeerStatus))
    # A line is read as a peer's loss or as the node's own set-up, never both: no words of one inside the other's.
    peer_words = {t for p in peers for t in p.texts}
    local: list[LocalStatus] = []
    for where, item in _rows(name, "local_statuses", LocalStatus):
        clash = next((t for t in item.texts if any(t in w or w in t for w in peer_words)), None)
        if clash is not None:
            raise CatalogTableError(f"{where}: {clash!r} meets a peer status's words")
        if item.during and item.stack != "mpich":
            raise CatalogTableError(f"{where}: `during` belongs to an MPICH error stack's rows")
        if item.confirm and item.stack not in _CONFIRMED_STACKS:
            raise CatalogTableError(f"{where}: `confirm` belongs to an MPICH error stack's or a held device's rows")
        if item.resolver and not (item.stack == "ssh" and item.confirm):
            raise CatalogTableError(f"{where}: `resolver` belongs to a remote shell's row that a launcher confirms")
        local.append(item)
    classes = tuple(item for _, item in _rows(name, "mpich_error_classes", MpichErrorClass))
    if len({c.text for c in classes}) != len(classes):
        raise CatalogTableError(f"catalog/{name}: mpich_error_classes: a text appears twice")
    return TransportTable(tuple(completions), events, peers, tuple(local), classes)


class HelpTopic(_Row, frozen=True):
    """An Open MPI, PRRTE or PMIx help text by its file and topic (catalog/transport.yaml `help_topics`): the local
    status whose sentence its text holds, or `none`."""

    file: Annotated[str, Meta(pattern=r"^help-[\w.\-]+\.txt$")]
    topic: Annotated[str, Meta(min_length=2, pattern=r"^[^\[\]\n]+$")]
    status: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]+$")]


# The local statuses' stacks whose rows are help texts a topic may name (extract/verbs.py reads them sentence by
# sentence).
_HELP_TEXT_STACKS: Final = frozenset({"mca", "ompi"})


@lru_cache(maxsize=1)
@_kept("transport.yaml")
def help_topics() -> dict[tuple[str, str], LocalStatus | None]:
    """catalog/transport.yaml `help_topics`: (file, topic) -> the local status row (stack mca or ompi) its text is,
    or None for `none`. A topic appears once; a status names a help text's row."""
    rows = {r.name: r for r in transport_table().local if r.stack in _HELP_TEXT_STACKS}
    out: dict[tuple[str, str], LocalStatus | None] = {}
    for where, item in _rows("transport.yaml", "help_topics", HelpTopic):
        key = (item.file, item.topic)
        if key in out:
            raise CatalogTableError(f"{where}: {item.file} / {item.topic} appears twice")
        if item.status != "none" and item.status not in rows:
            raise CatalogTableError(f"{where}: {item.status!r} is no local status of stack mca or ompi")
        out[key] = None if item.status == "none" else rows[item.status]
    return out


_PRINTF: Final = {"%s": r"\S{1,200}", "%5s": r" {0,5}\S{1,200}", "%d": r"-?[0-9]{1,12}"}


@lru_cache(maxsize=1)
@_kept("transport.yaml")
def mca_verbose_records() -> re.Pattern[str]:
    """Open MPI's verbose component-selection records (catalog/transport.yaml `mca_verbose_records`: printf formats)
    as one pattern, to search a line for (behind any prefix) and that must end it: each format's text literal, its
    `%s` / `%5s` / `%d` a bounded word or number."""
    parts: list[str] = []
    for fmt in _strings("transport.yaml", "mca_verbose_records"):
        pieces = re.split(r"(%5s|%s|%d)", fmt)
        parts.append("".join(_PRINTF.get(x, re.escape(x)) for x in pieces))
    return re.compile("(?:" + "|".join(parts) + r")\s*$")  # the record whole to the line's end


def mpich_classes() -> tuple[MpichErrorClass, ...]:
    """MPICH's error classes by the words its error stack gives them (catalog/transport.yaml `mpich_error_classes`)."""
    return transport_table().mpich_classes


@lru_cache(maxsize=1)
@_kept("transport.yaml")
def libfabric_errnos() -> tuple[str, ...]:
    """The errno names libfabric defines as its own error numbers (catalog/transport.yaml `libfabric_errnos`)."""
    return _strings("transport.yaml", "libfabric_errnos")


@lru_cache(maxsize=1)
@_kept("transport.yaml")
def name_not_found_words() -> tuple[str, ...]:
    """The resolver's words for a host name that does not exist (catalog/transport.yaml `name_not_found_words`)."""
    return _strings("transport.yaml", "name_not_found_words")


def resolver_statuses() -> frozenset[str]:
    """The local statuses of a remote shell's name the resolver said does not exist (catalog/transport.yaml
    `local_statuses`, `resolver: true`): the job's set-up only for a host outside the job's known allocation."""
    return frozenset(row.name for row in transport_table().local if row.resolver)


FabricDaemon = Literal["opensm", "ibacm"]
FabricDaemonClass = Literal["sm_host", "sm_down", "partition"]


class FabricDaemonMessage(_Row, frozen=True):
    """A record of the fabric's management daemons (the subnet manager, ibacm) and what it is
    (catalog/transport.yaml `fabric_daemon_messages`)."""

    daemon: FabricDaemon
    words: Annotated[str, Meta(min_length=8)]  # the message's fixed words, case as printed: the line holds them
    daemon_class: FabricDaemonClass = records.field(name="class")
    printed_by: Annotated[str, Meta(min_length=8)]  # the repository and source file that prints it, and a thread
    # OpenSM's number of the message (`ERR 5426`), four hex digits as printed; ibacm's messages have none
    code: Annotated[str, Meta(pattern=r"^[0-9A-F]{4}$")] | None = None

    def __post_init__(self) -> None:
        if (self.code is None) != (self.daemon != "opensm"):
            raise ValueError("an opensm row has its `code`, another daemon's row none")


@lru_cache(maxsize=1)
@_kept("transport.yaml")
def fabric_daemon_messages() -> tuple[FabricDaemonMessage, ...]:
    """The fabric's management daemons' records in the table's order (catalog/transport.yaml): an OpenSM number
    appears once, a daemon's words once."""
    return _unique("transport.yaml", "fabric_daemon_messages", FabricDaemonMessage, ("daemon", "code", "words"))


CxiPrinter = Literal["provider", "consumer", "prolog"]


class CxiServiceFailure(_Row, frozen=True):
    """HPE Slingshot's CXI stack saying that the job found no CXI service (the VNI and resources the NIC lets a
    process use) on its node (catalog/transport.yaml `cxi_service_failures`)."""

    printer: CxiPrinter  # who prints it: the CXI provider, a program over libfabric, the scheduler's own helper
    text: Annotated[str, Meta(min_length=8)]  # its fixed words, case as printed
    source: Annotated[str, Meta(min_length=8)]  # the repository, file and function that print it
    # the words of the printer's tag before the text on the line (`flux-slingshot: `), where it has one
    after: Annotated[str, Meta(min_length=4)] | None = None
    # the errnos the row takes (the number after the text, `-38`, or the words, `Function not implemented`); none: any
    errnos: tuple[Annotated[str, Meta(pattern=r"^E[A-Z0-9]+$")], ...] = ()
    program: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9\-]+$")] | None = None  # the printer's name, where known

    def __post_init__(self) -> None:
        if self.printer != "prolog" and not self.errnos:
            raise ValueError("a provider's or a consumer's row names the errnos it takes")


@lru_cache(maxsize=1)
@_kept("transport.yaml")
def cxi_service_failures() -> tuple[CxiServiceFailure, ...]:
    """catalog/transport.yaml `cxi_service_failures` in order; a text appears once."""
    return _unique("transport.yaml", "cxi_service_failures", CxiServiceFailure, "text")


class NcclFork(_Row, frozen=True):
    """A collective library that prints NCCL's debug lines with its own word where NCCL's stands
    (catalog/transport.yaml `nccl_forks`)."""

    tag: Annotated[str, Meta(pattern=r"^[A-Z][A-Z0-9]{2,11}$")]  # the word before WARN / INFO: `CCOM`
    library: Annotated[str, Meta(min_length=3)]
    printed_by: Annotated[str, Meta(min_length=8)]
    seen: str | None = None  # a posted line in that format


@lru_cache(maxsize=1)
@_kept("transport.yaml")
def nccl_forks() -> tuple[NcclFork, ...]:
    """catalog/transport.yaml `nccl_forks`: NCCL's own printer first, then the libraries that print its layout under
    another word; a tag appears once, and none inside another (a reader would take the shorter for the longer)."""
    rows = [(where, item) for where, item in _rows("transport.yaml", "nccl_forks", NcclFork)]
    if not rows or rows[0][1].tag != "NCCL":
        raise CatalogTableError("catalog/transport.yaml: nccl_forks: NCCL's own row comes first")
    for i, (where, item) in enumerate(rows):
        if any(item.tag in other.tag or other.tag in item.tag for _, other in rows[:i]):
            raise CatalogTableError(f"{where}: {item.tag!r} meets another row's tag")
    return tuple(item for _, item in rows)


class NcclNodeWarn(_Row, frozen=True):
    """NCCL's words for a node or a job's settings that cannot give it what it needs (`setup`), for the node's
    platform services under NCCL not working (`platform`), for a consistency check of NCCL's own that failed
    (`internal`), or for a fallback it takes and goes on from (`benign`), with where NCCL prints them."""

    name: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]+$")]
    reading: Literal["setup", "platform", "internal", "benign"]
    # NVIDIA/nccl's file and function; a net plugin's words (NCCL prints them as its own WARN) name the plugin's
    # repository first: `aws/aws-ofi-nccl src/nccl_ofi_net.cpp nccl_net_ofi_create_plugin` (a header's inline code
    # under include/: `aws/aws-ofi-nccl include/nccl_ofi_param_impl.h`)
    source: Annotated[str, Meta(pattern=r"^(?:[\w.\-]+/[\w.\-]+ )?(?:src|include)/\S+\.(?:cc|cu|h|c|cpp) \S")]
    texts: tuple[Annotated[str, Meta(min_length=8)], ...] = ()
    header: bool = False  # read only in a line with NCCL's WARN header
    # some NCCL releases print the words at INFO and fail later in other words: an INFO line of NCCL's with them
    # makes the stream's later NCCL errors (a CUDA call's failure, PyTorch's report of it) the row's
    announced: bool = False
    # NCCL's source files every WARN of which is the row's, whatever its words (the WARN header names the file:
    # `misc/argcheck.cc:39 NCCL WARN Recv : invalid root 0 ...`): read only in a WARN line whose header names one
    files: tuple[Annotated[str, Meta(pattern=r"^[\w/]+\.(?:cc|cu|h)$")], ...] = ()

    def __post_init__(self) -> None:
        if not self.texts and not self.files:
            raise ValueError("an NCCL WARN row needs its words (`texts`) or its source files (`files`)")
        if self.files and (self.announced or self.reading == "benign"):
            raise ValueError("a row read by its source file is a WARN's, never announced at INFO nor benign")
        if self.reading == "internal" and not self.header:
            # NCCL's own check in words plain enough for another program's (`ring 0 does not loop back to start`):
            # read only where NCCL's WARN says them
            raise ValueError("an `internal` row is read only under NCCL's WARN header (`header: true`)")


@lru_cache(maxsize=1)
@_kept("transport.yaml")
def nccl_node_warns() -> tuple[NcclNodeWarn, ...]:
    """catalog/transport.yaml `nccl_node_warns`: a text appears in one row only, and meets no local or peer
    status's words (those are read first, and a text inside one would never be reached or would shadow it)."""
    name = "transport.yaml"
    table = transport_table()
    others = [w for r in table.local if r.stack == "nccl" for w in r.texts] + [w for r in table.peers for w in r.texts]
    rows: list[NcclNodeWarn] = []
    seen: set[str] = set()
    for where, item in _rows(name, "nccl_node_warns", NcclNodeWarn):
        for t in item.texts:
            if t in seen:
                raise CatalogTableError(f"{where}: {t!r} appears twice")
            if any(t in w or w in t for w in others):
                raise CatalogTableError(f"{where}: {t!r} meets a local or peer status's words")
            seen.add(t)
        for f in item.files:
            if f in seen:
                raise CatalogTableError(f"{where}: {f!r} appears twice")
            seen.add(f)
        rows.append(item)
    return tuple(rows)


class NcclInfoLine(_Row, frozen=True):
    """NCCL's INFO lines with a failure's words that are no failure of their own: a failure's aftermath or a
    fallback NCCL goes on from (catalog/transport.yaml `nccl_info_lines`)."""

    name: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]+$")]
    reading: Literal["aftermath", "fallback"]
    source: Annotated[str, Meta(pattern=r"^(?:[\w.\-]+/[\w.\-]+ )?(?:src|include)/\S+\.(?:cc|cu|h|c|cpp)\b")]
    starts: tuple[Annotated[str, Meta(min_length=4)], ...] = ()  # the message's first words
    texts: tuple[Annotated[str, Meta(min_length=8)], ...] = ()  # words anywhere in the message

    def __post_init__(self) -> None:
        if not self.texts and not self.starts:
            raise ValueError("an NCCL INFO row needs its words (`starts` or `texts`)")


@lru_cache(maxsize=1)
@_kept("transport.yaml")
def nccl_info_lines() -> tuple[NcclInfoLine, ...]:
    """catalog/transport.yaml `nccl_info_lines`: a word appears in one row only, and in no row of `nccl_node_warns`
    (whose `benign` rows the INFO reader reads as well: one definition of each fallback) nor any local or peer
    status's words (those name a failure)."""
    name = "transport.yaml"
    table = transport_table()
    others = ([w for r in table.local if r.stack == "nccl" for w in r.texts] + [w for r in table.peers for w in r.texts]
              + [w for r in nccl_node_warns() for w in r.texts])
    rows: list[NcclInfoLine] = []
    seen: set[str] = set()
    for where, item in _rows(name, "nccl_info_lines", NcclInfoLine):
        for t in (*item.starts, *item.texts):
            if t in seen:
                raise CatalogTableError(f"{where}: {t!r} appears twice")
            if any(t in w or w in t for w in others):
                raise CatalogTableError(f"{where}: {t!r} meets a WARN row's or a local or peer status's words")
            seen.add(t)
        rows.append(item)
    return tuple(rows)


class UcxStatus(_Row, frozen=True):
    """One of UCX's status codes (ucs_status_t) by the words ucs_status_string() gives it, and what a start-up call
    of UCX's that failed with it says of the node (`side`)."""

    name: Annotated[str, Meta(pattern=r"^UCS_ERR_[A-Z_]+$")]
    code: Annotated[int, Meta(le=-1, ge=-100)]
    text: Annotated[str, Meta(min_length=5)]
    side: Literal["setup", "platform", "none"]
    errno: Annotated[str, Meta(pattern=r"^E[A-Z0-9]+$")] | None = None  # the errno it stands for, where one does


@lru_cache(maxsize=1)
@_kept("transport.yaml")
def ucx_statuses() -> tuple[UcxStatus, ...]:
    """catalog/transport.yaml `ucx_statuses`: a code and a text appear once each; a `setup` or `platform` row names
    its errno (the event carries it, and node-rdma-stack reads the platform's by it)."""
    name = "transport.yaml"
    rows: list[UcxStatus] = []
    for where, item in _rows(name, "ucx_statuses", UcxStatus):
        if any(r.code == item.code or r.text == item.text for r in rows):
            raise CatalogTableError(f"{where}: {item.name}'s code or text appears twice")
        if item.side != "none" and item.errno is None:
            raise CatalogTableError(f"{where}: a {item.side} status names its errno")
        rows.append(item)
    return tuple(rows)


class HostLocalAddress(_Row, frozen=True):
    """A class of address no other host can reach (catalog/transport.yaml `host_local_addresses`): a CIDR, a host
    name, or the interfaces (a pattern of their names) whose addresses are the host's alone; `corroborate`, a CIDR read
    as such only where the job's own lines name the address on such an interface."""

    what: Annotated[str, Meta(min_length=4)]
    net: str | None = None
    name: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9.\-]*$")] | None = None
    bridge: Annotated[str, Meta(min_length=2)] | None = None
    corroborate: bool = False

    def __post_init__(self) -> None:
        import ipaddress

        if sum(x is not None for x in (self.net, self.name, self.bridge)) != 1:
            raise ValueError("a row is one of `net`, `name` or `bridge`")
        if self.net is not None:
            ipaddress.ip_network(self.net)  # ValueError: not a network (host bits set, no such address)
        if self.bridge is not None and not rows_checked():
            re.compile(self.bridge)
        if self.corroborate and self.net is None:
            raise ValueError("`corroborate` narrows a `net` row only")


@lru_cache(maxsize=1)
@_kept("transport.yaml")
def host_local_addresses() -> tuple[HostLocalAddress, ...]:
    """catalog/transport.yaml `host_local_addresses` in order (the first that holds names an address)."""
    return tuple(item for _, item in _rows("transport.yaml", "host_local_addresses", HostLocalAddress))


@lru_cache(maxsize=1 << 10)
def bridge_kind(iface: str) -> str | None:
    """The kind of a `bridge` row of `host_local_addresses` whose pattern is the interface's whole name (`docker0`,
    `virbr0`), else None. (Remembered by name: the engine asks it for each address a 16k-rank job's ranks name, of a
    few interfaces, and the rows' patterns took 6 us an answer.)"""
    for row in host_local_addresses():
        if row.bridge is not None and re.fullmatch(row.bridge, iface):
            return row.what
    return None


class PortPhysState(_Row, frozen=True):
    """An RDMA port's physical state (PortPhysicalState), by the InfiniBand spec's name and the other spellings the
    port-state tools give it, and what it says of the port's link."""

    code: Annotated[int, Meta(ge=0, le=15)]
    name: Annotated[str, Meta(pattern=r"^[A-Z][A-Za-z]+$")]
    means: Literal["down", "up", "none"]
    also: tuple[Annotated[str, Meta(pattern=r"^[A-Za-z][A-Za-z_ ]+$")], ...] = ()


def port_state_key(word: str) -> str:
    """A physical state's spelling as the table compares it: no case, `_` or spaces (`LINK_UP`, `LinkUp`)."""
    return word.replace("_", "").replace(" ", "").lower()


@lru_cache(maxsize=1)
@_kept("transport.yaml")
def port_phys_states() -> Mapping[str, PortPhysState]:
    """catalog/transport.yaml `port_phys_states` by each spelling's key (port_state_key): a code and a key appear
    once each."""
    out: dict[str, PortPhysState] = {}
    codes: set[int] = set()
    for where, item in _rows("transport.yaml", "port_phys_states", PortPhysState):
        if item.code in codes:
            raise CatalogTableError(f"{where}: code {item.code} appears twice")
        codes.add(item.code)
        for word in (item.name, *item.also):
            if port_state_key(word) in out:
                raise CatalogTableError(f"{where}: {word!r} appears twice")
            out[port_state_key(word)] = item
    return MappingProxyType(out)


class Mlx5CommandStatus(_Row, frozen=True):
    """A status the ConnectX firmware answers a failed command with (catalog/transport.yaml `mlx5_command_statuses`):
    its code, the words the kernel gives it, and what it says (`refused`: a question the firmware does not offer an
    answer to, understood; `error`: the line stays)."""

    code: Annotated[int, Meta(ge=1, le=0xff)]
    words: Annotated[str, Meta(min_length=3)]
    reading: Literal["refused", "error"]


@lru_cache(maxsize=1)
def mlx5_command_statuses() -> Mapping[int, Mlx5CommandStatus]:
    """catalog/transport.yaml `mlx5_command_statuses` by code: a code and its words appear once each."""
    out: dict[int, Mlx5CommandStatus] = {}
    words: set[str] = set()
    for where, item in _rows("transport.yaml", "mlx5_command_statuses", Mlx5CommandStatus):
        if item.code in out or item.words in words:
            raise CatalogTableError(f"{where}: code {item.code:#x} or {item.words!r} appears twice")
        out[item.code] = item
        words.add(item.words)
    return MappingProxyType(out)


@lru_cache(maxsize=1)
def ib_wc_status_table() -> Mapping[int, CompletionStatus]:
    """ibverbs work-completion statuses (enum ibv_wc_status) by code: catalog/transport.yaml's ibv rows."""
    return MappingProxyType({r.code: r for r in transport_table().completions if r.stack == "ibv"})


class CperSeverity(_Row, frozen=True):
    text: Annotated[str, Meta(pattern=r"^[a-z]+$")]  # cper_severity_str()
    severity: HostSeverity

@lru_cache(maxsize=1)
@_kept("platform.yaml")
def cper_severities() -> Mapping[str, HostSeverity]:
    """The CPER severity a GHES record names (`event severity: recoverable`) -> host.mce's severity."""
    return MappingProxyType({item.text: item.severity for _, item in _rows("platform.yaml", "cper_severities",
                                                                           CperSeverity)})


class MemoryErrorWords(_Row, frozen=True):
    """A printer's words for a host memory error and the host.mce severity they stand for (catalog/platform.yaml
    `memory_error_words`)."""

    text: Annotated[str, Meta(min_length=5)]  # the anchor: a prefilter literal, case as printed
    severity: HostSeverity
    source: MemoryErrorSource  # who printed it: host.mce's `source`
    printed_by: Annotated[str, Meta(min_length=8)]  # the program's source file or the document that lists the words
    after: str | None = None  # a word that must stand before `text` on the line (the printer's tag)
    also: tuple[Text, ...] = ()  # words the line must hold as well
    # the words reach a process's own output too (a signal's siginfo, a memory tester's report): read in
    # application lines, where the kernel's and the firmware's words are not
    application: bool = False

@lru_cache(maxsize=1)
@_kept("platform.yaml")
def memory_error_words() -> tuple[MemoryErrorWords, ...]:
    """Host memory-error words -> host.mce's severity and source, longest first (catalog/platform.yaml)."""
    rows = [item for _, item in _rows("platform.yaml", "memory_error_words", MemoryErrorWords)]
    return tuple(sorted(rows, key=lambda r: (-len(r.text), r.text, r.after or "")))


class KernelFault(_Row, frozen=True):
    """The kernel's own words that it failed on the node, and kernel.panic's `panic` for them (catalog/platform.yaml
    `kernel_faults`)."""

    panic: Literal["panic", "soft_lockup", "hard_lockup", "rcu_stall", "bug", "oops"]
    text: Annotated[str, Meta(min_length=3)]  # a prefilter literal, case as printed
    pattern: Annotated[str, Meta(min_length=8)]  # a regex searched in a line that holds `text`
    printed_by: Annotated[str, Meta(min_length=8)]  # the kernel source that prints it


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def kernel_faults() -> tuple[KernelFault, ...]:
    """The kernel's failure words in the table's order: the first row that fits decides (catalog/platform.yaml)."""
    return tuple(item for _, item in _rows("platform.yaml", "kernel_faults", KernelFault))


class AdapterFault(_Row, kw_only=True, frozen=True):
    """A network adapter driver's words for the adapter's own failure (catalog/platform.yaml `adapter_faults`): its
    firmware stopped answering or asserted, its hardware reported a fatal error; `none`: words that name no failure."""

    text: Annotated[str, Meta(min_length=6)]  # as printed, case and all; `{n}`: a decimal number
    drivers: Annotated[tuple[Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]+$")], ...], Meta(min_length=1)]
    syndrome: Annotated[int, Meta(ge=0, le=0xFF)] | None = None  # (mlx5) hsynd_str()'s words for this syndrome
    means: Literal["fault", "none"]
    printed_by: Annotated[str, Meta(min_length=8)]


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def adapter_faults() -> tuple[AdapterFault, ...]:
    """A network adapter's own failures in its driver's words, in the table's order (catalog/platform.yaml); a text
    appears once, and only a message row (no `syndrome`) holds `{n}`."""
    rows: list[AdapterFault] = []
    seen: set[str] = set()
    for where, item in _rows("platform.yaml", "adapter_faults", AdapterFault):
        if item.text in seen:
            raise CatalogTableError(f"{where}: {item.text!r} appears twice")
        if item.syndrome is not None and "{" in item.text:
            raise CatalogTableError(f"{where}: a syndrome's words hold no `{{n}}`")
        seen.add(item.text)
        rows.append(item)
    return tuple(rows)


class PcieErrorWord(_Row, kw_only=True, frozen=True):
    """The kernel's words for a PCIe error's severity (catalog/platform.yaml `pcie_error_words`): AER's `severity=`
    word, DPC's trigger reason; `none`: a word that names no error of the link (a containment a program asked for)."""

    text: Annotated[str, Meta(min_length=5)]  # as printed, case and all
    printer: Literal["aer", "dpc"]
    severity: IpmiSeverity | Literal["none"]
    printed_by: Annotated[str, Meta(min_length=8)]


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def pcie_error_words() -> tuple[PcieErrorWord, ...]:
    """The kernel's AER severity words and DPC trigger reasons, in the table's order (catalog/platform.yaml)."""
    return tuple(item for _, item in _rows("platform.yaml", "pcie_error_words", PcieErrorWord))


class IpmiBusEvent(_Row, kw_only=True, frozen=True):
    text: Annotated[str, Meta(min_length=3)]  # ipmitool's words
    freeipmi: Annotated[str, Meta(min_length=3)] | None = None  # FreeIPMI's, where they differ
    severity: IpmiSeverity
    printed_by: Annotated[str, Meta(min_length=8)]

    @property
    def spellings(self) -> tuple[str, ...]:
        """The row's words as each printer spells them (the prefilter's literals)."""
        return (self.text,) if self.freeipmi is None else (self.text, self.freeipmi)


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def ipmi_bus_events() -> tuple[IpmiBusEvent, ...]:
    """BMC Critical Interrupt event texts -> AER severity (catalog/platform.yaml)."""
    return tuple(item for _, item in _rows("platform.yaml", "ipmi_bus_events", IpmiBusEvent))


@lru_cache(maxsize=1)
def _ipmi_bus_folded() -> tuple[tuple[str, IpmiBusEvent], ...]:
    return tuple((s.casefold(), row) for row in ipmi_bus_events() for s in row.spellings)


def ipmi_bus_event(words: str) -> IpmiBusEvent | None:
    """The `ipmi_bus_events` row whose words `words` holds, compared without case: the one comparison both
    printers' spellings reach (ipmitool's `Bus Correctable error`, FreeIPMI's `Bus Correctable Error`)."""
    folded = words.casefold()
    return next((row for text, row in _ipmi_bus_folded() if text in folded), None)


class IpmiPowerEvent(_Row, kw_only=True, frozen=True):
    """A BMC event of a power supply or the power unit as ipmitool prints it (catalog/platform.yaml
    `ipmi_power_events`): the sensor type's words, the event's words, what it says of the node's power."""

    sensor: Literal["Power Supply", "Power Unit"]
    text: Annotated[str, Meta(min_length=6)]  # the event's words (a prefilter literal), case as printed
    state: IpmiPowerState
    printed_by: Annotated[str, Meta(min_length=8)]


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def ipmi_power_events() -> tuple[IpmiPowerEvent, ...]:
    """BMC power-supply and power-unit events, the longest words first (catalog/platform.yaml): no (sensor, text)
    twice."""
    rows = _unique("platform.yaml", "ipmi_power_events", IpmiPowerEvent, ("sensor", "text"))
    return tuple(sorted(rows, key=lambda r: -len(r.text)))


class StorageClient(_Row, kw_only=True, frozen=True):
    client: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9-]*$")]
    fs: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]*$")]  # storage.error's `fs`
    anchors: Annotated[tuple[Annotated[str, Meta(min_length=4)], ...], Meta(min_length=1)]
    processes: tuple[Annotated[str, Meta(min_length=2, max_length=15)], ...] = ()  # the daemon's comm
    containers: tuple[Annotated[str, Meta(min_length=3)], ...] = ()  # a Kubernetes sidecar that runs the daemon
    logs: tuple[Annotated[str, Meta(min_length=4)], ...] = ()  # words of the path of the client's own log file
    # the file system's type as mount(8) takes it (`-t lustre`; its helper is `mount.<type>`)
    types: tuple[Annotated[str, Meta(min_length=3, pattern=r"^[a-z0-9][a-z0-9_.+-]*$")], ...] = ()
    # the names of its CSI drivers (a StorageClass's provisioner, the kubelet's `driver name X`): dotted, lower-case
    drivers: tuple[Annotated[str, Meta(min_length=6, pattern=r"^[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)+$")], ...] = ()
    printed_by: Text

class StorageWord(_Row, kw_only=True, frozen=True):
    client: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9-]*$")]
    text: Annotated[str, Meta(min_length=3)]
    word_class: StorageWordClass = records.field(name="class")
    tail: bool = False  # the text must end the line
    printed_by: Text


class MountRefusal(_Row, kw_only=True, frozen=True):
    """Words of a mount's output that say whose the refusal is (catalog/platform.yaml `mount_refusals`)."""

    text: Annotated[str, Meta(min_length=8)]
    word_class: Literal["job", "node"] = records.field(name="class")
    printed_by: Text


class StorageTables(NamedTuple):
    clients: Mapping[str, StorageClient]  # by client
    words: tuple[StorageWord, ...]  # in the file's order
    daemons: Mapping[str, str]  # a FUSE daemon's comm -> its client
    sidecars: Mapping[str, str]  # a Kubernetes container that runs a FUSE daemon -> its client
    types: Mapping[str, str]  # a file system type as mount(8) takes it -> its client
    drivers: tuple[tuple[str, str], ...]  # a CSI driver's name -> its client, longest name first
    refusals: tuple[MountRefusal, ...]  # in the file's order


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def storage_tables() -> StorageTables:
    """The storage clients and FUSE daemons in their own words (catalog/platform.yaml `storage_clients`,
    `storage_words`): every word names a client of the table, no client or word is listed twice, no comm twice."""
    clients: dict[str, StorageClient] = {}
    for where, client in _rows("platform.yaml", "storage_clients", StorageClient):
        if client.client in clients:
            raise CatalogTableError(f"{where}: client {client.client!r} listed twice")
        clients[client.client] = client
    words: list[StorageWord] = []
    seen: set[tuple[str, str]] = set()
    for where, word in _rows("platform.yaml", "storage_words", StorageWord):
        if word.client not in clients:
            raise CatalogTableError(f"{where}: client {word.client!r} is not in storage_clients")
        if (word.client, word.text) in seen:
            raise CatalogTableError(f"{where}: {word.text!r} listed twice for {word.client}")
        seen.add((word.client, word.text))
        words.append(word)
    daemons: dict[str, str] = {}
    sidecars: dict[str, str] = {}
    for client in clients.values():
        for comm in client.processes:
            if comm in daemons:
                raise CatalogTableError(f"catalog/platform.yaml: storage_clients: process {comm!r} listed twice")
            daemons[comm] = client.client
        for name in client.containers:
            if name in sidecars:
                raise CatalogTableError(f"catalog/platform.yaml: storage_clients: container {name!r} listed twice")
            sidecars[name] = client.client
    types: dict[str, str] = {}
    drivers: dict[str, str] = {}
    for client in clients.values():
        for kind, names, into in (("type", client.types, types), ("driver", client.drivers, drivers)):
            for name in names:
                if name in into:
                    raise CatalogTableError(f"catalog/platform.yaml: storage_clients: {kind} {name!r} listed twice")
                into[name] = client.client
    refusals = tuple(row for _, row in _rows("platform.yaml", "mount_refusals", MountRefusal))
    return StorageTables(MappingProxyType(clients), tuple(words), MappingProxyType(daemons),
                         MappingProxyType(sidecars), MappingProxyType(types),
                         tuple(sorted(drivers.items(), key=lambda kv: (-len(kv[0]), kv[0]))), refusals)


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def storage_waits() -> tuple[str, ...]:
    """A file system client's words that it waits for its server (catalog/platform.yaml `storage_waits`)."""
    return _strings("platform.yaml", "storage_waits")



@lru_cache(maxsize=1)
@_kept("platform.yaml")
def mount_source_words() -> tuple[str, ...]:
    """A container runtime's words that it could not make a bind mount's source (catalog/platform.yaml
    `mount_source_words`)."""
    return _strings("platform.yaml", "mount_source_words")


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def dead_mount_errors() -> tuple[str, ...]:
    """The errors (lower-case) that say a mount source is a mount whose daemon is gone (catalog/platform.yaml
    `dead_mount_errors`)."""
    rows = _strings("platform.yaml", "dead_mount_errors")
    if any(r != r.lower() for r in rows):
        raise CatalogTableError("catalog/platform.yaml: dead_mount_errors: write each error lower-case")
    return rows
class StorageWaitFrame(_Row, kw_only=True, frozen=True):
    """A kernel stack frame of a task that waits for a file system's server (catalog/platform.yaml
    `storage_wait_frames`)."""

    frame: Annotated[str, Meta(pattern=r"^[A-Za-z_][A-Za-z0-9_.]{3,}$")]
    fs: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]*$")]  # storage.error's `fs`
    printed_by: Text


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def storage_wait_frames() -> Mapping[str, StorageWaitFrame]:
    """The kernel frames of a task waiting on a file system's server, by function name (catalog/platform.yaml
    `storage_wait_frames`): no frame twice."""
    rows = _unique("platform.yaml", "storage_wait_frames", StorageWaitFrame, "frame")
    return MappingProxyType({r.frame: r for r in rows})


# --------------------------------------------------------------------------
# Exceptions, status words, errno and object-store codes (catalog/exceptions.yaml)
# --------------------------------------------------------------------------


class ExceptionClassInfo(_Row, frozen=True):
    match: Annotated[str, Meta(pattern=r"^(?:\*|\*?[A-Za-z_][\w.]*(?:\.\*)?)$")]  # `pkg.mod.Name`, `pkg.*`, `*Suffix`
    family: ExceptionFamily
    message: Annotated[str, Meta(min_length=3)] | None = None  # a regex the message must hold a match of
    # the status word the class stands for (TensorFlow's errors_impl classes)
    status: Annotated[str, Meta(pattern=r"^[A-Z][A-Z_]+$")] | None = None
    logged: tuple[str, ...] = ()  # the message decides in a line of its own too; words such a line holds
    # a server's or launcher's report that a process it started exited (a `peer` row): it may follow the process's
    # last words in its stream, as the launcher's and the scheduler's reports of an exit do (engine/normalise.py)
    exit_report: bool = False
    # a `setup` row about a limit the job's container, scheduler or login gave its processes (the events' `limit`)
    limit: ResourceLimit | None = None
    # an `fs_service` row: the file system whose client the class is (the storage event's `fs`)
    fs: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]+$")] | None = None

    def __post_init__(self) -> None:
        if self.limit is not None and self.family != "setup":
            raise ValueError("`limit` names the limit a set-up error hit: a `setup` row")
        if (self.fs is None) != (self.family != "fs_service"):
            raise ValueError("an `fs_service` row, and only one, names its file system (`fs`)")
        if self.message is not None:
            try:
                check_regex(self.message)
            except ValueError as exc:
                raise ValueError(f"message: {exc}") from None
        # a line of its own has no class: only a row about the message alone can read one
        if self.logged and (self.match != "*" or self.message is None):
            raise ValueError("`logged` needs `match: \"*\"` and a `message`")
        if any(len(w) < 6 for w in self.logged):
            raise ValueError("a `logged` word is a prefilter word: 6 characters at least")
        if self.exit_report and self.family != "peer":
            raise ValueError("`exit_report` is a report that another process exited: a `peer` row")
        # the dynamic loader's words: the library it names decides (extract/excclass.py `loader_library`)
        if self.family == "loader" and (self.match != "*" or "(?P<lib>" not in (self.message or "")):
            raise ValueError("a `loader` row is about the message (`match: \"*\"`) and names its library (`(?P<lib>`)")

class StatusWordInfo(_Row, frozen=True):
    word: Annotated[str, Meta(pattern=r"^[A-Z][A-Z_]+$")]  # RESOURCE_EXHAUSTED, UNAVAILABLE, ...
    family: ExceptionFamily
    texts: tuple[str, ...] = ()  # other spellings (TensorFlow 1.x: `Unavailable`, `Deadline Exceeded`)
    on_write: Literal["storage"] | None = None  # what it is about a file being written (its message a path)
    # the exception classes that stand for the word (TensorFlow's errors_impl classes: `UnavailableError`)
    classes: tuple[Annotated[str, Meta(pattern=r"^[A-Z]\w+$")], ...] = ()
    # the family the word makes as the status a gRPC call ended with, in gRPC's own spelling (`StatusCode.INTERNAL`
    # in Python's RPC error), where that differs from `family`: the status the server or the transport gave the call
    call: ExceptionFamily | None = None

class LevelHeaderInfo(_Row, kw_only=True, frozen=True):
    """A logger's record header that names the record's level by one letter at a fixed place (catalog/exceptions.yaml
    `level_headers`)."""

    logger: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9-]*$")]
    # a regex at the line's head; group `level` is the letter; a header without one is a form only the program's
    # reports of an error print (bash's error prolog)
    header: Annotated[str, Meta(min_length=8)]
    error: Annotated[str, Meta(pattern=r"^[A-Z]{0,6}$")] = ""  # the letters that say error or above
    literals: tuple[Annotated[str, Meta(min_length=3)], ...]
    example: Annotated[str, Meta(min_length=20)]
    # texts of records at an error letter that their program says are no failure (a fix that demoted them)
    benign: tuple[Annotated[str, Meta(min_length=12)], ...] = ()
    printed_by: Annotated[str, Meta(min_length=8)]

    def __post_init__(self) -> None:
        check_regex(self.header)
        if not self.header.startswith("^"):
            raise ValueError("`header` is read at the line's head: it starts with `^`")
        if not rows_checked():
            rx = re.compile(self.header)
            if ("level" in rx.groupindex) != bool(self.error):
                raise ValueError("a header with a group `level` names its error letters (`error`), one without names "
                                 "none")
            m = rx.match(self.example)
            if m is None or (self.error and m.group("level") not in self.error):
                raise ValueError("`example` is no record of the header at an error letter")
        if not any(w in self.example for w in self.literals):
            raise ValueError("`example` holds none of `literals`: the prefilter would never let it through")
        if not self.literals:
            raise ValueError("`literals` is empty")


class CheckpointMessageInfo(_Row, kw_only=True, frozen=True):
    """What a checkpoint/restore tool's error says in its own words (catalog/exceptions.yaml `checkpoint_messages`)."""

    printer: Literal["criu", "cuda-checkpoint"]
    text: Annotated[str, Meta(min_length=11)]  # words the message holds (CRIU's `Can't link `, 11)
    reading: Literal["setup", "driver", "node"]
    after: tuple[Annotated[str, Meta(min_length=6)], ...] = ()  # words an earlier error of the stream holds
    bare: bool = False  # read without CRIU's header too
    whole: bool = False  # the words are the whole line
    quoted: bool = False  # the words are the whole quoted error of cuda-checkpoint's `Error ... in process ID N: "..."`
    source: Annotated[str, Meta(min_length=8)]

    def __post_init__(self) -> None:
        if self.text != self.text.strip() and not self.text.endswith(" "):
            raise ValueError("`text` starts with no space")
        if (self.whole or self.quoted) and self.after:
            raise ValueError("a `whole` or `quoted` line is a tool's one answer: no `after`")
        if self.quoted and self.printer != "cuda-checkpoint":
            raise ValueError("`quoted` is cuda-checkpoint's answer")


class WindowsErrorInfo(_Row, frozen=True):
    """A Windows system error code, its text as FormatMessage gives it (no final period) and the errno it stands
    for (catalog/exceptions.yaml `windows_errors`)."""

    code: Annotated[int, Meta(ge=1, le=65535)]
    name: Annotated[str, Meta(pattern=r"^(?:ERROR|WSA)[A-Z0-9_]+$")]
    text: Annotated[str, Meta(min_length=12, pattern=r"^[A-Z].*[^.\s]$")]
    errno: Annotated[str, Meta(pattern=r"^E[A-Z0-9]+$")]

    def __post_init__(self) -> None:
        import errno

        if not isinstance(getattr(errno, self.errno, None), int):
            raise ValueError(f"{self.errno}: no errno of that name")

class FortranRuntimeErrorInfo(_Row, frozen=True):
    """An Intel Fortran runtime error number, its text as `forrtl:` prints it, and what it stands for: an errno, the
    signal that ended the program, or a read or write that failed with no errno (catalog/exceptions.yaml
    `fortran_runtime_errors`)."""

    code: Annotated[int, Meta(ge=1, le=9999)]
    text: Annotated[str, Meta(min_length=8)]
    errno: Annotated[str, Meta(pattern=r"^E[A-Z0-9]+$")] | None = None
    signal: Annotated[str, Meta(pattern=r"^SIG[A-Z0-9]+$")] | None = None
    io: Literal["read", "write"] | None = None

    def __post_init__(self) -> None:
        import errno

        if sum(x is not None for x in (self.errno, self.signal, self.io)) > 1:
            raise ValueError(f"{self.code}: at most one of errno, signal, io")
        if self.errno is not None and not isinstance(getattr(errno, self.errno, None), int):
            raise ValueError(f"{self.errno}: no errno of that name")

class ErrnoInfo(_Row, frozen=True):
    name: Annotated[str, Meta(pattern=r"^E[A-Z0-9]+$")]  # ENOSPC, EADDRINUSE, ...
    side: ErrnoSide
    # the kind of file system the errno itself implies (ENOTCONN: a FUSE mount's daemon gone)
    fs: Annotated[str, Meta(pattern=r"^[a-z][a-z_]*$")] | None = None
    network_only: bool = False  # the set-up side only on a bind / listen / socket (EACCES)
    transport_only: bool = False  # the set-up side only in a transport's own report (ENOMEM pinning memory)
    file_only: bool = False  # only a file system says it: the storage's in any line's words, no path needed (ENOSPC)
    # a set-up errno that is a limit of the job's processes hit (EMFILE: `ulimit -n`; ENOMEM in a transport's report:
    # `ulimit -l`), the events' `limit`
    limit: ResourceLimit | None = None
    # the storage side only where the call that failed is one of these (ENODEV on `mmap`: a mount that cannot map its
    # files, a FUSE or union mount without page cache); on any other call the errno names no storage (a device's)
    calls: tuple[Literal["mmap"], ...] = ()
    # the set-up side, whatever `side` says elsewhere, where the call that failed is a network operation (a socket's
    # bind, listen or connect, or a call on a socket endpoint the message names): an errno no peer answers with, of an
    # interface or address the node does not have (ENODEV, zmq_bind(3))
    network_setup: bool = False
    # other words programs print for the errno than this host's C library does (an older glibc's, Go's syscall
    # table's): read as the errno wherever its strerror is (extract/codes.py)
    spellings: tuple[Annotated[str, Meta(min_length=8)], ...] = ()
    # the OSError subclass Python raises for this errno where the class stands for it alone (CPython
    # Objects/exceptions.c, the errno -> class map): read as the errno where the message carries none
    # (`ConnectionResetError: Connection lost`)
    classes: tuple[Annotated[str, Meta(pattern=r"^[A-Z]\w+Error$")], ...] = ()
    # other numbers programs print for the errno: Linux's kernel-internal codes (include/linux/errno.h, 512-530, "should
    # never be seen by user programs") that a file system's client lets through to user space, which the C library and
    # Python's errno module do not name (ENOTSUPP 524 for ENOTSUP, from Cray DVS's flock: HDFGroup/hdf5#3311, `errno =
    # 524, error message = 'Unknown error 524'`)
    numbers: tuple[Annotated[int, Meta(ge=512, le=4095)], ...] = ()
    # the job's set-up where the call that failed is a file lock (flock(2), fcntl(2)'s F_SETLK, lockf(3)): the mount
    # does not lock, by design or by its configuration, and the job's library asked it to (HDF5 names its own switch:
    # `file locking disabled on this file system (use HDF5_USE_FILE_LOCKING environment variable to override), errno =
    # 38, error message = 'Function not implemented'`); on any other call the errno's `side` stands
    lock_setup: bool = False

    def __post_init__(self) -> None:
        import errno

        num = getattr(errno, self.name, None)  # (Linux's names: another host's C library may lack some)
        for cls in self.classes:
            if isinstance(num, int) and type(OSError(num, "")).__name__ != cls:
                raise ValueError(f"{self.name}: Python raises {type(OSError(num, '')).__name__} for it, not {cls}")
        if self.side == "none" and (self.fs or self.network_only or self.transport_only or self.file_only
                                    or self.limit or self.calls or self.network_setup):
            raise ValueError(f"{self.name}: an errno that decides nothing narrows nothing")
        if self.network_setup and self.side == "setup":
            raise ValueError("`network_setup` gives the set-up side on a network operation to an errno of another side")
        if self.calls and (self.side != "storage" or self.file_only):
            raise ValueError("`calls` narrows a storage errno that is not file_only to the calls a file system fails")
        if self.limit is not None and self.side != "setup":
            raise ValueError("`limit` names the limit a set-up errno is: a setup row")
        if (self.network_only or self.transport_only) and self.side != "setup":
            raise ValueError("network_only / transport_only narrow the setup side only")
        if self.file_only and self.side != "storage":
            raise ValueError("file_only marks a storage errno")
        if self.network_only and self.transport_only:
            raise ValueError("an errno is either network_only or transport_only")
        if self.lock_setup and self.side == "setup":
            raise ValueError("`lock_setup` gives the set-up side on a file lock to an errno of another side")
        if self.numbers and isinstance(num, int) and num in self.numbers:
            raise ValueError(f"{self.name}: its own number is no other number for it")

class PseudoFsInfo(_Row, frozen=True):
    """A pseudo file system by the path it is mounted at (catalog/exceptions.yaml `pseudo_filesystems`)."""

    prefix: Annotated[str, Meta(pattern=r"^/(?:[\w.\-]+/)+$")]  # a whole path's components, ending in `/`
    fs: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9]*$")]
    source: Annotated[str, Meta(min_length=8)]


class ObjectStoreCodeInfo(_Row, frozen=True):
    # SlowDown, NoSuchKey, 429, ...; the AWS Common Runtime's error names as it prints them (AWS_ERROR_S3_SLOW_DOWN)
    code: Annotated[str, Meta(pattern=r"^[A-Za-z0-9_]+$")]
    side: StoreSide
    cause: StoreCause | None = None  # what a store-side code says of the store (throttled, full, ...)
    # a workload-side code that says the job's own credentials or permissions were refused (AccessDenied,
    # InvalidAccessKeyId, AuthorizationFailure): the job's set-up (app.exception, setup), not its request's data
    setup: bool = False
    # the AWS SDK for C++'s CoreErrors number of the code, as pyarrow's S3 file system printed it before it printed
    # the enum's name (`AWS Error [code 15]: ...`, ACCESS_DENIED = 15)
    aws_cpp: Annotated[int, Meta(ge=0, le=127)] | None = None
    # the printing library's own description of the code, as its to-string function returns it (the AWS Common
    # Runtime's aws_error_str: `error 14339 (Response code indicates throttling)`)
    said: Annotated[str, Meta(min_length=12, max_length=160)] | None = None
    # the HTTP status line the store answers the code with, where its reason phrase is the store's own and no
    # standard one (S3's `503 Slow Down`): an HTTP client's error that quotes the status and reason names the code
    # (urllib's `HTTP Error 503: Slow Down`; extract/excclass.py `_PHRASED`)
    status_line: Annotated[str, Meta(pattern=r"^[45]\d\d [A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*){0,4}$")] | None = None
    # the store's own error message for the code (the `<Message>` S3 and the S3-compatible servers answer it with,
    # without its final full stop, which MinIO's copies leave out): a client that raises the message without the
    # code (s3fs's translate_boto_error: `OSError: [Errno 16] Please reduce your request rate.`) names the code by it
    # (extract/excclass.py `message_store_code`)
    message: Annotated[str, Meta(pattern=r"^[A-Z][\w ,'.-]{19,159}[\w]$")] | None = None
    # the store's own message for the code where other services answer with it too (S3's and GCS's InternalError
    # `We encountered an internal error. Please try again.`, SageMaker's InternalServerError's too): it names the code
    # only in an error already read as an object store's (a store client's class, a row that names a store), never
    # alone (extract/excclass.py `message_store_code`)
    shared_message: Annotated[str, Meta(pattern=r"^[A-Z][\w ,'.-]{19,159}[\w]$")] | None = None

    def __post_init__(self) -> None:
        if self.message is not None and self.shared_message is not None:
            raise ValueError("a code's message is its own (`message`) or shared with other services (`shared_message`)")
        if self.cause is not None and self.side != "store":
            raise ValueError("cause names what a store-side code says of the store")
        if self.setup and self.side != "workload":
            raise ValueError("setup marks a workload-side code the job's set-up is refused for")

def _unique(name: str, key: str, row: type[R], field: str | tuple[str, ...]) -> tuple[R, ...]:
    """Rows of catalog/<name> under `key` in order; two rows with one `field` value (or one value of each of
    several fields) are a problem."""
    fields = (field,) if isinstance(field, str) else field
    out: list[R] = []
    seen: set[object] = set()
    for where, item in _rows(name, key, row):
        value = tuple(getattr(item, f) for f in fields)
        if value in seen:
            shown = value[0] if len(fields) == 1 else value
            raise CatalogTableError(f"{where}: duplicate {' and '.join(fields)} {shown!r}")
        seen.add(value)
        out.append(item)
    return tuple(out)


def _owned(name: str, key: str, row: type[R], owner: str, owners: Collection[str], owners_key: str) -> tuple[R, ...]:
    """Rows of catalog/<name> under `key` in order, no `text` twice, each naming in its `owner` field a row of
    another table (`owners`, the names of `owners_key`): a program's or a module's own words."""
    rows = _unique(name, key, row, "text")
    for i, item in enumerate(rows):
        if getattr(item, owner) not in owners:
            raise CatalogTableError(f"catalog/{name}: {key}[{i}]: {owner} {getattr(item, owner)!r} is not in "
                                    f"{owners_key}")
    return rows


@lru_cache(maxsize=1)
@_kept("exceptions.yaml")
def exception_class_table() -> tuple[ExceptionClassInfo, ...]:
    """Exception classes -> family, in the order they are tried (catalog/exceptions.yaml)."""
    return tuple(item for _, item in _rows("exceptions.yaml", "exception_classes", ExceptionClassInfo))


@lru_cache(maxsize=1)
@_kept("exceptions.yaml")
def level_header_table() -> tuple[LevelHeaderInfo, ...]:
    """The loggers' one-letter level headers (catalog/exceptions.yaml `level_headers`), one row a logger."""
    return _unique("exceptions.yaml", "level_headers", LevelHeaderInfo, "logger")


@lru_cache(maxsize=1)
@_kept("exceptions.yaml")
def checkpoint_message_table() -> tuple[CheckpointMessageInfo, ...]:
    """A checkpoint/restore tool's own words -> what they name (catalog/exceptions.yaml `checkpoint_messages`)."""
    return _unique("exceptions.yaml", "checkpoint_messages", CheckpointMessageInfo, "text")


@lru_cache(maxsize=1)
@_kept("exceptions.yaml")
def status_word_table() -> Mapping[str, StatusWordInfo]:
    """gRPC / absl status words -> family (catalog/exceptions.yaml)."""
    return MappingProxyType({r.word: r for r in _unique("exceptions.yaml", "status_words", StatusWordInfo, "word")})


@lru_cache(maxsize=1)
@_kept("exceptions.yaml")
def status_anchors() -> tuple[str, ...]:
    """Words that place a logged status in the coordination service or a collective (catalog/exceptions.yaml)."""
    return _strings("exceptions.yaml", "status_anchors")


@lru_cache(maxsize=1)
@_kept("exceptions.yaml")
def generic_classes() -> frozenset[str]:
    """Exception classes that name no kind of failure, by their own name (catalog/exceptions.yaml `generic_classes`)."""
    return frozenset(_strings("exceptions.yaml", "generic_classes"))


class PlatformProgram(_Row, kw_only=True, frozen=True):
    """A program of the platform under the workload and the names it goes by (catalog/platform.yaml)."""

    program: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9-]*$")]  # the event's `program`
    part: PlatformPart
    # lower-case words of container, pod and file names: dash-separated runs, no leading or trailing dash (a node's
    # own service, known only by its systemd unit, may have none)
    names: tuple[Annotated[str, Meta(min_length=4, pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")], ...] = ()
    # the node's systemd units it runs as (without `.service`), and their Description= (what systemd's job results
    # print: `Failed to start Slurm node daemon.`)
    units: tuple[Annotated[str, Meta(min_length=3, pattern=r"^[a-z0-9][a-z0-9_.-]*$")], ...] = ()
    descriptions: tuple[Annotated[str, Meta(min_length=8)], ...] = ()
    # the program's own source files as a Python traceback's frames name them (a path's fragment, case as printed:
    # `/slurm/scripts/`, `lifecycle_script.py`): a traceback whose outermost frame is one of them is that program's
    frames: tuple[Annotated[str, Meta(min_length=8)], ...] = ()
    # the scripts it runs as its steps, as a `CalledProcessError`'s command names them (`'./utils/install_docker.sh'`
    # in `Command '['sudo', 'bash', './utils/install_docker.sh']' returned non-zero exit status 100.`)
    steps: tuple[Annotated[str, Meta(min_length=6, pattern=r"^[^'\s]+$")], ...] = ()
    # its executables' file names, as the dynamic loader names the program it could not start (`/usr/sbin/slurmstepd:
    # error while loading shared libraries: ...`): a loader failure of one is the program's failure, not the job's
    executables: tuple[Annotated[str, Meta(min_length=4, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")], ...] = ()
    printed_by: Annotated[str, Meta(min_length=8)]  # the repository and manifest or source that names it

    def __post_init__(self) -> None:
        if not self.names and not self.units:
            raise ValueError("a program needs names or units")
        if self.descriptions and not self.units:
            raise ValueError("descriptions are a unit's")
        if (self.frames or self.steps) and self.part != "provision":
            raise ValueError("frames and steps are a provisioning program's (part provision)")


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def platform_program_table() -> tuple[PlatformProgram, ...]:
    """The platform's programs in the table's order (catalog/platform.yaml `platform_programs`): no program and no
    name listed twice."""
    rows: list[PlatformProgram] = []
    programs: set[str] = set()
    names: set[str] = set()
    for where, row in _rows("platform.yaml", "platform_programs", PlatformProgram):
        if row.program in programs:
            raise CatalogTableError(f"{where}: program {row.program!r} listed twice")
        programs.add(row.program)
        for name in (*row.names, *(f"unit {u}" for u in row.units), *(f"description {d}" for d in row.descriptions),
                     *(f"frame {f}" for f in row.frames), *(f"step {s}" for s in row.steps)):
            if name in names:
                raise CatalogTableError(f"{where}: name {name!r} listed twice")
            names.add(name)
        rows.append(row)
    return tuple(rows)


class KernelModule(_Row, kw_only=True, frozen=True):
    """A kernel module of the node's accelerator, GPUDirect or RDMA stack and the part of the node it belongs to
    (catalog/platform.yaml `kernel_modules`)."""

    module: Annotated[str, Meta(pattern=r"^[a-z0-9_]+$")]  # the kernel's name of it (dashes read as underscores)
    part: ModulePart
    # other names it goes by where a tool names it: its DKMS package (`nvidia-fs`, `mlnx-ofed-kernel`)
    also: tuple[Annotated[str, Meta(pattern=r"^[a-z0-9_.-]+$")], ...] = ()
    printed_by: Annotated[str, Meta(min_length=8)]  # where the module comes from


class KernelModuleReason(_Row, kw_only=True, frozen=True):
    """Words for why a module did not load, as kmod, insmod or the kernel's loader print them, and what they say
    (catalog/platform.yaml `kernel_module_reasons`)."""

    words: Annotated[str, Meta(min_length=6)]  # as printed (matched without regard to case)
    reason_class: ModuleReasonClass = records.field(name="class")
    printed_by: Annotated[str, Meta(min_length=8)]


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def kernel_module_table() -> Mapping[str, KernelModule]:
    """Each kernel module of catalog/platform.yaml `kernel_modules` by every name it goes by (dashes read as
    underscores): no name listed twice."""
    table: dict[str, KernelModule] = {}
    for where, row in _rows("platform.yaml", "kernel_modules", KernelModule):
        for name in (row.module, *row.also):
            key = name.replace("-", "_")
            if key in table:
                raise CatalogTableError(f"{where}: module name {name!r} listed twice")
            table[key] = row
    return MappingProxyType(table)


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def kernel_module_reasons() -> tuple[KernelModuleReason, ...]:
    """The reasons' words in the table's order (catalog/platform.yaml `kernel_module_reasons`)."""
    return tuple(row for _, row in _rows("platform.yaml", "kernel_module_reasons", KernelModuleReason))


class KernelModuleFailure(_Row, kw_only=True, frozen=True):
    """A loaded module's own words (or its library's) that it failed at its job (catalog/platform.yaml
    `kernel_module_failures`)."""

    text: Annotated[str, Meta(min_length=12)]  # a prefilter literal, case as printed
    module: Annotated[str, Meta(pattern=r"^[a-z0-9_]+$")]  # a row of kernel_modules
    printed_by: Annotated[str, Meta(min_length=8)]


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def kernel_module_failures() -> tuple[KernelModuleFailure, ...]:
    """The modules' own failure words (catalog/platform.yaml `kernel_module_failures`): each names a module of
    `kernel_modules`, no text twice."""
    return _owned("platform.yaml", "kernel_module_failures", KernelModuleFailure, "module", kernel_module_table(),
                  "kernel_modules")


class XidRelay(_Row, kw_only=True, frozen=True):
    """A platform program's words before an Xid it relays from NVML (catalog/platform.yaml `xid_relays`)."""

    text: Annotated[str, Meta(min_length=4)]  # a prefilter literal, case as printed; the Xid's number follows it
    program: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9-]*$")]  # a row of platform_programs (the event's `via`)
    printed_by: Annotated[str, Meta(min_length=8)]
    # words of the program's format that stand after the number (gpud's ` detected on `): the line holds them there
    then: Annotated[str, Meta(min_length=4)] | None = None


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def xid_relays() -> tuple[XidRelay, ...]:
    """The platform programs' words before an Xid they relay (catalog/platform.yaml `xid_relays`): each names a
    program of `platform_programs`, no text twice."""
    return _owned("platform.yaml", "xid_relays", XidRelay, "program", {row.program for row in platform_program_table()},
                  "platform_programs")


class BugReportSection(_Row, kw_only=True, frozen=True):
    """A section of NVIDIA's bug report by its header, and how its lines are read (catalog/platform.yaml
    `bug_report_sections`)."""

    header: Annotated[str, Meta(min_length=2, max_length=200)]
    # exact: the whole header; prefix: its first words; command: a command of a program that the report runs one
    # after another in one section (nvidia-smi's), each its own section, the header the command without its directory
    match: Literal["exact", "prefix", "command"] = "exact"
    # a line kind (its lines go to that kind's readers), `sections` (its lines are sub-sections, each under a line
    # `  HEADER:`, read by their own rows), or `none` (not the job's evidence: only named in the source's coverage)
    read_as: Literal["kernel", "fabricmanager", "application", "sections", "none"]
    why: Text | None = None  # why a section is not read, as the coverage note says it
    # `this`: the section's lines are of the boot the report was taken in (dmesg's, this boot's journal): a message
    # with a wall-clock stamp in one such section and an uptime alone in another gives that boot's time, which dates
    # the uptime stamps (collect/scan.py LineScanner._scan_report)
    boot: Literal["this"] | None = None
    printed_by: Annotated[str, Meta(min_length=8)]


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def bug_report_sections() -> tuple[BugReportSection, ...]:
    """The bug report's sections by header (catalog/platform.yaml `bug_report_sections`): no header twice, a
    `command` row's header is the program's name then its arguments, and a row that is not read says why only then."""
    rows = _unique("platform.yaml", "bug_report_sections", BugReportSection, "header")
    for row in rows:
        if row.match == "command" and (" " not in row.header or "/" in row.header.split(" ", 1)[0]):
            raise CatalogTableError(f"catalog/platform.yaml: bug_report_sections: {row.header!r}: a command row is "
                                    "the program's name, without its directory, then its arguments")
        if row.why is not None and row.read_as != "none":
            raise CatalogTableError(f"catalog/platform.yaml: bug_report_sections: {row.header!r} is read: no `why`")
    return rows


def _dash_run(name: str, word: str) -> bool:
    """Whether `word` is a run of the dash-separated words of `name` (`device-plugin` in
    `nvidia-device-plugin-daemonset-x7k2p`, not in `my-device-plugins`)."""
    at = name.find(word)
    while at >= 0:
        end = at + len(word)
        if (at == 0 or name[at - 1] == "-") and (end == len(name) or name[end] == "-"):
            return True
        at = name.find(word, at + 1)
    return False


_NOT_WORD: Final = re.compile(r"[^a-z0-9]+")


def platform_program_of(*names: str | None) -> PlatformProgram | None:
    """The platform program (catalog/platform.yaml `platform_programs`) the first of `names` (a container's name,
    then its pod's) that names one names, or None: the workload's own container. Any run of characters other than
    letters and digits reads as a dash (Ray's `gcs_server`, `dashboard_agent`, its idle worker's title `ray::IDLE`)."""
    for name in names:
        if not name:
            continue
        low = _NOT_WORD.sub("-", name.lower())
        best: tuple[int, PlatformProgram] | None = None
        for row in platform_program_table():
            for word in row.names:
                if (best is None or len(word) > best[0]) and _dash_run(low, word):
                    best = (len(word), row)
        if best is not None:
            return best[1]
    return None


class PlatformWord(_Row, kw_only=True, frozen=True):
    """A platform program's own words that it failed at its job on the node (catalog/platform.yaml `platform_words`)."""

    text: Annotated[str, Meta(min_length=8)]  # a prefilter literal, case as printed
    program: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9-]*$")]  # a row of platform_programs
    # the words after `text` that a step's exit status follows (xCAT's `postscript: X exited with code 1`): the row is
    # the program's failure only where that status is a number other than 0
    code_after: Annotated[str, Meta(min_length=4)] | None = None
    printed_by: Annotated[str, Meta(min_length=8)]


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def platform_words() -> tuple[PlatformWord, ...]:
    """The platform programs' own failure words (catalog/platform.yaml `platform_words`): each names a program of
    `platform_programs`, no text twice."""
    return _owned("platform.yaml", "platform_words", PlatformWord, "program",
                  {row.program for row in platform_program_table()}, "platform_programs")


def provisioning_program(frames: Sequence[str]) -> PlatformProgram | None:
    """The provisioning program (catalog/platform.yaml `platform_programs`, part provision) whose own source file the
    outermost of a Python traceback's `frames` (outermost first) is, or None: the program that was running when the
    exception was reported (slurm-gcp's `/slurm/scripts/setup.py`, HyperPod's `lifecycle_script.py`). A frame of
    such a file further in (a job that imports a module of it) decides nothing."""
    if not frames:
        return None
    first = frames[0]
    return next((row for row in platform_program_table() if any(f in first for f in row.frames)), None)


def provisioning_step(message: str) -> PlatformProgram | None:
    """The provisioning program (part provision) one of whose steps a `CalledProcessError`'s command names, quoted
    as Python's repr of the argument list quotes it (`'./utils/install_docker.sh'`), or None."""
    if "'" not in message:
        return None
    return next((row for row in platform_program_table() if any(f"'{s}'" in message for s in row.steps)), None)


def platform_executable(path: str) -> PlatformProgram | None:
    """The platform program (catalog/platform.yaml `platform_programs`) whose `executables` holds the file name of
    `path` (`/usr/sbin/slurmstepd`, `slurmd`), or None: the job's own program."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return next((row for row in platform_program_table() if name in row.executables), None)


@lru_cache(maxsize=1)
def platform_programs() -> tuple[str, ...]:
    """Every name of the platform's programs (catalog/platform.yaml `platform_programs`), lower-cased: a Go panic
    in a file or line that names one is that program's, not the workload's."""
    return tuple(name for row in platform_program_table() for name in row.names)


@lru_cache(maxsize=1)
@_kept("exceptions.yaml")
def errno_table() -> Mapping[str, ErrnoInfo]:
    """errno names -> whose side the error is on (catalog/exceptions.yaml)."""
    rows = _unique("exceptions.yaml", "errnos", ErrnoInfo, "name")
    classes = [c for r in rows for c in r.classes]
    if len(classes) != len(set(classes)):
        raise CatalogTableError("exceptions.yaml errnos: an OSError class stands for one errno alone")
    return MappingProxyType({r.name: r for r in rows})


@lru_cache(maxsize=1)
@_kept("exceptions.yaml")
def pseudo_fs_table() -> tuple[PseudoFsInfo, ...]:
    """The pseudo file systems' mount points (catalog/exceptions.yaml `pseudo_filesystems`), longest first."""
    rows = _unique("exceptions.yaml", "pseudo_filesystems", PseudoFsInfo, "prefix")
    return tuple(sorted(rows, key=lambda r: -len(r.prefix)))


@lru_cache(maxsize=1)
@_kept("exceptions.yaml")
def windows_error_table() -> Mapping[int, WindowsErrorInfo]:
    """Windows system error codes -> their text and the errno each stands for (catalog/exceptions.yaml)."""
    rows = _unique("exceptions.yaml", "windows_errors", WindowsErrorInfo, "code")
    _unique("exceptions.yaml", "windows_errors", WindowsErrorInfo, "text")
    return MappingProxyType({r.code: r for r in rows})


@lru_cache(maxsize=1)
@_kept("exceptions.yaml")
def fortran_runtime_error_table() -> Mapping[int, FortranRuntimeErrorInfo]:
    """Intel Fortran runtime error numbers -> what each stands for (catalog/exceptions.yaml)."""
    rows = _unique("exceptions.yaml", "fortran_runtime_errors", FortranRuntimeErrorInfo, "code")
    return MappingProxyType({r.code: r for r in rows})


@lru_cache(maxsize=1)
@_kept("exceptions.yaml")
def object_store_code_table() -> Mapping[str, ObjectStoreCodeInfo]:
    """Object-store error codes and HTTP statuses -> side (catalog/exceptions.yaml)."""
    rows = _unique("exceptions.yaml", "object_store_codes", ObjectStoreCodeInfo, "code")
    for field in ("aws_cpp", "said", "status_line", "message"):
        seen: dict[object, str] = {}
        for r in rows:
            value = getattr(r, field)
            if value is not None and seen.setdefault(value, r.code) != r.code:
                raise CatalogTableError(f"catalog/exceptions.yaml: object_store_codes: {field} {value!r} of both "
                                        f"{seen[value]} and {r.code}")
    return MappingProxyType({r.code: r for r in rows})


# --------------------------------------------------------------------------
# Why schedulers and orchestrators end jobs (catalog/scheduler.yaml)
# --------------------------------------------------------------------------


class SchedReason(_Row, frozen=True):
    reason: SchedReasonName
    state: ReasonState  # the job state a record ended for this reason gets

class SchedWord(_Row, frozen=True):
    scheduler: SchedulerName
    # a word (`OOMKilled`, `TERM_MEMLIMIT`), a code (`34`, `-29`), or two words as an old release spelled one
    # (`OOM Killed`)
    word: Annotated[str, Meta(pattern=r"^-?[A-Za-z0-9][\w\-]*(?: [A-Za-z][\w\-]*)?$")]
    reason: SchedReasonName | None
    field: ReasonField = "reason"
    text: bool = False  # also a reason where it stands as a whole word in a job's own output
    # the reason where Slurm's qualifier `by <uid>` follows the state (`CANCELLED by 1060117793`); by uid 0 (root) it
    # is admin_cancelled
    by_uid: SchedReasonName | None = None
    # the word is a prefix (the kubelet's `OutOf`): a value is it followed by a fully-qualified extended resource name
    # (`domain/name`: `OutOfnvidia.com/gpu`), never the word alone nor a resource of the kubelet's own (`OutOfcpu`)
    extended: bool = False
    # a word that says a pod waits for a place (the scheduler's `FailedScheduling`, `Unschedulable`): no cause, but the
    # job did not start (`pending` on its k8s.event: the symptom sym-pod-unschedulable)
    pending: bool = False
    # a word that says the kubelet could not start a pod it was given (its sandbox, the sandbox's network, its volumes,
    # its devices: `FailedCreatePodSandBox`, `FailedMount`): no cause by the word, but the attempt did not start
    # (`unstarted` on its k8s.event: the symptom sym-pod-unstarted)
    unstarted: bool = False

    def __post_init__(self) -> None:
        if self.by_uid is not None and self.field != "state":
            raise ValueError("by_uid qualifies a job state")
        if (self.pending or self.unstarted) and self.reason is not None:
            raise ValueError("a pending or unstarted word names no reason")
        if self.pending and self.unstarted:
            raise ValueError("a word says a pod waits for a place or could not start on it, not both")
        if self.extended and self.text:
            raise ValueError("an extended-resource prefix is read as a record's value only")

class SchedText(_Row, frozen=True):
    scheduler: SchedulerName
    # `{n}` is a number with an optional unit, `{host}` the host the phrase names (at most one), `{peer}` another host
    # the phrase holds that it is not about (the one that reports the named host: PALS's `ping failed on PEER: No reply
    # from HOST`), matched as a host and not kept, `{word}` a run of non-blank characters (an RPC and its argument:
    # `ping(24c93b8c-...)`), `{proc}` the process, unit or cgroup a memory killer names as its victim (at most one);
    # no other brace
    text: Annotated[str, Meta(min_length=5, pattern=r"^(?:[^{}]|\{n\}|\{host\}|\{peer\}|\{word\}|\{proc\})+$")]
    reason: SchedReasonName | None  # None: understood, names no cause
    lines: bool = True  # False: the line form is another extractor's; only the record readers use it
    resource: Annotated[str, Meta(min_length=2)] | None = None  # the node resource a kubelet eviction names
    # a phrase that says a node failed to take or keep the job and names no cause: the symptom node.out_of_service
    symptom: bool = False
    # a `setup` phrase that says what refused the job's request (the event's `refusal`, which the verdict's summary
    # and action name): a quota or limit of its cloud account, project or node pool that the request is over, or a
    # policy of its cluster that denied it
    refusal: Literal["over_quota", "denied_by_policy"] | None = None
    # a phrase that says a pod waits for a place and names no cause (`0/3 nodes are available: ...`): the job did not
    # start (`pending` on its k8s.event: the symptom sym-pod-unschedulable)
    pending: bool = False

    def __post_init__(self) -> None:
        if (self.symptom or self.pending) and self.reason is not None:
            raise ValueError("a symptom or pending phrase names no reason")
        if self.symptom and self.pending:
            raise ValueError("a phrase is a node's symptom or a pod's wait, not both")
        if self.refusal is not None and self.reason != "setup":
            raise ValueError("only a set-up phrase says what refused the job's request")

class SchedKey(_Row, frozen=True):
    # the key as its record spells it, compared without case, spaces, `_`, `-` or quotes (`Last State`,
    # `exitCode`, `"OOMKilled"`, `HoldReason`: extract/endstate.key_name), and the last part of a dotted path
    key: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9]*$")]
    role: EndKeyRole
    scheduler: SchedulerName | None = None  # the one whose record has the key; None: any of the table's
    field: ReasonField = "reason"  # a `code` key's words are the table's words of this field
    reason: SchedReasonName | None = None  # a `flag` key's reason when it is true


class SchedResource(_Row, frozen=True):
    # a word a scheduler's message, or an attribute its policy expression, names a resource by
    word: Annotated[str, Meta(min_length=2, pattern=r"^[A-Za-z][\w \-]*$")]
    # what a job ended for going over it is (memory_limit, eviction, time_limit); None: an attribute a policy counts
    # that is no resource's use (the job's restarts), which no reason follows from
    reason: SchedReasonName | None
    resource: Annotated[str, Meta(min_length=2)]  # memory, disk, time, restarts
    attribute: bool = False  # an HTCondor job ad attribute (`MemoryUsage`), matched whole and with its case


class SchedTables(NamedTuple):
    reasons: tuple[SchedReason, ...]
    words: tuple[SchedWord, ...]
    texts: tuple[SchedText, ...]
    keys: tuple[SchedKey, ...] = ()
    resources: tuple[SchedResource, ...] = ()


def _phrase_inside(outer: str, inner: str) -> bool:
    """Whether `inner` can match in a text where `outer` does, starting after `outer`'s start: inside it, or
    overlapping its end (whole-word edges honoured; placeholders compared as placeholders)."""
    a, b = (p.replace("{host}", "{n}").replace("{peer}", "{n}").replace("{word}", "{n}").replace("{proc}", "{n}")
            for p in (outer, inner))
    for start in range(1, len(a)):
        if (a[start - 1].isalnum() or a[start - 1] == "_") and (b[0].isalnum() or b[0] == "_"):
            continue  # `mem` inside `vmem`: a whole-word phrase cannot start mid-word
        tail = a[start:]
        if tail.startswith(b) or (len(tail) >= 4 and b.startswith(tail)):
            return True
    return False


@lru_cache(maxsize=1)
@_kept("scheduler.yaml")
def sched_tables() -> SchedTables:
    """catalog/scheduler.yaml: the normalised reasons, each scheduler's words and phrases for them."""
    reasons: dict[str, SchedReason] = {}
    for where, r in _rows("scheduler.yaml", "reasons", SchedReason):
        if r.reason in reasons:
            raise CatalogTableError(f"{where}: duplicate reason {r.reason}")
        reasons[r.reason] = r
    missing = set(get_args(SchedReasonName)) - set(reasons)
    if missing:
        raise CatalogTableError(f"catalog/scheduler.yaml: reasons: no row for {', '.join(sorted(missing))}")
    words: list[SchedWord] = []
    seen: set[tuple[str, str, str]] = set()
    for where, w in _rows("scheduler.yaml", "words", SchedWord):
        key = (w.scheduler, w.field, w.word)
        if key in seen:
            raise CatalogTableError(f"{where}: duplicate word {w.word!r} of {w.scheduler} {w.field}")
        seen.add(key)
        words.append(w)
    texts: list[SchedText] = []
    for where, t in _rows("scheduler.yaml", "texts", SchedText):
        if t.text.count("{host}") > 1 or t.text.count("{proc}") > 1:
            raise CatalogTableError(f"{where}.text: at most one {{host}} and one {{proc}}")
        if "{proc}" in t.text and t.reason != "memory_limit":
            raise CatalogTableError(f"{where}.text: only a memory killer's phrase names a victim ({{proc}})")
        for other in texts:
            if t.text == other.text:
                raise CatalogTableError(f"{where}: duplicate text {t.text!r}")
            differ = (t.reason, t.resource) != (other.reason, other.resource)
            if differ and (_phrase_inside(t.text, other.text) or _phrase_inside(other.text, t.text)):
                raise CatalogTableError(f"{where}: {t.text!r} and {other.text!r} can match one inside the other and"
                                        " say different things; a refining phrase extends the other at its end")
        texts.append(t)
    # A key may have one row per scheduler (`Reason` is Kubernetes' and Slurm's): each reads its own words.
    keys: tuple[SchedKey, ...] = ()
    for where, k in _rows("scheduler.yaml", "keys", SchedKey):
        if any(o.key == k.key and (o.scheduler is None or k.scheduler is None or o.scheduler == k.scheduler)
               for o in keys):
            raise CatalogTableError(f"{where}: duplicate key {k.key!r} (a key's rows each name another scheduler)")
        keys += (k,)
    for k in keys:
        if (k.role == "flag") != (k.reason is not None):
            raise CatalogTableError(f"catalog/scheduler.yaml: keys: {k.key}: a flag names its reason,"
                                    " no other role does")
    resources = tuple(_unique("scheduler.yaml", "resources", SchedResource, "word"))
    return SchedTables(tuple(reasons.values()), tuple(words), tuple(texts), keys, resources)


@lru_cache(maxsize=1)
def _states() -> MappingProxyType[str, str]:
    return MappingProxyType({r.reason: r.state for r in sched_tables().reasons})


def state_of(reason: str) -> str | None:
    """The Slurm-form job state (`TIMEOUT`, `OUT_OF_MEMORY`, ...) of a job that ended for `reason`; None for a
    word that is not one of catalog/scheduler.yaml's reasons."""
    return _states().get(reason)


@lru_cache(maxsize=1)
def _kube_reasons() -> MappingProxyType[str, SchedReasonName | None]:
    return MappingProxyType({w.word: w.reason for w in sched_tables().words
                             if w.scheduler == "kubernetes" and w.field == "reason" and not w.extended})


def kueue_end(typ: str | None, status: str | None, reason: str | None) -> tuple[SchedReasonName | None, str | None]:
    """Why Kueue ended a workload, and the job state (Slurm's words) that ending is, by one condition of its
    Workload: (None, None) for a condition that ends nothing.

    The one reading of a Workload's end, for the Blueprint finding attempts (identify/kueue.py) and the engine
    placing a condition's event (extract/kube.py gives it `due_to`; engine/normalise.py its terminal state).
    `Finished` True ends it (`Succeeded` completed, any other reason failed, names no cause); `Preempted` True is
    a preemption; `Evicted` True is what catalog/scheduler.yaml's Kubernetes word says of its reason (Kueue's
    `InClusterQueue` and the rest of its preemption reasons, `NodeFailures`, `MaximumExecutionTimeExceeded`; a row
    without a reason names no cause), and else the queue's own eviction (`PodsReadyTimeout`, `AdmissionCheck`, a
    stopped or deactivated queue, a reason of a later release)."""
    if status != "True":
        return None, None
    if typ == "Finished":
        return None, ("COMPLETED" if reason == "Succeeded" else "FAILED")
    due: SchedReasonName | None
    if typ == "Preempted":
        due = "preemption"
    elif typ == "Evicted":
        rows = _kube_reasons()
        due = rows.get(reason, "eviction") if reason is not None else "eviction"
    else:
        return None, None
    return due, ((state_of(due) if due is not None else None) or "FAILED")


# --------------------------------------------------------------------------
# Slurm's own error words and who failed (catalog/slurm.yaml)
# --------------------------------------------------------------------------

class SlurmError(_Row, frozen=True):
    # the errno's name in slurm/slurm_errno.h and its text in src/common/slurm_errno.c, exactly as `%m` prints it
    name: Annotated[str, Meta(pattern=r"^(?:E?SLURM|ESLURMD|ESPANK|SLURMCTLD)_[A-Z0-9_]+$")]
    text: Annotated[str, Meta(min_length=5, pattern=r"^[^{}]+$")]
    side: SlurmSide | None = None
    weak: bool = False  # a `node` row whose finding stands only where nothing stronger does
    reason: SchedReasonName | None = None  # the scheduler's policy (catalog/scheduler.yaml), instead of a side

    def __post_init__(self) -> None:
        if (self.side is None) == (self.reason is None):
            raise ValueError("a row has a side or a reason, not both")
        if self.weak and self.side != "node":
            raise ValueError("weak qualifies a node row")


class SlurmMessage(_Row, frozen=True):
    # where a message of Slurm's own begins; `{host}`, `{id}`, `{any}` placeholders
    text: Annotated[str, Meta(min_length=5, pattern=r"^(?:[^{}]|\{host\}|\{id\}|\{any\})+$")]
    side: SlurmSide
    source: Annotated[str, Meta(pattern=r"^src/\S+")]  # the file (and function) that prints it
    weak: bool = False
    errno: bool = False  # the rest of the line is an errno of a path the job named
    level: bool = True  # False: a notice printed without an error level
    # False: words slurmd writes into the job's own output file, with no program's tag and no level (req.c
    # `_prolog_error`), or words Slurm's own function name heads (`_find_node_record: `) that a paste may have cut
    # from their log's stamp and level: read also as a whole line's beginning
    tag: bool = True

    def __post_init__(self) -> None:
        if self.text.count("{host}") > 1:
            raise ValueError("at most one {host}")
        if self.weak and self.side != "node":
            raise ValueError("weak qualifies a node row")
        if self.errno and self.side != "job":
            raise ValueError("errno qualifies a job row")
        if not self.tag and self.level:
            raise ValueError("a line without a program's tag has no level either (level: false)")


class SlurmContext(_Row, frozen=True):
    # the words before an error's text that name the node it is about (one `{host}`), ending in `: `
    text: Annotated[str, Meta(min_length=5, pattern=r"^(?:[^{}]|\{host\}|\{id\}|\{any\})+: $")]
    source: Annotated[str, Meta(pattern=r"^src/\S+")]

    def __post_init__(self) -> None:
        if self.text.count("{host}") != 1:
            raise ValueError("a context names one {host}")


class SlurmNodeReason(_Row, frozen=True):
    # where a reason slurmctld or slurmd gives a node it set DOWN or DRAIN begins; `{any}` placeholders
    text: Annotated[str, Meta(min_length=4, pattern=r"^(?:[^{}]|\{any\})+$")]
    means: NodeReasonMeans
    # the file (and function) that sets it: Slurm's `src/...`, another project's `owner/repo path`
    source: Annotated[str, Meta(pattern=r"^(?:src/|[\w.\-]+/[\w.\-]+ )\S+")]
    weak: bool = False

    def __post_init__(self) -> None:
        if self.weak and self.means != "node":
            raise ValueError("weak qualifies a node row")


class SlurmSubmitter(_Row, frozen=True):
    # a Slurm client whose every error-level line is about the job's own submission (sbatch, salloc)
    program: Literal["sbatch", "salloc"]
    source: Annotated[str, Meta(pattern=r"^src/\S+")]

    @property
    def side(self) -> Literal["job"]:
        return "job"


class SlurmDaemon(_Row, frozen=True):
    # a Slurm daemon whose every fatal-level line is the daemon ending itself (slurmd, slurmctld): the node's Slurm
    program: Literal["slurmd", "slurmctld"]
    source: Annotated[str, Meta(pattern=r"^src/\S+")]

    @property
    def side(self) -> Literal["node"]:
        return "node"

    @property
    def weak(self) -> bool:
        return False


class SlurmPluginFunction(_Row, frozen=True):
    # where the names of a node plugin's functions begin (`container_p_`, `common_file_`): a message that begins with
    # one is that plugin's failure
    prefix: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*_$")]
    side: Literal["node", "job"]
    source: Annotated[str, Meta(pattern=r"^src/\S+")]
    weak: bool = False

    def __post_init__(self) -> None:
        if self.weak and self.side != "node":
            raise ValueError("weak qualifies a node row")


class SlurmSpoolFile(_Row, frozen=True):
    # a file slurmd writes into its spool directory for the job, and the errnos that are the node's on it
    file: Annotated[str, Meta(pattern=r"^[\w.\-]+$")]
    errnos: tuple[Annotated[str, Meta(pattern=r"^E[A-Z0-9]+$")], ...]
    source: Annotated[str, Meta(pattern=r"^src/\S+")]


class SlurmTables(NamedTuple):
    errors: tuple[SlurmError, ...]
    messages: tuple[SlurmMessage, ...]
    contexts: tuple[SlurmContext, ...]
    node_reasons: tuple[SlurmNodeReason, ...]
    submitters: tuple[SlurmSubmitter, ...]
    daemons: tuple[SlurmDaemon, ...]
    plugin_functions: tuple[SlurmPluginFunction, ...]
    spool_files: tuple[SlurmSpoolFile, ...]


@lru_cache(maxsize=1)
@_kept("slurm.yaml")
def slurm_tables() -> SlurmTables:
    """catalog/slurm.yaml: Slurm's error texts (slurm_errno.c), its own messages and the contexts that name a node,
    each with who failed."""
    errors = _unique("slurm.yaml", "errors", SlurmError, "name")
    seen: dict[str, str] = {}
    for e in errors:
        if e.text in seen:
            raise CatalogTableError(f"catalog/slurm.yaml: errors: {e.name}: the text of {seen[e.text]}")
        seen[e.text] = e.name
    messages = _unique("slurm.yaml", "messages", SlurmMessage, "text")
    for m in messages:
        if any(o is not m and o.text.startswith(m.text) and o.side != m.side for o in messages):
            raise CatalogTableError(f"catalog/slurm.yaml: messages: {m.text!r} begins another that says otherwise")
    contexts = _unique("slurm.yaml", "contexts", SlurmContext, "text")
    # a row may refine one it begins with (`NHC: Temporarily offlining` after `NHC:`): the longest is read
    node_reasons = _unique("slurm.yaml", "node_reasons", SlurmNodeReason, "text")
    submitters = _unique("slurm.yaml", "submitters", SlurmSubmitter, "program")
    daemons = _unique("slurm.yaml", "daemons", SlurmDaemon, "program")
    functions = _unique("slurm.yaml", "plugin_functions", SlurmPluginFunction, "prefix")
    for f in functions:
        if any(o is not f and o.prefix.startswith(f.prefix) for o in functions):
            raise CatalogTableError(f"catalog/slurm.yaml: plugin_functions: {f.prefix!r} begins another row's")
    spool = _unique("slurm.yaml", "spool_files", SlurmSpoolFile, "file")
    return SlurmTables(tuple(errors), tuple(messages), tuple(contexts), tuple(node_reasons), tuple(submitters),
                       tuple(daemons), tuple(functions), tuple(spool))


# --------------------------------------------------------------------------
# Batch systems beyond Slurm: their daemons' own records and their clients' refusals (catalog/batch.yaml)
# --------------------------------------------------------------------------


class _Sided(_Row, kw_only=True, frozen=True):
    side: SlurmSide
    weak: bool = False  # a `node` row whose finding stands only where nothing stronger does

    def __post_init__(self) -> None:
        if self.weak and self.side != "node":
            raise ValueError("weak qualifies a node row")


class CondorDaemon(_Row, frozen=True):
    # an HTCondor daemon: its program's name (DaemonCore's banner), its subsystem (the master's DAEMON_LIST name) and
    # the directory of its source (an EXCEPT record's path)
    program: Annotated[str, Meta(pattern=r"^condor_[a-z_]+$")]
    subsystem: Annotated[str, Meta(pattern=r"^[A-Z][A-Z_]+$")]
    dir: Annotated[str, Meta(pattern=r"^condor_[\w.\-]+$")]
    weak: bool = False  # its own failure is one the words do not establish alone
    exits: Literal["daemon", "job"] = "daemon"  # whose fate its exit status is


class CondorLibraryDir(_Row, frozen=True):
    dir: Annotated[str, Meta(pattern=r"^[\w.\-]+$")]


class CondorExit(_Sided, frozen=True):
    program: Annotated[str, Meta(pattern=r"^condor_[a-z_]+$")]
    status: Annotated[int, Meta(ge=0, le=255)]


class CondorError(_Sided, frozen=True):
    # an entry of HTCondor's error stack, `SUBSYS:CODE:message` (src/condor_includes/condor_error_codes.h)
    subsystem: Annotated[str, Meta(pattern=r"^[A-Z]+$")]
    code: Annotated[int, Meta(ge=1000, le=99999)]
    name: Annotated[str, Meta(pattern=r"^[A-Z][A-Z0-9_]+$")]


class CondorMessage(_Sided, frozen=True):
    text: Annotated[str, Meta(min_length=12, pattern=r"^[^{}]+$")]
    source: Annotated[str, Meta(pattern=r"^src/\S+")]


class PbsError(_Sided, frozen=True):
    # a PBSE_* error's name and the words of its text qsub prints (Torque pbs_error_db.h, OpenPBS pbs_messages.c)
    name: Annotated[str, Meta(pattern=r"^PBSE_[A-Z0-9_]+$")]
    text: Annotated[str, Meta(min_length=8, pattern=r"^[^{}]+$")]


class SgeShepherd(_Row, frozen=True):
    # the shepherd's words for a job it could not start, and the qmaster's `failed` text of the state it sets beside
    text: Annotated[str, Meta(min_length=8)]
    failed: Annotated[str, Meta(min_length=8)]


class BatchTables(NamedTuple):
    condor_daemons: tuple[CondorDaemon, ...]
    condor_library_dirs: tuple[CondorLibraryDir, ...]
    condor_exits: tuple[CondorExit, ...]
    condor_errors: tuple[CondorError, ...]
    condor_messages: tuple[CondorMessage, ...]
    pbs_errors: tuple[PbsError, ...]
    sge_shepherd: tuple[SgeShepherd, ...]


@lru_cache(maxsize=1)
@_kept("batch.yaml")
def batch_tables() -> BatchTables:
    """catalog/batch.yaml: HTCondor's daemons and their records, PBS's submission errors, Grid Engine's shepherd's
    words, each with who failed."""
    daemons = _unique("batch.yaml", "htcondor_daemons", CondorDaemon, "program")
    for key in ("subsystem", "dir"):
        values = [getattr(d, key) for d in daemons]
        if len(set(values)) != len(values):
            raise CatalogTableError(f"catalog/batch.yaml: htcondor_daemons: a duplicate {key}")
    libs = _unique("batch.yaml", "htcondor_library_dirs", CondorLibraryDir, "dir")
    if {d.dir for d in daemons} & {lib.dir for lib in libs}:
        raise CatalogTableError("catalog/batch.yaml: a library directory is a daemon's")
    exits = _unique("batch.yaml", "htcondor_exits", CondorExit, ("program", "status"))
    programs = {d.program for d in daemons}
    for e in exits:
        if e.program not in programs:
            raise CatalogTableError(f"catalog/batch.yaml: htcondor_exits: {e.program} is no daemon of the table")
    errors = _unique("batch.yaml", "htcondor_errors", CondorError, ("subsystem", "code"))
    messages = _unique("batch.yaml", "htcondor_messages", CondorMessage, "text")
    pbs = _unique("batch.yaml", "pbs_errors", PbsError, "name")
    for p in pbs:
        if any(o is not p and o.text.startswith(p.text) and (o.side, o.weak) != (p.side, p.weak) for o in pbs):
            raise CatalogTableError(f"catalog/batch.yaml: pbs_errors: {p.text!r} begins another that says otherwise")
    shepherd = _unique("batch.yaml", "sge_shepherd", SgeShepherd, "text")
    return BatchTables(tuple(daemons), tuple(libs), tuple(exits), tuple(errors), tuple(messages), tuple(pbs),
                       tuple(shepherd))


# --------------------------------------------------------------------------
# Node health checks in their own words (catalog/health.yaml)
# --------------------------------------------------------------------------

_PROJECT_SOURCE = r"^[\w.\-]+/[\w.\-]+(?:#\d+)? \S+"  # `owner/repo path`, or `owner/repo#issue ...`


class HealthUnrun(_Row, frozen=True):
    text: Annotated[str, Meta(min_length=6)]  # words that say the check could not run, as printed
    source: Annotated[str, Meta(pattern=_PROJECT_SOURCE)]
    # the words say what the check's own set-up lacks (a command, a dependency, an environment, an argument), not
    # that it ran out of time or was stopped: the checker's set-up, software on that node (rule health-check-setup)
    setup: bool = False


class HealthCheck(_Row, frozen=True):
    # a check's name as the checker prints it; a trailing `*`: a prefix that the sites' own checks share
    check: Annotated[str, Meta(pattern=r"^check_[a-z0-9_]+\*?$")]
    part: HealthPart
    source: Annotated[str, Meta(pattern=_PROJECT_SOURCE)]
    says: Annotated[str, Meta(min_length=6)] | None = None  # words its message holds too: a refinement of the row


class MonitorComponent(_Row, frozen=True):
    """A health monitor's component by the name its states print, and the part of the node it examines
    (catalog/health.yaml `monitor_components`)."""

    monitor: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9-]*$")]
    # as the monitor prints it (gpud's `accelerator-nvidia-ecc`, NVSentinel's `GpuMemWatch`)
    component: Annotated[str, Meta(pattern=r"^[A-Za-z][A-Za-z0-9-]+$")]
    part: HealthPart
    source: Annotated[str, Meta(pattern=_PROJECT_SOURCE)]


class HealthTables(NamedTuple):
    unrun: tuple[HealthUnrun, ...]
    checks: tuple[HealthCheck, ...]
    components: tuple[MonitorComponent, ...] = ()


@lru_cache(maxsize=1)
@_kept("health.yaml")
def health_tables() -> HealthTables:
    """catalog/health.yaml: the words that say a node health check could not run, and the checks by name with the
    part of the node each examines. A check's name (and its `says`) is one row's."""
    unrun = _unique("health.yaml", "unrun", HealthUnrun, "text")
    checks: list[HealthCheck] = []
    for where, row in _rows("health.yaml", "checks", HealthCheck):
        if any(c.check == row.check and c.says == row.says for c in checks):
            raise CatalogTableError(f"{where}: duplicate check {row.check!r}")
        if row.says is not None and not any(c.check == row.check and c.says is None for c in checks):
            raise CatalogTableError(f"{where}: {row.check}: a refinement before the check's own row")
        checks.append(row)
    components = _unique("health.yaml", "monitor_components", MonitorComponent, ("monitor", "component"))
    return HealthTables(unrun, tuple(checks), tuple(components))


# --------------------------------------------------------------------------
# How a run ended, in its own programs' words (catalog/ends.yaml)
# --------------------------------------------------------------------------


class EndReport(_Row, frozen=True):
    system: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9\-]*$")]  # who prints it: torchrun, deepspeed, ...
    literal: Annotated[str, Meta(min_length=6)]  # words every such line holds: the prefilter word and the gate
    pattern: Text  # searched in the line's body where the literal is; ends at the line's end
    outcome: EndOutcome
    scope: EndScope
    stops_others: bool = False  # the launcher ended the job's other processes for this one

    def __post_init__(self) -> None:
        try:
            check_regex(self.pattern)
        except ValueError as exc:
            raise ValueError(f"pattern: {exc}") from None
        if not self.pattern.endswith(r"\s*$"):
            raise ValueError(r"pattern: must end with `\s*$` (the report is the rest of its line)")
        if rows_checked():
            return
        groups = re.compile(self.pattern).groupindex
        if (self.outcome == "code") != ("code" in groups):
            raise ValueError("outcome `code` and a `code` group go together")


@lru_cache(maxsize=1)
@_kept("ends.yaml")
def end_reports() -> tuple[EndReport, ...]:
    """catalog/ends.yaml: the lines that say how a run ended, in table order."""
    return _unique("ends.yaml", "ends", EndReport, "literal")


class StallReport(_Row, frozen=True):
    detector: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9\-]*$")]  # who prints it: horovod, coordination-service
    literal: Annotated[str, Meta(min_length=6)]  # words every such line holds: the prefilter word and the gate
    pattern: Text  # searched in the line's body where the literal is; `missing`, `seconds` groups where it names them
    reading: StallReading
    # a `wait` row's own server announcing the port it listens on (a `port` group), where the same program serves
    # the store it waits for: a wait on that port in the same stream is its own server unreachable at the address
    # it dials (`addr` and `port` groups in `pattern`)
    listen: Text | None = None

    def __post_init__(self) -> None:
        if rows_checked():
            return  # (its regexes compiled, its groups checked when the entry was written)
        for name, rx in (("pattern", self.pattern), ("listen", self.listen)):
            if rx is None:
                continue
            try:
                check_regex(rx)
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
        groups = set(re.compile(self.pattern).groupindex)
        known = {"missing", "seconds", "what", "addr", "port"}
        if groups - known:
            raise ValueError(f"pattern: unknown groups {sorted(groups - known)}")
        if ("addr" in groups or "port" in groups) and (self.reading != "wait" or not {"addr", "port"} <= groups):
            raise ValueError("pattern: `addr` and `port` go together, on a `wait` row (the address the waiter dials)")
        if self.listen is not None and ("port" not in groups or set(re.compile(self.listen).groupindex) != {"port"}):
            raise ValueError("listen: a `port` group, on a row whose pattern has `addr` and `port`")


@lru_cache(maxsize=1)
@_kept("ends.yaml")
def stall_reports() -> tuple[StallReport, ...]:
    """catalog/ends.yaml `stalls`: the stall and hang detectors' own messages, in table order."""
    return _unique("ends.yaml", "stalls", StallReport, "literal")


# --------------------------------------------------------------------------
# The InfiniBand fabric (catalog/fabric/perfquery.yaml: a reading table, outside the catalog's sha256, which
# covers the files that judge: catalog/*.yaml and the rules)
# --------------------------------------------------------------------------


class PerfqueryCounter(_Row, frozen=True):
    counter: Annotated[str, Meta(pattern=r"^[A-Z][A-Za-z0-9]+$")]  # as perfquery prints it: SymbolErrorCounter
    # the node_exporter InfiniBand collector's name: node_infiniband_symbol_error_total
    metric: Annotated[str, Meta(pattern=r"^node_infiniband_[a-z0-9_]+$")]

@lru_cache(maxsize=1)
@_kept("fabric/perfquery.yaml")
def perfquery_counters() -> Mapping[str, str]:
    """perfquery counter name -> the node_exporter metric of the same counter (catalog/fabric/perfquery.yaml)."""
    out: dict[str, str] = {}
    for where, item in _rows("fabric/perfquery.yaml", "perfquery_counters", PerfqueryCounter):
        if item.counter in out:
            raise CatalogTableError(f"{where}: duplicate counter {item.counter}")
        out[item.counter] = item.metric
    return MappingProxyType(out)


# --------------------------------------------------------------------------
# What a launcher's or a scheduler's exit number means, printer by printer (catalog/exits.yaml)
# --------------------------------------------------------------------------

_VERSION = r"^\d+(?:\.\d+)*(?:[ab]\d+)?$"  # `3.2`, `1.5a1`, `1.5b2`


def version_key(version: str) -> tuple[int, ...]:
    """A printer's version as a sortable key: `1.5a1` < `1.5b2` < `1.5` < `3.1` < `3.2` (a pre-release before its
    release)."""
    m = re.match(r"^(?P<nums>\d+(?:\.\d+)*)(?:(?P<pre>[ab])(?P<n>\d+))?$", version)
    if m is None:
        raise ValueError(f"not a version: {version!r}")
    nums = tuple(int(x) for x in m.group("nums").split("."))
    nums += (0,) * (4 - len(nums))
    pre = (0 if m.group("pre") == "a" else 1, int(m.group("n"))) if m.group("pre") else (2, 0)
    return nums + pre


class ExitPrinter(_Row, frozen=True):
    # who prints the number: `hydra`, `srun`, `torchrun`, `pbs`, ...
    printer: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9\-]*$")]
    means: ExitMeans
    since: Annotated[str, Meta(pattern=_VERSION)] | None = None  # the first version the row holds for
    until: Annotated[str, Meta(pattern=_VERSION)] | None = None  # the first version it no longer holds for

    def __post_init__(self) -> None:
        if self.since is not None and self.until is not None and version_key(self.since) >= version_key(self.until):
            raise ValueError("since must come before until")


@lru_cache(maxsize=1)
@_kept("exits.yaml")
def exit_printers() -> tuple[ExitPrinter, ...]:
    """catalog/exits.yaml: how each printer's exit number reads, by version, in table order. A printer's rows may
    not overlap: each version of it has one meaning."""
    rows: list[ExitPrinter] = []
    for where, row in _rows("exits.yaml", "exits", ExitPrinter):
        lo = version_key(row.since) if row.since else None
        hi = version_key(row.until) if row.until else None
        for other in rows:
            if other.printer != row.printer:
                continue
            olo = version_key(other.since) if other.since else None
            ohi = version_key(other.until) if other.until else None
            if (hi is None or olo is None or olo < hi) and (ohi is None or lo is None or lo < ohi):
                raise CatalogTableError(f"{where}: {row.printer}: its versions overlap another row's")
        rows.append(row)
    if not any(r.printer == "generic" for r in rows):
        raise CatalogTableError("catalog/exits.yaml: exits: no row for the generic printer")
    return tuple(rows)
