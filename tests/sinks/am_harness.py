"""A real Alertmanager for tests (Debian's prometheus-alertmanager).

Started on 127.0.0.1 on a free port with its own storage directory and a
config whose only receiver sends nowhere (alerts are kept and listed, no
notification leaves the machine); clustering is off (no gossip port), and it
is stopped by its PID.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.daemons import stop, wait_ready

BINARIES = ("prometheus-alertmanager", "alertmanager")
CONFIG = """\
route:
  receiver: nowhere
  group_by: [workload]
  group_wait: 1h
receivers:
  - name: nowhere
"""


def binary() -> str | None:
    for b in BINARIES:
        if path := shutil.which(b):
            return path
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Alertmanager:
    url: str
    pid: int
    log: Path

    def alerts(self, **filters: str) -> list[dict[str, Any]]:
        """GET /api/v2/alerts: what Alertmanager itself holds (its own API, not ours)."""
        resp = httpx.get(f"{self.url}/api/v2/alerts", params=filters, timeout=5.0)
        resp.raise_for_status()
        out: list[dict[str, Any]] = resp.json()
        return out


@contextlib.contextmanager
def alertmanager(workdir: Path, ready_timeout: float = 20.0) -> Iterator[Alertmanager]:
    exe = binary()
    if exe is None:
        raise RuntimeError("prometheus-alertmanager is not installed (scripts/ci/install-servers.sh)")
    workdir.mkdir(parents=True, exist_ok=True)
    cfg = workdir / "alertmanager.yml"
    cfg.write_text(CONFIG)
    port = free_port()
    log = workdir / "alertmanager.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [exe, f"--config.file={cfg}", f"--storage.path={workdir / 'data'}",
             f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address="],
            stdout=out, stderr=subprocess.STDOUT, cwd=workdir, start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(proc, f"{url}/-/ready", log, "alertmanager", ready_timeout)
        yield Alertmanager(url=url, pid=proc.pid, log=log)
    finally:
        stop(proc)
