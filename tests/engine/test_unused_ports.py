"""engine/normalise.py unused_ports and extract/nccl.py PortsUsedExtractor: a port-state snapshot's down port that
the ports a program of the job named as its traffic's (NCCL's `NET/IB : Using`, perftest's banner) leave out is a
spare port (`unused`, rule network-link-snapshot leaves it out); one they name, or a snapshot with no such words,
stays the link down."""

from __future__ import annotations

from firstfault.collect.events import EventStore
from firstfault.collect.scan import Extraction, all_line_extractors, feed_store
from firstfault.engine.normalise import NodeMapper, ports_said, unused_ports
from firstfault.extract.base import Candidate
from firstfault.model import Event, Evidence


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
    store = feed_store(Candidate("application", "app.log", i, None, None, None, t) for i, t in enumerate(lines, 1))
    assert [(ports, by) for ports, by, *_ in store.ports_used] == [
        ("mlx5_0", "perftest"), ("mlx5_0:1 mlx5_2:1", "nccl"), ("mlx5_0:1 mlx5_1:1", "nccl")]
    assert store.events == []  # facts, never events


def test_every_rank_naming_its_nodes_ports_is_one_fact() -> None:
    # a many-rank job: each rank's log says its node's ports; the store keeps one fact per node, host and ports, in
    # the order first read (the same with a worker's store merged in: a parallel reader's)
    ex = Extraction(all_line_extractors())
    store = EventStore()
    for rank in range(64):
        node = f"n{rank // 8}"
        text = f"{node}:1:1 [{rank % 8}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_2:1/IB ; OOB ib0:10.0.0.2<0>"
        ex.add_events(Candidate("application", f"{node}/rank{rank}.log", 1, node, rank, None, text), store)
    assert [(node, host) for _, _, node, host, _ in store.ports_used] == [(f"n{i}", f"n{i}") for i in range(8)]
    merged = EventStore()
    merged.add_ports_used(store.ports_used[:3])
    merged.add_ports_used(store.ports_used[2:])
    assert merged.ports_used == store.ports_used
    # near miss: with no node known, each rank's words are its own (the rank is how the line is placed)
    loose = EventStore()
    for rank in range(2):
        ex.add_events(Candidate("application", "app.log", rank + 1, None, rank, None,
                                "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.2<0>"), loose)
    assert [r for *_, r in loose.ports_used] == [0, 1]


def test_words_that_name_no_port_are_none() -> None:
    # near misses: NCCL finding no device, NCCL's socket transport, a banner line of another field
    lines = ["gpu-1:1:1 [0] NCCL INFO NET/IB : No device found.",
             "gpu-1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.0.12<0>",
             " Number of qps   : 1            Transport type : IB"]
    store = feed_store(Candidate("application", "app.log", i, None, None, None, t) for i, t in enumerate(lines, 1))
    assert store.ports_used == []


def test_a_down_port_the_job_did_not_name_is_unused() -> None:
    spare = _down("mlx5_1")
    out = unused_ports([spare], [(None, "mlx5_0")])
    assert out == [spare]
    assert spare.fields.get("unused") is True
    assert spare.fields.get("ports_used") == "mlx5_0"


def test_a_down_port_the_job_named_or_no_words_stay_the_link() -> None:
    # near misses: the port NCCL names (device and port), another node's words, no words at all
    named = _down("mlx5_1")
    other_port = _down("mlx5_0", port=2)
    elsewhere = _down("mlx5_3", node="n2")
    out = unused_ports([named, other_port, elsewhere], [("n1", "mlx5_0:1 mlx5_1:1")])
    assert "unused" not in named.fields
    assert other_port.fields.get("unused") is True  # port 2 of mlx5_0: NCCL took port 1
    assert "unused" not in elsewhere.fields  # n1's words say nothing of n2's ports
    assert len(out) == 3
    alone = [_down("mlx5_1")]
    assert unused_ports(alone, []) is alone
    assert "unused" not in alone[0].fields


def test_ports_are_placed_on_the_allocation_as_events_are() -> None:
    mapper = NodeMapper(["node-01", "node-02"], {})
    said = ports_said([("mlx5_0:1", "nccl", "node-01", "node-01", None),
                       ("mlx5_1:1", "nccl", None, "node-02.cluster", None),
                       ("mlx5_2:1", "nccl", "other-host", "other-host", None)], mapper)
    # another host's words are left out, as its events are (normalise)
    assert said == [("node-01", "mlx5_0:1"), ("node-02", "mlx5_1:1")]
