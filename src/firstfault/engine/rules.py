"""The rule catalog's records, declared once: a rule, its selections, ops, explains and tests, the settings.

Each is a `Record` (firstfault/records.py): msgspec validates a parsed rule file or catalog.yaml into it
(`read_rule`, `read_settings`: every constraint is here, strict, unknown keys refused), the on-disk cache
keeps the loaded catalog as its msgpack (engine/loader.py), and the engine reads the fields as attributes,
as cheaply as a slotted dataclass's. A regex that must compile is the one check msgspec cannot express: it
is `__post_init__`'s, which msgspec reports at the record's key path. This module imports nothing of the
engine.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from msgspec import Meta

from firstfault.catalog.vocab import check_regex
from firstfault.records import Record, convert, field

ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
CATEGORY_RE = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)*$")

Scalar = str | int | float | bool


class Op(Record, kw_only=True):
    """A condition on a field that is not a plain value: not, re, gte, lte, exists, startswith."""

    not_: Scalar | list[Scalar] | None = field(default=None, name="not")  # `not` is a Python keyword
    re: str | None = None
    gte: float | None = None
    lte: float | None = None
    exists: bool | None = None
    startswith: str | None = None

    def __post_init__(self) -> None:
        if self.re is not None:
            check_regex(self.re)


Condition = Scalar | list[Scalar] | Op


class Selection(Record, kw_only=True):
    """The events a rule selects: their kind and the conditions their fields meet (or must not)."""

    event: str
    where: dict[str, Condition] = field(default_factory=dict)
    where_not: dict[str, Condition] = field(default_factory=dict)


class Explains(Record, kw_only=True):
    """What a cause rule explains: a symptom category or a named set of them, on the same node or anywhere."""

    category: str | None = None
    set: str | None = None  # a named list from catalog.yaml `explain_sets`
    same_node: bool = False
    # Seconds (beyond the clock skew) that a finding of this entry may have begun before the cause and still be
    # its: a report that the cause's own words name better, printed first (a GSP heartbeat timeout, then the Xid).
    # Only with `same_node` and a `category`.
    earlier: Annotated[float, Meta(ge=0, le=3600)] = 0.0

    def __post_init__(self) -> None:
        if self.earlier and (self.category is None or not self.same_node):
            raise ValueError("`earlier` needs a `category` and `same_node: true`")


class WithLead(Record, kw_only=True):
    """The rule stands only on a node that a lead of this kind names (the lead's
    evidence and the rule's together make a cause): `{lead}` and `{lead_ranks}`
    in the summary say so."""

    kind: Literal["laggard_rank", "desync", "first_exit", "stuck_frame"] = "laggard_rank"


class Widespread(Record, kw_only=True):
    """What a rule's events mean when they come from most of the allocation at once."""

    domain: str
    category: str
    summary: str
    recommended_action: str | None = None


class TestLine(Record, kw_only=True):
    """A log line of a rule test, read by the production extractors."""

    source: str = "kernel"
    node: str | None = "node-01"
    rank: int | None = None
    t: float = 0.0
    text: str


# The keys a test event names itself; its other keys are the event's fields (`extra`, gathered by read_rule).
TEST_EVENT_KEYS = frozenset({"t", "kind", "node", "rank", "device"})


class TestEvent(Record, kw_only=True):
    """An event of a rule test, given as it would be extracted (other keys are its fields)."""

    t: float | None = 0.0
    kind: str
    node: str | None = "node-01"
    rank: int | None = None
    device: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # the test's other keys: the event's fields


class Expect(Record, kw_only=True):
    """A finding a rule test expects, on the nodes it names."""

    category: str
    nodes: list[str] | None = None
    # For a symptom rule: the category of the finding that must explain it
    # (`none`: it must stay unexplained).
    explained_by: str | None = None


class RuleTest(Record, kw_only=True):
    """One of a rule's own tests: its inputs and the findings (and root cause) they must give."""

    name: str
    lines: list[TestLine] = field(default_factory=list)
    events: list[TestEvent] = field(default_factory=list)
    nodes: list[str] | None = None  # the allocation, for widespread checks
    expect: list[Expect]
    # The whole catalog's root cause for these inputs (a category prefix, or
    # `none` for no root), when the test wants to pin precedence too.
    root: str | None = None


GroupKey = Literal["node", "device", "rank"]


def _by_node() -> list[GroupKey]:
    return ["node"]


class Rule(Record, kw_only=True):
    """A rule of the catalog, as the engine reads it."""

    id: str
    title: str
    status: Literal["experimental", "stable", "deprecated"] = "experimental"
    version: int = 1
    role: Literal["cause", "symptom"]
    domain: str | None = None
    category: str
    priority: Annotated[int, Meta(ge=0, le=100)] = 50
    weak: bool = False
    # A symptom that says by itself that nothing failed (the driver's own word that an error was corrected or
    # recovered from: a Nonfatal NVLink5 Xid, a row remap recorded): alone, with the run's end not shown, it is no
    # failure (docs/verdict.md "A run whose end is not shown"). Symptoms only.
    all_clear: bool = False
    description: str | None = None
    references: list[str] = field(default_factory=list)
    match: list[Selection]
    group_by: list[GroupKey] = field(default_factory=_by_node)
    min_count: Annotated[int, Meta(ge=1)] = 1
    # The finding is about the whole job (a scheduler decision): it names no node.
    whole_job: bool = False
    widespread: Widespread | None = None
    # Promotes a lead to a cause: the rule's events count only on the lead's nodes.
    with_lead: WithLead | None = None
    explains: list[Explains] = field(default_factory=list)
    summary: str = "{title} on {nodes}"
    recommended_action: str | None = None
    # The action where the finding's first event names another vendor's accelerator (gpu.accel_error's `vendor`:
    # amd, intel, aws): that vendor's tools and procedures, not NVIDIA's (docs/rules.md).
    vendor_actions: dict[str, str] = field(default_factory=dict)
    # The action where the finding's first event's field has a value that says more than the rule's own action can
    # (app.exception's `refusal`: a cloud quota the request is over): field -> value -> template (docs/rules.md).
    field_actions: dict[str, dict[str, str]] = field(default_factory=dict)
    tests: list[RuleTest] = field(default_factory=list)


class WidespreadSettings(Record, kw_only=True):
    """When events count as widespread: the least number and share of the allocation's nodes, within a window."""

    min_nodes: int = 3
    min_fraction: float = 0.5
    window: float = 60.0


class CommonEndpointSettings(Record, kw_only=True):
    """When reports of a peer-to-peer fault (NCCL, IB) name a peer, the node most of them involve is the finding's.

    The nodes taking part (as reporter or named peer) in the most reports are the finding's
    nodes when they are at most `max_nodes`, take part in at least `min_reports` reports and in
    at least `min_share` of all of them; otherwise the finding keeps its reporters.
    """

    min_reports: Annotated[int, Meta(ge=1)] = 2
    max_nodes: Annotated[int, Meta(ge=1)] = 2
    min_share: Annotated[float, Meta(gt=0, le=1)] = 0.6


class Settings(Record, kw_only=True):
    """The catalog's own settings (catalog.yaml): its version, time windows, named explain sets, thresholds."""

    version: str
    clock_skew: float = 5.0
    merge_window: float = 30.0
    ambiguity_window: float = 30.0
    widespread: WidespreadSettings = field(default_factory=WidespreadSettings)
    silent_node_gap: float = 60.0
    evidence_per_finding: int = 5
    evidence_per_symptom: int = 2
    explain_sets: dict[str, list[Explains]] = field(default_factory=dict)
    # Xid classes that no rule needs to match (validator xid-lands).
    ignore_xid_classes: list[str] = field(default_factory=list)
    common_endpoint: CommonEndpointSettings = field(default_factory=CommonEndpointSettings)
    # Weak root causes once a strong one stands: `first_strong` makes the earliest strong root
    # explain each of them, whatever its node or time; `same_node` the earliest strong root on one
    # of its nodes, else the earliest strong root.
    weak_causes: Literal["first_strong", "same_node"] = "first_strong"


class LoadedRule(Record, kw_only=True):
    """A rule with the file it came from and the lines of its keys (for messages)."""

    rule: Rule
    file: str
    line_of: dict[str, int]  # top-level key -> line, for error messages


def _gather_extra(event: Any) -> Any:
    """A test event's mapping with its own keys kept and the others (the event's fields) under `extra`."""
    if not isinstance(event, dict):
        return event  # msgspec names the wrong type at its place
    own = {k: v for k, v in event.items() if k in TEST_EVENT_KEYS}
    own["extra"] = {k: v for k, v in event.items() if k not in TEST_EVENT_KEYS}
    return own


def read_rule(data: Any) -> Rule:
    """A parsed rule file validated into its record; records.ValidationError (with the key path) otherwise."""
    if isinstance(data, dict) and isinstance(data.get("tests"), list):
        tests = []
        for test in data["tests"]:
            if isinstance(test, dict) and isinstance(test.get("events"), list):
                test = {**test, "events": [_gather_extra(ev) for ev in test["events"]]}
            tests.append(test)
        data = {**data, "tests": tests}
    return convert(data, Rule)


def read_settings(data: Any) -> Settings:
    """A parsed catalog.yaml validated into its record; records.ValidationError (with the key path) otherwise."""
    return convert(data, Settings)
