"""`watch --follow` (issue 30): how soon a running job's fault is told, what following costs, what a restart does.

    .venv/bin/python bench/follow_live.py slurm              # 20 runs of a real PyTorch job that hangs (about 20 min)
    .venv/bin/python bench/follow_live.py slurm --runs 3     # a quick look
    .venv/bin/python bench/follow_live.py lab                # the lab's captured runs, followed as they are written
    .venv/bin/python bench/follow_live.py idle               # 200 running attempts x 8 nodes, idle logs: CPU, memory

`slurm`: the test suite's real Slurm (tests/harness/slurm_harness.py), a real Alertmanager
(tests/sinks/am_harness.py), a webhook receiver, and the installed `firstfault watch --follow --json` as its own
process (tests/harness/follow_harness.py). Each run submits the lab's real DDP job (lab/train.py: 3 ranks under
`srun --label --kill-on-bad-exit=1`, gloo on the CPU) with fault `hang_collective` (rank 1 stops in step 3, the
others wait in the allreduce until gloo's timeout, LAB_PG_TIMEOUT s, ends the job FAILED). Once the job runs and
the daemon follows it, the Xid 79 block of machine-shop-maintenance#80 is written to the node's kernel log, stamped
with the time it is written; latency = when Alertmanager first lists the provisional alert (polled every 50 ms
through its own API) minus when the write returned. Then the job fails on its own and the final verdict must name
the same cause and node, say it held, and resolve the provisional alert. The kernel log is moved aside between runs
(after the final verdict), so each run's window holds its own fault only. Restart runs: the daemon is killed
(SIGKILL) before the fault is written and started again after, or killed right after the provisional alert and
started again; Alertmanager, the webhook receiver and the store must then hold each cause exactly once.

`lab`: each captured lab bundle (tests/lab/captured) is written, line files in chunks of 4 KiB, into a
directory that a FollowDaemon (static attempts: the bundle's window start and nodes, no end) polls between two
chunks. Counted: provisional verdicts by the bundle's expectation (completed and symptom-only runs must give
none; a cause given must be the expected one).

`idle`: a FollowDaemon in a child process follows 200 static attempts of 8 nodes, each with a kernel log per node
and an application log per rank (3,200 files, nothing written), at the default interval (2 s), for `--seconds`;
reported: CPU seconds per wall second after the start-up (utime + stime of the child), and its resident memory
at each quarter of the run.

Figures go to OUT/results.json (default bench/out/follow_live/).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.harness import follow_harness as fh  # noqa: E402

OUT = REPO / "bench" / "out" / "follow_live"


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))]


# ------------------------------------------------------------------------------------------------------- slurm


def _job_script(root: Path, port: int, pg_timeout: int) -> str:
    train = REPO / "lab" / "train.py"
    work = root / ".work"
    return f"""#!/bin/bash
