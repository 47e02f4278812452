"""GPU-side kernel and Fabric Manager lines: Xid, SXid, FM errors, the driver's messages without an Xid.

Every regex here uses `search`: the line still carries its syslog / dmesg /
journal prefix. Field names follow docs/events.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import (
    DCGM_REASONS_NOT_RUN,
    AccelMessage,
    DcgmDiagTest,
    DcgmError,
    FmMessage,
    NvrmMessage,
    accel_table,
    dcgm_diag_tests,
    dcgm_errors,
    dcgm_format_runs,
    fabric_manager_messages,
    nvidia_smi_field_errors,
    nvidia_smi_nvlink,
    nvidia_smi_query,
    nvlink_fabric_model,
    nvml_anchors,
    nvml_device_anchors,
    nvml_not_reports,
    nvml_quote_anchors,
    nvml_table,
    nvrm_messages,
    sxid_info,
    xid_class,
    xid_info,
    xid_relays,
)
from firstfault.extract.base import Draft, LineContext, LineExtractor, state_set, worded_at
from firstfault.extract.codes import cuda_error_of
from firstfault.model import FieldValue
from firstfault.pci import norm_pci

_DETAIL_CLIP = 400

# A PCI id as NVRM / nvswitch / FM print it: `0000:3b:00`, `0000:3b:00.0`,
# `00000000:86:00.0`; also the domain-less `3b:00.0`.
_PCI_SHAPE = re.compile(r"^(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?$")


def _pci(raw: str | None) -> str | None:
    """Normalised PCI id, or None for placeholders such as `PCI:...` in pasted logs."""
    if raw is None:
        return None
    raw = raw.strip()
    if raw.startswith("PCI:"):
        raw = raw[4:]
    if not _PCI_SHAPE.match(raw):
        return None
    return norm_pci(raw)


def _device(pci: str | None) -> str | None:
    return f"pci:{pci}" if pci else None


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _DETAIL_CLIP else text[: _DETAIL_CLIP - 3] + "..."


def _recent(state: dict[str, object], key: str) -> dict[object, int]:
    """A per-stream map of `thing -> line number last seen` kept in ctx.state."""
    table = state.get(key)
    if not isinstance(table, dict):
        table = {}
        state[key] = table
    return table


# How far (in file lines) a companion line may trail its head line and still
# be the same report: NVRM prints its blocks within a handful of lines.
_COMPANION_LINES = 20


# --------------------------------------------------------------------------
# Xid
# --------------------------------------------------------------------------

# `pid=` is `1234`, `'<unknown>'` or `<unknown>`; `name=` may be missing, and
# old drivers print neither (nor `PCI:`).
_XID = re.compile(
    r"NVRM: Xid \((?P<pci>[^)]*)\): (?P<xid>\d+)"
    r"(?:, pid=(?P<pid>'?<unknown>'?|'?\d+'?))?"
    r"(?:, name=(?P<name>[^,]*))?"
    r"(?:,\s*(?P<detail>.*))?$"
)
# NVLink5 (Xid 144-150) detail: `UNIT Fatal|Nonfatal XC0|XC1 iN Link N (0xINTRINFO 0xSTATUS ...)`.
_NVL5 = re.compile(
    r"^(?P<unit>[A-Z][A-Z0-9_]*(?:/[A-Z0-9_]+)?)\s+(?P<sev>Nonfatal|Fatal)\s+XC[01]\s+i\d+\s+"
    r"Link\s+(?P<link>-?\d+)(?:\s*\((?P<words>[^)]*)\))?"
)
_CAUSE = re.compile(r"caused by previous Xid (\d+)")
_RECOVERY = re.compile(
    r"recovery action changed from 0x[0-9a-fA-F]+ \([^)]*\) to 0x(?P<code>[0-9a-fA-F]+) \((?P<name>[^)]*)\)"
)
_LINK_WORD = re.compile(r"\bon link (\d+)", re.IGNORECASE)
# Xid 79 printed without an Xid line: newer drivers' `NVRM: GPU 0000:01:00.0: GPU has fallen off the bus.`
# (src/nvidia/arch/nvalloc/unix/src/osinit.c), older ones' `NVRM: GPU at 0000:01:00.0 has fallen off the bus.`
_FALLEN_ONE = re.compile(
    r"NVRM: GPU (?:at (?:PCI:)?)?(?P<pci>(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?):? "
    r"(?:GPU )?has fallen off the bus"
)
_FALLEN_HEAD = re.compile(r"NVRM: The NVIDIA GPU (?P<pci>[0-9a-fA-F:.]+)")
_FALLEN_TAIL = "fallen off the bus and is not responding"

_K_PENDING = "gpu.xid.fallen_head"  # (pci, lineno) of `NVRM: The NVIDIA GPU ...`
_K_RECENT79 = "gpu.xid.recent79"  # pci -> lineno of the last Xid 79 report
_K_LINK_ERR = "gpu.xid.link_errors"  # (pci, link) -> _LinkError: the last NVLink-class Xid on that link
# Xid classes that are faults of an NVLink link itself.
_LINK_CLASSES = frozenset({"nvlink", "nvlink5"})
# How far a fault on a link may trail that link's own error and still be its consequence.
_SAME_LINK_LINES = 200
_SAME_LINK_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class _Pending:
    """An NVRM line that named a PCI address, awaiting the Xid line that goes with it."""

    pci: str | None
    lineno: int


@dataclass(frozen=True, slots=True)
class _LinkError:
    """An NVLink Xid seen on a GPU: its code, line and time."""

    xid: int
    lineno: int
    time: datetime | None


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip("'")
    return int(text) if text.isdigit() else None


def _hex(text: str) -> int | None:
    try:
        return int(text, 16)
    except ValueError:
        return None


def xid_fields(xid: int, pci: str | None, via: str) -> dict[str, FieldValue]:
    """A gpu.xid event's fields, however it was seen (a kernel line, a DCGM metric): the Xid table's
    class, mnemonic and action; a code the table does not know is class `other`."""
    info = xid_info(xid)
    return {
        "xid": xid,
        "pci": pci,
        "via": via,
        "xid_class": info.xid_class if info else "other",
        "mnemonic": info.mnemonic if info else "UNKNOWN",
        "immediate_action": info.immediate if info else None,
    }


class XidExtractor:
    """`NVRM: Xid (...)` in every printed form, and Xid 79 without an Xid line."""

    name = "gpu.xid"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "gpu.xid": frozenset({"cause_xid", "detail", "immediate_action", "intrinfo", "link", "mnemonic",
            "pci", "pid", "proc", "recovery_action", "recovery_code", "severity", "status_word", "subcode",
            "unit", "via", "xid", "xid_class", "cause_class", "cause_link"}),
    }
    sources: frozenset[str] = frozenset({"kernel", "syslog"})
    literals: tuple[str, ...] = ("NVRM: Xid", "fallen off the bus", "NVRM: The NVIDIA GPU")

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        m = _XID.search(line)
        if m:
            yield self.xid_draft(m, ctx)
            return
        yield from self._fallen_off(line, ctx)

    @staticmethod
    def xid_draft(m: re.Match[str], ctx: LineContext) -> Draft:
        """The gpu.xid event of an `NVRM: Xid (...)` match."""
        xid = int(m.group("xid"))
        pci = _pci(m.group("pci"))
        detail = (m.group("detail") or "").strip()
        fields = xid_fields(xid, pci, "log")
        fields["pid"] = _int(m.group("pid"))
        name = (m.group("name") or "").strip()
        fields["proc"] = None if not name or name.strip("'") == "<unknown>" else name
        fields["detail"] = _clip(detail)

        nvl5 = _NVL5.search(detail) if 144 <= xid <= 150 else None
        if nvl5:
            fields["unit"] = nvl5.group("unit")
            fields["severity"] = nvl5.group("sev")
            fields["link"] = int(nvl5.group("link"))
            words = re.findall(r"0x[0-9a-fA-F]+", nvl5.group("words") or "")
            if words:
                intrinfo = _hex(words[0])
                fields["intrinfo"] = intrinfo
                if xid == 149 and intrinfo is not None:
                    # NVIDIA's 149 decode keys the investigatory action on
                    # intrinfo bits 20-25 (gpud's "subcode", e.g. 149.37).
                    fields["subcode"] = (intrinfo >> 20) & 0x3F
            if len(words) > 1:
                fields["status_word"] = _hex(words[1])
        else:
            lm = _LINK_WORD.search(detail)
            if lm:
                fields["link"] = int(lm.group(1))

        cause = _CAUSE.search(detail)
        if cause:
            fields["cause_xid"] = int(cause.group(1))
            fields["cause_class"] = xid_class(int(cause.group(1)))
        _same_link(fields, pci, ctx)
        rec = _RECOVERY.search(detail)
        if rec:
            fields["recovery_action"] = rec.group("name").strip()
            fields["recovery_code"] = _hex(rec.group("code"))
        if xid == 79 and pci:
            _recent(ctx.state, _K_RECENT79)[pci] = ctx.lineno
        return Draft(kind="gpu.xid", fields=fields, device=_device(pci))

    def _fallen_off(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        pci: str | None
        one = _FALLEN_ONE.search(line)
        head = _FALLEN_HEAD.search(line)
        if one:
            pci = _pci(one.group("pci"))
        elif _FALLEN_TAIL in line:
            if head:  # the whole block joined on one line
                pci = _pci(head.group("pci"))
            else:
                pending = ctx.state.pop(_K_PENDING, None)
                pci = None
                if isinstance(pending, _Pending) and ctx.lineno - pending.lineno <= _COMPANION_LINES:
                    pci = pending.pci
        else:
            if head:
                # First line of the multi-line form; the verdict comes two lines later.
                ctx.state[_K_PENDING] = _Pending(_pci(head.group("pci")), ctx.lineno)
            return
        recent = _recent(ctx.state, _K_RECENT79)
        if pci is not None:
            seen = recent.get(pci)
            # The driver's own Xid 79 line usually precedes this message: one
            # report, so keep the Xid line and drop the companion.
            if seen is not None and 0 <= ctx.lineno - seen <= _COMPANION_LINES:
                return
            recent[pci] = ctx.lineno
        fields = xid_fields(79, pci, "fallen_off_bus_message")
        fields["detail"] = _clip(line[line.index("NVRM:") :] if "NVRM:" in line else line)
        yield Draft(kind="gpu.xid", fields=fields, device=_device(pci))


def quoted_xid(text: str, ctx: LineContext) -> Draft | None:
    """The Xid of a driver's line that another program quotes in its own words (a health check's message: Azure's
    check_gpu_xid prints the kernel's `NVRM: Xid (PCI:...): 79, ...` line it found), as the driver's line reads."""
    m = _XID.search(text)
    return XidExtractor.xid_draft(m, ctx) if m is not None else None


def _same_link(fields: dict[str, FieldValue], pci: str | None, ctx: LineContext) -> None:
    """An NVLink link's own error, then another Xid on the same GPU and link: that one is its consequence.

    Blackwell prints a unit error of a link (Xid 145 `RLW_RXPIPE Nonfatal ... Link 11`) and then
    the fault it made (Xid 137 `RLW_RXPIPE interrupt hit on link 11 ...: PRIV Error`): the
    second names no cause, so the shared link is what ties them (`cause_xid`, `cause_class`,
    `cause_link: true`).
    """
    link = fields.get("link")
    xid = fields.get("xid")
    if not isinstance(link, int) or not isinstance(xid, int):
        return
    table = ctx.state.get(_K_LINK_ERR)
    if not isinstance(table, dict):
        table = {}
        ctx.state[_K_LINK_ERR] = table
    key = (pci, link)
    if fields.get("xid_class") in _LINK_CLASSES:
        table[key] = _LinkError(xid, ctx.lineno, ctx.time)
        return
    if "cause_xid" in fields:
        return
    prev = table.get(key)
    if not isinstance(prev, _LinkError) or ctx.lineno - prev.lineno > _SAME_LINK_LINES:
        return
    if prev.time is not None and ctx.time is not None and (ctx.time - prev.time).total_seconds() > _SAME_LINK_SECONDS:
        return
    fields["cause_xid"] = prev.xid
    fields["cause_class"] = xid_class(prev.xid)
    fields["cause_link"] = True


# --------------------------------------------------------------------------
# SXid (NVSwitch)
# --------------------------------------------------------------------------

_SXID = re.compile(r"SXid \((?P<pci>[^)]*)\): (?P<sxid>\d+)(?:,\s*(?P<detail>.*))?$")
_SXID_SEV = re.compile(r"^(?P<sev>Always[- ]fatal|Non[- ]fatal|Fatal)\b,?\s*", re.IGNORECASE)
_LINK = re.compile(r"\bLink (\d+)")
# The switch the driver names (`nvidia-nvswitch2: SXid ...`); the prefix layer may have taken it as a tag.
_NVSWITCH = re.compile(r"\bnvidia-nvswitch(\d+)\b")
_CLASS_SEV = {"fatal": "Fatal", "always_fatal": "Always-fatal", "nonfatal": "Non-fatal", "other": "Non-fatal"}
_SEV_CLASS = {"Fatal": "fatal", "Always-fatal": "always_fatal", "Non-fatal": "nonfatal"}
_FATAL_CLASSES = frozenset({"fatal", "always_fatal"})
_K_SXID = "gpu.sxid.recent"  # (pci, sxid) -> lineno of the last report


class SxidExtractor:
    """`nvidia-nvswitchN: SXid (PCI:...): N, <severity>, ...` and its continuation lines."""

    name = "gpu.sxid"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "gpu.sxid": frozenset({"detail", "link", "pci", "severity", "switch", "sxid", "sxid_class"}),
    }
    sources: frozenset[str] = frozenset({"kernel", "syslog"})
    literals: tuple[str, ...] = ("SXid (",)

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        m = _SXID.search(line)
        if not m:
            return
        sxid = int(m.group("sxid"))
        pci = _pci(m.group("pci"))
        detail = (m.group("detail") or "").strip()
        info = sxid_info(sxid)
        cls: str = info.sxid_class if info else "other"
        sev_m = _SXID_SEV.match(detail)
        recent = _recent(ctx.state, _K_SXID)
        key = (pci, sxid)
        if sev_m is None:
            # One SXid is printed as a head line (with the severity) and then
            # `Severity N Engine instance ...` / `Data {...}` lines: those are the
            # same report unless no head was seen for this switch and code.
            seen = recent.get(key)
            if seen is not None and 0 <= ctx.lineno - seen <= _COMPANION_LINES:
                return
            severity = _CLASS_SEV[cls]
        else:
            printed = sev_m.group("sev").lower()
            severity = "Always-fatal" if printed.startswith("always") else (
                "Non-fatal" if printed.startswith("non") else "Fatal"
            )
            if info is None:
                # a code newer than the table: the driver's own word on the line is its class
                cls = _SEV_CLASS[severity]
            elif (cls in _FATAL_CLASSES) != (severity != "Non-fatal") and cls != "other":
                # the table and the driver disagree on fatal or not (catalog/sxid.yaml: the printed severity wins);
                # a host notice (`other`) stays one
                cls = _SEV_CLASS[severity]
        recent[key] = ctx.lineno
        fields: dict[str, FieldValue] = {
            "sxid": sxid,
            "pci": pci,
            "severity": severity,
            "sxid_class": cls,
            "detail": _clip(detail),
        }
        lm = _LINK.search(detail)
        if lm:
            fields["link"] = int(lm.group(1))
        sw = _NVSWITCH.search(line) or _NVSWITCH.search(ctx.host or "")
        if sw:
            fields["switch"] = int(sw.group(1))
        yield Draft(kind="gpu.sxid", fields=fields, device=_device(pci))


# --------------------------------------------------------------------------
# Fabric Manager
# --------------------------------------------------------------------------

# What a line names, read after its row decides (catalog/platform.yaml `fabric_manager_messages`): the SXid code after
# `error` (`detected NVSwitch fatal error 20034 on fid 0 ...`), the switch's `pci bus id`, `physical id` and `port`, or
# a switch GUID and its `port number` / `port num` (the NVL72 switch trays' words).
_FM_CODE = re.compile(r" ?(\d{1,6})\b")  # right after the row's text
_FM_PCI = re.compile(r"\bpci bus id (?P<pci>[0-9a-fA-F:.]+)")
_FM_PHYSICAL_ID = re.compile(r"\bphysical id (\d+)")
_FM_PORT = re.compile(r"\bport (?:number |num )?(\d+)\b")
_FM_GUID = re.compile(r"\bswitch (?:with )?GUID (0x[0-9a-fA-F]{1,16})\b")
_K_FM_FAILED = "gpu.fm.failed"  # (event, lineno) of the last start-up failure report
_FM_MESSAGE = re.compile(r"\[tid \d+\]\s*(?P<msg>.*)$|nv-fabricmanager\[\d+\]:\s*(?P<jmsg>.*)$")


def _fm_detail(line: str) -> str:
    m = _FM_MESSAGE.search(line)
    if m:
        return _clip(m.group("msg") if m.group("msg") is not None else m.group("jmsg"))
    return _clip(line)


def fabric_manager_message(line: str) -> tuple[FmMessage, int] | None:
    """The first row of catalog/platform.yaml's `fabric_manager_messages` whose text and `also` words the line holds,
    and none of whose `unless` words, and where its text is; None where no row holds."""
    for row in fabric_manager_messages():
        at = line.find(row.text)
        if at < 0 or not all(w in line for w in row.also) or any(w in line for w in row.unless):
            continue
        return row, at
    return None


class FabricManagerExtractor:
    """NVIDIA Fabric Manager's and the IMEX daemon's own logs, and systemd's lines about their units, read by one table
    (catalog/platform.yaml `fabric_manager_messages`): the row's event is the event's `fm_event`; what the line names
    (the SXid code, the switch by PCI address, physical id or GUID, and its port) are its fields."""

    name = "gpu.fabricmanager"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "gpu.fabricmanager": frozenset({"code", "detail", "fm_event", "physical_id", "port", "switch_guid"}),
    }
    # its own log, the journal, and a log posted or collected as the job's (a ComputeDomain's IMEX daemon pod)
    sources: frozenset[str] = frozenset({"fabricmanager", "kernel", "syslog", "application"})
    literals: tuple[str, ...] = tuple(row.text for row in fabric_manager_messages())

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        read = fabric_manager_message(line)
        if read is None:
            return
        row, at = read
        if row.event == "none":
            # understood, and nothing: systemd's lines about the unit right after it are the same report
            ctx.state[_K_FM_FAILED] = ("fm_failed", ctx.lineno)
            ctx.claimed = True
            return
        if row.event in ("fm_failed", "imex_failed"):
            # One start-up failure prints the daemon's error, then systemd's exit, result and "Failed to start"
            # lines: report it once.
            last = ctx.state.get(_K_FM_FAILED)
            ctx.state[_K_FM_FAILED] = (row.event, ctx.lineno)
            if isinstance(last, tuple) and last[0] == row.event and 0 <= ctx.lineno - last[1] <= _COMPANION_LINES:
                ctx.claimed = True
                return
        tail = line[at + len(row.text):]
        fields: dict[str, FieldValue] = {"fm_event": row.event, "code": None, "port": None}
        device = None
        if row.event in ("nvswitch_fatal", "nvswitch_nonfatal"):
            if (c := _FM_CODE.match(tail)) is not None:
                fields["code"] = int(c.group(1))
            if (pm := _FM_PCI.search(tail)) is not None:
                device = _device(_pci(pm.group("pci")))
            if (phys := _FM_PHYSICAL_ID.search(tail)) is not None:
                fields["physical_id"] = int(phys.group(1))
        if (port := _FM_PORT.search(tail)) is not None:
            fields["port"] = int(port.group(1))
        if (guid := _FM_GUID.search(line, at)) is not None:
            fields["switch_guid"] = guid.group(1).lower()
        fields["detail"] = _fm_detail(line)
        yield Draft(kind="gpu.fabricmanager", fields=fields, device=device)


# --------------------------------------------------------------------------
# The driver's own messages without an Xid (catalog/platform.yaml `nvrm_messages`)
# --------------------------------------------------------------------------

_RESET_GPU = re.compile(
    r"NVRM: GPU (?:at PCI:)?(?P<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)"
)
# The status a GSP RPC failed with (`...; paramsStatus=0x00000000; status=0x00000062`): read after the row's text.
_STATUS = re.compile(r"\bstatus=0x(?P<code>[0-9a-fA-F]{1,8})\b")
# A quote mark right before `NVRM` is someone quoting the driver (a help text, a bug title), not the driver.
_QUOTES = frozenset("'\"`\u2018\u201c")
_K_NVRM = "gpu.nvrm.seen"  # (event, reason) -> lineno of the first report in the stream
_K_NVRM_DRIVER = "gpu.nvrm.driver"  # lineno of the last line in which the driver said it cannot drive a GPU


def _quoted(line: str, start: int) -> bool:
    """A quote mark opens the `NVRM` at `start`: someone quoting the driver. A field's value is the driver's line as
    a collector stored it (`"MESSAGE":"NVRM: ..."` of journalctl's JSON, logfmt's `msg="NVRM: ..."`)."""
    if start == 0 or line[start - 1] not in _QUOTES:
        return False
    before = line[: start - 1].rstrip(" ")
    return not (before.endswith('":') or before.endswith("="))


def nvrm_message(line: str) -> tuple[NvrmMessage, int] | None:
    """The row of catalog/platform.yaml's `nvrm_messages` the driver printed in `line`, and where its `NVRM` starts;
    None where no row's text is there, where no `NVRM` stands before it, or where a quote mark opens that `NVRM`."""
    for row in nvrm_messages():
        at = line.find(row.text)
        if at < 0:
            continue
        start = line.rfind("NVRM", 0, at)
        if start < 0 or _quoted(line, start):
            return None
        if line.find("Xid", start, at) >= 0:
            return None  # an Xid line that holds the words (Xid 119's RPC timeout): the Xid's, XidExtractor reads it
        if row.status is not None:
            m = _STATUS.search(line, at + len(row.text))
            if m is None or int(m.group("code"), 16) != row.status:
                return None
        return row, start
    return None


