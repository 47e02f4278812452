"""The host's and the GPU's hardware in the kernel's, the firmware's and nvidia-smi's own words, read against their
printers' enumerations: nvidia-smi -q's clocks' reasons (catalog/accel.yaml `nvidia_smi_query`, extract/gpu.py
SmiQueryExtractor), PCIe AER's and DPC's severity words (catalog/platform.yaml `pcie_error_words`, extract/host.py
PcieAerExtractor)."""

from __future__ import annotations

import pytest

from firstfault.catalog.tables import nvidia_smi_query
from tests.extract import helpers


def smi(lines: list[str]) -> list[tuple[str, str]]:
    return [(str(e.fields["accel_class"]), str(e.fields["reason"]))
            for e in helpers.events(lines, "application") if e.kind == "gpu.accel_error"]


# nvidia-smi -q's clocks block as mlfoundations/open_clip#703 posts an H100's (the values set per case); the older
# drivers' header is `Clocks Throttle Reasons`, the keys the same
def _clocks(header: str, hw: str = "Not Active", thermal: str = "Not Active", brake: str = "Not Active",
            sw_power: str = "Active", sw_thermal: str = "Not Active") -> list[str]:
    return ["GPU 00000000:18:00.0",
            f"    {header}",
            "        Idle                              : Not Active",
            "        Applications Clocks Setting       : Not Active",
            f"        SW Power Cap                      : {sw_power}",
            f"        HW Slowdown                       : {hw}",
            f"            HW Thermal Slowdown           : {thermal}",
            f"            HW Power Brake Slowdown       : {brake}",
            "        Sync Boost                        : Not Active",
            f"        SW Thermal Slowdown               : {sw_thermal}",
            "        Display Clock Setting             : Not Active"]


_CLOCK_ROWS = [r for r in nvidia_smi_query() if r.section.startswith("Clocks")]


@pytest.mark.parametrize("row", _CLOCK_ROWS, ids=lambda r: f"{r.section}:{r.key}")
def test_every_clocks_reason_row_is_read_in_its_block(row: object) -> None:
    from firstfault.catalog.tables import SmiQueryRow
    assert isinstance(row, SmiQueryRow)
    values = {"HW Slowdown": "hw", "HW Thermal Slowdown": "thermal", "HW Power Brake Slowdown": "brake"}
    lines = _clocks(row.section, **{values[row.key]: "Active"})
    assert smi(lines) == [("thermal", row.reason)]


def test_the_slowdown_and_its_kind_both_active() -> None:
    assert smi(_clocks("Clocks Event Reasons", hw="Active", thermal="Active")) == [
        ("thermal", "hw_slowdown"), ("thermal", "hw_thermal_slowdown")]


@pytest.mark.parametrize("lines", [
    # every hardware reason Not Active, the driver's own power cap Active (a loaded GPU's normal state)
    _clocks("Clocks Event Reasons"),
    # the driver's own thermal slowdown: nothing
    _clocks("Clocks Throttle Reasons", sw_thermal="Active"),
    # the counters of newer drivers (harvester/harvester#11133's keys): time held since the driver loaded, no state
    ["GPU 00000000:18:00.0", "    Clocks Event Reasons Counters", "        SW Power Capping                  : 0 us",
     "        Sync Boost                        : 0 us", "        SW Thermal Slowdown               : 0 us",
     "        HW Thermal Slowdown               : 81234 us", "        HW Power Braking                  : 0 us"],
    # the counters right after the reasons: their keys count under their own header, not the one above
    [*_clocks("Clocks Event Reasons"), "    Clocks Event Reasons Counters",
     "        HW Thermal Slowdown               : 81234 us"],
    # the key without its block: another report's words
    ["        HW Slowdown                       : Active"],
])
def test_near_miss_clocks_that_name_no_hardware_slowdown(lines: list[str]) -> None:
    assert smi(lines) == []


# ---------------------------------------------------------------- PCIe AER and DPC (catalog/platform.yaml
# `pcie_error_words`; the line forms drivers/pci/pcie/aer.c aer_print_error and dpc.c dpc_process_error print)

