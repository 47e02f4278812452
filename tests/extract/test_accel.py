"""Accelerators other than NVIDIA's, in their drivers' and runtimes' own words (catalog/accel.yaml, extract/gpu.py
AccelExtractor): AMD's amdgpu and ROCm runtime, Intel Gaudi's habanalabs, the AWS Neuron runtime; and HIP's errors
read by the CUDA table (extract/codes.py).

Lines marked with a thread are verbatim from that public report; lines marked with a source file follow that file's
format string (the driver's dev_* printer puts `<driver> <pci>: ` before it, as in the threads).
"""

from __future__ import annotations

import copy
import re

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog.tables import accel_table
from firstfault.model import Event
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers
from tests.extract.helpers import assert_cause_with_collective_fallout


def feed(lines: list[str], source: str = "kernel") -> list[Event]:
    return helpers.events(lines, source, file="f.log", node=None if source == "application" else "n1")


claimed = helpers.claimed


def accel(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.fields["accel_class"], e.fields["reason"]) for e in events if e.kind == "gpu.accel_error"]


# ROCm/ROCm#1386 (MI50; the support engineer quotes it as a hardware error)
RAS_FATAL_1386 = ("[ 1358.996458] amdgpu 0000:83:00.0: uncorrectable hardware error(ERREVENT_ATHUB_INTERRUPT) "
                  "detected!")
# ROCm/ROCm#4021 (MI300X, axolotl training: the RAS interrupt, XGMI counts on another GPU, the reset; the ranks'
# RCCL watchdog timeouts follow in the job's log)
RAS_FATAL_4021 = ("[76914.152141] amdgpu 0000:dd:00.0: {1}uncorrectable hardware error(ERREVENT_ATHUB_INTERRUPT) "
                  "detected!")
XGMI_CE_4021 = ("[76914.190522] amdgpu 0000:9d:00.0: {1}socket: 6, die: 1, 1533 new correctable hardware errors "
                "detected in xgmi_wafl block")
RESET_4021 = "[76914.214195] amdgpu 0000:dd:00.0: amdgpu: GPU reset begin!"
RESET_OK_4021 = "[76919.010450] amdgpu 0000:dd:00.0: amdgpu: GPU reset succeeded, trying to resume"
HSA_HANG_4021 = "HW Exception by GPU node-9 (Agent handle: 0x631351bb5a20) reason :GPU Hang"


def test_every_family_loads_with_its_vendor_and_each_row_cites_its_source() -> None:
    t = accel_table()
    assert [(v, d) for v, d, _ in t.families] == [
        ("amd", "amdgpu"), ("amd", "rocr"), ("intel", "habanalabs"), ("intel", "i915"), ("intel", "xe"),
        ("nvidia", "dcgm"), ("nvidia", "nvidia"), ("nvidia", "gpu-burn"), ("nvidia", "cuda_memtest"),
        ("amd", "amd-smi"), ("aws", "neuron"), ("huawei", "cann"), ("tenstorrent", "tt-umd")]
    for _v, _d, rows in t.families:
        assert rows and all(r.printed_by for r in rows)
    assert {b.block: b.accel_class for b in t.ras_blocks}["xgmi_wafl"] == "link"


# ---------------------------------------------------------------- amdgpu


@pytest.mark.parametrize(("line", "expected"), [
    # the global RAS interrupt names no block (ATHUB only carries it): a device error the row cannot place
    (RAS_FATAL_1386, ("other", "ras_fatal")),
    (RAS_FATAL_4021, ("other", "ras_fatal")),
    # amdgpu_ras.c's count of a query, its format (MI300's `socket: ..., die: ...` form is 4021's, above)
    ("amdgpu 0000:c1:00.0: amdgpu: 2 uncorrectable hardware errors detected in umc block",
     ("memory", "ras_uncorrectable")),
    # the XGMI link layer's uncorrectable errors are the GPU-to-GPU interconnect's (amdgpu_ras_blocks)
    ("amdgpu 0000:c1:00.0: amdgpu: socket: 0, die: 1, 3 new uncorrectable hardware errors detected in xgmi_wafl block",
     ("link", "ras_uncorrectable")),
    # ROCm/legacy-rocm-build#5890 (PyTorch on gfx1151), and #2205's older form with the process on the line
    ("[ 5071.443221] amdgpu 0000:c2:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:153 vmid:8 pasid:32772)",
     ("app", "vm_fault")),
    ("[  196.550067] amdgpu 0000:c3:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:12 pasid:32773, for "
     "process rocm-bandwidth- pid 8285 thread rocm-bandwidth- pid 8285)", ("app", "vm_fault")),
    # amdgpu_job.c's format, under the DRM error prefix of older kernels
    ("[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled seq=1234, emitted seq=1236",
     ("hang", "ring_timeout")),
    (RESET_4021, ("hang", "gpu_reset")),
    # smu_cmn.c __smu_cmn_reg_print_error's format
    ("amdgpu 0000:09:00.0: amdgpu: SMU: I'm not done with your previous command: SMN_C2PMSG_66:0x00000013 "
     "SMN_C2PMSG_82:0x00000007", ("firmware", "smu_hang")),
    # amdgpu_smu.c's thermal interrupt
    ("amdgpu 0000:03:00.0: amdgpu: ERROR: GPU over temperature range(SW CTF) detected!",
     ("thermal", "over_temperature")),
    # amdgpu_psp.c psp_hw_start: the security processor not starting, in DRM_ERROR's form (kernels before 6.x) and
    # dev_err's (written here in each format)
    ("[   12.845120] [drm:psp_hw_start [amdgpu]] *ERROR* PSP create ring failed!", ("firmware", "psp_start_failed")),
    ("[   12.845120] amdgpu 0000:c1:00.0: PSP load sos failed!", ("firmware", "psp_start_failed")),
])
def test_amdgpu_rows(line: str, expected: tuple[str, str]) -> None:
    events = feed([line])
    assert accel(events) == [expected]
    e = events[0]
    assert e.fields["vendor"] == "amd" and e.fields["driver"] == "amdgpu"


def test_the_device_is_the_pci_address_after_the_drivers_name() -> None:
    (e,) = feed([RAS_FATAL_4021])
    assert e.fields["pci"] == "0000:dd:00" and e.device == "pci:0000:dd:00"


