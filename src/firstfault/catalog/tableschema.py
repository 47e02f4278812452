"""The vendor tables' schema: pydantic models that validate the rows of xid.yaml, sxid.yaml, cuda.yaml and
platform.yaml.

Imported only to validate a table (on a miss of the on-disk cache, catalog/tables.py `_kept`): the
tables hold the records (named tuples) of catalog/tables.py of the same names, built from the validated
rows. Each model here has a record with its fields (tests/test_records.py holds them together); the
constraints live here only.
"""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from firstfault.catalog import tables as records
from firstfault.catalog.tables import CudaClass, IbWcClass, NvmlClass, SxidClass, XidClass


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    code: int = Field(gt=0)


class XidInfo(_Row):
    mnemonic: str = Field(min_length=1)
    description: str = Field(min_length=1)
    immediate: str | None = None
    investigatory: str | None = None
    xid_class: XidClass = Field(alias="class")
    legacy_causes: tuple[str, ...] = ()


class SxidInfo(_Row):
    name: str = Field(min_length=1)
    sxid_class: SxidClass = Field(alias="class")


class CudaErrorInfo(_Row):
    runtime: str = Field(pattern=r"^cudaError[A-Z]\w*$")
    driver: str | None = Field(default=None, pattern=r"^CUDA_ERROR_[A-Z0-9_]+$")
    message: str = Field(min_length=3)
    aliases: tuple[str, ...] = ()
    cuda_class: CudaClass = Field(alias="class")


class NcclResultInfo(_Row):
    name: str = Field(pattern=r"^nccl[A-Z]\w*$")
    phrases: tuple[str, ...] = ()


class NvmlErrorInfo(_Row):
    name: str = Field(pattern=r"^[A-Z][A-Z0-9_]+$")
    message: str = Field(min_length=3)
    aliases: tuple[str, ...] = ()
    nvml_class: NvmlClass = Field(alias="class")


class NcclTransportInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    file: str = Field(min_length=3)
    transport: str = Field(pattern=r"^[a-z][a-z0-9_]*$")


class IbWcStatusInfo(_Row):
    name: str = Field(pattern=r"^IBV_WC_[A-Z_]+$")
    wc_class: IbWcClass = Field(alias="class")
    texts: tuple[str, ...] = ()


class IpmiBusEvent(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    text: str = Field(min_length=3)
    severity: records.IpmiSeverity


class PerfqueryCounter(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    counter: str = Field(pattern=r"^[A-Z][A-Za-z0-9]+$")
    metric: str = Field(pattern=r"^node_infiniband_[a-z0-9_]+$")


MODELS: tuple[type[BaseModel], ...] = (XidInfo, SxidInfo, CudaErrorInfo, NcclResultInfo, NvmlErrorInfo,
                                       NcclTransportInfo, IbWcStatusInfo, IpmiBusEvent, PerfqueryCounter)


def validate(record: type[Any], raw: Any, where: str) -> Any:
    """`raw` validated by the model of `record`'s name, as a `record`; a problem raises CatalogTableError
    naming `where`, and each field at fault."""
    model: type[BaseModel] = globals()[record.__name__]
    try:
        item = model.model_validate(raw)
    except ValidationError as exc:
        problems = [f"{where}.{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise records.CatalogTableError("; ".join(problems)) from exc
    return record(**{name: getattr(item, name) for name in model.model_fields})
