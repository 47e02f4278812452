"""Metric file formats: OpenMetrics text and Prometheus query_range JSON, read into series.

Only the series of wanted metrics are kept, so a large OpenMetrics dump costs
its line count, not its size; hosts come from the identity labels.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.extract.metric_conditions import MetricCondition
from firstfault.extract.structured import CHECK_EVERY, ParseIssue, StructuredResult, int_or_text
from firstfault.querytext import label_value

# Node identity labels, most specific first (dcgm-exporter sets Hostname; Prometheus sets instance).
HOST_LABELS: tuple[str, ...] = ("Hostname", "hostname", "node", "instance")


# --------------------------------------------------------------------------
# Series
# --------------------------------------------------------------------------


@dataclass(slots=True)
class Series:
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


def resolve_metric(name: str, wanted: Mapping[str, object]) -> str | None:
    if name in wanted:
        return name
    # OpenMetrics names counter samples <family>_total; the catalog may use the family name.
    if name.endswith("_total") and name[:-6] in wanted:
        return name[:-6]
    return None


class Issues:
    """The metric readers' problems, into the result's list (capped there: structured.IssueList)."""

    def __init__(self, issues: list[ParseIssue]) -> None:
        self.issues = issues

    def add(self, line: int | None, message: str) -> None:
        self.issues.append(ParseIssue(line, message))


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


def read_openmetrics(
    stream: BinaryIO,
    wanted: Mapping[str, list[MetricCondition]],
    result: StructuredResult,
    issues: Issues,
    check: Callable[[], None] | None = None,
) -> Iterator[Series]:
    series: dict[tuple[str, str], Series] = {}
    # Hosts per label text: the same series repeats on thousands of lines.
    host_cache: dict[str, str | None] = {}
    eof_line: int | None = None
    after_eof = 0
    no_timestamp = 0
    lineno = 0
    for raw in stream:
        lineno += 1
        if check is not None and not lineno % CHECK_EVERY:
            check()
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
        metric = resolve_metric(name, wanted)
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
            s = Series(metric=metric, labels=labels, host=host, selector=_selector(name, labels))
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


def read_prometheus_json(
    stream: BinaryIO,
    wanted: Mapping[str, list[MetricCondition]],
    result: StructuredResult,
    issues: Issues,
) -> Iterator[Series]:
    try:
        body: Any = json.load(stream, parse_int=int_or_text)
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
    out: list[Series] = []
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
        metric = resolve_metric(name, wanted)
        if metric is None:
            continue
        labels.pop("__name__", None)
        s = Series(metric=metric, labels=labels, host=host, selector=_selector(name, labels))
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
