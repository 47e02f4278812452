"""What the Service and its clients both read: response records and the problem body of every error.

The Service (service/) writes these; the client (client.py) and the Blueprint read them. Neither side
imports the other. They are `records.Record`s: the Service writes them with `records.encode`, a client
reads them with `records.decode`, and the OpenAPI document describes them with `records.schemas`.
"""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import Meta

from firstfault.model import CatalogRef
from firstfault.records import Record, field


class RuleInfo(Record, kw_only=True):
    id: str
    title: str
    status: str
    role: str
    domain: str | None
    category: str
    version: int


class CatalogInfo(Record, kw_only=True):
    version: str
    sha256: str
    rules: list[RuleInfo]


class Prefilter(Record, kw_only=True):
    """What the Blueprint needs to prefilter: the words a log line must hold, the metric names to fetch."""

    words: Annotated[list[str], Meta(description="a line that contains none of these literal words can be dropped")]
    by_source: Annotated[dict[str, list[str]], Meta(description="the same, per log source kind")]
    metrics: Annotated[list[str] | None, Meta(
        description="the metric names the catalog's metric conditions read: a Blueprint queries Prometheus "
                    "for these and no others (absent from a Service older than this field)")] = None
    catalog: CatalogRef


class Health(Record, kw_only=True):
    status: str
    catalog: CatalogRef | None = None


class ProblemDetail(Record, kw_only=True):
    loc: Annotated[str, Meta(description="JSON path of the bad field, e.g. lines[3].time ('' for the whole record)")]
    msg: str
    type: str | None = None
    line: Annotated[int | None, Meta(description="NDJSON: the 1-based line of the record")] = None


class ProblemBody(Record, kw_only=True):
    """Every error answer of /v1/*."""

    error: Annotated[str, Meta(description="a short code: body_too_large, invalid_request, unsupported_media_type, "
                                           "...")]
    message: str
    detail: list[ProblemDetail] = field(default_factory=list)


# The records the Service's OpenAPI document describes as components (service/app.py).
RESPONSE_RECORDS: tuple[type[Record], ...] = (CatalogInfo, Prefilter, Health, ProblemBody)


def described(record: type[Record], description: str, many: bool = False) -> dict[str, Any]:
    """An OpenAPI response whose JSON body is `record` (or a list of them), by its component's name: the
    Service's openapi() adds the records' schemas as components (records.schemas)."""
    ref = {"$ref": f"#/components/schemas/{record.__name__}"}
    return {"description": description,
            "content": {"application/json": {"schema": {"type": "array", "items": ref} if many else ref}}}