class NvrmExtractor:
    """The NVIDIA kernel driver's own messages that carry no Xid: the GPU needs a reset (NV_ERR_RESET_REQUIRED, an
    adapter that would not initialise, GSP firmware that stopped answering), the driver cannot drive the node's GPUs
    (another driver owns them, this release does not support them, none on the bus), and the words that are nothing
    (the load banner). Texts, events and reasons are catalog/platform.yaml's `nvrm_messages`."""

    name = "gpu.nvrm"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "gpu.reset_required": frozenset({"detail", "reason"}),
        "gpu.nvml_error": frozenset({"error", "message"}),
    }
    sources: frozenset[str] = frozenset({"kernel", "syslog"})
    literals: tuple[str, ...] = tuple(row.text for row in nvrm_messages())

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        read = nvrm_message(line)
        if read is None:
            return
        row, start = read
        if row.event == "none":
            ctx.claimed = True  # the banner, a companion note: understood, and nothing
            return
        if row.event == "nvml_error" and row.reason == "driver":
            ctx.state[_K_NVRM_DRIVER] = ctx.lineno
        elif row.reason == "init_failed":
            said = ctx.state.get(_K_NVRM_DRIVER)
            if isinstance(said, int) and 0 < ctx.lineno - said <= _COMPANION_LINES:
                # The driver said why it cannot drive the GPU right before (a flavour of the module the GPU does not
                # take, a release that does not support it): the adapter's init failing next is that, not the GPU.
                ctx.claimed = True
                return
        if row.reason != "reset_required":
            # An adapter that will not initialise, firmware that stopped answering, a driver that cannot bind:
            # printed at each probe or poll, so the first in the stream is the report.
            seen = _recent(ctx.state, _K_NVRM)
            if (row.event, row.reason) in seen:
                ctx.claimed = True
                return
            seen[(row.event, row.reason)] = ctx.lineno
        detail = _clip(line[start:])
        if row.event == "nvml_error":
            yield Draft(kind="gpu.nvml_error", fields={"error": row.reason, "message": detail})
            return
        m = _RESET_GPU.search(line, start)
        pci = _pci(m.group("pci")) if m else None
        yield Draft(kind="gpu.reset_required", fields={"reason": row.reason, "detail": detail}, device=_device(pci))


