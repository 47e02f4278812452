"""Scores a corpus of bundles with expected verdicts: the wild corpus, the lab's runs, the scenarios.

    .venv/bin/python -m tests.corpus tests/wild [more dirs...] [--verbose] [--unknown-end]

    .venv/bin/python -m tests.corpus tests/wild --by batch     # or --by ecosystem, rule; default: family

Each bundle holds `expected.yaml` (decided from the thread or the injected
fault before the tool ran): `domain`, optionally `category` (a prefix),
`affected_nodes`, `family` (for the table; else the domain), and for the
wild corpus's later batches `batch` and `ecosystem`. Per group it prints how
many bundles, the domain and category accuracy, false definitive verdicts (a
cause claimed where the evidence establishes none: expected `unknown` or
`ambiguous`, got a cause domain) and false alarms (expected `none`, got a
cause or `ambiguous`). A bundle the tool cannot read at all is scored as
wrong (got `error`): that is what a user meets.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from firstfault import yamlio
from firstfault.analysis.analyze import Analyzer
from firstfault.model import CAUSE_DOMAINS, Verdict


@dataclass(slots=True)
class Score:
    bundle: str
    family: str
    batch: str
    ecosystem: str
    expected: str
    got: str
    domain_ok: bool
    category_ok: bool
    nodes_ok: bool
    false_definitive: bool
    false_alarm: bool
    outcome: str = "-"  # the verdict's outcome
    rule: str = "-"  # the rule of the verdict's root cause (`--by rule`: how right each rule's causes are)

    @property
    def ok(self) -> bool:
        return self.domain_ok and self.category_ok and self.nodes_ok


def _prefix(want: str, got: str | None) -> bool:
    return got is not None and (got == want or got.startswith(want + "."))


def score(bundle: Path, v: Verdict, exp: dict[str, Any]) -> Score:
    want_domain = exp["domain"]
    domain_ok = v.attributed_domain == want_domain
    got_cat = v.root_cause.category if v.root_cause else None
    if exp.get("category"):
        cats = [got_cat] if got_cat else [c.category for c in v.candidates]
        category_ok = any(_prefix(exp["category"], c) for c in cats)
    else:
        category_ok = domain_ok
    nodes_ok = "affected_nodes" not in exp or sorted(v.affected_nodes) == sorted(exp["affected_nodes"])
    false_definitive = want_domain in ("unknown", "ambiguous") and v.attributed_domain in CAUSE_DOMAINS
    false_alarm = want_domain == "none" and (v.attributed_domain in CAUSE_DOMAINS or v.attributed_domain == "ambiguous")
    return Score(
        bundle=bundle.name, family=str(exp.get("family") or want_domain),
        batch=str(exp.get("batch") or "-"), ecosystem=str(exp.get("ecosystem") or "-"),
        expected=f"{want_domain} {exp.get('category') or '-'}", got=f"{v.attributed_domain} {got_cat or '-'}",
        domain_ok=domain_ok, category_ok=category_ok, nodes_ok=nodes_ok,
        false_definitive=false_definitive, false_alarm=false_alarm, outcome=v.outcome,
        rule=v.root_cause.rule if v.root_cause else "-",
    )


def bundles(roots: list[Path]) -> list[Path]:
    return sorted({p.parent for r in roots for p in r.glob("*/expected.yaml")})


def score_all(roots: list[Path], analyzer: Analyzer | None = None,
              verdicts: dict[Path, Verdict | Exception] | None = None) -> list[Score]:
    """Each bundle's score; `verdicts` (SharedVerdicts.verdicts) gives the verdicts already made, else each is made."""
    an = analyzer or Analyzer()
    out = []
    for b in bundles(roots):
        exp = yamlio.load((b / "expected.yaml").read_text())  # the tool's own loader (libyaml's, where built)
        v = verdicts.get(b.resolve()) if verdicts is not None else None
        if v is None:
            try:
                v = an.analyze_path(str(b))
            except Exception as exc:
                v = exc
        if isinstance(v, Exception):  # a bundle the tool cannot read is wrong, and never hides the others
            print(f"{b}: {type(v).__name__}: {str(v)[:200]}", file=sys.stderr)
            out.append(unreadable(b, exp))
            continue
        out.append(score(b, v, exp))
    return out


TESTS = Path(__file__).resolve().parent
# The corpora whose default verdicts several tests read (tests/conftest.py: `shared_verdicts`): the wild corpus and
# the lab's captures (tests/collect/test_fastpath.py's order), then the examples (tests/collect/test_matcher.py).
SHARED_ROOTS = (TESTS / "wild", TESTS / "lab" / "captured", TESTS.parent / "examples")
SHARED_NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)  # `now` sets analyzed_at alone


