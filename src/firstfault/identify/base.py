"""The identify step's contract: a reference in, the attempt (its WorkloadSpec and what was read on the way) out.

An AttemptSource turns a job id, a Workload 'namespace/name' or nothing
(a static window) into an Identified: the attempt's WorkloadSpec (the same
model as a bundle's workload.yaml), the scheduler documents read on the way,
links and an owner. An unknown workload or an unreachable scheduler raises
IdentifyError with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from firstfault.bundle import WorkloadSpec


class IdentifyError(Exception):
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


class AttemptSource(Protocol):
    name: str

    def identify(self, ref: str) -> Identified: ...


@dataclass(frozen=True, slots=True)
class Running:
    """An attempt that runs now, as the scheduler lists it (`watch --follow`).

    `since` is when this run of it began, in the scheduler's own words: a requeued job runs again
    under the same ref with another `since`, which tells the follower to identify it again.
    """

    ref: str
    since: str


class RunningSource(AttemptSource, Protocol):
    def running(self) -> list[Running]: ...


__all__ = ["AttemptSource", "Identified", "IdentifyError", "Running", "RunningSource"]
