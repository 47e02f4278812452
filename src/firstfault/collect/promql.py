"""Prometheus: the catalog's metric conditions over an attempt's nodes, via /api/v1/query_range.

The engine already knows how to judge a Prometheus query_range answer (the
`prometheus-json` metrics reader and `catalog/metrics.yaml`), so this
connector only asks the right questions and hands each answer over whole:
`sink.add_document("metrics", "prometheus-json", "promql:<query>", body)`.

Questions: the metric names the analysing catalog reads (handed to
`collect`: the Service's published prefilter, or the embedded catalog's
`metric_names()`; never a list of its own), batched into a few
selectors `{__name__=~"a|b|c", Hostname=~"n1|n2"}` restricted to the
allocation's nodes (names RE2-escaped; Prometheus anchors label regexes).
Several node labels may be given (dcgm-exporter's `Hostname`, node_exporter's
`instance` as `host:port`); their selectors are joined with `or`, which
keeps metric names and drops duplicate series. The range starts `margin`
before the attempt so a counter has a baseline sample before it increases.

When the configured node label is not the one the metrics reader would pick
(it reads Hostname, hostname, node, instance, in that order), its value is
copied into `Hostname` in the answer before it is handed over, so the events
land on the right node. A failed query is an ErrorItem
naming the query and the HTTP status; the other queries go on.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from firstfault.bundle import Context
from firstfault.collect.evidence import EvidenceSink
from firstfault.collect.http import FetchError, HttpOptions, get, make_client
from firstfault.collect.lines import coverage_item, match_node, remote_window
from firstfault.extract.metric_formats import host_of
from firstfault.model import ErrorItem
from firstfault.querytext import quoted, re2_literal

QUERY_RANGE = "/api/v1/query_range"
MAX_POINTS = 11_000  # Prometheus refuses a range query with more points per series


def node_regex(nodes: Sequence[str], label: str) -> str:
    """An anchored-by-Prometheus alternation of the node names; `instance` may carry a port."""
    alt = "|".join(re2_literal(n) for n in nodes)
    if label == "instance":
        return f"({alt})(:[0-9]+)?"
    return alt


def build_query(metrics: Sequence[str], nodes: Sequence[str], labels: Sequence[str]) -> str:
    names = "|".join(sorted(metrics))
    parts = [f"{{__name__=~{quoted(names)}, {lab}=~{quoted(node_regex(nodes, lab))}}}"
             for lab in labels]
    return " or ".join(parts)


def _batches(items: Sequence[str], size: int) -> list[list[str]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)] or [[]]


@dataclass(slots=True)
class _Answer:
    query: str
    body: bytes | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)


class PromQLConnector:
    """Reads the catalog's metrics for an attempt from a Prometheus-compatible API."""

    name = "promql"

    def __init__(
        self,
        base_url: str,
        *,
        node_label: str | Sequence[str] = "Hostname",
        step: timedelta = timedelta(seconds=30),
        margin: timedelta = timedelta(minutes=15),
        after: timedelta = timedelta(minutes=5),
        metrics_per_query: int = 32,
        nodes_per_query: int = 128,
        http: HttpOptions | None = None,
        now: datetime | None = None,
    ) -> None:
        labels = [node_label] if isinstance(node_label, str) else list(node_label)
        if not labels or not all(labels):
            raise ValueError("promql.node_label: give at least one label name")
        if step <= timedelta(0):
            raise ValueError("promql.step must be positive")
        self.base_url = base_url
        self.labels = labels
        self.step, self.margin, self.after = step, margin, after
        self.metrics_per_query, self.nodes_per_query = max(1, metrics_per_query), max(1, nodes_per_query)
        self.http = http or HttpOptions()
        self._now = now

    def queries(self, nodes: Sequence[str], metrics: Sequence[str]) -> list[str]:
        """Few queries: metric names and node names batched (URL length stays bounded)."""
        names = sorted({m for m in metrics if m})
        return [build_query(ms, ns, self.labels)
                for ns in _batches(list(nodes), self.nodes_per_query)
                for ms in _batches(names, self.metrics_per_query) if ns and ms]

    def _fetch(self, client: httpx.Client, query: str, start: datetime, end: datetime, step: float) -> _Answer:
        ans = _Answer(query)
        params = {"query": query, "start": f"{start.timestamp():.3f}", "end": f"{end.timestamp():.3f}",
                  "step": f"{step:g}"}
        try:
            resp = get(client, self.http, QUERY_RANGE, params)
        except FetchError as exc:
            ans.error = str(exc)
            return ans
        ans.body = resp.content
        return ans

    def collect(self, ctx: Context, metrics: Sequence[str], sink: EvidenceSink) -> None:
        now = self._now or datetime.now(UTC)
        nodes = list(ctx.workload.nodes)
        win = remote_window(ctx.window_start, ctx.window_end, self.margin, self.after, now)
        if win is None or not nodes or not metrics:
            why = ("the attempt has no window start" if win is None else "the attempt lists no nodes" if not nodes
                   else "the catalog names no metrics")
            sink.errors.append(ErrorItem(source="metrics", file=f"promql:{self.base_url}",
                                         message=f"{why}; Prometheus was not queried"))
            sink.coverage.append(coverage_item("metrics", expected=nodes, seen=set(), lines=0, files=0,
                                               failures=1, requests=1, notes=[why]))
            return
        start, end = win
        span = (end - start).total_seconds()
        step = self.step.total_seconds()
        notes: list[str] = []
        if span / step + 1 > MAX_POINTS:
            step = math.ceil(span / (MAX_POINTS - 1))
            notes.append(f"step raised to {step:g}s to stay under {MAX_POINTS} points per series")
        queries = self.queries(nodes, metrics)
        with make_client(self.http, self.base_url) as client, \
                ThreadPoolExecutor(max_workers=self.http.concurrency, thread_name_prefix="promql") as pool:
            answers = list(pool.map(lambda q: self._fetch(client, q, start, end, step), queries))
        seen: set[str] = set()
        samples = failures = 0
        for ans in answers:  # query order: the same documents in the same order every time
            file = f"promql:{ans.query}"
            if ans.body is None:
                failures += 1
                sink.errors.append(ErrorItem(source="metrics", file=file, message=ans.error or "failed"))
                continue
            body, hosts = self._normalise(ans.body, nodes)
            seen.update(hosts)
            lines, problems = sink.add_document("metrics", "prometheus-json", file, body)
            samples += lines
            if problems and lines == 0:
                failures += 1
        sink.coverage.append(coverage_item("metrics", expected=nodes, seen=seen, lines=samples,
                                           files=len(queries) - failures, failures=failures,
                                           requests=len(queries), notes=notes))

    def _normalise(self, body: bytes, nodes: Sequence[str]) -> tuple[bytes, set[str]]:
        """The answer, with the node label copied to Hostname where the reader would miss it; nodes seen."""
        try:
            doc: Any = json.loads(body)
            result = doc["data"]["result"]
            if not isinstance(result, list):
                return body, set()
        except (ValueError, KeyError, TypeError):
            return body, set()  # the metrics reader reports what is wrong with it
        hosts: set[str] = set()
        changed = False
        for item in result:
            labels = item.get("metric") if isinstance(item, dict) else None
            if not isinstance(labels, dict):
                continue
            lab = next((lab for lab in self.labels if labels.get(lab)), None)
            if lab is None:
                continue
            value = str(labels[lab])
            wanted = host_of({"instance": value}) if lab == "instance" else value.strip()
            if wanted and host_of(labels) != wanted:
                labels["Hostname"] = wanted
                changed = True
            node = match_node(host_of(labels), nodes)
            if node:
                hosts.add(node)
        return (json.dumps(doc).encode() if changed else body), hosts
