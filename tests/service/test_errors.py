"""Limits and bad input against the real Service: each gets its status and a message naming the fault."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator

import httpx
import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import load_bundle
from firstfault.collect.wire import request_from_bundle
from firstfault.service.ndjson import request_records
from tests.service.conftest import ROOT
from tests.service.server import FULL_TOKEN, VIEW_TOKEN, ServiceProcess

pytestmark = pytest.mark.integration
JSON = {"Content-Type": "application/json"}
NDJSON = {"Content-Type": "application/x-ndjson"}
CONTEXT = {"type": "context", "id": "9", "nodes": ["n1"], "window": {"start": "2026-11-02T10:00:00Z"}}
LINE = {"type": "line", "source": "kernel", "file": "kern.log", "line": 1, "node": "n1",
        "time": "2026-11-02T10:05:00Z", "text": "hello"}


def _ndjson(*records: dict[str, object]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def _small_request() -> dict[str, object]:
    a = Analyzer()
    return json.loads(records.dumps(request_from_bundle(a, load_bundle(ROOT.parent / "examples" / "cuda-oom"))))


# -- authentication -------------------------------------------------------------------------------------------------

def test_no_token_is_401_with_a_bearer_challenge(service: ServiceProcess) -> None:
    r = httpx.post(service.url + "/v1/analyze", json=_small_request())
    assert r.status_code == 401
    assert r.headers["www-authenticate"].startswith("Bearer")
    assert r.json()["error"] == "unauthorized"
    assert httpx.get(service.url + "/v1/catalog").status_code == 401


def test_unknown_token_and_wrong_scheme_are_401(service: ServiceProcess) -> None:
    for header in (f"Bearer {FULL_TOKEN}x", f"Basic {FULL_TOKEN}", "Bearer", "Bearer x"):
        r = httpx.get(service.url + "/v1/catalog", headers={"Authorization": header})
        assert r.status_code == 401, header


def test_a_token_without_the_scope_is_403(service: ServiceProcess) -> None:
    view = {"Authorization": f"Bearer {VIEW_TOKEN}"}
    assert httpx.get(service.url + "/v1/catalog", headers=view).status_code == 200
    r = httpx.post(service.url + "/v1/analyze", json=_small_request(), headers=view)
    assert r.status_code == 403
    assert "analyze" in r.json()["message"] and "viewer" in r.json()["message"]


def test_ops_endpoints_need_no_token(service: ServiceProcess) -> None:
    for path in ("/healthz", "/readyz", "/metrics", "/openapi.json"):
        assert httpx.get(service.url + path).status_code == 200, path


# -- media types and malformed bodies -------------------------------------------------------------------------------

@pytest.mark.parametrize("headers", [{"Content-Type": "text/plain"}, {"Content-Type": "application/xml"}, {},
                                     {"Content-Type": "application/json", "Content-Encoding": "br"},
                                     {"Content-Type": "application/gzip", "Content-Encoding": "gzip"}])
def test_unsupported_media_type_is_415(tight: ServiceProcess, headers: dict[str, str]) -> None:
    r = httpx.post(tight.url + "/v1/analyze", content=b"{}", headers=headers)
    assert r.status_code == 415
    assert r.json()["error"] == "unsupported_media_type"


def test_wrong_type_in_json_names_the_field_path(tight: ServiceProcess) -> None:
    req = _small_request()
    req["lines"][3]["time"] = "yesterday"  # type: ignore[index]
    r = httpx.post(tight.url + "/v1/analyze", json=req)
    assert r.status_code == 422
    body = r.json()
    assert body["detail"][0]["loc"] == "lines[3].time"
    assert body["message"].startswith("lines[3].time:")


def test_malformed_json_is_422(tight: ServiceProcess) -> None:
    r = httpx.post(tight.url + "/v1/analyze", content=b'{"context": {"id": "1"}, "lines": [', headers=JSON)
    assert r.status_code == 422
    assert "JSON" in r.json()["message"]


def test_unknown_field_is_422(tight: ServiceProcess) -> None:
    r = httpx.post(tight.url + "/v1/analyze", json={"context": {"id": "1", "nodez": []}})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == "context.nodez"
    assert r.json()["detail"][0]["msg"] == "unknown field"


def test_bad_rank_map_is_422_not_500(tight: ServiceProcess) -> None:
    r = httpx.post(tight.url + "/v1/analyze", json={"context": {"id": "1", "ranks": {"n1": "7-3"}}})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == "context.ranks.n1"


def test_ndjson_errors_name_the_line_and_field(tight: ServiceProcess) -> None:
    bad = dict(LINE, line=0)
    r = httpx.post(tight.url + "/v1/analyze", content=_ndjson(CONTEXT, LINE, LINE, bad, LINE), headers=NDJSON)
    assert r.status_code == 422
    d = r.json()["detail"][0]
    assert (d["line"], d["loc"]) == (4, "line")
    assert r.json()["message"].startswith("line 4: line:")


@pytest.mark.parametrize(("body", "line", "fragment"), [
    (b"", 1, "context"),
    (_ndjson(LINE), 1, "context"),
    (_ndjson(CONTEXT, {"type": "nonsense"}), 2, "unknown record type"),
    (_ndjson(CONTEXT) + b"{not json\n", 2, "not valid JSON"),
    (_ndjson(CONTEXT) + b"\n\n[1, 2]\n", 4, "JSON object"),
    (_ndjson(CONTEXT, {"type": "coverage", "source": "kernel", "status": "weird", "nodes_seen": 1,
                       "nodes_expected": 1, "lines": 1}), 2, "status"),
])
def test_ndjson_malformed_records(tight: ServiceProcess, body: bytes, line: int, fragment: str) -> None:
    r = httpx.post(tight.url + "/v1/analyze", content=body, headers=NDJSON)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["line"] == line
    assert fragment in r.text


def test_truncated_and_invalid_gzip_are_422(tight: ServiceProcess) -> None:
    whole = gzip.compress(_ndjson(CONTEXT, LINE))
    headers = {**NDJSON, "Content-Encoding": "gzip"}
    assert httpx.post(tight.url + "/v1/analyze", content=whole, headers=headers).status_code == 200
    r = httpx.post(tight.url + "/v1/analyze", content=whole[: len(whole) // 2], headers=headers)
    assert r.status_code == 422 and "truncated" in r.json()["message"]
    r = httpx.post(tight.url + "/v1/analyze", content=b"plain text", headers=headers)
    assert r.status_code == 422 and "gzip" in r.json()["message"]


# -- size limits ----------------------------------------------------------------------------------------------------

def test_body_over_the_limit_is_413(tight: ServiceProcess) -> None:
    r = httpx.post(tight.url + "/v1/analyze", content=b" " * (3 << 20), headers=JSON)
    assert r.status_code == 413
    assert r.json()["error"] == "body_too_large"


def test_chunked_body_over_the_limit_is_413(tight: ServiceProcess) -> None:
    """No Content-Length: the limit is enforced while the body streams in."""
    def chunks() -> Iterator[bytes]:
        yield _ndjson(CONTEXT)
        for _ in range(50):
            yield _ndjson(*[LINE] * 400)

    try:
        r = httpx.post(tight.url + "/v1/analyze", content=chunks(), headers=NDJSON)
    except httpx.HTTPError:  # the server may close before the client has sent everything
        pytest.skip("connection closed before the answer could be read")
    assert r.status_code == 413


def test_gzip_bomb_stops_at_the_decompressed_limit(tight: ServiceProcess) -> None:
    bomb = gzip.compress(_ndjson(CONTEXT) + b" " * (64 << 20), compresslevel=9)
    assert len(bomb) < (2 << 20)
    r = httpx.post(tight.url + "/v1/analyze", content=bomb, headers={**JSON, "Content-Encoding": "gzip"})
    assert r.status_code == 413
    assert "decompressed" in r.json()["message"]


def test_ndjson_record_over_the_limit_is_413(tight: ServiceProcess) -> None:
    big = dict(LINE, text="x" * (100 << 10))
    r = httpx.post(tight.url + "/v1/analyze", content=_ndjson(CONTEXT, big), headers=NDJSON)
    assert r.status_code == 413
    assert "line 2" in r.json()["message"]


# -- overload and time limit ----------------------------------------------------------------------------------------
# A body is now received whole before a slot is taken, so a trickling body no longer holds one: the 503,
# 504 and 408 cases are in tests/service/test_hardening.py (a slow analysis, a spinning one, a slow body).


def test_records_from_an_analyze_request_round_trip(tight: ServiceProcess) -> None:
    """The documented NDJSON form, uncompressed, from firstfault.service.ndjson.request_records."""
    a = Analyzer()
    req = request_from_bundle(a, load_bundle(ROOT.parent / "examples" / "cuda-oom"))
    body = b"".join(json.dumps(r).encode() + b"\n" for r in request_records(req))
    r = httpx.post(tight.url + "/v1/analyze", content=body, headers=NDJSON)
    assert r.status_code == 200
    assert r.json()["root_cause"]["category"] == a.analyze_bundle(load_bundle(ROOT.parent / "examples" / "cuda-oom")
                                                                  ).root_cause.category  # type: ignore[union-attr]
