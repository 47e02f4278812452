"""The prefilter's matches gathered in C (_lines.Matches: Hyperscan's match callback without a Python call per
match, issue 27) read what the Python callback and _lines_of read: the same hit lines with the same literals.
And the verdict bytes of generated jobs are the same with each of shape b's speed paths on and off (the matches
gathered in C; the quiet shapes a sparse first chunk teaches, LineFold.quiet_from; the fold loops' memo of recent
shapes, _lines.fold_shape_memo; the quiet shapes' lines passed over before the prefilter, _lines.unquiet), in one
process and in two workers, with the other fast paths off, and with Hyperscan blocked
(FIRSTFAULT_MATCHER=aho-corasick)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault import records
from firstfault.analysis import parallel
from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import load_bundle
from firstfault.collect import fold, scan
from firstfault.extract import memo
from tests import tier

try:
    from firstfault._lines import fold_shape_memo
except ImportError:  # pragma: no cover - a build without the C module
    fold_shape_memo = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
NOW = datetime(2026, 11, 3, 12, 0, tzinfo=UTC)
needs_c = pytest.mark.skipif(scan._Matches is None, reason="the C module (_lines) is not built")
needs_hs = pytest.mark.skipif(not scan.HAVE_HYPERSCAN or scan._Matches is None,
                              reason="needs Hyperscan and the C module (_lines)")


def _gathered(buf: bytes, matches: list[tuple[int, int]]) -> tuple[list[int], list[list[int]]]:
    m = scan._Matches()
    for i, to in matches:
        assert m(i, 0, to, 0, None) is None  # None: Hyperscan goes on scanning
    assert m.matches() == len(matches)
    starts = m.lines(buf)
    return starts, [m[k] for k in range(len(m))]


@needs_c
@given(st.text(alphabet="ab\n", max_size=60), st.lists(st.tuples(st.integers(0, 300), st.integers(-2, 64)),
                                                       max_size=20))
@settings(max_examples=tier.examples(1500), deadline=None)
def test_the_matches_gathered_in_c_are_grouped_as_lines_of_groups_them(text: str,
                                                                        matches: list[tuple[int, int]]) -> None:
    buf = text.encode()
    ordered = sorted(matches, key=lambda m: m[1])
    assert _gathered(buf, ordered) == scan._lines_of_py(buf, ordered)


@needs_c
def test_a_match_gathered_in_c_that_ends_at_a_newline_belongs_to_that_line() -> None:
    buf = b"xid\nno\nxid xid\n"
    assert _gathered(buf, [(0, 3), (1, 10), (2, 14)]) == ([0, 7], [[0], [1, 2]])
    # near miss: one byte past the first line's newline is the next line's
    assert _gathered(buf, [(0, 5)]) == ([4], [[0]])


@needs_c
def test_the_gathered_lines_are_a_sequence_equal_to_the_lists_of_lines_of() -> None:
    m = scan._Matches()
    assert len(m) == 0 and m.lines(b"") == [] and m == []
    for i, to in [(3, 2), (1, 2), (4, 5)]:
        m(i, 0, to)
    assert m.lines(b"ab\ncd\n") == [0, 3]
    assert list(m) == [[3, 1], [4]] and m == [[3, 1], [4]] and m != [[3, 1]]
    assert m[-1 + len(m)] == [4]
    with pytest.raises(IndexError):
        m[2]
    with pytest.raises(TypeError):
        m("1", 0, 2)  # an index must be an int, as Hyperscan passes it
    with pytest.raises(TypeError):
        hash(m)


@needs_hs
def test_hyperscan_finds_the_same_lines_and_words_with_the_matches_gathered_in_c_or_in_python(
        bundles: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    # The generated nodes' kernel logs (their noise and the fault), the wild corpus's logs, and a line that holds
    # words that overlap ("PCIe Bus Error" holds "Error") and one word twice.
    logs = sorted(bundles["kernrep"].rglob("kern*.log")) + sorted((ROOT / "tests" / "wild").rglob("*.log"))[:300]
    text = b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in logs)
    text += b"NVRM: Xid (PCI:0000:3b:00): 79, PCIe Bus Error, GPU has fallen off the bus. NVRM: Xid again\n"
    for source in ("kernel", "application"):
        words = scan.prefilter_words(source)
        eng = scan._HyperscanEngine([w.encode() for w in words])
        in_c = eng.line_hits(text)
        with monkeypatch.context() as m:
            m.setattr(scan, "_Matches", None)
            in_py = eng.line_hits(text)
        assert len(in_c[0]) > 1000 and in_c[0] == in_py[0], source
        assert list(in_c[1]) == list(in_py[1]), source
        if source == "kernel":
            assert {words[i] for i in in_c[1][-1]} >= {"NVRM: Xid", "Error"}


# --- the verdict bytes of generated jobs, the mechanism on and off ---

@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    sys.path.insert(0, str(BENCH))
    try:
        import gen_bundle  # bench script, not a package
    finally:
        sys.path.remove(str(BENCH))
    base = tmp_path_factory.mktemp("gen")
    out = {"ranks": base / "ranks", "kernrep": base / "kernrep"}
    gen_bundle.generate(str(out["ranks"]), 4, 4, 0.004, seed=3, jobs=1, quiet=True)
    # The same kernel noise on every node (issue 27's shape b, small): most hit lines are copies.
    gen_bundle.generate(str(out["kernrep"]), 4, 2, 0.012, seed=28, jobs=1, quiet=True, kernel_share=0.5,
                        kern_repeat=True)
    return out


@pytest.fixture(autouse=True)
def _workers_for_small_bundles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)


def _verdict(path: Path, workers: int) -> str:
    # A fresh Analyzer: the fold's lessons are per extraction, so each run learns from nothing.
    return records.dumps(Analyzer().analyze_bundle(load_bundle(str(path)), now=NOW, workers=workers), indent=2)


def _off(monkeypatch: pytest.MonkeyPatch, what: str) -> None:
    """Turn one of issue 27's shape-b paths off (the workers are forked: they inherit it)."""
    if what in ("matches", "all"):  # Hyperscan's matches through a Python callback and _lines_of
        monkeypatch.setattr(scan, "_Matches", None)
    if what in ("quiet", "all"):  # a sparse first chunk teaches no quiet shapes
        monkeypatch.setattr(fold.LineFold, "quiet_from", lambda *_a, **_k: None)
    if what in ("shape_memo", "all") and fold_shape_memo is not None:  # every shape worked out afresh in C
        fold_shape_memo(False)  # the test turns it back on
    if what in ("unquiet", "all"):  # the sparse path's prefilter scans every line of a chunk
        monkeypatch.setattr(scan, "_unquiet", None)


