"""The fault-and-abuse suite of the Service (issue 26): real `firstfault serve` on 127.0.0.1, real sockets.

Slow heads, slow bodies, oversized heads, too many connections, decompression and pickle bombs, big
integers, a document that outlives its deadline, and many clients at once; each checks a limit of
docs/service.md ("Limits before the app", "Concurrency and time limit") and stays within seconds.
"""

from __future__ import annotations

import base64
import concurrent.futures
import contextlib
import json
import pickle
import socket
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.memory import MB
from tests.service.server import FULL_TOKEN, ServiceProcess

pytestmark = pytest.mark.integration

HEADER_TIMEOUT = 1.0
MAX_CONNECTIONS = 24
LIMITS = {
    "FIRSTFAULT_TOKENS": FULL_TOKEN,  # refusals before the app come before authentication too
    "FIRSTFAULT_HEADER_TIMEOUT": str(HEADER_TIMEOUT),
    "FIRSTFAULT_MAX_CONNECTIONS": str(MAX_CONNECTIONS),
    "FIRSTFAULT_BODY_TIMEOUT": "2",
    "FIRSTFAULT_ANALYSIS_TIMEOUT": "1.5",
    "FIRSTFAULT_MAX_CONCURRENT": "1",
    "FIRSTFAULT_MAX_QUEUE": "0",
    "FIRSTFAULT_MAX_DECOMPRESSED_BYTES": str(8 << 20),
    "FIRSTFAULT_RETRY_AFTER": "3",
}
AUTH = {"Authorization": f"Bearer {FULL_TOKEN}"}
NDJSON = {"Content-Type": "application/x-ndjson", **AUTH}
CONTEXT = {"type": "context", "id": "42", "nodes": ["node-01"],
           "window": {"start": "2026-11-02T10:00:00Z", "end": "2026-11-02T11:00:00Z"}}


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    argv = [sys.executable, "-m", "firstfault.cli", "serve", "--host", "127.0.0.1", "--port", "0"]
    proc = ServiceProcess("abuse", LIMITS, tmp_path_factory.mktemp("svc-abuse"), argv=argv)
    yield proc
    proc.stop()


def _port(svc: ServiceProcess) -> int:
    return int(svc.url.rsplit(":", 1)[1])


def _connect(svc: ServiceProcess) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", _port(svc)), timeout=10)
    s.settimeout(10)
    return s


def _answer(s: socket.socket) -> tuple[int, dict[str, str], bytes] | None:
    """The response on a raw socket, read to its end; None when the server closed without one."""
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
        while len(body) < int(headers.get("content-length", "0")):
            chunk = s.recv(65536)
            if not chunk:
                break
            body += chunk
    except ConnectionResetError:
        return None
    return int(lines[0].split()[1]), headers, body


def _trickle(s: socket.socket, piece: bytes, gap: float, limit: float) -> tuple[int, dict[str, str], bytes] | None:
    """Sends `piece` every `gap` seconds until the server answers (or `limit` seconds pass)."""
    s.settimeout(gap)
    end = time.monotonic() + limit
    while time.monotonic() < end:
        try:
            s.sendall(piece)
            return _answer(s)
        except (TimeoutError, BrokenPipeError):
            continue
    return None


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _idle(svc: ServiceProcess) -> None:
    """Waits until no analysis runs (one slot, no wait list: an earlier test's may still be ending)."""
    end = time.monotonic() + 30
    while "firstfault_analyses_running 0.0" not in httpx.get(svc.url + "/metrics", timeout=10).text:
        assert time.monotonic() < end, "an analysis never ended"
        time.sleep(0.1)


def _metric(svc: ServiceProcess, status: int, error: str) -> float:
    text = httpx.get(svc.url + "/metrics", timeout=10).text
    key = f'firstfault_request_errors_total{{error="{error}",status="{status}"}} '
    return next((float(ln.removeprefix(key)) for ln in text.splitlines() if ln.startswith(key)), 0.0)


# -- slow heads --

def test_a_head_that_trickles_is_cut_at_the_header_timeout(svc: ServiceProcess) -> None:
    """Issue: unfinished request heads were held for ever. One header line every 0.2 s never ends the head."""
    before = _metric(svc, 408, "header_timeout")
    with _connect(svc) as s:
        t0 = time.monotonic()
        s.sendall(b"GET /v1/catalog HTTP/1.1\r\nHost: x\r\n")
        answer = _trickle(s, b"X-Slow: 1\r\n", 0.2, 5 * HEADER_TIMEOUT)
        took = time.monotonic() - t0
    assert answer is not None and answer[0] == 408, answer
    assert json.loads(answer[2])["error"] == "header_timeout"
    assert HEADER_TIMEOUT - 0.1 < took < HEADER_TIMEOUT + 1.5
    assert _metric(svc, 408, "header_timeout") == before + 1