# --------------------------------------------------------------------------
# Accelerators other than NVIDIA's (catalog/accel.yaml): amdgpu, the ROCm runtime, habanalabs, the Neuron runtime,
# CANN, tt-umd
# --------------------------------------------------------------------------

# The PCI address a driver's dev_* printer puts after its name (`amdgpu 0000:c1:00.0: ...`, `habanalabs 0000:19:00.0:`).
_DEV_PCI = re.compile(r"\b(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\b")
# The RAS block an amdgpu count names: `... hardware errors detected in umc block`, `... in total in xgmi_wafl block`.
_RAS_BLOCK = re.compile(r"\bdetected in (?:total in )?(?P<block>[a-z][a-z0-9_]*) block\b")
# The Neuron runtime's status after the call that failed: `nrt_execute: status=1201, error message="..."`,
# `nrt_load status=1` (aws-neuron/aws-neuron-sdk#351, #779).
_NRT_CALL = ("nrt_execute: status=", "nrt_execute status=", "nrt_load: status=", "nrt_load status=")
_NRT_STATUS = re.compile(r"\bnrt_(?:execute|load):? status=(?P<code>\d{1,5})\b")
# torch_npu's aclError after the call that failed, where its words name no row (Ascend/pytorch
# torch_npu/csrc/core/npu/NPUException.h/.cpp: `NPU function error: ..., error code is 507053`, `NPU error, error code
# is 507054`; aten/common/CopyKernel.cpp: `ACL stream synchronize failed, error code:507046`): the runtime's codes
# (1xxxxx, 2xxxxx, 5xxxxx, six digits) are looked up in the huawei family only.
_NPU_CALL = ("error code is ", "error code:")
_NPU_CODE = re.compile(r"\berror code(?: is |:) ?(?P<code>[125]0\d{4})\b")
_COUNT_AFTER = re.compile(r" {0,8}(?P<n>\d{1,12})\b")  # the count after a `counted` row's key
_K_ACCEL = "gpu.accel.seen"  # (reason, pci, block) -> lineno of the last report in the stream
_K_ACCEL_ERR = "gpu.accel.errors"  # pci -> _AccelError: the last error of a row that is no consequence, per device
_K_ACCEL_HANG = "gpu.accel.hangs"  # pci -> _AccelError: the last hang reset that is no consequence, per device


@dataclass(frozen=True, slots=True)
class _AccelError:
    """An accelerator error a later reset may be the consequence of: its class, line and time."""

    cls: str
    lineno: int
    time: datetime | None


@dataclass(frozen=True, slots=True)
class AccelRead:
    """The row of catalog/accel.yaml a line holds, its family's vendor and driver, and where the report starts."""

    row: AccelMessage
    vendor: str
    driver: str
    start: int  # where the report starts: the `after` word, else the text
    at: int  # where the row's text is


def accel_message(line: str) -> AccelRead | None:
    """The first row of catalog/accel.yaml whose text, `after` word (before the text) and `also` words the line holds;
    None where none does, or where a quote mark opens the `after` word (someone quoting the driver)."""
    for vendor, driver, rows in accel_table().families:
        for row in rows:
            where = worded_at(line, row.text, row.also, row.after)
            if where is None:
                continue
            start, at = where
            if row.after is not None and _quoted(line, start):
                return None
            return AccelRead(row, vendor, driver, start, at)
    if any(w in line for w in _NRT_CALL) and (m := _NRT_STATUS.search(line)) is not None:
        return _by_code(int(m.group("code")), "aws", m.start())
    if any(w in line for w in _NPU_CALL) and (m := _NPU_CODE.search(line)) is not None:
        return _by_code(int(m.group("code")), "huawei", m.start())
    return None


def _by_code(code: int, vendor: str, at: int) -> AccelRead | None:
    """The row of `vendor`'s families whose status number is `code`."""
    for v, driver, rows in accel_table().families:
        if v != vendor:
            continue
        for row in rows:
            if row.code == code:
                return AccelRead(row, v, driver, at, at)
    return None


def _accel_class(read: AccelRead, line: str) -> tuple[str, str | None]:
    """The row's class, or the class of the RAS block an amdgpu count names where the table says that block is not a
    memory's; and the block."""
    m = _RAS_BLOCK.search(line, read.start) if read.driver == "amdgpu" else None
    if m is None:
        return read.row.accel_class, None
    block = m.group("block")
    if read.row.accel_class == "memory":
        for b in accel_table().ras_blocks:
            if b.block == block:
                return b.accel_class, block
    return read.row.accel_class, block


class AccelExtractor:
    """Accelerators other than NVIDIA's, in their drivers' and runtimes' own words: AMD's amdgpu (RAS errors and their
    counts by block, GPU page faults, ring timeouts and resets, the SMU or MES firmware not answering, the device lost
    from the bus, over-temperature) and the ROCm runtime under HIP (memory access faults, GPU hangs), Intel Gaudi's
    habanalabs (heartbeat lost, a device that would not start, hard reset), the AWS Neuron runtime's NRT_STATUS, by
    name or by number, Huawei Ascend's device faults as CANN and torch_npu report them (HBM ECC, UCE, HCCS
    link), by words or by aclError number, and Tenstorrent's tt-umd opening a chip (GDDR training failed, or its
    firmware never reporting it done). Each row of catalog/accel.yaml gives the class the NVIDIA rules read
    (`accel_class`, the Xid classes' words), so a row lands where the Xid of the same fault would; a reset after an
    error of the same device is that error's consequence (`cause_class`)."""

    name = "gpu.accel"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "gpu.accel_error": frozenset({"accel_class", "block", "cause_class", "detail", "driver", "mnemonic", "pci",
                                      "reason", "vendor"}),
    }
    sources: frozenset[str] = frozenset({"kernel", "syslog", "application"})
    literals: tuple[str, ...] = (*dict.fromkeys(row.text for _v, _d, rows in accel_table().families for row in rows),
                                 *_NRT_CALL, *_NPU_CALL)

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        read = accel_message(line)
        if read is None:
            return
        cls, block = _accel_class(read, line)
        if read.row.counted:
            n = _COUNT_AFTER.match(line, read.at + len(read.row.text))
            if n is None:
                return
            if int(n.group("n")) == 0:
                cls = "informational"  # a count of 0: what a healthy device prints
        if cls == "informational":
            ctx.claimed = True  # a recovery that worked, a notice, an all-clear: understood, and nothing
            return
        m = _DEV_PCI.search(line, 0, read.at) if read.row.after is not None else None
        pci = _pci(m.group("pci")) if m else None
        # A driver repeats one report (a ratelimited SMU complaint, a page fault's retries): the first in a run of
        # lines is the report.
        seen = _recent(ctx.state, _K_ACCEL)
        key = (read.row.reason, pci, block)
        last = seen.get(key)
        seen[key] = ctx.lineno
        if last is not None and 0 <= ctx.lineno - last <= _COMPANION_LINES:
            ctx.claimed = True
            return
        fields: dict[str, FieldValue] = {
            "vendor": read.vendor,
            "driver": read.driver,
            "accel_class": cls,
            "reason": read.row.reason,
            "mnemonic": read.row.reason.upper(),  # what the NVIDIA rules' templates name an Xid's fault by
            "detail": _clip(line[read.start:]),
            "pci": pci,
        }
        if block is not None:
            fields["block"] = block
        _accel_cause(fields, read.row.follows, pci, ctx)
        yield Draft(kind="gpu.accel_error", fields=fields, device=_device(pci))


