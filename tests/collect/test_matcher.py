"""The prefilter's engines (collect/scan.py `_Matcher`): each finds what a plain substring test finds, and the
verdict does not depend on which one a process uses (FIRSTFAULT_MATCHER blocks the faster ones).

Hyperscan is the engine wherever it has a wheel; Rust's aho-corasick automaton (the `fallback` extra) stands in
where it does not load, and one alternation regex is the pure-Python last resort. The issue (27) asks for a test
that analyzes a bundle of realistic size with the fast path on and blocked, compares the verdict bytes and bounds
the time: test_a_generated_bundle_gives_the_same_verdict_with_hyperscan_blocked_within_a_bounded_time.
"""

from __future__ import annotations

import bisect
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from firstfault import records
from firstfault.collect import scan
from tests import tier
from tests.corpus import SHARED_NOW, SharedVerdicts, shared_verdict

ROOT = Path(__file__).resolve().parents[2]
WILD = ROOT / "tests" / "wild"
SHOWCASE = ROOT / "examples" / "nvlink-xid149"
HAVE_AC = importlib.util.find_spec("ahocorasick_rs") is not None


def _engines() -> list[str]:
    """The engines this machine can build (Hyperscan only when this process loaded it)."""
    return [e for e in scan.MATCHER_ENGINES
            if e == "re" or (e == "hyperscan" and scan.HAVE_HYPERSCAN) or (e == "aho-corasick" and HAVE_AC)]


def _engine(name: str, words: list[str]) -> scan._Engine:
    return scan._ENGINE_TYPES[name]([w.encode() for w in words])


def _wild_text() -> bytes:
    """Every log line of the wild corpus (real lines from public threads; each bundle's README names its source)."""
    parts = [p.read_bytes() for p in sorted(WILD.glob("*/**/*"))
             if p.is_file() and p.suffix not in (".yaml", ".md", ".json") and p.stat().st_size < 4 << 20]
    return b"".join(part if part.endswith(b"\n") else part + b"\n" for part in parts)


@pytest.fixture(scope="module")
def wild_text() -> bytes:
    return _wild_text()


def _by_line(starts: list[int], ids: list[list[int]] | None) -> dict[int, set[int] | None]:
    return {s: (set(ids[k]) if ids is not None else None) for k, s in enumerate(starts)}


def _lines_holding(text: bytes, lits: list[bytes]) -> dict[int, set[int]]:
    """The reference, decided without any engine: the start of each line of `text` (which ends in a newline) that
    holds a word, in order, and the words it holds. Each word is looked for with bytes.find through the whole text
    (once per line it is in): a word holds no newline, so each place it is found lies inside one line. The same
    as testing every word against every line (`word in line`), which took half a minute for Hyperscan's 3,400
    application words against the corpus' 9,000 lines."""
    assert text.endswith(b"\n")
    starts = [0]
    nl = text.find(b"\n")
    while nl >= 0:
        starts.append(nl + 1)
        nl = text.find(b"\n", nl + 1)
    held: dict[int, set[int]] = {}
    for i, w in enumerate(lits):
        assert w and b"\n" not in w, w
        at = text.find(w)
        while at >= 0:
            k = bisect.bisect_right(starts, at) - 1
            held.setdefault(starts[k], set()).add(i)
            at = text.find(w, starts[k + 1])  # the next line on
    return dict(sorted(held.items()))


@pytest.mark.parametrize("source", ["kernel", "syslog", "application"])
def test_every_engine_finds_the_lines_and_words_a_substring_test_finds(source: str, wild_text: bytes) -> None:
    words = scan.prefilter_words(source)
    expected = _lines_holding(wild_text, [w.encode() for w in words])
    assert len(expected) > 500  # the corpus holds enough candidates for the comparison to mean something
    for name in _engines():
        eng = _engine(name, words)
        starts, ids = eng.line_hits(wild_text)
        assert starts == sorted(expected), name
        got = _by_line(starts, ids)
        if ids is not None:
            assert got == expected, name
        for s in list(expected)[:300]:  # one line alone: the same words as in the buffer
            line = wild_text[s : wild_text.index(b"\n", s)]
            one = eng.line_ids(line)
            assert one is None or set(one) == expected[s], name
    matcher = scan._Matcher(words)  # this process's engine, the one every caller gets
    for s in list(expected)[:300]:
        assert matcher.ids_in(wild_text[s : wild_text.index(b"\n", s)]) == expected[s]


