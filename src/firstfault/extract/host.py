"""Host-side kernel / syslog lines: NIC links, PCIe AER, OOM killer, storage,
hung tasks, machine checks, panics and lockups, and slurmctld node-down notices.

Every regex uses `search`: the line still carries its syslog / dmesg / journal
prefix. Field names follow docs/events.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import (
    AdapterFault,
    StorageWord,
    adapter_faults,
    cper_severities,
    dead_mount_errors,
    ipmi_bus_event,
    ipmi_bus_events,
    ipmi_power_events,
    is_driver_library,
    kernel_faults,
    memory_error_words,
    mount_source_words,
    pcie_error_words,
    platform_program_of,
    storage_tables,
    storage_wait_frames,
    storage_waits,
)
from firstfault.catalog.vocab import CLOUD_SCHEDULERS
from firstfault.extract.base import Draft, LineContext, LineExtractor, worded_at
from firstfault.extract.codes import errno_of, errno_row, storage_strerror_rx
from firstfault.extract.reasons import text_reasons
from firstfault.model import FieldValue
from firstfault.pci import norm_pci

_DETAIL_CLIP = 400
_KERNEL = frozenset({"kernel", "syslog"})
_BDF = r"[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _DETAIL_CLIP else text[: _DETAIL_CLIP - 3] + "..."


def _after(line: str, anchor: re.Match[str]) -> str:
    """The message from the matched driver prefix on: drops syslog/dmesg prefixes."""
    return _clip(line[anchor.start() :])


# --------------------------------------------------------------------------
# NIC links (mlx5 / IB / netdev)
# --------------------------------------------------------------------------

# Interfaces that carry training traffic. Container plumbing (veth, docker,
# cali..., br-...) flaps on every pod start and says nothing about the fabric.
_IFACE = r"(?:mlx5_[\w]+|ib[a-z]*\d[\w.]*|roce\w+|rdma\w+|en[a-z]\w*|eth\d[\w.]*|bond\d[\w.]*|hsn\d+|ens\w+)"
_MLX = re.compile(rf"mlx5_core (?P<bdf>{_BDF})(?: (?P<iface>[\w.]+))?:")
# IB core: `<ibdev>: Port: 1 Link DOWN` (also ACTIVE / INIT / ARMED).
_IB_PORT = re.compile(r"(?P<iface>[\w.]+): Port: (?P<port>\d+) Link (?P<st>DOWN|ACTIVE)\b")
# netdev drivers: `<iface>: Link down`, `<iface>: NIC Link is Down`, `<iface>: link down`; Intel's igb (and the
# older e1000/e1000e/ixgbe) put their own name before the interface inside the message, after the netdev
# header: `igb 0000:00:14.0 eth0: igb: eth0 NIC Link is Down` (sonic-net/sonic-buildimage#7310; an OpenWrt
# dual-WAN test note: `igb 0000:56:00.0 eth0: igb: eth0 NIC Link is Down`).
_NETDEV = re.compile(
    rf"\b(?P<iface>{_IFACE}): (?:NIC )?(?:Link is (?P<s1>Down|Up)|[Ll]ink (?P<s2>down|up))\b"
    rf"|\b[a-z][a-z0-9_]*: (?P<iface2>{_IFACE}) NIC Link is (?P<s3>Down|Up)\b"
)
_CARRIER = re.compile(rf"\b(?P<iface>{_IFACE}): (?P<st>Lost|Gained) carrier\b")
_MODULE = re.compile(r"Port module event(?P<err>\[error\])?: module (?P<module>\d+), (?P<status>[^,\n]+)")
# A netdev driver reporting an ECC error in the adapter's own memories, which it resets the adapter for (the port
# goes away with it): `ixgbe 0000:5d:00.1 eno6: Received ECC Err, initiating reset`. The driver's header (driver,
# PCI function, interface) says it is a NIC's, not a GPU's or the host memory's.
_NIC_ECC = re.compile(rf"\b[a-z][a-z0-9_]* {_BDF} (?P<iface>[\w.\-]+): .*?\bECC [Ee]rr")
# A network adapter's own failure in its driver's words (catalog/platform.yaml `adapter_faults`): the firmware
# stopped answering or asserted, the hardware reported a fatal error. A message row's words anywhere on a line that
# names one of its drivers; a syndrome row's (mlx5's hsynd_str) only after `synd 0x<code>: ` or `Health issue
# observed, `. Each row's drivers are looked for from a word's start.
_ADAPTER_ROWS: Final[dict[str, AdapterFault]] = {r.text: r for r in adapter_faults()}


def _adapter_words(text: str) -> str:
    return re.escape(text).replace(re.escape("{n}"), r"\d{1,3}")


_ADAPTER_MSG = re.compile("|".join(
    f"(?P<m{i}>{_adapter_words(r.text)})" for i, r in enumerate(adapter_faults()) if r.syndrome is None))
_ADAPTER_SYND = re.compile(
    r"(?:\bsynd 0x(?P<code>[0-9a-fA-F]{1,2}): |Health issue observed, )(?P<words>"
    + re.alternation([r.text for r in adapter_faults() if r.syndrome is not None]) + r")")
_ADAPTER_LITERALS: Final = (
    "synd 0x", "Health issue observed", *(r.text.split("{n}")[0] for r in adapter_faults() if r.syndrome is None))
_DRIVER_RX: Final[dict[tuple[str, ...], re.Pattern[str]]] = {
    r.drivers: re.compile(r"\b(?:" + "|".join(re.escape(d) for d in r.drivers) + ")") for r in adapter_faults()
}


def _adapter_row(line: str) -> tuple[AdapterFault, re.Match[str]] | None:
    """The adapter_faults row a line holds, in a line that names one of the row's drivers, and its match."""
    row: AdapterFault | None = None
    m = _ADAPTER_SYND.search(line)
    if m is not None:
        row = _ADAPTER_ROWS[m.group("words")]
    elif (m := _ADAPTER_MSG.search(line)) is not None:
        row = adapter_faults()[int(next(k for k, v in m.groupdict().items() if v is not None)[1:])]
    if row is None or m is None or _DRIVER_RX[row.drivers].search(line) is None:
        return None
    return row, m


# A netdev driver's header before its message: `bnxt_en 0000:12:00.0 eth0: ...`, `ice 0000:3b:00.0: ...`.
_DRIVER_HEAD = re.compile(rf"\b[a-z][a-z0-9_]* (?P<bdf>{_BDF})(?: (?P<iface>[\w.\-]+))?:")


class NetLinkExtractor:
    """mlx5 / InfiniBand / netdev link state changes and NIC module faults."""

    name = "net.link"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "net.link": frozenset({"detail", "fault", "iface", "port", "state"}),
    }
    sources: frozenset[str] = _KERNEL
    literals: tuple[str, ...] = (
        "Link DOWN",
        "Link ACTIVE",
        "Link down",
        "Link up",
        "link down",
        "link up",
        "Link is Down",
        "Link is Up",
        "Lost carrier",
        "Gained carrier",
        "Port module event",
        "ECC Err",
        "ECC err",
        *_ADAPTER_LITERALS,
    )

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        mlx = _MLX.search(line)
        state: str | None = None
        iface: str | None = None
        port: int | None = None
        anchor: re.Match[str] | None = None
        fault: str | None = None
        if (m := _IB_PORT.search(line)) is not None:
            state = "down" if m.group("st") == "DOWN" else "up"
            iface, port, anchor = m.group("iface"), int(m.group("port")), m
        elif (m := _MODULE.search(line)) is not None:
            status = m.group("status").strip()
            if m.group("err"):
                state = "error"
            elif status.startswith("Cable plugged"):
                return  # a normal boot / re-seat notice, not a fault
            else:
                state = "module_event"  # unplugged, cable error, disabled ...
            anchor = m
        elif (hit := _adapter_row(line)) is not None:
            row, anchor = hit
            if row.means == "none":
                return  # the driver's words for no failure of the adapter (a reset it was asked for)
            state, fault = "adapter", row.text
            if mlx is None and (head := _DRIVER_HEAD.search(line)) is not None and head.start() < anchor.start():
                iface, anchor = head.group("iface") or f"pci:{norm_pci(head.group('bdf'))}", head
        elif (m := _NIC_ECC.search(line)) is not None:
            state, iface, anchor, fault = "adapter", m.group("iface"), m, "ECC Err"
        elif (m := _NETDEV.search(line)) is not None:
            word = (m.group("s1") or m.group("s2") or m.group("s3")).lower()
            state, iface, anchor = ("down" if word == "down" else "up"), m.group("iface") or m.group("iface2"), m
        elif (m := _CARRIER.search(line)) is not None:
            state = "down" if m.group("st") == "Lost" else "up"
            iface, anchor = m.group("iface"), m
        if state is None or anchor is None:
            return
        if iface is None and mlx is not None:
            iface = mlx.group("iface") or f"pci:{norm_pci(mlx.group('bdf'))}"
        device = iface
        if iface is None:
            if "mlx5" not in line:
                return
            # A pasted or truncated line without the `mlx5_core <bdf>` prefix:
            # keep the fact, but it names no device to group on.
            iface = "mlx5"
        start = mlx.start() if mlx and mlx.start() < anchor.start() else anchor.start()
        fields: dict[str, FieldValue] = {
            "state": state,
            "iface": iface,
            "port": port,
            "detail": _clip(line[start:]),
        }
        if fault is not None:
            fields["fault"] = fault  # the adapter_faults row's words (an ECC error: the driver's)
        yield Draft(kind="net.link", fields=fields, device=device)


