"""Reading a bundle's line files in several processes, with the one-process verdict.

The line files (kernel, syslog, fabric manager, application logs) are the
bulk of a bundle and each is read on its own: its multi-line records, its
stamps and its kept events depend on that file only (EventStore's key holds
the file). So worker processes scan and extract whole files, and the parent
takes their results in the bundle's file order, exactly where the one-process
reader would have produced them: the events go to the EventStore in the same
order (and the facts its lines name, model.Address, PortsUsed and NetReady, to their lists),
and the lines a file offers as unrecognized, folded by line shape in the
worker (OfferFold), are taken by the one Unrecognized collector in the same
order, as offering them one by one would leave it (its grouping depends on
the order it sees lines in: Unrecognized.merge). Scheduler,
metric and other structured files stay in the parent. Hence the verdict is
the same, byte for byte, for any number of workers; tests/analysis/test_parallel.py
holds that.

The workers are forked (they inherit the analyzer with its compiled
prefilters and the parsed bundle); where fork is not available, or there
are fewer than two line files or under MIN_BYTES of them, the bundle is
read in this process.

A worker that dies (the kernel's OOM killer, a signal) breaks the pool
(concurrent.futures' BrokenProcessPool) instead of leaving the parent
waiting forever for its result: the files it and the other workers had not
yet handed back are then read in this process, in order, so the verdict is
still the one-process verdict, and a warning on stderr names the first file
of the group the dead worker was reading.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from firstfault import lazyre
from firstfault.bundle import Bundle, ResolvedSource, SourceFile
from firstfault.collect.events import EventStore
from firstfault.collect.evidence import EvidenceSink, ScannerSource, collect_bundle
from firstfault.collect.fold import LineFold
from firstfault.collect.scan import Extraction, FileStats, all_line_extractors
from firstfault.extract.base import Candidate
from firstfault.extract.memo import scan_gc
from firstfault.extract.unrecognized import Folded, FoldFull, OfferFold, Unrecognized, zeroed
from firstfault.model import LINE_SOURCES, Address, Event, Evidence, FieldValue, NetReady, PortsUsed
from firstfault.timeparse import TimeParser

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor


class KeepingSink(EvidenceSink, Protocol):
    """A sink that keeps the events itself (an Analysis, analysis/analyze.py): the workers' events go to its
    store, their folded offers to its extraction's Unrecognized collector."""

    store: EventStore
    extraction: Extraction

    def line_fold(self) -> LineFold: ...


@dataclass(slots=True, frozen=True)
class _Task:
    kind: str
    path: str
    rel: str
    node: str | None
    rank: int | None
    srun: bool
    ident: tuple[int, int] | None  # SourceFile.ident
    size: int | None  # SourceFile.size: its size when the bundle was loaded (None: not known, stat it)


@dataclass(slots=True)
class _Job:
    analyzer: ScannerSource
    tasks: list[_Task]
    tp: TimeParser
    hosts: list[str]
    extraction: Extraction | None = None


class _Reoffer:
    """Stands in for the Unrecognized collector of a file read again in the parent (one whose folded offers
    Unrecognized.merge cannot take): hands each offer on to `target`, in order, as the one-process reader
    does, holding none of them (a file of millions of offers costs no memory)."""

    def __init__(self, target: Unrecognized) -> None:
        self.target = target

    def offer(self, c: Candidate, body: str, host: str | None = None) -> None:
        self.target.offer(c, body, host, zeroed(body))


_JOB: _Job | None = None  # set in the parent just before the fork; the workers inherit it


def _scan_task(job: _Job, ex: Extraction, i: int,
               fold: bool = True) -> tuple[FileStats, list[Event], list[Address], list[PortsUsed], list[NetReady]]:
    t = job.tasks[i]
    # The file's events folded as the parent's store folds them (EventStore.add takes the counts
    # back): a chatty file sends its kept events, not a million copies.
    store = EventStore()

    def emit(c: Candidate) -> None:
        ex.add_events(c, store)

    stats = job.analyzer.scanner(t.kind).scan_file(
        t.path, t.rel, node=t.node, rank=t.rank, srun_prefix=t.srun, tp=job.tp, emit=emit,
        fold=LineFold(ex, store) if fold else None, ident=t.ident)
    for ev in ex.open_ends(t.rel):  # the file's streams end here (a traceback cut before its exception line)
        store.add(ev)
    return stats, store.events, store.addresses, store.ports_used, store.net_ready


# What a worker sends back, as flat tuples: a slotted dataclass (Event, Evidence, FileStats) pickles and
# unpickles through Python-level __getstate__/__setstate__, a call per object on each side (the parent's result
# thread unpickling every event of the bundle); a tuple of plain values is read and written in C.
_WireEvent = tuple[str, datetime | None, str | None, int | None, str | None, dict[str, FieldValue], datetime | None,
                   str, str | None, int | None, str, str | None]
