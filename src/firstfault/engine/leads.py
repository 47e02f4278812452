"""Leads: where a hang's evidence points when it does not establish a cause.

spec/verdict.md ("Leads and unrecognized lines"). A collective hang leaves
thousands of identical timeouts; what tells is the rank that differs:

- `laggard_rank`: ranks behind the majority in the watchdog's numbers (last
  enqueued / completed work in the c10d status and dump-signal lines, or a
  flight-recorder dump's pg_status), ranks that printed no timeout while the
  others (NCCL watchdog or gloo) did, ranks a monitored barrier or a
  desync-debug report names, ranks whose watchdog got stuck while the others
  timed out;
- `desync`: at one sequence number, ranks that issued a different collective
  (op type, element counts) than the others, and ranks that enqueued a
  collective no other rank issued;
- `stuck_frame`: the innermost interesting frame of each hung rank's stack
  dump, fewest ranks first (the odd one out is the telling one);
- `first_exit`: the first rank to die (exit code, signal) when other ranks
  failed after it; the task (rank) JAX's or TensorFlow's coordination service
  says stopped sending heartbeats or restarted.

Every rank at the same numbers gives no laggard: nothing is invented.
Leads are ordered deterministically (kind, then first_seen, ranks, nodes).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from firstfault.engine.ports import cable_of
from firstfault.model import Event, EvidenceItem, Lead, iso, iso_order

KIND_ORDER = {"laggard_rank": 0, "desync": 1, "stuck_frame": 2, "first_exit": 3}
EVIDENCE_PER_LEAD = 4
MAX_STACK_LEADS = 4
# A lead names at most this many ranks (and nodes), or it is not given: one that names half of a
# 16k-rank job points nowhere (docs/verdict.md, "Leads").
MAX_LEAD_RANKS = 64
# Silence may be a log that was not collected rather than a rank that never got there, so a rank
# that printed nothing is a laggard only when it is one of very few: at most this fraction of the
# ranks (and at least one) while all others reported.
SILENT_FRACTION = 1 / 32


def differ(odd: int, rest: int, *, directed: bool = False) -> bool:
    """Whether `odd` ranks differ from the `rest` they are compared with: a minority against a majority.

    Fewer than the rest, and no more than a lead names (MAX_LEAD_RANKS). One rank against one other
    counts only where the evidence has a direction (`directed`): the rank that waited in a collective
    names the one it waited for, the rank that lost its peer names the peer that left. Without one, an
    even split has no odd one out.
    """
    if odd < 1 or odd > MAX_LEAD_RANKS:
        return False
    return odd < rest or (directed and odd == rest == 1)

_FAILURE_KINDS = ("nccl.", "gloo.timeout", "app.", "torch.child_failed", "process.signal", "c10d.")


@dataclass(slots=True)
class LeadDraft:
    """A lead before it is placed in the verdict: kind, ranks, nodes, summary and the events behind it."""

    kind: str
    ranks: list[int]
    nodes: list[str]
    summary: str
    first: datetime | None
    events: list[Event] = field(default_factory=list)
    order: int = 0  # within a kind: lower is more telling
    devices: list[str] = field(default_factory=list)

    def sort_key(self) -> tuple[object, ...]:
        return (KIND_ORDER.get(self.kind, 9), self.order, iso(self.first) is None, iso(self.first) or "",
                self.ranks, self.nodes, self.summary)


def _ev_key(ev: Event) -> tuple[object, ...]:
    t = ev.t_lo if ev.t_lo is not None else ev.time  # ev.earliest(): inline (once per event of 16k ranks)
    evidence = ev.evidence
    # (the time as its iso string orders: iso_order, which writes no string)
    y, u = ("", None) if t is None else iso_order(t)
    return (t is None, y, u, ev.node or "", evidence.file or "", evidence.line or 0, ev.kind,
            ev.rank if ev.rank is not None else -1)


def _fmt_ranks(ranks: Iterable[int], limit: int = 8) -> str:
    rs = sorted(set(ranks))
    head = ", ".join(str(r) for r in rs[:limit])
    more = f" and {len(rs) - limit} more" if len(rs) > limit else ""
    return ("rank " if len(rs) == 1 else "ranks ") + head + more


def _others(n: int) -> str:
    return "the other rank" if n == 1 else f"the {n} other ranks"


def _ints(text: object) -> list[int]:
    return [int(x) for x in str(text or "").split(",") if x.strip().isdigit()]


class _Ctx:
    def __init__(self, events: list[Event], rank_to_node: dict[int, str]) -> None:
        self.rank_to_node = rank_to_node
        self._events = events
        self._resolver: Callable[[Event], str | None] | None = None
        # Each event's place in the order of _ev_key, worked out in one sort: the leads sort the same events many
        # times over (a 16k-rank job's watchdog lines in five sorts of 16k), and comparing the key's tuples (a
        # time string, node, file, ...) cost more than all else. Events of equal keys get one place (that of the
        # first of them), so sorting by place is sorting by key: the same order, ties kept in their order.
        keys = [_ev_key(e) for e in events]
        order = sorted(range(len(events)), key=keys.__getitem__)
        self.ordered = [events[i] for i in order]  # `events` by _ev_key: what sorted(events, key=_ev_key) gives
        self._pos: dict[int, int] = {}
        prev: tuple[object, ...] | None = None
        place = 0
        for at, i in enumerate(order):
            k = keys[i]
            if at == 0 or k != prev:
                place, prev = at, k
            self._pos[id(events[i])] = place
        self.rank_nodes: dict[int, str] = {}
        for ev in self.ordered:
            if ev.rank is not None and ev.node and ev.rank not in self.rank_nodes:
                self.rank_nodes[ev.rank] = ev.node
        self.known_ranks = set(rank_to_node) | {e.rank for e in events if e.rank is not None}

        self.local: dict[int, int] = {}  # rank -> its index among its node's ranks (the GPU it drives)
        self.by_local: dict[tuple[str, int], int] = {}  # (node, local rank) -> rank
        per_node: dict[str, list[int]] = {}
        for r, n in rank_to_node.items():
            per_node.setdefault(n, []).append(r)
        for n, rs in per_node.items():
            for i, r in enumerate(sorted(rs)):
                self.local[r] = i
                self.by_local[(n, i)] = r

    def key(self, ev: Event) -> int:
        """A sort key of one of the events the leads were given that orders them as _ev_key does (its place in
        `ordered`; the list holds them, so an id is not reused meanwhile)."""
        return self._pos[id(ev)]

    def pg_resolver(self) -> Callable[[Event], str | None]:
        """_pg_resolver of the events, built once for every kind of lead that places lines in process groups."""
        if self._resolver is None:
            self._resolver = _pg_resolver(self._events)
        return self._resolver

    def node(self, rank: int) -> str | None:
        return self.rank_nodes.get(rank) or self.rank_to_node.get(rank)

    def global_rank(self, node: str | None, local: object) -> int | None:
        """torchrun's `local_rank: 3` on a node -> the node's fourth rank (from the rank map)."""
        if node is None or not isinstance(local, int):
            return None
        return self.by_local.get((node, local))

    def devices(self, ranks: Iterable[int]) -> list[str]:
        return sorted({f"{n}/gpu{self.local[r]}" for r in ranks if r in self.local and (n := self.node(r))})

    def nodes(self, ranks: Iterable[int]) -> list[str]:
        return sorted({n for r in ranks if (n := self.node(r))})


def _draft(ctx: _Ctx, kind: str, ranks: Iterable[int], summary: str, evs: list[Event],
           order: int = 0, nodes: list[str] | None = None) -> LeadDraft:
    rs = sorted(set(ranks))
    picked: list[Event] = []
    for e in evs:
        if all(e is not p for p in picked):
            picked.append(e)
        if len(picked) >= EVIDENCE_PER_LEAD:
            break
    times = [t for e in picked if (t := e.earliest()) is not None]
    return LeadDraft(kind=kind, ranks=rs, nodes=nodes if nodes is not None else ctx.nodes(rs), summary=summary,
                     first=min(times) if times else None, events=picked, order=order, devices=ctx.devices(rs))


# --------------------------------------------------------------------------
# Watchdog numbers and flight-recorder queues
# --------------------------------------------------------------------------


@dataclass(slots=True)
class _Pos:
    """Where one rank stands in a collective's sequence: the last enqueued and completed numbers, and their report."""

    enq: int | None = None
    done: int | None = None
    ev: Event | None = None  # the report the numbers come from
    timeout: Event | None = None  # the rank's own watchdog timeout, if any


