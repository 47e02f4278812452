"""Write verdicts to a terminal or a stream: the text view, Markdown, or the verdict JSON."""

from __future__ import annotations

import sys
from typing import Literal, TextIO

from firstfault import records
from firstfault.model import Enrichment, Verdict
from firstfault.render import FORMATS, write

Format = Literal["text", "markdown", "json"]


class StdoutSink:
    """`text` / `markdown`: the same views as `firstfault analyze`, plus the enrichment (cluster,
    owner, links); text is laid out for `width` (default: the terminal's, 80 when not one) and is
    the short form unless `verbose`.

    `json`: the verdict document exactly as `firstfault analyze --format json`
    prints it (so tools read both the same way); with `with_enrichment` the
    enrichment is added under an "enrichment" key, as in webhook bodies.
    """

    name = "stdout"

    def __init__(self, format: Format | str = "text", stream: TextIO | None = None, *,
                 with_enrichment: bool = False, width: int | None = None, verbose: bool = False) -> None:
        if format not in FORMATS:
            raise ValueError(f"stdout format must be one of {', '.join(FORMATS)}, not {format!r}")
        self.format = format
        self._stream = stream
        self.with_enrichment = with_enrichment
        self.width = width
        self.verbose = verbose

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
                out.write(records.dumps(verdict, indent=2) + "\n")
            out.flush()
            return
        write(verdict, self.format, out, width=self.width, verbose=self.verbose, enrichment=enrichment)
