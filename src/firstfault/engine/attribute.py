"""Cause versus symptom over the time-ordered events of one workload attempt.

The steps are those of docs/rules.md: match, group into findings, merge or
widen across nodes, inhibit (a cause explains what follows it), then decide
between one root, an ambiguous set, or nothing.
"""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.engine.leads import LeadDraft, find_leads, lead_nodes
from firstfault.engine.match import RuleIndex, rule_matches
from firstfault.engine.rules import CommonEndpointSettings, Rule, Settings
from firstfault.model import Event, FieldValue, iso_order
from firstfault.spec import category_matches

_FAR = datetime.max.replace(tzinfo=None)


def _tkey(t: datetime | None) -> tuple[int, str, datetime | None]:
    """Times in the order of their iso strings (model.iso_order), then no time."""
    return (1, "", None) if t is None else (0, *iso_order(t))


def event_sort_key(ev: Event) -> tuple[object, ...]:
    return (*_tkey(ev.earliest()), ev.node or "", ev.evidence.file or "", ev.evidence.line or 0, ev.kind)


def is_terminal(ev: Event) -> bool:
    """An event read from a lone uncaught exception line, without its traceback (extract/exceptions.py)."""
    return ev.fields.get("terminal") is True


def weight(ev: Event) -> int:
    r = ev.fields.get("repeat")
    return int(r) if isinstance(r, int) and r > 1 else 1


@dataclass(slots=True, eq=False)
class Finding:
    """A rule that matched: its category and domain, the events, nodes and devices it covers."""

    rule: Rule
    category: str
    domain: str
    events: list[Event]
    nodes: list[str]
    devices: list[str]
    first: datetime | None
    count: int
    weak: bool
    widespread: bool = False
    # The latest moment it can have begun: its earliest event's own time. Equal to `first` for log
    # lines; later for a metric change, which happened somewhere after the previous sample (`t_lo`).
    began_by: datetime | None = None
    explained_by: Finding | None = None
    lead: LeadDraft | None = None  # the lead a `with_lead` rule promoted

    @property
    def root(self) -> Finding:
        """The finding at the end of the `explained_by` chain.

        Inhibition never links a finding to one that it explains (directly or
        through others), so the chain has no loop; should one appear, it ends
        at the last finding before the repeat rather than spinning.
        """
        f = self
        seen = {id(f)}
        while f.explained_by is not None and id(f.explained_by) not in seen:
            f = f.explained_by
            seen.add(id(f))
        return f

    def sort_key(self) -> tuple[object, ...]:
        return (*_tkey(self.first), -self.rule.priority, self.rule.id, tuple(self.nodes))


@dataclass(slots=True)
class SymptomHit:
    """An event a symptom rule matched, and the finding that explains it, if one does."""

    category: str
    event: Event
    explained_by: Finding | None = None
    all_clear: bool = False  # the rule's `all_clear`: the symptom alone says nothing failed


@dataclass(slots=True)
class Attribution:
    """The outcome of attribution: the root cause or the candidates, secondary causes, findings, symptoms."""

    roots: list[Finding]
    candidates: list[Finding]  # non-empty only when ambiguous
    root: Finding | None
    secondary: list[Finding]
    findings: list[Finding]
    symptoms: list[SymptomHit]
    notes: list[str] = field(default_factory=list)
    leads: list[LeadDraft] = field(default_factory=list)


def _device_label(ev: Event) -> str | None:
    if ev.device and ev.node:
        return f"{ev.node}/{ev.device}"
    return ev.device


def _common_endpoint(events: list[Event], rule: CommonEndpointSettings) -> list[str]:
    """Nodes that take part (as reporter or named peer) in the most reports (settings.common_endpoint)."""
    involvement: Counter[str] = Counter()
    for ev in events:
        ends = {n for n in (ev.node, ev.fields.get("peer_node")) if isinstance(n, str) and n}
        for n in ends:
            involvement[n] += weight(ev)
    if not involvement:
        return []
    top = max(involvement.values())
    total = sum(weight(e) for e in events)
    best = sorted(n for n, c in involvement.items() if c == top)
    # One endpoint in every report points at it; otherwise keep the reporters.
    if top >= rule.min_reports and len(best) <= rule.max_nodes and top >= rule.min_share * total:
        return best
    return []


