"""A sink's `timeout` bounds each try in all (issue 26, item 13): a receiver that trickles its answer a
byte at a time never lets a read time out, and used to hold `run` for a minute at `timeout: 3`.

The receiver is a real loopback socket server that reads the request, then writes its answer one byte
every `gap` seconds.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.httptry import KEEPALIVE_OFF, request_within
from firstfault.model import Enrichment, Verdict
from firstfault.sinks.alertmanager import AlertmanagerSink
from firstfault.sinks.webhook import WebhookSink

EXAMPLE = Path(__file__).resolve().parents[1] / "scenarios" / "hw-nvlink-xid149-showcase"
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"


class Trickler:
    """Answers every request with ANSWER, one byte every `gap` seconds; counts the requests."""

    def __init__(self, gap: float) -> None:
        self.gap = gap
        self.requests = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(30)
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                self.requests += 1
                for i in range(len(ANSWER)):
                    conn.sendall(ANSWER[i:i + 1])
                    time.sleep(self.gap)
            except OSError:
                pass  # the client cut the try


@pytest.fixture
def trickler() -> Iterator[Trickler]:
    t = Trickler(gap=0.2)  # the answer takes 20 s; no single read waits more than 0.2 s
    yield t
    t.sock.close()


@pytest.fixture(scope="module")
def verdict() -> Verdict:
    return Analyzer().analyze_path(str(EXAMPLE))


def test_a_try_ends_at_its_deadline_not_at_the_answer_end(trickler: Trickler) -> None:
    with httpx.Client(timeout=1, limits=KEEPALIVE_OFF) as client:
        t0 = time.monotonic()
        with pytest.raises(httpx.ReadTimeout, match="within 1 s"):
            request_within(client, 1.0, "POST", trickler.url + "/x", content=b"{}")
        assert 0.9 < time.monotonic() - t0 < 2.5


def test_an_answer_that_comes_in_time_is_taken() -> None:
    """The near miss: the same trickle, fast enough to end before the deadline."""
    fast = Trickler(gap=0.005)  # about 0.5 s in all
    try:
        with httpx.Client(timeout=1, limits=KEEPALIVE_OFF) as client:
            r = request_within(client, 5.0, "POST", fast.url + "/x", content=b"{}")
        assert r.status_code == 200 and r.content == b"{}"
    finally:
        fast.sock.close()


def test_the_webhook_gives_up_each_try_at_its_timeout(trickler: Trickler, verdict: Verdict, tmp_path: Path) -> None:
    delays: list[float] = []
    with WebhookSink(trickler.url + "/hook", b"s3cret", timeout=1.0, retries=1, sleep=delays.append,
                     dead_letter_path=tmp_path / "dead.jsonl") as sink:
        t0 = time.monotonic()
        d = sink.deliver(verdict, Enrichment(cluster="eos"))
        took = time.monotonic() - t0
    assert not d.ok and d.attempts == 2 and d.dead_lettered and trickler.requests == 2
    assert d.error is not None and d.error.startswith("ReadTimeout: no whole answer within 1 s")
    assert took < 2 * 1.0 + 2.0  # two tries of 1 s (the sleep between them is not taken), and some slack


def test_alertmanager_gives_up_each_try_at_its_timeout(trickler: Trickler, verdict: Verdict) -> None:
    with AlertmanagerSink(trickler.url, timeout=1.0, retries=1, sleep=lambda _s: None) as sink:
        sink.alerts(verdict, Enrichment(cluster="eos"))  # its first imports (the store's port spelling) are not a try
        t0 = time.monotonic()
        d = sink.deliver(verdict, Enrichment(cluster="eos"))
        took = time.monotonic() - t0
    assert not d.ok and d.attempts == 2 and trickler.requests == 2
    assert d.error is not None and d.error.startswith("ReadTimeout: no whole answer within 1 s")
    assert took < 2 * 1.0 + 2.0
