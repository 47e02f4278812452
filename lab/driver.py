"""Run the lab's faults for real and write one evidence bundle per run.

Bundle layout (torchrun):
  workload.yaml, expected.yaml
  nodes/<host>/torchrun.log                 torchrun's own stdout+stderr (--tee 3: every rank's lines too)
  torchrun-logs/attempt_0/<rank>/stdout.log torchrun --log-dir ... --redirects 3 per-rank files
  torchrun-logs/attempt_0/<rank>/stderr.log
  torchrun-logs/attempt_0/<rank>/error.json (when @record wrote one)

Bundle layout (mpirun, Lightning, Ray, Accelerate, DeepSpeed: one launcher process; JAX: one process per rank):
  workload.yaml, expected.yaml
  nodes/<host>/mpirun.log                   mpirun --tag-output's stdout+stderr ([1,N]<stdout>: before each line)
  nodes/<host>/lightning.log                `python lab/lightning_job.py` (Lightning starts ranks 1, 2 as children)
  nodes/<host>/ray-driver.log               `python lab/ray_job.py` (the workers' lines come back through Ray)
  nodes/<host>/jax-rank<r>.log              one `python lab/jax_job.py` per rank
  nodes/<host>/accelerate.log               `accelerate launch --multi_gpu ...` (torchrun inside it, no --tee)
  nodes/<host>/deepspeed.log                `deepspeed --num_gpus 3 ...` (runner, launch and the ranks' output)
  nodes/<host>/tf-worker<r>.log             one `python lab/tf_job.py` per TensorFlow worker (its TF_CONFIG)

Bundle layout (Slurm):
  workload.yaml, expected.yaml
  slurm-<jobid>.out                         the batch output (srun --label, or slurmstepd's lines only)
  app/rank-<t>.log                          srun --output=app/rank-%t.log (per-task faults)
  scheduler/sacct.txt                       sacct -P -o JobID,JobName,State,ExitCode,Start,End,NodeList,Reason
  scheduler/scontrol.txt                    scontrol show job <jobid>
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lab.faults import FAULTS, LOCAL_MODES, Fault
from lab.ports import free_port as _free_port

HERE = Path(__file__).resolve().parent
TRAIN = HERE / "train.py"
NPROC = 3
SACCT_COLS = "JobID,JobName,State,ExitCode,Start,End,NodeList,Reason"


@dataclass
class RunResult:
    fault: str
    bundle: Path
    seconds: float
    detail: str = ""
    error: str = ""


def _utc(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _hold_port(port: int) -> socket.socket:
    """Listens on `port` on every address, as a leftover process of an earlier job does."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("", port))
    s.listen()
    return s


def _hold_lock(path: Path) -> Any:
    """Holds an exclusive flock on `path` (what filelock's UnixFileLock takes), as another process on the node does
    until the returned file is closed."""
    import fcntl

    f = open(path, "a")  # noqa: SIM115 (held across the job, closed by the caller)
    fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    return f


def _python() -> str:
    return sys.executable


def _torchrun() -> list[str]:
    exe = Path(sys.executable).with_name("torchrun")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "torch.distributed.run"]


def _console(name: str, module: str) -> list[str]:
    """A launcher's console script next to this interpreter (as a user types it), else its module."""
    exe = Path(sys.executable).with_name(name)
    return [str(exe)] if exe.exists() else [sys.executable, "-m", module]


def _write_yaml(path: Path, data: dict[str, Any]) -> None:
    path.write_text(yaml.safe_dump(data, sort_keys=False, width=120, allow_unicode=True))


def _prepare_workdir(fault: Fault, work: Path) -> None:
    if work.exists():
        _umount(work / "ckpt-small")
        shutil.rmtree(work)
    (work / "data").mkdir(parents=True)
    for rank in range(NPROC):
        for step in range(fault.steps + 2):
            (work / "data" / f"shard-{rank:02d}-{step:04d}.pt").write_bytes(os.urandom(64))
    if fault.train_fault == "module_missing":  # the job's extension in each rank's node-local package directory
        for rank in range(NPROC):
            site = work / f"site-rank{rank}"
            site.mkdir()
            if str(rank) not in fault.ranks.split(","):
                (site / "lab_fasttok.py").write_text("def normalize(x):\n    return x\n")
    if fault.hostfile:  # the launcher's host list, as the job's launch script writes it
        (work / "hostfile").write_text("".join(f"{line}\n" for line in fault.hostfile))
    if fault.train_fault == "dataloader_worker_parquet":  # rank 1's feature file, cut short (an interrupted copy)
        import pyarrow as pa
        import pyarrow.parquet as pq

        for rank in range(NPROC):
            path = work / "data" / f"features-rank{rank:02d}.parquet"
            pq.write_table(pa.table({"x": [float(i) for i in range(256)]}), path)
            if str(rank) in fault.ranks.split(","):
                os.truncate(path, path.stat().st_size // 2)
    if fault.hold_lock:
        (work / fault.hold_lock).parent.mkdir(parents=True, exist_ok=True)
    if fault.task_prolog:  # the job's own task prolog, which srun runs before each task (--task-prolog)
        script = work / "task-prolog.sh"
        script.write_text(f"#!/bin/bash\n{fault.task_prolog}")
        script.chmod(0o755)
    if fault.drop_dac_override:  # a checkpoint directory another user's job made, which this job may not write
        shared = work / "ckpt-shared"
        shared.mkdir()
        shared.chmod(0o555)
    if fault.tmpfs_checkpoint:
        small = work / "ckpt-small"
        small.mkdir()
        opts = "ro,size=1m" if fault.tmpfs_readonly else "size=1m"
        subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(small)], check=True,
                       capture_output=True)


def _umount(path: Path) -> None:
    if path.is_dir() and os.path.ismount(path):
        subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True)


def _env(fault: Fault, work: Path) -> dict[str, str]:
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("LAB_", "SLURM_", "TORCHELASTIC_")) or k in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
            env.pop(k)
    env.update({
        "LAB_FAULT": fault.train_fault, "LAB_FAULT_RANKS": fault.ranks, "LAB_FAULT_STEP": str(fault.step),
        "LAB_STEPS": str(fault.steps), "LAB_WORKDIR": str(work), "LAB_PG_TIMEOUT": "10",
        "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1", "TZ": "UTC",
    })
    env.update(dict(fault.job_env))
    return env


def _wait_marker(work: Path, ranks: Iterable[int], proc: subprocess.Popen[bytes] | None,
                 timeout: float, alive: Any = None) -> dict[int, int]:
    deadline = time.monotonic() + timeout
    want = list(ranks)
    while time.monotonic() < deadline:
        found = {}
        for r in want:
            m = work / f"marker-rank{r}"
            with contextlib.suppress(OSError, ValueError):
                found[r] = int(m.read_text())
        if len(found) == len(want):
            return found
        if proc is not None and proc.poll() is not None:
            break
        if alive is not None and not alive():
            break
        time.sleep(0.2)
    raise RuntimeError(f"markers of ranks {want} not written within {timeout}s")


# ---------------------------------------------------------------- memory cgroup (v1) + kernel log

MEMCG_V1 = Path("/sys/fs/cgroup/memory")
CGROUP_V2 = Path("/sys/fs/cgroup")


