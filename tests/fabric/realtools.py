"""The real fabric tools, run here: Debian's InfiniBand simulator and diagnostics, and lldpd in namespaces.

- `IbSim`: `ibsim` (ibsim-utils) simulates a fabric from a topology file; the
  infiniband-diags tools (`ibnetdiscover`, `iblinkinfo`, `perfquery`) and
  `opensm` run against it through its preload library (`libumad2sim.so`), as
  `ibsim-run` does. Its console takes a link down (`Unlink`) and sets a port's
  counters (`PerformanceSet`).
- `LldpLab`: `lldpd` in network namespaces joined by veth pairs (`ip netns`):
  a "switch" namespace with a Linux bridge over its ports (as a Linux switch
  OS runs), one namespace per host; `lldpctl -f json` answers on each host.

Both are started and stopped by the tests (tests/fabric/test_realtools.py)
and by `python -m tests.fabric.record`, which rewrites the recordings the
offline tests read (tests/fabric/recorded/). Processes are ended by their own
PID; namespaces by their own names.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO

SIM_SO = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
IB_TOOLS = ("ibsim", "ibnetdiscover", "iblinkinfo", "perfquery", "opensm")
LLDP_TOOLS = ("lldpd", "lldpctl", "lldpcli", "ip")


def missing_ib() -> list[str]:
    """What is missing to run the simulated InfiniBand fabric here (scripts/ci/install-servers.sh installs it)."""
    missing = [t for t in IB_TOOLS if shutil.which(t) is None]
    if not Path(SIM_SO).is_file():
        missing.append(SIM_SO)
    return missing


def missing_lldp() -> list[str]:
    """What is missing to run lldpd in network namespaces here (root is needed for `ip netns`)."""
    missing = [t for t in LLDP_TOOLS if shutil.which(t) is None]
    if os.geteuid() != 0:
        missing.append("root (ip netns)")
    return missing


class IbSim:
    """ibsim running one topology; the diagnostics run against it."""

    def __init__(self, topology: str, workdir: Path) -> None:
        self.workdir = workdir
        self.topo = workdir / "net.topo"
        self.topo.write_text(topology)
        # The simulator's socket, one per instance: two test sessions must not share a fabric.
        self.sock = f"ffsim{os.getpid()}_{time.monotonic_ns() % 10**9}"
        self.log = workdir / "ibsim.out"
        self.proc: subprocess.Popen[bytes] | None = None
        self._out: IO[bytes] | None = None

    def env(self) -> dict[str, str]:
        return {**os.environ, "IBSIM_SOCKNAME": self.sock, "LD_PRELOAD": SIM_SO,
                "OSM_CACHE_DIR": str(self.workdir / "osm")}

    def start(self) -> IbSim:
        (self.workdir / "osm").mkdir(exist_ok=True)
        self._out = self.log.open("wb")
        env = {**os.environ, "IBSIM_SOCKNAME": self.sock}
        self.proc = subprocess.Popen(["ibsim", "-s", str(self.topo)], stdin=subprocess.PIPE, stdout=self._out,
                                     stderr=subprocess.STDOUT, env=env, cwd=self.workdir)
        self._wait_for("Network simulator ready")
        return self

    def _wait_for(self, text: str, timeout: float = 20.0, after: int = 0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if text in self.log.read_text(errors="replace")[after:]:
                return
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"ibsim exited: {self.log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.05)
        raise TimeoutError(f"ibsim did not print {text!r}: {self.log.read_text(errors='replace')[-2000:]}")

    def console(self, command: str, expect: str | None = None) -> None:
        """One command on ibsim's console (`Unlink "leaf01"[3]`); waits for `expect` in its answer."""
        assert self.proc is not None and self.proc.stdin is not None
        mark = len(self.log.read_text(errors="replace"))
        self.proc.stdin.write(command.encode() + b"\n")
        self.proc.stdin.flush()
        self._wait_for(expect or "sim>", after=mark)

    def run(self, *argv: str, timeout: float = 60.0) -> str:
        """A diagnostic against the simulated fabric: its standard output (ibwarn noise goes to stderr)."""
        r = subprocess.run(list(argv), env=self.env(), capture_output=True, timeout=timeout, cwd=self.workdir)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} exited {r.returncode}: {r.stderr.decode(errors='replace')[-2000:]}")
        return r.stdout.decode()

    def subnet_manager(self) -> str:
        """opensm, once: brings the ports up and gives them LIDs (what a fabric's SM does)."""
        log = self.workdir / "osm" / "opensm.log"
        self.run("opensm", "--once", "-f", str(log), timeout=120)
        return log.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write(b"Quit\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout=5)
        self.proc = None
        if self._out is not None:
            self._out.close()
            self._out = None

    def __enter__(self) -> IbSim:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def perfquery_run(sim: IbSim, lid: int, port: int) -> str:
    """`date --iso-8601=seconds` then `perfquery LID PORT`: one timed run of a perfquery document."""
    stamp = subprocess.run(["date", "-u", "--iso-8601=seconds"], capture_output=True, check=True, text=True).stdout
    return stamp + sim.run("perfquery", str(lid), str(port))


class LldpLab:
    """A switch namespace (a bridge over its ports) and host namespaces, each port a veth pair, lldpd in each."""

    def __init__(self, workdir: Path, switch: str, hosts: Iterable[tuple[str, str, str]], tag: str) -> None:
        """hosts: (host, host interface, switch port)."""
        self.workdir = workdir
        self.switch = switch
        self.hosts = list(hosts)
        self.tag = tag  # namespace prefix: unique per run
        self.procs: list[subprocess.Popen[bytes]] = []
        self.logs: list[IO[bytes]] = []
        self.namespaces: list[str] = []
        self.sockdir: Path | None = None

    def ns(self, name: str) -> str:
        return f"{self.tag}-{name}"

    def sock(self, name: str) -> str:
        assert self.sockdir is not None
        return str(self.sockdir / f"lldpd-{name}.socket")

    def _ip(self, *argv: str) -> None:
        subprocess.run(["ip", *argv], check=True, capture_output=True)

    def start(self) -> LldpLab:
        # lldpd drops to its own user: every directory above its socket must let it through (a test's
        # tmp_path sits under a 0700 directory)
        self.sockdir = Path(tempfile.mkdtemp(prefix=f"{self.tag}-"))
        self.sockdir.chmod(0o755)
        sw = self.ns(self.switch)
        self._ip("netns", "add", sw)
        self.namespaces.append(sw)
        self._ip("-n", sw, "link", "add", "br0", "type", "bridge")
        self._ip("-n", sw, "link", "set", "br0", "up")
        for host, iface, port in self.hosts:
            hn = self.ns(host)
            if hn not in self.namespaces:
                self._ip("netns", "add", hn)
                self.namespaces.append(hn)
            self._ip("link", "add", port, "netns", sw, "type", "veth", "peer", "name", iface, "netns", hn)
            self._ip("-n", sw, "link", "set", port, "master", "br0")
            self._ip("-n", sw, "link", "set", port, "up")
            self._ip("-n", hn, "link", "set", iface, "up")
        self._lldpd(self.switch, [p for _, _, p in self.hosts], descr="Linux switch (bridge br0)")
        for host in dict.fromkeys(h for h, _, _ in self.hosts):
            self._lldpd(host, [i for h, i, _ in self.hosts if h == host])
        # lldpd names the system after the host name; each namespace says who it is, and sends ifname port ids.
        for name in [self.switch, *dict.fromkeys(h for h, _, _ in self.hosts)]:
            self.cli(name, "configure", "system", "hostname", name)
            self.cli(name, "configure", "lldp", "portidsubtype", "ifname")
            self.cli(name, "configure", "lldp", "tx-interval", "1")
        return self

    def _lldpd(self, name: str, ifaces: list[str], descr: str | None = None) -> None:
        argv = ["ip", "netns", "exec", self.ns(name), "lldpd", "-d", "-u", self.sock(name), "-I", ",".join(ifaces)]
        if descr:
            argv += ["-S", descr]
        log = (self.workdir / f"lldpd-{name}.log").open("wb")
        self.logs.append(log)
        self.procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT))
        end = time.monotonic() + 10
        while not Path(self.sock(name)).exists():
            if time.monotonic() > end:
                raise TimeoutError(f"lldpd in {self.ns(name)} did not start")
            time.sleep(0.05)

    def cli(self, name: str, *argv: str) -> str:
        # lldpd answers once its own start-up `lldpcli ... resume` has run: retry for a few seconds.
        end = time.monotonic() + 10
        while True:
            r = subprocess.run(["lldpcli", "-u", self.sock(name), *argv], capture_output=True, timeout=10)
            if r.returncode == 0:
                return r.stdout.decode()
            if time.monotonic() > end:
                raise RuntimeError(f"lldpcli {' '.join(argv)} in {self.ns(name)}: {r.stderr.decode(errors='replace')}")
            time.sleep(0.2)

    def neighbours(self, name: str, fmt: str = "json", want: int = 1, timeout: float = 30.0) -> str:
        """`lldpctl -f FMT` in namespace `name`, once it sees `want` neighbours."""
        end = time.monotonic() + timeout
        while True:
            self.cli(name, "update")
            out = subprocess.run(["lldpctl", "-u", self.sock(name), "-f", "keyvalue"], capture_output=True,
                                 timeout=10).stdout.decode()
            if out.count(".chassis.name=") >= want:
                break
            if time.monotonic() > end:
                raise TimeoutError(f"{name}: {out.count('.chassis.name=')} of {want} neighbours after {timeout} s")
            time.sleep(0.5)
        r = subprocess.run(["lldpctl", "-u", self.sock(name), "-f", fmt], capture_output=True, check=True, timeout=10)
        return r.stdout.decode()

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
        self.procs = []
        for log in self.logs:
            log.close()
        self.logs = []
        for ns in reversed(self.namespaces):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self.namespaces = []
        if self.sockdir is not None:
            shutil.rmtree(self.sockdir, ignore_errors=True)
            self.sockdir = None

    def __enter__(self) -> LldpLab:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()
