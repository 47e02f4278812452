"""Metric files: OpenMetrics text and Prometheus query_range JSON.

Samples are grouped per series and run through the conditions of
`catalog/metrics.yaml` (data: which metric, which test, which threshold);
a condition that becomes true becomes a `metric.condition` event whose
`t_lo` is the previous sample, because the fault happened somewhere between
the two scrapes. Only the series of catalog metrics are kept in memory, so a
large OpenMetrics dump costs its line count, not its size.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from importlib import resources
from typing import Any, BinaryIO, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from firstfault import yamlio
from firstfault.extract.gpu import xid_fields
from firstfault.extract.structured import TEXT_LIMIT, ParseIssue, StructuredResult, clip
from firstfault.model import Event, Evidence, FieldValue
from firstfault.pci import norm_pci
from firstfault.querytext import label_value

# The event kinds this reader emits and their fields (docs/events.md; extract/registry.py).
EMITS: Mapping[str, frozenset[str]] = {
    "gpu.xid": frozenset({"detail", "immediate_action", "mnemonic", "pci", "via", "xid", "xid_class"}),
    "metric.condition": frozenset({"condition", "delta", "gpu", "iface", "metric", "port", "value"}),
}

METRIC_FORMATS: tuple[str, ...] = ("openmetrics", "prometheus-json")

# Node identity labels, most specific first (dcgm-exporter sets Hostname; Prometheus sets instance).
HOST_LABELS: tuple[str, ...] = ("Hostname", "hostname", "node", "instance")

# A broken file must not turn into millions of issues.
MAX_ISSUES = 100


# --------------------------------------------------------------------------
# The condition catalog
# --------------------------------------------------------------------------

ConditionType = Literal["increase", "nonzero", "bitmask", "change", "not_equal"]


class MetricCatalogError(ValueError):
    """catalog/metrics.yaml (or a replacement text) is not a valid condition catalog."""


class MetricCondition(BaseModel):
    """One condition of catalog/metrics.yaml; also what the PromQL connector turns into a query."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    metrics: tuple[str, ...] = Field(min_length=1)
    type: ConditionType
    description: str = Field(min_length=1)
    threshold: float = 0.0
    mask: int | None = None
    expected: float | None = None
    also_emit: Literal["gpu.xid"] | None = None

    @field_validator("metrics")
    @classmethod
    def _metric_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not _METRIC_NAME_RE.fullmatch(name):
                raise ValueError(f"not a metric name: {name!r}")
        return value

    @model_validator(mode="after")
    def _type_keys(self) -> MetricCondition:
        if self.type == "bitmask" and (self.mask is None or self.mask <= 0):
            raise ValueError("type bitmask needs a positive mask")
        if self.type != "bitmask" and self.mask is not None:
            raise ValueError(f"mask is only for type bitmask, not {self.type}")
        if self.type == "not_equal" and self.expected is None:
            raise ValueError("type not_equal needs expected")
        if self.type != "not_equal" and self.expected is not None:
            raise ValueError(f"expected is only for type not_equal, not {self.type}")
        if self.also_emit == "gpu.xid" and self.type != "change":
            raise ValueError("also_emit gpu.xid needs type change (the gauge holds the Xid code)")
        return self


class _Catalog(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int
    conditions: list[MetricCondition]


_METRIC_NAME_RE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def load_metric_conditions(text: str, origin: str = "catalog/metrics.yaml") -> list[MetricCondition]:
    """Parse and validate a condition catalog; errors name the key path."""
    try:
        raw = yamlio.load(text)
    except yaml.YAMLError as exc:
        raise MetricCatalogError(f"{origin}: not valid YAML: {exc}") from exc
    try:
        catalog = _Catalog.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or '(top)'}: {err['msg']}" for err in exc.errors())
        raise MetricCatalogError(f"{origin}: {problems}") from exc
    seen: set[str] = set()
    for i, cond in enumerate(catalog.conditions):
        if cond.name in seen:
            raise MetricCatalogError(f"{origin}: conditions.{i}.name: duplicate condition {cond.name!r}")
        seen.add(cond.name)
    return catalog.conditions


