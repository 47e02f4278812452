#!/usr/bin/env python3
# Report lines are %-formatted tables; one style throughout.
# ruff: noqa: UP031
"""The prefilter's engines side by side (issue 27): how the fallback behind Hyperscan was chosen.

    python bench/matchers.py [--workdir DIR] [--repeat 3] [--noisy-lines 200000]

On the buffers the scanner reads (8 MiB chunks of whole lines) of three shapes, a 66 MB generated bundle's
application logs and its kernel logs (bench/gen_bundle.py, 16 nodes x 8 ranks) and the noisy log of
bench/headline.py, it times one chunk scan (the lines that hold a word and the words on each) with each
engine the scanner has (collect/scan.py: hyperscan, aho-corasick, re) and with the other candidates when
installed (google-re2: one alternation to find the lines and a Set for the words of each; pyahocorasick:
its automaton over the buffer as latin-1 text). Runs are interleaved (run 1 of every engine, then run 2) and
each engine's answer is checked against Hyperscan's (the words of a line as a set). `re` is skipped on
shapes of more than --re-max-mb MB (minutes a run).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))
import gen_bundle  # noqa: E402  (sibling script)
from headline import write_noisy  # noqa: E402

from firstfault.collect import scan  # noqa: E402

Hits = tuple[list[int], list[list[int]] | None]


def chunks(files: list[Path]) -> list[bytes]:
    """The files' bytes in buffers of about scan.CHUNK, each of whole lines (as the scanner reads them)."""
    out: list[bytes] = []
    cur: list[bytes] = []
    size = 0
    for f in files:
        data = f.read_bytes()
        cur.append(data if data.endswith(b"\n") else data + b"\n")
        size += len(data)
        if size >= scan.CHUNK:
            out.append(b"".join(cur))
            cur, size = [], 0
    if cur:
        out.append(b"".join(cur))
    return out


def re2_engine(literals: list[bytes]) -> Callable[[bytes], Hits]:
    import re2  # type: ignore[import-not-found]

    opts = re2.Options()
    opts.max_mem = 64 << 20
    rx = re2.compile(b"|".join(re2.escape(w) for w in literals), opts)
    words = re2.Set.SearchSet(opts)
    for w in literals:
        words.Add(re2.escape(w))
    words.Compile()

    def line_hits(buf: bytes) -> Hits:
        starts, ids, pos = [], [], 0
        while (m := rx.search(buf, pos)) is not None:
            s = buf.rfind(b"\n", 0, m.start()) + 1
            e = buf.find(b"\n", m.end())
            e = len(buf) if e < 0 else e
            starts.append(s)
            ids.append(list(words.Match(buf[s:e])))
            pos = e + 1
        return starts, ids

    return line_hits


def pyahocorasick_engine(literals: list[bytes]) -> Callable[[bytes], Hits]:
    import ahocorasick  # type: ignore[import-not-found]

    a = ahocorasick.Automaton()
    for i, w in enumerate(literals):
        a.add_word(w.decode("latin-1"), i)
    a.make_automaton()

    def line_hits(buf: bytes) -> Hits:
        return scan._lines_of(buf, [(i, e + 1) for e, i in a.iter(buf.decode("latin-1"))])

    return line_hits


def engines(literals: list[bytes], with_re: bool) -> dict[str, Callable[[bytes], Hits]]:
    out: dict[str, Callable[[bytes], Hits]] = {}
    for name in scan.MATCHER_ENGINES:
        if name == "hyperscan" and not scan.HAVE_HYPERSCAN:
            continue
        if name == "aho-corasick" and importlib.util.find_spec("ahocorasick_rs") is None:
            continue
        if name == "re" and not with_re:
            continue
        out[name] = scan._ENGINE_TYPES[name](literals).line_hits
    for name, mod, make in (("google-re2", "re2", re2_engine), ("pyahocorasick", "ahocorasick", pyahocorasick_engine)):
        if importlib.util.find_spec(mod) is not None:
            out[name] = make(literals)
    return out


def as_sets(h: Hits) -> tuple[list[int], list[set[int]] | None]:
    return h[0], None if h[1] is None else [set(i) for i in h[1]]


def measure(title: str, source: str, bufs: list[bytes], repeat: int, re_max_mb: float) -> None:
    literals = [w.encode() for w in scan.prefilter_words(source)]
    mb = sum(map(len, bufs)) / 1e6
    fns = engines(literals, mb <= re_max_mb)
    ref = [as_sets(fns[next(iter(fns))](b)) for b in bufs]
    secs: dict[str, list[float]] = {n: [] for n in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t = time.perf_counter()
            got = [fn(b) for b in bufs]
            secs[name].append(time.perf_counter() - t)
            for g, r in zip(got, ref, strict=True):
                gs = as_sets(g)
                assert gs[0] == r[0] and (gs[1] is None or r[1] is None or gs[1] == r[1]), name
    first = statistics.median(secs[next(iter(secs))])
    print("\n== %s: %.0f MB, %d literals (%s), %d candidate lines" % (
        title, mb, len(literals), source, sum(len(r[0]) for r in ref)))
    print("  %-14s %9s %8s %9s" % ("engine", "median s", "MB/s", "x first"))
    for name, v in secs.items():
        m = statistics.median(v)
        print("  %-14s %9.3f %8.0f %9.2f" % (name, m, mb / m, m / first))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/ff-matchers"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--noisy-lines", type=int, default=200_000)
    ap.add_argument("--re-max-mb", type=float, default=10.0, help="time the pure-Python engine up to this size")
    a = ap.parse_args(argv)
    a.workdir.mkdir(parents=True, exist_ok=True)
    bundle = a.workdir / "bundle-66m"
    if not (bundle / "workload.yaml").exists():
        gen_bundle.generate(str(bundle), 16, 8, 0.066, 1, quiet=True)
    noisy = write_noisy(a.workdir / "noisy", a.noisy_lines)
    print("matchers  repeat %d (median), engine of this process: %s" % (a.repeat, scan.MATCHER_ENGINE))
    app = chunks(sorted((bundle / "app").glob("*.log")))
    measure("66 MB bundle, application logs (one chunk)", "application", app[:1], a.repeat, a.re_max_mb)
    measure("66 MB bundle, application logs", "application", app, a.repeat, a.re_max_mb)
    measure("66 MB bundle, kernel logs", "kernel", chunks(sorted((bundle / "nodes").glob("*/kern.log"))), a.repeat,
            a.re_max_mb)
    measure("noisy log", "application", chunks(sorted((noisy / "app").glob("*.log"))), a.repeat, a.re_max_mb)
    return 0


if __name__ == "__main__":
    sys.exit(main())