@pytest.mark.parametrize("line", [
    # amdgpu_psp.c: the optional RAS firmware is not in the package (printed at every load)
    "amdgpu 0000:c1:00.0: amdgpu: RAS: optional ras ta ucode is not available",
    # a recovered reset (ROCm/ROCm#4021), and the newer `GPU reset(N) succeeded!` (amdgpu_device.c)
    RESET_OK_4021,
    "amdgpu 0000:03:00.0: amdgpu: GPU reset(1) succeeded!",
    # the driver killed one wave and went on (amdgpu_job.c)
    "amdgpu 0000:03:00.0: amdgpu: ring gfx_0.0.0 timeout, but soft recovered",
    # an all-clear of a RAS query
    "amdgpu 0000:c3:00.0: amdgpu: no uncorrectable hardware errors detected in umc block",
])
def test_amdgpu_informational_lines_are_understood_and_give_nothing(line: str) -> None:
    assert accel(feed([line])) == []
    assert claimed(line)


def test_a_page_faults_report_lines_are_one_report() -> None:
    # ROCm/legacy-rocm-build#5890: the fault, then the lines that go on with it
    lines = [
        "[ 5071.443221] amdgpu 0000:c2:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:153 vmid:8 pasid:32772)",
        "[ 5071.443237] amdgpu 0000:c2:00.0: amdgpu:   in page starting at address 0x00007ad8780fe000 from client 10",
        "[ 5071.443239] amdgpu 0000:c2:00.0: amdgpu: GCVM_L2_PROTECTION_FAULT_STATUS:0x00800932",
        "[ 5071.443240] amdgpu 0000:c2:00.0: amdgpu: \t Faulty UTCL2 client ID: CPF (0x4)",
        "[ 5071.443243] amdgpu 0000:c2:00.0: amdgpu: \t WALKER_ERROR: 0x1",
        "[ 5071.443245] amdgpu 0000:c2:00.0: amdgpu: \t MAPPING_ERROR: 0x1",
    ]
    assert accel(feed(lines)) == [("app", "vm_fault")]
    assert all(claimed(line) for line in lines[1:])


def test_corrected_counts_are_informational_and_name_no_cause_even_on_xgmi() -> None:
    assert accel(feed([XGMI_CE_4021])) == [("memory_info", "ras_correctable")]


def test_someone_quoting_the_driver_is_not_the_driver() -> None:
    assert accel(feed(['Bug report: "amdgpu 0000:83:00.0: GPU reset begin!" after every resume'], "application")) == []


def test_a_driver_repeating_one_report_is_one_event() -> None:
    line = "amdgpu 0000:09:00.0: amdgpu: SMU: I'm not done with your previous command!"
    assert len(accel(feed([line, line, line]))) == 1


# ---------------------------------------------------------------- the ROCm runtime, HIP


def test_the_rocm_runtimes_words_in_the_processs_output() -> None:
    # ROCm/legacy-rocm-build#2804 (its title)
    fault = ("Memory access fault by GPU node-2 (Agent handle: 0x5640a8bb1980) on address 0x7feea09c5000. Reason: "
             "Page not present or supervisor privilege.")
    assert accel(feed([fault], "application")) == [("app", "memory_access_fault")]
    assert accel(feed([HSA_HANG_4021], "application")) == [("hang", "gpu_hang")]
    # near miss: another reason of an HW exception is not a hang the row names
    assert accel(feed(["HW Exception by GPU node-9 (Agent handle: 0x1) reason :unknown"], "application")) == []


# HIP's queue error callback (ROCm/clr rocclr/device/rocm/rocdevice.cpp callbackQueue) with hsa_status_string's text:
# ROCm/ROCm#3951 (MI250, PyTorch 2.5 on ROCm 6.2.3, Conv2d with 16 output channels), the newer `Callback: Queue` form
HSA_APERTURE_3951 = (":0:rocdevice.cpp            :2984: 6545699276902 us: [pid:196431 tid:0x7f2301dff640] Callback: "
                     "Queue 0x7f2301400000 aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent "
                     "attempted to access memory beyond the largest legal address. code: 0x29")
# the older `Device::callbackQueue` form (JuliaGPU/AMDGPU.jl#386: an MI250X on LUMI, ROCm 5.0.2, AMDGPU.rand on GPU 2)
HSA_FAULT_AMDGPUJL = (":0:rocdevice.cpp            :2614: 1277591153131 us: 1429 : [tid:0x148a407d7700] "
                      "Device::callbackQueue aborting with error : HSA_STATUS_ERROR_MEMORY_FAULT: Agent attempted to "
                      "access an inaccessible address. code: 0x2b")


def test_the_hip_queue_callbacks_kernel_faults_are_the_processs_own() -> None:
    assert accel(feed([HSA_APERTURE_3951], "application")) == [("app", "memory_aperture_violation")]
    assert accel(feed([HSA_FAULT_AMDGPUJL], "application")) == [("app", "memory_fault")]
    # the same callback for an illegal shader instruction (the output a public IREE reproducer script's comment records)
    illegal = (":0:rocdevice.cpp:2726: 3989311591661 us: [pid:3667426 tid:0x7f73e7bff640] Callback: Queue "
               "0x7f72e5000000 aborting with error : HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: The agent attempted to "
               "execute an illegal shader instruction. code: 0x2a")
    assert accel(feed([illegal], "application")) == [("app", "illegal_instruction")]


def test_the_verdict_on_the_hip_queue_callbacks_aperture_violation(make_bundle: BundleMaker) -> None:
    lines = [HSA_APERTURE_3951, "Aborted (core dumped)"]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": "\n".join(lines) + "\n"})))
    assert v.root_cause is not None and v.root_cause.category == "app.illegal_access"


@pytest.mark.parametrize(
    "line",
    [
        # near miss: the callback's hardware exception names no fault of the kernel's (ROCm/legacy-rocm-build#6023,
        # MI325X decode batches under sglang, every queue aborting; the cause not established)
        ":0:rocdevice.cpp:3586: Callback: Queue 0x7f78cb400000 aborting with error : HSA_STATUS_ERROR_EXCEPTION: An "
        "HSAIL operation resulted in a hardware exception. code: 0x1016",
        # near miss: the status's name in a bug title, no abort
        "Crash with HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION on gfx1030 when training with batch size 16",
        # near miss: the runtime out of resources is no kernel's fault either (`Aborting with error :
        # HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.`)
        "rocdevice.cpp:3583: Aborting with error : HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to "
        "allocate the necessary resources. Available Free mem : 24 MB",
    ],
)
def test_near_miss_other_hsa_statuses_and_quotes_are_no_kernel_fault(line: str) -> None:
    assert accel(feed([line], "application")) == []


def test_hip_errors_are_read_by_the_cuda_table() -> None:
    # PyTorch on ROCm (`HIP error:` where a CUDA build says `CUDA error:`); hipError_t keeps CUDA's numbers and texts
    (e,) = [e for e in feed(["RuntimeError: HIP error: an illegal memory access was encountered"], "application")
            if e.kind == "app.cuda_error"]
    assert e.fields["error"] == "illegal_address"
    oom = feed(["torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.50 GiB.", "hipErrorOutOfMemory"],
               "application")
    assert [e.kind for e in oom] == ["app.cuda_oom", "app.cuda_oom"]


