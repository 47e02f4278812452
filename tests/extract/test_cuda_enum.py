"""The CUDA-family status tables read from the libraries' own enums (catalog/cuda.yaml).

`cuda_errors` holds every cudaError_t of the CUDA runtime and every CUresult of the driver API, `cudnn_statuses`
cuDNN 8's and 9's cudnnStatus_t, and HIP (ROCm) reads through the same rows. Each test sends real lines (the thread
in each comment) through the production path (the line extractors; the engine where a verdict is the point) and asserts
what the line becomes: an error of the class the enum's description gives (a sample of rows per class), and near
misses that name an error without reporting one (a compiler's diagnostic, PyTorch's link to the docs, a warning the
program went on after, a strerror after a generic `error code`).
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import analyze
from firstfault.extract import codes
from tests.conftest import BundleMaker, workload_ending
from tests.extract import helpers


def _cuda_events(line: str) -> list[tuple[str, object, object]]:
    """The (kind, class, code) of each CUDA event the line gives, through every line extractor."""
    return [(e.kind, e.fields.get("error"), e.fields.get("cuda_code")) for e in helpers.events([line])
            if e.kind in ("app.cuda_error", "app.cuda_oom")]


@pytest.mark.parametrize(
    ("line", "cls", "code"),
    [
        # config, 9: "a kernel launch is requesting resources that can never be satisfied by the current device"
        # (pytorch/pytorch#48573, https://github.com/pytorch/pytorch/issues/48573; Dao-AILab/causal-conv1d#48)
        ("RuntimeError: CUDA error: invalid configuration argument", "config", 9),
        # ... in PyTorch's THC words of 2019 (open-mmlab/mmdetection#1830)
        ("RuntimeError: cuda runtime error (9) : invalid configuration argument at "
         "mmdet/ops/roi_pool/src/roi_pool_kernel.cu:101", "config", 9),
        # device_choice, 101: "the device ordinal supplied by the user does not correspond to a valid CUDA device", in
        # PyTorch's THC words (wenwenyu/PICK-pytorch#14: --nproc_per_node=4 with CUDA_VISIBLE_DEVICES=1,2)
        ("RuntimeError: cuda runtime error (101) : invalid device ordinal at /pytorch/torch/csrc/cuda/Module.cpp:59",
         "device_choice", 101),
        # config, 218: the PTX the program carries failed to JIT-compile (chelsea0x3b/cudarc#278)
        ('called `Result::unwrap()` on an `Err` value: DriverError(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation '
         'failed")', "config", 218),
        # driver, 221: the driver's PTX JIT library missing (rusty1s/pytorch_sparse#78; JuliaGPU/cuTile.jl#9)
        ("RuntimeError: CUDA error: PTX JIT compiler library not found", "driver", 221),
        ("ERROR: CUDA error: PTX JIT compiler library not found (code 221, ERROR_JIT_COMPILER_NOT_FOUND)", "driver",
         221),
        # config, 34: the toolkit's stub loaded instead of the driver, by the job's own library path
        # (horovod/horovod#3831, its title)
        ("NCCL WARN Cuda failure 'CUDA driver is a stub library'", "config", 34),
        # illegal_address, 717: a kernel's address outside the address spaces its instruction allows
        # (NVIDIA-AI-IOT/CUDA-PointPillars#113; taichi-dev/taichi#6558)
        ("Cuda failure: operation not supported on global/shared address space at line 286 in file "
         "/home/seecar/Documents/pointpillars/pointpillar.cpp error status: 717", "illegal_address", 717),
        ("[E 11/09/22 18:29:11.702 82470] [cuda_driver.h:operator()@88] CUDA Error CUDA_ERROR_INVALID_ADDRESS_SPACE: "
         "operation not supported on global/shared address space while calling stream_synchronize "
         "(cuStreamSynchronize)", "illegal_address", 717),
        # unavailable, 805: the MPS client could not reach the server (NVIDIA/nvidia-container-toolkit#714)
        ("RuntimeError: Unexpected error from cudaGetDeviceCount().  Did you run some cuda functions before calling "
         "NumCudaDevices() that might have already set an error?  Error 805: MPS client failed to connect to the MPS "
         "control daemon or the MPS server.", "unavailable", 805),
        # usage, 900: an op a CUDA graph's capture does not allow (InternLM/lmdeploy#2544; microsoft/onnxruntime#15002)
        ("RuntimeError: CUDA error: operation not permitted when stream is capturing", "usage", 900),
        ("CUDA failure 900: operation not permitted when stream is capturing", "usage", 900),
        # nvlink, 226 (a row of its own now, no longer 220's alias): marin-community/marin#8934
        ("CUDA_ERROR_CONTAINED: Invalid access of peer GPU memory over nvlink or a hardware error", "nvlink", 226),
    ],
)
def test_a_row_of_the_whole_enum_gives_its_class(line: str, cls: str, code: int) -> None:
    assert _cuda_events(line) == [("app.cuda_error", cls, code)]


@pytest.mark.parametrize(
    ("line", "cls", "code"),
    [
        # HIP's own name for 218 (hipErrorInvalidKernelFile; CUDA's is cudaErrorInvalidPtx): lemonade-sdk/
        # llamacpp-rocm#130 (its title) and cupy/cupy#9112 (its title, hipGetErrorString's words after the name)
        ("rocBLAS error from hip error code: 'hipErrorInvalidKernelFile':218", "config", 218),
        ("hipErrorInvalidKernelFile: invalid kernel file", "config", 218),
        # HIP's name built from CUDA's by the mapping rule (hip for cuda): PyTorch on ROCm, pytorch/pytorch#70036
        ("RuntimeError: HIP error: hipErrorNoDevice", "unavailable", 100),
        # hipGetErrorString's words where they are not CUDA's (ROCm/clr hipamd/src/hip_error.cpp): 100's
        ("RuntimeError: HIP error: no ROCm-capable device is detected", "unavailable", 100),
    ],
)
def test_hip_reads_through_the_same_rows(line: str, cls: str, code: int) -> None:
    assert _cuda_events(line) == [("app.cuda_error", cls, code)]


@pytest.mark.parametrize(
    ("line", "cls", "name"),
    [
        # cuDNN 9's finer names (cudnn_graph.h): a sub-library cuDNN could not load, the job's install
        # (nvidia-cosmos/cosmos-transfer1#152; JuliaGPU/CUDA.jl#3205's API log)
        ("RuntimeError: CUDNN_BACKEND_TENSOR_DESCRIPTOR cudnnFinalize failedptrDesc->finalize() cudnn_status: "
         "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED", "config", "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED"),
        ("│ Error: CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED; Reason: xDesc.finalize()", "config",
         "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED"),
        # ... and a kernel whose CUDA runtime call failed, a launch failure (microsoft/onnxruntime#23301)
        ("2025-12-05 01:41:01.838744757 [E:onnxruntime:Default, cudnn_fe_call.cc:33 "
         "CudaErrString<cudnn_frontend::error_object>] execute(handle, plan->get_raw_desc(), "
         "variant_pack_descriptor.get_ptr()) failed with message: , and code: CUDNN_STATUS_EXECUTION_FAILED_CUDART",
         "launch_failure", "CUDNN_STATUS_EXECUTION_FAILED_CUDART"),
    ],
)
def test_cudnn_9_statuses_are_read(line: str, cls: str, name: str) -> None:
    found = [(e.kind, e.fields.get("error"), e.fields.get("cuda_error")) for e in helpers.events([line])
             if e.kind == "app.cuda_error"]
    assert found == [("app.cuda_error", cls, name)]


def test_cudnn_9s_device_allocation_failure_is_the_accelerators_memory() -> None:
    # cuDNN 9's INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED ("Device memory allocation failed", cudnn_graph.h), in the
    # words PyTorch raises a cuDNN status in (aten/src/ATen/cudnn/Exceptions.h); its HOST_ALLOCATION_FAILED is the
    # host's memory, no accelerator OOM
    device = "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"
    host = "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED"
    assert [e.kind for e in helpers.events([device]) if e.kind.startswith("app.cuda")] == ["app.cuda_oom"]
    assert [e.kind for e in helpers.events([host]) if e.kind.startswith("app.cuda")] == []


@pytest.mark.parametrize(
    ("line", "category"),
    [
        # the workload's launch: its build or configuration (pytorch/pytorch#48573)
        ("RuntimeError: CUDA error: invalid configuration argument", "app.exception.cuda_config"),
        # the node's driver stack (rusty1s/pytorch_sparse#78)
        ("RuntimeError: CUDA error: PTX JIT compiler library not found", "node.driver"),
        # a kernel's bad address: the workload's (NVIDIA-AI-IOT/CUDA-PointPillars#113)
        ("Cuda failure: operation not supported on global/shared address space at line 286 in file "
         "/home/seecar/Documents/pointpillars/pointpillar.cpp error status: 717", "app.illegal_access"),
        # the toolkit's stub driver that the job's library path loaded (horovod/horovod#3831, its title)
        ("NCCL WARN Cuda failure 'CUDA driver is a stub library'", "app.exception.cuda_config"),
        # cuDNN of the job's install (nvidia-cosmos/cosmos-transfer1#152)
        ("RuntimeError: CUDNN_BACKEND_TENSOR_DESCRIPTOR cudnnFinalize failedptrDesc->finalize() cudnn_status: "
         "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED", "app.exception.cuda_config"),
        # the devices the job's set-up chose (class device_choice): more ranks than GPUs, torch.distributed.launch
        # --nproc_per_node=2 then torch.cuda.set_device(args.local_rank) (cfzd/Ultra-Fast-Lane-Detection#193) ...
        ("RuntimeError: CUDA error: invalid device ordinal", "app.exception.setup"),
        # ... and a custom all-reduce on two GPUs without peer access between them (NVIDIA/TensorRT-LLM#1625)
        ("[TensorRT-LLM][ERROR] [TensorRT-LLM][ERROR] CUDA runtime error in error: peer access is not supported "
         "between these two devices", "app.exception.setup"),
        # the near miss: 98's `invalid device function`, a build for another architecture, stays the build's
        ("RuntimeError: CUDA error: invalid device function", "app.exception.cuda_config"),
    ],
)
def test_the_class_decides_the_verdict(make_bundle: BundleMaker, line: str, category: str) -> None:
    v = analyze(str(make_bundle({"app/rank-0.log": line + "\n"}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category.startswith(category)


def test_an_mps_connection_failure_names_no_cause(make_bundle: BundleMaker) -> None:
    # 805 says the client could not reach the MPS server, not whether the daemon, the node or the job's setting
    # (CUDA_MPS_PIPE_DIRECTORY) made it so (NVIDIA/nvidia-container-toolkit#714: the job's container, not the host's
    # daemon, was the fix): a symptom, no cause claimed
    line = ("RuntimeError: Unexpected error from cudaGetDeviceCount().  Did you run some cuda functions before calling "
            "NumCudaDevices() that might have already set an error?  Error 805: MPS client failed to connect to the "
            "MPS control daemon or the MPS server.")
    v = analyze(str(make_bundle({"app/rank-0.log": line + "\n"}, workload_ending("FAILED"))))
    assert v.root_cause is None


@pytest.mark.parametrize(
    "line",
    [
        # a compiler's diagnostic that names a code of the enum in the source it builds (ofiwg/libfabric#7655)
        "src/hmem_cuda.c:434:7: error: ‘cudaErrorStubLibrary’ undeclared (first use in this function)",
        # PyTorch-on-ROCm's link to the enum's documentation after the error it raised (ROCm/TheRock#2707)
        "Search for `hipErrorInvalidValue' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__HIPRT__TYPES.html "
        "for more information.",
        # TensorFlow's warning that it could not enable peer access, after which it runs on every GPU
        # (tensorflow/tensorflow#58935; "Does anything actually fail with those warnings? You can still use all 10 GPU
        # devices as normal", tensorflow/tensorflow#14759)
        "2022-12-20 10:48:41.759404: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1690] Unable to enable peer "
        "access between device ordinals 0 and 9, status: Internal: failed to enable peer access from 0x563425ab7f10 "
        "to 0x563429191b60: CUDA_ERROR_TOO_MANY_PEERS: peer mapping resources exhausted",
        # cuDNN's API log of a call that succeeded (JuliaGPU/CUDA.jl#3205)
        "│ Warning: CUDNN_STATUS_SUCCESS; Reason: cuDNN Library configuration is set to AUTO. Automatically "
        "configuring the library mode to FULL.",
        # a CUDA call's name alone, an anchor only where the line reports a failure (the property test of
        # tests/collect/test_scan_properties.py drew the bare word; `failed call to cuInit: ...` stays read)
        "cuInit",
        "  cudaGetLastError()",
    ],
)
def test_a_name_of_the_enum_in_a_line_that_reports_no_failure(line: str) -> None:
    assert _cuda_events(line) == []


def test_a_sticky_error_caught_and_logged_at_info_is_still_read() -> None:
    # the process cannot go on with the GPU after a kernel fault, whatever level the program logs it at: icefall's
    # `Caught exception` records (k2-fsa/icefall#1764, the wild bundle hw-icefall-zipformer-...-1764)
    line = ("2024-10-02 17:24:53,119 INFO [train.py:1060] Caught exception: CUDA error: an illegal memory access was "
            "encountered")
    assert _cuda_events(line) == [("app.cuda_error", "illegal_address", 700)]


@pytest.mark.parametrize(
    "line",
    [
        # EPERM's strerror (the words of CUDA's 800) after a generic `error code`: an errno, not a CUDA error. MySQL's
        # perror (the MySQL Reference Manual's perror page: `$> perror 1 13` / `OS error code 1: Operation not
        # permitted`) and the errno list Hadoop streaming users quote under `PipeMapRed.waitOutputThreads(): subprocess
        # failed with code X`
        "OS error code 1: Operation not permitted",
        "error code 1: Operation not permitted",
    ],
)
def test_a_strerror_after_a_generic_error_code_is_no_cuda_error(line: str) -> None:
    assert codes.cuda_error_of(line) is None
    # ... where CUDA's own anchor stands before the same words, they are CUDA's (InternLM/lmdeploy#2544's family)
    assert codes.cuda_error_of("RuntimeError: CUDA error: operation not permitted") is not None


@pytest.mark.parametrize(
    ("line", "name"),
    [
        # cuSOLVER's kernel that failed to run, as PyTorch raises it (JingwenWang95/KinectFusion#4, its title;
        # pytorch/pytorch#70669) and as CuPy does (cupy/cupy#1365)
        ("RuntimeError: cusolver error: CUSOLVER_STATUS_EXECUTION_FAILED, when calling `cusolverDnSgetrf( handle, m, "
         "n, dA, ldda, static_cast<float*>(dataPtr.get()), ipiv, info)`", "CUSOLVER_STATUS_EXECUTION_FAILED"),
        ("cupy.cuda.cusolver.CUSOLVERError: CUSOLVER_STATUS_EXECUTION_FAILED", "CUSOLVER_STATUS_EXECUTION_FAILED"),
    ],
)
def test_the_math_libraries_statuses_are_rows_of_one_table(line: str, name: str) -> None:
    found = [(e.kind, e.fields.get("error"), e.fields.get("cuda_error")) for e in helpers.events([line])
             if e.kind.startswith("app.")]
    assert found == [("app.cuda_error", "launch_failure", name)]


def test_the_status_a_check_names_is_the_failed_one_not_the_success_it_compares_with() -> None:
    # cuRAND's, behind Caffe's CURAND_CHECK (tingsongyu/cascaded_mobilenet-v2#14, its title): CURAND_STATUS_SUCCESS
    # is no row of the table, the status after it is
    status = codes.library_status_of(
        "Check failed: status == CURAND_STATUS_SUCCESS (201 vs. 0) CURAND_STATUS_LAUNCH_FAILURE")
    assert status is not None and (status.name, status.cls) == ("CURAND_STATUS_LAUNCH_FAILURE", "launch_failure")


@pytest.mark.parametrize(
    "line",
    [
        # a status that names no cause (cuFFT's INTERNAL_ERROR: a build without kernels for the GPU,
        # haoheliu/AudioLDM#49, or memory nearly full, pytorch/pytorch#119420) leaves the exception as it was read
        # before the table held it (pytorch/pytorch#134403)
        "RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR",
        # ... and cuSOLVER's (nerdyrodent/VQGAN-CLIP#143)
        "RuntimeError: cusolver error: CUSOLVER_STATUS_INTERNAL_ERROR, when calling `cusolverDnCreate(handle)`",
    ],
)
def test_a_library_status_of_no_class_leaves_the_exception(line: str) -> None:
    found = [(e.kind, e.fields.get("exc_type")) for e in helpers.events([line]) if e.kind.startswith("app.")]
    assert found == [("app.exception", "RuntimeError")]


def test_a_library_kernel_failure_alone_claims_no_software_cause(make_bundle: BundleMaker) -> None:
    # cuSOLVER's EXECUTION_FAILED is a kernel that failed to run ("This error may appear if the input matrix contains
    # NaN", PyTorch's own words after it; a driver older than the toolkit, kail8/UnsupDIS-pytorch#16): a symptom as
    # CUDA's launch failure is, not the workload's exception (before the table held it, a RuntimeError of the workload)
    line = ("RuntimeError: cusolver error: CUSOLVER_STATUS_EXECUTION_FAILED, when calling `cusolverDnSgetrf( handle, "
            "m, n, dA, ldda, static_cast<float*>(dataPtr.get()), ipiv, info)`")
    v = analyze(str(make_bundle({"app/rank-0.log": line + "\n"}, workload_ending("FAILED"))))
    assert v.root_cause is None or v.root_cause.category != "app.exception"


@pytest.mark.parametrize(
    ("name", "code"),
    [
        # hipError_t names (ROCm/clr hipamd/src/hip_error.cpp's ihipGetErrorName) that are neither CUDA's runtime
        # name with `hip` for `cuda`: the driver API's name in CamelCase (codes.hip_names), case aside (HIP spells
        # 702 hipErrorLaunchTimeOut), or an alias of the row
        ("hipErrorInvalidContext", 201),
        ("hipErrorContextAlreadyCurrent", 202),
        ("hipErrorNoBinaryForGpu", 209),
        ("hipErrorECCNotCorrectable", 214),
        ("hipErrorInvalidHandle", 400),
        ("hipErrorNotFound", 500),
        ("hipErrorLaunchTimeOut", 702),
        ("hipErrorSetOnActiveProcess", 708),
    ],
)
def test_hips_own_spellings_reach_the_cuda_row(name: str, code: int) -> None:
    err = codes.cuda_error_of(f"RuntimeError: HIP error: {name}")
    assert err is not None and err.code == code


def test_a_hip_code_cuda_has_not_is_a_hip_error_of_no_kind() -> None:
    # hipErrorRuntimeMemory (1052: "runtime memory call returned error", ROCm/clr hip_error.cpp) has no CUDA twin: a
    # HIP error is reported, its kind is not said (a symptom, as CUDA's unknown error)
    err = codes.cuda_error_of("RuntimeError: HIP error: hipErrorRuntimeMemory")
    assert err is not None and (err.code, err.cls) == (None, "other")


# --------------------------------------------------------------------------
# ROCm's library statuses (catalog/cuda.yaml `library_statuses`: hipBLAS, rocBLAS, MIOpen) and the whole table's
# line forms
# --------------------------------------------------------------------------

def _library_rows() -> list[tuple[str, str]]:
    from firstfault.catalog.tables import library_status_table
    return [(name, row.cuda_class) for name, row in sorted(library_status_table().items())]


@pytest.mark.parametrize(("name", "cls"), _library_rows())
@pytest.mark.parametrize(
    "form",
    [
        # PyTorch's TORCH_CUDABLAS_CHECK (aten/src/ATen/cuda/CUDABlas.cpp; hipified on ROCm, Comfy-Org/ComfyUI#3698)
        "RuntimeError: CUDA error: {} when calling `hipblasCreate(handle)`",
        # the status alone as the exception's message (aten/src/ATen/miopen/Exceptions.h, ROCm/MIOpen#1994)
        "RuntimeError: {}",
        # a library's error prefix before it (ggml's `ROCm error: CUBLAS_STATUS_INTERNAL_ERROR`, llama.cpp#15244;
        # PyTorch's `cuFFT error: CUFFT_INTERNAL_ERROR`)
        "  ROCm error: {}",
        # after a glog CHECK on the call's status (Caffe's CURAND_CHECK shape)
        "Check failed: status == SUCCESS (7 vs. 0) {}",
    ],
)
def test_every_library_status_is_read_in_each_line_form(name: str, cls: str, form: str) -> None:
    status = codes.library_status_of(form.format(name))
    assert status is not None and (status.name, status.cls) == (name, cls)


@pytest.mark.parametrize(("name", "cls"), _library_rows())
def test_a_library_status_inside_a_longer_identifier_is_none(name: str, cls: str) -> None:
    # a member's name as part of a longer identifier (a macro, a variable, a log key) names no status
    assert codes.library_status_of(f"RuntimeError: CUDA error: {name}_COUNT") is None
    assert codes.library_status_of(f"RuntimeError: CUDA error: x{name}") is None


@pytest.mark.parametrize(
    ("line", "kind", "cls"),
    [
        # hipBLAS's own allocation (the twin of cuBLAS's ALLOC_FAILED): the accelerator's memory
        ("RuntimeError: CUDA error: HIPBLAS_STATUS_ALLOC_FAILED when calling `hipblasCreate(handle)`",
         "app.cuda_oom", None),
        # a hipBLAS kernel that failed to run: a symptom, as CUDA's launch failure
        ("RuntimeError: CUDA error: HIPBLAS_STATUS_EXECUTION_FAILED when calling `hipblasGemmEx( handle, opa, opb, "
         "m, n, k, &falpha, a, HIP_R_16F, lda, b, HIP_R_16F, ldb, &fbeta, c, HIP_R_16F, ldc, HIPBLAS_COMPUTE_32F, "
         "HIPBLAS_GEMM_DEFAULT)`", "app.cuda_error", "launch_failure"),
        # rocBLAS installed without the function's Tensile kernels, and a GPU its build does not support: the job's
        # build for this GPU
        ("RuntimeError: CUDA error: rocblas_status_excluded_from_build when calling `rocblas_gemm_ex(handle, ...)`",
         "app.cuda_error", "config"),
        ("RuntimeError: CUDA error: rocblas_status_arch_mismatch when calling `rocblas_gemm_ex(handle, ...)`",
         "app.cuda_error", "config"),
        # hipFFT's kernel that failed to run, after PyTorch's cuFFT prefix (pytorch/pytorch#76071, its last line)
        ("RuntimeError: cuFFT error: HIPFFT_EXEC_FAILED", "app.cuda_error", "launch_failure"),
    ],
)
def test_rocm_library_statuses_of_a_cuda_class_read_as_cudas(line: str, kind: str, cls: str | None) -> None:
    found = [(e.kind, e.fields.get("error")) for e in helpers.events([line]) if e.kind.startswith("app.")]
    assert found == [(kind, cls)]


@pytest.mark.parametrize(
    "line",
    [
        # hipBLASLt on a GPU its ROCm 6.1 build had no kernels for (Comfy-Org/ComfyUI#3698, its title; fixed by
        # TORCH_BLAS_PREFER_HIPBLASLT=0): NOT_SUPPORTED is "function not implemented", any call the library lacks
        "RuntimeError: CUDA error: HIPBLAS_STATUS_NOT_SUPPORTED when calling `HIPBLAS_STATUS_NOT_SUPPORTED`",
        # ROCm/TheRock#7609's hipBLASLt heuristic query refused for its arguments
        "RuntimeError: CUDA error: HIPBLAS_STATUS_INVALID_VALUE when calling `hipblasLtMatmulAlgoGetHeuristic( "
        "ltHandle, computeDesc.descriptor(), Adesc.descriptor(), Bdesc.descriptor(), Cdesc.descriptor(), "
        "Cdesc.descriptor(), preference.descriptor(), 1, &heuristicResult, &returnedResult)`",
        # MIOpen's unknown error after its own log of the failure (ROCm/MIOpen#1994, ROCm/TheRock#1229)
        "RuntimeError: miopenStatusUnknownError",
    ],
)
def test_a_rocm_library_status_of_no_class_reads_as_the_line_did_without_it(line: str) -> None:
    # the status names no cause: the line is read as it is with a name no table holds (CUDA's anchor: a CUDA error of
    # no kind; no anchor: the workload's exception)
    unknown = line.replace("STATUS_NOT_SUPPORTED", "STATUS_ZZZ").replace("STATUS_INVALID_VALUE", "STATUS_ZZZ")
    unknown = unknown.replace("miopenStatusUnknownError", "miopenStatusZzz")
    assert unknown != line

    def read(text: str) -> list[tuple[str, object]]:
        return [(e.kind, e.fields.get("error")) for e in helpers.events([text]) if e.kind.startswith("app.")]

    assert read(line) == read(unknown) and read(line)


@pytest.mark.parametrize("name", [name for name, cls in _library_rows() if cls == "other"])
def test_every_library_status_of_no_class_decides_nothing(name: str) -> None:
    # a row of class `other` changes no reading: raised, or after CUDA's anchor, the line gives what it gives with a
    # name the table does not hold
    for form in ("RuntimeError: CUDA error: {} when calling `f(handle)`", "RuntimeError: {}"):
        def read(text: str) -> list[tuple[str, object]]:
            return [(e.kind, e.fields.get("error")) for e in helpers.events([text]) if e.kind.startswith("app.")]
        assert read(form.format(name)) == read(form.format("NOSUCHLIB_STATUS_ZZZ"))


def test_a_status_name_in_advice_prose_is_no_failure() -> None:
    # a maintainer's advice that names the status (Comfy-Org/ComfyUI#3698's reply), no exception and no CUDA anchor
    line = ("To avoid HIPBLAS_STATUS_ALLOC_FAILED on this card set TORCH_BLAS_PREFER_HIPBLASLT=0 before starting "
            "the server.")
    assert [e.kind for e in helpers.events([line]) if e.kind.startswith("app.cuda")] == []


@pytest.mark.parametrize(
    ("name", "code"),
    [
        # the runtime names CUDA 12.4 and 12.8 gave four CUresults (driver_types.h, as JCuda's cudaError copies it)
        ("cudaErrorFunctionNotLoaded", 913),
        ("cudaErrorInvalidResourceType", 914),
        ("cudaErrorInvalidResourceConfiguration", 915),
        ("cudaErrorKeyRotation", 916),
    ],
)
def test_the_runtime_names_of_cuda_12s_green_context_errors_reach_their_rows(name: str, code: int) -> None:
    err = codes.cuda_error_of(f"RuntimeError: CUDA error: {name}")
    assert err is not None and (err.code, err.cls) == (code, "other")


@pytest.mark.parametrize(
    ("line", "name"),
    [
        # NCCL 1.x's own tests (test/include/test_utilities.h CURAND_CHK) on a GPU the build has no code for
        # (NVIDIA/nccl#24: Tesla M2070, compute capability 2.0)
        ("CuRAND error 204 at test/include/test_utilities.h:112", "CURAND_STATUS_ARCH_MISMATCH"),
        # NVIDIA's CUDALibrarySamples' CUBLAS_CHECK / CUSOLVER_CHECK (cuBLAS/utils/cublas_utils.h)
        ("cublas error 13 at /src/gemm.cu:88", "CUBLAS_STATUS_EXECUTION_FAILED"),
        ("cusolver error 6 at potrf.cu:41", "CUSOLVER_STATUS_EXECUTION_FAILED"),
        # others' `cuBLAS Error: %d at %s:%d` and `CURAND error %i at line %d in file %s`
        ("cuBLAS Error: 8 at kernels.cu:120", "CUBLAS_STATUS_ARCH_MISMATCH"),
        ("CURAND error 101 at line 33 in file rng.cu", "CURAND_STATUS_NOT_INITIALIZED"),
    ],
)
def test_a_check_macros_numbered_library_status_is_read_by_its_librarys_table(line: str, name: str) -> None:
    status = codes.numbered_library_status(line)
    assert status is not None and status.name == name


@pytest.mark.parametrize(
    "line",
    [
        # cuFFT's numbers are left out (12.x renumbered some of its results)
        "cufft error 5 at fft.cu:10",
        # a number the library's enum has no row of
        "CuRAND error 42 at test/include/test_utilities.h:112",
        # a number that is no status: a count, no check macro's `at <where>`
        "cublas error 13 times in the last hour",
        # a library named in another word (`libcublas error`, `mycurand`) is not the macro's
        "mycurand error 204 at x.cu:1",
    ],
)
def test_a_number_after_a_library_name_is_no_status_outside_the_macros_shape(line: str) -> None:
    assert codes.numbered_library_status(line) is None


def test_a_numbered_arch_mismatch_alone_is_the_jobs_build(make_bundle: BundleMaker) -> None:
    lines = " #      bytes             N    type     time  algbw  busbw    delta\n" \
            " CuRAND error 204 at test/include/test_utilities.h:112\n"
    v = analyze(str(make_bundle({"app/rank-0.log": lines}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "app.exception.cuda_config"


def test_a_numbered_status_of_no_class_claims_nothing(make_bundle: BundleMaker) -> None:
    # cuRAND's LENGTH_NOT_MULTIPLE (105) is the call's arguments: no class, no cause from the line
    v = analyze(str(make_bundle({"app/rank-0.log": "CuRAND error 105 at gen.cu:12\n"}, workload_ending("FAILED"))))
    assert v.root_cause is None or v.root_cause.category != "app.exception.cuda_config"
