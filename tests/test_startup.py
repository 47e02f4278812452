"""What `firstfault analyze` loads at start-up (issue 11: a small bundle end to end is mostly start-up).

Not timed (bench/headline.py's showcase section times it): these tests pin what the analyze path must
not import, and that the shipped tables come back from the on-disk cache as parsed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from firstfault import cache, yamlio
from firstfault.catalog import tables

ROOT = Path(__file__).resolve().parents[1]
# Each test here is a few subprocesses with caches of their own: run them on any worker (tests/conftest.py), not
# as one file's serial tail.
SPREAD_TESTS = True

# Run the real command line in a fresh interpreter and report which modules it loaded.
PROBE = """
import json, sys
sys.argv = ['firstfault', *sys.argv[1:]]
from firstfault.cli import main
try:
    main()
finally:
    sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)) + '\\n')
"""

# Libraries of the Service, the store, the Blueprint's connectors and the dashboard; none is needed to
# analyse a bundle directory. rich is the text view's: `--format json` prints without it.
NOT_ON_THE_ANALYZE_PATH = ("sqlalchemy", "alembic", "fastapi", "starlette", "uvicorn", "httpx", "tenacity", "jinja2",
                           "kubernetes", "psycopg", "prometheus_client", "pydantic_settings", "rich",
                           # A valid bundle's records are read and its verdict written without pydantic
                           # (records.py, bundle's hand check, the catalog's records); the command line is
                           # click's (firstfault/cli), typer is no dependency.
                           "pydantic", "pydantic_core", "typer")
# firstfault's own modules for other commands (the Service's request types, the store, the sinks), and
# the text and markdown views (render: --format json prints the document itself).
OURS_NOT_ON_THE_ANALYZE_PATH = ("firstfault.collect.wire", "firstfault.store.db", "firstfault.store.repo",
                                "firstfault.service.app", "firstfault.sinks", "firstfault.replay",
                                "firstfault.client", "firstfault.responses", "firstfault.render",
                                # the other commands' declarations (firstfault/cli loads a command's alone)
                                "firstfault.cli.serve", "firstfault.cli.blueprint", "firstfault.cli.fleet",
                                "firstfault.cli.demo", "firstfault.cli.rules", "firstfault.cli.store")


def _analyze_modules(*args: str, runs: int = 2) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    # Run twice: the first fills the on-disk cache when it is cold (validating the catalog imports pydantic),
    # the second is the start-up a user gets on every later run (one run where a run before filled it).
    for _ in range(runs):
        r = subprocess.run([sys.executable, "-c", PROBE, "analyze", *args], capture_output=True, text=True, cwd=ROOT)
    line = [ln for ln in r.stderr.splitlines() if ln.startswith("MODULES ")][-1]
    return r, set(json.loads(line[len("MODULES "):]))


def test_analyze_json_loads_no_server_store_or_text_view_library() -> None:
    r, mods = _analyze_modules(str(ROOT / "examples" / "nvlink-xid149"), "--format", "json")
    assert r.returncode == 0, r.stderr
    # The verdict is the showcase's (decided by its fault: Xid 149 on node-02, README).
    v = json.loads(r.stdout)
    assert v["root_cause"]["category"] == "gpu.nvlink.signal_integrity" and v["affected_nodes"] == ["node-02"]
    loaded = {m.split(".")[0] for m in mods}
    assert [lib for lib in NOT_ON_THE_ANALYZE_PATH if lib in loaded] == []
    assert [m for m in OURS_NOT_ON_THE_ANALYZE_PATH if any(x == m or x.startswith(m + ".") for x in mods)] == []
    # The check above can fail: the text view does load rich (the runs above filled the cache).
    r_text, mods_text = _analyze_modules(str(ROOT / "examples" / "nvlink-xid149"), runs=1)
    assert r_text.returncode == 0 and "rich" in {m.split(".")[0] for m in mods_text}
    assert "firstfault.render" in mods_text


def test_a_slurm_connector_does_not_import_the_kubernetes_client() -> None:
    # identify/ resolves its connectors on first use: a Slurm watch or run never pays for the Kubernetes
    # client (seconds to import); a Kueue one does, and the probe shows the check can fail.
    probe = ("import sys; import firstfault.identify.slurm; a = 'kubernetes' in sys.modules; "
             "from firstfault.identify import KueueAttempts; print(a, 'kubernetes' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True"]


def test_help_still_lists_every_command() -> None:
    r = subprocess.run([sys.executable, "-m", "firstfault", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    for command in ("analyze", "show", "rules", "serve", "run", "watch", "fleet", "demo", "store"):
        assert command in r.stdout, command


@pytest.fixture()
def cdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("FIRSTFAULT_CACHE_DIR", str(d))
    monkeypatch.delenv("FIRSTFAULT_CACHE", raising=False)
    tables._document.cache_clear()
    yield d
    tables._document.cache_clear()


def _shipped(name: str) -> object:
    return yamlio.load((ROOT / "src" / "firstfault" / "catalog" / name).read_text(encoding="utf-8"))


def test_a_table_file_is_parsed_once_then_read_back_from_the_cache(cdir: Path) -> None:
    first = tables._document("platform.yaml")
    assert first == _shipped("platform.yaml")
    (entry,) = cdir.glob("table-*.marshal")
    tables._document.cache_clear()
    again = tables._document("platform.yaml")
    assert again == first and again is not first  # read back from the entry, not this process's copy
    assert sorted(cdir.glob("table-*.marshal")) == [entry]


def test_a_corrupt_table_entry_is_parsed_again(cdir: Path) -> None:
    tables._document("sxid.yaml")
    (entry,) = cdir.glob("table-*.marshal")
    entry.write_bytes(b"\xff not marshal")
    tables._document.cache_clear()
    assert tables._document("sxid.yaml") == _shipped("sxid.yaml")
    assert entry.read_bytes() != b"\xff not marshal"  # rewritten


# Every table kept in the on-disk cache (tables._kept).
KEPT_TABLES = ("xid_table", "sxid_table", "cuda_table", "nccl_result_table", "nvml_table", "transport_table",
               "ipmi_bus_events", "cper_severities", "nccl_transports", "driver_libraries", "nvml_anchors",
               "nvml_device_anchors", "nvidia_smi_field_errors", "sched_tables", "exception_class_table",
               "status_word_table", "status_anchors", "errno_table", "object_store_code_table", "exit_printers",
               "bug_report_sections")


def test_tables_from_the_cache_are_the_tables_from_the_yaml(cdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fns = [getattr(tables, name) for name in KEPT_TABLES]

    def build() -> list[object]:
        tables._document.cache_clear()
        for f in fns:
            f.cache_clear()
        return [f() for f in fns]

    try:
        monkeypatch.setenv("FIRSTFAULT_CACHE", "off")
        plain = build()
        assert not cdir.exists()
        monkeypatch.delenv("FIRSTFAULT_CACHE")
        build()  # writes the entries: each file's document, each validated table
        assert cache.cache_dir() == cdir and len(list(cdir.glob("table-*.marshal"))) == 8
        assert len(list(cdir.glob("tables-*.msgpack"))) == len(KEPT_TABLES)
        back = build()  # read back from them, typed: the same rows, of the same classes
        assert back == plain and [type(t) for t in back] == [type(t) for t in plain]
        assert [type(r) for t in back for r in (t.values() if hasattr(t, "values") else t)] == [
            type(r) for t in plain for r in (t.values() if hasattr(t, "values") else t)]
        for entry in cdir.glob("tables-*.msgpack"):  # a corrupt entry: the table is built again
            entry.write_bytes(b"\xc1 not msgpack")
        assert build() == plain
        assert all(e.read_bytes() != b"\xc1 not msgpack" for e in cdir.glob("tables-*.msgpack"))
    finally:
        for f in fns:
            f.cache_clear()


# Loads the shipped catalog and every kept table, says which of the validating libraries and schemas that
# imported, then (warm: `--compare`, the first argument) validates them all again from the YAML (the cache off) and
# says whether they are equal. A cold start validated them from the YAML already: nothing to compare.
WARM_PROBE = """
import json, os, sys
from firstfault.catalog import tables
from firstfault.engine.loader import load_catalog, shipped_catalog
compare = sys.argv[1] == "--compare"
fns = [getattr(tables, name) for name in sys.argv[2:]]
cat, rows = shipped_catalog(), [f() for f in fns]
loaded = sorted(m for m in ("pydantic", "yaml") if m in sys.modules)
if not compare:
    print(json.dumps({"loaded": loaded, "same": True, "rules": len(cat.rules)}))
    sys.exit(0)