def _state_table(ctx: LineContext, key: str) -> dict[str | None, object]:
    table = ctx.state.get(key)
    if not isinstance(table, dict):
        table = {}
        ctx.state[key] = table
    return table


def _before(table: dict[str | None, object], pci: str | None, ctx: LineContext) -> _AccelError | None:
    """The entry of `table` for the device (for the stream, where the line names none) within 60 s and 200 lines
    before this line."""
    prev = table.get(pci) if pci is not None and pci in table else table.get(None)
    if prev is None and pci is None and table:
        prev = max(table.values(), key=lambda e: e.lineno if isinstance(e, _AccelError) else -1)
    if not isinstance(prev, _AccelError) or not 0 <= ctx.lineno - prev.lineno <= _SAME_LINK_LINES:
        return None
    if prev.time is not None and ctx.time is not None and (ctx.time - prev.time).total_seconds() > _SAME_LINK_SECONDS:
        return None
    return prev


def _accel_cause(fields: dict[str, FieldValue], follows: bool, pci: str | None, ctx: LineContext) -> None:
    """A reset the driver does after an error it reported on the same device (a RAS error, a page fault, a firmware
    not answering) is that error's consequence: `cause_class` names the error's class, as Xid 43 and 45 name theirs.
    An error of a row that is no consequence is remembered for the device (or for the stream, where the line names
    none). A firmware's failure printed while the driver resets a hung engine of the device (a `hang` row before it)
    is that reset's story, `cause_class: hang`: the firmware asked to preempt or unmap the hung queue cannot
    (catalog/accel.yaml, class `firmware`)."""
    table = _state_table(ctx, _K_ACCEL_ERR)
    hangs = _state_table(ctx, _K_ACCEL_HANG)
    cls = fields["accel_class"]
    if not follows:
        if cls == "firmware" and _before(hangs, pci, ctx) is not None:
            fields["cause_class"] = "hang"
        elif cls != "memory_info":  # a corrected error is no reset's cause
            table[pci] = _AccelError(str(cls), ctx.lineno, ctx.time)
        return
    prev = _before(table, pci, ctx)
    if prev is not None:
        fields["cause_class"] = prev.cls
    elif cls == "hang":
        hangs[pci] = _AccelError("hang", ctx.lineno, ctx.time)


# --------------------------------------------------------------------------
# nvidia-smi -q's memory sections (catalog/accel.yaml `nvidia_smi_query`)
# --------------------------------------------------------------------------

# `Clocks Event Reasons` (drivers before 535: `Clocks Throttle Reasons`) is why the GPU's clocks are held down now;
# `Clocks Event Reasons Counters` (newer drivers: microseconds each reason held since the driver loaded) is a section of
# its own that no row reads, so that its keys (`HW Thermal Slowdown : 0 us`) never count under the section above it
_SMI_SECTIONS: Final = ("ECC Errors", "Retired Pages", "Remapped Rows", "Fabric", "Clocks Event Reasons",
                        "Clocks Throttle Reasons", "Clocks Event Reasons Counters", "vGPU Software Licensed Product")
_SMI_SCOPES: Final = ("Volatile", "Aggregate")
_SMI_BITS: Final = ("Single Bit", "Double Bit")
# how far a section's lines reach below its header: the old ECC Errors block (Volatile and Aggregate, each with its
# Single Bit and Double Bit lists of memories) is the longest
_SMI_REACH: Final = {"ECC Errors": 40, "Retired Pages": 8, "Remapped Rows": 8, "Fabric": 14,
                     "Clocks Event Reasons": 10, "Clocks Throttle Reasons": 10, "Clocks Event Reasons Counters": 6,
                     "vGPU Software Licensed Product": 4}
_SMI_GPU = re.compile(r"^GPU (?P<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])$")
_K_SMI = "gpu.smi"  # the headers seen in the stream: name -> lineno; "gpu" -> (lineno, pci)
_K_SMI_VALS = "gpu.smi.vals"  # (section's lineno, {key: value}) of the block being read
_K_SMI_SEEN = "gpu.smi.seen"  # (reason, class, pci) reported in the stream


def _smi_heads(state: dict[str, object]) -> dict[str, object]:
    """The stream's headers seen (_K_SMI), made where missing."""
    heads = state.get(_K_SMI)
    if not isinstance(heads, dict):
        heads = {}
        state[_K_SMI] = heads
    return heads


def _smi_nothing(stripped: str) -> bool:
    """Does SmiQueryExtractor.extract give nothing and claim nothing on a line whose body, stripped, is `stripped`,
    whatever the stream holds: no section's, scope's or bit-kind's header, no `GPU ...` line, no ` : `? (extract's
    own tests, in its order, before it reads the state.)"""
    return not (stripped in _SMI_SECTIONS or stripped in _SMI_SCOPES or stripped in _SMI_BITS
                or _SMI_GPU.match(stripped) is not None or " : " in stripped)


def _smi_latest(heads: dict[str, object], names: tuple[str, ...], after: int) -> tuple[str, int] | None:
    """The header of `names` seen last in the stream, if it came after line `after`."""
    best: tuple[str, int] | None = None
    for n in names:
        at = heads.get(n)
        if isinstance(at, int) and at > after and (best is None or at > best[1]):
            best = (n, at)
    return best


class SmiQueryExtractor:
    """nvidia-smi -q's memory sections read as one record per GPU: `Remapping Failure Occurred : Yes`, a remap
    `Pending : Yes` for uncorrectable errors, uncorrectable ECC counts since the driver loaded (`DRAM Uncorrectable`
    under `Volatile`) are the GPU's memory failing; the lifetime counts, corrected counts and pages pending retirement
    are `memory_info`. Its `Fabric` health and its clocks' reasons (`HW Thermal Slowdown : Active`) the same way. A
    `key : value` line counts under the section, scope and bit-kind headers seen last above it in the stream (its
    lines reach a few lines below the section's header, and no further than the next `GPU ...` line: the lines reach
    an extractor without their indentation), the rows catalog/accel.yaml's `nvidia_smi_query`; a GPU
    is reported once per stream and reason."""

    name = "gpu.smi_query"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "gpu.accel_error": frozenset({"accel_class", "detail", "driver", "mnemonic", "pci", "reason", "vendor"}),
    }
    # an operator's or a job's own run of nvidia-smi, in its output: a kernel log or syslog does not hold it, and its
    # keys (`Total`, `Pending`) are words those logs use for other things
    sources: frozenset[str] = frozenset({"application"})
    literals: tuple[str, ...] = (*_SMI_SECTIONS, *_SMI_SCOPES, *_SMI_BITS, "GPU 0000",
                                 *dict.fromkeys(r.key for r in nvidia_smi_query()))
    # A key's word on a line that is no `key : value` (NCCL's `NVLS comm ... nvlsTotalSize 805306368` on every rank of
    # a job, for `Total`) is read to nothing whatever the stream holds, and not claimed: the scanner reads such a line
    # without its candidate (collect/scan.py Extraction.read_quiet, _Quiet with `quiet_claims` False; issue 27).
    quiet_literals: tuple[str, ...] = tuple(dict.fromkeys(r.key for r in nvidia_smi_query()))
    quiet_claims = False

    def quiet_claim(self, body: str, state: dict[str, object], rank: int | None) -> bool:
        """Whether extract(body, ctx) gives nothing and claims nothing whatever `ctx.state` (`state`) holds: a line
        that is no header, no GPU's and holds no ` : ` (_smi_nothing); then what extract does to the state is done
        (the stream's header table made where missing). False: nothing done."""
        if not _smi_nothing(body.strip()):
            return False
        _smi_heads(state)
        return True

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        heads = _smi_heads(ctx.state)
        stripped = line.strip()
        if _smi_nothing(stripped):
            return  # (what quiet_claim says of the line: one decision)
        # the headers and a section's lines are claimed: a claimed line is read in full, never counted by the fold
        # as a copy of an earlier one (collect/fold.py), so the headers this reading rests on are always seen
        if stripped in _SMI_SECTIONS or stripped in _SMI_SCOPES or stripped in _SMI_BITS:
            heads[stripped] = ctx.lineno
            ctx.claimed = True
            return
        if (g := _SMI_GPU.match(stripped)) is not None:
            # a new GPU's record: the last one's sections end here
            heads.clear()
            heads["gpu"] = (ctx.lineno, _pci(g.group("pci")))
            ctx.claimed = True
            return
        sep = stripped.find(" : ")  # (there is one: _smi_nothing)
        found = _smi_latest(heads, _SMI_SECTIONS, -1)
        if found is None or ctx.lineno - found[1] > _SMI_REACH[found[0]]:
            return
        section, sec_line = found
        ctx.claimed = True
        key, value = stripped[:sep].strip(), stripped[sep + 3:].strip()
        vals = ctx.state.get(_K_SMI_VALS)
        if not isinstance(vals, tuple) or vals[0] != sec_line:
            vals = (sec_line, {})
            ctx.state[_K_SMI_VALS] = vals
        vals[1][key] = value
        scope = _smi_latest(heads, _SMI_SCOPES, sec_line)
        bits = _smi_latest(heads, _SMI_BITS, scope[1] if scope else sec_line)
        for row in nvidia_smi_query():
            if row.section != section or not key.startswith(row.key):
                continue
            if row.scope is not None and (scope is None or scope[0] != row.scope):
                continue
            if row.bits is not None and (bits is None or bits[0] != row.bits):
                continue
            if not _smi_holds(row.when, value, row.equals):
                if row.when == "equals":
                    continue  # another row of the key may hold for this value
                return
            cls = row.accel_class
            if (row.unless_zero is not None and row.else_class is not None
                    and not _smi_holds("nonzero", str(vals[1].get(row.unless_zero, "0")))):
                cls = row.else_class
            gpu = heads.get("gpu")
            pci = gpu[1] if isinstance(gpu, tuple) and isinstance(gpu[1], str) else None
            seen = ctx.state.setdefault(_K_SMI_SEEN, set())
            assert isinstance(seen, set)
            if (row.reason, cls, pci) in seen:
                ctx.claimed = True
                return
            seen.add((row.reason, cls, pci))
            yield Draft(kind="gpu.accel_error", device=_device(pci), fields={
                "vendor": "nvidia", "driver": "nvidia-smi", "accel_class": cls, "reason": row.reason,
                "mnemonic": row.reason.upper(), "detail": _clip(f"{section}: {key}: {value}"), "pci": pci})
            return


