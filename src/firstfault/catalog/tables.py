"""The vendor tables shipped beside the rules: NVIDIA Xids, NVSwitch SXids, CUDA errors, NCCL results.

The data lives in `xid.yaml` / `sxid.yaml` / `cuda.yaml` (vendor knowledge is data, not
code branches); this module only reads and validates it, once, on first use.
"""

from collections.abc import Callable, Mapping
from contextlib import suppress
from functools import lru_cache, wraps
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeVar, cast, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from firstfault import yamlio

XidClass = Literal[
    "memory", "memory_info", "nvlink", "nvlink5", "fallen_off_bus", "firmware", "pcie", "app", "sympathetic",
    "recovery", "informational", "other",
]
SxidClass = Literal["fatal", "nonfatal", "always_fatal", "other"]
XID_CLASSES: frozenset[str] = frozenset(get_args(XidClass))
SXID_CLASSES: frozenset[str] = frozenset(get_args(SxidClass))


class CatalogTableError(ValueError):
    """A shipped table is malformed: a packaging bug, never user input."""


class _Row(BaseModel):
    # defer_build: the rows of a start-up come from the on-disk cache (_kept), not through validation.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    code: int = Field(gt=0)


class XidInfo(_Row):
    mnemonic: str = Field(min_length=1)
    description: str = Field(min_length=1)
    immediate: str | None = None  # NVIDIA immediate resolution bucket
    investigatory: str | None = None  # NVIDIA investigatory resolution bucket
    xid_class: XidClass = Field(alias="class")  # firstfault's attribution class (see the header of xid.yaml)
    legacy_causes: tuple[str, ...] = ()


class SxidInfo(_Row):
    name: str = Field(min_length=1)
    sxid_class: SxidClass = Field(alias="class")


CudaClass = Literal[
    "illegal_address", "misaligned_address", "illegal_instruction", "device_assert", "invalid_pc",
    "hardware_stack", "oom", "ecc", "nvlink", "driver", "system_not_ready", "unavailable", "launch_failure",
    "launch_timeout", "deinitialized", "config", "other",
]


class CudaErrorInfo(_Row):
    runtime: str = Field(pattern=r"^cudaError[A-Z]\w*$")
    driver: str | None = Field(default=None, pattern=r"^CUDA_ERROR_[A-Z0-9_]+$")
    message: str = Field(min_length=3)
    aliases: tuple[str, ...] = ()  # other texts that name the same error (PyTorch's, old CUDA's)
    cuda_class: CudaClass = Field(alias="class")


class NcclResultInfo(_Row):
    name: str = Field(pattern=r"^nccl[A-Z]\w*$")
    phrases: tuple[str, ...] = ()


R = TypeVar("R", bound=_Row)
T = TypeVar("T")


def _kept(file: str) -> Callable[[Callable[[], T]], Callable[[], T]]:
    """A table built from catalog/<file> and validated once, then kept in the on-disk cache (pickled,
    firstfault/cache.py) by the sha256 of the file, of this module and of the pydantic that validated it:
    a start-up reads the rows back instead of validating them (and never builds their validators).
    A table that cannot be pickled, or an entry that does not load, is built again."""

    def wrap(build: Callable[[], T]) -> Callable[[], T]:
        @wraps(build)
        def load() -> T:
            import pickle
            import sys

            import pydantic

            from firstfault import cache

            raw = resources.files("firstfault").joinpath("catalog", file).read_bytes()
            name = "tables-" + cache.key(build.__name__, file, raw, _module_source(), sys.version,
                                         pydantic.VERSION) + ".pickle"
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
def _module_source() -> bytes:
    return Path(__file__).read_bytes()


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

    from firstfault import cache

    raw = resources.files("firstfault").joinpath("catalog", name).read_bytes()
    entry = "table-" + cache.key(name, raw, sys.version, yaml.__version__, str(yamlio.SafeLoader)) + ".marshal"
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