def _mode(values: list[int]) -> int:
    c = Counter(values)
    top = max(c.values())
    return max(v for v, n in c.items() if n == top)


UNKNOWN_PG = "?"


def _pg_resolver(events: list[Event]) -> Callable[[Event], str | None]:
    """The process group of a watchdog line. PyTorch 2.4-2.5 print the timeout without
    its PG and the status line after it with one: matched by (rank, sequence number).
    None when several groups are in play and the line cannot be placed in one (numbers
    of different groups are never compared)."""
    known = {str(e.fields["pg"]) for e in events
             if e.kind in ("nccl.timeout", "nccl.watchdog_status", "fr.pg_state") and e.fields.get("pg") is not None}
    by_seq: dict[tuple[int | None, object], str] = {}
    for e in events:
        if e.kind == "nccl.watchdog_status" and e.fields.get("pg") is not None:
            by_seq.setdefault((e.rank, e.fields.get("at_seq")), str(e.fields["pg"]))

    def pg_of(e: Event) -> str | None:
        pg = e.fields.get("pg")
        if pg is not None:
            return str(pg)
        hit = by_seq.get((e.rank, e.fields.get("seq")))
        if hit is not None:
            return hit
        if len(known) == 1:
            return next(iter(known))
        return UNKNOWN_PG if not known else None

    return pg_of


def _pos_of(groups: dict[str, dict[int, _Pos]], pg: str, rank: int) -> _Pos:
    """groups[pg][rank], made empty when new (setdefault without building a _Pos for every line of 16k ranks)."""
    ranks = groups.get(pg)
    if ranks is None:
        ranks = groups[pg] = {}
    p = ranks.get(rank)
    if p is None:
        p = ranks[rank] = _Pos()
    return p