def memcg_unavailable() -> str | None:
    """Why a memory cgroup cannot be made here (None when it can: cgroup v1 memory, or v2 with +memory)."""
    if (MEMCG_V1 / "memory.limit_in_bytes").is_file():
        return None if os.access(MEMCG_V1, os.W_OK) else f"{MEMCG_V1} is not writable (needs root)"
    ctl = CGROUP_V2 / "cgroup.subtree_control"
    if ctl.is_file():
        if "memory" in ctl.read_text().split() and os.access(CGROUP_V2, os.W_OK):
            return None
        return "cgroup v2 without the memory controller delegated to /sys/fs/cgroup"
    return "no memory cgroup hierarchy under /sys/fs/cgroup"


def _make_memcg(fault: Fault) -> Path:
    v1 = (MEMCG_V1 / "memory.limit_in_bytes").is_file()
    cg = (MEMCG_V1 if v1 else CGROUP_V2) / f"lab-{fault.name}-{os.getpid()}"
    if not cg.is_dir():
        cg.mkdir()
    (cg / ("memory.limit_in_bytes" if v1 else "memory.max")).write_text(str(fault.memcg_limit))
    if not v1:
        (cg / "memory.swap.max").write_text("0")
    return cg


def _memcg_oom_kills(cg: Path) -> int | None:
    """How many processes the memory cgroup's OOM killer killed (cgroup v2 `memory.events`, v1 `memory.oom_control`:
    `oom_kill N`), None where the kernel does not count them. A memcg fault whose limit killed nothing did not fire:
    seen in CI once beside the whole lab (rank 1's leak outlasted by its peers' gloo timeout while the kernel reclaimed,
    no OOM record in the kernel log), the lab's failure, not the fault's: run again (`NotFired`)."""
    for name in ("memory.events", "memory.oom_control"):
        f = cg / name
        if f.is_file():
            for line in f.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and value.strip().isdigit():
                    return int(value)
    return None


def _remove_cgroup(cg: Path) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            cg.rmdir()
            return
        except OSError:
            time.sleep(0.3)  # the last processes are still leaving


PIDS_V1 = Path("/sys/fs/cgroup/pids")


def pids_cgroup_unavailable() -> str | None:
    """Why a pids cgroup (v1) cannot be made here (None when it can)."""
    if not (PIDS_V1 / "cgroup.procs").is_file():
        return f"no cgroup v1 pids hierarchy at {PIDS_V1}"
    return None if os.access(PIDS_V1, os.W_OK) else f"{PIDS_V1} is not writable (needs root)"


def _make_pids_cgroup(fault: Fault) -> Path:
    """An empty pids cgroup for the fault's rank to join and limit (train.py `pids_limit`), as a container's is."""
    cg = PIDS_V1 / f"lab-{fault.name}-{os.getpid()}"
    if not cg.is_dir():
        cg.mkdir()
    return cg


def _kernel_log(start: float, end: float) -> str:
    """The node's kernel ring buffer (dmesg -T) for the run's window, as a collector would keep it."""
    out = subprocess.run(["dmesg", "-T"], capture_output=True, text=True, check=False,
                         env={**os.environ, "TZ": "UTC", "LC_ALL": "C"}).stdout
    keep = []
    for line in out.splitlines():
        if line.startswith("[") and "]" in line:
            stamp = line[1 : line.index("]")]
            try:
                t = dt.datetime.strptime(stamp, "%a %b %d %H:%M:%S %Y").replace(tzinfo=dt.UTC).timestamp()
            except ValueError:
                continue
            if start - 1 <= t <= end + 1:
                keep.append(line)
    return "\n".join(keep) + ("\n" if keep else "")


def _workload(fault: Fault, jid: str, scheduler: str, node: str, window: tuple[str, str],
              sources: list[dict[str, Any]], **state: str) -> dict[str, Any]:
    """workload.yaml of a lab job on one node: its id, its scheduler, its window, its NPROC ranks, what `state` says
    of its end (terminal_state, exit_code: where no scheduler record tells it), its sources."""
    return {
        "apiVersion": "firstfault/v1",
        "workload": {
            "id": jid,
            "name": f"lab-{fault.name}",
            "scheduler": scheduler,
            "window": {"start": window[0], "end": window[1]},
            "nodes": [node],
            "ranks": {node: f"0-{NPROC - 1}"},
            **state,
            "timezone": "UTC",
        },
        "sources": sources,
    }


def _static_workload(fault: Fault, host: str, t0: float, t1: float, rc: int,
                     sources: list[dict[str, Any]]) -> dict[str, Any]:
    """workload.yaml of a job on this host with no scheduler: its window, its ranks, how the launcher exited."""
    return _workload(fault, f"lab-{fault.name}-{int(t0)}", "static", host, (_utc(t0), _utc(t1 + 1)), sources,
                     terminal_state="COMPLETED" if rc == 0 else "FAILED",
                     exit_code=f"{rc}:0" if rc >= 0 else f"0:{-rc}")


def _host_bundle(fault: Fault, out: Path) -> tuple[str, Path, Path]:
    """A fresh bundle for a job on this host, its expected.yaml written before the job starts, and its workdir."""
    out = out.resolve()
    host = socket.gethostname()
    bundle = out / fault.name
    work = out / ".work" / fault.name
    if bundle.exists():
        shutil.rmtree(bundle)
    (bundle / "nodes" / host).mkdir(parents=True)
    _write_yaml(bundle / "expected.yaml", fault.expected(host))
    _prepare_workdir(fault, work)
    return host, bundle, work


# ---------------------------------------------------------------- ninth round: storage and network under the job


def under_job_unavailable(fault: Fault) -> str | None:
    """Why the storage or network a fault makes under its job cannot be made on this host (None when it can, or when
    the fault makes none): bindfs (FUSE), losetup and mkfs.ext4 (a loop device), iptables and ss (the firewall
    rules), /dev/fuse, /dev/loop-control, root."""
    fuse = fault.fuse_data or fault.loop_checkpoint == "fuse"
    need = [*(["bindfs"] if fuse else []), *(["losetup", "mkfs.ext4"] if fault.loop_checkpoint else []),
            *(["iptables", "ip6tables", "ss"] if fault.drop_rank_ports else [])]
    if not need:
        return None
    missing = [t for t in need if shutil.which(t) is None]
    if missing:
        return f"{', '.join(missing)} not installed (scripts/ci/install-servers.sh: bindfs, iptables)"
    if fuse and not Path("/dev/fuse").exists():
        return "no /dev/fuse on this host"
    if fault.loop_checkpoint and not Path("/dev/loop-control").exists():
        return "no loop devices on this host (/dev/loop-control)"
    if os.geteuid() != 0:
        return "needs root (mount, losetup, iptables)"
    return None


