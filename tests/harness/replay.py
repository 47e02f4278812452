"""A loopback HTTP server that replays recorded API answers (Loki, the Kubernetes API).

No Loki or Kubernetes API server can run on these machines, so their
connectors are tested with their real client stacks (httpx; the official
`kubernetes` client over urllib3) against this server. It serves answers
built from recorded, documented response bodies kept under tests/fixtures/:

- Loki: a recorded `/loki/api/v1/query_range` answer (resultType streams,
  `[ns_string, line]` values) for the whole test window. The replay applies
  the documented request semantics to it (stream matchers, one `|~` line
  filter, `start` inclusive, `end` exclusive, `limit`, `direction`), so a
  connector's paging and chunking meet the same answers a Loki would give.
- Kubernetes: a recorded PodList and the kubelet's log text per container
  (with `--timestamps` prefixes), served on the API server's paths; an
  unknown pod gets the API server's 404 Status body.

Faults (HTTP errors, slow answers) are injected per request, and the server
counts requests, concurrent requests and client connections.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    params: dict[str, str]
    headers: dict[str, str]


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"


@dataclass
class Fault:
    """Answer matching requests with `status` (if set) after `delay` seconds, `times` times (None: always)."""

    match: Callable[[Request], bool]
    status: int | None = None
    delay: float = 0.0
    times: int | None = None
    body: bytes = b'{"status":"error","errorType":"internal","error":"injected failure"}'
    hits: int = 0


@dataclass
class Stats:
    requests: list[Request] = field(default_factory=list)
    inflight: int = 0
    max_inflight: int = 0
    open_connections: int = 0
    max_open_connections: int = 0
    connections: int = 0


class ReplayServer:
    def __init__(self, app: Callable[[Request], Reply], delay: float = 0.0) -> None:
        self.app = app
        self.delay = delay  # added to every answer, so concurrent requests overlap
        self.faults: list[Fault] = []
        self.stats = Stats()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
            disable_nagle_algorithm = True  # headers and body go out as separate writes

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    s = server.stats
                    s.connections += 1
                    s.open_connections += 1
                    s.max_open_connections = max(s.max_open_connections, s.open_connections)

            def finish(self) -> None:
                with server._lock:
                    server.stats.open_connections -= 1
                super().finish()

            def log_message(self, format: str, *args: Any) -> None:  # quiet tests
                pass

            def do_GET(self) -> None:
                server._handle(self)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="replay", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> ReplayServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def fail(self, match: Callable[[Request], bool], status: int | None = 500, delay: float = 0.0,
             times: int | None = None) -> Fault:
        f = Fault(match=match, status=status, delay=delay, times=times)
        self.faults.append(f)
        return f

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        req = Request("GET", parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()},
                      {k.lower(): v for k, v in h.headers.items()})
        with self._lock:
            self.stats.requests.append(req)
            self.stats.inflight += 1
            self.stats.max_inflight = max(self.stats.max_inflight, self.stats.inflight)
        reply: Reply | None = None
        try:
            delay = self.delay
            for f in self.faults:
                if (f.times is None or f.hits < f.times) and f.match(req):
                    f.hits += 1
                    delay += f.delay
                    if f.status is not None:
                        reply = Reply(f.status, f.body)
                    break
            if delay:
                time.sleep(delay)
            if reply is None:
                reply = self.app(req)
        except Exception as exc:  # a bug in a test's matcher or the replay: answer it, do not drop the socket
            reply = Reply(599, f"replay error: {type(exc).__name__}: {exc}".encode(), "text/plain")
        try:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                h.send_response(reply.status)
                h.send_header("Content-Type", reply.content_type)
                h.send_header("Content-Length", str(len(reply.body)))
                h.end_headers()
                h.wfile.write(reply.body)
        finally:
            with self._lock:
                self.stats.inflight -= 1


# --------------------------------------------------------------------------
# Loki
# --------------------------------------------------------------------------

_MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*,?')
_FILTER = re.compile(r'\|~\s*"((?:[^"\\]|\\.)*)"')


class _Words:
    """A `|~` filter that is an alternation of escaped literals (what the Blueprint sends) as a word set:
    Python's re is slow on a thousand-word alternation where Loki's RE2 is not, and the replay must not
    be the slow part of a timeout test."""

    def __init__(self, words: list[str]) -> None:
        self.words = words

    def search(self, line: str) -> bool:
        return any(w in line for w in self.words)


@functools.lru_cache(maxsize=8)
def _compiled(pattern: str) -> re.Pattern[str] | _Words:
    """The line filter, parsed once per pattern."""
    parts = re.split(r"(?<!\\)\|", pattern)
    if all(not re.search(r"(?<!\\)[.^$*+?()\[\]{}]", p) for p in parts):
        return _Words([re.sub(r"\\(.)", r"\1", p) for p in parts if p])
    return re.compile(pattern)


def _go_unquote(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), s)


def _parse_logql(query: str) -> tuple[list[tuple[str, str, str]], re.Pattern[str] | None]:
    if not query.startswith("{"):
        raise ValueError(f"parse error: query must start with a stream selector: {query!r}")
    end = query.index("}")  # label values in these fixtures hold no '}'
    inner = query[1:end]
    matchers = []
    pos = 0
    while pos < len(inner):
        m = _MATCHER.match(inner, pos)
        if m is None:
            raise ValueError(f"parse error at {inner[pos:]!r}")
        matchers.append((m.group(1), m.group(2), _go_unquote(m.group(3))))
        pos = m.end()
    rest = query[end + 1 :].strip()
    filt = None
    if rest:
        fm = _FILTER.fullmatch(rest)
        if fm is None:
            raise ValueError(f"unsupported pipeline in replay: {rest!r}")
        filt = _compiled(_go_unquote(fm.group(1)))
    return matchers, filt


def _labels_match(labels: dict[str, str], matchers: list[tuple[str, str, str]]) -> bool:
    for name, op, value in matchers:
        v = labels.get(name, "")
        if (op == "=" and v != value) or (op == "!=" and v == value):
            return False
        if (op == "=~" and not re.fullmatch(value, v)) or (op == "!~" and re.fullmatch(value, v)):
            return False
    return True


class LokiReplay:
    """Serves query_range from a recorded streams answer (see the module docstring)."""

    def __init__(self, recorded: Path | dict[str, Any]) -> None:
        body = json.loads(recorded.read_text()) if isinstance(recorded, Path) else recorded
        assert body["status"] == "success" and body["data"]["resultType"] == "streams"
        self.streams: list[tuple[dict[str, str], list[tuple[int, str]]]] = [
            (s["stream"], [(int(ts), line) for ts, line in s["values"]]) for s in body["data"]["result"]
        ]

    def __call__(self, req: Request) -> Reply:
        if req.path == "/loki/api/v1/series":
            return self._series(req)
        if req.path != "/loki/api/v1/query_range":
            return Reply(404, b"404 page not found\n", "text/plain")
        p = req.params
        try:
            matchers, filt = _parse_logql(p["query"])
            start, end = int(p["start"]), int(p["end"])
            limit = int(p.get("limit", "100"))
        except (KeyError, ValueError) as exc:
            return Reply(400, f"{exc}\n".encode(), "text/plain")
        forward = p.get("direction", "backward") == "forward"
        picked: list[tuple[int, int, int, str]] = []  # (ts, stream index, entry index, line)
        for si, (labels, values) in enumerate(self.streams):
            if not _labels_match(labels, matchers):
                continue
            for ei, (ts, line) in enumerate(values):
                if start <= ts < end and (filt is None or filt.search(line)):
                    picked.append((ts, si, ei, line))
        picked.sort(key=lambda e: (e[0], e[1], e[2]), reverse=not forward)
        picked = picked[:limit]
        grouped: dict[int, list[list[str]]] = {}
        for ts, si, _ei, line in picked:
            grouped.setdefault(si, []).append([str(ts), line])
        result = [{"stream": self.streams[si][0], "values": vals} for si, vals in sorted(grouped.items())]
        body = {"status": "success", "data": {"resultType": "streams", "result": result,
                                              "stats": {"summary": {"totalEntriesReturned": len(picked)}}}}
        return Reply(200, json.dumps(body).encode())


    def _series(self, req: Request) -> Reply:
        try:
            matchers, _ = _parse_logql(req.params["match[]"])
            start, end = int(req.params["start"]), int(req.params["end"])
        except (KeyError, ValueError) as exc:
            return Reply(400, f"{exc}\n".encode(), "text/plain")
        data = [labels for labels, values in self.streams
                if _labels_match(labels, matchers) and any(start <= ts < end for ts, _ in values)]
        return Reply(200, json.dumps({"status": "success", "data": data}).encode())


# --------------------------------------------------------------------------
# Kubernetes API
# --------------------------------------------------------------------------

_POD_LOG = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)/log$")
_POD = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)$")
_PODS = re.compile(r"^/api/v1/namespaces/([^/]+)/pods$")


def _status_404(kind: str, name: str) -> Reply:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f'{kind} "{name}" not found', "reason": "NotFound",
            "details": {"name": name, "kind": kind}, "code": 404}
    return Reply(404, json.dumps(body).encode())


class K8sReplay:
    """Serves a recorded PodList and per-container kubelet logs.

    Fixture layout: `pods.json` (a PodList) and `logs/<pod>/<container>.log`
    (`<container>.previous.log` for the terminated instance of a restarted one).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pods = json.loads((root / "pods.json").read_text())

    def _pod(self, name: str) -> dict[str, Any] | None:
        for pod in self.pods["items"]:
            if pod["metadata"]["name"] == name:
                return dict(pod)
        return None

    def __call__(self, req: Request) -> Reply:
        m = _PODS.match(req.path)
        if m:
            sel = req.params.get("labelSelector", "")
            want = dict(kv.split("=", 1) for kv in sel.split(",") if kv)
            items = [p for p in self.pods["items"]
                     if p["metadata"]["namespace"] == m.group(1)
                     and all(p["metadata"].get("labels", {}).get(k) == v for k, v in want.items())]
            return Reply(200, json.dumps({**self.pods, "items": items}).encode())
        m = _POD_LOG.match(req.path)
        if m:
            pod = self._pod(m.group(2))
            if pod is None:
                return _status_404("pods", m.group(2))
            container = req.params.get("container") or pod["spec"]["containers"][0]["name"]
            prev = req.params.get("previous") == "true"
            f = self.root / "logs" / m.group(2) / f"{container}{'.previous' if prev else ''}.log"
            if not f.is_file():
                msg = (f'previous terminated container "{container}" in pod "{m.group(2)}" not found' if prev
                       else f'container "{container}" in pod "{m.group(2)}" is not valid')
                body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": msg, "reason": "BadRequest", "code": 400}
                return Reply(400, json.dumps(body).encode())
            text = f.read_bytes()
            if req.params.get("timestamps") != "true":
                text = re.sub(rb"(?m)^\S+ ", b"", text)
            return Reply(200, text, "text/plain")
        m = _POD.match(req.path)
        if m:
            pod = self._pod(m.group(2))
            return Reply(200, json.dumps(pod).encode()) if pod else _status_404("pods", m.group(2))
        return _status_404("path", req.path)


def spy_candidates(analysis: Any) -> list[Any]:
    """The candidates fed to `analysis` from now on, in order, still fed to it (the collectors' tests)."""
    got: list[Any] = []
    add = analysis.add_candidate

    def spy(c: Any) -> None:
        got.append(c)
        add(c)

    analysis.add_candidate = spy
    return got
