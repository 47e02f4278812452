"""Start-up and stop of the real servers the tests run (Prometheus, Alertmanager): one way for all."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx


def wait_ready(proc: subprocess.Popen[bytes], ready_url: str, log: Path, name: str, timeout: float) -> None:
    """Poll `ready_url` until it answers 200; a server that exits or stays unready raises with its log's tail."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode}: {log.read_text()[-2000:]}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(ready_url, timeout=1.0).status_code == 200:
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name} not ready after {timeout} s: {log.read_text()[-2000:]}")
        time.sleep(0.1)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM by PID, SIGKILL after 10 s."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(5)
