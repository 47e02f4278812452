"""The metric condition language: catalog/metrics.yaml's conditions (which metric, which test, which threshold).

The PromQL connector asks Prometheus for exactly these metrics (the names the
Service publishes); metrics.py evaluates them over a file's series.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from typing import Annotated, Literal

import yaml
from msgspec import Meta

from firstfault import yamlio
from firstfault.records import FrozenRecord, Record, ValidationError, convert, problems

# --------------------------------------------------------------------------
# The condition catalog
# --------------------------------------------------------------------------

ConditionType = Literal["increase", "nonzero", "bitmask", "change", "not_equal"]


class MetricCatalogError(ValueError):
    """catalog/metrics.yaml (or a replacement text) is not a valid condition catalog."""


class MetricCondition(FrozenRecord, kw_only=True, frozen=True):
    """One condition of catalog/metrics.yaml; also what the PromQL connector turns into a query."""

    name: Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]*$")]
    metrics: Annotated[tuple[str, ...], Meta(min_length=1)]
    type: ConditionType
    description: Annotated[str, Meta(min_length=1)]
    threshold: float = 0.0
    mask: int | None = None
    expected: float | None = None
    also_emit: Literal["gpu.xid"] | None = None

    def __post_init__(self) -> None:
        for name in self.metrics:
            if not _METRIC_NAME_RE.fullmatch(name):
                raise ValueError(f"metrics: not a metric name: {name!r}")
        if self.type == "bitmask" and (self.mask is None or self.mask <= 0):
            raise ValueError("type bitmask needs a positive mask")
        if self.type != "bitmask" and self.mask is not None:
            raise ValueError(f"mask is only for type bitmask, not {self.type}")
        if self.type == "not_equal" and self.expected is None:
            raise ValueError("type not_equal needs expected")
        if self.type != "not_equal" and self.expected is not None:
            raise ValueError(f"expected is only for type not_equal, not {self.type}")
        if self.also_emit == "gpu.xid" and self.type != "change":
            raise ValueError("also_emit gpu.xid needs type change (the gauge holds the Xid code)")


class _Catalog(Record, kw_only=True):
    version: int
    conditions: list[MetricCondition]


_METRIC_NAME_RE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def load_metric_conditions(text: str, origin: str = "catalog/metrics.yaml") -> list[MetricCondition]:
    """Parse and validate a condition catalog; errors name the key path."""
    try:
        raw = yamlio.load(text)
    except yaml.YAMLError as exc:
        raise MetricCatalogError(f"{origin}: not valid YAML: {exc}") from exc
    try:
        catalog = convert(raw, _Catalog)
    except ValidationError as exc:
        raise MetricCatalogError(problems(exc, text, origin)[0]) from exc
    seen: set[str] = set()
    for i, cond in enumerate(catalog.conditions):
        if cond.name in seen:
            raise MetricCatalogError(f"{origin}: conditions.{i}.name: duplicate condition {cond.name!r}")
        seen.add(cond.name)
    return catalog.conditions


@lru_cache(maxsize=1)
def _shipped_conditions() -> tuple[MetricCondition, ...]:
    text = resources.files("firstfault").joinpath("catalog/metrics.yaml").read_text(encoding="utf-8")
    return tuple(load_metric_conditions(text))


def metric_conditions() -> list[MetricCondition]:
    """The shipped conditions (loaded and validated once)."""
    return list(_shipped_conditions())


def metric_names(conditions: Iterable[MetricCondition] | None = None) -> list[str]:
    """The metric names the conditions read (the shipped catalog's by default), sorted.

    This is the metrics half of the catalog's prefilter: the Service publishes
    it (/v1/catalog/prefilter) and a Blueprint queries Prometheus for these
    names and no others, so both read the same metrics whatever their versions.
    """
    conds = metric_conditions() if conditions is None else conditions
    return sorted({m for c in conds for m in c.metrics})


def conditions_by_metric(conditions: Iterable[MetricCondition]) -> dict[str, list[MetricCondition]]:
    index: dict[str, list[MetricCondition]] = {}
    for cond in conditions:
        for metric in cond.metrics:
            index.setdefault(metric, []).append(cond)
    return index
