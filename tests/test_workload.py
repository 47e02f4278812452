"""workload.yaml as records (bundle.WorkloadFile and the records it nests): what a document may hold, what is
refused and how the refusal names its file, line and key; the Service's context record and the Blueprint's
sources are the same records.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from firstfault import bundle, records
from firstfault.bundle import (
    BundleError,
    SourceSpec,
    WindowSpec,
    WorkloadFile,
    WorkloadSpec,
    load_workload,
    workload_file,
    workload_spec,
)
from firstfault.formats import FORMATS
from firstfault.model import SOURCE_KINDS
from tests import tier

ROOT = Path(__file__).resolve().parents[1]
SEED = 20261203


def _shipped() -> list[Path]:
    return sorted([*ROOT.glob("examples/*/workload.yaml"), *ROOT.glob("tests/scenarios/*/workload.yaml")])


def test_every_shipped_workload_loads() -> None:
    paths = _shipped()
    assert len(paths) > 10
    for p in paths:
        wf = load_workload(p.parent)
        assert isinstance(wf, WorkloadFile) and wf.workload.id, p


def test_loading_a_bundle_good_or_bad_imports_no_pydantic(tmp_path: Path) -> None:
    code = ("import sys, json; from firstfault.bundle import load_bundle, BundleError\n"
            "b = load_bundle(sys.argv[1])\n"
            "try:\n    load_bundle(sys.argv[2])\nexcept BundleError as e:\n    msg = str(e)\n"
            "print(json.dumps(['pydantic' in sys.modules, b.workload.id, msg]))")
    (tmp_path / "workload.yaml").write_text(yaml.safe_dump({**VALID, "workload": {"id": "1", "nodes": ["a"],
                                                                                   "node": "b"}}, sort_keys=False))
    r = subprocess.run([sys.executable, "-c", code, str(ROOT / "examples" / "nvlink-xid149"), str(tmp_path)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    pydantic, wid, msg = json.loads(r.stdout)
    assert (pydantic, wid) == (False, "4242")
    assert msg == f"{tmp_path / 'workload.yaml'}:6: workload.node: unknown key"


# -- what a document may hold, and what is refused --

VALID = {"apiVersion": "firstfault/v1", "workload": {"id": "1", "window": {"start": "2026-11-02T10:00:00Z"}},
         "sources": [{"kind": "kernel", "path": "k.log"}]}


def _with(where: tuple[str, ...], value: Any) -> Any:
    doc = json.loads(json.dumps(VALID))
    node = doc
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    return doc


@pytest.mark.parametrize(("where", "value", "expect"), [
    (("workload", "id"), 4242, "4242"),  # a job id reads as a number in YAML
    (("workload", "exit_code"), 9, "9"),
    (("workload", "window", "start"), datetime(2026, 11, 2, 10, tzinfo=UTC), "2026-11-02T10:00:00+00:00"),
    (("workload", "window", "start"), date(2026, 11, 2), "2026-11-02"),  # YAML's own date, unquoted
    (("workload", "ranks"), {"n": [1, 2]}, {"n": [1, 2]}),
    (("workload", "timezone"), "Europe/Paris", "Europe/Paris"),
    (("sources", 0, "format"), "sacct", "sacct"),
])
def test_a_document_value_is_taken_as_the_record_holds_it(where: tuple[Any, ...], value: Any, expect: Any) -> None:
    got: Any = workload_file(_with(where, value))
    for key in where:
        got = got[key] if isinstance(key, int) else getattr(got, key)
    assert got == expect and type(got) is type(expect)


@pytest.mark.parametrize(("where", "value", "path", "words"), [
    (("workload", "id"), True, "workload.id", "Expected `str`, got `bool`"),  # a bool is no job id
    (("workload", "attempt"), "1", "workload.attempt", "Expected `int`, got `str`"),
    (("workload", "ranks"), {"n": [1, "2"]}, "workload.ranks.*.1", "Expected `int`, got `str`"),
    (("workload", "gpus"), {"n": {"0000:3b:00": 2.0}}, "workload.gpus.*.*", "Expected `int`, got `float`"),
    (("workload", "timezone"), "Mars/Olympus", "workload.timezone", "unknown time zone 'Mars/Olympus'"),
    (("workload", "timezone"), "America", "workload.timezone", "unknown time zone 'America'"),  # a directory
    (("workload", "window", "start"), "yesterday", "workload.window.start", "not an RFC 3339 time: 'yesterday'"),
    (("workload", "window", "end"), "2026-11-02T09:00:00Z", "workload.window.end", "'2026-11-02T09:00:00Z' is "
                                                                                   "before start"),
    (("workload", "scheduler"), "pbs", "workload.scheduler", "Invalid enum value 'pbs'"),
    (("sources", 0, "kind"), "dmesg", "sources.0.kind", "Invalid enum value 'dmesg'"),
    (("sources", 0, "format"), "csv", "sources.0.format", "Invalid enum value 'csv'"),
    (("sources", 0, "rank_prefix"), "SRUN", "sources.0.rank_prefix", "Invalid enum value 'SRUN'"),
    (("apiVersion",), "firstfault/v2", "apiVersion", "Invalid enum value"),
    (("workload", "Window"), {}, "workload.Window", "unknown key"),
])
def test_a_bad_value_is_refused_naming_its_line_and_key(tmp_path: Path, where: tuple[Any, ...], value: Any,
                                                        path: str, words: str) -> None:
    text = yaml.safe_dump(_with(where, value), sort_keys=False)
    (tmp_path / "workload.yaml").write_text(text)
    with pytest.raises(BundleError) as exc:
        load_workload(tmp_path)
    name, line, rest = str(exc.value).split(":", 2)
    assert name == str(tmp_path / "workload.yaml")
    assert rest.startswith(f" {path}: ") and words in rest, rest
    # The line is the last key's that the path names; msgspec does not name a mapping's key (`*`): its line is
    # then the mapping's first, the line after the key that holds it.
    key = next(k for k in reversed(path.split(".")) if not k.isdigit() and k != "*")
    at = int(line) - (2 if "*" in path else 1)
    assert f"{key}:" in text.splitlines()[at], (line, text)


def test_a_lone_surrogate_for_a_fixed_value_is_a_validation_error() -> None:
    """msgspec compares a Literal's value as UTF-8: a lone surrogate there (a parsed JSON document may hold one;
    libyaml refuses the escape) raised UnicodeEncodeError out of the reader."""
    with pytest.raises(records.ValidationError, match=r"a lone surrogate \(\\ud800\) where one of a fixed set"):
        workload_spec({"id": "1", "scheduler": "\ud800"})
    assert workload_spec({"id": "\ud800"}).id == "\ud800"  # free text: the verdict's writer decides (as before)


def test_a_record_built_by_hand_makes_the_same_checks() -> None:
    assert WindowSpec(start="2026-11-02T10:00:00Z").start == "2026-11-02T10:00:00Z"
    with pytest.raises(ValueError, match="timezone: unknown time zone 'Mars/Olympus'"):
        WorkloadSpec(id="1", timezone="Mars/Olympus")
    with pytest.raises(ValueError, match="reversed window"):
        WindowSpec(start="2026-11-02T10:00:00Z", end="2026-11-02T09:59:59Z")
    with pytest.raises(ValueError, match=r"start: .*0001"):  # a time that cannot be held in UTC
        WindowSpec(start="0001-01-01T00:00:00+01:00")


def test_the_service_context_record_takes_the_same_values() -> None:
    spec = workload_spec({"id": 7, "window": {"start": "2026-11-02T10:00:00Z"}, "nodes": ["a"]})
    assert (spec.id, spec.window.start, spec.nodes) == ("7", "2026-11-02T10:00:00Z", ["a"])
    assert records.decode(records.encode(spec), WorkloadSpec) == spec
    with pytest.raises(records.ValidationError):
        workload_spec({"id": "1", "nodes": "a"})


def test_the_request_nests_the_record_and_the_openapi_names_its_parts() -> None:
    from firstfault.collect.wire import AnalyzeRequest, read_request

    spec = WorkloadSpec(id="1", nodes=["a"])
    req = AnalyzeRequest(context=spec)
    assert req.context is spec
    assert read_request(records.dumps(req)).context == spec
    assert read_request('{"context": {"id": 5}}').context == WorkloadSpec(id="5")  # a job id that reads as a number
    with pytest.raises(records.ValidationError) as exc:
        read_request('{"context": {"id": "1", "window": {"end": "yesterday"}}}')
    assert records.location(exc.value) == (("context", "window", "end"), "not an RFC 3339 time: 'yesterday'")
    _, parts = records.schemas([AnalyzeRequest])
    assert parts["WindowSpec"]["properties"]["start"]["anyOf"][0] == {
        "type": "string", "format": "date-time", "description": bundle._TIME_DOC}
    assert parts["AnalyzeRequest"]["properties"]["context"] == {"$ref": "#/components/schemas/WorkloadSpec"}


def test_blueprint_sources_are_the_record(tmp_path: Path) -> None:
    from firstfault.blueprint.config import ConfigError, load_config

    cfg = tmp_path / "cluster.yaml"
    cfg.write_text("cluster: c\nlogs:\n  files:\n    root: /x\n    sources:\n      - {kind: kernel, path: k.log}\n")
    files = load_config(cfg).logs.files
    assert files is not None and files.sources == [SourceSpec(kind="kernel", path="k.log")]
    cfg.write_text("cluster: c\nlogs:\n  files:\n    root: /x\n    sources:\n      - {kind: dmesg, path: k.log}\n")
    with pytest.raises(ConfigError, match=r"cluster\.yaml:6: logs\.files\.sources\.0\.kind: Invalid enum value 'dmes"):
        load_config(cfg)


# -- any document: a record or a named refusal, never another error --

# Each field: values a document may hold and values near them (wrong types, bools for ints, ints for strings,
# YAML dates and datetimes, odd zones, other shapes of `ranks` and `gpus`). A document draws how wild it is, so
# that clean ones and each kind of fault all come up.
_WILD = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=2**63) | st.floats(allow_nan=False)
    | st.text(max_size=8) | st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=2)
    | st.dates() | st.datetimes() | st.binary(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner)
    | st.dictionaries(st.text(max_size=6) | st.integers(), inner, max_size=3),
    max_leaves=6,
)
_AWARE = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30),
                      timezones=st.one_of(st.none(), st.integers(-23 * 60, 23 * 60).map(
                          lambda m: timezone(timedelta(minutes=m)))))
_GOOD_TIME = st.one_of(
    st.sampled_from(["2026-11-02T10:00:00Z", "2026-11-02T11:00:00+01:00", "2026-11-02 10:00:00",
                     "2026-11-02T10:00:00.123456Z", " 2026-11-02T10:00:00Z "]),
    _AWARE, _AWARE.map(lambda t: t.isoformat()), _AWARE.map(lambda t: t.replace(tzinfo=None).isoformat() + "Z"),
    st.none(),
)
_BAD_TIME = st.one_of(
    st.sampled_from(["2026-11-02", "2026-11-02T10:00:00.123456789Z", "not a time", "", "0001-01-01T00:00:00+01:00",
                     "9999-12-31T23:59:59-01:00", "2026-11-02T10:00:00 UTC"]),
    st.dates(), st.integers(), st.floats(allow_nan=False), st.text(max_size=12), _WILD,
)
_NAME = st.text(max_size=8) | st.sampled_from(["node-01", "0000:3b:00"])
_BAD_NAME = st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False) | st.binary(max_size=2)
_RANK = st.sampled_from(["0-7", "8,9,12-15", "7-0", "x", ""]) | st.integers() | st.lists(st.integers(), max_size=4)
_BAD_RANK = st.one_of(
    st.booleans(), st.floats(), st.none(), st.dictionaries(_NAME, st.integers(), max_size=2), st.binary(max_size=2),
    st.builds(lambda ok, bad, at: [*ok[:at], bad, *ok[at:]], st.lists(st.integers(), max_size=3),
              st.booleans() | st.sampled_from(["3", "x", 2.0, 2.5, None, [1]]), st.integers(0, 3)),
)
_GOOD_RANKS = st.none() | st.dictionaries(_NAME, _RANK, max_size=4)
_GPU_MAP = st.dictionaries(_NAME, st.integers(), max_size=3)
_BAD_GPU_MAP = st.one_of(
    st.builds(lambda ok, k, v: {**ok, k: v}, _GPU_MAP, _NAME, st.booleans() | st.sampled_from(["3", 1.0, 1.5, None])),
    st.builds(lambda ok, k, v: {**ok, k: v}, _GPU_MAP, _BAD_NAME, st.integers()),
    st.lists(st.integers(), max_size=2), st.none(), st.integers(),
)
_GOOD_GPUS = st.none() | st.dictionaries(_NAME, _GPU_MAP, max_size=3)


def _one_bad(good: st.SearchStrategy[Any], bad_value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A mapping of good entries and one bad: a bad value, or a good value under a key that is no string."""
    return st.one_of(
        st.builds(lambda ok, k, v: {**ok, k: v}, st.dictionaries(_NAME, good, max_size=3), _NAME, bad_value),
        st.builds(lambda ok, k, v: {**ok, k: v}, st.dictionaries(_NAME, good, max_size=3), _BAD_NAME, good),
    )


