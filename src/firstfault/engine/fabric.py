"""Attribution across the cable: the far end of every host port an event names (a `fabric` source).

A fabric source (extract/fabric.py) lists cables: pairs of ends, a node
(host or switch) and its port. With it the engine

- places the counters of a switch port or an HCA port that perfquery read
  by LID (`metric.condition` with `lid` and `port`): an HCA port's event
  goes to its host; a switch port's to the host at the cable's other end
  (the fault is that host's link, and the switch port is named beside it),
  so a link event seen on both ends is one finding on one node; a switch
  port cabled to a host outside the allocation is another job's and is left
  out; a cable between two switches stays on no node;
- gives every event whose host port (engine/ports.py `host_port_of`) is on a
  cable that cable, in the `fabric_*` fields (the verdict's evidence `cable`);
  a transport error that names no port, on a host with one cable, gets it;
- names both ends in the `devices` of a `network.*` finding: the host's
  device (`node-03/mlx5_0`) and the switch port (`leaf01/3`);
- maps a transport error's peer address to the host (normalise, from NCCL's
  bootstrap lines) and to its port: the interface the address is on when
  the fabric knows it (LLDP, an inventory), else the host's only cable;
- looks for the switch common to a transport finding's host pairs: when
  the reports pass between several pairs of hosts and no host takes part in
  enough of them to be the common endpoint (settings.common_endpoint), but
  one switch (or one pair of switches) carries them all, that switch is a
  `common_switch` lead. A switch port that logged the fault itself makes a
  `network.link` cause instead (the first point), which explains the
  transport errors by the catalog's own `explains`.

Without a fabric source nothing here runs: the verdict is what it was.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from firstfault.engine.attribute import Attribution, Finding, event_sort_key, weight
from firstfault.engine.leads import EVIDENCE_PER_LEAD, LeadDraft
from firstfault.engine.normalise import NodeMapper
from firstfault.engine.ports import CABLE_FIELDS, EMITS, TRANSPORT_KINDS, host_port_of
from firstfault.engine.rules import CommonEndpointSettings
from firstfault.extract.fabric import End, Link
from firstfault.model import Address, Event, switch_port_key

LEAD_KIND = "common_switch"
MAX_PAIRS_NAMED = 4


def _num(port: str) -> int | None:
    """The port number of `3` or `mlx5_0:1`."""
    tail = port.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _device(port: str) -> str:
    """The device of a host port: `mlx5_0:1` -> `mlx5_0`; a netdev is its own."""
    head, sep, tail = port.rpartition(":")
    return head if sep and tail.isdigit() else port


@dataclass(frozen=True, slots=True)
class Side:
    """One end of a cable as the engine sees it: host names mapped onto the allocation."""

    node: str
    port: str
    switch: bool


class Fabric:
    """The cables of an attempt's fabric sources, looked up by host port, by LID and by host."""

    def __init__(self, links: Iterable[Link], mapper: NodeMapper) -> None:
        self.mapper = mapper
        self.allocation = mapper.node_set
        self.by_port: dict[tuple[str, str], tuple[Side, Side]] = {}
        self.by_lid: dict[tuple[int, int], tuple[Side, Side]] = {}
        self.host_cables: dict[str, list[tuple[Side, Side]]] = {}
        self.switches: set[str] = set()
        # address -> (host, interface), from NCCL's bootstrap lines (`OOB ens1f0np0:10.0.0.13<0>`): a peer
        # address in a transport error is that interface of that host
        self.addresses: dict[str, tuple[str, str]] = {}
        self.cables = 0
        for link in links:
            a, b = self._side(link.a), self._side(link.b)
            if not a.switch and not b.switch and (a.node in self.allocation) != (b.node in self.allocation):
                # lldpctl on a switch: its neighbours are hosts, and LLDP does not say what the local end is
                a, b = (a, Side(b.node, b.port, True)) if a.node in self.allocation else (Side(a.node, a.port, True), b)
            if (a.node, a.port) in self.by_port or (b.node, b.port) in self.by_port:
                continue  # the same cable from another file (or a second listing): the first one stands
            self.cables += 1
            for end, me, far in ((link.a, a, b), (link.b, b, a)):
                self.by_port[(me.node, me.port)] = (me, far)
                if me.switch:
                    self.switches.add(me.node)
                else:
                    self.host_cables.setdefault(me.node, []).append((me, far))
                num = _num(me.port)
                if end.lid is not None and num is not None:
                    self.by_lid.setdefault((end.lid, num), (me, far))

    def _side(self, end: End) -> Side:
        node = end.node if end.switch else (self.mapper.host(end.node) or end.node)
        return Side(node=node, port=end.port, switch=end.switch)

    def cable(self, node: str, port: str | None) -> tuple[Side, Side] | None:
        """(this end, far end) of a host's port: `mlx5_0:1` as it is, `mlx5_0` when the device has one cabled
        port, a netdev as LLDP or the inventory names it; no port: the host's only cable."""
        if port is None:
            cables = self.host_cables.get(node, [])
            return cables[0] if len(cables) == 1 else None
        hit = self.by_port.get((node, port))
        if hit is not None:
            return hit
        if ":" not in port:
            found = [c for c in self.host_cables.get(node, []) if _device(c[0].port) == port]
            if len(found) == 1:
                return found[0]
        return None

    def learn_addresses(self, addresses: list[Address]) -> None:
        """The host and interface of each address the lines named (model.Address): the first that names one a
        node's."""
        for addr, iface, node, host, rank in addresses:
            owner = self.mapper.line_node(node, host, rank)
            if owner:
                self.addresses.setdefault(addr, (owner, iface))

    def peer_cable(self, node: str, addr: object) -> tuple[Side, Side] | None:
        """The cable of a peer host: the interface its address is on, when the fabric knows that interface;
        else the host's only cable."""
        if isinstance(addr, str) and addr in self.addresses:
            host, iface = self.addresses[addr]
            if host == node and (hit := self.cable(node, iface)) is not None:
                return hit
        return self.cable(node, None)

    def host_switches(self, node: str) -> set[str]:
        return {far.node for _, far in self.host_cables.get(node, []) if far.switch}