# --------------------------------------------------------------------------
# PCIe AER
# --------------------------------------------------------------------------

def _pcie_words(printer: str) -> tuple[dict[str, str], str]:
    """The kernel's words of one printer (catalog/platform.yaml `pcie_error_words`) -> severity, and their
    alternation (the longest word where several start: `Correctable` over `Corrected`'s stem)."""
    rows: dict[str, str] = {w.text: w.severity for w in pcie_error_words() if w.printer == printer}
    return rows, re.alternation(rows)


_AER_WORDS, _AER_ALT = _pcie_words("aer")
_AER = re.compile(rf"(?:(?P<bdf>{_BDF}):? (?:AER: )?)?PCIe Bus Error: severity=(?P<sev>{_AER_ALT})")
# DPC's trigger reason (drivers/pci/pcie/dpc.c dpc_process_error: `pcieport 0000:00:03.1: DPC: ERR_FATAL detected`;
# later kernels on the containment line, `DPC: containment event, status:0x0009: unmasked uncorrectable error
# detected`, `DPC: containment event, status:0x1f05, ERR_FATAL received from 0000:3b:00.0`). Bounded: linear.
_DPC_WORDS, _DPC_ALT = _pcie_words("dpc")
_DPC = re.compile(rf"(?:(?P<bdf>{_BDF}): )?DPC: (?:containment event, status:0x[0-9a-fA-F]{{1,8}}[:,] )?"
                  rf"(?P<why>{_DPC_ALT}) (?:detected\b|received from (?P<src>{_BDF}))")


# rasdaemon's record of the kernel's aer_event trace event (mchehab/rasdaemon ras-aer-handler.c: `aer_event: <level>
# <time> <bdf> (<device> - vendor_id: 0x10de device_id: 0x20b2) <errors> <type>`, the type last), and ras-mc-ctl
# --errors over its database (util/ras-mc-ctl.in: `<id> <time> <bdf> <type> error: <errors>`). Its type words:
# `Corrected`, `Uncorrected (Non-Fatal)`, `Uncorrected (Fatal)`.
_RAS_AER_TYPE = r"(?P<rsev>Corrected|Uncorrected \((?:Non-Fatal|Fatal)\))"
_RAS_AER_BDF = re.compile(rf"(?P<rbdf>{_BDF}) \(")  # searched from the `aer_event: ` found first
_RAS_AER_TAIL = re.compile(rf" {_RAS_AER_TYPE}$")
_RAS_AER_CTL = re.compile(rf"(?P<rbdf>{_BDF}) {_RAS_AER_TYPE} error: ")


def _aer_severity(sev: str) -> str:
    """The severity of AER's word (rasdaemon's and ras-mc-ctl's are the kernel's older words)."""
    return _AER_WORDS[sev]


class PcieAerExtractor:
    """`PCIe Bus Error: severity=...`: one line per AER report (the header lines that
    announce it and the per-bit lines after it are the same report); rasdaemon's and ras-mc-ctl's
    records of the same reports."""

    name = "pcie.aer"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "pcie.aer": frozenset({"bdf", "detail", "severity"}),
    }
    sources: frozenset[str] = _KERNEL
    literals: tuple[str, ...] = ("PCIe Bus Error", "aer_event: ", " Corrected error: ", "Fatal) error: ", "DPC: ")

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        m = _AER.search(line)
        if not m:
            if "DPC: " in line:
                yield from self._dpc(line, ctx)
                return
            yield from self._rasdaemon(line)
            return
        severity = _aer_severity(m.group("sev"))
        bdf = m.group("bdf").lower() if m.group("bdf") else None
        # The driver name before the BDF (pcieport, nvidia, nvme) is worth keeping.
        start = line.rfind(" ", 0, m.start("bdf") - 1) + 1 if bdf else m.start()
        yield Draft(
            kind="pcie.aer",
            fields={"severity": severity, "bdf": bdf, "detail": _clip(line[start:])},
            device=f"pci:{norm_pci(bdf)}" if bdf else None,
        )

    @staticmethod
    def _dpc(line: str, ctx: LineContext) -> Iterator[Draft]:
        """DPC's trigger reason: the port took its link down for an uncorrectable error (the device below it, where
        the line names it, else the port); a containment a program asked for is understood, and nothing."""
        m = _DPC.search(line)
        if m is None:
            return
        severity = _DPC_WORDS[m.group("why")]
        if severity == "none":
            ctx.claimed = True
            return
        raw = m.group("src") or m.group("bdf")
        bdf = raw.lower() if raw else None
        start = line.rfind(" ", 0, m.start("bdf") - 1) + 1 if m.group("bdf") else m.start()
        yield Draft(kind="pcie.aer", fields={"severity": severity, "bdf": bdf, "detail": _clip(line[start:])},
                    device=f"pci:{norm_pci(bdf)}" if bdf else None)

    @staticmethod
    def _rasdaemon(line: str) -> Iterator[Draft]:
        at = line.find("aer_event: ")
        m = _RAS_AER_BDF.search(line, at) if at >= 0 else None
        tail = _RAS_AER_TAIL.search(line.rstrip()) if m is not None else None
        if m is not None and tail is not None:
            bdf, sev, start = m.group("rbdf").lower(), tail.group("rsev"), at
        elif (c := _RAS_AER_CTL.search(line)) is not None:
            bdf, sev, start = c.group("rbdf").lower(), c.group("rsev"), c.start()
        else:
            return
        yield Draft(kind="pcie.aer", fields={"severity": _aer_severity(sev), "bdf": bdf, "detail": _clip(line[start:])},
                    device=f"pci:{norm_pci(bdf)}")


# FreeIPMI's `ipmi-sensors` row of the Critical Interrupt sensor's present states (`ID | Name | Type | Reading | Units |
# Event`, each asserted state's words in quotes: ipmi-sensors/ipmi-sensors-simple-output.c): it prints no direction,
# a state it lists is asserted now.
_SENSORS_BUS = re.compile(r"\|\s{0,8}Critical Interrupt\s{0,8}\|[^|\n]{0,40}\|[^|\n]{0,40}\|\s{0,8}"
                          r"(?P<events>(?:'[^'\n]{1,100}'\s{0,4}){1,8})$")


class BmcBusEventExtractor:
    """The BMC's event log naming a PCIe / bus error: `Critical Interrupt | Bus Fatal Error | Asserted` (ipmitool),
    `Critical Interrupt | Assertion Event | Bus Fatal Error` (FreeIPMI's ipmi-sel -v), `| Critical Interrupt | N/A | N/A
    | 'PCI SERR'` (FreeIPMI's ipmi-sensors, a present state).

    The SEL says there was a bus error on the host but not on which device, so the
    `pcie.aer` event carries no BDF; texts and severities are catalog/platform.yaml's,
    compared without case (catalog/tables.py ipmi_bus_event: both printers' spellings).
    """

    name = "pcie.bmc"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {"pcie.aer": frozenset({"bdf", "detail", "severity", "source"})}
    sources: frozenset[str] = _KERNEL
    literals: tuple[str, ...] = tuple(dict.fromkeys(s for e in ipmi_bus_events() for s in e.spellings))

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        low = line.lower()
        if "deassert" in low:
            return
        if "assert" in low:
            ev = ipmi_bus_event(line)
        elif (m := _SENSORS_BUS.search(line.rstrip())) is not None:
            ev = next((row for e in _SENSORS_EVENT.finditer(m.group("events"))
                       if (row := ipmi_bus_event(e.group("event"))) is not None), None)
        else:
            return
        if ev is not None:
            yield Draft(kind="pcie.aer", fields={"severity": ev.severity, "bdf": None, "source": "bmc",
                                                 "detail": _clip(line)})


