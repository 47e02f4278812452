"""The layout's rules, checked: each step of the flow imports only the layers below it, and no module of
src/ imports itself back through others (no import circle).

docs/architecture.md draws the same table, and a test here holds the page and the table to one another.
Imports inside functions count too (a lazy import is still a dependency); `if TYPE_CHECKING:` imports
count as well, since a type is a dependency of the reader.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "firstfault"

FOUNDATION = {"model", "bundle", "formats", "responses", "timeparse", "yamlio", "hostlist", "pci", "catalog",
              "cache", "_lines", "retry", "httptry", "querytext", "spec", "lazyre", "records", "__init__"}
# What each unit may import, besides itself and the foundation.
ALLOWED: dict[str, set[str]] = {
    "foundation": set(),
    "extract": set(),
    "identify": set(),
    "collect": {"extract"},
    "engine": {"extract"},
    # The orchestrator: evidence read (collect, extract) and judged (engine).
    "analysis": {"extract", "collect", "engine"},
    "render": set(),
    "store": set(),
    "sinks": {"render", "store"},
    "client": {"collect"},
    # The Service mounts the dashboard and, when configured, its store.
    "service": {"extract", "collect", "engine", "analysis", "store", "dashboard"},
    # Catalog replay: stored evidence re-attributed with another catalog.
    "replay": {"extract", "collect", "engine", "analysis", "store"},
    # Recovery actions (drain, cordon) decided on stored verdicts.
    "actions": {"store"},
    "blueprint": {"identify", "collect", "engine", "analysis", "client", "sinks", "store", "extract", "replay",
                  "actions"},
    "dashboard": {"store", "render"},
    # The `firstfault` program (firstfault/cli/): every command, wiring the steps together.
    "cli": {"*"},
    "api": {"*"},
    "__main__": {"cli"},
}


def unit_of(module: str) -> str:
    """firstfault.collect.scan -> collect; firstfault.model -> foundation; firstfault.cli.serve -> cli."""
    parts = module.split(".")
    if parts[0] != "firstfault":
        return ""
    if len(parts) == 1 or parts[1] == "__version__":
        return "foundation"
    top = parts[1]
    return "foundation" if top in FOUNDATION else top


def imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
            if node.module == "firstfault":
                out.extend((node.lineno, f"firstfault.{a.name}") for a in node.names)
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
    return out


def modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "migrations" not in p.parts)


def test_every_unit_has_a_row() -> None:
    units = {unit_of("firstfault." + ".".join(p.relative_to(SRC).with_suffix("").parts)) for p in modules()}
    assert units <= set(ALLOWED), f"add a row to ALLOWED (and docs/architecture.md) for {units - set(ALLOWED)}"


def violations(path: Path, rel: Path) -> list[str]:
    # The package's own __init__ is the public API: it names (lazily) what the layers define.
    me = "api" if rel == Path("__init__.py") else unit_of("firstfault." + ".".join(rel.with_suffix("").parts))
    allowed = ALLOWED[me]
    bad = []
    for line, mod in imports(path):
        other = unit_of(mod)
        if not other or other in ("foundation", me) or "*" in allowed or other in allowed:
            continue
        bad.append(f"{rel}:{line} ({me}) imports {mod} ({other})")
    return bad


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_imports_go_down(path: Path) -> None:
    bad = violations(path, path.relative_to(SRC))
    assert not bad, "\n".join(bad)


def test_the_rule_catches_an_upward_import(tmp_path: Path) -> None:
    p = tmp_path / "x.py"
    p.write_text("def f():\n    from firstfault.analysis.analyze import Analyzer\n")
    want = "collect/x.py:2 (collect) imports firstfault.analysis.analyze (analysis)"
    assert violations(p, Path("collect/x.py")) == [want]
    assert violations(p, Path("blueprint/x.py")) == []
    assert violations(p, Path("service/cli.py")) == []


# -- the page and the table --

def _cells(heading: str) -> list[list[str]]:
    """The rows (cells) of the table under the heading `heading` of docs/architecture.md."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = re.split(rf"(?m)^#+ {re.escape(heading)}\n", text, maxsplit=1)[1]
    section = re.split(r"(?m)^#", section, maxsplit=1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("|")]
    return [[c.strip() for c in r.strip("|").split("|")] for r in rows[2:]]  # past the header and its rule


def _named(cell: str) -> set[str]:
    """The units a cell names: its `code` spans outside parentheses, `x.py` as x, `__init__` as the API."""
    depth, kept = 0, []
    for ch in cell:
        depth += ch == "("
        if depth == 0:
            kept.append(ch)
        depth -= ch == ")" and depth > 0
    names = {re.sub(r"\.(py|c)$|/$", "", n) for n in re.findall(r"`([^`]+)`", "".join(kept))}
    return {"api" if n == "__init__" else n for n in names}


def documented_table() -> dict[str, set[str]]:
    table: dict[str, set[str]] = {}
    for unit_cell, allowed_cell in _cells("The one rule: imports go down"):
        allowed = {"*"} if allowed_cell.startswith("anything") else (
            set() if allowed_cell.startswith("nothing") else _named(allowed_cell))
        for unit in _named(unit_cell):
            table[unit] = allowed
    return table


def test_the_page_forbids_what_the_table_forbids() -> None:
    assert documented_table() == {k: v for k, v in ALLOWED.items() if k != "foundation"}
    foundation = next(c for c in _cells("Architecture: the flow and the folders") if c[0] == "(foundation)")
    assert _named(foundation[1]) == FOUNDATION - {"__init__"}


def test_the_table_is_layered() -> None:
    # No two units may import each other, through others or directly (the "anything" rows sit on top).
    def reach(unit: str, seen: frozenset[str]) -> None:
        for other in ALLOWED[unit] - {"*", "foundation"}:
            assert other not in seen, f"the table lets {' -> '.join([*seen, other])} import back"
            reach(other, seen | {other})

    for unit in ALLOWED:
        if "*" not in ALLOWED[unit]:
            reach(unit, frozenset({unit}))


# -- no import circle --

def module_of(path: Path, src: Path = SRC) -> str:
    """src/firstfault/engine/match.py -> firstfault.engine.match; a package's __init__.py -> the package."""
    parts = path.relative_to(src.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(files: list[Path], src: Path = SRC) -> dict[str, set[str]]:
    """Module -> the modules of src/ it imports: the module an import names, or the submodule a
    `from package import name` names where there is one (lazy and TYPE_CHECKING imports too)."""
    known = {module_of(p, src) for p in files}
    graph: dict[str, set[str]] = {}
    for path in files:
        me = module_of(path, src)
        out: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    sub = f"{node.module}.{a.name}"
                    out.add(sub if sub in known else node.module)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
        graph[me] = {m for m in out if m in known and m != me}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_import_circle() -> None:
    assert circles(import_graph(modules())) == []


def test_a_circle_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "firstfault"
    (pkg / "p").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "p" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from firstfault.p import b\n")
    (pkg / "p" / "b.py").write_text("def f():\n    from firstfault import c\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import firstfault.a\n")
    (pkg / "d.py").write_text("import firstfault.a\n")  # imports into the circle, is not part of it
    files = sorted(pkg.rglob("*.py"))
    assert circles(import_graph(files, pkg)) == [["firstfault.a", "firstfault.c", "firstfault.p.b"]]
    # near miss: the same imports one way only
    (pkg / "c.py").write_text("X = 1\n")
    assert circles(import_graph(files, pkg)) == []