def test_the_other_accelerators_allocators_say_their_devices_memory_ran_out() -> None:
    def kinds(lines: list[str]) -> list[str]:
        return [e.kind for e in feed(lines, "application") if e.kind.startswith("app.")]

    # Intel XPU through PyTorch (c10/xpu/XPUCachingAllocator.cpp's message, as an intel/torch-xpu-ops issue title and
    # a posted traceback quote it), and the oneAPI runtime's code as IPEX/SYCL pass it on (a loguru record of a
    # Lightning run on an Arc B570, open-edge-platform/physical-ai-studio#319, shortened)
    assert kinds(["torch.OutOfMemoryError: XPU out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total "
                  "capacity of 11.93 GiB of which 5.62 MiB is free."]) == ["app.cuda_oom"]
    assert kinds(["RuntimeError: Native API failed. Native API returns: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)"]
                 ) == ["app.cuda_oom"]
    # Apple's MPS allocator and Gaudi's device memory module (HabanaAI/vllm-fork's README quotes the line)
    assert kinds(["RuntimeError: MPS backend out of memory (MPS allocated: 20.48 GiB, other allocations: 146.27 GiB, "
                  "max allowed: 163.20 GiB). Tried to allocate 33.92 GiB on private pool."]) == ["app.cuda_oom"]
    assert kinds(["RuntimeError: [Rank:0] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for size::939524096 "
                  "(896)MB"]) == ["app.cuda_oom"]
    # Gaudi's workspace for a recipe, in the Synapse helpers' fatal record (the format string of HabanaAI/
    # gaudi-pytorch-bridge pytorch_helpers/synapse_helpers/device.cpp get_workspace_buffer, another size), as the
    # bridge raises it
    assert kinds(["RuntimeError: FATAL ERROR :: MODULE:SYNHELPER workspace Allocation of size ::8589934592 failed!"]
                 ) == ["app.cuda_oom"]
    # Ascend's NPUs (xingchensong/TouchNet#100, torch_npu raising it as a RuntimeError) and Cambricon's MLUs (the format
    # string of torch_mlu's caching allocator)
    assert kinds(["RuntimeError: NPU out of memory. Tried to allocate 5.03 GiB (NPU 3; 60.96 GiB total capacity; 49.47 "
                  "GiB already allocated; 49.47 GiB current active; 1.32 GiB free; 57.55 GiB reserved in total by "
                  "PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid "
                  "fragmentation."]) == ["app.cuda_oom"]
    assert kinds(["RuntimeError: MLU out of memory. Tried to allocate 20.00 MiB (MLU 0; 15.74 GiB total capacity; "
                  "14.80 GiB already allocated)"]) == ["app.cuda_oom"]
    # MXNet's GPU storage manager, after cudaMalloc's own status string (apache/mxnet#17126 and deepinsight/
    # insightface#1240, as their reporters posted them)
    assert kinds(["mxnet.base.MXNetError: [18:53:03] src/storage/./pooled_storage_manager.h:157: cudaMalloc failed: "
                  "out of memory"]) == ["app.cuda_oom"]
    assert kinds(["MXNetError: cudaMalloc retry failed: out of memory"]) == ["app.cuda_oom"]
    # ... and not the words in a question about them
    assert "app.cuda_oom" not in kinds(["ValueError: NPU out of memory handling is not configured for this job"])
    # near miss: another status of the same call is no allocation that ran out
    assert "app.cuda_oom" not in kinds(["mxnet.base.MXNetError: [09:12:40] src/storage/./pooled_storage_manager.h:157: "
                                        "cudaMalloc failed: invalid device ordinal"])
    # near misses: the same helpers' debug record of an empty workspace, and a sparse solver's own workspace on the
    # host (MUMPS's INFO(1) = -5 text, as its users' wrappers print it)
    assert "app.cuda_oom" not in kinds(["PT_SYNHELPER_DEBUG workspace Allocation of size is zero"])
    assert "app.cuda_oom" not in kinds(["RuntimeError: Problem of REAL workspace allocation of size 120000 during "
                                        "analysis"])
    # near misses: the host's memory in the same runtimes' words is no device's, and another code of the same enum
    # is no allocation
    assert "app.cuda_oom" not in kinds(["RuntimeError: Native API failed. Native API returns: 38 "
                                        "(UR_RESULT_ERROR_OUT_OF_HOST_MEMORY)"])
    assert "app.cuda_oom" not in kinds(["RuntimeError: Native API failed. Native API returns: 20 "
                                        "(UR_RESULT_ERROR_DEVICE_LOST)"])


def test_the_rapids_allocators_say_the_devices_memory_ran_out() -> None:
    def kinds(lines: list[str]) -> list[str]:
        return [e.kind for e in feed(lines, "application") if e.kind.startswith("app.")]

    # RMM's out_of_memory as cuDF raises it (the what() of rapidsai/rmm cpp/include/rmm/error.hpp over the format of
    # RMM_CUDA_TRY_ALLOC in detail/error.hpp), cut before CUDA's status name as a RAPIDS blog post on cudf-polars
    # quotes it: RMM's own words decide, not the status after them
    assert kinds(["MemoryError: std::bad_alloc: out_of_memory: CUDA error (failed to allocate 576000000 bytes) at: "
                  "/tmp/conda-bld-output/bld/rattler-build_librmm/work/cpp/include/rmm/mr/"
                  "cuda_async_view_memory_resource.hpp:87: cudaErrorMemoryAlloc"]) == ["app.cuda_oom"]
    # a pool's limit (RMM_FAIL in an arena's size_to_grow), through the Spark plugin's JNI as a Java error
    assert kinds(["java.lang.OutOfMemoryError: Could not allocate native memory: std::bad_alloc: out_of_memory: RMM "
                  "failure at:/build/_deps/rmm-src/include/rmm/mr/device/arena_memory_resource.hpp:158: Maximum pool "
                  "size exceeded"]) == ["app.cuda_oom"]
    # CuPy's memory pool (the format of cupy/cuda/memory.pyx OutOfMemoryError)
    assert kinds(["cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: "
                  "0 bytes)."]) == ["app.cuda_oom"]
    # near misses: C++'s own bad_alloc is the host's allocator, and a program's `Out of memory allocating` without
    # CuPy's account of what it holds names no device
    assert "app.cuda_oom" not in kinds(["terminate called after throwing an instance of 'std::bad_alloc'",
                                        "  what():  std::bad_alloc"])
    assert "app.cuda_oom" not in kinds(["RuntimeError: Out of memory allocating 4096 bytes for the parse buffer"])