#SBATCH --job-name=follow-bench
#SBATCH --ntasks=3
export MASTER_ADDR=127.0.0.1 MASTER_PORT={port}
export LAB_FAULT=hang_collective LAB_FAULT_STEP=3 LAB_STEPS=6 LAB_PG_TIMEOUT={pg_timeout} LAB_WORKDIR={work}
export OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 TZ=UTC
srun --label --kill-on-bad-exit=1 {sys.executable} {train}
"""


def run_slurm(args: argparse.Namespace) -> dict[str, Any]:
    from tests.harness.slurm_harness import start_slurm
    from tests.sinks.am_harness import alertmanager

    base = Path(tempfile.mkdtemp(prefix="ff-follow-"))
    root = base / "ev"
    (root / "jobs").mkdir(parents=True)
    (root / ".work" / "data").mkdir(parents=True)
    cluster = start_slurm(base / "slurm")
    runs: list[dict[str, Any]] = []
    try:
        with alertmanager(base / "am") as am, fh.receiver() as hook:
            cfg = fh.write_config(base, root=root, am_url=am.url, hook_url=hook.url)
            fh.start_watch_cursor_now(cfg)
            env = {**os.environ, "SLURM_CONF": str(cluster.conf)}
            daemon = fh.Daemon(cfg, env, base / "daemon.log")
            daemon.start()
            plan = ["plain"] * args.runs + ["kill_before"] * args.restarts + ["kill_after"] * args.restarts
            for i, kind in enumerate(plan):
                r = _one_run(cluster, am, hook, daemon, root, kind, args.pg_timeout)
                r["run"], r["kind"] = i, kind
                runs.append(r)
                print(json.dumps(r), flush=True)
                (root / "nodes" / cluster.node / "kern.log").rename(root / "nodes" / cluster.node / f"kern.log.{i}")
            daemon.stop()
            lat = [r["latency_s"] for r in runs if r["kind"] == "plain"]
            out = {
                "runs": len(lat), "latency_p50_s": round(statistics.median(lat), 3),
                "latency_p95_s": round(pct(lat, 95), 3), "latency_max_s": round(max(lat), 3),
                "within_10s": sum(1 for x in lat if x <= 10), "final_agrees": sum(1 for r in runs if r["final_agrees"]),
                "restart_runs": [r for r in runs if r["kind"] != "plain"],
                "webhook_deliveries_repeated": sum(1 for n in hook.deliveries.values() if n > 1),
                "runs_detail": runs,
            }
            return out
    finally:
        cluster.stop()
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


def _one_run(cluster: Any, am: Any, hook: Any, daemon: fh.Daemon, root: Path, kind: str,
             pg_timeout: int) -> dict[str, Any]:
    from lab.driver import _free_port

    script = _job_script(root, _free_port(), pg_timeout)
    jid = cluster.run("sbatch", "--parsable", f"--output={root}/jobs/slurm-%j.out", input=script).stdout.strip()
    cluster.wait_state(jid, ("RUNNING",), timeout=60)
    daemon.wait_event(lambda e: e.get("ref") == jid and "following" in e.get("event", ""), 60)
    # The ranks are in their training loop (rank 1 stuck in step 3) before the fault is written.
    _wait_text(root / "jobs" / f"slurm-{jid}.out", "step 3: fetching remote sample index", 120)
    if kind == "kill_before":
        daemon.stop(signal.SIGKILL)
    t0 = fh.write_fault(root, cluster.node)
    if kind == "kill_before":
        time.sleep(2)
        daemon.start()
    t1, alert = fh.wait_alert(am.url, jid, "FirstfaultProvisional", 120)
    if kind == "kill_after":
        daemon.stop(signal.SIGKILL)
        time.sleep(1)
        daemon.start()
    state = cluster.wait_state(jid, timeout=pg_timeout + 120)
    final = daemon.wait_event(lambda e: e.get("ref") == jid and "verdict_id" in e, 120)
    from firstfault.store.provisional import ProvisionalLedger
    from firstfault.store.repo import VerdictStore

    with VerdictStore.open(f"sqlite:///{daemon.config.parent / 'verdicts.db'}") as store:
        recs = ProvisionalLedger(store).superseded_by(final["verdict_id"])
        stored = store.get(final["verdict_id"])
    held = [r.held for r in recs]
    prov_alerts = fh.alerts(am.url, workload=jid, alertname="FirstfaultProvisional")
    ids = [b["delivery"] for b in hook.bodies if b["workload"]["id"] == jid]
    return {
        "job": jid, "state": state, "latency_s": round(t1 - t0, 3),
        "alert_node": alert["labels"].get("node"), "alert_category": alert["labels"].get("category"),
        "final_category": final.get("category"), "held": held,
        "final_agrees": (final.get("category") == "gpu.fallen_off_bus" and held == [True]
                         and stored is not None and stored.affected_nodes == [cluster.node]),
        "provisional_records": len(recs), "provisional_alert_resolved": prov_alerts == [],
        "webhook_deliveries": {d: hook.deliveries[d] for d in dict.fromkeys(ids)},
    }


def _wait_text(path: Path, text: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.2)
    raise TimeoutError(f"{text!r} not in {path} after {timeout} s")


# --------------------------------------------------------------------------------------------------------- lab


def run_lab(args: argparse.Namespace) -> dict[str, Any]:
    import yaml

    from firstfault.blueprint.follow import FollowDaemon
    from firstfault.bundle import Context, load_bundle
    from firstfault.collect.follow import FileFollow
    from firstfault.collect.scan import LINE_SOURCES, prefilter_words
    from firstfault.identify.static import StaticAttempts, StaticList
    from firstfault.store.repo import VerdictStore

    words = prefilter_words()
    rows = []
    base = Path(tempfile.mkdtemp(prefix="ff-follow-lab-"))
    try:
        captured = REPO / "tests" / "lab" / "captured"
        for bundle in sorted(p for p in captured.iterdir() if (p / "workload.yaml").exists()):
            exp = yaml.safe_load((bundle / "expected.yaml").read_text())
            b = load_bundle(str(bundle))
            wl = b.workload
            root = base / bundle.name
            specs = [s.spec for s in b.sources if s.spec.kind in LINE_SOURCES or s.spec.kind in (
                "flight_recorder", "stack_dump")]
            attempt = StaticAttempts(id=wl.id, start=wl.window.start or "", end=None, nodes=list(wl.nodes),
                                    ranks=wl.ranks)
            store = VerdictStore.open(f"sqlite:///{base / (bundle.name + '.db')}")

            def make(ident: Any, cur: Any, specs: Any = specs, root: Path = root) -> list[Any]:
                return [FileFollow(specs, root, Context.from_spec(ident.workload), words, resolve_every=0.0)]

            d = FollowDaemon(source=StaticList([attempt]), store=store, make_followers=make, sinks=[],
                             cluster="lab", ledger="static@lab")
            per_file: list[list[tuple[Path, bytes]]] = []
            for f in (f for s in b.sources if s.spec in specs for f in s.files):
                data = Path(f.path).read_bytes()
                dest = root / f.rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(b"")
                per_file.append([(dest, data[i:i + 4096]) for i in range(0, len(data), 4096)])
            # The files grow together (ranks write at once): one chunk of each in turn, a poll after each.
            chunks = [c for k in range(max(map(len, per_file), default=0)) for cs in per_file if k < len(cs)
                      for c in [cs[k]]]
            sent = []
            for dest, piece in chunks:
                with dest.open("ab") as fh_:
                    fh_.write(piece)
                sent += d.step()
            sent += d.step()
            store.close()
            got = [v.root_cause.category for v, _ in sent if v.root_cause]
            cat = exp.get("category")
            agrees = all(cat and (g == cat or g.startswith(cat + ".")) for g in got)
            rows.append({"bundle": bundle.name, "expected": f"{exp['domain']}/{cat or ''}", "provisional": got,
                         "polls": len(chunks) + 1, "agrees": agrees})
            print(json.dumps(rows[-1]), flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    quiet = [r for r in rows if r["expected"].startswith(("none", "unknown"))]
    return {"bundles": len(rows), "completed_or_symptom_only": len(quiet),
            "provisional_where_none_expected": sum(1 for r in quiet if r["provisional"]),
            "provisional_given": sum(1 for r in rows if r["provisional"]),
            "provisional_wrong": sum(1 for r in rows if r["provisional"] and not r["agrees"]), "rows": rows}


# -------------------------------------------------------------------------------------------------------- idle

_IDLE_CHILD = r"""
import json, resource, sys, time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from firstfault.blueprint.follow import FollowDaemon
from firstfault.bundle import Context, SourceSpec
from firstfault.collect.follow import FileFollow
from firstfault.collect.scan import prefilter_words
from firstfault.identify.static import StaticAttempts, StaticList
from firstfault.store.repo import VerdictStore

