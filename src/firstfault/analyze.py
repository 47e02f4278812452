"""One analysis: an evidence bundle in, a verdict out (the embedded engine).

The flow is spec/DESIGN's: read each source (lines through the scanner,
scheduler and metric files through their readers), account coverage and
errors per source, map hosts/ranks/addresses/PCI ids onto the allocation,
then attribute and build the verdict.
"""

from __future__ import annotations

import io
import ipaddress
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, BinaryIO, Literal, Protocol, cast

from firstfault.bundle import Bundle, Context, ResolvedSource, SourceFile, load_bundle
from firstfault.engine.attribute import attribute
from firstfault.engine.catalog import Catalog, shipped_catalog
from firstfault.engine.leads import find_leads
from firstfault.engine.verdict import build_verdict, outcome_of
from firstfault.extract.common import norm_pci
from firstfault.extract.structured import StructuredResult
from firstfault.model import (
    CoverageItem,
    ErrorItem,
    Event,
    Evidence,
    Unrecognized,
    UnrecognizedLine,
    Verdict,
    Window,
    WorkloadRef,
    iso,
)
from firstfault.scan import (
    LINE_SOURCES,
    Candidate,
    EventStore,
    Extraction,
    FileStats,
    LineScanner,
    all_line_extractors,
)
from firstfault.timeparse import TimeParser

MAX_STRUCTURED_BYTES = 256 << 20
# Structured sources read one file at a time with the file's {node}/{rank} binding.
PER_FILE_DOCUMENTS = ("flight_recorder", "stack_dump")


@dataclass(slots=True)
class _Cov:
    files: int = 0
    lines: int = 0
    nodes_seen: set[str] = field(default_factory=set)
    nodes_expected: set[str] = field(default_factory=set)
    declared: bool = False
    errors: int = 0
    readable: int = 0
    truncated: list[str] = field(default_factory=list)  # files whose read stopped early
    notes: list[str] = field(default_factory=list)


class NodeMapper:
    """Maps the many spellings of a node (FQDN, short name, IP, rank) onto the allocation."""

    def __init__(self, nodes: list[str], rank_to_node: dict[int, str]) -> None:
        self.nodes = list(nodes)
        self.node_set = frozenset(nodes)
        self.rank_to_node = rank_to_node
        self.names: dict[str, str] = {}
        for n in nodes:
            self.names[n.lower()] = n
            self.names.setdefault(n.split(".")[0].lower(), n)
        self.addrs: dict[str, str] = {}

    def learn_address(self, addr: str, node: str | None) -> None:
        if node and addr:
            self.addrs.setdefault(addr, node)

    def host(self, name: str | None) -> str | None:
        if not name:
            return None
        key = name.strip().lower()
        hit = self.names.get(key) or self.names.get(key.split(".")[0])
        if hit:
            return hit
        addr = key.split("<")[0].split("%")[0]
        if addr in self.addrs:
            return self.addrs[addr]
        try:
            ipaddress.ip_address(addr)
        except ValueError:
            pass
        else:
            return None
        return None if self.nodes else name

    def node_for(self, ev: Event) -> str | None:
        if ev.node and (not self.nodes or ev.node in self.node_set):
            return ev.node
        if ev.node:
            mapped = self.host(ev.node)
            if mapped:
                return mapped
        host = ev.fields.get("host")
        if isinstance(host, str):
            mapped = self.host(host)
            if mapped:
                return mapped
        if ev.rank is not None and ev.rank in self.rank_to_node:
            return self.rank_to_node[ev.rank]
        if ev.node is None and len(self.nodes) == 1:
            return self.nodes[0]  # a one-node allocation: whatever printed it ran there
        return ev.node