@lru_cache(maxsize=1)
def _shipped_conditions() -> tuple[MetricCondition, ...]:
    text = resources.files("firstfault").joinpath("catalog/metrics.yaml").read_text(encoding="utf-8")
    return tuple(load_metric_conditions(text))


def metric_conditions() -> list[MetricCondition]:
    """The shipped conditions (loaded and validated once)."""
    return list(_shipped_conditions())


def metric_names(conditions: Iterable[MetricCondition] | None = None) -> list[str]:
    """The metric names the conditions read (the shipped catalog's by default), sorted.

    This is the metrics half of the catalog's prefilter: the Service publishes
    it (/v1/catalog/prefilter) and a Blueprint queries Prometheus for these
    names and no others, so both read the same metrics whatever their versions.
    """
    conds = metric_conditions() if conditions is None else conditions
    return sorted({m for c in conds for m in c.metrics})


def _conditions_by_metric(conditions: Iterable[MetricCondition]) -> dict[str, list[MetricCondition]]:
    index: dict[str, list[MetricCondition]] = {}
    for cond in conditions:
        for metric in cond.metrics:
            index.setdefault(metric, []).append(cond)
    return index


# --------------------------------------------------------------------------
# Series
# --------------------------------------------------------------------------


@dataclass(slots=True)
class _Series:
    metric: str  # the catalog name the samples were matched to
    labels: dict[str, str]
    host: str | None
    selector: str
    # (timestamp seconds, value, 1-based line or None, value as written, timestamp as written)
    samples: list[tuple[float, float, int | None, str, str]] = field(default_factory=list)


def _selector(name: str, labels: Mapping[str, str]) -> str:
    inner = ",".join(f'{k}="{label_value(v)}"' for k, v in sorted(labels.items()) if k != "__name__")
    return f"{name}{{{inner}}}"


def _strip_port(value: str) -> str:
    value = value.strip()
    if value.startswith("["):  # [fd00::1]:9100
        end = value.find("]")
        return value[1:end] if end > 0 else value
    host, sep, port = value.rpartition(":")
    if sep and port.isdigit() and ":" not in host:
        return host
    return value


def host_of(labels: Mapping[str, str]) -> str | None:
    """The node a series belongs to, from the first identity label present (port stripped)."""
    for key in HOST_LABELS:
        value = labels.get(key)
        if value:
            host = _strip_port(value) if key == "instance" else value.strip()
            return host or None
    return None


def _resolve_metric(name: str, wanted: Mapping[str, object]) -> str | None:
    if name in wanted:
        return name
    # OpenMetrics names counter samples <family>_total; the catalog may use the family name.
    if name.endswith("_total") and name[:-6] in wanted:
        return name[:-6]
    return None


class _Issues:
    def __init__(self, issues: list[ParseIssue]) -> None:
        self.issues = issues
        self.suppressed = 0

    def add(self, line: int | None, message: str) -> None:
        if len(self.issues) < MAX_ISSUES:
            self.issues.append(ParseIssue(line, message))
        else:
            self.suppressed += 1

    def close(self) -> None:
        if self.suppressed:
            self.issues.append(ParseIssue(None, f"{self.suppressed} more issues not listed"))


# --------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------


def read_metrics(
    stream: BinaryIO,
    fmt: str,
    file: str,
    *,
    conditions: Iterable[MetricCondition] | None = None,
) -> StructuredResult:
    """Read one metric file and evaluate the metric conditions over its series.

    `conditions` defaults to the shipped catalog (tests and the PromQL
    connector may pass their own).
    """
    conds = list(conditions) if conditions is not None else metric_conditions()
    wanted = _conditions_by_metric(conds)
    result = StructuredResult(events=[], issues=[], lines=0, hosts=set())
    issues = _Issues(result.issues)
    if fmt == "openmetrics":
        series = _read_openmetrics(stream, wanted, result, issues)
    elif fmt == "prometheus-json":
        series = _read_prometheus_json(stream, wanted, result, issues)
    else:
        # See read_scheduler: a wrong format is this file's problem, not the analysis'.
        issues.add(None, f"cannot read as a metrics file: format {fmt!r} is not one of {', '.join(METRIC_FORMATS)}")
        return result
    for s in series:
        for cond in wanted[s.metric]:
            result.events.extend(_evaluate(cond, s, file))
    issues.close()
    result.events.sort(key=lambda e: (e.time or _EPOCH, e.node or "", e.evidence.query or ""))
    return result


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# --------------------------------------------------------------------------
# OpenMetrics text
# --------------------------------------------------------------------------

