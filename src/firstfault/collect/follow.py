"""Following a running attempt's evidence as it is written (`watch --follow`), each source with a cursor.

A follower is one connector's evidence of one running attempt, read a piece at a
time: `poll(sink, now)` feeds what was written since the last poll into the
attempt's EvidenceSink (the engine's Analysis) and returns how many candidate
lines and documents it fed; `cursor()` is where it got to, as JSON, which the
daemon stores; `coverage()` is what it has read so far. Every source is read
by the code its connector reads it with after the attempt ended, so the same
lines become the same candidates:

- files (`FileFollow`): each resolved file is tailed from a byte offset by the
  line scanner (`LineScanner.scan_bytes`: whole lines only, line numbers and
  the last stamp carried on); the templates are resolved again every
  `resolve_every` seconds, so a rank's file that appears later is followed
  too; a file replaced (another inode) or truncated is read again from its
  start, and the verdict's errors say so. Flight-recorder and stack dumps are
  read whole, once, when their size stopped changing.
- Loki (`LokiFollow`): query_range over [cursor, now - lag) per poll, with
  the connector's own paging, line filter and stream readers kept per stream.
- Kubernetes pod logs (`PodLogFollow`): one `follow=true` stream per
  container, read by a thread into a bounded queue; a stream that ends is
  opened again from `sinceSeconds` before its last line's stamp, the lines
  up to it dropped.
- Prometheus (`PromFollow`): an instant query per `interval`, the samples
  kept per series (at most `max_samples` each) and judged as one
  prometheus-json document, whose events not yet fed are fed.

A cursor says what a follower has read. After a restart the daemon reads
each source again from its start, to rebuild the engine's state (a line is
judged with the events before it); a file follower compares with the stored
cursor, and a file that is now shorter, or another file, is reported in the
verdict's errors as evidence lost while the daemon was stopped (Loki keeps
its history, the pod logs and Prometheus are read from the start again).
What was sent is the provisional ledger's business (store/provisional.py),
not the cursor's: a cause is never sent twice.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from firstfault.bundle import Context, SourceFile, SourceSpec, open_evidence, resolve_source
from firstfault.collect.evidence import EvidenceSink, _collect_document
from firstfault.collect.files import scanners_for
from firstfault.collect.lines import StreamReader, WordFilter, coverage_item, match_node
from firstfault.collect.scan import MAX_LINE, binary_share
from firstfault.extract.documents import PER_FILE_DOCUMENTS
from firstfault.model import LINE_SOURCES, CoverageItem, ErrorItem
from firstfault.timeparse import Stamp, TimeParser

MAX_READ = 64 << 20  # bytes read from one file in one poll: the rest waits for the next one
Cursor = dict[str, Any]


class Follower(Protocol):
    name: str

    def poll(self, sink: EvidenceSink, now: datetime) -> int: ...

    def cursor(self) -> Cursor: ...

    def coverage(self) -> list[CoverageItem]: ...

    def close(self) -> None: ...


def _iso(t: datetime | None) -> str | None:
    return t.astimezone(UTC).isoformat() if t is not None else None


def _time(s: object) -> datetime | None:
    if not isinstance(s, str):
        return None
    try:
        t = datetime.fromisoformat(s)
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


# ---------------------------------------------------------------------------------------------------------- files


@dataclass(slots=True)
class _Tail:
    path: str
    rel: str
    kind: str
    node: str | None
    rank: int | None
    srun: bool
    dev: int = -1
    ino: int = -1
    offset: int = 0
    lines: int = 0
    stamp: Stamp | None = None
    last_time: datetime | None = None
    dead: str | None = None  # why it is no longer read (binary, compressed)
    pending: int = 0  # the size seen last (documents: read once the size stops changing)
    done: bool = False  # a document read


class FileFollow:
    """Tails an attempt's files (a FilesConnector's source templates under `root`)."""

    name = "files"

    def __init__(self, sources: Sequence[SourceSpec], root: Path, ctx: Context, words: Sequence[str], *,
                 cursor: Cursor | None = None, resolve_every: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.sources = list(sources)
        self.root = Path(root)
        self.ctx = ctx
        self.scanners = scanners_for(words)
        self.tp = TimeParser(ctx.tz, ctx.window_start, ctx.window_end)
        self.resolve_every = resolve_every
        self._clock = clock
        self._resolved_at: float | None = None
        self.tails: dict[str, _Tail] = {}
        self._order: list[str] = []
        self.expected: dict[str, set[str]] = {}
        self.errors_seen: set[str] = set()
        # What the daemon read before a restart, by file: (dev, inode, offset).
        self._before: dict[str, tuple[int, int, int]] = {}
        for rel, v in ((cursor or {}).get("files") or {}).items():
            if isinstance(v, list) and len(v) >= 3 and all(isinstance(x, int) for x in v[:3]):
                self._before[str(rel)] = (v[0], v[1], v[2])

    def _resolve(self) -> None:
        """The files the templates name now, on the allocation's nodes and ranks only (a Blueprint's root
        holds the whole cluster's logs). A template whose only placeholder is `{node}` is filled in per node,
        not globbed; a template's errors, a file not written yet, are the final analysis's to report."""
        nodes = list(self.ctx.workload.nodes)
        on = set(nodes)
        ranks = self.ctx.rank_to_node
        for i, spec in enumerate(self.sources):
            self.expected.setdefault(spec.kind, set()).update(nodes)
            direct = "{node}" in spec.path and "{rank}" not in spec.path and not any(c in spec.path for c in "*?[")
            files: list[tuple[str, str, str | None, int | None]]
            if direct:
                files = [(str(self.root / spec.path.replace("{node}", n)), spec.path.replace("{node}", n), n, None)
                         for n in nodes]
            else:
                src = resolve_source(self.root, i, spec, nodes, ranks)
                files = [(sf.path, sf.rel, sf.node, sf.rank) for sf in src.files
                         if (sf.node is None or sf.node in on) and (sf.rank is None or not ranks or sf.rank in ranks)]
            for path, rel, node, rank in files:
                if rel in self.tails:
                    continue
                t = _Tail(path, rel, spec.kind, node, rank, spec.rank_prefix == "srun")
                if spec.kind in LINE_SOURCES and path.endswith(".gz"):
                    t.dead = "compressed: not followed (read whole by the final analysis)"
                elif spec.kind not in LINE_SOURCES and spec.kind not in PER_FILE_DOCUMENTS:
                    t.dead = f"{spec.kind} files are not followed (read by the final analysis)"
                self.tails[rel] = t
        self._order = sorted(self.tails)

    def poll(self, sink: EvidenceSink, now: datetime) -> int:
        tick = self._clock()
        if self._resolved_at is None or tick - self._resolved_at >= self.resolve_every:
            self._resolved_at = tick
            self._resolve()
        fed = 0
        for rel in self._order:
            t = self.tails[rel]
            if t.dead is not None or t.done:
                continue
            try:
                st = os.stat(t.path)
            except FileNotFoundError:
                continue  # not written yet, or rotated away: the next resolve finds what is there
            except OSError as exc:
                self._error(sink, t, f"cannot stat: {exc.strerror or exc}")
                continue
            if t.kind not in LINE_SOURCES:
                fed += self._document(sink, t, st.st_size)
                continue
            if (st.st_dev, st.st_ino) != (t.dev, t.ino) or st.st_size < t.offset:
                if t.dev != -1:
                    self._error(sink, t, "replaced or truncated while followed: read again from its start")
                elif rel in self._before:
                    dev, ino, off = self._before[rel]
                    if (dev, ino) != (st.st_dev, st.st_ino) or st.st_size < off:
                        self._error(sink, t, "replaced or truncated while the follower was stopped: the lines it "
                                             "held then are not in this verdict")
                t.dev, t.ino, t.offset, t.lines, t.stamp = st.st_dev, st.st_ino, 0, 0, None
            if st.st_size > t.offset:
                fed += self._read(sink, t, st.st_size)
        return fed

    def _read(self, sink: EvidenceSink, t: _Tail, size: int) -> int:
        try:
            with open_evidence(t.path, (t.dev, t.ino)) as fh:  # no link followed; the very file stat'ed
                fh.seek(t.offset)
                data = fh.read(min(size - t.offset, MAX_READ))
        except OSError as exc:
            self._error(sink, t, f"cannot read: {exc.strerror or exc}")
            return 0
        if t.offset == 0 and binary_share(data[:8192]) > 0.30:
            t.dead = "binary content: skipped"
            self._error(sink, t, t.dead)
            return 0
        cut = data.rfind(b"\n")
        if cut < 0:
            if len(data) <= MAX_LINE:
                return 0  # a line still being written
            data, used = data[:MAX_LINE] + b"\n", len(data)  # clipped, as the scanner clips it
        else:
            data, used = data[: cut + 1], cut + 1
        count = [0]

        def emit(c: Any) -> None:
            count[0] += 1
            sink.add_candidate(c)

        stats, t.stamp = self.scanners.scanner(t.kind).scan_bytes(
            data, t.rel, node=t.node, rank=t.rank, srun_prefix=t.srun, tp=self.tp, emit=emit, line_base=t.lines,
            carried=t.stamp)
        t.offset += used
        t.lines += stats.lines
        if stats.last_time is not None:
            t.last_time = stats.last_time
            if t.kind == "application" and t.node:
                sink.saw_node(t.node, stats.last_time)
        return count[0]

    def _document(self, sink: EvidenceSink, t: _Tail, size: int) -> int:
        if size == 0 or size != t.pending:  # still being written: read once its size held for a poll
            t.pending = size
            return 0
        t.done = True
        fmt = next((s.format for s in self.sources if s.kind == t.kind), None)
        _collect_document(sink, t.kind, fmt, SourceFile(path=t.path, rel=t.rel, node=t.node, rank=t.rank),
                          node=t.node, rank=t.rank)
        return 1

    def _error(self, sink: EvidenceSink, t: _Tail, msg: str) -> None:
        key = f"{t.rel}\0{msg}"
        if key not in self.errors_seen:
            self.errors_seen.add(key)
            sink.errors.append(ErrorItem(source=t.kind, file=t.rel, message=msg))

    def cursor(self) -> Cursor:
        return {"files": {rel: [t.dev, t.ino, t.offset, t.lines] for rel, t in sorted(self.tails.items())
                          if t.dev != -1}}

    def coverage(self) -> list[CoverageItem]:
        out = []
        nodes = list(self.ctx.workload.nodes)
        for kind in sorted({s.kind for s in self.sources if s.kind in LINE_SOURCES}):
            tails = [t for t in self.tails.values() if t.kind == kind and t.dead is None]
            read = [t for t in tails if t.lines]
            seen = {t.node for t in read if t.node} or (set(nodes) if any(t.node is None for t in read) else set())
            out.append(coverage_item(kind, expected=sorted(self.expected.get(kind) or nodes), seen=seen,
                                     lines=sum(t.lines for t in tails), files=len(read), failures=0,
                                     requests=len(tails), notes=["followed while the attempt runs"]))
        return out

    def close(self) -> None:
        """Nothing held open between polls."""


# ----------------------------------------------------------------------------------------------------------- Loki


class LokiFollow:
    """An attempt's Loki streams over [cursor, now - lag), poll after poll (collect/loki.py's reading)."""

    name = "loki"

    def __init__(self, conn: Any, ctx: Context, words: Sequence[str], *, lag: timedelta = timedelta(seconds=2)
                 ) -> None:
        from firstfault.collect.http import make_client
        from firstfault.collect.loki import _ns, line_filter

        self.conn = conn  # a collect.loki.LokiConnector
        self.ctx = ctx
        self.tasks = conn._tasks(ctx)
        self.filter = line_filter(words)
        self.words = WordFilter(words)
        self.tp = TimeParser(ctx.tz, ctx.window_start, ctx.window_end)
        self.lag = lag
        start = (ctx.window_start or datetime.now(UTC)) - conn.margin
        self.since = _ns(start)  # a restart reads again from the start (module docstring)
        self.readers: dict[tuple[str, Any], StreamReader] = {}
        self.requests = self.failures = 0
        self.seen: dict[str, set[str]] = {}
        self._client = make_client(conn.http, conn.base_url)

    def poll(self, sink: EvidenceSink, now: datetime) -> int:
        from firstfault.collect.loki import _from_ns, _labels_text, _ns, _Result

        until = _ns(now - self.lag)
        if until <= self.since:
            return 0
        fed = 0
        nodes = list(self.ctx.workload.nodes)
        emitted = [0]

        def emit(c: Any) -> None:
            emitted[0] += 1
            sink.add_candidate(c)

        for task in self.tasks:
            res = _Result(task)
            query = f"{task.selector} {self.filter}".strip()
            for a, b in self.conn._chunks(_from_ns(self.since), _from_ns(until)):
                self.conn._read_chunk(self._client, res, query, a, b)
            self.requests += res.requests
            self.failures += res.failures
            for msg in res.errors:
                sink.errors.append(ErrorItem(source=task.kind, file=f"loki:{task.selector}", message=msg))
            for key, values in sorted(res.streams.items()):
                labels = dict(key)
                node = match_node(labels.get(self.conn.node_label), nodes) or task.node \
                    or labels.get(self.conn.node_label)
                reader = self.readers.get((task.kind, key))
                if reader is None:
                    rank = None
                    if self.conn.rank_label and str(labels.get(self.conn.rank_label, "")).isdigit():
                        rank = int(labels[self.conn.rank_label])
                    reader = self.readers[(task.kind, key)] = StreamReader(
                        source=task.kind, file=f"loki:{_labels_text(key)}", node=node, rank=rank, words=self.words,
                        tp=self.tp, emit=emit, srun_prefix=task.kind in self.conn.srun_prefix)
                for ts, line in sorted(values, key=lambda v: v[0]):
                    reader.feed(line, _from_ns(ts))
                if node:
                    self.seen.setdefault(task.kind, set()).add(node)
                    lt = reader.stats.last_time
                    if task.kind == "application" and lt is not None:
                        sink.saw_node(node, lt)
        fed += emitted[0]
        self.since = until  # end is exclusive: the next poll starts here, nothing twice, nothing skipped
        return fed

    def cursor(self) -> Cursor:
        return {"ns": self.since}

    def coverage(self) -> list[CoverageItem]:
        nodes = list(self.ctx.workload.nodes)
        out = []
        for kind in self.conn.queries:
            rs = [r for (k, _), r in self.readers.items() if k == kind]
            out.append(coverage_item(kind, expected=nodes, seen=self.seen.get(kind, set()),
                                     lines=sum(r.stats.lines for r in rs), files=len(rs), failures=self.failures,
                                     requests=max(self.requests, 1), notes=["followed while the attempt runs"]))
        return out

    def close(self) -> None:
        self._client.close()


# --------------------------------------------------------------------------------------------- Kubernetes pod logs


@dataclass(slots=True)
class _PodStream:
    file: str
    node: str | None
    rank: int | None
    reader: StreamReader
    lines: queue.Queue[tuple[datetime | None, str]]
    last: datetime | None = None  # the last line's stamp read
    at_last: int = 0  # lines read with that stamp (dropped when the stream is opened again)
    thread: threading.Thread | None = None
    ended: bool = False
    error: str | None = None
    # The response being read, while its thread reads it. Only that thread reads and closes it; close() only
    # shuts the socket's read side (under `lock`), which ends a blocked read as an end of stream.
    resp: Any = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class PodLogFollow:
    """The attempt's containers' logs, each followed (`follow=true`) by a thread into a bounded queue."""

    name = "k8s-pod-logs"
    QUEUE = 100_000  # lines a stream may hold between polls; its thread waits while the queue is full
    IDLE = 300.0  # seconds a followed stream may stay silent before it is opened again (a dead connection)

    def __init__(self, conn: Any, ctx: Context, words: Sequence[str], *, relist_every: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.conn = conn  # a collect.k8slogs.K8sPodLogsConnector
        self.ctx = ctx
        self.words = WordFilter(words)
        self.tp = TimeParser(ctx.tz, ctx.window_start, ctx.window_end)
        self.streams: dict[str, _PodStream] = {}
        self.relist_every = relist_every
        self._clock = clock
        self._listed_at: float | None = None
        self._stop = threading.Event()
        self._sink: list[EvidenceSink] = []
        self.errors: list[str] = []

    def _list(self) -> None:
        pods, _failed = self.conn._list_pods(self.errors)
        for pod in pods:
            for s in self.conn._streams(pod):
                if s.previous:
                    continue  # a restarted container's last instance is read by the final analysis
                file = f"k8s:{self.conn.namespace}/{s.file}"
                if file in self.streams:
                    continue
                reader = StreamReader(source=self.conn.source, file=file, node=s.node, rank=s.rank,
                                      words=self.words, tp=self.tp, emit=self._emit)
                ps = _PodStream(file, s.node, s.rank, reader, queue.Queue(self.QUEUE))
                ps.thread = threading.Thread(target=self._follow, args=(ps, s.pod, s.container), daemon=True,
                                             name=f"ff-follow-{s.pod}")
                self.streams[file] = ps
                ps.thread.start()

    def _emit(self, c: Any) -> None:
        self._emitted += 1
        self._sink[0].add_candidate(c)

    def _follow(self, ps: _PodStream, pod: str, container: str) -> None:
        """Worker thread: the stream, opened again while the pod runs, lines past the last one read."""
        from urllib3.exceptions import HTTPError

        from firstfault.collect.k8slogs import _lines, split_timestamp

        while not self._stop.is_set():
            since = None
            if ps.last is not None:
                since = max(1, math.ceil((datetime.now(UTC) - ps.last).total_seconds()) + 1)
            try:
                resp = self.conn.api.read_namespaced_pod_log(
                    pod, self.conn.namespace, container=container, follow=True, timestamps=True,
                    since_seconds=since, _preload_content=False,
                    _request_timeout=(self.conn.http.connect_timeout, self.IDLE))
            except Exception as exc:  # the API said no (the pod is gone): the final analysis reads what is left
                ps.error = f"follow {pod}/{container}: {type(exc).__name__}: {exc}"
                ps.ended = True
                return
            with ps.lock:
                if self._stop.is_set():  # close() ran while the stream was being opened: nothing to read
                    resp.close()
                    return
                ps.resp = resp
            same = 0
            try:
                for line in _lines(resp.stream(1 << 16)):
                    t, text = split_timestamp(line)
                    if ps.last is not None and t is not None:
                        if t < ps.last:
                            continue
                        if t == ps.last:
                            same += 1
                            if same <= ps.at_last:
                                continue
                    ps.lines.put((t, text))
                    if t is not None and t != ps.last:
                        ps.last, ps.at_last, same = t, 1, 1
                    elif t is not None:
                        ps.at_last = same
                    if self._stop.is_set():
                        return
            except (HTTPError, OSError, ValueError):
                pass  # cut, or shut by close(): opened again below unless stopping
            finally:
                with ps.lock:
                    ps.resp = None
                if self._stop.is_set():
                    resp.close()  # a stream let go of in the middle: its connection is not reused
                resp.release_conn()
            self._stop.wait(1.0)  # the stream ended (container done, or the API server let go)

    def poll(self, sink: EvidenceSink, now: datetime) -> int:
        tick = self._clock()
        if self._listed_at is None or tick - self._listed_at >= self.relist_every:
            self._listed_at = tick
            self._list()
        self._sink[:] = [sink]
        self._emitted = 0
        for ps in self.streams.values():
            while True:
                try:
                    t, text = ps.lines.get_nowait()
                except queue.Empty:
                    break
                ps.reader.feed(text, t)
            if ps.error:
                sink.errors.append(ErrorItem(source=self.conn.source, file=ps.file, message=ps.error))
                ps.error = None
            lt = ps.reader.stats.last_time
            if self.conn.source == "application" and ps.node and lt is not None:
                sink.saw_node(ps.node, lt)
        for msg in self.errors:
            sink.errors.append(ErrorItem(source=self.conn.source, file=f"k8s:{self.conn.namespace}", message=msg))
        self.errors.clear()
        return self._emitted

    _emitted = 0

    def cursor(self) -> Cursor:
        return {"streams": {f: [_iso(ps.last), ps.at_last] for f, ps in sorted(self.streams.items())}}

    def coverage(self) -> list[CoverageItem]:
        nodes = list(self.ctx.workload.nodes)
        seen = {ps.node for ps in self.streams.values() if ps.node and ps.reader.stats.lines}
        return [coverage_item(self.conn.source, expected=nodes, seen=seen,
                              lines=sum(ps.reader.stats.lines for ps in self.streams.values()),
                              files=len(self.streams), failures=0, requests=max(len(self.streams), 1),
                              notes=["followed while the attempt runs"])]

    def close(self) -> None:
        """Stop every stream's thread: a read in progress ends (its socket's read side shut, which the read
        sees as the end of the stream), a thread waiting on a full queue is let through; each thread then
        closes its own response. Closing the response here instead, under the thread still reading it,
        made the read fail inside http.client (AttributeError on its emptied file)."""
        self._stop.set()
        for ps in self.streams.values():
            with ps.lock:
                if ps.resp is not None:
                    with contextlib.suppress(OSError, ValueError, RuntimeError):
                        ps.resp.shutdown()  # ValueError/RuntimeError: its connection already let go of
            with contextlib.suppress(queue.Empty):
                while True:  # a put() blocked on a full queue returns, and the thread sees the stop
                    ps.lines.get_nowait()
        for ps in self.streams.values():
            if ps.thread is not None:
                ps.thread.join(timeout=2)


# ------------------------------------------------------------------------------------------------------ Prometheus


class PromFollow:
    """Instant queries on a period; each series' samples kept and judged as one query_range-shaped answer."""

    name = "promql"

    def __init__(self, conn: Any, ctx: Context, metrics: Sequence[str], *, interval: float = 15.0,
                 max_samples: int = 2880, clock: Callable[[], float] = time.monotonic) -> None:
        from firstfault.collect.http import make_client

        self.conn = conn  # a collect.promql.PromQLConnector
        self.ctx = ctx
        self.queries = conn.queries(list(ctx.workload.nodes), metrics)
        self.interval = interval
        self.max_samples = max_samples
        self._clock = clock
        self._at: float | None = None
        self.series: dict[str, tuple[dict[str, str], deque[tuple[float, str]]]] = {}
        self.fed: set[tuple[object, ...]] = set()
        self.requests = self.failures = 0
        self.changed = False
        self.last: float | None = None
        self._client = make_client(conn.http, conn.base_url)

    def poll(self, sink: EvidenceSink, now: datetime) -> int:
        from firstfault.collect.http import FetchError, get
        from firstfault.extract.documents import read_document

        tick = self._clock()
        if self._at is not None and tick - self._at < self.interval:
            return 0
        self._at = tick
        for q in self.queries:
            self.requests += 1
            try:
                resp = get(self._client, self.conn.http, "/api/v1/query", {"query": q,
                                                                            "time": f"{now.timestamp():.3f}"})
                body = json.loads(resp.content)
                result = body["data"]["result"]
            except (FetchError, ValueError, KeyError, TypeError) as exc:
                self.failures += 1
                sink.errors.append(ErrorItem(source="metrics", file=f"promql:{q}", message=f"instant query: {exc}"))
                continue
            for item in result if isinstance(result, list) else []:
                labels, value = item.get("metric"), item.get("value")
                if not isinstance(labels, dict) or not isinstance(value, list) or len(value) != 2:
                    continue
                key = json.dumps(labels, sort_keys=True)
                entry = self.series.get(key)
                if entry is None:
                    entry = self.series[key] = ({str(k): str(v) for k, v in labels.items()},
                                                deque(maxlen=self.max_samples))
                if not entry[1] or float(value[0]) > entry[1][-1][0]:
                    entry[1].append((float(value[0]), str(value[1])))
                    self.changed = True
        self.last = now.timestamp()
        if not self.changed:
            return 0
        self.changed = False
        doc = {"status": "success", "data": {"resultType": "matrix", "result": [
            {"metric": labels, "values": [[t, v] for t, v in samples]} for labels, samples in
            (self.series[k] for k in sorted(self.series))]}}
        body, _hosts = self.conn._normalise(json.dumps(doc).encode(), list(self.ctx.workload.nodes))
        res, _problems = read_document("metrics", "prometheus-json", "promql:follow", body, self.ctx)
        fed = 0
        if res is not None:
            add = getattr(sink, "add_event", None)
            for ev in res.events:
                fkey = (ev.kind, ev.node, ev.device, ev.fields.get("condition"), _iso(ev.time))
                if fkey in self.fed or add is None:
                    continue
                self.fed.add(fkey)
                add(ev)
                fed += 1
        return fed

    def cursor(self) -> Cursor:
        return {"last": self.last}

    def coverage(self) -> list[CoverageItem]:
        nodes = list(self.ctx.workload.nodes)
        from firstfault.extract.metric_formats import host_of

        seen = {n for labels, _ in self.series.values() if (n := match_node(host_of(labels), nodes))}
        return [coverage_item("metrics", expected=nodes, seen=seen,
                              lines=sum(len(s) for _, s in self.series.values()), files=len(self.queries),
                              failures=self.failures, requests=max(self.requests, 1),
                              notes=["instant queries while the attempt runs"])]

    def close(self) -> None:
        self._client.close()


__all__ = ["MAX_READ", "FileFollow", "Follower", "LokiFollow", "PodLogFollow", "PromFollow"]
