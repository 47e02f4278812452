"""DCGM's failure codes as one table by number (catalog/accel.yaml `dcgm_errors`, NVIDIA/DCGM dcgmlib/dcgm_errors.h),
from which both readers derive what they need: AccelExtractor's line anchors (a code's name, its format's longest
literal run and as many of its other runs as it takes to name no other code; catalog/tables.py dcgm_lines) and
DcgmDiagExtractor's reasons (the format's fixed words, spaces not counted; extract/gpu.py diag_reason).

The lines are the header's formats filled in (a number for each %-conversion), as DCGM's DCGM_ERROR_FORMAT_MESSAGE
prints them; the near misses are sentences that hold some of a format's words and are not DCGM's.
"""

from __future__ import annotations

import pytest

from firstfault import records
from firstfault.catalog.tables import DCGM_REASONS_NOT_RUN, DcgmError, dcgm_errors, dcgm_format_runs, dcgm_lines
from firstfault.extract.gpu import _diag_format, accel_message, diag_reason
from tests.extract.test_dcgm_diag_reasons import diag_faults, read, reason, row

# the codes a line reports by itself (those with a `reason`), and every code
LINE_CODES = sorted(r.code for r in dcgm_errors().values() if r.reason is not None)
ALL_FORMATS = [(r.code, f) for r in dcgm_errors().values() for f in (r.message, *r.aliases) if f]


def filled(fmt: str) -> str:
    """A format as DCGM prints it: each %-conversion a number (`%%` the percent sign it prints)."""
    runs = dcgm_format_runs(fmt)
    return ("3" if fmt.startswith("%") and not fmt.startswith("%%") else "") + "3".join(runs)


def dcgm_code(line: str) -> int | None:
    """The DCGM code AccelExtractor reads a line as (None: no DCGM row holds it)."""
    got = accel_message(line)
    return got.row.code if got is not None and got.driver == "dcgm" else None


def test_the_table_is_every_code_once_and_the_line_rows_are_derived_from_it() -> None:
    table = dcgm_errors()
    assert sorted(table) == list(range(1, 133))
    assert len({r.name for r in table.values()}) == 132
    # the codes a line reports by itself: the 19 the line table held before it was derived
    assert len(LINE_CODES) == 19
    assert {r.code for r in dcgm_lines() if r.accel_class != "informational"} == set(LINE_CODES)
    # and, understood by name and nothing, every code that says a check could not run or the node's set-up was
    # wanting (a monitor passing DCGM's code on: NVIDIA/NVSentinel#1471's DCGM_FR_IMEX_UNHEALTHY)
    assert {r.code for r in dcgm_lines() if r.accel_class == "informational"} == {
        r.code for r in table.values() if r.reason is None and r.reason_class in DCGM_REASONS_NOT_RUN}
    assert all(r.text == table[r.code or 0].name for r in dcgm_lines() if r.accel_class == "informational")
    # a code's line class is its class, DCGM's nvlink the Xid classes' link
    assert {(r.code, r.accel_class) for r in dcgm_lines() if r.code in (4, 5, 14)} == {
        (4, "memory"), (5, "memory_info"), (14, "link")}


@pytest.mark.parametrize("code", LINE_CODES)
def test_every_code_read_on_a_line_reads_back_by_its_name(code: int) -> None:
    row = dcgm_errors()[code]
    assert dcgm_code(f"nv-hostengine[2211]: {row.name}: {filled(row.message)}") == code
    assert dcgm_code(f"error: {row.name} on GPU 2") == code


@pytest.mark.parametrize(("code", "fmt"), [(c, f) for c, f in ALL_FORMATS if c in LINE_CODES])
def test_every_format_of_a_code_read_on_a_line_reads_back_to_that_code(code: int, fmt: str) -> None:
    # a format whose words another code's format holds too (the DCGM_FR_*_VIOLATION codes' `Detected %ld %s for GPU
    # %u`) names no code: that code is read by its name only, and its words alone are no DCGM row's
    shared = any(c != code and _diag_format(f) == _diag_format(fmt) for c, f in ALL_FORMATS)
    assert dcgm_code(filled(fmt)) == (None if shared else code)


@pytest.mark.parametrize(("code", "fmt"), ALL_FORMATS)
def test_every_format_reads_back_as_its_codes_reason_under_dcgmi_diag(code: int, fmt: str) -> None:
    # where codes share their fixed words (`Detected %ld %s for GPU %u`: a field's violation, its SBE, DBE and PCIe
    # replay kinds), the first of them in the table; else the code itself
    same = [c for c, f in ALL_FORMATS if _diag_format(f) == _diag_format(fmt)]
    if sum(len(w) for w in _diag_format(fmt)) < 12:
        pytest.skip("too few fixed words to name a code (diag_reason's threshold)")
    found = diag_reason(filled(fmt))
    assert found is not None and found.code == min(same)


@pytest.mark.parametrize("line", [
    # a format's longest run without the words that make it that code's: the row-remap count's first words are the
    # failed remap's too; `is currently down` is any interface's
    "GPU 3 had uncorrectable memory errors and was drained by the operator",
    "eth0 is currently down, retrying in 5 s",
    # the words the DCGM_FR_*_VIOLATION codes share with any field's: no code of their own
    "Detected 3 retries for GPU 0 which is above the threshold 2",
])
def test_near_miss_a_formats_words_in_a_sentence_that_is_not_dcgms(line: str) -> None:
    assert dcgm_code(line) is None


def test_the_classes_decided_from_dcgms_own_severity_and_advice() -> None:
    table = dcgm_errors()
    # DCGM_ERROR_MONITOR / `Monitor - this GPU can still perform workload` (the health watch's WARN), and a test's
    # single-bit counts as Xid 92's high single-bit rate: corrected errors, no fault by themselves
    assert {table[c].reason_class for c in (5, 6, 102, 105)} == {"memory_info"}
    # retired pages past DCGM's limit: the health watch's FAIL, DCGM_ERROR_ISOLATE, run a field diagnostic
    assert {table[c].reason_class for c in (7, 8)} == {"memory"}
    got = accel_message("DCGM_FR_RETIRED_PAGES_LIMIT: 60 or more retired pages have been detected in GPU 1.")
    assert got is not None and got.row.accel_class == "memory"
    # a reason of corrected errors is still the test's own finding, not a test that could not run: the memory test
    # that failed on them reads as before the classes were decided
    assert "memory_info" not in DCGM_REASONS_NOT_RUN
    sbe = ("More than 10 single-bit ECC error(s) detected in GPU 0 Volatile SBEs: 12 Monitor - this GPU can still "
           "perform workload.")
    found = diag_reason(sbe)
    assert found is not None and found.code == 5
    lines = [row("GPU Memory", "Pass - GPU: 1"), row("", "Fail - GPU: 0"), *reason("Warning", sbe)]
    assert diag_faults(read(lines)) == [("diag_memory_failed", 2)]


def test_a_code_read_on_a_line_needs_a_devices_class() -> None:
    raw = {"code": 64, "name": "DCGM_FR_API_FAIL", "message": "API call %s failed: '%s'", "class": "not_run",
           "reason": "api_fail", "printed_by": "NVIDIA/DCGM dcgmlib/dcgm_errors.h"}
    with pytest.raises(records.ValidationError, match="has a device's class"):
        records.convert(raw, DcgmError)
    del raw["reason"]
    assert records.convert(raw, DcgmError).reason is None
