"""engine/normalise.py unused_ports and extract/nccl.py PortsUsedExtractor: a port-state snapshot's down port that
the ports a program of the job named as its traffic's (NCCL's `NET/IB : Using`, perftest's banner) leave out is a
spare port (`unused`, rule network-link-snapshot leaves it out); one they name, or a snapshot with no such words,
stays the link down."""

from __future__ import annotations

from firstfault.engine.normalise import unused_ports
from firstfault.model import Event, Evidence
from tests.extract import helpers


def _ev(kind: str, node: str | None, **fields: object) -> Event:
    return Event(kind, None, node, Evidence("application", "app/x.log", 1, "x"), None, None, dict(fields))  # type: ignore[arg-type]


def _down(iface: str, node: str | None = "n1", port: int | None = 1) -> Event:
    fields: dict[str, object] = {"state": "down", "iface": iface, "snapshot": True, "phys_state": "Disabled"}
    if port is not None:
        fields["port"] = port
    return _ev("net.link", node, **fields)


def test_nccl_and_perftest_name_the_ports_they_use() -> None:
    # NVIDIA/nccl#489 (https://github.com/NVIDIA/nccl/issues/489): perftest's banner, verbatim
    lines = [" Dual-port       : OFF          Device         : mlx5_0",
             # the format of NVIDIA/nccl src/transport/net_ib.cc ncclIbInitDevices
             "gpu-1:12345:12390 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_2:1/RoCE [RO]; OOB ib0:10.0.0.2<0>",
             "gpu-1:12345:12390 [0] NCCL INFO NET/IB : Using [0]mlx5_0+mlx5_1:1/IB/SHARP ; OOB ib0:10.0.0.2<0>"]
    got = [(e.fields["ports"], e.fields["by"]) for e in helpers.events(lines) if e.kind == "net.ports_used"]
    assert got == [("mlx5_0", "perftest"), ("mlx5_0:1 mlx5_2:1", "nccl"), ("mlx5_0:1 mlx5_1:1", "nccl")]


def test_words_that_name_no_port_are_none() -> None:
    # near misses: NCCL finding no device, NCCL's socket transport, a banner line of another field
    lines = ["gpu-1:1:1 [0] NCCL INFO NET/IB : No device found.",
             "gpu-1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.0.12<0>",
             " Number of qps   : 1            Transport type : IB"]
    assert [e for e in helpers.events(lines) if e.kind == "net.ports_used"] == []


def test_a_down_port_the_job_did_not_name_is_unused() -> None:
    spare = _down("mlx5_1")
    used = _ev("net.ports_used", None, ports="mlx5_0", by="perftest")
    out = unused_ports([spare, used])
    assert out == [spare]  # the words are never events of the analysis
    assert spare.fields.get("unused") is True
    assert spare.fields.get("ports_used") == "mlx5_0"


def test_a_down_port_the_job_named_or_no_words_stay_the_link() -> None:
    # near misses: the port NCCL names (device and port), another node's words, no words at all
    named = _down("mlx5_1")
    other_port = _down("mlx5_0", port=2)
    elsewhere = _down("mlx5_3", node="n2")
    out = unused_ports([named, other_port, elsewhere,
                        _ev("net.ports_used", "n1", ports="mlx5_0:1 mlx5_1:1", by="nccl")])
    assert "unused" not in named.fields
    assert other_port.fields.get("unused") is True  # port 2 of mlx5_0: NCCL took port 1
    assert "unused" not in elsewhere.fields  # n1's words say nothing of n2's ports
    assert len(out) == 3
    alone = [_down("mlx5_1")]
    assert unused_ports(alone) is alone
