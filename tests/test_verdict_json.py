"""The verdict document as records.py writes and reads it: bytes that survive a round trip, strict reading.

The verdict records are `records.Record`s (msgspec Structs). What a sink, the Service or `analyze --format
json` writes must read back as the same verdict and be written again to the same bytes, for the shipped
examples and for random verdict-shaped records with arbitrary text (control characters, quotes, non-ASCII,
astral code points, integers past 64 bits).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from firstfault import records
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
from tests import tier

ROOT = Path(__file__).resolve().parents[1]
SEED = 20261204
BOUNDED = settings(max_examples=tier.examples(120), deadline=None, database=None, derandomize=False,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Any text UTF-8 can hold: every code point but the lone surrogates (their own test below).
text = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
# Short, with control characters, quotes, backslashes, separators JSON escapes or must not escape.
tricky = st.text(st.sampled_from(["\x00", "\x1f", "\x7f", "\b", "\f", "\n", "\r", "\t", '"', "\\", "/", "\u2028",
                                  "\ufeff", "é", "\U0001f600", "<", "&", "'"]), max_size=6)
s = st.one_of(text, tricky)
opt_s = st.none() | s
ints = st.integers() | st.sampled_from([0, -1, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**40])
opt_i = st.none() | ints
strs = st.lists(s, max_size=3)


def _few(x: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    return st.lists(x, max_size=3)


def _verdicts() -> st.SearchStrategy[Verdict]:
    cause = st.builds(Cause, category=s, domain=s, summary=s, nodes=strs, devices=strs, first_seen=opt_s, rule=s,
                      recommended_action=opt_s, count=ints, why=opt_s)
    symptom = st.builds(Symptom, category=s, nodes=strs, ranks=_few(ints), count=ints, first_seen=opt_s,
                        explained_by=opt_s)
    evidence = st.builds(EvidenceItem, role=st.sampled_from(["cause", "candidate", "symptom", "lead"]), source=s,
                         node=opt_s, file=opt_s, line=opt_i, time=opt_s, event=s, text=s, query=opt_s, rank=opt_i,
                         category=opt_s, port=opt_s,
                         # unset: absent from the document (a fabric source sets it)
                         cable=st.just(records.UNSET) | st.builds(Cable, switch=s, switch_port=s, node=s, port=s))
    lead = st.builds(Lead, kind=st.sampled_from(["laggard_rank", "desync", "first_exit", "stuck_frame"]), nodes=strs,
                     ranks=_few(ints), summary=s, first_seen=opt_s, evidence=_few(ints), devices=strs)
    coverage = st.builds(CoverageItem, source=s, status=st.sampled_from(["complete", "partial", "missing"]),
                         nodes_seen=ints, nodes_expected=ints, lines=ints, files=ints, missing_nodes=strs, note=opt_s)
    error = st.builds(ErrorItem, source=s, file=opt_s, line=opt_i, message=s)
    unrec = st.builds(Unrecognized, template=s, count=ints, nodes=strs,
                      first=st.builds(UnrecognizedLine, file=opt_s, line=opt_i, time=opt_s, text=s))
    workload = st.builds(WorkloadRef, id=s, attempt=ints, name=opt_s, scheduler=s,
                         window=st.builds(Window, start=opt_s, end=opt_s), nodes=strs)
    return st.builds(
        Verdict, apiVersion=s, workload=workload, terminal_state=opt_s,
        outcome=st.sampled_from(["failed", "succeeded"]), attributed_domain=st.sampled_from(["hardware", "none"]),
        root_cause=st.none() | cause, candidates=_few(cause), affected_nodes=strs,
        symptoms=_few(symptom), leads=_few(lead), evidence=_few(evidence), coverage=_few(coverage),
        errors=_few(error), catalog=st.builds(CatalogRef, version=s, sha256=s), analyzed_at=s,
        secondary_causes=_few(cause), explanation=strs, unrecognized=_few(unrec), provisional=st.booleans())


@seed(SEED)
@BOUNDED
@given(_verdicts())
def test_a_random_verdict_reads_back_and_is_written_to_the_same_bytes(v: Verdict) -> None:
    for indent in (None, 2):
        written = records.dumps(v, indent=indent)
        again = records.decode(written, Verdict)
        assert again == v
        assert records.dumps(again, indent=indent) == written
    assert records.encode(v) == records.dumps(v).encode("utf-8")


def test_every_example_verdict_round_trips_to_the_same_bytes() -> None:
    from firstfault.analysis.analyze import Analyzer

    analyzer = Analyzer()
    bundles = sorted(p for p in (ROOT / "examples").iterdir() if (p / "workload.yaml").is_file())
    assert len(bundles) >= 3
    for bundle in bundles:
        v = analyzer.analyze_path(str(bundle))
        for indent in (None, 2):
            written = records.dumps(v, indent=indent)
            assert records.dumps(records.decode(written, Verdict), indent=indent) == written, bundle


def test_the_indented_form_is_the_documents_style() -> None:
    """Two spaces a level, `": "` after a key, empty lists as `[]`, non-ASCII as is, None as null."""
    w = WorkloadRef(id="é1", window=Window(start=None, end="e"), nodes=[])
    assert records.dumps(w, indent=2) == (
        '{\n  "id": "é1",\n  "attempt": 0,\n  "name": null,\n  "scheduler": "static",\n'
        '  "window": {\n    "start": null,\n    "end": "e"\n  },\n  "nodes": []\n}')
    assert records.dumps(w) == ('{"id":"é1","attempt":0,"name":null,"scheduler":"static",'
                                '"window":{"start":null,"end":"e"},"nodes":[]}')


def test_an_unset_cable_is_absent_and_a_set_one_is_written() -> None:
    e = EvidenceItem(role="cause", source="kernel", node="n", file=None, line=None, time=None, event="net.link",
                     text="t")
    assert '"cable"' not in records.dumps(e) and '"port":null' in records.dumps(e)  # the contract's other nulls
    assert records.decode(records.dumps(e), EvidenceItem) == e
    e.cable = Cable(switch="leaf01", switch_port="3", node="n", port="mlx5_0:1")
    assert records.dumps(e).endswith(',"cable":{"switch":"leaf01","switch_port":"3","node":"n","port":"mlx5_0:1"}}')
    assert records.decode(records.dumps(e), EvidenceItem) == e


@pytest.mark.parametrize(("doc", "where", "message"), [
    ({"source": "kernel", "message": "m", "bogus": 1}, ("bogus",), "unknown key"),
    ({"source": "kernel", "message": "m", "line": False}, ("line",), "Expected `int | null`, got `bool`"),
    ({"source": "kernel", "message": "m", "line": "3"}, ("line",), "Expected `int | null`, got `str`"),
    ({"source": "kernel"}, (), "Object missing required field `message`"),
])
def test_a_bad_record_is_refused_naming_the_field(doc: dict[str, Any], where: tuple[str, ...], message: str) -> None:
    with pytest.raises(records.ValidationError) as info:
        records.convert(doc, ErrorItem)
    assert records.location(info.value) == (where, message)


def test_a_verdict_field_of_the_wrong_shape_is_named_by_its_path() -> None:
    v = Verdict(workload=WorkloadRef(id="1", window=Window(), nodes=[]), terminal_state=None, outcome="failed",
                attributed_domain="unknown", root_cause=None, candidates=[], affected_nodes=[], symptoms=[],
                evidence=[], coverage=[], errors=[], catalog=CatalogRef(version="1", sha256="0"), analyzed_at="now")
    doc = records.to_builtins(v)
    assert records.convert(copy.deepcopy(doc), Verdict) == v
    doc["coverage"] = [{"source": "kernel", "status": "weird", "nodes_seen": 1, "nodes_expected": 1, "lines": 1}]
    with pytest.raises(records.ValidationError) as info:
        records.convert(doc, Verdict)
    where, message = records.location(info.value)
    assert (where, message) == (("coverage", 0, "status"), "Invalid enum value 'weird'")
    doc["coverage"], doc["root_cause"] = [], "x"
    with pytest.raises(records.ValidationError) as info:
        records.convert(doc, Verdict)
    assert records.location(info.value)[0] == ("root_cause",)


@seed(SEED)
@BOUNDED
@given(st.builds(lambda a, c, b: a + c + b, text, st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), text))
def test_a_lone_surrogate_cannot_be_written(bad: str) -> None:
    """No JSON holds one: writing it fails (the Service answers 500) instead of sending a broken document."""
    with pytest.raises(UnicodeEncodeError):
        records.encode(ErrorItem(source="kernel", message=bad))


def test_replace_copies_shallowly_and_deepcopy_deeply() -> None:
    w = WorkloadRef(id="1", window=Window(), nodes=["a"])
    shallow, deep = records.replace(w, id="2"), records.replace(copy.deepcopy(w), id="3")
    w.nodes.append("b")
    assert (shallow.id, shallow.nodes, shallow.window is w.window) == ("2", ["a", "b"], True)
    assert (deep.id, deep.nodes, deep.window is w.window, deep.window == w.window) == ("3", ["a"], False, True)
