"""The watch daemon: attribute every workload attempt that ended, exactly once.

Each pass asks the scheduler which attempts ended since the stored cursor.
For each one not yet marked processed it runs the pipeline; the verdict and
the processed mark are written to the database in ONE transaction, which is
the commit point. Only after every attempt of a pass is settled does the
cursor move. A crash or kill -9 anywhere before the commit leaves no mark, so
the attempt is redone on restart; after it, the mark makes the restart skip
it. Other outputs (stdout, webhooks) run before the commit: they may repeat
after a crash at that exact point (at-least-once), never miss.

Concurrency: the attempts of one pass are settled by up to `concurrency`
threads (the work is I/O: the scheduler's clients, HTTP to the Service, the
database). One job id is one task, so the attempts of a requeued job go in
order on one thread; each attempt still commits its verdict and mark in one
transaction of its own; the cursor still waits for every task of the pass.
A stop (SIGTERM) lets the attempts in flight commit and starts no other.
"""

from __future__ import annotations

import inspect
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from firstfault.blueprint.pipeline import Pipeline, SinkOutcome
from firstfault.identify.base import AttemptSource, Identified
from firstfault.sinks.base import Sink

if TYPE_CHECKING:
    from firstfault.model import Enrichment, Verdict
    from firstfault.store.provisional import ProvisionalLedger


class EndedSource(AttemptSource, Protocol):
    def ended_since(self, cursor: str | None) -> tuple[list[str], str]: ...


class StateStore(Protocol):
    def get_cursor(self, name: str) -> str | None: ...

    def set_cursor(self, name: str, value: str) -> None: ...

    def is_processed(self, source: str, ref: str, attempt: int) -> bool: ...

    def write(self, verdict: Any, enrichment: Any = None, *, mark: Any = None, evidence: Any = None) -> int: ...


@dataclass(slots=True)
class PassReport:
    ended: int = 0
    analysed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    sink_failures: list[tuple[str, SinkOutcome]] = field(default_factory=list)
    # Job ids a stop left unstarted (redone by the next pass: the cursor did not move).
    unstarted: list[str] = field(default_factory=list)
    cursor_moved: bool = False
    # Wall seconds of the pass, by step, summed over its attempts (the threads overlap them):
    # list (the scheduler's ended-since query), identify, collect, analyze, sinks, store, actions.
    seconds: dict[str, float] = field(default_factory=dict)


Event = Callable[[str, dict[str, Any]], None]
STEPS = ("identify", "collect", "analyze", "sinks", "store", "actions")


