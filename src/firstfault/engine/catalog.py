"""The rule catalog: one YAML file per rule, loaded and validated at start-up.

Validation errors carry file:line (from the YAML node marks) and a
validator id, Sigma-style (engine/validators.py), so `firstfault rules
check` points at the fault.

The engine works on the plain records below. The pydantic models that validate the YAML are in
engine/ruleschema.py, imported only to validate: a start-up that reads the catalog from the on-disk
cache (load_catalog_cached) imports neither them nor pydantic, and gets the same records.
"""

import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
CATEGORY_RE = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)*$")

class CatalogError(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


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


@dataclass(slots=True)
class Catalog:
    """The loaded catalog: settings, rules, the sha256 of its files and where it was read from."""

    settings: Settings
    rules: list[LoadedRule]
    sha256: str
    root: str

    @property
    def version(self) -> str:
        return self.settings.version

    def active(self) -> list[Rule]:
        return [lr.rule for lr in self.rules if lr.rule.status != "deprecated"]

    def by_id(self, rule_id: str) -> Rule | None:
        for lr in self.rules:
            if lr.rule.id == rule_id:
                return lr.rule
        return None


def default_root() -> Path:
    return Path(str(resources.files("firstfault") / "catalog"))


def _expand_sets(rules: list[LoadedRule], settings: Settings) -> list[str]:
    """Replaces `{set: name}` entries of `explains` with the named list (which may name other sets;
    a loop of sets is the explains-cycle validator's problem and expands each set once)."""
    problems: list[str] = []

    def expand(name: str, seen: frozenset[str]) -> list[Explains] | None:
        named = settings.explain_sets.get(name)
        if named is None:
            return None
        out: list[Explains] = []
        for ex in named:
            if ex.set is not None:
                if ex.set not in seen:
                    out.extend(expand(ex.set, seen | {ex.set}) or [])
            elif ex.category is not None:
                out.append(ex)
        return out

    for name, entries in sorted(settings.explain_sets.items()):
        for ex in entries:
            if ex.set is not None and ex.set not in settings.explain_sets:
                problems.append(f"catalog.yaml:1: [explains-set] explain set {name!r} names no explain set "
                                f"{ex.set!r}")
    for lr in rules:
        out: list[Explains] = []
        for ex in lr.rule.explains:
            if ex.set is not None:
                named = expand(ex.set, frozenset({ex.set}))
                if named is None:
                    problems.append(f"{lr.file}:{lr.line_of.get('explains', 1)}: [explains-set] "
                                    f"no explain set {ex.set!r} in catalog.yaml")
                    continue
                out.extend(named)
            elif ex.category is not None:
                out.append(ex)
            else:
                problems.append(f"{lr.file}:{lr.line_of.get('explains', 1)}: [explains-form] "
                                "an explains entry needs a category or a set")
        lr.rule.explains = out
    return problems


def load_catalog(root: str | Path | None = None) -> Catalog:
    """Loads and validates a catalog directory (catalog.yaml + rules/*.yaml)."""
    import yaml
    from pydantic import ValidationError

    from firstfault import yamlio
    from firstfault.engine import ruleschema

    base = Path(root) if root is not None else default_root()
    problems: list[str] = []
    digest = hashlib.sha256()
    settings_file = base / "catalog.yaml"
    settings: Settings | None = None
    if not settings_file.is_file():
        raise CatalogError([f"{settings_file}:1: [catalog-settings] missing catalog.yaml"])
    for data_file in sorted(base.glob("*.yaml")):
        digest.update(data_file.name.encode() + b"\0" + data_file.read_bytes() + b"\0")
    text = settings_file.read_text(encoding="utf-8")
    try:
        settings = ruleschema.to_records(ruleschema.Settings.model_validate(yamlio.load(text)))
    except (yaml.YAMLError, ValidationError) as exc:
        problems.append(f"{settings_file}:1: [catalog-settings] {exc}")
    rules: list[LoadedRule] = []
    rule_dir = base / "rules"
    files = sorted(rule_dir.glob("*.yaml")) if rule_dir.is_dir() else []
    if not files:
        problems.append(f"{rule_dir}:1: [rules-present] no rule files")
    for path in files:
        raw = path.read_bytes()
        digest.update(b"rules/" + path.name.encode() + b"\0" + raw + b"\0")
        text = raw.decode("utf-8", errors="replace")
        try:
            data, key_lines = yamlio.load_with_lines(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else 1
            problems.append(f"{path}:{line}: [yaml] {exc}")
            continue
        if not isinstance(data, dict):
            problems.append(f"{path}:1: [yaml] a rule file holds one mapping")
            continue
        try:
            rule = ruleschema.to_records(ruleschema.Rule.model_validate(data))
        except ValidationError as exc:
            problems.extend(yamlio.validation_problems(exc, text, str(path), "[schema]"))
            continue
        rules.append(LoadedRule(rule, str(path), key_lines))
    if settings is not None:
        problems.extend(_expand_sets(rules, settings))
    from firstfault.engine.validators import run_validators  # a start-up from the cache validates nothing

    problems.extend(str(p) for p in run_validators(rules, settings))
    if problems or settings is None:
        raise CatalogError(problems)
    return Catalog(settings=settings, rules=rules, sha256=digest.hexdigest(), root=str(base))


@lru_cache(maxsize=1)
def shipped_catalog() -> Catalog:
    return load_catalog_cached(None)


def load_catalog_cached(root: str | Path | None = None) -> Catalog:
    """load_catalog, kept on disk by the sha256 of the catalog's files, of the code that reads them
    and of the pydantic that validated them (firstfault/cache.py): a start-up reads one pickle of plain
    records instead of parsing and validating every rule, and imports neither yaml nor pydantic. An
    invalid catalog is never cached, so its errors are reported as by load_catalog."""
    import pickle
    import sys

    from firstfault import cache

    base = Path(root) if root is not None else default_root()
    here = Path(__file__)
    parts: list[bytes | str] = [str(base.resolve()), sys.version, cache.stamp("pydantic", "version.py")]
    for mod in (__file__, str(here.with_name("ruleschema.py")), str(here.with_name("validators.py")),
                str(here.parents[1] / "yamlio.py"), str(here.parents[1] / "model.py")):
        try:
            parts += [mod, Path(mod).read_bytes()]
        except OSError:
            return load_catalog(root)
    for f in [*sorted(base.glob("*.yaml")), *sorted((base / "rules").glob("*.yaml"))]:
        try:
            parts += [str(f.relative_to(base)), f.read_bytes()]
        except OSError:
            return load_catalog(root)
    name = "catalog-" + cache.key(*parts) + ".pickle"
    data = cache.get(name)
    if data is not None:
        try:
            cat = pickle.loads(data)  # our own entry, in a directory only this user writes
        except Exception:  # a corrupt or stale entry: load it again
            cat = None
        if isinstance(cat, Catalog):
            return cat
    cat = load_catalog(root)
    cache.put(name, pickle.dumps(cat, protocol=pickle.HIGHEST_PROTOCOL))
    return cat
