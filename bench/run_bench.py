#!/usr/bin/env python3
# Report lines are %-formatted tables; one style throughout.
# ruff: noqa: UP031
"""Time `firstfault analyze` against cat and grep over the same bundle files.

    python bench/run_bench.py BUNDLE [--repeat 3]
    python bench/run_bench.py --scale [--scale-sizes 0.25,0.5,1.0] [--nodes 64]

For one bundle it times, with the page cache warm and each tool run --repeat
times (median wall time, highest peak RSS):

  cat      cat FILES > /dev/null                      the I/O floor
  grep -F  grep -c -F -f WORDS FILES                  literal multi-word search
  grep -E  grep -c -E -f PATTERNS FILES               the same words, regex-escaped
  analyze  firstfault analyze BUNDLE --format json    the real thing

WORDS is the catalog's own prefilter (`firstfault rules prefilter`, else
`firstfault.collect.scan.prefilter_words()`, else a small stand-in list with a
WARNING). Peak RSS is each child's own high-water mark, measured by GNU
time (/usr/bin/time) when present, else by os.wait4. The targets: analyze within 2x of
grep -E, and peak RSS under 300 MB. --scale generates bundles of growing
size (same node and rank count, so per-file size grows) and shows that
analyze's peak RSS stays flat.

Exit status: 0 when analyze produced a valid JSON verdict (and, with
--enforce, met the targets); 1 when analyze is missing or failed; 2 on a
usage error; 3 when --enforce is given and a target or the expected verdict
was missed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
EXPECTED_FILE = "bench-expected.json"  # written by gen_bundle.py; never part of the measured files
TIME_RATIO_TARGET = 2.0  # analyze wall time / grep -E wall time
RSS_TARGET_MB = 300.0
FLAT_RATIO = 1.25  # largest/smallest peak RSS across --scale sizes that still counts as flat
# Only if the project gives us nothing: a few words the catalog is bound to hold.
FALLBACK_WORDS = (
    "NVRM",
    "Xid",
    "SXid",
    "NCCL WARN",
    "Watchdog caught",
    "ncclRemoteError",
    "CUDA error",
    "Traceback",
    "Out of memory",
    "mlx5_core",
    "LustreError",
    "CANCELLED",
)
ERE_SPECIAL = set("\\.[]()*+?{}|^$")


@dataclass
class Run:
    seconds: float
    rss_kb: int
    rc: int


@dataclass
class Result:
    tool: str
    cmd: list[str]
    runs: list[Run] = field(default_factory=list)
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(r.seconds for r in self.runs)

    @property
    def rss_mb(self) -> float:
        # ru_maxrss is KiB on Linux
        return max(r.rss_kb for r in self.runs) / 1024.0


def _time_tool() -> str | None:
    """GNU time, if it works here: it measures the child from a small process of its own."""
    gt = "/usr/bin/time"
    if not os.access(gt, os.X_OK):
        return None
    try:
        ok = subprocess.run([gt, "-f", "%M", "-o", os.devnull, "true"], capture_output=True).returncode == 0
    except OSError:
        return None
    return gt if ok else None


GNU_TIME = _time_tool()


TIMED_OUT = 124  # Run.rc of a run that `timed` killed at its timeout (what coreutils' timeout exits with)


def timed(
    cmd: list[str],
    cwd: Path,
    stdout: Any = subprocess.DEVNULL,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
) -> Run:
    """Run one child; its wall time and its own peak RSS.

    ru_maxrss of a child includes the memory of whatever process exec'ed it (the kernel keeps the
    pre-exec high-water mark), so a child forked straight from this Python would never read below
    this interpreter's size. GNU time forks from a tiny process; without it, os.wait4 is the
    fallback and small tools show this runner's own RSS as a floor.

    With `timeout` (seconds) the child runs in a session of its own, which is killed whole (GNU time,
    the tool and its workers) when the time is up; the run's rc is then TIMED_OUT.
    """
    with tempfile.TemporaryFile() as errf, tempfile.NamedTemporaryFile("r", suffix=".rss") as rssf:
        full = [GNU_TIME, "-f", "%M", "-o", rssf.name, *cmd] if GNU_TIME else cmd
        t0 = time.perf_counter()
        # stderr to a file, not a pipe: a chatty child must never block on a full pipe
        p = subprocess.Popen(full, cwd=cwd, stdout=stdout, stderr=errf, env=env, start_new_session=timeout is not None)
        killed: list[bool] = []
        timer = None
        if timeout is not None:

            def _kill() -> None:
                killed.append(True)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)

            timer = threading.Timer(timeout, _kill)
            timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
        if timer is not None:
            timer.cancel()
            if not killed:  # the tool's own workers, should any outlive it
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
        p.returncode = TIMED_OUT if killed else os.waitstatus_to_exitcode(status)
        rss_kb = int(ru.ru_maxrss)
        if GNU_TIME:
            # GNU time writes "Command exited with non-zero status N" before the figure.
            lines = [ln for ln in rssf.read().split() if ln.isdigit()]
            if lines:
                rss_kb = int(lines[-1])
        if p.returncode not in (0, 1, TIMED_OUT):
            errf.seek(0)
            err = errf.read().decode(errors="replace").strip()
            if err:
                sys.stderr.write("  [%s exit %d] %s\n" % (Path(cmd[0]).name, p.returncode, err[-2000:]))
    return Run(dt, rss_kb, p.returncode)


def bundle_files(bundle: Path) -> list[str]:
    """Every regular file of the bundle, relative to it, sorted (the measured set)."""
    out = []
    for root, _dirs, files in os.walk(bundle):
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), bundle)
            if rel != EXPECTED_FILE:
                out.append(rel)
    return sorted(out)


def find_firstfault(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    cand = Path(sys.executable).parent / "firstfault"
    if cand.exists():
        return str(cand)
    venv = HERE.parent / ".venv" / "bin" / "firstfault"
    if venv.exists():
        return str(venv)
    return shutil.which("firstfault")


def ff_python(ff: str | None) -> str:
    """The interpreter that has firstfault installed: the one next to the firstfault script."""
    if ff:
        py = Path(ff).parent / "python"
        if py.exists():
            return str(py)
    return sys.executable


def prefilter_words(ff: str | None) -> tuple[list[str], str]:
    """The catalog's prefilter words and where they came from ('cli', 'import' or 'FALLBACK')."""
    if ff:
        try:
            p = subprocess.run([ff, "rules", "prefilter"], capture_output=True, text=True, timeout=120)
            words = [w for w in p.stdout.splitlines() if w.strip()]
            if p.returncode == 0 and words:
                return words, "cli: firstfault rules prefilter"
        except (OSError, subprocess.TimeoutExpired):
            pass
    code = "import firstfault.collect.scan as s\nfor w in s.prefilter_words():\n    print(w)\n"
    try:
        p = subprocess.run([ff_python(ff), "-c", code], capture_output=True, text=True, timeout=120)
        words = [w for w in p.stdout.splitlines() if w.strip()]
        if p.returncode == 0 and words:
            return words, "import: firstfault.collect.scan.prefilter_words()"
    except (OSError, subprocess.TimeoutExpired):
        pass
    return list(FALLBACK_WORDS), "FALLBACK"


