"""Prometheus metrics, in a registry of the app's own (several apps never share counters)."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
SIZE_BUCKETS = tuple(float(1 << s) for s in range(10, 34, 2))  # 1 KiB .. 8 GiB


class ServiceMetrics:
    def __init__(self, running: Callable[[], int], admitted: Callable[[], int]) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.analyses = Counter("firstfault_analyses", "Verdicts built, by outcome and attributed domain",
                                ["form", "outcome", "domain"], registry=r)
        self.latency = Histogram("firstfault_analysis_duration_seconds",
                                 "Time from admission to verdict (reading, queueing and analysis)",
                                 ["form"], buckets=LATENCY_BUCKETS, registry=r)
        self.request_bytes = Histogram("firstfault_request_body_bytes", "Bytes received per analyze request",
                                       ["form"], buckets=SIZE_BUCKETS, registry=r)
        self.errors = Counter("firstfault_request_errors", "Refused or failed requests, by status and code",
                              ["status", "error"], registry=r)
        self.requests = Counter("firstfault_http_requests", "HTTP requests by route and status",
                                ["method", "route", "status"], registry=r)
        running_g = Gauge("firstfault_analyses_running", "Analyses on a pool thread now", registry=r)
        running_g.set_function(lambda: float(running()))
        waiting_g = Gauge("firstfault_analyses_waiting", "Analyses waiting for a pool thread", registry=r)
        waiting_g.set_function(lambda: float(max(admitted() - running(), 0)))
        self.catalog = Gauge("firstfault_catalog_info", "The loaded catalog (value 1)",
                             ["version", "sha256", "rules"], registry=r)

    def render(self) -> bytes:
        return generate_latest(self.registry)
