"""No module of the package binds one top-level name twice: a second definition silently replaces the first (a
merge once left two `_CALM_RECORD` regexes in extract/traceback.py, and the earlier one's readers ran on the later
one's). Fallbacks inside `try`/`except` (an optional C module) are not top-level bindings and are left alone."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import firstfault

PACKAGE = Path(firstfault.__file__).parent


def _twice(source: str) -> list[str]:
    names: Counter[str] = Counter()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
            names[node.target.id] += 1
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] += 1
    return sorted(n for n, k in names.items() if k > 1)


def test_no_module_binds_a_top_level_name_twice() -> None:
    found = {str(p.relative_to(PACKAGE)): twice for p in sorted(PACKAGE.rglob("*.py"))
             if (twice := _twice(p.read_text(encoding="utf-8")))}
    assert found == {}


def test_the_check_sees_a_second_binding() -> None:
    assert _twice("A = 1\ndef f(): pass\nA = 2\nclass f: pass\n") == ["A", "f"]
    assert _twice("try:\n    from x import y\nexcept ImportError:\n    y = None\n") == []
