#!/usr/bin/env python3
"""Interleaved wall and CPU medians of whole commands (a run's fixed start-up cost, issue 27).

    .venv/bin/python bench/startup_time.py 21 base 'env PYTHONPATH=BASE/src .venv/bin/python -m firstfault analyze
        examples/nvlink-xid149 --format json' branch 'env PYTHONPATH=src .venv/bin/python -m firstfault analyze ...'

Each round runs every command once (the order reversed every other round); CPU is user + sys of the command and
the processes it waited for (wait4), which holds better than wall time on a shared machine. Run it with bytecode
cached (no PYTHONDONTWRITEBYTECODE, or a PYTHONPYCACHEPREFIX), as an installed package has it.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time


def main(argv: list[str]) -> None:
    if not argv or not argv[0].isdigit() or len(argv) % 2 == 0:
        sys.exit(__doc__)
    n = int(argv[0])
    pairs = list(zip(argv[1::2], argv[2::2], strict=True))
    wall: dict[str, list[float]] = {label: [] for label, _ in pairs}
    cpu: dict[str, list[float]] = {label: [] for label, _ in pairs}
    load = os.getloadavg()[0]
    for i in range(n):
        for label, cmd in pairs if i % 2 == 0 else pairs[::-1]:
            t = time.perf_counter()
            p = subprocess.Popen(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, _, ru = os.wait4(p.pid, 0)
            wall[label].append(time.perf_counter() - t)
            cpu[label].append(ru.ru_utime + ru.ru_stime)
    for label in wall:
        print(f"{label:12s} wall median {statistics.median(wall[label]) * 1e3:7.1f} ms (min "
              f"{min(wall[label]) * 1e3:6.1f})  cpu median {statistics.median(cpu[label]) * 1e3:7.1f} ms  n={n}")
    print(f"load {load:.2f} -> {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
