"""Parity: a bundle analysed embedded, and as a Service request, gives one verdict."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer, analyze_request
from firstfault.bundle import load_bundle
from firstfault.collect.wire import AnalyzeRequest, request_from_bundle

ROOT = Path(__file__).parents[1]  # tests/
BUNDLES = sorted({p.parent for p in (ROOT / "scenarios").glob("*/workload.yaml")}
                 | {p.parent for p in (ROOT.parent / "examples").glob("*/workload.yaml")})
NOW = datetime(2026, 11, 29, tzinfo=UTC)


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer()


@pytest.mark.parametrize("bundle", BUNDLES, ids=[p.name for p in BUNDLES])
def test_request_form_gives_the_embedded_verdict(bundle: Path, analyzer: Analyzer) -> None:
    b = load_bundle(bundle)
    embedded = records.dumps(analyzer.analyze_bundle(b, now=NOW))
    req = request_from_bundle(analyzer, b)
    # Through JSON and back, as it would cross the network.
    req2 = records.decode(records.dumps(req), AnalyzeRequest)
    remote = records.dumps(analyze_request(analyzer, req2, now=NOW))
    assert json.loads(remote) == json.loads(embedded)
    assert remote == embedded
