"""Normalisation: the extracted events placed on the allocation before attribution.

Hosts, ranks, addresses and PCI ids are mapped onto the allocation's node
names; events outside the attempt's window are dropped, and so are events of
hosts outside the allocation (the allocation guard: NodeMapper.inside, which
the Analysis also applies to the lines, documents and node activity it is
given); sacct and scontrol records of one job become one; the job's terminal
state is taken from the scheduler, Kueue, the pods, workload.yaml or, where
none of them says, slurmstepd's banner or another scheduler's word in the
job's output (LSF's `TERM_RUNLIMIT`, PBS's `job killed: walltime ...`).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import socket
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Final, NamedTuple

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.bundle import MAX_RANK, Context
from firstfault.catalog.tables import (
    HostLocalAddress,
    bridge_kind,
    generic_classes,
    host_local_addresses,
    kueue_end,
    platform_program_of,
    resolver_statuses,
    storage_tables,
)
from firstfault.extract.excclass import SYMPTOM_KINDS, says_little
from firstfault.extract.reasons import state_of
from firstfault.hostlist import NodeNames, machines
from firstfault.model import Address, ErrorItem, Event, Evidence, NetReady, PortsUsed, iso
from firstfault.pci import norm_pci
from firstfault.spec import ended_in_failure
from firstfault.timeparse import TIME_MAX, TIME_MIN, in_range

# What normalisation adds to the extractors' kinds (extract/registry.event_kinds): the lost node
# it infers from NODE_FAIL, the job record of a context's terminal state (or of a scheduler's word in the job's
# output, with its reason), and the node of an IB peer.
EMITS: dict[str, frozenset[str]] = {
    "node.silent": frozenset({"last_seen", "lag_s"}),
    "sched.job": frozenset({"state", "raw_state", "scope", "exit_code", "signal", "due_to"}),
    "nccl.ib_completion_error": frozenset({"peer_node"}),
    # a connect failure to an address only its own host reaches in a job that spans nodes (host_local_dialled)
    "nccl.error": frozenset({"peer", "nodes_spanned", "message"}),
    # a snapshot's down port that the ports the job's programs said they use leave out (unused_ports)
    "net.link": frozenset({"unused", "ports_used"}),
}


# Event kinds whose `host` is the node a scheduler's record says the thing ran on (a pod's, an event's object).
_NAMES_ITS_NODE = frozenset({"k8s.pod", "k8s.event"})


def _a_host_name(name: str) -> bool:
    """A node's name, not an address (an address is no node's spelling the allocation could fail to know)."""
    try:
        ipaddress.ip_address(name.split("%")[0])
    except ValueError:
        return bool(name.strip())
    return False


class NodeMapper:
    """Maps the many spellings of a node (FQDN, short name, IP, rank) onto the allocation; with no allocation known,
    onto the machines the evidence's own names stand for (learn_names)."""

    def __init__(self, nodes: list[str], rank_to_node: dict[int, str]) -> None:
        self.nodes = list(nodes)
        self.node_set = frozenset(nodes)
        self.rank_to_node = rank_to_node
        self.names = NodeNames(nodes)
        self.addrs: dict[str, str] = {}
        # each address the lines named as a node's own: its interface (the first named) and the nodes that named it
        self.ifaces: dict[str, str] = {}
        self.claimed: dict[str, set[str]] = {}
        self.spellings: dict[str, str] = {}  # with no allocation: a host name as written -> its machine's name

    def learn_names(self, names: Iterable[str | None]) -> None:
        """With no allocation known, the machines of the names the evidence places events on (one name per piece of
        evidence that uses it): each spelling of one machine (case, its FQDN and first label: hostlist.machines)
        becomes the machine's one name. With an allocation, its names are the nodes: nothing is learned."""
        if self.nodes:
            return
        uses: dict[str, int] = {}
        for n in names:
            if n:
                uses[n] = uses.get(n, 0) + 1
        self.spellings = machines(uses)

    def _own(self, name: str) -> str:
        """With no allocation: the machine `name` is a spelling of (learn_names), or the node that owns the address
        it is (learn_addresses), else the name itself."""
        hit = self.spellings.get(name)
        if hit is not None:
            return hit
        return self.addrs.get(name.strip().lower(), name) if self.addrs else name

    def learn_addresses(self, addresses: list[Address]) -> None:
        """The node that owns each address the lines named (model.Address): the first that names one that is a
        node's (the node its line ran on; with no allocation, a host name: an address owns no address)."""
        for addr, iface, node, host, rank in addresses:
            owner = self.line_node(node, host, rank)
            if addr and iface:
                self.ifaces.setdefault(addr, iface)
            if owner and addr:
                self.claimed.setdefault(addr, set()).add(owner)
            if owner and addr and (self.nodes or _a_host_name(owner)):
                self.addrs.setdefault(addr, owner)

    def local_evidence(self) -> dict[str, str]:
        """The addresses the job's own lines show to be a host's alone, whatever their range (host_local's
        `bridged`): each with the interface it was named on. One named on an interface a `bridge` row of
        catalog/transport.yaml `host_local_addresses` matches (`Using [0]docker0:172.17.0.1<0>`), or one that two or
        more nodes each named as their own (a container's `eth0:172.17.0.2` on every node: no node's address)."""
        out: dict[str, str] = {}
        for addr, iface in self.ifaces.items():
            if bridge_kind(iface) is not None or len(self.claimed.get(addr, ())) >= 2:
                out[addr] = iface
        return out

    def outside(self, node: str) -> bool:
        """Whether `node` (a node_for / line_node answer) is another host's: a name outside a known allocation."""
        return bool(self.nodes) and node not in self.node_set

    def host(self, name: str | None) -> str | None:
        if not name:
            return None
        key = name.strip().lower()
        hit = self.names.lookup(key)
        if hit:
            return hit
        addr = key.split("<")[0].split("%")[0]
        if addr in self.addrs:
            return self.addrs[addr]
        try:
            ipaddress.ip_address(addr)
        except ValueError:
            pass
        else:
            return None
        return None if self.nodes else self.spellings.get(name, name)

    def inside(self, name: str) -> str | None:
        """The allocation node a node name stands for (itself, or a spelling NodeNames knows: FQDN, short
        name, case); None for a host outside the allocation. With no allocation known, every name is a node: its
        machine's (learn_names). The one test of the allocation guard: evidence of a host it answers None for never
        enters the verdict."""
        if not self.nodes:
            return self._own(name)
        if name in self.node_set:
            return name
        return self.names.lookup(name)

    def node_for(self, ev: Event) -> str | None:
        host = ev.fields.get("host")
        if ev.fields.get("names_node") is True and isinstance(host, str):
            # A line about another node than the one that printed it (a scheduler's or Ray's GCS's word that it lost
            # HOST, in the driver's log): the node it names, else the name as it is (outside the allocation: kept out).
            return self.host(host) or host
        return self.line_node(ev.node, host if isinstance(host, str) else None, ev.rank, ev.kind in _NAMES_ITS_NODE)

    def line_node(self, node: str | None, host: str | None, rank: int | None,
                  names_its_node: bool = False) -> str | None:
        """The node a piece of evidence of this node, host and rank is of (node_for's, for an event or an address):
        `names_its_node`, a record whose host is the node it ran on."""
        if node and not self.nodes:
            return self._own(node)
        if node and node in self.node_set:
            return node
        if node:
            mapped = self.host(node)
            if mapped:
                return mapped
        if host is not None:
            mapped = self.host(host)
            if mapped:
                return mapped
            if self.nodes and names_its_node and _a_host_name(host):
                # A record that names the node it ran on (a pod row's NODE), one outside the allocation: another
                # workload's pod (kept out as outside), never this one's.
                return host
        if rank is not None and rank in self.rank_to_node:
            return self.rank_to_node[rank] if self.nodes else self._own(self.rank_to_node[rank])
        if node is None and len(self.nodes) == 1:
            return self.nodes[0]  # a one-node allocation: whatever printed it ran there
        return node


