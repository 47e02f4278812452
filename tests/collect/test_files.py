"""Files connector: a scenario bundle read through the connector equals the bundle analysis."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import Bundle, SourceSpec, load_bundle
from firstfault.collect.evidence import collect_bundle
from firstfault.collect.files import FilesConnector
from firstfault.collect.scan import prefilter_words
from firstfault.extract.base import Candidate
from firstfault.model import CoverageItem, ErrorItem, Verdict

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
NOW = datetime(2026, 11, 29, tzinfo=UTC)


def _verdict(v: Verdict, declared: set[str]) -> str:
    # A bundle analysis also lists the kinds it has no source for as "missing"; a connector covers
    # only its own kinds (the pipeline adds the gaps nobody covered), so those entries are left out.
    v.coverage = [c for c in v.coverage if c.source in declared]
    return records.dumps(v)


class _Seen:
    """A sink that keeps every candidate it is given (it offers no fold: collect/fold.py)."""

    def __init__(self) -> None:
        self.coverage: list[CoverageItem] = []
        self.errors: list[ErrorItem] = []
        self.candidates: list[Candidate] = []

    def add_candidate(self, c: Candidate) -> None:
        self.candidates.append(c)

    def add_document(self, source: str, fmt: str | None, file: str, data: bytes | IO[bytes], *,
                     node: str | None = None, rank: int | None = None) -> tuple[int, list[tuple[int | None, str]]]:
        return 0, []

    def saw_node(self, node: str, last: datetime) -> None:
        pass


def _every_candidate(analyzer: Analyzer, bundle: Bundle) -> list[Candidate]:
    seen = _Seen()
    collect_bundle(analyzer, bundle, seen)
    return seen.candidates


@pytest.mark.parametrize("name", ["hw-nvlink-xid149-showcase", "bad-srun-label-interleaved",
                                  "net-ib-link-downed-metrics", "bad-encoding-cuda-oom"])
@pytest.mark.parametrize("words", ["shipped", "published"])
def test_files_connector_equals_collect_bundle(name: str, words: str) -> None:
    bundle = load_bundle(SCENARIOS / name)
    analyzer = Analyzer()
    direct = analyzer.start(bundle.context)
    collect_bundle(analyzer, bundle, direct)  # the embedded path: an Analysis may count a chatty line's copies
    seen_direct = _every_candidate(analyzer, bundle)

    via = analyzer.start(bundle.context)
    seen_via: list[Candidate] = []
    add2 = via.add_candidate
    via.add_candidate = lambda c: (seen_via.append(c), add2(c))[1]  # type: ignore[method-assign]
    conn = FilesConnector(bundle.spec.sources, bundle.root)
    conn.collect(bundle.context, prefilter_words() if words == "published" else (), via)

    if words == "shipped":
        assert seen_via == seen_direct
    else:  # the published words are a superset of each kind's literals
        assert {(c.file, c.line) for c in seen_direct} <= {(c.file, c.line) for c in seen_via}
    declared = {s.kind for s in bundle.spec.sources}
    assert via.coverage == [c for c in direct.coverage if c.source in declared]
    assert via.errors == direct.errors
    assert via.node_last_seen == direct.node_last_seen
    assert _verdict(via.finish(now=NOW), declared) == _verdict(direct.finish(now=NOW), declared)


def test_only_the_declared_kinds_get_coverage(tmp_path: Path) -> None:
    bundle = load_bundle(SCENARIOS / "hw-nvlink-xid149-showcase")
    kernel = [s for s in bundle.spec.sources if s.kind == "kernel"]
    assert kernel
    analysis = Analyzer().start(bundle.context)
    FilesConnector(kernel, bundle.root).collect(bundle.context, (), analysis)
    assert [c.source for c in analysis.coverage] == ["kernel"]
    assert analysis.coverage[0].status == "complete"


def test_a_missing_root_is_reported_not_raised(tmp_path: Path) -> None:
    bundle = load_bundle(SCENARIOS / "hw-nvlink-xid149-showcase")
    analysis = Analyzer().start(bundle.context)
    FilesConnector([SourceSpec(kind="kernel", path="nodes/{node}/kern.log")], tmp_path / "nope").collect(
        bundle.context, (), analysis)
    assert analysis.errors and "not a directory" in analysis.errors[0].message
    assert [(c.source, c.status) for c in analysis.coverage] == [("kernel", "missing")]
