"""The fabric readers (extract/fabric.py) and perfquery (extract/perfquery.py) on the real tools' output.

The recorded files are the output of ibsim/opensm/ibnetdiscover/iblinkinfo/perfquery and of lldpd/lldpctl
run here (tests/fabric/record.py; the topology is record.TOPOLOGY). Near misses: the same formats broken.
"""

from __future__ import annotations

import io

import pytest

from firstfault.extract.fabric import Link, host_port, norm_guid, read_fabric
from firstfault.extract.metric_conditions import conditions_by_metric, metric_conditions
from firstfault.extract.metric_formats import Issues
from firstfault.extract.metrics import read_metrics
from firstfault.extract.perfquery import read_perfquery
from firstfault.extract.structured import StructuredResult
from tests.fabric.bundles import RECORDED
from tests.fabric.record import TOPOLOGY


def _pairs(links: list[Link]) -> set[tuple[tuple[str, str, bool], tuple[str, str, bool]]]:
    out = set()
    for c in links:
        a, b = (c.a.node, c.a.port, c.a.switch), (c.b.node, c.b.port, c.b.switch)
        out.add((a, b) if a <= b else (b, a))
    return out


def _topology_pairs() -> set[tuple[tuple[str, str, bool], tuple[str, str, bool]]]:
    """The cables record.TOPOLOGY (ibsim's input) describes, spelled as the readers spell them."""
    out = set()
    kind, node = "", ""
    for line in TOPOLOGY.splitlines():
        if line.startswith(("Switch", "Hca")):
            kind, node = line.split()[0], line.split('"')[1]
        elif line.startswith("["):
            port = int(line[1:line.index("]")])
            remote = line.split('"')[1]
            rport = int(line.rsplit("[", 1)[1].rstrip("]"))

            def end(name: str, p: int, is_switch: bool) -> tuple[str, str, bool]:
                return (name, str(p), True) if is_switch else (*host_port(name, p), False)

            a = end(node, port, kind == "Switch")
            b = end(remote, rport, not remote.startswith("node-"))
            out.add((a, b) if a <= b else (b, a))
    return out


@pytest.mark.parametrize("name,fmt", [("ibnetdiscover.txt", "ibnetdiscover"), ("iblinkinfo.txt", "iblinkinfo"),
                                      ("iblinkinfo-l.txt", "iblinkinfo")])
def test_the_ib_tools_output_gives_the_simulated_topology(name: str, fmt: str) -> None:
    res = read_fabric((RECORDED / name).read_bytes(), fmt, name)
    assert res.issues == []
    assert _pairs(res.links) == _topology_pairs()
    assert len(res.links) == 11  # each cable once, though each tool lists it from both ends


def test_ibnetdiscover_gives_lids_guids_and_its_own_time() -> None:
    res = read_fabric((RECORDED / "ibnetdiscover.txt").read_bytes(), "ibnetdiscover", "f")
    ends = {(e.node, e.port): e for c in res.links for e in (c.a, c.b)}
    leaf01 = {e.lid for (n, _), e in ends.items() if n == "leaf01"}
    assert len(leaf01) == 1 and None not in leaf01  # every port of a switch answers on the switch's LID
    node03 = ends[("node-03", "mlx5_0:1")]
    assert node03.lid is not None and node03.lid not in leaf01
    assert node03.guid is not None and node03.guid.startswith("0x") and len(node03.guid) == 18
    assert res.made_at is not None and res.made_at.tzinfo is None  # ctime in the collector's zone


def test_a_link_the_simulator_took_down_is_not_in_iblinkinfo() -> None:
    res = read_fabric((RECORDED / "iblinkinfo-leaf01-p3-down.txt").read_bytes(), "iblinkinfo", "f")
    pairs = _pairs(res.links)
    assert (("leaf01", "3", True), ("node-03", "mlx5_0:1", False)) not in pairs
    assert (("leaf01", "2", True), ("node-02", "mlx5_0:1", False)) in pairs


def test_lldp_json_json0_and_the_switch_side() -> None:
    one = read_fabric((RECORDED / "lldp" / "node-03.json").read_bytes(), "lldp-json", "f", node="node-03")
    assert [(c.a, c.b.node, c.b.port, c.b.switch) for c in one.links] == [
        (one.links[0].a, "leaf01", "swp3", True)]
    assert (one.links[0].a.node, one.links[0].a.port, one.links[0].a.switch) == ("node-03", "ens1f0np0", False)
    zero = read_fabric((RECORDED / "lldp" / "node-02.json0").read_bytes(), "lldp-json", "f", node="node-02")
    assert [(c.a.port, c.b.node, c.b.port) for c in zero.links] == [("ens1f0np0", "leaf01", "swp2")]
    # lldpctl on the switch: its neighbours are hosts (LLDP does not say what the local end is)
    sw = read_fabric((RECORDED / "lldp" / "leaf01.json").read_bytes(), "lldp-json", "f", node="leaf01")
    assert sorted((c.a.port, c.b.node, c.b.port) for c in sw.links) == [
        (f"swp{i}", f"node-0{i}", "ens1f0np0") for i in range(1, 5)]


def test_csv_inventory() -> None:
    text = (b"host,host_port,switch,switch_port,rack\nnode-01,mlx5_0:1,leaf01,1,r1\n\n# spare\n"
            b"node-02,mlx5_0:1,leaf01,2,r1\n")
    res = read_fabric(text, "fabric-csv", "inv.csv")
    assert res.issues == []
    assert [(c.a.node, c.a.port, c.b.node, c.b.port, c.b.switch) for c in res.links] == [
        ("node-01", "mlx5_0:1", "leaf01", "1", True), ("node-02", "mlx5_0:1", "leaf01", "2", True)]


