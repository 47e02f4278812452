"""workload.yaml's fast path (bundle.fast_workload_file) against the pydantic models (workload_models.py).

The fast path builds the records of a valid document without importing pydantic; on any doubt it
leaves the document to the models. These tests hold it to that: what it accepts, the models accept
and build equal (same types too); what the models refuse, it never accepts; and the records and
the models declare the same fields, defaults and allowed values.
"""

from __future__ import annotations

import json
import subprocess
import sys
import typing
from dataclasses import MISSING, fields
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from firstfault import bundle, workload_models
from firstfault.bundle import BundleError, WindowSpec, WorkloadFile, WorkloadSpec, fast_workload_file, load_workload
from firstfault.formats import FORMATS

ROOT = Path(__file__).resolve().parents[1]
SEED = 20261203
RECORDS = (bundle.WindowSpec, bundle.WorkloadSpec, bundle.SourceSpec, bundle.WorkloadFile)


def typed(x: Any) -> Any:
    """`x` as nested tuples that also compare types (1 == True, but not here); a model as the record of its name
    (the models nest their own models, which the records' conversion makes records)."""
    if isinstance(x, RECORDS):
        return type(x).__name__, tuple((f.name, typed(getattr(x, f.name))) for f in fields(x))
    if isinstance(x, BaseModel):
        return type(x).__name__, tuple((name, typed(getattr(x, name))) for name in type(x).model_fields)
    if isinstance(x, dict):
        return "dict", tuple((typed(k), typed(v)) for k, v in x.items())
    if isinstance(x, list):
        return "list", tuple(typed(v) for v in x)
    return type(x).__name__, repr(x)


def via_models(doc: Any) -> WorkloadFile | None:
    """What the models make of `doc`, None when they refuse it (a ValidationError, or a raw error of a check)."""
    try:
        return WorkloadFile.model_validate(doc)
    except (ValidationError, ValueError, TypeError, ArithmeticError, OSError):
        return None


# -- one definition --

@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.__name__)
def test_records_and_models_declare_the_same_fields_and_defaults(record: type) -> None:
    model = getattr(workload_models, record.__name__)
    ours = {f.name: f for f in fields(record)}
    theirs = model.model_fields
    assert list(ours) == list(theirs)
    for name, f in ours.items():
        m = theirs[name]
        assert (f.default is MISSING and f.default_factory is MISSING) == m.is_required(), name
        if not m.is_required():
            mine = f.default_factory() if f.default_factory is not MISSING else f.default
            assert typed(mine) == typed(m.get_default(call_default_factory=True)), name


def _literal(model: type, name: str) -> set[str]:
    hint = typing.get_type_hints(model)[name]
    return set(typing.get_args(hint))


def test_fast_path_allows_what_the_literals_allow() -> None:
    assert _literal(workload_models.WorkloadSpec, "scheduler") == bundle.SCHEDULERS
    assert _literal(workload_models.SourceSpec, "kind") == bundle.SOURCE_KINDS
    assert _literal(workload_models.SourceSpec, "rank_prefix") == bundle.RANK_PREFIXES
    assert _literal(workload_models.WorkloadFile, "apiVersion") == {"firstfault/v1"}
    # The record's annotations say the same (they document the type the rest of the code reads).
    assert _literal(bundle.WorkloadSpec, "scheduler") == bundle.SCHEDULERS
    assert _literal(bundle.SourceSpec, "kind") == bundle.SOURCE_KINDS


# -- the shipped bundles take the fast path --

def _shipped() -> list[Path]:
    return sorted([*ROOT.glob("examples/*/workload.yaml"), *ROOT.glob("tests/scenarios/*/workload.yaml")])


def test_every_shipped_workload_takes_the_fast_path_and_matches_the_models() -> None:
    paths = _shipped()
    assert len(paths) > 10
    for p in paths:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
        fast = fast_workload_file(doc)
        assert fast is not None, p
        assert typed(fast) == typed(WorkloadFile.model_validate(doc)), p


