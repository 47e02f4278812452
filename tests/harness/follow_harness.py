"""A real `firstfault watch --follow` next to a real Slurm and a real Alertmanager (tests and bench/follow_live.py).

The daemon is the installed `firstfault` program in a process of its own (JSON log lines on its stdout, kept in a
file), configured by a cluster.yaml written here: the test Slurm's clients (SLURM_CONF in its environment),
kernel logs under `<root>/nodes/{node}/kern.log`, the batch output under `<root>/jobs/slurm-{job}.out` (srun
--label), a SQLite store, the Alertmanager, and a webhook receiver that counts deliveries by id.

The fault written to a node's kernel log is the Xid 79 block of illinois-scicomp/machine-shop-maintenance#80
(https://github.com/illinois-scicomp/machine-shop-maintenance/issues/80; tests/wild/hw-xid79-titanv-overheating-
porter), as `dmesg -T` printed it there, stamped with the time it is written.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import yaml

XID79 = (
    "[{t}] NVRM: GPU at PCI:0000:02:00: GPU-be29ae39-c771-a3b8-e7c3-83562ff86bbe\n"
    "[{t}] NVRM: GPU Board Serial Number: 0322518029277\n"
    "[{t}] NVRM: Xid (PCI:0000:02:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
    "[{t}] NVRM: GPU 0000:02:00.0: GPU has fallen off the bus.\n"
)


def firstfault_program() -> list[str]:
    exe = Path(sys.executable).with_name("firstfault")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "firstfault"]


def write_fault(root: Path, node: str, when: datetime | None = None) -> float:
    """Append the Xid 79 block to `node`'s kernel log; returns the wall time (time.time()) once it is written."""
    t = (when or datetime.now(UTC)).astimezone(UTC).strftime("%a %b %d %H:%M:%S %Y")
    path = root / "nodes" / node / "kern.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fh.write(XID79.format(t=t))
        fh.flush()
    return time.time()


class Receiver(ThreadingHTTPServer):
    """A webhook endpoint that takes everything and counts the deliveries by X-Firstfault-Delivery."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.deliveries: Counter[str] = Counter()
        self.bodies: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/hook"

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with self.server.lock:
            self.server.deliveries[self.headers.get("X-Firstfault-Delivery", "")] += 1
            self.server.bodies.append(json.loads(body))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def write_config(base: Path, *, root: Path, am_url: str, hook_url: str, cluster: str = "ffbench",
                 interval: float = 1.0, list_interval: float = 2.0, poll_interval: float = 3.0) -> Path:
    secret = base / "hook.secret"
    secret.write_text("bench-secret\n")
    cfg = {
        "cluster": cluster,
        "scheduler": {"slurm": {"timeout": 20}},
        "logs": {"files": {"root": str(root), "sources": [
            {"kind": "kernel", "path": "nodes/{node}/kern.log"},
            {"kind": "application", "path": "jobs/slurm-{job}.out", "rank_prefix": "srun"},
        ]}},
        "outputs": {
            "stdout": None,
            "database": {"url": f"sqlite:///{base / 'verdicts.db'}"},
            "webhooks": [{"url": hook_url, "secret": {"file": str(secret)}, "dead_letter": str(base / "dead.jsonl"),
                          "retries": 1}],
            "alertmanager": [{"url": am_url}],
        },
        "watch": {"poll_interval": poll_interval},
        "follow": {"interval": interval, "list_interval": list_interval},
    }
    path = base / "cluster.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


class Daemon:
    """`firstfault watch --follow --json` as a process; its JSON lines are read as they come."""

    def __init__(self, config: Path, env: dict[str, str], log: Path) -> None:
        self.config, self.env, self.log = config, env, log
        self.proc: subprocess.Popen[bytes] | None = None
        self.events: list[dict[str, Any]] = []
        self._seen = 0

    def start(self) -> None:
        out = self.log.open("ab")
        self.proc = subprocess.Popen([*firstfault_program(), "watch", "-c", str(self.config), "--follow", "--json"],
                                     stdout=out, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        out.close()

    def read(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return self.events
        lines = self.log.read_text(errors="replace").splitlines()
        for ln in lines[self._seen:]:
            with contextlib.suppress(ValueError):
                got = json.loads(ln)
                if isinstance(got, dict):
                    self.events.append(got)
        self._seen = len(lines)
        return self.events

    def wait_event(self, pred: Any, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for e in self.read():
                if pred(e):
                    return e
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"the daemon exited {self.proc.returncode}: {self.log.read_text()[-3000:]}")
            time.sleep(0.05)
        raise TimeoutError(f"no such event within {timeout} s; log tail: {self.log.read_text()[-3000:]}")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, sig)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


def wait_alert(am_url: str, workload: str, alertname: str, timeout: float, poll: float = 0.05
               ) -> tuple[float, dict[str, Any]]:
    """(wall time it was first listed, the alert) of the first alert Alertmanager lists for `workload`."""
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=5.0) as client:
        while time.monotonic() < deadline:
            got = client.get(f"{am_url}/api/v2/alerts",
                             params={"filter": [f'workload="{workload}"', f'alertname="{alertname}"']}).json()
            if got:
                return time.time(), got[0]
            time.sleep(poll)
    raise TimeoutError(f"no {alertname} alert for workload {workload} within {timeout} s")


def alerts(am_url: str, **filters: str) -> list[dict[str, Any]]:
    with httpx.Client(timeout=5.0) as client:
        out: list[dict[str, Any]] = client.get(f"{am_url}/api/v2/alerts", params={
            "filter": [f'{k}="{v}"' for k, v in filters.items()]}).json()
        return out


@contextlib.contextmanager
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    try:
        yield r
    finally:
        r.stop()


def start_watch_cursor_now(config: Path, source: str = "slurm") -> None:
    """Store the watch cursor at now, so the daemon's first pass does not attribute the jobs that ended before
    (a shared Slurm's earlier jobs)."""
    from firstfault.blueprint.config import load_config
    from firstfault.identify.cursor import format_cursor
    from firstfault.store.repo import VerdictStore

    cfg = load_config(config)
    assert cfg.outputs.database is not None
    with VerdictStore.open(cfg.outputs.database.url) as store:
        store.set_cursor(f"watch:{source}:{cfg.cluster}", format_cursor(datetime.now(UTC), set()))
