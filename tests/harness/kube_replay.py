"""A loopback HTTP server that answers Kubernetes API requests from recorded response bodies.

No real Kubernetes API server can run on these machines (only kubectl and
etcd are packaged), so the Kueue connector is tested with the official
`kubernetes` Python client against this server instead. It serves the JSON
bodies under tests/fixtures/kube/, written in the documented shapes of the
Kubernetes API (PodList, EventList, Status) and of Kueue's
kueue.x-k8s.io/v1beta1 Workload and WorkloadList.

routes.json lists {method, path, query?, status?, body}: a request matches
a route when its method and path are equal and its decoded query parameters
are exactly the route's `query` (absent = no parameters). Anything else gets
the API server's 404 Status body, so a wrong path or selector fails loudly.
Every request is recorded in `requests` for the tests to inspect, and the
body of every PATCH in `bodies` (the replayed answer does not depend on it:
the tests check what the client sent).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit


@dataclass
class KubeReplay:
    server: ThreadingHTTPServer
    thread: threading.Thread
    routes: list[dict[str, Any]]
    root: Path
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    # (method, path, Content-Type, body) of every request that carried a body (PATCH).
    bodies: list[tuple[str, str, str, bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def answer(self, method: str, target: str) -> tuple[int, bytes]:
        parts = urlsplit(target)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        self.requests.append((method, parts.path, query))
        for route in self.routes:
            if route["method"] == method and route["path"] == parts.path and route.get("query", {}) == query:
                return int(route.get("status", 200)), (self.root / route["body"]).read_bytes()
        status = {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f"the server could not find the requested resource ({method} {target})",
            "reason": "NotFound", "details": {}, "code": 404,
        }
        return 404, json.dumps(status).encode()


def start_kube_replay(root: Path) -> KubeReplay:
    routes = json.loads((root / "routes.json").read_text())

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body = replay.answer("GET", self.path)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_PATCH(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            replay.bodies.append(("PATCH", urlsplit(self.path).path, self.headers.get("Content-Type", ""), body))
            status, answer = replay.answer("PATCH", self.path)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, name="kube-replay", daemon=True)
    replay = KubeReplay(server=server, thread=thread, routes=routes, root=root)
    thread.start()
    return replay
