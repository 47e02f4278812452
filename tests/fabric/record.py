"""Rewrites tests/fabric/recorded/: real output of the real fabric tools, for the offline tests.

    python -m tests.fabric.record          (as root: `ip netns` for the LLDP part)

What it runs (tests/fabric/realtools.py): ibsim on TOPOLOGY, opensm once, then
ibnetdiscover and iblinkinfo (both forms); perfquery on switch leaf01 port 3
before and after the simulator sets that port's error counters
(PerformanceSet), then `Unlink "leaf01"[3]` takes that link down and
iblinkinfo runs again; and lldpd in network namespaces (a bridge "leaf01"
with ports swp1-swp4, hosts node-01..node-04 each on ens1f0np0) with
`lldpctl -f json` on every host, `-f json0` on one, and `-f json` on the
switch. README.md in that folder lists the files and the tool versions.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.fabric.realtools import IbSim, LldpLab, missing_ib, missing_lldp, perfquery_run

HERE = Path(__file__).parent / "recorded"

# Two leaf switches under one spine; four single-HCA hosts on each leaf, node-08 with a second HCA on the
# same leaf. Node descriptions are rdma-ndd's `<host> <device>`.
TOPOLOGY = """\
Switch	36 "leaf01"
[1]	"node-01 mlx5_0"[1]
[2]	"node-02 mlx5_0"[1]
[3]	"node-03 mlx5_0"[1]
[4]	"node-04 mlx5_0"[1]
[33]	"spine01"[1]

Switch	36 "leaf02"
[1]	"node-05 mlx5_0"[1]
[2]	"node-06 mlx5_0"[1]
[3]	"node-07 mlx5_0"[1]
[4]	"node-08 mlx5_0"[1]
[5]	"node-08 mlx5_1"[1]
[33]	"spine01"[2]

Switch	36 "spine01"
[1]	"leaf01"[33]
[2]	"leaf02"[33]

Hca	1 "node-01 mlx5_0"
[1]	"leaf01"[1]

Hca	1 "node-02 mlx5_0"
[1]	"leaf01"[2]

Hca	1 "node-03 mlx5_0"
[1]	"leaf01"[3]

Hca	1 "node-04 mlx5_0"
[1]	"leaf01"[4]

Hca	1 "node-05 mlx5_0"
[1]	"leaf02"[1]

Hca	1 "node-06 mlx5_0"
[1]	"leaf02"[2]

Hca	1 "node-07 mlx5_0"
[1]	"leaf02"[3]

Hca	1 "node-08 mlx5_0"
[1]	"leaf02"[4]

Hca	1 "node-08 mlx5_1"
[1]	"leaf02"[5]
"""

LLDP_HOSTS = [("node-01", "ens1f0np0", "swp1"), ("node-02", "ens1f0np0", "swp2"),
              ("node-03", "ens1f0np0", "swp3"), ("node-04", "ens1f0np0", "swp4")]


def switch_lid(ibnetdiscover: str, name: str) -> int:
    """The LID ibnetdiscover gives switch `name` (`Switch ... # "leaf01" base port 0 lid 1 lmc 0`)."""
    for line in ibnetdiscover.splitlines():
        if line.startswith("Switch") and f'# "{name}" ' in line:
            return int(line.split(" lid ")[1].split()[0])
    raise LookupError(name)


def record_ib(out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp, IbSim(TOPOLOGY, Path(tmp)) as sim:
        (out / "net.topo").write_text(TOPOLOGY)
        sim.subnet_manager()
        ibn = sim.run("ibnetdiscover")
        (out / "ibnetdiscover.txt").write_text(ibn)
        (out / "iblinkinfo.txt").write_text(sim.run("iblinkinfo"))
        (out / "iblinkinfo-l.txt").write_text(sim.run("iblinkinfo", "-l"))
        lid = switch_lid(ibn, "leaf01")
        runs = [perfquery_run(sim, lid, 3)]
        time.sleep(2)
        sim.console('PerformanceSet "leaf01"[3] PortCounters.SymbolErrorCounter=1207', "has been set")
        sim.console('PerformanceSet "leaf01"[3] PortCounters.LinkErrorRecoveryCounter=3', "has been set")
        sim.console('PerformanceSet "leaf01"[3] PortCounters.LinkDownedCounter=1', "has been set")
        sim.console('Unlink "leaf01"[3]')
        runs.append(perfquery_run(sim, lid, 3))
        (out / "perfquery-leaf01-p3.txt").write_text("".join(runs))
        (out / "iblinkinfo-leaf01-p3-down.txt").write_text(sim.run("iblinkinfo"))


def record_lldp(out: Path) -> None:
    lldp = out / "lldp"
    lldp.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, LldpLab(Path(tmp), "leaf01", LLDP_HOSTS, tag="ffrec") as lab:
        for host, _, _ in LLDP_HOSTS:
            (lldp / f"{host}.json").write_text(lab.neighbours(host))
        (lldp / "node-02.json0").write_text(lab.neighbours("node-02", "json0"))
        (lldp / "leaf01.json").write_text(lab.neighbours("leaf01", want=len(LLDP_HOSTS)))


def versions() -> str:
    r = subprocess.run(["dpkg-query", "-W", "ibsim-utils", "infiniband-diags", "opensm", "lldpd", "libumad2sim0"],
                       capture_output=True, text=True)
    return r.stdout


def main() -> int:
    HERE.mkdir(exist_ok=True)
    missing = missing_ib() + missing_lldp()
    if missing:
        print(f"cannot record: missing {', '.join(missing)} (scripts/ci/install-servers.sh)", file=sys.stderr)
        return 2
    record_ib(HERE)
    record_lldp(HERE)
    (HERE / "VERSIONS").write_text(versions())
    return 0


if __name__ == "__main__":
    sys.exit(main())
