"""Catalog replay: keep the evidence a verdict was judged on, judge it again with another catalog.

What is kept per verdict is a Service request (wire.AnalyzeRequest): the
candidate lines that passed the prefilter (already placed in time), the
scheduler and metric documents, the nodes' last application activity, and
the collectors' own coverage and errors. `wire.analyze_request` feeds exactly
these to the same Analysis, so replaying with the catalog that made the
verdict gives the verdict again; replaying with another shows what that
catalog would have said.

Capture: the Blueprint's pipeline puts a Recorder in front of its Analysis
(or keeps the request it sends to the Service). The Recorder only keeps
references to what passes through, up to MAX_KEPT_RAW bytes of text; the
store packs it (`pack`) when it writes the verdict: zlib-compressed JSON,
at most `cap` bytes (docs/storage.md, "Catalog replay"). What does not fit
is left out, least useful first, and the record says so (`truncated`).
"""

from __future__ import annotations

import base64
import io
import zlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, TYPE_CHECKING, Any

from firstfault import records
from firstfault.analysis.analyze import Analysis, Analyzer
from firstfault.bundle import Bundle, WorkloadSpec
from firstfault.collect.wire import AnalyzeRequest, DocumentObservation, LineObservation, NodeActivity, read_request
from firstfault.extract.base import Candidate
from firstfault.extract.documents import PER_FILE_DOCUMENTS
from firstfault.model import CoverageItem, ErrorItem, Verdict

if TYPE_CHECKING:
    from firstfault.engine.loader import Catalog
    from firstfault.store.repo import ReplayEvidence, VerdictStore

CODEC = "zlib+json/firstfault-v1"
DEFAULT_CAP = 4 << 20  # compressed bytes stored per verdict (outputs.database.replay_evidence_max_bytes)
MAX_KEPT_RAW = 64 << 20  # text a Recorder keeps in memory for one attempt
MAX_UNPACKED = 256 << 20  # a stored record never inflates to more than this
_PACK_ROUNDS = 8


@dataclass(slots=True)
class Captured:
    """The evidence of one analysis as a Service request, and what capture left out."""

    request: AnalyzeRequest
    dropped_lines: int = 0
    dropped_documents: int = 0

    def pack(self, verdict: Verdict, cap: int) -> ReplayEvidence | None:
        """The stored form (store.ReplayPacker): see `pack` below."""
        return pack(self, verdict, cap)


class _Chain(io.RawIOBase):
    """`head` then the rest of `tail`: a stream whose first bytes were read already."""

    def __init__(self, head: bytes, tail: IO[bytes]) -> None:
        self._head = memoryview(head)
        self._tail = tail

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if self._head:
            n = min(len(b), len(self._head))
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._tail.read(len(b))
        b[: len(data)] = data
        return len(data)


class Recorder:
    """An EvidenceSink in front of an Analysis: everything passes on, and a copy is kept for replay.

    `coverage` and `errors` are the Analysis's own lists (connectors append
    to them directly). Errors that a document's reader reported are not kept
    with the request, because replaying the document reports them again.
    """

    def __init__(self, analysis: Analysis, workload: WorkloadSpec, max_raw: int = MAX_KEPT_RAW) -> None:
        self.analysis = analysis
        self.workload = workload
        self.coverage: list[CoverageItem] = analysis.coverage
        self.errors: list[ErrorItem] = analysis.errors
        self.max_raw = max_raw
        self._lines: list[Candidate] = []
        self._documents: list[tuple[str, str | None, str, bytes, str | None, int | None]] = []
        self._activity: dict[str, datetime] = {}
        self._doc_errors: set[int] = set()
        self._kept = 0
        self.dropped_lines = 0
        self.dropped_documents = 0

    def add_candidate(self, c: Candidate) -> None:
        self.analysis.add_candidate(c)
        size = len(c.text) + len(c.file) + 64
        if self._kept + size > self.max_raw:
            self.dropped_lines += 1
            return
        self._kept += size
        self._lines.append(c)

    def add_document(self, source: str, fmt: str | None, file: str,
                     data: bytes | IO[bytes], *, node: str | None = None,
                     rank: int | None = None) -> tuple[int, list[tuple[int | None, str]]]:
        room = max(0, self.max_raw - self._kept)
        raw: bytes | None
        if isinstance(data, bytes):
            raw = data if len(data) <= room else None
            feed: bytes | IO[bytes] = data
        else:  # a stream (large metric files): keep it only when it fits, never read it twice
            head = data.read(room + 1)
            raw = head if len(head) <= room else None
            feed = head if raw is not None else io.BufferedReader(_Chain(head, data))
        before = len(self.errors)
        out = self.analysis.add_document(source, fmt, file, feed, node=node, rank=rank)
        if raw is None:
            self.dropped_documents += 1
            return out
        self._kept += len(raw)
        self._doc_errors.update(id(e) for e in self.errors[before:])
        self._documents.append((source, fmt, file, raw, node, rank))
        return out

    def saw_node(self, node: str, last: datetime) -> None:
        self.analysis.saw_node(node, last)
        prev = self._activity.get(node)
        self._activity[node] = max(prev, last) if prev else last

    def captured(self) -> Captured:
        lines: list[LineObservation] = []
        dropped_lines, dropped_docs = self.dropped_lines, self.dropped_documents
        for c in self._lines:
            try:
                lines.append(LineObservation.of(c))
            except records.ValidationError:
                dropped_lines += 1
        docs: list[DocumentObservation] = []
        kept_doc_errors = set(self._doc_errors)
        for source, fmt, file, raw, node, rank in self._documents:
            try:
                docs.append(_document(source, fmt, file, raw, node, rank))
            except records.ValidationError:
                dropped_docs += 1
                kept_doc_errors.clear()  # cannot tell which errors were this one's: keep them all
        errors = [e for e in self.errors if id(e) not in kept_doc_errors]
        req = AnalyzeRequest(
            context=self.workload, lines=lines, documents=docs,
            activity=[NodeActivity(node=n, last_seen=t) for n, t in sorted(self._activity.items())],
            coverage=list(self.coverage), errors=errors)
        return Captured(req, dropped_lines, dropped_docs)