def test_hip_names_are_cudas_and_the_hip_runtimes_info_trace_is_no_error() -> None:
    def errs(line: str) -> list[object]:
        return [e.fields["error"] for e in feed([line], "application") if e.kind == "app.cuda_error"]

    # hipError_t's names follow CUDA's (ROCm/HIP hip_runtime_api.h; hipify maps cudaErrorNoKernelImageForDevice
    # to hipErrorNoBinaryForGpu and cudaErrorECCUncorrectable to hipErrorECCNotCorrectable): the HIP runtime's
    # error-level record (level 1) of a call's return is read by the CUDA table. Constructed in the log's layout.
    assert errs(":1:hip_module.cpp           :678 : 795019406319 us: [pid:3785  tid:0x1546faa1c080] "
                "hipLaunchKernel: Returned hipErrorInvalidDeviceFunction :") == ["config"]
    assert errs("RuntimeError: HIP error: hipErrorNoBinaryForGpu") == ["config"]
    assert errs("hipMemcpy failed: hipErrorECCNotCorrectable") == ["ecc"]
    # near misses: the runtime's info trace (level 3) of every call's return, a benign one among them: each
    # library without code for a GPU says so on the way to the one that has it (verbatim from AMD_LOG_LEVEL=3
    # traces users posted; a user's wrapper script filters this very line as a known ROCm warning), and the
    # info trace of a call that succeeded (verbatim from ROCm/ROCm#4208's trace)
    assert errs(":3:hip_platform.cpp         :703 : 95708404094 us: [pid:2117053 tid:0x7ca06301e740] init: "
                "Returned hipErrorNoBinaryForGpu : continue parsing remaining modules") == []
    assert errs(":3:hip_device_runtime.cpp   :670 : 795019737325 us: [pid:3785  tid:0x1546faa1c080] "
                "hipSetDevice: Returned hipSuccess :") == []


def test_the_hip_traces_kernel_launch_that_returned_an_error_is_the_launchs_answer() -> None:
    def errs(line: str) -> list[object]:
        return [e.fields["error"] for e in feed([line], "application") if e.kind == "app.cuda_error"]

    # ROCm/ROCm#4208 (MI250X, AMD_LOG_LEVEL=3), verbatim: the info trace of the launch itself; the kernel never ran
    assert errs(":3:hip_module.cpp           :678 : 795019406319 us: [pid:3785  tid:0x1546faa1c080] "
                "hipLaunchKernel: Returned hipErrorInvalidDeviceFunction :") == ["config"]
    # the module API's launch in the same trace layout (clr hipamd/src/hip_module.cpp; pid and time filled in)
    assert errs(":3:hip_module.cpp           :450 : 12345678901 us: [pid:4242  tid:0x7f00aa000000] "
                "hipModuleLaunchKernel: Returned hipErrorIllegalAddress :") == ["illegal_address"]
    # near misses: a launch that succeeded, and another call's error in the trace (a query of a kernel's attributes
    # that a library makes to choose its code path: its answer is the program's to act on), same layout
    assert errs(":3:hip_module.cpp           :678 : 795019406100 us: [pid:3785  tid:0x1546faa1c080] "
                "hipLaunchKernel: Returned hipSuccess :") == []
    assert errs(":3:hip_module.cpp           :390 : 795019406200 us: [pid:3785  tid:0x1546faa1c080] "
                "hipFuncGetAttributes: Returned hipErrorInvalidDeviceFunction :") == []


# ---------------------------------------------------------------- habanalabs


def test_habanalabs_heartbeat_and_reset() -> None:
    # drivers/accel/habanalabs/common/device.c hl_device_heartbeat and hl_device_reset
    assert accel(feed(["habanalabs hl0: Device heartbeat failed! PCI link is healthy"])) == [
        ("firmware", "heartbeat_failed")]
    assert accel(feed(["habanalabs hl0: Device heartbeat failed! PCI link is broken"])) == [
        ("fallen_off_bus", "heartbeat_link_down")]
    assert accel(feed(["habanalabs 0000:19:00.0: Going to reset device"])) == [("firmware", "hard_reset")]
    (e,) = feed(["habanalabs 0000:19:00.0: Going to reset device"])
    assert e.fields["vendor"] == "intel" and e.device == "pci:0000:19:00"


def test_habanalabs_device_that_would_not_start() -> None:
    # HabanaAI/Setup_and_Install#1: the device CPU not answering at start-up, then the device left out
    lines = [
        "[   72.993087] habanalabs hl2: Failed to communicate with Device CPU (CPU-CP timeout)",
        "[   72.993088] habanalabs hl2: failed to initialize CPU H/W queues -5",
        "[   72.993204] habanalabs hl2: failed to initialize the H/W",
        "[   72.993269] habanalabs 0000:1a:00.0: Failed to initialize hl2. Device is NOT usable !",
    ]
    assert accel(feed(lines)) == [("firmware", "cpu_timeout"), ("firmware", "init_failed")]
    assert claimed(lines[1]) and claimed(lines[2])


@pytest.mark.parametrize(("line", "expected"), [
    # gaudi2_handle_ecc_event's words (drivers/accel/habanalabs/gaudi2/gaudi2.c) after gaudi2_print_event's event
    # name; the name and numbers are ours
    ("habanalabs hl3: DCORE0_TPC0_ECC_DERR: ECC error detected. address: 0x1c0. Syndrom: 0x0. block id 4. critical 1.",
     [("memory", "ecc_critical")]),
    ("habanalabs hl3: DCORE0_TPC0_ECC_SERR: ECC error detected. address: 0x1c0. Syndrom: 0x0. block id 4. critical 0.",
     [("memory_info", "ecc_corrected")]),
    # gaudi_hbm_read_interrupts (drivers/accel/habanalabs/gaudi/gaudi.c; the linux-kernel patch of 2021 that prints
    # it from the firmware's data), and the older release's `ECC: TYPE=` form
    ("habanalabs hl0: HBM1 pc3 interrupts info: WR_PAR=0, RD_PAR=0, CA_PAR=0, SERR=0, DERR=1",
     [("memory", "hbm_derr")]),
    ("habanalabs hl0: HBM1 pc3 ECC: TYPE=2, WR_PAR=0, RD_PAR=0, CA_PAR=0, SERR=1, DERR=1", [("memory", "hbm_derr")]),
    ("habanalabs hl0: HBM1 pc3 interrupts info: WR_PAR=0, RD_PAR=0, CA_PAR=0, SERR=1, DERR=0",
     [("memory_info", "hbm_serr")]),
])
def test_habanalabs_ecc_and_hbm_errors(line: str, expected: list[tuple[str, str]]) -> None:
    assert accel(feed([line])) == expected


