"""Read-only queries the fleet view needs beyond VerdictStore's list/get/fleet.

VerdictStore.fleet counts per node/device/port, but the fleet view also needs
which *domain* each implication came from (a CUDA OOM on node-02 is not
node-02's fault), when it happened (the trend), and how many jobs each node
ran (the exposure a repeat-offender rate is measured against). So this module
reads the store's tables directly, inside the window, and fleet.py does the
arithmetic in Python. Nothing here writes.

Time is the verdict's failure time (`failed_at`: its window's end, else its
analysis time), so a week analysed late (a back-fill) lands on the days it
failed. `fleet_rows` is the reference reading, kept for small stores and to
check `fleetsql.fleet_counts`, which the pages use: that one aggregates the
fleet tables the store writes with each verdict (store/fleetrows.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ColumnElement, Engine, cast, inspect, select, type_coerce

from firstfault.model import cable_key, switch_port_key
from firstfault.store import schema as t
from firstfault.store.fleetrows import SWITCH_LEAD, fabric_switch_ports


@dataclass(frozen=True, slots=True)
class Hit:
    """One stored verdict naming one node, device or port as (part of) where it began."""

    verdict_id: int
    at: datetime  # the verdict's failure time
    role: str  # "root", "candidate" or "lead" (a verdict's lead names it: counted beside, never as, a cause)
    domains: tuple[str, ...]  # the domain(s) of the cause(s) that name it
    key: str
    node: str | None


@dataclass(slots=True)
class FleetRows:
    """Everything the fleet figures are computed from, for one window."""

    verdicts: list[tuple[int, datetime, tuple[str, ...]]] = field(default_factory=list)  # id, time, workload nodes
    nodes: list[Hit] = field(default_factory=list)
    devices: list[Hit] = field(default_factory=list)
    ports: list[Hit] = field(default_factory=list)
    # From the evidence's cables (a fabric source): switches, their ports (`leaf01/3`) and the cables.
    switches: list[Hit] = field(default_factory=list)
    fabric_ports: list[Hit] = field(default_factory=list)
    cables: list[Hit] = field(default_factory=list)
    seen_devices: set[str] = field(default_factory=set)
    seen_ports: set[str] = field(default_factory=set)
    seen_switches: set[str] = field(default_factory=set)
    seen_fabric_ports: set[str] = field(default_factory=set)
    seen_cables: set[str] = field(default_factory=set)
    cause_domains: dict[int, set[str]] = field(default_factory=dict)  # verdict -> domains of root/candidates


def _window(since: datetime | None, until: datetime | None,
            clusters: Sequence[str] = ()) -> list[ColumnElement[bool]]:
    v = t.verdicts.c
    conds: list[ColumnElement[bool]] = []
    if since is not None:
        conds.append(v.failed_at >= since)
    if until is not None:
        conds.append(v.failed_at < until)
    if clusters:
        conds.append(v.cluster.in_(list(clusters)))
    return conds


def _workload_nodes(engine: Engine) -> Any:
    # The workload's node list lives only in the document. SQLite reads the
    # TEXT column as JSON directly (a CAST AS JSON there would mean NUMERIC
    # affinity and turn the text into 0); PostgreSQL needs the cast.
    col = t.verdicts.c.verdict_json
    doc = cast(col, JSON) if engine.dialect.name == "postgresql" else type_coerce(col, JSON)
    return doc[("workload", "nodes")]


def _leads(engine: Engine) -> Any:
    col = t.verdicts.c.verdict_json
    doc = cast(col, JSON) if engine.dialect.name == "postgresql" else type_coerce(col, JSON)
    return doc["leads"]


def _lead_hits(out: FleetRows, vid: int, at: datetime, leads: Any) -> None:
    """A verdict's leads (read from the document, like the workload's nodes) as role "lead" hits."""
    if isinstance(leads, str):  # a JSON path answer some drivers hand back as text
        try:
            leads = json.loads(leads)
        except ValueError:
            return
    if not isinstance(leads, list):
        return
    nodes: dict[str, None] = {}
    devices: dict[str, None] = {}
    switches: dict[str, None] = {}
    for ld in leads:
        if isinstance(ld, dict):
            nodes.update(dict.fromkeys(n for n in ld.get("nodes") or [] if isinstance(n, str)))
            named = dict.fromkeys(d for d in ld.get("devices") or [] if isinstance(d, str))
            (switches if ld.get("kind") == SWITCH_LEAD else devices).update(named)
    for n in nodes:
        out.nodes.append(Hit(vid, at, "lead", ("lead",), n, n))
    for d in devices:
        out.seen_devices.add(d)
        out.devices.append(Hit(vid, at, "lead", ("lead",), d, d.split("/", 1)[0]))
    for sw in switches:
        out.seen_switches.add(sw)
        out.switches.append(Hit(vid, at, "lead", ("lead",), sw, sw))


def _as_nodes(value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(str(n) for n in value if isinstance(n, str))
    return ()


def fleet_rows(engine: Engine, since: datetime | None, until: datetime | None,
               clusters: Sequence[str] = ()) -> FleetRows:
    """The window's verdicts, their causes' nodes, devices and ports, with roles and domains."""
    v, c, d, e = t.verdicts.c, t.causes.c, t.devices.c, t.evidence.c
    window = _window(since, until, clusters)
    out = FleetRows()
    with engine.connect() as conn:
        for vid, at, nodes, leads in conn.execute(
            select(v.id, v.failed_at, _workload_nodes(engine), _leads(engine)).where(*window).order_by(v.id)
        ):
            out.verdicts.append((int(vid), at, _as_nodes(nodes)))
            _lead_hits(out, int(vid), at, leads)
        times = {vid: at for vid, at, _ in out.verdicts}

        # Causes per verdict and role: (category, domain, nodes).
        causes: dict[tuple[int, str], list[tuple[str, str, list[str]]]] = {}
        for vid, role, category, domain, nodes in conn.execute(
            select(c.verdict_id, c.role, c.category, c.domain, c.nodes)
            .join(t.verdicts, v.id == c.verdict_id)
            .where(*window, c.role.in_(("root", "candidate")))
            .order_by(c.verdict_id, c.role, c.position)
        ):
            causes.setdefault((int(vid), role), []).append((category, domain, list(nodes or [])))
            out.cause_domains.setdefault(int(vid), set()).add(domain)

        for (vid, role), items in causes.items():
            per_node: dict[str, list[str]] = {}
            for _cat, domain, nodes in items:
                for n in nodes:
                    per_node.setdefault(n, []).append(domain)
            for n, domains in per_node.items():
                out.nodes.append(Hit(vid, times[vid], role, tuple(dict.fromkeys(domains)), n, n))

        # Cables (0005_fabric; a store opened without migrating may not have the columns yet).
        cabled: dict[int, list[Any]] = {}
        if any(col["name"] == "cable_switch" for col in inspect(conn).get_columns(t.evidence.name)):
            for row in conn.execute(
                select(e.verdict_id, e.role, e.category, e.cable_switch, e.cable_switch_port, e.cable_node,
                       e.cable_port)
                .join(t.verdicts, v.id == e.verdict_id).where(*window, e.cable_switch.is_not(None))
            ):
                cabled.setdefault(int(row.verdict_id), []).append(row)
        fabric_ports = {vid: fabric_switch_ports(r._mapping for r in rows) for vid, rows in cabled.items()}
        named: dict[int, set[tuple[str, str]]] = {}

        for vid, role, node, device in conn.execute(
            select(d.verdict_id, d.role, d.node, d.device).join(t.verdicts, v.id == d.verdict_id).where(*window)
        ):
            named.setdefault(int(vid), set()).add((role, device))
            if device in fabric_ports.get(int(vid), ()):
                continue  # a switch port the fabric names: a switch port, not a device
            out.seen_devices.add(device)
            if role not in ("root", "candidate"):
                continue
            items = causes.get((int(vid), role), [])
            # The cause(s) on the device's node; a lone cause owns all its devices.
            domains = [dom for _cat, dom, nodes in items if node in nodes] or [dom for _c, dom, _n in items]
            out.devices.append(Hit(int(vid), times[int(vid)], role, tuple(dict.fromkeys(domains)), device, node))

        for vid, role, node, port, category in conn.execute(
            select(e.verdict_id, e.role, e.node, e.port, e.category)
            .join(t.verdicts, v.id == e.verdict_id)
            .where(*window, e.port.is_not(None))
        ):
            out.seen_ports.add(port)
            if role not in ("cause", "candidate"):
                continue
            crole = "root" if role == "cause" else "candidate"
            items = causes.get((int(vid), crole), [])
            domains = [dom for cat, dom, _n in items if cat == category] or [dom for _c, dom, _n in items]
            out.ports.append(Hit(int(vid), times[int(vid)], crole, tuple(dict.fromkeys(domains)), port, node))

        for vid, rows in cabled.items():
            for r in rows:
                spk = switch_port_key(r.cable_switch, r.cable_switch_port)
                ck = cable_key(r.cable_switch, r.cable_switch_port, r.cable_node, r.cable_port)
                out.seen_switches.add(r.cable_switch)
                out.seen_fabric_ports.add(spk)
                out.seen_cables.add(ck)
                blamed = {"cause": "root", "candidate": "candidate"}.get(r.role)
                if blamed is None or (blamed, spk) not in named.get(vid, set()):
                    continue
                items = causes.get((vid, blamed), [])
                domains = [dom for cat, dom, _n in items if cat == r.category] or [dom for _c, dom, _n in items]
                doms = tuple(dict.fromkeys(domains))
                at = times[vid]
                out.switches.append(Hit(vid, at, blamed, doms, r.cable_switch, r.cable_switch))
                out.fabric_ports.append(Hit(vid, at, blamed, doms, spk, r.cable_switch))
                out.cables.append(Hit(vid, at, blamed, doms, ck, r.cable_node))
    return out


def known_values(engine: Engine, column: str, limit: int = 500) -> Sequence[str]:
    """Distinct values of a verdicts column (for the filter form's suggestions)."""
    col = t.verdicts.c[column]
    with engine.connect() as conn:
        rows = conn.execute(select(col).where(col.is_not(None)).distinct().order_by(col).limit(limit))
        return [str(r[0]) for r in rows]


def known_nodes(engine: Engine, limit: int = 2000) -> Sequence[str]:
    a = t.affected_nodes.c
    with engine.connect() as conn:
        return [str(r[0]) for r in conn.execute(select(a.node).distinct().order_by(a.node).limit(limit))]
