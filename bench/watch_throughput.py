"""Throughput of the whole path: `firstfault watch` -> the Service -> PostgreSQL, on a stream of finished attempts.

    .venv/bin/python bench/watch_throughput.py                       # 10,000 attempts/h, replayed 10x, 1,000 attempts
    .venv/bin/python bench/watch_throughput.py --speed 1 --attempts 300 --workers 1
    .venv/bin/python bench/watch_throughput.py --speed 1 --attempts 300 --workers 2 --concurrency 1

The stream: tests/harness/sacct_replay.py replays sacct pages recorded from the suite's
real Slurm (tests/fixtures/scheduler/sacct-replay.json) as `--per-hour` finished attempts an
hour (7 in 10 succeed, 2 a CUDA OOM, 1 SIGKILL), `--speed` times faster than real time, on
`--nodes` nodes, each with its recorded job output as its log file. The replayed `sacct` and
`scontrol` are bash scripts over pre-rendered pages (sacct_replay.install_fast), so a call costs
milliseconds, as a real sacct's RPC to slurmdbd does; the figures include that cost
(`replayed_slurm_clients_s_per_attempt`). Real pieces: the venv's
`firstfault watch` (a subprocess, the replayed sacct/scontrol executables on its config), the
real Service (`firstfault serve --workers N`, a subprocess) analysing every attempt, and a
private PostgreSQL (tests/store/pg_harness.py) taking the verdicts and the exactly-once ledger.

Reported: attempts attributed per second (over the run, and the offered rate), lag (commit of
the verdict minus the attempt's end, in real seconds: p50, p95, max), the Service's memory
(resident set of its processes, peak), that every attempt has exactly one verdict and one
ledger mark (none lost, none repeated), and where the daemon's wall time per attempt went (the
`seconds` of its `--json` lines: identify, collect, analyze on the Service, sinks, store write,
actions; with several threads these overlap). `--concurrency N` is the daemon's
`watch.concurrency` (default: its own, 4). Figures go to OUT/results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]
# The subprocesses (the Service, watch) run this tree's code, whatever the venv's install points at.
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)

import httpx  # noqa: E402
import yaml  # noqa: E402
from sqlalchemy import create_engine, text  # noqa: E402
from tests.harness.sacct_replay import Stream, install_fast, write_logs  # noqa: E402
from tests.service.server import ServiceProcess  # noqa: E402
from tests.store.pg_harness import PgServer, find_bindir  # noqa: E402

from firstfault.store import VerdictStore  # noqa: E402

FIRSTFAULT = Path(sys.executable).parent / "firstfault"
TOKEN = "bench-watch-0123456789abcdef"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tree_rss(pid: int) -> int:
    """Resident bytes of `pid` and its descendants (the Service's uvicorn workers)."""
    parents: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parents[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    todo, total = [pid], 0
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
        todo += [c for c, pp in parents.items() if pp == p]
    return total


def tree_cpu(pid: int) -> float:
    """CPU seconds of `pid` and its descendants, the exited ones included (cutime/cstime)."""
    tick = os.sysconf("SC_CLK_TCK")
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                kids.setdefault(int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]), []).append(int(d.name))
            except (OSError, ValueError, IndexError):
                continue
    todo, total = [pid], 0.0
    while todo:
        p = todo.pop()
        try:
            f = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in f[11:15]) / tick  # utime stime cutime cstime
        except (OSError, ValueError, IndexError):
            pass
        todo += kids.get(p, [])
    return total