MAX_OUTSIDE_LISTED = 20  # (source, file, why) entries of evidence kept out, each an errors entry; then one sum


class Outside:
    """Evidence kept out of the verdict: of hosts outside the allocation (what it was: a line, a document, an
    event, node activity), or at times outside timeparse's range. Counted per source, file and why, and listed in
    the verdict's errors (at most MAX_OUTSIDE_LISTED entries, then one that sums the rest)."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str, str], int] = {}

    def add(self, source: str, file: str | None, host: str, what: str) -> None:
        """One `what` (line, document, event ...) of `host`, which is not in the allocation."""
        self._count(source, file, f"{what}(s) of host {host!r}, which is not in the allocation")

    def add_rank(self, source: str, file: str | None) -> None:
        """One event whose rank was no rank (over MAX_RANK): kept without it."""
        self._count(source, file, f"event(s) of a rank over {MAX_RANK}, the greatest rank, kept without it")

    def add_time(self, source: str, file: str | None) -> None:
        """One event at a time outside TIME_MIN..TIME_MAX."""
        self._count(source, file, f"event(s) at a time outside the years {TIME_MIN.year}-{TIME_MAX.year - 1}")

    def _count(self, source: str, file: str | None, why: str) -> None:
        key = (source, file or "", why)
        self.counts[key] = self.counts.get(key, 0) + 1

    def errors(self) -> list[ErrorItem]:
        ordered = sorted(self.counts.items())
        out = [ErrorItem(source=source, file=file or None, message=f"{n} {why}" + ("" if "kept" in why else
                                                                                   ": ignored"))
               for (source, file, why), n in ordered[:MAX_OUTSIDE_LISTED]]
        rest = ordered[MAX_OUTSIDE_LISTED:]
        if rest:
            out.append(ErrorItem(source=rest[0][0][0], message=(
                f"... and {sum(n for _, n in rest)} more piece(s) of evidence of other hosts or times, in "
                f"{len(rest)} more file(s) or source(s): ignored")))
        return out


def _window(ctx: Context, grace: timedelta) -> tuple[datetime | None, datetime | None]:
    """The attempt's window widened by `grace` on both sides (None: no bound on that side)."""
    return (ctx.window_start - grace if ctx.window_start else None,
            ctx.window_end + grace if ctx.window_end else None)


def _outside(t: datetime, start: datetime | None, end: datetime | None) -> bool:
    """Whether `t` falls outside the (widened) window: another attempt's time."""
    return (start is not None and t < start) or (end is not None and t > end)


def normalise(events: list[Event], ctx: Context, mapper: NodeMapper, grace: timedelta,
              outside: Outside | None = None) -> list[Event]:
    """The events of the attempt placed on its allocation: those of other times or other hosts dropped
    (the latter counted in `outside`). The addresses the lines named are `mapper`'s already (learn_addresses)."""
    start, end = _window(ctx, grace)
    out: list[Event] = []
    for ev in events:
        t = ev.time
        if t is not None and _outside(t, start, end):
            continue  # outside this attempt's window: another job's evidence
        if t is not None and not in_range(t):
            if outside is not None:  # a time no sum can be made with (a window without an end lets it through)
                outside.add_time(ev.evidence.source, ev.evidence.file)
            continue
        if ev.rank is not None and ev.rank > MAX_RANK:  # a number a line called a rank: unstorable, no job's
            ev.rank = None
            if outside is not None:
                outside.add_rank(ev.evidence.source, ev.evidence.file)
        node = mapper.node_for(ev)
        if node is not None and mapper.outside(node):
            if outside is not None:  # another host's evidence: never attributed
                outside.add(ev.evidence.source, ev.evidence.file, node, "event")
            continue
        ev.node = node
        if ev.device and ev.device.startswith("pci:") and ev.node:
            idx = ctx.gpu_index.get((ev.node, norm_pci(ev.device[4:])))
            if idx is not None:
                ev.device = f"gpu{idx}"
        peer = ev.fields.get("peer")
        if isinstance(peer, str):
            pn = mapper.host(peer)
            if pn:
                ev.fields["peer_node"] = pn
        out.append(ev)
    return host_local_dialled(unknown_hosts(out, mapper), mapper.nodes, mapper.ifaces, mapper.local_evidence())


def unknown_hosts(events: list[Event], mapper: NodeMapper) -> list[Event]:
    """The remote shell's word that a host of the launch does not exist (catalog/transport.yaml `local_statuses`,
    `resolver: true`: ssh's `Could not resolve hostname H: Name or service not known`, its launcher giving up after
    it) kept only for a host outside the job's known allocation: a host list naming a host the job was not given, the
    job's set-up. Where no allocation is known, or H is one of its nodes (a spelling of one: its short name, FQDN),
    the lookup made once at launch does not tell a name that never exists from one not published yet (a pod's DNS
    record): the event is dropped, and the launch's failure is left to what else the evidence says."""
    statuses = resolver_statuses()
    out: list[Event] = []
    for ev in events:
        peer = ev.fields.get("peer")
        if ev.kind == "nccl.error" and ev.fields.get("local_status") in statuses and (
                not mapper.nodes or not isinstance(peer, str) or mapper.inside(peer) is not None):
            continue
        out.append(ev)
    return out


# The characters of an IPv4 or IPv6 literal (its zone already taken off), and the first twelve bytes of an
# IPv4-mapped IPv6 address (`::ffff:127.0.1.1`, as a dual-stack socket prints an IPv4 peer).
_IP_CHARS: Final = frozenset("0123456789abcdef.:")
_V4_MAPPED: Final = bytes(10) + b"\xff\xff"


def _ip_int(a: str) -> tuple[int, int] | None:
    """An address literal as (IP version, its integer), an IPv4-mapped one as its IPv4; None for a name. The C
    library's inet_pton (a job's thousands of interface addresses are each looked up: ipaddress's parse costs tens of
    microseconds a call, inet_pton well under one)."""
    if not _IP_CHARS.issuperset(a.lower()):
        return None
    try:
        return 4, int.from_bytes(socket.inet_pton(socket.AF_INET, a), "big")
    except OSError:
        pass
    try:
        b = socket.inet_pton(socket.AF_INET6, a)
    except OSError:
        return None
    return (4, int.from_bytes(b[12:], "big")) if b[:12] == _V4_MAPPED else (6, int.from_bytes(b, "big"))


@lru_cache(maxsize=1)
def _host_local_rows() -> tuple[tuple[HostLocalAddress, tuple[int, int, int] | None], ...]:
    """host_local_addresses with each row's CIDR as (IP version, network, mask) integers, parsed once."""
    out = []
    for row in host_local_addresses():
        net = ipaddress.ip_network(row.net) if row.net is not None else None
        out.append((row, (net.version, int(net.network_address), int(net.netmask)) if net is not None else None))
    return tuple(out)


def host_local(addr: str, bridged: dict[str, str]) -> str | None:
    """The kind of address (catalog/transport.yaml `host_local_addresses`: `loopback`, `link-local`, `Docker
    default-bridge`, ...) that `addr` is where it reaches only the host that dials it, else None. Its rows in order:
    a CIDR (an IPv4-mapped address, `::ffff:127.0.1.1` as a dual-stack socket prints it, read as its IPv4 one), a
    name (`localhost`); a `corroborate` row's range (a private one real clusters also use) only where `bridged`, the
    addresses the job's own lines show to be a host's alone (NodeMapper.local_evidence), holds the address; and an
    address of `bridged` whatever its range (Docker's `bip` set to another), as the kind of the interface it was
    named on, or as `non-unique` where several nodes named it as their own."""
    a = addr.strip("[]").split("%", 1)[0]
    low = a.lower()
    ip = _ip_int(a)
    for row, net in _host_local_rows():
        if row.name is not None and low == row.name:
            return row.what
        if (net is not None and ip is not None and ip[0] == net[0] and ip[1] & net[2] == net[1]
                and (not row.corroborate or _key(a, ip, low) in bridged or a in bridged)):
            return row.what
    if not bridged:
        return None
    iface = bridged.get(_key(a, ip, low), bridged.get(a))
    if iface is None:
        return None
    return bridge_kind(iface) or "non-unique"  # more than one node named it as its own