@pytest.mark.parametrize("line", [
    # Gaudi1's ECC line names no criticality: neither kind is placed (gaudi.c gaudi_handle_ecc_event)
    "habanalabs hl0: ECC error detected. address: 0x1c0. Syndrom: 0x0. block id 4",
    # an HBM channel's parity bit alone (no ECC bit set): not an ECC error of the table
    "habanalabs hl0: HBM1 pc3 interrupts info: WR_PAR=1, RD_PAR=0, CA_PAR=0, SERR=0, DERR=0",
    # someone quoting the words without the driver's name before them
    "grep 'DERR=1' shows HBM1 pc3 SERR=0, DERR=1 in the log",
])
def test_near_miss_habanalabs_ecc_lines_that_place_no_fault(line: str) -> None:
    assert accel(feed([line])) == []


@pytest.mark.parametrize("line", [
    # drivers/accel/habanalabs/gaudi/gaudi.c: the HBM error's address line after its bits
    "habanalabs hl0: HBM1 pc3 ECC info: 1ST_ERR_ADDR=0x1a2b, 1ST_ERR_TYPE=2, SEC_CONT_CNT=0, SEC_CNT=0, DEC_CNT=1",
    # drivers/accel/habanalabs/common/command_submission.c: a submission refused while the device resets
    "habanalabs hl0: Device is in reset. Can't submit new CS",
    # HabanaAI/Setup_and_Install#1 (the devices that came up)
    "[   43.051361] habanalabs hl1: Successfully loaded firmware to device",
    # drivers/accel/habanalabs/common/device.c hl_device_init's last word
    "habanalabs hl0: Successfully added device 0000:19:00.0 to habanalabs driver",
])
def test_a_habanalabs_informational_line_gives_nothing(line: str) -> None:
    assert accel(feed([line])) == [] and claimed(line)


# ---------------------------------------------------------------- the Neuron runtime


@pytest.mark.parametrize(("name", "expected"), [
    ("NRT_EXEC_HW_ERR_HBM_UE", ("memory", "hbm_ue")),
    ("NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE", ("memory", "hbm_ue_repairable")),
    ("NRT_EXEC_HW_ERR_NC_UE", ("memory", "nc_ue")),
    ("NRT_EXEC_OOB", ("app", "out_of_bounds")),
])
def test_neuron_statuses(name: str, expected: tuple[str, str]) -> None:
    # the names of aws-neuron-sdk's nrt_status.h, as a framework quotes the runtime's status
    line = f"RuntimeError: nrt_execute failed with status {name}"
    assert accel(feed([line], "application")) == [expected]


def test_a_neuron_status_by_its_number_after_the_call() -> None:
    # the runtime's form after the call that failed (aws-neuron/aws-neuron-sdk#351 posts it with 1004); 1201 is
    # NRT_EXEC_HW_ERR_HBM_UE in nrt_status.h
    line = ('Internal: tensorflow/neuron/runtime/direct/adaptor.cc:446:Execute failed: nrt_execute: status=1201, '
            'error message="HBM uncorrectable error".')
    assert accel(feed([line], "application")) == [("memory", "hbm_ue")]


@pytest.mark.parametrize("line", [
    "RuntimeError: nrt_execute failed with status NRT_TIMEOUT",
    # aws-neuron/aws-neuron-sdk#351: 1004, NRT_EXEC_COMPLETED_WITH_ERR, names no device fault
    'Internal: tensorflow/neuron/runtime/direct/adaptor.cc:446:Execute failed: nrt_execute: status=1004, error '
    'message="Execution was completed with other errors".',
])
def test_a_neuron_status_of_no_device_fault_is_no_row(line: str) -> None:
    assert accel(feed([line], "application")) == []


@pytest.mark.parametrize(("line", "expected"), [
    # aws-neuron/aws-neuron-sdk#823 (inf2: the runtime and driver older than the compiler that built the NEFF)
    ("2024-Jan-19 05:03:34.343999 31898:32693 ERROR  NEFF:neff_parse                              NEFF version: 2.0, "
     "features: 0x100 are not supported.  Currently supporting: 0x80000000000000ff", ("driver", "neff_unsupported")),
    # the Neuron runtime FAQ: a framework upgraded without the kernel driver
    ("2021-Aug-11 19:18:21.0661 24616:24616 ERROR   NRT:nrt_init      This runtime requires Neuron Driver version 2.0 "
     "or greater. Please upgrade aws-neuron-dkms package.", ("driver", "driver_too_old")),
])
def test_the_neuron_runtimes_version_checks_are_the_driver(line: str, expected: tuple[str, str]) -> None:
    assert accel(feed([line], "application")) == [expected]


@pytest.mark.parametrize("line", [
    # aws-neuron/aws-neuron-sdk#1071: the runtime's driver layer finding no device it knows (a missing device or a
    # mismatched SDK: the words do not say which)
    "2024-Dec-23 22:35:20.691409 28490:28590 ERROR  TDRV:arch_init                               "
    "Architecture not found 1",
    # huggingface/optimum-neuron#619: a core count the collectives do not support (the job's configuration or the
    # runtime's: open, undecided)
    "2024-Jun-02 04:05:36.428977   273:478   ERROR   NRT:nrt_load_collectives                    Unsupported topology. "
    "Supported number of Neuron Cores is 1, 2, 8, 16 or a multiple of 32.",
])
def test_near_miss_neuron_runtime_words_that_name_no_version(line: str) -> None:
    assert accel(feed([line], "application")) == []


# ---------------------------------------------------------------- Tenstorrent (tt-umd)

# tenstorrent/tt-umd#2927 (n300 CI unit test; gtest prints the exception tt-umd threw opening the chip)
TT_DRAM_FAILED_2927 = 'C++ exception with description "DRAM training failed for channel 2 after 0 retrain attempts.'
# tenstorrent/tt-metal#22236 (4U Galaxy CI after a firmware flash; the exception as pytest shows it)
TT_DRAM_TIMEOUT_22236 = "RuntimeError: Timed out after waiting 30 seconds for for DRAM to finish training"