def _sh(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


class UnderJob:
    """What the driver makes under a job and takes down after it: FUSE daemons (bindfs) and their mounts, an ext4 on a
    loop device for the checkpoints, firewall rules on a rank's ports."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.fuse: list[tuple[subprocess.Popen[bytes], Path]] = []
        self.loop = ""
        self.tmpfs: Path | None = None
        self.rules: list[tuple[str, ...]] = []

    def fuse_mount(self, src: Path, dst: Path) -> None:
        """`dst` serves `src` through a FUSE daemon of its own (bindfs in the foreground: its pid is the daemon)."""
        dst.mkdir()
        p = subprocess.Popen(["bindfs", "-f", str(src), str(dst)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        self.fuse.append((p, dst))
        deadline = time.monotonic() + 10
        while not os.path.ismount(dst):
            if p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"bindfs did not mount {dst} (exit {p.poll()})")
            time.sleep(0.05)

    def loop_checkpoint(self, kind: str) -> None:
        """An ext4 on a loop device at work/ckpt-loop, its 64 MiB image served by a FUSE daemon ("fuse") or sparse on
        a 4 MiB tmpfs ("thin": the file system shows room its backing store does not have)."""
        blk = self.work / "blk"
        blk.mkdir()
        if kind == "thin":
            _sh("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(blk))
            self.tmpfs = blk
        image = blk / "disk.img"
        with open(image, "wb") as f:
            f.truncate(64 << 20)
        _sh("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", str(image))
        if kind == "fuse":
            self.fuse_mount(blk, self.work / "blk-fuse")
            image = self.work / "blk-fuse" / "disk.img"
        self.loop = _sh("losetup", "-f", "--show", str(image)).strip()
        (self.work / "ckpt-loop").mkdir()
        _sh("mount", self.loop, str(self.work / "ckpt-loop"))

    def kill_fuse(self) -> list[int]:
        pids = [p.pid for p, _ in self.fuse]
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        return pids

    def drop_ports(self, pid: int) -> list[str]:
        """Drops every TCP packet to and from the local ports of process `pid`'s connections (lo, both ways, IPv4 and
        IPv6), as a firewall rule applied to a node mid-run does; returns the ports."""
        ports = sorted({line.split()[3].rsplit(":", 1)[1] for line in _sh("ss", "-tnpH").splitlines()
                        if f"pid={pid}," in line and len(line.split()) > 4}, key=int)
        for port in ports:
            for tool in ("iptables", "ip6tables"):
                for side in ("--dport", "--sport"):
                    rule = (tool, "INPUT", "-i", "lo", "-p", "tcp", side, port, "-j", "DROP")
                    _sh(rule[0], "-I", *rule[1:])
                    self.rules.append(rule)
        return ports

    def close(self) -> None:
        for rule in self.rules:
            subprocess.run([rule[0], "-D", *rule[1:]], check=False, capture_output=True)
        _umount(self.work / "ckpt-loop")
        if self.loop:
            subprocess.run(["losetup", "-d", self.loop], check=False, capture_output=True)
        for p, dst in self.fuse:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGKILL)
            p.wait()
            subprocess.run(["umount", "-l", str(dst)], check=False, capture_output=True)
        if self.tmpfs is not None:
            _umount(self.tmpfs)


# ---------------------------------------------------------------- torchrun


def _store_server(port: int) -> subprocess.Popen[bytes]:
    """The c10d rendezvous's store in a process of its own on `port` (as etcd serves the etcd backend), so that it
    outlives the agent that would host it: the agents are given `is_host=false`."""
    code = ("import sys, time; from torch.distributed import TCPStore; "
            "s = TCPStore('127.0.0.1', int(sys.argv[1]), is_master=True, wait_for_workers=False); time.sleep(86400)")
    proc = subprocess.Popen([_python(), "-c", code, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    _wait_listening(port, proc, 120)
    return proc



def run_torchrun(fault: Fault, out: Path) -> RunResult:
    host, bundle, work = _host_bundle(fault, out)
    logdir = work / "torchrun-logs"
    port = _free_port()
    rdzv = [a.replace("{port}", str(port)) for a in fault.rdzv] or ["--standalone"]
    holder = _hold_port(port) if fault.occupy_port else None
    store = _store_server(port) if fault.late_agent else None
    lock = _hold_lock(work / fault.hold_lock) if fault.hold_lock else None
    cmd = [*_torchrun(), f"--nproc-per-node={NPROC}", *rdzv, "--log-dir", str(logdir),
           "--redirects", "3", "--tee", "3", *([f"--max-restarts={fault.max_restarts}"] if fault.max_restarts else []),
           str(TRAIN)]
    memcg = _make_memcg(fault) if fault.memcg_limit else None
    pids_cg = _make_pids_cgroup(fault) if fault.pids_cgroup else None
    env = _env(fault, work)
    if pids_cg is not None:
        env["LAB_PIDS_CGROUP"] = str(pids_cg)
    under = UnderJob(work)
    try:
        if fault.fuse_data:  # the ranks read their shards through a FUSE mount of the data directory
            under.fuse_mount(work / "data", work / "data-fuse")
            env["LAB_DATA_DIR"] = str(work / "data-fuse")
        if fault.loop_checkpoint:
            under.loop_checkpoint(fault.loop_checkpoint)
    except BaseException:
        under.close()
        raise
    t0 = time.time()
    detail = ""
    with open(bundle / "nodes" / host / "torchrun.log", "wb") as log:
        if memcg is not None:  # the shell joins the cgroup, then becomes torchrun: every rank is born inside
            cmd = ["sh", "-c", f'echo $$ > {memcg / "cgroup.procs"} && exec "$@"', "sh", *cmd]
        if fault.drop_dac_override:  # file modes bind the job as they bind a user who is not root
            cmd = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--", *cmd]
        if fault.shm_size:  # a private mount namespace with a small /dev/shm, as a container has
            cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                   f'mount -t tmpfs -o size={fault.shm_size} tmpfs /dev/shm && exec "$@"', "sh", *cmd]
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=work,
                                start_new_session=True)
        try:
            if fault.kill_from_outside:
                pids = _wait_marker(work, [int(r) for r in fault.ranks.split(",")], proc, fault.timeout)
                targets = [proc.pid] if fault.signal_agent else list(pids.values())
                for pid in targets:
                    os.kill(pid, fault.outside_signal)
                detail = f"kill -{fault.outside_signal} {' '.join(map(str, targets))}"
            if fault.kill_fuse_at_marker or fault.drop_rank_ports or fault.loop_checkpoint:
                # the fault ranks paused (train.py `pause`): act under them, then let them go on
                pids = _wait_marker(work, [int(r) for r in fault.ranks.split(",")], proc, fault.timeout)
                if fault.kill_fuse_at_marker:
                    detail = f"kill -9 FUSE daemon {' '.join(map(str, under.kill_fuse()))}; "
                    time.sleep(0.5)
                if fault.drop_rank_ports:
                    ports = [p for pid in pids.values() for p in under.drop_ports(pid)]
                    detail = f"iptables DROP lo tcp ports {' '.join(ports)}; "
                (work / "go").write_text("")
            rc = proc.wait(fault.timeout)
            if fault.late_agent:  # the job's second agent, late: the first one's group failed and it left
                with open(bundle / "nodes" / host / "torchrun-agent2.log", "wb") as log2:
                    late = subprocess.Popen([a.replace(str(logdir), str(logdir) + "-agent2") for a in cmd],
                                            stdout=log2, stderr=subprocess.STDOUT, env=env, cwd=work,
                                            start_new_session=True)
                    rc2 = late.wait(fault.timeout)
                detail = f"late agent exit {rc2}; "
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        finally:
            _umount(work / "ckpt-small")
            under.close()
            if holder is not None:
                holder.close()
            if store is not None:
                store.kill()
                store.wait()
            if lock is not None:
                lock.close()  # closing the descriptor releases the flock
            if pids_cg is not None:
                _remove_cgroup(pids_cg)  # empty once the job's processes are gone
    t1 = time.time()
    sources: list[dict[str, Any]] = []
    if memcg is not None:
        detail = f"torchrun exit {rc} in memory cgroup {memcg.name}"
        kills = _memcg_oom_kills(memcg)
        _remove_cgroup(memcg)
        if kills == 0:
            raise NotFired(f"the memory cgroup's limit killed nothing (oom_kill 0; torchrun exit {rc})")
    if memcg is not None or fault.kernel_log:
        kern = _kernel_log(t0, t1 + 1)
        (bundle / "nodes" / host / "kern.log").write_text(kern)
        sources.append({"kind": "kernel", "path": "nodes/{node}/kern.log"})
    runs = sorted(p for p in logdir.iterdir() if p.is_dir()) if logdir.is_dir() else []
    if runs:
        shutil.copytree(runs[-1], bundle / "torchrun-logs")
    attempts = sorted(p.name for p in (bundle / "torchrun-logs").glob("attempt_*")) or ["attempt_0"]
    workload = _static_workload(fault, host, t0, t1, rc, [
        *sources,
        *({"kind": "application", "path": f"torchrun-logs/{a}/{{rank}}/{std}.log"}
          for a in attempts for std in ("stdout", "stderr")),
        {"kind": "application", "path": "nodes/{node}/torchrun.log"},
        *([{"kind": "application", "path": "nodes/{node}/torchrun-agent2.log"}] if fault.late_agent else []),
    ])
    _write_yaml(bundle / "workload.yaml", workload)
    shutil.rmtree(work, ignore_errors=True)
    return RunResult(fault.name, bundle, t1 - t0, f"{detail}torchrun exit {rc}" if detail.endswith("; ")
                     else detail or f"torchrun exit {rc}")


# ---------------------------------------------------------------- mpirun, Lightning, JAX, Ray

# Open MPI refuses root unless both are set; vader's single-copy (CMA) needs ptrace rights a container
# may lack, so the copy-in/copy-out path is used (Open MPI prints a warning otherwise).
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}


def _launches(fault: Fault, host: str, port: int) -> list[tuple[list[str], dict[str, str], str]]:
    """(argv, extra environment, log path in the bundle) of each process the driver starts for `fault`."""
    py = _python()
    if fault.mode == "mpirun":
        argv = [shutil.which("mpirun") or "mpirun", "--allow-run-as-root",
                *(["--oversubscribe"] if fault.oversubscribe else []), "--tag-output",
                "-np", str(NPROC), *(["--hostfile", "hostfile"] if fault.hostfile else []),
                *fault.launcher_opts, py, "-m", "mpi4py", str(HERE / "mpi_job.py")]
        return [(argv, MPI_ENV, f"nodes/{host}/mpirun.log")]
    if fault.mode == "lightning":
        return [([py, str(HERE / "lightning_job.py")], {}, f"nodes/{host}/lightning.log")]
    if fault.mode == "ray":
        # the workers unpickle the training loop, which imports jobenv: its folder goes on their path
        env = {"RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": str(HERE)}
        return [([py, str(HERE / "ray_job.py")], env, f"nodes/{host}/ray-driver.log")]
    if fault.mode == "accelerate":
        # HF_HOME: no `accelerate config` file of this machine's user may change the launch
        argv = [*_console("accelerate", "accelerate.commands.accelerate_cli"), "launch", "--multi_gpu",
                "--num_processes", str(NPROC), "--num_machines", "1", "--mixed_precision", "no",
                "--dynamo_backend", "no", "--main_process_port", str(port), str(HERE / "accelerate_job.py")]
        return [(argv, {"HF_HOME": "hf-home"}, f"nodes/{host}/accelerate.log")]
    if fault.mode == "deepspeed":
        # no hostfile (/job/hostfile): this host only; the CPU accelerator (gloo without oneCCL's bindings)
        # a fault's hostfile (its hosts, `slots=N`) replaces --num_gpus, as a multi-node launch gives it
        hosts = ["--hostfile", "hostfile"] if fault.hostfile else ["--num_gpus", str(NPROC)]
        argv = [*_console("deepspeed", "deepspeed.launcher.runner"), *hosts, "--master_port",
                str(port), str(HERE / "deepspeed_job.py")]
        return [(argv, {"DS_ACCELERATOR": "cpu", "PYTHONPATH": str(HERE)}, f"nodes/{host}/deepspeed.log")]
    if fault.mode == "dask":
        return _dask_launches(fault, host, port)
    if fault.mode == "jax":
        env = {"WORLD_SIZE": str(NPROC), "JAX_COORDINATOR_ADDRESS": f"127.0.0.1:{port}", "JAX_PLATFORMS": "cpu"}
        return [([py, str(HERE / "jax_job.py")], {**env, "RANK": str(r)}, f"nodes/{host}/jax-rank{r}.log")
                for r in range(NPROC)]
    raise ValueError(f"{fault.name}: no launcher for mode {fault.mode!r}")


def _remove_ds_shm(port: int, shm: Path = Path("/dev/shm")) -> None:
    """DeepSpeed's CPU all-reduce workspace (deepspeed/ops/csrc/cpu/comm/shm.cpp: a POSIX shared-memory file per rank,
    `/dev/shm/deepspeed_allreduce_buffer_<uid>_<MASTER_ADDR>_<MASTER_PORT>_<rank>`, about 69 MB each) is never
    unlinked when the ranks end, killed or not: each run of the lab left 200 MB in /dev/shm, which is memory, until a
    full test tier's ran the machine low enough that Ray's memory monitor killed another fault's workers. The run's
    own files (its master port) go once its processes have."""
    for f in shm.glob(f"deepspeed_allreduce_buffer_{os.getuid()}_*_{port}_*"):
        with contextlib.suppress(OSError):
            f.unlink()


DASK_WORKERS = 3


def _dask_launches(fault: Fault, host: str, port: int) -> list[tuple[list[str], dict[str, str], str]]:
    """A Dask cluster as a batch script starts it: `dask scheduler` on `port`, 3 `dask worker`s (each under its nanny,
    one thread, --memory-limit where the fault sets one), then the client, `python lab/dask_job.py`; each with its own
    log under nodes/<host>/. The scheduler and the workers are the job's services: the driver starts the client once
    the scheduler listens and stops the services once the client has ended (`run_local`). A stale port
    (`stale_scheduler_port`) is one nothing listens on."""
    dask = _console("dask", "dask")
    address = f"tcp://127.0.0.1:{_free_port() if fault.stale_scheduler_port else port}"
    env = {"PYTHONPATH": str(HERE), "DASK_DISTRIBUTED__WORKER__DAEMON": "False", "DASK_SCHEDULER_ADDRESS": address}
    launches = [([*dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], env,
                 f"nodes/{host}/dask-scheduler.log")]
    limit = ["--memory-limit", fault.worker_memory_limit] if fault.worker_memory_limit else []
    launches += [([*dask, "worker", address, "--name", f"worker-{r}", "--nthreads", "1", *limit, "--no-dashboard",
                   "--local-directory", f"dask-worker-space-{r}"], env, f"nodes/{host}/dask-worker-{r}.log")
                 for r in range(DASK_WORKERS)]
    launches.append(([_python(), str(HERE / "dask_job.py")], env, f"nodes/{host}/dask-client.log"))
    return launches


LOCAL_LOGS: dict[str, str | tuple[str, ...]] = {
              "mpirun": "nodes/{node}/mpirun.log", "lightning": "nodes/{node}/lightning.log",
              "ray": "nodes/{node}/ray-driver.log", "jax": "nodes/{node}/jax-rank{rank}.log",
              "accelerate": "nodes/{node}/accelerate.log", "deepspeed": "nodes/{node}/deepspeed.log",
              "dask": ("nodes/{node}/dask-scheduler.log", "nodes/{node}/dask-worker-{rank}.log",
                       "nodes/{node}/dask-client.log")}


class NotFired(RuntimeError):
    """The job ended, or stalled, before its fault fired: the lab's own failure, not the fault's."""


class HelpLost(NotFired):
    """Open MPI's mpirun lost a rank's help message: the fault's evidence may not be in the run (`_help_lost`)."""


