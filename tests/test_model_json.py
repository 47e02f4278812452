"""The verdict records (lazymodel dataclasses) write the JSON pydantic writes, without importing pydantic.

`model_dump_json` has a plain writer of its own (lazymodel.plain_json); these tests hold its output to
pydantic's `TypeAdapter.dump_json` byte for byte, over random verdict-shaped records with arbitrary text,
and check that the plain writer was the one that answered.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from firstfault.lazymodel import adapter, model_errors, plain_json
from firstfault.model import (
    Cable,
    CatalogRef,
    Cause,
    CoverageItem,
    ErrorItem,
    EvidenceItem,
    Lead,
    Symptom,
    Unrecognized,
    UnrecognizedLine,
    Verdict,
    Window,
    WorkloadRef,
)

ROOT = Path(__file__).resolve().parents[1]
SEED = 20261202
BOUNDED = settings(max_examples=120, deadline=None, database=None, derandomize=False,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
INDENTS = (None, 0, 2, 4)

# Any text pydantic can write: every code point but the lone surrogates (their own test below).
text = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
# Short, with control characters, quotes, backslashes, separators JSON escapes or must not escape.
tricky = st.text(st.sampled_from(["\x00", "\x1f", "\x7f", "\b", "\f", "\n", "\r", "\t", '"', "\\", "/", "\u2028",
                                  "\ufeff", "é", "\U0001f600", "<", "&", "'"]), max_size=6)
s = st.one_of(text, tricky)
opt_s = st.none() | s
ints = st.integers() | st.sampled_from([0, -1, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**40])
opt_i = st.none() | ints
strs = st.lists(s, max_size=3)


def _verdicts() -> st.SearchStrategy[Verdict]:
    cause = st.builds(Cause, category=s, domain=s, summary=s, nodes=strs, devices=strs, first_seen=opt_s, rule=s,
                      recommended_action=opt_s, count=ints, why=opt_s)
    symptom = st.builds(Symptom, category=s, nodes=strs, ranks=st.lists(ints, max_size=3), count=ints,
                        first_seen=opt_s, explained_by=opt_s)
    evidence = st.builds(EvidenceItem, role=st.sampled_from(["cause", "candidate", "symptom", "lead"]), source=s,
                         node=opt_s, file=opt_s, line=opt_i, time=opt_s, event=s, text=s, query=opt_s, rank=opt_i,
                         category=opt_s, port=opt_s,
                         # OMIT_NONE: absent from both writers' output while None (a fabric source sets it)
                         cable=st.none() | st.builds(Cable, switch=s, switch_port=s, node=s, port=s))
    lead = st.builds(Lead, kind=st.sampled_from(["laggard_rank", "desync", "first_exit", "stuck_frame"]), nodes=strs,
                     ranks=st.lists(ints, max_size=3), summary=s, first_seen=opt_s,
                     evidence=st.lists(ints, max_size=3), devices=strs)
    coverage = st.builds(CoverageItem, source=s, status=st.sampled_from(["complete", "partial", "missing"]),
                         nodes_seen=ints, nodes_expected=ints, lines=ints, files=ints, missing_nodes=strs, note=opt_s)
    error = st.builds(ErrorItem, source=s, file=opt_s, line=opt_i, message=s)
    unrec = st.builds(Unrecognized, template=s, count=ints, nodes=strs,
                      first=st.builds(UnrecognizedLine, file=opt_s, line=opt_i, time=opt_s, text=s))
    workload = st.builds(WorkloadRef, id=s, attempt=ints, name=opt_s, scheduler=s,
                         window=st.builds(Window, start=opt_s, end=opt_s), nodes=strs)
    def few(x: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
        return st.lists(x, max_size=3)

    return st.builds(
        Verdict, apiVersion=s, workload=workload, terminal_state=opt_s,
        outcome=st.sampled_from(["failed", "succeeded"]), attributed_domain=st.sampled_from(["hardware", "none"]),
        root_cause=st.none() | cause, candidates=few(cause), affected_nodes=strs,
        symptoms=few(symptom), leads=few(lead), evidence=few(evidence),
        coverage=few(coverage), errors=few(error),
        catalog=st.builds(CatalogRef, version=s, sha256=s), analyzed_at=s, secondary_causes=few(cause),
        explanation=strs, unrecognized=few(unrec))


def _pydantic(v: Any, indent: int | None) -> str:
    return adapter(type(v)).dump_json(v, indent=indent).decode("utf-8")


@seed(SEED)
@BOUNDED
@given(_verdicts())
def test_plain_writer_writes_pydantics_bytes(v: Verdict) -> None:
    for indent in INDENTS:
        mine = plain_json(v, indent)
        assert mine is not None  # the plain writer answered: not pydantic compared with itself
        assert mine == _pydantic(v, indent)
        assert v.model_dump_json(**({} if indent is None else {"indent": indent})) == mine


@seed(SEED)
@BOUNDED
@given(_verdicts())
def test_plain_json_reads_back_as_the_same_verdict(v: Verdict) -> None:
    assert Verdict.model_validate_json(v.model_dump_json()) == v


@seed(SEED)
@BOUNDED
@given(st.builds(lambda a, c, b: a + c + b, text, st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), text))
def test_a_lone_surrogate_gets_pydantics_error(bad: str) -> None:
    item = ErrorItem(source="kernel", message=bad)
    assert plain_json(item) is None
    for kw in ({}, {"indent": 2}):
        with pytest.raises(PydanticSerializationError, match="surrogates not allowed"):
            item.model_dump_json(**kw)


@pytest.mark.parametrize("record", [
    ErrorItem(source="kernel", line=True, message="m"),  # bool in an int field: pydantic writes 1
    CoverageItem(source="kernel", status="complete", nodes_seen=1, nodes_expected=2.0, lines=3),  # type: ignore[arg-type]
    Symptom(category="c", nodes=("a", "b"), ranks=[1], count=1, first_seen=None, explained_by=None),  # type: ignore[arg-type]
    ErrorItem(source=7, message="m"),  # type: ignore[arg-type]
    EvidenceItem(role="cause", source="k", node=None, file=None, line=10**5000, time=None, event="e", text="t"),
])
def test_what_the_plain_writer_does_not_know_goes_to_pydantic(record: Any) -> None:
    assert plain_json(record) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns of the unexpected type; its output is still the reference
        for indent in INDENTS:
            assert record.model_dump_json(**({} if indent is None else {"indent": indent})) == _pydantic(record, indent)


def test_an_omitted_field_is_absent_while_none_and_reads_back() -> None:
    e = EvidenceItem(role="cause", source="kernel", node="n", file=None, line=None, time=None, event="net.link",
                     text="t")
    assert '"cable"' not in e.model_dump_json() and '"cable"' not in _pydantic(e, None)
    assert EvidenceItem.model_validate_json(e.model_dump_json()) == e
    e.cable = Cable(switch="leaf01", switch_port="3", node="n", port="mlx5_0:1")
    for indent in INDENTS:
        mine = plain_json(e, indent)
        assert mine is not None and '"cable"' in mine and mine == _pydantic(e, indent)
    assert EvidenceItem.model_validate_json(e.model_dump_json()) == e
    # a record with no omitted field still writes its None fields (the contract's nulls)
    assert '"port":null' in e.model_dump_json()


def test_other_options_go_to_pydantic() -> None:
    e = ErrorItem(source="kernel", message="m")
    assert e.model_dump_json(exclude_none=True) == '{"source":"kernel","message":"m"}'
    assert plain_json(e, -1) is None


def test_examples_verdicts_are_written_by_the_plain_writer() -> None:
    from firstfault.analysis.analyze import Analyzer

    analyzer = Analyzer()
    for bundle in sorted(p for p in (ROOT / "examples").iterdir() if p.is_dir()):
        v = analyzer.analyze_path(str(bundle))
        for indent in (None, 2):
            mine = plain_json(v, indent)
            assert mine is not None, bundle
            assert mine == _pydantic(v, indent), bundle


def test_an_unknown_key_is_reported_as_a_models_is() -> None:
    good = {"source": "kernel", "message": "m"}
    with pytest.raises(ValidationError) as exc:
        ErrorItem.model_validate_json(json.dumps({**good, "bogus": 1}))
    assert exc.value.errors()[0]["type"] == "unexpected_keyword_argument"  # pydantic's word for a dataclass
    assert [(e["type"], e["loc"], e["msg"]) for e in model_errors(exc.value)] == [
        ("extra_forbidden", ("bogus",), "Extra inputs are not permitted")]
    with pytest.raises(ValidationError) as exc:
        Verdict.model_validate_json(json.dumps({"root_cause": "x"}))
    types = {e["loc"][0]: e["type"] for e in model_errors(exc.value)}
    assert types["root_cause"] == "model_type" and types["workload"] == "missing"
    with pytest.raises(ValidationError) as exc:
        Cause.model_validate("x")
    assert [(e["type"], e["msg"]) for e in model_errors(exc.value)] == [
        ("model_type", "Input should be a valid dictionary or instance of Cause")]


# Build a verdict with every record kind and write it both ways, in an interpreter that has not
# imported pydantic; report whether it got imported.
PROBE = """
import json, sys
from firstfault.model import (CatalogRef, Cause, CoverageItem, ErrorItem, EvidenceItem, Lead, Symptom, Unrecognized,
                              UnrecognizedLine, Verdict, Window, WorkloadRef)
