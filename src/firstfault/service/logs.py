"""One structured log line per request, and the request id.

The line holds the id, method, route, status, bytes in and out, duration
and outcome; never a header value (tokens) or a byte of the body
(evidence). The id is the client's X-Request-ID when it is a sane token,
else a fresh one, and is echoed back.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

ACCESS_LOGGER = "firstfault.service.access"
_ID_OK = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
_HANDLER_MARK = "_firstfault_json"


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace(
                "+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            doc.update(fields)
        if record.exc_info:
            doc["exc"] = self.formatException(record.exc_info)
        return json.dumps(doc, default=str)


def configure_logging(level: str) -> None:
    """JSON lines on stderr for firstfault's loggers (idempotent: one handler however often called)."""
    root = logging.getLogger("firstfault")
    root.setLevel(level.upper())
    if not any(getattr(h, _HANDLER_MARK, False) for h in root.handlers):
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(JsonFormatter())
        setattr(h, _HANDLER_MARK, True)
        root.addHandler(h)
        root.propagate = False


class RequestLog:
    """Pure ASGI middleware (it must not buffer the streamed request body)."""

    def __init__(self, app: ASGIApp, on_done: Callable[[Scope, int, int, int, float], None] | None = None) -> None:
        self.app = app
        self.on_done = on_done
        self.log = logging.getLogger(ACCESS_LOGGER)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = ""
        for k, v in scope.get("headers", []):
            if k == b"x-request-id":
                cand = v.decode("latin-1")
                rid = cand if _ID_OK.match(cand) else ""
        rid = rid or uuid.uuid4().hex
        info: dict[str, Any] = {}
        scope["firstfault"] = info  # routes add outcome, form, token name
        counts = {"in": 0, "out": 0, "status": 500}
        t0 = time.perf_counter()

        async def recv() -> Message:
            msg = await receive()
            if msg["type"] == "http.request":
                counts["in"] += len(msg.get("body", b""))
            return msg

        async def snd(msg: Message) -> None:
            if msg["type"] == "http.response.start":
                counts["status"] = msg["status"]
                msg = dict(msg)
                msg["headers"] = [*msg.get("headers", []), (b"x-request-id", rid.encode())]
            elif msg["type"] == "http.response.body":
                counts["out"] += len(msg.get("body", b""))
            await send(msg)

        try:
            await self.app(scope, recv, snd)
        except Exception:
            info["outcome"] = "internal_error"  # counted and logged as the 500 it becomes, not as a verdict
            raise
        finally:
            dt = time.perf_counter() - t0
            route = scope.get("route")
            path = getattr(route, "path", None) or "(unmatched)"
            fields = {
                "id": rid, "method": scope.get("method"), "route": path, "status": counts["status"],
                "bytes_in": counts["in"], "bytes_out": counts["out"], "duration_ms": round(dt * 1000, 2),
                "outcome": info.get("outcome", "ok" if counts["status"] < 400 else "error"),
                "worker": os.getpid(),  # which process answered (serve --workers N)
            }
            fields.update({k: v for k, v in info.items() if k != "outcome"})
            self.log.info("request", extra={"fields": fields})
            if self.on_done is not None:
                self.on_done(scope, counts["status"], counts["in"], counts["out"], dt)
