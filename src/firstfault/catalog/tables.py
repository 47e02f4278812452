"""The vendor tables shipped beside the rules: NVIDIA Xids, NVSwitch SXids, CUDA errors, NCCL results, the GPU
platform from user space, the transports' statuses, exception classes, status words, errno and object-store
codes, and the schedulers' reasons.

The data lives in `xid.yaml` / `sxid.yaml` / `cuda.yaml` / `platform.yaml` / `transport.yaml` /
`exceptions.yaml` / `scheduler.yaml` (vendor knowledge is data, not code branches); this module only reads and
validates it, once, on first use. The rows are the records below; the pydantic models that validate them are
in catalog/tableschema.py, imported only when a table is built from its YAML, not when it is read back from the
on-disk cache.
"""

from collections import abc
from collections.abc import Callable, Iterator, Mapping
from contextlib import suppress
from functools import lru_cache, wraps
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, Protocol, TypeVar, cast, get_args, get_origin, get_type_hints

from firstfault.catalog.vocab import (
    AsyncMeans,
    CatalogTableError,
    CompletionStack,
    CudaClass,
    ErrnoSide,
    ExceptionFamily,
    HostSeverity,
    IbWcClass,
    IpmiSeverity,
    LocalStack,
    NvmlClass,
    PeerMeans,
    PeerStack,
    ReasonField,
    ReasonState,
    SchedReasonName,
    SchedulerName,
    StoreSide,
    SxidClass,
    XidClass,
)

XID_CLASSES: frozenset[str] = frozenset(get_args(XidClass))
SXID_CLASSES: frozenset[str] = frozenset(get_args(SxidClass))


# The rows: one record per model of catalog/tableschema.py, with its fields (a `class:` key of the YAML
# is the record's `<table>_class`); read-only, hashed and compared by value, as the models were. Named
# tuples (fields with a default last): a start-up builds each class, and one costs a fifth of a frozen
# dataclass.


class XidInfo(NamedTuple):
    code: int
    mnemonic: str
    description: str
    xid_class: XidClass  # firstfault's attribution class (see the header of xid.yaml)
    immediate: str | None = None  # NVIDIA immediate resolution bucket
    investigatory: str | None = None  # NVIDIA investigatory resolution bucket
    legacy_causes: tuple[str, ...] = ()


class SxidInfo(NamedTuple):
    code: int
    name: str
    sxid_class: SxidClass


class CudaErrorInfo(NamedTuple):
    code: int
    runtime: str  # cudaErrorX
    message: str
    cuda_class: CudaClass
    driver: str | None = None  # CUDA_ERROR_X
    aliases: tuple[str, ...] = ()  # other texts that name the same error (PyTorch's, old CUDA's)


class NcclResultInfo(NamedTuple):
    code: int
    name: str  # ncclX
    phrases: tuple[str, ...] = ()


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
            mapping = get_origin(kind) is abc.Mapping
            raw = resources.files("firstfault").joinpath("catalog", file).read_bytes()
            name = "tables-" + cache.key(build.__name__, file, raw, *_module_source(), sys.version,
                                         cache.stamp("pydantic", "version.py")) + ".msgpack"
            data = cache.get(name)
            if data is not None:
                try:
                    value = msgspec.msgpack.decode(data, type=kind)
                    return cast(T, MappingProxyType(value) if mapping else value)
                except (msgspec.DecodeError, TypeError, ValueError):  # a corrupt or foreign entry: build it again
                    pass
            table = build()
            with suppress(Exception):  # the cache is an optimisation only
                cache.put(name, msgspec.msgpack.encode(dict(table) if mapping else table))  # type: ignore[call-overload]
            return table

        return load

    return wrap


@lru_cache(maxsize=1)
def _module_source() -> tuple[bytes, bytes, bytes]:
    here = Path(__file__)
    return here.read_bytes(), here.with_name("tableschema.py").read_bytes(), here.with_name("vocab.py").read_bytes()


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
    """The rows of catalog/<name> under `key` in order, each validated (catalog/tableschema.py) as a `row`
    record, with where it is; a problem names its row and field."""
    from firstfault.catalog.tableschema import validate

    data = _document(name)
    rows = data.get(key) if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise CatalogTableError(f"catalog/{name}: `{key}` must be a list")
    for i, raw in enumerate(rows):
        where = f"catalog/{name}: {key}[{i}]"
        yield where, cast(R, validate(row, raw, where))


def _table(name: str, key: str, row: type[C]) -> Mapping[int, C]:
    """Rows of catalog/<name> under `key`, by code; each problem names its row and field."""
    table: dict[int, C] = {}
    for where, item in _rows(name, key, row):
        if item.code in table:
            raise CatalogTableError(f"{where}: duplicate code {item.code}")
        table[item.code] = item
    return MappingProxyType(table)


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
def nccl_result_table() -> Mapping[int, NcclResultInfo]:
    """NCCL result codes of catalog/cuda.yaml by code."""
    return _table("cuda.yaml", "nccl_results", NcclResultInfo)


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