def _count(counts: dict[tuple[str, int], Counter[str]], key: tuple[str, int], what: str) -> None:
    c = counts.get(key)
    if c is None:
        c = counts[key] = Counter()
    c[what] += 1


def _progress(ctx: _Ctx, events: list[Event]) -> list[LeadDraft]:
    status = [e for e in events if e.kind in ("nccl.watchdog_status", "fr.pg_state")]
    resolve = ctx.pg_resolver()

    # sorted(status, key=ctx.key) and sorted(timeouts, key=ctx.key), as the ordered events filtered: both lists
    # are `events` filtered, so their ties are in the events' order, as in `ordered` (no sort of 16k lines each)
    groups: dict[str, dict[int, _Pos]] = {}
    for e in [e for e in ctx.ordered if e.kind in ("nccl.watchdog_status", "fr.pg_state")]:  # the latest wins
        pg = resolve(e)
        if e.rank is None or pg is None:
            continue
        p = _pos_of(groups, pg, e.rank)
        enq, done = e.fields.get("last_enqueued"), e.fields.get("last_completed")
        if isinstance(enq, int):
            p.enq = enq
        if isinstance(done, int):
            p.done = done
        p.ev = e
    seq_of: dict[tuple[str, int], int] = {}
    op_at: dict[tuple[str, int], Counter[str]] = {}
    for e in status:  # a flight-recorder dump names the collective a rank waits in
        if e.kind != "fr.pg_state":
            continue
        pseq, pop, pg = e.fields.get("pending_seq"), e.fields.get("pending_op"), resolve(e)
        if isinstance(pseq, int) and pop and pg is not None:
            _count(op_at, (pg, pseq), str(pop))
    for e in [e for e in ctx.ordered if e.kind == "nccl.timeout" and not e.fields.get("stuck")]:
        pg = resolve(e)
        if e.rank is None or pg is None:
            continue
        seq = e.fields.get("seq")
        p = _pos_of(groups, pg, e.rank)
        if p.timeout is None:
            p.timeout = e
        if isinstance(seq, int):
            seq_of[(pg, e.rank)] = seq
            _count(op_at, (pg, seq), str(e.fields.get("op") or "a collective"))
            if p.enq is None:
                p.enq = seq  # it enqueued at least the collective it timed out in
            if p.done is None:
                p.done = seq - 1

    out: list[LeadDraft] = []
    for pg in sorted(groups, key=lambda g: (len(g), g)):
        ranks = groups[pg]
        with_enq = {r: p for r, p in ranks.items() if p.enq is not None}
        pg_label = f" (process group {pg})" if pg not in ("0", UNKNOWN_PG) and len(groups) > 1 else ""
        if len(with_enq) >= 2:
            m = _mode([p.enq for p in with_enq.values() if p.enq is not None])
            behind = sorted(r for r, p in with_enq.items() if p.enq is not None and p.enq < m)
            ahead = sorted(r for r, p in with_enq.items() if p.enq is not None and p.enq > m)
            majority = sorted(r for r, p in with_enq.items() if p.enq == m)
            in_majority = set(majority)  # membership per rank: a list would make 16k ranks cost 16k squared
            # The collective the majority waits in: their oldest not completed.
            dones = [p.done for r, p in with_enq.items() if r in in_majority and p.done is not None]
            waited = (_mode(dones) + 1) if dones else m
            ops = op_at.get((pg, waited))
            what = (f"{ops.most_common(1)[0][0]} SeqNum {waited}" if ops else f"collective SeqNum {waited}")
            # the majority's first report (maj_evs[:1] of them sorted: their least, not a sort of 16k ranks' lines)
            first_maj = min((x for r, p in with_enq.items() if r in in_majority
                             if (x := p.timeout or p.ev) is not None), key=ctx.key, default=None)
            maj_evs = [first_maj] if first_maj is not None else []
            if differ(len(behind), len(majority), directed=True):
                enqs = sorted({q for r in behind if (q := with_enq[r].enq) is not None})
                where = ", ".join(str(x) for x in enqs[:4])
                own = [with_enq[r].ev or with_enq[r].timeout for r in behind]
                out.append(_draft(
                    ctx, "laggard_rank", behind,
                    f"{_fmt_ranks(behind)} never entered {what}{pg_label} (last enqueued {where}); "
                    f"{_others(len(majority) + len(ahead))} waited in it",
                    [e for e in own if e is not None] + maj_evs[:1]))
            elif not behind:
                comps = {r: p.done for r, p in with_enq.items() if r in in_majority and p.done is not None}
                if len(comps) >= 2:
                    mc = _mode(list(comps.values()))
                    unfinished = sorted(r for r, d in comps.items() if d < mc)
                    finished = [r for r, d in comps.items() if d >= mc]
                    if differ(len(unfinished), len(finished), directed=True):
                        own = [with_enq[r].ev or with_enq[r].timeout for r in unfinished]
                        ops2 = op_at.get((pg, mc))
                        what2 = (f"{ops2.most_common(1)[0][0]} SeqNum {mc}" if ops2 else f"collective SeqNum {mc}")
                        out.append(_draft(
                            ctx, "laggard_rank", unfinished,
                            f"{_fmt_ranks(unfinished)} entered but never finished {what2}{pg_label}; "
                            f"{_others(len(finished))} completed it",
                            [e for e in own if e is not None] + maj_evs[:1]))
            if differ(len(ahead), len(majority)):
                own = [with_enq[r].ev or with_enq[r].timeout for r in ahead]
                top = max(with_enq[r].enq or 0 for r in ahead)
                out.append(_draft(
                    ctx, "desync", ahead,
                    f"{_fmt_ranks(ahead)} enqueued collectives up to SeqNum {top}{pg_label} that no other rank "
                    f"issued; {_others(len(majority) + len(behind))} stop at {m}",
                    [e for e in own if e is not None] + maj_evs[:1], order=1))
        # Ranks with no report at all while the others timed out.
        reporters = {r for r, p in ranks.items() if p.timeout is not None}
        if reporters and not any(d.kind == "laggard_rank" for d in out):
            seqs = [seq_of[(pg, r)] for r in reporters if (pg, r) in seq_of]
            s = _mode(seqs) if seqs else None
            ops = op_at.get((pg, s)) if s is not None else None
            what = (f"{ops.most_common(1)[0][0]} SeqNum {s}" if ops and s is not None
                    else "a collective")
            # a rank whose own watchdog got stuck did report (the heartbeat lead names it)
            stuck = {e.rank for e in events if e.kind == "nccl.timeout" and e.fields.get("stuck")
                     and e.rank is not None}
            silent = _silent(ctx, set(ranks) | stuck, reporters)
            if silent:
                # the first two timeouts (nsmallest: sorted(...)[:2], ties in their order, without the sort)
                evs = heapq.nsmallest(2, (p.timeout for p in ranks.values() if p.timeout is not None), key=ctx.key)
                out.append(_draft(
                    ctx, "laggard_rank", silent,
                    f"{_fmt_ranks(silent)} printed no watchdog timeout while {_others(len(reporters))} "
                    f"timed out in {what}{pg_label}: {'it' if len(silent) == 1 else 'they'} never entered it",
                    evs[:2], order=2))
    return out