def _help_lost(log: Path) -> bool:
    """Whether Open MPI's mpirun lost what its ranks had to say: Open MPI 4.1.4's mpirun at times fails to unpack a
    rank's help message (`ORTE_ERROR_LOG: Data unpack would read past end of buffer in file .../show_help.c`), the
    message itself gone: seen in CI on mpirun_btl_missing, whose component error is only in that message; here 12
    of 24 runs three at a time, 16 of 24 without --tag-output, 13 of 24 with orte_base_help_aggregate=0, 7 of 24
    with a TMPDIR each, 0 of 12 one at a time on a busy machine, and now and then one at a time beside the test
    suite. A run whose log has those lines and no help message left (no `-----` frame) did not record its fault as
    a user's run of it mostly does (the lost message is the cause the fault makes): the lab's launcher failed, not
    the fault, and the run is made again (`run_many`)."""
    text = log.read_text(errors="replace") if log.exists() else ""
    return "ORTE_ERROR_LOG" in text and "show_help.c" in text and "-" * 40 not in text


def _fired(work: Path, fault: Fault, procs: list[subprocess.Popen[bytes]]) -> dict[int, int]:
    """The pids in the fault ranks' markers, once every one is written."""
    try:
        return _wait_marker(work, [int(r) for r in fault.ranks.split(",")], None, fault.timeout,
                            alive=lambda: all(p.poll() is None for p in procs))
    except RuntimeError as exc:
        raise NotFired(str(exc)) from exc


