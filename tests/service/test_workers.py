"""`firstfault serve --workers N`: real serve processes on free ports, stopped by PID.

Which worker answered is read from the request log (each line names its `worker` pid);
the processes are found through /proc, so an orphan cannot hide.
"""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import load_bundle
from firstfault.collect.wire import request_from_bundle
from tests.service.server import ServiceProcess

pytestmark = pytest.mark.integration

SRC = Path(__file__).resolve().parents[2] / "src"
ENV = {"PYTHONPATH": os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p),
       "FIRSTFAULT_MAX_QUEUE": "64"}
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "nvlink-xid149"  # Xid 149 on node-02 (its README)
ANALYZED_200 = re.compile(r'^firstfault_http_requests_total\{method="POST",route="/v1/analyze",status="200"\} (\S+)$',
                          re.M)


class Serve(ServiceProcess):
    def _wait_port(self, timeout: float = 120.0) -> str:  # N interpreters start on a shared, busy machine
        return super()._wait_port(timeout)


def serve(workers: int, workdir: Path) -> ServiceProcess:
    argv = [sys.executable, "-m", "firstfault", "serve", "--workers", str(workers), "--port", "0"]
    svc = Serve(f"serve-{workers}", ENV, workdir, argv=argv)
    end = time.monotonic() + 120
    while svc.log_text().count('"msg": "ready"') < workers:  # /readyz answers once the first worker is up
        if time.monotonic() > end or svc.proc.poll() is not None:
            svc.stop()
            raise RuntimeError(f"not all {workers} workers started:\n{svc.log_text()}")
        time.sleep(0.1)
    return svc