from firstfault.catalog.tables import pcie_error_words  # noqa: E402


def aer(lines: list[str], source: str = "kernel") -> list[tuple[str, object]]:
    return [(str(e.fields["severity"]), e.fields.get("bdf")) for e in helpers.events(lines, source)
            if e.kind == "pcie.aer"]


_AER_ROWS = [w for w in pcie_error_words() if w.printer == "aer"]
_DPC_ROWS = [w for w in pcie_error_words() if w.printer == "dpc"]


@pytest.mark.parametrize("word", _AER_ROWS, ids=lambda w: w.text)
@pytest.mark.parametrize("form", [
    # 4.19 on: the AER tag (domain-facts' `pcieport 0000:00:1c.5: AER: PCIe Bus Error: severity=Corrected, ...`)
    "[ 512.112233] pcieport 0000:00:01.0: AER: PCIe Bus Error: severity={w}, type=Transaction Layer, (Requester ID)",
    # before 4.19: no tag, the requester's id after the type
    "kernel: pcieport 0000:00:03.0: PCIe Bus Error: severity={w}, type=Physical Layer, id=0018(Receiver ID)",
    # the GPU's own function reporting it, with its driver's name
    "nvidia 0000:3b:00.0: AER: PCIe Bus Error: severity={w}, type=Data Link Layer, (Transmitter ID)",
    # posted without the device (a forum excerpt)
    "PCIe Bus Error: severity={w}, type=Transaction Layer, (Completer ID)",
])
def test_every_aer_severity_word_in_every_form(word: object, form: str) -> None:
    from firstfault.catalog.tables import PcieErrorWord
    assert isinstance(word, PcieErrorWord)
    got = aer([form.format(w=word.text)])
    assert [sev for sev, _ in got] == [word.severity]


@pytest.mark.parametrize("word", [w for w in _DPC_ROWS if w.severity != "none"], ids=lambda w: w.text)
def test_every_dpc_reason_that_names_an_error(word: object) -> None:
    from firstfault.catalog.tables import PcieErrorWord
    assert isinstance(word, PcieErrorWord)
    # until the containment line took the reason: `%s detected` on its own line after it
    assert aer([f"pcieport 0000:00:03.1: DPC: {word.text} detected"]) == [(word.severity, "0000:00:03.1")]
    # later kernels: one line
    assert aer([f"pcieport 0000:00:03.1: DPC: containment event, status:0x0009: {word.text} detected"]) == [
        (word.severity, "0000:00:03.1")]


def test_dpc_names_the_device_an_error_message_came_from() -> None:
    assert aer(["pcieport 0000:00:03.1: DPC: containment event, status:0x1f05, ERR_FATAL received from "
                "0000:3b:00.0"]) == [("uncorrected_fatal", "0000:3b:00.0")]


@pytest.mark.parametrize("line", [
    # a containment a program asked for, and a reason the spec reserves
    "pcieport 0000:00:03.1: DPC: software trigger detected",
    "pcieport 0000:00:03.1: DPC: reserved error detected",
    # the event line of older kernels names no reason (its reason line after it does)
    "pcieport 0000:00:03.1: DPC: containment event, status:0x1f01 source:0x0000",
    # DPC's set-up at boot
    "pcieport 0000:00:03.1: DPC: error containment capabilities: Int Msg #0, RPExt+ PoisonedTLP+ SwTrigger+ "
    "RP PIO Log 4, DL_ActiveErr+",
    # the AER words inside prose, and an error bit's name on the report's detail line
    "note: a PCIe Bus Error with severity Uncorrected (Fatal) would take the link down",
    "pcieport 0000:00:01.0: AER:    [14] CmpltTO                (First)",
    "pcieport 0000:00:01.0:    [12] Timeout               ",
    # the header announcing a report: the same report as its severity line
    "pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: 0000:01:00.0",
])
def test_near_miss_pcie_lines_that_report_no_error_of_their_own(line: str) -> None:
    assert aer([line]) == []