_NAME_RE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_RE = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|\})')
_UNESCAPE_RE = re.compile(r"\\(.)")
_UNESCAPES = {"n": "\n", "\\": "\\", '"': '"'}


def _unescape(value: str) -> str:
    if "\\" not in value:
        return value
    return _UNESCAPE_RE.sub(lambda m: _UNESCAPES.get(m.group(1), "\\" + m.group(1)), value)


def _parse_labels(text: str, pos: int) -> tuple[dict[str, str], int]:
    """Labels from text[pos] == '{'; returns them and the index after '}'."""
    labels: dict[str, str] = {}
    pos += 1
    if text.startswith("}", pos):
        return labels, pos + 1
    while True:
        m = _LABEL_RE.match(text, pos)
        if m is None:
            raise ValueError(f"bad label set near column {pos + 1}")
        labels[m.group(1)] = _unescape(m.group(2))
        pos = m.end()
        if m.group(3) == "}":
            return labels, pos
        if text.startswith("}", pos):  # trailing comma: '{a="1",}'
            return labels, pos + 1


def _parse_timestamp(token: str) -> float:
    ts = float(token)
    # The spec asks for seconds; Prometheus text exposition writes milliseconds.
    if ts > 1e11:
        ts /= 1000.0
    return ts


def _read_openmetrics(
    stream: BinaryIO,
    wanted: Mapping[str, list[MetricCondition]],
    result: StructuredResult,
    issues: _Issues,
) -> Iterator[_Series]:
    series: dict[tuple[str, str], _Series] = {}
    # Hosts per label text: the same series repeats on thousands of lines.
    host_cache: dict[str, str | None] = {}
    eof_line: int | None = None
    after_eof = 0
    no_timestamp = 0
    lineno = 0
    for raw in stream:
        lineno += 1
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if eof_line is not None:
            if line.strip():
                after_eof += 1
            continue
        if not line.strip():
            continue
        if line.startswith("#"):
            if line.rstrip() == "# EOF":
                eof_line = lineno
            # HELP / TYPE / UNIT and comments carry nothing the conditions need.
            continue
        m = _NAME_RE.match(line)
        if m is None:
            issues.add(lineno, "sample: no metric name at the start of the line")
            continue
        name = m.group(0)
        pos = m.end()
        label_text = ""
        if line.startswith("{", pos):
            end = _label_end(line, pos)
            if end < 0:
                issues.add(lineno, f"{name}: unterminated label set")
                continue
            label_text = line[pos:end]
        rest = line[pos + len(label_text) :].split()
        metric = _resolve_metric(name, wanted)
        key = (metric or "", label_text)
        s = series.get(key) if metric is not None else None
        labels: dict[str, str] = {}
        if s is not None:
            host = s.host
        elif not label_text:
            host = None
        else:
            if metric is None and label_text in host_cache:
                host = host_cache[label_text]
            else:
                try:
                    labels = _parse_labels(line, pos)[0]
                except ValueError as exc:
                    issues.add(lineno, f"{name}: {exc}")
                    continue
                host = host_of(labels)
                host_cache[label_text] = host
        if host:
            result.hosts.add(host)
        if metric is None:
            continue
        if not rest:
            issues.add(lineno, f"{name}: sample without a value")
            continue
        value_text = rest[0]
        ts_text = rest[1] if len(rest) > 1 and rest[1] != "#" else ""
        try:
            value = float(value_text)
        except ValueError:
            issues.add(lineno, f"{name}: value {value_text!r} is not a number")
            continue
        if not ts_text:
            no_timestamp += 1
            if no_timestamp == 1:
                issues.add(lineno, f"{name}: sample without a timestamp cannot be placed in time; skipped")
            continue
        try:
            ts = _parse_timestamp(ts_text)
        except ValueError:
            issues.add(lineno, f"{name}: timestamp {ts_text!r} is not a number")
            continue
        if s is None:
            s = _Series(metric=metric, labels=labels, host=host, selector=_selector(name, labels))
            series[key] = s
        s.samples.append((ts, value, lineno, value_text, ts_text))
    result.lines = lineno
    if no_timestamp > 1:
        issues.add(None, f"{no_timestamp} samples without a timestamp were skipped")
    if eof_line is None:
        issues.add(None, "openmetrics: no '# EOF' at the end (file truncated?); samples read up to there")
    elif after_eof:
        issues.add(eof_line, f"openmetrics: {after_eof} lines after '# EOF' ignored")
    return iter(series.values())