def _ppids() -> dict[int, int]:
    out = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            out[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return out


def descendants(pid: int) -> set[int]:
    parents = _ppids()
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        kids = {c for c, pp in parents.items() if pp == p} - found
        found |= kids
        todo.extend(kids)
    return found


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_gone(pids: set[int], timeout: float = 20.0) -> set[int]:
    end = time.monotonic() + timeout
    while time.monotonic() < end and any(running(p) for p in pids):
        time.sleep(0.1)
    return {p for p in pids if running(p)}


def metrics_dir(svc: ServiceProcess) -> Path | None:
    m = re.search(r"metrics of all of them in (\S+)", svc.log_text())
    return Path(m.group(1)) if m else None


def request_workers(svc: ServiceProcess, ids: set[str], wait_s: float = 15.0) -> dict[str, int]:
    """The worker that answered each request, from the access log. A worker writes a request's log line
    after its response has gone out, so a loaded machine may show the response first: read again, a while."""
    deadline = time.monotonic() + wait_s
    while True:
        out = {}
        for line in svc.log_text().splitlines():
            if line.startswith("{") and '"route": "/v1/analyze"' in line:
                entry = json.loads(line)
                if entry["id"] in ids:
                    out[entry["id"]] = entry["worker"]
        if len(out) == len(ids) or time.monotonic() > deadline:
            return out
        time.sleep(0.1)


@functools.cache
def body() -> bytes:
    return records.dumps(request_from_bundle(Analyzer(), load_bundle(EXAMPLE))).encode()


def post_batch(url: str, n: int) -> dict[str, dict]:
    """n analyses at once, each on its own connection (so the kernel hands them to any worker)."""
    def one(_: int) -> tuple[str, dict]:
        rid = uuid.uuid4().hex
        r = httpx.post(url + "/v1/analyze", content=body(), timeout=60,
                       headers={"X-Request-ID": rid, "Content-Type": "application/json"})
        assert r.status_code == 200, r.text
        return rid, r.json()

    with ThreadPoolExecutor(n) as ex:
        return dict(ex.map(one, range(n)))


def scrape(url: str) -> str:
    r = httpx.get(url + "/metrics", timeout=30)
    assert r.status_code == 200
    return r.text


def analyzed(text: str) -> float:
    m = ANALYZED_200.search(text)
    return float(m.group(1)) if m else 0.0


def gauge(text: str, name: str) -> float:
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    assert m, f"{name} missing from /metrics"
    return float(m.group(1))


@pytest.fixture
def two(tmp_path: Path) -> Iterator[ServiceProcess]:
    svc = serve(2, tmp_path)
    yield svc
    svc.stop()


def test_two_workers_one_metrics_view_and_a_clean_stop(two: ServiceProcess) -> None:
    parent = two.proc.pid
    mdir = metrics_dir(two)
    assert mdir is not None and mdir.is_dir() and mdir.name.startswith("firstfault-metrics-")
    children = descendants(parent)

    # Requests spread over both workers: batches of concurrent connections until both have answered.
    verdicts: dict[str, dict] = {}
    seen: dict[str, int] = {}
    for _ in range(10):
        verdicts |= post_batch(two.url, 8)
        seen = request_workers(two, set(verdicts))
        if len(set(seen.values())) == 2:
            break
    pids = set(seen.values())
    assert len(pids) == 2 and pids <= children, (pids, children)
    assert len(seen) == len(verdicts)
    # Both load the same catalog: the same verdict from either, apart from when it was made.
    by_worker = {seen[rid]: {k: v for k, v in doc.items() if k != "analyzed_at"} for rid, doc in verdicts.items()}
    a, b = by_worker.values()
    assert a == b and a["attributed_domain"] == "hardware" and a["affected_nodes"] == ["node-02"]

    # Each worker answered only part of them, yet every scrape (whichever worker takes it) shows them all.
    per_worker = {p: sum(1 for w in seen.values() if w == p) for p in pids}
    assert all(0 < n < len(verdicts) for n in per_worker.values())
    for _ in range(4):
        text = scrape(two.url)
        assert analyzed(text) == len(verdicts)
        assert gauge(text, "firstfault_service_workers") == 2
        assert gauge(text, "firstfault_analyses_running") == 0
        assert re.search(r'^firstfault_catalog_info\{.*\} 1\.0$', text, re.M)

    # A worker that dies is replaced; its counts stay, its live gauges go.
    victim = min(pids)
    os.kill(victim, signal.SIGKILL)
    end = time.monotonic() + 60
    while two.log_text().count('"msg": "ready"') < 3:
        assert time.monotonic() < end, two.log_text()
        time.sleep(0.1)
    assert not running(victim)
    for _ in range(3):
        text = scrape(two.url)
        assert analyzed(text) == len(verdicts)
        assert gauge(text, "firstfault_service_workers") == 2
    assert not list(mdir.glob(f"gauge_live*_{victim}.db")) and list(mdir.glob(f"counter_{victim}.db"))

    # SIGTERM to serve: every process it started ends, and the metrics directory goes.
    everyone = descendants(parent) | children
    two.stop()
    assert two.proc.returncode == 0, two.log_text()
    assert wait_gone(everyone) == set()
    assert not mdir.exists()


def test_workers_stop_themselves_when_serve_is_killed(two: ServiceProcess) -> None:
    mdir = metrics_dir(two)
    assert mdir is not None and mdir.is_dir()
    children = descendants(two.proc.pid)
    assert len(children) >= 2
    two.proc.kill()  # SIGKILL: serve cannot stop its workers
    two.proc.wait(timeout=10)
    assert wait_gone(children) == set(), two.log_text()
    assert "serve supervisor gone" in two.log_text()
    assert not mdir.exists()


def test_one_worker_is_the_single_process_service(tmp_path: Path) -> None:
    svc = serve(1, tmp_path)
    try:
        assert metrics_dir(svc) is None
        assert descendants(svc.proc.pid) == set()  # no supervisor, no worker processes
        environ = Path(f"/proc/{svc.proc.pid}/environ").read_bytes().split(b"\0")
        assert not any(e.startswith(b"PROMETHEUS_MULTIPROC_DIR=") for e in environ)
        post_batch(svc.url, 3)
        text = scrape(svc.url)
        assert analyzed(text) == 3 and gauge(text, "firstfault_service_workers") == 1
        # Its own registry, as before: counters carry their _created samples.
        assert "firstfault_http_requests_created{" in text
        worker = {json.loads(x)["worker"] for x in svc.log_text().splitlines() if '"route": "/v1/analyze"' in x}
        assert worker == {svc.proc.pid}
    finally:
        svc.stop()
    # As before: a graceful shutdown, then uvicorn re-raises the SIGTERM it caught.
    assert svc.proc.returncode == -signal.SIGTERM and "Application shutdown complete" in svc.log_text()
