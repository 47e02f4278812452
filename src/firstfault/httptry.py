"""One HTTP try within a deadline: connecting, sending and every read together, not each on its own.

httpx's timeouts bound each network operation: a receiver that sends its
answer a byte every second never lets a 3 s read timeout pass, and holds the
caller for as long as it likes. `request_within` bounds the whole try: it
learns the try's socket as httpx connects (the request's `trace` extension,
a public httpx/httpcore hook) and, when the deadline passes first, shuts the
socket down from a timer thread, which ends the blocked read at once; the try
then fails as a timeout (httpx.ReadTimeout), which callers retry like any
other. It needs a fresh connection per try (a kept-alive one is never seen
connecting): give it a client without keep-alive (KEEPALIVE_OFF).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Any, Final

import httpx

__all__ = ["KEEPALIVE_OFF", "request_within"]

KEEPALIVE_OFF: Final = httpx.Limits(max_keepalive_connections=0)
_CONNECTED: Final = frozenset({"connection.connect_tcp.complete", "connection.start_tls.complete"})


def request_within(client: httpx.Client, seconds: float, method: str, url: str, **kwargs: Any) -> httpx.Response:
    """client.request(method, url, **kwargs), ended at `seconds` in all (httpx.ReadTimeout past them)."""
    lock = threading.Lock()
    sockets: list[socket.socket] = []
    expired = False

    def cut(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):  # already closed
            sock.shutdown(socket.SHUT_RDWR)

    def trace(event: str, info: dict[str, Any]) -> None:
        if event not in _CONNECTED:
            return
        sock = info["return_value"].get_extra_info("socket")
        if not isinstance(sock, socket.socket):
            return
        with lock:
            sockets.append(sock)
            if expired:
                cut(sock)

    def expire() -> None:
        nonlocal expired
        with lock:
            expired = True
            for sock in sockets:
                cut(sock)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    try:
        return client.request(method, url, extensions={"trace": trace}, **kwargs)
    except httpx.TransportError as exc:
        if not expired:
            raise
        raise httpx.ReadTimeout(f"no whole answer within {seconds:g} s (the try's deadline)",
                                request=exc.request) from exc
    finally:
        timer.cancel()