# The BMC's power events as ipmitool prints a SEL record (`id | date | time | sensor | event | Asserted`): the sensor
# column (its type's words, then `#0x..` or under `elist` the sensor's name), the event's words (an empty `()` of
# event data after them), the direction. Bounded runs: linear.
_SEL_POWER = re.compile(r"\|\s{0,8}(?P<sensor>Power Supply|Power Unit)\b[^|\n]{0,64}\|\s{0,8}(?P<event>[^|\n]{1,100}?)"
                        r"\s{0,8}\|\s{0,8}(?P<dir>Asserted|Deasserted)\b")


# The same events as FreeIPMI prints them: `ipmi-sensors`' row of a sensor's present state (`ID | Name | Type | Reading
# | Units | Event`, the event column each asserted state's words in quotes: ipmi-sensors/ipmi-sensors-simple-output.c),
# and `ipmi-sel -v`'s record with its direction column (`... | Name | Type | Event Direction | Event`). ipmi-sel's
# default record prints no direction, so it is not read: a deasserted failure would read as one.
_SENSORS_POWER = re.compile(r"\|\s{0,8}(?P<sensor>Power Supply|Power Unit)\s{0,8}\|[^|\n]{0,40}\|[^|\n]{0,40}\|\s{0,8}"
                            r"(?P<events>(?:'[^'\n]{1,100}'\s{0,4}){1,8})$")
_SENSORS_EVENT = re.compile(r"'(?P<event>[^'\n]{1,100})'")
_FREEIPMI_SEL_POWER = re.compile(r"\|\s{0,8}(?P<sensor>Power Supply|Power Unit)\s{0,8}\|\s{0,8}"
                                 r"(?P<dir>Assertion|Deassertion) Event\s{0,8}\|\s{0,8}"
                                 r"(?P<event>[^|\n]{1,100}?)\s{0,8}$")


class BmcPowerEventExtractor:
    """The BMC's event log naming a power supply's or the power unit's state: `Power Supply #0xc4 | Failure detected ()
    | Asserted`, `Power Unit #0x44 | Redundancy Lost | Asserted` (catalog/platform.yaml `ipmi_power_events`), as
    `host.power` with the row's state; a deasserted event (the state going away) is nothing. FreeIPMI's layouts the
    same way: ipmi-sensors' present states (`| Power Supply | N/A | N/A | 'Presence detected' 'Power Supply Failure
    detected'`: the first state a row reads) and ipmi-sel -v's records (`| Power Supply | Assertion Event | ...`)."""

    name = "host.bmc_power"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {"host.power": frozenset({"sensor", "event", "state", "detail"})}
    sources: frozenset[str] = _KERNEL
    literals: tuple[str, ...] = tuple(sorted({e.text for e in ipmi_power_events()}))

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        if "Power " not in line:
            return
        line = line.rstrip()
        if (m := _SEL_POWER.search(line)) is not None:
            events: list[str] = [m.group("event").strip()] if m.group("dir") == "Asserted" else []
        elif (m := _FREEIPMI_SEL_POWER.search(line)) is not None:
            events = [m.group("event").strip()] if m.group("dir") == "Assertion" else []
        elif (m := _SENSORS_POWER.search(line)) is not None:
            events = [e.group("event").strip() for e in _SENSORS_EVENT.finditer(m.group("events"))]
        else:
            return
        for event in events:
            row = next((r for r in ipmi_power_events()
                        if r.sensor == m.group("sensor") and event.startswith(r.text)), None)
            if row is not None:
                yield Draft(kind="host.power", fields={"sensor": row.sensor, "event": row.text, "state": row.state,
                                                       "detail": _clip(line[m.start() + 1:].strip())})
                return


# --------------------------------------------------------------------------
# OOM killer
# --------------------------------------------------------------------------

_OOM_KILLED = re.compile(
    r"(?P<memcg>Memory cgroup out of memory: )?Killed process (?P<pid>\d+) \((?P<proc>[^)]*)\)"
)
_OOM_CONSTRAINT = re.compile(r"oom-kill:constraint=(?P<c>\w+)")
# The same summary names the victim at its end (mm/oom_kill.c dump_oom_summary, printed by oom_kill_process just before
# __oom_kill_process's `Killed process`: `oom-kill:constraint=%s,nodemask=%*pbl,cpuset=%s,mems_allowed=%*pbl,
# oom_memcg=%s,task_memcg=%s,task=%s,pid=%d,uid=%d`): the kill itself where its file says nothing more of it (an excerpt
# cut after it), read as the header is (`invoked`: engine/normalise.py drops it when a `Killed process` follows).
_OOM_VICTIM = re.compile(r",task=(?P<task>[^,\n]{1,64}),pid=(?P<pid>\d+),uid=\d")
# Older kernels announce a cgroup kill on the lines before `Killed process`.
_OOM_MEMCG_HINT = re.compile(r"Memory cgroup out of memory: Kill process|killed as a result of limit of")
# Kernels before 5.0 announce the kill they decided before making it (mm/oom_kill.c oom_kill_process: `pr_err("%s:
# Kill process %d (%s) score %u or sacrifice child\n", message, ...)`, the message `Out of memory`, `Memory cgroup out
# of memory` or `Out of memory (oom_kill_allocating_task)`), then `Killed process N (comm) ...` for the task killed,
# which may be a child of the one named (`or sacrifice child`). Read as the kill where its file says nothing more of
# it (a posted excerpt cut after it), without a victim (the child may be it): `invoked`, which a `Killed process` after
# it answers (engine/normalise.py).
_OOM_ANNOUNCED = re.compile(r"(?P<memcg>Memory cgroup )?[Oo]ut of memory(?: \(oom_kill_allocating_task\))?: Kill "
                            r"process \d+ \([^)]*\) score \d+ or sacrifice child")
_K_MEMCG = "host.oom.memcg"  # lineno of the last line saying the kill is a cgroup one
# The header of every OOM kill (mm/oom_kill.c dump_header: `<comm> invoked oom-killer: gfp_mask=0x...(...), order=0,
# oom_score_adj=0`): the task whose allocation found no memory, before the dump and the kill. It is read as the kill
# itself only where its file says nothing more of that OOM (a posted excerpt cut after it): engine/normalise.py drops
# it when a `Killed process` line follows in its file.
_OOM_INVOKED = re.compile(r"(?:^|\s)(?P<comm>\S{1,64}) invoked oom-killer: gfp_mask=")


# systemd on a unit one of whose processes the kernel's OOM killer killed (systemd src/core/unit.c, the unit's
# cgroup's memory.events `oom_kill` counted up: `A process of this unit has been killed by the OOM killer.`) and the
# service's result (src/core/service.c, SERVICE_FAILURE_OOM_KILL: `Failed with result 'oom-kill'.`). The unit's name
# before them is what systemd logs (`llama.service: ...`); `journalctl -u UNIT -o cat` and `systemctl status` excerpts
# print the words alone (at the line's start, or after systemd's own tag): a sentence that quotes them is no report.
_UNIT_OOM_WORDS: Final = ("A process of this unit has been killed by the OOM killer", "Failed with result 'oom-kill'")
_UNIT_OOM = re.compile(
    r"(?:(?<![\w@.:\\-])(?P<unit>[\w@.:\\-]+\.(?:service|scope|slice|socket|mount)): |^\s*|\bsystemd\[\d+\]: )"
    r"(?:A process of this unit has been killed by the OOM killer|Failed with result 'oom-kill')")


