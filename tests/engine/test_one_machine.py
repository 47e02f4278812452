"""One machine is one node, under every spelling the evidence uses (engine/normalise.py NodeMapper.learn_names,
hostlist.machines).

With no allocation known (a workload.yaml without `nodes`: posted logs, a Blueprint's static window) the names the
evidence places events on are grouped when they spell one machine: case, an FQDN and its leading labels, and an
address the evidence shows the machine owns. Two full names, or `node-1` and `node-10`, are never one machine. With
an allocation, its names are the nodes, as before. A fabric source's host names are the evidence's names too.

Lines: the programs' own formats, ours: RFC 5424 and RFC 3164 (behind its PRI, as rsyslog forwards it) syslog
records around the NVIDIA driver's Xid 79 and IB core's `Port: N Link DOWN`; pdsh's `host: ` tag; NCCL's
`host:pid:tid [dev] NCCL INFO Bootstrap : Using eth0:ADDR<0>`; gloo's tcp pair's connect failure; the fabric tests'
recorded ibnetdiscover (tests/fabric/bundles.py). None is a corpus bundle's.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.hostlist import machines
from firstfault.model import Verdict
from firstfault.records import dumps
from tests.conftest import BundleMaker
from tests.fabric.bundles import FABRIC_SOURCE, KERNEL_SOURCE, RECORDED, link_down, write
from tests.fabric.bundles import workload as fabric_workload

_XID79 = "NVRM: Xid (PCI:0000:3b:00): 79, pid=123, name=python, GPU has fallen off the bus."
_LINK_DOWN = "mlx5_0: Port: 1 Link DOWN"
_NOW = datetime(2026, 12, 1, tzinfo=UTC)  # analyzed_at: the rest of the verdict is the evidence's


def _rfc5424(host: str, sec: int, msg: str, pri: int = 4) -> str:
    return f"<{pri}>1 2026-11-02T10:05:{sec:02d}.000Z {host} kernel - - - {msg}\n"


def _rfc3164(host: str, sec: int, msg: str, pri: int = 6) -> str:
    return f"<{pri}>Nov  2 10:05:{sec:02d} {host} kernel: {msg}\n"


def _workload(nodes: list[str] | None = None) -> dict[str, Any]:
    """A static job's workload.yaml, one syslog file forwarded from every host and one rank log."""
    wl: dict[str, Any] = {
        "apiVersion": "firstfault/v1",
        "workload": {"id": "t", "scheduler": "static", "terminal_state": "FAILED",
                     "window": {"start": "2026-11-02T10:00:00Z", "end": "2026-11-02T11:00:00Z"}},
        "sources": [{"kind": "kernel", "path": "syslog/messages"}, {"kind": "application", "path": "app/train.log"}]}
    if nodes:
        wl["workload"]["nodes"] = nodes
    return wl


def _analyze(make_bundle: BundleMaker, syslog: str, app: str = "", nodes: list[str] | None = None,
             name: str = "b") -> Verdict:
    files = {"syslog/messages": syslog, "app/train.log": app or "2026-11-02 10:00:00,000 INFO step 1\n"}
    return Analyzer().analyze_path(str(make_bundle(files, _workload(nodes), name=name)), now=_NOW)


# ---------------------------------------------------------------- hostlist.machines: which spellings are one machine


def test_case_and_an_fqdns_leading_labels_are_one_machine() -> None:
    got = machines({"gpu-07.cluster.local": 1, "gpu-07": 3, "GPU-07": 1, "gpu-07.cluster": 1})
    assert got == dict.fromkeys(("gpu-07.cluster.local", "gpu-07", "GPU-07", "gpu-07.cluster"), "gpu-07")


def test_the_name_is_the_most_used_spelling_then_the_fullest_then_the_least() -> None:
    assert machines({"gpu-07": 1, "gpu-07.cluster.local": 1})["gpu-07"] == "gpu-07.cluster.local"
    assert machines({"gpu-07.cluster.local": 1, "gpu-07": 2})["gpu-07.cluster.local"] == "gpu-07"
    assert machines({"gpu-07": 1, "GPU-07": 1})["gpu-07"] == "GPU-07"
    # the order the names came in says nothing
    a = {"GPU-07": 2, "gpu-07": 2, "gpu-07.cluster.local": 1}
    assert machines(a) == machines(dict(reversed(a.items())))


def test_names_that_only_share_a_beginning_are_two_machines() -> None:
    # near miss: labels are whole
    got = machines({"node-1": 1, "node-10": 1, "node-1x.cluster": 1})
    assert got == {"node-1": "node-1", "node-10": "node-10", "node-1x.cluster": "node-1x.cluster"}