def _key(a: str, ip: tuple[int, int] | None, low: str) -> str:
    """An address as `bridged` spells it (ipaddress's canonical text; an IPv4-mapped one as its IPv4), a name in
    lower case."""
    if ip is None:
        return low
    return str(ipaddress.IPv4Address(ip[1]) if ip[0] == 4 else ipaddress.IPv6Address(ip[1]))


# ------------------------------------------------------------------ an address only its host reaches, in a job of nodes

# The address a rank dialled, in the words of the programs that say they could not reach it (each read in its source):
# NCCL's socket layer (`Connect to 127.0.1.1<45123> failed : Connection refused`, `socketStartConnect: Connect to
# 127.0.0.1<45069> failed : ...`, `connect to 10.0.0.3:41877`), Gloo's pair (`connect [127.0.1.1]:3210: Connection
# refused`; since its error classes, `SO_ERROR: Connection refused, remote=[127.0.0.1]:29591`, and its connect
# logger's `failed to connect, ... remote=[...]`: a `remote=` of no connect, c10d's `SocketImpl(..., remote=...)` of
# a connection made, is no dial), c10d's client socket (`failed to connect to [localhost]:29500 (errno: 111 - ...)`,
# `timed out after 60s while trying to connect to (localhost, 29500)`), UCX's socket layer (src/ucs/sys/sock.c
# ucs_socket_connect: `connect(fd=168, dest_addr=169.254.4.6:52595) failed: Connection refused`), Open MPI's TCP BTL
# (btl_tcp_endpoint.c mca_btl_tcp_endpoint_complete_connect, `connect() to 172.17.0.1 failed: Connection refused
# (111)`, no port: its `failed` says the dial). A bare name counts only with its port (an address in the words of a
# dial, not a word of prose) or Open MPI's `failed`; a bracketed one stands alone.
_DIALLED = re.compile(
    r"(?:\b[Cc]onnect(?:ing)? to |\bconnect |(?:\bSO_ERROR: [^,]*, |\bfailed to connect, .*?)\bremote=|\bdest_addr="
    r"|(?P<mpi>\bconnect\(\) to ))"
    r"(?:\((?P<tuple>[\w.\-:%]+), \d{1,5}\)|(?P<addr>\[[0-9A-Za-z:.%\-]+\]|[0-9A-Za-z][\w.\-]*)(?P<port><\d+>|:\d+)?"
    r"(?P<failed> failed\b)?)"
)
# What reports such a failure: a peer the rank could not reach (NCCL's, Gloo's, c10d's, UCX's or Open MPI's words), or
# an NCCL error that no table read as the job's set-up already (a `local_status`) and that quotes the socket layer's.
_DIAL_KINDS: Final = frozenset({"nccl.remote_error", "nccl.error"})


def dialled_address(text: str) -> str | None:
    """The address a connect failure names as the one it dialled (_DIALLED's spellings), else None."""
    for m in _DIALLED.finditer(text):
        if m.group("tuple"):
            return m.group("tuple")
        addr = m.group("addr")
        if addr.startswith("[") or m.group("port") or (m.group("mpi") and m.group("failed")):
            return addr
    return None


def nodes_spanned(allocation: list[str], events: list[Event]) -> int:
    """How many nodes the job spans, from the evidence only: the most of the allocation's nodes (workload.yaml's
    `nodes`), the distinct nodes its events were placed on (a file bound to a node, a host a line's prefix names;
    none an address only its host reaches: host_local), and what a program of the job said of it (`job.span`,
    extract/span.py: torchrun's `--nnodes` or `min_nodes`, Slurm's `SLURM_NNODES`, an MPI launcher's host list). 0
    where nothing says."""
    placed = {n for n in {ev.node for ev in events if ev.node} if host_local(n, {}) is None}
    said = [n for ev in events if ev.kind == "job.span" and isinstance(n := ev.fields.get("nodes"), int)]
    return max(len(set(allocation)), len(placed), *said)


def host_local_dialled(events: list[Event], allocation: list[str], named: dict[str, str],
                       bridged: dict[str, str]) -> list[Event]:
    """A rank of a job that spans two or more nodes (nodes_spanned) that could not reach its peer, its rendezvous or
    its store at an address only the host that dials it reaches (host_local over catalog/transport.yaml
    `host_local_addresses`: loopback, link-local, a container's or a VM's bridge; dialled_address): the address the
    peer advertised, or the job gave (MASTER_ADDR=localhost), is no other host's way to it. Debian's and Ubuntu's
    /etc/hosts map the host's name to 127.0.1.1, and a pod on the host's network may resolve it to 127.0.0.1, so a
    rank that resolves its own name to find its address advertises that (pytorch/gloo#223, the maintainer's answer);
    a program that picks the first interface up may pick Docker's bridge or a link-local one (NCCL_SOCKET_IFNAME /
    GLOO_SOCKET_IFNAME, btl_tcp_if_include, UCX_NET_DEVICES, or the host's network for the container, set it right).
    A peer's loss (an `nccl.remote_error`) that names no address where the job's own lines (`named`: each address
    NCCL's interface lines named, with its interface) named an address of its hosts that only its host reaches,
    other than loopback (a bridge's, `NET/Socket : Using [0]docker0:172.17.0.1<0>`, or a link-local one) is the same:
    the interface is the evidence (NCCL choosing `lo` is nothing: a dial to it is read by its address). The job's
    set-up on the node that printed it (app-setup, weak), not a peer's failure nor the network's: an nccl.error with
    `setup`, `local_status` `loopback_peer` (a loopback address) or `host_local_peer` (any other), the `peer` and
    `nodes_spanned`, and a `message` that says so. On one node the address is the right one and a refusal there is
    the peer or the store not listening: today's reading; an interface chosen with no failure after it is nothing.
    A store's client retrying its server (`rendezvous.wait`, catalog/ends.yaml `stalls` `wait` rows with the address
    they dial: Paddle's TCPStore `Retry to connect to 127.0.1.1:63917 while the server is not yet listening.`) is the
    same where it dials such an address; a wait otherwise (a node started before the store's prints it), and dropped.
    The `job.span` and `rendezvous.wait` events are read here and never reach the rules."""
    span = nodes_spanned(allocation, events)
    chosen: list[tuple[str, str, str] | None] = []  # the first such interface, looked for at the first peer lost
    out: list[Event] = []
    for ev in events:
        if ev.kind == "job.span":
            continue
        if ev.kind == "rendezvous.wait":
            # a store's client retrying its server: a wait, nothing, but at an address only its own host reaches in a
            # job of nodes, where no wait ends
            peer = ev.fields.get("peer")
            kind = host_local(peer, bridged) if span >= 2 and isinstance(peer, str) else None
            if kind is None or not isinstance(peer, str):
                continue
            ev.fields["detail"] = f"{ev.fields.get('detector')}'s store client retries {peer}:{ev.fields.get('port')}"
            for gone in ("detector", "port"):
                ev.fields.pop(gone, None)
            _host_local_peer(ev, peer, kind, span, None)
            out.append(ev)
            continue
        if span >= 2 and ev.kind in _DIAL_KINDS and "local_status" not in ev.fields:
            peer, detail = ev.fields.get("peer"), ev.fields.get("detail")
            addr = peer if isinstance(peer, str) else dialled_address(detail) if isinstance(detail, str) else None
            kind = host_local(addr, bridged) if isinstance(addr, str) else None
            if isinstance(addr, str) and kind is not None:
                _host_local_peer(ev, addr, kind, span, None)
            elif addr is None and ev.kind == "nccl.remote_error":
                if not chosen:
                    chosen.append(next(((a, kind, iface) for a, iface in sorted(named.items())
                                        if (kind := host_local(a, bridged)) is not None and kind != "loopback"), None))
                if (first := chosen[0]) is not None:
                    _host_local_peer(ev, first[0], first[1], span, first[2])
        out.append(ev)
    return out