def test_loading_a_valid_bundle_imports_no_pydantic_and_a_bad_one_does(tmp_path: Path) -> None:
    code = ("import sys, json; from firstfault.bundle import load_bundle, BundleError\n"
            "b = load_bundle(sys.argv[1]); clean = 'pydantic' in sys.modules\n"
            "try:\n    load_bundle(sys.argv[2])\nexcept BundleError as e:\n    msg = str(e)\n"
            "print(json.dumps([clean, 'pydantic' in sys.modules, b.workload.id, msg]))")
    bad = tmp_path
    (bad / "workload.yaml").write_text(yaml.safe_dump({**VALID, "workload": {"id": "1", "nodes": ["a"], "node": "b"}}))
    r = subprocess.run([sys.executable, "-c", code, str(ROOT / "examples" / "nvlink-xid149"), str(bad)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    before, after, wid, msg = json.loads(r.stdout)
    assert (before, after, wid) == (False, True, "4242")
    assert "unknown key" in msg


# -- the fast path never says yes where the models say no --

# Each field: values the models take as they are, and values near them (wrong types, bools for ints,
# ints for strings, YAML dates and datetimes, odd zones, other shapes of `ranks` and `gpus`). A document
# draws how wild it is, so that clean ones (the fast path's to take) and each kind of fault all come up.
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
        "kind": (st.sampled_from(sorted(bundle.SOURCE_KINDS)), st.sampled_from(["Kernel", "dmesg"]) | _WILD),
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
@settings(max_examples=600, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(_FILE)
def test_the_fast_path_accepts_only_what_the_models_accept_and_builds_the_same(doc: Any) -> None:
    fast = fast_workload_file(doc)
    if fast is not None:
        made = via_models(doc)
        assert made is not None, doc
        assert typed(fast) == typed(made)


@seed(SEED)
@settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(_FILE)
def test_what_the_models_refuse_the_fast_path_never_accepts(doc: Any) -> None:
    """The other side of the same rule, with the models asked first (every refusal is a case here)."""
    if via_models(doc) is None:
        assert fast_workload_file(doc) is None


# -- where the fast path steps aside, the models decide as before --

VALID = {"apiVersion": "firstfault/v1", "workload": {"id": "1", "window": {"start": "2026-11-02T10:00:00Z"}},
         "sources": [{"kind": "kernel", "path": "k.log"}]}


@pytest.mark.parametrize(("where", "value", "expect"), [
    (("workload", "id"), True, "True"),  # the model's own coercion of an int (a bool is one)
    (("workload", "ranks"), {"n": [1, "2", True]}, {"n": [1, 2, 1]}),
    (("workload", "gpus"), {"n": {"0000:3b:00": 2.0}}, {"n": {"0000:3b:00": 2}}),
    (("workload", "window", "start"), date(2026, 11, 2), "2026-11-02"),
])
def test_what_the_fast_path_leaves_to_the_models_comes_back_coerced(where: tuple[str, ...], value: Any,
                                                                     expect: Any) -> None:
    doc = json.loads(json.dumps(VALID))
    node = doc
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    assert fast_workload_file(doc) is None
    got: Any = WorkloadFile.model_validate(doc)
    for key in where:
        got = getattr(got, key)
    assert typed(got) == typed(expect)


def test_a_reversed_window_still_gets_the_models_message(tmp_path: Path) -> None:
    (tmp_path / "workload.yaml").write_text(yaml.safe_dump({**VALID, "workload": {
        "id": 3, "window": {"start": "2026-11-02T10:00:00Z", "end": "2026-11-02T09:00:00Z"}}}))
    with pytest.raises(BundleError, match=r"workload\.window\.end: Value error, .* is before start .*reversed"):
        load_workload(tmp_path)


# -- the records behave as the models did --

def test_a_record_built_by_hand_validates_and_coerces_like_the_model() -> None:
    spec = WorkloadSpec(id=7, window={"start": datetime(2026, 11, 2, 10, tzinfo=UTC)}, exit_code=9)
    assert (spec.id, spec.exit_code, spec.window) == ("7", "9", WindowSpec(start="2026-11-02T10:00:00+00:00"))
    with pytest.raises(ValidationError) as exc:
        WorkloadSpec(id="1", timezone="Mars/Olympus")
    assert exc.value.title == "WorkloadSpec" and "unknown time zone" in str(exc.value)
    copied = spec.model_copy(update={"attempt": 2})
    assert (copied.attempt, spec.attempt, copied.window is spec.window) == (2, 0, True)
    deep = spec.model_copy(deep=True)
    assert deep == spec and deep.window is not spec.window
    assert WorkloadSpec.model_validate_json(spec.model_dump_json()) == spec


def test_a_record_is_a_field_type_of_other_models() -> None:
    from firstfault.collect.wire import AnalyzeRequest

    spec = WorkloadSpec(id="1", nodes=["a"])
    req = AnalyzeRequest(context=spec)
    assert req.context is spec
    assert AnalyzeRequest.model_validate_json(req.model_dump_json()).context == spec
    with pytest.raises(ValidationError) as exc:
        AnalyzeRequest.model_validate({"context": {"id": "1", "window": {"end": "yesterday"}}})
    assert [e["loc"] for e in exc.value.errors()] == [("context", "window", "end")]
    assert AnalyzeRequest.model_json_schema()["$defs"]["WindowSpec"]["properties"]["start"]["anyOf"][0] == {
        "format": "date-time", "type": "string"}
