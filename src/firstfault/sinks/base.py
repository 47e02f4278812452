"""The act step's output contract: a Sink writes a finished verdict somewhere.

Every sink has `name` and `write(verdict, enrichment)`. A sink that could
not deliver raises a SinkError subclass whose message says what happened;
the pipeline records it per sink and goes on with the others.
"""

from __future__ import annotations

from typing import Protocol

from firstfault.model import Enrichment, Verdict


class SinkError(Exception):
    """A sink could not deliver a verdict (the message says why and what was kept)."""


class Sink(Protocol):
    name: str

    def write(self, verdict: Verdict, enrichment: Enrichment) -> None: ...


__all__ = ["Sink", "SinkError"]