def _host_local_peer(ev: Event, addr: str, kind: str, span: int, iface: str | None) -> None:
    """The event of a dial to an address of `kind` only its host reaches (host_local), or of a peer lost where the
    job chose such an address's interface (`iface`), in a job of `span` nodes, as the job's set-up
    (host_local_dialled)."""
    ev.kind = "nccl.error"
    for gone in ("stack", "peer_status", "nccl_result"):
        ev.fields.pop(gone, None)
    ev.fields["setup"] = True
    ev.fields["local_status"] = "loopback_peer" if kind == "loopback" else "host_local_peer"
    addr = addr.strip("[]")  # Gloo's and c10d's brackets: the address itself
    ev.fields["peer"] = addr
    ev.fields["nodes_spanned"] = span
    detail = ev.fields.get("detail")
    which = "" if iface is None else f" (the job's interface {iface})"
    ev.fields["message"] = (f"{addr} is a {kind} address{which}, which reaches only the host that dials it, while "
                            f"the job spans {span} nodes"
                            + (f": {detail}" if isinstance(detail, str) and detail else ""))


def one_record_per_job(events: list[Event]) -> list[Event]:
    """sacct and scontrol describe the same job: keep the record that says most.

    scontrol's JobState=CANCELLED does not say who cancelled; sacct's
    'CANCELLED by 0' does, and a rule must see that one, not both.
    """
    jobs: dict[object, list[Event]] = {}
    for ev in events:
        if ev.kind == "sched.job" and ev.fields.get("scope") == "job":
            jobs.setdefault(ev.fields.get("job_id"), []).append(ev)
    drop: set[int] = set()
    for recs in jobs.values():
        if len(recs) < 2 or len({str(r.fields.get("state")) for r in recs}) > 1:
            continue  # one record, or records that disagree: keep what was said
        best = max(recs, key=lambda r: (r.fields.get("by_uid") is not None, len(r.fields), -recs.index(r)))
        drop.update(id(r) for r in recs if r is not best)
    return [e for e in events if id(e) not in drop] if drop else events


# What reports how a process ended, and so may follow its last words: the launcher's and the scheduler's.
_EXIT_REPORTS: Final = ("process.signal", "torch.child_failed", "launcher.exit", "sched.", "k8s.", "kueue.")


def terminal_lines(events: list[Event]) -> list[Event]:
    """Lone uncaught exception lines (events marked `terminal` by extract/exceptions.py) that are their process's last
    word: the last event of their stream (file and rank), followed at most by reports of how a process ended, or by
    lone lines that say less (below); an OOM killer's header whose file then names the process it killed
    (_answered_headers); a storage client's wait that it waited out (_waited_out); a FUSE daemon's sidecar
    (_storage_sidecars); a node not responding that slurmctld then says answered again (_answered_nodes); a node
    service's unit that failed and then started again (_services_back).

    Python prints an uncaught exception last, then exits; the launcher and the scheduler report the exit, and so
    does a server that started the process (an inference server's API process or launcher on its engine, worker or
    shard: catalog/exceptions.yaml `exit_report`, an event's field of that name).
    An exception line with more of its stream after it was a passing mention (a logged error the job went
    on from) or was superseded by what came later, and is dropped. Not by a later lone line that says less: a
    wrapper's or a caller's re-raise that names no cause (the workload's own exception with nothing read from its
    message, excclass.says_little), or a peer's death or a wait that ran out (a lone line read as a symptom), as a
    chained traceback's deepest known cause decides over the exceptions raised while handling it (Ray's `RuntimeError:
    Job ... failed` after the Hub's `HfHubHTTPError: 429 ...`; a client's `connect ECONNREFUSED` to the store after
    its `SlowDown`). Of the two that say less, a symptom says less still: a peer's death or a wait after the
    workload's own exception that names no cause leaves that exception standing (vLLM on Neuron: `RuntimeError:
    neuronx-cc compilation failed with 70`, then gloo's `Connection closed by peer`), unless the exception is an
    error report's outer context whose chain ends in the symptom (anyhow's `Error: failed to reach the shard`, then
    its `Caused by: ... Connection refused`). A lone line's reading is also
    weak (engine/attribute.py): it is a cause only where no cause read from fuller evidence stands.
    """
    events = _logged_causes(_services_back(events))
    # The streams (file and rank) that hold such a line: only theirs are walked (a 16k-rank job's watchdog lines,
    # none of them lone exceptions, are not)
    streams = {(ev.evidence.file, ev.rank) for ev in events if ev.fields.get("terminal") is True}
    last: dict[tuple[str | None, int | None], int] = {}
    last_telling: dict[tuple[str | None, int | None], int] = {}  # the same, less the lone lines that say less
    last_own: dict[tuple[str | None, int | None], int] = {}  # the same, less the lone symptoms
    for ev in events if streams else ():
        if ev.fields.get("truncated") is True:
            # a traceback cut before its exception line (the stream stops inside it) adds no words of its own: it
            # supersedes nothing said before it (a logged error, then the traceback of the same failure, cut)
            continue
        key = (ev.evidence.file, ev.rank)
        if key not in streams:
            continue
        terminal = ev.fields.get("terminal") is True
        if terminal or not (ev.kind.startswith(_EXIT_REPORTS) or ev.fields.get("exit_report") is True):
            line = ev.evidence.line or 0
            if line > last.get(key, -1):
                last[key] = line
            if not (terminal and _says_less(ev)) and line > last_telling.get(key, -1):
                last_telling[key] = line
            if not (terminal and ev.kind in _LONE_SYMPTOMS) and line > last_own.get(key, -1):
                last_own[key] = line

    def kept(ev: Event) -> bool:
        if ev.fields.get("terminal") is not True:
            return True
        key, line = (ev.evidence.file, ev.rank), ev.evidence.line or 0
        if line >= last.get(key, -1) or (not _says_less(ev) and line >= last_telling.get(key, -1)):
            return True
        # the workload's own exception that names no cause still says more than a peer's death or a wait that ran
        # out after it: a lone symptom supersedes no earlier lone line of the workload's own; but an error report's
        # outer context is its chain's, whose deeper cause decides (traceback.report_drafts), a symptom or not
        return (ev.kind not in _LONE_SYMPTOMS and ev.fields.get("report") is not True
                and line >= last_own.get(key, -1))

    return _fallout(_relayed_xids(_answered_nodes(_storage_sidecars(_waited_out(_named_victims(_answered_headers([
        ev for ev in events if kept(ev)] if streams else list(events))))))))


# A store's, a transport's or a deadline's failure, as the kind of symptom an exception that follows it and names no
# cause of its own becomes (_fallout): a peer or store that did not answer, a wait that ran out, a communicator aborted.
_FAILURE_KINDS: Final[dict[str, str]] = {
    "nccl.remote_error": "nccl.remote_error",
    "nccl.timeout": "nccl.timeout",
    "nccl.communicator_aborted": "nccl.communicator_aborted",
    "gloo.timeout": "nccl.timeout",
    "stall.report": "nccl.timeout",
}
# How far after the failure, in its stream, the exception may stand: the program's abort or re-raise follows at once
# (libstdc++'s terminate on the next lines, TensorFlow's fatal record in the same millisecond).
FALLOUT_LINES: Final = 200
FALLOUT_SECONDS: Final = 60.0
# An exception's marks that make it no candidate: a traceback cut short (read apart, analysis/analyze.py), an envelope,
# the job's set-up, a thread's death.
_NOT_GENERIC: Final = ("truncated", "envelope", "setup", "thread")