def test_two_full_names_that_share_a_first_label_are_two_machines_and_the_bare_label_neither() -> None:
    # near miss: two domains' gpu-07; nothing says which one a bare gpu-07 is
    got = machines({"gpu-07.a.example.com": 1, "gpu-07.b.example.com": 1, "gpu-07": 5, "gpu-07.a": 1})
    assert got == {"gpu-07.a.example.com": "gpu-07.a.example.com", "gpu-07.b.example.com": "gpu-07.b.example.com",
                   "gpu-07": "gpu-07", "gpu-07.a": "gpu-07.a.example.com"}


def test_addresses_and_blanks_are_no_spelling() -> None:
    assert machines({"10.0.0.3": 4, "fe80::1%ib0": 1, " ": 1, "gpu-07": 1}) == {"gpu-07": "gpu-07"}


# ---------------------------------------------------------------- the verdict


def test_three_spellings_of_one_machine_are_one_affected_node(make_bundle: BundleMaker) -> None:
    syslog = (_rfc5424("gpu-07.cluster.local", 0, _XID79) + _rfc3164("gpu-07", 1, _XID79, pri=4)
              + _rfc3164("GPU-07", 2, _XID79, pri=4))
    v = _analyze(make_bundle, syslog)
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"
    assert v.affected_nodes == ["gpu-07.cluster.local"] == v.root_cause.nodes  # a tie: the fullest name


def test_an_xid_and_a_port_down_under_two_spellings_are_one_nodes_faults(make_bundle: BundleMaker) -> None:
    # two machines would be two independent hard faults (ambiguous); one machine's port going down after its GPU
    # fell off the bus is explained by it
    v = _analyze(make_bundle, _rfc5424("gpu-07.cluster.local", 0, _XID79) + _rfc3164("gpu-07", 1, _LINK_DOWN))
    assert v.attributed_domain == "hardware" and not v.candidates, v.explanation
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"
    assert v.affected_nodes == ["gpu-07.cluster.local"]
    assert [(s.category, s.nodes) for s in v.symptoms] == [("network.link", ["gpu-07.cluster.local"])]


def test_the_same_faults_on_node_1_and_node_10_stay_two_nodes(make_bundle: BundleMaker) -> None:
    # near miss: node-1 is no spelling of node-10
    v = _analyze(make_bundle, _rfc5424("node-1", 0, _XID79) + _rfc3164("node-10", 1, _LINK_DOWN))
    assert v.attributed_domain == "ambiguous"
    assert v.affected_nodes == ["node-1", "node-10"]


def test_the_same_faults_on_two_domains_gpu_07_stay_two_nodes(make_bundle: BundleMaker) -> None:
    # near miss: two FQDNs that share their first label, both written in full, and a bare gpu-07 that is neither
    syslog = (_rfc5424("gpu-07.a.example.com", 0, _XID79) + _rfc5424("gpu-07.b.example.com", 1, _LINK_DOWN)
              + _rfc3164("gpu-07", 2, _XID79, pri=4))
    v = _analyze(make_bundle, syslog)
    assert v.attributed_domain == "ambiguous"
    assert v.affected_nodes == ["gpu-07", "gpu-07.a.example.com", "gpu-07.b.example.com"]


def test_the_owner_of_an_address_a_syslog_record_came_from_is_the_machine(make_bundle: BundleMaker) -> None:
    # rsyslog names a sender it cannot resolve by its address; NCCL's bootstrap line says which machine owns it
    app = "gpu-07.cluster.local:4152:4206 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.3<0>\n"
    v = _analyze(make_bundle, _rfc5424("10.0.0.3", 0, _XID79) + _rfc3164("gpu-07", 1, _LINK_DOWN), app)
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus" and not v.candidates
    assert v.affected_nodes == ["gpu-07.cluster.local"]  # NCCL's spelling and the syslog's, once each: the fullest


@pytest.mark.parametrize("bootstrap", [True, False])
def test_a_log_directory_named_by_an_address_is_its_owners(make_bundle: BundleMaker, bootstrap: bool) -> None:
    # a per-host tree a collector named by the sender's address; near miss: no line says who owns the address
    wl = _workload()
    wl["sources"][0]["path"] = "nodes/{node}/kern.log"
    app = "gpu-07:4152:4206 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.3<0>\n" if bootstrap else \
        "2026-11-02 10:00:00,000 INFO step 1\n"
    files = {"nodes/10.0.0.3/kern.log": f"Nov  2 10:05:00 x kernel: {_XID79}\n",
             "nodes/gpu-07/kern.log": f"Nov  2 10:05:01 x kernel: {_LINK_DOWN}\n", "app/train.log": app}
    v = Analyzer().analyze_path(str(make_bundle(files, wl)), now=_NOW)
    assert v.affected_nodes == (["gpu-07"] if bootstrap else ["10.0.0.3", "gpu-07"])
    assert (v.attributed_domain == "ambiguous") is not bootstrap