class OomKillExtractor:
    """The kernel OOM killer's `Killed process N (comm)`, host-wide or cgroup."""

    name = "host.oom_kill"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "host.oom_kill": frozenset({"cgroup", "pid", "proc", "invoked", "invoker", "storage_daemon"}),
    }
    sources: frozenset[str] = _KERNEL
    literals: tuple[str, ...] = (
        " invoked oom-killer: ",
        "Killed process",
        "oom-kill:constraint=",
        "Memory cgroup out of memory",
        "or sacrifice child",
        "killed as a result of limit of",
        *_UNIT_OOM_WORDS,
    )

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        u = _UNIT_OOM.search(line) if "oom-kill" in line or "OOM killer" in line else None
        if u:
            # systemd's word that the kernel's OOM killer killed a process of a unit (a service's, a scope's): the
            # unit's cgroup counted the kill; which process, its journal's kernel lines say (`Killed process`)
            unit: dict[str, FieldValue] = {"cgroup": True}
            if u.group("unit"):
                unit["proc"] = u.group("unit")
            yield Draft(kind="host.oom_kill", fields=unit)
            return
        h = _OOM_INVOKED.search(line) if " invoked oom-killer: " in line else None
        if h:
            # whom it killed is not said yet: no `proc` (the invoker may not be the victim)
            yield Draft(kind="host.oom_kill", fields={"invoked": True, "invoker": h.group("comm"), "cgroup": False})
            return
        c = _OOM_CONSTRAINT.search(line)
        if c:
            # The summary line precedes `Killed process` and is the only place
            # newer kernels say the kill was a cgroup limit, not the host.
            memcg = c.group("c") == "CONSTRAINT_MEMCG"
            if memcg:
                ctx.state[_K_MEMCG] = ctx.lineno
            else:
                ctx.state.pop(_K_MEMCG, None)
            v = _OOM_VICTIM.search(line, c.end())
            if v:
                summary: dict[str, FieldValue] = {"invoked": True, "proc": v.group("task"), "pid": int(v.group("pid")),
                                                  "cgroup": memcg}
                daemon = storage_tables().daemons.get(v.group("task"))
                if daemon is not None:
                    summary["storage_daemon"] = daemon
                yield Draft(kind="host.oom_kill", fields=summary)
            return
        a = _OOM_ANNOUNCED.search(line) if "sacrifice child" in line else None
        if a is not None and "Killed process" not in line[a.end():]:
            memcg = a.group("memcg") is not None
            if memcg:
                ctx.state[_K_MEMCG] = ctx.lineno
            yield Draft(kind="host.oom_kill", fields={"invoked": True, "cgroup": memcg})
            return
        if _OOM_MEMCG_HINT.search(line):
            ctx.state[_K_MEMCG] = ctx.lineno
            return
        m = _OOM_KILLED.search(line)
        if not m:
            return
        seen = ctx.state.pop(_K_MEMCG, None)
        cgroup = m.group("memcg") is not None or (isinstance(seen, int) and 0 <= ctx.lineno - seen <= 5)
        fields: dict[str, FieldValue] = {"pid": int(m.group("pid")), "proc": m.group("proc"), "cgroup": cgroup}
        # a FUSE daemon killed (catalog/platform.yaml `storage_clients` `processes`): its mount is gone with it
        daemon = storage_tables().daemons.get(m.group("proc"))
        if daemon is not None:
            fields["storage_daemon"] = daemon
        yield Draft(kind="host.oom_kill", fields=fields)


# --------------------------------------------------------------------------
# Storage
# --------------------------------------------------------------------------

_LUSTRE_ERR = re.compile(r"LustreError: (?!Skipped \d+ previous similar).*")
_LUSTRE_LOST = re.compile(r"Lustre: .*?(?:Connection to .*? was lost|lost connection)")
_NFS = re.compile(r"nfs: server (?P<server>\S+) not responding")
# GPFS writes `mmfs: [E] ...` / `mmfsd: [X] ...` (severity letters I N W E X) to syslog.
_GPFS = re.compile(r"mmfsd?(?:\[\d+\])?: (?:\[[EX]\] |.*(?:[Ee]xpel|lease renewal|[Ll]ost membership)).*")
# The block layer's report of a failed request names the disk after `dev`; a report posted by hand may drop the
# word, and then the block layer's function before it (`blk_update_request: I/O error, sdb, sector 2403408872`)
# is what says that the name is a disk's.
_BLOCK = re.compile(
    r"(?:blk_update_request: )?I/O error, dev \S+.*"
    r"|(?:blk_update_request|end_request|print_req_error): (?:[\w ]+ )?I/O error, [a-z]+\w*, sector \d+.*"
    r"|critical (?:medium|target) error, dev \S+.*"
    r"|Buffer I/O error on dev(?:ice)? .*"
    r"|Disabling device after reset failure.*"
    r"|Remounting filesystem read-only.*"
)


_PREFILTER_MIN = 6  # a storage word shorter than this is found through its client's anchors
# The server a client's line names, so that its recovery closes the same wait: sunrpc's `server <host>`, Lustre's
# `Connection to <target>` / `Connection restored to <target>`. Linear: a fixed word, then a run of one class.
_SERVER = re.compile(r"\bserver (?P<s>[^\s,;()]+)|\bConnection (?:restored )?to (?P<t>[^\s,;()]+)")


def _server(line: str) -> str | None:
    m = _SERVER.search(line)
    return None if m is None else (m.group("s") or m.group("t"))


def _error_fields(fs: str, line: str, detail: str) -> dict[str, FieldValue]:
    """storage.error's fields; `waits` and `server` where the client says it waits for its server
    (catalog/platform.yaml `storage_waits`): its recovery may close it (engine/normalise.py)."""
    fields: dict[str, FieldValue] = {"fs": fs, "detail": detail}
    if any(w in line for w in storage_waits()):
        fields["waits"] = True
        if (server := _server(detail)) is not None:  # from the client's words on (not a syslog host's)
            fields["server"] = server
    return fields


def _storage_literals() -> tuple[str, ...]:
    """The prefilter words of the storage table: each word's text, or (a short one) its client's anchors."""
    tables = storage_tables()
    words: list[str] = []
    for row in tables.words:
        words.extend([row.text] if len(row.text) >= _PREFILTER_MIN else tables.clients[row.client].anchors)
    return tuple(dict.fromkeys(words))


def storage_word(line: str, file: str = "") -> tuple[StorageWord, int] | None:
    """The row of catalog/platform.yaml `storage_words` a line says, and where its client's words start, or None.

    A row counts where its client's anchor stands on the line before its text (or the file's path names its
    process or one of its `logs`: the client's own log file), and, for a `tail` row, where its text ends the line. Of
    several, the row that ends last decides (a Go error chain prints its deepest error last), the longer where two
    end together.
    """
    tables = storage_tables()
    best: tuple[int, int, StorageWord, int] | None = None
    stripped = line.rstrip()
    for row in tables.words:
        at = stripped.rfind(row.text)
        if at < 0 or (row.tail and at + len(row.text) != len(stripped)):
            continue
        client = tables.clients[row.client]
        starts = [i for i in (line.find(a) for a in client.anchors) if 0 <= i <= at]
        # a daemon's own log file names it (GPFS's mmfs.log, a FUSE daemon's); a kernel client's line carries its prefix
        if not starts and not any(p in file.lower() for p in (*client.processes, *client.logs)):
            continue
        key = (at + len(row.text), len(row.text))
        if best is None or key > best[:2]:
            best = (*key, row, min(starts, default=at))
    return None if best is None else (best[2], best[3])


class StorageExtractor:
    """Parallel / network file system and block-device errors, and the storage clients' and FUSE daemons' own words
    (catalog/platform.yaml `storage_clients`, `storage_words`)."""

    name = "storage.error"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "storage.error": frozenset({"detail", "fs", "client", "transient", "waits", "server", "recovered"}),
        # a client's word that it is back: closes a wait before it (engine/normalise.py), never a cause
        "storage.recovered": frozenset({"fs", "client", "server", "detail"}),
        "container.error": frozenset({"runtime", "error", "text", "message"}),
    }
    # the kernel's clients on the kernel's and syslog's lines; the daemons' words in their own logs too
    sources: frozenset[str] = frozenset({"kernel", "syslog", "application"})
    literals: tuple[str, ...] = (
        "LustreError",
        "was lost",
        "lost connection",
        "nfs: server",
        "mmfs",
        "I/O error",
        "critical medium error",
        "critical target error",
        "Disabling device after reset failure",
        "Remounting filesystem read-only",
        *_storage_literals(),
    )

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        if ctx.source in _KERNEL:
            for fs, rx in (("lustre", _LUSTRE_ERR), ("lustre", _LUSTRE_LOST), ("nfs", _NFS), ("gpfs", _GPFS),
                           ("block", _BLOCK)):
                m = rx.search(line)
                if m:
                    yield Draft(kind="storage.error", fields=_error_fields(fs, line, _after(line, m)))
                    return
        found = storage_word(line, ctx.file)
        if found is None:
            return
        row, start = found
        client = storage_tables().clients[row.client]
        detail = _clip(line[start:])
        if row.word_class == "recovery":  # never a cause: it may close a wait before it (engine/normalise.py)
            back: dict[str, FieldValue] = {"fs": client.fs, "client": client.client, "detail": detail}
            if (server := _server(detail)) is not None:
                back["server"] = server
            yield Draft(kind="storage.recovered", fields=back)
        elif row.word_class in ("failure", "transient"):
            fields = _error_fields(client.fs, line, detail)
            fields["client"] = client.client
            if row.word_class == "transient":
                fields["transient"] = True
            yield Draft(kind="storage.error", fields=fields)
        else:  # job, node: the mount the job asked for, or one the node cannot make (rules of container.error)
            yield Draft(kind="container.error", fields={"runtime": client.client, "error": row.word_class,
                                                        "text": row.text, "message": detail})