def _build(rule: Rule, events: list[Event], nodes_hint: list[str] | None = None) -> Finding:
    events.sort(key=event_sort_key)
    # Ordered sets (dict keys): one event per node on 40k nodes must not cost 40k^2 comparisons.
    node_keys: dict[str, None] = {}
    device_keys: dict[str, None] = {}
    for ev in events:
        if ev.node:
            node_keys.setdefault(ev.node)
        d = _device_label(ev)
        if d:
            device_keys.setdefault(d)
    nodes = list(node_keys)
    devices = list(device_keys)
    if nodes_hint:
        nodes = nodes_hint
    if rule.whole_job:
        nodes = []
    first = next((e.earliest() for e in events if e.earliest() is not None), None)
    began_by = min((e.time for e in events if e.time is not None), default=None)
    return Finding(
        rule=rule,
        category=rule.category,
        domain=rule.domain or "unknown",
        events=events,
        nodes=nodes,
        devices=devices,
        first=first,
        count=sum(weight(e) for e in events),
        # Read only from lone exception lines (no traceback in the evidence): a cause where no other stands.
        weak=rule.weak or all(is_terminal(e) for e in events),
        began_by=began_by if began_by is not None and first is not None and began_by > first else first,
    )


def _group_key(rule: Rule, ev: Event) -> tuple[object, ...]:
    return tuple(
        ev.node if g == "node" else ev.device if g == "device" else ev.rank for g in rule.group_by
    )


def _findings_for_rule(rule: Rule, events: list[Event], settings: Settings,
                       allocation: list[str]) -> list[Finding]:
    groups: dict[tuple[object, ...], list[Event]] = {}
    for ev in events:
        groups.setdefault(_group_key(rule, ev), []).append(ev)
    protos = [
        _build(rule, evs) for evs in groups.values() if sum(weight(e) for e in evs) >= rule.min_count
    ]
    if not protos:
        return []
    protos.sort(key=Finding.sort_key)
    # Cluster findings of this rule that begin close together into one.
    clusters: list[list[Finding]] = []
    for p in protos:
        if clusters and p.first is not None and clusters[-1][0].first is not None and (
            p.first - clusters[-1][0].first
        ) <= timedelta(seconds=settings.merge_window):
            clusters[-1].append(p)
        else:
            clusters.append([p])
    out: list[Finding] = []
    ws = settings.widespread
    for cl in clusters:
        merged_events = [e for p in cl for e in p.events]
        hint = _common_endpoint(merged_events, settings.common_endpoint) if "peer_node" in {
            k for e in merged_events for k in e.fields
        } else None
        f = _build(rule, merged_events, hint or None)
        n_nodes = len({e.node for e in merged_events if e.node})
        if (
            rule.widespread is not None
            and n_nodes >= ws.min_nodes
            and allocation
            and n_nodes >= ws.min_fraction * len(allocation)
        ):
            f.widespread = True
            f.category = rule.widespread.category
            f.domain = rule.widespread.domain
        out.append(f)
    return out


def _explains(a: Finding | Rule, category: str, nodes: Iterable[str], first: datetime | None,
              a_first: datetime | None, a_nodes: list[str], skew: timedelta) -> bool:
    rule = a.rule if isinstance(a, Finding) else a
    node_set = set(nodes)
    for ex in rule.explains:
        if ex.category is None or not category_matches(ex.category, category):
            continue
        if a_first is not None and first is not None and a_first > first + skew + timedelta(seconds=ex.earlier):
            continue
        if not ex.same_node or node_set <= set(a_nodes):
            return True
    return False


def finding_explains(a: Finding, b: Finding, skew: timedelta) -> bool:
    if a is b or (a.weak and not b.weak):
        return False
    if a.widespread and a.category == b.category:
        return False
    return _explains(a, b.category, b.nodes, b.first, a.first, a.nodes, skew)


def stream_line(f: Finding) -> tuple[str, int] | None:
    """The file and first line of a finding with no time whose events all lie in one file: a stream's lines are
    written in the order they happened, so two such findings of one file are ordered by their lines."""
    if f.first is not None or not f.events:
        return None
    files = {e.evidence.file for e in f.events}
    lines = [e.evidence.line for e in f.events if e.evidence.line is not None]
    if len(files) != 1 or len(lines) != len(f.events):
        return None
    file = files.pop()
    return (file, min(lines)) if file is not None else None


