"""`firstfault serve --workers N`: what the supervisor and each worker process do beyond uvicorn.

uvicorn runs the worker processes (spawned, each its own interpreter, all
accepting on the one listening socket; a worker that dies is replaced, one
that fails at start-up stops the whole server). This module adds:

- **One `/metrics` view.** `serve` creates a private directory
  (`firstfault-metrics-*` under the temporary directory) and hands it to the
  workers as `PROMETHEUS_MULTIPROC_DIR`: prometheus_client then keeps every
  worker's counters, histograms and gauges in files there, and any worker
  answering `GET /metrics` shows their sum. `serve` removes the directory
  when it stops.
- **The same catalog everywhere.** `serve` validates the catalog once and
  passes its sha256 down; a worker that loads any other catalog (the rules
  directory was edited after the start, or before a worker was replaced)
  refuses to start, which stops the server rather than serve two catalogs.
- **No orphans.** A worker whose supervisor has gone (killed with SIGKILL,
  so it could not stop its workers) stops itself within a second, and
  removes the metrics directory on its way out.
- **No stale gauges.** A worker removes its live gauges (running, waiting,
  catalog, workers) when it stops, and at start-up those of any worker that
  died without doing so (its counters stay: totals never go down).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
CATALOG_ENV = "FIRSTFAULT_SERVE_CATALOG_SHA256"  # the catalog serve validated
PARENT_ENV = "FIRSTFAULT_SERVE_PARENT"  # the supervisor's pid (set with --workers > 1)
DIR_PREFIX = "firstfault-metrics-"
STARTUP_FAILURE = 3  # uvicorn's exit status for "failed to start": its supervisor then stops, no restart loop
_LIVE_FILE = re.compile(r"^gauge_live[a-z]+_(\d+)\.db$")

log = logging.getLogger("firstfault.service")


def multiprocess_dir() -> str | None:
    """The metrics directory of this process (None: single process, own registry)."""
    return os.environ.get(MULTIPROC_ENV) or None


@contextlib.contextmanager
def supervisor_env(catalog_sha256: str, workers: int) -> Iterator[str | None]:
    """Around uvicorn.run in `serve`: the environment the workers inherit, and the cleanup.

    Yields the metrics directory (None with one worker: it keeps its own registry, as before).
    SIGTERM is turned into SystemExit until uvicorn installs its own handlers, so a stop that
    comes during start-up still removes the directory.
    """
    os.environ[CATALOG_ENV] = catalog_sha256
    if workers <= 1:
        yield None
        return

    def _exit(signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, _exit)
    path = tempfile.mkdtemp(prefix=DIR_PREFIX)
    os.environ[MULTIPROC_ENV] = path
    os.environ[PARENT_ENV] = str(os.getpid())
    try:
        yield path
    finally:
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(path, ignore_errors=True)
        for key in (MULTIPROC_ENV, PARENT_ENV):
            os.environ.pop(key, None)


def check_catalog(sha256: str) -> None:
    """In a worker: stop the start-up (uvicorn's STARTUP_FAILURE) if this is not the catalog serve validated."""
    want = os.environ.get(CATALOG_ENV)
    if want and want != sha256:
        log.error("catalog changed since serve started; restart serve to load it",
                  extra={"fields": {"loaded_sha256": sha256, "validated_sha256": want}})
        sys.exit(STARTUP_FAILURE)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def forget_dead_workers(path: str | Path) -> list[int]:
    """Removes the live-gauge files of processes that no longer exist; returns their pids."""
    from prometheus_client.multiprocess import mark_process_dead

    dead = sorted({int(m.group(1)) for f in os.listdir(path) if (m := _LIVE_FILE.match(f))}
                  - {os.getpid()})
    dead = [pid for pid in dead if not _alive(pid)]
    for pid in dead:
        mark_process_dead(pid, str(path))  # type: ignore[no-untyped-call]
    return dead


class WorkerLife:
    """Start-up and shutdown of one worker process (a no-op outside `serve --workers N`)."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._watch: threading.Thread | None = None
        self._orphaned = False

    def start(self) -> None:
        path = multiprocess_dir()
        if path is not None and os.path.isdir(path):
            forget_dead_workers(path)
        parent = os.environ.get(PARENT_ENV)
        if parent and parent.isdigit():
            self._watch = threading.Thread(target=self._watch_parent, args=(int(parent),),
                                           name="firstfault-parent-watch", daemon=True)
            self._watch.start()

    def _watch_parent(self, parent: int) -> None:
        while not self._stop.wait(0.5):
            if os.getppid() != parent:  # re-parented: the supervisor is gone
                log.warning("serve supervisor gone; worker stopping", extra={"fields": {"supervisor": parent}})
                self._orphaned = True
                os.kill(os.getpid(), signal.SIGTERM)  # uvicorn's graceful shutdown
                return

    def stop(self) -> None:
        self._stop.set()
        path = multiprocess_dir()
        if path is not None and os.path.isdir(path):
            from prometheus_client.multiprocess import mark_process_dead

            mark_process_dead(os.getpid(), path)  # type: ignore[no-untyped-call]
            if self._orphaned:  # nobody else will: the supervisor that made it is gone
                shutil.rmtree(path, ignore_errors=True)