def _document(source: str, fmt: str | None, file: str, raw: bytes, node: str | None,
              rank: int | None) -> DocumentObservation:
    if source in PER_FILE_DOCUMENTS:
        try:
            content, encoding = raw.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            content, encoding = base64.b64encode(raw).decode("ascii"), "base64"
    else:
        content, encoding = raw.decode("utf-8", errors="replace"), "utf-8"
    return records.convert({"source": source, "format": fmt, "file": file, "content": content,
                            "encoding": encoding, "node": node, "rank": rank}, DocumentObservation)


def capture_bundle(analyzer: Analyzer, bundle: Bundle, now: datetime | None = None) -> tuple[Verdict, Captured]:
    """Analyse a bundle as the embedded engine does, keeping what it was fed."""
    from firstfault.collect.evidence import collect_bundle

    analysis = analyzer.start(bundle.context)
    rec = Recorder(analysis, bundle.workload)
    collect_bundle(analyzer, bundle, rec)
    return analysis.finish(now=now), rec.captured()


# ---------------------------------------------------------------------------
# pack / unpack
# ---------------------------------------------------------------------------


def _cited(verdict: Verdict | None) -> set[tuple[str | None, int | None]]:
    return {(e.file, e.line) for e in verdict.evidence} if verdict is not None else set()


def pack(cap_: Captured, verdict: Verdict | None = None, cap: int = DEFAULT_CAP) -> ReplayEvidence | None:
    """The stored form: zlib of the request's JSON, at most `cap` bytes (None: not even the bare
    context, coverage and errors fit).

    Over the cap, lines and documents are left out until it fits, in this
    order of keeping: scheduler documents, the lines the verdict cites as
    evidence, the other documents (smallest first), the other lines (file
    order). What is kept stays in its original order; context, activity,
    coverage and errors are always kept. Deterministic for the same input.
    """
    from firstfault.store.repo import ReplayEvidence

    req = cap_.request
    full = records.encode(req)
    data = zlib.compress(full, 6)
    n_lines, n_docs = len(req.lines), len(req.documents)
    lines_total, docs_total = n_lines + cap_.dropped_lines, n_docs + cap_.dropped_documents
    if len(data) <= cap:
        return ReplayEvidence(CODEC, data, len(full), bool(cap_.dropped_lines or cap_.dropped_documents),
                              n_lines, lines_total, n_docs, docs_total)
    cited = _cited(verdict)
    items: list[tuple[int, int, str, int]] = []  # (class, tiebreak, kind, index) in keeping order
    for i, d in enumerate(req.documents):
        items.append((0 if d.source == "scheduler" else 2, len(d.content) if d.source != "scheduler" else i,
                      "doc", i))
    for i, ln in enumerate(req.lines):
        items.append((1 if (ln.file, ln.line) in cited else 3, i, "line", i))
    items.sort()
    sizes = {(k, i): len(records.encode(req.documents[i] if k == "doc" else req.lines[i]))
             for _, _, k, i in items}
    fixed = len(full) - sum(sizes.values())
    budget = max(0, int((len(full) - fixed) * cap / len(data) * 0.9))
    for _ in range(_PACK_ROUNDS):
        keep_docs: set[int] = set()
        keep_lines: set[int] = set()
        used = 0
        for _, _, k, i in items:
            s = sizes[(k, i)]
            if used + s > budget:
                break
            used += s
            (keep_docs if k == "doc" else keep_lines).add(i)
        small = records.replace(req, documents=[d for i, d in enumerate(req.documents) if i in keep_docs],
                                lines=[ln for i, ln in enumerate(req.lines) if i in keep_lines])
        raw = records.encode(small)
        data = zlib.compress(raw, 6)
        if len(data) <= cap:
            return ReplayEvidence(CODEC, data, len(raw), True, len(keep_lines), lines_total, len(keep_docs),
                                  docs_total)
        budget = int(budget * 0.6)
        if budget == 0:
            break
    raw = records.encode(records.replace(req, documents=[], lines=[]))
    data = zlib.compress(raw, 6)
    if len(data) > cap:
        return None
    return ReplayEvidence(CODEC, data, len(raw), True, 0, lines_total, 0, docs_total)


