"""Shared helpers for the Blueprint's end-to-end tests (test_e2e_*.py).

Everything here drives real components: the venv's `firstfault` (in process
through click's CliRunner, or as a subprocess), a real `firstfault serve`,
a loopback webhook receiver that checks signatures itself, and Slurm jobs
on the session's real single-node Slurm (tests/harness/slurm_harness.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner, Result
from sqlalchemy import create_engine, text

from firstfault.blueprint.config import BlueprintConfig, load_config
from tests.harness.slurm_harness import TERMINAL, SlurmCluster
from tests.service.server import ServiceProcess

FIRSTFAULT = Path(sys.executable).parent / "firstfault"
SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
SHOWCASE = SCENARIOS / "hw-nvlink-xid149-showcase"
_STAMP = re.compile(r'"analyzed_at":\s*"[^"]*"')


# ---------------------------------------------------------------- config and CLI


def write_config(path: Path, doc: Mapping[str, Any]) -> BlueprintConfig:
    """Write a cluster.yaml and validate it with the real loader (a typo fails here, not in the run)."""
    path.write_text(yaml.safe_dump(dict(doc), sort_keys=False))
    return load_config(path)


def invoke(args: list[str], env: Mapping[str, str] | None = None) -> Result:
    """`firstfault ARGS` in process (click's CliRunner); stdout and stderr are kept apart."""
    from firstfault.cli import app

    return CliRunner().invoke(app, args, env=dict(env or {}), catch_exceptions=True)


def run_cli(args: list[str], env: Mapping[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The venv's `firstfault` as a subprocess: the real exit code, stdout and stderr."""
    full = dict(os.environ) | dict(env or {})
    return subprocess.run([str(FIRSTFAULT), *args], capture_output=True, text=True, env=full, timeout=timeout,
                          check=False)


def unstamped(doc: str) -> str:
    """A verdict's JSON with analyzed_at blanked (the one field two runs legitimately differ in)."""
    out, n = _STAMP.subn('"analyzed_at":"-"', doc)
    assert n == 1, doc[:300]
    return out


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released; nobody else takes it this fast)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------------ webhook


def sign(secret: bytes, body: bytes) -> str:
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


@dataclass
class Delivery:
    headers: dict[str, str]
    body: bytes
    verified: bool

    @property
    def doc(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.body)
        return parsed


@dataclass
class _State:
    secret: bytes
    status: int
    deliveries: list[Delivery] = field(default_factory=list)
    on_delivery: Callable[[int, Delivery], None] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: _State


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        st = self.server.state
        # What a receiver must do: HMAC the raw body with the shared secret, compare in constant time.
        verified = hmac.compare_digest(sign(st.secret, body), self.headers.get("X-Firstfault-Signature", ""))
        d = Delivery(dict(self.headers), body, verified)
        with st.lock:
            st.deliveries.append(d)
            n = len(st.deliveries)
        if st.on_delivery is not None:
            st.on_delivery(n, d)
        status = 401 if not verified else st.status
        payload = b"ok" if status == 200 else b"refused"
        with contextlib.suppress(OSError):  # the sender may have been killed meanwhile
            self.send_response(status)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)


class WebhookReceiver:
    """A loopback HTTP server that verifies each delivery's signature and records it.

    `status` is what it answers to a verified delivery (500 makes every
    delivery fail); `on_delivery(n, delivery)` runs before the answer (a
    test uses it to kill the sender while it waits).
    """

    def __init__(self, secret: bytes, status: int = 200) -> None:
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.state = _State(secret=secret, status=status)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    @property
    def deliveries(self) -> list[Delivery]:
        with self.server.state.lock:
            return list(self.server.state.deliveries)

    def set_hook(self, fn: Callable[[int, Delivery], None] | None) -> None:
        self.server.state.on_delivery = fn

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


# ------------------------------------------------------------------- the Service


class Serve(ServiceProcess):
    """`firstfault serve --host 127.0.0.1 --port 0` as a subprocess, stopped by its PID."""

    def __init__(self, workdir: Path, env: Mapping[str, str] | None = None) -> None:
        super().__init__("serve", dict(env or {}), workdir,
                         [str(FIRSTFAULT), "serve", "--host", "127.0.0.1", "--port", "0"])


def submit(c: SlurmCluster, jobs_root: Path, name: str, script: str, *opts: str) -> str:
    """Submit a batch job whose own output file is JOBS_ROOT/<id>/slurm.out.

    Slurm does not create the output's directory, and its name needs the id:
    submit held, make the directory, release (a site's per-job log directory).
    """
    out = c.run("sbatch", "--parsable", "--hold", f"--job-name={name}",
                f"--output={jobs_root}/%j/slurm.out", *opts, input=script).stdout
    job = out.strip().split(";")[0]
    (jobs_root / job).mkdir(parents=True, exist_ok=True)
    c.run("scontrol", "release", job)
    return job


def wait_queue_empty(c: SlurmCluster, timeout: float = 180) -> None:
    """Until no job of the cluster is pending or running (another module's time-limit job may still run)."""
    deadline = time.monotonic() + timeout
    left = ""
    while time.monotonic() < deadline:
        left = c.run("squeue", "-h", "-o", "%i %T", check=False).stdout.strip()
        if not left:
            return
        time.sleep(0.5)
    raise AssertionError(f"the Slurm queue did not drain in {timeout}s: {left}")


def lose_node_running(c: SlurmCluster, job: str, timeout: float = 30) -> None:
    """Set the only node down under a running job (Slurm records NODE_FAIL), then bring it back."""
    c.wait_state(job, {"RUNNING"}, 20)
    c.run("scontrol", "update", f"nodename={c.node}", "state=down", "reason=ff-e2e")
    deadline = time.monotonic() + timeout
    while "NODE_FAIL" not in c.run("sacct", "-P", "-n", "-D", "-X", "-j", job, "-o", "State").stdout:
        assert time.monotonic() < deadline, f"job {job} was never recorded as NODE_FAIL"
        time.sleep(0.3)
    # ReturnToService=2 may already have put it back (then 'resume' is refused as invalid).
    c.run("scontrol", "update", f"nodename={c.node}", "state=resume", check=False)
    c.wait_node(["idle", "mixed", "allocated"])


@dataclass(frozen=True)
class TimeLimitJob:
    """`sleep 300` under sbatch --time=1 on the session's Slurm (tests/conftest.py: slurm_time_limit_job): it ends
    TIMEOUT after its minute, Slurm's least limit, or a little later (slurmctld checks the limits now and then)."""

    cluster: SlurmCluster
    root: Path  # ROOT/<id>/slurm.out: its own output file (`submit`)
    job: str
    submitted: datetime  # whole seconds, UTC

    def ended(self) -> str:
        """Its end state, once it has one (a minute or two after `submitted`)."""
        return self.cluster.wait_state(self.job, TERMINAL, timeout=150)


def ended_attempts(c: SlurmCluster) -> set[tuple[str, int]]:
    """Every ended (job ref, attempt) in the accounting database: what watch must attribute once each."""
    out = c.run("sacct", "-P", "-n", "-X", "-D", "-a", "-S", "now-6hours", "-E", "now",
                "-o", "JobID,State").stdout
    seen: dict[str, int] = {}
    ended: set[tuple[str, int]] = set()
    for line in out.splitlines():
        job, _, state = line.partition("|")
        if not job or "[" in job:  # a pending array's summary row
            continue
        job = job.split("+", 1)[0]
        attempt = seen.get(job, 0)
        seen[job] = attempt + 1
        if state and state.split()[0] in TERMINAL:
            ended.add((job, attempt))
    return ended


# ------------------------------------------------------------------------ store


@dataclass(frozen=True)
class StoreRows:
    verdicts: list[tuple[str, int]]  # (workload id, attempt), one entry per row
    marks: list[tuple[str, int, int | None]]  # (ref, attempt, verdict id), one entry per row
    verdict_ids: dict[int, tuple[str, int]]
    cursors: dict[str, str]


def store_rows(url: str) -> StoreRows:
    """Raw rows (not through VerdictStore, so a bug there cannot hide a duplicate)."""
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as conn:
            tables = set(conn.dialect.get_table_names(conn))
            if "verdicts" not in tables:
                return StoreRows([], [], {}, {})
            vrows = conn.execute(text("SELECT id, workload_id, attempt FROM verdicts")).all()
            mrows = conn.execute(text("SELECT ref, attempt, verdict_id FROM processed")).all()
            crows = conn.execute(text("SELECT name, value FROM cursors")).all()
    finally:
        engine.dispose()
    return StoreRows(
        verdicts=[(r.workload_id, int(r.attempt)) for r in vrows],
        marks=[(r.ref, int(r.attempt), r.verdict_id) for r in mrows],
        verdict_ids={int(r.id): (r.workload_id, int(r.attempt)) for r in vrows},
        cursors={r.name: r.value for r in crows},
    )