def _silent(ctx: _Ctx, present: set[int], reporters: set[int]) -> list[int]:
    """Known ranks that reported nothing, on nodes where other ranks did (their logs were read).

    The reporters each say they waited for a peer (a timeout) or lost one (a closed connection): the
    silent ranks are what they waited for when few against them (`differ`, directed: in a two-rank job
    the one rank that did not time out is the one the other waited for).
    """
    expected = ctx.known_ranks
    if len(expected) < 2 or not reporters:
        return []
    rep_nodes = {n for r in reporters if (n := ctx.node(r))}
    silent = sorted(r for r in expected - present - reporters
                    if (n := ctx.node(r)) is not None and n in rep_nodes)
    if len(silent) > max(1, int(len(expected) * SILENT_FRACTION)):
        return []
    if not differ(len(silent), len(reporters), directed=True):
        return []
    if len(reporters) < len(expected) - len(silent):
        return []  # some ranks neither reported nor are silent laggards: coverage, not a hang signature
    return silent


def _desync(ctx: _Ctx, events: list[Event]) -> list[LeadDraft]:
    """Different collectives at one sequence number (watchdog timeouts, flight-recorder queues)."""
    sig: dict[tuple[str, int], dict[int, tuple[str, str, Event]]] = {}
    resolve = ctx.pg_resolver()
    for e in ctx.ordered:
        pg = resolve(e) if e.kind in ("nccl.timeout", "fr.pg_state") else None
        if e.rank is None or pg is None:
            continue
        if e.kind == "nccl.timeout" and isinstance(e.fields.get("seq"), int):
            seq = int(e.fields["seq"])  # type: ignore[arg-type]
            at = sig.get((pg, seq))
            if at is None:
                at = sig[(pg, seq)] = {}
            if e.rank in at:
                continue  # a rank's first line at a number is its signature (what setdefault kept)
            op = str(e.fields.get("op") or "?")
            size = f"{e.fields.get('numel_in', '?')}/{e.fields.get('numel_out', '?')}"
            at[e.rank] = (op, size, e)
        elif e.kind == "fr.pg_state":
            for item in str(e.fields.get("recent") or "").split(";"):
                parts = item.split(":")
                if len(parts) == 4 and parts[0].isdigit():
                    sig.setdefault((pg, int(parts[0])), {}).setdefault(
                        e.rank, (parts[1], f"{parts[2]}/{parts[3]}", e))
    out: list[LeadDraft] = []
    for (pg, seq) in sorted(sig, key=lambda k: (k[1], len(k[0]), k[0])):
        per = sig[(pg, seq)]
        if len(per) < 2:
            continue
        c = Counter((op, size) for op, size, _ in per.values())
        if len(c) < 2:
            continue
        top_n = max(c.values())
        major = min(k for k, n in c.items() if n == top_n)
        odd = sorted(r for r, (op, size, _) in per.items() if (op, size) != major)
        if not differ(len(odd), len(per) - len(odd)):
            continue  # an even split (or half the job) has no odd one out
        odd_ops = sorted({per[r][0] for r in odd})
        if odd_ops != [major[0]]:
            what = f"{'/'.join(odd_ops)} where {_others(len(per) - len(odd))} issued {major[0]}"
        else:
            sizes = sorted({per[r][1] for r in odd})
            what = f"{major[0]} with {'/'.join(sizes)} elements (in/out) where {_others(len(per) - len(odd))} " \
                   f"used {major[1]}"
        evs = [per[r][2] for r in odd] + [next(per[r][2] for r in sorted(per) if r not in odd)]
        out.append(_draft(ctx, "desync", odd, f"{_fmt_ranks(odd)} issued {what} at SeqNum {seq}"
                          + (f" (process group {pg})" if pg not in ("0", UNKNOWN_PG) else ""), evs))
        break  # the first mismatch is the desync; later ones follow from it
    return out


