"""Metric files: OpenMetrics text and Prometheus query_range JSON.

Samples are grouped per series and run through the conditions of
`catalog/metrics.yaml` (data: which metric, which test, which threshold);
a condition that becomes true becomes a `metric.condition` event whose
`t_lo` is the previous sample, because the fault happened somewhere between
the two scrapes. Only the series of catalog metrics are kept in memory, so a
large OpenMetrics dump costs its line count, not its size.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import BinaryIO

from firstfault.extract.gpu import xid_fields
from firstfault.extract.metric_conditions import MetricCondition, conditions_by_metric, metric_conditions
from firstfault.extract.metric_formats import Issues, Series, read_openmetrics, read_prometheus_json
from firstfault.extract.structured import CHECK_EVERY, TEXT_LIMIT, StructuredResult, clip
from firstfault.model import Event, Evidence, FieldValue
from firstfault.pci import norm_pci

# The event kinds this reader emits and their fields (docs/events.md; extract/registry.py).
EMITS: Mapping[str, frozenset[str]] = {
    "gpu.xid": frozenset({"detail", "immediate_action", "mnemonic", "pci", "via", "xid", "xid_class"}),
    "metric.condition": frozenset({"condition", "delta", "gpu", "iface", "lid", "metric", "port", "value"}),
}

METRIC_FORMATS: tuple[str, ...] = ("openmetrics", "prometheus-json", "perfquery")


# --------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------


def read_metrics(
    stream: BinaryIO,
    fmt: str,
    file: str,
    *,
    conditions: Iterable[MetricCondition] | None = None,
    check: Callable[[], None] | None = None,
) -> StructuredResult:
    """Read one metric file and evaluate the metric conditions over its series.

    `conditions` defaults to the shipped catalog (tests and the PromQL
    connector may pass their own). `check` (a deadline) is called every
    CHECK_EVERY lines and series.
    """
    conds = list(conditions) if conditions is not None else metric_conditions()
    wanted = conditions_by_metric(conds)
    result = StructuredResult(events=[], issues=[], lines=0, hosts=set())
    issues = Issues(result.issues)
    if fmt == "openmetrics":
        series = read_openmetrics(stream, wanted, result, issues, check)
    elif fmt == "prometheus-json":
        series = read_prometheus_json(stream, wanted, result, issues)
    elif fmt == "perfquery":
        from firstfault.extract.perfquery import read_perfquery

        series = read_perfquery(stream, wanted, result, issues)
    else:
        # See read_scheduler: a wrong format is this file's problem, not the analysis'.
        issues.add(None, f"cannot read as a metrics file: format {fmt!r} is not one of {', '.join(METRIC_FORMATS)}")
        return result
    for n, s in enumerate(series, start=1):
        if check is not None and not n % CHECK_EVERY:
            check()
        for cond in wanted[s.metric]:
            result.events.extend(_evaluate(cond, s, file))
    result.events.sort(key=lambda e: (e.time or _EPOCH, e.node or "", e.evidence.query or ""))
    return result


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# --------------------------------------------------------------------------
# Condition evaluation
# --------------------------------------------------------------------------

# (previous value or None, value, whether the series has been == expected before) -> holds, delta
_Test = Callable[[MetricCondition, float | None, float, bool], tuple[bool, float | None]]


def _t_increase(c: MetricCondition, prev: float | None, v: float, _seen: bool) -> tuple[bool, float | None]:
    if prev is None or v < prev:  # no baseline yet, or a counter reset
        return False, None
    delta = v - prev
    return delta > c.threshold, delta


def _t_nonzero(c: MetricCondition, _prev: float | None, v: float, _seen: bool) -> tuple[bool, float | None]:
    return v > c.threshold, None


def _t_bitmask(c: MetricCondition, _prev: float | None, v: float, _seen: bool) -> tuple[bool, float | None]:
    return (int(v) & (c.mask or 0)) != 0, None


def _t_change(_c: MetricCondition, prev: float | None, v: float, _seen: bool) -> tuple[bool, float | None]:
    return prev is not None and v != prev and v != 0, None


def _t_not_equal(c: MetricCondition, _prev: float | None, v: float, seen: bool) -> tuple[bool, float | None]:
    return seen and v != c.expected, None


_TESTS: dict[str, _Test] = {
    "increase": _t_increase,
    "nonzero": _t_nonzero,
    "bitmask": _t_bitmask,
    "change": _t_change,
    "not_equal": _t_not_equal,
}


def _num(value: float) -> int | float:
    return int(value) if value.is_integer() else value


def _label_int(value: str | None) -> int | str | None:
    if value is None or value == "":
        return None
    return int(value) if value.isdigit() else value


def _sample_text(selector: str, value_text: str, ts_text: str) -> str:
    # The selector is also in Evidence.query; when clipping, keep the value and time readable.
    tail = f" {value_text} {ts_text}"
    return clip(selector, max(TEXT_LIMIT - len(tail), 40)) + tail


def _evaluate(cond: MetricCondition, s: Series, file: str) -> list[Event]:
    test = _TESTS[cond.type]
    samples = sorted(s.samples, key=lambda x: x[0])  # stable: file order breaks ties
    gpu = _label_int(s.labels.get("gpu"))
    port = _label_int(s.labels.get("port"))
    lid = _label_int(s.labels.get("lid"))  # perfquery's port address (extract/perfquery.py)
    iface: str | None = None
    if gpu is not None:
        device: str | None = f"gpu{gpu}"
    else:
        # node_exporter's device label is the HCA (mlx5_0) or netdev (ib0); dcgm's is nvidiaN.
        iface = s.labels.get("device") or None
        device = iface
    events: list[Event] = []
    prev: float | None = None
    prev_ts: float | None = None
    was_true = False
    seen_expected = False
    for ts, value, line, value_text, ts_text in samples:
        if math.isnan(value):  # Prometheus staleness marker / missing value
            continue
        holds, delta = test(cond, prev, value, seen_expected)
        fire = holds and (cond.type == "change" or not was_true)
        if fire:
            when = datetime.fromtimestamp(ts, tz=UTC)
            t_lo = datetime.fromtimestamp(prev_ts, tz=UTC) if prev_ts is not None else None
            fields: dict[str, FieldValue] = {"condition": cond.name, "metric": s.metric, "value": _num(value)}
            if delta is not None:
                fields["delta"] = _num(delta)
            if gpu is not None:
                fields["gpu"] = gpu
            if port is not None:
                fields["port"] = port
            if iface is not None:
                fields["iface"] = iface
            if lid is not None:
                fields["lid"] = lid
            evidence = Evidence(
                source="metrics",
                file=file,
                line=line,
                text=_sample_text(s.selector, value_text, ts_text),
                query=s.selector,
            )
            events.append(
                Event(
                    kind="metric.condition",
                    time=when,
                    node=s.host,
                    evidence=evidence,
                    device=device,
                    fields=fields,
                    t_lo=t_lo,
                )
            )
            if cond.also_emit == "gpu.xid":
                events.append(_xid_event(int(value), s, evidence, when, t_lo, device))
        was_true = holds
        if cond.expected is not None and value == cond.expected:
            seen_expected = True
        prev, prev_ts = value, ts
    return events


def _xid_event(
    xid: int, s: Series, evidence: Evidence, when: datetime, t_lo: datetime | None, device: str | None
) -> Event:
    pci = s.labels.get("pci_bus_id")
    fields = xid_fields(xid, norm_pci(pci) if pci else None, "metrics")
    fields["detail"] = f"{s.metric} changed to {xid}"
    return Event(
        kind="gpu.xid",
        time=when,
        node=s.host,
        evidence=evidence,
        device=device,
        fields=fields,
        t_lo=t_lo,
    )
