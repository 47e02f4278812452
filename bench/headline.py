#!/usr/bin/env python3
# Report lines are %-formatted tables; one style throughout.
# ruff: noqa: UP031
"""The headline benchmark of issue 11: firstfault analyze against the floor and grep, in one run.

    python bench/headline.py [--sizes 1,4] [--repeat 3] [--workers 1,2] [--base-src DIR] [--instructions LINES]
                             [--instructions-bundle] [--blocked ENGINE]

For each size it uses (or generates, 128 nodes x 8 ranks, seed 1) a bundle
under --workdir and times, interleaved (run 1 of every tool, then run 2, ...)
so that the load of other processes on the machine falls on all of them alike:

  cat       cat FILES > /dev/null                            the floor
  grep-14   grep -c -E '<the issue's 14 words>' FILES         the comparison a user makes
  grep-cat  grep -c -E -f <catalog prefilter words> FILES     the catalog's own words (second column)
  ff -jN    python -m firstfault analyze BUNDLE --format json -j N     this tree
  base      the same with PYTHONPATH=--base-src (another checkout, e.g. main), no -j
  blocked   with --blocked ENGINE: ff with the first -j and FIRSTFAULT_MATCHER=ENGINE (aho-corasick: Hyperscan
            blocked; re: both compiled engines blocked), its verdict compared and its time as a ratio of ff's

Then two end-to-end cases: the noisy log (one application log of
--noisy-lines lines, every one passing the prefilter: half "Error fetching
batch ... ConnectionError", half "NCCL WARN NET/Socket ... retrying", whose
numbers (batch, shard, pid, tid, GPU, timeout) vary from line to line, in
value and in width, as a real process's do) and the
small showcase bundle (examples/nvlink-xid149). It prints median wall times
(of --repeat runs), peak RSS (GNU time's %M: the largest single process, so
for -jN the parent or one worker), and the ratios against the issue's targets:

  analyze <= 1.0x grep-14 on every size       peak RSS < 150 MB and flat (<= 1.25x) from smallest to largest
  noisy log <= 4 s                            showcase < 0.2 s
  verdict bytes the same for every -jN (the analyzed_at line aside)
  with --blocked: blocked <= 3x ff (same -j) on every size and on the noisy log (issue 27)

With --instructions LINES it also counts instructions under valgrind (callgrind), which the load of
other processes does not change: per noisy line (a LINES-line log less a 10-line one) and the
showcase's, -j 1, for this tree and --base-src; with --instructions-bundle also the first --sizes
bundle's whole -j 1 run and, process by process, its run with the largest --workers (about five
minutes a run at 1 GB).

Exit status 0 when every analyze run gave a JSON verdict (targets are
reported, not enforced; --enforce makes a missed target exit 3).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path.insert(0, str(HERE))
import gen_bundle  # noqa: E402  (sibling script)
from run_bench import EXPECTED_FILE, bundle_files, ere_escape, timed  # noqa: E402

GREP_14 = ("Xid|SXid|NCCL WARN|Watchdog|Traceback|Error|error|fail|Killed process|out of memory|LustreError"
           "|link down|AER|timeout")
SHOWCASE = HERE.parent / "examples" / "nvlink-xid149"
FF_SRC = SRC  # --src
TARGET_RATIO = 1.0
TARGET_RSS_MB = 150.0
FLAT = 1.25
TARGET_NOISY_S = 4.0
TARGET_SMALL_S = 0.2
TARGET_BLOCKED = 3.0  # issue 27: the fast scanner blocked, at most this many times the fast path


@dataclass
class Tool:
    name: str
    cmd: list[str]
    env: dict[str, str]
    out: Path | None = None
    secs: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    rcs: list[int] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.secs)

    @property
    def rss_mb(self) -> float:
        return max(self.rss_kb) / 1024.0


def _env(src: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(src)
    env["LC_ALL"] = "C"
    # An installed package has its bytecode; a shell with PYTHONDONTWRITEBYTECODE would time a
    # compile of every module on every run instead.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def analyze_tools(bundle: Path, workers: list[int], base_src: Path | None, work: Path,
                  blocked: str | None = None) -> list[Tool]:
    py = sys.executable
    tools = [Tool("ff -j%d" % w, [py, "-m", "firstfault", "analyze", str(bundle), "--format", "json", "-j", str(w)],
                  _env(FF_SRC), work / ("verdict-j%d.json" % w)) for w in workers]
    if blocked is not None:
        tools.append(Tool("ff blocked", tools[0].cmd, dict(_env(FF_SRC), FIRSTFAULT_MATCHER=blocked),
                          work / "verdict-blocked.json"))
    if base_src is not None:
        tools.append(Tool("base", [py, "-m", "firstfault", "analyze", str(bundle), "--format", "json"],
                          _env(base_src), work / "verdict-base.json"))
    return tools


def run_all(tools: list[Tool], cwd: Path, repeat: int) -> None:
    for _ in range(repeat):
        for t in tools:
            if t.out is not None:
                with open(t.out, "wb") as fh:
                    r = timed(t.cmd, cwd, fh, t.env)
            else:
                r = timed(t.cmd, cwd, subprocess.DEVNULL, t.env)
            t.secs.append(r.seconds)
            t.rss_kb.append(r.rss_kb)
            t.rcs.append(r.rc)


def verdict_body(path: Path) -> tuple[str, dict[str, object]]:
    """The verdict without its analyzed_at line (the one thing that differs run to run), and parsed."""
    text = path.read_text(encoding="utf-8")
    doc = json.loads(text)
    return "\n".join(ln for ln in text.splitlines() if '"analyzed_at"' not in ln), doc


def catalog_words(work: Path) -> Path:
    p = subprocess.run([sys.executable, "-m", "firstfault", "rules", "prefilter"], capture_output=True, text=True,
                       env=_env(FF_SRC), check=True)
    words = [w for w in p.stdout.splitlines() if w.strip()]
    pat = work / "catalog.ere"
    pat.write_text("".join(ere_escape(w) + "\n" for w in words), encoding="utf-8")
    return pat


def write_noisy(out: Path, lines: int, seed: int = 7) -> Path:
    """One node, one rank, one application log of `lines` lines that all pass the prefilter."""
    # Outside the bundle (not a measured file); it holds the line count of what the bundle now holds, so a
    # bundle written for another count is written again (one marker per count once let a 200,000-line run
    # time the 2 million lines written after it).
    done = out.parent / ("%s.done" % out.name)
    version = "%d varying" % lines  # the generator's version too: an older copy had the same numbers on every line
    if done.exists() and done.read_text(encoding="utf-8") == version:
        return out
    done.unlink(missing_ok=True)
    (out / "app").mkdir(parents=True, exist_ok=True)
    (out / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\n"
        "workload:\n  id: '777'\n  name: noisy-dataloader\n  scheduler: slurm\n"
        "  window: {start: '2026-11-02T10:00:00Z', end: '2026-11-02T14:00:00Z'}\n"
        "  nodes: [node-001]\n  ranks: {node-001: 0-0}\n  timezone: UTC\n"
        "sources:\n- {kind: application, path: 'app/rank-{rank}.log'}\n", encoding="utf-8")
    rng = random.Random(seed)
    with open(out / "app" / "rank-0.log", "w", encoding="utf-8") as fh:
        buf: list[str] = []
        for i in range(lines):
            t = i * 0.005  # 200 lines a second: 2 million lines in under 3 hours, inside the window
            s = int(t)
            stamp = "2026-11-02 %02d:%02d:%02d,%03d" % (10 + s // 3600, s // 60 % 60, s % 60, int(t * 1000) % 1000)
            if i % 2 == 0:
                buf.append("%s WARNING [dataloader] Error fetching batch %d from shard-%d.tar: ConnectionError: "
                           "HTTPSConnectionPool(host='store.internal', port=443): Read timed out. (read timeout=%d)"
                           % (stamp, i // 2, rng.randrange(10 ** rng.randrange(1, 7)), rng.choice((5, 30, 120))))
            else:
                pid = rng.randrange(10 ** rng.randrange(3, 8))
                buf.append("node-001:%d:%d [%d] NCCL WARN NET/Socket : Call to connect returned Connection refused,"
                           " retrying" % (pid, pid + rng.randrange(1, 300), rng.randrange(8)))
            if len(buf) >= 20000:
                fh.write("\n".join(buf) + "\n")
                buf = []
        if buf:
            fh.write("\n".join(buf) + "\n")
    done.write_text(version, encoding="utf-8")
    return out


def fmt_rows(tools: list[Tool], nbytes: int, ref: Tool | None, floor: Tool | None) -> list[str]:
    rows = ["  %-9s %9s %8s %9s %9s %7s" % ("tool", "median s", "MB/s", "RSS MB", "x grep-14", "x cat")]
    for t in tools:
        m = t.median
        rows.append("  %-9s %9.3f %8.0f %9.1f %9s %7s" % (
            t.name, m, nbytes / 1e6 / m if m else 0, t.rss_mb,
            "%.2f" % (m / ref.median) if ref else "-", "%.1f" % (m / floor.median) if floor else "-"))
    return rows


def blocked_target(what: str, ff: list[Tool]) -> list[tuple[str, str, bool]]:
    """The blocked run's ratio to the fast one with the same -j (its first tool), as a target row (none without
    --blocked)."""
    blocked = [t for t in ff if t.name == "ff blocked"]
    if not blocked:
        return []
    r = blocked[0].median / ff[0].median
    print("  %s: ff blocked / %s = %.2fx (%.3f s / %.3f s)" % (what, ff[0].name, r, blocked[0].median, ff[0].median))
    return [("%s: blocked (%s) <= %.0fx %s" % (what, blocked[0].env["FIRSTFAULT_MATCHER"], TARGET_BLOCKED,
                                               ff[0].name), "%.2fx" % r, r <= TARGET_BLOCKED)]


def check_verdicts(tools: list[Tool], expected: Path | None) -> tuple[bool, list[str]]:
    ok = True
    notes: list[str] = []
    bodies: dict[str, str] = {}
    for t in tools:
        if t.out is None:
            continue
        if set(t.rcs) != {0}:
            ok = False
            notes.append("%s exited %s" % (t.name, sorted(set(t.rcs))))
            continue
        try:
            body, doc = verdict_body(t.out)
        except ValueError as exc:
            ok = False
            notes.append("%s: not JSON (%s)" % (t.name, exc))
            continue
        bodies[t.name] = body
        rc = doc.get("root_cause") or {}
        line = "%s: %s / %s %s" % (t.name, doc.get("attributed_domain"),
                                    rc.get("category") if isinstance(rc, dict) else None, doc.get("affected_nodes"))
        if expected is not None and expected.exists():
            exp = json.loads(expected.read_text(encoding="utf-8"))
            match = (doc.get("attributed_domain") == exp["attributed_domain"] and isinstance(rc, dict)
                     and str(rc.get("category", "")).startswith(exp["root_cause.category"]))
            line += "  expected %s" % ("MATCH" if match else "MISMATCH")
        notes.append(line)
    mine = {k: v for k, v in bodies.items() if k.startswith("ff ")}
    if len(mine) > 1:
        same = len(set(mine.values())) == 1
        notes.append("verdict bytes for %s: %s" % (", ".join(sorted(mine)), "IDENTICAL" if same else "DIFFERENT"))
        ok &= same
    return ok, notes


def print_instructions(workdir: Path, lines: int, base_src: Path | None, bundle: Path | None = None,
                       workers: int = 1) -> None:
    """Instructions per noisy line (a LINES-line log less a 10-line one), for the showcase and, with
    `bundle`, for that bundle (the whole process), all -j 1; with `workers` > 1, also the bundle's
    -j WORKERS run, process by process."""
    from startup import instructions, instructions_by_process  # sibling script

    small, big = write_noisy(workdir / "noisy-10", 10), write_noisy(workdir / ("noisy-%d" % lines), lines)
    rows = [("ff", FF_SRC)] + ([("base", base_src)] if base_src is not None else [])
    print("\n== instructions (valgrind --tool=callgrind), -j 1")
    print("  %-6s %16s %16s %16s" % ("tree", "noisy, per line", "showcase", bundle.name if bundle else ""))
    for name, src in rows:
        runs = [small, big, SHOWCASE] + ([bundle] if bundle is not None else [])
        got = [instructions([sys.executable, "-m", "firstfault", "analyze", str(b), "--format", "json", "-j", "1"],
                            _env(src)) for b in runs]
        if any(g is None for g in got):
            print("  %-6s %16s %16s" % (name, "no valgrind", "-"))
            continue
        n10, nbig, show, *whole = (int(g or 0) for g in got)
        print("  %-6s %14.0f k %14.0f M %16s" % (name, (nbig - n10) / (lines - 10) / 1e3, show / 1e6,
                                                  "%.0f M" % (whole[0] / 1e6) if whole else ""))
    if bundle is None or workers < 2:
        return
    print("\n== instructions, %s -j %d, by process (a worker's count starts from the parent's at the fork)"
          % (bundle.name, workers))
    for name, src in rows:
        per = instructions_by_process([sys.executable, "-m", "firstfault", "analyze", str(bundle), "--format",
                                       "json", "-j", str(workers)], _env(src))
        print("  %-6s %s" % (name, "no valgrind" if per is None else "parent %.0f M, workers %s" % (
            per[0] / 1e6, ", ".join("%.0f M" % (n / 1e6) for n in per[1:]))))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1,4", help="bundle sizes in GB (comma list; 0 for none)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", default="1,2", help="analyze -j values to time (comma list)")
    ap.add_argument("--base-src", type=Path, default=None, help="a src/ of another checkout to time alongside")
    ap.add_argument("--src", type=Path, default=SRC, help="the src/ timed as 'ff' (default: this checkout's)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/ff-headline"))
    ap.add_argument("--noisy-lines", type=int, default=2_000_000, help="0 skips the noisy-log case")
    ap.add_argument("--no-small", action="store_true", help="skip the showcase case")
    ap.add_argument("--no-grep-catalog", action="store_true", help="skip the (slow) catalog-words grep")
    ap.add_argument("--enforce", action="store_true", help="exit 3 when a target is missed")
    ap.add_argument("--blocked", choices=("aho-corasick", "re"), default=None,
                    help="also time ff (first -j) with FIRSTFAULT_MATCHER=this (aho-corasick: Hyperscan blocked) on "
                         "every size and the noisy log, and print its ratio to ff")
    ap.add_argument("--instructions", type=int, default=0, metavar="LINES",
                    help="also count instructions under valgrind (callgrind; the load does not change them): "
                         "per line on a noisy log of LINES lines (less one of 10), and the showcase's")
    ap.add_argument("--instructions-bundle", action="store_true",
                    help="with --instructions, also count the first --sizes bundle's whole -j 1 run and, by "
                         "process, its run with the largest --workers (minutes)")
    a = ap.parse_args(argv)
    global FF_SRC
    FF_SRC = a.src.resolve()
    workers = [int(w) for w in a.workers.split(",") if w.strip()]
    sizes = [float(s) for s in a.sizes.split(",") if s.strip() and float(s) > 0]
    a.workdir.mkdir(parents=True, exist_ok=True)
    cat_pat = None if a.no_grep_catalog else catalog_words(a.workdir)
    for src in [FF_SRC] + ([a.base_src] if a.base_src else []):  # write the bytecode once, untimed
        subprocess.run([sys.executable, "-m", "firstfault", "analyze", str(SHOWCASE), "--format", "json"],
                       env=_env(src), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    print("headline  sizes %s GB, repeat %d (median), -j %s, base %s, %d CPUs, load %.2f" % (
        sizes, a.repeat, workers, a.base_src or "-", os.cpu_count() or 0, os.getloadavg()[0]))
    status, targets = 0, []
    rss_by_size: dict[float, float] = {}
    for gb in sizes:
        bdir = a.workdir / ("bundle-%gg" % gb)
        if not (bdir / "workload.yaml").exists():
            s = gen_bundle.generate(str(bdir), 128, 8, gb, 1, quiet=True)
            print("generated %s: %d files in %.1f s" % (bdir, s["files"], s["seconds"]))
        files = bundle_files(bdir)
        nbytes = sum((bdir / f).stat().st_size for f in files)
        env = _env(SRC)
        work = a.workdir / ("work-%gg" % gb)
        work.mkdir(exist_ok=True)
        timed(["cat", *files], bdir)  # warm the page cache
        floor = Tool("cat", ["cat", *files], env)
        ref = Tool("grep-14", ["grep", "-c", "-E", GREP_14, *files], env, work / "grep14.out")
        tools = [floor, ref]
        if cat_pat is not None:
            tools.append(Tool("grep-cat", ["grep", "-c", "-E", "-f", str(cat_pat), *files], env, work / "grepcat.out"))
        ff = analyze_tools(bdir, workers, a.base_src, work, a.blocked)
        run_all(tools + ff, bdir, a.repeat)
        print("\n== %g GB bundle: %d files, %.3f GB, 128 nodes x 8 ranks" % (gb, len(files), nbytes / 1e9))
        print("\n".join(fmt_rows(tools + ff, nbytes, ref, floor)))
        ok, notes = check_verdicts(ff, bdir / EXPECTED_FILE)
        for n in notes:
            print("  " + n)
        if not ok:
            status = 1
        best = min((t for t in ff if t.name.startswith("ff -j")), key=lambda t: t.median)
        ratio = best.median / ref.median
        rss_by_size[gb] = max(t.rss_mb for t in ff if t.name.startswith("ff -j"))
        targets.append(("%g GB: analyze (%s) <= %.1fx grep-14" % (gb, best.name, TARGET_RATIO), "%.2fx" % ratio,
                        ratio <= TARGET_RATIO))
        targets.extend(blocked_target("%g GB" % gb, ff))
    if rss_by_size:
        lo, hi = min(rss_by_size.values()), max(rss_by_size.values())
        targets.append(("peak RSS < %.0f MB, flat (<= %.2fx) over %s GB" % (TARGET_RSS_MB, FLAT, sizes),
                        "%.0f-%.0f MB (%.2fx)" % (lo, hi, hi / lo), hi < TARGET_RSS_MB and hi / lo <= FLAT))
    if a.noisy_lines:
        ndir = write_noisy(a.workdir / "noisy", a.noisy_lines)
        work = a.workdir / "work-noisy"
        work.mkdir(exist_ok=True)
        files = bundle_files(ndir)
        nbytes = sum((ndir / f).stat().st_size for f in files)
        timed(["cat", *files], ndir)
        ref = Tool("grep-14", ["grep", "-c", "-E", GREP_14, *files], _env(SRC), work / "grep14.out")
        ff = analyze_tools(ndir, workers[:1], a.base_src, work, a.blocked)
        run_all([ref, *ff], ndir, a.repeat)
        print("\n== noisy log: %d lines, %.0f MB, every line a candidate" % (a.noisy_lines, nbytes / 1e6))
        print("\n".join(fmt_rows([ref, *ff], nbytes, ref, None)))
        ok, notes = check_verdicts(ff, None)
        for n in notes:
            print("  " + n)
        if not ok:
            status = 1
        m = ff[0].median
        print("  %s: %.0f lines/s, %.2f us a line" % (ff[0].name, a.noisy_lines / m, m / a.noisy_lines * 1e6))
        targets.append(("noisy log (%d lines) <= %.0f s" % (a.noisy_lines, TARGET_NOISY_S), "%.2f s" % m,
                        m <= TARGET_NOISY_S))
        targets.extend(blocked_target("noisy log", ff))
    if not a.no_small:
        work = a.workdir / "work-small"
        work.mkdir(exist_ok=True)
        ff = analyze_tools(SHOWCASE, workers[:1], a.base_src, work)
        run_all(ff, SHOWCASE, max(a.repeat, 5))
        print("\n== showcase %s, end to end (interpreter start included)" % SHOWCASE.name)
        print("\n".join(fmt_rows(ff, sum((SHOWCASE / f).stat().st_size for f in bundle_files(SHOWCASE)), None, None)))
        ok, notes = check_verdicts(ff, None)
        for n in notes:
            print("  " + n)
        if not ok:
            status = 1
        m = ff[0].median
        targets.append(("showcase end to end < %.1f s" % TARGET_SMALL_S, "%.3f s" % m, m < TARGET_SMALL_S))
    if a.instructions:
        first = a.workdir / ("bundle-%gg" % sizes[0]) if sizes and a.instructions_bundle else None
        print_instructions(a.workdir, a.instructions, a.base_src, first, max(workers))
    print("\n== targets (issue 11; --blocked: issue 27)")
    for what, got, ok in targets:
        print("  %-58s %-22s %s" % (what, got, "MET" if ok else "NOT MET"))
    if status == 0 and a.enforce and not all(ok for _, _, ok in targets):
        status = 3
    return status


if __name__ == "__main__":
    sys.exit(main())