# ---------------------------------------------------------------- the PCI core: a GPU's function gone when powered up
# (drivers/pci/pci.c pci_power_up, under the bound driver's name; catalog/accel.yaml's `d0_inaccessible` rows)

from firstfault.catalog.tables import accel_table  # noqa: E402

_D0_AFTERS = [row.after for _v, _d, rows in accel_table().families for row in rows if row.reason == "d0_inaccessible"]


def lost(lines: list[str]) -> list[tuple[str, str]]:
    return [(str(e.fields["accel_class"]), str(e.fields["reason"])) for e in helpers.events(lines, "kernel")
            if e.kind == "gpu.accel_error"]


@pytest.mark.parametrize("after", _D0_AFTERS)
@pytest.mark.parametrize("form", [
    # 5.19 on (the power state it left named)
    "[ 8123.456789] {a}0000:0a:00.0: Unable to change power state from D3cold to D0, device inaccessible",
    "kernel: {a}0000:3b:00.0: Unable to change power state from D3hot to D0, device inaccessible",
    # 5.x
    "{a}0000:3b:00.0: Unable to change power state to D0, device inaccessible",
])
def test_every_gpu_drivers_function_gone_when_powered_up(after: str, form: str) -> None:
    assert lost([form.format(a=after)]) == [("fallen_off_bus", "d0_inaccessible")]


@pytest.mark.parametrize("line", [
    # herro.me's Proxmox incident (the device a VM was given: the line does not say it is a GPU)
    "vfio-pci 0000:0a:00.0: Unable to change power state from D3cold to D0, device inaccessible",
    # another driver's device, a bridge, and the GPU's own audio function
    "nvme 0000:01:00.0: Unable to change power state from D3cold to D0, device inaccessible",
    "pcieport 0000:00:01.1: Unable to change power state from D3cold to D0, device inaccessible",
    "snd_hda_intel 0000:01:00.1: Unable to change power state from D3cold to D0, device inaccessible",
    # the words in prose
    "nvidia driver note: the device inaccessible state is cleared after a reboot",
])
def test_near_miss_a_function_gone_that_is_no_gpus(line: str) -> None:
    assert lost([line]) == []


# ---------------------------------------------------------------- the node's own disks (catalog/platform.yaml
# `storage_clients` nvme and md, their `storage_words`)

def disk(lines: list[str]) -> list[tuple[str, bool]]:
    return [(str(e.fields["fs"]), bool(e.fields.get("transient"))) for e in helpers.events(lines, "kernel")
            if e.kind == "storage.error"]


@pytest.mark.parametrize(("line", "expected"), [
    # domain-facts' NVMe lines (a posted node's dmesg), drivers/nvme/host/pci.c's forms
    ("[ 9917.101] nvme nvme4: I/O tag 22 (2016) opcode 0x2 (Admin Cmd) QID 0 timeout, reset controller",
     [("block", True)]),
    ("nvme nvme0: I/O 512 QID 7 timeout, aborting", [("block", True)]),
    ("nvme nvme1: controller is down; will reset: CSTS=0x3, PCI_STATUS=0x10", [("block", True)]),
    ("nvme nvme1: Removing after probe failure status: -19", [("block", False)]),
    ("md/raid0md0: Disk failure on nvme0n1p1 detected, failing array.", [("block", False)]),
])
def test_a_disk_under_the_job(line: str, expected: list[tuple[str, bool]]) -> None:
    assert disk([line]) == expected


@pytest.mark.parametrize("line", [
    # a redundant array going on degraded
    "md/raid1:md0: Disk failure on sdb1, disabling device.",
    "md/raid1:md0: Operation continuing on 1 devices.",
    # the words without the driver's tag (someone's note), and the driver's own boot notice
    "a timeout, reset controller loop was seen on the old firmware",
    "nvme nvme0: 32/0/0 default/read/poll queues",
])
def test_near_miss_disk_lines_that_fail_nothing(line: str) -> None:
    assert disk([line]) == []