def _generic(ev: Event) -> bool:
    """The workload's own exception whose class names no kind of failure (catalog/exceptions.yaml
    `generic_classes`) and whose message nothing was read from (excclass.says_little)."""
    if ev.kind != "app.exception" or any(ev.fields.get(k) is True for k in _NOT_GENERIC):
        return False
    cls = str(ev.fields.get("exc_type") or "").rsplit(".", 1)[-1].rsplit("::", 1)[-1]
    return cls in generic_classes() and says_little(ev.kind, ev.fields)


def _stream_walk(events: list[Event]) -> Iterator[tuple[int, Event, tuple[str | None, int | None]]]:
    """The events but reports of how a process ended, stream by stream (a file, then its ranks, a rank-less stream
    last), each stream in line order, with their index and their stream's key: how _fallout and _logged_causes walk a
    stream's events, each after the one before it."""
    order = sorted(range(len(events)), key=lambda i: (events[i].evidence.file or "", events[i].rank is None,
                                                       events[i].rank or 0, events[i].evidence.line or 0))
    for i in order:
        ev = events[i]
        if not (ev.kind.startswith(_EXIT_REPORTS) or ev.fields.get("exit_report") is True):
            yield i, ev, (ev.evidence.file, ev.rank)


def _fallout(events: list[Event]) -> list[Event]:
    """An exception whose class and message name no cause of their own (_generic: `what(): HTTP request failed.`, a
    fatal record's `Non-OK-status: Stop() status: UNIMPLEMENTED: Clean shutdown is not currently implemented`) that
    follows a store's, a transport's or a deadline's failure in its own stream (file and rank: the failure is the
    last event before it there, but for reports of how a process ended, within FALLOUT_LINES lines and, where both
    are timed, FALLOUT_SECONDS) is that failure's consequence: the program gave up, aborted or shut down because the
    store, the peer or the deadline failed it. It becomes a symptom of the failure's kind (_FAILURE_KINDS, `fallout`
    true, its words as `detail`), never the workload's own cause. A generic exception with no such failure before it
    stays what it is; so does one whose class or message names a kind of its own (a CUDA OOM, an errno on a file)."""
    if not any(ev.kind in _FAILURE_KINDS for ev in events) or not any(_generic(ev) for ev in events):
        return events  # (only a generic exception changes: the streams are not sorted where none is)
    last: dict[tuple[str | None, int | None], tuple[Event, str]] = {}  # a stream's last event, and its failure kind
    out = list(events)
    for i, ev, key in _stream_walk(events):
        before = last.get(key)
        if before is not None and before[1] and _generic(ev) and _close(before[0], ev):
            detail = f"{ev.fields.get('exc_type')}: {ev.fields.get('message') or ''}".strip().rstrip(":")
            out[i] = dataclasses.replace(ev, kind=before[1], fields={"detail": detail, "fallout": True})
            last[key] = (ev, before[1])  # a second generic line after the first is the same failure's
            continue
        last[key] = (ev, _FAILURE_KINDS.get(ev.kind, ""))
    return out


# What a lone logged line's reading hands on to the generic exception raised after it (_logged_causes): all it read
# but the marks of a lone line and its own words.
_NOT_HANDED_ON: Final = frozenset({"terminal", "report", "truncated", "message", "exc_type"})


def _logged_causes(events: list[Event]) -> list[Event]:
    """A generic exception (_generic: a class that names no kind of failure, a message nothing was read from) whose
    stream's event just before it (but for reports of how a process ended), within FALLOUT_LINES lines and, where
    both are timed, FALLOUT_SECONDS, is a lone logged line of the workload's own that names a cause (a `terminal`
    app.exception that does not say little: a set-up errno, a limit, a file's errno) is that failure raised: the
    library logged why, then raised a status that says nothing (TensorFlow's gRPC server: gRPC core's `E... chttp2_
    server.cc:1177] UNKNOWN:No address added ... Error in bind for address '0.0.0.0:P': Address already in use`, then
    `tensorflow.python.framework.errors_impl.UnknownError: Could not start gRPC server`, grpc_server_lib.cc). The
    exception takes the logged line's reading (its fields but a lone line's marks), so that it says what the line
    said; the line itself, no longer its stream's last word, goes as terminal_lines drops such lines. A generic
    exception with another event of its stream between keeps its own reading, as does one after a lone line that
    says little or is a symptom (that is _fallout's)."""
    if not any(ev.fields.get("terminal") is True for ev in events) or not any(_generic(ev) for ev in events):
        return events
    last: dict[tuple[str | None, int | None], Event] = {}
    out = list(events)
    for i, ev, key in _stream_walk(events):
        before = last.get(key)
        last[key] = ev
        if (before is None or before.kind != "app.exception" or before.fields.get("terminal") is not True
                or says_little(before.kind, before.fields) or not _generic(ev) or not _close(before, ev)):
            continue
        handed = {k: v for k, v in before.fields.items() if k not in _NOT_HANDED_ON}
        out[i] = dataclasses.replace(ev, fields={**ev.fields, **handed})
    return out


def _close(failure: Event, ev: Event) -> bool:
    """Whether an exception stands near enough after a failure in its stream to be its consequence."""
    if (ev.evidence.line or 0) - (failure.evidence.line or 0) > FALLOUT_LINES:
        return False
    if failure.time is not None and ev.time is not None:
        return abs((ev.time - failure.time).total_seconds()) <= FALLOUT_SECONDS
    return True


# How the driver's own Xid lines are read (extract/gpu.py XidExtractor's `via`): every other `via` but `metrics` is a
# program that relayed the Xid in its own log (catalog/platform.yaml `xid_relays`).
_DRIVER_VIA: Final = frozenset({"log", "fallen_off_bus_message"})


def _relayed_xids(events: list[Event]) -> list[Event]:
    """A program's relay of an Xid (a health monitor's, the device plugin's: `via` the program) where the driver's
    own line of the same Xid is read on the same node, and on the same GPU where both name one: one fault told
    twice, and the driver's line, which holds its detail (NVLink5's `Nonfatal`, the unit, the link), speaks for it;
    the relay is dropped."""
    told: dict[tuple[str | None, int], list[str | None]] = {}
    for ev in events:
        if ev.kind == "gpu.xid" and ev.fields.get("via") in _DRIVER_VIA and isinstance(x := ev.fields.get("xid"), int):
            told.setdefault((ev.node, x), []).append(ev.device)

    def relayed(ev: Event) -> bool:
        via, x = ev.fields.get("via"), ev.fields.get("xid")
        if ev.kind != "gpu.xid" or via in _DRIVER_VIA or via == "metrics" or not isinstance(x, int):
            return False
        devices = told.get((ev.node, x))
        return devices is not None and any(d is None or ev.device is None or d == ev.device for d in devices)

    if not told:
        return events
    return [ev for ev in events if not relayed(ev)]


_LONE_SYMPTOMS: Final = frozenset(SYMPTOM_KINDS.values())


def _says_less(ev: Event) -> bool:
    """A lone line that names no cause: says_little's reading, or a symptom's (a peer, a wait, a collective)."""
    return ev.kind in _LONE_SYMPTOMS or says_little(ev.kind, ev.fields)


def _answered_nodes(events: list[Event]) -> list[Event]:
    """slurmctld's `Nodes X not responding` (a `sched.node_down` of reason `not responding`: it missed the
    controller's pings, NODE_STATE_NO_RESPOND) that the controller takes back later in the same file (a
    `sched.node_back` of the same host, as slurmctld spells both from its node record: `Node X now responding`,
    `node X returned to service`) was a node slow to answer (a busy or restarting slurmd, a node the power saving was
    still booting), not a lost one: dropped, so it is no cause (node-unreachable) nor a silent node's mark. Where
    the controller had set the node DOWN for it (`not responding, setting DOWN`: its jobs were killed) or killed a
    job on the failed node, the loss stands. The answers themselves are never events of the analysis."""
    back: dict[tuple[str | None, str | None], int] = {}
    for ev in events:
        if ev.kind == "sched.node_back":
            key = (ev.evidence.file, str(ev.fields.get("host") or "") or ev.node)
            back[key] = max(back.get(key, -1), ev.evidence.line or 0)
    if not back:
        return events
    return [ev for ev in events if ev.kind != "sched.node_back" and not (
        ev.kind == "sched.node_down" and ev.fields.get("reason") == "not responding"
        and back.get((ev.evidence.file, str(ev.fields.get("host") or "") or ev.node), -1)
        > (ev.evidence.line or 0))]


