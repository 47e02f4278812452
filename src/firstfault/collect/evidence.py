"""Where an attempt's evidence goes, and how a bundle's files are read into it.

An EvidenceSink takes candidate lines (already prefiltered and placed in
time), whole documents (scheduler records, metric answers, flight-recorder
dumps) and node activity, with coverage and errors per source. The embedded
engine's Analysis is one; the Blueprint's request to a Service is another.
collect_bundle reads a bundle's files into any sink.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, TYPE_CHECKING, Literal, Protocol

from firstfault.bundle import Bundle, ResolvedSource, SourceFile, open_evidence
from firstfault.collect.scan import FileStats, LineScanner
from firstfault.extract.base import Candidate
from firstfault.extract.documents import MAX_STRUCTURED_BYTES, PER_FILE_DOCUMENTS
from firstfault.extract.memo import scan_gc
from firstfault.model import LINE_SOURCES, CoverageItem, ErrorItem
from firstfault.timeparse import TimeParser

if TYPE_CHECKING:
    from firstfault.collect.fold import LineFold


@dataclass(slots=True)
class _Cov:
    """One source's coverage as the files are read: files, lines, nodes seen and expected, errors."""

    files: int = 0
    lines: int = 0
    nodes_seen: set[str] = field(default_factory=set)
    nodes_expected: set[str] = field(default_factory=set)
    declared: bool = False
    errors: int = 0
    readable: int = 0
    truncated: list[str] = field(default_factory=list)  # files whose read stopped early
    notes: list[str] = field(default_factory=list)


class EvidenceSink(Protocol):
    """Where a bundle's evidence goes: an Analysis, or a request to the Service."""

    coverage: list[CoverageItem]
    errors: list[ErrorItem]

    def add_candidate(self, c: Candidate) -> None: ...

    def add_document(self, source: str, fmt: str | None, file: str,
                     data: bytes | IO[bytes], *, node: str | None = None,
                     rank: int | None = None) -> tuple[int, list[tuple[int | None, str]]]: ...

    def saw_node(self, node: str, last: datetime) -> None: ...


class ScannerSource(Protocol):
    """What collect_bundle needs: a LineScanner per source kind (an Analyzer is one)."""

    def scanner(self, kind: str) -> LineScanner: ...


# Scans one line file (kind, its source, the file, the time parser) into the sink: what the parallel
# reader (analysis/parallel.py) puts in place of the scanner, with the same results in the same order.
LineFileScan = Callable[[str, ResolvedSource, SourceFile, TimeParser], FileStats]


def collect_bundle(analyzer: ScannerSource, bundle: Bundle, sink: EvidenceSink,
                   check: Callable[[], None] | None = None, scan: LineFileScan | None = None) -> None:
    """Reads every source of a bundle into `sink`, with coverage and errors per source.

    `check` (the Service's deadline) is called before each file and each
    chunk of a file, so a large file that yields no candidate line still
    stops a timed-out analysis. `scan`, when given, reads each line file in
    the bundle's order instead of the scanner here.
    """
    ctx = bundle.context
    tp = TimeParser(ctx.tz, ctx.window_start, ctx.window_end)
    cov: dict[str, _Cov] = {}
    allocation = list(bundle.workload.nodes)
    # A sink that keeps the events itself (an Analysis) lets the scanner count a chatty file's copies of a line
    # (collect/fold.py); one that passes the lines on (a request, a recorder) gets every line.
    line_fold = getattr(sink, "line_fold", None)
    fold = line_fold() if line_fold is not None else None
    with scan_gc():  # (the collector's young generation larger while lines are read: extract/memo.py)
        _collect_sources(bundle, sink, cov, allocation, analyzer, tp, fold, check, scan)
    sink.coverage.extend(_coverage(cov, allocation))


def _collect_sources(bundle: Bundle, sink: EvidenceSink, cov: dict[str, _Cov], allocation: list[str],
                     analyzer: ScannerSource, tp: TimeParser, fold: LineFold | None,
                     check: Callable[[], None] | None, scan: LineFileScan | None) -> None:
    """collect_bundle's reading of every source, file by file."""
    for src in bundle.sources:
        kind = src.spec.kind
        c = cov.setdefault(kind, _Cov())
        c.declared = True
        c.nodes_expected.update(src.expected_nodes or allocation)
        for msg in src.errors:
            sink.errors.append(ErrorItem(source=kind, file=src.spec.path, message=msg))
            c.errors += 1
        _list_outside(sink, kind, src)
        for sf in src.files:
            if check is not None:
                check()
            c.files += 1
            if kind in LINE_SOURCES:
                if scan is not None:
                    stats = scan(kind, src, sf, tp)
                else:
                    stats = analyzer.scanner(kind).scan_file(
                        sf.path, sf.rel, node=sf.node, rank=sf.rank,
                        srun_prefix=src.spec.rank_prefix == "srun", tp=tp, emit=sink.add_candidate, check=check,
                        fold=fold, ident=sf.ident,
                    )
                lines, errs = stats.lines, stats.errors
                c.notes.extend(stats.notes)  # (a bug report's sections: those read and those not)
                if kind == "application" and sf.node and stats.last_time is not None:
                    sink.saw_node(sf.node, stats.last_time)
                if stats.bad_utf8:
                    errs.append((None, f"{stats.bad_utf8} matching line(s) not valid UTF-8; "
                                       "decoded with replacement characters"))
                for line, msg in errs:
                    sink.errors.append(ErrorItem(source=kind, file=sf.rel, line=line, message=msg))
            else:
                lines, errs = _collect_document(sink, kind, src.spec.format, sf, node=sf.node, rank=sf.rank)
            c.lines += lines
            if any(m.startswith(("binary", "cannot")) for _, m in errs):
                c.errors += 1
                continue
            if any(m.startswith("read stopped early") for _, m in errs):
                c.truncated.append(sf.rel)  # what was read counts, but the file is not whole
            if lines == 0:
                c.notes.append(f"{sf.rel} is empty")
                continue
            c.readable += 1
            if sf.node:
                c.nodes_seen.add(sf.node)
            elif sf.rank is None:
                c.nodes_seen.update(c.nodes_expected)