# --------------------------------------------------------------------------
# Reports that name ranks: monitored barrier, desync debug, gloo, heartbeat
# --------------------------------------------------------------------------


def _named(ctx: _Ctx, events: list[Event]) -> list[LeadDraft]:
    out: list[LeadDraft] = []
    barrier = sorted((e for e in events if e.kind == "c10d.monitored_barrier" and e.fields.get("failed_ranks")),
                     key=ctx.key)
    if barrier:
        ranks = sorted({r for e in barrier for r in _ints(e.fields.get("failed_ranks"))})
        reporters = sorted({r for e in barrier if (r := _reporter(e)) is not None})
        ms = barrier[0].fields.get("timeout_ms")
        by = f" (reported by {_fmt_ranks(reporters)})" if reporters else ""
        if 0 < len(ranks) <= MAX_LEAD_RANKS:  # named by the report itself: only its width is judged
            out.append(_draft(ctx, "laggard_rank", ranks,
                              f"{_fmt_ranks(ranks)} failed to pass monitoredBarrier in {ms} ms{by}", barrier))
    # The coordination service (JAX's, TensorFlow's) naming the task it saw fail: the task stopped sending heartbeats
    # (its agent's own thread sends them, so a process that only hangs still does: it died, or lost its host) or came
    # back as a new incarnation (extract/excclass.py `failed_task`). Its index is the process's rank. An exit, not a
    # laggard: no rule promotes a slow node's weak evidence on it.
    told = sorted((e for e in events if isinstance(e.fields.get("failed_task"), int)), key=ctx.key)
    tasks = sorted({int(t) for e in told if isinstance(t := e.fields.get("failed_task"), int)})
    if 0 < len(tasks) <= MAX_LEAD_RANKS:  # named by the report itself: only its width is judged
        out.append(_draft(ctx, "first_exit", tasks,
                          f"{_fmt_ranks(tasks)} stopped sending heartbeats to the coordination service or came back "
                          "restarted, in the service's own words: it failed, whatever its own log says", told))
    report = sorted((e for e in events if e.kind == "c10d.desync_report"), key=ctx.key)
    if report:
        by_state: dict[tuple[str, int | None], list[Event]] = {}
        for e in report:
            seq = e.fields.get("seq")
            by_state.setdefault((str(e.fields.get("state")), seq if isinstance(seq, int) else None), []).append(e)
        for (state, seq), evs in sorted(by_state.items(), key=lambda kv: (kv[0][0], kv[0][1] or -1)):
            ranks = sorted({r for e in evs for r in _ints(e.fields.get("lagging_ranks"))})
            if state == "not_finished":
                what = f"joined but never finished collective #{seq}"
            elif seq is not None:
                what = f"never joined collective #{seq}"
            else:
                what = "never joined the collective the others wait in"
            if 0 < len(ranks) <= MAX_LEAD_RANKS:
                out.append(_draft(ctx, "laggard_rank", ranks, f"{_fmt_ranks(ranks)} {what} (desync debug report)",
                                  evs))
    gloo = [e for e in events if e.kind == "gloo.timeout" and e.rank is not None]
    reporters_g = {e.rank for e in gloo if e.rank is not None}
    if reporters_g:
        silent = _silent(ctx, set(), reporters_g)
        if silent:
            op = Counter(str(e.fields.get("op")) for e in gloo).most_common(1)[0][0]
            they = "it" if len(reporters_g) == 1 else "they"
            out.append(_draft(ctx, "laggard_rank", silent,
                              f"{_fmt_ranks(silent)} printed no gloo timeout while {_others(len(reporters_g))} timed "
                              f"out waiting for a {op}: {they} waited for it", sorted(gloo, key=ctx.key)[:2],
                              order=2))
    stuck = [e for e in events if e.kind == "nccl.timeout" and e.fields.get("stuck") and e.rank is not None]
    waiting = {e.rank for e in events if e.kind == "nccl.timeout" and not e.fields.get("stuck")
               and e.rank is not None}
    stuck_ranks = sorted({e.rank for e in stuck if e.rank is not None} - waiting)
    if differ(len(stuck_ranks), len(waiting), directed=True):
        out.append(_draft(ctx, "laggard_rank", stuck_ranks,
                          f"the watchdog of {_fmt_ranks(stuck_ranks)} got stuck (heartbeat monitor) while "
                          f"{_others(len(waiting))} timed out in a collective",
                          sorted((e for e in stuck if e.rank in stuck_ranks), key=ctx.key), order=1))
    return out


