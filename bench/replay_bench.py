#!/usr/bin/env python3
# ruff: noqa: UP031
"""What catalog-replay capture costs, and what a replay costs, on one bundle.

    python bench/replay_bench.py BUNDLE [--repeat 3] [--cap BYTES]

Times (median of --repeat runs, in process, warm page cache):

  analyze   Analyzer().analyze_bundle: the embedded engine alone
  capture   the same with a firstfault.replay.Recorder in front (what the Blueprint runs)
  pack      Captured.pack(verdict, cap): JSON + zlib, cut to the cap (once per stored verdict)
  replay    unpack + wire.analyze_request with the same catalog (once per verdict replayed)

and prints the candidate lines kept, the raw and stored sizes, and whether the
replayed verdict is the verdict (it must be: exit 1 otherwise).
Make a bundle with bench/gen_bundle.py first.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from firstfault import records


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cap", type=int, default=4 << 20, help="stored bytes per verdict (default 4 MiB)")
    args = ap.parse_args()

    from datetime import UTC, datetime

    from firstfault.analysis.analyze import Analyzer, analyze_request
    from firstfault.bundle import load_bundle
    from firstfault.replay import capture_bundle, unpack

    now = datetime(2026, 11, 2, 12, tzinfo=UTC)
    bundle = load_bundle(str(args.bundle))
    analyzer = Analyzer()
    t_an, plain = timed(lambda: analyzer.analyze_bundle(bundle, now=now), args.repeat)
    t_cap, (verdict, captured) = timed(lambda: capture_bundle(analyzer, bundle, now=now), args.repeat)
    t_pack, ev = timed(lambda: captured.pack(verdict, args.cap), args.repeat)
    if ev is None:
        print("nothing fits the cap", file=sys.stderr)
        return 1
    t_rep, again = timed(lambda: analyze_request(analyzer, unpack(ev.codec, ev.data), now=now), args.repeat)
    print("%-8s %8s" % ("step", "seconds"))
    for name, t in (("analyze", t_an), ("capture", t_cap), ("pack", t_pack), ("replay", t_rep)):
        print("%-8s %8.3f" % (name, t))
    print("capture overhead: %+.1f%%" % (100 * (t_cap - t_an) / t_an if t_an else 0.0))
    print("lines kept %d of %d, documents %d of %d; raw %.2f MiB, stored %.3f MiB (cap %.2f MiB), truncated %s"
          % (ev.lines_kept, ev.lines_total, ev.documents_kept, ev.documents_total, ev.raw_bytes / 2**20,
             len(ev.data) / 2**20, args.cap / 2**20, ev.truncated))
    same = records.dumps(again) == records.dumps(verdict) == records.dumps(plain)
    print("replayed verdict is the verdict: %s" % same)
    return 0 if same or ev.truncated else 1


if __name__ == "__main__":
    sys.exit(main())
