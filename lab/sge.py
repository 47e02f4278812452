"""The lab's Grid Engine (twelfth round): a qmaster and an execd of a cell of their own under a temporary directory.

Debian's Grid Engine 8.1.9 (`gridengine-master gridengine-exec gridengine-client`, scripts/ci/install-servers.sh)
installs a cell `default` under /var/lib/gridengine and spools to /var/spool/gridengine; the lab leaves it alone.
`start(base)` makes an SGE_ROOT under `base` (links to the package's bin, lib, utilbin and util, and a cell `lab`
of its own: bootstrap, spool, accounting file), initialises its spool as the package's init_cluster does
(spoolinit, spooldefaults), starts sge_qmaster and sge_execd on ports of their own (SGE_QMASTER_PORT,
SGE_EXECD_PORT) and configures this host as the cell's admin, submit and execution host with a queue `lab.q`
(8 slots) and a parallel environment `smp` ($pe_slots). `SgeCluster.stop()` stops both daemons (qconf -ke, -km;
then SIGKILL by their pid files) and removes nothing of the package's.

What a site's cell differs in, for the lab's jobs:
- the host's name resolves to 127.0.0.1, whose reverse name here is `localhost`: the qmaster refuses a client whose
  address resolves to another name than it gives ("access denied (client IP resolved to host name "localhost". This
  is not identical to clients host name "vm")"); the cell's `host_aliases` makes them one host, as sites do;
- `min_uid 0` / `min_gid 0`: the lab's jobs run as root (the package's 1000 refuses them);
- the scheduler runs every second and the accounting file is written at once (`accounting_flush_time=00:00:00`), so a
  job's `qacct -j` record is there when `qsub -sync y` returns; the queue has no load threshold (the loaded 2-core
  machine would put it in alarm state).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from lab.ports import free_port

PACKAGE_ROOT = Path("/var/lib/gridengine")
BINARIES = ("qsub", "qacct", "qconf", "qstat", "qdel")
DAEMONS = (Path("/usr/sbin/sge_qmaster"), Path("/usr/sbin/sge_execd"), Path("/usr/lib/gridengine/spoolinit"))
CELL = "lab"

BOOTSTRAP = """\
# Version: 8.1.9
admin_user              none
default_domain          none
ignore_fqdn             true
spooling_method         berkeleydb
spooling_lib            libspoolb
spooling_params         {spool}/spooldb
binary_path             /usr/sbin
qmaster_spool_dir       {spool}/qmaster
security_mode           none
listener_threads        2
worker_threads          2
scheduler_threads       1
"""

# the package's default configuration (/usr/share/gridengine/default-configuration), changed where the module's
# docstring says
GLOBAL_CONF = """\
conf_version           0
execd_spool_dir        {spool}/execd
mailer                 /bin/true
xterm                  /usr/bin/xterm
load_sensor            none
prolog                 none
epilog                 none
shell_start_mode       posix_compliant
login_shells           bash,sh,ksh,csh,tcsh
min_uid                0
min_gid                0
user_lists             none
xuser_lists            none
projects               none
xprojects              none
enforce_project        false
enforce_user           auto
load_report_time       00:00:10
max_unheard            00:05:00
reschedule_unknown     00:00:00
loglevel               log_warning
administrator_mail     none
set_token_cmd          none
pag_cmd                none
token_extend_time      none
shepherd_cmd           none
qmaster_params         none
execd_params           none
reporting_params       accounting=true reporting=false flush_time=00:00:01 joblog=false sharelog=00:00:00 \
accounting_flush_time=00:00:00
finished_jobs          100
gid_range              65400-65500
qlogin_command         builtin
qlogin_daemon          builtin
rlogin_command         builtin
rlogin_daemon          builtin
rsh_command            builtin
rsh_daemon             builtin
max_aj_instances       2000
max_aj_tasks           75000
max_u_jobs             0
max_jobs               0
auto_user_oticket      0
auto_user_fshare       0
auto_user_default_project none
auto_user_delete_time  86400
delegated_file_staging false
reprioritize           0
jsv_url                none
jsv_allowed_mod        ac,h,i,e,o,j,M,N,p,w
"""

EXEC_HOST = """\
hostname {host}
load_scaling NONE
complex_values NONE
user_lists NONE
xuser_lists NONE
projects NONE
xprojects NONE
usage_scaling NONE
report_variables NONE
"""

PE = """\
pe_name            smp
slots              8
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    $pe_slots
control_slaves     FALSE
job_is_first_task  TRUE
urgency_slots      min
accounting_summary FALSE
qsort_args         NONE
"""

# the queue's settings that differ from `qconf -sq`'s template
QUEUE = {"qname": "lab.q", "hostlist": "{host}", "slots": "8", "pe_list": "smp", "shell": "/bin/bash",
         "load_thresholds": "NONE", "tmpdir": "/tmp"}

SCHED = {"schedule_interval": "0:0:1", "flush_submit_sec": "1", "flush_finish_sec": "1"}


def missing_binaries() -> list[str]:
    return [b for b in BINARIES if shutil.which(b) is None] + [str(d) for d in DAEMONS if not d.exists()]


def unavailable() -> str | None:
    """Why the lab's Grid Engine cannot start here (None when it can): the packages, and root (the execd's shepherd
    runs each job as its owner)."""
    missing = missing_binaries()
    if missing:
        return (f"Grid Engine not installed (missing {', '.join(missing)}; scripts/ci/install-servers.sh: "
                "gridengine-master gridengine-exec gridengine-client)")
    if os.geteuid() != 0:
        return "Grid Engine's execd needs root"
    return None


@dataclass
class SgeCluster:
    base: Path
    host: str
    qmaster_port: int
    execd_port: int
    startup_seconds: float = 0.0
    env: dict[str, str] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.base / "root"

    @property
    def spool(self) -> Path:
        return self.base / "spool"

    @property
    def qmaster_messages(self) -> Path:
        return self.spool / "qmaster" / "messages"

    def execd_messages(self) -> Path:
        """The execd's messages file: its spool directory is named after the host as the execd resolves itself."""
        found = sorted((self.spool / "execd").glob("*/messages"))
        return found[0] if found else self.spool / "execd" / self.host / "messages"

    def run(self, *argv: str, check: bool = True, input: str | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), env=self.env, capture_output=True, text=True, check=check, input=input,
                              timeout=timeout, cwd=self.base)

    def qconf_file(self, flag: str, name: str, text: str) -> None:
        """qconf -A* / -M* FILE: the object's definition read from a file (named as the object for -Mconf)."""
        path = self.base / "conf" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        self.run("qconf", flag, str(path))

    def state(self, job: str) -> str:
        """qstat's state of `job` ("" once it left the queue)."""
        out = self.run("qstat", "-u", "*", check=False).stdout
        for line in out.splitlines()[2:]:
            cols = line.split()
            if cols and cols[0] == job:
                return cols[4]
        return ""

    def stop(self) -> None:
        self.run("qconf", "-ke", self.host, check=False, timeout=30)
        self.run("qconf", "-km", check=False, timeout=30)
        deadline = time.monotonic() + 15
        pids = [self.spool / "qmaster" / "qmaster.pid", *(self.spool / "execd").glob("*/execd.pid")]
        for pidfile in pids:
            with contextlib.suppress(OSError, ValueError):
                pid = int(pidfile.read_text().split()[0])
                while time.monotonic() < deadline and _alive(pid):
                    time.sleep(0.2)
                if _alive(pid):
                    os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split(")")[-1][:3]