class ReplayError(Exception):
    """A stored record cannot be read back (unknown codec, corrupt, too large)."""


def unpack(codec: str, data: bytes) -> AnalyzeRequest:
    if codec != CODEC:
        raise ReplayError(f"unknown replay evidence codec {codec!r} (this firstfault reads {CODEC})")
    d = zlib.decompressobj()
    try:
        raw = d.decompress(data, MAX_UNPACKED)
    except zlib.error as exc:
        raise ReplayError(f"corrupt replay evidence: {exc}") from exc
    if d.unconsumed_tail:
        raise ReplayError(f"replay evidence inflates past {MAX_UNPACKED} bytes")
    try:
        return read_request(raw)
    except ValueError as exc:  # msgspec.DecodeError, records.ValidationError
        raise ReplayError(f"replay evidence is not a request of this version: {exc}") from exc


# ---------------------------------------------------------------------------
# replay
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Attribution:
    """What a catalog change is judged by: the domain, the cause categories and the nodes."""

    domain: str
    categories: tuple[str, ...]
    nodes: tuple[str, ...]

    @classmethod
    def of(cls, v: Verdict) -> Attribution:
        cats = (v.root_cause.category,) if v.root_cause is not None else tuple(c.category for c in v.candidates)
        return cls(v.attributed_domain, cats, tuple(sorted(v.affected_nodes)))

    def as_dict(self) -> dict[str, Any]:
        return {"domain": self.domain, "categories": list(self.categories), "nodes": list(self.nodes)}


@dataclass(frozen=True, slots=True)
class Change:
    id: int
    workload: str
    attempt: int
    cluster: str | None
    catalog_before: str  # the version that made the stored verdict
    before: Attribution
    after: Attribution
    truncated: bool  # the stored evidence was cut to its cap: the change may be the cut's

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "workload": self.workload, "attempt": self.attempt, "cluster": self.cluster,
                "catalog_before": self.catalog_before, "before": self.before.as_dict(),
                "after": self.after.as_dict(), "truncated": self.truncated}


@dataclass(slots=True)
class ReplayReport:
    catalog_version: str
    catalog_sha256: str
    replayed: int = 0
    changed: list[Change] = field(default_factory=list)
    truncated: int = 0  # replayed records that were cut to the cap
    without_evidence: int = 0  # verdicts in the window stored without replay evidence
    failed: list[tuple[int, str]] = field(default_factory=list)

    @property
    def share(self) -> float:
        """The share of the replayed verdicts that would change."""
        return len(self.changed) / self.replayed if self.replayed else 0.0

    @property
    def unsure_share(self) -> float:
        """What a gate compares (--max-changed-share): of the verdicts with evidence, those that would
        change or could not be replayed. A verdict that failed to replay is not known to stay the same."""
        judged = self.replayed + len(self.failed)
        return (len(self.changed) + len(self.failed)) / judged if judged else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"catalog": {"version": self.catalog_version, "sha256": self.catalog_sha256},
                "replayed": self.replayed, "changed": [c.as_dict() for c in self.changed],
                "changed_share": round(self.share, 6), "changed_or_failed_share": round(self.unsure_share, 6),
                "truncated": self.truncated,
                "without_evidence": self.without_evidence,
                "failed": [{"id": i, "error": m} for i, m in self.failed]}


def replay(store: VerdictStore, catalog: Catalog, *, since: datetime | None = None,
           until: datetime | None = None) -> ReplayReport:
    """Judge every stored verdict in the window (by analysis time) again with `catalog`."""
    from firstfault.analysis.analyze import analyze_request

    analyzer = Analyzer(catalog)
    report = ReplayReport(catalog.version, catalog.sha256)
    for rec in store.replay_records(since=since, until=until):
        if rec.evidence is None:
            report.without_evidence += 1
            continue
        try:
            req = unpack(rec.evidence.codec, rec.evidence.data)
            after = analyze_request(analyzer, req)
        except Exception as exc:  # one bad record must not hide the others' changes
            report.failed.append((rec.id, f"{type(exc).__name__}: {exc}"))
            continue
        report.replayed += 1
        report.truncated += rec.evidence.truncated
        b, a = Attribution.of(rec.verdict), Attribution.of(after)
        if a != b:
            report.changed.append(Change(rec.id, rec.verdict.workload.id, rec.verdict.workload.attempt, rec.cluster,
                                         rec.verdict.catalog.version, b, a, rec.evidence.truncated))
    return report


__all__ = ["CODEC", "DEFAULT_CAP", "Attribution", "Captured", "Change", "Recorder", "ReplayError", "ReplayReport",
           "pack", "replay", "unpack"]
