"""The fleet tables' rows for one verdict: what the fleet view counts, written with the verdict.

The fleet view (dashboard/fleet.py) counts, per node, device and port, how
many verdicts named it where a failure began, per cause domain, per day of
*failure time*, against how many jobs each node ran. Reading that back out of
every verdict's children and document does not scale (a 30-day window of a
fleet is hundreds of thousands of verdicts), so the same facts are spelled
out once, at write time, into two narrow tables that SQL can aggregate:

- `fleet_hits`: one row per (verdict, kind, key, role). kind is "node",
  "device", "host_port", "switch_port", "switch", "cable" or "verdict" (one
  row per failing verdict, key "", for the failures-per-day figure); role is "root",
  "candidate", "lead" or "seen" (a device or port the verdict mentions
  without blaming it: it counts towards "entities seen", never as a hit).
  `domains` is a bit mask over model.CAUSE_DOMAINS: the domains of the
  cause(s) that name the key (leads: every bit, they are shown whatever the
  domain filter). A candidate row is left out when the same verdict names
  the key as its root.
  A fabric switch port (`leaf01/3`, node: the switch), its switch and its
  cable (`leaf01/3 - node-03/mlx5_0:1`, node: the other end) come from the
  evidence's cables (a fabric source); they count for a cause only where
  that cause names the switch port among its devices (engine/fabric.py
  names both ends of a link it blames; a transport error's reporter's own
  cable is seen, not blamed), and that switch port is then not also a
  device. A `common_switch` lead counts for its switches.
- `fleet_exposure`: one row per (verdict, node the workload ran on): the
  node-jobs the repeat-offender rule measures against.

Both carry the verdict's failure time (`failed_at`, see failure_time) and
cluster, so a window and a cluster filter are one index range. The rules
follow dashboard/queries.fleet_rows, the reference reading of the child
tables (a test checks they agree on the shipped samples).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from firstfault.model import CAUSE_DOMAINS, cable_key, switch_port_key

ALL_DOMAINS = (1 << len(CAUSE_DOMAINS)) - 1
_BIT = {d: 1 << i for i, d in enumerate(CAUSE_DOMAINS)}
SWITCH_PREFIXES = ("nvswitch", "switch", "sw")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _clean(s: str) -> str:
    return s.replace("\x00", "\ufffd")  # as repo.clean: PostgreSQL text cannot hold NUL


def domain_mask(domains: Iterable[str]) -> int:
    """The bit mask of the named cause domains (names outside CAUSE_DOMAINS have no bit)."""
    m = 0
    for d in domains:
        m |= _BIT.get(d, 0)
    return m


def port_kind(port: str) -> str:
    """NVSwitch links (the store spells them nvswitchN:L / nvswitch-physN:L) are switch ports."""
    return "switch_port" if port.lower().startswith(SWITCH_PREFIXES) else "host_port"


def fabric_switch_ports(cables: Iterable[Mapping[str, Any]]) -> set[str]:
    """The switch ports (`leaf01/3`) of a verdict's evidence cables: in its causes' devices they are switch
    ports, not devices."""
    return {switch_port_key(e["cable_switch"], e["cable_switch_port"]) for e in cables}


def failure_time(window_end: datetime | None, analyzed_at: datetime) -> datetime:
    """When the attempt failed: its window's end, else (no end known) when it was analysed."""
    return window_end if window_end is not None else analyzed_at


def day_number(at: datetime) -> int:
    """Whole UTC days since 1970-01-01: the fleet view's day buckets, as integers both databases divide."""
    return (at.astimezone(UTC) - EPOCH).days


SWITCH_LEAD = "common_switch"  # a lead whose devices are switches (engine/fabric.py)


