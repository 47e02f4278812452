"""The vendor tables shipped beside the rules: NVIDIA Xids, NVSwitch SXids, CUDA errors, NCCL results.

The data lives in `xid.yaml` / `sxid.yaml` / `cuda.yaml` (vendor knowledge is data, not
code branches); this module only reads and validates it, once, on first use. The rows are the records
below; the pydantic models that validate them are in catalog/tableschema.py, imported only when a
table is built from its YAML, not when it is read back from the on-disk cache.
"""

from collections.abc import Callable, Iterator, Mapping
from contextlib import suppress
from functools import lru_cache, wraps
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, Protocol, TypeVar, cast, get_args

XidClass = Literal[
    "memory", "memory_info", "nvlink", "nvlink5", "fallen_off_bus", "firmware", "pcie", "app", "sympathetic",
    "recovery", "informational", "other",
]
SxidClass = Literal["fatal", "nonfatal", "always_fatal", "other"]
XID_CLASSES: frozenset[str] = frozenset(get_args(XidClass))
SXID_CLASSES: frozenset[str] = frozenset(get_args(SxidClass))


class CatalogTableError(ValueError):
    """A shipped table is malformed: a packaging bug, never user input."""


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


CudaClass = Literal[
    "illegal_address", "misaligned_address", "illegal_instruction", "device_assert", "invalid_pc",
    "hardware_stack", "oom", "ecc", "nvlink", "driver", "system_not_ready", "unavailable", "launch_failure",
    "launch_timeout", "deinitialized", "config", "other",
]


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
    """A table built from catalog/<file> and validated once, then kept in the on-disk cache (pickled,
    firstfault/cache.py) by the sha256 of the file, of this module and its schema and of the pydantic that
    validated it: a start-up reads the records back instead of parsing and validating them (and imports
    neither yaml nor pydantic). A table that cannot be pickled, or an entry that does not load, is built
    again."""

    def wrap(build: Callable[[], T]) -> Callable[[], T]:
        @wraps(build)
        def load() -> T:
            import pickle
            import sys

            from firstfault import cache

            raw = resources.files("firstfault").joinpath("catalog", file).read_bytes()
            name = "tables-" + cache.key(build.__name__, file, raw, *_module_source(), sys.version,
                                         cache.stamp("pydantic", "version.py")) + ".pickle"
            data = cache.get(name)
            if data is not None:
                try:
                    kind, value = pickle.loads(data)  # our own entry, in a directory only this user writes
                    return cast(T, MappingProxyType(value) if kind == "mapping" else value)
                except Exception:  # a corrupt or foreign entry: build it again
                    pass
            table = build()
            entry = ("mapping", dict(table)) if isinstance(table, MappingProxyType) else ("value", table)
            with suppress(Exception):  # the cache is an optimisation only
                cache.put(name, pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL))
            return table

        return load

    return wrap


@lru_cache(maxsize=1)
def _module_source() -> tuple[bytes, bytes]:
    here = Path(__file__)
    return here.read_bytes(), here.with_name("tableschema.py").read_bytes()


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

NvmlClass = Literal["driver", "no_devices", "lost", "unresponsive", "unknown"]


class NvmlErrorInfo(NamedTuple):
    code: int
    name: str
    message: str
    nvml_class: NvmlClass
    aliases: tuple[str, ...] = ()


class NcclTransportInfo(NamedTuple):
    file: str  # a file name, or a prefix ending in `*`
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


IbWcClass = Literal["path", "local_access", "flush", "remote_access", "remote", "local", "fatal", "other"]


class IbWcStatusInfo(NamedTuple):
    code: int
    name: str  # IBV_WC_X
    wc_class: IbWcClass
    texts: tuple[str, ...] = ()  # other verbs users' wording of the status (extract/verbs.py)


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def ib_wc_status_table() -> Mapping[int, IbWcStatusInfo]:
    """ibverbs work-completion statuses of catalog/platform.yaml by code."""
    return _table("platform.yaml", "ib_wc_status", IbWcStatusInfo)


IpmiSeverity = Literal["uncorrected_fatal", "uncorrected_nonfatal", "corrected"]


class IpmiBusEvent(NamedTuple):
    text: str
    severity: IpmiSeverity


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def ipmi_bus_events() -> tuple[IpmiBusEvent, ...]:
    """BMC Critical Interrupt event texts -> AER severity (catalog/platform.yaml)."""
    return tuple(item for _, item in _rows("platform.yaml", "ipmi_bus_events", IpmiBusEvent))