def unordered(a: Finding, b: Finding, window: timedelta) -> bool:
    """Whether the evidence cannot put root `b` more than `window` after root `a` (the earlier one).

    Two roots that nothing links (neither explains the other, and a weak one has already yielded
    to a strong one) are independent causes; the verdict names one of them only when the evidence
    orders them. A start is known to its evidence's resolution: from `first` (the earliest it can
    have happened: a metric change's previous sample) to `began_by` (its own time), so `b` counts
    as later only when its earliest start is more than `window` after `a`'s latest. A finding with
    no time at all (a stamp that was not read) cannot be ordered against any other, but for one
    whose events are on later lines of the one file `a`'s are on (stream_line).
    """
    if a.first is None or b.first is None:
        # (one category and domain stays one cause on all its nodes, however its lines are ordered: _join)
        sa, sb = stream_line(a), stream_line(b)
        return (a.category, a.domain) == (b.category, b.domain) or not (
            sa is not None and sb is not None and sa[0] == sb[0] and sa[1] < sb[1])
    return b.first - (a.began_by or a.first) <= window


def _first_in_stream(roots: list[Finding]) -> None:
    """Where no root has a time, put first the one on the earliest line of the first root's file (stream_line)."""
    head = stream_line(roots[0]) if roots else None
    if head is None:
        return
    best, at = 0, head[1]
    for i, f in enumerate(roots[1:], 1):
        s = stream_line(f)
        if s is not None and s[0] == head[0] and s[1] < at:
            best, at = i, s[1]
    if best:
        roots.insert(0, roots.pop(best))


def _join(primary: Finding, same: list[Finding]) -> None:
    """Roots the evidence cannot order that name one category and domain are one cause on all their nodes (six
    nodes' OOM kills seconds apart are one host.oom on six nodes, not six competing causes): `primary` takes their
    events, nodes, devices and earliest start, and each of them is explained by it (docs/verdict.md, "When two
    causes are independent"). Causes of different categories stay competing candidates."""
    seen = {id(e) for e in primary.events}
    for f in same:
        primary.events.extend(e for e in f.events if id(e) not in seen)
        seen.update(id(e) for e in f.events)
        if not primary.rule.whole_job:
            primary.nodes.extend(n for n in f.nodes if n not in primary.nodes)
        primary.devices.extend(d for d in f.devices if d not in primary.devices)
        primary.count += f.count
        if f.first is not None and (primary.first is None or f.first < primary.first):
            primary.first = f.first
        if f.began_by is not None and (primary.began_by is None or f.began_by < primary.began_by):
            primary.began_by = f.began_by
        f.explained_by = primary
    primary.events.sort(key=event_sort_key)


def _lines_of(f: Finding) -> set[tuple[str, int]] | None:
    """The (file, line) of each of a finding's events; None where one of them has no line."""
    out = set()
    for e in f.events:
        if e.evidence.file is None or e.evidence.line is None:
            return None
        out.add((e.evidence.file, e.evidence.line))
    return out


def _read_finer(coarse: Finding, fine: Finding) -> bool:
    """Whether `fine` is `coarse`'s own lines read to a finer category of the same domain (a job's set-up that an
    exception's message quotes, read by the Slurm client's words as `app.exception.setup` and by the exception's class
    as `app.exception`): one report read twice, not two causes (docs/verdict.md, "When two causes are independent")."""
    if coarse.domain != fine.domain or not fine.category.startswith(coarse.category + "."):
        return False
    mine, theirs = _lines_of(coarse), _lines_of(fine)
    return mine is not None and theirs is not None and mine <= theirs


def _of_its_family(coarse: Finding, fine: Finding) -> bool:
    """Whether `fine` names a finer category of `coarse`'s own family in the same domain (`app.exception.setup` beside
    `app.exception`): category ids are dotted and matched on prefixes (docs/verdict.md, "Root-cause categories"), so a
    consumer reads the two as one cause; where the evidence cannot order them they do not compete, and the finer reading
    stands (docs/verdict.md, "When two causes are independent")."""
    return coarse.domain == fine.domain and fine.category.startswith(coarse.category + ".")


def _strong_for(weak: Finding, strong: list[Finding], settings: Settings) -> Finding:
    """The strong root that a weak root yields to (settings.weak_causes)."""
    if settings.weak_causes == "same_node" and weak.nodes:
        mine = set(weak.nodes)
        for f in strong:
            if mine & set(f.nodes):
                return f
    return strong[0]


def _promote(rule: Rule, events: list[Event], leads: list[LeadDraft]) -> tuple[list[Event], dict[str, LeadDraft]]:
    """A `with_lead` rule's events on the nodes its lead names (others do not count)."""
    if rule.with_lead is None:
        return events, {}
    by_node = lead_nodes(leads, rule.with_lead.kind)
    return [e for e in events if e.node in by_node], by_node


