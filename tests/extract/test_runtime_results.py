"""The other accelerator runtimes' result codes read as CUDA's errors are (catalog/cuda.yaml `runtime_results`,
extract/codes.py runtime_result_of): oneAPI Level Zero's ze_result_t (oneapi-src/level-zero include/ze_api.h), Unified
Runtime's ur_result_t (oneapi-src/unified-runtime include/unified-runtime/ur_api.h), HIP's codes with no CUDA twin
(ROCm/HIP include/hip/hip_runtime_api.h) and Intel Gaudi's synStatus (HabanaAI/HCL dependencies/synapse/include/
synapse_common_types.h), each a CUDA error of its row's class: the device's memory an OOM, a lost or reset device a
symptom, a module the job built that does not build for the device its configuration, the rest symptoms.
"""

from __future__ import annotations

import pytest

from firstfault.catalog.tables import RUNTIME_PREFIXES, runtime_result_table
from firstfault.extract.codes import ACCEL_OOM_PHRASES, runtime_result_of
from tests.extract.helpers import APP_AND_NCCL, alone, last_line, scan

# ------------------------------------------------------------------ the table


def test_each_runtimes_values_are_whole_and_unique() -> None:
    rows = runtime_result_table()
    by_api: dict[str, set[int]] = {}
    for row in rows.values():
        assert row.name.startswith(RUNTIME_PREFIXES[row.api])
        codes = by_api.setdefault(row.api, set())
        assert row.code not in codes, row
        codes.add(row.code)
    # ze_api.h v1.17: 61 values besides success and the end marker; ur_api.h: 82; synapse_common_types.h: 1..47
    assert len(by_api["level_zero"]) == 61 and len(by_api["unified_runtime"]) == 82
    assert by_api["synapse"] == set(range(1, 48))
    assert by_api["hip"] == {1052, 1053}


def test_the_device_memory_rows_are_the_ooms_and_the_hosts_are_not() -> None:
    rows = runtime_result_table()
    assert {n for n, r in rows.items() if r.cuda_class == "oom"} == {
        "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
        "UR_RESULT_ERROR_MEM_OBJECT_ALLOCATION_FAILURE", "synOutOfDeviceMemory", "synFailedToAllocateDeviceMemory"}
    assert rows["ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY"].cuda_class == rows["synOutOfHostMemory"].cuda_class == "other"
    # the two read before the table by the accelerator-OOM phrases agree with it
    assert "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY" in ACCEL_OOM_PHRASES
    assert "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY" in ACCEL_OOM_PHRASES


# ------------------------------------------------------------------ the lines

ONECCL = ["terminate called after throwing an instance of 'ccl::v1::exception'",
          # uxlfoundation/oneCCL#174 (oneCCL 2021.15 on Aurora)
          "  what():  oneCCL: ze_call.cpp:43 do_call: EXCEPTION: ze error at zeMemGetAddressRange, code: "
          "ZE_RESULT_ERROR_UNKNOWN"]


def test_oneccls_level_zero_error_is_a_cuda_style_error_of_its_class() -> None:
    drafts = [d for d in scan(APP_AND_NCCL, ONECCL, "application") if d.kind.startswith(("app.", "nccl."))]
    assert [(d.kind, d.fields.get("error"), d.fields.get("cuda_error")) for d in drafts] == [
        ("app.cuda_error", "other", "ZE_RESULT_ERROR_UNKNOWN")]


@pytest.mark.parametrize(("line", "cls", "name"), [
    # SYCL's report of a Unified Runtime result, as codes.py's OOM phrase cites it, with ur_api.h's value 20
    ("RuntimeError: Native API failed. Native API returns: 20 (UR_RESULT_ERROR_DEVICE_LOST)", "unavailable",
     "UR_RESULT_ERROR_DEVICE_LOST"),
    # the same report of a program the device could not build (ur_api.h 41)
    ("RuntimeError: Native API failed. Native API returns: 41 (UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE)", "config",
     "UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE"),
    # Level Zero's module build failure (ze_api.h 0x70000004) as a program checking zeModuleCreate prints it
    ("RuntimeError: zeModuleCreate failed with ZE_RESULT_ERROR_MODULE_BUILD_FAILURE", "config",
     "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE"),
    # the Habana PyTorch bridge's synStatus by number (catalog/exceptions.yaml's own quote): synFail, 26
    ("RuntimeError: synStatus 26 [Generic failure]. Graph compile failed.", "other", "synFail"),
    # opea-project/GenAIExamples#137: every card already acquired (synNoDeviceFound, 8): the job's device choice
    ("RuntimeError: synStatus=8 [Device not found] Device acquire failed.", "device_choice", "synNoDeviceFound"),
])
def test_a_runtime_result_reads_as_a_cuda_error_of_its_class(line: str, cls: str, name: str) -> None:
    drafts = last_line(line)
    assert [(d.kind, d.fields.get("error"), d.fields.get("cuda_error")) for d in drafts] == [
        ("app.cuda_error", cls, name)]


def test_the_device_memory_by_synapses_name_is_the_accelerators_oom() -> None:
    assert [d.kind for d in last_line("RuntimeError: Device allocation failed: synOutOfDeviceMemory")] == [
        "app.cuda_oom"]


@pytest.mark.parametrize("text", [
    "zeInit returned ZE_RESULT_SUCCESS",  # success: no row
    "UR_RESULT_ERROR_NOT_A_RESULT",  # no value of the enum
    "synStatus=0 [Success]",  # synSuccess
    "synchronizing the streams (resynchronize every 10 steps)",  # words, not a name
    "ZE_RESULT_ERROR_DEVICE_LOSTX",  # not the whole name
])
def test_near_miss_no_result(text: str) -> None:
    assert runtime_result_of(text) is None


def test_near_miss_a_runtime_result_in_a_warning_record_is_no_event() -> None:
    # a glog warning record the program goes on from (written here in glog's header), as a CUDA error's would be
    line = ("W1204 10:00:00.000000 1 copy.cpp:12] zeCommandListAppendMemoryCopy returned "
            "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, falling back to copy engine 0")
    assert [d for d in alone(line) if d.kind == "app.cuda_error"] == []
