"""A Blueprint collects what the analysing catalog publishes: line words AND metric names (issue 9).

A Service of another version may read other metrics than the Blueprint's
own catalog would pick; the PromQL connector must ask for the Service's.
The Service here is the real engine behind the client protocol (no HTTP:
tests/service/test_ops.py checks the real Service publishes the same
document); Prometheus is an httpx MockTransport that records the queries.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import httpx

from firstfault.analysis.analyze import Analyzer, analyze_request
from firstfault.blueprint.pipeline import Pipeline
from firstfault.bundle import Context
from firstfault.collect.evidence import EvidenceSink
from firstfault.collect.http import HttpOptions
from firstfault.collect.promql import PromQLConnector
from firstfault.collect.scan import prefilter_words
from firstfault.collect.wire import AnalyzeRequest
from firstfault.extract.metric_conditions import metric_names
from firstfault.identify.static import StaticAttempts
from firstfault.model import LINE_SOURCES, CatalogRef, Verdict
from firstfault.responses import Prefilter

WINDOW = ("2026-10-20T10:00:00Z", "2026-10-20T10:30:00Z")


class _Service:
    """The client protocol the pipeline uses, over the embedded engine, publishing a chosen prefilter."""

    def __init__(self, words: list[str], metrics: list[str] | None) -> None:
        self.words, self.metrics = words, metrics

    def prefilter_info(self) -> Prefilter:
        return Prefilter(words=self.words, by_source={k: self.words for k in LINE_SOURCES}, metrics=self.metrics,
                         catalog=CatalogRef(version="other", sha256="0" * 64))

    def analyze(self, request: AnalyzeRequest) -> Verdict:
        return analyze_request(Analyzer(), request)


class _Logs:
    name = "recording"

    def __init__(self) -> None:
        self.words: list[str] = []

    def collect(self, ctx: Context, words: Sequence[str], sink: EvidenceSink) -> None:
        self.words = list(words)


def _prometheus() -> tuple[PromQLConnector, list[str]]:
    asked: list[str] = []

    def handler(req: httpx.Request) -> httpx.Response:
        asked.append(req.url.params["query"])
        return httpx.Response(200, json={"status": "success", "data": {"resultType": "matrix", "result": []}})

    return PromQLConnector("http://prom.test", http=HttpOptions(transport=httpx.MockTransport(handler))), asked


def _names(queries: list[str]) -> set[str]:
    out: set[str] = set()
    for q in queries:
        out.update(n for m in re.findall(r'__name__=~"([^"]*)"', q) for n in m.split("|"))
    return out


def _pipeline(client: _Service | None) -> tuple[Pipeline, _Logs, list[str]]:
    prom, asked = _prometheus()
    logs = _Logs()
    ctx = StaticAttempts(start=WINDOW[0], end=WINDOW[1], nodes=["gpu-a01", "gpu-a02"], id="77",
                        terminal_state="FAILED")
    return Pipeline(context=ctx, logs=[logs], metrics=[prom], client=client), logs, asked


def test_the_blueprint_asks_prometheus_for_the_services_metrics_only() -> None:
    published = ["DCGM_FI_DEV_XID_ERRORS", "a_metric_only_the_service_knows"]
    assert "a_metric_only_the_service_knows" not in metric_names()
    pipe, logs, asked = _pipeline(_Service(words=["NVRM: Xid"], metrics=published))
    verdict = pipe.run("77").verdict
    assert asked and _names(asked) == set(published)
    assert logs.words == ["NVRM: Xid"]  # the Service's words, not the Blueprint's
    assert not [e for e in verdict.errors if "publishes no metric names" in e.message]


def test_without_a_service_the_embedded_catalog_publishes_them() -> None:
    pipe, logs, asked = _pipeline(None)
    pipe.run("77")
    assert _names(asked) == set(metric_names()) and logs.words == prefilter_words()


def test_an_older_service_that_publishes_no_metrics_is_said_so() -> None:
    pipe, _, asked = _pipeline(_Service(words=prefilter_words(), metrics=None))
    verdict = pipe.run("77").verdict
    assert _names(asked) == set(metric_names())
    assert any(e.source == "metrics" and "publishes no metric names" in e.message for e in verdict.errors)


def test_a_catalog_that_names_no_metrics_queries_nothing() -> None:
    pipe, _, asked = _pipeline(_Service(words=prefilter_words(), metrics=[]))
    verdict = pipe.run("77").verdict
    assert asked == []
    assert any(e.source == "metrics" and "names no metrics" in e.message for e in verdict.errors)