def attribute(events: list[Event], rules: list[Rule], settings: Settings,
              allocation: list[str], leads: list[LeadDraft] | None = None) -> Attribution:
    if leads is None:
        leads = find_leads(events)
    skew = timedelta(seconds=settings.clock_skew)
    cause_rules = [r for r in rules if r.role == "cause"]
    symptom_rules = sorted((r for r in rules if r.role == "symptom"), key=lambda r: (-r.priority, r.id))
    index = RuleIndex(cause_rules)
    sindex = RuleIndex(symptom_rules)
    sym_order = {r.id: i for i, r in enumerate(symptom_rules)}

    matched: dict[str, list[Event]] = {}
    symptoms: list[SymptomHit] = []
    for ev in events:
        for r in index.candidates(ev.kind):
            if rule_matches(r, ev):
                matched.setdefault(r.id, []).append(ev)
        best: Rule | None = None
        for r in sindex.candidates(ev.kind):
            if rule_matches(r, ev) and (best is None or sym_order[r.id] < sym_order[best.id]):
                best = r
        if best is not None:
            symptoms.append(SymptomHit(best.category, ev, all_clear=best.all_clear))

    findings: list[Finding] = []
    for r in cause_rules:
        if r.id in matched:
            evs, by_node = _promote(r, matched[r.id], leads)
            if not evs:
                continue
            for f in _findings_for_rule(r, evs, settings, allocation):
                f.lead = next((by_node[n] for n in f.nodes if n in by_node), None)
                findings.append(f)
    findings.sort(key=Finding.sort_key)

    # Inhibition in time order; a later finding may still explain an earlier
    # one that began within the clock-skew tolerance.
    for i, b in enumerate(findings):
        for a in findings[:i] + findings[i + 1 :]:
            if a.explained_by is b or (a.explained_by is not None and a.root is b):
                continue
            if finding_explains(a, b, skew):
                if finding_explains(b, a, skew) and a.sort_key() > b.sort_key():
                    continue  # mutual: the earlier one stands
                b.explained_by = a
                break

    roots = [f for f in findings if f.explained_by is None]
    strong = [f for f in roots if not f.weak]
    if strong:
        for f in roots:
            if f.weak:
                f.explained_by = _strong_for(f, strong, settings)
        roots = strong
    roots.sort(key=Finding.sort_key)
    _first_in_stream(roots)

    root: Finding | None = None
    candidates: list[Finding] = []
    secondary: list[Finding] = []
    if roots:
        primary = roots[0]
        window = timedelta(seconds=settings.ambiguity_window)
        concurrent = [f for f in roots[1:] if unordered(primary, f, window)]
        if concurrent:
            # one category and domain on several nodes is one cause on those nodes, not competing causes
            heads: dict[tuple[str, str], Finding] = {}
            for f in [primary, *concurrent]:
                head = heads.setdefault((f.category, f.domain), f)
                if head is not f:
                    _join(head, [f])
            group = [f for f in [primary, *concurrent] if f.explained_by is None]
            for f in group:
                finer = next((g for g in group if g is not f and g.explained_by is None and _read_finer(f, g)), None)
                if finer is None:  # not the same lines: a finer category of its family elsewhere, unordered against it
                    finer = next((g for g in group if g.explained_by is None and _of_its_family(f, g)), None)
                if finer is not None:
                    f.explained_by = finer
            primary = primary.root  # its finest reading, where one stands (a chain: the end of it)
            concurrent = [f for f in concurrent if f.explained_by is None and f is not primary]
            # the primary first (a finer reading of it may stand later in time order), so roots[1:] is the rest
            roots = [primary, *(f for f in roots if f.explained_by is None and f is not primary)]
        if concurrent:
            candidates = [primary, *concurrent]
            secondary = [f for f in roots[1:] if f not in concurrent]
        else:
            root = primary
            secondary = roots[1:]

    # Symptoms: classified events not part of a standing cause, plus the
    # events of explained findings that no symptom rule classified.
    standing = {id(e) for f in ([root] if root else []) + candidates + secondary for e in f.events}
    classified = {id(h.event) for h in symptoms}
    hits = [h for h in symptoms if id(h.event) not in standing]
    for f in findings:
        if f.explained_by is not None:
            for e in f.events:
                if id(e) not in classified and id(e) not in standing:
                    hits.append(SymptomHit(f.category, e, f.root))
    causes = [root] if root else candidates
    for h in hits:
        if h.explained_by is not None:
            continue
        t = h.event.earliest()
        for c in causes + secondary:
            if _explains(c, h.category, [h.event.node] if h.event.node else [], t, c.first, c.nodes, skew):
                h.explained_by = c
                break
    hits.sort(key=lambda h: event_sort_key(h.event))
    return Attribution(roots, candidates, root, secondary, findings, hits, leads=leads)


