"""The on-disk cache of the parsed catalog and the compiled prefilter (firstfault/cache.py)."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest

from firstfault import cache
from firstfault.collect import scan
from firstfault.engine.loader import default_root, load_catalog, load_catalog_cached


@pytest.fixture()
def cdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("FIRSTFAULT_CACHE_DIR", str(d))
    monkeypatch.delenv("FIRSTFAULT_CACHE", raising=False)
    return d


def _rules(cat: object) -> list[object]:
    return [lr.rule for lr in cat.rules]  # type: ignore[attr-defined]


def test_a_cached_catalog_is_the_loaded_one_and_follows_its_files(cdir: Path, tmp_path: Path) -> None:
    root = tmp_path / "catalog"
    shutil.copytree(default_root(), root)
    first = load_catalog_cached(root)
    entries = sorted(p.name for p in cdir.glob("catalog-*.msgpack"))
    assert len(entries) == 1
    again = load_catalog_cached(root)
    assert again.sha256 == first.sha256 == load_catalog(root).sha256
    assert _rules(again) == _rules(load_catalog(root))
    # An edited rule file is another catalog: a new entry, and the edit is seen.
    rule = sorted((root / "rules").glob("*.yaml"))[0]
    rule.write_text(rule.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    edited = load_catalog_cached(root)
    assert edited.sha256 != first.sha256
    assert len(list(cdir.glob("catalog-*.msgpack"))) == 2


def test_a_corrupt_entry_is_rebuilt(cdir: Path) -> None:
    load_catalog_cached(None)
    (entry,) = cdir.glob("catalog-*.msgpack")
    entry.write_bytes(b"not msgpack")
    assert load_catalog_cached(None).sha256 == load_catalog(None).sha256
    assert entry.read_bytes() != b"not msgpack"


def test_a_stale_entry_is_read_again_from_the_yaml(cdir: Path) -> None:
    import msgspec

    load_catalog_cached(None)
    (entry,) = cdir.glob("catalog-*.msgpack")
    # Well-formed msgpack of another shape (a record since changed): it does not decode into today's Catalog.
    stale = msgspec.msgpack.encode({"settings": {}, "rules": [], "sha256": "0" * 64, "root": "/elsewhere"})
    entry.write_bytes(stale)
    assert load_catalog_cached(None).sha256 == load_catalog(None).sha256
    assert entry.read_bytes() != stale


def test_an_entry_is_written_only_when_it_reads_back_as_the_catalog(cdir: Path, tmp_path: Path) -> None:
    root = tmp_path / "catalog"
    shutil.copytree(default_root(), root)
    rule = root / "rules" / "app-crash.yaml"
    # A test event's field given as a YAML date: msgpack would read it back as text, another catalog.
    rule.write_text(rule.read_text(encoding="utf-8").replace("signal: SIGSEGV, by: self}",
                                                              "signal: SIGSEGV, by: self, day: 2026-01-02}", 1),
                    encoding="utf-8")
    loaded = load_catalog_cached(root)
    assert [t.events[0].extra["day"] for t in loaded.by_id("app-crash").tests[:1]] == [date(2026, 1, 2)]
    assert not list(cdir.glob("catalog-*.msgpack"))
    rule.write_text(rule.read_text(encoding="utf-8").replace("day: 2026-01-02", "day: '2026-01-02'"),
                    encoding="utf-8")
    assert load_catalog_cached(root).by_id("app-crash") is not None
    assert len(list(cdir.glob("catalog-*.msgpack"))) == 1


def test_off_writes_nothing_and_a_shared_directory_is_not_read(cdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIRSTFAULT_CACHE", "off")
    load_catalog_cached(None)
    assert not cdir.exists()
    monkeypatch.delenv("FIRSTFAULT_CACHE")
    cache.put("x", b"data")
    assert cache.get("x") == b"data"
    cdir.chmod(0o777)
    assert cache.get("x") is None


@pytest.mark.skipif(not scan.HAVE_HYPERSCAN, reason="Hyperscan is not installed on this platform")
def test_a_prefilter_from_the_cache_finds_what_a_compiled_one_finds(cdir: Path) -> None:
    words = scan.prefilter_words("kernel")
    literals = [w.encode() for w in words]
    fresh = scan._HyperscanEngine(literals)  # the engines themselves: a _Matcher shares one per word list
    assert list(cdir.glob("hs-*.db"))
    cached = scan._HyperscanEngine(literals)
    buf = (b"Nov  2 10:00:00 n1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"
           b"quiet line\n" * 3 + b"Nov  2 10:00:01 n1 kernel: mlx5_core 0000:0c:00.0: failed\n")
    assert cached.line_hits(buf) == fresh.line_hits(buf)
    assert cached.line_hits(buf)[0]


def test_a_stamp_holds_the_version_of_the_package_that_validated_an_entry() -> None:
    import pydantic

    # What the tables' keys use for pydantic.VERSION (a start-up from the cache imports no pydantic).
    assert f"VERSION = '{pydantic.VERSION}'".encode() in cache.stamp("pydantic", "version.py")
    assert cache.stamp("pydantic", "no-such-file.py") == b""
    assert cache.stamp("no_such_package_here", "version.py") == b""


_ADDER = """
import json, sys
from firstfault import cache
who, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    cache.update("merged", lambda data: json.dumps(sorted({*json.loads(data or b"[]"), f"{who}-{i}"})).encode())
"""


def test_updates_of_processes_that_run_together_lose_nothing(cdir: Path) -> None:
    # The workers of `-j N` each add the regex code they generated to one entry as they end (lazyre._write_kept): a
    # read and a write with another process's write between them would drop that process's additions.
    import json
    import subprocess
    import sys

    procs = [subprocess.Popen([sys.executable, "-c", _ADDER, f"p{k}", "40"]) for k in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    got = json.loads((cdir / "merged").read_bytes())
    assert got == sorted(f"p{k}-{i}" for k in range(4) for i in range(40))