def _collect_document(sink: EvidenceSink, kind: str, fmt: str | None, sf: SourceFile, *,
                      node: str | None = None, rank: int | None = None) -> tuple[int, list[tuple[int | None, str]]]:
    """Scheduler files are small and read whole; metric files are streamed."""
    rel = sf.rel
    try:
        with open_evidence(sf.path, sf.ident) as fh:
            if kind == "metrics":
                return sink.add_document(kind, fmt, rel, fh)
            size = os.fstat(fh.fileno()).st_size
            data = _read_at_most(fh, MAX_STRUCTURED_BYTES + 1) if size <= MAX_STRUCTURED_BYTES else b""
        if size > MAX_STRUCTURED_BYTES or len(data) > MAX_STRUCTURED_BYTES:  # or it grew while being read
            msg = f"cannot read: {max(size, len(data))} bytes is over the {MAX_STRUCTURED_BYTES} byte limit"
        else:
            if kind in PER_FILE_DOCUMENTS:
                return sink.add_document(kind, fmt, rel, data, node=node, rank=rank)
            return sink.add_document(kind, fmt, rel, data)
    except OSError as exc:
        msg = f"cannot read: {exc.strerror or exc}"
    sink.errors.append(ErrorItem(source=kind, file=rel, message=msg))
    return 0, [(None, msg)]


MAX_OUTSIDE_FILES = 20  # files of hosts outside the allocation named per source; the rest are counted


def _list_outside(sink: EvidenceSink, kind: str, src: ResolvedSource) -> None:
    """The files a source's `{node}` found for hosts outside the allocation, which are not read: named in the
    errors (at most MAX_OUTSIDE_FILES per source, then one entry that counts the rest)."""
    for rel, host in src.outside[:MAX_OUTSIDE_FILES]:
        sink.errors.append(ErrorItem(source=kind, file=rel,
                                     message=f"host {host!r} is not in the allocation: not read"))
    rest = src.outside[MAX_OUTSIDE_FILES:]
    if rest:
        sink.errors.append(ErrorItem(source=kind, file=src.spec.path, message=(
            f"... and {len(rest)} more file(s) of {len({h for _, h in rest})} host(s) outside the allocation: "
            "not read")))


def _read_at_most(fh: IO[bytes], n: int) -> bytes:
    parts: list[bytes] = []
    while n > 0:
        piece = fh.read(n)
        if not piece:
            break
        parts.append(piece)
        n -= len(piece)
    return b"".join(parts)


def _coverage(cov: dict[str, _Cov], allocation: list[str]) -> list[CoverageItem]:
    out: list[CoverageItem] = []
    n_alloc = len(allocation)
    for kind in ("scheduler", "kernel", "syslog", "fabricmanager", "application", "metrics", *PER_FILE_DOCUMENTS):
        c = cov.get(kind)
        if c is None:
            if kind in ("scheduler", "kernel", "application"):
                out.append(CoverageItem(source=kind, status="missing", nodes_seen=0, nodes_expected=n_alloc,
                                        lines=0, files=0, missing_nodes=list(allocation),
                                        note=f"no {kind} source in the evidence"))
            continue
        expected = sorted(c.nodes_expected) if c.nodes_expected else list(allocation)
        expected_set = set(expected)  # membership per node: a set, or 40k nodes cost 1.6e9 comparisons
        seen = sorted(n for n in c.nodes_seen if not expected_set or n in expected_set)
        missing = [n for n in expected if n not in c.nodes_seen]
        status: Literal["complete", "partial", "missing", "empty", "error"]
        if c.files == 0:
            status = "error" if c.errors else "missing"
        elif c.readable == 0:
            status = "error" if c.errors else "empty"
        elif missing or c.truncated:
            status = "partial"
        else:
            status = "complete"
        notes = [f"{rel}: read stopped early" for rel in c.truncated] + c.notes
        note = "; ".join(notes[:5]) if notes else None
        if c.files and status == "partial":
            extra = f"{kind}: {len(seen)} of {len(expected)} nodes"
            note = f"{extra}; {note}" if note else extra
        out.append(CoverageItem(source=kind, status=status, nodes_seen=len(seen),
                                nodes_expected=len(expected), lines=c.lines, files=c.files,
                                missing_nodes=missing, note=note))
    return out



__all__ = ["EvidenceSink", "LineFileScan", "ScannerSource", "collect_bundle"]