@pytest.mark.parametrize("text,fmt,node,message", [
    (b"node,port,switch\nnode-01,mlx5_0:1,leaf01\n", "fabric-csv", None, "missing: host, host_port, switch_port"),
    (b"host,host_port,switch,switch_port\nnode-01,,leaf01,1\nnode-02,mlx5_0:1\n", "fabric-csv", None,
     "empty host_port"),
    (b'{"lldp": {"interface": {"eth0": {"port": {"id": {"type": "ifname", "value": "swp1"}}}}}}', "lldp-json",
     "node-01", "no chassis name"),
    (b"{not json", "lldp-json", "node-01", "cannot read as lldpctl JSON"),
    (b"{}", "lldp-json", None, "needs the host it was taken on"),
    (b"[1]\t\"H-01\"[1]\n", "ibnetdiscover", None, "outside a node block"),
    (b"x", "sacct", None, "is not one of"),
])
def test_broken_fabric_files_say_what_and_where(text: bytes, fmt: str, node: str | None, message: str) -> None:
    res = read_fabric(text, fmt, "f", node=node)
    assert res.links == [] or fmt == "fabric-csv"
    assert any(message in i.message for i in res.issues), res.issues


def test_a_bad_csv_row_loses_only_itself() -> None:
    res = read_fabric(b"host,host_port,switch,switch_port\nnode-01,,leaf01,1\nnode-02,mlx5_0:1,leaf01,2\n",
                      "fabric-csv", "f")
    assert [(i.line, i.message) for i in res.issues] == [(2, "empty host_port; row skipped")]
    assert [c.a.node for c in res.links] == ["node-02"]


def test_descriptions_and_guids() -> None:
    assert host_port("node-03 mlx5_0", 1) == ("node-03", "mlx5_0:1")
    assert host_port("node-03", 2) == ("node-03", "2")  # a description of one word names the host only
    assert norm_guid("100001") == norm_guid("0x0000000000100001") == "0x0000000000100001"


def _perfquery(text: bytes) -> tuple[list, list]:  # type: ignore[type-arg]
    res = StructuredResult()
    issues = Issues(res.issues)
    series = list(read_perfquery(io.BytesIO(text), conditions_by_metric(metric_conditions()), res, issues))
    return series, res.issues


def test_perfquery_runs_become_the_node_exporters_series() -> None:
    series, issues = _perfquery((RECORDED / "perfquery-leaf01-p3.txt").read_bytes())
    assert issues == []
    by = {s.metric: s for s in series}
    downed = by["node_infiniband_link_downed_total"]
    assert downed.labels["port"] == "3" and downed.host is None
    assert [v for _, v, *_ in downed.samples] == [0.0, 1.0]
    assert by["node_infiniband_symbol_error_total"].samples[-1][1] == 1207.0


def test_perfquery_counters_read_as_metric_conditions() -> None:
    res = read_metrics(io.BytesIO((RECORDED / "perfquery-leaf01-p3.txt").read_bytes()), "perfquery", "pq.txt")
    conds = {e.fields["condition"]: e for e in res.events}
    assert set(conds) == {"ib_link_downed_increase", "ib_symbol_error_increase", "ib_link_error_recovery_increase"}
    ev = conds["ib_link_downed_increase"]
    assert ev.node is None and isinstance(ev.fields["lid"], int) and ev.fields["port"] == 3
    assert ev.t_lo is not None and ev.time is not None and ev.t_lo < ev.time


def test_perfquery_without_a_time_line_is_not_placed() -> None:
    text = (RECORDED / "perfquery-leaf01-p3.txt").read_text()
    untimed = "\n".join(line for line in text.splitlines() if not line.startswith("2026-")).encode()
    series, issues = _perfquery(untimed)
    assert all(not s.samples for s in series)
    assert any("no time line" in i.message for i in issues)
    # a line shaped like a time that is not one: said, and the run after it is not placed either
    bad = text.replace(text.splitlines()[0], "2026-13-45T99:00:00+00:00", 1).encode()
    series, issues = _perfquery(bad)
    assert any("is not a valid time" in i.message for i in issues)
    assert all(len(s.samples) == 1 for s in series)  # only the second run


def test_a_vendor_switch_and_hosts_without_their_device_name() -> None:
    """Real iblinkinfo output (tests/fabric/public/README.md): the switch's description holds ';', ':' and '/'
    and is its name as it stands; `n02 HCA-1` names the host, and its port is HCA-1's; n01 is only in the
    switch's block (the run was on n01)."""
    public = RECORDED.parent / "public" / "iblinkinfo-sb7700-edr.txt"
    res = read_fabric(public.read_bytes(), "iblinkinfo", public.name)
    assert res.issues == []
    sw = "MF0;SB7700:MSB7700/U1"
    assert _pairs(res.links) == {
        ((sw, "17", True), ("n02", "HCA-1:1", False)),
        ((sw, "36", True), ("mgt", "mlx5_0:1", False)),
        ((sw, "18", True), ("n01", "HCA-1:1", False)),
    }
    ends = {(e.node, e.port): e for c in res.links for e in (c.a, c.b)}
    assert ends[("n02", "HCA-1:1")].guid == "0xec0d9a03003d62be" and ends[("n02", "HCA-1:1")].lid == 4
    assert ends[(sw, "17")].lid == 2
