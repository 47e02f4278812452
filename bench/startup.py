#!/usr/bin/env python3
# Report lines are %-formatted tables; one style throughout.
# ruff: noqa: UP031
"""Where the showcase's end-to-end time goes: firstfault analyze against the start-up floors (issue 11).

    python bench/startup.py [--repeat 7] [--base-src DIR] [--instructions]

Times, interleaved (run 1 of every row, then run 2, ...), with the bytecode
written beforehand (as an installed package has it):

  python        python -c pass                                  the interpreter
  click floor   a click group of two commands, one with analyze's kind of options,
                doing nothing (the parser firstfault/cli is built on)
  help          python -m firstfault --help
  ff            python -m firstfault analyze examples/nvlink-xid149 --format json -j 1
  base          the same with PYTHONPATH=--base-src (another checkout's src/, e.g. main's)

and prints the median wall and CPU (user + system) seconds of each. On a
shared machine wall time follows the load; --instructions also counts each
row's instructions once under valgrind (callgrind), which the load does not
change, so two trees compare exactly.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHOWCASE = ROOT / "examples" / "nvlink-xid149"
TARGET_S = 0.2

CLICK_FLOOR = '''
import sys
from pathlib import Path
import click
@click.group()
def app() -> None:
    pass
@app.command()
@click.argument("bundle", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.option("--output", type=click.Path(path_type=Path))
@click.option("-j", "workers", type=click.IntRange(min=0), default=0)
def analyze(bundle: Path, fmt: str, output: Path | None, workers: int) -> None:
    sys.stdout.write("{}\\n")
@app.command()
def other() -> None:
    pass
app()
'''


def _env(src: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(src), LC_ALL="C")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode
    return env


def rows(src: Path, base: Path | None, floor_script: Path) -> list[tuple[str, list[str], dict[str, str]]]:
    py = sys.executable
    analyze = ["-m", "firstfault", "analyze", str(SHOWCASE), "--format", "json", "-j", "1"]
    out = [("python", [py, "-c", "pass"], _env(src)),
           ("click floor", [py, str(floor_script), "analyze", str(SHOWCASE), "--format", "json"], _env(src)),
           ("help", [py, "-m", "firstfault", "--help"], _env(src)),
           ("ff", [py, *analyze], _env(src))]
    if base is not None:
        out.append(("base", [py, *analyze], _env(base)))
    return out


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("failed: %s" % " ".join(cmd))
    return wall, ru.ru_utime + ru.ru_stime


def instructions_by_process(cmd: list[str], env: dict[str, str]) -> list[int] | None:
    """The instructions of each process of `cmd` under callgrind, the first process first, then the
    ones it forked in the order they ended. callgrind follows a fork: a forked process's count starts
    from its parent's count at the fork."""
    if shutil.which("valgrind") is None:
        return None
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "vg.log"
        subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--log-file=%s" % log,
                        *cmd], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        lines = log.read_text().splitlines()
    first = lines[0].split()[0] if lines else ""  # `==PID==` of the process valgrind started
    counts = [(ln.split()[0] != first, int(ln.split()[-1])) for ln in lines if "Collected :" in ln]
    return [n for _, n in sorted(counts, key=lambda c: c[0])] or None  # stable: the forked keep their order


def instructions(cmd: list[str], env: dict[str, str]) -> int | None:
    """The instructions of `cmd`'s own process (not of the ones it forked)."""
    got = instructions_by_process(cmd, env)
    return got[0] if got else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--src", type=Path, default=ROOT / "src", help="the src/ timed as 'ff' (default: this checkout's)")
    ap.add_argument("--base-src", type=Path, default=None, help="a src/ of another checkout to time alongside")
    ap.add_argument("--instructions", action="store_true", help="also count instructions under valgrind")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        floor_script = Path(d) / "click_floor.py"
        floor_script.write_text(CLICK_FLOOR, encoding="utf-8")
        table = rows(a.src, a.base_src, floor_script)
        for _, cmd, env in table:  # bytecode and the on-disk caches, untimed
            timed(cmd, env)
        results: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name, _, _ in table}
        for _ in range(a.repeat):
            for name, cmd, env in table:
                w, c = timed(cmd, env)
                results[name][0].append(w)
                results[name][1].append(c)
        counts = {name: instructions(cmd, env) for name, cmd, env in table} if a.instructions else {}
    print("startup  repeat %d (median), base %s, %d CPUs, load %.2f" % (
        a.repeat, a.base_src or "-", os.cpu_count() or 0, os.getloadavg()[0]))
    print("  %-12s %9s %9s %14s" % ("row", "wall s", "cpu s", "instructions"))
    for name, (walls, cpus) in results.items():
        n = counts.get(name)
        print("  %-12s %9.3f %9.3f %14s" % (name, statistics.median(walls), statistics.median(cpus),
                                           f"{n:,}" if n else "-"))
    ff = statistics.median(results["ff"][0])
    print("  showcase end to end < %.1f s: %.3f s %s" % (TARGET_S, ff, "MET" if ff < TARGET_S else "NOT MET"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