def ere_escape(word: str) -> str:
    return "".join("\\" + c if c in ERE_SPECIAL else c for c in word)


def run_tool(
    res: Result, cwd: Path, repeat: int, stdout_path: Path | None = None, env: dict[str, str] | None = None
) -> Result:
    for _ in range(repeat):
        if stdout_path is not None:
            with open(stdout_path, "wb") as out:
                res.runs.append(timed(res.cmd, cwd, out, env))
        else:
            res.runs.append(timed(res.cmd, cwd, subprocess.DEVNULL, env))
    return res


def grep_total(cmd: list[str], cwd: Path, env: dict[str, str]) -> int:
    """Sum of grep -c's per-file counts: a sanity figure (how many lines pass the prefilter)."""
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    total = 0
    for line in p.stdout.splitlines():
        _, _, n = line.rpartition(":")
        if n.isdigit():
            total += int(n)
    return total


def check_verdict(path: Path, bundle: Path) -> tuple[bool, str, bool | None]:
    """(valid, summary line, matches expected or None when no expectation is known)."""
    try:
        v = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        head = path.read_text(encoding="utf-8", errors="replace")[:300] if path.exists() else ""
        return False, "analyze output is not valid JSON (%s): %r" % (e, head), None
    if not isinstance(v, dict) or "attributed_domain" not in v:
        return False, "analyze output has no attributed_domain: %r" % (str(v)[:300],), None
    rc = v.get("root_cause") or {}
    cat = rc.get("category") if isinstance(rc, dict) else None
    dom = v.get("attributed_domain")
    aff = v.get("affected_nodes")
    line = "attributed_domain=%s root_cause.category=%s affected_nodes=%s" % (dom, cat, aff)
    exp_path = bundle / EXPECTED_FILE
    if not exp_path.exists():
        return True, line, None
    exp = json.loads(exp_path.read_text(encoding="utf-8"))
    ok = (
        dom == exp["attributed_domain"]
        and isinstance(cat, str)
        and cat.startswith(exp["root_cause.category"])
        and isinstance(aff, list)
        and set(exp["affected_nodes"]) <= set(aff)
    )
    line += "\n  expected:  attributed_domain=%s root_cause.category=%s* affected_nodes ⊇ %s -> %s" % (
        exp["attributed_domain"],
        exp["root_cause.category"],
        exp["affected_nodes"],
        "MATCH" if ok else "MISMATCH",
    )
    return True, line, ok