_BAD_RANKS = _one_bad(_RANK, _BAD_RANK) | st.lists(_RANK, max_size=2) | _WILD
_BAD_GPUS = _one_bad(_GPU_MAP, _BAD_GPU_MAP) | st.lists(_GPU_MAP, max_size=2) | _WILD
_GOOD_ZONES = st.sampled_from(["UTC", "Europe/Paris", "America/New_York", "Etc/GMT+5", "Asia/Kolkata"])
_BAD_ZONES = st.sampled_from(["utc", "Mars/Olympus", "", "America", "../zoneinfo/UTC", "/etc/localtime", "UTC\x00",
                              "Europe/Paris/", "Europe//Paris"]) | st.text(max_size=12) | _WILD

Field = tuple[st.SearchStrategy[Any], st.SearchStrategy[Any]]  # (good, bad)


@st.composite
def _mapping(draw: st.DrawFn, name: str, spec: dict[str, Field], required: tuple[str, ...], fault: str,
             wildness: int) -> Any:
    """Some of `spec`'s keys, each good or bad: bad where `fault` names it ("workload.ranks"; "workload":
    the whole value; "workload.+": an unknown key; a required key may then be left out instead) and, as
    often as `wildness` says (of 10), anywhere else."""
    def wild(key: str) -> bool:
        return fault == f"{name}.{key}" or (wildness > 0 and draw(st.integers(0, 9)) < wildness)

    if fault == name or (wildness > 0 and draw(st.integers(0, 19)) < wildness):
        return draw(_WILD)
    out: dict[Any, Any] = {}
    for key, (good, bad) in spec.items():
        is_bad = wild(key)
        if key in required and is_bad and draw(st.booleans()):
            continue  # left out
        if key in required or is_bad or draw(st.booleans()):
            out[key] = draw(bad if is_bad else good)
    if wild("+"):
        out[draw(st.sampled_from(["extra", "Window", "ID", 1, None, True]))] = draw(_WILD)
    return out


