"""One analysis: an attempt's evidence in, a verdict out (the embedded engine).

Evidence arrives through the EvidenceSink interface (collect/evidence.py): from
a bundle's files (collect_bundle) or from a request's observations
(analyze_request). Documents go through their readers, lines through the
extraction; then normalisation onto the allocation (engine/normalise.py),
leads, attribution and the verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta
from typing import IO, TYPE_CHECKING

from firstfault.bundle import Bundle, Context, WorkloadSpec, load_bundle
from firstfault.collect.events import EventStore
from firstfault.collect.evidence import collect_bundle
from firstfault.collect.fold import LineFold
from firstfault.collect.scan import Extraction, LineScanner, all_line_extractors
from firstfault.engine.attribute import attribute
from firstfault.engine.leads import find_leads
from firstfault.engine.loader import Catalog, shipped_catalog
from firstfault.engine.normalise import (
    NodeMapper,
    Outside,
    banner_state,
    declared_state,
    net_found_after,
    normalise,
    one_record_per_job,
    own_end,
    ports_said,
    ready_placed,
    silent_nodes,
    terminal_lines,
    terminal_state,
    unused_ports,
)
from firstfault.engine.verdict import build_verdict
from firstfault.extract.base import Candidate
from firstfault.extract.documents import read_document
from firstfault.extract.memo import scan_gc
from firstfault.extract.traceback import words_cause
from firstfault.extract.unrecognized import MAX_GROUPS
from firstfault.model import (
    CoverageItem,
    ErrorItem,
    Event,
    Evidence,
    FieldValue,
    Unrecognized,
    UnrecognizedLine,
    Verdict,
    Window,
    WorkloadRef,
    iso,
)
from firstfault.spec import ended_in_failure, is_failure, outcome_of

if TYPE_CHECKING:  # the Service's request types: imported where a request is analysed, not by `analyze`
    from firstfault.collect.wire import AnalyzeRequest, Record
    from firstfault.extract.fabric import Link


class Analysis:
    """The evidence of one workload attempt, fed piece by piece, then judged.

    The embedded engine feeds it from a bundle's files; the Service feeds it
    from a request's observations. Same pieces in the same order, same
    verdict.
    """

    def __init__(self, analyzer: Analyzer, ctx: Context, check: Callable[[], None] | None = None) -> None:
        self.analyzer = analyzer
        self.ctx = ctx
        self.check = check  # a deadline (the Service's): the document readers call it as they read
        self.store = EventStore()
        self.extraction = Extraction(all_line_extractors(), hosts=ctx.workload.nodes)
        self.coverage: list[CoverageItem] = []
        self.errors: list[ErrorItem] = []
        self.node_last_seen: dict[str, datetime] = {}  # node -> last stamped application line
        self.fabric_links: list[Link] = []  # the cables of the fabric sources (engine/fabric.py)
        self.fabric_files: list[str] = []
        # The allocation guard (engine/normalise.py): what comes with a node outside the allocation is kept out.
        self.mapper = NodeMapper(list(ctx.workload.nodes), ctx.rank_to_node)
        self.outside = Outside()
        self._guarded = self.mapper.node_set

    def _kept_out(self, source: str, file: str | None, node: str, what: str) -> bool:
        """Is `node` a host outside the allocation (then counted as kept out)?"""
        if self.mapper.inside(node) is not None:
            return False
        self.outside.add(source, file, node, what)
        return True

    def add_candidate(self, c: Candidate) -> None:
        node = c.node
        if node is not None and self._guarded and node not in self._guarded and \
                self._kept_out(c.source, c.file, node, "line"):
            return
        self.extraction.add_events(c, self.store)

    def line_fold(self) -> LineFold:
        """What the line scanner counts a chatty file's copies of a line through (collect/fold.py)."""
        return LineFold(self.extraction, self.store)

    def add_document(self, source: str, fmt: str | None, file: str,
                     data: bytes | IO[bytes], *, node: str | None = None,
                     rank: int | None = None) -> tuple[int, list[tuple[int | None, str]]]:
        """A scheduler, metrics, flight-recorder or stack-dump document (bytes, or a
        stream for large metric files); `node` / `rank` are the file's placeholders.

        Returns the lines read and the (line, message) problems, which are
        also kept in `errors`.
        """
        if node is not None and self._kept_out(source, file, node, "document"):
            return 0, []
        try:
            res, problems = read_document(source, fmt, file, data, self.ctx, node=node, rank=rank, check=self.check)
        except OverflowError as exc:  # a reader's time at datetime's limits: year 1 or 9999, taken past by its zone
            res, problems = None, [(None, f"cannot read: a time past the years 1-9999 once its zone is applied "
                                          f"({exc})")]
        if res is not None and source == "fabric":
            from firstfault.extract.fabric import FabricResult

            if isinstance(res, FabricResult) and res.links:
                self.fabric_links.extend(res.links)
                self.fabric_files.append(file)
        if res is not None:
            for ev in res.events:
                self.store.add(ev)
        for line, msg in problems:
            self.errors.append(ErrorItem(source=source, file=file, line=line, message=msg))
        return (res.lines if res is not None else 0), problems

    def add_event(self, ev: Event) -> None:
        """An event read outside a line or a whole document: a followed metric series' new condition
        (collect/follow.py PromFollow), which reads the series with the metrics reader itself."""
        self.store.add(ev)

    def saw_node(self, node: str, last: datetime) -> None:
        if self._kept_out("application", None, node, "node activity record"):
            return
        prev = self.node_last_seen.get(node)
        self.node_last_seen[node] = max(prev, last) if prev else last

    def finish(self, now: datetime | None = None, *, provisional: bool = False) -> Verdict:
        """The verdict on what was fed so far. `provisional`: the attempt still runs (a follower judging it as
        its evidence is written): outcome `running`, and only a cause that stands while it runs is named
        (engine/verdict.py `provisional_root`). May be called again after more evidence was fed."""
        ctx, wl = self.ctx, self.ctx.workload
        settings = self.analyzer.catalog.settings
        allocation = list(wl.nodes)
        mapper = self.mapper
        extracted = self.store.events
        if not provisional:  # where the streams read here end (a traceback cut before its exception line)
            extracted = [*extracted, *self.extraction.open_ends()]
        if not allocation:  # one machine, one node: its spellings in the evidence grouped (engine/normalise.py)
            mapper.learn_names(self._names(extracted))
        fabric = None
        if self.fabric_links:  # the far end of every cabled port (engine/fabric.py); nothing without one
            from firstfault.engine import fabric as fab

            fabric = fab.Fabric(self.fabric_links, mapper)
            fabric.learn_addresses(self.store.addresses)
            extracted = fab.place(extracted, fabric)
        mapper.learn_addresses(self.store.addresses)  # (which node owns each address the lines named: a peer's)
        grace = timedelta(seconds=settings.clock_skew + 120)  # the window's slack on both sides
        placed = normalise(extracted, ctx, mapper, grace, self.outside)
        # An exception chain of envelopes only (extract/exceptions.py and extract/torchrun.py `at_end`: a launcher's
        # summary of a worker's failure, a bare EOFError, with nothing in the stream that says why) is no event of the
        # attribution: only a failure seen, which keeps a run whose end is not shown from being called well.
        wrapped = [e for e in placed if e.fields.get("envelope") is True]
        if wrapped:
            placed = [e for e in placed if e.fields.get("envelope") is not True]
        said = ports_said(self.store.ports_used, mapper)
        ready = ready_placed(self.store.net_ready, ctx, mapper, grace)
        events = terminal_lines(unused_ports(net_found_after(one_record_per_job(placed), ready), said))
        # A traceback cut before its exception line says least of all: it is read only where nothing else was
        # (below, after the error lines' own words), never beside another cause or symptom.
        cut = [e for e in events if e.fields.get("truncated") is True]
        if cut:
            events = [e for e in events if e.fields.get("truncated") is not True]
        if fabric is not None:
            fab.annotate(events, fabric)
        state, state_ev = terminal_state(events, wl.terminal_state)
        own = None  # the end as the job's own output says it: the last resort (engine/normalise.py own_end)
        if state_ev is None and wl.terminal_state:
            events.append(declared_state(ctx))
        elif state_ev is None and state is None:
            banner = banner_state(events)
            own = own_end(events) if banner is None else None
            if own is not None and not own.needs_clean:
                banner = own.event
            if banner is not None:
                events.append(banner)
                state = str(banner.fields["state"])
        if state and state.split()[0].upper() == "NODE_FAIL":
            events.extend(silent_nodes(self._last_seen(mapper), settings.silent_node_gap))
        if not (provisional or ended_in_failure(state)):
            # An exception that ended a thread of the workload, not its process (extract/traceback.py `thread`),
            # names a cause only in an attempt that failed (a thread the main one waited for, then the ranks'
            # timeouts): alone it is no failure of the run. So is a fabric daemon's record of a state a healthy host
            # is in as well (extract/fabricd.py `standing`: ibacm's partitions of a VM host's guests).
            events = [e for e in events if e.fields.get("thread") is not True and e.fields.get("standing") is not True]
        leads = find_leads(events, ctx.rank_to_node)
        att = attribute(events, self.analyzer.catalog.active(), settings, allocation, leads=leads)
        if own is not None and own.needs_clean and not (att.root or att.candidates or att.symptoms):
            # a training loop's end or a notice at exit says the run ended well only where nothing failed
            events.append(own.event)
            state = str(own.event.fields["state"])
        if att.root is None and not att.candidates and not provisional and ended_in_failure(state):
            last = self._worded(mapper) or ([] if att.symptoms else cut)
            if last:
                att = attribute([*events, *last], self.analyzer.catalog.active(), settings, allocation, leads=leads)
        if fabric is not None:
            fab.widen(att, fabric, settings.common_endpoint)
        ref = WorkloadRef(
            id=wl.id, attempt=wl.attempt, name=wl.name, scheduler=wl.scheduler,
            window=Window(start=iso(ctx.window_start), end=iso(ctx.window_end)),
            nodes=allocation,
        )
        verdict = build_verdict(
            catalog=self.analyzer.catalog, workload=ref, terminal_state=state, att=att,
            coverage=self.coverage, errors=[*self.errors, *self.outside.errors(), *self._overflow()], now=now,
            unrecognized=self._unrecognized(mapper), provisional=provisional,
            end_from=own.event.evidence if own is not None and state is not None else None,
            failure_seen=_seen([*cut, *wrapped, *(e for e in events if e.kind == "launcher.exit"
                                                  and e.fields.get("state") == "RESTART")]),
        )
        if fabric is not None:
            verdict.explanation.append(fab.note(fabric, self.fabric_files))
        return verdict

    def _names(self, events: list[Event]) -> Iterator[str | None]:
        """The host names the evidence places things on, once per piece of evidence that uses one (NodeMapper's
        learn_names): the events' nodes and hosts, the lines that named an address, the unrecognized lines' places,
        the nodes whose activity was reported, the rank map's and the hosts a fabric source cables."""
        for ev in events:
            yield ev.node
            host = ev.fields.get("host")
            if isinstance(host, str) and host != ev.node:
                yield host
        for _, _, node, host, _ in self.store.addresses:
            yield node
            yield host
        for node, host, _ in self.extraction.unrecognized.places():
            yield node
            yield host
        yield from self.node_last_seen
        yield from self.ctx.rank_to_node.values()
        for link in self.fabric_links:
            yield from (end.node for end in (link.a, link.b) if not end.switch)

    def _last_seen(self, mapper: NodeMapper) -> dict[str, datetime]:
        """node_last_seen by node: with no allocation, a machine's spellings are one node, last seen at its latest."""
        if mapper.nodes:
            return self.node_last_seen
        out: dict[str, datetime] = {}
        for name, t in self.node_last_seen.items():
            node = mapper.line_node(name, None, None) or name
            out[node] = max(out[node], t) if node in out else t
        return out

    def _overflow(self) -> list[ErrorItem]:
        """How many error-looking lines were only counted: their templates came past the group limit."""
        n = self.extraction.unrecognized.overflow
        return [ErrorItem(source="unrecognized", message=(
            f"{n} unrecognized error-looking line(s) were counted, not grouped: their templates came after the "
            f"first {MAX_GROUPS}"))] if n else []

    @staticmethod
    def _node_of(mapper: NodeMapper) -> Callable[[str | None, str | None, int | None], str | None]:
        def node_of(node: str | None, host: str | None, rank: int | None) -> str | None:
            if node:
                return mapper.host(node) or node
            if host:
                return mapper.host(host)
            return mapper.rank_to_node.get(rank) if rank is not None else None

        return node_of

    def _worded(self, mapper: NodeMapper) -> list[Event]:
        """The last resort of a failed attempt where nothing established a cause: the error-looking lines no
        extractor read, each read for the words a cause is said in by every stack (extract/traceback.py
        `words_cause`: a storage errno, an object store's own code, a port the job's set-up could not have).
        Each such line becomes its event, marked `words` (the verdict says where it was read); in template
        order, so the same evidence gives the same events."""
        out: list[Event] = []
        for g in sorted(self.extraction.unrecognized.groups(self._node_of(mapper), limit=MAX_GROUPS),
                        key=lambda u: u.template):
            d = words_cause(g.text)
            if d is None:
                continue
            fields: dict[str, FieldValue] = {k: v for k, v in d.fields.items() if v not in (None, "")}
            fields["words"] = True
            out.append(Event(kind=d.kind, time=g.time, node=g.nodes[0] if len(g.nodes) == 1 else None,
                             fields=fields, evidence=Evidence(source=g.source or "application", file=g.file,
                                                              line=g.line, text=g.text)))
        return out

    def _unrecognized(self, mapper: NodeMapper) -> list[Unrecognized]:
        node_of = self._node_of(mapper)
        return [
            Unrecognized(template=g.template, count=g.count, nodes=g.nodes,
                         first=UnrecognizedLine(file=g.file, line=g.line, time=iso(g.time), text=g.text))
            for g in self.extraction.unrecognized.groups(node_of)
        ]


