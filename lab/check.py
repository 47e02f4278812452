"""Compare firstfault's verdict on each lab bundle with the bundle's expected.yaml."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

DEFINITIVE = {"hardware", "network", "software", "storage", "infrastructure", "scheduler"}


@dataclass
class Check:
    fault: str
    expected: dict[str, Any]
    domain: str
    category: str | None
    nodes: list[str]
    outcome: str
    problems: list[str] = field(default_factory=list)
    summary: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def false_definitive(self) -> bool:
        return self.expected["domain"] in ("unknown", "none") and self.domain in DEFINITIVE


def compare(verdict: Any, exp: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    if verdict.attributed_domain != exp["domain"]:
        problems.append(f"domain {verdict.attributed_domain} != {exp['domain']}")
    got = verdict.root_cause.category if verdict.root_cause else None
    want = exp.get("category")
    if want and (got is None or not (got == want or got.startswith(want + "."))):
        problems.append(f"category {got} does not start with {want}")
    if not want and exp["domain"] in ("unknown", "none", "ambiguous") and got is not None:
        problems.append(f"root cause {got} named where none is expected")
    if "affected_nodes" in exp and sorted(verdict.affected_nodes) != sorted(exp["affected_nodes"]):
        problems.append(f"affected_nodes {verdict.affected_nodes} != {exp['affected_nodes']}")
    if exp.get("outcome") and verdict.outcome != exp["outcome"]:
        problems.append(f"outcome {verdict.outcome} != {exp['outcome']}")
    return problems


def check_bundle(bundle: Path, analyzer: Any = None) -> Check:
    from firstfault.analysis.analyze import Analyzer
    from firstfault.bundle import BundleError

    analyzer = analyzer or Analyzer()
    exp = yaml.safe_load((bundle / "expected.yaml").read_text())
    try:
        v = analyzer.analyze_path(str(bundle))
    except BundleError as exc:  # a run that broke before its workload.yaml was written: a row, not a crash
        return Check(bundle.name, exp, "unreadable", None, [], "", [f"bundle not readable: {exc}"])
    cat = v.root_cause.category if v.root_cause else None
    c = Check(bundle.name, exp, v.attributed_domain, cat, list(v.affected_nodes), v.outcome, compare(v, exp))
    c.summary = v.root_cause.summary if v.root_cause else ""
    return c


def bundles_in(root: Path) -> list[Path]:
    if (root / "expected.yaml").is_file():
        return [root]
    return sorted(p.parent for p in root.glob("*/expected.yaml"))


def table(checks: list[Check]) -> str:
    rows = [("fault", "expected", "got", "nodes", "result")]
    for c in checks:
        exp = f"{c.expected['domain']}/{c.expected.get('category') or '-'}"
        got = f"{c.domain}/{c.category or '-'}"
        res = "OK" if c.ok else "WRONG"
        if c.false_definitive:
            res += " FALSE DEFINITIVE"
        nodes = ",".join(c.nodes) or "-"
        want_nodes = ",".join(c.expected.get("affected_nodes") or []) or "-"
        if sorted(c.nodes) != sorted(c.expected.get("affected_nodes") or []):
            nodes = f"{nodes} (want {want_nodes})"
        rows.append((c.fault, exp, got, nodes, res))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    ok = sum(c.ok for c in checks)
    fd = sum(c.false_definitive for c in checks)
    lines.append(f"\n{ok}/{len(checks)} OK, {len(checks) - ok} WRONG, {fd} FALSE DEFINITIVE")
    return "\n".join(lines)