def _wait_listening(port: int, proc: subprocess.Popen[bytes], timeout: float) -> None:
    """Waits until something accepts connections on 127.0.0.1:`port` (a server that `proc` starts)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.closing(socket.socket()) as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"nothing listens on port {port} within {timeout:.0f}s (exit {proc.poll()})")


def _stop_services(procs: list[subprocess.Popen[bytes]]) -> None:
    """Stops a job's services as its batch script's clean-up does: SIGTERM to each, SIGKILL 10 s later; the workers
    first, then the scheduler, so that none says its scheduler went away."""
    for p in reversed(procs):
        with contextlib.suppress(ProcessLookupError):
            os.kill(p.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(10)


def run_local(fault: Fault, out: Path) -> RunResult:
    """A new launcher's job on this host (mpirun, Lightning's own launcher, JAX's processes, a Ray driver)."""
    if fault.mode == "tf":
        return run_tf(fault, out)
    host, bundle, work = _host_bundle(fault, out)
    base_env = _env(fault, work)
    procs: list[subprocess.Popen[bytes]] = []
    t0 = time.time()
    detail = ""
    port = _free_port()
    try:
        launches = _launches(fault, host, port)
        for n, (argv, extra, log) in enumerate(launches):
            if fault.mode == "dask" and n == len(launches) - 1:
                _wait_listening(port, procs[0], fault.timeout)  # as a batch script waits for its scheduler
            with open(bundle / log, "wb") as f:
                procs.append(subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, env={**base_env, **extra},
                                              cwd=work, start_new_session=True))
        if fault.kill_from_outside:
            pids = _fired(work, fault, procs)
            for pid in pids.values():
                os.kill(pid, fault.outside_signal)
            detail = f"kill -{fault.outside_signal} {' '.join(map(str, pids.values()))}; "
        if fault.term_after_marker is not None:
            _fired(work, fault, procs)
            time.sleep(fault.term_after_marker)
            # as `timeout --kill-after=5` does: SIGTERM, and SIGKILL for what is still there 5 s later (JAX's
            # preemption notifier takes SIGTERM as a notice to checkpoint and goes on)
            for sig in (signal.SIGTERM, signal.SIGKILL):
                for p in procs:
                    with contextlib.suppress(ProcessLookupError):
                        if p.poll() is None:
                            os.kill(p.pid, sig)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    for p in procs:
                        p.wait(5)
            pids_ = " ".join(str(p.pid) for p in procs)
            detail = f"kill -15, then -9, {pids_} {fault.term_after_marker:g}s into the hang; "
        deadline = time.monotonic() + fault.timeout
        if fault.mode == "dask":  # the client is the job; then the clean-up stops the scheduler and the workers
            rcs = [procs[-1].wait(fault.timeout)]
            _stop_services(procs[:-1])
        else:
            rcs = [p.wait(max(1.0, deadline - time.monotonic())) for p in procs]
    finally:
        _end_groups(procs)  # what a launcher left behind (a Ray daemon, an orphaned rank) goes with it
        if fault.mode == "deepspeed":
            _remove_ds_shm(port)
    t1 = time.time()
    rc = next((c for c in rcs if c != 0), 0)
    # seen on a loaded machine: Ray's node timed out during start-up, before any rank ran a step
    _fired_or_raise(fault, work, "ranks", rcs)
    if fault.mode == "mpirun" and _help_lost(bundle / str(LOCAL_LOGS["mpirun"]).format(node=host)):
        raise HelpLost("mpirun lost its ranks' help messages (ORTE_ERROR_LOG in show_help.c, no message left)")
    logs = LOCAL_LOGS[fault.mode]
    workload = _static_workload(fault, host, t0, t1, rc, [{"kind": "application", "path": path}
                                                          for path in ([logs] if isinstance(logs, str) else logs)])
    _write_yaml(bundle / "workload.yaml", workload)
    shutil.rmtree(work, ignore_errors=True)
    return RunResult(fault.name, bundle, t1 - t0, f"{detail}{fault.mode} exit {' '.join(map(str, rcs))}")


# ---------------------------------------------------------------- slurm


def _sbatch_script(fault: Fault, work: Path, bundle: Path, port: int) -> str:
    srun = ["srun", *fault.srun_opts, *([f"--task-prolog={work}/task-prolog.sh"] if fault.task_prolog else [])]
    if fault.slurm_output == "label":
        srun.append("--label")
    else:
        srun.append(f"--output={bundle}/app/rank-%t.log")
    env = _env(fault, work)
    exports = " ".join(f"{k}={env[k]}" for k in env if k.startswith("LAB_") or k in (
        "OMP_NUM_THREADS", "PYTHONUNBUFFERED", "TZ"))
    master = "" if fault.omit_master_env else f"export MASTER_ADDR=127.0.0.1 MASTER_PORT={port}\n"
    # an array job: the fault fires in one of its tasks, the others run clean
    array = (f"#SBATCH --array={fault.array}\n", f'[ "$SLURM_ARRAY_TASK_ID" = {fault.array_task} ] || '
             "export LAB_FAULT=none\n") if fault.array else ("", "")
    return f"""#!/bin/bash
#SBATCH --job-name=lab-{fault.name}
#SBATCH --ntasks={NPROC}
{array[0]}{master}export {exports}
{array[1]}echo "lab: job $SLURM_JOB_ID on $SLURMD_NODENAME, {NPROC} tasks, fault {fault.name}"
{' '.join(srun)} {fault.python or _python()} {TRAIN}
"""