# The shapes with most ways to go wrong come up more often.
_FAULTS = ["workload.ranks", "workload.gpus", "window.start", "window.end", "file.sources",
           "file.+", "file.apiVersion", "file.workload", "file.sources", "workload", "workload.+", "window",
           "window.+", "window.start", "window.end", "source", "source.+", *(f"workload.{k}" for k in (
               "id", "attempt", "name", "scheduler", "window", "nodes", "ranks", "gpus", "terminal_state",
               "exit_code", "timezone")), *(f"source.{k}" for k in ("kind", "path", "rank_prefix", "format"))]


@st.composite
def _workload_file(draw: st.DrawFn) -> Any:
    mode = draw(st.sampled_from(["clean", "one fault", "one fault", "one fault", "wild"]))
    fault = draw(st.sampled_from(_FAULTS)) if mode == "one fault" else ""
    w = draw(st.integers(1, 4)) if mode == "wild" else 0

    window = _mapping("window", {"start": (_GOOD_TIME, _BAD_TIME), "end": (_GOOD_TIME, _BAD_TIME)}, (), fault, w)
    workload = _mapping("workload", {
        "id": (st.text(max_size=6) | st.integers(), st.booleans() | st.floats() | st.none() | _WILD),
        "attempt": (st.integers(-3, 2**70), st.booleans() | st.sampled_from(["1", 1.0]) | _WILD),
        "name": (st.text(max_size=6) | st.none(), st.integers() | _WILD),
        "scheduler": (st.sampled_from(["slurm", "kueue", "static"]), st.sampled_from(["Slurm", "pbs", ""]) | _WILD),
        "window": (window, _WILD),
        "nodes": (st.lists(_NAME, max_size=4), st.lists(_NAME | _BAD_NAME, min_size=1, max_size=3) | _WILD),
        "ranks": (_GOOD_RANKS, _BAD_RANKS),
        "gpus": (_GOOD_GPUS, _BAD_GPUS),
        "terminal_state": (st.sampled_from(["FAILED", "NODE_FAIL"]) | st.none(), st.integers() | _WILD),
        "exit_code": (st.sampled_from(["1:0", "0:9"]) | st.integers() | st.none(), st.booleans() | st.floats() | _WILD),
        "timezone": (_GOOD_ZONES, _BAD_ZONES),
    }, ("id",), fault, w)
    source = _mapping("source", {
        "kind": (st.sampled_from(list(SOURCE_KINDS)), st.sampled_from(["Kernel", "dmesg"]) | _WILD),
        "path": (st.sampled_from(["nodes/{node}/kern.log", "app/rank-{rank}.log", "../x"]), _WILD),
        "rank_prefix": (st.sampled_from(["srun", "none"]), st.sampled_from(["SRUN", ""]) | st.none() | _WILD),
        "format": (st.sampled_from(sorted(FORMATS)) | st.none(), st.sampled_from(["csv", "SACCT"]) | _WILD),
    }, ("kind", "path"), fault, w)
    return draw(_mapping("file", {
        "apiVersion": (st.just("firstfault/v1"), st.sampled_from(["firstfault/v2", "v1"]) | _WILD),
        "workload": (workload, _WILD),
        "sources": (st.lists(source, min_size=1 if fault.startswith("source") else 0, max_size=3),
                    st.lists(source, max_size=2).map(tuple) | _WILD),
    }, ("apiVersion", "workload"), fault, w))


