"""Feeding lines to extractors the way the scanner does, for the extractor tests."""

from __future__ import annotations

from typing import Any

from firstfault.extract.base import Draft, LineContext, LineExtractor

FILES = {"application": "slurm-4242.out"}


def holds_literal(ex: LineExtractor, line: str) -> bool:
    return any(w in line for w in ex.literals)


def scan(
    extractors: tuple[LineExtractor, ...] | LineExtractor,
    lines: list[str],
    source: str = "kernel",
    rank: int | None = None,
) -> list[Draft]:
    """Only lines holding one of an extractor's literals reach it; one shared state per stream."""
    exs = extractors if isinstance(extractors, tuple) else (extractors,)
    if len(exs) == 1:
        assert source in exs[0].sources, f"{exs[0].name} does not read {source}"
    state: dict[str, object] = {}
    out: list[Draft] = []
    for n, line in enumerate(lines, 1):
        for ex in exs:
            if source not in ex.sources or not holds_literal(ex, line):
                continue
            ctx = LineContext(source=source, file=FILES.get(source, "nodes/n1/kern.log"), lineno=n,
                              node=None if source == "application" else "n1", rank=rank, time=None, state=state)
            out.extend(ex.extract(line, ctx))
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