def test_a_line_that_only_looks_like_a_word_is_no_hit() -> None:
    words = ["NVRM: Xid", "fallen off the bus", "NCCL WARN"]
    buf = (b"[ 12.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"
           b"[ 12.6] nvrm: xid (pci:0000:3b:00): 79\n"  # another case: Hyperscan's flags are 0 (case-sensitive)
           b"[ 12.7] NVRM: X\n"  # a word cut by a newline belongs to no line
           b"id (PCI:0000:3b:00): 79\n"
           b"node-1:1:2 [0] NCCL  WARN fallen off the  bus\n"  # spaced apart
           b"node-1:1:2 [0] NCCL WARN\n")
    for name in _engines():
        starts, ids = _engine(name, words).line_hits(buf)
        assert starts == [0, buf.index(b"node-1:1:2 [0] NCCL WARN\n")], name
        if ids is not None:
            assert [set(i) for i in ids] == [{0, 1}, {2}], name


def test_an_empty_word_list_finds_nothing() -> None:
    m = scan._Matcher([])
    assert m.line_hits(b"NVRM: Xid 79\n") == ([], [])
    assert m.line_ids(b"NVRM: Xid 79") == []
    assert m.ids_in(b"NVRM: Xid 79") == set()


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "firstfault", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, check=False)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != scan.MATCHER_ENV}
    env["PYTHONPATH"] = str(ROOT / "src")
    env.update(extra)
    return env


def test_the_variable_names_the_engine_and_a_bad_value_is_refused() -> None:
    probe = ["-c", "from firstfault.collect import scan; print(scan.MATCHER_ENGINE)"]
    for value, want in [("re", "re"), ("RE ", "re"), ("aho-corasick", "aho-corasick" if HAVE_AC else "re")]:
        p = subprocess.run([sys.executable, *probe], capture_output=True, text=True, env=_env(FIRSTFAULT_MATCHER=value),
                           check=True)
        assert p.stdout.strip() == want, value
    bad = _run(["analyze", str(SHOWCASE)], _env(FIRSTFAULT_MATCHER="grep"))
    assert bad.returncode != 0
    assert "FIRSTFAULT_MATCHER='grep'" in bad.stderr and "hyperscan, aho-corasick, re" in bad.stderr
    assert "Traceback" not in bad.stderr


def _corpus_verdicts(engine: str, paths: list[Path]) -> dict[str, str]:
    """The verdicts of the bundles `paths`, in this order, by one Analyzer in a process whose engine is `engine`."""
    code = (
        "import json, sys\n"
        "from datetime import UTC, datetime\n"
        "from pathlib import Path\n"
        "from firstfault.collect import scan\n"
        "from firstfault import records\n"
        "from firstfault.analysis.analyze import Analyzer\n"
        "a = Analyzer()\n"
        "paths = [Path(line) for line in sys.stdin.read().splitlines()]\n"
        "now = datetime.fromisoformat(sys.argv[1])\n"
        "json.dump({'engine': scan.MATCHER_ENGINE, 'verdicts': {p.name: records.dumps(a.analyze_path(str(p), now=now))"
        " for p in paths}}, sys.stdout)\n")
    p = subprocess.run([sys.executable, "-c", code, SHARED_NOW.isoformat()],
                       input="".join(f"{path}\n" for path in paths), capture_output=True, text=True,
                       env=_env(FIRSTFAULT_MATCHER=engine), check=True)
    out: dict[str, object] = json.loads(p.stdout)
    assert out["engine"] == engine
    verdicts = out["verdicts"]
    assert isinstance(verdicts, dict)
    return verdicts