@pytest.mark.parametrize(("line", "expected"), [
    (TT_DRAM_FAILED_2927, ("memory", "dram_training_failed")),
    # tt-umd device/firmware/wormhole_device_firmware.cpp's terminal form on Wormhole
    ("RuntimeError: DRAM training failed for channel 5; Wormhole cannot retrain it.",
     ("memory", "dram_training_failed")),
    (TT_DRAM_TIMEOUT_22236, ("firmware", "dram_training_timeout")),
    # tt-umd device/chip/chip.cpp's later form (UMD_THROW, milliseconds)
    ("RuntimeError: Timed out after waiting 60000 milliseconds for for DRAM to finish training.",
     ("firmware", "dram_training_timeout")),
    # tt-umd device/firmware/wormhole_device_firmware.cpp: one channel's status never left `none`
    ("RuntimeError: DRAM training for channel 3 timed out after 60000 ms", ("firmware", "dram_training_timeout")),
])
def test_tt_umd_dram_training(line: str, expected: tuple[str, str]) -> None:
    assert accel(feed([line], "application")) == [expected]


def test_near_miss_a_dram_retrain_under_way_is_no_fault() -> None:
    # tt-umd device/chip/chip.cpp's log_warning before it retrains the channel: a failure it retries
    line = ("2025-09-26 17:31:36.352 | warning  |             UMD | DRAM training failed for channel 2, attempting "
            "retrain (1 attempts remaining).")
    assert accel(feed([line], "application")) == [("memory_info", "dram_retrain")]


@pytest.mark.parametrize("line", [
    # tenstorrent/tt-metal#44188 and #29457: tt-metal's own TT_THROW naming a device (the first a tt-metal bug)
    "E       Device 15 init: failed to initialize FW! Try resetting the board.",
    "Device 0: Timeout (10000 ms) waiting for physical cores to finish: (x=25,y=25). (assert.hpp:103)",
    # tenstorrent/tt-inference-server#2893 (a tt-metal bug, fixed in tt-metal#41066)
    "Device 0: Timed out while waiting for active ethernet core (x=24,y=25) to become active again. Try resetting the "
    "board. Minimum tt-firmware version is 18.10.0",
    # tenstorrent/tt-metal#22560: a mesh's chip count asserted by tt-metal's control plane
    "TT_FATAL @ /work/tt_metal/fabric/control_plane.cpp:309: physical_chip_ids.size() == mesh_ew_size",
    # tt-umd device/chip/chip.cpp's own warning that it stopped waiting (no status to read): no failure reported
    "2025-09-26 17:31:36.352 | warning  |             UMD | DRAM training status is not available, breaking the wait "
    "for DRAM training.",
])
def test_near_miss_tt_metal_words_naming_a_device_are_no_row(line: str) -> None:
    assert accel(feed([line], "application")) == []


def test_a_tt_umd_dram_failure_in_a_ranks_output_is_the_memory_with_tenstorrents_action(
        make_bundle: BundleMaker) -> None:
    files = _ranks({"app/rank-4.log": "".join(s + "\n" for s in [*_STEPS[:3], TT_DRAM_FAILED_2927])})
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert v.root_cause is not None and v.root_cause.category == "gpu.memory"
    action = v.root_cause.recommended_action or ""
    assert "tt-smi" in action and not _NVIDIA_ONLY.search(action), action


# ---------------------------------------------------------------- through the engine

_STEPS = [f"2026-11-02 10:0{m}:00,000 INFO step {m}" for m in range(5)]
# RCCL speaks NCCL's words (the watchdog of ROCm/ROCm#4021's ranks)
_TIMEOUT = ("[rank{r}]:[E1102 10:15:20.222288244 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=500045, OpType=_REDUCE_SCATTER_BASE, NumelIn=67108864, "
            "NumelOut=8388608, Timeout(ms)=600000) ran for 600038 milliseconds before timing out.")


def _kern(node: str, lines: list[str]) -> str:
    return "".join(f"Nov  2 10:05:{i:02d} {node} kernel: {t}\n" for i, t in enumerate(lines))


def _ranks(extra: dict[str, str] | None = None) -> dict[str, str]:
    files = {f"app/rank-{r}.log": "".join(s + "\n" for s in [*_STEPS, _TIMEOUT.format(r=r)]) for r in range(6)}
    files.update(extra or {})
    return files


def test_a_ras_error_on_one_node_is_the_cause_and_the_collective_errors_its_symptoms(make_bundle: BundleMaker) -> None:
    umc = "amdgpu 0000:dd:00.0: amdgpu: socket: 0, die: 1, 3 new uncorrectable hardware errors detected in umc block"
    kern = _kern("node-02", [umc, RESET_4021.split("] ", 1)[1], RESET_OK_4021.split("] ", 1)[1]])
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/kern.log": kern, **_ranks()})))
    cats = assert_cause_with_collective_fallout(v, "hardware", "gpu.memory", "node-02")
    # the reset the driver did for that error is its consequence, not a second cause
    assert all(c.category != "gpu.firmware" for c in v.secondary_causes)
    assert cats["gpu.xid.sympathetic"].explained_by == "gpu.memory"


# NVIDIA's tools and workflows (DCGM, the WORKFLOW_* names of the Xid catalog, nvidia-smi, RESTART_BM) on an
# operator's screen for a fault of another vendor's accelerator: the words that must not be there.
_NVIDIA_ONLY = re.compile(
    r"DCGM|dcgmi|WORKFLOW_|nvidia-smi|RESTART_BM|RESET_GPU|CUDA_LAUNCH_BLOCKING|compute-sanitizer")


def test_the_recommended_action_for_another_vendors_fault_is_that_vendors(make_bundle: BundleMaker) -> None:
    umc = "amdgpu 0000:dd:00.0: amdgpu: socket: 0, die: 1, 3 new uncorrectable hardware errors detected in umc block"
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/kern.log": _kern("node-02", [umc]), **_ranks()})))
    assert v.root_cause is not None and v.root_cause.category == "gpu.memory"
    action = v.root_cause.recommended_action or ""
    assert "amd-smi" in action and "node-02" in action and not _NVIDIA_ONLY.search(action), action


def test_the_recommended_action_for_a_neuron_device_fault_is_awss(make_bundle: BundleMaker) -> None:
    # the runtime's HBM error in a rank's output (nrt_status.h's name)
    hbm = "RuntimeError: nrt_execute failed with status NRT_EXEC_HW_ERR_HBM_UE"
    files = _ranks({"app/rank-4.log": "".join(s + "\n" for s in [*_STEPS[:3], hbm])})
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert v.root_cause is not None and v.root_cause.category == "gpu.memory"
    action = v.root_cause.recommended_action or ""
    assert "replace the instance" in action and not _NVIDIA_ONLY.search(action), action


