"""firstfault.client: retries and errors through an injected httpx transport, then the real Service."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import httpx
import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import load_bundle
from firstfault.client import FirstfaultClient, FirstfaultError
from firstfault.collect.wire import records as request_records_of
from firstfault.collect.wire import request_from_bundle
from tests.service.conftest import ROOT
from tests.service.server import FULL_TOKEN, VIEW_TOKEN, ServiceProcess

EXAMPLE = ROOT.parent / "examples" / "cuda-oom"


@pytest.fixture(scope="module")
def embedded() -> dict[str, object]:
    doc = json.loads(records.dumps(Analyzer().analyze_path(str(EXAMPLE))))
    doc.pop("analyzed_at")
    return doc


@pytest.fixture(scope="module")
def verdict_bytes() -> bytes:
    return records.dumps(Analyzer().analyze_path(str(EXAMPLE))).encode()


def _client(handler: httpx.MockTransport, sleeps: list[float], **kw: object) -> FirstfaultClient:
    return FirstfaultClient("http://ff.test", token="t" * 20, transport=handler, sleep=sleeps.append, **kw)  # type: ignore[arg-type]


def test_retries_503_honouring_retry_after_and_resends_the_same_body(verdict_bytes: bytes) -> None:
    bodies: list[bytes] = []

    def handle(req: httpx.Request) -> httpx.Response:
        bodies.append(req.read())
        assert req.headers["authorization"] == "Bearer " + "t" * 20
        if len(bodies) < 3:
            return httpx.Response(503, headers={"Retry-After": "7"},
                                  json={"error": "overloaded", "message": "busy", "detail": []})
        return httpx.Response(200, content=verdict_bytes)

    sleeps: list[float] = []
    with _client(httpx.MockTransport(handle), sleeps) as ff:
        v = ff.analyze_bundle_tar(EXAMPLE)
    assert v.workload.id == json.loads(verdict_bytes)["workload"]["id"]
    assert len(bodies) == 3 and bodies[0] == bodies[1] == bodies[2] and len(bodies[0]) > 1000
    assert sleeps == [7.0, 7.0]


def test_retries_connection_errors_with_backoff_then_gives_up() -> None:
    calls = 0

    def handle(req: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        raise httpx.ConnectError("refused", request=req)

    sleeps: list[float] = []
    with _client(httpx.MockTransport(handle), sleeps, retries=3, backoff=1.0) as ff, \
            pytest.raises(httpx.ConnectError):
        ff.catalog()
    assert calls == 4
    assert len(sleeps) == 3 and sleeps[0] <= 1.0 < sleeps[2] <= 4.0  # exponential, with jitter


def test_4xx_is_not_retried_and_carries_the_detail() -> None:
    calls = 0

    def handle(req: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(422, json={"error": "invalid_request", "message": "line 4: line: too small",
                                         "detail": [{"loc": "line", "msg": "too small", "line": 4}]})

    sleeps: list[float] = []
    with _client(httpx.MockTransport(handle), sleeps) as ff, pytest.raises(FirstfaultError) as err:
        ff.catalog()
    assert calls == 1 and sleeps == []
    assert err.value.status == 422 and err.value.detail[0]["line"] == 4


def test_ndjson_form_is_gzip_ndjson_with_the_context_first() -> None:
    seen: dict[str, object] = {}

    def handle(req: httpx.Request) -> httpx.Response:
        seen["headers"] = dict(req.headers)
        seen["records"] = [json.loads(x) for x in gzip.decompress(req.read()).splitlines()]
        return httpx.Response(503, headers={"Retry-After": "1"}, json={"error": "e", "message": "m"})

    a = Analyzer()
    req = request_from_bundle(a, load_bundle(EXAMPLE))
    with _client(httpx.MockTransport(handle), [], retries=0) as ff, pytest.raises(FirstfaultError):
        ff.analyze_ndjson(req.context, request_records_of(req))
    headers = seen["headers"]
    assert isinstance(headers, dict)
    assert headers["content-type"] == "application/x-ndjson" and headers["content-encoding"] == "gzip"
    records = seen["records"]
    assert isinstance(records, list)
    assert records[0]["type"] == "context" and records[0]["id"] == req.context.id
    assert {r["type"] for r in records[1:]} <= {"line", "document", "activity", "coverage", "error"}
    assert len(records) == 1 + len(req.lines) + len(req.documents) + len(req.activity) + len(req.coverage) + len(
        req.errors)


@pytest.mark.integration
def test_real_service_all_forms(service: ServiceProcess, embedded: dict[str, object], tmp_path: Path) -> None:
    a = Analyzer()
    req = request_from_bundle(a, load_bundle(EXAMPLE))
    with FirstfaultClient(service.url, token=FULL_TOKEN) as ff:
        assert ff.ready()
        assert ff.catalog().rules and "NVRM: Xid" in " ".join(ff.prefilter())
        forms = (
            ff.analyze(req),
            ff.analyze_ndjson(req.context, request_records_of(req)),
            ff.analyze_bundle_tar(EXAMPLE),
        )
        for v in forms:
            doc = json.loads(records.dumps(v))
            doc.pop("analyzed_at")
            assert doc == embedded
        # An existing .tar.gz file is sent as it is.
        import tarfile

        tgz = tmp_path / "b.tar.gz"
        with tarfile.open(tgz, "w:gz") as tar:
            tar.add(str(EXAMPLE), arcname=".")
        assert ff.analyze_bundle_tar(tgz).root_cause == ff.analyze(req).root_cause


@pytest.mark.integration
def test_real_service_scope_error(service: ServiceProcess) -> None:
    a = Analyzer()
    req = request_from_bundle(a, load_bundle(EXAMPLE))
    with FirstfaultClient(service.url, token=VIEW_TOKEN) as ff, pytest.raises(FirstfaultError) as err:
        ff.analyze(req)
    assert err.value.status == 403


def test_a_request_over_the_json_limit_goes_as_ndjson(verdict_bytes: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Service parses the JSON form whole and caps it (max_json_bytes): a larger request streams as NDJSON."""
    import firstfault.client as client_mod

    seen: list[httpx.Request] = []

    def handle(req: httpx.Request) -> httpx.Response:
        req.read()
        seen.append(req)
        return httpx.Response(200, content=verdict_bytes)

    req = request_from_bundle(Analyzer(), load_bundle(EXAMPLE))
    monkeypatch.setattr(client_mod, "JSON_ABOVE", 1 << 10)
    with _client(httpx.MockTransport(handle), []) as ff:
        ff.analyze(req)
    (sent,) = seen
    assert sent.headers["content-type"] == "application/x-ndjson"
    lines = gzip.decompress(sent.content).splitlines()
    assert json.loads(lines[0])["type"] == "context"
    assert len(lines) == 1 + len(list(request_records_of(req)))
