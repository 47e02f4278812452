"""Prometheus metrics, in a registry of the app's own (several apps never share counters).

Under `firstfault serve --workers N` (N > 1) every worker process is its own
app, and a scrape reaches one of them: then the metrics are prometheus_client's
multiprocess ones (PROMETHEUS_MULTIPROC_DIR, which `serve` sets to a fresh
directory), and /metrics from any worker shows the sum over all of them. The
running / waiting gauges, which a callback gives in one process, are then
written by each worker every REFRESH seconds and summed over live workers.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

REFRESH = 0.5  # seconds between a worker's updates of its running / waiting gauges (multiprocess mode)


def multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None

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
        self.multiprocess = multiprocess_dir() is not None
        # multiprocess_mode says how workers' values combine; one process ignores it.
        running_g = Gauge("firstfault_analyses_running", "Analyses on a pool thread now", registry=r,
                          multiprocess_mode="livesum")
        waiting_g = Gauge("firstfault_analyses_waiting", "Analyses waiting for a pool thread", registry=r,
                          multiprocess_mode="livesum")

        def waiting() -> float:
            return float(max(admitted() - running(), 0))

        if self.multiprocess:
            self._stop = threading.Event()

            def refresh() -> None:
                while True:
                    running_g.set(float(running()))
                    waiting_g.set(waiting())
                    if self._stop.wait(REFRESH):
                        return

            threading.Thread(target=refresh, name="firstfault-metrics", daemon=True).start()
            atexit.register(_mark_dead)
        else:
            running_g.set_function(lambda: float(running()))
            waiting_g.set_function(waiting)
        self.catalog = Gauge("firstfault_catalog_info", "The loaded catalog (value 1)",
                             ["version", "sha256", "rules"], registry=r, multiprocess_mode="max")

    def render(self) -> bytes:
        if not self.multiprocess:
            return generate_latest(self.registry)
        from prometheus_client import multiprocess

        view = CollectorRegistry()
        multiprocess.MultiProcessCollector(view)  # type: ignore[no-untyped-call]
        return generate_latest(view)

    def close(self) -> None:
        if self.multiprocess:
            self._stop.set()


def _mark_dead() -> None:
    """A worker that exits leaves the live gauges' sum (its counters stay counted)."""
    from prometheus_client import multiprocess

    if multiprocess_dir() is not None:
        multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]