os.environ["FIRSTFAULT_CACHE"] = "off"
fresh = load_catalog(None)
tables._document.cache_clear()
for f in fns:
    f.cache_clear()
same = (fresh.rules == cat.rules and fresh.settings == cat.settings and fresh.sha256 == cat.sha256
        and [f() for f in fns] == rows)
print(json.dumps({"loaded": loaded, "same": same, "rules": len(cat.rules)}))
"""


def test_a_start_up_from_the_cache_imports_no_pydantic_and_loads_what_validation_gives(tmp_path: Path) -> None:
    env = {**os.environ, "FIRSTFAULT_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("FIRSTFAULT_CACHE", None)
    cold, warm = [json.loads(subprocess.run([sys.executable, "-c", WARM_PROBE, flag, *KEPT_TABLES], capture_output=True,
                                            text=True, check=True, cwd=ROOT, env=env).stdout)
                  for flag in ("--cold", "--compare")]
    # The first run validated the YAML (and filled the cache); the second read the cache and validated again: the
    # check can fail.
    assert cold["loaded"] == ["yaml"]  # msgspec validated the catalog and the tables: no pydantic
    assert warm["loaded"] == []
    assert cold["same"] and warm["same"] and warm["rules"] == cold["rules"] > 30


@pytest.fixture(scope="module")
def showcase_verdict(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The showcase's verdict, written once by the real command line, for `show` to read."""
    verdict = tmp_path_factory.mktemp("verdict") / "v.json"
    showcase = ROOT / "examples" / "nvlink-xid149"
    done = subprocess.run([sys.executable, "-m", "firstfault", "analyze", str(showcase), "--format", "json",
                           "-o", str(verdict)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode in (0, 1), done.stderr
    return verdict


@pytest.mark.parametrize("args", [["rules", "check"], ["rules", "test"], ["show", "{verdict}"]])
def test_a_one_shot_command_imports_no_pydantic(tmp_path: Path, showcase_verdict: Path, args: list[str]) -> None:
    # records.py validates the catalog (cold cache: from the YAML), the tables and a verdict: nothing of the
    # one-shot commands needs pydantic, so none imports it (nor reads every distribution's entry points for
    # its plugins).
    verdict = showcase_verdict
    env = {k: v for k, v in os.environ.items() if k != "FIRSTFAULT_CACHE"}
    run = subprocess.run([sys.executable, "-c", PROBE, *(a.format(verdict=verdict) for a in args)],
                         capture_output=True, text=True, cwd=ROOT,
                         env={**env, "FIRSTFAULT_CACHE_DIR": str(tmp_path / "cold")})
    assert run.returncode == 0, run.stderr
    modules = json.loads(run.stderr.rsplit("MODULES ", 1)[1])
    assert "pydantic" not in modules and "pydantic_core" not in modules
