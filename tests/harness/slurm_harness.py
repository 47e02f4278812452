"""A real single-node Slurm with accounting, started and stopped by PID for tests.

munged (reused when one already answers on the default socket), MariaDB on a
private datadir and loopback port, slurmdbd, slurmctld and slurmd, each in the
foreground (`-D` / `-F`) in its own session so that the PID we hold is the
daemon and its process group is ours to end. Every file lives under one private
directory; ports are random free loopback ports; the config is reached through
SLURM_CONF, never /etc/slurm.

Settings follow what is known to work on these machines: the default munge
socket (a custom `AuthInfo=socket=` breaks slurmctld <-> slurmdbd),
proctrack/linuxproc, task/none, MpiDefault=none, one node at 127.0.0.1.
The node claims more CPUs than the machine has (`config_overrides`) so that a
handful of test jobs run at once on 2 cores; they only sleep.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

MUNGE_SOCKET = Path("/run/munge/munge.socket.2")
DAEMONS = ("munged", "mariadbd", "mariadb-install-db", "slurmdbd", "slurmctld", "slurmd", "sacctmgr", "sbatch")
NODE = "ffnode1"
CLUSTER = "fftest"
TERMINAL = frozenset(
    {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL",
     "DEADLINE"}
)


class HarnessError(RuntimeError):
    pass


def missing_binaries() -> list[str]:
    return [b for b in (*DAEMONS, "sacct", "scontrol", "scancel", "munge") if shutil.which(b) is None]


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _port_open(port: int) -> bool:
    with contextlib.closing(socket.socket()) as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _munge_alive() -> bool:
    try:
        enc = subprocess.run(["munge", "-n"], capture_output=True, timeout=5)
        if enc.returncode != 0:
            return False
        dec = subprocess.run(["unmunge"], input=enc.stdout, capture_output=True, timeout=5)
        return dec.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@dataclass
class SlurmCluster:
    base: Path
    conf: Path
    ports: dict[str, int]
    node: str = NODE
    cluster: str = CLUSTER
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    startup_seconds: float = 0.0
    extra_conf: str = ""  # more slurm.conf lines (e.g. EpilogSlurmctld=...)

    @property
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.conf)
        return env

    # ---------------------------------------------------------------- clients

    def run(self, *args: str, timeout: float = 15, check: bool = True, env: dict[str, str] | None = None,
            input: str | None = None) -> subprocess.CompletedProcess[str]:
        # `timeout`: a dead slurmctld makes client commands hang.
        proc = subprocess.run(list(args), capture_output=True, text=True, env=env or self.env, timeout=timeout,
                              input=input, cwd=self.base)
        if check and proc.returncode != 0:
            raise HarnessError(f"{' '.join(args)} -> {proc.returncode}: {proc.stderr.strip()} {proc.stdout.strip()}")
        return proc

    def sbatch(self, script: str, *opts: str) -> str:
        """Submit a batch script; returns the job id ('4242' or '4242' for a het job's leader)."""
        out = self.run("sbatch", "--parsable", f"--output={self.base}/out/%j.out", *opts, input=script).stdout
        return out.strip().split(";")[0]

    def state(self, job_id: str) -> str:
        """The allocation's state per the accounting database ('' before it is recorded)."""
        out = self.run("sacct", "-n", "-P", "-X", "-j", job_id, "-o", "State", check=False).stdout
        lines = [ln for ln in out.splitlines() if ln.strip()]
        return lines[-1].split()[0] if lines else ""

    def wait_state(self, job_id: str, states: Sequence[str] | frozenset[str] = TERMINAL,
                   timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        st = ""
        while time.monotonic() < deadline:
            st = self.state(job_id)
            if st in states:
                return st
            time.sleep(0.3)
        raise HarnessError(f"job {job_id} still {st or 'unrecorded'} after {timeout}s (wanted {sorted(states)})")

    def wait_node(self, states: Sequence[str], timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        st = ""
        while time.monotonic() < deadline:
            st = self.run("sinfo", "-h", "-N", "-n", self.node, "-o", "%T", check=False).stdout.strip()
            if st.rstrip("*~#!%$@^-") in states:
                return st
            time.sleep(0.3)
        raise HarnessError(f"node {self.node} still {st!r} after {timeout}s (wanted {list(states)})")

    # ---------------------------------------------------------------- daemons

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.base / "log" / f"{name}.stdout", "wb")  # noqa: SIM115 - the child keeps it
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env, cwd=self.base,
                                start_new_session=True)
        log.close()
        self.procs[name] = proc
        return proc

    def _wait(self, what: str, ok: object, timeout: float, proc: subprocess.Popen[bytes] | None = None) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if callable(ok) and ok():
                return
            if proc is not None and proc.poll() is not None:
                raise HarnessError(f"{what} exited with {proc.returncode}; logs in {self.base / 'log'}:\n"
                                   + self._tail_logs())
            time.sleep(0.1)
        raise HarnessError(f"{what} not ready after {timeout}s; logs in {self.base / 'log'}:\n" + self._tail_logs())

    def _tail_logs(self) -> str:
        out = []
        for p in sorted((self.base / "log").glob("*")):
            lines = p.read_text(errors="replace").splitlines()[-8:]
            out.append(f"== {p.name}\n" + "\n".join(lines))
        return "\n".join(out)

    def stop(self) -> None:
        """Cancel our jobs, then end every daemon we started (by PID), newest first."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            with contextlib.suppress(Exception):
                self.run("scancel", "--full", f"--clusters={self.cluster}", "-u", "root", timeout=5, check=False)
                self.run("scontrol", "update", f"nodename={self.node}", "state=resume", timeout=5, check=False)
        for name in reversed(list(self.procs)):
            _end(self.procs[name])
        self.procs.clear()
        # Job processes (slurmstepd's children start their own sessions) run from our spool dir.
        for pid in _pids_under(self.base):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _end(proc: subprocess.Popen[bytes], grace: float = 5) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace)
    # The group may hold children (slurmstepd) after the leader is gone.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(grace)


def _pids_under(base: Path) -> list[int]:
    """PIDs of processes whose command line or cwd lies in our private directory."""
    me = os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if str(base) in cmd or cwd.startswith(str(base)):
            found.append(int(entry.name))
    return found


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.write_text(text)
    path.chmod(mode)


def _configure(c: SlurmCluster) -> None:
    b = c.base
    for d in ("log", "state", "spool", "out", "mysql", "run"):
        (b / d).mkdir(parents=True, exist_ok=True)
    host = socket.gethostname().split(".")[0]
    p = c.ports
    _write(c.conf, f"""\
ClusterName={c.cluster}
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={p['ctld']}
SlurmdPort={p['slurmd']}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation={b}/state
SlurmdSpoolDir={b}/spool
SlurmctldPidFile={b}/run/slurmctld.pid
SlurmdPidFile={b}/run/slurmd.pid
SlurmctldLogFile={b}/log/slurmctld.log
SlurmdLogFile={b}/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc={b}/log/jobcomp.log
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort={p['dbd']}
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=2
MinJobAge=600
InactiveLimit=0
MessageTimeout=5
SlurmdTimeout=30
PlugStackConfig={b}/plugstack.conf
NodeName={c.node} NodeAddr=127.0.0.1 CPUs=8 RealMemory=2000 State=UNKNOWN
PartitionName=debug Nodes={c.node} Default=YES MaxTime=INFINITE State=UP
{c.extra_conf}""")
    _write(b / "plugstack.conf", "")
    # slurmdbd reads slurmdbd.conf beside SLURM_CONF and refuses one others can read.
    _write(b / "slurmdbd.conf", f"""\
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort={p['dbd']}
SlurmUser=root
LogFile={b}/log/slurmdbd.log
PidFile={b}/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={p['mysql']}
StorageUser=root
StorageLoc=slurm_acct_db
""", 0o600)


def start_slurm(base: Path, *, node: str = NODE, cluster: str = CLUSTER, extra_conf: str = "") -> SlurmCluster:
    """Start the whole stack under `base`; on any failure stop what was started and raise.

    `node`, `cluster` and `extra_conf` let a test run a second stack of its own beside the
    session's (its own slurm.conf settings, a node it may drain) without touching that one."""
    t0 = time.monotonic()
    base.mkdir(parents=True, exist_ok=True)
    names = ("ctld", "slurmd", "dbd", "mysql")
    c = SlurmCluster(base=base, conf=base / "slurm.conf", ports=dict(zip(names, _free_ports(len(names)), strict=True)),
                     node=node, cluster=cluster, extra_conf=extra_conf)
    try:
        _configure(c)
        _start_munge(c)
        _start_mariadb(c)
        dbd = c._spawn("slurmdbd", ["slurmdbd", "-D"])
        c._wait("slurmdbd", lambda: _port_open(c.ports["dbd"]), 30, dbd)
        c.run("sacctmgr", "-i", "add", "cluster", c.cluster)
        ctld = c._spawn("slurmctld", ["slurmctld", "-D", "-c", "-i"])
        c._wait("slurmctld", lambda: c.run("scontrol", "ping", timeout=5, check=False).returncode == 0, 30, ctld)
        slurmd = c._spawn("slurmd", ["slurmd", "-D", "-N", c.node])
        c._wait("slurmd", lambda: _node_idle(c), 30, slurmd)
    except BaseException:
        c.stop()
        raise
    c.startup_seconds = time.monotonic() - t0
    return c


def _node_idle(c: SlurmCluster) -> bool:
    out = c.run("sinfo", "-h", "-N", "-n", c.node, "-o", "%T", timeout=5, check=False).stdout.split()
    return bool(out) and set(out) == {"idle"}  # one line per partition the node is in


def _start_munge(c: SlurmCluster) -> None:
    if _munge_alive():
        return  # one munged per host serves every Slurm on it; the key never leaves it
    MUNGE_SOCKET.parent.mkdir(parents=True, exist_ok=True)
    key = c.base / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    proc = c._spawn("munged", [
        "munged", "-F", "--force", f"--key-file={key}", f"--log-file={c.base}/log/munged.log",
        f"--pid-file={c.base}/run/munged.pid", f"--seed-file={c.base}/run/munged.seed",
    ])
    c._wait("munged", _munge_alive, 10, proc)


def _start_mariadb(c: SlurmCluster) -> None:
    data = c.base / "mysql"
    c.run("mariadb-install-db", "--no-defaults", f"--datadir={data}", "--user=root", "--skip-test-db",
          "--auth-root-authentication-method=normal", "--skip-name-resolve", timeout=60)
    sock = c.base / "run" / "mysql.sock"
    proc = c._spawn("mariadbd", [
        "mariadbd", "--no-defaults", f"--datadir={data}", "--user=root", "--bind-address=127.0.0.1",
        f"--port={c.ports['mysql']}", f"--socket={sock}", f"--pid-file={c.base}/run/mariadbd.pid",
        "--skip-name-resolve", "--skip-grant-tables", "--innodb-buffer-pool-size=32M", "--skip-log-bin",
        f"--log-error={c.base}/log/mariadbd.log",
    ])
    c._wait("mariadbd", lambda: _port_open(c.ports["mysql"]), 30, proc)


@contextlib.contextmanager
def slurm_cluster(base: Path) -> Iterator[SlurmCluster]:
    c = start_slurm(base)
    try:
        yield c
    finally:
        c.stop()


if __name__ == "__main__":  # manual check: python tests/harness/slurm_harness.py DIR
    import sys

    with slurm_cluster(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/ffslurm")) as cl:
        print(f"up in {cl.startup_seconds:.2f}s; SLURM_CONF={cl.conf}")
        jid = cl.sbatch("#!/bin/sh\nexit 3\n")
        print(jid, cl.wait_state(jid))
        cols = "JobID,JobName,State,ExitCode,Start,End,NodeList,Reason"
        print(cl.run("sacct", "-P", "-D", "-j", jid, "-o", cols).stdout)
        if len(sys.argv) > 2:
            input("enter to stop")