# NCCL's network words placed on the attempt (ready_placed): (file, node, line, rank, network).
ReadyAt = tuple[str | None, str | None, int, int | None, str]


def net_found_after(events: list[Event], ready: list[ReadyAt]) -> list[Event]:
    """A net plugin's failure (an `nccl.error` of transport `ofi`: AWS's OFI plugin, `NET/OFI OFI fi_getinfo() call
    failed: No data available`) that NCCL's word that it found a network follows (`ready`: (file, node, line, rank,
    network) of each model.NetReady placed, ready_placed; `NCCL INFO Using network Socket`, later in the same file, on
    the same node, of the same rank where both name one) was met while NCCL brought its networks up and went on from:
    NCCL tried its next transport, or the plugin its next protocol, and the communicator got a network. It is marked
    `fallback` (node-rdma-stack and app-setup leave it out: a run that went on to train was not stopped by it). So is
    NCCL's own IB transport failing to come up (an `nccl.error` of transport `ib`: `misc/ibvwrap.cc ... NCCL WARN Call
    to ibv_open_device failed`, `NET/IB : Unable to open device mlx5_bond_0`, a container without the HCA's device)
    where the network NCCL then found is another (`Using network Socket`): NCCL went on over its sockets. `events` is
    returned, its failures marked.

    The network words are indexed only for the (file, node) pairs where such a failure was read: a many-rank job's
    every rank says `Using network` once (16k words), its failures, if any, are a few, in a few files."""
    failed = {(ev.evidence.file, ev.node) for ev in events
              if ev.kind == "nccl.error" and ev.fields.get("transport") in ("ofi", "ib")}
    if not failed or not ready:
        return events
    index: dict[tuple[str | None, str | None], list[tuple[int, int | None, str]]] = {}
    for file, node, line, rank, net in ready:
        if (file, node) in failed:
            index.setdefault((file, node), []).append((line, rank, net))
    for ev in events:
        transport = ev.fields.get("transport") if ev.kind == "nccl.error" else None
        if transport in ("ofi", "ib"):
            line = ev.evidence.line or 0
            if any(at > line and (rank is None or ev.rank is None or rank == ev.rank)
                   and (transport == "ofi" or not net.startswith("IB"))
                   for at, rank, net in index.get((ev.evidence.file, ev.node), ())):
                ev.fields["fallback"] = True
    return events


def ready_placed(ready: list[NetReady], ctx: Context, mapper: NodeMapper, grace: timedelta) \
        -> list[ReadyAt]:
    """(file, node, line, rank, network) of each model.NetReady the lines named that normalise would keep as an event:
    in the attempt's window, its node mapped as an event's line is (NodeMapper.line_node), not another host's (a time
    no sum can be made with, or another host's, is left out, as such an event is, without being counted: a fact is no
    evidence of the verdict)."""
    start, end = _window(ctx, grace)
    out: list[ReadyAt] = []
    for net, file, line, time, node, host, rank in ready:
        if time is not None and (_outside(time, start, end) or not in_range(time)):
            continue
        if rank is not None and rank > MAX_RANK:
            rank = None
        at = mapper.line_node(node, host, rank)
        if at is not None and mapper.outside(at):
            continue
        out.append((file, at, line or 0, rank, net))
    return out


def _port_of(name: str) -> tuple[str, str | None]:
    """(device, port or None) of `mlx5_0:1` / `mlx5_0`."""
    dev, _, port = name.partition(":")
    return dev, (port or None)


def unused_ports(events: list[Event], said: list[tuple[str | None, str]]) -> list[Event]:
    """A port that a port-state snapshot shows down (`net.link` with `snapshot`) on a node whose job's programs said
    which RDMA ports their traffic runs on (`said`: (node, ports) of each model.PortsUsed, extract/nccl.py
    PortsUsedExtractor: NCCL's `NET/IB : Using [0]mlx5_0:1/IB`, which lists only ports that were ACTIVE and selected;
    perftest's `Device : mlx5_0`), and that is none of them, is a port the job's traffic never took: a host's spare or
    uncabled port, no cause of the job's failure nor of its slowness. It is marked `unused` (rule
    network-link-snapshot leaves it out), with the ports the job named (`ports_used`). The words name a node where
    their line's host does; a snapshot and words of which either names no node are one node's. A snapshot's port that
    the words name, or a snapshot where no program named its ports, is read as before. The words are facts of the
    bundle (model.PORTS_USED), never events: `events` is returned, its snapshots marked."""
    if not said:
        return events
    for ev in events:
        if ev.kind == "net.link" and ev.fields.get("snapshot") is True and ev.fields.get("state") == "down":
            iface = ev.fields.get("iface")
            port = ev.fields.get("port")
            named = [n for node, ports in said if node is None or ev.node is None or node == ev.node
                     for n in ports.split()]
            if named and isinstance(iface, str) and iface != "ib" and not any(
                    dev == iface and (p is None or port is None or p == str(port)) for dev, p in map(_port_of, named)):
                ev.fields["unused"] = True
                ev.fields["ports_used"] = " ".join(dict.fromkeys(named))
    return events


def ports_said(ports: list[PortsUsed], mapper: NodeMapper) -> list[tuple[str | None, str]]:
    """(node, ports) of each model.PortsUsed the lines named, its node mapped as an event's line is (NodeMapper.
    line_node); those of a host outside the allocation left out, as its events are (normalise)."""
    out: list[tuple[str | None, str]] = []
    for named, _, node, host, rank in ports:
        at = mapper.line_node(node, host, rank)
        if at is None or not mapper.outside(at):
            out.append((at, named))
    return out


def _storage_sidecars(events: list[Event]) -> list[Event]:
    """A Kubernetes container that runs a FUSE daemon beside the job's (catalog/platform.yaml `storage_clients`
    `containers`: GKE's `gke-gcsfuse-sidecar`): its `k8s.pod` is marked `storage_daemon`, so that its OOM kill reads
    as the mount's loss (storage-fuse-daemon-killed), not the workload's host.oom. A container (else a pod) of another
    program of the platform under the workload (catalog/platform.yaml `platform_programs`: the device plugin, the GPU
    operator's daemonsets, DCGM's exporter) is marked with its `program` and `part`: its end (an OOM kill, an
    eviction, a spec of its own it could not have) is that program's, not the workload's (host-oom, scheduler-evicted,
    app-setup read the workload's pods only)."""
    sidecars = storage_tables().sidecars
    for ev in events:
        if ev.kind == "k8s.pod":
            if (daemon := sidecars.get(str(ev.fields.get("container")))) is not None:
                ev.fields["storage_daemon"] = daemon
            container, pod = ev.fields.get("container"), ev.fields.get("pod")
        elif ev.kind == "k8s.event" and ev.fields.get("object_kind") == "Pod":
            container, pod = None, ev.fields.get("object_name")  # an event about a pod (an eviction, an OOM kill)
        else:
            continue
        row = platform_program_of(container if isinstance(container, str) else None,
                                  pod if isinstance(pod, str) else None)
        if row is not None and row.part != "storage":
            ev.fields["program"], ev.fields["part"] = row.program, row.part
    return events


