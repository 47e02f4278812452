"""Starts the real Service (uvicorn in a subprocess) on 127.0.0.1 and a free port, and stops it by PID."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import httpx

FULL_TOKEN = "blueprint-a-0123456789abcdef"  # scopes analyze + catalog
VIEW_TOKEN = "viewer-0123456789abcdef01"  # scope catalog only
_PORT = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")


UVICORN = [sys.executable, "-m", "uvicorn", "--factory", "firstfault.service.app:create_app_from_env",
           "--host", "127.0.0.1", "--port", "0", "--no-access-log", "--log-level", "info"]


class ServiceProcess:
    """The Service as a subprocess (uvicorn by default, or `argv` such as `firstfault serve --port 0`)."""

    def __init__(self, name: str, env: Mapping[str, str], workdir: Path, argv: Sequence[str] = UVICORN) -> None:
        self.name = name
        self.log_path = workdir / f"{name}.log"
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTFAULT_")}
        full_env.update(env)
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(list(argv), env=full_env, stdout=self._log, stderr=subprocess.STDOUT,
                                     cwd=workdir)
        self.url = self._wait_port()

    def _wait_port(self, timeout: float = 30.0) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited {self.proc.returncode}: {self.log_path.read_text()}")
            m = _PORT.search(self.log_path.read_text(errors="replace"))
            if m:
                url = f"http://127.0.0.1:{m.group(1)}"
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(url + "/readyz", timeout=5).status_code == 200:
                        return url
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{self.name} did not start: {self.log_path.read_text()}")

    def seconds_until_idle(self, limit: float) -> float:
        """How long until no analysis runs (`firstfault_analyses_running 0.0` in /metrics), polled; an
        AssertionError past `limit` seconds. A slot given back at a deadline is back within a second or two on a
        quiet machine and later on a loaded one; a slot held until the work ends is held for tens of seconds."""
        start = time.monotonic()
        while "firstfault_analyses_running 0.0" not in httpx.get(self.url + "/metrics", timeout=10).text:
            waited = time.monotonic() - start
            assert waited < limit, f"an analysis still held its slot {waited:.1f} s after the deadline"
            time.sleep(0.1)
        return time.monotonic() - start

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def log_text_with(self, needle: str, timeout: float = 10.0) -> str:
        """The log once a line holding `needle` is in it (the access line is written after the
        response is sent, so a test that reads at once can be ahead of it); the log as it is at the end otherwise."""
        end = time.monotonic() + timeout
        while True:
            text = self.log_text()
            if needle in text or time.monotonic() > end:
                return text
            time.sleep(0.02)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self._log.close()
