"""`firstfault serve --workers 2`: one /metrics view over both worker processes (real uvicorn)."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.service.conftest import ROOT
from tests.service.server import ServiceProcess

pytestmark = pytest.mark.integration
EXAMPLE = ROOT.parent / "examples" / "nvlink-xid149"


class _Slow(ServiceProcess):
    """Two spawned workers import everything afresh: give them longer than one process to start."""

    def _wait_port(self, timeout: float = 120.0) -> str:
        return super()._wait_port(timeout)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _value(text: str, prefix: str) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(prefix))


def test_metrics_sum_over_the_workers(tmp_path: Path) -> None:
    from tests.service.test_parity import _tar_gz

    argv = [sys.executable, "-m", "firstfault", "serve", "--host", "127.0.0.1", "--port", str(_free_port()),
            "--workers", "2"]
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = _Slow("workers", {"TMPDIR": str(tmp)}, tmp_path, argv=argv)
    try:
        end = time.monotonic() + 120
        while proc.log_text().count("Application startup complete") < 2:  # both workers take connections
            assert time.monotonic() < end, proc.log_text()
            time.sleep(0.2)
        body = _tar_gz(EXAMPLE)
        n = 12
        for _ in range(n):
            # A new connection each time, so the kernel spreads them over both workers' accept().
            with httpx.Client() as c:
                r = c.post(proc.url + "/v1/analyze", content=body, headers={"Content-Type": "application/gzip"})
                assert r.status_code == 200
        for _ in range(6):
            with httpx.Client() as c:
                text = c.get(proc.url + "/metrics").text
            # Whichever worker answers (new connections land on both), it reports every analysis both
            # made; without the shared view a scrape shows one worker's share, or nothing.
            assert _value(text, 'firstfault_analyses_total{domain="hardware",form="tar",outcome="failed"}') == n
            assert _value(text, 'firstfault_analysis_duration_seconds_count{form="tar"}') == n
            assert _value(text, "firstfault_catalog_info{") == 1
            assert "firstfault_analyses_running" in text
        log = proc.log_text()
        assert log.count("Started server process") == 2, log
        assert list(tmp.glob("firstfault-metrics-*"))
    finally:
        proc.stop()
    assert not list(tmp.glob("firstfault-metrics-*"))  # the metrics directory goes with the server