cause = Cause(category="gpu.nvlink", domain="hardware", summary="Xid 149 \\u00e9 \\"q\\" \\x01", nodes=["n1"],
              devices=["n1/gpu0"], first_seen="2026-11-02T10:00:00.000000Z", rule="r", count=2**70)
v = Verdict(workload=WorkloadRef(id="1", window=Window(start=None, end="e"), nodes=["n1", "n2"]),
            terminal_state="FAILED", outcome="failed", attributed_domain="hardware", root_cause=cause,
            candidates=[], affected_nodes=["n1"],
            symptoms=[Symptom(category="c", nodes=[], ranks=[0, 3], count=1, first_seen=None, explained_by="x")],
            leads=[Lead(kind="desync", nodes=["n2"], ranks=[1], summary="s", first_seen=None, evidence=[0])],
            evidence=[EvidenceItem(role="cause", source="kernel", node="n1", file="k.log", line=3, time=None,
                                   event="gpu.xid", text="tab\\there")],
            coverage=[CoverageItem(source="kernel", status="complete", nodes_seen=2, nodes_expected=2, lines=9)],
            errors=[ErrorItem(source="metrics", message="m")], catalog=CatalogRef(version="1", sha256="0" * 64),
            analyzed_at="now", unrecognized=[Unrecognized(template="t", count=1, nodes=["n1"],
                                              first=UnrecognizedLine(file=None, line=None, time=None, text="x"))])
