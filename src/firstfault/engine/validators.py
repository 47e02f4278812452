"""The catalog's validators, Sigma-style: each has an id and a description, and yields problems.

A problem names the rule file, the line of the offending key and the
validator's id: `rules/x.yaml:12: [event-kind] unknown event kind ...`.
`firstfault rules check` runs them all (docs/rules.md lists them); a
catalog with any problem does not load.

The known event kinds and their fields come from the extractors
(extract/registry.event_kinds) and what normalisation adds
(engine/normalise.EMITS, engine/ports.EMITS); the spec's category families from firstfault.spec.
"""

from __future__ import annotations

import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from firstfault.model import CAUSE_DOMAINS, Event, Evidence, FieldValue
from firstfault.spec import CATEGORY_DOMAINS

if TYPE_CHECKING:
    from firstfault.engine.rules import Explains, LoadedRule, Rule, Settings

__all__ = ["VALIDATORS", "Problem", "Validator", "event_kinds", "run_validators", "template_fields"]


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    line: int
    validator: str
    message: str
    field: str | None = None  # the rule's top-level key at fault, if one

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: [{self.validator}] {self.message}"


@lru_cache(maxsize=1)
def event_kinds() -> Mapping[str, frozenset[str]]:
    """Every event kind the engine can see, with the fields it may carry."""
    from firstfault.engine.normalise import EMITS
    from firstfault.engine.ports import EMITS as FABRIC_EMITS
    from firstfault.extract.registry import COMMON_FIELDS
    from firstfault.extract.registry import event_kinds as extracted

    out = {k: set(v) for k, v in extracted().items()}
    for emits in (EMITS, FABRIC_EMITS):
        for kind, fields in emits.items():
            out.setdefault(kind, set(COMMON_FIELDS)).update(fields)
    return {k: frozenset(v) for k, v in sorted(out.items())}


# What render() offers every template besides the fields of the finding's first event.
AGGREGATES = frozenset({"node", "nodes", "node_count", "device", "devices", "count", "ranks", "title", "rank",
                        "where"})
LEAD_FIELDS = frozenset({"lead", "lead_ranks"})


def template_fields(tpl: str) -> list[list[str]]:
    """The fields a template names, each as its alternatives: `{error|xid}` -> [["error", "xid"]];
    an alternative may be a literal (`""` or nothing, `"a word"`).

    Raises ValueError for a template str.format cannot parse.
    """
    try:
        parsed = list(string.Formatter().parse(tpl))
    except ValueError as exc:
        raise ValueError(f"bad template {tpl!r}: {exc}") from exc
    return [name.split("|") for _, name, _, _ in parsed if name]


def _literal(alt: str) -> bool:
    """`{fm_event|}` (or nothing) and `{proc|"a process"}` (or a word) end in a literal."""
    return alt == "" or (len(alt) >= 2 and alt[0] == alt[-1] == '"')


class Validator:
    """One check over the loaded catalog."""

    id: ClassVar[str]
    description: ClassVar[str]

    def check(self, rules: list[LoadedRule], settings: Settings | None) -> Iterator[Problem]:
        raise NotImplementedError

    def problem(self, lr: LoadedRule, key: str, message: str) -> Problem:
        return Problem(lr.file, lr.line_of.get(key, 1), self.id, message, key)


class RuleValidator(Validator):
    """A check of each rule on its own."""

    def check(self, rules: list[LoadedRule], settings: Settings | None) -> Iterator[Problem]:
        for lr in rules:
            yield from self.check_rule(lr)

    def check_rule(self, lr: LoadedRule) -> Iterator[Problem]:
        raise NotImplementedError


class IdFormat(RuleValidator):
    id = "id-format"
    description = "a rule id is lower-case words joined by -"

    def check_rule(self, lr: LoadedRule) -> Iterator[Problem]:
        from firstfault.engine.rules import ID_RE

        if not ID_RE.match(lr.rule.id):
            yield self.problem(lr, "id", f"rule id {lr.rule.id!r} must be lower-case words joined by -")


class IdUnique(Validator):
    id = "id-unique"
    description = "no two rules share an id"

    def check(self, rules: list[LoadedRule], settings: Settings | None) -> Iterator[Problem]:
        seen: dict[str, str] = {}
        for lr in rules:
            if lr.rule.id in seen:
                yield self.problem(lr, "id", f"rule id {lr.rule.id!r} is also used in {seen[lr.rule.id]}")
            seen.setdefault(lr.rule.id, lr.file)


class FileName(RuleValidator):
    id = "file-name"
    description = "a rule lives in <id>.yaml"

    def check_rule(self, lr: LoadedRule) -> Iterator[Problem]:
        if Path(lr.file).stem != lr.rule.id:
            yield self.problem(lr, "id", f"file should be named {lr.rule.id}.yaml")


