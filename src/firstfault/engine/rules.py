"""The rule catalog's records: what the engine reads (a rule, its selections, its tests, the settings).

Plain dataclasses, built by engine/ruleschema.py from the validated YAML (engine/loader.py loads it) or read
back from the on-disk cache; matching (engine/match.py), the validators and attribution read them. This module
imports nothing of the engine.
"""

import re
from dataclasses import dataclass, field
from typing import Any, Literal

ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
CATEGORY_RE = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)*$")

Scalar = str | int | float | bool

# The records: one per model of engine/ruleschema.py, with its fields, in its order, with its defaults.
# Mutable, compared by value and unhashable, as the models were.


@dataclass(slots=True, kw_only=True)
class Op:
    """A condition on a field that is not a plain value: not, re, gte, lte, exists, startswith."""

    not_: Scalar | list[Scalar] | None = None  # `not:` in YAML
    re: str | None = None
    gte: float | None = None
    lte: float | None = None
    exists: bool | None = None
    startswith: str | None = None


Condition = Scalar | list[Scalar] | Op


@dataclass(slots=True, kw_only=True)
class Selection:
    """The events a rule selects: their kind and the conditions their fields meet (or must not)."""

    event: str
    where: dict[str, Condition] = field(default_factory=dict)
    where_not: dict[str, Condition] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class Explains:
    """What a cause rule explains: a symptom category or a named set of them, on the same node or anywhere."""

    category: str | None = None
    set: str | None = None  # a named list from catalog.yaml `explain_sets`
    same_node: bool = False


@dataclass(slots=True, kw_only=True)
class WithLead:
    """The rule stands only on a node that a lead of this kind names (the lead's
    evidence and the rule's together make a cause): `{lead}` and `{lead_ranks}`
    in the summary say so."""

    kind: Literal["laggard_rank", "desync", "first_exit", "stuck_frame"] = "laggard_rank"


@dataclass(slots=True, kw_only=True)
class Widespread:
    """What a rule's events mean when they come from most of the allocation at once."""

    domain: str
    category: str
    summary: str
    recommended_action: str | None = None


@dataclass(slots=True, kw_only=True)
class TestLine:
    """A log line of a rule test, read by the production extractors."""

    source: str = "kernel"
    node: str | None = "node-01"
    rank: int | None = None
    t: float = 0
    text: str


@dataclass(slots=True, kw_only=True)
class TestEvent:
    """An event of a rule test, given as it would be extracted (other keys are its fields)."""

    t: float | None = 0
    kind: str
    node: str | None = "node-01"
    rank: int | None = None
    device: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # the test's other keys: the event's fields


@dataclass(slots=True, kw_only=True)
class Expect:
    """A finding a rule test expects, on the nodes it names."""

    category: str
    nodes: list[str] | None = None
    # For a symptom rule: the category of the finding that must explain it
    # (`none`: it must stay unexplained).
    explained_by: str | None = None


@dataclass(slots=True, kw_only=True)
class RuleTest:
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


@dataclass(slots=True, kw_only=True)
class Rule:
    """A rule of the catalog, as the engine reads it."""

    id: str
    title: str
    status: Literal["experimental", "stable", "deprecated"] = "experimental"
    version: int = 1
    role: Literal["cause", "symptom"]
    domain: str | None = None
    category: str
    priority: int = 50  # 0..100
    weak: bool = False
    description: str | None = None
    references: list[str] = field(default_factory=list)
    match: list[Selection]
    group_by: list[GroupKey] = field(default_factory=lambda: list[GroupKey](["node"]))
    min_count: int = 1
    # The finding is about the whole job (a scheduler decision): it names no node.
    whole_job: bool = False
    widespread: Widespread | None = None
    # Promotes a lead to a cause: the rule's events count only on the lead's nodes.
    with_lead: WithLead | None = None
    explains: list[Explains] = field(default_factory=list)
    summary: str = "{title} on {nodes}"
    recommended_action: str | None = None
    tests: list[RuleTest] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class WidespreadSettings:
    """When events count as widespread: the least number and share of the allocation's nodes, within a window."""

    min_nodes: int = 3
    min_fraction: float = 0.5
    window: float = 60.0


@dataclass(slots=True, kw_only=True)
class CommonEndpointSettings:
    """When reports of a peer-to-peer fault (NCCL, IB) name a peer, the node most of them involve is the finding's.

    The nodes taking part (as reporter or named peer) in the most reports are the finding's
    nodes when they are at most `max_nodes`, take part in at least `min_reports` reports and in
    at least `min_share` of all of them; otherwise the finding keeps its reporters.
    """

    min_reports: int = 2
    max_nodes: int = 2
    min_share: float = 0.6


@dataclass(slots=True, kw_only=True)
class Settings:
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


@dataclass(slots=True)
class LoadedRule:
    """A rule with the file it came from and the lines of its keys (for messages)."""

    rule: Rule
    file: str
    line_of: dict[str, int]  # top-level key -> line, for error messages