def _set_cable(ev: Event, me: Side, far: Side) -> None:
    sw, other = (far, me) if far.switch else (me, far)
    if not sw.switch:
        return  # two hosts cabled back to back: no switch to name
    ev.fields.update(fabric_switch=sw.node, fabric_switch_port=sw.port, fabric_node=other.node,
                     fabric_port=other.port)


def place(events: list[Event], fabric: Fabric) -> list[Event]:
    """Before normalisation: the events perfquery read by LID put on their node (see the module's doc).

    A switch port's event cabled to another switch keeps the switch's name for now (so that a one-node
    allocation does not take it), and `annotate` clears it."""
    out: list[Event] = []
    for ev in events:
        lid, port = ev.fields.get("lid"), ev.fields.get("port")
        if ev.kind != "metric.condition" or not isinstance(lid, int) or not isinstance(port, int):
            out.append(ev)
            continue
        hit = fabric.by_lid.get((lid, port))
        if hit is None:
            out.append(ev)  # a LID the fabric does not list: kept as it was read, on no node
            continue
        me, far = hit
        if not me.switch:  # an HCA port: its host's own counters
            ev.node, ev.device = me.node, _device(me.port)
            ev.fields.update(iface=_device(me.port), port=_num(me.port))
        elif not far.switch:
            if fabric.allocation and far.node not in fabric.allocation:
                continue  # the switch port of another job's host
            ev.node, ev.device = far.node, None
        else:
            ev.node, ev.device = me.node, None
        _set_cable(ev, me, far)
        out.append(ev)
    return out


def annotate(events: list[Event], fabric: Fabric) -> None:
    """After normalisation: every event on a cabled host port gets the cable's `fabric_*` fields."""
    for ev in events:
        if ev.node in fabric.switches and ev.node not in fabric.allocation:
            ev.node = None  # a cable between switches: no host's
            continue
        if "fabric_switch" in ev.fields or not ev.node or ev.kind not in EMITS:
            continue
        port = host_port_of(ev)
        if port is None and ev.kind not in TRANSPORT_KINDS:
            continue
        hit = fabric.cable(ev.node, port)
        if hit is not None:
            _set_cable(ev, *hit)


def _labels(f: Finding, fabric: Fabric) -> list[str]:
    """Both ends of the cables of a network finding's nodes: `node-03/mlx5_0`, `leaf01/3`."""
    out: dict[str, None] = {}
    nodes = set(f.nodes)
    named = False
    for ev in f.events:
        sw, sp, node, port = (ev.fields.get(k) for k in CABLE_FIELDS)
        if not (isinstance(sw, str) and isinstance(sp, str) and isinstance(node, str) and isinstance(port, str)):
            continue
        if node not in nodes and sw not in nodes and nodes:
            continue
        named = True
        if node in fabric.switches:
            out.setdefault(switch_port_key(node, port))
        else:
            out.setdefault(f"{node}/{_device(port)}")
        out.setdefault(switch_port_key(sw, sp))
    if not named:  # the common endpoint a transport finding named as a peer: the cable its address is on
        peers = {str(ev.fields.get("peer_node")): ev.fields.get("peer") for ev in f.events}
        for n in f.nodes:
            hit = fabric.peer_cable(n, peers.get(n))
            if hit is not None and hit[1].switch:
                me, far = hit
                out.setdefault(f"{me.node}/{_device(me.port)}")
                out.setdefault(switch_port_key(far.node, far.port))
    return list(out)