# --------------------------------------------------------------------------
# Mount failures: the kubelet's and a CSI driver's words
# --------------------------------------------------------------------------

# k8s.io/mount-utils (mount_linux.go) reports a failed mount as `Mount failed: %v`, `Mounting command: %s`, `Mounting
# arguments: %s`, `Output: %s` (klog, one line each) and its MountError quotes the same on one line, which the
# kubelet's and a CSI driver's errors carry (`... mount failed: exit status 32 Mounting command: mount Mounting
# arguments: -t nfs ... Output: mount.nfs: ...`); a driver logging its own spells them lower-case (csi-wekafs#616).
# Only a failed mount prints `Mounting arguments`; its `-t <type>` names the file system (catalog/platform.yaml
# `storage_clients` `types`), and the output, on the same line or the next, what refused it (`mount_refusals`).
_MOUNT_ARGS: Final = ("Mounting arguments: ", "mounting arguments: ")
_MOUNT_OUTPUTS: Final = ("Output: ", "output: ")
# the report's output on its own line: mount(8)'s words (`mount: /x: ...`) or its helper's (`mount.lustre: ...`)
_MOUNT_OUTPUT_LINE: Final = ("Output: mount", "output: mount")
_MOUNT_TYPE = re.compile(r"(?:^|\s)-t\s{1,4}(?P<type>[\w.+\-]{2,40})")
_MOUNT_SPAN: Final = 2  # the most lines from the arguments' line to the output's
_K_MOUNT = "mounts.pending"  # per stream: (client, line number, the arguments' words) awaiting the output's line
# The kubelet's operation executor (kubernetes/kubernetes pkg/volume/util/operationexecutor/operation_generator.go:
# `MountVolume.SetUp failed for volume %q : %v`, `MountVolume.MountDevice failed for volume %q : %v`), in its log, a
# FailedMount event and kubectl describe's Events rows. The volume's error says whose: a storage errno's strerror it
# ends with (an NFS mount gone stale under a pod, csi-driver-nfs#927), else the CSI driver it names
# (`storage_clients` `drivers`: `driver name fsx.csi.aws.com not found in the list of registered CSI drivers`, its
# node plugin not running there). A ConfigMap, Secret or projected volume (`configmap "x" not found`, `object
# "ns"/"kube-root-ca.crt" not registered`) names neither: the job's own spec or the API server's, no storage.
_KUBELET_MOUNT: Final = ("MountVolume.SetUp failed for volume ", "MountVolume.MountDevice failed for volume ")


_K_SOURCE = "mounts.source_pending"  # per stream: (client, line number, the runtime's words) awaiting the error
_PLAIN_ANCHOR = re.compile(r"[A-Za-z][A-Za-z0-9-]{3,}")
_SOURCE_PATH = re.compile(r"""['"]{1,3}(?P<path>/[^'"\s]+)['"]""")  # bounded: a run of quotes stays linear


def _path_client(path: str) -> str | None:
    """The storage client a path names by one of its anchors that is a plain word (`/runtime-mnt/juicefs/...` ->
    juicefs; a prefix such as `fuse: ` or `Lustre:` names no path), the longest first; None where none."""
    lowered = path.lower()
    hits = [(len(a), c.client) for c in storage_tables().clients.values() for a in c.anchors
            if _PLAIN_ANCHOR.fullmatch(a) is not None and a.lower() in lowered]
    return max(hits)[1] if hits else None


def _first(text: str, words: tuple[str, ...]) -> tuple[int, str]:
    """Where the first of `words` stands in `text` and which it is; (-1, "") where none does."""
    hits = [(at, w) for w in words if (at := text.find(w)) >= 0]
    return min(hits) if hits else (-1, "")


class MountFailureExtractor:
    """A volume that would not mount, in the kubelet's and a CSI driver's words (k8s.io/mount-utils' report, the
    kubelet's MountVolume errors), of a file system catalog/platform.yaml `storage_clients` names by its type or CSI
    driver: storage.error, or container.error where the mount's output says the refusal is the job's or the node's
    (`mount_refusals`)."""

    name = "storage.mount"
    emits: Mapping[str, frozenset[str]] = {
        "storage.error": frozenset({"detail", "fs", "client", "errno"}),
        "container.error": frozenset({"runtime", "error", "text", "message"}),
    }
    # the kubelet's and a driver's logs (the node's journal, a pod's log), events and kubectl's text
    sources: frozenset[str] = frozenset({"application", "syslog"})
    def __init__(self) -> None:
        # the runtime's mount source words and the errors that may follow them on a line of their own
        self.literals: tuple[str, ...] = (*_MOUNT_ARGS, *_MOUNT_OUTPUT_LINE, *_KUBELET_MOUNT, *mount_source_words(),
                                          *dead_mount_errors(), *(e.capitalize() for e in dead_mount_errors()))

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        yield from self._mount_source(line, ctx)
        at, word = _first(line, _MOUNT_ARGS)
        if at >= 0:
            rest = line[at + len(word):]
            out_at, out_word = _first(rest, _MOUNT_OUTPUTS)
            m = _MOUNT_TYPE.search(rest if out_at < 0 else rest[:out_at])
            client = storage_tables().types.get(m.group("type")) if m is not None else None
            if client is None:
                return  # no file system of the table's (tmpfs, a bind mount, a local disk's)
            if out_at < 0:
                ctx.state[_K_MOUNT] = (client, ctx.lineno, rest.strip())
                return
            yield self._read(client, rest[out_at + len(out_word):], rest[:out_at])
            return
        at, word = _first(line, _MOUNT_OUTPUT_LINE)
        if at >= 0:
            pending = ctx.state.pop(_K_MOUNT, None)
            if isinstance(pending, tuple) and 0 < ctx.lineno - pending[1] <= _MOUNT_SPAN:
                yield self._read(pending[0], line[at + len(word) - len("mount"):], pending[2])
            return
        at, word = _first(line, _KUBELET_MOUNT)
        if at < 0:
            return
        err = line[at + len(word):]
        detail = _clip(line[at:].strip())
        if (s := storage_strerror_rx().search(err)) is not None and (name := errno_of(s.group("text"))) is not None:
            row = errno_row(name)
            yield Draft(kind="storage.error", fields={"fs": (row.fs if row is not None else None) or "posix",
                                                      "errno": name, "detail": detail})
            return
        client = next((c for name, c in storage_tables().drivers if name in err), None)
        if client is not None:
            yield self._read(client, line[at:], None)

    @staticmethod
    def _mount_source(line: str, ctx: LineContext) -> Iterator[Draft]:
        """The container runtime unable to make a bind mount's source under a storage client's mount path because
        the path is a dead mount (catalog/platform.yaml `mount_source_words`, `dead_mount_errors`): the error on the
        runtime's line, or on one of the next lines where the quote wraps."""
        at, word = _first(line, mount_source_words())
        if at >= 0:
            rest = line[at + len(word):]
            m = _SOURCE_PATH.search(rest)
            client = _path_client(m.group("path")) if m is not None else None
            if client is None:
                return
            if not any(e in rest.lower() for e in dead_mount_errors()):
                ctx.state[_K_SOURCE] = (client, ctx.lineno, line[at:].strip())
                return
            detail = line[at:]
        else:
            pending = ctx.state.get(_K_SOURCE)
            if not (isinstance(pending, tuple) and 0 < ctx.lineno - pending[1] <= _MOUNT_SPAN
                    and any(e in line.lower() for e in dead_mount_errors())):
                return
            client, detail = str(pending[0]), f"{pending[2]} {line.strip()}"
        ctx.state.pop(_K_SOURCE, None)
        yield Draft(kind="storage.error", fields={"fs": storage_tables().clients[client].fs, "client": client,
                                                  "detail": _clip(detail)})

    @staticmethod
    def _read(client: str, output: str, arguments: str | None) -> Draft:
        """A failed mount of the client's file system (its output, then the mount's arguments where known): the file
        system's, unless its output says the job's or the node's (catalog/platform.yaml `mount_refusals`)."""
        tables = storage_tables()
        detail = _clip(output.strip() if arguments is None else f"{output.strip()} (mount {arguments.strip()})")
        for row in tables.refusals:
            if row.text in output:
                return Draft(kind="container.error", fields={"runtime": client, "error": row.word_class,
                                                             "text": row.text, "message": detail})
        return Draft(kind="storage.error", fields={"fs": tables.clients[client].fs, "client": client,
                                                   "detail": detail})


