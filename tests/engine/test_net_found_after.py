"""engine/normalise.py net_found_after: a transport's start-up failure that NCCL's `Using network` word follows in the
same file, node and rank is marked `fallback`; the words are indexed only where such a failure was read (issue 27:
16k ranks' words), with the same answer."""

from __future__ import annotations

from firstfault.engine.normalise import net_found_after
from firstfault.model import Event, Evidence


def _ev(kind: str, file: str, line: int, rank: int | None, node: str = "n1", **fields: object) -> Event:
    return Event(kind, None, node, Evidence("application", file, line, "x"), rank, None, dict(fields))  # type: ignore[arg-type]


def test_a_failure_the_network_word_follows_is_a_fallback() -> None:
    err = _ev("nccl.error", "app/rank-0.log", 5, 0, transport="ofi")
    words = [_ev("nccl.net_ready", f"app/rank-{r}.log", 9, r, network="IB") for r in range(200)]
    out = net_found_after([err, *words])
    assert out == [err]  # the network words are never events of the analysis
    assert err.fields.get("fallback") is True


def test_the_network_word_of_another_file_or_before_the_failure_is_none() -> None:
    # near misses: the word in another rank's file, and in the same file but before the failure
    err = _ev("nccl.error", "app/rank-0.log", 5, 0, transport="ib")
    other = _ev("nccl.net_ready", "app/rank-1.log", 9, 1, network="Socket")
    before = _ev("nccl.net_ready", "app/rank-0.log", 3, 0, network="Socket")
    out = net_found_after([err, other, before])
    assert out == [err]
    assert "fallback" not in err.fields


def test_no_network_word_leaves_the_events_as_they_are() -> None:
    events = [_ev("nccl.error", "app/rank-0.log", 5, 0, transport="ofi"), _ev("nccl.timeout", "app/rank-0.log", 7, 0)]
    assert net_found_after(events) is events
