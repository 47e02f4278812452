"""The layout's one rule, checked: each step of the flow imports only the layers below it.

docs/architecture.md draws the same table. Imports inside functions count
too (a lazy import is still a dependency); `if TYPE_CHECKING:` imports count
as well, since a type is a dependency of the reader.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "firstfault"

FOUNDATION = {"model", "bundle", "workload_models", "protocol", "timeparse", "yamlio", "hostlist", "pci", "catalog",
              "cache", "_lines", "retry", "httptry", "querytext", "spec", "lazyre", "lazymodel", "__init__"}
# What each unit may import, besides itself and the foundation.
ALLOWED: dict[str, set[str]] = {
    "foundation": set(),
    "extract": set(),
    "identify": {"extract"},
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
    "actions": {"engine", "store"},
    "blueprint": {"identify", "collect", "engine", "analysis", "client", "sinks", "store", "extract", "replay",
                  "actions"},
    "dashboard": {"store", "render"},
    "cli": {"*"},
    # The `firstfault` command (entry.py) and the typer-free command bodies it shares with cli.py.
    "entry": {"*"},
    "commands": {"*"},
    "api": {"*"},
    "__main__": {"entry"},
}


def unit_of(module: str) -> str:
    """firstfault.collect.scan -> collect; firstfault.model -> foundation; firstfault.service.cli -> cli.

    Every `cli.py` is a command: the top of the flow, wiring the steps together.
    """
    parts = module.split(".")
    if parts[0] != "firstfault":
        return ""
    if len(parts) == 1 or parts[1] == "__version__":
        return "foundation"
    if parts[-1] == "cli":
        return "cli"
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
