"""Local files: the bundle's own source templates, read by the bundle's own scanner.

A FilesConnector is a bundle without workload.yaml: the context comes from
the identify step, the sources (kind, path template with `{node}`/`{rank}`
and globs, `rank_prefix`, `format`) from the Blueprint's configuration, and
`root` anchors the templates. Resolution and reading are exactly
`firstfault.bundle.resolve_source` and `firstfault.analysis.analyze.collect_bundle`,
so a directory read here and the same directory analysed as a bundle give
the same candidates, documents, coverage and verdict. The only difference:
coverage is reported only for the kinds these sources declare, because other
connectors may cover the rest.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import IO

from firstfault.bundle import Bundle, Context, SourceSpec, WorkloadFile, resolve_source
from firstfault.collect.evidence import EvidenceSink, collect_bundle
from firstfault.collect.scan import LineScanner, all_line_extractors
from firstfault.extract.base import Candidate
from firstfault.model import CoverageItem, ErrorItem


class _Scanners:
    """What collect_bundle asks an Analyzer for: a LineScanner per source kind.

    With the Service's published words the scanner keeps the lines holding any
    of them (a superset of the shipped per-kind literals, so extraction sees at
    least what a bundle analysis sees); with no words it is the shipped scanner.
    Shared by threads (a LineScanner is: each thread scans with its own scratch).
    """

    def __init__(self, words: Sequence[str]) -> None:
        self.words = sorted({w for w in words if w})
        self._scanners: dict[str, LineScanner] = {}
        self._lock = threading.Lock()

    def scanner(self, kind: str) -> LineScanner:
        with self._lock:
            if kind not in self._scanners:
                sc = LineScanner(kind, all_line_extractors(), words=self.words or None)
                self._scanners[kind] = sc
            return self._scanners[kind]


# The scanners of the last few word lists: a daemon collects attempt after attempt with the same
# published prefilter, and building a scanner (hashing the words, loading the compiled Hyperscan
# database) costs more than scanning a small job's logs.
_RECENT: dict[tuple[str, ...], _Scanners] = {}
_RECENT_MAX = 4
_RECENT_LOCK = threading.Lock()


def scanners_for(words: Sequence[str]) -> _Scanners:
    key = tuple(sorted({w for w in words if w}))
    with _RECENT_LOCK:
        found = _RECENT.pop(key, None)
        if found is None:
            found = _Scanners(key)
        _RECENT[key] = found  # the newest last
        while len(_RECENT) > _RECENT_MAX:
            del _RECENT[next(iter(_RECENT))]
        return found


class _KindFilter:
    """Passes everything to the real sink but keeps the coverage to filter it."""

    def __init__(self, sink: EvidenceSink) -> None:
        self.sink = sink
        self.coverage: list[CoverageItem] = []
        self.errors: list[ErrorItem] = sink.errors

    def add_candidate(self, c: Candidate) -> None:
        self.sink.add_candidate(c)

    def add_document(self, source: str, fmt: str | None, file: str,
                     data: bytes | IO[bytes], *, node: str | None = None,
                     rank: int | None = None) -> tuple[int, list[tuple[int | None, str]]]:
        return self.sink.add_document(source, fmt, file, data, node=node, rank=rank)

    def saw_node(self, node: str, last: datetime) -> None:
        self.sink.saw_node(node, last)


class FilesConnector:
    """Reads local evidence files named by bundle-style source templates."""

    name = "files"

    def __init__(self, sources: Sequence[SourceSpec], root: Path) -> None:
        self.sources = list(sources)
        self.root = Path(root)

    def collect(self, ctx: Context, words: Sequence[str], sink: EvidenceSink) -> None:
        nodes = list(ctx.workload.nodes)
        resolved = [resolve_source(self.root, i, s, nodes, ctx.rank_to_node) for i, s in enumerate(self.sources)]
        if not self.root.is_dir():
            for s in self.sources:
                sink.errors.append(ErrorItem(source=s.kind, file=str(self.root),
                                             message="evidence root is not a directory"))
        bundle = Bundle(self.root, WorkloadFile(apiVersion="firstfault/v1", workload=ctx.workload,
                                                sources=self.sources), ctx, resolved)
        proxy = _KindFilter(sink)
        # collect_bundle only calls analyzer.scanner(kind); see the report's note on typing this as a protocol.
        collect_bundle(scanners_for(words), bundle, proxy)
        kinds = {s.kind for s in self.sources}
        sink.coverage.extend(c for c in proxy.coverage if c.source in kinds)

    def collect_metrics(self, ctx: Context, sink: EvidenceSink) -> None:
        """The metric sources alone (the MetricConnector face of the same configuration)."""
        FilesConnector([s for s in self.sources if s.kind == "metrics"], self.root).collect(ctx, (), sink)