def test_a_connection_that_says_nothing_is_closed_at_the_header_timeout(svc: ServiceProcess) -> None:
    with _connect(svc) as s:
        t0 = time.monotonic()
        answer = _answer(s)
    assert answer is not None and answer[0] == 408 and time.monotonic() - t0 < HEADER_TIMEOUT + 1.5


def test_a_head_sent_in_pieces_within_the_timeout_is_answered(svc: ServiceProcess) -> None:
    """The near miss: a slow network splits a head, and it still arrives in time."""
    with _connect(svc) as s:
        for piece in (b"GET /healthz HT", b"TP/1.1\r\nHost: x\r\n", b"\r\n"):
            s.sendall(piece)
            time.sleep(HEADER_TIMEOUT / 4)
        answer = _answer(s)
    assert answer is not None and answer[0] == 200


def test_the_second_head_on_a_kept_alive_connection_is_timed_too(svc: ServiceProcess) -> None:
    with _connect(svc) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        first = _answer(s)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")  # the near miss: a whole second request
        second = _answer(s)
        t0 = time.monotonic()
        s.sendall(b"GET /healthz HTTP/1.1\r\n")  # a third that never ends
        third = _answer(s)
    assert first is not None and first[0] == 200 and second is not None and second[0] == 200
    assert third is not None and third[0] == 408 and time.monotonic() - t0 < HEADER_TIMEOUT + 1.5


# -- slow bodies: the head timer stops at the head; the body has its own limit --

def test_a_slow_body_is_the_body_timeout_not_the_header_timeout(svc: ServiceProcess) -> None:
    with _connect(svc) as s:
        t0 = time.monotonic()
        s.sendall(b"POST /v1/analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\n"
                  b"Authorization: Bearer " + FULL_TOKEN.encode() + b"\r\nContent-Length: 100000\r\n\r\n")
        answer = _trickle(s, b" ", 0.25, 10)
        took = time.monotonic() - t0
    assert answer is not None and answer[0] == 408 and json.loads(answer[2])["error"] == "body_timeout"
    assert 2 - 0.1 < took < 4


# -- oversized heads --

def test_heads_over_64_kib_are_refused_and_tokens_over_8_kib_answered(svc: ServiceProcess) -> None:
    r = httpx.get(svc.url + "/healthz", headers={"X-Pad": "p" * (60 << 10)}, timeout=10)
    assert r.status_code == 200  # the near miss: a 60 KiB head is read
    r = httpx.get(svc.url + "/v1/catalog", headers={"Authorization": "Bearer " + "x" * (32 << 10)}, timeout=10)
    assert r.status_code == 431 and r.json()["error"] == "header_too_large"  # the app's own limit (auth)
    with _connect(svc) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"p" * (70 << 10))
        answer = _answer(s)
    assert answer is None or (answer[0] == 431 and json.loads(answer[2])["error"] == "header_too_large")


def test_unfinished_2_mib_heads_do_not_grow_the_service(svc: ServiceProcess) -> None:
    """Issue: 100 connections each holding an unfinished 2 MiB head took +214 MB."""
    pid = svc.proc.pid
    before = _rss(pid)
    socks = []
    try:
        for _ in range(MAX_CONNECTIONS - 4):
            s = _connect(svc)
            # Refused at 64 KiB and closed, maybe before all of it was sent.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                s.sendall(b"GET /v1/catalog HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * ((2 << 20) - 4096))
            socks.append(s)
        time.sleep(0.5)
        grown = _rss(pid) - before
    finally:
        for s in socks:
            s.close()
    assert grown < 16 * MB, grown / MB


# -- too many connections --

def test_connections_past_the_cap_are_refused_with_retry_after(svc: ServiceProcess) -> None:
    time.sleep(0.3)  # earlier tests' connections are gone
    idle = [_connect(svc) for _ in range(MAX_CONNECTIONS)]
    try:
        time.sleep(0.2)
        with _connect(svc) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = _answer(s)
        assert answer is not None and answer[0] == 503, answer
        assert answer[1]["retry-after"] == "3" and json.loads(answer[2])["error"] == "overloaded"
    finally:
        for s in idle:
            s.close()
    time.sleep(0.3)
    assert httpx.get(svc.url + "/healthz", timeout=10).status_code == 200  # the near miss: room again
    assert _metric(svc, 503, "overloaded") >= 1


# -- bombs --

def _pickle_doc(data: bytes) -> dict[str, object]:
    return {"type": "document", "source": "flight_recorder", "file": "fr/rank-0.pkl", "rank": 0,
            "encoding": "base64", "content": base64.b64encode(data).decode()}


