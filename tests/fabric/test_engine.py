"""Attribution across the cable (engine/fabric.py) on the recorded fabric (tests/fabric/bundles.py).

Expected verdicts follow from the fault placed on the simulated fabric: leaf01 port 3, cabled to node-03's
mlx5_0 port 1, went down (the simulator's Unlink, its counters set by PerformanceSet).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.model import Verdict
from tests.fabric.bundles import (
    ADDR,
    FABRIC_SOURCE,
    KERNEL_SOURCE,
    NODES,
    PERFQUERY_SOURCE,
    RECORDED,
    link_down,
    pairs_bundle,
    workload,
    write,
)

TO_NODE_03 = [("node-01", "node-03"), ("node-02", "node-03"), ("node-04", "node-03")]
WITHIN_LEAF01 = [("node-01", "node-02"), ("node-03", "node-04"), ("node-01", "node-03"), ("node-02", "node-04")]
ACROSS = [("node-01", "node-05"), ("node-02", "node-06"), ("node-03", "node-07"), ("node-04", "node-08")]
SPLIT = [("node-01", "node-02"), ("node-05", "node-06"), ("node-03", "node-04"), ("node-07", "node-08")]
PERFQUERY = {"fabric/perfquery-leaf01-p3.txt": (RECORDED / "perfquery-leaf01-p3.txt").read_text()}
SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer()


def _verdict(analyzer: Analyzer, root: Path) -> Verdict:
    return analyzer.analyze_path(str(root))


def test_a_switch_port_that_logged_the_fault_is_the_cause(analyzer: Analyzer, tmp_path: Path) -> None:
    v = _verdict(analyzer, pairs_bundle(tmp_path / "b", TO_NODE_03, NODES[:4], extra=PERFQUERY,
                                        sources=[PERFQUERY_SOURCE]))
    assert v.root_cause is not None
    assert (v.attributed_domain, v.root_cause.category, v.root_cause.nodes) == ("network", "network.link", ["node-03"])
    assert v.root_cause.devices == ["node-03/mlx5_0", "leaf01/3"]  # both ends of the cable
    assert {s.category: s.explained_by for s in v.symptoms}["nccl.ib_completion_error"] == "network.link"
    cause = [e for e in v.evidence if e.role == "cause"]
    assert cause and all(e.cable and (e.cable.switch, e.cable.switch_port, e.cable.node, e.cable.port)
                         == ("leaf01", "3", "node-03", "mlx5_0:1") for e in cause)


def test_without_the_fabric_the_switch_counters_name_no_node(analyzer: Analyzer, tmp_path: Path) -> None:
    v = _verdict(analyzer, pairs_bundle(tmp_path / "b", TO_NODE_03, NODES[:4], extra=PERFQUERY,
                                        sources=[PERFQUERY_SOURCE], fabric=False))
    assert v.root_cause is not None and v.root_cause.category == "network.link"
    assert v.root_cause.nodes == [] and v.root_cause.devices == []
    assert '"cable"' not in records.dumps(v)


def test_a_link_event_seen_on_both_ends_is_one_fault(analyzer: Analyzer, tmp_path: Path) -> None:
    extra = {**PERFQUERY, "nodes/node-03/kern.log": link_down("node-03")}
    v = _verdict(analyzer, pairs_bundle(tmp_path / "b", TO_NODE_03, NODES[:4], extra=extra,
                                        sources=[KERNEL_SOURCE, PERFQUERY_SOURCE]))
    assert v.root_cause is not None and v.root_cause.nodes == ["node-03"]
    assert v.root_cause.count == 2  # the host's Link DOWN and the switch port's link_downed: one finding
    assert sorted(e.event for e in v.evidence if e.role == "cause") == ["metric.condition", "net.link"]
    assert v.candidates == [] and v.secondary_causes == []
    host_side = next(e for e in v.evidence if e.event == "net.link")
    assert host_side.port == "mlx5_0:1" and host_side.cable and host_side.cable.switch_port == "3"


def test_the_host_port_alone_names_its_switch_port(analyzer: Analyzer, tmp_path: Path) -> None:
    files = {"nodes/node-03/kern.log": link_down("node-03"),
             "fabric/ibnetdiscover.txt": (RECORDED / "ibnetdiscover.txt").read_text()}
    v = _verdict(analyzer, write(tmp_path / "b", workload(NODES[:4], [KERNEL_SOURCE, FABRIC_SOURCE]), files))
    assert v.root_cause is not None and v.root_cause.devices == ["node-03/mlx5_0", "leaf01/3"]
    files.pop("fabric/ibnetdiscover.txt")
    plain = _verdict(analyzer, write(tmp_path / "c", workload(NODES[:4], [KERNEL_SOURCE]), files))
    assert plain.root_cause is not None and plain.root_cause.devices == ["node-03/mlx5_0"]


def test_pairs_behind_one_leaf_make_it_a_lead(analyzer: Analyzer, tmp_path: Path) -> None:
    v = _verdict(analyzer, pairs_bundle(tmp_path / "b", WITHIN_LEAF01, NODES[:4]))
    assert v.root_cause is not None and v.root_cause.category == "network.transport"
    leads = [ld for ld in v.leads if ld.kind == "common_switch"]
    assert len(leads) == 1
    assert leads[0].devices == ["leaf01"] and leads[0].nodes == NODES[:4]
    assert "switch leaf01 (ports 1, 2, 3, 4)" in leads[0].summary
    assert all(v.evidence[i].cable for i in leads[0].evidence)
    # the transport cause keeps its reporters: no host is common, and the switch is a lead, not the cause
    assert "leaf01/1" not in v.root_cause.devices


def test_without_the_fabric_no_switch_lead(analyzer: Analyzer, tmp_path: Path) -> None:
    v = _verdict(analyzer, pairs_bundle(tmp_path / "b", WITHIN_LEAF01, NODES[:4], fabric=False))
    assert [ld for ld in v.leads if ld.kind == "common_switch"] == []


def test_pairs_across_two_leaves_name_the_path_between(analyzer: Analyzer, tmp_path: Path) -> None:
    v = _verdict(analyzer, pairs_bundle(tmp_path / "b", ACROSS, NODES))
    (lead,) = [ld for ld in v.leads if ld.kind == "common_switch"]
    assert lead.devices == ["leaf01", "leaf02"]
    assert "between them" in lead.summary


def test_pairs_split_between_leaves_give_no_switch(analyzer: Analyzer, tmp_path: Path) -> None:
    v = _verdict(analyzer, pairs_bundle(tmp_path / "b", SPLIT, NODES))
    assert [ld for ld in v.leads if ld.kind == "common_switch"] == []


def test_one_common_peer_is_the_endpoint_and_its_cable_is_named(analyzer: Analyzer, tmp_path: Path) -> None:
    """Every report names node-03's address (mapped by NCCL's bootstrap line): node-03 is the common endpoint,
    its only cable names leaf01 port 3, and no switch lead is needed."""
    v = _verdict(analyzer, pairs_bundle(tmp_path / "b", TO_NODE_03, NODES[:4]))
    assert v.root_cause is not None and v.root_cause.nodes == ["node-03"]
    assert v.root_cause.devices[-2:] == ["node-03/mlx5_0", "leaf01/3"]
    assert [ld for ld in v.leads if ld.kind == "common_switch"] == []
    assert ADDR["node-03"] in next(e.text for e in v.evidence if e.role == "cause")


def test_a_switch_port_of_another_jobs_host_is_left_out(analyzer: Analyzer, tmp_path: Path) -> None:
    """node-03 is not in this allocation: leaf01 port 3's counters are another job's."""
    nodes = ["node-01", "node-02", "node-04"]
    v = _verdict(analyzer, pairs_bundle(tmp_path / "b", [("node-01", "node-02"), ("node-04", "node-02")], nodes,
                                        extra=PERFQUERY, sources=[PERFQUERY_SOURCE]))
    assert v.root_cause is not None and v.root_cause.category == "network.transport"
    assert not any(e.event == "metric.condition" for e in v.evidence)


def test_lldp_fabric_and_csv_inventory_name_the_same_cable(analyzer: Analyzer, tmp_path: Path) -> None:
    kern = link_down("node-03", "ens1f0np0: Link down")  # mlx5's netdev form (tests/scenarios/net-ib-port-down-mlx5)
    lldp = {f"fabric/lldp/{n}.json": (RECORDED / "lldp" / f"{n}.json").read_text() for n in NODES[:4]}
    src = {"kind": "fabric", "path": "fabric/lldp/{node}.json", "format": "lldp-json"}
    v = _verdict(analyzer, write(tmp_path / "lldp", workload(NODES[:4], [KERNEL_SOURCE, src]),
                                 {"nodes/node-03/kern.log": kern, **lldp}))
    assert v.root_cause is not None and v.root_cause.devices == ["node-03/ens1f0np0", "leaf01/swp3"]
    csv = "host,host_port,switch,switch_port\n" + "".join(
        f"node-0{i},ens1f0np0,leaf01,swp{i}\n" for i in range(1, 5))
    src = {"kind": "fabric", "path": "fabric/inventory.csv", "format": "fabric-csv"}
    w = _verdict(analyzer, write(tmp_path / "csv", workload(NODES[:4], [KERNEL_SOURCE, src]),
                                 {"nodes/node-03/kern.log": kern, "fabric/inventory.csv": csv}))
    assert w.root_cause is not None and w.root_cause.devices == v.root_cause.devices


def test_a_fabric_source_changes_nothing_where_no_port_is_named(analyzer: Analyzer, tmp_path: Path) -> None:
    """An Xid names no host port: the verdict with the fabric is the verdict without it, but for the note."""
    xid = link_down("node-02").split(" kernel: ")[0] + (
        " kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=123, name=python, GPU has fallen off the bus.\n")
    files = {"nodes/node-02/kern.log": xid}
    a = _verdict(analyzer, write(tmp_path / "a", workload(NODES[:4], [KERNEL_SOURCE]), files))
    files["fabric/ibnetdiscover.txt"] = (RECORDED / "ibnetdiscover.txt").read_text()
    b = _verdict(analyzer, write(tmp_path / "b", workload(NODES[:4], [KERNEL_SOURCE, FABRIC_SOURCE]), files))
    da, db = json.loads(records.dumps(a)), json.loads(records.dumps(b))
    for d in (da, db):
        d.pop("analyzed_at")
    assert db["explanation"][-1].startswith("Fabric: 11 cable(s) from fabric/ibnetdiscover.txt")
    db["explanation"].pop()
    db["coverage"] = [c for c in db["coverage"] if c["source"] != "fabric"]
    assert da == db


def test_a_broken_fabric_file_is_an_error_and_loses_nothing_else(analyzer: Analyzer, tmp_path: Path) -> None:
    files = {"nodes/node-03/kern.log": link_down("node-03"), "fabric/inventory.csv": "node,port\nnode-03,x\n"}
    src = {"kind": "fabric", "path": "fabric/inventory.csv", "format": "fabric-csv"}
    v = _verdict(analyzer, write(tmp_path / "b", workload(NODES[:4], [KERNEL_SOURCE, src]), files))
    assert v.root_cause is not None and v.root_cause.devices == ["node-03/mlx5_0"]
    assert [(e.source, e.file, e.line) for e in v.errors] == [("fabric", "fabric/inventory.csv", 1)]
    assert "missing: host, host_port, switch, switch_port" in v.errors[0].message


@pytest.mark.parametrize("oob,devices", [
    ("ens1f0np0", ["node-03/ens1f0np0", "leaf01/swp3"]),  # the address is on the port cabled to leaf01
    ("ens1f1np1", ["node-03/ens1f1np1", "leaf02/swp3"]),  # ... or on the other one
    ("eth9", []),  # an interface no cable names: two cables, no telling which
])
def test_a_peer_address_maps_to_the_port_it_is_on(analyzer: Analyzer, tmp_path: Path, oob: str,
                                                  devices: list[str]) -> None:
    """node-03 has two cabled ports (a site's inventory); NCCL's bootstrap line says which interface its
    address is on (the RoCE form, `NET/IB : Using [0]mlx5_0:1/RoCE ; OOB eth0:ADDR<0>`, tests/extract/test_nccl.py),
    and the reports from the other hosts name that address."""
    csv = ("host,host_port,switch,switch_port\n" + "".join(f"node-0{i},ens1f0np0,leaf01,swp{i}\n" for i in (1, 2, 4))
           + "node-03,ens1f0np0,leaf01,swp3\nnode-03,ens1f1np1,leaf02,swp3\n")
    src = {"kind": "fabric", "path": "fabric/inventory.csv", "format": "fabric-csv"}
    root = pairs_bundle(tmp_path / "b", TO_NODE_03, NODES[:4], fabric=False, sources=[src],
                        extra={"fabric/inventory.csv": csv})
    log = root / "nodes" / "node-03" / "nccl.log"
    log.write_text(log.read_text().replace("/IB ; OOB ib0:", f"/RoCE ; OOB {oob}:"))
    v = _verdict(analyzer, root)
    assert v.root_cause is not None and v.root_cause.nodes == ["node-03"]
    assert [d for d in v.root_cause.devices if "/gpu" not in d] == devices


@pytest.mark.parametrize("name", ["net-ib-switch-port-down-fabric", "net-ib-transport-common-leaf-fabric"])
def test_the_service_and_the_parallel_reader_give_the_same_verdict(analyzer: Analyzer, name: str) -> None:
    """The fabric document travels in a Service request (collect/wire.py) and survives a replay's capture;
    reading the logs in worker processes changes nothing."""
    from datetime import UTC, datetime

    from firstfault.analysis.analyze import analyze_request
    from firstfault.bundle import load_bundle
    from firstfault.collect.wire import AnalyzeRequest, request_from_bundle
    from firstfault.replay import capture_bundle

    now = datetime(2026, 12, 4, tzinfo=UTC)
    bundle = load_bundle(SCENARIOS / name)
    embedded = records.dumps(analyzer.analyze_bundle(bundle, now=now))
    request = records.decode(records.dumps(request_from_bundle(analyzer, bundle)), AnalyzeRequest)
    assert records.dumps(analyze_request(analyzer, request, now=now)) == embedded
    assert records.dumps(analyzer.analyze_bundle(bundle, now=now, workers=2)) == embedded
    verdict, captured = capture_bundle(analyzer, bundle, now=now)
    assert records.dumps(verdict) == embedded
    assert records.dumps(analyze_request(analyzer, captured.request, now=now)) == embedded
    assert '"cable"' in embedded
