"""The events an analysis keeps: one store, flat in memory however often a line repeats.

Below the scanner (collect/scan.py) and the folder (collect/fold.py), which both add to it: a
draft an extractor returned becomes an event here (`draft_to_event`), and past a cap of
copies per signature only a count is kept. A draft of an address a node owns (model.ADDRESS) is no event: the
store keeps it as an Address, beside the events (`addresses`), under the same cap; nor is one of the ports a program
of the job named (model.PORTS_USED): kept once each as a PortsUsed (`ports_used`); nor NCCL's word that it has its
network (model.NET_READY): a NetReady, with its place and time, under the cap (`net_ready`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from firstfault.extract.base import Draft, LineContext
from firstfault.model import (
    ADDRESS,
    FACT_KINDS,
    NET_READY,
    PORTS_USED,
    Address,
    Event,
    Evidence,
    FieldValue,
    NetReady,
    PortsUsed,
)

# What one draft of a line read in full became, less the line's own place and time (collect/fold.py's copies below
# the store's cap): its signature, its weight, and the event's kind, node, rank, device, fields (the host in them as
# draft_to_event puts it), source and file.
EventCopy = tuple[tuple[object, ...], int, str, str | None, int | None, str | None, dict[str, FieldValue], str,
                  str | None]


class EventStore:
    """Collects events, keeping memory flat when one line repeats a million times.

    Past `cap` events of one signature (kind, node, rank, device, key field)
    only a count is kept, on the last stored event's `repeat` field.

    The addresses the lines name (drafts of kind model.ADDRESS) are kept in `addresses`, in the order read,
    not as events: the first `cap` of a signature, as its events would have been (what the engine learns
    from them is the first node named for an address). The ports a program of the job named (drafts of kind
    model.PORTS_USED) are kept in `ports_used`, each once, in the order first read: a 16k-rank job's every rank names
    its node's ports, and what is learned from them is which ports each node's traffic took. NCCL's words that it
    has its network (model.NET_READY) are kept in `net_ready`, the first `cap` of a signature with their place and
    time, in the order read.
    """

    def __init__(self, cap: int = 32) -> None:
        self.cap = cap
        self.events: list[Event] = []
        self.addresses: list[Address] = []
        self._ports: dict[PortsUsed, None] = {}
        self.net_ready: list[NetReady] = []
        self._seen: dict[tuple[object, ...], Event] = {}
        self._counts: dict[tuple[object, ...], int] = {}

    @staticmethod
    def _key(kind: str, source: str, file: str | None, node: str | None, rank: int | None, device: str | None,
             f: Mapping[str, object]) -> tuple[object, ...]:
        # The source and file are in the key so the kept set does not depend
        # on the order in which sources arrive (bundle vs Service request).
        return (kind, source, file, node, rank, device,
                f.get("xid", f.get("condition", f.get("exc_type", f.get("state")))))

    def _put(self, key: tuple[object, ...], ev: Event | None, weight: int) -> None:
        """Keep `ev` as its signature's next event, or count `weight` copies on the last kept one
        (`ev` is None only past the cap: the caller did not build an event that only counts)."""
        n = self._counts.get(key, 0) + 1
        self._counts[key] = n
        if ev is None or n > self.cap:
            self._on_last(key, weight)
            return
        self._seen[key] = ev
        self.events.append(ev)

    @property
    def counts(self) -> Mapping[tuple[object, ...], int]:
        """How many events of each signature were added (kept or counted)."""
        return self._counts

    def repeat(self, key: tuple[object, ...], weight: int, n: int = 1) -> None:
        """`n` more events of signature `key`, which is past the cap, weighing `weight` together: counted on its
        last kept event, as add() counts them one by one (collect/fold.py)."""
        self._counts[key] += n
        if key[0] not in FACT_KINDS:  # (a fact past the cap is only counted)
            self._on_last(key, weight)

    def _on_last(self, key: tuple[object, ...], weight: int) -> None:
        """Count `weight` copies on the last kept event of signature `key`."""
        last = self._seen[key]
        last.fields["repeat"] = int(last.fields.get("repeat") or 1) + weight

    def add(self, ev: Event) -> None:
        """Keep `ev`, or count it on the last kept event of its signature.

        An event that arrives with a `repeat` of its own (a parallel reader's worker folded its file's
        copies into it with a store of its own) counts that many: the signature holds the file, and
        a file is read by one worker, so the result is the one-store result.
        """
        key = self._key(ev.kind, ev.evidence.source, ev.evidence.file, ev.node, ev.rank, ev.device, ev.fields)
        self._put(key, ev, int(ev.fields.get("repeat") or 1))

    def add_copy(self, events: tuple[EventCopy, ...], time: datetime | None, line: int, text: str) -> None:
        """add() of the events a copy of a line gives, where reading it gives `events` (each draft's, as
        Extraction.add_events_read took them from a copy read in full) at its own time, line and text: what
        add_drafts does with that copy's drafts, without the extractors (collect/fold.py, LineFold.copy_events)."""
        counts, cap = self._counts, self.cap
        for key, weight, kind, node, rank, device, fields, source, file in events:
            if kind in FACT_KINDS:
                host = fields.get("host")
                self._fact(kind, key, fields, node, host if isinstance(host, str) else None, rank, file, line, time)
                continue
            # (positional: a dataclass's keywords cost a microsecond or two more an event)
            ev = Event(kind, time, node, Evidence(source, file, line, text), rank, device, dict(fields)) \
                if counts.get(key, 0) < cap else None
            self._put(key, ev, weight)

    def add_drafts(self, drafts: list[Draft], ctx: LineContext, text: str) -> None:
        """`add(draft_to_event(d, ctx, text))` for each draft, without building the events that only
        count (past `cap` of their signature): a chatty log's ten-thousandth copy of a line."""
        for d in drafts:
            rank = d.rank if d.rank is not None else ctx.rank
            key = self._key(d.kind, ctx.source, ctx.file, ctx.node, rank, d.device, d.fields)
            if d.kind in FACT_KINDS:
                self._fact(d.kind, key, d.fields, ctx.node, d.host or ctx.host, rank, ctx.file, ctx.lineno, ctx.time)
                continue
            ev = draft_to_event(d, ctx, text) if self._counts.get(key, 0) < self.cap else None
            self._put(key, ev, int(d.fields.get("repeat") or 1))

    def _fact(self, kind: str, key: tuple[object, ...], f: Mapping[str, FieldValue], node: str | None,
              host: str | None, rank: int | None, file: str | None, line: int | None, time: datetime | None) -> None:
        """Keep a fact draft's fields and its line's node, host and rank, below the cap (its signature counted, as an
        event's is, for collect/fold.py): an address (`addr`, `iface`) as an Address; ports (`ports`, `by`) as a
        PortsUsed, once (the rank only where no node is known); a network (`network`) as a NetReady, with the line's
        file, number and time."""
        n = self._counts.get(key, 0) + 1
        self._counts[key] = n
        if n > self.cap:
            return
        if kind == ADDRESS:
            self.addresses.append((str(f["addr"]), str(f["iface"]), node, host, rank))
        elif kind == PORTS_USED:
            self._ports[(str(f["ports"]), str(f["by"]), node, host, rank if node is None else None)] = None
        elif kind == NET_READY:
            self.net_ready.append((str(f["network"]), file, line, time, node, host, rank))

    @property
    def ports_used(self) -> list[PortsUsed]:
        """The ports the job's programs named (model.PortsUsed), each once, in the order first read."""
        return list(self._ports)

    def add_kept(self, events: list[Event]) -> None:
        """The events another store with this one's cap kept of one file that no other reading adds to here (a
        parallel reader's worker: a file the bundle lists once, read whole there): each is kept as it comes, as add()
        keeps it (the signature holds the file, so none has more than `cap` of them, the copies past the cap already
        counted on its last one), without the signatures' counts, which only a reading of the same file asks for
        (collect/fold.py). add() costs three times this on a 16k-rank job's 49k events."""
        self.events.extend(events)

    def add_addresses(self, addresses: list[Address]) -> None:
        """The addresses of a file another store kept (a parallel reader's worker: its file's, capped there; the
        signature holds the file, which that worker alone read)."""
        self.addresses.extend(addresses)

    def add_net_ready(self, ready: list[NetReady]) -> None:
        """The network words of a file another store kept (a parallel reader's worker: its file's, capped there)."""
        self.net_ready.extend(ready)

    def add_ports_used(self, ports: list[PortsUsed]) -> None:
        """The ports a file's lines named, as another store kept them (a parallel reader's worker's), each once."""
        self._ports.update(dict.fromkeys(ports))


def draft_to_event(d: Draft, ctx: LineContext, text: str) -> Event:
    host = d.host or ctx.host
    fields = dict(d.fields)
    if host:
        fields["host"] = host
    # (Event's and Evidence's fields by position: by keyword a dataclass's __init__ costs a microsecond or two more,
    # on every event of a many-rank job)
    return Event(d.kind, ctx.time, ctx.node, Evidence(ctx.source, ctx.file, ctx.lineno, text),
                 d.rank if d.rank is not None else ctx.rank, d.device, fields)