# `dcgmi diag`'s table (NVIDIA/DCGM dcgmi/Diag.cpp): a test's row `| <test> | <result> |`, the results of some GPUs on
# the rows under it with the test column empty (DCGM 3: `Fail - GPU: 0`, `Pass - GPUs: 1, 2`; DCGM 4: the test's `Fail`,
# then `GPU0: Fail`), and the reasons for them: `Warning` and `Info` rows (DCGM 4: `Warning: GPU0`), each message cut
# every _DIAG_CUT characters (mid-word) over as many rows as it takes, the rows after the first with the name column
# empty (DisplayVerboseInfo). DCGM 3 starts a GPU's message with `GPU 0 `.
_DIAG_RESULT = re.compile(
    r"^(?:(?P<grp>[A-Z]{2,12})(?P<id>\d{1,4}): )?(?P<res>Pass|Fail|Skip|Warn|Not Run)"
    r"(?: - (?:All|GPUs?: (?P<ids>\d{1,4}(?:, ?\d{1,4}){0,63})))?$")
_DIAG_REASON_ROW = re.compile(r"^(?:Warning|Info)(?:: (?P<grp>[A-Z]{2,12})(?P<id>\d{1,4}))?$")
_DIAG_REASON_GPU = re.compile(r"^GPU ?(?P<id>\d{1,4})\b")
_DIAG_CUT: Final = 45  # DATA_INFO_TAG_LEN: a message's characters per row
_DIAG_EMPTY_NAME: Final = "|" + " " * 27 + "|"  # the test column of a row under the test's (DIAG_DATA)
_DIAG_MAX_REASONS: Final = 32  # reasons held for one test's block; more are not read
_DIAG_MAX_PARTS: Final = 24  # rows of one reason held (DCGM's messages are at most 1,024 characters)
_DIAG_MAX_FAILS: Final = 16  # result rows of one block held
_DIAG_MAX_DONE: Final = 64  # decided results a stream holds for its end
_K_DIAG_BLOCK = "gpu.dcgm_diag.block"  # the table's test block being read (_DiagBlock)
_K_DIAG_DONE = "gpu.dcgm_diag.done"  # the results decided, given back where the stream ends (at_end)
# `dcgmi diag -j`'s JSON (NVIDIA/DCGM dcgmi/Diag.cpp over nvvs/include/NvvsJsonStrings.h): a test's `"name"` (its
# plugin's, `"memory"`), then its results: each a `"status"` (`"Pass"`, `"Skip"`, `"Warn"`, `"Fail"`; DCGM's own test
# strings print them in capitals), its `"warnings"` (each an `"error_id"`, DCGM's code, and a `"warning"`, its
# message) and its `"info"` (a string, or an array of them). jsoncpp writes `"key" : "value"`, one key a line, in the
# keys' order (`info` before `status`, `warnings` after); others `"key": "value"`, or all on one line.
_DIAG_JSON = re.compile(
    r'"(?P<key>name|status|warning|info|error_id)" ?: ?(?:\[ ?)?'
    r'(?:"(?P<value>(?:[^"\\]|\\.){1,1200})"|(?P<num>\d{1,4})\b)')
_K_DIAG_JSON = "gpu.dcgm_diag.json"  # the JSON's test block being read (_DiagBlock)
_K_DIAG_SEEN = "gpu.dcgm_diag.seen"  # the tests reported failed in the stream's JSON
_DIAG_JSON_REACH: Final = 400  # how far a test's results reach below its name (8 GPUs' info and warning lines)


@dataclass(slots=True)
class _DiagFail:
    """A failed result of a test: its row, and the GPUs it names (None: every GPU the test ran on)."""

    ctx: LineContext
    text: str
    result: str
    gpus: frozenset[int] | None


@dataclass(slots=True)
class _DiagReason:
    """A reason printed under a test's results: the GPU it is for (None: the test's), its rows' text or DCGM's code."""

    gpu: int | None
    parts: list[str]
    code: int | None = None


@dataclass(slots=True)
class _DiagBlock:
    """A test of `dcgm_diag_tests` being read: its failed results, held until the reasons under them are read."""

    name: str
    test: DcgmDiagTest
    first: int  # the line of the test's name
    last: int  # the line of the block's last row
    fails: list[_DiagFail]
    reasons: list[_DiagReason]
    going_on: bool = False  # the last reason may go on in the next row


_DIAG_MIN_FIXED: Final = 12  # a format's fixed characters (spaces not counted) below which it says too little


def _diag_format(fmt: str) -> tuple[str, ...]:
    """A format of DCGM's as its fixed words in order, spaces taken out (the table's cuts fall anywhere; a copy may
    lose a space at one): its literal runs (catalog/tables.py dcgm_format_runs)."""
    return tuple(w for run in dcgm_format_runs(fmt) if (w := "".join(run.split())))


@lru_cache(maxsize=1)
def _diag_reason_formats() -> tuple[tuple[tuple[str, ...], int, DcgmError], ...]:
    """Each format of catalog/accel.yaml `dcgm_errors` (its message and aliases) as its fixed words in order,
    with how many characters they hold, in the file's order; a format of fewer than _DIAG_MIN_FIXED says too little."""
    out: list[tuple[tuple[str, ...], int, DcgmError]] = []
    for row in dcgm_errors().values():
        for fmt in (row.message, *row.aliases):
            words = _diag_format(fmt)
            fixed = sum(len(w) for w in words)
            if fixed >= _DIAG_MIN_FIXED:
                out.append((words, fixed, row))
    return tuple(out)


def _words_at(folded: str, words: tuple[str, ...]) -> int:
    """Where a format's fixed words start in a message, each after the one before (the first place of the first word
    from which the rest all follow: any later place leaves them less text), or -1. Linear in the message."""
    start = folded.find(words[0])
    if start < 0:
        return -1
    at = start + len(words[0])
    for w in words[1:]:
        at = folded.find(w, at)
        if at < 0:
            return -1
        at += len(w)
    return start


def diag_reason(message: str) -> DcgmError | None:
    """The DCGM failure code a reason printed by `dcgmi diag` is (catalog/accel.yaml `dcgm_errors`): the row
    whose fixed words stand first in it (a plugin's message is its code's format, then DCGM's advice, then the
    plugin's detail, which may quote words of other codes); of two there, the one that holds more of them."""
    folded = "".join(message.split())
    best: tuple[int, int, int] | None = None
    found: DcgmError | None = None
    for i, (words, fixed, row) in enumerate(_diag_reason_formats()):
        start = _words_at(folded, words)
        if start >= 0 and (best is None or (start, -fixed, i) < best):
            best, found = (start, -fixed, i), row
    return found


# A CUDA error a reason quotes that names the device's own fault (catalog/cuda.yaml classes): a test that could not
# run because its CUDA call met an uncorrectable ECC error or an NVLink error found that fault all the same.
_DIAG_CUDA_DEVICE: Final = {"ecc": "memory", "nvlink": "nvlink"}
# The CUDA errors a reason may be read as where the test found no device fault: the classes that name no cause in the
# workload's code (a GPU busy or unavailable, a launch that failed, the driver), read as the CUDA table reads them.
# (`usage`, a call of the diagnostic's own that CUDA refused, is read as `other` was before it had a class of its own.)
_DIAG_CUDA_READ: Final = frozenset({"unavailable", "launch_failure", "launch_timeout", "deinitialized", "usage",
                                    "other", "driver", "system_not_ready"})


def _diag_class(reason: _DiagReason) -> str | None:
    """What a reason says of the device: a device fault's class, or one of DCGM_REASONS_NOT_RUN; None where it is no
    code of DCGM's table."""
    if reason.code is not None:
        by_code = dcgm_errors().get(reason.code)
        if by_code is not None:
            return by_code.reason_class
    text = "".join(reason.parts)
    row = diag_reason(text) if text else None
    if row is None:
        return None
    if row.reason_class in DCGM_REASONS_NOT_RUN:
        err = cuda_error_of(text)
        if err is not None and err.cls in _DIAG_CUDA_DEVICE:
            return _DIAG_CUDA_DEVICE[err.cls]
    return row.reason_class


def _diag_decide(block: _DiagBlock, seen: set[str] | None) -> list[tuple[Draft, LineContext, str]]:
    """A test's failed results read with the reasons printed for each GPU: a device fault as the test's class (at the
    first failed result of a GPU whose reasons name a device fault, or none of DCGM's codes); where every failed GPU's
    reasons say the test could not run, no device fault, and the CUDA error the first of them quotes, if any.
    `seen`: the tests already reported in the stream (the JSON's: once a test), which this adds to."""
    if not block.fails:
        return []
    classes = [_diag_class(r) for r in block.reasons]
    gpus = sorted({g for f in block.fails if f.gpus is not None for g in f.gpus})
    units: list[tuple[int | None, list[str | None]]] = (
        [(g, [c for r, c in zip(block.reasons, classes, strict=True) if r.gpu in (g, None)]) for g in gpus]
        if gpus else [(None, classes)])
    for gpu, known in units:
        said = [c for c in known if c is not None]
        if said and all(c in DCGM_REASONS_NOT_RUN for c in said):
            continue
        if seen is not None:
            if block.name in seen:
                return []
            seen.add(block.name)
        fail = next((f for f in block.fails if gpu is not None and f.gpus is not None and gpu in f.gpus),
                    block.fails[0])
        test = block.test
        return [(Draft(kind="gpu.accel_error", fields={
            "vendor": "nvidia", "driver": "dcgm", "accel_class": test.accel_class, "reason": test.reason,
            "mnemonic": test.reason.upper(), "detail": _clip(fail.result)}), fail.ctx, fail.text)]
    for r, c in zip(block.reasons, classes, strict=True):
        if c is None or not r.parts:
            continue
        text = "".join(r.parts).strip()
        err = cuda_error_of(text)
        if err is None or err.cls not in _DIAG_CUDA_READ:
            continue
        fields: dict[str, FieldValue] = {"error": err.cls, "message": _clip(text)}
        if err.code is not None:
            fields["cuda_error"], fields["cuda_code"] = err.name, err.code
        fail = block.fails[0]
        return [(Draft(kind="app.cuda_error", fields=fields), fail.ctx, fail.text)]
    return []