def _services_back(events: list[Event]) -> list[Event]:
    """A node service's unit that failed (a `platform.error` with its `unit`, extract/services.py) and that systemd
    then started again (a `platform.started` of the same unit later in the same file, on the same node: its Restart=
    policy, or an operator, brought it back) is no cause: dropped. The starts themselves are never events of the
    analysis."""
    if not any(ev.kind == "platform.started" for ev in events):
        return events
    started: dict[tuple[str | None, str | None, object], int] = {}  # (file, node, unit) -> its last start's line
    for ev in events:
        if ev.kind == "platform.started":
            key = (ev.evidence.file, ev.node, ev.fields.get("unit"))
            started[key] = max(started.get(key, -1), ev.evidence.line or 0)
    return [ev for ev in events if ev.kind != "platform.started" and not (
        ev.kind == "platform.error" and ev.fields.get("unit") is not None
        and started.get((ev.evidence.file, ev.node, ev.fields.get("unit")), -1) > (ev.evidence.line or 0))]


def _waited_out(events: list[Event]) -> list[Event]:
    """A file system client's wait for its server (a `storage.error` marked `waits`: `nfs: server X not responding,
    still trying`, Lustre's `Connection to X was lost; ... will wait for recovery`) that the client then says it
    waited out (a `storage.recovered` later in the same file, on the same node, of the same kind of file system, and
    of the same server where both name one: `nfs: server X OK`, `Connection restored to X`) is read as transient
    (storage-filesystem-transient, weak: a cause only where no other stands), unless the same client on that node
    also failed calls outright (a `storage.error` of its `fs` that is neither a wait nor transient: a LustreError's
    `rc = -107`, a soft mount's `timed out`): then the wait, and any transient word of that client there (a request
    LNet timed out, a session hunted for), is part of that failure and stays with it, one finding. The recoveries
    themselves are never events of the analysis."""
    Where = tuple[str | None, str | None, object]  # file, node, fs
    named: dict[tuple[Where, object], int] = {}  # (where, the server it names or None) -> its last line
    any_back: dict[Where, int] = {}  # where -> the last line of any recovery there
    for ev in events:
        if ev.kind == "storage.recovered":
            where: Where = (ev.evidence.file, ev.node, ev.fields.get("fs"))
            line = ev.evidence.line or 0
            key = (where, ev.fields.get("server"))
            named[key] = max(named.get(key, -1), line)
            any_back[where] = max(any_back.get(where, -1), line)
    failed = {(ev.node, ev.fields.get("fs")) for ev in events if ev.kind == "storage.error"
              and ev.fields.get("waits") is not True and ev.fields.get("transient") is not True}
    out: list[Event] = []
    for ev in events:
        if ev.kind == "storage.recovered":
            continue
        if ev.kind == "storage.error" and (ev.node, ev.fields.get("fs")) in failed:
            ev.fields.pop("transient", None)  # part of the failure its client reported on that node
        elif any_back and ev.kind == "storage.error" and ev.fields.get("waits") is True:
            where = (ev.evidence.file, ev.node, ev.fields.get("fs"))
            server = ev.fields.get("server")
            # its own server's return or one that names none; naming none itself, any return
            back = (any_back.get(where, -1) if server is None
                    else max(named.get((where, server), -1), named.get((where, None), -1)))
            if back > (ev.evidence.line or 0):
                ev.fields["transient"] = True
                ev.fields["recovered"] = True
        out.append(ev)
    return out


def _answered_headers(events: list[Event]) -> list[Event]:
    """The kernel OOM killer's header (`python invoked oom-killer: gfp_mask=...`, extract/host.py: an event marked
    `invoked`) stands for the kill only where its file does not go on to say whom it killed (a posted excerpt cut
    after the header): a `Killed process` later in the same file, of the same node (a central syslog holds many), is
    that OOM's own record, and the header is dropped. The summary line between them (`oom-kill:constraint=...,task=
    python,pid=1234,uid=0`, also `invoked`, with the victim's `proc`) answers the header the same way and is answered
    by the `Killed process` after it."""
    def rank(ev: Event) -> int:
        # 0: the header (names no victim); 1: the summary (names it); 2: the kill's own record
        if ev.fields.get("invoked") is not True:
            return 2
        return 1 if ev.fields.get("proc") is not None else 0

    last: dict[tuple[str | None, str | None, int], int] = {}  # (file, node, rank) -> its last line
    for ev in events:
        if ev.kind == "host.oom_kill":
            key = (ev.evidence.file, ev.node, rank(ev))
            last[key] = max(last.get(key, -1), ev.evidence.line or 0)

    def answered(ev: Event) -> bool:
        r, line = rank(ev), ev.evidence.line or 0
        return any(last.get((ev.evidence.file, ev.node, higher), -1) > line for higher in range(r + 1, 3))

    return [ev for ev in events if not (ev.kind == "host.oom_kill" and ev.fields.get("invoked") is True
                                         and answered(ev))]


# How far apart two lines of one scheduler's or node monitor's record may stand (a JSON or YAML event: its `reason`
# and its `message` a few keys apart).
_RECORD_LINES: Final = 40


def _named_victims(events: list[Event]) -> list[Event]:
    """A scheduler's or node monitor's word of a memory kill that names no victim (extract/jobend.py: `by` `limit`,
    no `pid`: node-problem-detector's `"reason": "OOMKilling"`) beside its own record's message that relays the
    kernel's `Killed process N (comm)` (the same `by`, with `pid`), in the same file, of the same node, within a
    record's reach: one kill, told by the message (whose victim may be a FUSE daemon, storage-fuse-daemon-killed), so
    the word without a victim is dropped."""
    named: dict[tuple[str | None, str | None], list[int]] = {}
    for ev in events:
        if ev.kind == "host.oom_kill" and ev.fields.get("by") == "limit" and ev.fields.get("pid") is not None:
            named.setdefault((ev.evidence.file, ev.node), []).append(ev.evidence.line or 0)

    def told(ev: Event) -> bool:
        lines = named.get((ev.evidence.file, ev.node), ())
        return any(abs(at - (ev.evidence.line or 0)) <= _RECORD_LINES for at in lines)

    if not named:
        return events
    return [ev for ev in events if not (ev.kind == "host.oom_kill" and ev.fields.get("by") == "limit"
                                        and ev.fields.get("pid") is None and told(ev))]