@pytest.fixture(scope="module")
def paths_on() -> dict[tuple[str, bool], tuple[dict[int, str], list[bool]]]:
    """(bundle, fast) -> the verdicts with every speed path on, in one process and in two workers, and what
    looks_dense answered meanwhile: made by the first test of the five that switch one path off each, the same
    for all five (a fresh Analyzer each time: nothing of one run reaches the next's verdict)."""
    return {}


@needs_hs
@pytest.mark.parametrize("name", ["ranks", "kernrep"])
@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("what", ["matches", "quiet", "shape_memo", "unquiet", "all"])
def test_a_generated_job_reads_the_same_with_each_speed_path_on_and_off(
        bundles: dict[str, Path], paths_on: dict[tuple[str, bool], tuple[dict[int, str], list[bool]]],
        monkeypatch: pytest.MonkeyPatch, name: str, fast: bool, what: str) -> None:
    looks_dense = fold.LineFold.looks_dense

    def spy(self: fold.LineFold, buf: bytes, sample: int = 64) -> bool:
        dense.append(looks_dense(self, buf, sample))
        return dense[-1]

    with memo.fastpath(fast):
        if (name, fast) not in paths_on:
            dense: list[bool] = []
            with monkeypatch.context() as m:
                m.setattr(fold.LineFold, "looks_dense", spy)
                paths_on[name, fast] = ({j: _verdict(bundles[name], j) for j in (1, 2)}, dense)
        on, dense = paths_on[name, fast]
        if name == "kernrep" and fast and scan._fold_run is not None:
            assert True in dense  # a node's kernel log started in the dense loop: the paths were taken
        try:
            with monkeypatch.context() as m:
                _off(m, what)
                off = {j: _verdict(bundles[name], j) for j in (1, 2)}
        finally:
            if fold_shape_memo is not None:
                fold_shape_memo(True)
    assert '"attributed_domain": "hardware"' in on[1]  # the generator's Xid 79 is found
    assert on[1] == on[2] == off[1] == off[2]


def _body(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if '"analyzed_at"' not in ln)


@needs_hs
def test_a_generated_job_reads_the_same_with_hyperscan_blocked(bundles: dict[str, Path]) -> None:
    env = {k: v for k, v in os.environ.items() if k != scan.MATCHER_ENV}
    env["PYTHONPATH"] = str(ROOT / "src")
    out = {}
    for engine in ("hyperscan", "aho-corasick"):
        p = subprocess.run([sys.executable, "-m", "firstfault", "analyze", str(bundles["kernrep"]), "--format",
                            "json", "-j", "1"], capture_output=True, text=True, env={**env, scan.MATCHER_ENV: engine},
                           cwd=ROOT, check=True)
        out[engine] = _body(p.stdout)
    assert out["hyperscan"] == out["aho-corasick"]