def hit_rows(vid: int, failed_at: datetime, cluster: str, *,
             causes: Sequence[Mapping[str, Any]], devices: Sequence[Mapping[str, Any]],
             ports: Sequence[Mapping[str, Any]], leads: Any,
             workload_nodes: Iterable[str],
             cables: Sequence[Mapping[str, Any]] = ()) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(fleet_hits rows, fleet_exposure rows) of one verdict.

    causes: rows with role, domain, category, nodes (roles other than root
    and candidate are ignored); devices: role, node, device; ports: evidence
    rows with role, node, port, category (port not None); leads: the
    document's `leads` list (dicts); workload_nodes: the workload's nodes;
    cables: evidence rows with role, category and the cable_* columns
    (cable_switch not None).
    """
    day = day_number(failed_at)
    hits: dict[tuple[str, str, str], tuple[str | None, int]] = {}

    def add(kind: str, key: str, node: str | None, role: str, mask: int) -> None:
        k = (kind, key, role)
        old = hits.get(k)
        hits[k] = (node if old is None else old[0], mask | (old[1] if old else 0))

    by_role: dict[str, list[tuple[str, str, list[str]]]] = {}
    for c in causes:
        if c["role"] in ("root", "candidate"):
            by_role.setdefault(c["role"], []).append((c["category"], c["domain"], list(c["nodes"] or [])))
    failing = domain_mask(dom for items in by_role.values() for _c, dom, _n in items)
    if by_role:
        add("verdict", "", None, "cause", failing)
    for role, items in by_role.items():
        for _cat, dom, nodes in items:
            for n in nodes:
                add("node", n, n, role, domain_mask([dom]))
    if isinstance(leads, list):
        for ld in leads:
            if not isinstance(ld, dict):
                continue
            for n in ld.get("nodes") or []:
                if isinstance(n, str):
                    add("node", n, n, "lead", ALL_DOMAINS)
            for d in ld.get("devices") or []:
                if isinstance(d, str):
                    if ld.get("kind") == SWITCH_LEAD:
                        add("switch", d, d, "lead", ALL_DOMAINS)
                    else:
                        add("device", d, d.split("/", 1)[0], "lead", ALL_DOMAINS)
    fabric_ports = fabric_switch_ports(cables)
    named = {(d["role"], d["device"]) for d in devices}
    for e in cables:
        sw, sp, other, oport = e["cable_switch"], e["cable_switch_port"], e["cable_node"], e["cable_port"]
        spk, ck = switch_port_key(sw, sp), cable_key(sw, sp, other, oport)
        add("switch", sw, sw, "seen", 0)
        add("switch_port", spk, sw, "seen", 0)
        add("cable", ck, other, "seen", 0)
        crole = {"cause": "root", "candidate": "candidate"}.get(e["role"])
        if crole is None or (crole, spk) not in named:
            continue
        items = by_role.get(crole, [])
        mask = domain_mask([dom for cat, dom, _n in items if cat == e["category"]] or [dom for _c, dom, _n in items])
        add("switch", sw, sw, crole, mask)
        add("switch_port", spk, sw, crole, mask)
        add("cable", ck, other, crole, mask)
    for d in devices:
        node, device, role = d["node"], d["device"], d["role"]
        if device in fabric_ports:
            continue  # a switch port the fabric names: counted as one above, not as a device
        add("device", device, node, "seen", 0)
        if role not in ("root", "candidate"):
            continue
        items = by_role.get(role, [])
        # The cause(s) on the device's node; a lone cause owns all its devices.
        doms = [dom for _c, dom, nodes in items if node in nodes] or [dom for _c, dom, _n in items]
        add("device", device, node, role, domain_mask(doms))
    for e in ports:
        port, node, role = e["port"], e["node"], e["role"]
        kind = port_kind(port)
        add(kind, port, node, "seen", 0)
        if role not in ("cause", "candidate"):
            continue
        crole = "root" if role == "cause" else "candidate"
        items = by_role.get(crole, [])
        doms = [dom for cat, dom, _n in items if cat == e["category"]] or [dom for _c, dom, _n in items]
        add(kind, port, node, crole, domain_mask(doms))
    rows = [
        {"verdict_id": vid, "failed_at": failed_at, "failed_day": day, "cluster": cluster, "kind": kind,
         "key": _clean(key), "node": None if node is None else _clean(node), "role": role, "domains": mask}
        for (kind, key, role), (node, mask) in hits.items()
        # An entity the root names is not also counted as a candidate of the same verdict.
        if not (role == "candidate" and (kind, key, "root") in hits)
    ]
    exposure = [{"verdict_id": vid, "failed_at": failed_at, "cluster": cluster, "node": _clean(n)}
                for n in dict.fromkeys(n for n in workload_nodes if isinstance(n, str))]
    return rows, exposure