def run_slurm(fault: Fault, out: Path, cluster: Any) -> RunResult:
    out = out.resolve()
    bundle = out / fault.name
    work = out / ".work" / fault.name
    if bundle.exists():
        shutil.rmtree(bundle)
    (bundle / "scheduler").mkdir(parents=True)
    if fault.slurm_output == "per-task":
        (bundle / "app").mkdir()
    node = cluster.node
    _write_yaml(bundle / "expected.yaml", fault.expected(node))
    _prepare_workdir(fault, work)
    script = _sbatch_script(fault, work, bundle, _free_port())
    opts = [f"--output={bundle}/slurm-%A_%a.out" if fault.array else f"--output={bundle}/slurm-%j.out",
            *fault.sbatch_opts]
    if fault.mem:
        opts.append(f"--mem={fault.mem}")
    t0 = time.time()
    jid = cluster.run("sbatch", "--parsable", *opts, input=script).stdout.strip().split(";")[0]
    detail = f"job {jid}"
    try:
        if fault.scancel_at_marker or fault.admin_at_marker:
            _wait_marker(work, range(NPROC), None, fault.timeout,
                         alive=lambda: cluster.state(jid) not in harness_terminal())
        if fault.scancel_at_marker:
            cluster.run("scancel", *fault.scancel_opts, jid)
            detail += f", scancel {' '.join(fault.scancel_opts)}".rstrip()
        for cmd in fault.admin_at_marker:
            args = [a.format(node=node, jobid=jid) for a in cmd]
            cluster.run("scontrol", *args)
            detail += f", scontrol {' '.join(args)}"
        if fault.admin_at_marker:
            time.sleep(1)  # slurmctld acts on the job (or leaves it be) before the ranks go on
            (work / "go").write_text("")
        if fault.array:
            state = _wait_array(cluster, jid, fault.timeout)
        elif fault.ends_held:
            # a failed prolog requeues the batch job held: it would wait in the queue for ever; once held (its
            # records and the node's reason taken below), the driver cancels it, as its owner would
            state = _wait_held(cluster, jid, fault.timeout)
        else:
            state = cluster.wait_state(jid, timeout=fault.timeout)
        # the steps' records land a moment after the allocation's
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            sacct = cluster.run("sacct", "-P", "-j", jid, "-o", SACCT_COLS).stdout
            if "Unknown" not in sacct and "RUNNING" not in sacct:
                break
            time.sleep(0.5)
    except BaseException:
        cluster.run("scancel", jid, check=False)
        raise
    finally:
        _umount(work / "ckpt-small")
        for cmd in fault.admin_after:
            cluster.run("scontrol", *(a.format(node=node, jobid=jid) for a in cmd), check=False)
    detail += f", {state}"
    if fault.ends_held:
        scontrol = cluster.run("scontrol", "show", "job", jid, check=False).stdout
        cluster.run("scancel", jid, check=False)
        (bundle / "scheduler" / "scontrol.txt").write_text(scontrol)
    (bundle / "scheduler" / "sacct.txt").write_text(sacct)
    # right after the end scontrol still says JobState=COMPLETING (KillWait, epilog); take it once settled
    deadline = time.monotonic() + 20
    while not fault.ends_held:
        scontrol = cluster.run("scontrol", "show", "job", jid, check=False).stdout
        if "JobState=COMPLETING" not in scontrol or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    if scontrol.strip():
        (bundle / "scheduler" / "scontrol.txt").write_text(scontrol)
    # where the site's Prolog or Epilog ran: the node's record (`scontrol show node`, its Reason= once slurmctld
    # drained it), as an operator looks at it
    node_record = fault.slurm_profile in NODE_PROGRAM_PROFILES
    if node_record:
        (bundle / "scheduler" / "scontrol-node.txt").write_text(
            cluster.run("scontrol", "show", "node", node, check=False).stdout)
    # the job's allocation rows: the job's own, or an array's tasks (N_0, N_1, ...)
    job_lines = [ln.split("|") for ln in sacct.splitlines()
                 if ln.split("|")[0] == jid or re.fullmatch(rf"{jid}_\d+", ln.split("|")[0])]
    rows = [dict(zip(SACCT_COLS.split(","), line, strict=False)) for line in job_lines]
    starts = sorted(r["Start"] for r in rows if r.get("Start", "Unknown") != "Unknown")
    ends = sorted(r["End"] for r in rows if r.get("End", "Unknown") != "Unknown")
    start = starts[0] + "Z" if starts else _utc(t0)
    end = ends[-1] + "Z" if ends else _utc(time.time())
    outputs = ([f"slurm-{r['JobID']}.out" for r in rows] if fault.array else [f"slurm-{jid}.out"])
    sources: list[dict[str, Any]] = [
        {"kind": "application", "path": out_file, "rank_prefix": "srun" if fault.slurm_output == "label"
         else "none"} for out_file in outputs
    ]
    if fault.slurm_output == "per-task":
        sources.append({"kind": "application", "path": "app/rank-{rank}.log"})
    sources.append({"kind": "scheduler", "path": "scheduler/sacct.txt", "format": "sacct"})
    if scontrol.strip():
        sources.append({"kind": "scheduler", "path": "scheduler/scontrol.txt", "format": "scontrol"})
    if node_record:
        sources.append({"kind": "syslog", "path": "scheduler/scontrol-node.txt"})
    workload = _workload(fault, jid, "slurm", node, (start, end), sources)
    _write_yaml(bundle / "workload.yaml", workload)
    shutil.rmtree(work, ignore_errors=True)
    return RunResult(fault.name, bundle, time.time() - t0, detail)


# the lab's Slurm profiles whose site Prolog or Epilog fails on the node (lab/slurm.py)
NODE_PROGRAM_PROFILES = ("epilog", "prolog")


def _wait_array(cluster: Any, jid: str, timeout: float) -> str:
    """Waits until every task of array job `jid` has ended (no task left pending: sacct shows them as `N_[1%1]` until
    they start); returns each task's state."""
    deadline = time.monotonic() + timeout
    terminal = harness_terminal()
    while time.monotonic() < deadline:
        out = cluster.run("sacct", "-n", "-P", "-X", "-j", jid, "-o", "JobID,State", check=False).stdout
        rows = [ln.split("|") for ln in out.splitlines() if ln.strip()]
        if rows and all("[" not in r[0] and r[1].split()[0] in terminal for r in rows):
            return ", ".join(f"{r[0]} {r[1]}" for r in rows)
        time.sleep(0.5)
    raise TimeoutError(f"array job {jid} did not end within {timeout:.0f}s")