# --------------------------------------------------------------------------
# Hung tasks
# --------------------------------------------------------------------------

# comm may itself hold ':' (kworker/u16:2), so the pid is the last `:N` before " blocked".
_HUNG = re.compile(r"INFO: task (?P<proc>.+):(?P<pid>\d+) blocked for more than (?P<sec>\d+) seconds")


class HungTaskExtractor:
    name = "kernel.hung_task"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "kernel.hung_task": frozenset({"pid", "proc", "seconds"}),
    }
    sources: frozenset[str] = _KERNEL
    literals: tuple[str, ...] = ("blocked for more than",)

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        m = _HUNG.search(line)
        if m:
            yield Draft(
                kind="kernel.hung_task",
                fields={"proc": m.group("proc"), "pid": int(m.group("pid")), "seconds": int(m.group("sec"))},
            )


# A kernel stack frame as a hung-task report or /proc/<pid>/stack prints it: `[<ffffffffac35a3a1>] request_wait_answer
# +0x101/0x210` (the address, older kernels and /proc, `[<0>]` where addresses are hidden), ` ? fuse_simple_request
# +0x1a/0x60 [fuse]` (no address since 4.x; `? ` an unreliable frame); the function's name decides (the table's).
_KFRAME = re.compile(r"(?:^|[\s\]:])(?P<addr>\[<[0-9a-fA-F]+>\]\s+)?(?:\?\s+)?(?P<func>[A-Za-z_][\w.]*)"
                     r"\+0x[0-9a-fA-F]+/0x[0-9a-fA-F]+")
_HUNG_LINES: Final = 80  # how far a hung-task report's Call Trace reaches below its `INFO: task ...` line
_K_HUNG = "host.hung_header"  # (lineno, task) of the stream's last hung-task report
_K_WAIT_SEEN = "host.wait_frames_seen"  # the hung-task reports (their linenos; 0: a stack without one) read


class StorageWaitExtractor:
    """A task blocked in the kernel waiting for a file system's server to answer (catalog/platform.yaml
    `storage_wait_frames`: FUSE's request_wait_answer, fuse_simple_request, ...): a frame of the table in a
    hung-task report's Call Trace, or in a process's kernel stack copied with its addresses (/proc/<pid>/stack), is
    the file system's server not answering -> storage.error, once for each report (or stack without one). The
    kernel's log lists such frames outside a hung-task report only in a dump of every task (SysRq): none."""

    name = "storage.wait_frame"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "storage.error": frozenset({"fs", "detail"}),
    }
    sources: frozenset[str] = frozenset({"kernel", "syslog", "application"})

    def __init__(self) -> None:
        self.literals: tuple[str, ...] = ("blocked for more than", *storage_wait_frames())

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        hung = _HUNG.search(line)
        if hung is not None:
            ctx.state[_K_HUNG] = (ctx.lineno, f"{hung.group('proc')}:{hung.group('pid')}")
            return
        m = _KFRAME.search(line)
        if m is None or (row := storage_wait_frames().get(m.group("func"))) is None:
            return
        header = ctx.state.get(_K_HUNG)
        report: tuple[int, str] | None = None
        if isinstance(header, tuple) and 0 <= ctx.lineno - header[0] <= _HUNG_LINES:
            report = header
        elif m.group("addr") is None or ctx.source != "application":
            return  # a frame in the kernel's log outside a hung-task report, or a bare frame with no address
        seen = ctx.state.setdefault(_K_WAIT_SEEN, set())
        key = report[0] if report is not None else 0
        if not isinstance(seen, set) or key in seen:
            return
        seen.add(key)
        task = f"task {report[1]} blocked" if report is not None else "a task's kernel stack"
        yield Draft(kind="storage.error", fields={
            "fs": row.fs,
            "detail": f"{task} in {row.frame}: a request the {row.fs} file system's server did not answer"})


# --------------------------------------------------------------------------
# Machine checks / EDAC
# --------------------------------------------------------------------------

# The MCE handler's and EDAC's dump of a bank: `mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 5: be00...`,
# `EDAC skx MC3: CPU 10: Machine Check Event: 0 Bank 8: fc00010001010092`; the status's UC bit decides.
_MCE_BANK = re.compile(
    r"CPU \d+: Machine Check(?: Exception| Event)?: [0-9a-fA-F]+ Bank \d+: (?P<status>[0-9a-fA-F]+)"
)
_MCE_LOGGED = re.compile(r"\[Hardware Error\]: Machine check events logged")
_MCE_FATAL = re.compile(
    r"Machine Check Exception|Fatal machine check|[Mm]achine check: Processor context corrupt"
)
_EDAC = re.compile(r"EDAC .*?\b(?P<kind>UE|CE)\b")
_MCI_STATUS_UC = 1 << 61  # IA32_MCi_STATUS.UC: the error was not corrected
# The firmware's record of a hardware error (APEI GHES, printed by the kernel's CPER code), one record over many
# lines behind `{N}[Hardware Error]: ` (N numbers the record; older kernels print none):
#   {7}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 4
#   {7}[Hardware Error]: event severity: recoverable
#   {7}[Hardware Error]:  Error 0, type: recoverable
#   {7}[Hardware Error]:   section_type: memory error
#   {7}[Hardware Error]:   error_type: 3, multi-bit ECC
# The record's severity decides (catalog/platform.yaml `cper_severities`): one event, on its `event severity` line;
# the record's other lines are understood with it.
_GHES = re.compile(r"(?:\{(?P<seq>\d+)\})?\[Hardware Error\]: (?P<msg>.*)$")
_GHES_SEVERITY = re.compile(r"^event severity: (?P<sev>\w+)")
_GHES_HEAD: Final = ("Hardware error from APEI Generic Hardware Error Source", "It has been corrected by h/w")
_GHES_LINES: Final = 60  # how far a record's lines reach below its severity
_K_GHES = "host.ghes"  # record number (or None) -> line of its severity


_K_INJECTED = "host.mf_injected"  # lineno of a test's own `Injecting memory failure`
_INJECTED_LINES: Final = 5  # how far the handler's lines of an injected page reach below the injection


def _memory_words(line: str, application: bool) -> tuple[int, int, str, str] | None:
    """Where a printer's memory-error words stand on the line (the printer's tag where its row names one, and the
    words), the severity they say and who printed them (catalog/platform.yaml `memory_error_words`): the BMC's SEL
    (`Memory #0x87 | Uncorrectable ECC | Asserted`), HPE's IML, rasdaemon and ras-mc-ctl, the kernel's memory-failure
    handler, a process's SIGBUS for it, memtester. In a process's own output only the rows marked `application`. A
    deasserted event is the error going away; NVRM's words are a GPU's ECC (extract/gpu.py)."""
    if "Deassert" in line or "NVRM" in line:
        return None
    for row in memory_error_words():
        if application and not row.application:
            continue
        where = worded_at(line, row.text, row.also, row.after)
        if where is not None:
            return where[0], where[1], row.severity, row.source
    return None