def test_near_miss_an_nvidia_xid_keeps_nvidias_action(make_bundle: BundleMaker) -> None:
    # the same category from an NVIDIA Xid 48 (the DBE line of gpu-memory-xid's own test, its node renamed)
    xid = ("NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) "
           "has been detected on GPU in the framebuffer at physAddr 0x7fffa8860 partition 7, subpartition 1.")
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/kern.log": _kern("node-02", [xid]), **_ranks()})))
    assert v.root_cause is not None and v.root_cause.category == "gpu.memory"
    assert "WORKFLOW_XID_48" in (v.root_cause.recommended_action or "")
    assert "amd-smi" not in (v.root_cause.recommended_action or "")


def test_a_reset_after_an_error_on_the_same_device_names_that_error_as_its_cause() -> None:
    lines = [
        "amdgpu 0000:c1:00.0: amdgpu: [mmhub] page fault (src_id:0 ring:0 vmid:8 pasid:32772)",
        "amdgpu 0000:c1:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=1234, emitted seq=1236",
        "amdgpu 0000:c1:00.0: amdgpu: GPU reset begin!",
        # near miss: another GPU's reset is not this fault's consequence
        "amdgpu 0000:c2:00.0: amdgpu: GPU reset begin!",
    ]
    events = [e for e in feed(lines) if e.kind == "gpu.accel_error"]
    assert [e.fields.get("cause_class") for e in events] == [None, "app", "app", None]
    # near miss: a corrected count is no reset's cause
    events = feed([XGMI_CE_4021.replace("9d:00.0", "dd:00.0"), RESET_4021])
    assert [e.fields.get("cause_class") for e in events] == [None, None]


def test_a_page_fault_then_the_reset_is_the_workloads_illegal_access(make_bundle: BundleMaker) -> None:
    kern = _kern("node-02", ["amdgpu 0000:c1:00.0: amdgpu: [mmhub] page fault (src_id:0 ring:0 vmid:8 pasid:32772)",
                             "amdgpu 0000:c1:00.0: amdgpu: GPU reset begin!"])
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/kern.log": kern, **_ranks()})))
    assert v.root_cause is not None and v.root_cause.category == "app.illegal_access"
    assert not v.candidates and all(c.category != "gpu.firmware" for c in v.secondary_causes)


def test_a_hang_and_a_reset_with_no_other_cause_name_no_cause(make_bundle: BundleMaker) -> None:
    # amdgpu_job.c amdgpu_job_timedout: the DRM scheduler's timer found the job's fence unsignalled; the reset says
    # that the work did not finish, not why (the job's kernel, the driver or its firmware, the device): a symptom,
    # and the verdict's note points at the engine, the device and the process (as ROCm/ROCm#1724's embedding index
    # out of range and llm-scaler#595's oneCCL path hung them)
    kern = _kern("node-03", ["amdgpu 0000:c1:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=1234, emitted seq=1236",
                             "amdgpu 0000:c1:00.0: amdgpu: Process information: process python pid 4242 thread "
                             "python pid 4242",
                             "amdgpu 0000:c1:00.0: amdgpu: GPU reset begin!"])
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-03/kern.log": kern, **_ranks()})))
    assert v.root_cause is None and v.attributed_domain == "unknown"
    assert [s.nodes for s in v.symptoms if s.category == "gpu.hang"] == [["node-03"]]
    note = next(n for n in v.explanation if "reset a hung engine" in n)
    assert "amdgpu" in note and "node-03" in note and "ring gfx_0.0.0 timeout" in note


def test_near_miss_a_hang_reset_after_the_firmware_stopped_answering_is_the_firmware(make_bundle: BundleMaker) -> None:
    # smu_cmn.c's SMU not answering, then the ring timeout on the same device: the firmware's own failure is the cause
    kern = _kern("node-03", ["amdgpu 0000:c1:00.0: amdgpu: SMU: I'm not done with your previous command: "
                             "SMN_C2PMSG_66:0x00000013 SMN_C2PMSG_82:0x00000007",
                             "amdgpu 0000:c1:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=1234, emitted seq=1236",
                             "amdgpu 0000:c1:00.0: amdgpu: GPU reset begin!"])
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-03/kern.log": kern, **_ranks()})))
    assert v.root_cause is not None and v.root_cause.category == "gpu.firmware"
    assert v.root_cause.nodes == ["node-03"] and "amdgpu" in v.root_cause.summary
    assert not any("reset a hung engine" in n for n in v.explanation)


def test_a_firmware_failure_while_the_driver_resets_a_hung_engine_is_the_resets_story() -> None:
    # mes_v11_0.c: the MES asked to remove the hung queue during the reset does not answer; its own failure before
    # any hang (ROCm/ROCm#6017, the test below) is the cause
    lines = ["amdgpu 0000:c1:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=1234, emitted seq=1236",
             "amdgpu 0000:c1:00.0: amdgpu: GPU reset begin!",
             "amdgpu 0000:c1:00.0: amdgpu: MES failed to respond to msg=REMOVE_QUEUE",
             # near miss: another GPU's firmware is no part of this reset
             "amdgpu 0000:c2:00.0: amdgpu: MES failed to respond to msg=REMOVE_QUEUE"]
    events = [e for e in feed(lines) if e.kind == "gpu.accel_error"]
    assert [(e.fields["reason"], e.fields.get("cause_class")) for e in events] == [
        ("ring_timeout", None), ("gpu_reset", None), ("mes_hang", "hang"), ("mes_hang", None)]


def test_firmware_that_stopped_answering_then_the_device_left_the_bus(make_bundle: BundleMaker) -> None:
    # ROCm/ROCm#6017 (4 x W7900 serving models): the MES firmware stopped answering, the driver reset the GPU, the
    # GPU was gone from the bus; one node, one device, hardware
    kern = "".join(f"Mar 03 14:14:04 node-02 kernel: amdgpu 0000:83:00.0: amdgpu: {t}\n" for t in [
        "MES failed to respond to msg=REMOVE_QUEUE",
        "failed to remove hardware queue from MES, doorbell=0x1806",
        "MES might be in unrecoverable state, issue a GPU reset",
        "Failed to evict queue 18",
        "GPU reset begin!. Source:  3",
        "Failed to evict process queues",
        "device lost from bus!",
        "GPU reset end with ret = -19",
    ])
    events = [e for e in feed(kern.splitlines()) if e.kind == "gpu.accel_error"]
    assert [(e.fields["reason"], e.fields.get("cause_class")) for e in events] == [
        ("mes_hang", None), ("gpu_reset", "firmware"), ("lost_from_bus", None)]
    wl = copy.deepcopy(WORKLOAD)
    wl["workload"]["window"] = {"start": "2026-03-03T14:00:00Z", "end": "2026-03-03T15:00:00Z"}
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/kern.log": kern}, wl)))
    assert v.attributed_domain == "hardware"
    assert v.root_cause is not None and v.root_cause.nodes == ["node-02"]
    assert v.root_cause.category in ("gpu.firmware", "gpu.fallen_off_bus")