root, attempts, nodes, seconds = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
start = (datetime.now(UTC) - timedelta(minutes=5)).isoformat()
atts = [StaticAttempts(id=f"j{a}", start=start, end=None, nodes=[f"n{a:04d}-{i}" for i in range(nodes)],
                      ranks={f"n{a:04d}-{i}": str(i) for i in range(nodes)}) for a in range(attempts)]
words = prefilter_words()
specs = [SourceSpec(kind="kernel", path="nodes/{node}/kern.log"),
         SourceSpec(kind="application", path="app/{id}/rank-{rank}.log")]
def make(ident, cur):
    s = [SourceSpec(kind=x.kind, path=x.path.replace("{id}", ident.workload.id)) for x in specs]
    return [FileFollow(s, root, Context.from_spec(ident.workload), words, cursor=(cur or {}).get("files"))]
store = VerdictStore.open(f"sqlite:///{root / 'idle.db'}")
d = FollowDaemon(source=StaticList(atts), store=store, make_followers=make, sinks=[], cluster="idle",
                 ledger="static@idle", interval=2.0, list_interval=10.0)
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
def rss():
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096
d.step()  # the start: every attempt identified, every file read once and judged
t_start, c_start = time.monotonic(), cpu()
marks = []
while time.monotonic() - t_start < seconds:
    began = time.monotonic()
    d.step()
    el = time.monotonic() - t_start
    if len(marks) < 4 and el >= (len(marks) + 1) * seconds / 4 - 2:
        marks.append({"at_s": round(el, 1), "rss_mb": round(rss() / 2**20, 1)})
    time.sleep(max(0.0, d.interval - (time.monotonic() - began)))
