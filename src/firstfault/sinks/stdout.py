"""Write verdicts to a terminal or a stream: the rich view, or the verdict JSON."""

from __future__ import annotations

import sys
from typing import Literal, TextIO

from rich.console import Console

from firstfault.blueprint.base import Enrichment
from firstfault.model import Verdict
from firstfault.render import render_verdict

Format = Literal["text", "json"]


class StdoutSink:
    """`text`: the same view as `firstfault analyze`, plus the enrichment (cluster, owner, links).

    `json`: the verdict document exactly as `firstfault analyze --format json`
    prints it (so tools read both the same way); with `with_enrichment` the
    enrichment is added under an "enrichment" key, as in webhook bodies.
    """

    name = "stdout"

    def __init__(self, format: Format | str = "text", stream: TextIO | None = None, *,
                 with_enrichment: bool = False) -> None:
        if format not in ("text", "json"):
            raise ValueError(f"stdout format must be text or json, not {format!r}")
        self.format = format
        self._stream = stream
        self.with_enrichment = with_enrichment

    @property
    def stream(self) -> TextIO:
        # Looked up at write time so a redirected sys.stdout (tests, daemons) is honoured.
        return self._stream if self._stream is not None else sys.stdout

    def write(self, verdict: Verdict, enrichment: Enrichment) -> None:
        out = self.stream
        if self.format == "json":
            if self.with_enrichment:
                from firstfault.sinks.webhook import document

                out.write(document(verdict, enrichment).decode("utf-8") + "\n")
            else:
                out.write(verdict.model_dump_json(indent=2) + "\n")
            out.flush()
            return
        console = Console(file=out, highlight=False)
        render_verdict(verdict, console)
        facts = [f"{k} {v}" for k, v in (("cluster", enrichment.cluster), ("owner", enrichment.owner)) if v]
        facts += [f"{k}: {url}" for k, url in sorted(enrichment.links.items())]
        if enrichment.previous_attempts:
            facts.append("previous attempts: " + ", ".join(enrichment.previous_attempts))
        if facts:
            console.print("\n".join(facts), markup=False)
        out.flush()