def _diag_part(cell: str) -> str:
    """A reason's part on one row: DCGM's cut (_DIAG_CUT characters, spaces at its ends kept) where the row has the
    table's width, else the cell's words and a space."""
    raw = cell[1:] if cell.startswith(" ") else cell
    return raw[:_DIAG_CUT] if len(raw) > _DIAG_CUT else raw.strip() + " "


def _diag_gpus(m: re.Match[str]) -> frozenset[int] | None:
    """The GPUs a result row names: `GPU0: Fail`, `Fail - GPU: 0`, `Fail - GPUs: 0, 1`; None for `Fail - All`, a
    test's own `Fail` and another entity's result."""
    if m.group("id") is not None:
        return frozenset({int(m.group("id"))}) if m.group("grp") == "GPU" else None
    ids = m.group("ids")
    return frozenset(int(x) for x in ids.split(",")) if ids else None


class DcgmDiagExtractor:
    """`dcgmi diag`'s results: in its table, a memory test of the diagnostic that failed (`| GPU Memory | Fail - GPU:
    0 |`, or the result on a row under the test's name where some GPUs passed); in its JSON (`-j`), a result
    `"status": "Fail"` under the test's `"name"` (`"memory"`), reported once per test and stream. The tests and their
    classes are catalog/accel.yaml's `dcgm_diag_tests`; any other test's failure is no device fault. A failure is read
    with the reasons DCGM printed for it (catalog/accel.yaml `dcgm_errors`): the `Warning` and `Info` rows under
    the result until the test's block ends (the next test's row, a row that does not follow on, the stream's end), the
    JSON's `warnings` and `info` until the next test's name; where they all say the test could not run (a CUDA call
    that failed, a setting, another process), the test found no device fault. The result is held till then and given
    back at its own line where the stream ends (`at_end`)."""

    name = "gpu.dcgm_diag"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "gpu.accel_error": frozenset({"accel_class", "detail", "driver", "mnemonic", "reason", "vendor"}),
        "app.cuda_error": frozenset({"cuda_code", "cuda_error", "error", "message"}),
    }
    # an operator's or a job's own run of dcgmi, in its output
    sources: frozenset[str] = frozenset({"application"})
    # (the JSON's `warning` and `info` as keys only: a structured log's `"level": "warning"` is no dcgmi line, and as a
    # word it would make every such line of a JSON log a candidate of the Python line path)
    literals: tuple[str, ...] = ("| Pass", "| Fail", "| Skip", "| Warning", "| Info", _DIAG_EMPTY_NAME, '"name"',
                                 '"status"', '"warning" :', '"warning":', '"info" :', '"info":', '"error_id"')

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        # (what it reads is given back where the stream ends: at_end)
        if '"' in line and any(w in line for w in ('"name"', '"status"', '"warning"', '"info"', '"error_id"')):
            self._json(line, ctx)
        else:
            self._table(line, ctx)
        return iter(())

    def _table(self, line: str, ctx: LineContext) -> None:
        cells = line.strip().split("|")
        if len(cells) != 4 or cells[0] or cells[3]:
            return  # not a row of the table: `| name | result |`
        name, cell = cells[1].strip(), cells[2]
        result = cell.strip()
        state = ctx.state
        got = state.get(_K_DIAG_BLOCK)
        block = got if isinstance(got, _DiagBlock) else None
        if block is not None and ctx.lineno - block.last != 1:
            _diag_close(state, _K_DIAG_BLOCK, None)  # the table did not go on from the block's last row
            block = None
        said = _DIAG_REASON_ROW.match(name) if name else None
        if name and said is None:
            if block is not None:
                _diag_close(state, _K_DIAG_BLOCK, None)  # the next test's row ends the block
            test = dcgm_diag_tests().get(name)
            ctx.claimed = True
            if test is None:
                return
            block = _DiagBlock(name, test, ctx.lineno, ctx.lineno, [], [])
            state[_K_DIAG_BLOCK] = block
            m = _DIAG_RESULT.match(result)
            if m is not None and m.group("res") == "Fail":
                block.fails.append(_DiagFail(ctx, line, f"dcgmi diag: {name}: {result}", _diag_gpus(m)))
            return
        if block is None:
            return
        ctx.claimed = True
        block.last = ctx.lineno
        if said is not None:
            block.going_on = len(block.reasons) < _DIAG_MAX_REASONS
            if not block.going_on:
                return
            gpu = said.group("id")
            if gpu is None:
                first = _DIAG_REASON_GPU.match(result)
                gpu = first.group("id") if first is not None else None
            elif said.group("grp") != "GPU":
                gpu = None
            block.reasons.append(_DiagReason(int(gpu) if gpu is not None else None, [_diag_part(cell)]))
            return
        m = _DIAG_RESULT.match(result)
        if m is not None:
            block.going_on = False
            if m.group("res") == "Fail" and len(block.fails) < _DIAG_MAX_FAILS:
                block.fails.append(_DiagFail(ctx, line, f"dcgmi diag: {block.name}: {result}", _diag_gpus(m)))
            return
        if block.going_on and block.reasons and len(block.reasons[-1].parts) < _DIAG_MAX_PARTS:
            block.reasons[-1].parts.append(_diag_part(cell))

    def _json(self, line: str, ctx: LineContext) -> None:
        state = ctx.state
        for m in _DIAG_JSON.finditer(line):
            key = m.group("key")
            got = state.get(_K_DIAG_JSON)
            block = got if isinstance(got, _DiagBlock) else None
            if block is not None and ctx.lineno - block.first > _DIAG_JSON_REACH:
                _diag_close(state, _K_DIAG_JSON, _diag_seen(state))
                block = None
            value = m.group("value")
            if key == "name":
                if value is None:
                    continue
                if block is not None:
                    _diag_close(state, _K_DIAG_JSON, _diag_seen(state))
                test = dcgm_diag_tests().get(value)
                if test is not None:
                    state[_K_DIAG_JSON] = _DiagBlock(value, test, ctx.lineno, ctx.lineno, [], [])
                continue
            if block is None:
                continue
            if key == "status":
                if value is not None and value.lower() == "fail":
                    ctx.claimed = True
                    if len(block.fails) < _DIAG_MAX_FAILS:
                        block.fails.append(_DiagFail(ctx, line, f"dcgmi diag -j: {block.name}: {value}", None))
                continue
            if len(block.reasons) >= _DIAG_MAX_REASONS:
                continue
            if key == "error_id":
                if m.group("num") is not None:
                    block.reasons.append(_DiagReason(None, [], int(m.group("num"))))
            elif value is not None:
                block.reasons.append(_DiagReason(None, [value.replace('\\"', '"')]))

    def at_end(self, state: dict[str, object]) -> list[tuple[Draft, LineContext, str]]:
        """The results decided in the stream, and those of the blocks still open where it ends (read as ended there;
        the stream's state stays as it was: a follower's next lines may still come)."""
        done = state.get(_K_DIAG_DONE)
        out = list(done) if isinstance(done, list) else []
        table, js = state.get(_K_DIAG_BLOCK), state.get(_K_DIAG_JSON)
        if isinstance(table, _DiagBlock):
            out.extend(_diag_decide(table, None))
        if isinstance(js, _DiagBlock):
            got = state.get(_K_DIAG_SEEN)
            out.extend(_diag_decide(js, set(got) if isinstance(got, set) else set()))
        return out


def _diag_seen(state: dict[str, object]) -> set[str]:
    """The tests the stream's JSON reported failed."""
    return state_set(state, _K_DIAG_SEEN)


def _diag_close(state: dict[str, object], key: str, seen: set[str] | None) -> None:
    """The block under `key` ends: its results are decided and kept for the stream's end (at_end)."""
    block = state.pop(key, None)
    if not isinstance(block, _DiagBlock):
        return
    decided = _diag_decide(block, seen)
    if not decided:
        return
    done = state.get(_K_DIAG_DONE)
    if not isinstance(done, list):
        done = []
        state[_K_DIAG_DONE] = done
    if len(done) < _DIAG_MAX_DONE:
        done.extend(decided)


# `nvidia-smi nvlink -e` / `-s` (catalog/accel.yaml `nvidia_smi_nvlink`): a GPU's block, then a line per link.
# (the UUID's characters as posted: a copy may redact them, `GPU-xxx`)
_NVL_GPU = re.compile(r"^GPU (?P<gpu>\d{1,3}): (?P<model>[^()]{1,120})\(UUID: GPU-[0-9a-zA-Z-]{1,40}\)$")
_NVL_ALL_INACTIVE: Final = "all links are inActive"  # the key of nvidia_smi_nvlink's row for it
_NVL_LINK = re.compile(r"^Link (?P<link>\d{1,3}): (?P<rest>.{1,80})$")
_NVL_COUNT = re.compile(r"^(?P<key>[A-Za-z][A-Za-z ]{2,40}): (?P<n>\d{1,12})$")
_NVL_SPEED = re.compile(r"^\d{1,4}(?:\.\d{1,4})? GB/s$")
_K_NVL = "gpu.nvlink.block"  # the GPU block being read: _NvlBlock
_K_NVL_SEEN = "gpu.nvlink.seen"  # (reason, gpu) reported in the stream
_NVL_REACH: Final = 300  # how far a GPU's link lines reach below its `GPU N: ...` line (18 links, 3 counts each)


@dataclass(slots=True)
class _NvlBlock:
    """One GPU's lines of `nvidia-smi nvlink -s`: its links up and down."""

    gpu: int | None
    lineno: int
    fabric: bool | None = None  # the GPU's model built into an NVLink fabric (catalog nvlink_fabric_model)
    up: int = 0
    down: list[int] | None = None
    reported: bool = False