def widen(att: Attribution, fabric: Fabric, settings: CommonEndpointSettings) -> None:
    """After attribution: the cables' ends in network findings' devices, and the common-switch lead."""
    for f in att.findings:
        # A transport finding names cables only where its reports met at a common endpoint (a few nodes);
        # with every reporter kept, the common-switch lead below is what says where.
        if f.category.startswith("network.") and (
                not f.category.startswith("network.transport") or len(f.nodes) <= settings.max_nodes):
            for label in _labels(f, fabric):
                if label not in f.devices:
                    f.devices.append(label)
    standing = ([att.root] if att.root else []) + att.candidates + att.secondary
    for f in standing:
        if f.category.startswith("network.transport"):
            lead = common_switch(f.events, fabric, settings)
            if lead is not None:
                att.leads.append(lead)


def _pair_ends(ev: Event, fabric: Fabric) -> tuple[str, str, set[str], set[tuple[str, str]]] | None:
    """(reporter, peer, switches, switch ports) of a report between two hosts."""
    peer = ev.fields.get("peer_node")
    if not ev.node or not isinstance(peer, str) or not peer or peer == ev.node:
        return None
    switches: set[str] = set()
    ports: set[tuple[str, str]] = set()
    sw, sp = ev.fields.get("fabric_switch"), ev.fields.get("fabric_switch_port")
    if isinstance(sw, str) and isinstance(sp, str):
        switches.add(sw)
        ports.add((sw, sp))
    else:
        mine = fabric.host_switches(ev.node)
        if len(mine) == 1:  # every cable of the host goes to one switch: that one, port unknown
            switches |= mine
    hit = fabric.peer_cable(peer, ev.fields.get("peer"))
    if hit is not None and hit[1].switch:
        switches.add(hit[1].node)
        ports.add((hit[1].node, hit[1].port))
    else:
        theirs = fabric.host_switches(peer)
        if len(theirs) == 1:
            switches |= theirs
    return ev.node, peer, switches, ports


def common_switch(events: list[Event], fabric: Fabric, rule: CommonEndpointSettings) -> LeadDraft | None:
    """The switch (or the two switches) that the host pairs of a transport finding's reports all cross, when
    no host is common to enough of them (see the module's doc)."""
    reports = [(ev, p) for ev in events if (p := _pair_ends(ev, fabric)) is not None]
    if not reports:
        return None
    total = sum(weight(ev) for ev, _ in reports)
    hosts: Counter[str] = Counter()
    switches: Counter[str] = Counter()
    for ev, (a, b, sws, _ports) in reports:
        for n in (a, b):
            hosts[n] += weight(ev)
        for s in sws:
            switches[s] += weight(ev)
    pairs = sorted({tuple(sorted((a, b))) for _, (a, b, _s, _p) in reports})
    top_host = max(hosts.values())
    if len(pairs) < 2 or top_host >= rule.min_share * total:
        return None  # one pair, or a host common to them: the finding's common endpoint says where
    if not switches:
        return None
    top = max(switches.values())
    best = sorted(s for s, c in switches.items() if c == top)
    if top < rule.min_reports or top < rule.min_share * total or len(best) > 2:
        return None
    on = [(ev, p) for ev, p in reports if set(best) <= p[2]]
    ports = {sw: sorted({sp for _, p in on for s, sp in p[3] if s == sw}, key=lambda x: (len(x), x)) for sw in best}

    def named_switch(sw: str) -> str:
        return f"{sw} (ports {', '.join(ports[sw])})" if ports[sw] else sw

    named = ", ".join(f"{a}-{b}" for a, b in pairs[:MAX_PAIRS_NAMED])
    more = f" and {len(pairs) - MAX_PAIRS_NAMED} more" if len(pairs) > MAX_PAIRS_NAMED else ""
    where = (f"switch {named_switch(best[0])}" if len(best) == 1 else
             f"switches {named_switch(best[0])} and {named_switch(best[1])} (the cables and switches between them)")
    summary = (f"transport errors between {len(pairs)} host pairs ({named}{more}) all cross {where}; "
               f"no host is common to them")
    evs = sorted((ev for ev, _ in on), key=event_sort_key)
    picked: list[Event] = []
    seen_pairs: set[tuple[str, ...]] = set()
    for ev in evs:  # one report per pair first: the evidence shows the pairs
        key = tuple(sorted((ev.node or "", str(ev.fields.get("peer_node")))))
        if key not in seen_pairs and len(picked) < EVIDENCE_PER_LEAD:
            seen_pairs.add(key)
            picked.append(ev)
    first = next((e.earliest() for e in evs if e.earliest() is not None), None)
    nodes = sorted({n for _, (a, b, _s, _p) in on for n in (a, b)})
    return LeadDraft(kind=LEAD_KIND, ranks=sorted({e.rank for e in evs if e.rank is not None}), nodes=nodes,
                     summary=summary, first=first, events=picked,
                     devices=list(best))


def note(fabric: Fabric, files: list[str]) -> str:
    return (f"Fabric: {fabric.cables} cable(s) from {', '.join(files[:3])}{' ...' if len(files) > 3 else ''}; "
            f"{len(fabric.host_cables)} host(s) and {len(fabric.switches)} switch(es).")


__all__ = ["LEAD_KIND", "Fabric", "annotate", "common_switch", "note", "place", "widen"]
