"""The Service's request form: one attempt's evidence as observations.

The Blueprint (or anyone) sends the execution context, the candidate log
lines its collectors kept (already placed in time, in file order), the
scheduler and metric documents, and the collectors' own coverage and
errors. `analysis.analyze.analyze_request` feeds them to the same Analysis
the embedded engine uses; `request_from_bundle` builds such a request from a bundle
with the same scanner, which is how the parity tests and the Blueprint's
local-files path produce identical verdicts either way.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from datetime import datetime
from typing import IO, Annotated, Any, Literal

import msgspec
from msgspec import Meta

from firstfault import records as _records
from firstfault.bundle import Bundle, Context, WorkloadSpec, plain_workload
from firstfault.collect.evidence import ScannerSource, collect_bundle
from firstfault.extract.base import Candidate
from firstfault.extract.documents import PER_FILE_DOCUMENTS, read_document
from firstfault.formats import Format
from firstfault.model import CoverageItem, ErrorItem

MAX_TEXT = 1 << 20
Path_ = Annotated[str, Meta(max_length=4096)]


class LineObservation(_records.Record, kw_only=True):
    """A log line that passed the prefilter (the wire form of scan.Candidate)."""

    type: Literal["line"] = "line"
    source: Literal["kernel", "syslog", "fabricmanager", "application"]
    file: Path_
    line: Annotated[int, Meta(ge=1)]
    node: str | None = None
    rank: int | None = None
    time: datetime | None = None
    text: Annotated[str, Meta(max_length=MAX_TEXT)]
    # The words that continue the line's message where it was wrapped (scan.continuation): optional, so the Service
    # reads a wrapped line as the embedded engine does.
    cont: Annotated[str, Meta(max_length=MAX_TEXT)] | None = None

    def candidate(self) -> Candidate:
        return Candidate(self.source, self.file, self.line, self.node, self.rank, self.time, self.text,
                         cont=self.cont)

    @classmethod
    def of(cls, c: Candidate) -> LineObservation:
        """The candidate as an observation, checked (records.ValidationError: a line the Service would refuse)."""
        return _records.convert({"source": c.source, "file": c.file, "line": c.line, "node": c.node, "rank": c.rank,
                                 "time": c.time, "text": c.text, "cont": c.cont}, cls)


class DocumentObservation(_records.Record, kw_only=True):
    """A scheduler record set or a metrics answer, whole (sacct text, Workload YAML, query_range JSON)."""

    type: Literal["document"] = "document"
    source: Literal["scheduler", "metrics", "flight_recorder", "stack_dump", "fabric"]
    # Flight-recorder and stack dumps need no format (the readers sniff pickle / JSON / text).
    format: Format | None = None
    file: Path_
    content: str
    # A pickled flight-recorder dump is binary: sent as base64.
    encoding: Literal["utf-8", "base64"] = "utf-8"
    node: str | None = None  # the file's {node} / {rank} binding (per-rank dumps)
    rank: int | None = None

    def data(self) -> bytes:
        return base64.b64decode(self.content) if self.encoding == "base64" else self.content.encode("utf-8")


class NodeActivity(_records.Record, kw_only=True):
    """When a node's application logs last wrote (for NODE_FAIL's silent-node check)."""

    type: Literal["activity"] = "activity"
    node: str
    last_seen: datetime


class AnalyzeRequest(_records.Record, kw_only=True):
    """One attempt's evidence as observations: the JSON form of POST /v1/analyze."""

    apiVersion: Literal["firstfault/v1"] = "firstfault/v1"
    context: WorkloadSpec
    lines: list[LineObservation] = _records.field(default_factory=list)
    documents: list[DocumentObservation] = _records.field(default_factory=list)
    activity: list[NodeActivity] = _records.field(default_factory=list)
    coverage: list[CoverageItem] = _records.field(default_factory=list)
    errors: list[ErrorItem] = _records.field(default_factory=list)