class NvlinkExtractor:
    """`nvidia-smi nvlink -e` and `-s` read one GPU's block at a time: a link's replay, recovery or CRC count above 0
    (`Link 3: Replay Errors: 2353`) is that link's corrected errors (`link_info`, a symptom, once per GPU and count);
    a link `<inactive>` where another link of the same GPU is up, or any link inactive (every link: `all links are
    inActive`) of a GPU whose model is built into an NVLink fabric (catalog/accel.yaml `nvlink_gpu_models`), is that
    link down (`link`: gpu.nvlink); every link inactive on any other GPU, or a count of 0, is nothing. The rows are
    catalog/accel.yaml's `nvidia_smi_nvlink`."""

    name = "gpu.nvlink_smi"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "gpu.accel_error": frozenset({"accel_class", "detail", "driver", "link", "mnemonic", "reason", "vendor"}),
    }
    # an operator's or a job's own run of nvidia-smi, in its output
    sources: frozenset[str] = frozenset({"application"})
    literals: tuple[str, ...] = ("(UUID: GPU-", "Link ", _NVL_ALL_INACTIVE)

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        stripped = line.strip()
        if (g := _NVL_GPU.match(stripped)) is not None:
            ctx.state[_K_NVL] = _NvlBlock(int(g.group("gpu")), ctx.lineno,
                                          fabric=nvlink_fabric_model(g.group("model")))
            return
        if _NVL_ALL_INACTIVE in stripped:
            yield from self._all_inactive(ctx)
            return
        m = _NVL_LINK.match(stripped)
        if m is None:
            return
        link, rest = int(m.group("link")), m.group("rest").strip()
        block = ctx.state.get(_K_NVL)
        if not isinstance(block, _NvlBlock) or ctx.lineno - block.lineno > _NVL_REACH:
            block = _NvlBlock(None, ctx.lineno)  # a link's lines posted without their GPU's
            ctx.state[_K_NVL] = block
        rows = nvidia_smi_nvlink()
        if (c := _NVL_COUNT.match(rest)) is not None:
            row = rows.get(c.group("key"))
            if row is None:
                return
            ctx.claimed = True
            if int(c.group("n")) == 0:
                return  # what a healthy link prints
            yield from self._report(row.accel_class, row.reason, block.gpu, link, f"Link {link}: {rest}", ctx)
            return
        down_row = rows.get(rest)
        if down_row is not None:
            block.down = [*(block.down or []), link]
        elif _NVL_SPEED.match(rest):
            block.up += 1
        else:
            return
        ctx.claimed = True
        if block.down and (block.up or block.fabric) and not block.reported:
            block.reported = True
            row = down_row if down_row is not None else rows["<inactive>"]
            why = f"{block.up} other link(s) up" if block.up else "a GPU of an NVLink fabric"
            yield from self._report(row.accel_class, row.reason, block.gpu, block.down[0],
                                    f"Link {block.down[0]}: {row.key} ({why})", ctx)

    def _all_inactive(self, ctx: LineContext) -> Iterator[Draft]:
        """nvidia-smi's `Unable to retrieve NVLink information as all links are inActive` under a GPU's line: that
        GPU's NVLinks down where its model is built into an NVLink fabric; else nothing."""
        block = ctx.state.get(_K_NVL)
        if not isinstance(block, _NvlBlock) or ctx.lineno - block.lineno > _NVL_REACH:
            return
        ctx.claimed = True
        if not block.fabric or block.reported:
            return
        block.reported = True
        row = nvidia_smi_nvlink()[_NVL_ALL_INACTIVE]
        yield from self._report(row.accel_class, row.reason, block.gpu, None, row.key, ctx)

    def _report(self, cls: str, reason: str, gpu: int | None, link: int | None, text: str,
                ctx: LineContext) -> Iterator[Draft]:
        seen = ctx.state.setdefault(_K_NVL_SEEN, set())
        assert isinstance(seen, set)
        if (reason, gpu) in seen:
            return
        seen.add((reason, gpu))
        where = f"GPU {gpu} " if gpu is not None else ""
        yield Draft(kind="gpu.accel_error", fields={
            "vendor": "nvidia", "driver": "nvidia-smi", "accel_class": cls, "reason": reason,
            "mnemonic": reason.upper(), "detail": _clip(f"nvidia-smi nvlink: {where}{text}"), "link": link})


# `rocm-smi --showrasinfo` (ROCm/rocm_smi_lib python_smi_tools/rocm_smi.py showRasInfo): a GPU's `GPU[0]: RAS INFO`,
# then a row per RAS block, `UMC  ENABLED  0  2` (block, status, correctable, uncorrectable); a block whose RAS is not
# enabled prints no counts, or counts that mean nothing.
_ROCM_RAS_GPU = re.compile(r"^GPU\[(?P<gpu>\d{1,3})\]:\s{0,20}RAS INFO$")
_ROCM_RAS_ROW = re.compile(
    r"^(?P<block>[A-Z][A-Z0-9_]{1,15}) {1,20}ENABLED {1,30}(?P<ce>\d{1,12}) {1,30}(?P<ue>\d{1,12})$")
_K_ROCM_RAS = "gpu.rocm_ras"  # (gpu, lineno) of the last `GPU[N]: RAS INFO`
_K_ROCM_RAS_SEEN = "gpu.rocm_ras.seen"  # (reason, gpu, block) reported in the stream
_ROCM_RAS_REACH: Final = 40  # a GPU's block rows below its header (about 20 blocks)


class RocmSmiRasExtractor:
    """`rocm-smi --showrasinfo`'s table read one GPU's block at a time: a block whose RAS is enabled with an
    uncorrectable count above 0 is that block's uncorrected error (`memory`, or the class catalog/accel.yaml's
    `amdgpu_ras_blocks` gives the block: XGMI's link layer `link`, the PCIe interface `pcie`), a correctable count alone
    above 0 is `memory_info`; counts of 0, and a block whose RAS is disabled, are nothing."""

    name = "gpu.rocm_smi_ras"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "gpu.accel_error": frozenset({"accel_class", "block", "detail", "driver", "mnemonic", "reason", "vendor"}),
    }
    # an operator's or a job's own run of rocm-smi, in its output
    sources: frozenset[str] = frozenset({"application"})
    literals: tuple[str, ...] = ("RAS INFO", "ENABLED")

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        stripped = line.strip()
        if (g := _ROCM_RAS_GPU.match(stripped)) is not None:
            ctx.state[_K_ROCM_RAS] = (int(g.group("gpu")), ctx.lineno)
            ctx.claimed = True
            return
        m = _ROCM_RAS_ROW.match(stripped)
        head = ctx.state.get(_K_ROCM_RAS)
        if m is None or not isinstance(head, tuple) or not 0 < ctx.lineno - head[1] <= _ROCM_RAS_REACH:
            return
        ctx.claimed = True
        gpu, block = head[0], m.group("block").lower()
        if int(m.group("ue")) > 0:
            cls = next((b.accel_class for b in accel_table().ras_blocks if b.block == block), "memory")
            reason, count = "ras_uncorrectable", m.group("ue")
        elif int(m.group("ce")) > 0:
            cls, reason, count = "memory_info", "ras_correctable", m.group("ce")
        else:
            return
        seen = ctx.state.setdefault(_K_ROCM_RAS_SEEN, set())
        assert isinstance(seen, set)
        if (reason, gpu, block) in seen:
            return
        seen.add((reason, gpu, block))
        kind = "uncorrectable" if reason == "ras_uncorrectable" else "correctable"
        yield Draft(kind="gpu.accel_error", fields={
            "vendor": "amd", "driver": "rocm-smi", "accel_class": cls, "reason": reason, "mnemonic": reason.upper(),
            "block": block, "detail": _clip(f"rocm-smi --showrasinfo: GPU[{gpu}] {block}: {count} {kind} error(s)")})


def _smi_holds(when: str, value: str, equals: str | None = None) -> bool:
    if when == "yes":
        return value == "Yes"
    if when == "equals":
        return value == equals
    return value.isdigit() and int(value) > 0


# --------------------------------------------------------------------------
# NVML / nvidia-smi / container runtime: the GPUs as user space sees them
# --------------------------------------------------------------------------

_NVML_GPU = re.compile(r"device handle for GPU\s*(?P<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])")
_K_NVML = "gpu.nvml.recent"  # (class, name) -> lineno of the last report


@dataclass(frozen=True, slots=True)
class _NvmlRow:
    """An NVML return code as the vendor table names it."""

    name: str
    message: str
    cls: str
    also: tuple[str, ...] = ()  # words the line must hold as well (catalog/platform.yaml's `also`)


# The NVML classes that say what state one GPU is in, whichever process asked (catalog/platform.yaml `nvml_errors`)
_GPU_STATE_CLASSES: Final = frozenset({"lost", "unresponsive"})


def _nvml_index() -> tuple[dict[str, _NvmlRow], re.Literals, tuple[str, ...], tuple[str, ...], frozenset[str]]:
    """Texts -> row, one regex over them (longest first), the anchors, the texts that need none, and the codes'
    own names that are their own report (_named)."""
    by_text: dict[str, _NvmlRow] = {}
    bare: list[str] = []
    named: set[str] = set()
    for _code, row in sorted(nvml_table().items()):
        r = _NvmlRow(row.name, row.message, row.nvml_class, row.also)
        # go-nvml's Return.String() spells a code without the NVML_ prefix (`ERROR_LIBRARY_NOT_FOUND`)
        go = (row.name[5:],) if row.name.startswith("NVML_ERROR_") else ()
        for text in (row.message, row.name, *row.aliases, *go):
            by_text.setdefault(text.lower(), r)
            if row.nvml_class == "no_devices":
                bare.append(text)
        # Go's spelling of a code that says what state a GPU is in (`ERROR_GPU_IS_LOST`), in two words or more, is
        # NVML's code and no one else's word, as `NVML_ERROR_` is (an anchor): gpud's `failed to get device remapped
        # rows: ERROR_GPU_IS_LOST` (leptonai/gpud#604), whatever call of whichever program got it. A code of what the
        # calling process could load or see (`ERROR_LIBRARY_NOT_FOUND`: its container's libraries) says so only
        # after an anchor; `ERROR_UNKNOWN`, `ERROR_TIMEOUT` are any program's words.
        if row.nvml_class in _GPU_STATE_CLASSES:
            named.update(g.lower() for g in go if g.count("_") >= 2)
    rx = re.Literals(by_text, re.IGNORECASE, keep=True)
    return by_text, rx, nvml_anchors(), tuple(bare), frozenset(named)


_NVML_INDEX = _nvml_index()


