"""Bounded work: a fixed pool of analysis threads, a bounded wait list, a time limit.

An analysis is CPU work, so it runs on one of `max_concurrent` threads; at
most `max_queue` more requests wait for a thread, and any request beyond
that is refused at once (503 with Retry-After) instead of growing a queue
without bound. Scaling past one core is done with uvicorn worker processes
(each with its own pool) or more replicas.

The body is received whole (service.body.receive_body, its own time
limit) before a request reaches the pool, so a slow client never holds a
slot; the time limit here covers inflating, parsing and analysing. A
thread cannot be killed, so the limit is
enforced twice: the analysis checks a deadline between pieces of evidence
and stops itself, and the request stops waiting at the deadline (504); if
the analysis is inside one long step, it finishes that step in the
background, its result is discarded, and its slot stays taken until then,
so the pool never runs more than `max_concurrent` analyses.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final, TypeVar

T = TypeVar("T")
CONNECTION_LIMITS: Final = "firstfault.connection_limits"  # their key in the app's lifespan state


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """The limits a connection meets before the app (service.protocol reads them from the lifespan state)."""

    header_timeout: float = 10.0
    max_connections: int = 256
    retry_after: int = 5
    refused: Callable[[int, str], None] | None = None  # (status, error): the app counts and logs a refusal


class Overloaded(Exception):
    """Every thread is busy and the wait list is full."""


class AnalysisTimeout(Exception):
    """The analysis ran past its time limit."""


class Deadline:
    """A point in (monotonic) time after which an analysis stops itself."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._at = clock() + seconds
        self.cancelled = threading.Event()  # set when the request has given up

    def remaining(self) -> float:
        return self._at - self._clock()

    def check(self) -> None:
        if self.cancelled.is_set() or self._clock() > self._at:
            raise AnalysisTimeout(f"analysis ran past its {self.seconds:g} s limit")


class AnalysisPool:
    def __init__(self, max_concurrent: int, max_queue: int, timeout: float,
                 on_change: Callable[[int, int], None] | None = None) -> None:
        self.max_concurrent = max_concurrent
        self.max_queue = max_queue
        self.timeout = timeout
        self._executor = ThreadPoolExecutor(max_workers=max_concurrent, thread_name_prefix="firstfault-analysis")
        self._lock = threading.Lock()
        self._admitted = 0  # running + waiting; decremented when the thread really ends
        self._running = 0
        self._on_change = on_change  # (running, admitted), called under the lock after each change

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self._running, self._admitted)

    @property
    def admitted(self) -> int:
        return self._admitted

    @property
    def running(self) -> int:
        return self._running

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def run(self, fn: Callable[[Deadline], T]) -> T:
        """Runs fn(deadline) on a pool thread. Raises Overloaded or AnalysisTimeout."""
        with self._lock:
            if self._admitted >= self.max_concurrent + self.max_queue:
                raise Overloaded()
            self._admitted += 1
            self._changed()
        loop = asyncio.get_running_loop()
        started: asyncio.Future[Deadline] = loop.create_future()

        def job() -> T:
            deadline = Deadline(self.timeout)
            with self._lock:
                self._running += 1
                self._changed()
            loop.call_soon_threadsafe(_set_result, started, deadline)
            try:
                return fn(deadline)
            finally:
                with self._lock:
                    self._running -= 1
                    self._changed()

        def release(_: Future[T]) -> None:
            with self._lock:
                self._admitted -= 1
                self._changed()

        try:
            cfut = self._executor.submit(job)
        except BaseException:
            with self._lock:
                self._admitted -= 1
                self._changed()
            raise
        cfut.add_done_callback(release)
        done = asyncio.wrap_future(cfut)
        try:
            deadline = await asyncio.shield(started)
        except asyncio.CancelledError:  # the client went away while waiting: do not start it
            cfut.cancel()
            raise
        try:
            return await asyncio.wait_for(asyncio.shield(done), timeout=self.timeout + 0.5)
        except TimeoutError as exc:
            deadline.cancelled.set()
            raise AnalysisTimeout(f"analysis ran past its {self.timeout:g} s limit") from exc
        except asyncio.CancelledError:
            deadline.cancelled.set()
            raise


def _set_result(fut: asyncio.Future[Deadline], value: Deadline) -> None:
    if not fut.done():
        fut.set_result(value)
