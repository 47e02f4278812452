"""The rule catalog's schema: pydantic models that validate catalog.yaml and the rule files.

Imported only to validate (load_catalog, `firstfault rules check/test`), never by a start-up that reads
the catalog from the on-disk cache: the engine works on the records of engine/rules.py, built from
the validated models by `to_records`. Each model here has a record of the same name and the same fields
(tests/test_records.py holds them together); the constraints live here only.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from firstfault.catalog.tableschema import regex
from firstfault.engine import rules as records
from firstfault.engine.rules import GroupKey, Scalar


class _Strict(BaseModel):
    # defer_build: a validator is built when a catalog is first validated, not when this module loads.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Op(_Strict):
    # `not` is a Python keyword: aliased.
    not_: Scalar | list[Scalar] | None = Field(default=None, alias="not")
    re: str | None = None
    gte: float | None = None
    lte: float | None = None
    exists: bool | None = None
    startswith: str | None = None

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    _re_is_a_regex = field_validator("re")(regex)


Condition = Scalar | list[Scalar] | Op


class Selection(_Strict):
    event: str
    where: dict[str, Condition] = Field(default_factory=dict)
    where_not: dict[str, Condition] = Field(default_factory=dict)


class Explains(_Strict):
    category: str | None = None
    set: str | None = None
    same_node: bool = False


class WithLead(_Strict):
    kind: Literal["laggard_rank", "desync", "first_exit", "stuck_frame"] = "laggard_rank"


class Widespread(_Strict):
    domain: str
    category: str
    summary: str
    recommended_action: str | None = None


class TestLine(_Strict):
    source: str = "kernel"
    node: str | None = "node-01"
    rank: int | None = None
    t: float = 0
    text: str


class TestEvent(BaseModel):
    # Its other keys are the event's fields (the record's `extra`).
    model_config = ConfigDict(extra="allow", defer_build=True)
    t: float | None = 0
    kind: str
    node: str | None = "node-01"
    rank: int | None = None
    device: str | None = None


class Expect(_Strict):
    category: str
    nodes: list[str] | None = None
    explained_by: str | None = None


class RuleTest(_Strict):
    name: str
    lines: list[TestLine] = Field(default_factory=list)
    events: list[TestEvent] = Field(default_factory=list)
    nodes: list[str] | None = None
    expect: list[Expect]
    root: str | None = None


class Rule(_Strict):
    id: str
    title: str
    status: Literal["experimental", "stable", "deprecated"] = "experimental"
    version: int = 1
    role: Literal["cause", "symptom"]
    domain: str | None = None
    category: str
    priority: int = Field(default=50, ge=0, le=100)
    weak: bool = False
    description: str | None = None
    references: list[str] = Field(default_factory=list)
    match: list[Selection]
    group_by: list[GroupKey] = Field(default_factory=lambda: list[GroupKey](["node"]))
    min_count: int = Field(default=1, ge=1)
    whole_job: bool = False
    widespread: Widespread | None = None
    with_lead: WithLead | None = None
    explains: list[Explains] = Field(default_factory=list)
    summary: str = "{title} on {nodes}"
    recommended_action: str | None = None
    tests: list[RuleTest] = Field(default_factory=list)


class WidespreadSettings(_Strict):
    min_nodes: int = 3
    min_fraction: float = 0.5
    window: float = 60.0


class CommonEndpointSettings(_Strict):
    min_reports: int = Field(default=2, ge=1)
    max_nodes: int = Field(default=2, ge=1)
    min_share: float = Field(default=0.6, gt=0, le=1)


class Settings(_Strict):
    version: str
    clock_skew: float = 5.0
    merge_window: float = 30.0
    ambiguity_window: float = 30.0
    widespread: WidespreadSettings = Field(default_factory=WidespreadSettings)
    silent_node_gap: float = 60.0
    evidence_per_finding: int = 5
    evidence_per_symptom: int = 2
    explain_sets: dict[str, list[Explains]] = Field(default_factory=dict)
    ignore_xid_classes: list[str] = Field(default_factory=list)
    common_endpoint: CommonEndpointSettings = Field(default_factory=CommonEndpointSettings)
    weak_causes: Literal["first_strong", "same_node"] = "first_strong"


MODELS: tuple[type[BaseModel], ...] = (Op, Selection, Explains, WithLead, Widespread, TestLine, TestEvent, Expect,
                                       RuleTest, Rule, WidespreadSettings, CommonEndpointSettings, Settings)


def to_records(value: Any) -> Any:
    """A validated model as the engine's record of the same name (lists and dicts of them likewise)."""
    if isinstance(value, BaseModel):
        record = getattr(records, type(value).__name__)
        kw = {name: to_records(getattr(value, name)) for name in type(value).model_fields}
        if isinstance(value, TestEvent):
            kw["extra"] = dict(value.model_extra or {})
        return record(**kw)
    if isinstance(value, list):
        return [to_records(v) for v in value]
    if isinstance(value, dict):
        return {k: to_records(v) for k, v in value.items()}
    return value
