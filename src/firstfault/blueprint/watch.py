"""The watch daemon: attribute every workload attempt that ended, exactly once.

Each pass asks the scheduler which attempts ended since the stored cursor.
For each one not yet marked processed it runs the pipeline; the verdict and
the processed mark are written to the database in ONE transaction, which is
the commit point. Only after every attempt of a pass is settled does the
cursor move. A crash or kill -9 anywhere before the commit leaves no mark, so
the attempt is redone on restart; after it, the mark makes the restart skip
it. Other outputs (stdout, webhooks) run before the commit: they may repeat
after a crash at that exact point (at-least-once), never miss.
"""

from __future__ import annotations

import inspect
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from firstfault.blueprint.pipeline import Pipeline, SinkOutcome
from firstfault.identify.base import ContextConnector, Identified
from firstfault.sinks.base import Sink


class EndedSource(ContextConnector, Protocol):
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


class Watcher:
    def __init__(
        self,
        *,
        source: EndedSource,
        store: StateStore,
        make_pipeline: Callable[[str], Pipeline],
        cluster: str,
        log: Callable[[str], None] = print,
    ) -> None:
        self.source = source
        self.store = store
        self.make_pipeline = make_pipeline
        self.cursor_name = f"watch:{source.name}:{cluster}"
        # The ledger's source names the cluster too: Blueprints of several clusters share one database,
        # and their schedulers hand out the same job ids (job 4242 on two clusters is two attempts).
        self.ledger = f"{source.name}@{cluster}" if cluster else source.name
        self.log = log
        self._stop = threading.Event()

    def stop(self) -> None:
        self._stop.set()

    def run_pass(self) -> PassReport:
        from firstfault.store.repo import ProcessedMark

        report = PassReport()
        cursor = self.store.get_cursor(self.cursor_name)
        refs, new_cursor = self.source.ended_since(cursor)
        report.ended = len(refs)
        all_settled = True
        for ref in refs:
            if self._stop.is_set():
                all_settled = False
                break
            pipe = self.make_pipeline(ref)
            try:
                for identified in self._ended_attempts(pipe, ref):
                    attempt = identified.workload.attempt
                    if self.store.is_processed(self.ledger, ref, attempt):
                        report.skipped.append(f"{ref}#{attempt}")
                        continue
                    verdict = pipe.analyze(identified)
                    enrichment = pipe.enrich(identified)
                    for outcome in pipe.write(verdict, enrichment):
                        if not outcome.ok:
                            report.sink_failures.append((ref, outcome))
                    # The commit point: verdict + processed mark, one transaction.
                    vid = self.store.write(verdict, enrichment, mark=ProcessedMark(self.ledger, ref, attempt),
                                           evidence=pipe.evidence(verdict))
                    # Recovery actions after the commit, on the stored verdict (a crash here: the
                    # verdict is kept and marked, the action is not taken; nothing is done twice).
                    for rec in pipe.act(verdict, vid):
                        self.log(f"{ref} attempt {attempt}: action {rec.line()}")
                    report.analysed.append(f"{ref}#{attempt}")
                    self.log(f"{ref} attempt {attempt}: {verdict.attributed_domain} "
                             f"{verdict.root_cause.category if verdict.root_cause else ''}".rstrip())
            except Exception as exc:  # one bad job must not stall the others
                all_settled = False
                report.failed.append((ref, f"{type(exc).__name__}: {exc}"))
                self.log(f"{ref}: failed: {type(exc).__name__}: {exc}")
        if all_settled:
            self.store.set_cursor(self.cursor_name, new_cursor)
        return report

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
        passes = 0
        while not self._stop.is_set():
            self.run_pass()
            passes += 1
            if max_passes is not None and passes >= max_passes:
                return
            self._stop.wait(interval)

    def install_signal_handlers(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stop())


def without(sinks: list[Sink], name: str) -> list[Sink]:
    return [s for s in sinks if s.name != name]


__all__ = ["PassReport", "Watcher", "without"]
