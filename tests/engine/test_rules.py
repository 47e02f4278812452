"""The rule catalog's records (engine/rules.py): a rule file and catalog.yaml validated into them, each
constraint refusing what it must (the problem named by file, line and key path) and passing the value at
its edge."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from firstfault import yamlio
from firstfault.engine import rules  # its TestEvent by the module: pytest would collect a bare Test* class
from firstfault.engine.loader import CatalogError, default_root, load_catalog
from firstfault.engine.rules import Op, Rule, Selection, read_rule, read_settings
from firstfault.records import ValidationError, problems

# A shipped rule, edited by each case below (its text is the catalog's own).
RULE = (default_root() / "rules" / "app-crash.yaml").read_text(encoding="utf-8")
SETTINGS = (default_root() / "catalog.yaml").read_text(encoding="utf-8")


def _line(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def _problem(text: str) -> str:
    with pytest.raises(ValidationError) as info:
        read_rule(yamlio.load(text))
    (problem,) = problems(info.value, text, "app-crash.yaml", "[schema]")
    return problem


def test_a_rule_file_becomes_records_all_the_way_down() -> None:
    rule = read_rule(yamlio.load(RULE.replace("      signal: SIGABRT\n      by: self\n",
                                              "      signal: SIGABRT\n      by: {not: [runtime, 3]}\n")))
    assert isinstance(rule, Rule) and all(isinstance(s, Selection) for s in rule.match)
    assert rule.match[1].where == {"signal": "SIGABRT", "by": Op(not_=["runtime", 3])}
    assert rule.priority == 30 and rule.group_by == [] and rule.min_count == 1 and rule.status == "stable"
    # A test event's own keys are fields; its other keys are the event's fields, kept as `extra`.
    assert rule.tests[0].events[0] == rules.TestEvent(t=0.0, kind="process.signal", node="node-02", rank=11,
                                                extra={"signal": "SIGSEGV", "by": "self"})
    # Defaults where the file says nothing.
    bare = read_rule({"id": "x", "title": "X", "role": "cause", "category": "a.b", "match": [{"event": "gpu.xid"}]})
    assert bare.group_by == ["node"] and bare.priority == 50 and bare.summary == "{title} on {nodes}"
    assert bare.match[0].where == {} and bare.tests == [] and bare.status == "experimental"


# (the text replaced, the bad value, the value at its edge, where the problem is named, its key path and message)
WHERE = "      signal: SIGABRT"  # msgspec does not name a mapping's key: the line is the mapping's first
CASES = [
    ("priority: 30", "priority: 101", "priority: 100", "priority", "priority: Expected `int` <= 100"),
    ("priority: 30", "priority: -1", "priority: 0", "priority", "priority: Expected `int` >= 0"),
    ("priority: 30", "priority: '30'", "priority: 30", "priority", "priority: Expected `int`, got `str`"),
    ("group_by: []", "group_by: []\nmin_count: 0", "group_by: []\nmin_count: 1", "min_count",
     "min_count: Expected `int` >= 1"),
    ("status: stable", "status: final", "status: deprecated", "status", "status: Invalid enum value 'final'"),
    ("role: cause", "role: effect", "role: symptom", "role", "role: Invalid enum value 'effect'"),
    ("group_by: []", "group_by: [host]", "group_by: [rank, device]", "group_by",
     "group_by.0: Invalid enum value 'host'"),
    ("group_by: []", "group_by: []\nwith_lead: {kind: slow_rank}", "group_by: []\nwith_lead: {kind: desync}",
     "with_lead", "with_lead.kind: Invalid enum value 'slow_rank'"),
    ("by: self", "by: {re: 'sel(f'}", "by: {re: 'sel(f)'}", WHERE,
     "match.1.where.*: bad regex 'sel(f': missing ), unterminated subpattern at position 3"),
    ("by: self", "by: {not: self, sure: true}", "by: {not: self, exists: true}", WHERE,
     "match.1.where.*.sure: unknown key"),
    ("{t: 0, kind: process.signal, node: node-02", "{t: soon, kind: process.signal, node: node-02",
     "{t: 2.5, kind: process.signal, node: node-02", "{t: soon",
     "tests.0.events.0.t: Expected `float | null`, got `str`"),
]


@pytest.mark.parametrize(("old", "bad", "edge", "at", "message"), CASES, ids=[c[1] for c in CASES])
def test_a_constraint_refuses_its_value_at_its_line_and_takes_its_edge(old: str, bad: str, edge: str, at: str,
                                                                      message: str) -> None:
    assert old in RULE
    text = RULE.replace(old, bad, 1)
    assert _problem(text) == f"app-crash.yaml:{_line(text, at)}: [schema] {message}"
    read_rule(yamlio.load(RULE.replace(old, edge, 1)))  # the near miss loads


@pytest.mark.parametrize(("bad", "edge", "message"), [
    ("min_share: 0}", "min_share: 1}", "common_endpoint.min_share: Expected `float` > 0.0"),
    ("min_share: 1.5}", "min_share: 0.01}", "common_endpoint.min_share: Expected `float` <= 1.0"),
    ("min_reports: 0,", "min_reports: 1,", "common_endpoint.min_reports: Expected `int` >= 1"),
])
def test_a_settings_constraint_refuses_its_value_and_takes_its_edge(bad: str, edge: str, message: str) -> None:
    old = "min_share: 0.6}" if "share" in bad else "min_reports: 2,"
    text = SETTINGS.replace(old, bad)
    with pytest.raises(ValidationError) as info:
        read_settings(yamlio.load(text))
    (problem,) = problems(info.value, text, "catalog.yaml", "[catalog-settings]")
    assert problem == f"catalog.yaml:{_line(text, 'common_endpoint:')}: [catalog-settings] {message}"
    assert read_settings(yamlio.load(SETTINGS.replace(old, edge))).common_endpoint is not None


def test_rules_check_names_each_files_problem_with_its_line(tmp_path: Path) -> None:
    root = tmp_path / "catalog"
    shutil.copytree(default_root(), root, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    (root / "rules" / "app-crash.yaml").write_text(RULE.replace("priority: 30", "priority: 300"), encoding="utf-8")
    settings = SETTINGS.replace("weak_causes: first_strong", "weak_causes: strongest")
    assert settings != SETTINGS
    (root / "catalog.yaml").write_text(settings, encoding="utf-8")
    with pytest.raises(CatalogError) as exc:
        load_catalog(root)
    assert f"{root}/rules/app-crash.yaml:{_line(RULE, 'priority: 30')}: [schema] priority: Expected `int` <= 100" \
        in exc.value.problems
    assert (f"{root}/catalog.yaml:{_line(settings, 'weak_causes: strongest')}: [catalog-settings] weak_causes: "
            "Invalid enum value 'strongest'") in exc.value.problems