def _seen(events: list[Event]) -> list[Evidence]:
    """The lines of the failures no rule reads (engine/verdict.py `failure_seen`), once each, in their order."""
    out: dict[tuple[str | None, int | None], Evidence] = {}
    for e in sorted(events, key=lambda e: (e.evidence.file, e.evidence.line or 0)):
        out.setdefault((e.evidence.file, e.evidence.line), e.evidence)
    return list(out.values())


class Analyzer:
    """Holds what is built once per catalog (extractors, scanners)."""

    def __init__(self, catalog: Catalog | None = None) -> None:
        self.catalog = catalog or shipped_catalog()
        self._scanners: dict[str, LineScanner] = {}

    def scanner(self, kind: str) -> LineScanner:
        if kind not in self._scanners:
            self._scanners[kind] = LineScanner(kind, all_line_extractors())
        return self._scanners[kind]

    def start(self, ctx: Context, check: Callable[[], None] | None = None) -> Analysis:
        """A new analysis of one attempt; `check` is its deadline, called inside long documents too."""
        return Analysis(self, ctx, check)

    def analyze_path(self, path: str, now: datetime | None = None, workers: int = 1) -> Verdict:
        # (the collector's young generation larger for the whole analysis, its bundle's loading and its finish too:
        # extract/memo.py scan_gc; analyze_bundle's and collect_bundle's own settings are the same one)
        with scan_gc():
            return self.analyze_bundle(load_bundle(path), now=now, workers=workers)

    def analyze_bundle(self, bundle: Bundle, now: datetime | None = None, workers: int = 1) -> Verdict:
        """`workers` > 1 reads the line files in that many processes (analysis/parallel.py): same verdict."""
        with scan_gc():
            analysis = self.start(bundle.context)
            if workers > 1:
                from firstfault.analysis.parallel import collect_bundle_parallel

                collect_bundle_parallel(self, bundle, analysis, workers)
            else:
                collect_bundle(self, bundle, analysis)
            return analysis.finish(now=now)


