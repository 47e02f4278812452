"""The addresses NCCL's bootstrap lines name are kept by the event store as addresses, beside its events, never
as events (collect/events.py; docs/events.md "Addresses"), and the engine learns from them which node owns an
address (engine/normalise.py NodeMapper.learn_addresses)."""

from __future__ import annotations

from firstfault.collect.events import EventStore
from firstfault.collect.scan import Extraction, all_line_extractors
from firstfault.engine.normalise import NodeMapper
from firstfault.extract.base import Candidate, Draft, LineContext
from firstfault.model import ADDRESS, NET_READY

# NCCL's INFO line (src/bootstrap.cc `Bootstrap : Using %s`, its interface and address as ncclSocketToString prints
# them), with the host:pid:tid [dev] header of NCCL's logger.
BOOTSTRAP = "node-01:4242:4242 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.2<0>"


def _ctx(node: str | None = "node-01", rank: int | None = 3) -> LineContext:
    return LineContext("application", "app/rank-3.log", 7, node, rank, None, {})


def test_an_address_draft_is_kept_as_an_address_not_an_event() -> None:
    store = EventStore()
    store.add_drafts([Draft(ADDRESS, {"addr": "10.0.0.2", "iface": "ib0"}, device="gpu0", host="node-01.local")],
                     _ctx(), BOOTSTRAP)
    assert store.events == []
    assert store.addresses == [("10.0.0.2", "ib0", "node-01", "node-01.local", 3)]


def test_another_draft_of_the_same_line_stays_an_event() -> None:
    """The near miss: a kind other than the address's is an event as before, and no address."""
    store = EventStore()
    store.add_drafts([Draft("nccl.timeout", {"op": "ALLREDUCE"})], _ctx(), "NCCL timeout")
    assert [e.kind for e in store.events] == ["nccl.timeout"] and store.addresses == []


def test_a_network_word_is_kept_with_its_place_not_as_an_event() -> None:
    store = EventStore(cap=2)
    for line in range(3):  # the first `cap` of a signature, as events are kept
        ctx = LineContext("application", "app/rank-3.log", 7 + line, "node-01", 3, None, {})
        store.add_drafts([Draft(NET_READY, {"network": "IB"})], ctx, "NCCL INFO Using network IB")
    assert store.events == []
    assert store.net_ready == [("IB", "app/rank-3.log", 7, None, "node-01", None, 3),
                               ("IB", "app/rank-3.log", 8, None, "node-01", None, 3)]


def test_the_extraction_gives_the_line_as_an_address() -> None:
    ex = Extraction(all_line_extractors())
    store = EventStore()
    ex.add_events(Candidate("application", "app/rank-3.log", 7, "node-01", 3, None, BOOTSTRAP), store)
    assert store.events == [] and store.addresses == [("10.0.0.2", "ib0", "node-01", "node-01", 3)]
    assert ex.events(Candidate("application", "app/rank-3.log", 8, "node-01", 3, None, BOOTSTRAP)) == []


def test_past_the_cap_an_address_is_only_counted_as_its_events_were() -> None:
    store = EventStore(cap=2)
    ctx = _ctx()
    for i in range(4):
        store.add_drafts([Draft(ADDRESS, {"addr": f"10.0.0.{i}", "iface": "ib0"})], ctx, BOOTSTRAP)
    assert [a[0] for a in store.addresses] == ["10.0.0.0", "10.0.0.1"]
    (key, n), = store.counts.items()
    assert n == 4
    store.repeat(key, 1, 5)  # a fold's copies past the cap (collect/fold.py end_file): counted, no event to count on
    assert store.counts[key] == 9 and store.events == []


def test_the_first_line_that_names_an_address_on_a_node_decides() -> None:
    mapper = NodeMapper(["node-01", "node-02"], {0: "node-01", 1: "node-02"})
    mapper.learn_addresses([
        ("10.0.0.9", "ib0", None, None, None),  # a line of no node, host or rank: teaches nothing
        ("10.0.0.9", "ib0", None, None, 1),  # rank 1's: node-02's
        ("10.0.0.9", "ib0", "node-01", None, 0),  # a later line that names it again: the first stands
    ])
    assert mapper.host("10.0.0.9") == "node-02"
    assert mapper.host("10.0.0.8") is None
