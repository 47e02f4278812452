"""One worker's CPU on a bundle's rank logs, split by kind of work (issue 27; bench/README.md, "seventh session").

Runs `parallel._work_range` over the bundle's non-kernel files in this process, with `_JOB` set as
`collect_bundle_parallel` sets it, three ways in interleaved rounds: as shipped; every line extractor's `extract`
stubbed to give nothing (what is left is the dispatch around the extractors and the file's own work); and
`Extraction.add_events` stubbed too (what is left is the file's own work: open, reads, the scanner, each candidate's
build). Prints the thread time per file, the minimum of the rounds and every round.

With `--calls`, instead: the Python and C calls per file of one run as shipped (after a warm run), counted by a
`sys.setprofile` hook: a figure the machine's load does not move, to compare two trees' line paths (run it with each
tree's `src` first on PYTHONPATH). `--kernel` takes the bundle's kernel logs instead of its other files.

With `--extractors`, instead: each line extractor's own time per call in place (one run as shipped after a warm
run, every `extract` wrapped by a timer: its generator read whole, as `_drafts` reads it, in this thread's CPU time,
the wrapper's own cost of about a microsecond included), by extractor and by the line's template (its digits made
`0`, its first 120 characters), with the calls per file and the drafts per call: how much of a file's time the
readers take, and on which lines.

    PYTHONPATH=src python bench/worker_split.py /tmp/a1k --files 512 --rounds 5
    PYTHONPATH=src python bench/worker_split.py /tmp/ff-shapes/ranks16k-7f122972da --files 600 --calls
    PYTHONPATH=src python bench/worker_split.py /tmp/ff-shapes/ranks16k-7f122972da --files 1000 --extractors

a1k: `python -c "from bench.gen_bundle import generate; generate('/tmp/a1k', 128, 8, 1.1*1024/16384, 27)"`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from firstfault.analysis import parallel
from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import load_bundle
from firstfault.collect import scan
from firstfault.extract.memo import digits_zeroed
from firstfault.timeparse import TimeParser


def _nothing(self: Any, line: str, ctx: Any) -> Iterator[Any]:
    return iter(())


def _no_events(self: Any, candidate: Any, store: Any) -> None:
    return None


def _timed_extractors(extracts: dict[type, Callable[..., Any]],
                      spent: dict[tuple[str, str], list[float]]) -> None:
    """Wrap each extractor class's `extract` (`extracts`: the shipped ones) to add each call's seconds and the drafts
    it gave to `spent[(class name, line template)]`."""
    clock = time.thread_time  # (this thread's CPU: the machine's load does not add to it)

    def timed(cls: type, f: Callable[..., Any]) -> Callable[..., Any]:
        name = cls.__name__

        def extract(self: Any, line: str, ctx: Any) -> Iterator[Any]:
            t = clock()
            out = list(f(self, line, ctx))
            took = clock() - t
            row = spent.setdefault((name, digits_zeroed(line)[:120]), [0.0, 0.0, 0.0])
            row[0] += took
            row[1] += 1
            row[2] += len(out)
            return iter(out)
        return extract

    for cls, f in extracts.items():
        cls.extract = timed(cls, f)  # type: ignore[attr-defined]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("bundle")
    ap.add_argument("--files", type=int, default=512, help="the first N non-kernel files (default 512)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", action="store_true", help="count the calls per file of one run instead of timing")
    ap.add_argument("--kernel", action="store_true", help="the kernel logs instead of the other files")
    ap.add_argument("--extractors", action="store_true",
                    help="each extractor's time per call in place, by line template, of one run")
    args = ap.parse_args()
    bundle = load_bundle(args.bundle)
    analyzer = Analyzer()
    tasks = [t for t in parallel.line_tasks(bundle) if (t.kind == "kernel") == args.kernel][:args.files]
    ctx = bundle.context
    for kind in {t.kind for t in tasks}:
        analyzer.scanner(kind)
    parallel._JOB = parallel._Job(analyzer, tasks, TimeParser(ctx.tz, ctx.window_start, ctx.window_end),
                                  list(ctx.workload.nodes))
    add_events = scan.Extraction.add_events
    extracts: dict[type, Callable[..., Any]] = {type(e): type(e).extract for e in scan.all_line_extractors()}

    def run() -> float:
        parallel._JOB.extraction = None
        t0 = time.thread_time()
        parallel._work_range(0, len(tasks))
        return time.thread_time() - t0

    run()  # warm: compile the patterns, fill the memos' first entries
    if args.calls:
        counts = {"call": 0, "c_call": 0}

        def count(frame: Any, event: str, arg: Any) -> None:
            if event in counts:
                counts[event] += 1

        sys.setprofile(count)
        try:
            run()
        finally:
            sys.setprofile(None)
        print(f"{len(tasks)} files: {counts['call'] / len(tasks):.1f} Python calls, "
              f"{counts['c_call'] / len(tasks):.1f} C calls a file")
        return
    if args.extractors:
        spent: dict[tuple[str, str], list[float]] = {}
        _timed_extractors(extracts, spent)
        try:
            t0 = time.thread_time()
            run()
            whole = time.thread_time() - t0
        finally:
            for cls, f in extracts.items():
                cls.extract = f  # type: ignore[attr-defined]
        n = len(tasks)
        total = sum(row[0] for row in spent.values())
        print(f"{n} files: {1e6 * whole / n:.0f} us a file, of which the extractors' calls {1e6 * total / n:.0f}")
        print(f"{'us a call':>9} {'calls/file':>10} {'drafts/call':>11}  extractor: line template")
        for (name, key), (took, calls, drafts) in sorted(spent.items(), key=lambda kv: -kv[1][0])[:30]:
            print(f"{1e6 * took / calls:9.1f} {calls / n:10.2f} {drafts / calls:11.2f}  {name}: {key}")
        return
    rounds: dict[str, list[float]] = {"as shipped": [], "extractors stubbed": [], "add_events stubbed": []}
    try:
        for _ in range(args.rounds):
            scan.Extraction.add_events = add_events  # type: ignore[method-assign]
            for cls, f in extracts.items():
                cls.extract = f
            rounds["as shipped"].append(run())
            for cls in extracts:
                cls.extract = _nothing
            rounds["extractors stubbed"].append(run())
            scan.Extraction.add_events = _no_events  # type: ignore[method-assign]
            rounds["add_events stubbed"].append(run())
    finally:
        scan.Extraction.add_events = add_events  # type: ignore[method-assign]
        for cls, f in extracts.items():
            cls.extract = f
    for name, times in rounds.items():
        per = [1e6 * t / len(tasks) for t in times]
        print(f"{name:20s} min {min(per):6.0f} us a file   rounds: " + " ".join(f"{p:.0f}" for p in per))


if __name__ == "__main__":
    main()
