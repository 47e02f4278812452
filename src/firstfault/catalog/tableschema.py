"""The vendor tables' schema: pydantic models that validate the rows of xid.yaml, sxid.yaml, cuda.yaml,
platform.yaml, transport.yaml, exceptions.yaml and scheduler.yaml.

Imported only to validate a table (on a miss of the on-disk cache, catalog/tables.py `_kept`): the
tables hold the records (named tuples) of catalog/tables.py of the same names, built from the validated
rows (`validate` is given the record's class; the vocabularies both read are in catalog/vocab.py). Each
model here has a record with its fields (tests/test_records.py holds them together); the constraints live
here only.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

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
    check_regex,
)


class _Plain(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


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


class NcclTransportInfo(_Plain):
    file: str = Field(min_length=3)
    transport: str = Field(pattern=r"^[a-z][a-z0-9_]*$")


class NcclTransportName(_Plain):
    name: str = Field(min_length=3)
    transport: str = Field(pattern=r"^[a-z][a-z0-9_]*$")


class CompletionStatus(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    stack: CompletionStack
    code: int = Field(ge=0)
    name: str = Field(pattern=r"^[A-Z][A-Z0-9_]+$")
    wc_class: IbWcClass | None = Field(default=None, alias="class")
    same_as: int | None = Field(default=None, ge=0)
    texts: tuple[str, ...] = ()


class AsyncEvent(_Plain):
    code: int = Field(ge=0)
    name: str = Field(pattern=r"^IBV_EVENT_[A-Z_]+$")
    text: str = Field(min_length=3)
    means: AsyncMeans


class PeerStatus(_Plain):
    stack: PeerStack
    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]+$")
    means: PeerMeans
    texts: tuple[str, ...] = Field(min_length=1)


class LocalStatus(_Plain):
    stack: LocalStack
    name: str = Field(pattern=r"^[a-z][a-z0-9_]+$")
    texts: tuple[str, ...] = Field(min_length=1)
    host_label: str | None = Field(default=None, pattern=r"^[A-Z][A-Za-z ]*:$")


class CperSeverity(_Plain):
    text: str = Field(pattern=r"^[a-z]+$")
    severity: HostSeverity


class FirmwareMemoryEvent(_Plain):
    text: str = Field(min_length=5)
    severity: HostSeverity


class IpmiBusEvent(_Plain):
    text: str = Field(min_length=3)
    severity: IpmiSeverity


class PerfqueryCounter(_Plain):
    counter: str = Field(pattern=r"^[A-Z][A-Za-z0-9]+$")
    metric: str = Field(pattern=r"^node_infiniband_[a-z0-9_]+$")


def regex(v: str | None) -> str | None:
    """A field that must be a regular expression (vocab.check_regex), as a pydantic field validator."""
    if v is not None:
        check_regex(v)
    return v


class ExceptionClassInfo(_Plain):
    match: str = Field(pattern=r"^(?:\*|\*?[A-Za-z_][\w.]*(?:\.\*)?)$")
    family: ExceptionFamily
    message: str | None = Field(default=None, min_length=3)
    status: str | None = Field(default=None, pattern=r"^[A-Z][A-Z_]+$")
    logged: tuple[str, ...] = ()

    _message_is_a_regex = field_validator("message")(regex)

    @model_validator(mode="after")
    def _logged_is_a_message_row(self) -> "ExceptionClassInfo":
        # a line of its own has no class: only a row about the message alone can read one
        if self.logged and (self.match != "*" or self.message is None):
            raise ValueError("`logged` needs `match: \"*\"` and a `message`")
        if any(len(w) < 6 for w in self.logged):
            raise ValueError("a `logged` word is a prefilter word: 6 characters at least")
        return self


class StatusWordInfo(_Plain):
    word: str = Field(pattern=r"^[A-Z][A-Z_]+$")
    family: ExceptionFamily
    texts: tuple[str, ...] = ()
    on_write: Literal["storage"] | None = None


class ErrnoInfo(_Plain):
    name: str = Field(pattern=r"^E[A-Z0-9]+$")
    side: ErrnoSide
    fs: str | None = Field(default=None, pattern=r"^[a-z][a-z_]*$")
    network_only: bool = False
    transport_only: bool = False

    @model_validator(mode="after")
    def _scoped_setup(self) -> "ErrnoInfo":
        if (self.network_only or self.transport_only) and self.side != "setup":
            raise ValueError("network_only / transport_only narrow the setup side only")
        if self.network_only and self.transport_only:
            raise ValueError("an errno is either network_only or transport_only")
        return self


class ObjectStoreCodeInfo(_Plain):
    code: str = Field(pattern=r"^[A-Za-z0-9]+$")
    side: StoreSide


class SchedReason(_Plain):
    reason: SchedReasonName
    state: ReasonState


class SchedWord(_Plain):
    scheduler: SchedulerName
    word: str = Field(pattern=r"^[A-Za-z][\w\-]*$")
    reason: SchedReasonName | None
    field: ReasonField = "reason"
    text: bool = False


class SchedText(_Plain):
    scheduler: SchedulerName
    # `{n}` (a number) and `{host}` (at most one) are the placeholders; no other brace
    text: str = Field(min_length=5, pattern=r"^(?:[^{}]|\{n\}|\{host\})+$")
    reason: SchedReasonName | None
    lines: bool = True
    resource: str | None = Field(default=None, min_length=2)


MODELS: tuple[type[BaseModel], ...] = (XidInfo, SxidInfo, CudaErrorInfo, NcclResultInfo, NvmlErrorInfo,
                                       NcclTransportInfo, CompletionStatus, AsyncEvent, PeerStatus, LocalStatus,
                                       CperSeverity, FirmwareMemoryEvent, IpmiBusEvent, ExceptionClassInfo,
                                       StatusWordInfo, ErrnoInfo, ObjectStoreCodeInfo, SchedReason, SchedWord,
                                       SchedText, PerfqueryCounter, NcclTransportName)


def validate(record: type[Any], raw: Any, where: str) -> Any:
    """`raw` validated by the model of `record`'s name, as a `record`; a problem raises CatalogTableError
    naming `where`, and each field at fault."""
    model: type[BaseModel] = globals()[record.__name__]
    try:
        item = model.model_validate(raw)
    except ValidationError as exc:
        problems = [f"{where}{''.join(f'.{x}' for x in e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise CatalogTableError("; ".join(problems)) from exc
    return record(**{name: getattr(item, name) for name in model.model_fields})