def _wait_held(cluster: Any, jid: str, timeout: float) -> str:
    """Waits until slurmctld holds job `jid` in the queue (a failed launch or prolog requeues it held:
    `Reason=launch_failed_requeued_held`, priority 0); returns its state and reason as scontrol shows them."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = cluster.run("scontrol", "show", "job", jid, check=False).stdout
        state = re.search(r"JobState=(\S+)", out)
        reason = re.search(r"Reason=(\S+)", out)
        if state and reason and "held" in reason.group(1).lower():
            return f"{state.group(1)} ({reason.group(1)})"
        time.sleep(0.5)
    raise TimeoutError(f"job {jid} was not held within {timeout:.0f}s")


def harness_terminal() -> frozenset[str]:
    from tests.harness.slurm_harness import TERMINAL

    return TERMINAL


# ---------------------------------------------------------------- all


def select(names: Iterable[str] | None = None, mode: str = "all") -> list[Fault]:
    chosen = [FAULTS[n] for n in names] if names else list(FAULTS.values())
    return [f for f in chosen if mode == "all" or f.mode == mode]


def lane_of(f: Fault) -> str:
    """The lane a fault runs in: its own, else "kernel-log" for the faults whose bundle keeps the node's kernel log
    for the run's window (one run's kernel lines, a loop device's errors or an OOM kill, must not land in another's:
    the first run of the ninth round's two loop-device faults, side by side, had both in each), "mpirun" for
    Open MPI's jobs (two mpiruns side by side on one host garble each other's help messages: Open MPI 4.1.4's mpirun
    then prints only `ORTE_ERROR_LOG: Data unpack would read past end of buffer in file .../show_help.c`, the rank's
    own message lost; seen in CI on mpirun_btl_missing, and in 12 of 24 runs three at a time here, 0 of 12 alone)."""
    return f.lane or ("kernel-log" if f.kernel_log or f.memcg_limit else "mpirun" if f.mode == "mpirun" else "")


def run_many(faults: list[Fault], out: Path, workers: int = 2, clusters: dict[str, Any] | None = None,
             on_done: Any = None) -> list[RunResult]:
    """Run faults, `workers` at a time; the slow sleepers (time limit) start first.

    `clusters` maps a Slurm profile ("harness", "jobacct", "cgroup": lab/slurm.py) to a running cluster."""
    clusters = clusters or {}
    from concurrent.futures import ThreadPoolExecutor

    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    order = sorted(faults, key=lambda f: -f.timeout)

    def one(f: Fault) -> RunResult:
        t0 = time.monotonic()
        try:
            if f.mode in LOCAL_MODES:
                try:
                    r = run_local(f, out)
                except NotFired as exc:
                    # as for a stuck torchrun run: the job broke before its fault fired (seen on a loaded
                    # machine: Ray's node timed out during start-up), the lab's failure: once more, and say so; a
                    # help message mpirun lost (`_help_lost`, at times one run in two on a loaded machine) up to
                    # five times more
                    tries = 6 if isinstance(exc, HelpLost) else 2
                    for n in range(2, tries + 1):
                        try:
                            r = run_local(f, out)
                            break
                        except HelpLost:
                            if n == tries:
                                raise
                    r.detail = f"{r.detail} (try {n}: {exc})"
            elif f.mode == "torchrun":
                try:
                    r = run_torchrun(f, out)
                except subprocess.TimeoutExpired:
                    # A run that outlives its limit (seen once in CI on a loaded machine: every rank
                    # silent, no fault fired yet) is the lab's own failure, not the fault's: run it once more
                    # and say so. A second stuck run is an error as before.
                    r = run_torchrun(f, out)
                    r.detail = f"{r.detail} (second try: the first run was stuck past {f.timeout:.0f}s)"
                except NotFired as exc:  # a memory cgroup's limit that killed nothing (`_memcg_oom_kills`): the same
                    r = run_torchrun(f, out)
                    r.detail = f"{r.detail} (second try: {exc})"
            elif f.mode == "sge":  # twelfth round: the lab's Grid Engine (lab/sge.py)
                if "sge" not in clusters:
                    raise RuntimeError(f"{f.name}: needs the lab's Grid Engine (lab/sge.py)")
                r = run_sge(f, out, clusters["sge"])
            else:
                c = clusters.get(f.slurm_profile)
                if c is None:
                    raise RuntimeError(f"{f.name}: needs a Slurm cluster of profile {f.slurm_profile!r}")
                r = run_slurm(f, out, c)
        except Exception as exc:  # one broken run must not hide the others
            r = RunResult(f.name, out / f.name, time.monotonic() - t0, error=f"{type(exc).__name__}: {exc}")
        if on_done:
            on_done(r)
        return r

    # the time-limit job only sleeps: it gets its own thread so it never holds up a CPU-bound slot; so does
    # each lane (faults that share a Slurm node they act on, or that each start a Ray cluster), whose faults
    # run one after the other
    sleepers = [f for f in order if f.name == "slurm_time_limit"]
    lanes: dict[str, list[Fault]] = {}
    for f in order:
        if lane_of(f):
            lanes.setdefault(lane_of(f), []).append(f)
    rest = [f for f in order if f not in sleepers and not lane_of(f)]

    def lane(faults: list[Fault]) -> list[RunResult]:
        return [one(f) for f in faults]

    with ThreadPoolExecutor(max_workers=workers + len(sleepers) + len(lanes)) as pool, \
            ThreadPoolExecutor(max_workers=workers) as cpu:
        futs = [pool.submit(lane, [f]) for f in sleepers] + [pool.submit(lane, fs) for fs in lanes.values()]
        futs += [cpu.submit(lane, [f]) for f in rest]
        results = [r for fu in futs for r in fu.result()]
    shutil.rmtree(out / ".work", ignore_errors=True)
    return results


# ---------------------------------------------------------------- twelfth round: TensorFlow's multi-worker workers

TF_STOP_AFTER_FAILURE = 15.0  # seconds from a worker's failed exit to the launch's SIGTERM of the others
TF_KILL_AFTER = 5.0  # then SIGKILL for what is still there (TensorFlow's preemption notifier takes SIGTERM and goes on)
LOCAL_LOGS["tf"] = "nodes/{node}/tf-worker{rank}.log"


def _tf_config(ports: list[int], index: int) -> str:
    """A worker's TF_CONFIG, as a launch script writes it on each host: the cluster's workers and this one's index."""
    import json

    return json.dumps({"cluster": {"worker": [f"127.0.0.1:{p}" for p in ports]},
                       "task": {"type": "worker", "index": index}})


def _tf_wait(procs: list[subprocess.Popen[bytes]], timeout: float) -> tuple[list[int], str]:
    """Waits for the workers as a launch that watches them does (a training operator's TFJob, a script's `wait -n`):
    once one worker has exited with a failure, the others get TF_STOP_AFTER_FAILURE seconds to end by themselves,
    then SIGTERM, then SIGKILL TF_KILL_AFTER seconds later. The exit codes, and what the launch did."""
    deadline = time.monotonic() + timeout
    failed_at: float | None = None
    while time.monotonic() < deadline:
        codes = [p.poll() for p in procs]
        if all(c is not None for c in codes):
            return [int(c) for c in codes if c is not None], ""
        if failed_at is None and any(c not in (None, 0) for c in codes):
            failed_at = time.monotonic()
        if failed_at is not None and time.monotonic() - failed_at >= TF_STOP_AFTER_FAILURE:
            left = [p for p in procs if p.poll() is None]
            for sig in (signal.SIGTERM, signal.SIGKILL):
                for p in left:
                    with contextlib.suppress(ProcessLookupError):
                        if p.poll() is None:
                            os.kill(p.pid, sig)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    for p in left:
                        p.wait(TF_KILL_AFTER)
            return [p.wait() for p in procs], f"the launch ended {' '.join(str(p.pid) for p in left)}; "
        time.sleep(0.2)
    raise subprocess.TimeoutExpired("tf workers", timeout)



def _end_groups(procs: list[subprocess.Popen[bytes]]) -> None:
    """Kill each launched process's group (what it left behind goes with it) and reap the process."""
    for p in procs:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def _fired_or_raise(fault: Fault, work: Path, who: str, rcs: list[int]) -> None:
    """A hang or an outside kill fired only where every rank it names left its marker (a step ran): else NotFired."""
    if fault.train_fault in ("hang", "sigkill_external") and not all(
            (work / f"marker-rank{r}").exists() for r in fault.ranks.split(",")):
        raise NotFired(f"the fault never fired: no marker of {who} {fault.ranks} (exit {rcs})")