_GLOO_REFUSED = ("RuntimeError: [/opt/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:799] connect "
                 "[127.0.1.1]:53175: Connection refused")


@pytest.mark.parametrize(("second", "setup"), [("GPU-07.cluster.local", False), ("gpu-08", True)])
def test_a_loopback_dial_on_one_machine_under_two_spellings_spans_one_node(make_bundle: BundleMaker, second: str,
                                                                           setup: bool) -> None:
    # pdsh's tag under two spellings of one machine: one node, where a loopback address is the right one (the peer
    # or the store went away); near miss: two machines' tags, where it is the job's set-up
    app = f"gpu-07: {_GLOO_REFUSED}\n{second}: {_GLOO_REFUSED}\n"
    v = _analyze(make_bundle, _rfc3164("gpu-07", 0, "Linux version 6.8.0"), app)
    assert (v.root_cause is not None and v.root_cause.category == "app.exception.setup") is setup, v.explanation


def test_the_chosen_name_does_not_depend_on_the_order_of_the_evidence(make_bundle: BundleMaker) -> None:
    lines = [_rfc5424("gpu-07.cluster.local", 0, _XID79), _rfc3164("gpu-07", 1, _LINK_DOWN),
             _rfc3164("GPU-07", 2, _XID79, pri=4), _rfc3164("gpu-07", 3, _XID79, pri=4)]
    named = set()
    for i, order in enumerate((lines, lines[::-1], [lines[2], lines[0], lines[3], lines[1]])):
        v = _analyze(make_bundle, "".join(order), name=f"b{i}")
        assert v.root_cause is not None
        named.add((tuple(v.affected_nodes), tuple(v.root_cause.nodes), tuple(v.root_cause.devices),
                   tuple((s.category, tuple(s.nodes)) for s in v.symptoms)))
    assert named == {(("gpu-07",), ("gpu-07",), ("gpu-07/pci:0000:3b:00",), (("network.link", ("gpu-07",)),))}


def test_the_same_evidence_gives_the_same_verdict_bytes(make_bundle: BundleMaker) -> None:
    syslog = (_rfc5424("gpu-07.cluster.local", 0, _XID79) + _rfc3164("GPU-07", 1, _LINK_DOWN)
              + _rfc3164("gpu-07", 2, _XID79, pri=4))
    root = make_bundle({"syslog/messages": syslog, "app/train.log": "2026-11-02 10:00:00,000 INFO step 1\n"},
                       _workload())
    texts = {dumps(Analyzer().analyze_path(str(root), now=_NOW)) for _ in range(3)}
    assert len(texts) == 1 and '"affected_nodes":["gpu-07.cluster.local"]' in texts.pop()


@pytest.mark.parametrize("nodes", [["gpu-07"], ["gpu-07.cluster.local"]])
def test_with_an_allocation_its_name_is_the_node(make_bundle: BundleMaker, nodes: list[str]) -> None:
    # near miss: the allocation names the node, whatever the evidence's spellings; nothing is learned from them
    syslog = _rfc5424("gpu-07.cluster.local", 0, _XID79) + _rfc3164("GPU-07", 1, _LINK_DOWN)
    v = _analyze(make_bundle, syslog, nodes=nodes)
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus" and not v.candidates
    assert v.affected_nodes == nodes


@pytest.mark.parametrize(("host", "devices"), [("node-03.cluster.local", ["node-03.cluster.local/mlx5_0", "leaf01/3"]),
                                               ("node-3.cluster.local", ["node-3.cluster.local/mlx5_0"])])
def test_a_fabric_sources_short_name_is_the_machine_its_kernel_log_names_in_full(tmp_path: Path, host: str,
                                                                                 devices: list[str]) -> None:
    # the recorded ibnetdiscover names hosts by rdma-ndd's short `node-03 mlx5_0`; a per-host tree names the machine
    # in full. Near miss: node-3 is no spelling of node-03, whose cable it does not take
    wl = fabric_workload([], [KERNEL_SOURCE, FABRIC_SOURCE])
    del wl["workload"]["nodes"], wl["workload"]["ranks"]
    files = {f"nodes/{host}/kern.log": link_down(host),
             "fabric/ibnetdiscover.txt": (RECORDED / "ibnetdiscover.txt").read_text()}
    v = Analyzer().analyze_path(str(write(tmp_path / "b", wl, files)), now=_NOW)
    assert v.root_cause is not None and v.root_cause.category == "network.link"
    assert v.root_cause.devices == devices and v.affected_nodes == [host]
