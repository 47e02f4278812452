"""Hostile requests against the Service (issue 12): bounded memory, linear time, slots that come back,
errors that name the field."""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import socket
import sys
import tarfile
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
import yaml

from firstfault.service import runner
from firstfault.service.app import create_app
from firstfault.service.settings import ServiceSettings
from tests.conftest import XID79
from tests.memory import MB
from tests.service.conftest import ROOT
from tests.service.server import FULL_TOKEN, ServiceProcess

JSON = {"Content-Type": "application/json"}
NDJSON = {"Content-Type": "application/x-ndjson"}
TAR = {"Content-Type": "application/gzip"}
CONTEXT = {"type": "context", "id": "9", "nodes": ["n1"], "window": {"start": "2026-11-02T10:00:00Z"}}
SHOWCASE = ROOT.parent / "examples" / "nvlink-xid149"


def _ndjson(*records: dict[str, object]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def _targz(root: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(str(root), arcname=".")
    return buf.getvalue()


def _peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[ServiceProcess]:
    """A Service of its own, default limits, so its peak memory is this test's alone."""
    proc = ServiceProcess("fresh", {}, tmp_path)
    yield proc
    proc.stop()


# -- item 2: tiny requests that would take gigabytes --

@pytest.mark.integration
def test_tiny_requests_that_expand_are_refused_in_little_memory(fresh: ServiceProcess) -> None:
    # A 1.3 KB request naming 50 million ranks.
    ctx = {"id": "9", "nodes": ["node-01"], "ranks": {"node-01": ",".join(["0-1000000"] * 50)}}
    r = httpx.post(fresh.url + "/v1/analyze", json={"context": ctx}, timeout=120)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == "context.ranks.node-01"
    # 512 MiB of spaces in a 0.5 MB gzip body, as the JSON form (which is parsed whole).
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b" " * MB
    bomb = b"".join(comp.compress(block) for _ in range(512)) + comp.flush()
    r = httpx.post(fresh.url + "/v1/analyze", content=bomb, headers={**JSON, "Content-Encoding": "gzip"}, timeout=120)
    assert r.status_code == 413 and "decompressed" in r.json()["message"], r.text
    assert _peak_rss(fresh.proc.pid) < 300 * MB


# -- item 5: reversed window --

@pytest.mark.integration
def test_reversed_window_is_422_naming_the_field(tight: ServiceProcess) -> None:
    ctx = {"id": "9", "nodes": ["n1"], "window": {"start": "2026-11-02T11:00:00Z", "end": "2026-11-02T10:00:00Z"}}
    r = httpx.post(tight.url + "/v1/analyze", json={"context": ctx})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == "context.window.end"
    r = httpx.post(tight.url + "/v1/analyze", content=_ndjson({"type": "context", **ctx}), headers=NDJSON)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == "window.end"


# -- item 4 and 6: bundles sent as .tar.gz --

@pytest.mark.integration
def test_non_utf8_member_names_are_analysed(service: ServiceProcess, auth: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "B"
    shutil.copytree(SHOWCASE, root)
    os.rename(root / "nodes" / "node-02", os.fsencode(root / "nodes") + b"/node-\xff")
    r = httpx.post(service.url + "/v1/analyze", content=_targz(root), headers={**TAR, **auth}, timeout=60)
    assert r.status_code == 200, r.text
    assert "node-\\\\xff" in json.dumps(r.json())


@pytest.mark.integration
def test_duplicate_key_in_workload_yaml_is_422(tight: ServiceProcess, tmp_path: Path) -> None:
    root = tmp_path / "dup"
    root.mkdir()
    (root / "workload.yaml").write_text("apiVersion: firstfault/v1\nworkload:\n  id: '1'\n  id: '2'\n")
    r = httpx.post(tight.url + "/v1/analyze", content=_targz(root), headers=TAR)
    assert r.status_code == 422
    assert "workload.yaml:4: duplicate key 'id' (first at line 3" in r.json()["message"]


# -- item 3: node lists are linear and a timed-out analysis gives its slot back --

def _many_nodes_targz(tmp_path: Path, n: int) -> bytes:
    root = tmp_path / f"nodes{n}"
    root.mkdir()
    wl = {"apiVersion": "firstfault/v1",
          "workload": {"id": "1", "window": {"start": "2026-11-02T10:00:00Z", "end": "2026-11-02T11:00:00Z"},
                       "nodes": [f"n{i:05d}" for i in range(n)]},
          "sources": [{"kind": "kernel", "path": "kern.log"}]}
    (root / "workload.yaml").write_text(yaml.safe_dump(wl))
    (root / "kern.log").write_text(XID79)
    return _targz(root)


@pytest.mark.integration
def test_forty_thousand_nodes_do_not_hold_the_slot(tight: ServiceProcess, tmp_path: Path) -> None:
    """One slot, a 1.5 s limit: a 40k-node bundle used to run ~20 s on the slot after its 504."""
    body = _many_nodes_targz(tmp_path, 40_000)
    r = httpx.post(tight.url + "/v1/analyze", content=body, headers=TAR, timeout=60)
    assert r.status_code in (200, 504)
    # The old behaviour held it ~20 s on a quiet machine (40 and more under load); given back, it is idle within a
    # second quiet, and took 9.1 s in the full tier's run beside three of the lab's torchrun jobs at once (2 cores)
    tight.seconds_until_idle(15.0)
    r = httpx.post(tight.url + "/v1/analyze", content=_ndjson(CONTEXT), headers=NDJSON, timeout=30)
    assert r.status_code == 200, r.text


# -- item 8: slow clients, big headers, metrics of a 500, the schema --

def _slow_loris(url: str, stop: threading.Event) -> None:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as s:
        s.sendall(b"POST /v1/analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\n"
                  b"Content-Length: 100000\r\n\r\n")
        while not stop.is_set():
            try:
                s.sendall(b" ")
            except OSError:
                return
            stop.wait(0.2)


@pytest.mark.integration
def test_slow_bodies_hold_no_analysis_slot(tight: ServiceProcess) -> None:
    """The body is read before a slot is taken: ten clients trickling bytes do not turn others away."""
    stop = threading.Event()
    threads = [threading.Thread(target=_slow_loris, args=(tight.url, stop), daemon=True) for _ in range(10)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.5)
        for _ in range(3):
            r = httpx.post(tight.url + "/v1/analyze", content=_ndjson(CONTEXT), headers=NDJSON, timeout=30)
            assert r.status_code == 200, r.text
    finally:
        stop.set()
        for t in threads:
            t.join(5)


@pytest.mark.integration
def test_a_body_that_never_finishes_is_408(tight: ServiceProcess) -> None:
    def trickle() -> Iterator[bytes]:
        yield _ndjson(CONTEXT)
        end = time.monotonic() + 5
        while time.monotonic() < end:
            time.sleep(0.1)
            yield b"\n"

    r = httpx.post(tight.url + "/v1/analyze", content=trickle(), headers={**NDJSON, "X-Request-ID": "slow-408"},
                   timeout=30)
    assert r.status_code == 408 and r.json()["error"] == "body_timeout"
    line = next(json.loads(x) for x in tight.log_text_with('"slow-408"').splitlines() if '"slow-408"' in x)
    assert line["duration_ms"] < 4500  # the answer left at the body limit (3 s), not at the body's end


@pytest.mark.integration
def test_a_huge_bearer_token_is_answered(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "firstfault.cli", "serve", "--host", "127.0.0.1", "--port", "0"]
    proc = ServiceProcess("tokens", {"FIRSTFAULT_TOKENS": FULL_TOKEN}, tmp_path, argv=argv)
    try:
        r = httpx.get(proc.url + "/v1/catalog", headers={"Authorization": "Bearer " + "x" * (1 << 20)}, timeout=30)
        assert r.status_code in (401, 431), r.text
        assert httpx.get(proc.url + "/v1/catalog", headers={"Authorization": f"Bearer {FULL_TOKEN}"}).status_code == 200
    finally:
        proc.stop()


@pytest.fixture
def make_app() -> Iterator[Callable[[ServiceSettings], Any]]:
    """create_app for the in-process tests, whose requests run without the app's lifespan: their
    analysis pools are shut down here, so that no worker thread outlives the test."""
    made: list[Any] = []

    def make(settings: ServiceSettings) -> Any:
        made.append(create_app(settings))
        return made[-1]

    yield make
    for app in made:
        app.state.pool.shutdown()
    for th in threading.enumerate():
        if th.name.startswith("firstfault-analysis"):
            th.join(10)  # idle workers leave at once; one still analysing leaves at its deadline


async def _asgi(app: Any, method: str, path: str, **kw: Any) -> httpx.Response:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://svc") as c:
        return await c.request(method, path, **kw)


def test_a_500_is_not_counted_as_an_outcome(monkeypatch: pytest.MonkeyPatch, make_app: Any) -> None:
    def broken(*_a: object, **_k: object) -> object:
        # Not a record: records.encode cannot write it (TypeError), after the analysis "succeeded".
        return SimpleNamespace(outcome="failed", attributed_domain="hardware", workload=SimpleNamespace(id="9"))

    monkeypatch.setattr(runner, "run_json", broken)
    app = make_app(ServiceSettings())
    r = asyncio.run(_asgi(app, "POST", "/v1/analyze", json={"context": {"id": "9"}}))
    assert r.status_code == 500
    text = asyncio.run(_asgi(app, "GET", "/metrics")).text
    assert 'outcome="failed"' not in text
    assert 'firstfault_request_errors_total{error="internal_error",status="500"} 1.0' in text


def test_overload_is_503_while_a_slot_is_busy(monkeypatch: pytest.MonkeyPatch, make_app: Any) -> None:
    """One slot, no wait list: a second request while one analyses is refused at once."""
    real = runner.run_ndjson

    def slow(*a: Any, **k: Any) -> Any:
        time.sleep(1.0)
        return real(*a, **k)

    monkeypatch.setattr(runner, "run_ndjson", slow)
    app = make_app(ServiceSettings(max_concurrent=1, max_queue=0, retry_after=7))

    async def both() -> tuple[httpx.Response, httpx.Response, float]:
        first = asyncio.ensure_future(_asgi(app, "POST", "/v1/analyze", content=_ndjson(CONTEXT), headers=NDJSON))
        await asyncio.sleep(0.3)
        t0 = time.monotonic()
        second = await _asgi(app, "POST", "/v1/analyze", content=_ndjson(CONTEXT), headers=NDJSON)
        dt = time.monotonic() - t0
        return await first, second, dt

    first, second, dt = asyncio.run(both())
    assert first.status_code == 200
    assert second.status_code == 503 and second.headers["retry-after"] == "7" and dt < 0.5


def test_a_timed_out_analysis_gives_its_slot_back(monkeypatch: pytest.MonkeyPatch, make_app: Any) -> None:
    def spin(engine: object, body: object, gz: bool, max_d: int, max_r: int, deadline: Any) -> Any:
        while True:  # an analysis checks its deadline between pieces of evidence
            deadline.check()
            time.sleep(0.01)

    monkeypatch.setattr(runner, "run_ndjson", spin)
    app = make_app(ServiceSettings(max_concurrent=1, max_queue=0, analysis_timeout=0.5))
    r = asyncio.run(_asgi(app, "POST", "/v1/analyze", content=_ndjson(CONTEXT), headers=NDJSON))
    assert r.status_code == 504
    time.sleep(0.2)
    assert app.state.pool.admitted == 0 and app.state.pool.running == 0


def test_openapi_states_time_formats_and_strict_integers(make_app: Any) -> None:
    app = make_app(ServiceSettings())
    doc = app.openapi()
    win = doc["components"]["schemas"]["WindowSpec"]["properties"]
    assert all("date-time" in json.dumps(win[k]) for k in ("start", "end"))
    bad = {"context": {"id": "9"}, "errors": [{"source": "kernel", "message": "x", "line": False}]}
    r = asyncio.run(_asgi(app, "POST", "/v1/analyze", json=bad))
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == "errors[0].line"




def test_a_lone_surrogate_in_ndjson_is_422_like_in_json(make_app: Any) -> None:
    """JSON may escape a lone surrogate ("\\udcff"); no verdict can hold one, so it is refused as in the JSON form."""
    app = make_app(ServiceSettings())
    body = b'{"type": "context", "id": "\\udcff", "nodes": ["n1"]}\n'
    r = asyncio.run(_asgi(app, "POST", "/v1/analyze", content=body, headers=NDJSON))
    assert r.status_code == 422 and r.json()["detail"][0]["line"] == 1, r.text
    doc = json.dumps({"context": {"id": "x"}, "errors": [{"source": "kernel", "message": "\udcff"}]})
    r = asyncio.run(_asgi(app, "POST", "/v1/analyze", content=doc.encode(), headers=JSON))
    assert r.status_code == 422, r.text