def _reporter(e: Event) -> int | None:
    r = e.fields.get("reporter")
    return r if isinstance(r, int) else e.rank


# --------------------------------------------------------------------------
# Stack dumps
# --------------------------------------------------------------------------


def _stacks(ctx: _Ctx, events: list[Event]) -> list[LeadDraft]:
    from firstfault.extract.stackdump import describe

    frames = sorted((e for e in events if e.kind == "stack.frame"), key=ctx.key)
    groups: dict[tuple[str, str, str], list[Event]] = {}
    for e in frames:
        f = e.fields
        where = f"{f.get('file')}:{f['line']}" if f.get("line") is not None else str(f.get("file") or "")
        groups.setdefault((str(f.get("category")), str(f.get("func")), where), []).append(e)
    total = len(frames)
    ordered = sorted(groups.items(), key=lambda kv: (len(kv[1]), kv[0][0] == "other", kv[0]))
    out: list[LeadDraft] = []
    for i, ((cat, func, where), evs) in enumerate(ordered[:MAX_STACK_LEADS]):
        ranks = sorted({e.rank for e in evs if e.rank is not None})
        nodes = sorted({n for e in evs if (n := e.node or (ctx.node(e.rank) if e.rank is not None else None))})
        if len(evs) > MAX_LEAD_RANKS:
            continue  # where most ranks were is the tail of the few's summary, not a lead of its own
        who = _fmt_ranks(ranks) if ranks else f"{len(evs)} process{'es' if len(evs) != 1 else ''}"
        rest = total - len(evs)
        tail = ""
        if rest and len(ordered) > 1:
            other = next(k for k, _ in reversed(ordered) if k != (cat, func, where))
            tail = f"; {rest} other dumped process{'es' if rest != 1 else ''} elsewhere (most in {other[1]})"
        on = f" on {', '.join(nodes[:4])}" if nodes and not ranks else ""
        at = f" ({where})" if where else ""  # a native frame: its library, or nothing where gdb names none
        out.append(_draft(ctx, "stuck_frame", ranks, f"{who}{on} stuck in {func}{at}, {describe(cat)}{tail}",
                          evs, order=i, nodes=nodes))
    return out


# --------------------------------------------------------------------------
# First exit
# --------------------------------------------------------------------------


def _exit_how(e: Event) -> str:
    f = e.fields
    parts: list[str] = []
    code = f.get("exitcode", f.get("exit_code"))
    if code is not None:
        parts.append(f"exitcode {code}")
    sig = f.get("signal")
    if sig is not None and sig != 0:
        parts.append(str(sig) if not isinstance(sig, int) else f"signal {sig}")
    reason = f.get("reason")
    if reason:
        parts.append(str(reason))
    return ", ".join(parts) or e.kind


_STOPS = ("SIGTERM", "SIGINT")  # how a launcher stops the survivors: collateral, never a first exit


def _is_exit(e: Event) -> bool:
    if e.kind in ("torch.child_failed", "process.signal"):
        if e.fields.get("due_to") == "step_teardown":
            return False  # srun killing the step's survivors after it tore the step down (extract/signals.py)
        # a stop signal the launcher did not send (extract/torchrun.py `unprompted`) came from outside: a first exit
        return str(e.fields.get("signal")) not in _STOPS or e.fields.get("unprompted") is True
    if e.kind == "k8s.pod":
        code = e.fields.get("exit_code")
        return bool(not e.fields.get("restart") and isinstance(code, int) and code != 0)
    return False


_HANG_KINDS = ("nccl.", "gloo.timeout", "c10d.")


def _waited(e: Event) -> bool:
    """A rank's report that it waited for, or lost, a peer: a collective hang's or a dead peer's mark.

    Not an NCCL error about the rank's own GPU (`Cuda failure 999`, ncclUnhandledCudaError): that rank
    failed by itself, and may well be the first.
    """
    if e.kind == "nccl.error":
        return "cuda_class" not in e.fields and e.fields.get("nccl_result") != "ncclUnhandledCudaError"
    return e.kind.startswith(_HANG_KINDS)


def _lost_peer(e: Event) -> bool:
    """A rank's report that a peer went away mid-run (a closed or reset connection, ncclRemoteError)."""
    return e.kind == "nccl.remote_error" and e.rank is not None and e.fields.get("phase") != "rendezvous"


def _reported_after(e: Event) -> bool:
    """A launcher's report of a rank's death (srun, mpirun, torchrun's agent, accelerate launch).

    It comes after the death, so its time, read or taken from the line before it, or none at all, is
    no earlier than the death: a bound, not the moment.
    """
    return e.kind == "process.signal" and e.fields.get("by") == "launcher"