_WireStats = tuple[int, int, int, int, int, datetime | None, list[tuple[int | None, str]], list[str]]


def _to_wire(ev: Event) -> _WireEvent:
    v = ev.evidence
    return (ev.kind, ev.time, ev.node, ev.rank, ev.device, ev.fields, ev.t_lo, v.source, v.file, v.line, v.text,
            v.query)


def _from_wire(w: _WireEvent) -> Event:
    kind, time, node, rank, device, fields, t_lo, source, file, line, text, query = w
    return Event(kind, time, node, Evidence(source, file, line, text, query), rank, device, fields, t_lo)


def _stats_to_wire(s: FileStats) -> _WireStats:
    return (s.lines, s.bytes, s.candidates, s.events, s.bad_utf8, s.last_time, s.errors, s.notes)


def _stats_from_wire(w: _WireStats) -> FileStats:
    return FileStats(*w)


_Result = tuple[str, _WireStats | None, list[_WireEvent], list[Address], list[PortsUsed], list[NetReady],
                list[Folded]]  # _work's


def _work(i: int) -> _Result:
    """A file's stats, events (as sent: _to_wire), facts (model.Address, model.PortsUsed, model.NetReady: plain
    tuples) and folded offers; no stats for a file of more line shapes than an OfferFold holds (FoldFull), which the
    parent reads itself."""
    job = _JOB
    assert job is not None
    if job.extraction is None:
        job.extraction = Extraction(all_line_extractors(), hosts=job.hosts)
        job.extraction.unrecognized = OfferFold()  # type: ignore[assignment]
    ex = job.extraction
    fold = ex.unrecognized
    assert isinstance(fold, OfferFold)
    try:
        stats, events, addresses, ports, ready = _scan_task(job, ex, i)
    except FoldFull:
        return job.tasks[i].rel, None, [], [], [], [], []
    return (job.tasks[i].rel, _stats_to_wire(stats), [_to_wire(ev) for ev in events], addresses, ports, ready,
            fold.take())


def _reoffer(job: _Job, i: int, target: Unrecognized) -> None:
    """Offers the lines of task i that are unrecognized to `target`, one by one (read again, in this process)."""
    ex = Extraction(all_line_extractors(), hosts=job.hosts)
    ex.unrecognized = _Reoffer(target)  # type: ignore[assignment]
    # Every line read (no fold): the parent offers each as the one-process reader would, its template
    # cache being nearly full.
    _scan_task(job, ex, i, fold=False)


def line_tasks(bundle: Bundle) -> list[_Task]:
    """The line files of a bundle, in the order collect_bundle reads them."""
    return [
        _Task(src.spec.kind, sf.path, sf.rel, sf.node, sf.rank, src.spec.rank_prefix == "srun", sf.ident, sf.size)
        for src in bundle.sources if src.spec.kind in LINE_SOURCES
        for sf in src.files
    ]


# Below this many bytes of line files, starting workers costs more than it saves (a small bundle is
# read in well under a second by one process).
MIN_BYTES = 32 << 20


def _size(t: _Task) -> int:
    """A task's file size for sharing files out: the one the bundle's loading found (SourceFile.size; a 16k-rank job's
    18k files were stat'ed again here, before any worker started), else its size now (0 where it cannot say: the
    scanner reports it). Only the groups depend on it, never what a file gives."""
    if t.size is not None:
        return t.size
    try:
        return os.stat(t.path).st_size
    except OSError:
        return 0


def _total_bytes(tasks: list[_Task]) -> int:
    total = 0
    for t in tasks:
        total += _size(t)
        if total >= MIN_BYTES:
            break
    return total


