"""Load test of the Service: N concurrent clients posting scenario bundles for a fixed time.

    .venv/bin/python bench/load_service.py --duration 10 --levels 1,4,16 [--form json|ndjson|tar] [--url URL]
    .venv/bin/python bench/load_service.py --bundle examples/nvlink-xid149 --bundle /tmp/medium \
        --workers 1,2 --levels 1,4,16 --runs 3 --duration 8

Without --url it starts the real Service (`firstfault serve --workers N`, 127.0.0.1, a free port,
the default log level) for each N of --workers, all at once, waits until /metrics counts N workers,
and stops them by PID at the end; the runs go round the Services in turn. --bundle (repeatable)
posts only those bundles, each measured on its own; by default every scenario and example bundle
is posted in turn, as one mix.
For each concurrency level it prints throughput, p50/p99 latency and the error count (any answer but
200, or a connection error; 503s are counted apart), then the HTTP overhead: the mean latency at one
client minus the embedded engine's mean time on the very same inputs (same request form, in-process,
run for as long as a level right after each run's levels, so both are measured under the same load).
With --runs R each cell is measured R times and the table shows the median of each figure (errors:
the sum). Client and server share the machine's cores, so on a small machine the figures are a lower
bound.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from firstfault import records
from firstfault.analysis.analyze import Analyzer, analyze_request
from firstfault.bundle import load_bundle
from firstfault.collect.wire import AnalyzeRequest, request_from_bundle
from firstfault.service.ndjson import request_records

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Payload:
    name: str
    body: bytes
    headers: dict[str, str]
    embedded_s: float = 0.0
    embedded: Callable[[], object] | None = None  # the embedded engine on this very input


@dataclass
class Level:
    clients: int
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    overloaded: int = 0
    elapsed: float = 0.0


def all_bundles() -> list[Path]:
    return sorted({p.parent for p in (ROOT / "tests" / "scenarios").glob("*/workload.yaml")}
                  | {p.parent for p in (ROOT / "examples").glob("*/workload.yaml")})


def build_payloads(form: str, analyzer: Analyzer, repeat: int, roots: list[Path]) -> list[Payload]:
    out = []
    for root in roots:
        b = load_bundle(root)
        req = request_from_bundle(analyzer, b)
        if form == "json":
            p = Payload(root.name, records.dumps(req).encode(), {"Content-Type": "application/json"})
        elif form == "ndjson":
            raw = b"".join(json.dumps(r).encode() + b"\n" for r in request_records(req))
            p = Payload(root.name, gzip.compress(raw, 5),
                        {"Content-Type": "application/x-ndjson", "Content-Encoding": "gzip"})
        else:
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w:gz") as tar:
                tar.add(str(root), arcname=root.name)
            p = Payload(root.name, buf.getvalue(), {"Content-Type": "application/gzip"})
        # The embedded engine on the same input: the request (JSON/NDJSON forms) or the bundle (tar form),
        # warm (one untimed run first, as the Service's own warm-up request gets).
        def embedded(root: Path = root, p: Payload = p, req: AnalyzeRequest = req) -> None:
            if form == "tar":
                analyzer.analyze_bundle(load_bundle(root))
            else:
                analyze_request(analyzer, records.decode(p.body if form == "json"
                                                                              else records.dumps(req), AnalyzeRequest))

        embedded()
        t0 = time.perf_counter()
        for _ in range(repeat):
            embedded()
        p.embedded_s = (time.perf_counter() - t0) / repeat
        p.embedded = embedded
        out.append(p)
    return out


def run_level(url: str, payloads: list[Payload], clients: int, duration: float) -> Level:
    level = Level(clients)
    lock = threading.Lock()
    window: list[float] = []  # [start, stop]: set once every client has its connection pool ready

    def begin() -> None:
        now = time.perf_counter()
        window[:] = [now, now + duration]

    ready = threading.Barrier(clients, action=begin)

    def client(idx: int) -> None:
        lat: list[float] = []
        errors = overloaded = 0
        i = idx * 7
        with httpx.Client(base_url=url, timeout=120) as http:  # keep-alive, as the Python client does
            ready.wait()
            while time.perf_counter() < window[1]:
                p = payloads[i % len(payloads)]
                i += 1
                t0 = time.perf_counter()
                try:
                    r = http.post("/v1/analyze", content=p.body, headers=p.headers)
                    status = r.status_code
                except httpx.HTTPError:
                    status = -1
                dt = time.perf_counter() - t0
                if status == 200:
                    lat.append(dt)
                elif status == 503:
                    overloaded += 1
                else:
                    errors += 1
        with lock:
            level.latencies.extend(lat)
            level.errors += errors
            level.overloaded += overloaded

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    level.elapsed = time.perf_counter() - window[0]
    return level


def run_embedded(payloads: list[Payload], duration: float) -> Level:
    """One in-process 'client' calling the embedded engine for `duration` s, in the same order as run_level."""
    level = Level(1)
    stop_at = time.perf_counter() + duration
    i = 0
    t_start = time.perf_counter()
    while time.perf_counter() < stop_at:
        p = payloads[i % len(payloads)]
        i += 1
        t0 = time.perf_counter()
        assert p.embedded is not None
        p.embedded()
        level.latencies.append(time.perf_counter() - t0)
    level.elapsed = time.perf_counter() - t_start
    return level


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def start_serve(workers: int, env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`firstfault serve --workers N` on a free port; returns once /metrics counts N workers."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTFAULT_")} | env
    fh = log.open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "firstfault", "serve", "--workers", str(workers),
                             "--port", "0"], env=full, stdout=fh, stderr=fh)
    end = time.monotonic() + 120
    url = None
    while time.monotonic() < end and proc.poll() is None:
        if url is None:
            m = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", log.read_text(errors="replace"))
            url = m.group(1) if m else None
        else:
            try:
                text = httpx.get(url + "/metrics", timeout=5).text
                m = re.search(r"^firstfault_service_workers (\S+)$", text, re.M)
                if m and float(m.group(1)) >= workers:
                    return proc, url
            except httpx.HTTPError:
                pass
        time.sleep(0.1)
    stop(proc)
    raise SystemExit(f"the Service did not start {workers} workers:\n{log.read_text()}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@dataclass
class Cell:
    bundle: str
    workers: int | str
    clients: int
    runs: list[Level] = field(default_factory=list)

    def med(self, fn: Callable[[Level], float]) -> float:
        vals = [fn(lv) for lv in self.runs if lv.latencies]
        return statistics.median(vals) if vals else float("nan")


HEADER = (f"{'bundle':<18} {'workers':>7} {'clients':>7} {'requests':>9} {'req/s':>8} {'p50 ms':>8} "
          f"{'p99 ms':>8} {'errors':>7} {'503':>6}")


def row(c: Cell) -> str:
    n = c.med(lambda lv: len(lv.latencies))
    rate = c.med(lambda lv: len(lv.latencies) / lv.elapsed)
    p50 = c.med(lambda lv: pct(lv.latencies, 0.5)) * 1000
    p99 = c.med(lambda lv: pct(lv.latencies, 0.99)) * 1000
    return (f"{c.bundle:<18} {c.workers!s:>7} {c.clients:>7} {n:>9.0f} {rate:>8.1f} {p50:>8.1f} {p99:>8.1f} "
            f"{sum(lv.errors for lv in c.runs):>7} {sum(lv.overloaded for lv in c.runs):>6}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="an already running Service (default: start one)")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds per concurrency level")
    ap.add_argument("--levels", default="1,4,16")
    ap.add_argument("--form", choices=("json", "ndjson", "tar"), default="json")
    ap.add_argument("--bundle", action="append", type=Path, default=[],
                    help="a bundle directory, measured on its own (repeatable; default: all, as one mix)")
    ap.add_argument("--runs", type=int, default=1, help="measure each cell this often; the table shows medians")
    ap.add_argument("--max-concurrent", type=int, default=2, help="the started Service's analysis threads per worker")
    ap.add_argument("--max-queue", type=int, default=64, help="the started Service's wait list per worker")
    ap.add_argument("--workers", default="1",
                    help="worker counts to start in turn (firstfault serve --workers N), e.g. 1,2")
    args = ap.parse_args()

    analyzer = Analyzer()
    groups: list[tuple[str, list[Payload]]] = []
    for root in args.bundle or [None]:
        roots = [root] if root is not None else all_bundles()
        payloads = build_payloads(args.form, analyzer, repeat=3, roots=roots)
        name = root.name if root is not None else "all (mix)"
        groups.append((name, payloads))
        print(f"{name}: {len(payloads)} bundle(s), form {args.form}, mean body "
              f"{statistics.fmean(len(p.body) for p in payloads) / 1024:.1f} KiB, embedded engine "
              f"{statistics.fmean(p.embedded_s for p in payloads) * 1000:.1f} ms per analysis")
    levels = [int(x) for x in args.levels.split(",")]
    worker_counts: list[int | str] = ["(url)"] if args.url else [int(x) for x in args.workers.split(",")]
    print(f"{os.cpu_count()} CPUs (shared with the clients and anything else running); "
          f"{args.runs} run(s) of {args.duration:g} s per cell")

    # Every Service is started first and the runs go round all of them in turn (run 1 of each worker
    # count, then run 2 of each, ...), so a change in the shared machine's load falls on all of them alike.
    cells: dict[tuple[str, int | str, int], Cell] = {}
    embedded_cells: dict[tuple[str, int | str], Cell] = {}
    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory(prefix="ff-load-") as tmp:
        try:
            urls: dict[int | str, str] = {}
            for nw in worker_counts:
                if args.url:
                    urls[nw] = args.url
                    continue
                # The default log level (info): one JSON line per request, as in production, is measured.
                env = {"FIRSTFAULT_MAX_CONCURRENT": str(args.max_concurrent),
                       "FIRSTFAULT_MAX_QUEUE": str(args.max_queue)}
                proc, urls[nw] = start_serve(int(nw), env, Path(tmp) / f"serve-{nw}.log")
                procs.append(proc)
            for url in urls.values():
                for _, payloads in groups:
                    run_level(url, payloads, 1, min(2.0, args.duration))  # warm-up (threads, caches)
            for _ in range(args.runs):
                for name, payloads in groups:
                    for nw, url in urls.items():
                        for n in levels:
                            cell = cells.setdefault((name, nw, n), Cell(name, nw, n))
                            cell.runs.append(run_level(url, payloads, n, args.duration))
                        # The embedded engine for as long as one level, right after: the overhead compares
                        # two measurements made under the same load.
                        emb = embedded_cells.setdefault((name, nw), Cell(name, nw, 0))
                        emb.runs.append(run_embedded(payloads, args.duration))
        finally:
            for proc in procs:
                stop(proc)

    print("\n" + HEADER)
    order = {name: k for k, (name, _) in enumerate(groups)}
    for c in sorted(cells.values(), key=lambda c: (order[c.bundle], str(c.workers), c.clients)):
        print(row(c))
    print()
    for emb in embedded_cells.values():
        one = cells.get((emb.bundle, emb.workers, 1))
        if one is None or not one.runs:
            continue
        mean = one.med(lambda lv: statistics.fmean(lv.latencies))
        embedded = emb.med(lambda lv: statistics.fmean(lv.latencies))
        print(f"HTTP overhead, {emb.bundle}, {emb.workers} worker(s), 1 client: mean latency {mean * 1000:.1f} ms "
              f"- embedded {embedded * 1000:.1f} ms = {(mean - embedded) * 1000:.1f} ms per request "
              f"({(mean / embedded - 1) * 100:.0f} %)  [medians of {len(emb.runs)} runs]")


if __name__ == "__main__":
    main()