def test_the_wild_corpus_and_the_examples_give_the_same_verdicts_on_every_engine(
        shared_verdicts: SharedVerdicts) -> None:
    """This process's engine's verdicts are the session's shared ones (tests/corpus.py SharedVerdicts); each other
    engine's are made in a process of its own (FIRSTFAULT_MATCHER picks the engine at import). The full tier
    compares every bundle; the quick tier a fifth of them, spread evenly over the corpus (tests/tier.py): the
    claim is each bundle's own, and each other engine's process reading the whole corpus was a minute of CPU."""
    engines = _engines()
    assert len(engines) >= 2
    mine = sorted(p.parent for r in (WILD, SHOWCASE.parent) for p in r.glob("*/workload.yaml"))
    assert len(mine) >= 150 and shared_verdicts.engine in engines
    mine = tier.sample(mine, len(mine) // tier.QUICK_SHARE)
    first = {p.name: records.dumps(shared_verdict(shared_verdicts, p)) for p in mine}
    for name in engines:
        if name == shared_verdicts.engine:
            continue
        other = _corpus_verdicts(name, mine)
        assert [k for k in first if first[k] != other.get(k)] == [], name


def _body(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if '"analyzed_at"' not in ln)


@pytest.mark.skipif(not (scan.HAVE_HYPERSCAN and HAVE_AC), reason="needs Hyperscan and ahocorasick-rs (fallback)")
def test_a_generated_bundle_gives_the_same_verdict_with_hyperscan_blocked_within_a_bounded_time(
        tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import gen_bundle
    finally:
        sys.path.pop(0)
    bundle = tmp_path / "bundle"
    # About 8 MB: 2 nodes x 8 ranks of step lines, NCCL init, kernel noise, and one Xid 79 half way.
    summary = gen_bundle.generate(str(bundle), 2, 8, 0.008, 1, jobs=1, quiet=True)
    args = ["analyze", str(bundle), "--format", "json", "-j", "1"]
    fast_env, blocked_env = _env(), _env(FIRSTFAULT_MATCHER="aho-corasick")
    _run(args, fast_env)  # bytecode and the Hyperscan database cache written once, untimed
    times: dict[str, list[float]] = {"fast": [], "blocked": []}
    bodies: dict[str, set[str]] = {"fast": set(), "blocked": set()}
    for _ in range(3):  # paired and interleaved: the machine's other load falls on both alike
        for name, env in (("fast", fast_env), ("blocked", blocked_env)):
            t = time.perf_counter()
            p = _run(args, env)
            times[name].append(time.perf_counter() - t)
            assert p.returncode == 0, p.stderr
            bodies[name].add(_body(p.stdout))
    assert len(bodies["fast"]) == 1 and bodies["fast"] == bodies["blocked"]
    verdict = json.loads(p.stdout)
    assert verdict["attributed_domain"] == summary["expected"]["attributed_domain"]
    assert verdict["affected_nodes"] == summary["expected"]["affected_nodes"]
    ratio = statistics.median(times["blocked"]) / statistics.median(times["fast"])
    assert ratio <= 6.0, f"blocked/fast {ratio:.2f}x: {times}"


def test_the_remote_streams_word_filter_reads_text_through_the_matcher() -> None:
    from firstfault.collect.lines import WordFilter

    wf = WordFilter(["NCCL WARN", "Xid", ""])
    assert wf.words == ["NCCL WARN", "Xid"]
    assert wf("node-1:1:2 [0] NCCL WARN NET/Socket : Connection refused")
    assert wf("déjà vu: NVRM: Xid (PCI:0000:3b:00): 79")  # the words found in the UTF-8 of any text
    assert wf("\udcff NVRM: Xid 79")  # a lone surrogate (a stream decoded with surrogateescape) is no error
    assert not wf("node-1:1:2 [0] NCCL  WARN spaced apart, nvrm: xid in lower case")
    assert not WordFilter([])("NCCL WARN")


def test_a_word_list_builds_its_engine_once_and_the_engines_kept_are_bounded() -> None:
    words = ["NVRM: Xid", "NCCL WARN"]
    assert scan._Matcher(list(words))._engine is scan._Matcher(list(words))._engine
    for n in range(scan.MAX_ENGINES + 3):
        scan._Matcher([f"word-{n}", "NCCL WARN"])
    assert len(scan._ENGINES) <= scan.MAX_ENGINES
    starts, ids = scan._Matcher(words).line_hits(b"a NCCL WARN b\n")  # rebuilt after its engine was dropped
    assert starts == [0] and ids in ([[1]], None)


def test_a_matchers_hex_literals_take_its_hex_words_as_worked_out_afresh() -> None:
    """_Matcher.hex_literals passes the hex words it already has (memo.hex_literals' `words_of`): the same table as
    working them out again, on the catalog's words; near miss: words that are not these literals' give another."""
    from firstfault.collect.scan import LineScanner, all_line_extractors
    from firstfault.extract import memo

    for kind in ("application", "kernel"):
        m = LineScanner(kind, all_line_extractors()).matcher
        assert m.hex_literals == memo.hex_literals(m.literals)
        assert m.hex_literals
    words = memo.hex_words([b"EDAC "])
    assert words == (b"0000 ",)
    assert memo.hex_literals([b"EDAC ", b"Xid "], words) == memo.hex_literals([b"EDAC ", b"Xid "]) \
        == {b"0000 ": (b"EDAC ",)}
    assert memo.hex_literals([b"EDAC ", b"Xid "], []) == {}
