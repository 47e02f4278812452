"""Recorded sacct pages from the suite's real Slurm, replayed as a stream of finished attempts.

Recording (`record`, or `python -m tests.harness.sacct_replay record OUT.json`): on the real
single-node Slurm of tests/harness/slurm_harness.py, three batch jobs run to their end (one
exits 0 after a few training-log lines, one prints a PyTorch CUDA OOM traceback taken from
tests/scenarios/sw-cuda-oom-example (its untimed lines) and exits 1, one is killed by SIGKILL), and what the
Blueprint's Slurm context asks about them is kept verbatim: `sacct -P -a -D -o <its columns>
-j ID` per job, the ended-jobs listing (`-X -D -o JobID,State,End --state=...`), each job's
output file and `sacct --version`. Times are recorded with TZ=UTC.

Replay: `sacct` and `scontrol` executables (`install(bin_dir, stream)`) that answer the same
two sacct questions about a stream of `count` attempts, one ending every `interval` simulated
seconds from `t0`, with simulated time running `speed` times faster than real time. Attempt i
is recorded job kind KINDS[i % 10] (7 in 10 succeed): its recorded rows with the job id
replaced, every time shifted so it ends when attempt i ends, and its node replaced by one of
the stream's nodes. The listing lists exactly the attempts whose end lies in [-S, now].
`scontrol show job` answers as slurmctld does for a job past MinJobAge (exit 1, "Invalid job id
specified"), so ranks come from sacct's steps. Each attempt's log directory (LOGS/<id>/<id>.out)
holds its recorded job's output (`write_logs`).
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RECORDING = ROOT / "tests" / "fixtures" / "scheduler" / "sacct-replay.json"
KINDS = ("ok", "ok", "oom", "ok", "ok", "killed", "ok", "ok", "oom", "ok")
_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$")
_FMT = "%Y-%m-%dT%H:%M:%S"
OOM_LOG = ROOT / "tests" / "scenarios" / "sw-cuda-oom-example" / "app" / "rank-5.log"
SCRIPTS = {
    "ok": "#!/bin/sh\nfor i in 1 2 3; do echo \"iteration $i/3 | lm loss: 2.4$i | grad norm: 0.9\"; done\nexit 0\n",
    # The traceback only: its timestamped lines belong to 2026-11-02, outside any replayed window.
    "oom": f"#!/bin/sh\ngrep -v -e '^2026-' -e '^node-' {OOM_LOG}\nexit 1\n",
    "killed": "#!/bin/sh\necho 'iteration 1/3 | lm loss: 2.41'\nkill -9 $$\n",
}


# ----------------------------------------------------------------------------- recording


def record(cluster: Any, out: Path) -> dict[str, Any]:
    """Run the three jobs on `cluster` (a slurm_harness.SlurmCluster) and write the recording."""
    from firstfault.identify.slurm import _COLUMNS, TERMINAL_STATE_CODES

    env = cluster.env | {"TZ": "UTC"}
    jobs: dict[str, dict[str, str]] = {}
    began = datetime.now(UTC) - timedelta(minutes=5)
    for kind, script in SCRIPTS.items():
        jid = cluster.sbatch(script, f"--job-name=ff-{kind}")
        cluster.wait_state(jid, timeout=60)
        jobs[kind] = {"id": jid}
    time.sleep(1.0)  # slurmdbd takes the end records asynchronously
    for job in jobs.values():
        jid = job["id"]
        job["sacct"] = cluster.run("sacct", "-P", "-a", "-D", "-o", ",".join(_COLUMNS), "-j", jid, env=env).stdout
        job["out"] = (cluster.base / "out" / f"{jid}.out").read_text(errors="replace")
    listing = cluster.run("sacct", "-P", "-a", "-X", "-D", "-o", "JobID,State,End",
                          f"--state={','.join(TERMINAL_STATE_CODES)}", "-S", began.strftime(_FMT), "-E", "now",
                          env=env).stdout
    doc = {
        "provenance": "recorded by tests/harness/sacct_replay.py from the suite's single-node Slurm "
                      "(tests/harness/slurm_harness.py), TZ=UTC",
        "slurm": cluster.run("sacct", "--version", env=env).stdout.strip(),
        "node": cluster.node,
        "listing": listing,
        "jobs": jobs,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n")
    return doc


# ----------------------------------------------------------------------------- the stream


@dataclass
class Stream:
    t0: float  # real and simulated epoch seconds at the start
    speed: float  # simulated seconds per real second
    interval: float  # simulated seconds between two attempts' ends
    count: int
    first_id: int
    nodes: list[str]
    recording: str = str(RECORDING)

    @classmethod
    def per_hour(cls, attempts_per_hour: float, speed: float, count: int, first_id: int, nodes: list[str],
                 t0: float | None = None) -> Stream:
        return cls(t0=time.time() if t0 is None else t0, speed=speed, interval=3600.0 / attempts_per_hour,
                   count=count, first_id=first_id, nodes=nodes)

    def end_of(self, i: int) -> float:
        """Simulated epoch second attempt i ends at (whole seconds, as sacct prints)."""
        return float(math.floor(self.t0 + (i + 1) * self.interval))

    def real_end_of(self, i: int) -> float:
        return self.t0 + (self.end_of(i) - self.t0) / self.speed

    def sim_now(self) -> float:
        return self.t0 + (time.time() - self.t0) * self.speed

    def job_id(self, i: int) -> str:
        return str(self.first_id + i)

    def index_of(self, job_id: str) -> int | None:
        if not job_id.isdigit():
            return None
        i = int(job_id) - self.first_id
        return i if 0 <= i < self.count else None

    def kind_of(self, i: int) -> str:
        return KINDS[i % len(KINDS)]


def _shift(cell: str, delta: timedelta) -> str:
    if _TIME.match(cell):
        return (datetime.strptime(cell, _FMT) + delta).strftime(_FMT)
    return cell


def job_page(rec: dict[str, Any], s: Stream, i: int) -> str:
    """`sacct -P -D -o COLUMNS -j ID` for attempt i: the recorded job's rows, moved."""
    kind = s.kind_of(i)
    job = rec["jobs"][kind]
    lines = job["sacct"].splitlines()
    header = lines[0].split("|")
    at = {c: k for k, c in enumerate(header)}
    alloc = lines[1].split("|")
    rec_end = datetime.strptime(alloc[at["End"]], _FMT)
    delta = datetime.fromtimestamp(s.end_of(i), UTC).replace(tzinfo=None) - rec_end
    node = s.nodes[i % len(s.nodes)]
    out = [lines[0]]
    for ln in lines[1:]:
        cells = [_shift(c, delta) for c in ln.split("|")]
        cells[at["JobID"]] = cells[at["JobID"]].replace(job["id"], s.job_id(i), 1)
        cells[at["NodeList"]] = cells[at["NodeList"]].replace(rec["node"], node)
        out.append("|".join(cells))
    return "\n".join(out) + "\n"