class CategoryFormat(RuleValidator):
    id = "category-format"
    description = "a category is a dotted id of lower-case words"

    def check_rule(self, lr: LoadedRule) -> Iterator[Problem]:
        from firstfault.engine.rules import CATEGORY_RE

        if not CATEGORY_RE.match(lr.rule.category):
            yield self.problem(lr, "category", f"{lr.rule.category!r} is not a dotted id")


class CauseDomain(RuleValidator):
    id = "cause-domain"
    description = "a cause names one of the verdict's cause domains"

    def check_rule(self, lr: LoadedRule) -> Iterator[Problem]:
        if lr.rule.role == "cause" and lr.rule.domain not in CAUSE_DOMAINS:
            yield self.problem(lr, "domain", f"a cause needs a domain in {list(CAUSE_DOMAINS)}")


class SpecDomain(RuleValidator):
    id = "spec-domain"
    description = "a cause under one of the spec's category families has that family's domain"

    def check_rule(self, lr: LoadedRule) -> Iterator[Problem]:
        r = lr.rule
        if r.role != "cause":
            return
        for prefix, dom in CATEGORY_DOMAINS.items():
            if (r.category == prefix or r.category.startswith(prefix + ".")) and r.domain != dom:
                yield self.problem(lr, "domain", f"category {r.category} belongs to domain {dom}")


class SymptomDomain(RuleValidator):
    id = "symptom-domain"
    description = "a symptom rule has no domain"

    def check_rule(self, lr: LoadedRule) -> Iterator[Problem]:
        if lr.rule.role == "symptom" and lr.rule.domain is not None:
            yield self.problem(lr, "domain", "a symptom rule has no domain")


class SymptomFields(RuleValidator):
    id = "symptom-fields"
    description = "a symptom rule cannot explain, widen, be weak or promote a lead"

    def check_rule(self, lr: LoadedRule) -> Iterator[Problem]:
        r = lr.rule
        if r.role == "symptom" and (r.explains or r.widespread or r.weak):
            yield self.problem(lr, "role", "symptoms cannot explain, widen or be weak")
        if r.role == "symptom" and r.with_lead is not None:
            yield self.problem(lr, "with_lead", "a symptom rule cannot promote a lead")
        if r.role == "cause" and r.all_clear:
            yield self.problem(lr, "all_clear", "only a symptom rule says by itself that nothing failed")


class WidespreadDomain(RuleValidator):
    id = "widespread-domain"
    description = "a rule's widespread form names a cause domain"

    def check_rule(self, lr: LoadedRule) -> Iterator[Problem]:
        w = lr.rule.widespread
        if w and w.domain not in CAUSE_DOMAINS:
            yield self.problem(lr, "widespread", f"unknown domain {w.domain}")


def matched_kinds(rule: Rule) -> list[tuple[str, list[str]]]:
    """Each selection's event pattern with the known kinds it selects."""
    kinds = event_kinds()
    out = []
    for sel in rule.match:
        if sel.event.endswith(".*"):
            base = sel.event[:-2]
            out.append((sel.event, [k for k in kinds if k.startswith(base + ".")]))
        else:
            out.append((sel.event, [sel.event] if sel.event in kinds else []))
    return out


class EventKind(RuleValidator):
    id = "event-kind"
    description = "a rule matches event kinds that some extractor emits (docs/events.md)"

    def check_rule(self, lr: LoadedRule) -> Iterator[Problem]:
        for pattern, kinds in matched_kinds(lr.rule):
            if kinds:
                continue
            if pattern.endswith(".*"):
                yield self.problem(lr, "match", f"no event kind under {pattern}")
            else:
                yield self.problem(lr, "match", f"unknown event kind {pattern!r} (docs/events.md)")


class ExplainsResolves(Validator):
    id = "explains-resolves"
    description = "each `explains` category matches some rule's category"

    def check(self, rules: list[LoadedRule], settings: Settings | None) -> Iterator[Problem]:
        categories = {lr.rule.category for lr in rules} | {
            lr.rule.widespread.category for lr in rules if lr.rule.widespread
        }
        for lr in rules:
            for ex in lr.rule.explains:
                if ex.category is None:
                    continue
                pre = ex.category[:-2] if ex.category.endswith(".*") else ex.category
                if not any(c == pre or c.startswith(pre + ".") for c in categories):
                    yield self.problem(lr, "explains", f"{ex.category!r} matches no category")