def _first_exit(ctx: _Ctx, events: list[Event]) -> list[LeadDraft]:
    # A rank that timed out or lost a peer before it died is a victim of the
    # hang (the watchdog's SIGABRT), not the first to fail.
    hung_at: dict[object, datetime] = {}
    for e in events:
        if not _waited(e):
            continue
        t = e.earliest()
        if t is None:
            continue
        if e.rank is not None:
            was = hung_at.get(rk := ("rank", e.rank))
            if was is None or t < was:
                hung_at[rk] = t
        if e.node:
            was = hung_at.get(nk := ("node", e.node))
            if was is None or t < was:
                hung_at[nk] = t

    def subject(e: Event) -> int | None:
        """The rank that died: the one a report names (torchrun's failed rank, its agent's local rank on the
        node), else the rank of the log that holds the line."""
        fr = e.fields.get("failed_rank")
        if isinstance(fr, int):
            return fr
        return ctx.global_rank(e.node, e.fields.get("local_rank")) if "local_rank" in e.fields else e.rank

    def victim(e: Event, r: int | None) -> bool:
        t = e.earliest()
        key = ("rank", r) if r is not None else ("node", e.node)
        if t is None:  # a death with no time: a rank that waited or lost a peer went after someone
            return _reported_after(e) and key in hung_at
        return key in hung_at and hung_at[key] <= t

    # The first time another rank said it lost a peer: a death the launcher reported later (or with no
    # time) had happened by then, when the reporting rank is the only one whose death explains the loss.
    # (A report that names no rank, only its node, is placed by the ranks of the other nodes.)
    losses = sorted((t, e.rank if e.rank is not None else -1, e.node or "") for e in events
                     if _lost_peer(e) and (t := e.earliest()) is not None)

    def placed(e: Event, r: int | None) -> datetime | None:
        t = e.earliest()
        if not _reported_after(e):
            return t
        if r is not None:
            loss = next((lt for lt, lr, _ in losses if lr != r), None)
        else:
            loss = next((lt for lt, _, ln in losses if e.node and ln and ln != e.node), None)
        return loss if loss is not None and (t is None or loss < t) else t

    dead: dict[int, int | None] = {}  # id(exit) -> the rank that died
    at: dict[int, datetime] = {}  # id(exit) -> when it is placed
    exits: list[Event] = []
    for e in events:
        if _is_exit(e):
            r = subject(e)
            t = placed(e, r)
            if t is not None and not victim(e, r):
                dead[id(e)], at[id(e)] = r, t
                exits.append(e)
    if not exits:
        return _left_silently(ctx, events)

    def key(e: Event) -> tuple[object, ...]:
        return (at[id(e)], not e.fields.get("root_cause"), e.rank if e.rank is not None else 1 << 30,
                ctx.key(e))

    first = min(exits, key=key)
    t0 = at[id(first)]
    assert t0 is not None
    moved = t0 != first.earliest()
    if moved and len({(dead[id(e)], None if dead[id(e)] is not None else e.node) for e in exits
                     if at[id(e)] == t0 and e.earliest() != t0}) > 1:
        return _left_silently(ctx, events)  # two launcher-reported deaths before the same loss: neither is first
    who_rank = dead[id(first)]
    later: list[Event] = []
    for e in events:
        t = e.earliest()
        if t is None or t < t0 or e is first or not e.kind.startswith(_FAILURE_KINDS):
            continue
        if e.kind == "process.signal" and not _is_exit(e) and e.fields.get("by") == "launcher":
            continue  # the launcher stopping the survivors is not them failing
        same = (who_rank is not None and e.rank == who_rank) or (who_rank is None and e.node == first.node
                                                                 and e.rank is None)
        if not same and (e.rank is not None or e.node != first.node):
            later.append(e)
    if not later:
        return _ended_for(ctx, events, first, who_rank, t0, how=max(
            (_exit_how(e) for e in exits if dead[id(e)] == who_rank and e.node == first.node), key=len,
            default=_exit_how(first)))
    other_ranks = {e.rank for e in later if e.rank is not None}
    other_nodes = {e.node for e in later if e.node and e.rank is None}
    n = len(other_ranks) or len(other_nodes)
    unit = "rank" if other_ranks else "node"
    node = first.node or (ctx.node(who_rank) if who_rank is not None else None)
    who = f"rank {who_rank}" if who_rank is not None else "a process"
    on = f" on {node}" if node else ""
    others = f"{n} other {unit}{'s' if n != 1 else ''} failed after it"
    # the same death told twice (torchrun's agent and its failure summary): the fuller telling says how
    sig = first.fields.get("signal")
    how = max((_exit_how(e) for e in exits if dead[id(e)] == who_rank and e.node == first.node
               and e.fields.get("signal") == sig), key=len, default=_exit_how(first))
    if moved:
        reported = f"at {iso(first.earliest())}" if first.earliest() is not None else "without a time"
        summary = (f"{who}{on} exited first ({how}; the launcher reported it {reported}); {others}, "
                   f"the first losing its connection to a peer at {iso(t0)}")
    else:
        summary = f"{who}{on} exited first ({how}) at {iso(t0)}; {others}"
    later.sort(key=ctx.key)
    return [_draft(ctx, "first_exit", [who_rank] if who_rank is not None else [], summary, [first, later[0]],
                   nodes=[node] if node else [])]