def _table(name: str, key: str, row: type[R]) -> Mapping[int, R]:
    """Rows of catalog/<name> under `key`, by code; each problem names its row and field."""
    data = _document(name)
    rows = data.get(key) if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise CatalogTableError(f"catalog/{name}: `{key}` must be a list")
    table: dict[int, R] = {}
    for i, raw in enumerate(rows):
        where = f"catalog/{name}: {key}[{i}]"
        try:
            item = row.model_validate(raw)
        except ValidationError as exc:
            problems = [f"{where}.{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors()]
            raise CatalogTableError("; ".join(problems)) from exc
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


class NvmlErrorInfo(_Row):
    name: str = Field(pattern=r"^[A-Z][A-Z0-9_]+$")
    message: str = Field(min_length=3)
    aliases: tuple[str, ...] = ()
    nvml_class: NvmlClass = Field(alias="class")


class NcclTransportInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    file: str = Field(min_length=3)  # a file name, or a prefix ending in `*`
    transport: str = Field(pattern=r"^[a-z][a-z0-9_]*$")


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
def nvml_anchors() -> tuple[str, ...]:
    """Words before which a line reports an NVML result (catalog/platform.yaml)."""
    return _strings("platform.yaml", "nvml_anchors")


@lru_cache(maxsize=1)
def nvml_device_anchors() -> tuple[str, ...]:
    """Anchors of NVML messages about one named GPU (catalog/platform.yaml)."""
    return _strings("platform.yaml", "nvml_device_anchors")


@lru_cache(maxsize=1)
def nvidia_smi_field_errors() -> tuple[str, ...]:
    """What nvidia-smi prints in a table cell it could not read (catalog/platform.yaml)."""
    return _strings("platform.yaml", "nvidia_smi_field_errors")


@lru_cache(maxsize=1)
def driver_libraries() -> tuple[str, ...]:
    """File-name prefixes of the NVIDIA driver's user-space libraries."""
    return _strings("platform.yaml", "driver_libraries")


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def nccl_transports() -> Mapping[str, str]:
    """NCCL source file (`transport/nvls.cc`, or a prefix `nccl_net_ofi*`) -> transport / subsystem name."""
    data = _document("platform.yaml")
    rows = data.get("nccl_transports") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise CatalogTableError("catalog/platform.yaml: `nccl_transports` must be a list")
    out: dict[str, str] = {}
    for i, raw in enumerate(rows):
        try:
            item = NcclTransportInfo.model_validate(raw)
        except ValidationError as exc:
            problems = [f"catalog/platform.yaml: nccl_transports[{i}].{'.'.join(str(x) for x in e['loc'])}: "
                        f"{e['msg']}" for e in exc.errors()]
            raise CatalogTableError("; ".join(problems)) from exc
        out[item.file] = item.transport
    return MappingProxyType(out)


IbWcClass = Literal["path", "local_access", "flush", "remote_access", "remote", "local", "fatal", "other"]


class IbWcStatusInfo(_Row):
    name: str = Field(pattern=r"^IBV_WC_[A-Z_]+$")
    wc_class: IbWcClass = Field(alias="class")
    texts: tuple[str, ...] = ()  # other verbs users' wording of the status (extract/verbs.py)


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def ib_wc_status_table() -> Mapping[int, IbWcStatusInfo]:
    """ibverbs work-completion statuses of catalog/platform.yaml by code."""
    return _table("platform.yaml", "ib_wc_status", IbWcStatusInfo)


class IpmiBusEvent(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    text: str = Field(min_length=3)
    severity: Literal["uncorrected_fatal", "uncorrected_nonfatal", "corrected"]


@lru_cache(maxsize=1)
@_kept("platform.yaml")
def ipmi_bus_events() -> tuple[IpmiBusEvent, ...]:
    """BMC Critical Interrupt event texts -> AER severity (catalog/platform.yaml)."""
    data = _document("platform.yaml")
    rows = data.get("ipmi_bus_events") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise CatalogTableError("catalog/platform.yaml: `ipmi_bus_events` must be a list")
    out: list[IpmiBusEvent] = []
    for i, raw in enumerate(rows):
        try:
            out.append(IpmiBusEvent.model_validate(raw))
        except ValidationError as exc:
            problems = [f"catalog/platform.yaml: ipmi_bus_events[{i}].{'.'.join(str(x) for x in e['loc'])}: "
                        f"{e['msg']}" for e in exc.errors()]
            raise CatalogTableError("; ".join(problems)) from exc
    return tuple(out)
