"""Parity: every scenario and example bundle, posted in each of the three forms to the real Service,
gets the embedded engine's verdict byte for byte (apart from analyzed_at)."""

from __future__ import annotations

import gzip
import io
import json
import re
import tarfile
from pathlib import Path

import httpx
import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import load_bundle
from firstfault.collect.wire import request_from_bundle
from firstfault.service.ndjson import request_records
from tests.service.conftest import BUNDLES
from tests.service.server import ServiceProcess

pytestmark = pytest.mark.integration
_STAMP = re.compile(rb'"analyzed_at":"[^"]*"')


def _unstamped(doc: bytes) -> bytes:
    out, n = _STAMP.subn(b'"analyzed_at":"-"', doc)
    assert n == 1, doc[:200]
    return out


def _tar_gz(root: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(str(root), arcname=root.name)
    return buf.getvalue()


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer()


@pytest.fixture(scope="module")
def http(service: ServiceProcess, ) -> httpx.Client:
    from tests.service.server import FULL_TOKEN

    with httpx.Client(base_url=service.url, headers={"Authorization": f"Bearer {FULL_TOKEN}"}, timeout=60) as c:
        yield c  # type: ignore[misc]


@pytest.mark.parametrize("bundle", BUNDLES, ids=[p.name for p in BUNDLES])
def test_three_forms_give_the_embedded_verdict(bundle: Path, analyzer: Analyzer, http: httpx.Client) -> None:
    b = load_bundle(bundle)
    embedded = _unstamped(records.dumps(analyzer.analyze_bundle(b)).encode())
    req = request_from_bundle(analyzer, b)

    as_json = http.post("/v1/analyze", content=records.dumps(req), headers={"Content-Type": "application/json"})
    assert as_json.status_code == 200, as_json.text
    assert _unstamped(as_json.content) == embedded

    ndjson = b"".join(json.dumps(r).encode() + b"\n" for r in request_records(req))
    as_ndjson = http.post("/v1/analyze", content=gzip.compress(ndjson),
                          headers={"Content-Type": "application/x-ndjson", "Content-Encoding": "gzip"})
    assert as_ndjson.status_code == 200, as_ndjson.text
    assert _unstamped(as_ndjson.content) == embedded

    as_tar = http.post("/v1/analyze", content=_tar_gz(bundle), headers={"Content-Type": "application/gzip"})
    assert as_tar.status_code == 200, as_tar.text
    assert _unstamped(as_tar.content) == embedded
