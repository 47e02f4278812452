"""Response models of the Service's read endpoints (shared with firstfault.client)."""

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
    """What the Blueprint needs to drop lines no extractor can match."""

    words: list[str] = Field(description="a line that contains none of these literal words can be dropped")
    by_source: dict[str, list[str]] = Field(description="the same, per log source kind")
    catalog: CatalogRef


class Health(BaseModel):
    status: str
    catalog: CatalogRef | None = None