class _TemplateFormatter(string.Formatter):
    """str.format over a finding's values, where a field may name alternatives (docs/rules.md):
    `{error|xid}` the first the event has, `{fm_event|}` or nothing, `{proc|"a process"}` or a word.
    A field the event does not have renders as nothing, never as a placeholder."""

    def get_field(self, field_name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[Any, str]:
        for alt in field_name.split("|"):
            if len(alt) >= 2 and alt[0] == alt[-1] == '"':
                return alt[1:-1], field_name
            value = kwargs.get(alt)
            if value is not None and value != "":
                return value, field_name
        return _NOTHING, field_name


_FORMATTER = _TemplateFormatter()
# A field that rendered as nothing is marked first, so that only the template's own text around it
# is tidied ("({a})" with no a goes whole, "{a}: {b}" with no a is "{b}", "x {a} y" keeps one space), never a
# value's text.
_NOTHING = "\x00"
_EMPTY_PARENS = re.compile(r"\(\s*\x00\s*\)")
_NOTHING_LABEL = re.compile(r"\x00:[ \t]")  # a label that is nothing takes the template's colon after it along
_SPACED_NOTHING = re.compile(r"(?<![ \t])[ \t]*\x00")  # from a run's first blank: linear in a run of them
# The fields whose values are firstfault's own names (docs/events.md: a local status, a reason, a condition, a
# panic's kind), snake_case words that a verdict's reader should read as words: `no_interface` renders as
# `no interface`. A value that is not such a name (a vendor's `ncclInvalidUsage`, an errno) renders as it is.
_NAMED_FIELDS = frozenset({"local_status", "due_to", "panic", "condition", "fm_event", "severity", "reason", "refusal",
                           "error", "name"})
_OWN_NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def _worded(key: str, value: FieldValue | str) -> FieldValue | str:
    if key in _NAMED_FIELDS and isinstance(value, str) and _OWN_NAME.fullmatch(value):
        return value.replace("_", " ")
    return value


# What a template says for a node the evidence did not name: prose in a summary, a blank to fill in an action's
# commands (`drain <node>`, `kubectl describe node <node>`), where words would read as the node's name.
UNNAMED_NODE: Final = "an unidentified node"
UNNAMED_NODE_IN_ACTION: Final = "<node>"


def _label_at_end_dropped(out: str) -> str:
    """`x: {a}` at the end with no a is `x` (the colon and the blanks around it go with the nothing), by string ends
    rather than a pattern anchored at `$`, which a search would try from every blank of a long run."""
    body = out.rstrip(" \t")
    if not body.endswith(_NOTHING):
        return out
    head = body[:-1].rstrip(" \t")
    return head[:-1].rstrip(" \t") if head.endswith(":") else out


def render(template: str, f: Finding, action: bool = False) -> str:
    """Formats a rule template with the finding's first event and aggregates (`action`: a recommended action's)."""
    ev = f.events[0] if f.events else None
    values: dict[str, FieldValue | str] = {}
    unnamed = UNNAMED_NODE_IN_ACTION if action else UNNAMED_NODE
    node = f.nodes[0] if f.nodes else unnamed
    if ev is not None:
        values.update((k, _worded(k, v)) for k, v in ev.fields.items())
        if ev.rank is not None:
            values["rank"] = ev.rank
    ranks = sorted({e.rank for e in f.events if e.rank is not None})
    values.update(
        node=node,
        # the process that printed the first event: its rank where the evidence says it, else its node
        where=f"rank {ev.rank} on {node}" if ev is not None and ev.rank is not None else node,
        nodes=", ".join(f.nodes) if f.nodes else unnamed,
        node_count=len(f.nodes),
        device=(f.devices[0].split("/", 1)[-1] if f.devices else ""),
        devices=", ".join(f.devices),
        count=f.count,
        ranks=", ".join(str(r) for r in ranks[:16]) + (" ..." if len(ranks) > 16 else ""),
        title=f.rule.title,
    )
    if f.lead is not None:
        values.update(lead=f.lead.summary, lead_ranks=", ".join(str(r) for r in f.lead.ranks[:16]))
    out = _FORMATTER.vformat(template, (), {k: v for k, v in values.items() if k != _NOTHING})
    if _NOTHING in out:
        out = _label_at_end_dropped(_EMPTY_PARENS.sub("", out))
        out = _SPACED_NOTHING.sub("", _NOTHING_LABEL.sub("", out))
    return " ".join(out.split())