class NvmlErrorInfo(NamedTuple):
    code: int
    name: str
    message: str
    nvml_class: NvmlClass
    aliases: tuple[str, ...] = ()


class NcclTransportInfo(NamedTuple):
    file: str  # a file name, or a prefix ending in `*`
    transport: str


class NcclTransportName(NamedTuple):
    name: str  # the words NCCL's own messages name the transport by
    transport: str


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def nvml_table() -> Mapping[int, NvmlErrorInfo]:
    """NVML / nvidia-smi errors of catalog/platform.yaml by code."""
    return _table("platform.yaml", "nvml_errors", NvmlErrorInfo)


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


class CompletionStatus(NamedTuple):
    """One work-completion status in one stack's numbering; `same_as` rows (mlx5) take the ibv row's class."""

    stack: CompletionStack
    code: int
    name: str  # IBV_WC_X, MLX5_CQE_SYNDROME_X, EFA_IO_COMP_STATUS_X
    wc_class: IbWcClass | None = None
    same_as: int | None = None  # the ibv status this one reports (mlx5 syndromes)
    texts: tuple[str, ...] = ()  # the stack's words for it (extract/verbs.py)


class AsyncEvent(NamedTuple):
    """An RDMA adapter's asynchronous event (enum ibv_event_type) and the words ibv_event_type_str() gives it."""

    code: int
    name: str  # IBV_EVENT_X
    text: str
    means: AsyncMeans


class PeerStatus(NamedTuple):
    """A stack's words for a peer that stopped answering or went away."""

    stack: PeerStack
    name: str
    means: PeerMeans
    texts: tuple[str, ...]


class LocalStatus(NamedTuple):
    """A stack's words for its node, as the job set it up, lacking what it needs (the job's own set-up)."""

    stack: LocalStack
    name: str
    texts: tuple[str, ...]
    host_label: str | None = None  # the label of the help text's line that names the node (`Host:`), if any


class TransportTable(NamedTuple):
    """catalog/transport.yaml, validated: completion statuses, adapter async events, peer and local statuses
    (kept in the cache)."""

    completions: tuple[CompletionStatus, ...]  # every row with its class (an mlx5 row has its ibv status's)
    async_events: tuple[AsyncEvent, ...]
    peers: tuple[PeerStatus, ...]
    local: tuple[LocalStatus, ...] = ()


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
            row = row._replace(wc_class=ref.wc_class)
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
        local.append(item)
    return TransportTable(tuple(completions), events, peers, tuple(local))


@lru_cache(maxsize=1)
@_kept("transport.yaml")
def libfabric_errnos() -> tuple[str, ...]:
    """The errno names libfabric defines as its own error numbers (catalog/transport.yaml `libfabric_errnos`)."""
    return _strings("transport.yaml", "libfabric_errnos")


@lru_cache(maxsize=1)
def ib_wc_status_table() -> Mapping[int, CompletionStatus]:
    """ibverbs work-completion statuses (enum ibv_wc_status) by code: catalog/transport.yaml's ibv rows."""
    return MappingProxyType({r.code: r for r in transport_table().completions if r.stack == "ibv"})


class CperSeverity(NamedTuple):
    text: str  # cper_severity_str()
    severity: HostSeverity


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def cper_severities() -> Mapping[str, HostSeverity]:
    """The CPER severity a GHES record names (`event severity: recoverable`) -> host.mce's severity."""
    return MappingProxyType({item.text: item.severity for _, item in _rows("platform.yaml", "cper_severities",
                                                                           CperSeverity)})


class FirmwareMemoryEvent(NamedTuple):
    text: str  # the words of a BMC's or firmware's event log for a memory error
    severity: HostSeverity


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def firmware_memory_events() -> tuple[FirmwareMemoryEvent, ...]:
    """A server event log's memory-error words -> host.mce's severity, longest first (catalog/platform.yaml)."""
    rows = [item for _, item in _rows("platform.yaml", "firmware_memory_events", FirmwareMemoryEvent)]
    return tuple(sorted(rows, key=lambda r: (-len(r.text), r.text)))


class IpmiBusEvent(NamedTuple):
    text: str
    severity: IpmiSeverity


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def ipmi_bus_events() -> tuple[IpmiBusEvent, ...]:
    """BMC Critical Interrupt event texts -> AER severity (catalog/platform.yaml)."""
    return tuple(item for _, item in _rows("platform.yaml", "ipmi_bus_events", IpmiBusEvent))


# --------------------------------------------------------------------------
# Exceptions, status words, errno and object-store codes (catalog/exceptions.yaml)
# --------------------------------------------------------------------------


class ExceptionClassInfo(NamedTuple):
    match: str  # `pkg.mod.Name`, `pkg.*`, `*Suffix`; without a dot, the class's own name
    family: ExceptionFamily
    message: str | None = None  # a regex the message must hold a match of
    status: str | None = None  # the status word the class stands for (TensorFlow's errors_impl classes)
    logged: tuple[str, ...] = ()  # the message decides in a line of its own too; words such a line holds


