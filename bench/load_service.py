"""Load test of the Service: N concurrent clients posting scenario bundles for a fixed time.

    .venv/bin/python bench/load_service.py --duration 10 --levels 1,4,16 [--form json|ndjson|tar] [--url URL]

Without --url it starts the real Service (uvicorn, 127.0.0.1, a free port) and stops it at the end.
For each concurrency level it prints throughput, p50/p99 latency and the error count (any answer but
200, or a connection error; 503s are counted apart), then the HTTP overhead: the mean latency at one
client minus the embedded engine's mean time on the very same inputs (same request form, in-process).
Client and server share the machine's cores, so on a small machine the figures are a lower bound.
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
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from firstfault.bundle import load_bundle
from firstfault.collect.wire import AnalyzeRequest, request_from_bundle
from firstfault.engine.analyze import Analyzer, analyze_request
from firstfault.service.ndjson import request_records

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Payload:
    name: str
    body: bytes
    headers: dict[str, str]
    embedded_s: float = 0.0


@dataclass
class Level:
    clients: int
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    overloaded: int = 0
    elapsed: float = 0.0


def bundles() -> list[Path]:
    return sorted({p.parent for p in (ROOT / "tests" / "scenarios").glob("*/workload.yaml")}
                  | {p.parent for p in (ROOT / "examples").glob("*/workload.yaml")})


def build_payloads(form: str, analyzer: Analyzer, repeat: int) -> list[Payload]:
    out = []
    for root in bundles():
        b = load_bundle(root)
        req = request_from_bundle(analyzer, b)
        if form == "json":
            p = Payload(root.name, req.model_dump_json().encode(), {"Content-Type": "application/json"})
        elif form == "ndjson":
            raw = b"".join(json.dumps(r).encode() + b"\n" for r in request_records(req))
            p = Payload(root.name, gzip.compress(raw, 5),
                        {"Content-Type": "application/x-ndjson", "Content-Encoding": "gzip"})
        else:
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w:gz") as tar:
                tar.add(str(root), arcname=root.name)
            p = Payload(root.name, buf.getvalue(), {"Content-Type": "application/gzip"})
        # The embedded engine on the same input: the request (JSON/NDJSON forms) or the bundle (tar form).
        t0 = time.perf_counter()
        for _ in range(repeat):
            if form == "tar":
                analyzer.analyze_bundle(load_bundle(root))
            else:
                analyze_request(analyzer, AnalyzeRequest.model_validate_json(p.body if form == "json"
                                                                              else req.model_dump_json()))
        p.embedded_s = (time.perf_counter() - t0) / repeat
        out.append(p)
    return out


def start_service(env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTFAULT_")} | env
    fh = log.open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory",
                             "firstfault.service.app:create_app_from_env", "--host", "127.0.0.1", "--port", "0",
                             "--no-access-log", "--log-level", "info"], env=full, stdout=fh, stderr=fh)
    end = time.monotonic() + 30
    while time.monotonic() < end:
        m = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", log.read_text(errors="replace"))
        if m:
            return proc, m.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"the Service did not start:\n{log.read_text()}")


def run_level(url: str, payloads: list[Payload], clients: int, duration: float) -> Level:
    level = Level(clients)
    lock = threading.Lock()
    stop_at = time.perf_counter() + duration

    def client(idx: int) -> None:
        lat: list[float] = []
        errors = overloaded = 0
        i = idx * 7
        with httpx.Client(base_url=url, timeout=120) as http:
            while time.perf_counter() < stop_at:
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
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    level.elapsed = time.perf_counter() - t0
    return level


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="an already running Service (default: start one)")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds per concurrency level")
    ap.add_argument("--levels", default="1,4,16")
    ap.add_argument("--form", choices=("json", "ndjson", "tar"), default="json")
    ap.add_argument("--max-concurrent", type=int, default=2, help="the started Service's analysis threads")
    ap.add_argument("--max-queue", type=int, default=64, help="the started Service's wait list")
    ap.add_argument("--workers", type=int, default=1, help="the started Service's uvicorn workers")
    args = ap.parse_args()

    analyzer = Analyzer()
    payloads = build_payloads(args.form, analyzer, repeat=3)
    embedded_mean = statistics.fmean(p.embedded_s for p in payloads)
    size = statistics.fmean(len(p.body) for p in payloads)
    print(f"{len(payloads)} bundles, form {args.form}, mean body {size / 1024:.1f} KiB, "
          f"embedded engine mean {embedded_mean * 1000:.1f} ms per analysis")

    proc = None
    with tempfile.TemporaryDirectory(prefix="ff-load-") as tmp:
        url = args.url
        if url is None:
            env = {"FIRSTFAULT_MAX_CONCURRENT": str(args.max_concurrent), "FIRSTFAULT_MAX_QUEUE": str(args.max_queue),
                   "FIRSTFAULT_LOG_LEVEL": "warning"}
            if args.workers > 1:
                raise SystemExit("--workers > 1: start `firstfault serve --workers N` yourself and pass --url")
            proc, url = start_service(env, Path(tmp) / "service.log")
        try:
            run_level(url, payloads, 1, min(2.0, args.duration))  # warm-up (threads, caches)
            print(f"\n{'clients':>7} {'requests':>9} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} {'503':>6}")
            results = []
            for n in (int(x) for x in args.levels.split(",")):
                lv = run_level(url, payloads, n, args.duration)
                results.append(lv)
                print(f"{n:>7} {len(lv.latencies):>9} {len(lv.latencies) / lv.elapsed:>8.1f} "
                      f"{pct(lv.latencies, 0.5) * 1000:>8.1f} {pct(lv.latencies, 0.99) * 1000:>8.1f} "
                      f"{lv.errors:>7} {lv.overloaded:>6}")
            one = next((lv for lv in results if lv.clients == 1), None)
            if one and one.latencies:
                mean = statistics.fmean(one.latencies)
                print(f"\nHTTP overhead at 1 client: mean latency {mean * 1000:.1f} ms - embedded "
                      f"{embedded_mean * 1000:.1f} ms = {(mean - embedded_mean) * 1000:.1f} ms per request "
                      f"({(mean / embedded_mean - 1) * 100:.0f} %)")
        finally:
            if proc is not None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()


if __name__ == "__main__":
    main()
