#!/usr/bin/env python3
# ruff: noqa: UP031
"""The fold's dense loop in C (_lines.fold_run) against the same loop in Python, on the noisy log.

    python bench/fold_loop.py [--lines 2000000] [--repeat 3] [--workdir /tmp/ff-headline]

Analyses the noisy log of bench/headline.py (written when missing) in this process, one worker,
alternating the C loop and the Python one (scan._fold_run set to None), and prints the median
CPU and wall seconds of each and whether the two verdicts are the same bytes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from headline import write_noisy

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.collect import scan


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/ff-headline"))
    a = ap.parse_args(argv)
    run = scan._fold_run
    if run is None:
        print("firstfault._lines has no fold_run (the C module is not built): nothing to compare")
        return 1
    a.workdir.mkdir(parents=True, exist_ok=True)
    bundle = write_noisy(a.workdir / "noisy", a.lines)
    analyzer = Analyzer()
    now = datetime(2026, 12, 1, tzinfo=UTC)
    times: dict[str, list[tuple[float, float]]] = {"C": [], "Python": []}
    docs: dict[str, str] = {}
    for _ in range(a.repeat):
        for name, loop in (("C", run), ("Python", None)):
            scan._fold_run = loop
            t, c = time.perf_counter(), time.process_time()
            v = analyzer.analyze_path(str(bundle), now=now, workers=1)
            times[name].append((time.process_time() - c, time.perf_counter() - t))
            docs[name] = records.dumps(v, indent=2)
    scan._fold_run = run
    print("noisy log, %d lines, %d runs each (medians)" % (a.lines, a.repeat))
    for name, ts in times.items():
        print("  %-7s %6.2f s CPU  %6.2f s wall" % (name, statistics.median(c for c, _ in ts),
                                                 statistics.median(w for _, w in ts)))
    same = docs["C"] == docs["Python"]
    print("  verdict bytes: %s" % ("IDENTICAL" if same else "DIFFERENT"))
    return 0 if same else 2


if __name__ == "__main__":
    raise SystemExit(main())