_FILE = _workload_file()


@seed(SEED)
@settings(max_examples=tier.examples(600), deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(_FILE)
def test_any_document_is_a_record_or_a_refusal_naming_its_key(doc: Any) -> None:
    try:
        made = workload_file(doc)
    except records.ValidationError as exc:
        (problem,) = records.problems(exc, yaml.safe_dump(doc, default_flow_style=False), "workload.yaml")
        assert problem.startswith("workload.yaml:"), problem
        return
    assert isinstance(made, WorkloadFile)
    assert workload_file(records.to_builtins(made)) == made  # what it holds, written out, is read back the same


# -- the source kinds: one Literal (model.SourceKind), the spec's list --

def test_the_source_kinds_are_the_specs() -> None:
    import re
    import typing

    from firstfault.model import LINE_SOURCES, DocumentSource, LineSource, SourceKind

    text = (ROOT / "docs" / "evidence-bundle.md").read_text(encoding="utf-8")
    listed = re.search(r"Kinds: ((?:`\w+`,?\s*)+)", text)
    assert listed is not None
    assert tuple(re.findall(r"`(\w+)`", listed.group(1))) == SOURCE_KINDS == typing.get_args(SourceKind)
    assert set(re.findall(r"- kind: (\w+)", text)) <= set(SOURCE_KINDS)  # the example's
    assert typing.get_args(SourceKind) == typing.get_args(LineSource) + typing.get_args(DocumentSource)
    assert LINE_SOURCES == ("kernel", "syslog", "fabricmanager", "application")
    assert typing.get_type_hints(SourceSpec)["kind"] == SourceKind
