"""Property tests (Hypothesis, fixed seed and bounded cases, so CI is repeatable): the timestamp parser,
the workload.yaml loader and the NDJSON reader take any input without crashing, and round-trip what
they should."""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from tempfile import TemporaryDirectory

import yaml
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from firstfault.bundle import BundleError, WorkloadFile, load_bundle
from firstfault.service.errors import Problem
from firstfault.service.ndjson import read_context, read_records, split_lines
from firstfault.timeparse import TimeParser, parse_rfc3339
from tests import tier

SEED = 20261201
BOUNDED = settings(max_examples=tier.examples(150), deadline=None, database=None, derandomize=False,
                   suppress_health_check=[HealthCheck.too_slow])

aware = st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2099, 12, 31),
                     timezones=st.builds(lambda m: timezone(timedelta(minutes=m)), st.integers(-14 * 60, 14 * 60)))
START = parse_rfc3339("2026-11-02T10:00:00Z")
END = parse_rfc3339("2026-11-02T11:00:00Z")


# -- timeparse --

@seed(SEED)
@BOUNDED
@given(aware)
def test_rfc3339_round_trips(t: datetime) -> None:
    assert parse_rfc3339(t.isoformat()) == t
    assert parse_rfc3339(t.astimezone(UTC).isoformat().replace("+00:00", "Z")) == t


@seed(SEED)
@BOUNDED
@given(st.text(max_size=300))
def test_any_line_parses_or_is_none(line: str) -> None:
    stamp = TimeParser(UTC, START, END).parse(line)
    if stamp is not None:
        assert stamp.wall is not None or stamp.uptime is not None
        if stamp.wall is not None:
            assert stamp.wall.utcoffset() == timedelta(0)


@seed(SEED)
@BOUNDED
@given(aware, st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=50))
def test_iso_prefixed_lines_give_their_instant(t: datetime, rest: str) -> None:
    line = t.isoformat(timespec="microseconds") + " " + rest
    stamp = TimeParser(UTC, START, END).parse(line)
    assert stamp is not None and stamp.wall == t


@seed(SEED)
@BOUNDED
@given(st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2026, 12, 31, 23, 59, 59)))
def test_syslog_lines_take_the_windows_year(t: datetime) -> None:
    line = f"{t:%b} {t.day:2d} {t:%H:%M:%S} node-01 kernel: x"
    stamp = TimeParser(UTC, parse_rfc3339("2026-12-31T00:00:00Z"), parse_rfc3339("2026-12-31T23:00:00Z")).parse(line)
    assert stamp is not None and stamp.wall == t.replace(microsecond=0, tzinfo=UTC)


# -- workload.yaml --

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-.", min_size=1, max_size=12)


@st.composite
def workloads(draw: st.DrawFn) -> dict[str, object]:
    start = draw(aware)
    end = start + draw(st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=30)))
    nodes = draw(st.lists(names, max_size=8, unique=True))
    return {"apiVersion": "firstfault/v1",
            "workload": {"id": draw(names), "attempt": draw(st.integers(0, 100)), "nodes": nodes,
                         "window": {"start": start.isoformat(), "end": end.isoformat()}},
            "sources": [{"kind": "kernel", "path": "nodes/{node}/kern.log"}]}


def _load(text: str | bytes) -> object:
    with TemporaryDirectory() as d:
        p = Path(d) / "workload.yaml"
        p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
        try:
            return load_bundle(d).spec
        except BundleError as exc:
            return exc


@seed(SEED)
@BOUNDED
@given(workloads())
def test_a_valid_workload_loads_as_written(doc: dict[str, object]) -> None:
    spec = _load(yaml.safe_dump(doc))
    assert isinstance(spec, WorkloadFile), spec
    wl, want = spec.workload, doc["workload"]
    assert isinstance(want, dict)
    assert (wl.id, wl.attempt, wl.nodes) == (want["id"], want["attempt"], want["nodes"])
    assert (wl.window.start, wl.window.end) == (want["window"]["start"], want["window"]["end"])


@seed(SEED)
@BOUNDED
@given(workloads(), st.sampled_from(["id", "nodes", "window"]))
def test_a_repeated_key_is_always_refused(doc: dict[str, object], key: str) -> None:
    text = yaml.safe_dump(doc)
    wl = doc["workload"]
    assert isinstance(wl, dict)
    again = textwrap.indent(yaml.safe_dump({key: wl[key]}), "  ")
    text = text.replace("workload:\n", f"workload:\n{again}", 1)
    err = _load(text)
    assert isinstance(err, BundleError) and "duplicate key" in str(err), text


@seed(SEED)
@BOUNDED
@given(st.one_of(st.binary(max_size=400), st.text(max_size=400),
                 workloads().map(lambda d: yaml.safe_dump(d)[: len(yaml.safe_dump(d)) // 2])))
def test_any_workload_yaml_is_a_bundle_or_a_bundle_error(text: str | bytes) -> None:
    _load(text)  # anything else propagates and fails the test


# -- NDJSON --

@seed(SEED)
@BOUNDED
@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=30), st.data())
def test_split_lines_is_independent_of_chunking(lines: list[bytes], data: st.DataObject) -> None:
    body = b"".join(x + b"\n" for x in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=10)))
    chunks = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    got = list(split_lines(iter(chunks), 1 << 10))
    want = [(i + 1, x) for i, x in enumerate(lines) if x.strip()]
    assert got == want


@seed(SEED)
@BOUNDED
@given(st.binary(min_size=41, max_size=200).map(lambda b: b.replace(b"\n", b"x")))
def test_a_long_record_is_413_naming_its_line(line: bytes) -> None:
    try:
        list(split_lines(iter([b"{}\n", line, b"\n"]), 40))
    except Problem as exc:
        assert exc.status == 413 and "line 2" in exc.message
    else:
        raise AssertionError("no 413")


record = st.one_of(
    st.dictionaries(st.sampled_from(["type", "source", "file", "line", "node", "time", "text", "x"]),
                    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20),
                              st.sampled_from(["line", "document", "activity", "coverage", "error", "context"])),
                    max_size=8),
    st.lists(st.integers(), max_size=3), st.integers(), st.text(max_size=20),
)


@seed(SEED)
@BOUNDED
@given(st.lists(st.one_of(record.map(lambda r: json.dumps(r).encode()), st.binary(max_size=30)), max_size=8))
def test_any_ndjson_body_gives_records_or_a_422(lines: list[bytes]) -> None:
    body = b"\n".join(x.replace(b"\n", b" ") for x in lines)
    it = split_lines(iter([body]), 1 << 16)
    try:
        read_context(it)
        for _ in read_records(it):
            pass
    except Problem as exc:
        assert exc.status in (413, 422)