def _named(text: str, m: re.Match[str] | None) -> bool:
    """The match is a code's own name in Go's spelling (_nvml_index), a word of its own: not the tail of another
    enum's name (`CUDA_ERROR_NOT_SUPPORTED`)."""
    if m is None or m.group(0).lower() not in _NVML_INDEX[4]:
        return False
    at = m.start()
    return at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_")


# A client that prints NVML's return code by its number after the enum's stem (TensorRT Inference Server's metrics
# thread: `failed to get energy consumption for GPU 0, NVML_ERROR 3`, triton-inference-server/server#73): the
# table's row of that code, nothing for a code the table does not hold. Read alone only where the GPU does not offer
# what the client asked (not_supported: understood, no failure); another code needs an anchor of the table as its
# words do (the same thread's `failed to initialize NVML: NVML_ERROR 9` on a Jetson, server#714, is its metrics
# going without NVML, no driver the job lacked).
_NVML_CODE = re.compile(r"\bNVML_ERROR (?P<code>\d{1,3})\b")
NVML_CODE_LITERAL: Final = "NVML_ERROR "


def nvml_report(text: str) -> tuple[_NvmlRow, int] | None:
    """The NVML result a text reports (catalog/platform.yaml's row, where its report starts), or None: a line of
    nvidia-smi, an NVML client or the container runtime, or a message that quotes one (a Kubernetes event's)."""
    by_text, rx, anchors, bare, _ = _NVML_INDEX
    coded = _NVML_CODE.search(text) if NVML_CODE_LITERAL in text else None
    if coded is not None:
        info = nvml_table().get(int(coded.group("code")))
        if info is None:
            return None
        if info.nvml_class == "not_supported" or any(a in text for a in anchors):
            return _NvmlRow(info.name, info.message, info.nvml_class), coded.start()
        return None
    if any(w in text for w in nvml_not_reports()):
        return None  # the program's own failure after an anchor's words (the container CLI's path lookup)
    anchored = [a for a in anchors if a in text]
    m = rx.search(text)
    row = by_text[m.group(0).lower()] if m else None
    if row is not None and not all(w in text for w in row.also):
        # the row's text without the words that make it a failure (openibd's `[  OK  ]` after its step): no report,
        # and its own text is no anchor either
        anchored = [a for a in anchored if by_text.get(a.lower()) is not row]
        m = row = None
    if not anchored and row is not None:
        # another program quoting NVML's result (the device plugin, Slurm's gpu plugin): only a result of the table
        anchored = [a for a in nvml_quote_anchors() if a in text]
    if not anchored and row is not None and m is not None and _named(text, m):
        anchored = [m.group(0)]  # NVML's code by its own name (Go's spelling): the result, whoever prints it
    if not anchored and (row is None or row.cls != "no_devices" or not any(b in text for b in bare)):
        # "Unknown Error" or "GPU is lost" alone may be anyone's words; nvidia-smi's
        # "No devices were found" is its own.
        return None
    if row is None:
        # NVML could not start and says why in words the table does not hold.
        row = _NvmlRow("", "", "unknown")
    if row.cls == "unknown" and any(a in text for a in nvml_device_anchors()):
        row = _NvmlRow(row.name, row.message, "unresponsive")  # one named GPU does not answer
    return row, min([text.find(a) for a in anchored] + ([m.start()] if m else []))


def nvml_fields(text: str) -> dict[str, FieldValue] | None:
    """gpu.nvml_error's fields for a text that reports an NVML result (nvml_report), or None."""
    read = nvml_report(text)
    if read is None or read[0].cls == "not_supported":
        return None  # (not_supported: a client's question the GPU does not answer, no failure)
    row, start = read
    fields: dict[str, FieldValue] = {"error": row.cls, "message": _clip(text[start:])}
    if row.name:
        fields["nvml_error"] = row.name
    return fields


# A reading the GPU itself answered in nvidia-smi's table row: its temperature (`29C`)
_SMI_TEMPERATURE = re.compile(r"\s\d{1,3}C\s")


def _lone_smi_field_error(line: str, cell: str) -> bool:
    """A row of nvidia-smi's table in which one reading failed (`ERR! / 250W`: the power draw) while the GPU answered
    its temperature: one sensor's read that failed, transient and no fault of the GPU (Azure/azhpc-diagnostics#77, its
    developers: "the ERR! message is transient and there's no action to be taken"). Not the row's first cell, where
    nvidia-smi marks a GPU whose driver asks for a recovery action (`|ERR!   68C    P2 ...`,
    utkuozdemir/nvidia_gpu_exporter#393: `GPU Recovery Action: Reset`), nor a row of two or more (a GPU not
    answering: every field ERR!, pytorch/test-infra#3967)."""
    if line.count(cell) != 1 or _SMI_TEMPERATURE.search(line) is None:
        return False
    first = line.lstrip()[1:].split("|", 1)[0].split()
    return bool(first) and not first[0].startswith(cell.strip())


class NvmlErrorExtractor:
    """nvidia-smi, NVML clients and the NVIDIA container runtime failing to see or use the GPUs.

    The node side of "the workload got no usable GPU": the driver not loaded, a user-space
    library that does not match the loaded module, no device in the container's cgroup,
    a GPU lost from the bus. Texts and classes are catalog/platform.yaml's.
    """

    name = "gpu.nvml"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {"gpu.nvml_error": frozenset({"error", "message", "nvml_error"})}
    sources: frozenset[str] = frozenset({"application", "syslog", "kernel"})
    literals: tuple[str, ...] = (*_NVML_INDEX[2], *_NVML_INDEX[3], *sorted(n.upper() for n in _NVML_INDEX[4]),
                                 *nvml_quote_anchors(), *nvidia_smi_field_errors(),
                                 NVML_CODE_LITERAL)

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        cell = next((e for e in nvidia_smi_field_errors() if e in line), None)
        if cell is not None and line.lstrip().startswith("|"):
            if _lone_smi_field_error(line, cell):
                ctx.claimed = True  # one reading failed while the GPU answered the rest of its row: no fault
                return
            # nvidia-smi could not read the fields of a GPU in its table: that GPU is not answering.
            yield from self._report(_NvmlRow("", "", "unresponsive"), line, 0, None, ctx)
            return
        read = nvml_report(line)
        if read is None:
            return
        row, start = read
        if row.cls == "not_supported":
            ctx.claimed = True  # a client's question the GPU does not answer: understood, no failure
            return
        g = _NVML_GPU.search(line)
        yield from self._report(row, line, start, _pci(g.group("pci")) if g else None, ctx)

    def _report(self, row: _NvmlRow, line: str, start: int, pci: str | None, ctx: LineContext) -> Iterator[Draft]:
        seen = _recent(ctx.state, _K_NVML)
        key = (row.cls, row.name)
        last = seen.get(key)
        seen[key] = ctx.lineno
        if last is not None and 0 <= ctx.lineno - last <= _COMPANION_LINES:
            ctx.claimed = True  # nvidia-smi and its wrapper repeating one failure
            return
        fields: dict[str, FieldValue] = {"error": row.cls, "message": _clip(line[start:])}
        if row.name:
            fields["nvml_error"] = row.name
        yield Draft(kind="gpu.nvml_error", fields=fields, device=_device(pci))


_RELAYED_XID = re.compile(r"(?P<xid>\d{1,3})\b")
# The GPU a relay names after the Xid's number by its PCI address: gpud's `PCI:0000:ae:00` (the kernel line's own
# form, which it copies), or a full `0000:ae:00.0`. A UUID or an index names no device the kernel's lines name.
_RELAYED_PCI = re.compile(
    r"(?:\bPCI:(?P<short>(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)"
    r"|\b(?P<full>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]))\b")


def relayed_xid(line: str) -> tuple[int, str, str | None, int] | None:
    """The Xid a platform program relays on a line (catalog/platform.yaml `xid_relays`): its number, the program, the
    GPU's PCI address where the line names one after the number, and where the relay's words start; None where no
    row's words stand before a number (and, for a row with `then`, its words after it) as a word of their own (not
    `SXID 12` for gpud's `XID `)."""
    for row in xid_relays():
        at = line.find(row.text)
        if at < 0:
            continue
        if at > 0 and row.text[0].isalnum() and (line[at - 1].isalnum() or line[at - 1] == "_"):
            continue
        m = _RELAYED_XID.match(line, at + len(row.text))
        if m is None:
            continue
        rest = m.end()
        if row.then is not None:
            then = line.find(row.then, rest)
            if then < 0:
                continue
            rest = then + len(row.then)
        p = _RELAYED_PCI.search(line, rest)
        pci = _pci(p.group("short") or p.group("full")) if p is not None else None
        return int(m.group("xid")), row.program, pci, at
    return None


class XidRelayExtractor:
    """An Xid a platform program relays in its own log (catalog/platform.yaml `xid_relays`: the NVIDIA device plugin's
    `XidCriticalError: Xid=79 on Device=GPU-...; marking device as unhealthy.`, gpud's `XID 79(GPU has fallen off the
    bus) detected on PCI:0000:ae:00`, DCGM's `Detected XID 145 for GPU 0`): the GPU's fault, as the driver's own Xid
    line would say it, the same row of catalog/xid.yaml (`via` the program; the device where the relay names its
    PCI address)."""

    name = "gpu.xid_relay"
    emits: Mapping[str, frozenset[str]] = {
        "gpu.xid": frozenset({"detail", "immediate_action", "mnemonic", "pci", "via", "xid", "xid_class"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})

    def __init__(self) -> None:
        # the longer of a row's words before and after the number (gpud's ` detected on `, where `XID ` is short)
        self.literals: tuple[str, ...] = tuple(dict.fromkeys(max((row.text, row.then or ""), key=len)
                                                             for row in xid_relays()))

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        read = relayed_xid(line)
        if read is None:
            return
        xid, program, pci, at = read
        fields = xid_fields(xid, pci, program)
        if pci is None:
            del fields["pci"]
        fields["detail"] = _clip(line[at:])
        yield Draft(kind="gpu.xid", fields=fields, device=_device(pci))


EXTRACTORS: tuple[LineExtractor, ...] = (
    XidExtractor(),
    XidRelayExtractor(),
    SxidExtractor(),
    FabricManagerExtractor(),
    NvrmExtractor(),
    NvmlErrorExtractor(),
    AccelExtractor(),
    SmiQueryExtractor(),
    DcgmDiagExtractor(),
    NvlinkExtractor(),
    RocmSmiRasExtractor(),
)
