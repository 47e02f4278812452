"""Every scenario bundle in tests/scenarios/ against its expected verdict.

A scenario is an evidence bundle plus expected.yaml (domain, category prefix,
affected nodes, symptoms that must appear, candidates for ambiguous ones, the
root cause's devices and the leads that must be there).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from firstfault.analysis.analyze import Analyzer
from firstfault.model import Verdict

ROOT = Path(__file__).parent / "scenarios"
SCENARIOS = sorted(p.parent for p in ROOT.glob("*/expected.yaml"))


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer()


def _check(v: Verdict, exp: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    if "outcome" in exp and v.outcome != exp["outcome"]:
        problems.append(f"outcome {v.outcome} != {exp['outcome']}")
    if v.attributed_domain != exp["domain"]:
        problems.append(f"domain {v.attributed_domain} != {exp['domain']}")
    if exp.get("category"):
        got = v.root_cause.category if v.root_cause else None
        if got is None or not (got == exp["category"] or got.startswith(exp["category"] + ".")):
            problems.append(f"category {got} does not start with {exp['category']}")
    if "affected_nodes" in exp and sorted(v.affected_nodes) != sorted(exp["affected_nodes"]):
        problems.append(f"affected_nodes {v.affected_nodes} != {exp['affected_nodes']}")
    if exp.get("candidates"):
        got_c = [c.category for c in v.candidates]
        for want in exp["candidates"]:
            if not any(c == want or c.startswith(want + ".") for c in got_c):
                problems.append(f"candidate {want} missing from {got_c}")
        if len(got_c) != len(exp["candidates"]):
            problems.append(f"{len(got_c)} candidates, expected {len(exp['candidates'])}: {got_c}")
    if exp.get("devices"):
        got_d = v.root_cause.devices if v.root_cause else []
        missing = [d for d in exp["devices"] if d not in got_d]
        if missing:
            problems.append(f"devices {missing} missing from the root cause's {got_d}")
    for want_lead in exp.get("leads") or []:
        if not any(ld.kind == want_lead["kind"] and all(d in ld.devices for d in want_lead.get("devices", []))
                   for ld in v.leads):
            problems.append(f"lead {want_lead} missing from {[(ld.kind, ld.devices) for ld in v.leads]}")
    cats = {s.category: s for s in v.symptoms}
    for want in exp.get("symptoms") or []:
        if isinstance(want, str):
            want = {"category": want}
        matches = [s for c, s in cats.items() if c == want["category"] or c.startswith(want["category"] + ".")]
        if not matches:
            problems.append(f"symptom {want['category']} missing from {sorted(cats)}")
        elif "nodes" in want:
            nodes = sorted({n for s in matches for n in s.nodes})
            if nodes != sorted(want["nodes"]):
                problems.append(f"symptom {want['category']} nodes {nodes} != {sorted(want['nodes'])}")
    cov = {c.source: c.status for c in v.coverage}
    for source, status in (exp.get("coverage") or {}).items():
        if cov.get(source) != status:
            problems.append(f"coverage of {source} is {cov.get(source)}, expected {status}")
    for bad in exp.get("not_symptoms") or []:
        if any(c == bad or c.startswith(bad + ".") for c in cats):
            problems.append(f"symptom {bad} must not appear")
    return problems


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[p.name for p in SCENARIOS])
def test_scenario(scenario: Path, analyzer: Analyzer) -> None:
    exp = yaml.safe_load((scenario / "expected.yaml").read_text())
    v = analyzer.analyze_path(str(scenario))
    problems = _check(v, exp)
    summary = (
        f"{v.attributed_domain} {v.root_cause.category if v.root_cause else '-'} "
        f"nodes={v.affected_nodes} symptoms={[s.category for s in v.symptoms]}"
    )
    assert not problems, f"{scenario.name}: {problems}\n  got: {summary}\n  notes: {v.explanation}"


def test_corpus_is_large_enough() -> None:
    assert len(SCENARIOS) >= 40, f"only {len(SCENARIOS)} scenarios"
