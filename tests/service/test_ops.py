"""Health, readiness, metrics, OpenAPI, the request log and the prefilter, on the real Service."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import load_bundle
from firstfault.collect.scan import prefilter_words
from firstfault.collect.wire import LineObservation, request_from_bundle
from firstfault.extract.metric_conditions import metric_names
from tests.service.conftest import ROOT
from tests.service.server import FULL_TOKEN, ServiceProcess

pytestmark = pytest.mark.integration
AUTH = {"Authorization": f"Bearer {FULL_TOKEN}"}
EXAMPLE = ROOT.parent / "examples" / "nvlink-xid149"


def test_health_and_readiness(service: ServiceProcess) -> None:
    assert httpx.get(service.url + "/healthz").json()["status"] == "ok"
    ready = httpx.get(service.url + "/readyz").json()
    cat = httpx.get(service.url + "/v1/catalog", headers=AUTH).json()
    assert ready["status"] == "ready"
    assert ready["catalog"] == {"version": cat["version"], "sha256": cat["sha256"]}


def test_catalog_lists_the_loaded_rules(service: ServiceProcess) -> None:
    from firstfault.engine.loader import shipped_catalog

    shipped = shipped_catalog()
    cat = httpx.get(service.url + "/v1/catalog", headers=AUTH).json()
    assert cat["sha256"] == shipped.sha256 and cat["version"] == shipped.version
    assert [r["id"] for r in cat["rules"]] == [lr.rule.id for lr in shipped.rules]
    assert set(cat["rules"][0]) == {"id", "title", "status", "role", "domain", "category", "version"}


def test_prefilter_is_the_catalogs(service: ServiceProcess) -> None:
    doc = httpx.get(service.url + "/v1/catalog/prefilter", headers=AUTH).json()
    assert doc["words"] == prefilter_words()
    assert doc["by_source"]["kernel"] == prefilter_words("kernel")
    assert set(doc["words"]) == set().union(*doc["by_source"].values())
    # The metrics half: what the PromQL connector of a Blueprint using this Service asks for.
    assert doc["metrics"] == metric_names() and "DCGM_FI_DEV_XID_ERRORS" in doc["metrics"]


def test_same_verdict_with_or_without_prefiltered_input(service: ServiceProcess) -> None:
    """Every line of the example's logs that the prefilter would drop, sent as well: the verdict holds."""
    analyzer = Analyzer()
    bundle = load_bundle(EXAMPLE)
    req = request_from_bundle(analyzer, bundle)
    words = prefilter_words()
    noise: list[LineObservation] = []
    for src in bundle.sources:
        if src.spec.kind not in ("kernel", "application", "syslog", "fabricmanager"):
            continue
        for f in src.files:
            for n, text in enumerate(Path(f.path).read_text(errors="replace").splitlines(), 1):
                if not any(w in text for w in words):
                    noise.append(LineObservation(source=src.spec.kind, file=f.rel, line=n,  # type: ignore[arg-type]
                                                 node=f.node, rank=f.rank, text=text))
    assert len(noise) > 50
    unfiltered = records.replace(req, lines=sorted([*req.lines, *noise], key=lambda o: (o.file, o.line)))
    a = httpx.post(service.url + "/v1/analyze", content=records.dumps(req),
                   headers={**AUTH, "Content-Type": "application/json"}).json()
    b = httpx.post(service.url + "/v1/analyze", content=records.dumps(unfiltered),
                   headers={**AUTH, "Content-Type": "application/json"}).json()
    a.pop("analyzed_at"), b.pop("analyzed_at")
    assert a == b
    assert a["root_cause"]["category"] == "gpu.nvlink.signal_integrity"


def test_metrics_count_analyses_by_outcome_and_domain(service: ServiceProcess) -> None:
    from tests.service.test_parity import _tar_gz

    before = httpx.get(service.url + "/metrics")
    assert before.headers["content-type"].startswith("text/plain")
    r = httpx.post(service.url + "/v1/analyze", content=_tar_gz(EXAMPLE),
                   headers={**AUTH, "Content-Type": "application/gzip"})
    assert r.status_code == 200
    httpx.post(service.url + "/v1/analyze", content=b"{", headers={**AUTH, "Content-Type": "application/json"})
    text = httpx.get(service.url + "/metrics").text

    def value(prefix: str) -> float:
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(prefix))

    assert value('firstfault_analyses_total{domain="hardware",form="tar",outcome="failed"}') >= 1
    assert value('firstfault_analysis_duration_seconds_count{form="tar"}') >= 1
    assert value('firstfault_request_body_bytes_count{form="tar"}') >= 1
    assert value('firstfault_request_errors_total{error="invalid_request",status="422"}') >= 1
    assert value("firstfault_catalog_info{") == 1
    assert "firstfault_analyses_running" in text and "firstfault_analyses_waiting" in text


def test_openapi_and_docs(service: ServiceProcess) -> None:
    doc = httpx.get(service.url + "/openapi.json").json()
    op = doc["paths"]["/v1/analyze"]["post"]
    assert set(op["requestBody"]["content"]) == {"application/json", "application/x-ndjson", "application/gzip"}
    assert {"413", "415", "422", "503", "504"} <= set(op["responses"])
    assert "AnalyzeRequest" in doc["components"]["schemas"] and "Verdict" in doc["components"]["schemas"]
    assert "HTTPBearer" in doc["components"]["securitySchemes"]
    assert httpx.get(service.url + "/docs").status_code == 200


def test_one_log_line_per_request_without_tokens_or_evidence(service: ServiceProcess) -> None:
    secret_text = "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, a line that must never reach the log"
    body = {"context": {"id": "log-test"}, "lines": [
        {"source": "kernel", "file": "kern.log", "line": 1, "time": "2026-11-02T10:00:00Z", "text": secret_text}]}
    r = httpx.post(service.url + "/v1/analyze", json=body, headers={**AUTH, "X-Request-ID": "log-test-1"})
    assert r.status_code == 200 and r.headers["x-request-id"] == "log-test-1"
    log = service.log_text_with('"log-test-1"')
    assert FULL_TOKEN not in log and secret_text not in log and "pid=4242" not in log
    lines = [json.loads(x) for x in log.splitlines() if '"log-test-1"' in x]
    assert len(lines) == 1
    entry = lines[0]
    assert entry["route"] == "/v1/analyze" and entry["status"] == 200 and entry["client"] == "blueprint-a"
    assert entry["bytes_in"] == len(r.request.content) and entry["duration_ms"] > 0
    assert entry["outcome"] == r.json()["outcome"] and entry["form"] == "json"
    # An unusable request id is replaced, not echoed.
    r2 = httpx.get(service.url + "/healthz", headers={"X-Request-ID": "bad id\twith spaces"})
    assert r2.headers["x-request-id"] != "bad id\twith spaces" and len(r2.headers["x-request-id"]) == 32