@dataclass(slots=True)
class _Settled:
    """What one task (one job id) of a pass did; merged into the PassReport in the pass's order."""

    ref: str
    settled: bool = True
    started: bool = True
    analysed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    sink_failures: list[tuple[str, SinkOutcome]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


class _Laps:
    """Wall time per step of one attempt; the pipeline's progress messages mark collect -> analyze."""

    def __init__(self, then: Callable[[str], None] | None) -> None:
        self.then = then
        self.seconds: dict[str, float] = {}
        self._step: str | None = None
        self._t = time.perf_counter()

    def to(self, step: str | None) -> None:
        now = time.perf_counter()
        if self._step is not None:
            self.seconds[self._step] = self.seconds.get(self._step, 0.0) + now - self._t
        self._step, self._t = step, now

    def progress(self, msg: str) -> None:
        if msg.startswith("collect"):
            self.to("collect")
        elif msg.startswith("analyze"):
            self.to("analyze")
        if self.then is not None:
            self.then(msg)

    def take(self) -> dict[str, float]:
        self.to(None)
        out, self.seconds = self.seconds, {}
        return out


class SharedService:
    """One Service client for the whole daemon, shared by its threads (one connection pool), with
    the Service's published prefilter read once per pass (`new_pass`) rather than once per attempt.

    Pipelines close their client when done; this one is the daemon's, so `close` leaves it open
    and `shutdown` closes it.
    """

    def __init__(self, client: Any) -> None:
        self.client = client
        self._lock = threading.Lock()
        self._prefilter: Any = None

    def new_pass(self) -> None:
        with self._lock:
            self._prefilter = None

    def prefilter_info(self) -> Any:
        with self._lock:  # the first thread asks, the others wait for its answer
            if self._prefilter is None:
                self._prefilter = self.client.prefilter_info()
            return self._prefilter

    def analyze(self, request: Any) -> Any:
        return self.client.analyze(request)

    def close(self) -> None:
        """Kept open: other attempts share it (see `shutdown`)."""

    def shutdown(self) -> None:
        self.client.close()


class Watcher:
    def __init__(
        self,
        *,
        source: EndedSource,
        store: StateStore,
        make_pipeline: Callable[[str], Pipeline],
        cluster: str,
        log: Callable[[str], None] = print,
        concurrency: int = 1,
        event: Event | None = None,
        begin_pass: Callable[[], None] | None = None,
        provisional: ProvisionalLedger | None = None,
    ) -> None:
        """`concurrency`: threads settling the attempts of a pass (1: in this thread, one at a time).
        `event(message, fields)`, when given, is called instead of `log` with the message's fields
        (ref, attempt, outcome, seconds per step). `begin_pass` runs before each pass. `provisional`: the
        ledger of provisional verdicts (watch --follow) that each final verdict supersedes and settles."""
        if concurrency < 1:
            raise ValueError("watch concurrency must be at least 1")
        self.source = source
        self.store = store
        self.make_pipeline = make_pipeline
        self.cursor_name = f"watch:{source.name}:{cluster}"
        self.cluster = cluster
        self.provisional = provisional
        # The ledger's source names the cluster too: Blueprints of several clusters share one database,
        # and their schedulers hand out the same job ids (job 4242 on two clusters is two attempts).
        self.ledger = f"{source.name}@{cluster}" if cluster else source.name
        self.concurrency = concurrency
        self.begin_pass = begin_pass
        self._stop = threading.Event()
        # One line per call, whole, whichever thread writes it.
        self._log_lock = threading.Lock()
        self._log_fn = log
        self._event_fn = event

    def stop(self) -> None:
        self._stop.set()

    def log(self, msg: str, **fields: Any) -> None:
        with self._log_lock:
            if self._event_fn is not None:
                self._event_fn(msg, fields)
            else:
                self._log_fn(msg)

    def run_pass(self) -> PassReport:
        report = PassReport()
        if self.begin_pass is not None:
            self.begin_pass()
        t = time.perf_counter()
        cursor = self.store.get_cursor(self.cursor_name)
        refs, new_cursor = self.source.ended_since(cursor)
        report.seconds["list"] = time.perf_counter() - t
        refs = list(dict.fromkeys(refs))  # one task per job id: its attempts stay in order
        report.ended = len(refs)
        workers = min(self.concurrency, len(refs))
        if workers <= 1:
            done = [self._settle(ref) for ref in refs]
        else:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ff-watch") as pool:
                done = list(pool.map(self._settle, refs))  # in the pass's order, whatever finished first
        for d in done:
            report.analysed += d.analysed
            report.skipped += d.skipped
            report.failed += d.failed
            report.sink_failures += d.sink_failures
            if not d.started:
                report.unstarted.append(d.ref)
            for k, v in d.seconds.items():
                report.seconds[k] = report.seconds.get(k, 0.0) + v
        # The cursor moves only when every attempt of the pass is settled (committed, or found marked).
        if all(d.settled for d in done):
            self.store.set_cursor(self.cursor_name, new_cursor)
            report.cursor_moved = True
        return report

    def _settle(self, ref: str) -> _Settled:
        """Every ended, unmarked attempt of one job id, in order; never raises (a failure is reported)."""
        from firstfault.store.repo import ProcessedMark

        out = _Settled(ref)
        if self._stop.is_set():
            out.settled = out.started = False
            return out
        try:
            pipe = self.make_pipeline(ref)
            laps = _Laps(pipe.progress)
            pipe.progress = laps.progress
            laps.to("identify")
            attempts = self._ended_attempts(pipe, ref)
            for identified in attempts:
                if self._stop.is_set():  # the rest of this job waits for the next pass
                    out.settled = False
                    break
                attempt = identified.workload.attempt
                if self.store.is_processed(self.ledger, ref, attempt):
                    out.skipped.append(f"{ref}#{attempt}")
                    continue
                laps.to("collect")
                verdict = pipe.analyze(identified)
                evidence = pipe.evidence(verdict)
                enrichment = pipe.enrich(identified)
                settled: list[Any] = []
                also = None
                if self.provisional is not None:  # it supersedes the provisional verdicts sent while it ran
                    from firstfault.blueprint.follow import settle_provisional

                    verdict, settled, also = settle_provisional(self.provisional, verdict, self.cluster)
                laps.to("sinks")
                for outcome in pipe.write(verdict, enrichment):
                    if not outcome.ok:
                        out.sink_failures.append((ref, outcome))
                laps.to("store")
                # The commit point: verdict + processed mark (+ the provisional verdicts settled), one transaction.
                extra = {"also": also} if also is not None else {}
                vid = self.store.write(verdict, enrichment, mark=ProcessedMark(self.ledger, ref, attempt),
                                       evidence=evidence, **extra)
                if settled:  # their alerts resolved, now that the final verdict is stored
                    from firstfault.blueprint.follow import resolve_provisional

                    resolve_provisional(pipe.sinks, settled, enrichment)
                laps.to("actions")
                # Recovery actions after the commit, on the stored verdict (a crash here: the
                # verdict is kept and marked, the action is not taken; nothing is done twice).
                records = pipe.act(verdict, vid)
                seconds = laps.take()
                for rec in records:
                    self.log(f"{ref} attempt {attempt}: action {rec.line()}", ref=ref, attempt=attempt,
                             action=rec.kind, target=rec.target, outcome=rec.outcome)
                for k, v in seconds.items():
                    out.seconds[k] = out.seconds.get(k, 0.0) + v
                out.analysed.append(f"{ref}#{attempt}")
                category = verdict.root_cause.category if verdict.root_cause else None
                self.log(f"{ref} attempt {attempt}: {verdict.attributed_domain} {category or ''}".rstrip(),
                         ref=ref, attempt=attempt, verdict_id=vid, domain=verdict.attributed_domain,
                         category=category, seconds={k: round(seconds.get(k, 0.0), 4) for k in STEPS})
            else:
                for k, v in laps.take().items():  # identify time of attempts found marked
                    out.seconds[k] = out.seconds.get(k, 0.0) + v
        except Exception as exc:  # one bad job must not stall the others
            out.settled = False
            out.failed.append((ref, f"{type(exc).__name__}: {exc}"))
            self.log(f"{ref}: failed: {type(exc).__name__}: {exc}", ref=ref, error=f"{type(exc).__name__}: {exc}")
        return out

    def _ended_attempts(self, pipe: Pipeline, ref: str) -> list[Identified]:
        """The attempts of `ref` that have ended: a requeued job's latest attempt may still be pending."""
        latest = pipe.identify(ref)
        last = latest.workload.attempt
        ended_latest = latest.workload.terminal_state is not None
        out = []
        by_attempt = "attempt" in inspect.signature(self.source.identify).parameters
        for k in range(last if by_attempt else 0):
            if not self.store.is_processed(self.ledger, ref, k):
                out.append(self.source.identify(ref, attempt=k))  # type: ignore[call-arg]
        if ended_latest:
            out.append(latest)
        return out

    def run_forever(self, interval: float, max_passes: int | None = None) -> None:
        """Passes `interval` seconds apart, start to start: a pass longer than that is followed at once."""
        passes = 0
        while not self._stop.is_set():
            began = time.monotonic()
            self.run_pass()
            passes += 1
            if max_passes is not None and passes >= max_passes:
                return
            self._stop.wait(max(0.0, interval - (time.monotonic() - began)))

    def install_signal_handlers(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stop())


def without(sinks: list[Sink], name: str) -> list[Sink]:
    return [s for s in sinks if s.name != name]


__all__ = ["PassReport", "SharedService", "Watcher", "serialized", "without"]


# Outputs whose write() may run on several threads at once: an httpx.Client is thread-safe, and a
# dead-letter line is one O_APPEND write. Any other output (stdout: a verdict is many writes) is
# written by one thread at a time.
THREAD_SAFE_SINKS = frozenset({"webhook", "alertmanager"})


class _Serialized:
    """A sink whose writes take a lock (the watch daemon's threads share the outputs)."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self._lock = threading.Lock()
        self.name = sink.name
        self.takes_evidence = getattr(sink, "takes_evidence", False)

    def write(self, verdict: Verdict, enrichment: Enrichment, **kwargs: Any) -> None:
        with self._lock:
            self.sink.write(verdict, enrichment, **kwargs)


def serialized(sinks: list[Sink]) -> list[Sink]:
    """`sinks`, each one that is not known to be thread-safe behind a lock of its own."""
    return [s if s.name in THREAD_SAFE_SINKS else _Serialized(s) for s in sinks]