def listing_page(rec: dict[str, Any], s: Stream, start: datetime, now: float) -> str:
    states = {}
    for kind, job in rec["jobs"].items():
        row = next(ln for ln in rec["listing"].splitlines()[1:] if ln.split("|")[0] == job["id"])
        states[kind] = row.split("|")[1]
    out = [rec["listing"].splitlines()[0]]
    lo = max(0, math.ceil((start.timestamp() - s.t0) / s.interval) - 2)
    hi = min(s.count, int((now - s.t0) / s.interval) + 1)
    for i in range(lo, hi):
        end = s.end_of(i)
        if start.timestamp() <= end <= now:
            out.append(f"{s.job_id(i)}|{states[s.kind_of(i)]}|{datetime.fromtimestamp(end, UTC).strftime(_FMT)}")
    return "\n".join(out) + "\n"


def write_logs(logs: Path, s: Stream, rec: dict[str, Any] | None = None) -> None:
    rec = rec or json.loads(Path(s.recording).read_text())
    for i in range(s.count):
        d = logs / s.job_id(i)
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{s.job_id(i)}.out").write_text(rec["jobs"][s.kind_of(i)]["out"])


def install(bin_dir: Path, stream_file: Path) -> dict[str, str]:
    """`sacct` and `scontrol` wrappers in bin_dir; returns the config keys that point at them."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for tool in ("sacct", "scontrol"):
        p = bin_dir / tool
        p.write_text(f"#!/bin/sh\nFF_SACCT_STREAM={stream_file} PYTHONPATH={ROOT} exec {sys.executable} -S "
                     f"{Path(__file__).resolve()} {tool} \"$@\"\n")
        p.chmod(0o755)
    return {"sacct": str(bin_dir / "sacct"), "scontrol": str(bin_dir / "scontrol")}


_FAST_SACCT = r"""#!/bin/bash
# Replayed sacct (tests/harness/sacct_replay.py, install_fast): pre-rendered pages, no Python per call.
D=%(dir)s
job=""; start=""
args=("$@")
for ((k = 0; k < ${#args[@]}; k++)); do
  case "${args[k]}" in
    -j) job="${args[k+1]}" ;;
    -S) start="${args[k+1]}" ;;
    --version) cat "$D/version"; exit 0 ;;
  esac