def read_request(raw: bytes | bytearray | str) -> AnalyzeRequest:
    """The JSON form: msgspec.DecodeError when it is not JSON, records.ValidationError naming the key path
    when it is not a request (the context read as workload.yaml's, an int job id as its digits)."""
    doc = msgspec.json.decode(raw)
    if isinstance(doc, dict) and "context" in doc:
        doc["context"] = plain_workload(doc["context"])
    return _records.convert(doc, AnalyzeRequest)


class RequestBuilder:
    """An EvidenceSink that records evidence into a Service request instead of judging it.

    The Blueprint's connectors write into it exactly as they write into an
    embedded Analysis; `request()` is then what goes to POST /v1/analyze.
    """

    def __init__(self, workload: WorkloadSpec) -> None:
        self.workload = workload
        self.lines: list[LineObservation] = []
        self.documents: list[DocumentObservation] = []
        self.activity: dict[str, datetime] = {}
        self.coverage: list[CoverageItem] = []
        self.errors: list[ErrorItem] = []
        self._ctx = Context.from_spec(workload)

    def add_candidate(self, c: Candidate) -> None:
        self.lines.append(LineObservation.of(c))

    def add_document(self, source: str, fmt: str | None, file: str,
                     data: bytes | IO[bytes], *, node: str | None = None,
                     rank: int | None = None) -> tuple[int, list[tuple[int | None, str]]]:
        raw = data if isinstance(data, bytes) else data.read()
        # Parsed here only to count lines for coverage; the Service reports the problems.
        res, problems = read_document(source, fmt, file, raw, self._ctx, node=node, rank=rank)
        if source in PER_FILE_DOCUMENTS:
            try:
                content, encoding = raw.decode("utf-8"), "utf-8"
            except UnicodeDecodeError:
                content, encoding = base64.b64encode(raw).decode("ascii"), "base64"
            self.documents.append(DocumentObservation(
                source=source, format=fmt, file=file, content=content,  # type: ignore[arg-type]
                encoding=encoding, node=node, rank=rank))  # type: ignore[arg-type]
        elif fmt is not None and res is not None:
            self.documents.append(DocumentObservation(
                source=source, format=fmt, file=file,  # type: ignore[arg-type]
                content=raw.decode("utf-8", errors="replace")))
        else:
            self.errors.extend(ErrorItem(source=source, file=file, line=ln, message=m) for ln, m in problems)
        return (res.lines if res is not None else 0), problems

    def saw_node(self, node: str, last: datetime) -> None:
        prev = self.activity.get(node)
        self.activity[node] = max(prev, last) if prev else last


    def request(self) -> AnalyzeRequest:
        return AnalyzeRequest(
            context=self.workload,
            lines=self.lines,
            documents=self.documents,
            activity=[NodeActivity(node=n, last_seen=t) for n, t in sorted(self.activity.items())],
            coverage=self.coverage,
            errors=self.errors,
        )


def request_from_bundle(analyzer: ScannerSource, bundle: Bundle) -> AnalyzeRequest:
    rec = RequestBuilder(bundle.workload)
    collect_bundle(analyzer, bundle, rec)
    return rec.request()


Record = LineObservation | DocumentObservation | NodeActivity | CoverageItem | ErrorItem


def records(req: AnalyzeRequest) -> Iterable[Record]:
    """A request's records in the order the engine takes them (the NDJSON order too)."""
    yield from req.documents
    yield from req.lines
    yield from req.activity
    yield from req.coverage
    yield from req.errors


def record_dict(r: Record) -> dict[str, Any]:
    """One observation as its NDJSON record."""
    if isinstance(r, CoverageItem):
        return {"type": "coverage", **_records.to_builtins(r)}
    if isinstance(r, ErrorItem):
        return {"type": "error", **_records.to_builtins(r)}
    return {k: v for k, v in _records.to_builtins(r).items() if v is not None}
