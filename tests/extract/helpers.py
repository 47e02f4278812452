"""Feeding lines to extractors the way the scanner does, for the extractor tests."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.collect.scan import Extraction, all_line_extractors
from firstfault.extract import exceptions, nccl, numerics, signals, torchrun
from firstfault.extract.base import Candidate, Draft, LineExtractor
from firstfault.model import Event, Symptom, Verdict

FILES = {"application": "slurm-4242.out"}


def holds_literal(ex: LineExtractor, line: str) -> bool:
    return any(w in line for w in ex.literals)


def scan(
    extractors: tuple[LineExtractor, ...] | LineExtractor,
    lines: list[str],
    source: str = "kernel",
    rank: int | None = None,
) -> list[Draft]:
    """The extractors' drafts for the lines, fed through the production path (collect/scan.Extraction):
    only lines holding one of an extractor's literals reach it, launcher prefixes come off, one shared
    state per stream."""
    exs = extractors if isinstance(extractors, tuple) else (extractors,)
    if len(exs) == 1:
        assert source in exs[0].sources, f"{exs[0].name} does not read {source}"
    feed = Extraction(exs)
    file = FILES.get(source, "nodes/n1/kern.log")
    node = None if source == "application" else "n1"
    out: list[Draft] = []
    for n, line in enumerate(lines, 1):
        drafts, ctx = feed.drafts(Candidate(source, file, n, node, rank, None, line))
        # The rank and host the event gets (draft_to_event): the line's own, else its prefix's.
        out.extend(replace(d, rank=d.rank if d.rank is not None else ctx.rank, host=d.host or ctx.host)
                   for d in drafts if ctx is not None)
    return out



def events(lines: list[str], source: str = "application", *, file: str = "app.log", node: str | None = None,
           hosts: tuple[str, ...] = (), extraction: Extraction | None = None) -> list[Event]:
    """Every line extractor's events for the lines, one stream of one file, through the production path
    (collect/scan.Extraction): the tests' one feed of whole lines. `extraction`: one to reuse (its per-stream state
    goes on from the lines it read before)."""
    ex = extraction if extraction is not None else Extraction(all_line_extractors(), hosts=hosts)
    out: list[Event] = []
    for i, text in enumerate(lines, 1):
        out.extend(ex.events(Candidate(source, file, i, node, None, None, text)))
    return out

def one(ex: LineExtractor, line: str, source: str = "kernel") -> Draft:
    assert holds_literal(ex, line), "prefilter contract: the line must hold a literal"
    drafts = scan(ex, [line], source)
    assert len(drafts) == 1, drafts
    return drafts[0]


def kinds(drafts: list[Draft]) -> list[str]:
    return [d.kind for d in drafts]


def assert_fields(d: Draft, expected: dict[str, Any]) -> None:
    for k, v in expected.items():
        assert d.fields.get(k) == v, (k, d.fields.get(k), v)


TB = "Traceback (most recent call last):"

# The extractors of the training processes' own output, in the registry's order (extract/registry.py).
APPLICATION: tuple[LineExtractor, ...] = (
    *exceptions.EXTRACTORS, *numerics.EXTRACTORS, *torchrun.EXTRACTORS, *signals.EXTRACTORS)


# The application's extractors with NCCL's: what a rank's output is read by, for the exception tables' tests.
APP_AND_NCCL: tuple[LineExtractor, ...] = (*nccl.EXTRACTORS, *APPLICATION)


def last_line(line: str) -> list[Draft]:
    """A traceback's last line: its header, then the line (APP_AND_NCCL)."""
    return scan(APP_AND_NCCL, [TB, line], "application")


def alone(line: str) -> list[Draft]:
    """A line of its own in a rank's output (APP_AND_NCCL)."""
    return scan(APP_AND_NCCL, [line], "application")


def scan_application(extractors: tuple[LineExtractor, ...] | LineExtractor, lines: list[str],
                     rank: int | None = None) -> list[Draft]:
    """scan() of lines of the application source (a training process's output)."""
    return scan(extractors, lines, "application", rank)


def one_application(ex: LineExtractor, line: str) -> Draft:
    return one(ex, line, "application")


def assert_cause_with_collective_fallout(v: Verdict, domain: str, category: str, node: str) -> dict[str, Symptom]:
    """The verdict names one cause on one node, with no rival, and the other ranks' collective timeouts are its
    symptoms; the symptoms by category, for what a test checks beyond that."""
    assert v.attributed_domain == domain
    assert v.root_cause is not None and v.root_cause.category == category
    assert v.root_cause.nodes == [node]
    assert not v.candidates
    cats = {s.category: s for s in v.symptoms}
    assert cats["nccl.timeout"].explained_by == category
    return cats


def claimed(line: str, source: str = "kernel") -> bool:
    """Does any extractor understand the line (an event, or the line claimed as part of what it read)?"""
    ex = Extraction(all_line_extractors())
    drafts, ctx = ex.drafts(Candidate(source, "f.log", 1, "n1", None, None, line))
    return bool(drafts) or (ctx is not None and ctx.claimed)


def count_quiet(monkeypatch: Any) -> list[str]:
    """The lines the worker reads quietly from now on (collect/scan.py `Extraction.read_quiet` returning true), in the
    order it reads them: `monkeypatch` (pytest's) wraps the method for the test."""
    read = Extraction.read_quiet
    quiet: list[str] = []

    def counting(self: Extraction, source: str, file: str, rank: int | None, text: str, ids: tuple[int, ...],
                 wraps: bool = False) -> bool:
        got = read(self, source, file, rank, text, ids, wraps)
        if got:
            quiet.append(text)
        return got

    monkeypatch.setattr(Extraction, "read_quiet", counting)
    return quiet


def assert_same_without_quiet(monkeypatch: Any, verdict: Any, on: str) -> None:
    """The verdict `on` (read with the quiet path) is the one read with no line read quietly (quiet_hits refusing
    every line) and the one read with every fast path off: `verdict()` reads the bundle again."""
    from firstfault.extract import memo

    monkeypatch.setattr(Extraction, "quiet_hits", lambda *a: False)
    with memo.fastpath(True):
        assert verdict() == on
    with memo.fastpath(False):
        assert verdict() == on


def read_rank_logs_quietly(make_bundle: Any, monkeypatch: Any,
                           rows: list[list[str]]) -> tuple[str, list[str], Callable[[], str]]:
    """A bundle of one application log per rank (`rows[r]`'s lines, the empty ones left out) under the suite's
    WORKLOAD, read with every fast path on: its verdict's bytes, the lines read quietly on the way (count_quiet), and
    a reader of the verdict anew (for assert_same_without_quiet)."""
    from firstfault.extract import memo
    from tests.conftest import WORKLOAD

    files = {f"app/rank-{r}.log": "\n".join(filter(None, row)) + "\n" for r, row in enumerate(rows)}
    root: Path = make_bundle(files, copy.deepcopy(WORKLOAD))

    def verdict() -> str:
        return records.dumps(Analyzer().analyze_path(str(root), now=datetime(2026, 12, 1, 12, 0, tzinfo=UTC)),
                             indent=2)

    quiet = count_quiet(monkeypatch)
    with memo.fastpath(True):
        on = verdict()
    return on, quiet, verdict
