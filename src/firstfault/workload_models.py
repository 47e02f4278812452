"""The pydantic side of workload.yaml: what validates a document the fast path in bundle.py did not accept.

These classes are the definition of a valid workload.yaml (types, literals, time and zone checks) and
of its error messages and JSON schema. Code outside bundle.py uses the records of `firstfault.bundle`
(same names, same fields); a record validates through its class here, which nests the models of this
module (`window`, `workload`, `sources`): bundle.py turns them into records, and this module does not
import it. Importing this module imports pydantic: only a document that needs checking, a record built
by hand, a dump or a schema comes here.
"""

from datetime import datetime
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationInfo, field_validator

from firstfault.formats import FORMATS
from firstfault.timeparse import TimeRangeError, parse_rfc3339


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


_TIME = {"format": "date-time"}
_TIME_DOC = "RFC 3339 time, e.g. 2026-11-02T10:00:00Z (no zone: UTC); end may not be before start"


class WindowSpec(_Strict):
    start: Annotated[str, Field(json_schema_extra=_TIME)] | None = Field(default=None, description=_TIME_DOC)
    end: Annotated[str, Field(json_schema_extra=_TIME)] | None = Field(default=None, description=_TIME_DOC)

    @field_validator("start", "end", mode="before")
    @classmethod
    def _rfc3339(cls, v: Any) -> Any:
        if isinstance(v, datetime):  # YAML parses unquoted timestamps itself
            v = v.isoformat()
        if v is not None:
            try:
                parse_rfc3339(str(v))
            except TimeRangeError:
                raise
            except ValueError as exc:
                raise ValueError(f"not an RFC 3339 time: {v!r}") from exc
            return str(v)
        return v

    @field_validator("end")
    @classmethod
    def _after_start(cls, v: str | None, info: ValidationInfo) -> str | None:
        start = info.data.get("start")
        if v is not None and start is not None and parse_rfc3339(v) < parse_rfc3339(start):
            raise ValueError(f"{v!r} is before start {start!r} (reversed window)")
        return v


class WorkloadSpec(_Strict):
    id: str
    attempt: StrictInt = 0
    name: str | None = None
    scheduler: Literal["slurm", "kueue", "static"] = "static"
    window: WindowSpec = Field(default_factory=WindowSpec)
    nodes: list[str] = Field(default_factory=list)
    ranks: dict[str, str | int | list[int]] | None = None
    gpus: dict[str, dict[str, int]] | None = None
    terminal_state: str | None = None
    exit_code: str | None = None
    timezone: str = "UTC"

    @field_validator("id", mode="before")
    @classmethod
    def _id_str(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) else v

    @field_validator("exit_code", mode="before")
    @classmethod
    def _exit_str(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) else v

    @field_validator("timezone")
    @classmethod
    def _tz(cls, v: str) -> str:
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {v!r}") from exc
        return v


class SourceSpec(_Strict):
    kind: Literal["kernel", "syslog", "fabricmanager", "application", "scheduler", "metrics", "flight_recorder",
                  "stack_dump", "fabric"]
    path: str
    rank_prefix: Literal["srun", "none"] = "none"
    format: str | None = None

    @field_validator("format")
    @classmethod
    def _fmt(cls, v: str | None) -> str | None:
        if v is not None and v not in FORMATS:
            raise ValueError(f"unknown format {v!r} (one of {', '.join(sorted(FORMATS))})")
        return v


class WorkloadFile(_Strict):
    apiVersion: Literal["firstfault/v1"]
    workload: WorkloadSpec
    sources: list[SourceSpec] = Field(default_factory=list)
