"""Runs each rule's own tests (promtool-style): explicit inputs, explicit expectations."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from xml.etree import ElementTree as ET

from firstfault.engine.attribute import Finding, attribute
from firstfault.engine.catalog import Catalog, Rule, RuleTest
from firstfault.engine.match import category_matches
from firstfault.extract.base import LineContext
from firstfault.model import Event, Evidence, FieldValue

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(slots=True)
class CaseResult:
    rule: str
    name: str
    ok: bool
    message: str
    file: str


def _events_for(test: RuleTest) -> list[Event]:
    from firstfault.extract.common import norm_pci
    from firstfault.scan import all_line_extractors

    events: list[Event] = []
    for i, line in enumerate(test.lines):
        t = EPOCH + timedelta(seconds=line.t)
        ctx = LineContext(source=line.source, file="test", lineno=i + 1, node=line.node, rank=line.rank,
                          time=t, state={})
        for ex in all_line_extractors():
            if line.source not in ex.sources or not any(w in line.text for w in ex.literals):
                continue
            for d in ex.extract(line.text, ctx):
                fields = dict(d.fields)
                if d.host:
                    fields["host"] = d.host
                device = d.device
                if device and device.startswith("pci:"):
                    device = "pci:" + norm_pci(device[4:])
                events.append(Event(kind=d.kind, time=t, node=line.node,
                                    rank=d.rank if d.rank is not None else line.rank, device=device,
                                    fields=fields,
                                    evidence=Evidence(source=line.source, file="test", line=i + 1,
                                                      text=line.text)))
    for j, te in enumerate(test.events):
        extra: dict[str, FieldValue] = {}
        for k, v in (te.model_extra or {}).items():
            extra[k] = v if isinstance(v, (str, int, float, bool)) or v is None else str(v)
        te_t = None if te.t is None else EPOCH + timedelta(seconds=te.t)
        events.append(Event(kind=te.kind, time=te_t, node=te.node, rank=te.rank, device=te.device,
                            fields=extra,
                            evidence=Evidence(source="test", file="test", line=j + 1, text=te.kind)))
    return events


def run_case(rule: Rule, test: RuleTest, catalog: Catalog) -> tuple[bool, str]:
    events = _events_for(test)
    nodes = test.nodes or sorted({e.node for e in events if e.node})
    att = attribute(events, [rule], catalog.settings, nodes)
    got: list[tuple[str, list[str]]]
    if rule.role == "cause":
        fs: list[Finding] = att.findings
        got = [(f.category, list(f.nodes)) for f in fs]
    else:
        got = [(h.category, [h.event.node] if h.event.node else []) for h in att.symptoms]
    if test.lines and not events:
        return False, "no extractor produced an event from the test lines"
    remaining = list(got)
    for exp in test.expect:
        hit = next(
            (g for g in remaining
             if category_matches(exp.category, g[0]) and (exp.nodes is None or sorted(exp.nodes) == sorted(g[1]))),
            None,
        )
        if hit is None:
            return False, f"expected {exp.category} on {exp.nodes or 'any nodes'}; got {got or 'nothing'}"
        remaining.remove(hit)
    if remaining and rule.role == "cause":
        return False, f"unexpected findings: {remaining}"
    if not test.expect and got:
        return False, f"expected nothing; got {got}"
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
