"""What the Service and its clients both read: response models and the problem body of every error.

The Service (service/) writes these; the client (client.py) and the Blueprint read them. Neither side
imports the other.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from firstfault.model import CatalogRef


class RuleInfo(BaseModel):
    id: str
    title: str
    status: str
    role: str
    domain: str | None
    category: str
    version: int


class CatalogInfo(BaseModel):
    version: str
    sha256: str
    rules: list[RuleInfo]


class Prefilter(BaseModel):
    """What the Blueprint needs to prefilter: the words a log line must hold, the metric names to fetch."""

    words: list[str] = Field(description="a line that contains none of these literal words can be dropped")
    by_source: dict[str, list[str]] = Field(description="the same, per log source kind")
    metrics: list[str] | None = Field(
        default=None,
        description="the metric names the catalog's metric conditions read: a Blueprint queries Prometheus "
                    "for these and no others (absent from a Service older than this field)")
    catalog: CatalogRef


class Health(BaseModel):
    status: str
    catalog: CatalogRef | None = None


class ProblemDetail(BaseModel):
    loc: str = Field(description="JSON path of the bad field, e.g. lines[3].time ('' for the whole record)")
    msg: str
    type: str | None = None
    line: int | None = Field(default=None, description="NDJSON: the 1-based line of the record")


class ProblemBody(BaseModel):
    """Every error answer of /v1/*."""

    error: str = Field(description="a short code: body_too_large, invalid_request, unsupported_media_type, ...")
    message: str
    detail: list[ProblemDetail] = Field(default_factory=list)
