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
