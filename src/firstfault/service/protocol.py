"""The Service's HTTP/1.1 connections: uvicorn's h11 protocol with the limits a request meets before the app.

What reaches the app is bounded there (body size and time, auth, slots).
Before that, a connection is only uvicorn's, which by itself holds a
connection whose request head never ends, for ever, with as much of the
head as its parser allows. So `firstfault serve` runs this protocol
(`uvicorn --http firstfault.service.protocol:ServiceProtocol` does too):

- a request head (request line and headers) must arrive whole within
  `header_timeout` seconds of its first byte, or of the connection's start:
  408 `header_timeout`, then the connection is closed;
- a head is at most MAX_HEADER_BYTES (64 KiB): 431 `header_too_large`;
- at most `max_connections` connections are open; a further one is answered
  503 `overloaded` with Retry-After and closed.

Those answers come from here, not the app: the same JSON problem body,
counted by the app's metrics through the `refused` callback the app puts in
its lifespan state (CONNECTION_LIMITS).
"""

from __future__ import annotations

import asyncio
import http
from typing import Any, Final

import h11
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from firstfault import records
from firstfault.responses import ProblemBody
from firstfault.service.limits import CONNECTION_LIMITS, ConnectionLimits

MAX_HEADER_BYTES: Final = 64 << 10  # a request head; the Authorization header alone is 8 KiB at most (auth.py)
_READ: Final = 256 << 10  # the most asyncio hands a protocol at once: h11's own limit is above ours by that


class ServiceProtocol(H11Protocol):
    """H11Protocol with a header timeout, a header size limit and a connection cap."""

    def __init__(self, config: Config, server_state: ServerState, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        limits = app_state.get(CONNECTION_LIMITS)
        self.limits = limits if isinstance(limits, ConnectionLimits) else ConnectionLimits()
        self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEADER_BYTES + _READ)
        self._head_timer: asyncio.TimerHandle | None = None
        self._head_bytes = 0  # bytes received since the current request's head began

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            self._refuse(503, "overloaded", f"more than {self.limits.max_connections} connections are open; "
                                            "retry later", {"retry-after": str(self.limits.retry_after)})
            return
        self._start_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        waiting = self.conn.their_state is h11.IDLE  # the request's head has not arrived yet
        if waiting:
            if self._head_timer is None:  # the first byte of a request on a kept-alive connection
                self._start_head_timer()
            self._head_bytes += len(data)
        super().data_received(data)
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.IDLE:
            if waiting and self._head_bytes > MAX_HEADER_BYTES:
                self._refuse(431, "header_too_large", f"the request head is over the {MAX_HEADER_BYTES} byte limit")
        else:  # the head is in: the app's own limits (body size and time) take over
            self._stop_head_timer()
            self._head_bytes = 0

    def _start_head_timer(self) -> None:
        self._stop_head_timer()
        self._head_timer = self.loop.call_later(self.limits.header_timeout, self._head_timed_out)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._refuse(408, "header_timeout",
                         f"the request head did not arrive within {self.limits.header_timeout:g} s")

    def _refuse(self, status: int, error: str, message: str, headers: dict[str, str] | None = None) -> None:
        """Answers before any request reached the app (written raw: h11 has no request to answer), and closes."""
        self._stop_head_timer()
        body = records.encode(ProblemBody(error=error, message=message))
        head = [f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}", "content-type: application/json",
                f"content-length: {len(body)}", "connection: close",
                *(f"{k}: {v}" for k, v in (headers or {}).items())]
        self.transport.write(("\r\n".join(head) + "\r\n\r\n").encode("ascii") + body)
        self.transport.close()
        if self.limits.refused is not None:
            self.limits.refused(status, error)