class StatusWordInfo(NamedTuple):
    word: str  # RESOURCE_EXHAUSTED, UNAVAILABLE, ...
    family: ExceptionFamily
    texts: tuple[str, ...] = ()  # other spellings (TensorFlow 1.x: `Unavailable`, `Deadline Exceeded`)
    on_write: Literal["storage"] | None = None  # what it is about a file being written (its message a path)


class ErrnoInfo(NamedTuple):
    name: str  # ENOSPC, EADDRINUSE, ...
    side: ErrnoSide
    fs: str | None = None  # the kind of file system the errno itself implies (ENOTCONN: a FUSE mount's daemon gone)
    network_only: bool = False  # the set-up side only on a bind / listen / socket (EACCES)
    transport_only: bool = False  # the set-up side only in a transport's own report (ENOMEM pinning memory)


class ObjectStoreCodeInfo(NamedTuple):
    code: str  # SlowDown, NoSuchKey, 429, ...
    side: StoreSide


def _unique(name: str, key: str, row: type[R], field: str) -> tuple[R, ...]:
    """Rows of catalog/<name> under `key` in order; two rows with one `field` value are a problem."""
    out: list[R] = []
    seen: set[object] = set()
    for where, item in _rows(name, key, row):
        value = getattr(item, field)
        if value in seen:
            raise CatalogTableError(f"{where}: duplicate {field} {value!r}")
        seen.add(value)
        out.append(item)
    return tuple(out)


@lru_cache(maxsize=1)
@_kept("exceptions.yaml")
def exception_class_table() -> tuple[ExceptionClassInfo, ...]:
    """Exception classes -> family, in the order they are tried (catalog/exceptions.yaml)."""
    return tuple(item for _, item in _rows("exceptions.yaml", "exception_classes", ExceptionClassInfo))


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
def errno_table() -> Mapping[str, ErrnoInfo]:
    """errno names -> whose side the error is on (catalog/exceptions.yaml)."""
    return MappingProxyType({r.name: r for r in _unique("exceptions.yaml", "errnos", ErrnoInfo, "name")})


@lru_cache(maxsize=1)
@_kept("exceptions.yaml")
def object_store_code_table() -> Mapping[str, ObjectStoreCodeInfo]:
    """Object-store error codes and HTTP statuses -> side (catalog/exceptions.yaml)."""
    return MappingProxyType({r.code: r for r in _unique("exceptions.yaml", "object_store_codes",
                                                        ObjectStoreCodeInfo, "code")})


# --------------------------------------------------------------------------
# Why schedulers and orchestrators end jobs (catalog/scheduler.yaml)
# --------------------------------------------------------------------------


class SchedReason(NamedTuple):
    reason: SchedReasonName
    state: ReasonState  # the job state a record ended for this reason gets


class SchedWord(NamedTuple):
    scheduler: SchedulerName
    word: str
    reason: SchedReasonName | None
    field: ReasonField = "reason"
    text: bool = False  # also a reason where it stands as a whole word in a job's own output


class SchedText(NamedTuple):
    scheduler: SchedulerName
    text: str  # `{n}` is a number with an optional unit, `{host}` the host the phrase names
    reason: SchedReasonName | None  # None: understood, names no cause
    lines: bool = True  # False: the line form is another extractor's; only the record readers use it
    resource: str | None = None  # the node resource a kubelet eviction names


class SchedTables(NamedTuple):
    reasons: tuple[SchedReason, ...]
    words: tuple[SchedWord, ...]
    texts: tuple[SchedText, ...]


def _phrase_inside(outer: str, inner: str) -> bool:
    """Whether `inner` can match in a text where `outer` does, starting after `outer`'s start: inside it, or
    overlapping its end (whole-word edges honoured; placeholders compared as placeholders)."""
    a, b = outer.replace("{host}", "{n}"), inner.replace("{host}", "{n}")
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
        if t.text.count("{host}") > 1:
            raise CatalogTableError(f"{where}.text: at most one {{host}}")
        for other in texts:
            if t.text == other.text:
                raise CatalogTableError(f"{where}: duplicate text {t.text!r}")
            differ = (t.reason, t.resource) != (other.reason, other.resource)
            if differ and (_phrase_inside(t.text, other.text) or _phrase_inside(other.text, t.text)):
                raise CatalogTableError(f"{where}: {t.text!r} and {other.text!r} can match one inside the other and"
                                        " say different things; a refining phrase extends the other at its end")
        texts.append(t)
    return SchedTables(tuple(reasons.values()), tuple(words), tuple(texts))


# --------------------------------------------------------------------------
# The InfiniBand fabric (catalog/fabric/perfquery.yaml: a reading table, outside the catalog's sha256, which
# covers the files that judge: catalog/*.yaml and the rules)
# --------------------------------------------------------------------------


class PerfqueryCounter(NamedTuple):
    counter: str  # as perfquery prints it: SymbolErrorCounter
    metric: str  # the node_exporter InfiniBand collector's name: node_infiniband_symbol_error_total


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