@dataclass(frozen=True, slots=True)
class SharedVerdicts:
    """Every bundle of SHARED_ROOTS analysed once, as a service would: one Analyzer, the fast paths on, memos
    starting empty and shared across the bundles, the bundles in order (sorted by path: the wild corpus and the
    lab's captures, then the examples), at SHARED_NOW."""
    verdicts: dict[Path, Verdict | Exception]  # by the bundle's resolved directory; what analyze_path raised, if it did
    memo_hits: dict[str, int]  # each memo's hits after the wild corpus and the lab's captures
    engine: str  # the prefilter engine of this process (collect/scan.py MATCHER_ENGINE)


def shared_bundles(roots: tuple[Path, ...] = SHARED_ROOTS) -> list[Path]:
    return sorted({p.parent.resolve() for r in roots for name in ("workload.yaml", "expected.yaml")
                   for p in r.glob(f"*/{name}")})


def shared_verdicts() -> SharedVerdicts:
    from firstfault.collect import scan
    from firstfault.extract import memo

    analyzer = Analyzer()
    verdicts: dict[Path, Verdict | Exception] = {}

    def analyze(roots: tuple[Path, ...]) -> None:
        for b in shared_bundles(roots):
            try:
                verdicts[b] = analyzer.analyze_path(str(b), now=SHARED_NOW)
            except Exception as exc:  # kept for the test that reads it (scored wrong, or raised)
                verdicts[b] = exc

    with memo.fastpath(True):
        analyze(SHARED_ROOTS[:2])
        hits = {m.name: m.hits for m in memo._ALL}  # after the wild corpus and the lab's captures
        analyze(SHARED_ROOTS[2:])
    return SharedVerdicts(verdicts, hits, scan.MATCHER_ENGINE)


def shared_verdict(shared: SharedVerdicts, bundle: Path) -> Verdict:
    v = shared.verdicts[bundle.resolve()]
    if isinstance(v, Exception):
        raise v
    return v


def unreadable(bundle: Path, exp: dict[str, Any]) -> Score:
    want_domain = exp["domain"]
    return Score(
        bundle=bundle.name, family=str(exp.get("family") or want_domain),
        batch=str(exp.get("batch") or "-"), ecosystem=str(exp.get("ecosystem") or "-"),
        expected=f"{want_domain} {exp.get('category') or '-'}", got="error -",
        domain_ok=False, category_ok=False, nodes_ok=False, false_definitive=False, false_alarm=False,
    )


def table(scores: list[Score], by: str = "family") -> str:
    fams = sorted({getattr(s, by) for s in scores})
    rows = [(by, "n", "domain", "category", "false definitive", "false alarm")]
    for fam in [*fams, "all"]:
        ss = [s for s in scores if fam == "all" or getattr(s, by) == fam]
        n = len(ss)
        dom, cat = sum(s.domain_ok for s in ss) / n, sum(s.category_ok for s in ss) / n
        rows.append((fam, str(n), f"{dom:.2f}", f"{cat:.2f}", str(sum(s.false_definitive for s in ss)),
                     str(sum(s.false_alarm for s in ss))))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows)


def unknown_end(scores: list[Score]) -> str:
    """The bundles read `unknown` whose end is not shown (outcome unknown), by the domain each expects. Since the
    end-not-shown policy (docs/verdict.md: nothing failed -> `none`), these are the runs whose evidence holds a failure
    no rule turned into a cause: those expecting `none` are runs that went on past an error-looking line."""
    counts: dict[str, int] = {}
    for s in scores:
        if s.outcome == "unknown" and s.got == "unknown -":
            want = s.expected.split()[0]
            counts[want] = counts.get(want, 0) + 1
    return "\n".join(f"{d}  {n}" for d, n in sorted(counts.items()))


def main(argv: list[str]) -> int:
    verbose = "--verbose" in argv
    by = "family"
    if "--by" in argv:
        by = argv[argv.index("--by") + 1]
        argv = [a for i, a in enumerate(argv) if a != "--by" and (i == 0 or argv[i - 1] != "--by")]
    if by not in ("family", "batch", "ecosystem", "rule"):
        print(f"--by {by}: one of family, batch, ecosystem, rule", file=sys.stderr)
        return 2
    roots = [Path(a) for a in argv if not a.startswith("--")] or [Path(__file__).parent / "wild"]
    scores = score_all(roots)
    if verbose:
        for s in scores:
            flag = "ok" if s.ok else "WRONG" + (" FALSE-DEFINITIVE" if s.false_definitive else "") + (
                " FALSE-ALARM" if s.false_alarm else "")
            print(f"{flag:8} {s.bundle:60} expected {s.expected:40} got {s.got}")
        print()
    if "--unknown-end" in argv:
        print("read unknown with the end not shown, by the expected domain:")
        print(unknown_end(scores))
        print()
    print(table(scores, by))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
