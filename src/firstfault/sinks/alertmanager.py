"""POST verdicts to Alertmanager as alerts, so its grouping, inhibition and routing take over.

One verdict becomes one alert per (cause, node): the root cause of a
definitive verdict, or each candidate of an ambiguous one, on each node it
names (docs/alertmanager.md):

    POST <url>/api/v2/alerts
    [{"labels": {"alertname": "FirstfaultVerdict", "domain": "hardware", "category": "gpu.nvlink",
                 "node": "node-02", "gpu": "gpu3", "port": "...", "cluster": "eos",
                 "workload": "4242", "attempt": "0", "outcome": "failed", ...},
      "annotations": {"summary": ..., "recommended_action": ..., "dashboard": <link>, "rule": ..., ...},
      "startsAt": <when the cause was first seen>, "endsAt": <now + resolve_after>,
      "generatorURL": <the dashboard link>}]

Alertmanager identifies an alert by its label set, so sending the same
verdict again (a retry, a rerun, `watch` redoing an attempt) updates the
alert it already has instead of adding one. Labels are derived from the
verdict and the cluster only (never from the time of analysis).

Which verdicts alert is configurable by outcome and attributed domain; the
default is every failed outcome whose verdict names a cause or candidates
(domains hardware, network, software, storage, infrastructure, scheduler,
ambiguous), never `none` or `unknown`.

A provisional verdict (outcome `running`, sent by `watch --follow` while the
attempt runs) alerts under its own alert name (`FirstfaultProvisional`) when
it names a root cause of an alerting domain, whatever the outcome filter says;
`resolve` sends its alerts again with `endsAt` now, which resolves them, when
the attempt's final verdict lands.

Each try has `timeout` seconds in all, connecting, sending and every read
together (firstfault.httptry). Retried with exponential backoff and full
jitter after connection errors, timeouts, 429 and 5xx, `retries` more times
at most; any other status is final. `deliver()` never raises; `write()` (the Sink contract) raises
AlertmanagerDeliveryError (a SinkError) when Alertmanager did not take the
alerts, which the pipeline records as that output's failure.
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import httpx

from firstfault import __version__
from firstfault.httptry import KEEPALIVE_OFF, request_within
from firstfault.model import Cause, Enrichment, Verdict
from firstfault.sinks.base import SinkError

log = logging.getLogger("firstfault.sinks.alertmanager")

RETRY_STATUS = frozenset({429}) | frozenset(range(500, 600))
DEFAULT_ALERTNAME = "FirstfaultVerdict"
DEFAULT_PROVISIONAL_ALERTNAME = "FirstfaultProvisional"
DEFAULT_DOMAINS: tuple[str, ...] = ("hardware", "network", "software", "storage", "infrastructure", "scheduler",
                                    "ambiguous")
DEFAULT_OUTCOMES: tuple[str, ...] = ("failed", "timeout", "cancelled", "preempted", "node_fail", "out_of_memory",
                                     "unknown")
# The labels this sink sets itself; extra labels may not replace them.
OWN_LABELS = frozenset({"alertname", "domain", "category", "candidate_domain", "node", "gpu", "port", "cluster",
                        "workload", "attempt", "outcome"})
LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
MAX_ANNOTATION = 2000  # characters per annotation value (Alertmanager keeps them all in memory)


@dataclass(frozen=True, slots=True)
class AlertDelivery:
    ok: bool
    alerts: int  # how many alerts were (to be) sent; 0 when the filters let the verdict pass silently
    attempts: int
    status: int | None  # the last HTTP status, None when no response came
    error: str | None  # the last failure, None on success
    skipped: str | None = None  # why nothing was sent (the outcome or domain filter)


class AlertmanagerDeliveryError(SinkError):
    def __init__(self, message: str, delivery: AlertDelivery) -> None:
        super().__init__(message)
        self.delivery = delivery


def _ts(s: str | None) -> datetime | None:
    if not s:
        return None
    try:
        d = datetime.fromisoformat(s.replace("Z", "+00:00") if s.endswith("Z") else s)
    except ValueError:
        return None
    return d.replace(tzinfo=UTC) if d.tzinfo is None else d.astimezone(UTC)


def _rfc3339(d: datetime) -> str:
    return d.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _clip(s: str) -> str:
    return s if len(s) <= MAX_ANNOTATION else s[: MAX_ANNOTATION - 1] + "…"


def dashboard_link(base: str, verdict: Verdict, enrichment: Enrichment) -> str:
    """The dashboard's page for this verdict, found by its store key when opened (GET /verdicts/find).

    The key, not the store's row id, so the link is right even when the
    verdict is written to the store after the alert (the watch daemon commits
    last) or by another process.
    """
    query = urlencode({"workload": verdict.workload.id, "attempt": verdict.workload.attempt,
                       "cluster": enrichment.cluster or "", "catalog": verdict.catalog.sha256})
    return f"{base.rstrip('/')}/verdicts/find?{query}"


def _gpus(cause: Cause, node: str) -> list[str]:
    out = []
    for d in cause.devices:
        if "/" in d:
            n, dev = d.split("/", 1)
            if n == node:
                out.append(dev)
        elif len(cause.nodes) <= 1:
            out.append(d)
    return sorted(set(out))


def _ports(verdict: Verdict, cause: Cause, role: str, node: str | None) -> list[str]:
    from firstfault.store.repo import port_of  # the store's one spelling of a port (fleet counts use it too)

    out = set()
    for e in verdict.evidence:
        if e.role != role or (e.category is not None and e.category != cause.category):
            continue
        if node is not None and e.node not in (node, None):
            continue
        p = port_of(e)
        if p:
            out.add(p)
    return sorted(out)


def alerts_for(verdict: Verdict, enrichment: Enrichment, *, now: datetime, resolve_after: timedelta,
               dashboard_url: str | None = None, alertname: str = DEFAULT_ALERTNAME,
               labels: Mapping[str, str] | None = None, max_alerts: int = 32) -> list[dict[str, Any]]:
    """The alerts for one verdict (what is POSTed), in a stable order.

    One per node of each cause; when that would be more than `max_alerts`,
    one per cause with no `node` label and the nodes in the `nodes`
    annotation; at most `max_alerts` causes in either case.
    """
    role = "cause" if verdict.root_cause is not None else "candidate"
    causes: list[Cause | None] = []
    if verdict.root_cause is not None:
        causes.append(verdict.root_cause)
    else:
        causes.extend(verdict.candidates[:max_alerts] or [None])
    split = sum(max(1, len(c.nodes)) if c else 1 for c in causes) <= max_alerts
    link = dashboard_link(dashboard_url, verdict, enrichment) if dashboard_url else None
    wl = verdict.workload
    base = {"alertname": alertname, **dict(labels or {}), "domain": verdict.attributed_domain,
            "cluster": enrichment.cluster or "", "workload": wl.id, "attempt": str(wl.attempt),
            "outcome": verdict.outcome}
    ends_floor = now
    out: list[dict[str, Any]] = []
    for cause in causes:
        nodes: Sequence[str | None] = (cause.nodes or [None]) if cause is not None and split else [None]
        for node in nodes:
            lab = dict(base)
            ann: dict[str, str] = {}
            if cause is not None:
                lab["category"] = cause.category
                if verdict.root_cause is None:
                    lab["candidate_domain"] = cause.domain
                if node is not None:
                    lab["node"] = node
                    lab["gpu"] = ",".join(_gpus(cause, node))
                elif len(cause.nodes) == 1:
                    lab["node"] = cause.nodes[0]
                    lab["gpu"] = ",".join(_gpus(cause, cause.nodes[0]))
                else:
                    ann["nodes"] = _clip(", ".join(cause.nodes))
                    ann["devices"] = _clip(", ".join(cause.devices))
                lab["port"] = ",".join(_ports(verdict, cause, role, lab.get("node")))
                prefix = "ambiguous, one candidate: " if verdict.root_cause is None else ""
                ann["summary"] = _clip(prefix + cause.summary)
                if cause.recommended_action:
                    ann["recommended_action"] = _clip(cause.recommended_action)
                ann["rule"] = cause.rule
                if cause.first_seen:
                    ann["first_seen"] = cause.first_seen
                starts = _ts(cause.first_seen)
            else:
                ann["summary"] = _clip(f"workload {wl.id} attempt {wl.attempt}: {verdict.outcome}, "
                                       f"{verdict.attributed_domain}")
                starts = None
            if verdict.explanation:
                ann["description"] = _clip(" ".join(verdict.explanation))
            if link:
                ann["dashboard"] = link
            starts = starts or _ts(wl.window.end) or _ts(verdict.analyzed_at) or now
            alert: dict[str, Any] = {
                "labels": {k: v for k, v in lab.items() if v},  # an empty label is no label to Alertmanager
                "annotations": ann,
                "startsAt": _rfc3339(starts),
                # Active for resolve_after from now (a repeat extends it); never before it started.
                "endsAt": _rfc3339(max(starts, ends_floor) + resolve_after),
            }
            if link:
                alert["generatorURL"] = link
            out.append(alert)
    return out


class AlertmanagerSink:
    name = "alertmanager"

    def __init__(
        self,
        url: str,
        *,
        dashboard_url: str | None = None,
        outcomes: Iterable[str] = DEFAULT_OUTCOMES,
        domains: Iterable[str] = DEFAULT_DOMAINS,
        alertname: str = DEFAULT_ALERTNAME,
        labels: Mapping[str, str] | None = None,
        resolve_after: float = 6 * 3600.0,
        max_alerts: int = 32,
        timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        headers: Mapping[str, str] | None = None,
        verify: bool | str = True,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        provisional_alertname: str = DEFAULT_PROVISIONAL_ALERTNAME,
    ) -> None:
        if retries < 0:
            raise ValueError("alertmanager retries must not be negative")
        if provisional_alertname == alertname:
            raise ValueError("alertmanager provisional_alertname must differ from alertname: the final verdict's "
                             "alerts would overwrite the provisional ones")
        if resolve_after <= 0:
            raise ValueError("alertmanager resolve_after must be positive")
        if max_alerts < 1:
            raise ValueError("alertmanager max_alerts must be at least 1")
        for k in labels or {}:
            if not LABEL_NAME.match(k) or k in OWN_LABELS:
                raise ValueError(f"alertmanager label {k!r}: not a label name, or one the sink sets itself")
        self.url = url.rstrip("/")
        self.endpoint = self.url + "/api/v2/alerts"
        self.dashboard_url = dashboard_url
        self.outcomes = frozenset(outcomes)
        self.domains = frozenset(domains)
        self.alertname = alertname
        self.provisional_alertname = provisional_alertname
        self.labels = dict(labels or {})
        self.resolve_after = timedelta(seconds=resolve_after)
        self.max_alerts = max_alerts
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._clock = clock
        self.timeout = timeout
        self._client = httpx.Client(transport=transport, timeout=timeout, follow_redirects=False, verify=verify,
                                    limits=KEEPALIVE_OFF,
                                    headers={"User-Agent": f"firstfault/{__version__}", **dict(headers or {})})
        self.last: AlertDelivery | None = None

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> AlertmanagerSink:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def wanted(self, verdict: Verdict) -> str | None:
        """None when the verdict alerts; else why not (the filter it fails)."""
        if verdict.provisional:  # the outcome is `running`: the cause it names is why it was sent
            if verdict.root_cause is None:
                return "a provisional verdict without a root cause is not sent"
        elif verdict.outcome not in self.outcomes:
            return f"outcome {verdict.outcome} is not among the alerting outcomes"
        if verdict.attributed_domain not in self.domains:
            return f"domain {verdict.attributed_domain} is not among the alerting domains"
        return None

    def alerts(self, verdict: Verdict, enrichment: Enrichment) -> list[dict[str, Any]]:
        name = self.provisional_alertname if verdict.provisional else self.alertname
        return alerts_for(verdict, enrichment, now=self._clock(), resolve_after=self.resolve_after,
                          dashboard_url=self.dashboard_url, alertname=name, labels=self.labels,
                          max_alerts=self.max_alerts)

    def resolve(self, verdict: Verdict, enrichment: Enrichment) -> AlertDelivery:
        """Resolve the alerts `verdict` (a provisional one) raised: the same label sets, `endsAt` now.
        Never raises; nothing is sent for a verdict that never alerted."""
        if not verdict.provisional or self.wanted(verdict) is not None:
            return AlertDelivery(True, 0, 0, None, None, "not a provisional verdict that alerted")
        now = _rfc3339(self._clock())
        alerts = self.alerts(verdict, enrichment)
        for a in alerts:
            a["endsAt"] = max(now, a["startsAt"])  # same form: the strings order as the times
        return self._post(alerts)

    def write(self, verdict: Verdict, enrichment: Enrichment) -> None:
        d = self.deliver(verdict, enrichment)
        if not d.ok:
            wl = verdict.workload
            raise AlertmanagerDeliveryError(
                f"alertmanager {self.endpoint} did not take the {d.alerts} alert(s) of workload {wl.id} attempt "
                f"{wl.attempt} after {d.attempts} attempt(s): {d.error}", d)

    def deliver(self, verdict: Verdict, enrichment: Enrichment) -> AlertDelivery:
        skipped = self.wanted(verdict)
        if skipped is not None:
            self.last = AlertDelivery(True, 0, 0, None, None, skipped)
            return self.last
        self.last = self._post(self.alerts(verdict, enrichment))
        return self.last

    def _post(self, alerts: list[dict[str, Any]]) -> AlertDelivery:
        status: int | None = None
        error = "not attempted"
        attempts = 0
        for attempt in range(self.retries + 1):
            attempts = attempt + 1
            try:
                resp = request_within(self._client, self.timeout, "POST", self.endpoint, json=alerts)
            except httpx.TransportError as e:  # refused, reset, timeouts
                status, error = None, f"{type(e).__name__}: {e or 'no detail'}"
                if isinstance(e, httpx.UnsupportedProtocol):
                    break
            except (httpx.HTTPError, httpx.InvalidURL) as e:
                status, error = None, f"{type(e).__name__}: {e}"
                break
            else:
                status = resp.status_code
                if resp.is_success:
                    return AlertDelivery(True, len(alerts), attempts, status, None)
                error = f"HTTP {status}: {resp.text[:200]}"
                if status not in RETRY_STATUS:
                    break  # 400: Alertmanager refused the alerts themselves; sending them again will not help
            if attempt < self.retries:
                self._sleep(self._rng.uniform(0, min(self.max_backoff, self.backoff * (2**attempt))))
        log.warning("alertmanager %s: %d alert(s) not delivered after %d attempt(s): %s", self.endpoint,
                    len(alerts), attempts, error)
        return AlertDelivery(False, len(alerts), attempts, status, error)