class MceExtractor:
    """CPU / DRAM machine checks, from the MCE handler, EDAC, the BMC's log and the firmware's (APEI GHES)."""

    name = "host.mce"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "host.mce": frozenset({"detail", "severity", "source", "cper_severity"}),
    }
    sources: frozenset[str] = _KERNEL
    def __init__(self) -> None:
        # the printers' memory-error words are catalog/platform.yaml's (`memory_error_words`)
        self.literals: tuple[str, ...] = ("Machine check events", "Machine Check", "Fatal machine check", "EDAC ",
                                          "[Hardware Error]: ", "Processor context corrupt", "Injecting memory failure",
                                          # a row with a printer's tag is found by its tag (`mc_event:`, `Memory
                                          # failure:`): its words alone (` Corrected error`) are in other lines too
                                          *dict.fromkeys(e.after or e.text for e in memory_error_words()))

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        if "Injecting memory failure" in line:
            # a test poisoning a page on purpose (mm/hwpoison-inject.c, madvise(MADV_HWPOISON)): the handler's lines
            # for it are the test's, not the hardware's
            ctx.state[_K_INJECTED] = ctx.lineno
            ctx.claimed = True
            return
        if "[Hardware Error]: " in line:
            ghes = _GHES.search(line)
            if ghes is not None and self._ghes(ghes, ctx):
                if (sev := _GHES_SEVERITY.match(ghes.group("msg"))) is not None:
                    cper = cper_severities().get(sev.group("sev").lower())
                    if cper in ("uncorrected", "corrected"):
                        yield Draft(kind="host.mce", fields={"severity": cper, "source": "ghes",
                                                             "cper_severity": sev.group("sev").lower(),
                                                             "detail": _clip(line[ghes.start():])})
                return
        severity: str
        at: int
        if (m := _MCE_BANK.search(line)) is not None:
            status = int(m.group("status"), 16)
            severity, at = ("uncorrected" if status & _MCI_STATUS_UC else "corrected"), m.start()
        elif (m := _MCE_FATAL.search(line)) is not None:
            severity, at = "uncorrected", m.start()
        elif (m := _MCE_LOGGED.search(line)) is not None:
            # The kernel says only this when a consumer (mcelog/rasdaemon) took the
            # record; uncorrected errors come with their own panic / bank lines.
            severity, at = "corrected", m.start()
        elif (m := _EDAC.search(line)) is not None:
            severity, at = ("uncorrected" if m.group("kind") == "UE" else "corrected"), m.start()
        elif (words := _memory_words(line, application=False)) is not None:
            at, _text_at, severity, source = words
            injected = ctx.state.get(_K_INJECTED)
            if (source == "memory_failure" and isinstance(injected, int)
                    and 0 <= ctx.lineno - injected <= _INJECTED_LINES):
                ctx.claimed = True  # the handler's lines for a page a test poisoned
                return
            yield Draft(kind="host.mce", fields={"severity": severity, "source": source, "detail": _clip(line[at:])})
            return
        else:
            return
        start = line.find("mce:")
        if start < 0 or start > at:
            start = at
        yield Draft(kind="host.mce", fields={"severity": severity, "detail": _clip(line[start:])})

    @staticmethod
    def _ghes(m: re.Match[str], ctx: LineContext) -> bool:
        """Whether the line is one of a GHES record's (and claimed): its severity (the record starts there), its
        header, or a line of a record whose severity was read above."""
        records = ctx.state.setdefault(_K_GHES, {})
        assert isinstance(records, dict)
        seq, msg = m.group("seq"), m.group("msg")
        if _GHES_SEVERITY.match(msg):
            records[seq] = ctx.lineno
        elif not msg.startswith(_GHES_HEAD):
            at = records.get(seq)
            if not isinstance(at, int) or ctx.lineno - at > _GHES_LINES:
                # Not a line of an open record: but one with another number (or later) may be, so while a record
                # is open in the stream its copies are each read (LineContext.keyed), never counted for this one.
                ctx.keyed = any(isinstance(a, int) and ctx.lineno - a <= _GHES_LINES for a in records.values())
                return False
        ctx.claimed = True
        return True


class ProcessMemoryErrorExtractor:
    """The host's bad memory as a process sees it, in its own output: its SIGBUS for poisoned memory (the si_code
    BUS_MCEERR_AR / AO, glibc's words for them) and a memory tester's report (memtester's `FAILURE`): the rows of
    catalog/platform.yaml `memory_error_words` marked `application`. Its own extractor, so that a process's output is
    not searched for the kernel's and the firmware's words."""

    name = "host.mce.process"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {"host.mce": frozenset({"detail", "severity", "source"})}
    sources: frozenset[str] = frozenset({"application"})

    def __init__(self) -> None:
        self.literals: tuple[str, ...] = tuple(dict.fromkeys(e.after or e.text for e in memory_error_words()
                                                             if e.application))

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        if (words := _memory_words(line, application=True)) is not None:
            yield Draft(kind="host.mce", fields={"severity": words[2], "source": words[3],
                                                 "detail": _clip(line[words[0]:])})


# --------------------------------------------------------------------------
# Panics, lockups, stalls, BUGs
# --------------------------------------------------------------------------

def _faults() -> tuple[tuple[str, str, re.Pattern[str]], ...]:
    """(literal, panic, pattern) for each row of catalog/platform.yaml `kernel_faults`, in the table's order."""
    return tuple((row.text, row.panic, re.compile(row.pattern)) for row in kernel_faults())


_FAULTS: Final = _faults()


class KernelPanicExtractor:
    name = "kernel.panic"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "kernel.panic": frozenset({"detail", "panic"}),
    }
    sources: frozenset[str] = _KERNEL
    literals: tuple[str, ...] = tuple(dict.fromkeys(text for text, _, _ in _FAULTS))

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        for text, panic, rx in _FAULTS:
            if text in line and (m := rx.search(line)) is not None:
                yield Draft(kind="kernel.panic", fields={"panic": panic, "detail": _after(line, m)})
                return


# --------------------------------------------------------------------------
# slurmctld: nodes not responding / failed
# --------------------------------------------------------------------------

_NODE_DOWN = re.compile(
    r"\b[Nn]odes? (?!(?:is|was|are|has|have|still|now)\b)(?P<hosts>[\w.\-\[\],]+?) not responding"
    r"(?P<down>, setting DOWN)?"
    r"|Killing JobId=\d+ on failed node (?P<failed>[\w.\-]+)"
    r"|due to failure of node (?P<failed2>[\w.\-]+)"
)
_HOSTLIST_CAP = 4096  # a hostlist that expands past this is not a node list we can use
# slurmctld's word that a node it had marked not responding answered again (SchedMD/slurm src/slurmctld/node_mgr.c
# `_node_did_resp`: `Node %s now responding`, as it clears NODE_STATE_NO_RESPOND; a DOWN node of reason `Not
# responding` put back by ReturnToService: `node %s returned to service`, `node_did_resp: node %s returned to
# service`, and validate_nodes_via_front_end's `Nodes %s returned to service`). Read by engine/normalise.py
# `_answered_nodes`: a `not responding` of the same node before it, in the same file, is taken back.
_NODE_BACK = re.compile(
    r"\b[Nn]odes? (?P<hosts>[\w.\-\[\],]+?) (?:now responding|returned to service)\b"
)


def expand_hostlist(expr: str) -> list[str]:
    """Slurm hostlist -> host names: `node[01-03,07],gpu-1` -> node01 node02 node03 node07 gpu-1."""
    hosts: list[str] = []
    for part in _split_top(expr):
        names = [""]
        for text, ranges in re.findall(r"([^\[\]]*)(?:\[([^\]]*)\])?", part):
            items = [text]
            if ranges:
                items = [text + v for v in _expand_ranges(ranges)]
            names = [n + i for n in names for i in items]
            if len(names) > _HOSTLIST_CAP:
                return hosts
        hosts.extend(n for n in names if n)
    return hosts


