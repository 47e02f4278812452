"""Prometheus metrics, in a registry of the app's own (several apps never share counters).

Under `serve --workers N` (PROMETHEUS_MULTIPROC_DIR set, see service.workers)
prometheus_client keeps the values in per-process files, and `render` sums
them over every worker, live or exited: one scrape of any worker is the
whole Service. The gauges say how they combine: running and waiting
analyses and the worker count are summed over live workers, the catalog
is the same in all of them.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from firstfault.service.workers import multiprocess_dir

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
SIZE_BUCKETS = tuple(float(1 << s) for s in range(10, 34, 2))  # 1 KiB .. 8 GiB


class ServiceMetrics:
    def __init__(self) -> None:
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
        self.running = Gauge("firstfault_analyses_running", "Analyses on a pool thread now", registry=r,
                             multiprocess_mode="livesum")
        self.waiting = Gauge("firstfault_analyses_waiting", "Analyses waiting for a pool thread", registry=r,
                             multiprocess_mode="livesum")
        self.catalog = Gauge("firstfault_catalog_info", "The loaded catalog (value 1)",
                             ["version", "sha256", "rules"], registry=r, multiprocess_mode="livemax")
        self.workers = Gauge("firstfault_service_workers", "Worker processes serving", registry=r,
                             multiprocess_mode="livesum")
        self.workers.set(1)

    def pool_changed(self, running: int, admitted: int) -> None:
        """The analysis pool's callback (under its lock, so the values never go back in time)."""
        self.running.set(running)
        self.waiting.set(max(admitted - running, 0))

    def render(self) -> bytes:
        path = multiprocess_dir()
        if path is None:
            return generate_latest(self.registry)
        from prometheus_client.multiprocess import MultiProcessCollector

        merged = CollectorRegistry()
        MultiProcessCollector(merged, path=path)  # type: ignore[no-untyped-call]
        return generate_latest(merged)