def _ended_for(ctx: _Ctx, events: list[Event], first: Event, who_rank: int | None, t0: datetime,
               how: str) -> list[LeadDraft]:
    """The one exit the launcher then ended the whole job for (Open MPI's `Per user-direction, the job has been
    aborted.`: launcher.exit with `aborted`), when no other rank failed by itself: the others were stopped for it."""
    def after(e: Event) -> bool:
        t = e.earliest()
        return t is None or t >= t0

    abort = next((e for e in ctx.ordered
                  if e.kind == "launcher.exit" and e.fields.get("aborted") is True and after(e)), None)
    if abort is None:
        return []
    node = first.node or (ctx.node(who_rank) if who_rank is not None else None)
    who = f"rank {who_rank}" if who_rank is not None else "a process"
    on = f" on {node}" if node else ""
    summary = f"{who}{on} exited first ({how}) at {iso(t0)}; the launcher then aborted the job for it"
    return [_draft(ctx, "first_exit", [who_rank] if who_rank is not None else [], summary, [first, abort],
                   nodes=[node] if node else [])]


def _left_silently(ctx: _Ctx, events: list[Event]) -> list[LeadDraft]:
    """The rank that went away without a word while every other one lost its connection to a peer.

    A rank that returns early (exit 0) or vanishes leaves no exit record; the survivors' "Connection closed
    by peer" (nccl.remote_error) is all there is. When ranks report the loss and the ranks with no failure of
    their own are few against them (`_silent`: one against one in a two-rank job), they are where it began.
    """
    lost = sorted((e for e in events if _lost_peer(e)), key=ctx.key)
    reporters = {e.rank for e in lost if e.rank is not None}
    if not reporters:
        return []
    failed = {e.rank for e in events if e.rank is not None and e.kind.startswith(_FAILURE_KINDS)
              and not (e.kind == "process.signal" and e.fields.get("by") == "launcher")}
    silent = _silent(ctx, failed, reporters)
    if not silent:
        return []
    return [_draft(ctx, "first_exit", silent,
                   f"{_fmt_ranks(silent)} reported no failure while {_others(len(reporters))} lost their "
                   f"connection to a peer: {'it' if len(silent) == 1 else 'they'} left first, without a word",
                   lost[:2])]


# --------------------------------------------------------------------------


def _merge(drafts: list[LeadDraft]) -> list[LeadDraft]:
    """One lead per (kind, ranks): the first found keeps its summary, evidence is pooled."""
    out: dict[tuple[str, tuple[int, ...], tuple[str, ...]], LeadDraft] = {}
    for d in drafts:
        k = (d.kind, tuple(d.ranks), tuple(d.nodes) if not d.ranks else ())
        if k in out:
            keep = out[k]
            for e in d.events:
                if len(keep.events) < EVIDENCE_PER_LEAD and all(e is not x for x in keep.events):
                    keep.events.append(e)
            if d.first is not None and (keep.first is None or d.first < keep.first):
                keep.first = d.first
        else:
            out[k] = d
    return list(out.values())


def find_leads(events: list[Event], rank_to_node: dict[int, str] | None = None) -> list[LeadDraft]:
    ctx = _Ctx(events, rank_to_node or {})
    drafts = _progress(ctx, events) + _named(ctx, events) + _desync(ctx, events)
    drafts += _stacks(ctx, events) + _first_exit(ctx, events)
    # Every kind judged its own "few"; none names more than a lead may (a lead that names half of a
    # 16k-rank job is no lead).
    leads = [d for d in _merge(drafts) if len(d.ranks) <= MAX_LEAD_RANKS and len(d.nodes) <= MAX_LEAD_RANKS]
    leads.sort(key=LeadDraft.sort_key)
    return leads


def lead_nodes(leads: list[LeadDraft], kind: str) -> dict[str, LeadDraft]:
    """node -> the first lead of `kind` naming it (for rules that promote a lead)."""
    out: dict[str, LeadDraft] = {}
    for d in leads:
        if d.kind == kind:
            for n in d.nodes:
                out.setdefault(n, d)
    return out


def verdict_leads(leads: list[LeadDraft], evidence: list[EvidenceItem]) -> list[Lead]:
    """The verdict's `leads`; each lead's evidence is appended to `evidence` (role "lead")."""
    index: dict[tuple[object, ...], int] = {}
    out: list[Lead] = []
    for d in leads:
        idx: list[int] = []
        for e in d.events:
            k = (e.evidence.source, e.evidence.file, e.evidence.line, e.kind, e.rank, e.node, e.evidence.text)
            if k not in index:
                index[k] = len(evidence)
                evidence.append(EvidenceItem(
                    role="lead", source=e.evidence.source, node=e.node, file=e.evidence.file,
                    line=e.evidence.line, time=iso(e.time), event=e.kind, text=e.evidence.text,
                    query=e.evidence.query, rank=e.rank, category=d.kind, cable=cable_of(e),
                ))
            if index[k] not in idx:
                idx.append(index[k])
        out.append(Lead(kind=d.kind, nodes=list(d.nodes), ranks=list(d.ranks), summary=d.summary,  # type: ignore[arg-type]
                        first_seen=iso(d.first), evidence=idx, devices=list(d.devices)))
    return out