def fmt_table(results: list[Result], total_bytes: int) -> str:
    by = {r.tool: r for r in results if r.runs}
    grep_e = by.get("grep -E")
    cat = by.get("cat")
    rows = ["%-9s %10s %9s %12s %10s %8s" % ("tool", "median s", "MB/s", "peak RSS MB", "x grep -E", "x cat")]
    for r in results:
        if not r.runs:
            rows.append("%-9s %10s %9s %12s %10s %8s  %s" % (r.tool, "-", "-", "-", "-", "-", r.note))
            continue
        m = r.median
        rows.append(
            "%-9s %10.3f %9.0f %12.1f %10s %8s%s"
            % (
                r.tool,
                m,
                total_bytes / 1e6 / m if m > 0 else float("inf"),
                r.rss_mb,
                "%.2f" % (m / grep_e.median) if grep_e and grep_e.median > 0 else "-",
                "%.2f" % (m / cat.median) if cat and cat.median > 0 else "-",
                ("  " + r.note) if r.note else "",
            )
        )
    return "\n".join(rows)


@dataclass
class BenchOut:
    results: list[Result]
    total_bytes: int
    analyze_ok: bool
    verdict_match: bool | None
    targets_ok: bool


def bench_bundle(
    bundle: Path,
    repeat: int,
    ff: str | None,
    grep_locale: str,
    workdir: Path,
    tools: tuple[str, ...] = ("cat", "grep -F", "grep -E", "analyze"),
    quiet: bool = False,
    words: tuple[list[str], str] | None = None,
) -> BenchOut:
    say = (lambda *_a, **_k: None) if quiet else print
    files = bundle_files(bundle)
    if not (bundle / "workload.yaml").exists():
        raise SystemExit("error: %s has no workload.yaml; not an evidence bundle" % bundle)
    total = sum((bundle / f).stat().st_size for f in files)
    word_list, origin = words or prefilter_words(ff)
    say("bundle   %s: %d files, %.3f GB" % (bundle, len(files), total / 1e9))
    say("words    %d prefilter words from %s" % (len(word_list), origin))
    if origin == "FALLBACK":
        say(
            "WARNING: neither `firstfault rules prefilter` nor firstfault.collect.scan.prefilter_words() is "
            "available; grep uses a small stand-in word list, so these grep figures are NOT the real ones."
        )
    words_file = workdir / "prefilter.words"
    pat_file = workdir / "prefilter.ere"
    words_file.write_text("".join(w + "\n" for w in word_list), encoding="utf-8")
    pat_file.write_text("".join(ere_escape(w) + "\n" for w in word_list), encoding="utf-8")
    genv = dict(os.environ)
    if grep_locale:
        genv["LC_ALL"] = grep_locale

    # Warm the page cache so every tool reads from memory (what we compare is CPU, not disk).
    timed(["cat", *files], bundle)

    results: list[Result] = []
    if "cat" in tools:
        results.append(run_tool(Result("cat", ["cat", *files]), bundle, repeat))
    gF = ["grep", "-c", "-F", "-f", str(words_file), *files]
    gE = ["grep", "-c", "-E", "-f", str(pat_file), *files]
    if "grep -F" in tools:
        # Output to a real file: GNU grep notices a /dev/null stdout and stops at the first match,
        # which would time a different (much smaller) job.
        results.append(run_tool(Result("grep -F", gF), bundle, repeat, workdir / "grep-F.out", genv))
    if "grep -E" in tools:
        results.append(run_tool(Result("grep -E", gE), bundle, repeat, workdir / "grep-E.out", genv))
    if "grep -F" in tools or "grep -E" in tools:
        say(
            "matches  %d lines contain a prefilter word (grep -F, LC_ALL=%s)"
            % (grep_total(gF, bundle, genv), grep_locale or "<inherited>")
        )

    analyze_ok = False
    match: bool | None = None
    if "analyze" in tools:
        ares = Result("analyze", [ff or "firstfault", "analyze", str(bundle), "--format", "json"])
        if ff is None:
            ares.note = "firstfault not found"
        else:
            probe = subprocess.run([ff, "analyze", "--help"], capture_output=True, text=True)
            if probe.returncode != 0:
                ares.note = "`firstfault analyze` unavailable"
                say("analyze  unavailable: %s" % (probe.stderr.strip().splitlines() or ["?"])[-1])
            else:
                out = workdir / "verdict.json"
                run_tool(ares, bundle, repeat, stdout_path=out)
                valid, line, match = check_verdict(out, bundle)
                rcs = sorted({r.rc for r in ares.runs})
                say("verdict  %s" % line)
                say("         (exit status %s)" % ",".join(map(str, rcs)))
                analyze_ok = valid
                if not valid:
                    ares.note = "FAILED"
        results.append(ares)

    say("")
    say(fmt_table(results, total))
    targets_ok = True
    by = {r.tool: r for r in results if r.runs}
    if analyze_ok and "analyze" in by:
        a = by["analyze"]
        if "grep -E" in by:
            ratio = a.median / by["grep -E"].median
            ok = ratio <= TIME_RATIO_TARGET
            targets_ok &= ok
            say("target   analyze <= %.1fx grep -E: %.2fx  %s" % (TIME_RATIO_TARGET, ratio, "PASS" if ok else "FAIL"))
        ok = a.rss_mb < RSS_TARGET_MB
        targets_ok &= ok
        say("target   analyze peak RSS < %.0f MB: %.1f MB  %s" % (RSS_TARGET_MB, a.rss_mb, "PASS" if ok else "FAIL"))
    return BenchOut(results, total, analyze_ok, match, targets_ok)