def explain_set_cycle(sets: Mapping[str, list[Explains]]) -> list[str] | None:
    """A loop of explain sets that name each other (`- set: b` inside set a, ...), or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for ex in sets.get(name, []):
            nxt = ex.set
            if nxt is None or nxt not in sets:
                continue
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[name] = 2
        return None

    for name in sorted(sets):
        if name not in state:
            found = visit(name)
            if found:
                return found
    return None


class ExplainsCycle(Validator):
    id = "explains-cycle"
    description = "explain sets do not include each other in a loop"

    def check(self, rules: list[LoadedRule], settings: Settings | None) -> Iterator[Problem]:
        if settings is None:
            return
        loop = explain_set_cycle(settings.explain_sets)
        if loop:
            yield Problem("catalog.yaml", 1, self.id, "explain sets include each other in a loop: "
                          + " -> ".join(loop), "explain_sets")


def _templates(rule: Rule) -> Iterator[tuple[str, str]]:
    for key in ("summary", "recommended_action"):
        tpl = getattr(rule, key)
        if tpl:
            yield key, tpl
    if rule.widespread:
        yield "widespread", rule.widespread.summary
        if rule.widespread.recommended_action:
            yield "widespread", rule.widespread.recommended_action
    for vendor in sorted(rule.vendor_actions):
        yield "vendor_actions", rule.vendor_actions[vendor]
    for name in sorted(rule.field_actions):
        for value in sorted(rule.field_actions[name]):
            yield f"field_actions.{name}", rule.field_actions[name][value]


class Template(RuleValidator):
    id = "template"
    description = "summary and recommended_action are str.format templates"

    def check_rule(self, lr: LoadedRule) -> Iterator[Problem]:
        for key, tpl in _templates(lr.rule):
            try:
                template_fields(tpl)
            except ValueError as exc:
                yield self.problem(lr, key, str(exc))


class TemplateField(RuleValidator):
    id = "template-field"
    description = ("every field a template names is one that each event kind the rule matches can carry "
                   "(or one of render's aggregates); `{a|b}` needs one of them per kind")

    def check_rule(self, lr: LoadedRule) -> Iterator[Problem]:
        kinds = event_kinds()
        selected = sorted({k for _, ks in matched_kinds(lr.rule) for k in ks})
        if not selected:
            return  # event-kind says why
        offered = AGGREGATES | (LEAD_FIELDS if lr.rule.with_lead else frozenset())
        # A vendor's action is chosen only where the first event names that vendor.
        by_vendor = [k for k in selected if "vendor" in kinds[k]]
        for name in sorted(lr.rule.field_actions):
            if not any(name in kinds[k] for k in selected):
                yield self.problem(lr, "field_actions", f"{name!r}: no event kind the rule matches has this field "
                                   "(its actions would never be chosen)")
        for key, tpl in _templates(lr.rule):
            try:
                names = template_fields(tpl)
            except ValueError:
                continue  # template says why
            for alts in names:
                if any(a in offered or _literal(a) for a in alts):
                    continue
                # a field's action is chosen only where the first event has that field
                among = (by_vendor if key == "vendor_actions" else
                         [k for k in selected if key.split(".", 1)[1] in kinds[k]] if key.startswith("field_actions.")
                         else selected)
                lacking = [k for k in among if not any(a in kinds[k] for a in alts)]
                if lacking:
                    field = "|".join(alts)
                    yield self.problem(
                        lr, key, f"{{{field}}}: event kind {', '.join(lacking)} has no such field "
                        f"(it would render as nothing; docs/events.md lists the fields)")


def accel_probes() -> list[Event]:
    """One gpu.accel_error per row of catalog/accel.yaml that makes an event (and per RAS block that is not a
    memory's), with the fields the extractor gives it: what a rule reading another vendor's accelerator meets."""
    from firstfault.catalog.tables import accel_table

    table = accel_table()
    rows: list[tuple[str, str, str, str]] = [
        (vendor, driver, row.accel_class, row.reason)
        for vendor, driver, family in table.families for row in family if row.accel_class != "informational"]
    rows += [("amd", "amdgpu", b.accel_class, "ras_uncorrectable") for b in table.ras_blocks]
    return [Event(kind="gpu.accel_error", time=None, node="n",
                  fields={"vendor": v, "driver": d, "accel_class": c, "reason": r, "mnemonic": r.upper()},
                  evidence=Evidence(source="kernel", file=None, line=None, text=""))
            for v, d, c, r in sorted(set(rows))]


class VendorActions(Validator):
    """A verdict about an AMD, Intel or AWS accelerator that tells the operator to run DCGM or follow an NVIDIA
    workflow sends them to tools their hosts do not have."""

    id = "vendor-actions"
    description = ("`vendor_actions` names vendors of catalog/accel.yaml, and a rule with a recommended action "
                   "that reads another vendor's accelerator has an action for each vendor whose rows it matches")

    def check(self, rules: list[LoadedRule], settings: Settings | None) -> Iterator[Problem]:
        from firstfault.catalog.tables import accel_table
        from firstfault.engine.match import rule_matches

        vendors = {v for v, _, _ in accel_table().families}
        probes = accel_probes()
        for lr in rules:
            rule = lr.rule
            for v in sorted(set(rule.vendor_actions) - vendors):
                yield self.problem(lr, "vendor_actions", f"{v!r} is no vendor of catalog/accel.yaml "
                                   f"({', '.join(sorted(vendors))})")
            met = {str(ev.fields["vendor"]) for ev in probes if rule_matches(rule, ev)}
            if rule.vendor_actions and not met:
                yield self.problem(lr, "vendor_actions", "the rule matches no row of catalog/accel.yaml: "
                                   "its vendor actions would never be chosen")
            if rule.role == "cause" and rule.recommended_action:
                # NVIDIA's own rows (DCGM's codes) take the rule's recommended action, which is NVIDIA's
                for v in sorted(met - set(rule.vendor_actions) - {"nvidia"}):
                    yield self.problem(lr, "vendor_actions", f"the rule reads {v}'s accelerator (catalog/accel.yaml)"
                                       f" but has no `vendor_actions: {{{v}: ...}}`: its recommended action "
                                       "would be NVIDIA's")


class TestsPresent(RuleValidator):
    id = "tests-present"
    description = "a rule has at least one positive and one negative test"

    def check_rule(self, lr: LoadedRule) -> Iterator[Problem]:
        pos = [t for t in lr.rule.tests if t.expect]
        neg = [t for t in lr.rule.tests if not t.expect]
        if not pos or not neg:
            yield self.problem(lr, "tests", "needs at least one positive and one negative test "
                               f"(has {len(pos)} positive, {len(neg)} negative)")


class TestInput(RuleValidator):
    id = "test-input"
    description = "each rule test has lines or events"

    def check_rule(self, lr: LoadedRule) -> Iterator[Problem]:
        for t in lr.rule.tests:
            if not t.lines and not t.events:
                yield self.problem(lr, "tests", f"test {t.name!r} has neither lines nor events")


class XidLands(Validator):
    """An Xid no rule matches would vanish from the verdict ("no failure evidence") however plainly
    the kernel log shows it."""

    id = "xid-lands"
    description = "every Xid of catalog/xid.yaml is matched by a rule, or its class is in ignore_xid_classes"

    def check(self, rules: list[LoadedRule], settings: Settings | None) -> Iterator[Problem]:
        from firstfault.catalog.tables import xid_table
        from firstfault.engine.match import rule_matches

        if settings is None:
            return
        ignored = set(settings.ignore_xid_classes)
        xid_rules = [lr.rule for lr in rules if any(sel.event in ("gpu.xid", "gpu.*") for sel in lr.rule.match)]
        missing: dict[str, list[int]] = {}
        for code, info in sorted(xid_table().items()):
            if info.xid_class in ignored:
                continue
            for severity in (None, "Fatal"):
                fields: dict[str, FieldValue] = {"xid": code, "xid_class": info.xid_class,
                                                 "mnemonic": info.mnemonic}
                if severity:
                    fields["severity"] = severity
                ev = Event(kind="gpu.xid", time=None, node="n", fields=fields,
                           evidence=Evidence(source="kernel", file=None, line=None, text=""))
                if any(rule_matches(r, ev) for r in xid_rules):
                    break
            else:
                missing.setdefault(info.xid_class, []).append(code)
        for cls, codes in sorted(missing.items()):
            yield Problem("catalog/xid.yaml", 1, self.id,
                          f"Xid class {cls!r} (codes {codes[:8]}{'...' if len(codes) > 8 else ''}) matches no rule "
                          "and is not in ignore_xid_classes")


# In the order `rules check` reports them.
VALIDATORS: tuple[Validator, ...] = (
    IdFormat(), IdUnique(), FileName(), CategoryFormat(), CauseDomain(), SpecDomain(), SymptomDomain(),
    SymptomFields(), WidespreadDomain(), EventKind(), ExplainsResolves(), ExplainsCycle(), Template(),
    TemplateField(), VendorActions(), TestsPresent(), TestInput(), XidLands(),
)


def run_validators(rules: list[LoadedRule], settings: Settings | None,
                   validators: tuple[Validator, ...] = VALIDATORS) -> list[Problem]:
    return [p for v in validators for p in v.check(rules, settings)]
