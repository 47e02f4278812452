"""perfquery output as a metrics document: an InfiniBand port's counters, read like the node exporter's.

`perfquery [-x] LID PORT` (infiniband-diags) prints one block per port:

    # Port counters: Lid 1 port 3 (CapMask: 0x1300)
    PortSelect:......................3
    SymbolErrorCounter:..............4200
    LinkDownedCounter:...............3

It prints no time, so a document is the output of several runs, each after
the time it was taken on a line of its own (what `date --iso-8601=seconds`
prints). Each counter becomes a sample of the node exporter's metric of the
same counter (catalog/fabric/perfquery.yaml), labelled with the port's `lid` and
`port`: the metric conditions of catalog/metrics.yaml read it, and the
engine finds the port's node through the fabric (engine/fabric.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import BinaryIO

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import perfquery_counters
from firstfault.extract.metric_conditions import MetricCondition
from firstfault.extract.metric_formats import Issues, Series, resolve_metric
from firstfault.extract.structured import StructuredResult
from firstfault.timeparse import parse_rfc3339

_HEADER = re.compile(r"^#\s*Port (?:extended )?counters:\s*Lid (?P<lid>\d+) port (?P<port>\d+)\b")
# `SymbolErrorCounter:..............4200` (the dots pad the name to a column)
_COUNTER = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9]*):\.*(?P<value>\d+)\s*$")
# A time line: an RFC 3339 time and nothing else.
_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)\s*$")


def read_perfquery(stream: BinaryIO, wanted: Mapping[str, list[MetricCondition]], result: StructuredResult,
                   issues: Issues) -> Iterator[Series]:
    names = perfquery_counters()
    series: dict[tuple[str, int, int], Series] = {}
    when: datetime | None = None
    when_text = ""
    block: tuple[int, int] | None = None
    untimed = 0
    lineno = 0
    for raw in stream:
        lineno += 1
        line = raw.decode("utf-8", errors="replace").strip()
        if not line:
            continue
        if _TIME.match(line):
            try:
                when, when_text = parse_rfc3339(line), line
            except ValueError:
                issues.add(lineno, f"perfquery: {line!r} is not a valid time")
                when = None
            block = None
            continue
        if (h := _HEADER.match(line)) is not None:
            block = (int(h.group("lid")), int(h.group("port")))
            if when is None:
                untimed += 1
                if untimed == 1:
                    issues.add(lineno, "perfquery: counters with no time line before them cannot be placed in "
                                       "time (put the output of `date --iso-8601=seconds` before each run); skipped")
            continue
        if block is None or when is None:
            continue  # ibwarn lines, other output, or a block that cannot be placed
        m = _COUNTER.match(line)
        if m is None:
            continue
        metric_name = names.get(m.group("name"))
        metric = resolve_metric(metric_name, wanted) if metric_name else None
        if metric is None or metric_name is None:
            continue
        lid, port = block
        key = (metric, lid, port)
        s = series.get(key)
        if s is None:
            labels = {"lid": str(lid), "port": str(port)}
            s = series[key] = Series(metric=metric, labels=labels, host=None,
                                     selector=f'{metric_name}{{lid="{lid}",port="{port}"}}')
        s.samples.append((when.timestamp(), float(m.group("value")), lineno, m.group("value"), when_text))
    result.lines = lineno
    if untimed > 1:
        issues.add(None, f"perfquery: {untimed} runs without a time line were skipped")
    return iter(series.values())


__all__ = ["read_perfquery"]
