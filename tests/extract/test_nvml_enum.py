"""NVML's nvmlReturn_t members that catalog/platform.yaml deliberately holds no row for (its comment above
`nvml_errors`): nvmlErrorString's words for them decide no family by themselves, so a line of NVML's own anchor reads
as NVML failing for a reason the table does not name (`unknown`, `unresponsive` for one named GPU), and another
program's quote of them (`NVML: Failed to ...`) reports nothing. The words are nvmlErrorString's as DCGM's copy of the
strings (nvml_error_strings.h) and pynvml's NVMLError fallbacks list them.
"""

from __future__ import annotations

import pytest

from tests.extract import helpers


def _nvml(line: str) -> list[tuple[object, object]]:
    return [(e.fields.get("error"), e.fields.get("nvml_error")) for e in helpers.events([line])
            if e.kind == "gpu.nvml_error"]


_ROWLESS = ["Uninitialized", "Invalid Argument", "Insufficient Permissions", "Already Initialized", "Not Found",
            "Insufficient Size", "Insufficient External Power", "Interrupt Request Issue", "Function Not Found",
            "Corrupted infoROM", "GPU requires reset", "GPU access blocked by the operating system",
            "In use by another client", "Insufficient Memory", "Insufficient Resources", "No data"]


@pytest.mark.parametrize("words", _ROWLESS)
def test_a_rowless_nvml_result_after_nvmls_own_anchor_reads_as_an_unnamed_failure(words: str) -> None:
    # nvidia-smi's start-up failure (`Failed to initialize NVML: <nvmlErrorString>`) and its per-GPU handle failure
    assert _nvml(f"Failed to initialize NVML: {words}") == [("unknown", None)]
    assert _nvml(f"Unable to determine the device handle for GPU0000:3B:00.0: {words}") == [("unresponsive", None)]


@pytest.mark.parametrize("words", _ROWLESS)
def test_a_rowless_nvml_result_quoted_by_another_program_reports_nothing(words: str) -> None:
    # a scheduler's GPU plugin quoting NVML as it goes on without the call (Slurm's gpu/nvml `NVML: Failed to ...`):
    # only a result of the table is a report there
    assert _nvml(f"gpu/nvml: _nvml_set_freqs: NVML: Failed to set memory and graphics clock frequency pair: "
                 f"{words}") == []
