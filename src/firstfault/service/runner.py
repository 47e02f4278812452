"""The three request forms turned into one Analysis each, on a pool thread.

Each form ends in the very calls the embedded engine makes
(Analyzer.start, the same records in the same order or collect_bundle,
Analysis.finish), which is what makes the verdicts identical.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Literal, TypeVar

import msgspec

from firstfault import records
from firstfault.analysis.analyze import Analysis, Analyzer, analyze_observations
from firstfault.bundle import BundleError, Context, SpecError, WorkloadSpec, load_bundle
from firstfault.collect.evidence import collect_bundle
from firstfault.collect.fold import LineFold
from firstfault.collect.wire import Record, read_request
from firstfault.collect.wire import records as wire_records
from firstfault.engine.loader import Catalog
from firstfault.extract.base import Candidate
from firstfault.model import Verdict
from firstfault.responses import ProblemDetail
from firstfault.service import ndjson, tarball
from firstfault.service.body import inflate, too_large
from firstfault.service.errors import from_validation, invalid
from firstfault.service.limits import Deadline

Form = Literal["json", "ndjson", "tar"]
T = TypeVar("T")


class Engine:
    """The catalog (shared, read-only) and one Analyzer per pool thread.

    An Analyzer caches line scanners, whose Hyperscan scratch space must not
    be shared between threads scanning at the same time.
    """

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._local = threading.local()

    def analyzer(self) -> Analyzer:
        a: Analyzer | None = getattr(self._local, "analyzer", None)
        if a is None:
            a = Analyzer(self.catalog)
            self._local.analyzer = a
        return a


def _checked(items: Iterable[T], deadline: Deadline) -> Iterator[T]:
    for item in items:
        deadline.check()
        yield item


def _context(spec: WorkloadSpec, prefix: str, line: int | None = None) -> None:
    """Context.from_spec's own checks (the rank map), as a 422 naming the field (ranks.NODE)."""
    try:
        Context.from_spec(spec)
    except SpecError as exc:
        loc = prefix + ".".join(exc.loc)
        raise invalid(f"{loc}: {exc.reason}",
                      [ProblemDetail(loc=loc, msg=exc.reason, type="value_error", line=line)]) from exc


def run_json(engine: Engine, body: Iterator[bytes], gzip: bool, max_bytes: int,
             deadline: Deadline) -> Verdict:
    """The JSON form, held whole: at most `max_bytes` (after inflating) are ever held."""
    raw = bytearray()
    for chunk in _checked(inflate(body, max_bytes), deadline) if gzip else body:
        if len(raw) + len(chunk) > max_bytes:
            raise too_large(max_bytes, "decompressed body" if gzip else "JSON body")
        raw += chunk
    deadline.check()
    try:
        req = read_request(raw)
    except records.ValidationError as exc:
        raise from_validation(exc) from exc
    except msgspec.DecodeError as exc:  # not JSON (a lone surrogate's escape included)
        raise invalid(f"not valid JSON: {exc}", [ProblemDetail(loc="", msg=f"not valid JSON: {exc}",
                                                               type="json_invalid")]) from exc
    del raw
    _context(req.context, "context.")
    return analyze_observations(engine.analyzer(), req.context, _checked(wire_records(req), deadline),
                                check=deadline.check)


def run_ndjson(engine: Engine, body: Iterator[bytes], gzip: bool, max_decompressed: int, max_record: int,
               deadline: Deadline) -> Verdict:
    # Each inflated step is checked too: a small body can inflate to millions of blank lines.
    lines = ndjson.split_lines(_checked(inflate(body, max_decompressed), deadline) if gzip else body, max_record)
    spec = ndjson.read_context(lines)
    _context(spec, "", line=1)
    records: Iterator[Record] = ndjson.read_records(lines)
    return analyze_observations(engine.analyzer(), spec, _checked(records, deadline), check=deadline.check)


class _DeadlineSink:
    """An Analysis as the EvidenceSink of collect_bundle, stopping at the deadline."""

    def __init__(self, analysis: Analysis, deadline: Deadline) -> None:
        self._analysis = analysis
        self._deadline = deadline
        self.coverage = analysis.coverage
        self.errors = analysis.errors

    def add_candidate(self, c: Candidate) -> None:
        self._deadline.check()
        self._analysis.add_candidate(c)

    def add_document(self, source: str, fmt: str | None, file: str,
                     data: bytes | IO[bytes], *, node: str | None = None,
                     rank: int | None = None) -> tuple[int, list[tuple[int | None, str]]]:
        self._deadline.check()
        return self._analysis.add_document(source, fmt, file, data, node=node, rank=rank)

    def saw_node(self, node: str, last: datetime) -> None:
        self._analysis.saw_node(node, last)

    def line_fold(self) -> LineFold:
        """The analysis's fold: copies it counts pass no per-line check (the scanner checks once a chunk)."""
        return self._analysis.line_fold()


def run_tar(engine: Engine, body: Iterator[bytes], limits: tarball.TarLimits, deadline: Deadline) -> Verdict:
    with tempfile.TemporaryDirectory(prefix="firstfault-bundle-") as tmp:
        tmpdir = Path(tmp)
        archive = tmpdir / "body.tar.gz"
        with archive.open("wb") as fh:
            for chunk in body:
                fh.write(chunk)
        deadline.check()
        dest = tmpdir / "bundle"
        dest.mkdir()
        with archive.open("rb") as fh:
            root = tarball.extract(fh, dest, limits, check=deadline.check)
        archive.unlink()
        deadline.check()
        try:
            bundle = load_bundle(root)
        except BundleError as exc:
            # Name the file as it is in the archive, not where it was unpacked.
            raise invalid(str(exc).replace(str(root) + "/", "").replace(str(root), "<archive>")) from exc
        analyzer = engine.analyzer()
        analysis = analyzer.start(bundle.context, check=deadline.check)
        collect_bundle(analyzer, bundle, _DeadlineSink(analysis, deadline), check=deadline.check)
        return analysis.finish()