def silent_nodes(last: dict[str, datetime], gap: float) -> list[Event]:
    """Nodes whose ranks all stopped writing long before the others did.

    Slurm's NODE_FAIL names no node; the node that fell silent first is the
    one the controller lost. Only application logs count: they are written
    every few seconds, while kernel logs may be quiet for hours.
    """
    if len(last) < 2:
        return []
    ordered = sorted(last.values())
    median = ordered[len(ordered) // 2]
    out = []
    for node, t in sorted(last.items()):
        lag = (median - t).total_seconds()
        if lag >= gap:
            out.append(Event(
                kind="node.silent", time=t, node=node,
                fields={"last_seen": iso(t), "lag_s": round(lag, 3)},
                evidence=Evidence(source="application", file=None, line=None,
                                  text=f"{node}: application logs stop at {iso(t)}, {lag:.0f} s before "
                                       f"the other nodes' (median {iso(median)})"),
            ))
    return out


def terminal_state(events: list[Event], declared: str | None) -> tuple[str | None, Event | None]:
    """The scheduler's word on how the attempt ended (it wins over workload.yaml)."""
    jobs = [e for e in events if e.kind == "sched.job" and e.fields.get("scope") == "job"]
    if jobs:
        best = _array_end(jobs) or jobs[-1]
        state = best.fields.get("state")
        return (str(state) if state else declared), best
    conds = [e for e in events if e.kind == "kueue.condition" and e.fields.get("status") == "True"]
    for c in reversed(conds):
        reason = c.fields.get("reason")
        ended = kueue_end(str(c.fields.get("type")), "True", reason if isinstance(reason, str) else None)[1]
        if ended is not None:
            return ended, c
    pods = [e for e in events if e.kind == "k8s.pod" and not e.fields.get("restart")]
    if pods and not declared:
        reasons = {str(p.fields.get("reason")) for p in pods}
        if reasons == {"Completed"}:
            return "COMPLETED", pods[-1]
        return "FAILED", pods[-1]
    return declared, None


def _array_end(jobs: list[Event]) -> Event | None:
    """Where the job records are two or more tasks of one Slurm array (`array_task`: sacct's `4243_7` rows,
    scontrol's ArrayJobId/ArrayTaskId), the array ended as its first failed task did: the tasks ran side by side or
    one after another, so the last record is no end of the whole; Slurm itself counts the array failed when any task
    failed (sbatch(1) `--wait`: "In the case of a job array, the exit code recorded will be the highest value for
    any task in the job array."; `--dependency=afterok` on an array waits for every task to succeed). None where the
    records are one task's, or no task failed: the last record stands, as for any job."""
    if len({e.fields.get("array_task") for e in jobs} - {None}) < 2:
        return None
    failed = [e for e in jobs if e.fields.get("array_task") is not None
              and ended_in_failure(str(e.fields.get("state") or ""))]
    return min(failed, key=lambda e: (e.time is None, e.time)) if failed else None


def banner_state(events: list[Event]) -> Event | None:
    """The job's end as the scheduler's own word in the job's output tells it, when no scheduler record or
    workload.yaml does: slurmstepd's JOB banner, or another scheduler's reason (LSF's `TERM_RUNLIMIT`,
    PBS's `job killed: walltime ... exceeded limit`; extract/jobend.py).

    Accounting (sacct, scontrol) says more, who cancelled above all, so it always wins; without it the
    banner is still the scheduler's own word that the allocation ended, and why.
    """
    banners = [e for e in events if e.kind == "process.signal"
               and (e.fields.get("slurm_scope") == "job" or e.fields.get("scheduler") is not None)]
    if not banners:
        return None
    first = min(banners, key=lambda e: (e.time is None, e.time, e.evidence.file or "", e.evidence.line or 0))
    due = first.fields.get("due_to")
    # A JOB banner without `DUE TO` is a cancel (scancel); every reason has its state in catalog/scheduler.yaml.
    state = state_of(due) if isinstance(due, str) else "CANCELLED" if due is None else None
    if state is None:
        return None
    fields: dict[str, str | int | float | bool | None] = {
        "state": state, "raw_state": f"{state} (the scheduler's word in the job's output)", "scope": "job"}
    if isinstance(due, str):
        fields["due_to"] = due
    by_uid = first.fields.get("by_uid")
    if isinstance(by_uid, int):
        fields["by_uid"] = by_uid  # who cancelled, where the record in the output says (`CANCELLED by 1060117793`)
    return Event(kind="sched.job", time=first.time, node=None, fields=fields, evidence=first.evidence)


class OwnEnd(NamedTuple):
    """The attempt's end as its own programs' output says it (`own_end`): a `sched.job` event, and whether it
    stands only where nothing in the evidence is a failure (a training loop's end, a notice at exit)."""

    event: Event
    needs_clean: bool


# A process that died: no program's word that the run succeeded stands beside it.
_DIED: Final = ("torch.child_failed", "process.signal")


def own_end(events: list[Event]) -> OwnEnd | None:
    """How the attempt ended, in the words of the programs that ran it (`launcher.exit`: catalog/ends.yaml,
    extract/runend.py), where no scheduler record, workload.yaml or scheduler banner tells it.

    Per file, the reports after its last restart (a group that failed and was started again: what came before
    was an earlier attempt's) decide; a file whose last report is a restart shows no end. FAILED when any file's
    reports say a process or the job failed, or a launcher recorded a process's failure after the file's last
    restart (`_launcher_failure`; the earliest such report is the evidence). Else CANCELLED when a file's last
    report says its owner stopped the job (Ray's `Job '...' was stopped`). COMPLETED when every file
    that has reports ends with a success, no process died (a torchrun failure summary, a process signal) but in an
    attempt its file shows restarted, and no
    event of the file comes after its last report (an end report followed by later errors is not the end). A
    success that is a launcher's or a console's record of the exit codes stands beside an exception the run
    survived; one that only says the training loop or the process reached its end (`stage`, `exit`) stands only
    where nothing in the evidence is a failure (`needs_clean`: the caller holds it to the attribution). Else
    None: the end is not shown, and the state stays unknown.
    """
    reports = sorted((e for e in events if e.kind == "launcher.exit"), key=_where)
    tails: dict[str, list[Event]] = {}
    for e in reports:
        tail = tails.setdefault(e.evidence.file or "", [])
        if e.fields.get("state") == "RESTART":
            tail.clear()
            tail.append(e)
        elif tail and tail[-1].fields.get("state") == "RESTART":
            tail[:] = [e]
        else:
            tail.append(e)
    restarted = {_where(r)[0]: _where(r)[1] for r in reports if r.fields.get("state") == "RESTART"}  # the last
    failed = [e for tail in tails.values() for e in tail if e.fields.get("state") == "FAILED"]
    failed += [e for e in events if _launcher_failure(e) and _where(e)[1] > restarted.get(_where(e)[0], -1)]
    if failed:
        first = min(failed, key=lambda e: (e.time is None, e.time, *_where(e)))
        return OwnEnd(_own_state(first, "FAILED"), False)
    stopped = [tail[-1] for tail in tails.values() if tail[-1].fields.get("state") == "CANCELLED"]
    if stopped:
        # its owner stopped the job (Ray's `Job '...' was stopped`): cancelled, as a scheduler's record says it
        first = min(stopped, key=lambda e: (e.time is None, e.time, *_where(e)))
        return OwnEnd(_own_state(first, "CANCELLED"), False)
    if not tails or any(tail[-1].fields.get("state") != "SUCCEEDED" for tail in tails.values()):
        return None
    if any(e.kind.startswith(_DIED) and _where(e)[1] > restarted.get(_where(e)[0], -1) for e in events):
        return None
    last_line = {f: tail[-1].evidence.line or 0 for f, tail in tails.items()}
    if any(e.kind != "launcher.exit" and (e.evidence.file or "") in last_line
           and (e.evidence.line or 0) > last_line[e.evidence.file or ""] for e in events):
        return None
    finals = [tail[-1] for tail in tails.values()]
    final = max(finals, key=lambda e: (e.time is not None, e.time, *_where(e)))
    weak = all(e.fields.get("scope") in ("stage", "exit") for e in finals)
    return OwnEnd(_own_state(final, "COMPLETED"), weak)


def _launcher_failure(e: Event) -> bool:
    """A launcher's record that a process of the job failed: torchrun's failure summary, srun's `task 0: Exited
    with exit code 1`, Open MPI's first-exit block, Hydra's `BAD TERMINATION`, a rank killed by a signal. An
    interrupt (SIGINT: a KeyboardInterrupt, Ctrl-C passed on) is someone stopping the run, not its failure."""
    if e.kind == "torch.child_failed":
        return True
    return (e.kind == "process.signal" and e.fields.get("by") == "launcher" and e.fields.get("signal") != "SIGINT"
            and (e.fields.get("signal") is not None or e.fields.get("exitcode") not in (None, 0)))


def _where(e: Event) -> tuple[str, int]:
    return e.evidence.file or "", e.evidence.line or 0


def _own_state(report: Event, state: str) -> Event:
    return Event(kind="sched.job", time=report.time, node=None,
                 fields={"state": state, "raw_state": f"{state} (the job's own output: {report.fields.get('system')})",
                         "scope": "job"},
                 evidence=report.evidence)


def declared_state(ctx: Context) -> Event:
    wl = ctx.workload
    state = (wl.terminal_state or "").split()[0].upper()
    fields: dict[str, str | int | float | bool | None] = {
        "state": state, "raw_state": wl.terminal_state, "scope": "job",
    }
    if wl.exit_code and ":" in wl.exit_code:
        a, b = wl.exit_code.split(":", 1)
        if a.isdigit() and b.isdigit():
            fields["exit_code"], fields["signal"] = int(a), int(b)
    return Event(
        kind="sched.job", time=ctx.window_end, node=None, fields=fields,
        evidence=Evidence(source="scheduler", file="workload.yaml", line=None,
                          text=f"terminal_state: {wl.terminal_state}"),
    )