def _split_top(expr: str) -> list[str]:
    """Split on commas outside brackets."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in expr:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p for p in parts if p]


def _expand_ranges(spec: str) -> list[str]:
    out: list[str] = []
    for item in spec.split(","):
        lo, sep, hi = item.partition("-")
        if sep and lo.isdigit() and hi.isdigit():
            width = len(lo)
            out.extend(str(i).zfill(width) for i in range(int(lo), min(int(hi), int(lo) + _HOSTLIST_CAP) + 1))
        elif item:
            out.append(item)
    return out


# PBS / Moab / Slurm node troubles that name no host in a form _NODE_DOWN reads:
# `job preempted (node failure)`, `Server could not connect to MOM`, and slurmstepd
# `execve(): /tmp/slurmd/job00089/slurm_script: No such file or directory` (the node's
# spool directory lost the job's script: a reboot or a wiped /tmp under slurmd).
_NODE_LOST = re.compile(
    r"\(node failure\)|could not connect to MOM|execve\(\): \S*/slurm_script: No such file or directory"
)


# slurmctld's log of a node reason set by `scontrol update` (src/slurmctld/node_mgr.c update_node: `update_node: node %s
# reason set to: %s`): a cloud cluster's ResumeProgram that could not create the node's instance sets it DOWN with the
# cloud's error as its reason (slurm-gcp's resume.py: `GCP Error: <the operation's message>`,
# GoogleCloudPlatform/cluster-toolkit#3225; ParallelCluster's slurm_resume sets its `(Code:<EC2 code>)...` reason),
# and slurmctld then requeues the job `due to failure of node N`. Where catalog/scheduler.yaml reads the reason (a
# quota of the job's project: its set-up; a stock-out: no cause), that node's failure is the refusal's, which its own
# reading decides: the node never existed, no node failed under the job (docs/verdict.md).
_REASON_SET = re.compile(r"update_node: node (?P<host>[A-Za-z0-9][\w.\-]{0,126}) reason set to: (?P<reason>.+)$")
_K_REFUSED = "host.refused_nodes"  # per stream: the nodes whose reason a cloud's refusal was set to
_REFUSED_MAX: Final = 4096


def _refused(line: str, ctx: LineContext) -> bool:
    """Remembers a node whose reason slurmctld set to a cloud's refusal that catalog/scheduler.yaml reads
    (_REASON_SET); whether the line was such a reason."""
    m = _REASON_SET.search(line)
    if m is None or not any(h.scheduler in CLOUD_SCHEDULERS and h.reason in (None, "setup")
                            for h in text_reasons(m.group("reason"))):
        return False
    seen = ctx.state.setdefault(_K_REFUSED, set())
    if isinstance(seen, set) and len(seen) < _REFUSED_MAX:
        seen.add(m.group("host"))
    return True


class NodeDownExtractor:
    """slurmctld's view of a node that stopped answering or failed under a job."""

    name = "sched.node_down"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "sched.node_down": frozenset({"reason"}),
        "sched.node_back": frozenset({"host"}),
    }
    sources: frozenset[str] = frozenset({"kernel", "syslog", "application"})
    literals: tuple[str, ...] = ("not responding", "on failed node", "due to failure of node", "(node failure)",
                                 "could not connect to MOM", "/slurm_script: No such file", "now responding",
                                 "returned to service", "reason set to: ")

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        if "reason set to: " in line and _refused(line, ctx):
            return
        if "now responding" in line or "returned to service" in line:
            back = _NODE_BACK.search(line)
            if back:
                for host in expand_hostlist(back.group("hosts")):
                    yield Draft(kind="sched.node_back", fields={"host": host}, host=host)
                return
        m = _NODE_DOWN.search(line)
        if not m:
            other = _NODE_LOST.search(line)
            if other:
                # PBS / Moab: `job preempted (node failure)`, `Server could not connect to MOM`. No host
                # is named. (Slurm's node reasons, `reboot timed out` and slurmctld's `Node X has low
                # real_memory size` among them: extract/slurmerr.py.)
                yield Draft(kind="sched.node_down", fields={"host": "", "reason": other.group(0)[:80]})
            return
        if m.group("hosts"):
            hosts = expand_hostlist(m.group("hosts"))
            reason = "not responding, setting DOWN" if m.group("down") else "not responding"
        else:
            hosts = [m.group("failed") or m.group("failed2")]
            reason = "node failure"
            refused = ctx.state.get(_K_REFUSED)
            if m.group("failed2") and isinstance(refused, set) and hosts[0] in refused:
                return  # the cloud refused to create the node: that refusal's, no node failure (_REASON_SET)
        for host in hosts:
            yield Draft(kind="sched.node_down", fields={"host": host, "reason": reason}, host=host)


# --------------------------------------------------------------------------
# User-space crashes the kernel reports
# --------------------------------------------------------------------------

# `python[3551]: segfault at 1378 ip 00007fff859dbeff sp 00007fff3b60ce60 error 4 in libcuda.so.418.67[7fff+dec000]`
# `traps: python[42] general protection fault ip:7f.. sp:7f.. error:0 in libtorch_cpu.so[7f..+..]`
# `traps: python[42] trap invalid opcode ip:.. sp:.. error:0 in libfoo.so[..]`
_USER_FAULT = re.compile(
    r"(?P<proc>[^\s\[\]]{1,64})\[(?P<pid>\d+)\]:? (?P<what>segfault at|general protection fault|trap [a-z0-9 ]+?)"
    r"(?= ip[: ]| [0-9a-f]+ ip)"
    r"(?:.*? in (?P<object>[^\s\[]+)\[)?"
)
# What the kernel calls the fault -> the signal it sends (arch/x86/kernel/traps.c).
_TRAP_SIGNALS = {
    "segfault at": "SIGSEGV",
    "general protection fault": "SIGSEGV",
    "trap invalid opcode": "SIGILL",
    "trap divide error": "SIGFPE",
    "trap int3": "SIGTRAP",
    "trap stack segment": "SIGBUS",
    "trap alignment check": "SIGBUS",
}
_K_USER_FAULT = "host.user_fault"  # (pid, signal) of reports already made


def _object_name(raw: str | None) -> str | None:
    """`libcuda.so.418.67` -> `libcuda.so`; a path -> its file name."""
    if not raw:
        return None
    name = raw.rsplit("/", 1)[-1]
    m = re.match(r"(.+?\.so)(?:\.[\w.]+)?$", name)
    return m.group(1) if m else name


class UserFaultExtractor:
    """The kernel's one line about a process it killed for a fault: `segfault at`, `traps: ...`.

    A crash signal the process raised on itself (`by: self`); `object` is the file the faulting
    instruction was in, and `driver_library` says whether that is the NVIDIA driver's own
    user-space code (catalog/platform.yaml), where a crash points at the GPU or its driver.
    """

    name = "host.user_fault"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "process.signal": frozenset({
            "by", "detail", "driver_library", "object", "pid", "proc", "signal", "program", "part", "storage_daemon"
        }),
    }
    sources: frozenset[str] = _KERNEL
    literals: tuple[str, ...] = ("]: segfault at", "] segfault at", "general protection fault ip", "] trap ")

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        m = _USER_FAULT.search(line)
        if not m:
            return
        what = m.group("what")
        sig = _TRAP_SIGNALS.get(what)
        if sig is None:
            return
        pid = int(m.group("pid"))
        obj = _object_name(m.group("object"))
        seen = ctx.state.setdefault(_K_USER_FAULT, set())
        if isinstance(seen, set):
            if (pid, sig) in seen:
                ctx.claimed = True  # the same crash quoted again (a grep of the same line)
                return
            seen.add((pid, sig))
        fields: dict[str, FieldValue] = {
            "signal": sig,
            "by": "self",
            "proc": m.group("proc"),
            "pid": pid,
            "detail": _clip(line[m.start():]),
            "driver_library": bool(obj) and is_driver_library(str(obj)),
        }
        if obj:
            fields["object"] = obj
        row = platform_program_of(m.group("proc"))
        if row is not None:
            # a program of the platform under the workload (catalog/platform.yaml `platform_programs`: DCGM's exporter,
            # the kubelet, containerd), by the name the kernel gives its process: its crash is that program's, not a
            # rank's (app-crash reads no event with a `part`); where it faulted in the driver's library it still points
            # at the node's GPU or driver (gpu-driver-library-crash)
            fields["program"], fields["part"] = row.program, row.part
        # a storage daemon (catalog/platform.yaml `storage_clients` `processes`: a FUSE mount's, a file server's), by
        # the comm the kernel prints, as the OOM killer's victim is read: its end is the storage's, every I/O its
        # mount or its clients make fails after it (storage-fuse-daemon-killed), not a rank's crash
        daemon = storage_tables().daemons.get(m.group("proc"))
        if daemon is not None:
            fields["storage_daemon"] = daemon
        yield Draft(kind="process.signal", fields=fields)


EXTRACTORS: tuple[LineExtractor, ...] = (
    NetLinkExtractor(),
    PcieAerExtractor(),
    BmcBusEventExtractor(),
    BmcPowerEventExtractor(),
    OomKillExtractor(),
    StorageExtractor(),
    MountFailureExtractor(),
    HungTaskExtractor(),
    StorageWaitExtractor(),
    MceExtractor(),
    ProcessMemoryErrorExtractor(),
    KernelPanicExtractor(),
    NodeDownExtractor(),
    UserFaultExtractor(),
)