done
now=${EPOCHREALTIME%%.*}
if [[ -n $job ]]; then
  if [[ -f $D/ends/$job ]]; then
    read -r e < "$D/ends/$job"
    if (( now >= e )); then cat "$D/pages/$job"; exit 0; fi
  fi
  read -r h < "$D/header"; echo "$h"; exit 0
fi
if [[ -n $start ]]; then
  s=$(TZ=UTC date -d "$start" +%%s) || exit 2
  exec awk -F'\t' -v s="$s" -v now="$EPOCHREALTIME" -v t0=%(t0)r -v speed=%(speed)r \
    'NR == 1 { print; next }
     { sim = t0 + (now - t0) * speed; if ($1 >= s && $1 <= sim) print $2 }' "$D/listing"
fi
echo "sacct replay: only -j ID and -S START listings are recorded" >&2
exit 2
"""


def install_fast(bin_dir: Path, s: Stream) -> dict[str, str]:
    """Like `install`, but every page is rendered now and the clients are bash: a call costs a few
    milliseconds (as a real sacct's RPC does), so a benchmark measures the path, not the replay."""
    rec = json.loads(Path(s.recording).read_text())
    d = bin_dir / "replay"
    (d / "pages").mkdir(parents=True, exist_ok=True)
    (d / "ends").mkdir(exist_ok=True)
    (d / "version").write_text(rec["slurm"] + "\n")
    (d / "header").write_text(rec["jobs"]["ok"]["sacct"].splitlines()[0] + "\n")
    states = {}
    for kind, job in rec["jobs"].items():
        row = next(ln for ln in rec["listing"].splitlines()[1:] if ln.split("|")[0] == job["id"])
        states[kind] = row.split("|")[1]
    listing = [rec["listing"].splitlines()[0]]
    for i in range(s.count):
        jid = s.job_id(i)
        (d / "pages" / jid).write_text(job_page(rec, s, i))
        (d / "ends" / jid).write_text(f"{math.ceil(s.real_end_of(i))}\n")
        end = s.end_of(i)
        listing.append(f"{int(end)}\t{jid}|{states[s.kind_of(i)]}|{datetime.fromtimestamp(end, UTC).strftime(_FMT)}")
    (d / "listing").write_text("\n".join(listing) + "\n")
    (bin_dir / "sacct").write_text(_FAST_SACCT % {"dir": d, "t0": s.t0, "speed": s.speed})
    (bin_dir / "scontrol").write_text(
        "#!/bin/bash\necho 'slurm_load_jobs error: Invalid job id specified' >&2\nexit 1\n")
    for tool in ("sacct", "scontrol"):
        (bin_dir / tool).chmod(0o755)
    return {"sacct": str(bin_dir / "sacct"), "scontrol": str(bin_dir / "scontrol")}


def save_stream(path: Path, s: Stream) -> None:
    path.write_text(json.dumps(asdict(s)))


# ----------------------------------------------------------------------------- the fake binaries


def _arg(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


def main(argv: list[str]) -> int:
    tool, args = argv[0], argv[1:]
    s = Stream(**json.loads(Path(os.environ["FF_SACCT_STREAM"]).read_text()))
    if tool == "scontrol":
        sys.stderr.write("slurm_load_jobs error: Invalid job id specified\n")
        return 1
    rec = json.loads(Path(s.recording).read_text())
    if "--version" in args:
        sys.stdout.write(rec["slurm"] + "\n")
        return 0
    if (ref := _arg(args, "-j")) is not None:
        i = s.index_of(ref)
        if i is None or s.end_of(i) > s.sim_now():
            sys.stdout.write(rec["jobs"]["ok"]["sacct"].splitlines()[0] + "\n")  # header only: no such job (yet)
            return 0
        sys.stdout.write(job_page(rec, s, i))
        return 0
    start_s = _arg(args, "-S")
    if start_s is None:
        sys.stderr.write("sacct replay: only -j ID and -S START listings are recorded\n")
        return 2
    start = datetime.strptime(start_s, _FMT).replace(tzinfo=UTC)
    sys.stdout.write(listing_page(rec, s, start, s.sim_now()))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["record"]:
        from tests.harness.slurm_harness import slurm_cluster

        with slurm_cluster(Path("/tmp/ff-sacct-record")) as c:
            doc = record(c, Path(sys.argv[2]) if len(sys.argv) > 2 else RECORDING)
        print(json.dumps({k: v["id"] for k, v in doc["jobs"].items()}))
    else:
        raise SystemExit(main(sys.argv[1:]))
