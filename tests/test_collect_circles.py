"""The scanner's pieces import one way (issue 28: no import circle): the folder (collect/fold.py) and the event
store (collect/events.py) sit below the scanner (collect/scan.py), which drives them.

Imports under `if TYPE_CHECKING:` and inside functions count, as in tests/test_layers.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

COLLECT = Path(__file__).resolve().parents[1] / "src" / "firstfault" / "collect"


def imports_of(path: Path, package: str) -> set[str]:
    """The modules of `package` that the file at `path` imports, by their last name."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith(package + "."):
                out.add(node.module[len(package) + 1:].split(".")[0])
            elif node.module == package:
                out.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name[len(package) + 1:].split(".")[0] for a in node.names if a.name.startswith(package + "."))
    return out


def circles(folder: Path, package: str) -> list[list[str]]:
    """Each import circle among the modules of `folder`, as the path that closes it."""
    graph = {p.stem: imports_of(p, package) for p in sorted(folder.glob("*.py"))}
    found: list[list[str]] = []
    done: set[str] = set()

    def visit(m: str, path: list[str]) -> None:
        if m in path:
            found.append([*path[path.index(m):], m])
            return
        if m in done or m not in graph:
            return
        for n in sorted(graph[m]):
            visit(n, [*path, m])
        done.add(m)

    for m in graph:
        visit(m, [])
    return found


def test_collect_has_no_import_circle() -> None:
    assert circles(COLLECT, "firstfault.collect") == []


def test_the_folder_does_not_know_the_scanner() -> None:
    assert "scan" not in imports_of(COLLECT / "fold.py", "firstfault.collect")
    assert "scan" not in imports_of(COLLECT / "events.py", "firstfault.collect")


def test_a_circle_through_a_type_only_import_is_found(tmp_path: Path) -> None:
    # near miss for the check itself: the shape the scanner and the folder had (a type-only import back up)
    (tmp_path / "scan.py").write_text("from pkg.fold import LineFold\n")
    (tmp_path / "fold.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                      "    from pkg.scan import EventStore\n")
    (tmp_path / "other.py").write_text("from pkg import fold\n")
    assert circles(tmp_path, "pkg") == [["fold", "scan", "fold"]]