def start(base: Path) -> SgeCluster:
    """A fresh Grid Engine cell under `base`, its qmaster and execd running, this host its execution host."""
    t0 = time.monotonic()
    base = base.resolve()
    host = socket.gethostname()
    c = SgeCluster(base, host, free_port(), free_port())
    root, cell = c.root, c.root / CELL / "common"
    cell.mkdir(parents=True)
    for name in ("bin", "lib", "utilbin", "util"):
        (root / name).symlink_to(PACKAGE_ROOT / name)
    for d in ("qmaster/job_scripts", "spooldb", "execd"):
        (c.spool / d).mkdir(parents=True)
    (cell / "bootstrap").write_text(BOOTSTRAP.format(spool=c.spool))
    (cell / "act_qmaster").write_text(f"{host}\n")
    # the names this host's address resolves to (127.0.0.1 -> localhost), as the host's one name
    aliases = {n for n in (socket.getfqdn("127.0.0.1"), "localhost") if n and n != host}
    (cell / "host_aliases").write_text(f"{host} {' '.join(sorted(aliases))}\n")
    (cell / "settings.sh").write_text(f"SGE_ROOT={root}; export SGE_ROOT\nSGE_CELL={CELL}; export SGE_CELL\n"
                                      f"SGE_QMASTER_PORT={c.qmaster_port}; export SGE_QMASTER_PORT\n"
                                      f"SGE_EXECD_PORT={c.execd_port}; export SGE_EXECD_PORT\n")
    conf = base / "global-conf"
    conf.write_text(GLOBAL_CONF.format(spool=c.spool))
    c.env = {k: v for k, v in os.environ.items() if not k.startswith("SGE_")}
    c.env.update({"SGE_ROOT": str(root), "SGE_CELL": CELL, "SGE_QMASTER_PORT": str(c.qmaster_port),
                  "SGE_EXECD_PORT": str(c.execd_port), "SGE_ARCH": "lx-amd64", "LC_ALL": "C"})
    c.run("/usr/lib/gridengine/spoolinit", "berkeleydb", "libspoolb", str(c.spool / "spooldb"), "init")
    c.run("/usr/lib/gridengine/spooldefaults", "configuration", str(conf))
    c.run("/usr/lib/gridengine/spooldefaults", "complexes", "/usr/share/gridengine/util/resources/centry")
    c.run("/usr/lib/gridengine/spooldefaults", "usersets", "/usr/share/gridengine/util/resources/usersets")
    c.run("/usr/lib/gridengine/spooldefaults", "managers", "root")
    c.run("/usr/sbin/sge_qmaster")
    try:
        _wait(lambda: c.run("qconf", "-sh", check=False).returncode == 0, 60, "qmaster did not answer")
        c.run("qconf", "-as", host)
        c.run("qconf", "-ah", host, check=False)  # the qmaster's host is an admin host already
        c.qconf_file("-Ae", "exechost", EXEC_HOST.format(host=host))
        c.qconf_file("-Ap", "pe", PE)
        queue = {key: value.format(host=host) for key, value in QUEUE.items()}
        c.qconf_file("-Aq", "queue", _overridden(c.run("qconf", "-sq").stdout, queue))
        c.qconf_file("-Msconf", "sconf", _overridden(c.run("qconf", "-ssconf").stdout, SCHED))
        c.run("/usr/sbin/sge_execd")
        _wait(lambda: _queue_up(c), 60, "execd did not report to the qmaster")
    except BaseException:
        c.stop()
        raise
    c.startup_seconds = time.monotonic() - t0
    return c



def _overridden(dump: str, values: dict[str, str]) -> str:
    """A `qconf -s...` dump (continuation lines joined) with the keys of `values` given those values, for `qconf -A...`
    / `-M...` to read back."""
    lines = []
    for line in dump.replace("\\\n", " ").splitlines():
        key = line.split(" ", 1)[0]
        lines.append(f"{key} {values[key]}" if key in values else line)
    return "\n".join(lines) + "\n"

def _queue_up(c: SgeCluster) -> bool:
    """The execd reported its load: the queue instance is not in state `u` (unknown)."""
    out = c.run("qstat", "-f", "-q", "lab.q", check=False).stdout
    rows = [ln.split() for ln in out.splitlines() if ln.startswith("lab.q@")]
    return bool(rows) and all(len(r) == 5 for r in rows)


def _wait(ok: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ok():  # type: ignore[operator]
            return
        time.sleep(0.5)
    raise RuntimeError(f"Grid Engine: {what} within {timeout:.0f}s")