wall, used = time.monotonic() - t_start, cpu() - c_start
print(json.dumps({"attempts": len(d.attempts), "files": sum(len(f.followers[0].tails) for f in d.attempts.values()),
                  "wall_s": round(wall, 1), "cpu_s": round(used, 3), "cpu_share_of_one_core": round(used / wall, 4),
                  "rss": marks}))
"""


def run_idle(args: argparse.Namespace) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix="ff-follow-idle-"))
    try:
        t = datetime.now(UTC).strftime("%b %d %H:%M:%S")
        for a in range(args.attempts):
            for i in range(args.nodes):
                n = base / "nodes" / f"n{a:04d}-{i}"
                n.mkdir(parents=True)
                (n / "kern.log").write_text(f"{t} n{a:04d}-{i} kernel: systemd-journald: boot\n")
            app = base / "app" / f"j{a}"
            app.mkdir(parents=True)
            for r in range(args.nodes):
                (app / f"rank-{r}.log").write_text(f"{datetime.now(UTC).isoformat()} INFO step 1 loss 0.5\n")
        got = subprocess.run([sys.executable, "-c", _IDLE_CHILD, str(base), str(args.attempts), str(args.nodes),
                              str(args.seconds)], capture_output=True, text=True, check=False, cwd=REPO)
        if got.returncode != 0:
            raise SystemExit(f"the follower child failed ({got.returncode}):\n{got.stderr[-3000:]}")
        return dict(json.loads(got.stdout.strip().splitlines()[-1]))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("slurm", "lab", "idle"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--restarts", type=int, default=2, help="slurm: runs of each restart kind")
    ap.add_argument("--pg-timeout", type=int, default=20, help="slurm: gloo's timeout, how long the job hangs")
    ap.add_argument("--attempts", type=int, default=200)
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    t0 = time.monotonic()
    res = {"slurm": run_slurm, "lab": run_lab, "idle": run_idle}[args.mode](args)
    res["bench_wall_s"] = round(time.monotonic() - t0, 1)
    res["max_rss_mb_bench"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{args.mode}.json"
    path.write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps({k: v for k, v in res.items() if k not in ("rows", "runs_detail")}, indent=2))
    print(f"written: {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
