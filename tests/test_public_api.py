"""The public API is pinned: a name added or removed here is a decision, not an accident."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import firstfault

ROOT = Path(__file__).resolve().parents[1]

PINNED = [
    "Analyzer", "Bundle", "BundleError", "Catalog", "CatalogError", "Cause", "Event", "FirstfaultClient",
    "FirstfaultError", "Verdict", "__version__", "analyze", "load_bundle", "load_catalog", "shipped_catalog",
]


def test_all_is_pinned_and_every_name_resolves() -> None:
    assert firstfault.__all__ == PINNED
    assert sorted([*firstfault._HOME, "__version__"]) == PINNED
    for name in PINNED:
        assert getattr(firstfault, name) is not None, name
    assert firstfault.Verdict.__module__ == "firstfault.model"


def test_analyze_gives_the_samples_verdict() -> None:
    # The showcase's cause is decided by its fault (Xid 149 on node-02 gpu3; README).
    v = firstfault.analyze(str(ROOT / "examples" / "nvlink-xid149"))
    assert isinstance(v, firstfault.Verdict)
    assert v.root_cause is not None and v.root_cause.category == "gpu.nvlink.signal_integrity"
    assert v.affected_nodes == ["node-02"]


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        firstfault.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_one_version_source() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in meta["project"] and "version" in meta["project"]["dynamic"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "firstfault.__version__"}


def test_import_is_cheap() -> None:
    # `import firstfault` loads no engine, no pydantic, no HTTP client.
    code = ("import sys, firstfault; "
            "print(sorted(m for m in sys.modules if m.startswith(('firstfault', 'pydantic', 'httpx'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['firstfault']"


def test_base_install_has_no_server_dependencies() -> None:
    deps = " ".join(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])
    for heavy in ("fastapi", "uvicorn", "sqlalchemy", "kubernetes", "psycopg", "httpx", "jinja2"):
        assert heavy not in deps, heavy


BLOCKER = """
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split('.')[0] in {'fastapi', 'uvicorn', 'starlette', 'httpx', 'sqlalchemy', 'kubernetes', 'jinja2'}:
            raise ModuleNotFoundError(f'No module named {name!r}', name=name)
sys.meta_path.insert(0, Block())
sys.argv = ['firstfault', *sys.argv[1:]]
from firstfault.entry import main
main()
"""


def test_base_install_analyses_and_names_the_missing_extra() -> None:
    # Without the server and HTTP libraries: analyze works; serve says which extra to install.
    ok = subprocess.run([sys.executable, "-c", BLOCKER, "analyze", str(ROOT / "examples" / "nvlink-xid149")],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("HARDWARE: gpu.nvlink.signal_integrity on node-02")
    serve = subprocess.run([sys.executable, "-c", BLOCKER, "serve"], capture_output=True, text=True)
    assert serve.returncode == 2
    assert "pip install 'firstfault[service]'" in serve.stderr and "Traceback" not in serve.stderr