# A whole label set, quoted values honoured ('}' and '#' may sit inside quotes). Each
# alternative starts with a different character, so a broken line fails in linear time.
_LABELSET_RE = re.compile(r'\{(?:[^"}]|"(?:[^"\\]|\\.)*")*\}')


def _label_end(line: str, pos: int) -> int:
    """Index after the '}' closing the label set at line[pos] == '{', or -1."""
    m = _LABELSET_RE.match(line, pos)
    return m.end() if m else -1


# --------------------------------------------------------------------------
# Prometheus /api/v1/query_range JSON
# --------------------------------------------------------------------------


def _read_prometheus_json(
    stream: BinaryIO,
    wanted: Mapping[str, list[MetricCondition]],
    result: StructuredResult,
    issues: _Issues,
) -> Iterator[_Series]:
    try:
        body: Any = json.load(stream)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        issues.add(getattr(exc, "lineno", None), f"prometheus-json: not JSON: {exc}")
        return iter(())
    if not isinstance(body, dict):
        issues.add(None, "prometheus-json: top level is not an object")
        return iter(())
    status = body.get("status")
    if status != "success":
        issues.add(None, f"status: {status!r} ({body.get('errorType')}: {body.get('error')})")
        return iter(())
    data = body.get("data")
    if not isinstance(data, dict):
        issues.add(None, "data: missing or not an object")
        return iter(())
    rtype = data.get("resultType")
    if rtype not in ("matrix", "vector"):
        issues.add(None, f"data.resultType: expected matrix, got {rtype!r}")
        return iter(())
    items = data.get("result")
    if not isinstance(items, list):
        issues.add(None, "data.result: missing or not a list")
        return iter(())
    out: list[_Series] = []
    for i, item in enumerate(items):
        where = f"data.result[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("metric"), dict):
            issues.add(None, f"{where}.metric: missing or not an object")
            continue
        labels = {str(k): str(v) for k, v in item["metric"].items()}
        host = host_of(labels)
        if host:
            result.hosts.add(host)
        values = item.get("values") if rtype == "matrix" else [item.get("value")]
        if not isinstance(values, list):
            issues.add(None, f"{where}.values: missing or not a list")
            continue
        result.lines += len(values)
        name = labels.get("__name__")
        if not name:
            issues.add(None, f"{where}.metric.__name__: missing (an expression, not a series?); skipped")
            continue
        metric = _resolve_metric(name, wanted)
        if metric is None:
            continue
        labels.pop("__name__", None)
        s = _Series(metric=metric, labels=labels, host=host, selector=_selector(name, labels))
        for j, pair in enumerate(values):
            try:
                ts_raw, value_raw = pair
                ts = float(ts_raw)
                value = float(value_raw)
            except (TypeError, ValueError):
                issues.add(None, f'{where}.values[{j}]: expected [timestamp, "value"], got {pair!r}')
                continue
            s.samples.append((ts, value, None, str(value_raw), str(ts_raw)))
        out.append(s)
    return iter(out)


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


def _evaluate(cond: MetricCondition, s: _Series, file: str) -> list[Event]:
    test = _TESTS[cond.type]
    samples = sorted(s.samples, key=lambda x: x[0])  # stable: file order breaks ties
    gpu = _label_int(s.labels.get("gpu"))
    port = _label_int(s.labels.get("port"))
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
    xid: int, s: _Series, evidence: Evidence, when: datetime, t_lo: datetime | None, device: str | None
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