def default_workers() -> int:
    """One worker per CPU this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)




def _work_range(start: int, stop: int) -> list[_Result]:
    with scan_gc():  # (the collector's young generation larger while lines are read: extract/memo.py)
        return [_work(i) for i in range(start, stop)]


GROUP_BYTES = 8 << 20  # input bytes per group of files handed to a worker at once


def _groups(tasks: list[_Task], workers: int) -> list[tuple[int, int]]:
    """Consecutive file ranges of about GROUP_BYTES (and at most 32 files, fewer for small bundles)."""
    most = max(1, min(32, len(tasks) // (8 * workers)))
    out: list[tuple[int, int]] = []
    start, size = 0, 0
    for i, t in enumerate(tasks):
        size += _size(t)
        if i + 1 - start >= most or size >= GROUP_BYTES:
            out.append((start, i + 1))
            start, size = i + 1, 0
    if start < len(tasks):
        out.append((start, len(tasks)))
    return out


def _in_order(pool: ProcessPoolExecutor, tasks: list[_Task], workers: int) -> Iterator[_Result]:
    """The results of the tasks in order, with a bounded number of file groups in flight: a parent
    that falls behind (a busy machine) holds a few groups' results (their events and the lines
    offered as unrecognized, which grow with the files), not the whole bundle's. Once a worker has
    died, the groups not yet handed back are read here (_work_range in this process: what a worker
    gives, as every worker's results are the same whichever worker reads a file)."""
    from concurrent.futures.process import BrokenProcessPool

    ranges = iter(_groups(tasks, workers))
    pending: deque[tuple[tuple[int, int], Future[list[_Result]] | None]] = deque()
    broken = False  # known to the submitter (a submit to a broken pool raises) or to the reader
    warned = False

    def submit() -> None:
        nonlocal broken
        r = next(ranges, None)
        if r is None:
            return
        if not broken:
            try:
                pending.append((r, pool.submit(_work_range, *r)))
                return
            except BrokenProcessPool:
                broken = True
        pending.append((r, None))

    for _ in range(2 * workers):
        submit()
    while pending:
        r, fut = pending.popleft()
        done: list[_Result] | None = None
        if fut is not None:
            try:
                done = fut.result()
            except BrokenProcessPool:
                # The first group not handed back: the dead worker's, or one still waiting for a worker.
                if not warned:
                    print(f"firstfault: a reader process died (killed, or out of memory?); the files not yet "
                          f"handed back, from {tasks[r[0]].rel} on, are read in this process", file=sys.stderr)
                    warned = True
                broken = True
        if done is None:
            done = _work_range(*r)
        submit()
        yield from done


def collect_bundle_parallel(analyzer: ScannerSource, bundle: Bundle, analysis: KeepingSink, workers: int) -> None:
    """collect_bundle with the line files read by `workers` processes (see the module docstring)."""
    global _JOB
    tasks = line_tasks(bundle)
    # Forking a process that runs other threads can copy a lock some thread holds, and the child then
    # waits for it forever (seen: a test process with server threads). With threads about, one process.
    # (multiprocessing and concurrent.futures imported here, where a pool may start: 10 ms of every start-up, which
    # a bundle read in one process does not use)
    if workers < 2 or len(tasks) < 2 or threading.active_count() > 1 or _total_bytes(tasks) < MIN_BYTES:
        collect_bundle(analyzer, bundle, analysis)
        return
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        collect_bundle(analyzer, bundle, analysis)
        return
    from concurrent.futures import ProcessPoolExecutor

    ctx = bundle.context
    for kind in {t.kind for t in tasks}:
        analyzer.scanner(kind)  # compiled once here, inherited by every worker
    _JOB = _Job(analyzer, tasks, TimeParser(ctx.tz, ctx.window_start, ctx.window_end), list(ctx.workload.nodes))
    try:
        # (each worker writes the regex code it generated to the on-disk entry when it ends: lazyre)
        with ProcessPoolExecutor(min(workers, len(tasks)), mp_context=multiprocessing.get_context("fork"),
                                 initializer=lazyre.write_at_worker_exit) as pool:
            results = _in_order(pool, tasks, workers)
            unrecognized = analysis.extraction.unrecognized

            index = {t.rel: i for i, t in enumerate(tasks)}
            # The files the bundle lists once (a file two sources list is read twice, into the same signatures: its
            # second reading's events count on the first's, EventStore.add)
            once = {rel for rel, n in Counter(t.rel for t in tasks).items() if n == 1}

            def scan(kind: str, src: ResolvedSource, sf: SourceFile, tp: TimeParser) -> FileStats:
                rel, stats, events, addresses, ports, ready, folded = next(results)
                if rel != sf.rel:  # the reader's order and the tasks' order are one order
                    raise RuntimeError(f"parallel reader out of step: got {rel}, expected {sf.rel}")
                if stats is None:
                    # More line shapes than a worker folds (a million distinct error-looking lines): read here,
                    # in the reading order, as the one-process reader does, in its bounded memory.
                    return analyzer.scanner(kind).scan_file(
                        sf.path, sf.rel, node=sf.node, rank=sf.rank, srun_prefix=src.spec.rank_prefix == "srun",
                        tp=tp, emit=analysis.add_candidate, fold=analysis.line_fold(), ident=sf.ident)
                if rel in once:
                    analysis.store.add_kept([_from_wire(w) for w in events])
                else:
                    add = analysis.store.add
                    for w in events:
                        add(_from_wire(w))
                analysis.store.add_addresses(addresses)
                analysis.store.add_ports_used(ports)
                analysis.store.add_net_ready(ready)
                if not unrecognized.merge(folded):
                    # The template cache is nearly full (a bundle of very many line shapes): this file's
                    # lines are offered one by one, as the one-process reader offers them.
                    assert _JOB is not None
                    _reoffer(_JOB, index[rel], unrecognized)
                return _stats_from_wire(stats)

            collect_bundle(analyzer, bundle, analysis, scan=scan)
    finally:
        _JOB = None
