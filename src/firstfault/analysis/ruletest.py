"""Runs each rule's own tests (promtool-style): explicit inputs, explicit expectations."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from xml.etree import ElementTree as ET

from firstfault.engine.attribute import Finding, attribute
from firstfault.engine.loader import Catalog
from firstfault.engine.normalise import net_found_after, terminal_lines, unused_ports
from firstfault.engine.rules import Rule, RuleTest
from firstfault.model import Event, Evidence, FieldValue
from firstfault.spec import category_matches

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(slots=True)
class CaseResult:
    rule: str
    name: str
    ok: bool
    message: str
    file: str


def _events_for(test: RuleTest) -> list[Event]:
    """The test's lines through the production path (scanner dispatch, prefix layer, multi-line
    records, one stream per file and rank), plus its literal events."""
    from firstfault.collect.scan import feed_store
    from firstfault.extract.base import Candidate
    from firstfault.pci import norm_pci

    nodes = test.nodes or sorted({ln.node for ln in test.lines if ln.node})
    candidates = [
        Candidate(source=ln.source, file=f"test/{ln.source}/{ln.node or '-'}", line=i + 1, node=ln.node,
                  rank=ln.rank, time=EPOCH + timedelta(seconds=ln.t), text=ln.text)
        for i, ln in enumerate(test.lines)
    ]
    store = feed_store(candidates, hosts=nodes, ends=True)
    events = store.events
    for ev in events:
        if ev.device and ev.device.startswith("pci:"):
            ev.device = "pci:" + norm_pci(ev.device[4:])
    for j, te in enumerate(test.events):
        extra: dict[str, FieldValue] = {}
        for k, v in te.extra.items():
            extra[k] = v if isinstance(v, (str, int, float, bool)) or v is None else str(v)
        te_t = None if te.t is None else EPOCH + timedelta(seconds=te.t)
        events.append(Event(kind=te.kind, time=te_t, node=te.node, rank=te.rank, device=te.device,
                            fields=extra,
                            evidence=Evidence(source="test", file="test", line=j + 1, text=te.kind)))
    # (a test's lines name their node: the ports its programs named, and NCCL's network words, are that node's)
    said = [(node, ports) for ports, _, node, _, _ in store.ports_used]
    ready = [(file, node, line or 0, rank, net) for net, file, line, _, node, _, rank in store.net_ready]
    return terminal_lines(unused_ports(net_found_after(events, ready), said))


def run_case(rule: Rule, test: RuleTest, catalog: Catalog) -> tuple[bool, str]:
    """One test of one rule, attributed by the whole active catalog (so `explains` and precedence
    between rules are exercised); the expectations are on this rule's findings or symptoms."""
    events = _events_for(test)
    nodes = test.nodes or sorted({e.node for e in events if e.node})
    rules = [r for r in catalog.active() if r.id != rule.id] + [rule]
    att = attribute(events, rules, catalog.settings, nodes)
    got: list[tuple[str, list[str], str | None]]
    if rule.role == "cause":
        fs: list[Finding] = [f for f in att.findings if f.rule.id == rule.id]
        got = [(f.category, list(f.nodes), None) for f in fs]
    else:
        got = [(h.category, [h.event.node] if h.event.node else [],
                h.explained_by.category if h.explained_by else "none")
               for h in att.symptoms if category_matches(rule.category, h.category)]
    if test.lines and not events:
        return False, "no extractor produced an event from the test lines"
    remaining = list(got)
    for exp in test.expect:
        hit = next(
            (g for g in remaining
             if category_matches(exp.category, g[0]) and (exp.nodes is None or sorted(exp.nodes) == sorted(g[1]))
             and (exp.explained_by is None or (g[2] is not None and (
                 g[2] == exp.explained_by or category_matches(exp.explained_by, g[2]))))),
            None,
        )
        if hit is None:
            return False, f"expected {exp.category} on {exp.nodes or 'any nodes'}; got {got or 'nothing'}"
        remaining.remove(hit)
    if remaining and rule.role == "cause":
        return False, f"unexpected findings: {remaining}"
    if not test.expect and got:
        return False, f"expected nothing; got {got}"
    if test.root is not None:
        root = att.root.category if att.root else "none"
        if not (root == test.root or category_matches(test.root, root)):
            return False, f"expected root cause {test.root}; the catalog's root is {root}"
    return True, "ok"


def run_all(catalog: Catalog, only: str | None = None) -> list[CaseResult]:
    out: list[CaseResult] = []
    for lr in catalog.rules:
        if only and lr.rule.id != only:
            continue
        for test in lr.rule.tests:
            try:
                ok, msg = run_case(lr.rule, test, catalog)
            except Exception as exc:  # a broken test must not hide the others
                ok, msg = False, f"error: {type(exc).__name__}: {exc}"
            out.append(CaseResult(lr.rule.id, test.name, ok, msg, lr.file))
    return out


def junit_xml(results: list[CaseResult]) -> str:
    suite = ET.Element("testsuite", name="firstfault-rules", tests=str(len(results)),
                       failures=str(sum(not r.ok for r in results)))
    for r in results:
        case = ET.SubElement(suite, "testcase", classname=r.rule, name=r.name, file=r.file)
        if not r.ok:
            fail = ET.SubElement(case, "failure", message=r.message)
            fail.text = r.message
    return ET.tostring(suite, encoding="unicode")
