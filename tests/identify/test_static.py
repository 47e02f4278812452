"""StaticAttempts: a window and a Slurm hostlist, validated once with errors that name the field."""

from __future__ import annotations

import pytest

from firstfault.bundle import Context
from firstfault.hostlist import hostlist_compress, hostlist_expand
from firstfault.identify.base import IdentifyError
from firstfault.identify.static import StaticAttempts

START, END = "2026-11-02T10:00:00Z", "2026-11-02T12:00:00+01:00"


def test_hostlist_window_and_ranks() -> None:
    ctx = StaticAttempts(start=START, end="2026-11-02T10:30:00Z", nodes="node-[01-03,07]", id="run-9", name="pretrain",
                        ranks={"node-01": "0-7", "node-02": "8-15"}, terminal_state="FAILED", exit_code="1:0")
    ident = ctx.identify("whatever the ref")
    wl = ident.workload
    assert wl.nodes == ["node-01", "node-02", "node-03", "node-07"]
    assert (wl.id, wl.name, wl.scheduler, wl.attempt) == ("run-9", "pretrain", "static", 0)
    assert (wl.window.start, wl.window.end) == (START, "2026-11-02T10:30:00Z")
    assert Context.from_spec(wl).rank_to_node[9] == "node-02"
    assert ident.documents == [] and ident.owner is None
    # Each identify hands out its own copy.
    ident.workload.nodes.append("x")
    assert ctx.identify("").workload.nodes == ["node-01", "node-02", "node-03", "node-07"]


def test_node_sequence_and_defaults() -> None:
    wl = StaticAttempts(start=START, end=END, nodes=["gpu1", " gpu2 "]).identify("").workload
    assert (wl.nodes, wl.ranks, wl.terminal_state) == (["gpu1", "gpu2"], None, None)
    assert wl.id.startswith("static-")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"start": "yesterday"}, r"window\.start: not an RFC 3339 time: 'yesterday'"),
        ({"end": "2026-11-02T09:59:59Z"}, r"window\.end .* is not after window\.start"),
        ({"end": "2026-11-02T10:00:00+00:00"}, r"window\.end .* is not after window\.start"),
        ({"nodes": "node-[01-03"}, r"nodes: hostlist .*unbalanced"),
        ({"nodes": "node-[03-01]"}, r"nodes: .*descending range"),
        ({"nodes": ""}, r"nodes: no node given"),
        ({"nodes": ["a", "b", "a"]}, r"nodes: listed twice: a"),
        ({"ranks": {"node-09": "0-7"}}, r"ranks: nodes not in the node list: node-09"),
        ({"ranks": {"node-01": "7-0"}}, r"workload\.ranks\.node-01: bad rank range '7-0'"),
        ({"exit_code": "137"}, r"exit_code: expected 'return:signal'"),
        ({"timezone": "Mars/Base"}, r"timezone: .*unknown time zone 'Mars/Base'"),
    ],
)
def test_bad_input_names_the_field(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"start": START, "end": END, "nodes": "node-[01-02]"} | kwargs
    with pytest.raises(IdentifyError, match=message):
        StaticAttempts(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "hosts",
    [
        ["node-01", "node-02", "node-03", "node-07", "login", "node-08"],
        ["gpu9", "gpu10", "gpu11"],
        ["a1b2", "a1b3", "x"],
        [],
    ],
)
def test_hostlist_compress_round_trips(hosts: list[str]) -> None:
    text = hostlist_compress(hosts)
    assert sorted(hostlist_expand(text)) == sorted(hosts)


def test_hostlist_compress_shape() -> None:
    assert hostlist_compress(["node-02", "node-01", "node-04", "login", "node-01"]) == "login,node-[01-02,04]"
    assert hostlist_compress(["n1"]) == "n1"


def test_default_id_is_a_hash_of_window_and_nodes() -> None:
    """Two static attempts with other windows or nodes must not share a store key ("static" did)."""
    a = StaticAttempts(start=START, end=END, nodes="node-[01-02]").identify("").workload.id
    again = StaticAttempts(start=START, end=END, nodes="node-[02,01]").identify("").workload.id
    other_window = StaticAttempts(start=START, end="2026-11-02T10:30:00Z",
                                  nodes="node-[01-02]").identify("").workload.id
    other_nodes = StaticAttempts(start=START, end=END, nodes="node-[01-03]").identify("").workload.id
    assert a.startswith("static-") and a == again
    assert len({a, other_window, other_nodes}) == 3
    assert StaticAttempts(start=START, end=END, nodes="node-01", id="run-7").identify("").workload.id == "run-7"
