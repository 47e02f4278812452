"""`dcgmi diag`'s failed tests read with the reasons printed under them (catalog/accel.yaml `dcgm_errors`,
extract/gpu.py DcgmDiagExtractor): a test that could not run found no device fault.

The layouts are NVIDIA/DCGM's dcgmi/Diag.cpp: DCGM 3's `| GPU Memory | Fail - GPU: 0 |` with its `Warning` rows, DCGM
4's `| memory | Fail |` over `GPU0: Fail` and `Warning: GPU0`, each message cut every 45 characters over as many rows
(DisplayVerboseInfo); the JSON's is testing/TestDiagManagerStrings.h's. The messages are dcgmlib/dcgm_errors.h's
formats filled in, each followed by the code's advice (its _NEXT) and a detail as common/DcgmError.h joins them;
lines marked with a thread are its words as posted.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog.tables import DCGM_REASONS_NOT_RUN, dcgm_errors
from firstfault.collect.scan import Extraction, all_line_extractors
from firstfault.extract.gpu import diag_reason
from firstfault.model import Event
from tests.conftest import BundleMaker
from tests.extract import helpers

TRIAGE = "Check DCGM and system logs for errors. Reset GPU. Restart DCGM. Rerun diagnostics."
# NVIDIA/DCGM#224, as posted (a `dcgmi diag -r 2` on an H800): the GPU's CUDA calls refused, the device busy
BUSY_224 = ("GPU 0 API call cudaEventCreate failed for GPU0: 'CUDA-capable device(s) is/are busy or unavailable' "
            "Check DCGM and system logs for errors. Reset GPU. Restart DCGM. Rerun diagnostics.")
FAULTY = "GPU 0 Found 3 faulty memory elements on GPU 0 Run a field diagnostic on the GPU."


def row(name: str, info: str) -> str:
    """A row of the table (Diag.cpp's DIAG_DATA stencil: 25 and 46 characters between the bars and their spaces)."""
    return f"| {name:<25} | {info:<46} |"


def reason(name: str, message: str) -> list[str]:
    """A reason's rows as DisplayVerboseInfo prints them: 45 characters a row, the name on the first only."""
    return [row(name if i == 0 else "", message[i:i + 45]) for i in range(0, len(message), 45)]


def read(lines: list[str]) -> list[Event]:
    """The stream to its end: a test's results are given back where its block ends being read (open_ends)."""
    ex = Extraction(all_line_extractors())
    return [*helpers.events(lines, "application", file="dcgmi.log", extraction=ex), *ex.open_ends()]


def diag_faults(events: list[Event]) -> list[tuple[str, int | None]]:
    """The failed tests read as a device fault: (reason, the line cited)."""
    return [(str(e.fields["reason"]), e.evidence.line) for e in events
            if e.kind == "gpu.accel_error" and str(e.fields["reason"]).startswith("diag_")]


def cuda(events: list[Event]) -> list[tuple[str, int | None]]:
    return [(str(e.fields["error"]), e.evidence.line) for e in events if e.kind == "app.cuda_error"]


# ------------------------------------------------------------------------------------------- the table of reasons


def test_every_dcgm_failure_code_has_a_reason_row() -> None:
    # dcgmError_t runs from DCGM_FR_UNKNOWN (1) to DCGM_FR_UNCORRECTABLE_ROW_REMAP_LIMIT (132), the sentinel after
    table = dcgm_errors()
    assert sorted(table) == list(range(1, 133))
    assert {table[c].reason_class for c in (51, 56, 59, 64, 65, 66)} <= DCGM_REASONS_NOT_RUN  # CUDA and API calls
    assert (table[52].reason_class, table[79].reason_class, table[4].reason_class) == ("memory",) * 3
    assert (table[14].reason_class, table[3].reason_class, table[40].reason_class) == ("nvlink", "pcie", "thermal")


@pytest.mark.parametrize(("message", "name"), [
    (f"GPU 0 Error using CUDA API cuCtxCreate {TRIAGE} Unable to create CUDA context: 'out of memory'.",
     "DCGM_FR_CUDA_API"),
    (BUSY_224, "DCGM_FR_API_FAIL_GPU"),
    ("Couldn't allocate at least 95.0% of GPU memory on GPU 1 " + TRIAGE, "DCGM_FR_MEMORY_ALLOC"),
    ("Persistence mode for GPU 0 is disabled. Enable persistence mode by running \"nvidia-smi -i <gpuId> -pm 1 \" as "
     "root.", "DCGM_FR_PERSISTENCE_MODE"),
    (FAULTY, "DCGM_FR_FAULTY_MEMORY"),
    # DCGM 3's words for a code DCGM 4 words anew (aliases)
    ("Found 2 faulty memory elements on GPU 3", "DCGM_FR_FAULTY_MEMORY"),
    ("Detected clock throttling due to thermal violation in GPU 2.", "DCGM_FR_CLOCKS_EVENT_THERMAL"),
    # cut by the table mid-word, a space lost at a cut in the copy
    ("GPU 0 Error using CUDA API cuCtxCreate Check DCGM and system logs for errors. Reset GPU. R"
     "estart DCGM. Rerun diagnostics. Unable to cre" "ate CUDA context", "DCGM_FR_CUDA_API"),
    ("A memory mismatch was detected on GPU 0, but no error was reported byCUDA or NVML.", "DCGM_FR_MEMORY_MISMATCH"),
    # the code's words first: the detail quotes another code's (the test ran out of memory while ECC errors were
    # counted), the message's own code decides
    ("Error using CUDA API cudaMalloc Check DCGM and system logs for errors. Detected 2 volatile double-bit ECC "
     "error(s) in GPU 0.", "DCGM_FR_CUDA_API"),
])
def test_a_reason_is_the_code_whose_words_come_first(message: str, name: str) -> None:
    found = diag_reason(message)
    assert found is not None and found.name == name


@pytest.mark.parametrize("message", [
    "GPU 0: the memory test found a problem.",
    "GPU 1 Allocated 15568304202 bytes (98.3%)",  # an Info row's words, no code's
    "Unknown",  # too few of a code's words to say it
    "Thermal violations totaling 13.3 second",  # a message cut before its code's words end
])
def test_near_miss_words_of_no_code_are_no_reason(message: str) -> None:
    assert diag_reason(message) is None


# ------------------------------------------------------------------------------------------------------ the table


def test_a_memory_test_that_could_not_use_the_gpu_found_no_memory_fault() -> None:
    lines = [row("GPU Memory", "Pass - GPU: 1"), row("", "Fail - GPU: 0"), *reason("Warning", BUSY_224),
             row("Diagnostic", "Pass - All")]
    events = read(lines)
    assert diag_faults(events) == []
    # what it is instead: the CUDA error the reason quotes, at the failed result's own line
    assert ("unavailable", 2) in cuda(events)


def test_a_memory_test_that_found_faulty_memory_is_the_gpus_memory() -> None:
    lines = [row("GPU Memory", "Pass - GPU: 1"), row("", "Fail - GPU: 0"), *reason("Warning", FAULTY)]
    assert diag_faults(read(lines)) == [("diag_memory_failed", 2)]


def test_dcgm_4_a_gpu_that_could_not_run_and_one_that_failed_with_no_reason() -> None:
    alloc = "Couldn't allocate at least 95.0% of GPU memory on GPU 0 " + TRIAGE
    lines = [row("memory", "Fail"), row("", "GPU0: Fail"), *reason("Warning: GPU0", alloc), row("", "GPU1: Pass")]
    assert diag_faults(read(lines)) == []
    # GPU 1 failed too, with no reason printed: read as the test says (at GPU 1's own result)
    lines[-1] = row("", "GPU1: Fail")
    assert diag_faults(read(lines)) == [("diag_memory_failed", len(lines))]


def test_dcgm_4_a_device_reason_beside_a_setup_one_is_the_device() -> None:
    lines = [row("memory", "Fail"), row("", "GPU0: Fail"),
             *reason("Warning: GPU0", "Couldn't allocate at least 95.0% of GPU memory on GPU 0 " + TRIAGE),
             *reason("Warning: GPU0", "Found 12 faulty memory elements on GPU 0 Run a field diagnostic on the GPU.")]
    assert diag_faults(read(lines)) == [("diag_memory_failed", 2)]


@pytest.mark.parametrize("after", [
    # the next test's reasons are its own: the memory test's failure, with none, stands
    [row("Diagnostic", "Fail - All"), *reason("Warning", BUSY_224)],
    # the table stopped: rows after another line are no reasons of the test's
    ["dcgmi diag finished", *reason("Warning", BUSY_224)],
])
def test_near_miss_reasons_outside_the_tests_block_decide_nothing(after: list[str]) -> None:
    lines = [row("GPU Memory", "Fail - GPU: 0"), *after]
    assert diag_faults(read(lines)) == [("diag_memory_failed", 1)]


def test_a_tests_held_reasons_are_bounded() -> None:
    # more reasons than a block holds: the ones past the cap are not read, so the setup reason at the end decides
    # nothing and the failure stands
    many = [r for i in range(40) for r in reason("Info", f"GPU 0 note {i} of the run")]
    lines = [row("GPU Memory", "Fail - GPU: 0"), *many, *reason("Warning", BUSY_224)]
    assert diag_faults(read(lines)) == [("diag_memory_failed", 1)]


def test_the_same_output_reads_the_same() -> None:
    lines = [row("GPU Memory", "Fail - GPU: 0"), *reason("Warning", BUSY_224), row("Memtest", "Fail - GPU: 0"),
             *reason("Warning", FAULTY)]
    first = read(lines)
    assert [(e.kind, e.evidence.line, e.fields) for e in first] == [
        (e.kind, e.evidence.line, e.fields) for e in read(lines)]
    assert diag_faults(first) == [("diag_memtest_failed", len(lines) - 2)]


# ------------------------------------------------------------------------------------------------------- the JSON


def _json(warning: str, code: int) -> list[str]:
    return ['"name" : "memory",', '"results" : [', "{", '"entity_id" : 0,', '"status" : "Fail",', '"warnings" : [',
            "{", '"error_category" : 6,', f'"error_id" : {code},', '"error_severity" : 4,',
            f'"warning" : "{warning}"', "}", "]", "}", "]"]


def test_json_a_memory_test_whose_warning_says_it_could_not_run() -> None:
    events = read(_json(BUSY_224, 65))
    assert diag_faults(events) == []
    assert ("unavailable", 5) in cuda(events)


@pytest.mark.parametrize(("warning", "code"), [
    (FAULTY, 52),
    # the code decides where the words are no code's
    ("GPU 0: the memory test found a problem.", 83),
])
def test_json_a_memory_test_whose_warning_names_a_fault(warning: str, code: int) -> None:
    assert diag_faults(read(_json(warning, code))) == [("diag_memory_failed", 5)]


# --------------------------------------------------------------------------------------------------- the verdict


def test_a_diagnostic_that_could_not_use_the_gpu_names_no_memory_fault(make_bundle: BundleMaker) -> None:
    lines = [row("GPU Memory", "Pass - GPU: 1"), row("", "Fail - GPU: 0"), *reason("Warning", BUSY_224)]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": "\n".join(lines) + "\n"})))
    assert v.root_cause is None or v.root_cause.category != "gpu.memory"
    lines[-len(reason("Warning", BUSY_224)):] = reason("Warning", FAULTY)
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": "\n".join(lines) + "\n"}, name="faulty")))
    assert v.root_cause is not None and v.root_cause.category == "gpu.memory"


def test_near_miss_a_structured_logs_warning_level_is_no_word_of_the_reader() -> None:
    # a JSON log's level (`"level": "warning"`) is no dcgmi JSON key: as a prefilter word it made every such line of
    # a structured log a candidate read in Python (947 of a 200,000-line log's lines, none before the reader)
    from firstfault.extract.gpu import DcgmDiagExtractor

    line = '{"time": "2026-11-02T10:00:07Z", "level": "warning", "logger": "trainer", "msg": "step 42 took 9 ms"}'
    assert not any(w in line for w in DcgmDiagExtractor.literals)
    assert any(w in '      "warning" : "GPU 0 Error using CUDA API cuCtxCreate",' for w in DcgmDiagExtractor.literals)
