"""A real Prometheus for tests, with history backfilled before it starts.

Per the measured facts for these machines: blocks are written with
`promtool tsdb create-blocks-from openmetrics` into the data directory
BEFORE the server starts (blocks added to a running server appear only after
up to a minute), retention is 100y (or the old blocks are deleted at once),
the server listens on 127.0.0.1 on a free port and is stopped by its PID.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.daemons import stop, wait_ready

CONFIG = "global:\n  scrape_interval: 1m\n  evaluation_interval: 1m\n"  # no scrape targets: history only


def missing_binaries() -> list[str]:
    return [b for b in ("prometheus", "promtool") if shutil.which(b) is None]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Prometheus:
    url: str
    pid: int
    data: Path
    log: Path


def backfill(openmetrics: Sequence[Path], data: Path) -> None:
    data.mkdir(parents=True, exist_ok=True)
    for f in openmetrics:
        res = subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", str(f), str(data)],
                             capture_output=True, text=True, timeout=120, check=False)
        if res.returncode != 0:
            raise RuntimeError(f"promtool backfill of {f} failed: {res.stderr or res.stdout}")


@contextlib.contextmanager
def prometheus(workdir: Path, openmetrics: Sequence[Path], ready_timeout: float = 20.0) -> Iterator[Prometheus]:
    """Backfill `openmetrics` files, start Prometheus on them, yield it, stop it by PID."""
    data = workdir / "data"
    backfill(openmetrics, data)
    cfg = workdir / "prometheus.yml"
    cfg.write_text(CONFIG)
    port = free_port()
    log = workdir / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            ["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={data}",
             f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=100y"],
            stdout=out, stderr=subprocess.STDOUT, cwd=workdir, start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(proc, f"{url}/-/ready", log, "prometheus", ready_timeout)
        yield Prometheus(url=url, pid=proc.pid, data=data, log=log)
    finally:
        stop(proc)
