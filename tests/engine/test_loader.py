"""Catalog loading and validation: errors name file:line and a validator id."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from firstfault.analysis.ruletest import run_all
from firstfault.engine.loader import CatalogError, default_root, load_catalog, shipped_catalog


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "catalog"
    shutil.copytree(default_root(), dst, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return dst


def test_shipped_catalog_loads_and_every_rule_test_passes() -> None:
    cat = shipped_catalog()
    assert len(cat.rules) >= 30
    failures = [r for r in run_all(cat) if not r.ok]
    assert not failures, failures


def test_catalog_sha_changes_with_content(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    a = load_catalog(root).sha256
    rule = root / "rules" / "app-crash.yaml"
    rule.write_text(rule.read_text().replace("priority: 30", "priority: 31"))
    assert load_catalog(root).sha256 != a


def test_duplicate_id_is_reported_with_file_and_line(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    src = (root / "rules" / "app-crash.yaml").read_text()
    (root / "rules" / "app-crash-copy.yaml").write_text(src)
    with pytest.raises(CatalogError) as exc:
        load_catalog(root)
    text = "\n".join(exc.value.problems)
    assert "[id-unique]" in text and "app-crash-copy.yaml:1:" in text
    assert "[file-name]" in text


def test_unknown_key_and_missing_negative_test(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    p = root / "rules" / "host-oom.yaml"
    text = p.read_text().replace("priority: 65", "priority: 65\nseverity: high")
    # drop the negative test (the last one in the file)
    text = text[: text.rindex("  - name: an Error container is not OOM")]
    p.write_text(text)
    with pytest.raises(CatalogError) as exc:
        load_catalog(root)
    problems = "\n".join(exc.value.problems)
    assert "host-oom.yaml:" in problems and "severity: unknown key" in problems


def test_explains_must_resolve_and_kinds_must_exist(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    p = root / "rules" / "app-numerics.yaml"
    p.write_text(
        p.read_text()
        .replace("  - category: app.exception", "  - category: made.up")
        .replace("event: app.numerics", "event: app.numbers", 1)
    )
    with pytest.raises(CatalogError) as exc:
        load_catalog(root)
    problems = "\n".join(exc.value.problems)
    assert "[explains-resolves]" in problems and "[event-kind]" in problems
    line = next(x for x in exc.value.problems if "[explains-resolves]" in x)
    assert line.split(":")[1].isdigit() and int(line.split(":")[1]) > 1


def test_spec_domain_is_enforced(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    p = root / "rules" / "gpu-thermal.yaml"
    p.write_text(p.read_text().replace("domain: hardware", "domain: software"))
    with pytest.raises(CatalogError, match=r"\[spec-domain\]"):
        load_catalog(root)


def test_a_failing_rule_test_is_reported(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    p = root / "rules" / "app-cuda-oom.yaml"
    p.write_text(p.read_text().replace("nodes: [gpu-a17]", "nodes: [gpu-a18]"))
    results = run_all(load_catalog(root), only="app-cuda-oom")
    assert any(not r.ok and "gpu-a18" in r.message for r in results)


def test_a_key_given_twice_in_catalog_yaml_is_refused(tmp_path: Path) -> None:
    # issue 26, item 2: every YAML file goes through the one strict loader, the catalog's settings too
    root = _copy(tmp_path)
    p = root / "catalog.yaml"
    p.write_text(p.read_text() + "clock_skew: 600\n")
    with pytest.raises(CatalogError) as exc:
        load_catalog(root)
    assert "duplicate key 'clock_skew'" in "\n".join(exc.value.problems)


def test_metric_conditions_refuse_a_key_given_twice() -> None:
    from firstfault.extract.metric_conditions import MetricCatalogError, load_metric_conditions

    good = ("version: 1\nconditions:\n  - name: a\n    metrics: [DCGM_FI_DEV_XID_ERRORS]\n    type: nonzero\n"
            "    description: any\n    threshold: 0\n")
    assert [c.name for c in load_metric_conditions(good)] == ["a"]
    with pytest.raises(MetricCatalogError) as exc:
        load_metric_conditions(good + "    threshold: 5\n")
    assert "duplicate key 'threshold'" in str(exc.value)
