"""An address only its own host reaches, dialled in a job that spans nodes, is the job's set-up (brief hostlocal64).

One table (catalog/transport.yaml `host_local_addresses`), read by one function (engine/normalise.py host_local):
loopback first, link-local, and the private ranges of Docker's, Podman's and libvirt's default bridges, which are read
as host-local only where the job's own lines name the address on such a bridge (NCCL's `NET/Socket : Using
[0]docker0:172.17.0.1<0>`) or name it as their own on two or more nodes (a container's eth0 on each). The dial readers
(dialled_address) read UCX's and Open MPI's btl_tcp spellings beside NCCL's, Gloo's and c10d's; a peer lost with no
address named where the job's NCCL chose a bridge or a link-local interface is the set-up too.

Lines: public threads where named (NVIDIA/nccl#929, horovod/horovod#310, openucx/ucx#9908, horovod/horovod#666,
horovod/horovod#209, openucx/ucx#5438), else ours from the programs' format strings (NCCL's bootstrap.cc and
misc/socket.cc `Using %s`, UCX's src/ucs/sys/sock.c ucs_socket_connect). None is a corpus bundle's.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.engine.normalise import NodeMapper, dialled_address, host_local
from firstfault.model import Verdict
from tests.conftest import BundleMaker
from tests.extract.test_loopback_span import _ELASTIC_TWO, _workload

# NVIDIA/nccl#929: two machines, each rank in a container on Docker's default bridge
_NCCL_929 = ("e57377aacbb6:1203:1227 [0] misc/socket.cc:480 NCCL WARN socketStartConnect: Connect to 172.17.0.2<38847> "
             "failed : Software caused connection abort")
# ours, NCCL's bootstrap.cc `Bootstrap : Using %s` as each container of NVIDIA/nccl#929 would print it
_BOOT_929 = ("e57377aacbb6:1203:1203 [0] NCCL INFO Bootstrap : Using eth0:172.17.0.2<0>\n"
             "d9beab19e6d2:1791:1791 [0] NCCL INFO Bootstrap : Using eth0:172.17.0.2<0>\n")
# ours, NCCL's NET/Socket interface line naming Docker's bridge (the brief's spelling)
_USING_DOCKER0 = "gpu-a:4152:4206 [0] NCCL INFO NET/Socket : Using [0]docker0:172.17.0.1<0>\n"
_USING_ETH0 = "gpu-a:4152:4206 [0] NCCL INFO NET/Socket : Using [0]eth0:10.151.40.240<0>\n"
# horovod/horovod#310: Open MPI's TCP BTL dialling the docker0 address of its peer's host
_BTL_310 = ("[u10-154-66-206][[38971,1],2][btl_tcp_endpoint.c:796:mca_btl_tcp_endpoint_complete_connect] connect() to "
            "172.17.0.1 failed: Connection refused (111)")
# ours, the shape of Horovod's documented mpirun launch: two hosts of two slots each
_MPIRUN_TWO = "mpirun -np 4 -H server1:2,server2:2 -bind-to none -map-by slot python train.py\n"
# openucx/ucx#9908 (a training across two nodes): UCX's socket layer dialling Docker's bridge address
_UCX_9908 = ("[1716594409.541480] [gpu1:1581047:0]            sock.c:323  UCX  ERROR connect(fd=87, "
             "dest_addr=172.17.0.1:47133) failed: Connection refused")
# ours: the same format string (ucs_socket_connect) with a link-local destination (an interface without an address)
_UCX_LINK_LOCAL = _UCX_9908.replace("172.17.0.1:47133", "169.254.4.6:52595")
# horovod/horovod#666: NCCL's socket layer losing its peer, no address named
_CLOSED_666 = "gpu-a:4152:4210 [0] include/socket.h:390 NCCL WARN Connection closed by remote peer"


def _analyze(make_bundle: BundleMaker, text: str, state: str = "FAILED") -> Verdict:
    return Analyzer().analyze_path(str(make_bundle({"app/train.log": text}, _workload(state=state))))


def _status(v: Verdict) -> str | None:
    """The set-up's local status the verdict's cause names, else None."""
    rc = v.root_cause
    if rc is None or rc.category != "app.exception.setup":
        return None
    for status in ("host_local_peer", "loopback_peer"):
        if status in rc.summary.replace(" ", "_"):
            return status
    return "other"


# ---------------------------------------------------------------- the table, read by one function


@pytest.mark.parametrize(
    ("addr", "bridged", "kind"),
    [
        ("127.0.1.1", {}, "loopback"),
        ("::ffff:127.0.0.1", {}, "loopback"),
        ("[::1]", {}, "loopback"),
        ("LOCALHOST", {}, "loopback"),
        ("169.254.4.6", {}, "link-local"),
        ("fe80::215:5dff:fe33:ff6d%eth1", {}, "link-local"),
        ("172.17.0.1", {"172.17.0.1": "docker0"}, "Docker default-bridge"),
        ("10.88.0.5", {"10.88.0.5": "cni-podman0"}, "Podman default-network"),
        ("192.168.122.1", {"192.168.122.1": "virbr0"}, "libvirt default-network"),
        # Docker's `bip` set to another range: the bridge's name says it
        ("10.200.0.1", {"10.200.0.1": "docker0"}, "Docker bridge"),
        ("172.18.0.1", {"172.18.0.1": "br-3f2a9c81d4e0"}, "Docker network bridge"),
        # a container's eth0 that two nodes named as their own (NodeMapper.local_evidence)
        ("172.17.0.2", {"172.17.0.2": "eth0"}, "Docker default-bridge"),
        ("10.1.1.7", {"10.1.1.7": "eth0"}, "non-unique"),
    ],
)
def test_an_address_only_its_host_reaches_is_named_by_its_row(addr: str, bridged: dict[str, str], kind: str) -> None:
    assert host_local(addr, bridged) == kind


@pytest.mark.parametrize(
    ("addr", "bridged"),
    [
        ("172.17.0.1", {}),  # a cluster whose nodes live in 172.17.x: no bridge named
        ("10.88.0.5", {}),
        ("192.168.122.14", {"192.168.122.1": "virbr0"}),  # another address of the range than the bridge's
        ("10.38.10.112", {}),
        ("gpu-node-17", {}),
    ],
)
def test_an_address_other_hosts_reach_is_none(addr: str, bridged: dict[str, str]) -> None:
    assert host_local(addr, bridged) is None


def test_an_address_two_nodes_name_as_their_own_is_corroborated() -> None:
    mapper = NodeMapper(["n1", "n2"], {})
    mapper.learn_addresses([("172.17.0.2", "eth0", "n1", None, None), ("172.17.0.2", "eth0", "n2", None, None),
                            ("10.0.0.1", "ib0", "n1", None, None), ("10.0.0.2", "ib0", "n2", None, None)])
    assert mapper.local_evidence() == {"172.17.0.2": "eth0"}
    one = NodeMapper(["n1", "n2"], {})  # near miss: one node named it
    one.learn_addresses([("172.17.0.2", "eth0", "n1", None, None), ("10.0.0.2", "ib0", "n2", None, None),
                         ("172.24.0.1", "br-ex", "n1", None, None)])  # and an OpenStack bridge, routable
    assert one.local_evidence() == {}
    named = NodeMapper(["n1", "n2"], {})
    named.learn_addresses([("172.17.0.1", "docker0", "n1", None, None)])
    assert named.local_evidence() == {"172.17.0.1": "docker0"}


# ---------------------------------------------------------------- the dial readers: UCX's and Open MPI's spellings


@pytest.mark.parametrize(
    ("text", "addr"),
    [
        (_UCX_9908, "172.17.0.1"),
        (_UCX_LINK_LOCAL, "169.254.4.6"),
        (_BTL_310, "172.17.0.1"),
    ],
)
def test_ucx_and_open_mpi_dials_name_their_address(text: str, addr: str) -> None:
    assert dialled_address(text) == addr


@pytest.mark.parametrize(
    "text",
    [
        # horovod/horovod#209: a connect Open MPI attempts, not one that failed; a process name, no address
        "[mydocker01:06805] btl: tcp: attempting to connect() to [[27443,1],1] address 2.2.2.77 on port 1024",
        # openucx/ucx#9908: the PML's failure names a process, not an address
        "[gpu1:1581048] pml_ucx.c:419 Error: ucp_ep_create(proc=9) failed: Destination is unreachable",
    ],
)
def test_words_of_no_dial_name_no_address(text: str) -> None:
    assert dialled_address(text) is None


# ---------------------------------------------------------------- the reading, per spelling, with its near misses


def test_nccl_dialling_a_container_address_two_nodes_claim_is_the_set_up(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, _ELASTIC_TWO + _BOOT_929 + _NCCL_929 + "\n")
    assert _status(v) == "host_local_peer", v.explanation
    assert v.root_cause is not None and "172.17.0.2 is a Docker default-bridge address" in v.root_cause.summary


def test_nccl_dialling_172_17_with_no_bridge_named_stays_the_peers(make_bundle: BundleMaker) -> None:
    # near miss: a cluster whose nodes really live in 172.17.x (no bridge, no address two nodes claim)
    boot = "e57377aacbb6:1203:1203 [0] NCCL INFO Bootstrap : Using eth0:172.17.0.9<0>\n"
    v = _analyze(make_bundle, _ELASTIC_TWO + boot + _NCCL_929 + "\n")
    assert _status(v) is None and "nccl.remote_error" in [s.category for s in v.symptoms]


def test_nccl_dialling_dockers_bridge_on_one_node_stays_the_peers(make_bundle: BundleMaker) -> None:
    # near miss: on one node docker0 is a fine address; a refusal there is the peer not listening
    v = _analyze(make_bundle, "  min_nodes        : 1\n" + _USING_DOCKER0
                 + _NCCL_929.replace("172.17.0.2", "172.17.0.1") + "\n")
    assert _status(v) is None and "nccl.remote_error" in [s.category for s in v.symptoms]


def test_a_run_that_printed_docker0_and_completed_is_nothing(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, _ELASTIC_TWO + _USING_DOCKER0, state="COMPLETED")
    assert v.root_cause is None and not v.symptoms


def test_open_mpi_dialling_the_bridge_nccl_named_is_the_set_up(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, _MPIRUN_TWO + _USING_DOCKER0 + _BTL_310 + "\n")
    assert _status(v) == "host_local_peer", v.explanation


def test_open_mpi_dialling_172_17_with_no_bridge_named_stays_the_peers(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, _MPIRUN_TWO + _USING_ETH0 + _BTL_310 + "\n")
    assert _status(v) is None and "nccl.remote_error" in [s.category for s in v.symptoms]


def test_ucx_dialling_a_link_local_address_across_nodes_is_the_set_up(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, "SLURM_NNODES=2\n" + _UCX_LINK_LOCAL + "\n")
    assert _status(v) == "host_local_peer", v.explanation
    assert v.root_cause is not None and "169.254.4.6 is a link-local address" in v.root_cause.summary


@pytest.mark.parametrize("text", ["SLURM_NNODES=1\n" + _UCX_LINK_LOCAL, "SLURM_NNODES=2\n" + _UCX_9908])
def test_ucx_on_one_node_or_to_an_uncorroborated_172_17_stays_the_peers(make_bundle: BundleMaker, text: str) -> None:
    v = _analyze(make_bundle, text + "\n")
    assert _status(v) is None and "nccl.remote_error" in [s.category for s in v.symptoms]


def test_a_peer_lost_where_nccl_chose_dockers_bridge_across_nodes_is_the_set_up(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, _ELASTIC_TWO + _USING_DOCKER0 + _CLOSED_666 + "\n")
    assert _status(v) == "host_local_peer", v.explanation
    assert v.root_cause is not None and "interface docker0" in v.root_cause.summary


_USING_LO = "gpu-a:4152:4206 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>\n"


@pytest.mark.parametrize("using", [_USING_ETH0, _USING_LO])
def test_a_peer_lost_where_nccl_chose_a_routable_interface_or_lo_stays_the_peers(make_bundle: BundleMaker,
                                                                                 using: str) -> None:
    v = _analyze(make_bundle, _ELASTIC_TWO + using + _CLOSED_666 + "\n")
    assert _status(v) is None and "nccl.remote_error" in [s.category for s in v.symptoms]


# ours, iproute2's `ip addr` line of Docker's bridge on the host of horovod/horovod#310 (the thread shows ifconfig's)
_IP_ADDR_DOCKER0 = "    inet 172.17.0.1/16 brd 172.17.255.255 scope global docker0\n"
_IP_ADDR_ETH0 = "    inet 172.17.0.5/16 brd 172.17.255.255 scope global eth0\n"


def test_open_mpi_dialling_the_bridge_ip_addr_listed_is_the_set_up(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, _MPIRUN_TWO + _IP_ADDR_DOCKER0 + _BTL_310 + "\n")
    assert _status(v) == "host_local_peer", v.explanation


def test_an_ip_addr_listing_of_a_node_in_172_17_is_no_corroboration(make_bundle: BundleMaker) -> None:
    # near miss: the node's own interface in 172.17.x, no bridge: the peer's (and the line is no address read)
    v = _analyze(make_bundle, _MPIRUN_TWO + _IP_ADDR_ETH0 + _BTL_310.replace("172.17.0.1", "172.17.0.5") + "\n")
    assert _status(v) is None and "nccl.remote_error" in [s.category for s in v.symptoms]


@pytest.mark.parametrize("addr,kind", [
    ("127.0.1.1", "loopback"), ("::1", "loopback"), ("::ffff:127.0.1.1", "loopback"),
    ("[::FFFF:127.0.0.1]", "loopback"),
    ("169.254.4.6", "link-local"), ("FE80::1%eth0", "link-local"),
    ("10.0.0.3", None), ("2001:db8::1", None), ("127.000.0.1", None), ("cafe", None), ("node-127.0.0.1", None),
])
def test_the_address_is_read_by_its_bytes(addr: str, kind: str | None) -> None:
    # the C library's inet_pton reads each literal as ipaddress would (a leading zero is no IPv4 literal; a name that
    # holds only hex letters is a name), and a row's CIDR holds it by its integer
    assert host_local(addr, {}) == kind