def scale_mode(a: argparse.Namespace, ff: str | None) -> int:
    sys.path.insert(0, str(HERE))
    import gen_bundle  # sibling script, not a package

    sizes = [float(s) for s in a.scale_sizes.split(",") if s.strip()]
    base = Path(tempfile.mkdtemp(prefix="ff-scale-", dir=a.workdir))
    words = prefilter_words(ff)
    print("scale    sizes %s GB, %d nodes x %d ranks, temp dir %s" % (sizes, a.nodes, a.ranks_per_node, base))
    rows: list[tuple[float, int, BenchOut]] = []
    status = 0
    try:
        for gb in sizes:
            bdir = base / ("bundle-%gGB" % gb)
            summ = gen_bundle.generate(str(bdir), a.nodes, a.ranks_per_node, gb, a.seed, quiet=True)
            print("\n== %.2f GB (%d files, generated in %.1f s)" % (gb, summ["files"], summ["seconds"]))
            wd = base / ("work-%gGB" % gb)
            wd.mkdir()
            out = bench_bundle(bdir, a.repeat, ff, a.grep_locale, wd, tools=("cat", "grep -E", "analyze"), words=words)
            rows.append((gb, int(summ["bytes"]), out))
            if not out.analyze_ok:
                status = 1
            if not a.keep:
                shutil.rmtree(bdir, ignore_errors=True)
    finally:
        if not a.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(
        "\n%-8s %10s %12s %8s %10s %12s  %s"
        % ("size GB", "bytes", "analyze s", "MB/s", "x grep -E", "peak RSS MB", "verdict")
    )
    rss = []
    for gb, nbytes, out in rows:
        by = {r.tool: r for r in out.results if r.runs}
        an, ge = by.get("analyze"), by.get("grep -E")
        if an is None:
            print("%-8g %10d %12s" % (gb, nbytes, "n/a"))
            continue
        rss.append(an.rss_mb)
        verdict = {True: "MATCH", False: "MISMATCH", None: "-"}[out.verdict_match]
        print(
            "%-8g %10d %12.3f %8.0f %10s %12.1f  %s"
            % (
                gb,
                nbytes,
                an.median,
                nbytes / 1e6 / an.median,
                "%.2f" % (an.median / ge.median) if ge else "-",
                an.rss_mb,
                verdict,
            )
        )
        if a.enforce and out.verdict_match is False and status == 0:
            status = 3
    if len(rss) >= 2:
        ratio = max(rss) / min(rss)
        flat = ratio <= FLAT_RATIO and max(rss) < RSS_TARGET_MB
        print(
            "memory   peak RSS largest/smallest = %.2f (flat means <= %.2f, all under %.0f MB): %s"
            % (ratio, FLAT_RATIO, RSS_TARGET_MB, "FLAT" if flat else "NOT FLAT")
        )
        if a.enforce and not flat and status == 0:
            status = 3
    if status == 1:
        print("ERROR: firstfault analyze failed or is unavailable; see above.")
    return status


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", nargs="?", help="evidence bundle directory (not needed with --scale)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--firstfault", help="path of the firstfault executable (default: next to this python)")
    ap.add_argument("--grep-locale", default="C", help="LC_ALL for grep (default C; '' keeps the environment)")
    ap.add_argument("--workdir", default=None, help="where word files, verdicts and --scale bundles go (/tmp)")
    ap.add_argument("--enforce", action="store_true", help="exit 3 when a target or the expected verdict is missed")
    ap.add_argument("--no-analyze", action="store_true", help="time cat and grep only")
    ap.add_argument("--scale", action="store_true", help="generate growing bundles and show analyze's memory")
    ap.add_argument("--scale-sizes", default="0.25,0.5,1.0", help="GB per --scale bundle (comma list)")
    ap.add_argument("--nodes", type=int, default=64, help="--scale: nodes per bundle (constant across sizes)")
    ap.add_argument("--ranks-per-node", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="--scale: keep the generated bundles")
    a = ap.parse_args(argv)
    if a.repeat < 1:
        ap.error("--repeat must be >= 1")
    ff = find_firstfault(a.firstfault)
    if a.scale:
        return scale_mode(a, ff)
    if not a.bundle:
        ap.error("BUNDLE is required unless --scale is given")
    bundle = Path(a.bundle).resolve()
    if not bundle.is_dir():
        ap.error("%s is not a directory" % bundle)
    tools = ("cat", "grep -F", "grep -E") if a.no_analyze else ("cat", "grep -F", "grep -E", "analyze")
    with tempfile.TemporaryDirectory(prefix="ff-bench-", dir=a.workdir) as td:
        wd = Path(td)
        out = bench_bundle(bundle, a.repeat, ff, a.grep_locale, wd, tools=tools)
        if out.analyze_ok:
            keep = Path(a.workdir or tempfile.gettempdir()) / "ff-bench-verdict.json"
            shutil.copyfile(wd / "verdict.json", keep)
            print("verdict  copied to %s" % keep)
    if a.no_analyze:
        return 0
    if not out.analyze_ok:
        print("ERROR: firstfault analyze failed or is unavailable; no valid verdict was produced.")
        return 1
    if a.enforce and (not out.targets_ok or out.verdict_match is False):
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
