#!/usr/bin/env python3
# Report lines are %-formatted tables; one style throughout.
# ruff: noqa: UP031
"""How attribution scales with the rank count: the curve at 1k, 4k and 16k ranks (issue 11).

    python bench/attribution_scale.py [--ranks 1024,4096,16384] [--kb-per-rank 30] [--workdir /tmp/ff-ascale]

For each rank count it generates (bench/gen_bundle.py, 8 ranks a node, seed 1,
small logs of about --kb-per-rank KB per rank, one Xid 79 mid-run with the
whole job's NCCL and watchdog fallout) a bundle, then analyses it in a fresh
process, once per --repeat, and reports the median of:

  read      collecting the bundle: scan, extract, EventStore (all files)
  judge     Analysis.finish: normalise, leads, rules, attribution, verdict
  events    the events kept (what judge works on)
  RSS       the process's peak RSS (ru_maxrss)
  leads     each lead of the verdict as kind:N, N the ranks it names (docs/verdict.md: at most 64)

and judge's growth against the events kept and against the ranks: linear
means the last column (microseconds of judge per event kept) stays flat
while ranks grow 16-fold; ranks squared would grow it 16-fold.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


def one(bundle: str) -> None:
    """Child mode: analyse one bundle, print the figures as JSON."""
    sys.path.insert(0, str(SRC))
    from firstfault.analysis.analyze import Analyzer
    from firstfault.bundle import load_bundle
    from firstfault.collect.evidence import collect_bundle

    t0 = time.perf_counter()
    b = load_bundle(bundle)
    an = Analyzer()
    analysis = an.start(b.context)
    collect_bundle(an, b, analysis)
    t1 = time.perf_counter()
    kept = len(analysis.store.events)
    v = analysis.finish()
    t2 = time.perf_counter()
    print(json.dumps({
        "read_s": t1 - t0, "judge_s": t2 - t1, "events": kept,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "verdict": [v.attributed_domain, v.root_cause.category if v.root_cause else None, v.affected_nodes],
        "leads": ["%s:%d" % (x.kind, len(x.ranks)) for x in v.leads],
    }))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", default="1024,4096,16384")
    ap.add_argument("--kb-per-rank", type=float, default=30.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/ff-ascale"))
    ap.add_argument("--one", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        one(a.one)
        return 0
    sys.path.insert(0, str(HERE))
    import gen_bundle  # sibling script

    a.workdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(SRC))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    rows = []
    for ranks in [int(r) for r in a.ranks.split(",") if r.strip()]:
        bdir = a.workdir / ("ranks-%d" % ranks)
        if not (bdir / "workload.yaml").exists():
            gb = ranks * a.kb_per_rank * 1e3 / 1e9
            s = gen_bundle.generate(str(bdir), max(1, ranks // 8), min(8, ranks), gb, 1, quiet=True)
            print("generated %s: %d files, %.3f GB in %.1f s" % (bdir, s["files"], s["bytes"] / 1e9, s["seconds"]))
        runs = []
        for _ in range(a.repeat):
            p = subprocess.run([sys.executable, __file__, "--one", str(bdir)], capture_output=True, text=True,
                               env=env, check=True)
            runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
        med = {k: statistics.median(r[k] for r in runs) for k in ("read_s", "judge_s", "events", "rss_mb")}
        rows.append((ranks, med, runs[0]["verdict"], runs[0]["leads"]))
    print("\n%8s %9s %9s %9s %9s %14s  %s" % ("ranks", "read s", "judge s", "events", "RSS MB", "judge us/event",
                                             "verdict; leads (kind:ranks named)"))
    for ranks, m, verdict, leads in rows:
        print("%8d %9.2f %9.3f %9d %9.1f %14.1f  %s; %s" % (
            ranks, m["read_s"], m["judge_s"], m["events"], m["rss_mb"], m["judge_s"] / max(m["events"], 1) * 1e6,
            verdict, " ".join(leads) or "none"))
    if len(rows) >= 2:
        (r0, m0, _, _), (r1, m1, _, _) = rows[0], rows[-1]
        print("\nranks x%.0f: events kept x%.1f, judge time x%.1f, RSS x%.2f" % (
            r1 / r0, m1["events"] / max(m0["events"], 1), m1["judge_s"] / max(m0["judge_s"], 1e-9),
            m1["rss_mb"] / m0["rss_mb"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