def run_tf(fault: Fault, out: Path) -> RunResult:
    """A TensorFlow multi-worker job on this host: one `python lab/tf_job.py` per worker, each with its TF_CONFIG
    (3 workers on 127.0.0.1 ports) and its own log, nodes/<host>/tf-worker<r>.log. `occupy_port`: a leftover process
    listens on the fault worker's port before the job starts. The launch ends the rest once a worker failed
    (`_tf_wait`)."""
    host, bundle, work = _host_bundle(fault, out)
    base_env = {**_env(fault, work), "PYTHONPATH": str(HERE), "CUDA_VISIBLE_DEVICES": ""}
    procs: list[subprocess.Popen[bytes]] = []
    holder: socket.socket | None = None
    t0 = time.time()
    detail = ""
    try:
        ports: list[int] = []
        while len(ports) < NPROC:
            port = _free_port()
            if port not in ports:
                ports.append(port)
        if fault.occupy_port:
            holder = _hold_port(ports[int(fault.ranks.split(",")[0])])
        for r in range(NPROC):
            with open(bundle / LOCAL_LOGS["tf"].format(node=host, rank=r), "wb") as f:
                procs.append(subprocess.Popen([_python(), str(HERE / "tf_job.py")], stdout=f, stderr=subprocess.STDOUT,
                                              env={**base_env, "TF_CONFIG": _tf_config(ports, r)}, cwd=work,
                                              start_new_session=True))
        if fault.kill_from_outside:
            pids = _fired(work, fault, procs)
            for pid in pids.values():
                os.kill(pid, fault.outside_signal)
            detail = f"kill -{fault.outside_signal} {' '.join(map(str, pids.values()))}; "
        rcs, ended = _tf_wait(procs, fault.timeout)
        detail += ended
    finally:
        if holder is not None:
            holder.close()
        _end_groups(procs)
    t1 = time.time()
    rc = next((c for c in rcs if c != 0), 0)
    _fired_or_raise(fault, work, "workers", rcs)
    workload = _static_workload(fault, host, t0, t1, rc, [{"kind": "application", "path": LOCAL_LOGS["tf"]}])
    _write_yaml(bundle / "workload.yaml", workload)
    shutil.rmtree(work, ignore_errors=True)
    return RunResult(fault.name, bundle, t1 - t0, f"{detail}tf exit {' '.join(map(str, rcs))}")


# ---------------------------------------------------------------- twelfth round: Grid Engine (lab/sge.py)
#
# Bundle layout (sge):
#   workload.yaml, expected.yaml
#   nodes/<host>/lab-<fault>.o<jobid>          the job's -o file (the job script's and torchrun's stdout: --tee 3)
#   nodes/<host>/lab-<fault>.e<jobid>          the job's -e file (its stderr)
#   scheduler/qacct.txt                        `qacct -j <jobid>` (format sge-qacct)
#   scheduler/qmaster-messages                 the qmaster's messages file, the job's window (format sge-messages)
#   nodes/<host>/execd-messages                the execd's messages file, the job's window (format sge-messages)


def _qsub_script(fault: Fault, work: Path) -> str:
    env = _env(fault, work)
    exports = " ".join(f"{k}={env[k]}" for k in env if k.startswith("LAB_") or k in (
        "OMP_NUM_THREADS", "PYTHONUNBUFFERED", "TZ"))
    cmd = [*_torchrun(), f"--nproc-per-node={NPROC}", "--standalone", "--log-dir", str(work / "torchrun-logs"),
           "--redirects", "3", "--tee", "3", str(TRAIN)]
    return f"""#!/bin/bash
#$ -N lab-{fault.name}
#$ -pe smp {NPROC}
#$ -cwd
export {exports}
echo "lab: job $JOB_ID on $HOSTNAME, $NSLOTS slots, fault {fault.name}"
{' '.join(cmd)}
"""


def _messages_window(path: Path, start: float, end: float) -> str:
    """The lines of a Grid Engine messages file (`MM/DD/YYYY HH:MM:SS|...`, the daemon's local time: UTC here) in the
    job's window, as a collector keeps a daemon's log for a job."""
    keep = []
    text = path.read_text(errors="replace") if path.is_file() else ""
    for line in text.splitlines():
        try:
            t = dt.datetime.strptime(line[:19], "%m/%d/%Y %H:%M:%S").replace(tzinfo=dt.UTC).timestamp()
        except ValueError:
            continue
        if start - 1 <= t <= end + 2:
            keep.append(line)
    return "\n".join(keep) + ("\n" if keep else "")


def run_sge(fault: Fault, out: Path, cluster: Any) -> RunResult:
    """One job of the lab's Grid Engine (`cluster`: lab.sge.SgeCluster): qsub -sync y of a job script that runs
    torchrun's ranks on this host, its -o / -e files in the bundle; qdel at the ranks' marker where the fault says;
    then the job's qacct record and the daemons' messages for its window."""
    host, bundle, work = _host_bundle(fault, out)
    node_dir = bundle / "nodes" / host
    (bundle / "scheduler").mkdir()
    (work / "job.sh").write_text(_qsub_script(fault, work))
    t0 = time.time()
    qsub = subprocess.Popen(["qsub", "-sync", "y", "-terse", "-o", str(node_dir), "-e", str(node_dir),
                             *fault.qsub_opts, str(work / "job.sh")], env={**cluster.env, "TZ": "UTC"},
                            cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    detail = ""
    try:
        if fault.scancel_at_marker:
            _wait_marker(work, range(NPROC), qsub, fault.timeout)
            jobs = [p.name.rsplit(".o", 1)[1] for p in node_dir.glob(f"lab-{fault.name}.o*")]
            jid = jobs[0] if jobs else ""
            cluster.run("qdel", jid)
            detail = f"qdel {jid}, "
        said, _ = qsub.communicate(timeout=fault.timeout)
    except BaseException:
        qsub.kill()
        cluster.run("qdel", "-f", "-u", "root", check=False)
        raise
    t1 = time.time()
    # -terse prints the job's number alone on a line; -sync y then its end ("Job N exited with exit code 1.")
    jid = next((ln.strip() for ln in said.splitlines() if ln.strip().isdigit()), "")
    if not jid and (m := re.search(r"\b[Jj]ob (\d+)", said)):
        jid = m.group(1)
    ends = [ln.strip() for ln in said.splitlines() if ln.strip() and not ln.strip().isdigit()]
    detail += f"job {jid}: qsub exit {qsub.returncode} ({'; '.join(ends)[:120]})"
    qacct = ""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the accounting record is written as the qmaster learns of the end
        qacct = cluster.run("qacct", "-j", jid, check=False).stdout
        if "exit_status" in qacct:
            break
        time.sleep(0.5)
    (bundle / "scheduler" / "qacct.txt").write_text(qacct)
    time.sleep(1)  # the daemons write their last words on the job
    (bundle / "scheduler" / "qmaster-messages").write_text(_messages_window(cluster.qmaster_messages, t0, t1))
    (node_dir / "execd-messages").write_text(_messages_window(cluster.execd_messages(), t0, t1))
    outputs = sorted(p.name for p in node_dir.glob(f"lab-{fault.name}.[oe]{jid}"))
    sources: list[dict[str, Any]] = [{"kind": "application", "path": f"nodes/{{node}}/{name}"} for name in outputs]
    sources += [{"kind": "scheduler", "path": "scheduler/qacct.txt", "format": "sge-qacct"},
                {"kind": "scheduler", "path": "scheduler/qmaster-messages", "format": "sge-messages"},
                {"kind": "scheduler", "path": "nodes/{node}/execd-messages", "format": "sge-messages"}]
    workload = _workload(fault, jid, "static", host, (_utc(t0), _utc(t1 + 1)), sources)
    _write_yaml(bundle / "workload.yaml", workload)
    shutil.rmtree(work, ignore_errors=True)
    return RunResult(fault.name, bundle, t1 - t0, detail)
