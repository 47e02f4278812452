"""Fabric sources: what each host port is cabled to, as the fabric tools print it.

A `fabric` source (docs/evidence-bundle.md, "Fabric formats") adds no event:
it is a list of links, each a pair of ends (a node and its port), that the
engine uses to carry an event on one end of a link to the other
(engine/fabric.py). Four formats:

- `ibnetdiscover`: the topology file `ibnetdiscover` prints (infiniband-diags):
  one block per node (`Switch N "S-<guid>" # "<description>" ... lid L`,
  `Ca N "H-<guid>" # "<description>"`), one line per connected port.
- `iblinkinfo`: `iblinkinfo`'s table, in its default form (a `CA:` / `Switch:`
  header, then one line per port) or with `-l` (each line names its node).
- `lldp-json`: `lldpctl -f json` (or `-f json0`) on one host: the neighbour
  (chassis name, port) of each local interface. The host is the file's
  `{node}`.
- `fabric-csv`: a site's own inventory, a CSV with a header naming the columns
  `host,host_port,switch,switch_port` (more columns are allowed and ignored).

An InfiniBand node description is `<host> <device>` (`node-03 mlx5_0`, what
rdma-ndd sets), so a host port is spelled as the kernel and NCCL spell it:
`mlx5_0:1`. A switch port is its number (`3`), or the name LLDP gives
(`swp3`, `Ethernet12`).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.extract.structured import ParseIssue, StructuredResult

FABRIC_FORMATS: tuple[str, ...] = ("ibnetdiscover", "iblinkinfo", "lldp-json", "fabric-csv")
# One fabric file lists at most this many links; the rest is an issue, not memory (a 100k-GPU fleet has
# about 2 x 10^5 host ports and as many switch-to-switch links).
MAX_LINKS = 1 << 20
MAX_ISSUES = 50


@dataclass(frozen=True, slots=True)
class End:
    """One end of a link: a node (host or switch) and its port, with the IB addresses when known."""

    node: str
    port: str  # "mlx5_0:1" (host, IB), "ens1f0np0" (host, LLDP), "3" or "swp3" (switch)
    switch: bool
    lid: int | None = None
    guid: str | None = None  # port GUID, "0x" and 16 lower-case hex digits


@dataclass(frozen=True, slots=True)
class Link:
    """Two ends joined by a link, and where the fabric file says so."""

    a: End
    b: End
    line: int | None = None


@dataclass(slots=True)
class FabricResult(StructuredResult):
    """What one fabric file gave: no event, its links, the time the file says it was made, its problems."""

    links: list[Link] = field(default_factory=list)
    made_at: datetime | None = None  # ibnetdiscover's "generated on" header

    def issue(self, line: int | None, message: str) -> None:
        if len(self.issues) < MAX_ISSUES:
            self.issues.append(ParseIssue(line, message))
        elif len(self.issues) == MAX_ISSUES:
            self.issues.append(ParseIssue(None, "more problems in this file; not listed"))

    def add(self, link: Link) -> bool:
        if len(self.links) >= MAX_LINKS:
            self.issue(link.line, f"more than {MAX_LINKS} links; the rest of the file is not read")
            return False
        self.links.append(link)
        return True


def read_fabric(data: bytes, fmt: str | None, file: str, *, node: str | None = None) -> FabricResult:
    """Read one fabric file in format `fmt` (`node`: the file's `{node}`, the host an LLDP file is from)."""
    res = FabricResult()
    text = data.decode("utf-8", errors="replace")
    res.lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if fmt == "ibnetdiscover":
        _ibnetdiscover(text, res)
    elif fmt == "iblinkinfo":
        _iblinkinfo(text, res)
    elif fmt == "lldp-json":
        if node is None:
            res.issue(None, "cannot read: an lldp-json file needs the host it was taken on "
                            "(a {node} placeholder in the source's path)")
        else:
            _lldp(text, node, res)
    elif fmt == "fabric-csv":
        _csv(text, res)
    else:
        res.issue(None, f"cannot read as a fabric file: format {fmt!r} is not one of {', '.join(FABRIC_FORMATS)}")
    return res


# --------------------------------------------------------------------------
# InfiniBand node descriptions and addresses
# --------------------------------------------------------------------------


def host_port(description: str, port: int) -> tuple[str, str]:
    """(host, port) of an HCA port: "node-03 mlx5_0", 1 -> ("node-03", "mlx5_0:1").

    rdma-ndd's default description is `%h %d` (host name, device); a description of one word names the
    host only, and its port is its number."""
    words = description.split()
    if not words:
        return "", str(port)
    if len(words) == 1:
        return words[0], str(port)
    return words[0], f"{words[1]}:{port}"


def norm_guid(text: str) -> str:
    """A GUID as 0x and 16 lower-case hex digits, however it was written."""
    digits = text.lower().removeprefix("0x")
    return "0x" + digits.rjust(16, "0")


def _end(desc: str, is_switch: bool, port: int, lid: int | None, guid: str | None) -> End:
    if is_switch:
        return End(node=desc, port=str(port), switch=True, lid=lid, guid=guid)
    host, hp = host_port(desc, port)
    return End(node=host, port=hp, switch=False, lid=lid, guid=guid)


# --------------------------------------------------------------------------
# ibnetdiscover
# --------------------------------------------------------------------------

# `Switch	36 "S-0000000000200000"		# "leaf01" base port 0 lid 1 lmc 0`;
# `Ca	1 "H-0000000000100000"		# "node-01 mlx5_0"`
_IBN_NODE = re.compile(r'^(?P<type>Switch|Ca|Rt)\s+\d+\s+"(?P<id>[^"]+)"\s*(?:#\s*"(?P<desc>[^"]*)"(?P<rest>.*))?$')
# switch port: `[1]	"H-0000000000100000"[1](100001) 		# "node-01 mlx5_0" lid 2 4xSDR`
# CA port:     `[1](100001) 	"S-0000000000200000"[1]		# lid 2 lmc 0 "leaf01" lid 1 4xSDR`
_IBN_PORT = re.compile(
    r'^\[(?P<port>\d+)\](?:\((?P<guid>[0-9a-fA-Fx]+)\))?\s*"(?P<rid>[^"]+)"\[(?P<rport>\d+)\]'
    r'(?:\((?P<rguid>[0-9a-fA-Fx]+)\))?\s*(?:#(?P<comment>.*))?$'
)
_IBN_LID = re.compile(r"\blid (?P<lid>\d+)")
_IBN_DESC = re.compile(r'"(?P<desc>[^"]*)"\s*lid (?P<lid>\d+)')
_IBN_MADE = re.compile(r"^#\s*Topology file: generated on (?P<when>.+?)\s*$")


@dataclass(slots=True)
class _IbnNode:
    kind: str
    desc: str
    lid: int | None


def _ibnetdiscover(text: str, res: FabricResult) -> None:
    nodes: dict[str, _IbnNode] = {}
    # (node id, port) -> (remote id, remote port, line, own port GUID, remote port GUID, remote desc, remote lid)
    ports: list[tuple[str, int, str, int, int, str | None, str | None, str | None, int | None, int | None]] = []
    current: str | None = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            current = None
            continue
        if line.startswith("#"):
            m = _IBN_MADE.match(line)
            if m and res.made_at is None:
                res.made_at = _ctime(m.group("when"))
            continue
        if (m := _IBN_NODE.match(line)) is not None:
            current = m.group("id")
            rest = m.group("rest") or ""
            lid = _IBN_LID.search(rest)
            nodes[current] = _IbnNode(m.group("type"), m.group("desc") or current,
                                      int(lid.group("lid")) if lid else None)
            continue
        if line.startswith("["):
            if current is None:
                res.issue(n, "a port line outside a node block; skipped")
                continue
            pm = _IBN_PORT.match(line)
            if pm is None:
                if '"' in line:
                    res.issue(n, f"cannot read the port line {line[:120]!r}; skipped")
                continue
            comment = pm.group("comment") or ""
            own_lid: int | None = None
            rdesc: str | None = None
            rlid: int | None = None
            if (dm := _IBN_DESC.search(comment)) is not None:
                rdesc, rlid = dm.group("desc"), int(dm.group("lid"))
                head = comment[: dm.start()]
                if (lm := _IBN_LID.search(head)) is not None:
                    own_lid = int(lm.group("lid"))  # a CA port's own LID comes before the remote's description
            ports.append((current, int(pm.group("port")), pm.group("rid"), int(pm.group("rport")), n,
                          pm.group("guid"), pm.group("rguid"), rdesc, rlid, own_lid))
        # vendid=, devid=, sysimgguid=, switchguid=, caguid=: the block's identity, not needed here
    _ibn_links(nodes, ports, res)


def _ibn_links(nodes: dict[str, _IbnNode], ports: list[tuple[str, int, str, int, int, str | None, str | None,
                                                             str | None, int | None, int | None]],
                res: FabricResult) -> None:
    # Each link is listed from both of its ends; the first listing gives it, the other adds what it knows.
    lids: dict[tuple[str, int], int] = {}
    guids: dict[tuple[str, int], str] = {}
    descs: dict[str, str] = {}
    for nid, port, rid, rport, _line, guid, rguid, rdesc, rlid, own_lid in ports:
        if guid:
            guids[(nid, port)] = norm_guid(guid)
        if rguid:
            guids.setdefault((rid, rport), norm_guid(rguid))
        if own_lid is not None:
            lids[(nid, port)] = own_lid
        if rlid is not None:
            lids.setdefault((rid, rport), rlid)
        if rdesc:
            descs.setdefault(rid, rdesc)
    seen: set[tuple[tuple[str, int], tuple[str, int]]] = set()
    for nid, port, rid, rport, line, *_ in ports:
        a, b = (nid, port), (rid, rport)
        key = (a, b) if a <= b else (b, a)
        if key in seen:
            continue
        seen.add(key)
        ends = []
        for node_id, p in (a, b):
            info = nodes.get(node_id)
            is_switch = info.kind == "Switch" if info else node_id.startswith("S-")
            desc = info.desc if info else descs.get(node_id, node_id)
            # A switch answers on port 0: every port of it has the switch's LID.
            lid = (info.lid if info and is_switch else None) or lids.get((node_id, p))
            ends.append(_end(desc, is_switch, p, lid, guids.get((node_id, p))))
        if not res.add(Link(ends[0], ends[1], line)):
            return


def _ctime(text: str) -> datetime | None:
    """ibnetdiscover's `generated on Thu Dec  3 15:45:58 2026` (ctime, the collector's local time: kept naive)."""
    try:
        return datetime.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y")
    except ValueError:
        return None


# --------------------------------------------------------------------------
# iblinkinfo
# --------------------------------------------------------------------------

_IBL_HEAD = re.compile(r"^(?P<type>CA|Switch):\s+(?:(?P<guid>0x[0-9a-fA-F]+)\s+)?(?P<desc>.*?):?\s*$")
# `<lid> <port>[  ] ==( <width> <speed> <state>/ <phys>)==>  <rlid> <rport>[  ] "<rdesc>" ( ... )`,
# a CA's line begins with its port GUID; with -l every line begins with `<guid> "<desc>"`.
_IBL_LINK = re.compile(
    r'^(?:(?P<lguid>0x[0-9a-fA-F]+)\s+"\s*(?P<ldesc>[^"]*)"\s+)?(?:(?P<pguid>0x[0-9a-fA-F]+)\s+)?'
    r"(?P<lid>\d+)\s+(?P<port>\d+)\[[^\]]*\]\s+==\((?P<link>[^)]*)\)==>\s+"
    r'(?:(?P<rguid>0x[0-9a-fA-F]+)\s+)?(?:(?P<rlid>\d+)\s+(?P<rport>\d+))?\s*\[[^\]]*\]\s+"(?P<rdesc>[^"]*)"'
)


def _iblinkinfo(text: str, res: FabricResult) -> None:
    kind: str | None = None
    desc: str | None = None
    # (own is a switch: None when the line does not say, own desc, own GUID, port, LID, remote desc, remote GUID,
    #  remote port, remote LID, line)
    links: list[tuple[bool | None, str, str | None, int, int, str, str | None, int, int, int]] = []
    switch_descs: set[str] = set()
    ca_descs: set[str] = set()
    guid_ports: dict[str, set[int]] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if "==(" not in line and (h := _IBL_HEAD.match(line)) is not None:
            kind, desc = h.group("type"), h.group("desc").strip()
            (switch_descs if kind == "Switch" else ca_descs).add(desc)
            continue
        m = _IBL_LINK.match(line)
        if m is None:
            if "==(" in line:
                res.issue(n, f"cannot read the link line {line[:120]!r}; skipped")
            continue
        own_guid = m.group("lguid") or m.group("pguid")
        if own_guid:
            guid_ports.setdefault(norm_guid(own_guid), set()).add(int(m.group("port")))
        if m.group("rport") is None:
            continue  # a port with nothing at the other end (Down/Polling)
        rguid = m.group("rguid")
        if rguid:
            guid_ports.setdefault(norm_guid(rguid), set()).add(int(m.group("rport")))
        if m.group("ldesc") is not None:  # -l: the line names its node, not whether it is a switch
            own_desc, is_switch = m.group("ldesc").strip(), None
        elif desc is not None:
            own_desc, is_switch = desc, kind == "Switch"
        else:
            res.issue(n, "a link line before any CA: or Switch: header; skipped")
            continue
        links.append((is_switch, own_desc, norm_guid(own_guid) if own_guid else None, int(m.group("port")),
                      int(m.group("lid")), m.group("rdesc").strip(), norm_guid(rguid) if rguid else None,
                      int(m.group("rport")), int(m.group("rlid")), n))

    def switch_guid(guid: str | None) -> bool | None:
        # Every port of a switch answers with the switch's GUID; a CA's ports have a GUID each.
        return None if guid is None or guid not in guid_ports else len(guid_ports[guid]) > 1

    seen: set[tuple[tuple[str, int], tuple[str, int]]] = set()
    for is_switch, own, guid, port, lid, rdesc, rguid, rport, rlid, n in links:
        key = ((own, port), (rdesc, rport))
        if key in seen or (key[1], key[0]) in seen:
            continue
        seen.add(key)
        if is_switch is None:
            is_switch = own in switch_descs or (own not in ca_descs and bool(switch_guid(guid)))
        # The remote end is a switch when a Switch block (or its GUID's many ports) says so; a CA when a CA
        # block does; else (a partial output) a CA is most likely at a switch's end, and a switch at a CA's.
        r_switch = rdesc in switch_descs or (rdesc not in ca_descs and (switch_guid(rguid) or not is_switch))
        a = _end(own, is_switch, port, lid, None if is_switch else guid)
        b = _end(rdesc, bool(r_switch), rport, rlid, None if r_switch else rguid)
        if not res.add(Link(a, b, n)):
            return


# --------------------------------------------------------------------------
# lldpctl -f json / json0
# --------------------------------------------------------------------------

_SWITCH_CAPABILITIES = frozenset({"bridge", "router"})


def _lldp(text: str, node: str, res: FabricResult) -> None:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        res.issue(None, f"cannot read as lldpctl JSON: {exc}")
        return
    lldp = doc.get("lldp") if isinstance(doc, dict) else None
    if isinstance(lldp, list):  # json0: every value is a list
        lldp = lldp[0] if lldp and isinstance(lldp[0], dict) else {}
    if not isinstance(lldp, dict):
        res.issue(None, "not lldpctl JSON: no top-level 'lldp' object")
        return
    for name, iface in _interfaces(lldp.get("interface")):
        where = f"lldp.interface.{name}"
        chassis = _chassis(iface.get("chassis"))
        if chassis is None:
            res.issue(None, f"{where}: no chassis name; skipped")
            continue
        sw_name, caps = chassis
        port = _port_name(iface.get("port"))
        if port is None:
            res.issue(None, f"{where}: no port id; skipped")
            continue
        a = End(node=node, port=name, switch=False)
        b = End(node=sw_name, port=port, switch=bool(caps & _SWITCH_CAPABILITIES))
        if not res.add(Link(a, b, None)):
            return


def _one(value: object) -> object:
    """json0 wraps every value in a list of one."""
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    return value


def _interfaces(value: object) -> Iterator[tuple[str, dict[str, object]]]:
    # json: {"eth0": {...}} for one interface, [{"eth0": {...}}, ...] for several;
    # json0: [{"name": "eth0", ...}, ...].
    items = value if isinstance(value, list) else [value]
    for item in items:
        if not isinstance(item, dict):
            continue
        if "name" in item and ("chassis" in item or "port" in item):
            name = _one(item["name"])
            if isinstance(name, dict):
                name = name.get("value")
            if isinstance(name, str):
                yield name, item
            continue
        for name, body in item.items():
            if isinstance(body, dict):
                yield name, body


def _value(v: object) -> str | None:
    v = _one(v)
    if isinstance(v, dict):
        v = _one(v.get("value"))
    return v if isinstance(v, str) and v else None


def _chassis(value: object) -> tuple[str, set[str]] | None:
    value = _one(value)
    if not isinstance(value, dict):
        return None
    if "name" in value and ("id" in value or "descr" in value or "capability" in value):
        name, body = _value(value.get("name")), value  # json0: the chassis' fields, its name among them
    elif len(value) == 1:
        ((key, inner),) = value.items()  # json: {"leaf01": {...}}
        name, body = key, inner if isinstance(inner, dict) else {}
    else:
        return None
    if not name:
        return None
    caps: set[str] = set()
    raw = body.get("capability", [])
    for c in raw if isinstance(raw, list) else [raw]:
        if isinstance(c, dict) and c.get("enabled") in (True, "true") and isinstance(c.get("type"), str):
            caps.add(str(c["type"]).lower())
    return name, caps


def _port_name(value: object) -> str | None:
    """The neighbour's port: its id when the id is an interface name, else its description (a switch that
    sends its MAC as the id names the port in the description), else the id as sent."""
    value = _one(value)
    if not isinstance(value, dict):
        return None
    pid = _one(value.get("id"))
    id_type = _value(pid.get("type")) if isinstance(pid, dict) else None
    id_value = _value(pid) if pid is not None else None
    descr = _value(value.get("descr"))
    if id_type in ("ifname", "local") and id_value:
        return id_value
    return descr or id_value


# --------------------------------------------------------------------------
# A site's inventory: CSV host,host_port,switch,switch_port
# --------------------------------------------------------------------------

CSV_COLUMNS: tuple[str, ...] = ("host", "host_port", "switch", "switch_port")


def _csv(text: str, res: FabricResult) -> None:
    rows = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    at: dict[str, int] = {}
    for row in rows:
        n = rows.line_num
        if not row or all(not c.strip() for c in row) or row[0].lstrip().startswith("#"):
            continue
        if header is None:
            header = [c.strip().lower() for c in row]
            missing = [c for c in CSV_COLUMNS if c not in header]
            if missing:
                res.issue(n, f"the header must name the columns {','.join(CSV_COLUMNS)}; "
                             f"missing: {', '.join(missing)}; file not read")
                return
            at = {c: header.index(c) for c in CSV_COLUMNS}
            continue
        if len(row) < len(header):
            res.issue(n, f"{len(row)} columns, the header has {len(header)}; row skipped")
            continue
        values = {c: row[i].strip() for c, i in at.items()}
        empty = [c for c, v in values.items() if not v]
        if empty:
            res.issue(n, f"empty {', '.join(empty)}; row skipped")
            continue
        a = End(node=values["host"], port=values["host_port"], switch=False)
        b = End(node=values["switch"], port=values["switch_port"], switch=True)
        if not res.add(Link(a, b, n)):
            return
    if header is None:
        res.issue(None, f"no header line naming {','.join(CSV_COLUMNS)}")


__all__ = ["CSV_COLUMNS", "FABRIC_FORMATS", "End", "FabricResult", "Link", "host_port", "norm_guid", "read_fabric"]
