"""firstfault.lazyre: a pattern is compiled on its first use, once, and matches as `re` does."""

from __future__ import annotations

import copy
import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

from firstfault import lazyre

ROOT = Path(__file__).resolve().parents[1]

LINES = [
    "[Mon Nov  2 10:01:17 2026] NVRM: Xid (PCI:0000:8a:00): 149, pid=0, name=python3, NVLink: fatal error",
    "node-03:1234:5678 [2] NCCL WARN NET/IB : Got completion from peer 10.0.0.7<41213> with status=12",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "nothing to see here",
    "",
]


@pytest.mark.parametrize("pattern, flags", [
    (r"Xid \(PCI:(?P<pci>[0-9a-f:.]+)\): (?P<code>\d+)", 0),
    (r"nccl warn (\S+)", re.IGNORECASE),
    (r"^\s*$", re.MULTILINE),
    (r"(\d+)", 0),
])
def test_same_matches_as_re(pattern: str, flags: int) -> None:
    lazy, real = lazyre.compile(pattern, flags), re.compile(pattern, flags)
    for line in LINES:
        for method in ("search", "match", "fullmatch"):
            a, b = getattr(lazy, method)(line), getattr(real, method)(line)
            assert (a and (a.span(), a.groups(), a.groupdict())) == (b and (b.span(), b.groups(), b.groupdict()))
        assert lazy.findall(line) == real.findall(line)
        assert [m.span() for m in lazy.finditer(line)] == [m.span() for m in real.finditer(line)]
        assert lazy.sub("<X>", line) == real.sub("<X>", line)
        assert lazy.subn("<X>", line, count=1) == real.subn("<X>", line, count=1)
        assert lazy.split(line) == real.split(line)
    assert (lazy.pattern, lazy.flags, lazy.groups, dict(lazy.groupindex)) == (
        real.pattern, real.flags, real.groups, dict(real.groupindex))
    assert repr(lazy) == repr(real)


def test_compiled_on_first_use_and_only_once() -> None:
    p = lazyre.compile(r"NCCL WARN (?P<what>\w+)")
    assert not lazyre.is_compiled(p)
    assert p.pattern == r"NCCL WARN (?P<what>\w+)"  # the source needs no compiling
    assert not lazyre.is_compiled(p)
    m = p.search("x NCCL WARN Timeout")
    assert m is not None and m["what"] == "Timeout"
    assert lazyre.is_compiled(p)
    # From then on the methods are the compiled pattern's own, and one compiled pattern serves them all.
    compiled = p.search.__self__  # type: ignore[attr-defined]
    assert isinstance(compiled, re.Pattern) and compiled.pattern == p.pattern
    assert p.match.__self__ is compiled and p.sub.__self__ is compiled  # type: ignore[attr-defined]
    p.findall("NCCL WARN a NCCL WARN b")
    assert p.search.__self__ is compiled  # type: ignore[attr-defined]


def test_attributes_that_need_the_compiled_pattern_compile_it() -> None:
    p = lazyre.compile(r"(?P<a>x)(y)")
    assert p.groupindex == {"a": 1} and lazyre.is_compiled(p)
    q = lazyre.compile(r"x", re.I)
    assert q.flags == re.compile(r"x", re.I).flags and lazyre.is_compiled(q)


def test_bad_pattern_fails_at_first_use_with_re_error() -> None:
    p = lazyre.compile(r"(unclosed")
    with pytest.raises(re.error, match="missing \\)"):
        p.search("x")


def test_pickle_copy_and_recompile() -> None:
    p = lazyre.compile(r"a(b)c", re.I)
    q = pickle.loads(pickle.dumps(p))
    assert not lazyre.is_compiled(q) and q.pattern == p.pattern
    m = q.search("xABC")
    assert m is not None and m.group(1) == "B"
    assert copy.copy(p) is p and copy.deepcopy(p) is p
    assert lazyre.compile(p) is p  # as re.compile(compiled) is compiled
    real = re.compile("z")
    assert lazyre.compile(real) is real


def test_bytes_patterns() -> None:
    p = lazyre.compile(rb"NCCL (\w+)")
    m = p.search(b"x NCCL WARN")
    assert m is not None and m.group(1) == b"WARN"


# Imports the analyze path, analyses the showcase, then compiles every stand-in: through lazyre (its
# code from the on-disk entry when there is one) and through re; a compiled pattern equals another
# only when their generated code is the same.
PROBE = """
import json, re, sys
from firstfault import lazyre
from firstfault.collect.scan import all_line_extractors
import firstfault.analysis.analyze as a
all_line_extractors()
made = lazyre.created()
at_import = sum(lazyre.is_compiled(p) for p in made)
a.Analyzer().analyze_path(sys.argv[1])
used = sum(lazyre.is_compiled(p) for p in made)
kept_before = len(lazyre._kept or {})
bad = [p.pattern for p in made if lazyre._compile_pattern(p.pattern, p._flags) != re.compile(p.pattern, p._flags)]
print(json.dumps({"made": len(made), "distinct": len({(p.pattern, p._flags) for p in made}),
                  "at_import": at_import, "used": used, "bad": bad,
                  "kept": kept_before, "generated": len(lazyre._made)}))
"""