def _normalise(events: list[Event], ctx: Context, mapper: NodeMapper, grace: timedelta) -> list[Event]:
    for ev in events:
        if ev.kind == "net.address":
            addr = ev.fields.get("addr")
            node = mapper.node_for(ev)
            if isinstance(addr, str):
                mapper.learn_address(addr, node)
    start = ctx.window_start - grace if ctx.window_start else None
    end = ctx.window_end + grace if ctx.window_end else None
    out: list[Event] = []
    for ev in events:
        if ev.kind == "net.address":
            continue
        t = ev.time
        if t is not None and ((start is not None and t < start) or (end is not None and t > end)):
            continue  # outside this attempt's window: another job's evidence
        ev.node = mapper.node_for(ev)
        if ev.device and ev.device.startswith("pci:") and ev.node:
            idx = ctx.gpu_index.get((ev.node, norm_pci(ev.device[4:])))
            if idx is not None:
                ev.device = f"gpu{idx}"
        peer = ev.fields.get("peer")
        if isinstance(peer, str):
            pn = mapper.host(peer)
            if pn:
                ev.fields["peer_node"] = pn
        out.append(ev)
    return out


def _one_record_per_job(events: list[Event]) -> list[Event]:
    """sacct and scontrol describe the same job: keep the record that says most.

    scontrol's JobState=CANCELLED does not say who cancelled; sacct's
    'CANCELLED by 0' does, and a rule must see that one, not both.
    """
    jobs: dict[object, list[Event]] = {}
    for ev in events:
        if ev.kind == "sched.job" and ev.fields.get("scope") == "job":
            jobs.setdefault(ev.fields.get("job_id"), []).append(ev)
    drop: set[int] = set()
    for recs in jobs.values():
        if len(recs) < 2 or len({str(r.fields.get("state")) for r in recs}) > 1:
            continue  # one record, or records that disagree: keep what was said
        best = max(recs, key=lambda r: (r.fields.get("by_uid") is not None, len(r.fields), -recs.index(r)))
        drop.update(id(r) for r in recs if r is not best)
    return [e for e in events if id(e) not in drop] if drop else events


