"""The collect step's contract: connectors that read an attempt's evidence into an EvidenceSink.

LogConnectors and MetricConnectors read evidence for an execution context
into an EvidenceSink (collect/evidence.py): candidate lines that contain a
prefilter word (already placed in time), whole documents (scheduler records,
metric answers), node activity, and their own coverage and errors. A
connector never raises for a failed remote call: it records an ErrorItem and
a coverage entry with status "error" and returns, so the others go on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from firstfault.bundle import Context
from firstfault.collect.evidence import EvidenceSink


class LogConnector(Protocol):
    name: str

    def collect(self, ctx: Context, words: Sequence[str], sink: EvidenceSink) -> None: ...


class MetricConnector(Protocol):
    """`metrics` are the metric names the analysing catalog reads (the Service's published prefilter,
    or the embedded catalog's): a connector fetches those and no others."""

    name: str

    def collect(self, ctx: Context, metrics: Sequence[str], sink: EvidenceSink) -> None: ...


__all__ = ["LogConnector", "MetricConnector"]
