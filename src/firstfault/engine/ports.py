"""The host or switch port an event names, in one spelling per kind (the verdict's `evidence[].port`).

Taken from the event's fields, never from its text: the extractors already
read the line. HCA port `mlx5_5:1` (a net.link with iface and port, or a
metric with `device`/`port` labels); netdev `ibp94s0`; NVSwitch link
`nvswitch2:30` (an SXid's switch and link); `nvswitch-phys2:30` (Fabric
Manager names the switch by its physical id), `nvswitch-0xb0cf0e0300e31440:61`
(by its GUID, on an NVL72 switch tray). GPU faults name no port.

`host_port_of` adds the HCA a transport error names (`hca mlx5_0` in NCCL's
completion error, `on dev mlx5_3:1` in a failed verbs call): what the
fabric's cables are looked up by (engine/fabric.py). `cable_of` is the cable
the engine found for the event (its `fabric_*` fields), for the verdict.
"""

from __future__ import annotations

from firstfault.model import Cable, Event
from firstfault.records import UNSET, UnsetType

__all__ = ["CABLE_FIELDS", "EMITS", "TRANSPORT_KINDS", "cable_of", "host_port_of", "port_of"]


# What the extractors write as `iface` when the line names no interface (host.py, nccl.py).
_UNNAMED = frozenset({"", "ib", "mlx5"})


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def port_of(ev: Event) -> str | None:
    f = ev.fields
    port = _int(f.get("port"))
    if ev.kind == "net.link":
        iface = f.get("iface")
        if not isinstance(iface, str) or iface in _UNNAMED or iface.startswith("pci:"):
            return None  # the line named no interface, only its kind or PCI address (docs/events.md)
        return f"{iface}:{port}" if port is not None else iface
    if ev.kind == "metric.condition":
        iface = f.get("iface")
        return f"{iface}:{port}" if isinstance(iface, str) and iface and port is not None else None
    if ev.kind == "gpu.sxid":
        switch, link = _int(f.get("switch")), _int(f.get("link"))
        return f"nvswitch{switch}:{link}" if switch is not None and link is not None else None
    if ev.kind == "gpu.fabricmanager":
        phys = _int(f.get("physical_id"))
        if phys is not None and port is not None:
            return f"nvswitch-phys{phys}:{port}"
        guid = f.get("switch_guid")
        return f"nvswitch-{guid}:{port}" if isinstance(guid, str) and guid and port is not None else None
    return None


def host_port_of(ev: Event) -> str | None:
    """The host port an event names for the fabric: port_of's, else the HCA (or HCA port) of a transport
    error. Not the verdict's `port` (that stays port_of's, whatever the fabric)."""
    port = port_of(ev)
    if port is not None or ev.kind.startswith("gpu."):
        return port
    for name in ("hca", "dev"):
        value = ev.fields.get(name)
        if isinstance(value, str) and value and value not in _UNNAMED:
            return value
    return None


# The fields engine/fabric.py gives an event whose port it found on a cable (docs/events.md).
CABLE_FIELDS = ("fabric_switch", "fabric_switch_port", "fabric_node", "fabric_port")
# Transport errors: a report between two hosts over the fabric. One that names no port is on the host's
# only cable, when it has one.
TRANSPORT_KINDS = frozenset({"nccl.ib_completion_error", "net.ib_verbs_error"})
# The kinds whose host port can be on a cable (a link event, a port counter, a transport error), and the fields
# engine/fabric.py gives them (engine/validators.py: the kinds and fields rules may name; docs/events.md).
EMITS: dict[str, frozenset[str]] = {kind: frozenset(CABLE_FIELDS)
                                    for kind in ("net.link", "metric.condition", *sorted(TRANSPORT_KINDS))}


def cable_of(ev: Event) -> Cable | UnsetType:
    values = [ev.fields.get(k) for k in CABLE_FIELDS]
    if not all(isinstance(v, str) and v for v in values):
        return UNSET
    switch, switch_port, node, port = (str(v) for v in values)
    return Cable(switch=switch, switch_port=switch_port, node=node, port=port)
