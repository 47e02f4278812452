"""Kubernetes pod logs through the API server (the official `kubernetes` client).

For each pod of the attempt (a label selector, or explicit pod names) every
container's log is streamed with `timestamps=true`, so each line carries the
kubelet's RFC 3339 stamp; it is stripped and used as the transport time. A
container that restarted also has its previous instance read
(`previous=true`): the crash that caused the restart is usually there, and
it is read first because it came first.

Node: the pod's `spec.nodeName`. Rank: the value of `rank_label` (default
the Indexed Job / JobSet completion index) or of the `rank_env` variable in
the container spec, when the pod has one and runs a single rank; otherwise
no rank, and per-rank prefixes inside the lines (torchrun's `[default3]:`)
stay the extractors' business. A pod that runs several ranks must not get
a pod-level rank, so there is no implicit guess from the pod's position.

Files are named `k8s:<namespace>/<pod>/<container>` (`...#previous` for the
terminated instance); line numbers are positions in that log.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, TypeVar, cast

from kubernetes.client import ApiClient, CoreV1Api
from kubernetes.client.exceptions import ApiException
from urllib3 import HTTPResponse
from urllib3.exceptions import HTTPError

from firstfault.bundle import Context
from firstfault.collect.evidence import EvidenceSink
from firstfault.collect.http import RETRY_STATUSES, HttpOptions
from firstfault.collect.lines import StreamReader, WordFilter, coverage_item
from firstfault.model import ErrorItem
from firstfault.retry import parse_retry_after
from firstfault.timeparse import TimeParser

COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
_T = TypeVar("_T")


def split_timestamp(line: str) -> tuple[datetime | None, str]:
    """'2026-10-20T10:12:00.123456789Z text' -> (time, 'text'); a line without the prefix is kept whole."""
    head, sep, rest = line.partition(" ")
    if not sep or len(head) < 20 or head[4:5] != "-" or head[10:11] != "T":
        return None, line
    stamp = head
    if "." in stamp:  # RFC 3339 nano: Python keeps microseconds
        main, frac = stamp.split(".", 1)
        digits = "".join(c for c in frac if c.isdigit())
        zone = frac[len(digits) :]
        stamp = f"{main}.{(digits + '000000')[:6]}{zone}"
    try:
        t = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None, line
    return (t if t.tzinfo else None), rest


@dataclass(slots=True)
class _Stream:
    pod: str
    container: str
    previous: bool
    node: str | None
    rank: int | None

    @property
    def file(self) -> str:
        return f"{self.pod}/{self.container}{'#previous' if self.previous else ''}"


@dataclass(slots=True)
class _Read:
    stream: _Stream
    lines: list[tuple[datetime | None, str]] = field(default_factory=list)
    error: str | None = None
    requests: int = 1


class K8sPodLogsConnector:
    """Reads application lines from the logs of an attempt's pods."""

    name = "k8s-pod-logs"

    def __init__(
        self,
        api_client: ApiClient,
        namespace: str,
        *,
        label_selector: str | None = None,
        pods: Sequence[str] = (),
        containers: Sequence[str] = (),  # empty: every container (and init container) of the pod
        source: str = "application",
        rank_label: str | None = COMPLETION_INDEX,
        rank_env: str | None = None,
        http: HttpOptions | None = None,
    ) -> None:
        if not label_selector and not pods:
            raise ValueError("k8s pod logs: give a label_selector or pod names")
        self.api = CoreV1Api(api_client)
        self.namespace = namespace
        self.label_selector = label_selector
        self.pod_names = list(pods)
        self.containers = set(containers)
        self.source = source
        self.rank_label, self.rank_env = rank_label, rank_env
        self.http = http or HttpOptions()

    def _timeout(self) -> tuple[float, float]:
        return (self.http.connect_timeout, self.http.timeout)

    def _call(self, what: str, fn: Callable[[], _T]) -> _T:
        """Bounded retries for busy or unreachable API servers; other API errors fail at once."""
        def once() -> _T | Exception:
            try:
                return fn()
            except (ApiException, HTTPError) as exc:
                return exc

        def again(outcome: _T | Exception) -> bool:
            if isinstance(outcome, ApiException):
                return outcome.status in RETRY_STATUSES
            return isinstance(outcome, HTTPError)

        def asked(outcome: _T | Exception) -> float | None:
            headers = outcome.headers if isinstance(outcome, ApiException) else None
            return parse_retry_after(headers.get("Retry-After")) if headers else None

        outcome = self.http.retry.run(once, again, asked).value
        if isinstance(outcome, ApiException | HTTPError):
            raise _K8sError(f"{what}: {_describe(outcome)}")
        return cast(_T, outcome)

    # -- discovery -----------------------------------------------------------------

    def _list_pods(self, errors: list[str]) -> tuple[list[Any], int]:
        """The pods to read, sorted by name, and the number of failed requests."""
        found: list[Any] = []
        failed = 0
        base = f"/api/v1/namespaces/{self.namespace}/pods"
        if self.label_selector:
            try:
                lst = self._call(f"GET {base}?labelSelector={self.label_selector}",
                                 partial(self.api.list_namespaced_pod, self.namespace,
                                         label_selector=self.label_selector, _request_timeout=self._timeout()))
                found.extend(lst.items or [])
            except _K8sError as exc:
                errors.append(str(exc))
                failed += 1
        for name in self.pod_names:
            if any(p.metadata and p.metadata.name == name for p in found):
                continue
            try:
                found.append(self._call(f"GET {base}/{name}", partial(
                    self.api.read_namespaced_pod, name, self.namespace, _request_timeout=self._timeout())))
            except _K8sError as exc:
                errors.append(str(exc))
                failed += 1
        found.sort(key=lambda p: p.metadata.name if p.metadata else "")
        return found, failed

    def _streams(self, pod: Any) -> list[_Stream]:
        meta, spec, status = pod.metadata, pod.spec, pod.status
        name = meta.name if meta else "?"
        node = spec.node_name if spec else None
        restarts = {cs.name: cs.restart_count for st in (status.init_container_statuses, status.container_statuses)
                    for cs in (st or [])} if status else {}
        out: list[_Stream] = []
        for c in [*(spec.init_containers or []), *(spec.containers or [])] if spec else []:
            if self.containers and c.name not in self.containers:
                continue
            rank = self._rank(meta, c)
            if restarts.get(c.name, 0) > 0:
                out.append(_Stream(name, c.name, True, node, rank))
            out.append(_Stream(name, c.name, False, node, rank))
        return out

    def _rank(self, meta: Any, container: Any) -> int | None:
        raw: str | None = None
        if self.rank_label and meta is not None:
            raw = (meta.labels or {}).get(self.rank_label) or (meta.annotations or {}).get(self.rank_label)
        if raw is None and self.rank_env:
            for env in container.env or []:
                if env.name == self.rank_env and env.value is not None:
                    raw = env.value
        return int(raw) if raw is not None and raw.strip().isdigit() else None

    # -- reading (worker threads) ------------------------------------------------------

    def _read(self, s: _Stream) -> _Read:
        out = _Read(s)
        where = (f"GET /api/v1/namespaces/{self.namespace}/pods/{s.pod}/log?container={s.container}"
                 f"&timestamps=true{'&previous=true' if s.previous else ''}")
        try:
            resp = self._call(where, lambda: self.api.read_namespaced_pod_log(
                s.pod, self.namespace, container=s.container, previous=s.previous or None, timestamps=True,
                _preload_content=False, _request_timeout=self._timeout()))
        except _K8sError as exc:
            out.error = str(exc)
            return out
        raw = cast(HTTPResponse, resp)  # _preload_content=False: the urllib3 response, not a str
        try:
            for line in _lines(raw.stream(1 << 16)):
                out.lines.append(split_timestamp(line))
        except HTTPError as exc:  # cut mid-stream: keep what arrived
            out.error = f"{where}: read stopped early ({_describe(exc)}); {len(out.lines)} line(s) kept"
        finally:
            raw.release_conn()
        return out

    # -- the connector ------------------------------------------------------------------

    def collect(self, ctx: Context, words: Sequence[str], sink: EvidenceSink) -> None:
        nodes = list(ctx.workload.nodes)
        errors: list[str] = []
        pods, failures = self._list_pods(errors)
        requests = (1 if self.label_selector else 0) + len(self.pod_names)
        streams = [s for p in pods for s in self._streams(p)]
        with ThreadPoolExecutor(max_workers=self.http.concurrency, thread_name_prefix="k8slogs") as pool:
            reads = list(pool.map(self._read, streams))
        tp = TimeParser(ctx.tz, ctx.window_start, ctx.window_end)
        wf = WordFilter(words)
        seen: set[str] = set()
        last_by_node: dict[str, datetime] = {}
        lines = files = 0
        for msg in errors:
            sink.errors.append(ErrorItem(source=self.source, file=f"k8s:{self.namespace}", message=msg))
        for r in reads:
            s = r.stream
            requests += r.requests
            file = f"k8s:{self.namespace}/{s.file}"
            if r.error:
                sink.errors.append(ErrorItem(source=self.source, file=file, message=r.error))
                if not r.lines:
                    failures += 1
                    continue
            reader = StreamReader(source=self.source, file=file, node=s.node, rank=s.rank, words=wf, tp=tp,
                                  emit=sink.add_candidate)
            for t, text in r.lines:
                reader.feed(text, t)
            files += 1
            lines += reader.stats.lines
            if s.node and reader.stats.lines:
                seen.add(s.node)
                lt = reader.stats.last_time
                if lt is not None and (s.node not in last_by_node or lt > last_by_node[s.node]):
                    last_by_node[s.node] = lt
        if self.source == "application":
            for node, t in sorted(last_by_node.items()):
                sink.saw_node(node, t)
        notes = [] if pods or failures else [f"no pods matched in namespace {self.namespace}"]
        sink.coverage.append(coverage_item(self.source, expected=nodes, seen=seen, lines=lines, files=files,
                                           failures=failures, requests=max(requests, 1), notes=notes))


class _K8sError(Exception):
    pass


def _describe(exc: Exception | None) -> str:
    if isinstance(exc, ApiException):
        reason = exc.reason or ""
        msg = ""
        body = exc.body
        if body:
            import json

            try:
                msg = str(json.loads(body).get("message", ""))
            except (ValueError, AttributeError):
                msg = str(body)[:200]
        return f"HTTP {exc.status} {reason}{': ' + msg if msg else ''}".strip()
    return f"{type(exc).__name__}: {exc}" if exc else "failed"


def _lines(chunks: Iterator[bytes]) -> Iterator[str]:
    """Whole lines from a byte stream, decoded as UTF-8 (bad bytes replaced)."""
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    carry = ""
    for chunk in chunks:
        carry += dec.decode(chunk)
        *whole, carry = carry.split("\n")
        yield from whole
    carry += dec.decode(b"", final=True)
    if carry:
        yield carry
