"""Contracts between the Blueprint's pipeline and its connectors and sinks.

identify: a ContextConnector turns a job id / workload name / window into
          the attempt's execution context (a WorkloadSpec, the same model as
          a bundle's workload.yaml) and may add scheduler documents.
collect:  LogConnectors and MetricConnectors read evidence for that context
          into an EvidenceSink (firstfault.analyze.EvidenceSink): candidate
          lines that contain a prefilter word (already placed in time), whole
          documents (scheduler records, metric answers), node activity, and
          their own coverage and errors. A connector never raises for a
          failed remote call: it records an ErrorItem and a coverage entry
          with status "error" and returns, so the others go on.
sink:     a Sink writes a finished verdict somewhere (stdout, SQLite,
          PostgreSQL, a webhook).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from firstfault.analyze import EvidenceSink
from firstfault.bundle import Context, WorkloadSpec
from firstfault.model import Verdict


class ContextError(Exception):
    """The attempt cannot be identified (unknown job, scheduler unreachable)."""


@dataclass(slots=True)
class Identified:
    workload: WorkloadSpec
    # Scheduler documents read while identifying (sacct text, Workload YAML ...),
    # as (format, name, content) for EvidenceSink.add_document("scheduler", ...).
    documents: list[tuple[str, str, bytes]] = field(default_factory=list)
    # Links and facts the Service does not need but people do (enrichment).
    links: dict[str, str] = field(default_factory=dict)
    owner: str | None = None


class ContextConnector(Protocol):
    name: str

    def identify(self, ref: str) -> Identified: ...


class LogConnector(Protocol):
    name: str

    def collect(self, ctx: Context, words: Sequence[str], sink: EvidenceSink) -> None: ...


class MetricConnector(Protocol):
    name: str

    def collect(self, ctx: Context, sink: EvidenceSink) -> None: ...


@dataclass(slots=True)
class Enrichment:
    """What the Blueprint adds to a verdict before writing it."""

    cluster: str | None = None
    links: dict[str, str] = field(default_factory=dict)
    owner: str | None = None
    previous_attempts: list[str] = field(default_factory=list)


class Sink(Protocol):
    name: str

    def write(self, verdict: Verdict, enrichment: Enrichment) -> None: ...