def test_near_miss_a_recovered_hang_in_a_job_that_went_on(make_bundle: BundleMaker) -> None:
    wl = copy.deepcopy(WORKLOAD)
    wl["workload"]["terminal_state"] = "COMPLETED"
    kern = _kern("node-03", ["amdgpu 0000:c1:00.0: amdgpu: ring gfx_0.0.0 timeout, but soft recovered",
                             "amdgpu 0000:c1:00.0: amdgpu: RAS: optional ras ta ucode is not available"])
    files = {"nodes/node-03/kern.log": kern,
             "app/rank-0.log": "".join(s + "\n" for s in _STEPS)}
    v = Analyzer().analyze_path(str(make_bundle(files, wl)))
    assert v.attributed_domain == "none" and v.root_cause is None


def test_a_neuron_hbm_error_in_a_ranks_output_is_the_memory(make_bundle: BundleMaker) -> None:
    line = "RuntimeError: nrt_execute failed with status NRT_EXEC_HW_ERR_HBM_UE"
    files = _ranks({"app/rank-4.log": "".join(s + "\n" for s in [*_STEPS[:3], line])})
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert v.root_cause is not None and v.root_cause.category == "gpu.memory"
    assert v.root_cause.nodes == ["node-03"]


# ---------------------------------------------------------------- RCCL speaks NCCL's words


def test_rccl_warn_lines_are_read_by_the_nccl_reader_with_their_hipified_paths() -> None:
    # ROCm/rccl#908: RCCL prints NCCL's WARN lines, its source files under a hipify/ build tree
    lines = [
        "sharbox-ultra:204802:204836 [1] /home/elias/rccl/build/release/hipify/src/transport/p2p.cc:220 NCCL WARN "
        "hipIpcGetMemHandle failed : invalid argument",
        "sharbox-ultra:204802:204835 [1] /home/elias/rccl/build/release/hipify/src/misc/socket.cc:57 NCCL WARN "
        "socketProgress: Connection closed by remote peer sharbox-ultra<48295>",
    ]
    events = feed(lines, "application")
    assert [e.kind for e in events][:1] == ["nccl.error"]
    assert events[0].fields["transport"] == "p2p"
    assert all(e.kind.startswith("nccl.") for e in events)
    # the banner names no fault
    assert feed(["RCCL version 2.18.3+hip5.5 develop:6ecf771+"], "application") == []


def test_psp_words_outside_the_driver_are_not_its_failure() -> None:
    """Near miss: the same words without the driver's name before them (a person quoting a bug title, a tool's own
    message) are not the driver's report."""
    assert feed(["ROCm issue: 'PSP create ring failed' after upgrading the kernel, see #2747"]) == []



# ---------------------------------------------------------------- rocm-smi --showrasinfo

# the layout of a posted MI50 run of `sudo rocm-smi --showrasinfo` (a public benchmarking note; its counts 0)
_RAS_HEAD = ["========================= ROCm System Management Interface =========================",
             "===================================== RAS Info =====================================",
             "", "GPU[0]:         RAS INFO",
             "         Block       Status    Correctable Error  Uncorrectable Error  "]


@pytest.mark.parametrize(("rows", "expected"), [
    (["           UMC        ENABLED                  0                    2  "], [("memory", "ras_uncorrectable")]),
    (["     XGMI_WAFL        ENABLED                  0                    1  "], [("link", "ras_uncorrectable")]),
    (["      PCIE_BIF        ENABLED                  0                    1  "], [("pcie", "ras_uncorrectable")]),
    (["           UMC        ENABLED                  5                    0  "], [("memory_info", "ras_correctable")]),
])
def test_rocm_smi_ras_counts(rows: list[str], expected: list[tuple[str, str]]) -> None:
    assert accel(feed([*_RAS_HEAD, *rows], "application")) == expected


@pytest.mark.parametrize("rows", [
    # every count 0, and blocks that print only their status (the posted MI50 run)
    ["           UMC        ENABLED                  0                    0  ",
     "         ATHUB        ENABLED  ", "     XGMI_WAFL       DISABLED  "],
    # a block whose RAS is disabled prints counts that mean nothing (a public parser's sample: 3145680)
    ["           UMC       DISABLED            3145680              3145680"],
    # the row's shape far below any GPU's header
    [*["x"] * 50, "           UMC        ENABLED                  0                    2  "],
])
def test_near_miss_rocm_smi_ras_rows_that_name_no_error(rows: list[str]) -> None:
    assert accel(feed([*_RAS_HEAD, *rows], "application")) == []


def test_rocm_smi_ras_without_its_header_is_not_read() -> None:
    assert accel(feed(["           UMC        ENABLED                  0                    2  "], "application")) == []


def test_a_ranks_rocm_smi_uncorrectable_count_is_the_gpus_memory(make_bundle: BundleMaker) -> None:
    rows = [*_RAS_HEAD, "           UMC        ENABLED                  0                    2  "]
    files = _ranks()
    files["app/rank-2.log"] = "".join(s + "\n" for s in rows) + files["app/rank-2.log"]
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert_cause_with_collective_fallout(v, "hardware", "gpu.memory", "node-02")
    action = v.root_cause.recommended_action or "" if v.root_cause else ""
    assert "amd-smi" in action and not _NVIDIA_ONLY.search(action), action


@pytest.mark.parametrize("line", [
    # ROCm/amdgpu#26 (a KVM guest), RadeonOpenCompute/ROCm#1406-era form; the pr_fmt form of 5.x and later
    # (drivers/gpu/drm/amd/amdkfd/kfd_device.c kgd2kfd_probe); ROCm's install docs' quote without the device's name
    "kfd kfd: skipped device 1002:67df, PCI rejects atomics",
    "[  115.275652] kfd kfd: amdgpu: skipped device 1002:67e3, PCI rejects atomics 730<0",
    "kfd: skipped device 1002:7300, PCI rejects atomics",
])
def test_amdkfd_skipping_a_gpu_for_pcie_atomics_is_the_nodes_driver_stack(line: str) -> None:
    assert accel(feed([line])) == [("driver", "pci_atomics")]


@pytest.mark.parametrize("line", [
    # kfd adding the device (its success line), and amdgpu's own note on atomics, which ROCm does not decide on
    "kfd kfd: amdgpu: added device 1002:740f",
    "[drm] PCIE atomic ops is not supported",
    # the words without kfd before them: someone's prose about the check
    "the GPU was skipped device-wise since PCI rejects atomics on this board",
])
def test_near_miss_kfd_adding_a_gpu_or_prose_about_atomics_is_nothing(line: str) -> None:
    assert accel(feed([line])) == []