def _silent_nodes(last: dict[str, datetime], gap: float) -> list[Event]:
    """Nodes whose ranks all stopped writing long before the others did.

    Slurm's NODE_FAIL names no node; the node that fell silent first is the
    one the controller lost. Only application logs count: they are written
    every few seconds, while kernel logs may be quiet for hours.
    """
    if len(last) < 2:
        return []
    ordered = sorted(last.values())
    median = ordered[len(ordered) // 2]
    out = []
    for node, t in sorted(last.items()):
        lag = (median - t).total_seconds()
        if lag >= gap:
            out.append(Event(
                kind="node.silent", time=t, node=node,
                fields={"last_seen": iso(t), "lag_s": round(lag, 3)},
                evidence=Evidence(source="application", file=None, line=None,
                                  text=f"{node}: application logs stop at {iso(t)}, {lag:.0f} s before "
                                       f"the other nodes' (median {iso(median)})"),
            ))
    return out


def _terminal_state(events: list[Event], declared: str | None) -> tuple[str | None, Event | None]:
    """The scheduler's word on how the attempt ended (it wins over workload.yaml)."""
    jobs = [e for e in events if e.kind == "sched.job" and e.fields.get("scope") == "job"]
    if jobs:
        best = jobs[-1]
        state = best.fields.get("state")
        return (str(state) if state else declared), best
    conds = [e for e in events if e.kind == "kueue.condition" and e.fields.get("status") == "True"]
    for c in reversed(conds):
        typ, reason = c.fields.get("type"), c.fields.get("reason")
        if typ == "Finished":
            return ("COMPLETED" if reason == "Succeeded" else "FAILED"), c
        if typ in ("Evicted", "Preempted"):
            return ("PREEMPTED" if reason in ("Preempted", "InClusterQueue") or typ == "Preempted"
                    else "FAILED"), c
    pods = [e for e in events if e.kind == "k8s.pod" and not e.fields.get("restart")]
    if pods and not declared:
        reasons = {str(p.fields.get("reason")) for p in pods}
        if reasons == {"Completed"}:
            return "COMPLETED", pods[-1]
        return "FAILED", pods[-1]
    return declared, None


class Analysis:
    """The evidence of one workload attempt, fed piece by piece, then judged.

    The embedded engine feeds it from a bundle's files; the Service feeds it
    from a request's observations. Same pieces in the same order, same
    verdict.
    """

    def __init__(self, analyzer: Analyzer, ctx: Context) -> None:
        self.analyzer = analyzer
        self.ctx = ctx
        self.store = EventStore()
        self.extraction = Extraction(all_line_extractors(), hosts=ctx.workload.nodes)
        self.coverage: list[CoverageItem] = []
        self.errors: list[ErrorItem] = []
        self.node_last_seen: dict[str, datetime] = {}  # node -> last stamped application line

    def add_candidate(self, c: Candidate) -> None:
        for ev in self.extraction.events(c):
            self.store.add(ev)

    def add_document(self, source: str, fmt: str | None, file: str,
                     data: bytes | IO[bytes], *, node: str | None = None,
                     rank: int | None = None) -> tuple[int, list[tuple[int | None, str]]]:
        """A scheduler, metrics, flight-recorder or stack-dump document (bytes, or a
        stream for large metric files); `node` / `rank` are the file's placeholders.

        Returns the lines read and the (line, message) problems, which are
        also kept in `errors`.
        """
        res, problems = _read_structured(source, fmt, file, data, self.ctx, node=node, rank=rank)
        if res is not None:
            for ev in res.events:
                self.store.add(ev)
        for line, msg in problems:
            self.errors.append(ErrorItem(source=source, file=file, line=line, message=msg))
        return (res.lines if res is not None else 0), problems

    def saw_node(self, node: str, last: datetime) -> None:
        prev = self.node_last_seen.get(node)
        self.node_last_seen[node] = max(prev, last) if prev else last

    def finish(self, now: datetime | None = None) -> Verdict:
        ctx, wl = self.ctx, self.ctx.workload
        settings = self.analyzer.catalog.settings
        allocation = list(wl.nodes)
        mapper = NodeMapper(allocation, ctx.rank_to_node)
        events = _one_record_per_job(
            _normalise(self.store.events, ctx, mapper, timedelta(seconds=settings.clock_skew + 120)))
        state, state_ev = _terminal_state(events, wl.terminal_state)
        if state_ev is None and wl.terminal_state:
            events.append(_declared_state(ctx))
        elif state_ev is None and state is None:
            banner = _banner_state(events)
            if banner is not None:
                events.append(banner)
                state = str(banner.fields["state"])
        if state and state.split()[0].upper() == "NODE_FAIL":
            events.extend(_silent_nodes(self.node_last_seen, settings.silent_node_gap))
        leads = find_leads(events, ctx.rank_to_node)
        att = attribute(events, self.analyzer.catalog.active(), settings, allocation, leads=leads)
        ref = WorkloadRef(
            id=wl.id, attempt=wl.attempt, name=wl.name, scheduler=wl.scheduler,
            window=Window(start=iso(ctx.window_start), end=iso(ctx.window_end)),
            nodes=allocation,
        )
        return build_verdict(
            catalog=self.analyzer.catalog, workload=ref, terminal_state=state, att=att,
            coverage=self.coverage, errors=self.errors, now=now,
            unrecognized=self._unrecognized(mapper),
        )

    def _unrecognized(self, mapper: NodeMapper) -> list[Unrecognized]:
        def node_of(node: str | None, host: str | None, rank: int | None) -> str | None:
            if node:
                return mapper.host(node) or node
            if host:
                return mapper.host(host)
            return mapper.rank_to_node.get(rank) if rank is not None else None

        return [
            Unrecognized(template=g.template, count=g.count, nodes=g.nodes,
                         first=UnrecognizedLine(file=g.file, line=g.line, time=iso(g.time), text=g.text))
            for g in self.extraction.unrecognized.groups(node_of)
        ]


class Analyzer:
    """Holds what is built once per catalog (extractors, scanners)."""

    def __init__(self, catalog: Catalog | None = None) -> None:
        self.catalog = catalog or shipped_catalog()
        self._scanners: dict[str, LineScanner] = {}

    def scanner(self, kind: str) -> LineScanner:
        if kind not in self._scanners:
            self._scanners[kind] = LineScanner(kind, all_line_extractors())
        return self._scanners[kind]

    def start(self, ctx: Context) -> Analysis:
        return Analysis(self, ctx)

    def analyze_path(self, path: str, now: datetime | None = None, workers: int = 1) -> Verdict:
        return self.analyze_bundle(load_bundle(path), now=now, workers=workers)

    def analyze_bundle(self, bundle: Bundle, now: datetime | None = None, workers: int = 1) -> Verdict:
        """`workers` > 1 reads the line files in that many processes (firstfault.parallel): same verdict."""
        analysis = self.start(bundle.context)
        if workers > 1:
            from firstfault.parallel import collect_bundle_parallel

            collect_bundle_parallel(self, bundle, analysis, workers)
        else:
            collect_bundle(self, bundle, analysis)
        return analysis.finish(now=now)


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
# reader (firstfault.parallel) puts in place of the scanner, with the same results in the same order.
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
    for src in bundle.sources:
        kind = src.spec.kind
        c = cov.setdefault(kind, _Cov())
        c.declared = True
        c.nodes_expected.update(src.expected_nodes or allocation)
        for msg in src.errors:
            sink.errors.append(ErrorItem(source=kind, file=src.spec.path, message=msg))
            c.errors += 1
        for sf in src.files:
            if check is not None:
                check()
            c.files += 1
            if kind in LINE_SOURCES:
                if scan is not None:
                    stats = scan(kind, src, sf, tp)
                else:
                    stats = analyzer.scanner(kind).scan_file(
                        str(sf.path), sf.rel, node=sf.node, rank=sf.rank,
                        srun_prefix=src.spec.rank_prefix == "srun", tp=tp, emit=sink.add_candidate, check=check,
                    )
                lines, errs = stats.lines, stats.errors
                if kind == "application" and sf.node and stats.last_time is not None:
                    sink.saw_node(sf.node, stats.last_time)
                if stats.bad_utf8:
                    errs.append((None, f"{stats.bad_utf8} matching line(s) not valid UTF-8; "
                                       "decoded with replacement characters"))
                for line, msg in errs:
                    sink.errors.append(ErrorItem(source=kind, file=sf.rel, line=line, message=msg))
            else:
                lines, errs = _collect_document(sink, kind, src.spec.format, sf.path, sf.rel,
                                                node=sf.node, rank=sf.rank)
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
    sink.coverage.extend(_coverage(cov, allocation))


def _collect_document(sink: EvidenceSink, kind: str, fmt: str | None, path: Path, rel: str, *,
                      node: str | None = None, rank: int | None = None) -> tuple[int, list[tuple[int | None, str]]]:
    """Scheduler files are small and read whole; metric files are streamed."""
    try:
        if kind == "metrics":
            with path.open("rb") as fh:
                return sink.add_document(kind, fmt, rel, fh)
        size = path.stat().st_size
        if size > MAX_STRUCTURED_BYTES:
            msg = f"cannot read: {size} bytes is over the {MAX_STRUCTURED_BYTES} byte limit"
        else:
            if kind in PER_FILE_DOCUMENTS:
                return sink.add_document(kind, fmt, rel, path.read_bytes(), node=node, rank=rank)
            return sink.add_document(kind, fmt, rel, path.read_bytes())
    except OSError as exc:
        msg = f"cannot read: {exc.strerror or exc}"
    sink.errors.append(ErrorItem(source=kind, file=rel, message=msg))
    return 0, [(None, msg)]


# What slurmstepd's `*** JOB N ON host CANCELLED AT t [DUE TO X] ***` says of the job's end.
_BANNER_STATES = {None: "CANCELLED", "time_limit": "TIMEOUT", "preemption": "PREEMPTED", "node_failure": "NODE_FAIL"}


def _banner_state(events: list[Event]) -> Event | None:
    """The job's end as slurmstepd's JOB banner tells it, when no scheduler record or workload.yaml does.

    Accounting (sacct, scontrol) says more, who cancelled above all, so it always wins; without it the
    banner is still the scheduler's own word that the allocation ended, and why.
    """
    banners = [e for e in events if e.kind == "process.signal" and e.fields.get("slurm_scope") == "job"]
    if not banners:
        return None
    first = min(banners, key=lambda e: (e.time is None, e.time, e.evidence.file or "", e.evidence.line or 0))
    due = first.fields.get("due_to")
    state = _BANNER_STATES.get(due if isinstance(due, str) else None)
    if state is None:
        return None
    return Event(kind="sched.job", time=first.time, node=None,
                 fields={"state": state, "raw_state": f"{state} (slurmstepd banner)", "scope": "job"},
                 evidence=first.evidence)


def _declared_state(ctx: Context) -> Event:
    wl = ctx.workload
    state = (wl.terminal_state or "").split()[0].upper()
    fields: dict[str, str | int | float | bool | None] = {
        "state": state, "raw_state": wl.terminal_state, "scope": "job",
    }
    if wl.exit_code and ":" in wl.exit_code:
        a, b = wl.exit_code.split(":", 1)
        if a.isdigit() and b.isdigit():
            fields["exit_code"], fields["signal"] = int(a), int(b)
    return Event(
        kind="sched.job", time=ctx.window_end, node=None, fields=fields,
        evidence=Evidence(source="scheduler", file="workload.yaml", line=None,
                          text=f"terminal_state: {wl.terminal_state}"),
    )


def _read_structured(source: str, fmt: str | None, file: str, data: bytes | IO[bytes],
                     ctx: Context, *, node: str | None = None,
                     rank: int | None = None) -> tuple[StructuredResult | None, list[tuple[int | None, str]]]:
    if source in PER_FILE_DOCUMENTS:
        from firstfault.extract.flightrec import read_flight_recorder
        from firstfault.extract.stackdump import read_stack_dump

        raw = data if isinstance(data, bytes) else data.read(MAX_STRUCTURED_BYTES)
        reader = read_flight_recorder if source == "flight_recorder" else read_stack_dump
        res = reader(raw, file, node=node, rank=rank)
        return res, [(i.line, i.message) for i in res.issues]
    if fmt is None:
        return None, [(None, f"cannot read: a {source} source needs a format")]
    if source == "scheduler":
        from firstfault.extract.scheduler import read_scheduler

        raw = data if isinstance(data, bytes) else data.read(MAX_STRUCTURED_BYTES)
        res = read_scheduler(raw, fmt, file, job_id=ctx.workload.id, tz=ctx.tz)
    elif source == "metrics":
        from firstfault.extract.metrics import read_metrics

        res = read_metrics(io.BytesIO(data) if isinstance(data, bytes) else cast(BinaryIO, data), fmt, file)
    else:
        return None, [(None, f"cannot read: source kind {source} has no structured reader")]
    return res, [(i.line, i.message) for i in res.issues]


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


def analyze(path: str, catalog: Catalog | None = None, now: datetime | None = None) -> Verdict:
    return Analyzer(catalog).analyze_path(path, now=now)


def is_failure(outcome: str) -> bool:
    return outcome not in ("succeeded", "running")


__all__ = ["Analysis", "Analyzer", "analyze", "collect_bundle", "is_failure", "outcome_of"]
