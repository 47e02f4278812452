"""The real fabric tools, run now: ibsim with infiniband-diags and opensm, and lldpd in network namespaces.

Each test makes the fabric's output with the tools, takes a link down with the simulator's own console,
and has firstfault read what they printed. In CI a skip is a failure (tests/conftest.py); the tools are
installed by scripts/ci/install-servers.sh.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract.fabric import read_fabric
from tests.fabric.bundles import (
    KERNEL_SOURCE,
    NODES,
    PERFQUERY_SOURCE,
    link_down,
    pairs_bundle,
    workload,
    write,
)
from tests.fabric.realtools import IbSim, LldpLab, missing_ib, missing_lldp, perfquery_run
from tests.fabric.record import LLDP_HOSTS, TOPOLOGY, switch_lid
from tests.fabric.test_readers import _pairs, _topology_pairs

pytestmark = pytest.mark.integration


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[IbSim]:
    missing = missing_ib()
    if missing:
        pytest.skip(f"InfiniBand simulator not installed (missing {', '.join(missing)}); "
                    "scripts/ci/install-servers.sh installs it")
    with IbSim(TOPOLOGY, tmp_path) as s:
        log = s.subnet_manager()
        assert "SUBNET UP" in log
        yield s


def test_the_diagnostics_read_the_simulated_topology(sim: IbSim) -> None:
    for argv, fmt in ((("ibnetdiscover",), "ibnetdiscover"), (("iblinkinfo",), "iblinkinfo"),
                      (("iblinkinfo", "-l"), "iblinkinfo")):
        res = read_fabric(sim.run(*argv).encode(), fmt, " ".join(argv))
        assert res.issues == [], argv
        assert _pairs(res.links) == _topology_pairs(), argv


def test_a_switch_port_the_simulator_takes_down_is_the_cause(sim: IbSim, tmp_path: Path) -> None:
    topology = sim.run("ibnetdiscover")
    lid = switch_lid(topology, "leaf01")
    before = perfquery_run(sim, lid, 3)
    time.sleep(1.1)  # the runs' times are whole seconds
    sim.console('PerformanceSet "leaf01"[3] PortCounters.LinkDownedCounter=1', "has been set")
    sim.console('Unlink "leaf01"[3]')
    after = perfquery_run(sim, lid, 3)
    # the cable is gone from what the fabric reports now
    down = read_fabric(sim.run("iblinkinfo").encode(), "iblinkinfo", "iblinkinfo")
    assert (("leaf01", "3", True), ("node-03", "mlx5_0:1", False)) not in _pairs(down.links)

    at = datetime.fromisoformat(after.splitlines()[0])
    bundle = pairs_bundle(tmp_path / "b", [("node-01", "node-03"), ("node-02", "node-03"), ("node-04", "node-03")],
                          NODES[:4], down=at, topology=topology, sources=[PERFQUERY_SOURCE],
                          extra={"fabric/perfquery-leaf01-p3.txt": before + after})
    v = Analyzer().analyze_path(str(bundle))
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes, v.root_cause.devices) == (
        "network.link", ["node-03"], ["node-03/mlx5_0", "leaf01/3"])


def test_transport_errors_behind_one_simulated_leaf_name_it(sim: IbSim, tmp_path: Path) -> None:
    topology = sim.run("iblinkinfo")
    at = datetime.now(UTC)
    pairs = [("node-01", "node-02"), ("node-03", "node-04"), ("node-01", "node-03"), ("node-02", "node-04")]
    bundle = pairs_bundle(tmp_path / "b", pairs, NODES[:4], down=at, topology=topology, topology_format="iblinkinfo")
    v = Analyzer().analyze_path(str(bundle))
    (lead,) = [ld for ld in v.leads if ld.kind == "common_switch"]
    assert lead.devices == ["leaf01"] and "ports 1, 2, 3, 4" in lead.summary


@pytest.fixture
def lldp(tmp_path: Path) -> Iterator[LldpLab]:
    missing = missing_lldp()
    if missing:
        pytest.skip(f"lldpd in network namespaces cannot run here (missing {', '.join(missing)})")
    with LldpLab(tmp_path, "leaf01", LLDP_HOSTS, tag=f"fft{os.getpid()}") as lab:
        yield lab


def test_lldp_neighbours_name_the_switch_port(lldp: LldpLab, tmp_path: Path) -> None:
    files = {f"fabric/lldp/{h}.json": lldp.neighbours(h) for h, _, _ in LLDP_HOSTS}
    files["fabric/lldp/leaf01.json"] = lldp.neighbours("leaf01", want=len(LLDP_HOSTS))
    at = datetime.now(UTC)
    files["nodes/node-03/kern.log"] = link_down("node-03", "ens1f0np0: Link down", down=at)
    src = {"kind": "fabric", "path": "fabric/lldp/{node}.json", "format": "lldp-json"}
    v = Analyzer().analyze_path(str(write(tmp_path / "b", workload(NODES[:4], [KERNEL_SOURCE, src], at), files)))
    assert v.root_cause is not None
    assert (v.root_cause.nodes, v.root_cause.devices) == (["node-03"], ["node-03/ens1f0np0", "leaf01/swp3"])
    # the switch's own answer (its neighbours are the hosts) gives the same cables
    sw = read_fabric(files["fabric/lldp/leaf01.json"].encode(), "lldp-json", "leaf01.json", node="leaf01")
    assert sorted((c.b.node, c.a.port) for c in sw.links) == [(h, p) for h, _, p in LLDP_HOSTS]
