"""Loki: an attempt's log streams through /loki/api/v1/query_range.

Per source kind the operator gives a LogQL stream selector template, e.g.
`{job="varlogs", host="{node}"}` for kernel logs or
`{namespace="train", pod=~"{workload}-.*"}` for the application. Placeholders:
`{node}` (one query per allocation node), `{nodes}` (an RE2 alternation of
all node names, for one query over all of them), `{workload}` (the workload
name, else its id) and `{id}`. The catalog's prefilter is pushed into LogQL
as one `|~` line filter, so Loki ships only the lines that can matter.

Reading follows the documented API: `direction=forward`, `start` inclusive
and `end` exclusive in nanoseconds, at most `limit` entries per answer. Long
windows are split into chunks no longer than `max_window`; a chunk whose
answer holds `limit` entries is read on from the last entry's timestamp,
dropping the entries of that nanosecond already seen (logcli's rule), so no
entry is lost or doubled at a page boundary. A failed chunk is an error and
the other chunks are kept.

A probe (`backward`, `limit=1`, no line filter) tells whether a node wrote
anything in the window and when it last did: that is the coverage and, for
application logs, the silent-node clock NODE_FAIL needs. `{node}` templates
get one probe per node; other templates list their streams with
`/loki/api/v1/series` and probe each stream. Line numbers are positions in
the stream Loki returned (after the line filter), not in the original file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import httpx

from firstfault.bundle import Context
from firstfault.collect.evidence import EvidenceSink
from firstfault.collect.http import FetchError, HttpOptions, describe, get, make_client
from firstfault.collect.lines import StreamReader, WordFilter, coverage_item, match_node, remote_window
from firstfault.model import LINE_SOURCES, ErrorItem
from firstfault.querytext import label_value, quoted, re2_literal
from firstfault.timeparse import TimeParser

QUERY_RANGE = "/loki/api/v1/query_range"
SERIES = "/loki/api/v1/series"

StreamKey = tuple[tuple[str, str], ...]


# The most a line filter may weigh, percent-encoded as it travels in the query string: httpx refuses a URL component
# over 65,536 characters (httpx/_urlparse.py MAX_URL_LENGTH), and proxies in front of Loki often take less.
FILTER_BUDGET = 32_768
# The word lengths a filter that would weigh more is cut to, in turn (the shortest last).
_CUTS: tuple[int | None, ...] = (None, 48, 32, 24, 16, 12, 8, 6, 4)


def _coarse(words: set[str], cut: int | None) -> list[str]:
    """The words cut to their first `cut` characters, without any that another starts: a line holding one of the
    words holds one of these, so the filter keeps every line the words keep (the Blueprint's own WordFilter reads
    the lines Loki ships with the words themselves). In sorted order the words a word starts follow it at once, so
    one pass over them finds them."""
    kept: list[str] = []
    for w in sorted({w[:cut] if cut else w for w in words}):
        if not (kept and w.startswith(kept[-1])):
            kept.append(w)
    return kept


def line_filter(words: Sequence[str], budget: int = FILTER_BUDGET) -> str:
    """`|~ "a|b|c"`: one regex line filter that keeps a line holding any of the words. Where the words would weigh
    more than `budget` in the query string, a coarser filter of their prefixes that keeps the same lines and more
    (_coarse): Loki ships a few more lines, never fewer."""
    present = {w for w in words if w}
    flt = ""
    for cut in _CUTS:
        alternation = "|".join(re2_literal(w) for w in _coarse(present, cut))
        flt = f"|~ {quoted(alternation)}" if alternation else ""
        if len(quote(flt, safe="")) <= budget:
            return flt
    return flt


def _inside_string(value: str) -> str:
    # The value lands inside a quoted LogQL string already present in the template.
    return label_value(value)


def render_selector(template: str, *, node: str | None, nodes: Sequence[str], workload: str, job_id: str) -> str:
    out = template
    if node is not None:
        out = out.replace("{node}", _inside_string(node))
    out = out.replace("{nodes}", _inside_string("|".join(re2_literal(n) for n in nodes)))
    out = out.replace("{workload}", _inside_string(workload)).replace("{id}", _inside_string(job_id))
    return out


def _ns(t: datetime) -> int:
    return int(t.timestamp()) * 1_000_000_000 + t.microsecond * 1000


def _from_ns(ns: int) -> datetime:
    return datetime.fromtimestamp(ns // 1_000_000_000, tz=UTC) + timedelta(microseconds=(ns % 1_000_000_000) // 1000)


def _labels_text(key: StreamKey) -> str:
    return "{" + ",".join(f"{k}={quoted(v)}" for k, v in key) + "}"


@dataclass(slots=True)
class _Task:
    kind: str
    node: str | None  # the node a {node} template was rendered for
    selector: str


@dataclass(slots=True)
class _Result:
    task: _Task
    streams: dict[StreamKey, list[tuple[int, str]]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    requests: int = 0
    failures: int = 0
    notes: list[str] = field(default_factory=list)
    last_seen: datetime | None = None  # from the probe
    present: bool | None = None  # the probe's answer: did the node write anything
    stream_last: dict[StreamKey, datetime] = field(default_factory=dict)  # per-stream probes


class _BadAnswer(Exception):
    pass


def _parse_streams(body: Any) -> list[tuple[StreamKey, list[tuple[int, str]]]]:
    if not isinstance(body, dict) or body.get("status") != "success":
        status = body.get("status") if isinstance(body, dict) else type(body).__name__
        raise _BadAnswer(f"status {status!r}, not 'success'")
    data = body.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "streams":
        rtype = data.get("resultType") if isinstance(data, dict) else None
        raise _BadAnswer(f"data.resultType is {rtype!r}, expected 'streams' (is the query a log query?)")
    out: list[tuple[StreamKey, list[tuple[int, str]]]] = []
    for i, item in enumerate(data.get("result") or []):
        if not isinstance(item, dict) or not isinstance(item.get("stream"), dict):
            raise _BadAnswer(f"data.result[{i}].stream missing")
        key: StreamKey = tuple(sorted((str(k), str(v)) for k, v in item["stream"].items()))
        values: list[tuple[int, str]] = []
        for j, pair in enumerate(item.get("values") or []):
            try:
                ts, line = pair[0], pair[1]
                values.append((int(ts), str(line)))
            except (TypeError, ValueError, IndexError, KeyError) as exc:
                raise _BadAnswer(f"data.result[{i}].values[{j}]: expected [ns, line], got {pair!r}") from exc
        out.append((key, values))
    return out


class LokiConnector:
    """Reads kernel/syslog/fabricmanager/application lines of an attempt from Loki."""

    name = "loki"

    def __init__(
        self,
        base_url: str,
        queries: Mapping[str, str],
        *,
        node_label: str = "host",
        rank_label: str | None = None,
        limit: int = 5000,
        max_window: timedelta = timedelta(hours=1),
        margin: timedelta = timedelta(minutes=5),
        http: HttpOptions | None = None,
        tenant: str | None = None,
        srun_prefix: Sequence[str] = (),
        probe: bool = True,
        now: datetime | None = None,
    ) -> None:
        for kind in queries:
            if kind not in LINE_SOURCES:
                raise ValueError(f"loki.queries: {kind!r} is not a log source kind (one of {', '.join(LINE_SOURCES)})")
        if limit < 1:
            raise ValueError(f"loki.limit must be >= 1, got {limit}")
        if max_window <= timedelta(0):
            raise ValueError("loki.max_window must be positive")
        self.base_url = base_url
        self.queries = dict(queries)
        self.node_label, self.rank_label = node_label, rank_label
        self.limit, self.max_window, self.margin = limit, max_window, margin
        self.http = http or HttpOptions()
        if tenant:
            self.http = _with_header(self.http, "X-Scope-OrgID", tenant)
        self.srun_prefix = frozenset(srun_prefix)
        self.probe = probe
        self._now = now

    # -- planning ---------------------------------------------------------

    def _tasks(self, ctx: Context) -> list[_Task]:
        wl = ctx.workload
        tasks: list[_Task] = []
        for kind, template in self.queries.items():
            per_node: list[str | None] = list(wl.nodes) if "{node}" in template else [None]
            for n in per_node:
                sel = render_selector(template, node=n, nodes=wl.nodes, workload=wl.name or wl.id, job_id=wl.id)
                tasks.append(_Task(kind, n, sel))
        return tasks

    def _chunks(self, start: datetime, end: datetime) -> list[tuple[int, int]]:
        a, b = _ns(start), _ns(end)
        step = int(self.max_window.total_seconds() * 1e9)
        return [(s, min(s + step, b)) for s in range(a, b, step)]

    # -- fetching (worker threads) ---------------------------------------------

    def _run(self, client: httpx.Client, task: _Task, filt: str, chunks: list[tuple[int, int]]) -> _Result:
        res = _Result(task)
        query = f"{task.selector} {filt}".strip()
        for a, b in chunks:
            self._read_chunk(client, res, query, a, b)
        if self.probe and chunks:
            if task.node is not None:
                self._probe(client, res, task.selector, chunks[0][0], chunks[-1][1])
            else:
                self._probe_streams(client, res, task.selector, chunks[0][0], chunks[-1][1])
        for values in res.streams.values():
            values.sort(key=lambda v: v[0])  # stable: Loki's order within a nanosecond is kept
        return res

    def _fetch(self, client: httpx.Client, res: _Result, params: dict[str, str], path: str = QUERY_RANGE) -> Any:
        res.requests += 1
        try:
            resp = get(client, self.http, path, params)
            return resp.json()
        except FetchError as exc:
            res.failures += 1
            res.errors.append(str(exc))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            res.failures += 1
            res.errors.append(f"GET {describe(self.base_url + path, params)}: answer is not JSON: {exc}")
        return None

    def _fetch_streams(self, client: httpx.Client, res: _Result,
                       params: dict[str, str]) -> list[tuple[StreamKey, list[tuple[int, str]]]] | None:
        """One query_range answer as streams; a failure is recorded and gives None."""
        body = self._fetch(client, res, params)
        if body is None:
            return None
        try:
            return _parse_streams(body)
        except _BadAnswer as exc:
            res.failures += 1
            res.errors.append(f"GET {describe(self.base_url + QUERY_RANGE, params)}: {exc}")
            return None

    def _read_chunk(self, client: httpx.Client, res: _Result, query: str, a: int, b: int) -> None:
        start = a
        boundary: set[tuple[StreamKey, int, str]] = set()  # entries seen at the last page's last nanosecond
        while start < b:
            params = {"query": query, "start": str(start), "end": str(b), "limit": str(self.limit),
                      "direction": "forward"}
            streams = self._fetch_streams(client, res, params)
            if streams is None:
                return
            count = 0
            last = -1
            fresh = 0
            for key, values in streams:
                dest = res.streams.setdefault(key, [])
                for ts, line in values:
                    count += 1
                    last = max(last, ts)
                    if (key, ts, line) in boundary:
                        continue
                    dest.append((ts, line))
                    fresh += 1
            if count < self.limit:
                return
            # A full page: go on from its last nanosecond, remembering what it held there.
            at_last = {(k, ts, line) for k, vs in streams for ts, line in vs if ts == last}
            if last == start and fresh == 0:
                # More than `limit` entries share one nanosecond: step past it (the rest is lost).
                res.notes.append(f"over {self.limit} entries at {_from_ns(last).isoformat()}; some skipped")
                start, boundary = last + 1, set()
            else:
                boundary = at_last | (boundary if last == start else set())
                start = last

    def _probe(self, client: httpx.Client, res: _Result, selector: str, a: int, b: int) -> None:
        params = {"query": selector, "start": str(a), "end": str(b), "limit": "1", "direction": "backward"}
        streams = self._fetch_streams(client, res, params)
        if streams is None:
            return
        stamps = [ts for _, values in streams for ts, _line in values]
        res.present = bool(stamps)
        if stamps:
            res.last_seen = _from_ns(max(stamps))

    def _probe_streams(self, client: httpx.Client, res: _Result, selector: str, a: int, b: int) -> None:
        """A template over many nodes: list its streams (/series), then ask each for its last entry."""
        params = {"match[]": selector, "start": str(a), "end": str(b)}
        body = self._fetch(client, res, params, SERIES)
        if body is None:
            return
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            res.failures += 1
            res.errors.append(f"GET {describe(self.base_url + SERIES, params)}: data is not a list of label sets")
            return
        for labels in data:
            if not isinstance(labels, dict):
                continue
            key: StreamKey = tuple(sorted((str(k), str(v)) for k, v in labels.items()))
            one = _Result(res.task)
            self._probe(client, one, _labels_text(key), a, b)
            res.requests += one.requests
            res.failures += one.failures
            res.errors.extend(one.errors)
            if one.last_seen is not None:
                res.stream_last[key] = one.last_seen

    # -- the connector ---------------------------------------------------------

    def collect(self, ctx: Context, words: Sequence[str], sink: EvidenceSink) -> None:
        now = self._now or datetime.now(UTC)
        nodes = list(ctx.workload.nodes)
        win = remote_window(ctx.window_start, ctx.window_end, self.margin, self.margin, now)
        if win is None:
            for kind in self.queries:
                sink.errors.append(ErrorItem(source=kind, file=f"loki:{self.base_url}",
                                             message="the attempt has no window start; Loki was not queried"))
                sink.coverage.append(coverage_item(kind, expected=nodes, seen=set(), lines=0, files=0,
                                                   failures=1, requests=1, notes=["no window"]))
            return
        tasks = self._tasks(ctx)
        chunks = self._chunks(*win)
        filt = line_filter(words)
        with make_client(self.http, self.base_url) as client, \
                ThreadPoolExecutor(max_workers=self.http.concurrency, thread_name_prefix="loki") as pool:
            results = list(pool.map(lambda t: self._run(client, t, filt, chunks), tasks))
        self._deliver(ctx, words, results, sink)

    def _deliver(self, ctx: Context, words: Sequence[str], results: list[_Result], sink: EvidenceSink) -> None:
        """Back on the caller's thread: streams to candidates, in task order (deterministic)."""
        nodes = list(ctx.workload.nodes)
        tp = TimeParser(ctx.tz, ctx.window_start, ctx.window_end)
        wf = WordFilter(words)
        by_kind: dict[str, list[_Result]] = {}
        for r in results:
            by_kind.setdefault(r.task.kind, []).append(r)
        for kind in self.queries:
            seen: set[str] = set()
            last_by_node: dict[str, datetime] = {}
            lines = files = requests = failures = 0
            notes: list[str] = []
            for r in by_kind.get(kind, []):
                requests += r.requests
                failures += r.failures
                notes.extend(r.notes)
                for msg in r.errors:
                    sink.errors.append(ErrorItem(source=kind, file=f"loki:{r.task.selector}", message=msg))
                if r.present and r.task.node:
                    seen.add(r.task.node)
                if r.last_seen and r.task.node:
                    last_by_node[r.task.node] = r.last_seen
                for key, t in r.stream_last.items():
                    sn = match_node(dict(key).get(self.node_label), nodes)
                    if sn:
                        seen.add(sn)
                        last_by_node[sn] = max(t, last_by_node.get(sn, t))
                for key, values in sorted(r.streams.items()):
                    if not values:
                        continue
                    labels = dict(key)
                    node = match_node(labels.get(self.node_label), nodes) or r.task.node \
                        or labels.get(self.node_label)
                    rank = _int_or_none(labels.get(self.rank_label)) if self.rank_label else None
                    reader = StreamReader(source=kind, file=f"loki:{_labels_text(key)}", node=node, rank=rank,
                                          words=wf, tp=tp, emit=sink.add_candidate,
                                          srun_prefix=kind in self.srun_prefix)
                    for ts, line in values:
                        reader.feed(line, _from_ns(ts))
                    files += 1
                    lines += reader.stats.lines
                    if node:
                        seen.add(node)
                        lt = reader.stats.last_time
                        if lt is not None and (node not in last_by_node or lt > last_by_node[node]):
                            last_by_node[node] = lt
            if kind == "application":
                for node, t in sorted(last_by_node.items()):
                    sink.saw_node(node, t)
            if "{node}" not in self.queries[kind] and not self.probe:
                notes.append("nodes counted from streams with matching lines only")
            notes.append("lines = entries returned after the LogQL line filter")
            sink.coverage.append(coverage_item(kind, expected=nodes, seen=seen, lines=lines, files=files,
                                               failures=failures, requests=requests, notes=notes))


def _int_or_none(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def _with_header(opts: HttpOptions, name: str, value: str) -> HttpOptions:
    from dataclasses import replace

    return replace(opts, headers={**opts.headers, name: value})
