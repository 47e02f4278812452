"""EventStore.add_kept: the parallel reader's parent takes a worker's kept events of a file the bundle lists once as
they come (analysis/parallel.py), which is what add() does with them one by one; a file listed twice is read twice
into the same signatures, and there add() counts the second reading on the first's events (the near miss: why the
parent keeps add() for it)."""

from __future__ import annotations

from firstfault.collect.events import EventStore
from firstfault.model import Event, Evidence

# NCCL's socket transport losing its peer (src/transport/net_socket.cc `NET/Socket : Connection closed by remote
# peer`), as a worker's store keeps a hundred copies of it: the first `cap` events, the rest counted on the last.
LINE = "node-001:4100:4200 [0] NCCL WARN NET/Socket : Connection closed by remote peer node-002<45678>"


def _reading(file: str, copies: int = 100) -> list[Event]:
    worker = EventStore()
    for i in range(copies):
        worker.add(Event("nccl.remote_error", None, "node-001", Evidence("application", file, 2 * i + 2, LINE),
                         rank=0, device="gpu0", fields={"detail": "Connection closed by remote peer"}))
    return worker.events


def _events(store: EventStore) -> list[tuple[object, ...]]:
    return [(e.evidence.file, e.evidence.line, e.fields.get("repeat")) for e in store.events]


def test_a_file_read_once_is_kept_as_add_keeps_it() -> None:
    one, kept = EventStore(), EventStore()
    for file in ("app/rank-0.log", "app/rank-1.log"):
        events = _reading(file)
        assert len(events) == one.cap and events[-1].fields["repeat"] == 100 - one.cap + 1
        for e in events:
            one.add(e)
        kept.add_kept(_reading(file))
    assert _events(kept) == _events(one) and len(kept.events) == 2 * one.cap


def test_a_file_read_twice_counts_its_second_reading_on_the_first() -> None:
    """The near miss: the same file's second reading shares its signatures, so add() keeps no more events and counts
    the copies on the last one; taking it as kept would list each event twice."""
    one = EventStore()
    for _ in range(2):
        for e in _reading("app/rank-0.log"):
            one.add(e)
    assert len(one.events) == one.cap
    assert one.events[-1].fields["repeat"] == 200 - one.cap + 1
    kept = EventStore()
    kept.add_kept(_reading("app/rank-0.log"))
    kept.add_kept(_reading("app/rank-0.log"))
    assert len(kept.events) == 2 * one.cap  # what the parent must not do for a file listed twice