def _probe(cache_dir: Path) -> dict[str, object]:
    env = {**os.environ, "FIRSTFAULT_CACHE_DIR": str(cache_dir)}
    env.pop("FIRSTFAULT_CACHE", None)
    out = subprocess.run([sys.executable, "-c", PROBE, str(ROOT / "examples" / "nvlink-xid149")],
                         capture_output=True, text=True, check=True, cwd=ROOT, env=env).stdout
    return dict(json.loads(out))


def test_the_analyze_path_compiles_only_what_it_uses_and_the_kept_code_is_re_s(tmp_path: Path) -> None:
    # In processes of their own (this one has imported and used the extractors already).
    cdir = tmp_path / "cache"
    first = _probe(cdir)
    assert first["made"] >= 150, first  # the extractors' module-level patterns go through lazyre
    assert first["at_import"] == 0, first  # importing compiles none of them
    assert 0 < first["used"] < first["made"], first  # the showcase needs some of them
    assert first["bad"] == []
    # Nothing was kept before; the code of every pattern compiled (the stand-ins, and the patterns made
    # and dropped while analysing, such as the bundle's host names) was generated.
    assert first["kept"] == 0 and first["generated"] >= first["distinct"], first
    (entry,) = cdir.glob("re-*.marshal")  # written at exit
    # The next process takes the generated code from the entry: the same patterns, nothing generated.
    second = _probe(cdir)
    assert second["bad"] == [] and second["kept"] == first["generated"] and second["generated"] == 0, second
    # A corrupt entry: everything is generated again (and right), and the entry is rewritten.
    entry.write_bytes(b"\x00garbage")
    third = _probe(cdir)
    assert third["bad"] == [] and third["kept"] == 0 and third["generated"] == first["generated"], third
    assert entry.read_bytes() != b"\x00garbage"


def test_only_patterns_made_by_an_import_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A pattern built at run time (from a bundle's host names, say) is compiled by re and never written
    # to the on-disk entry; one made while a module is imported, directly or by a function it calls, is.
    at_run_time = lazyre.compile(r"\b(?:node-01|node-02)\b")
    assert at_run_time.search("on node-02") is not None
    assert not at_run_time._keep  # type: ignore[attr-defined]
    (tmp_path / "ff_lazyre_probe.py").write_text(
        "from firstfault import lazyre as re\n"
        "TOP = re.compile(r'top (\\d+)')\n"
        "def made():\n"
        "    return re.compile(r'made (\\d+)')\n"
        "MADE = made()\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import ff_lazyre_probe as probe  # type: ignore[import-not-found]

    assert probe.TOP._keep and probe.MADE._keep
    assert not probe.made()._keep  # the same function, called after the import
    stand_in = probe.TOP
    assert stand_in.search("top 7").group(1) == "7"
    # The first use rebinds the module's name to the compiled pattern itself (no stand-in left on the
    # module's own path); the stand-in still works for whoever holds it.
    assert isinstance(probe.TOP, re.Pattern)
    assert probe.TOP.pattern == r"top (\d+)" and probe.TOP.search("top 9").group(1) == "9"
    assert stand_in.search("top 8").group(1) == "8"


def test_a_pattern_made_from_the_shipped_tables_at_run_time_is_kept() -> None:
    # The CUDA and strerror tables' Literals are built at their first use, in every process that reads a CUDA or NCCL
    # error line (each worker of -j N): their generated code is kept on disk as an import's is. A pattern built at
    # run time without `keep` (from the input) is not (the near miss), nor is any module name rebound for either.
    kept = lazyre.compile(r"\bExample table text (\d+)\b", keep=True)
    assert kept._keep and kept._home is None  # type: ignore[attr-defined]
    assert kept.search("an Example table text 42 here").group(1) == "42"
    assert not lazyre.compile(r"\bExample table text (\d+)\b")._keep  # type: ignore[attr-defined]
    table = lazyre.Literals(["Out of Memory", "illegal memory access"], re.IGNORECASE, keep=True)
    made = [table._exact, table._lowered]
    assert all(p is not None and p._keep for p in made)  # type: ignore[attr-defined]
    assert table.search("CUDA error: an Illegal Memory Access").group(0) == "Illegal Memory Access"
    key = (table.pattern, int(re.IGNORECASE))
    assert key in lazyre._made or key in (lazyre._kept or {})  # the code went where the exit writes from
    plain = lazyre.Literals(["out of memory"], re.IGNORECASE)
    assert not plain._exact._keep  # type: ignore[attr-defined]
    from firstfault.extract import codes

    assert codes._cuda_index()[1]._exact._keep and codes._strerror_rx()._exact._keep  # type: ignore[attr-defined]


def test_the_kept_code_is_an_array_s_bytes_and_an_entry_that_does_not_read_so_is_generated_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The entry holds each pattern's code as bytes (unmarshalled in a fraction of the time a list of ints takes), made
    # a list at its use: the same pattern as re's. Near miss: a kept code that is no array's bytes (a foreign or torn
    # entry) is generated again, and the pattern is still re's.
    key = (r"kept as (?P<what>bytes) (\d+)", int(re.IGNORECASE))
    parts = lazyre._generate(*key)
    assert isinstance(parts[1], bytes)
    assert lazyre._sre_compile(key[0], parts) == re.compile(*key)
    monkeypatch.setattr(lazyre, "_kept", {key: (parts[0], parts[1][:-1], *parts[2:])})
    monkeypatch.setattr(lazyre, "_made", {})
    assert lazyre._compile_pattern(*key) == re.compile(*key)
    assert lazyre._made[key][1] == parts[1]
