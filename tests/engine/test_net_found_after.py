"""engine/normalise.py net_found_after: a transport's start-up failure that NCCL's `Using network` word follows in the
same file, node and rank is marked `fallback`; the words are indexed only where such a failure was read (issue 27:
16k ranks' words), with the same answer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import cast

from firstfault.bundle import Context
from firstfault.engine.normalise import NodeMapper, net_found_after, ready_placed
from firstfault.model import Event, Evidence


def _ev(kind: str, file: str, line: int, rank: int | None, node: str = "n1", **fields: object) -> Event:
    return Event(kind, None, node, Evidence("application", file, line, "x"), rank, None, dict(fields))  # type: ignore[arg-type]


def test_a_failure_the_network_word_follows_is_a_fallback() -> None:
    err = _ev("nccl.error", "app/rank-0.log", 5, 0, transport="ofi")
    words = [(f"app/rank-{r}.log", "n1", 9, r, "IB") for r in range(200)]
    out = net_found_after([err], words)
    assert out == [err]
    assert err.fields.get("fallback") is True


def test_the_network_word_of_another_file_or_before_the_failure_is_none() -> None:
    # near misses: the word in another rank's file, and in the same file but before the failure
    err = _ev("nccl.error", "app/rank-0.log", 5, 0, transport="ib")
    other = ("app/rank-1.log", "n1", 9, 1, "Socket")
    before = ("app/rank-0.log", "n1", 3, 0, "Socket")
    elsewhere = ("app/rank-0.log", "n2", 9, 0, "Socket")
    out = net_found_after([err], [other, before, elsewhere])
    assert out == [err]
    assert "fallback" not in err.fields


def test_no_network_word_leaves_the_events_as_they_are() -> None:
    events = [_ev("nccl.error", "app/rank-0.log", 5, 0, transport="ofi"), _ev("nccl.timeout", "app/rank-0.log", 7, 0)]
    assert net_found_after(events, []) is events
    assert not any("fallback" in e.fields for e in events)


def test_the_words_are_placed_as_their_events_would_be() -> None:
    # a word of another attempt's time, of a host outside the allocation: left out, as normalise leaves such events out
    t0 = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
    ctx = cast(Context, SimpleNamespace(window_start=t0, window_end=t0 + timedelta(hours=1)))  # (the window alone)
    mapper = NodeMapper(["node-01", "node-02"], {})
    ready = [("IB", "a.log", 4, t0 + timedelta(minutes=5), None, "node-01.cluster", 0),
             ("IB", "a.log", 5, t0 - timedelta(days=2), None, "node-01", 0),
             ("IB", "b.log", 6, t0 + timedelta(minutes=5), "other", "other", 1),
             ("Socket", "c.log", 7, None, "node-02", None, 2)]
    assert ready_placed(ready, ctx, mapper, timedelta(seconds=120)) == [
        ("a.log", "node-01", 4, 0, "IB"), ("c.log", "node-02", 7, 2, "Socket")]
