"""python -m lab run [--mode torchrun|slurm|mpirun|lightning|jax|ray|accelerate|deepspeed|dask|sge|all]
                   [--fault NAME ...] --out DIR
python -m lab check DIR [-v]
python -m lab list"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lab.faults import LOCAL_MODES


def _run(args: argparse.Namespace) -> int:
    from lab import driver, slurm
    from lab.faults import FAULTS

    unknown = [n for n in args.fault or [] if n not in FAULTS]
    if unknown:
        print(f"unknown fault(s): {', '.join(unknown)}; known: {', '.join(FAULTS)}", file=sys.stderr)
        return 2
    faults = driver.select(args.fault, args.mode)
    if not faults:
        print("no fault selected", file=sys.stderr)
        return 2
    out = Path(args.out)
    clusters: dict[str, Any] = {}
    results: list[driver.RunResult] = []
    t0 = time.monotonic()
    try:
        profiles = sorted({f.slurm_profile for f in faults if f.mode == "slurm"})
        if profiles:
            missing = slurm.harness.missing_binaries()
            if missing:
                print(f"Slurm not installed (missing {', '.join(missing)})", file=sys.stderr)
                return 2
            for profile in profiles:
                base = Path(tempfile.mkdtemp(prefix=f"lab-slurm-{profile}-"))
                clusters[profile] = (slurm.harness.start_slurm(base) if profile == "harness"
                                     else slurm.start(base, profile))
                print(f"Slurm ({profile}) up in {clusters[profile].startup_seconds:.1f}s under {base}", flush=True)
        if any(f.mode == "sge" for f in faults):  # twelfth round: the lab's Grid Engine cell (lab/sge.py)
            from lab import sge

            why = sge.unavailable()
            if why:
                print(why, file=sys.stderr)
                return 2
            clusters["sge"] = sge.start(Path(tempfile.mkdtemp(prefix="lab-sge-")))
            print(f"Grid Engine up in {clusters['sge'].startup_seconds:.1f}s under {clusters['sge'].base}", flush=True)

        def done(r: driver.RunResult) -> None:
            what = f"ERROR {r.error}" if r.error else r.detail
            print(f"{r.fault:28s} {r.seconds:6.1f}s  {what}  -> {r.bundle}", flush=True)

        results = driver.run_many(faults, out, workers=args.workers, clusters=clusters, on_done=done)
    finally:
        for c in clusters.values():
            c.stop()
    print(f"{len(faults)} runs in {time.monotonic() - t0:.1f}s", flush=True)
    return 1 if any(r.error for r in results) else 0


def _check(args: argparse.Namespace) -> int:
    from firstfault.analysis.analyze import Analyzer
    from lab.check import bundles_in, check_bundle, table

    bundles = bundles_in(Path(args.dir))
    if not bundles:
        print(f"no bundles with expected.yaml under {args.dir}", file=sys.stderr)
        return 2
    analyzer = Analyzer()
    checks = [check_bundle(b, analyzer) for b in bundles]
    print(table(checks))
    if args.verbose:
        for c in checks:
            if not c.ok:
                print(f"\n{c.fault}: {'; '.join(c.problems)}\n  summary: {c.summary}")
    return 0 if all(c.ok for c in checks) else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lab", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run faults for real and write bundles")
    r.add_argument("--mode", choices=["torchrun", "slurm", *LOCAL_MODES, "sge", "all"], default="all")
    r.add_argument("--fault", nargs="+", metavar="NAME")
    r.add_argument("--out", required=True)
    r.add_argument("--workers", type=int, default=3,
                   help="runs at once (default 3: a run is CPU-bound only for its first seconds)")
    c = sub.add_parser("check", help="run firstfault on each bundle and compare with expected.yaml")
    c.add_argument("dir")
    c.add_argument("-v", "--verbose", action="store_true")
    sub.add_parser("list", help="list the faults")
    args = p.parse_args(argv)
    if args.cmd == "run":
        return _run(args)
    if args.cmd == "check":
        return _check(args)
    from lab.faults import FAULTS

    for f in FAULTS.values():
        print(f"{f.name:28s} {f.mode:9s} {f.domain}/{f.category or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