out = {"indent": v.model_dump_json(indent=2), "compact": v.model_dump_json()}
out["pydantic"] = sorted(m for m in sys.modules if m.split(".")[0] in ("pydantic", "pydantic_core"))
print(json.dumps(out))
"""


def test_building_and_writing_a_verdict_imports_no_pydantic() -> None:
    r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, check=True)
    out = json.loads(r.stdout)
    assert out["pydantic"] == []
    # What it wrote is pydantic's output for the same verdict (which this process may import).
    v = Verdict.model_validate_json(out["compact"])
    assert out["compact"] == _pydantic(v, None)
    assert out["indent"] == _pydantic(v, 2)
    assert v.root_cause is not None and v.root_cause.count == 2**70


def test_model_copy_shallow_and_deep() -> None:
    w = WorkloadRef(id="1", window=Window(), nodes=["a"])
    shallow, deep = w.model_copy(update={"id": "2"}), w.model_copy(update={"id": "3"}, deep=True)
    w.nodes.append("b")
    assert (shallow.id, shallow.nodes, shallow.window is w.window) == ("2", ["a", "b"], True)
    assert (deep.id, deep.nodes, deep.window is w.window, deep.window == w.window) == ("3", ["a"], False, True)


def test_models_eq_and_repr_are_what_dataclass_generates() -> None:
    from dataclasses import dataclass, field, fields

    @dataclass(slots=True, kw_only=True)
    class Twin:  # UnrecognizedLine's fields, with dataclass's own == and repr
        file: str | None
        line: int | None
        time: str | None
        text: str = field(default="")

    assert [f.name for f in fields(Twin)] == [f.name for f in fields(UnrecognizedLine)]
    kw: dict[str, Any] = {"file": "a'b", "line": 3, "time": None, "text": "x\n"}
    rec = UnrecognizedLine(**kw)
    assert repr(rec) == repr(Twin(**kw)).replace(Twin.__qualname__, "UnrecognizedLine", 1)
    assert rec == UnrecognizedLine(**kw) and rec != UnrecognizedLine(**{**kw, "line": 4})
    assert rec != Twin(**kw) and rec.__eq__(Twin(**kw)) is NotImplemented
    with pytest.raises(TypeError, match="unhashable"):
        hash(rec)