def run(args: argparse.Namespace, work: Path, db_url: str, pg_pid: int, cluster: str = "bench") -> dict[str, Any]:
    with VerdictStore.open(db_url):
        pass  # migrated before anything writes
    port = _free_port()
    service = ServiceProcess("service", {"FIRSTFAULT_TOKENS": json.dumps([TOKEN])}, work, argv=[
        str(FIRSTFAULT), "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", str(args.workers)])
    watch: subprocess.Popen[bytes] | None = None
    try:
        nodes = [f"gpu{i:05d}" for i in range(args.nodes)]
        stream = Stream.per_hour(args.per_hour, args.speed, args.attempts, 700000, nodes, t0=time.time() + 3)
        write_logs(work / "logs", stream)
        tools = install_fast(work / "bin", stream)  # pre-rendered pages: a client call costs milliseconds
        cfg = work / "cluster.yaml"
        cfg.write_text(yaml.safe_dump({
            "cluster": cluster,
            "scheduler": {"slurm": {**tools, "timezone": "UTC", "timeout": 30}},
            "logs": {"files": {"root": f"{work}/logs/{{job}}", "sources": [{"kind": "application", "path": "*.out"}]}},
            "service": {"url": service.url, "token": {"env": "FF_BENCH_TOKEN"}, "timeout": 120},
            "outputs": {"stdout": None, "database": {"url": db_url}},
            "watch": {"poll_interval": args.poll,
                      **({"concurrency": args.concurrency} if args.concurrency is not None else {})},
        }))
        env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTFAULT_")} | {"FF_BENCH_TOKEN": TOKEN}
        log = (work / "watch.log").open("wb")
        cpu0 = {"service": tree_cpu(service.proc.pid), "postgresql": tree_cpu(pg_pid)}
        watch = subprocess.Popen([str(FIRSTFAULT), "watch", "--config", str(cfg), "--json"], env=env, stdout=log,
                                 stderr=subprocess.STDOUT)
        engine = create_engine(db_url)
        peak_rss = 0
        deadline = time.time() + args.timeout
        done = 0
        last_print = 0.0
        while time.time() < deadline:
            with engine.connect() as conn:
                done = int(conn.execute(text("SELECT count(*) FROM processed")).scalar_one())
            peak_rss = max(peak_rss, tree_rss(service.proc.pid))
            if time.time() - last_print > 10:
                ended = sum(1 for i in range(stream.count) if stream.real_end_of(i) <= time.time())
                print(f"  {time.time() - stream.t0:6.0f} s: {ended:>6} ended, {done:>6} attributed", flush=True)
                last_print = time.time()
            if done >= stream.count or watch.poll() is not None:
                break
            time.sleep(0.5)
        cpu = {"watch": tree_cpu(watch.pid), "service": tree_cpu(service.proc.pid), "postgresql": tree_cpu(pg_pid)}
        if watch.poll() is not None:
            log.flush()
            tail = (work / "watch.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"firstfault watch exited {watch.returncode}:\n{tail}")
        watch.send_signal(signal.SIGTERM)
        watch.wait(60)
        with engine.connect() as conn:
            marks = conn.execute(text("SELECT ref, attempt, verdict_id, done_at FROM processed")).all()
            verdicts = conn.execute(text("SELECT id, workload_id, attempt, cluster FROM verdicts")).all()
            domains = dict(conn.execute(text(
                "SELECT attributed_domain, count(*) FROM verdicts GROUP BY attributed_domain")).all())
        engine.dispose()
        metrics = httpx.get(f"{service.url}/metrics", timeout=30).text
        total = dict(re.findall(r"^firstfault_analysis_duration_seconds_(sum|count)(?:\{[^}]*\})? (\S+)$", metrics,
                                re.MULTILINE))
        service_s = float(total["sum"]) / float(total["count"]) if float(total.get("count", 0)) else None
    finally:
        if watch is not None and watch.poll() is None:
            watch.kill()
            watch.wait(10)
        service.stop()
    # What the replayed Slurm clients cost per attempt (one `sacct -j` and one `scontrol show job`, each a
    # Python process here; a real sacct is one RPC to slurmdbd): subtract it to read the path's own cost.
    began = time.perf_counter()
    for _ in range(5):
        subprocess.run([tools["sacct"], "-P", "-a", "-D", "-o", "JobID", "-j", stream.job_id(0)],
                       capture_output=True, check=False)
        subprocess.run([tools["scontrol"], "show", "job", stream.job_id(0)], capture_output=True, check=False)
    tool_s = (time.perf_counter() - began) / 5
    expected = {stream.job_id(i) for i in range(stream.count)}
    refs = [m.ref for m in marks]
    by_vid = {v.id: v for v in verdicts}
    lags = sorted(m.done_at.timestamp() - stream.real_end_of(stream.index_of(m.ref) or 0) for m in marks
                  if stream.index_of(m.ref) is not None)
    steps: dict[str, list[float]] = {}
    for line in (work / "watch.log").read_text(errors="replace").splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        for k, v in (ev.get("seconds") or {}).items() if isinstance(ev, dict) else ():
            steps.setdefault(k, []).append(float(v))
    first_end = stream.real_end_of(0)
    done_times = sorted(m.done_at.timestamp() for m in marks)
    span = (done_times[-1] - first_end) if done_times else 0.0
    result = {
        "attempts": stream.count, "per_hour": args.per_hour, "speed": args.speed, "workers": args.workers,
        "concurrency": args.concurrency if args.concurrency is not None else "default",
        "offered_per_s": round(args.per_hour * args.speed / 3600, 2),
        "attributed": len(marks),
        "attributed_per_s": round(len(marks) / span, 2) if span > 0 else None,
        "lag_p50_s": round(statistics.median(lags), 2) if lags else None,
        "lag_p95_s": round(lags[min(len(lags) - 1, round(0.95 * len(lags)) - 1)], 2) if lags else None,
        "lag_max_s": round(lags[-1], 2) if lags else None,
        "lost": sorted(expected - set(refs))[:20], "lost_count": len(expected - set(refs)),
        "repeated_marks": len(refs) - len(set(refs)),
        "verdicts": len(verdicts),
        "repeated_verdicts": len(verdicts) - len({(v.workload_id, v.attempt) for v in verdicts}),
        "marks_pointing_at_their_verdict": sum(1 for m in marks if m.verdict_id in by_vid
                                               and by_vid[m.verdict_id].workload_id == m.ref),
        "verdicts_by_domain": domains,
        "service_peak_rss_mib": round(peak_rss / 2**20, 1),
        "replayed_slurm_clients_s_per_attempt": round(tool_s, 3),
        # Machine-independent: CPU seconds each part spent per attempt (watch includes its sacct/scontrol calls).
        "cpu_s_per_attempt": {k: round((v - cpu0.get(k, 0.0)) / max(1, len(marks)), 4) for k, v in cpu.items()},
        "service_analysis_s_per_attempt": round(service_s, 3) if service_s is not None else None,
        # Wall seconds per attempt by step (mean, summed over the daemon's threads), from its --json lines.
        "watch_step_s_per_attempt": {k: round(statistics.fmean(v), 4) for k, v in steps.items()},
        "load_average_1m_at_end": os.getloadavg()[0],
        "cpus": os.cpu_count(),
    }
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-hour", type=float, default=10_000, help="finished attempts an hour (default 10,000)")
    ap.add_argument("--speed", type=float, default=10.0, help="replay this many times faster than real time")
    ap.add_argument("--attempts", type=int, default=1000)
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=1,
                    help="the Service's uvicorn workers (2 once `serve --workers` works: the speed branch)")
    ap.add_argument("--poll", type=float, default=1.0, help="watch.poll_interval, seconds")
    ap.add_argument("--concurrency", type=int, default=None,
                    help="watch.concurrency: attempts of a pass settled at once (default: the daemon's, 4)")
    ap.add_argument("--timeout", type=float, default=1800, help="give up after this many seconds")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "watch_throughput")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    bindir = find_bindir()
    if bindir is None:
        print("PostgreSQL binaries (initdb, pg_ctl) are not installed")
        return 2
    pg = PgServer(bindir).start()
    try:
        with tempfile.TemporaryDirectory(prefix="ff-watch-bench-") as tmp:
            print(f"{args.attempts} attempts at {args.per_hour:,.0f}/h x {args.speed:g} "
                  f"({args.per_hour * args.speed / 3600:.1f}/s offered), Service with {args.workers} worker(s)")
            pg_pid = int((pg.data / "postmaster.pid").read_text().split()[0])
            res = run(args, Path(tmp), pg.url(pg.create_database()), pg_pid)
    finally:
        pg.stop()
    (args.out / "results.json").write_text(json.dumps(res, indent=2))
    for k, v in res.items():
        print(f"  {k:<34} {v}")
    ok = res["lost_count"] == 0 and res["repeated_marks"] == 0 and res["repeated_verdicts"] == 0
    print("none lost, none repeated" if ok else "LOST OR REPEATED ATTEMPTS")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
