"""WebhookSink against a real loopback HTTP server (http.server in a thread).

The server verifies every delivery's signature itself (HMAC-SHA256 of the raw
body it received), answers with scripted failures (5xx, 429, 4xx, a stall
past the client timeout) before it accepts, and records what it saw.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.model import Enrichment, Verdict
from firstfault.sinks import SinkError
from firstfault.sinks.webhook import WebhookDeliveryError, WebhookSink

SECRET = b"s3cret-from-a-file"
EXAMPLE = Path(__file__).resolve().parents[1] / "scenarios" / "hw-nvlink-xid149-showcase"
ENRICH = Enrichment(cluster="eos", links={"job": "https://slurm.example/4242"}, owner="alice")


@dataclass
class Script:
    """What the server answers: the first len(failures) requests get these, then 200."""

    failures: list[int | str] = field(default_factory=list)  # a status, or "stall"
    headers: dict[str, str] = field(default_factory=dict)
    seen: list[dict[str, Any]] = field(default_factory=list)


class Receiver(ThreadingHTTPServer):
    daemon_threads = True
    script: Script


class Handler(BaseHTTPRequestHandler):
    server: Receiver

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        expected = "sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()
        verified = hmac.compare_digest(expected, self.headers.get("X-Firstfault-Signature", ""))
        script = self.server.script
        n = len(script.seen)
        script.seen.append({"headers": dict(self.headers), "body": body, "verified": verified, "t": time.monotonic()})
        if not verified:
            self._answer(401, b"bad signature")
        elif n < len(script.failures):
            what = script.failures[n]
            if what == "stall":
                time.sleep(1.5)  # past the client's timeout
                self._answer(200, b"too late")
            else:
                self._answer(int(what), b"try later", script.headers)
        else:
            self._answer(200, b"ok")

    def _answer(self, status: int, text: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(text)))
            self.end_headers()
            self.wfile.write(text)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)


@pytest.fixture
def server() -> Iterator[Receiver]:
    srv = Receiver(("127.0.0.1", 0), Handler)
    srv.script = Script()
    th = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    th.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    th.join(timeout=5)


@pytest.fixture(scope="module")
def verdict() -> Verdict:
    return Analyzer().analyze_path(str(EXAMPLE))


def url(srv: Receiver) -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}/hooks/firstfault"


def sink(target: str, tmp_path: Path, delays: list[float], **kw: Any) -> WebhookSink:
    kw.setdefault("retries", 4)
    return WebhookSink(target, kw.pop("secret", SECRET), dead_letter_path=kw.pop("dlq", tmp_path / "dead.jsonl"),
                       sleep=delays.append, backoff=0.5, max_backoff=8.0, **kw)


def test_retries_5xx_then_delivers_a_verifiable_body(server: Receiver, tmp_path: Path, verdict: Verdict) -> None:
    server.script.failures = [503, 500, 502]
    delays: list[float] = []
    with sink(url(server), tmp_path, delays) as s:
        d = s.deliver(verdict, ENRICH)
    assert d.ok and d.attempts == 4 and d.status == 200 and d.error is None and not d.dead_lettered
    seen = server.script.seen
    assert len(seen) == 4 and all(r["verified"] for r in seen)
    # One delivery: the same id, timestamp and bytes on every retry (receivers can dedupe).
    assert len({r["headers"]["X-Firstfault-Delivery"] for r in seen}) == 1
    assert len({r["headers"]["X-Firstfault-Timestamp"] for r in seen}) == 1
    assert len({r["body"] for r in seen}) == 1
    assert seen[0]["headers"]["Content-Type"] == "application/json"
    assert abs(int(seen[0]["headers"]["X-Firstfault-Timestamp"]) - time.time()) < 60
    doc = json.loads(seen[-1]["body"])
    assert doc.pop("delivery") == d.id
    assert doc.pop("enrichment") == {"cluster": "eos", "links": {"job": "https://slurm.example/4242"},
                                     "owner": "alice", "previous_attempts": []}
    assert records.convert(doc, Verdict) == verdict
    # Exponential backoff with full jitter: each wait within [0, backoff * 2**n].
    assert len(delays) == 3 and all(0 <= w <= 0.5 * 2**i for i, w in enumerate(delays))
    assert not (tmp_path / "dead.jsonl").exists()


def test_429_honours_retry_after(server: Receiver, tmp_path: Path, verdict: Verdict) -> None:
    server.script.failures = [429]
    server.script.headers = {"Retry-After": "3"}
    delays: list[float] = []
    with sink(url(server), tmp_path, delays) as s:
        s.write(verdict, ENRICH)  # no exception: delivered
    assert delays == [3.0] and len(server.script.seen) == 2


def test_timeout_is_retried(server: Receiver, tmp_path: Path, verdict: Verdict) -> None:
    server.script.failures = ["stall"]
    delays: list[float] = []
    with sink(url(server), tmp_path, delays, timeout=0.3) as s:
        d = s.deliver(verdict, ENRICH)
    assert d.ok and d.attempts == 2


def test_other_4xx_is_final_and_dead_lettered(server: Receiver, tmp_path: Path, verdict: Verdict) -> None:
    server.script.failures = [400, 400, 400]
    delays: list[float] = []
    with sink(url(server), tmp_path, delays) as s, pytest.raises(WebhookDeliveryError) as err:
        s.write(verdict, ENRICH)
    assert len(server.script.seen) == 1 and delays == []  # not retried
    d = err.value.delivery
    assert isinstance(err.value, SinkError)
    assert (d.ok, d.attempts, d.status, d.dead_lettered) == (False, 1, 400, True)
    assert "HTTP 400" in str(err.value) and str(tmp_path / "dead.jsonl") in str(err.value)


def test_wrong_secret_is_rejected_by_the_receiver(server: Receiver, tmp_path: Path, verdict: Verdict) -> None:
    delays: list[float] = []
    with sink(url(server), tmp_path, delays, secret=b"not-the-secret") as s:
        d = s.deliver(verdict, ENRICH)
    assert (d.ok, d.status) == (False, 401)
    assert server.script.seen[0]["verified"] is False


def test_exhausted_retries_dead_letter_a_replayable_line(server: Receiver, tmp_path: Path, verdict: Verdict) -> None:
    server.script.failures = [500] * 10
    delays: list[float] = []
    with sink(url(server), tmp_path, delays, retries=2) as s:
        first = s.deliver(verdict, ENRICH)
        second = s.deliver(verdict, Enrichment())
    assert (first.ok, first.attempts, first.status, first.dead_lettered) == (False, 3, 500, True)
    assert len(server.script.seen) == 6
    lines = (tmp_path / "dead.jsonl").read_text().splitlines()
    assert len(lines) == 2  # appended, one JSON object per line
    rec = json.loads(lines[0])
    assert rec["delivery"] == first.id and rec["attempts"] == 3 and rec["status"] == 500
    assert rec["last_error"].startswith("HTTP 500") and rec["url"] == url(server)
    assert rec["time"].endswith("Z")
    body = rec["body"].encode("utf-8")
    assert body == server.script.seen[0]["body"]  # byte for byte what was sent
    assert rec["headers"]["X-Firstfault-Signature"] == "sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()
    assert json.loads(lines[1])["delivery"] == second.id
    assert (tmp_path / "dead.jsonl").stat().st_mode & 0o777 == 0o600


def test_connection_refused_is_retried_then_dead_lettered(tmp_path: Path, verdict: Verdict) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    delays: list[float] = []
    with sink(f"http://127.0.0.1:{port}/", tmp_path, delays, retries=3) as s:
        d = s.deliver(verdict, ENRICH)
    assert (d.ok, d.attempts, d.status, d.dead_lettered) == (False, 4, None, True)
    assert d.error is not None and "ConnectError" in d.error
    assert len(delays) == 3


def test_unwritable_dead_letter_file_is_reported(server: Receiver, tmp_path: Path, verdict: Verdict) -> None:
    server.script.failures = [500] * 5
    (tmp_path / "dlq-is-a-dir").mkdir()
    delays: list[float] = []
    with (sink(url(server), tmp_path, delays, retries=1, dlq=tmp_path / "dlq-is-a-dir") as s,
          pytest.raises(WebhookDeliveryError, match="NOT kept") as err):
        s.write(verdict, ENRICH)
    assert err.value.delivery.dead_lettered is False


def test_transport_is_injectable(tmp_path: Path, verdict: Verdict) -> None:
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(204)

    delays: list[float] = []
    with sink("https://hooks.example/x", tmp_path, delays, transport=httpx.MockTransport(handler)) as s:
        assert s.deliver(verdict, ENRICH).ok
    assert calls[0].headers["X-Firstfault-Signature"].startswith("sha256=")


def test_bad_configuration_is_refused() -> None:
    with pytest.raises(ValueError, match="secret"):
        WebhookSink("http://127.0.0.1:1/", b"")
    with pytest.raises(ValueError, match="retries"):
        WebhookSink("http://127.0.0.1:1/", b"k", retries=-1)


def test_bad_url_is_final_not_an_exception(tmp_path: Path, verdict: Verdict) -> None:
    delays: list[float] = []
    with sink("ftp://hooks.example/x", tmp_path, delays) as s:
        d = s.deliver(verdict, ENRICH)
    assert (d.ok, d.attempts, d.dead_lettered) == (False, 1, True) and delays == []
    assert d.error is not None and "UnsupportedProtocol" in d.error


def test_delivery_id_is_derived_from_the_verdict(server: Receiver, tmp_path: Path, verdict: Verdict) -> None:
    """Header, Idempotency-Key and body carry one id: the same for every send of one verdict, not for another."""
    from firstfault.sinks.webhook import delivery_id

    server.script.failures = [503]
    delays: list[float] = []
    with sink(url(server), tmp_path, delays) as s:
        first = s.deliver(verdict, ENRICH)  # one retry
        again = s.deliver(verdict, ENRICH)  # a rerun of the same attempt (firstfault run twice, watch redo)
    assert first.ok and again.ok and first.id == again.id
    seen = server.script.seen
    assert len(seen) == 3
    assert {r["headers"]["X-Firstfault-Delivery"] for r in seen} == {first.id}
    assert {r["headers"]["Idempotency-Key"] for r in seen} == {first.id}
    assert {json.loads(r["body"])["delivery"] for r in seen} == {first.id}
    assert str(uuid.UUID(first.id)) == first.id and uuid.UUID(first.id).version == 5
    # Each part of the key changes the id; the enrichment's other facts and the analysis time do not.
    wl = verdict.workload
    others = {
        delivery_id(records.replace(verdict, workload=records.replace(wl, attempt=wl.attempt + 1)), ENRICH),
        delivery_id(records.replace(verdict, workload=records.replace(wl, id=wl.id + "x")), ENRICH),
        delivery_id(records.replace(verdict, catalog=records.replace(verdict.catalog, sha256="0" * 64)),
                    ENRICH),
        delivery_id(verdict, Enrichment(cluster="other")),
    }
    assert first.id not in others and len(others) == 4
    assert delivery_id(records.replace(verdict, analyzed_at="2030-01-01T00:00:00.000000Z"),
                       Enrichment(cluster="eos", owner="bob")) == first.id


def test_the_body_with_a_delivery_id_reads_back_with_show(server: Receiver, tmp_path: Path, verdict: Verdict) -> None:
    from click.testing import CliRunner

    from firstfault.cli import app

    delays: list[float] = []
    with sink(url(server), tmp_path, delays) as s:
        assert s.deliver(verdict, ENRICH).ok
    body = tmp_path / "body.json"
    body.write_bytes(server.script.seen[0]["body"])
    res = CliRunner().invoke(app, ["show", str(body), "-f", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc.pop("enrichment")["cluster"] == "eos" and "delivery" not in doc
    assert records.convert(doc, Verdict) == verdict