def test_a_gzip_bomb_stops_at_the_decompressed_limit(svc: ServiceProcess) -> None:
    _idle(svc)
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = comp.compress(json.dumps(CONTEXT).encode() + b"\n")
    bomb += b"".join(comp.compress(b" " * MB) for _ in range(64)) + comp.flush()  # 64 MiB in ~64 KB
    assert len(bomb) < 100_000
    r = httpx.post(svc.url + "/v1/analyze", content=bomb, headers={**NDJSON, "Content-Encoding": "gzip"}, timeout=30)
    assert r.status_code == 413 and "decompressed" in r.json()["message"]


def test_pickle_bombs_are_errors_in_a_verdict_and_the_health_check_answers(svc: ServiceProcess) -> None:
    """A 300-byte pickle standing for gigabytes, and 13 KB of big integers (issue 26, item 7): the verdict
    comes in seconds with each refusal in `errors`, and /healthz answers while they are read."""
    nested: list[object] = []
    for _ in range(30):
        nested = [nested, nested]
    shared = pickle.dumps({"version": "2.5", "entries": [{"state": nested}]}, protocol=2)
    big = ((1 << 65000) - 1).to_bytes(8200, "little", signed=True)
    ints = (b"\x80\x02}(X\x07\x00\x00\x00entries](}(X\x0b\x00\x00\x00input_sizes\x8b" + len(big).to_bytes(4, "little")
            + big + b"q\x000](" + b"(" + b"h\x00" * 2500 + b"leueu.")
    body = b"".join(json.dumps(r).encode() + b"\n" for r in (
        CONTEXT, _pickle_doc(shared), {**_pickle_doc(ints), "file": "fr/rank-1.pkl", "rank": 1}))

    _idle(svc)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        t0 = time.monotonic()
        fut = pool.submit(httpx.post, svc.url + "/v1/analyze", content=body, headers=NDJSON, timeout=30)
        health = [httpx.get(svc.url + "/healthz", timeout=5).status_code for _ in range(3)]
        r = fut.result()
    assert r.status_code == 200, r.text
    assert time.monotonic() - t0 < 10 and health == [200, 200, 200]
    errors = {e["file"]: e["message"] for e in r.json()["errors"]}
    assert "expands past" in errors["fr/rank-0.pkl"]
    assert "an integer of about 8,200 bytes" in errors["fr/rank-1.pkl"]


# -- a document that outlives its deadline (issue 26, item 12) --

def test_a_long_document_gives_its_slot_back_at_the_deadline(svc: ServiceProcess) -> None:
    """One slot, no wait list, a 1.5 s limit. A sacct document of 200k steps used to keep its slot until it
    was read whole (tens of seconds after the 504): the next request was refused 503."""
    rows = "".join(f"42.{i}|step|FAILED|1:0|2026-11-02T10:00:00|2026-11-02T10:05:00|node-01|None\n"
                   for i in range(200_000))
    sacct = {"type": "document", "source": "scheduler", "format": "sacct", "file": "scheduler/sacct.txt",
             "content": "JobID|JobName|State|ExitCode|Start|End|NodeList|Reason\n" + rows}
    body = b"".join(json.dumps(r).encode() + b"\n" for r in (CONTEXT, sacct))
    _idle(svc)
    r = httpx.post(svc.url + "/v1/analyze", content=body, headers=NDJSON, timeout=60)
    assert r.status_code == 504 and r.json()["error"] == "analysis_timeout"
    # the old behaviour held it until the document was read whole, tens of seconds quiet (minutes on a loaded
    # machine); a slot given back is back in a second or two quiet, and took 8.7 s under a load of 9 on 2 cores
    svc.seconds_until_idle(15.0)
    small = json.dumps(CONTEXT).encode() + b"\n"
    r = httpx.post(svc.url + "/v1/analyze", content=small, headers=NDJSON, timeout=30)
    assert r.status_code == 200, r.text


# -- many clients at once --

def test_many_clients_at_once_get_a_verdict_or_a_503_never_a_failure(svc: ServiceProcess) -> None:
    small = json.dumps(CONTEXT).encode() + b"\n"

    def post(_: int) -> int:
        return httpx.post(svc.url + "/v1/analyze", content=small, headers=NDJSON, timeout=30).status_code

    _idle(svc)
    with concurrent.futures.ThreadPoolExecutor(12) as pool:
        statuses = list(pool.map(post, range(12)))
    assert set(statuses) <= {200, 503} and 200 in statuses, statuses
    assert httpx.get(svc.url + "/healthz", timeout=5).status_code == 200
