"""identify -> collect -> analyze (remote or embedded) -> enrich -> sinks.

One connector failing never stops the others: its failure lands in the
verdict's `errors` and `coverage`. One sink failing never stops the others
either: its failure is reported in the run's result (and the CLI's exit
code), and the verdict still reaches the sinks that work.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import Context
from firstfault.collect.base import LogConnector, MetricConnector
from firstfault.collect.evidence import EvidenceSink
from firstfault.collect.scan import prefilter_words
from firstfault.collect.wire import AnalyzeRequest, RequestBuilder
from firstfault.extract.metric_conditions import metric_names
from firstfault.identify.base import AttemptSource, Identified
from firstfault.model import CoverageItem, Enrichment, ErrorItem, Verdict
from firstfault.responses import Prefilter
from firstfault.sinks.base import Sink

if TYPE_CHECKING:
    from firstfault.store.actions import ActionRecord

# The kinds an attribution leans on: if no connector covered one, say so.
EXPECTED_KINDS = ("scheduler", "kernel", "application")


@dataclass(slots=True)
class SinkOutcome:
    sink: str
    ok: bool
    message: str = ""


@dataclass(slots=True)
class RunResult:
    verdict: Verdict
    identified: Identified
    sinks: list[SinkOutcome] = field(default_factory=list)
    actions: list[ActionRecord] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.sinks)


class Action(Protocol):
    """A recovery action (firstfault.actions.actor.Actor): decides on a stored verdict, records why."""

    @property
    def name(self) -> str: ...

    def act(self, verdict: Verdict, verdict_id: int | None) -> list[ActionRecord]: ...


class RemoteService(Protocol):
    """What the pipeline needs of a Service client (firstfault.client.FirstfaultClient)."""

    def prefilter_info(self) -> Prefilter: ...

    def analyze(self, request: AnalyzeRequest) -> Verdict: ...


Progress = Callable[[str], None]


class Pipeline:
    def __init__(
        self,
        *,
        context: AttemptSource,
        logs: Sequence[LogConnector] = (),
        metrics: Sequence[MetricConnector] = (),
        sinks: Sequence[Sink] = (),
        cluster: str | None = None,
        analyzer: Analyzer | None = None,
        client: RemoteService | None = None,  # analyze on a Service instead of embedded
        progress: Progress | None = None,
        actions: Sequence[Action] = (),  # recovery actions after the sinks (firstfault.actions)
    ) -> None:
        self.context = context
        self.logs = list(logs)
        self.metrics = list(metrics)
        self.sinks = list(sinks)
        self.cluster = cluster
        self.analyzer = analyzer if analyzer is not None or client is not None else Analyzer()
        self.client = client
        self.progress = progress or (lambda _msg: None)
        # The evidence the last verdict was judged on (for the store's catalog replay).
        self._captured: tuple[Verdict, Any] | None = None
        self.actions = list(actions)

    def identify(self, ref: str) -> Identified:
        self.progress(f"identify {ref} ({self.context.name})")
        return self.context.identify(ref)

    def analyze(self, identified: Identified, now: datetime | None = None) -> Verdict:
        ctx = Context.from_spec(identified.workload)
        sink: EvidenceSink
        # What to keep: the analysing catalog's prefilter (the Service's when analysing remotely), so a
        # Blueprint and a Service of different versions collect the same evidence.
        if self.client is not None:
            published = self.client.prefilter_info()
            words: Sequence[str] = published.words
            metrics: Sequence[str] = published.metrics if published.metrics is not None else metric_names()
            builder = RequestBuilder(identified.workload)
            sink = builder
            if published.metrics is None and self.metrics:
                sink.errors.append(ErrorItem(source="metrics", message=(
                    "the Service publishes no metric names (it is older than this Blueprint): "
                    "the metrics were chosen by the Blueprint's own catalog")))
        else:
            assert self.analyzer is not None
            words = prefilter_words()
            metrics = metric_names()
            from firstfault.replay import Recorder

            analysis = self.analyzer.start(ctx)
            recorder = Recorder(analysis, identified.workload)
            sink = recorder
        for fmt, name, data in identified.documents:
            sink.add_document("scheduler", fmt, name, data)
        if identified.documents:
            sink.coverage.append(CoverageItem(
                source="scheduler", status="complete", nodes_seen=len(identified.workload.nodes),
                nodes_expected=len(identified.workload.nodes), lines=sum(d.count(b"\n") for _, _, d in
                                                                        identified.documents),
                files=len(identified.documents), note=f"from {self.context.name}"))
        for conn in self.logs:
            self._run(conn.name, lambda c=conn: c.collect(ctx, words, sink), sink)  # type: ignore[misc]
        for mconn in self.metrics:
            self._run(mconn.name, lambda c=mconn: c.collect(ctx, metrics, sink), sink)  # type: ignore[misc]
        _add_missing(sink.coverage, identified.workload.nodes)
        if self.client is not None:
            from firstfault.replay import Captured

            self.progress("analyze (service)")
            request = builder.request()
            verdict = self.client.analyze(request)
            self._captured = (verdict, Captured(request))
            return verdict
        self.progress("analyze (embedded)")
        verdict = analysis.finish(now=now)
        self._captured = (verdict, recorder.captured())
        return verdict

    def evidence(self, verdict: Verdict) -> Any:
        """What `verdict` was judged on (a firstfault.replay.Captured), when this pipeline made it."""
        if self._captured is not None and self._captured[0] is verdict:
            return self._captured[1]
        return None

    def _run(self, name: str, fn: Callable[[], None], sink: EvidenceSink) -> None:
        self.progress(f"collect {name}")
        try:
            fn()
        except Exception as exc:  # a connector bug must not cost the other evidence
            sink.errors.append(ErrorItem(source=name, message=f"connector {name} failed: {type(exc).__name__}: {exc}"))

    def enrich(self, identified: Identified) -> Enrichment:
        wl = identified.workload
        previous = [f"{wl.id}#{k}" for k in range(wl.attempt)]
        return Enrichment(cluster=self.cluster, links=dict(identified.links), owner=identified.owner,
                          previous_attempts=previous)

    def close(self) -> None:
        """Releases the Service client's connections (a no-op when embedded)."""
        close = getattr(self.client, "close", None)
        if close is not None:
            close()

    def write(self, verdict: Verdict, enrichment: Enrichment) -> list[SinkOutcome]:
        out = []
        for s in self.sinks:
            try:
                evidence = self.evidence(verdict) if getattr(s, "takes_evidence", False) else None
                if evidence is not None:
                    s.write(verdict, enrichment, evidence=evidence)  # type: ignore[call-arg]
                else:
                    s.write(verdict, enrichment)
                out.append(SinkOutcome(s.name, True))
            except Exception as exc:  # one output failing never stops the others
                out.append(SinkOutcome(s.name, False, f"{type(exc).__name__}: {exc}"))
        return out

    def stored_id(self) -> int | None:
        """The verdict store's id of the verdict just written (None: no database sink, or it failed)."""
        for s in self.sinks:
            if s.name == "database":
                vid = getattr(s, "last_id", None)
                return vid if isinstance(vid, int) else None
        return None

    def act(self, verdict: Verdict, verdict_id: int | None) -> list[ActionRecord]:
        """Every configured action's decisions on a stored verdict; one failing never stops the others."""
        out: list[ActionRecord] = []
        for a in self.actions:
            try:
                out += a.act(verdict, verdict_id)
            except Exception as exc:  # a ledger or backend bug: said, and the next action still runs
                from firstfault.store.actions import ActionRecord as Rec

                out.append(Rec(verdict_id=verdict_id, kind=a.name, cluster=self.cluster or "", target="",
                               outcome="error", dry_run=False, category=None,
                               detail=f"{type(exc).__name__}: {exc}", created_at=datetime.now(UTC)))
        return out

    def run(self, ref: str, now: datetime | None = None) -> RunResult:
        identified = self.identify(ref)
        verdict = self.analyze(identified, now=now)
        result = RunResult(verdict, identified)
        result.sinks = self.write(verdict, self.enrich(identified))
        result.actions = self.act(verdict, self.stored_id())
        return result


def _add_missing(coverage: list[CoverageItem], nodes: Sequence[str]) -> None:
    have = {c.source for c in coverage}
    for kind in EXPECTED_KINDS:
        if kind not in have:
            coverage.append(CoverageItem(source=kind, status="missing", nodes_seen=0, nodes_expected=len(nodes),
                                         lines=0, files=0, missing_nodes=list(nodes),
                                         note=f"no {kind} evidence was collected"))
