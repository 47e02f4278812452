"""The catalog validators (engine/validators.py), the event kinds they take from the extractors, and
templates that never render a placeholder."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from firstfault.analysis import analyze as analyze_mod
from firstfault.engine.attribute import Finding, render
from firstfault.engine.loader import CatalogError, default_root, load_catalog, shipped_catalog
from firstfault.engine.rules import Rule
from firstfault.engine.validators import VALIDATORS, event_kinds, explain_set_cycle
from firstfault.model import Event, Evidence

REPO = Path(__file__).resolve().parents[2]


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "catalog"
    shutil.copytree(default_root(), dst, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return dst


def _problems(root: Path) -> list[str]:
    with pytest.raises(CatalogError) as exc:
        load_catalog(root)
    return exc.value.problems


def test_validators_have_unique_ids_and_descriptions_and_docs_list_them() -> None:
    ids = [v.id for v in VALIDATORS]
    assert len(ids) == len(set(ids))
    assert all(v.description for v in VALIDATORS)
    docs = (REPO / "docs" / "rules.md").read_text()
    assert not [i for i in ids if f"`{i}`" not in docs], "docs/rules.md lists every validator id"


def test_event_kinds_come_from_the_extractors() -> None:
    kinds = event_kinds()
    assert kinds["gpu.xid"] >= {"xid", "xid_class", "mnemonic", "pci", "via", "host"}
    assert "peer_node" in kinds["nccl.ib_completion_error"]  # added by normalisation
    assert "node.silent" in kinds and "fr.pg_state" in kinds and "stack.frame" in kinds
    documented = set(re.findall(r"^\| `([a-z0-9_]+\.[a-z0-9_.]+)` \|", (REPO / "docs" / "events.md").read_text(),
                                re.MULTILINE))
    assert documented == set(kinds), "docs/events.md documents exactly the kinds the extractors declare"


def test_the_events_of_the_scenarios_are_what_their_extractors_declare(monkeypatch: pytest.MonkeyPatch) -> None:
    """The declarations are true: every event of the scenario corpus has a declared kind and fields."""
    seen: list[Event] = []
    real = analyze_mod.attribute

    def spy(events: list[Event], *a: object, **kw: object) -> object:
        seen.extend(events)
        return real(events, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(analyze_mod, "attribute", spy)
    for wl in sorted((REPO / "tests" / "scenarios").glob("*/workload.yaml")):
        analyze_mod.analyze(str(wl.parent))
    kinds = event_kinds()
    assert len({e.kind for e in seen}) >= 25
    bad = sorted({(e.kind, k) for e in seen for k in e.fields if e.kind not in kinds or k not in kinds[e.kind]})
    assert not bad, f"undeclared (kind, field): {bad}"


def test_a_loop_of_explain_sets_is_rejected(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    p = root / "catalog.yaml"
    text = p.read_text()
    text = text.replace("  collective_fallout:\n", "  collective_fallout:\n    - set: fabric_fault\n", 1)
    text = text.replace("  fabric_fault:\n", "  fabric_fault:\n    - set: collective_fallout\n", 1)
    p.write_text(text)
    problems = _problems(root)
    assert any("[explains-cycle]" in x and "collective_fallout -> fabric_fault -> collective_fallout" in x
               for x in problems), problems


def test_explain_sets_may_name_other_sets() -> None:
    from firstfault.engine.rules import Explains

    sets = {"a": [Explains(set="b"), Explains(category="x.y")], "b": [Explains(category="z")]}
    assert explain_set_cycle(sets) is None
    assert explain_set_cycle({"a": [Explains(set="a")]}) == ["a", "a"]


def test_a_template_field_the_events_lack_is_caught_at_load_time(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    p = root / "rules" / "gpu-nvswitch-fatal.yaml"
    text = p.read_text()
    # The template that printed "SXid ?20034": sxid is a gpu.sxid field, code a gpu.fabricmanager one.
    p.write_text(text.replace("(SXid {sxid|code} {fm_event|})", "(SXid {sxid}{code} {fm_event})"))
    problems = [x for x in _problems(root) if "[template-field]" in x]
    line = next(i for i, ln in enumerate(p.read_text().splitlines(), 1) if ln.startswith("summary:"))
    assert any(f"gpu-nvswitch-fatal.yaml:{line}:" in x and "{sxid}: event kind gpu.fabricmanager" in x
               for x in problems), problems
    assert any("{code}: event kind gpu.sxid" in x for x in problems)


def test_a_rule_reading_another_vendors_accelerator_needs_that_vendors_action(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    p = root / "rules" / "gpu-memory-xid.yaml"
    text = p.read_text()
    start = text.index("vendor_actions:")
    end = text.index("\ntests:", start)
    p.write_text(text[:start] + text[end + 1:])  # its vendor actions taken away
    problems = [x for x in _problems(root) if "[vendor-actions]" in x]
    assert any("gpu-memory-xid.yaml" in x and "amd's accelerator" in x for x in problems), problems
    assert any("aws's accelerator" in x for x in problems), problems


def test_near_miss_vendor_actions_for_no_vendor_or_a_rule_of_no_accelerator_are_rejected(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    p = root / "rules" / "gpu-memory-xid.yaml"
    p.write_text(p.read_text().replace("vendor_actions:\n", "vendor_actions:\n  nvidia2: \"drain {node}\"\n", 1))
    q = root / "rules" / "host-oom.yaml"
    q.write_text(q.read_text().replace("\ntests:", "\nvendor_actions:\n  amd: \"lower host memory use\"\ntests:", 1))
    problems = [x for x in _problems(root) if "[vendor-actions]" in x]
    assert any("'nvidia2' is no vendor" in x for x in problems), problems
    assert any("host-oom.yaml" in x and "matches no row" in x for x in problems), problems


def test_a_rule_on_a_kind_no_extractor_emits_is_rejected(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    p = root / "rules" / "host-hardware-mce.yaml"
    p.write_text(p.read_text().replace("event: host.mce", "event: host.mcelog", 1))
    assert any("[event-kind]" in x and "host.mcelog" in x for x in _problems(root))


def _finding(rule_id: str, **fields: object) -> Finding:
    rule = shipped_catalog().by_id(rule_id)
    assert isinstance(rule, Rule)
    ev = Event(kind="x", time=None, node="n1", fields=dict(fields),  # type: ignore[arg-type]
               evidence=Evidence(source="kernel", file="f", line=1, text="t"))
    return Finding(rule=rule, category=rule.category, domain=rule.domain or "", events=[ev], nodes=["n1"],
                   devices=[], first=None, count=1, weak=False)


@pytest.mark.parametrize(("rule_id", "fields", "want"), [
    # The real outputs that printed "?": "(illegal_address?)", "SXid ?20034".
    ("app-illegal-access", {"error": "illegal_address"},
     "Illegal memory access in the workload on n1 (illegal address)"),
    ("app-illegal-access", {"xid": 13}, "Illegal memory access in the workload on n1 (Xid 13)"),
    ("gpu-nvswitch-fatal", {"code": 20034, "fm_event": "nvswitch_fatal"},
     "NVSwitch fatal error on n1 (SXid 20034 nvswitch fatal)"),
    ("gpu-nvswitch-fatal", {"sxid": 12028}, "NVSwitch fatal error on n1 (SXid 12028)"),
    ("host-oom", {}, "OOM killer (node memory or a memory limit) ended a process on n1"),
    ("host-oom", {"killer": "earlyoom", "proc": "python"},
     "earlyoom (node memory or a memory limit) ended python on n1"),
    ("app-crash", {"signal": "SIGSEGV"}, "n1 crashed (SIGSEGV)"),
    # A value's own brackets are kept: only the template's text around a missing field is tidied.
    ("node-unreachable", {"reason": "execve(): No such file"}, "n1 stopped responding (execve(): No such file)"),
    ("node-unreachable", {}, "n1 stopped responding"),
])
def test_templates_render_no_placeholder(rule_id: str, fields: dict[str, object], want: str) -> None:
    got = render(shipped_catalog().by_id(rule_id).summary, _finding(rule_id, **fields))  # type: ignore[union-attr]
    assert got == want
    assert "?" not in got