def analyze_request(analyzer: Analyzer, req: AnalyzeRequest, now: datetime | None = None) -> Verdict:
    from firstfault.collect.wire import records

    return analyze_observations(analyzer, req.context, records(req), now=now)


def analyze_observations(analyzer: Analyzer, context: WorkloadSpec, records: Iterable[Record],
                         now: datetime | None = None, check: Callable[[], None] | None = None) -> Verdict:
    """Feeds records (in their order) to an Analysis; the streaming (NDJSON) path uses this too.
    `check` (a deadline) is called inside each document as it is read."""
    from firstfault.collect.wire import DocumentObservation, LineObservation, NodeActivity

    analysis = analyzer.start(Context.from_spec(context), check)
    for r in records:
        if isinstance(r, LineObservation):
            analysis.add_candidate(r.candidate())
        elif isinstance(r, DocumentObservation):
            analysis.add_document(r.source, r.format, r.file, r.data(), node=r.node, rank=r.rank)
        elif isinstance(r, NodeActivity):
            analysis.saw_node(r.node, r.last_seen)
        elif isinstance(r, CoverageItem):
            analysis.coverage.append(r)
        else:
            analysis.errors.append(r)
    return analysis.finish(now=now)


def analyze(path: str, catalog: Catalog | None = None, now: datetime | None = None) -> Verdict:
    return Analyzer(catalog).analyze_path(path, now=now)


__all__ = ["Analysis", "Analyzer", "analyze", "analyze_observations", "analyze_request", "collect_bundle", "is_failure",
           "outcome_of"]
