"""Classes of input batch b8 showed unread, each tested on real instances from other threads (not the bundle).

Each block names the class, the threads its lines come from (or the software run here), and the look-alikes that
must not match.
"""

from __future__ import annotations

import pytest

from firstfault.extract.prefix import split_prefixes
from tests.extract.test_b7pass import feed  # every extractor, as the scanner runs them, on an application log


def kinds(lines: list[str]) -> list[str]:
    return [e.kind for e in feed(lines)]


# ---------------------------------------------------------------- a failed MPI call in the check macro's words
# The MPICHECK macro of NCCL's examples, copied into FasterTransformer, TensorRT-LLM, SageMaker's herring and many
# benchmarks: `Failed: MPI error <file>:<line> '<error class>'`, printed before exit(1) or thrown as a C++
# exception's what(). The MPI library failed; what made it fail is said elsewhere: a symptom, never a cause.


def test_a_failed_mpi_call_in_the_check_macros_words_is_a_collective_symptom() -> None:
    # run here: Debian's Open MPI 4.1.4, the macro's format (printf "Failed: MPI error %s:%d '%d'"), an MPI_Send
    # to rank 5 of a one-rank world under MPI_ERRORS_RETURN (MPI_ERR_RANK is 6)
    events = feed(["Failed: MPI error mpicheck.c:11 '6'"])
    assert [e.kind for e in events] == ["nccl.error"]


def test_an_mpi_error_stack_is_not_the_check_macro() -> None:
    # NVIDIA/nccl-tests#92: MPICH's own abort (its words `Other MPI error`), read by the launcher's reader, not as
    # the macro's collective symptom
    line = "Abort(3712399) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:"
    assert "nccl.error" not in kinds([line])


# ---------------------------------------------------------------- the TPU allocator's words for HBM exhausted
# The TPU runtime refusing a buffer or a program's reservation in HBM, as PyTorch/XLA, JAX and TensorFlow pass it
# on, with or without the status word: the accelerator's memory (app.cuda_oom).


@pytest.mark.parametrize(
    "line",
    [
        # huggingface/transformers#22328 (PyTorch/XLA FSDP on a v3-8): TensorFlow's op log and the status's cause
        "2023-03-23 02:02:25.057202: E tensorflow/compiler/xla/xla_client/xla_util.cc:90]   OP_REQUIRES failed at "
        "tpu_execute_op.cc:266 : RESOURCE_EXHAUSTED: Attempting to reserve 10.51G at the bottom of memory. That was "
        "not possible. There are 8.97G free, 0B reserved, and 8.97G reservable.",
        "  (0) RESOURCE_EXHAUSTED: Attempting to reserve 10.51G at the bottom of memory. That was not possible. "
        "There are 8.97G free, 0B reserved, and 8.97G reservable.",
        # pytorch/xla#1735: the line after `RuntimeError: Resource exhausted: From /job:tpu_worker/replica:0/task:0:`
        "Attempting to reserve 3.95G at the bottom of memory. That was not possible. There are 1.92G free, 0B "
        "reserved, and 1.92G reservable.; ",
    ],
)
def test_the_tpu_allocators_refusal_is_the_accelerators_memory(line: str) -> None:
    assert kinds([line]) == ["app.cuda_oom"]


def test_a_resource_exhausted_count_without_the_allocators_words_is_no_oom() -> None:
    # tensorflow/tpu#385: the status word alone, counted (the next line, `Ran out of memory in memory space hbm`, is
    # the OOM, read by its own phrase)
    assert "app.cuda_oom" not in kinds(["Status code: Resource exhausted [9x]"])


# ---------------------------------------------------------------- PTX newer than the driver's JIT
# CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): the PTX was written by a toolkit newer than the driver's PTX JIT (a
# container's CUDA newer than the host's driver); a driver upgrade fixes it: the driver class (node.driver).


@pytest.mark.parametrize(
    "line",
    [
        # ComputationalRadiationPhysics/cuda_memtest#31 (CUDA 11.3 on driver 460: "the driver on your system is older")
        "[05/23/2021 18:30:06][computer][0]:ERROR: CUDA error: the provided PTX was compiled with an unsupported "
        "toolchain., line 148, file /var/tmp/pamac-build-user/cuda_memtest/src/cuda_memtest/cuda_memtest.cu",
        # LuxCoreRender/LuxCore#490: the driver API's enum and number
        "RUNTIME ERROR: CUDA driver API error CUDA_ERROR_UNSUPPORTED_PTX_VERSION (code: 222, file: "
        "src/luxrays/utils/cuda.cpp, line: 221): the provided PTX was compiled with an unsupported toolchain.",
    ],
)
def test_ptx_newer_than_the_driver_is_the_driver(line: str) -> None:
    events = [e for e in feed([line]) if e.kind == "app.cuda_error"]
    assert [e.fields.get("error") for e in events] == ["driver"]


def test_ptx_newer_than_the_driver_in_a_cpp_abort_is_the_driver() -> None:
    # fauxpilot/fauxpilot#19 (driver 470 with a CUDA 11.7 build), behind docker compose's service column
    lines = [
        "fauxpilot-triton-1         | terminate called after throwing an instance of 'std::runtime_error'",
        "fauxpilot-triton-1         |   what():  [FT][ERROR] CUDA runtime error: the provided PTX was compiled with "
        "an unsupported toolchain. /workspace/build/fastertransformer_backend/build/_deps/repo-ft-src/src/"
        "fastertransformer/utils/cuda_utils.h:393",
    ]
    events = [e for e in feed(lines) if e.kind == "app.cuda_error"]
    assert [e.fields.get("error") for e in events] == ["driver"]


@pytest.mark.parametrize(
    "line",
    [
        # NVIDIA/CUDALibrarySamples#47 (HPC SDK 21.9 container on an older host driver): cudaGetErrorString's words
        # after the sample's own `Error: `, no CUDA anchor
        "Error: the provided PTX was compiled with an unsupported toolchain.",
        # wilicc/gpu-burn#145 (a CUDA 13.2 build): the driver API's words after gpu-burn's own
        "Couldn't init a GPU test: Error in load module (gpu_burn-drv.cpp:243): the provided PTX was compiled with an "
        "unsupported toolchain.",
    ],
)
def test_ptx_newer_than_the_driver_in_a_programs_own_words_is_the_driver(line: str) -> None:
    events = [e for e in feed([line]) if e.kind == "app.cuda_error"]
    assert [(e.fields.get("error"), e.fields.get("cuda_code")) for e in events] == [("driver", 222)]


def test_near_miss_a_driver_message_no_row_reads_alone_stays_unread() -> None:
    # triton-inference-server/server#2674: a CPU-only server's pinned-memory pool falling back, 35's words with no
    # anchor (the maintainer: only a warning); 35 is no `alone` row, so the line is no CUDA error
    line = ("E0327 01:23:03.175862 1 pinned_memory_manager.cc:202] failed to allocate pinned system memory: CUDA "
            "driver version is insufficient for CUDA runtime version")
    assert [e for e in feed([line]) if e.kind == "app.cuda_error"] == []


def test_a_build_without_the_gpus_kernels_stays_the_workloads() -> None:
    # tensorflow/tensorflow#42428: a binary without code for the GPU is the workload's build, not the driver
    line = ("tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit initialization on GPU:0 "
            "failed. Status: device kernel image is invalid")
    events = [e for e in feed([line]) if e.kind == "app.cuda_error"]
    assert [e.fields.get("error") for e in events] == ["config"]


# ---------------------------------------------------------------- TensorFlow's GPU set-up quoting a CUDA error
# `CUDA runtime implicit initialization on GPU:N failed. Status: <cudaGetErrorString>`: a Python InternalError,
# the C++ session's log, Triton's model loader; the quoted message decides as any CUDA error's.


@pytest.mark.parametrize(
    ("line", "error"),
    [
        # livepeer/lpms#244: the line alone
        ("CUDA runtime implicit initialization on GPU:0 failed. Status: device kernel image is invalid", "config"),
        # tensorflow/tensorflow#48558: a GRID vGPU busy
        ("tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit initialization on GPU:0 "
         "failed. Status: all CUDA-capable devices are busy or unavailable", "unavailable"),
        # tensorflow/tensorflow#19482: the C++ session's log, an error the table does not name
        ("2018-05-31 01:23:40.001338: E tensorflow/core/common_runtime/direct_session.cc:154] Internal: CUDA runtime "
         "implicit initialization on GPU:0 failed. Status: unknown error", "other"),
    ],
)
def test_tensorflows_gpu_set_up_quoting_a_cuda_error(line: str, error: str) -> None:
    events = [e for e in feed([line]) if e.kind == "app.cuda_error"]
    assert [e.fields.get("error") for e in events] == [error]


# ---------------------------------------------------------------- CTranslate2 quoting a CUDA error
# Its CUDA_CHECK: `CUDA failed with error <cudaGetErrorString>` (faster-whisper, CTranslate2's servers): the quoted
# message decides as any CUDA error's.


@pytest.mark.parametrize(
    ("line", "kind", "error"),
    [
        # SYSTRAN/faster-whisper#879: a resource in a state the call cannot use
        ("RuntimeError: CUDA failed with error the operation cannot be performed in the present state",
         "app.cuda_error", "other"),
        # R3gm/SoniTranslate#88: the device's memory
        ("RuntimeError: CUDA failed with error out of memory", "app.cuda_oom", None),
        # SYSTRAN/faster-whisper#776: a fault in a kernel after the initialisation error
        ("  what():  CUDA failed with error unspecified launch failure", "app.cuda_error", "launch_failure"),
    ],
)
def test_ctranslate2_quoting_a_cuda_error(line: str, kind: str, error: str | None) -> None:
    events = [e for e in feed([line]) if e.kind in ("app.cuda_error", "app.cuda_oom")]
    assert [(e.kind, e.fields.get("error")) for e in events] == [(kind, error)]


def test_another_programs_failed_with_error_is_no_cuda_error() -> None:
    # near miss: the same framing about something else
    line = "RuntimeError: Decoding failed with error invalid UTF-8 start byte"
    assert [e for e in feed([line]) if e.kind.startswith("app.cuda")] == []


def test_tensorflows_gpu_set_up_that_succeeded_is_nothing() -> None:
    # tensorflow/tensorflow#19482: the device created, two lines before the failure
    line = ("2018-05-31 01:23:28.378766: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1053] Created TensorFlow "
            "device (/job:localhost/replica:0/task:0/device:GPU:0 with 4744 MB memory) -> physical GPU (device: 0, "
            "name: NVIDIA Tegra X2, pci bus id: 0000:00:00.0, compute capability: 6.2)")
    assert feed([line]) == []


# ---------------------------------------------------------------- pytest's failure report
# pytest marks each line of the exception it reports with `E` in the source's indentation column; the line after
# it is the exception's last line, read as any lone exception line.


def test_pytests_exception_line_is_read_behind_its_marker() -> None:
    # run here: pytest 9 on a test that writes to /dev/full (the two spellings: in the frame and at the call)
    for line in ("E           OSError: [Errno 28] No space left on device",
                 "E       OSError: [Errno 28] No space left on device"):
        assert split_prefixes(line).body == "OSError: [Errno 28] No space left on device"
        events = feed([line])
        assert [(e.kind, e.fields.get("errno")) for e in events] == [("storage.error", "ENOSPC")]


@pytest.mark.parametrize(
    "line",
    [
        # run here: apt-get's error prefix (`apt-get install -s libaio-devx`)
        "E: Unable to locate package libaio-devx",
        # run here: pytest's summary line of the same failure
        "FAILED test_full.py::test_write_to_a_full_device - OSError: [Errno 28] No space left on device",
    ],
)
def test_an_e_that_is_no_pytest_marker_stays(line: str) -> None:
    assert split_prefixes(line).body == line


# ---------------------------------------------------------------- an op the machine cannot build
# DeepSpeed's op builder refusing to JIT-build an op the node cannot build (op_builder/builder.py, two wordings):
# the job's own set-up.


@pytest.mark.parametrize(
    "line",
    [
        # DeepSpeed's missing-ninja wording, as quoted in a deployment's troubleshooting notes
        "RuntimeError: Unable to JIT load the fused_adam op due to ninja not being installed",
        # ... and its compatibility check's (libaio's headers missing), as quoted with its fix `apt install libaio-dev`
        "RuntimeError: Unable to JIT load the async_io op due to it not being compatible due to hardware/software "
        "issue.",
    ],
)
def test_an_op_the_node_cannot_build_is_the_set_up(line: str) -> None:
    events = feed([line])
    assert [(e.kind, e.fields.get("setup")) for e in events] == [("app.exception", True)]


def test_another_frameworks_jit_failure_is_not_the_op_builders() -> None:
    # tensorflow/tensorflow#79798 (a JIT kernel that libdevice was missing for): a status logged, not the set-up row
    line = ("2024-07-26 20:22:35.242597: W tensorflow/core/framework/op_kernel.cc:1828] UNKNOWN: JIT compilation "
            "failed.")
    assert all(not e.fields.get("setup") for e in feed([line]))


# ---------------------------------------------------------------- MPICH's report of a libfabric call that failed
# MPICH's ch4/OFI error stack ends on the libfabric call that failed and fi_strerror() of its return: with an errno
# of the set-up side in a transport's report (EINVAL, ENOMEM) the node, as the job set it up, cannot give the
# transport what it needs: the job's set-up, never the fabric's or a peer's failure.


def test_a_libfabric_call_that_failed_with_a_set_up_errno_is_the_set_up() -> None:
    # uxlfoundation/oneDAL#3741: a CI VM with no usable NIC (PSM3 could not open it; fixed by pinning the fabric to
    # shm/tcp)
    line = ("create_vni_context(2253).....: OFI endpoint open failed (ofi_init.c:2253:create_vni_context:Invalid "
            "argument)")
    events = [e for e in feed([line]) if e.kind == "nccl.error"]
    assert [(e.fields.get("setup"), e.fields.get("errno"), e.fields.get("stack")) for e in events] == [
        (True, "EINVAL", "mpich")]


@pytest.mark.parametrize(
    "line",
    [
        # JCSDA-internal/soca#682: an errno the table does not put on the set-up side
        "3: MPIDI_OFI_mpi_init_hook(1061): OFI addrinfo() failed (ofi_init.c:1061:MPIDI_OFI_mpi_init_hook:No data "
        "available)",
        # pmodels/mpich#6612: no errno at all
        "find_provider(170).........: OFI fi_getinfo() failure",
    ],
)
def test_a_libfabric_call_without_a_set_up_errno_is_not_the_set_up(line: str) -> None:
    assert all(not e.fields.get("setup") for e in feed([line]))


# ---------------------------------------------------------------- the Hugging Face Hub as an object store
# A read that timed out on a connection the hub's file endpoints had accepted is the store's side, as any object
# store's timeout; a connection never made (no route out of the node) is not.


@pytest.mark.parametrize(
    "line",
    [
        # h2oai/h2ogpt#533 ("outage at huggingface"): requests' spelling, the hub's CDN
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='cdn-lfs.huggingface.co', port=443): Read "
        "timed out.",
        # datalab-to/marker#308: urllib3's, the hub's regional CDN under hf.co
        "urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='cdn-lfs-us-1.hf.co', port=443): Read timed "
        "out.",
    ],
)
def test_a_read_that_timed_out_on_the_hub_is_the_stores(line: str) -> None:
    events = feed([line])
    assert [(e.kind, e.fields.get("fs")) for e in events] == [("storage.error", "object_store")]


@pytest.mark.parametrize(
    "line",
    [
        # sgl-project/sglang#5347: a local server's read timeout (no store)
        "urllib3.exceptions.ReadTimeoutError: HTTPConnectionPool(host='0.0.0.0', port=37077): Read timed out. (read "
        "timeout=600)",
        # AUTOMATIC1111/stable-diffusion-webui#17165: huggingface_hub's retry warning on a machine without a route out
        "WARNING:huggingface_hub.utils._http:'(MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): "
        "Max retries exceeded with url: /openai/clip-vit-large-patch14/resolve/main/merges.txt (Caused by "
        "NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7fc30f2ea230>: Failed to establish a new "
        "connection: [Errno 101] Network is unreachable'))\"), '(Request ID: 5f7287e5-2203-46b5-9dcf-e03db5035a99)')' "
        "thrown while requesting HEAD https://huggingface.co/openai/clip-vit-large-patch14/resolve/main/merges.txt",
    ],
)
def test_no_hub_or_no_connection_is_not_the_stores(line: str) -> None:
    assert all(e.kind != "storage.error" for e in feed([line]))


@pytest.mark.parametrize(
    ("line", "want"),
    [
        # huggingface/huggingface_hub#2060: the hub's 503 as huggingface_hub raises it, and requests' own below it
        ("huggingface_hub.utils._errors.HfHubHTTPError: 503 Server Error: Service Temporarily Unavailable for url: "
         "https://huggingface.co/timm/vit_large_patch16_384.augreg_in21k_ft_in1k/resolve/main/model.safetensors",
         [("storage.error", "object_store")]),
        ("requests.exceptions.HTTPError: 503 Server Error: Service Temporarily Unavailable for url: "
         "https://huggingface.co/timm/vit_large_patch16_384.augreg_in21k_ft_in1k/resolve/main/model.safetensors",
         [("storage.error", "object_store")]),
        # the same status logged as a line of its own, without the class (huggingface/datasets#7516's line, in the
        # case requests prints it)
        ("500 Server Error: Internal Server Error for url: https://huggingface.co/api/models/unsloth/"
         "deepseek-r1-distill-qwen-32b-bnb-4bit/commits/main", [("storage.error", "object_store")]),
    ],
)
def test_a_status_the_hubs_files_answered_is_the_stores(line: str, want: list[tuple[str, str]]) -> None:
    assert [(e.kind, e.fields.get("fs")) for e in feed([line])] == want


@pytest.mark.parametrize(
    "line",
    [
        # huggingface/huggingface_hub#2913: the hub's inference router, a service that answers with a model's
        # output, not a store of files
        "huggingface_hub.errors.HfHubHTTPError: 503 Server Error: Service Temporarily Unavailable for url: "
        "https://router.huggingface.co/hf-inference/models/mistralai/Mistral-7B-v0.1",
        # another service's 500 (a Stigg API client's test line): no store named
        "500 Server Error: Internal Server Error for url: https://api.stigg.io/api/v1/customers",
        # the job's own request refused, logged as a line of its own: no server's error, not read alone
        "401 Client Error: Unauthorized for url: https://huggingface.co/api/models/meta-llama/Llama-2-7b-hf",
    ],
)
def test_a_status_of_no_store_or_the_requests_own_is_not_the_stores(line: str) -> None:
    assert all(e.kind != "storage.error" for e in feed([line]))


# ---------------------------------------------------------------- nccl-tests' check of an NCCL call
# nccl-tests print a failed NCCL call as `Test NCCL failure <file>:<line> '<ncclGetErrorString> / <last error>'`:
# NCCL's own result, read as PyTorch's `NCCL error` report is (a symptom; the result it names is kept).


@pytest.mark.parametrize(
    "line",
    [
        # NVIDIA/nccl-tests#219: behind the host the test prints first
        "fengyun: Test NCCL failure common.cu:959 'internal error - please report this issue to the NCCL "
        "developers / '",
        # NVIDIA/nccl-tests#166 (its title): the line alone
        "Test NCCL failure common.cu:958 'internal error - please report this issue to the NCCL developers / '",
    ],
)
def test_nccl_tests_report_of_a_failed_nccl_call_is_an_nccl_error(line: str) -> None:
    events = feed([line])
    assert [(e.kind, e.fields.get("nccl_result")) for e in events] == [("nccl.error", "ncclInternalError")]


@pytest.mark.parametrize(
    "line",
    [
        # NVIDIA/nccl-tests#92: the same check of a CUDA call is the CUDA error's
        "node1: Test CUDA failure common.cu:963 'invalid device ordinal'",
        # NVIDIA/nccl-tests#219: the test's own word that it failed, after the NCCL one
        " .. fengyun pid 3164639: Test failure common.cu:844",
    ],
)
def test_nccl_tests_other_failures_are_not_an_nccl_error(line: str) -> None:
    assert all(not e.kind.startswith("nccl.") for e in feed([line]))


def test_a_glog_check_of_an_nccl_calls_result_is_an_nccl_error() -> None:
    # ppengtang/oicr#10 (https://github.com/ppengtang/oicr/issues/10): Caffe's NCCL_CHECK, a glog CHECK_EQ with
    # ncclGetErrorString after it: NCCL's own result, a symptom as PyTorch's report of it is, not the program's
    # exception
    line = ("F0118 23:24:48.788218 37264 parallel.cpp:135] Check failed: result == ncclSuccess (2 vs. 0)  unhandled "
            "system error. *** Check failure stack trace: ***")
    assert [(e.kind, e.fields.get("nccl_result")) for e in feed([line])] == [("nccl.error", "ncclSystemError")]
    # near miss: the same check of a CUDA call is the CUDA error's (BVLC/caffe's CUDA_CHECK)
    cuda = ("F0118 23:24:48.788218 37264 syncedmem.cpp:71] Check failed: error == cudaSuccess (2 vs. 0)  out of "
            "memory")
    assert all(not e.kind.startswith("nccl.") for e in feed([cuda]))


# ---------------------------------------------------------------- MPICH's abort in its 4.1 words
# MPICH 4.1 and later name the internal function in its fatal error (`Fatal error in internal_Init_thread`), where
# earlier releases named the MPI call (`Fatal error in PMPI_Init`): the rank's MPI library ending it, either way.


def test_mpichs_fatal_error_in_an_internal_function_is_the_ranks_exit() -> None:
    # pmodels/mpich#6612 (mpi4py on GitHub Actions, ch4:ofi)
    events = feed(["Abort(204069007): Fatal error in internal_Init_thread: Other MPI error, error stack:"])
    assert [(e.kind, e.fields.get("by"), e.fields.get("mpi_call")) for e in events] == [
        ("process.signal", "runtime", "internal_Init_thread")]


def test_the_error_stacks_own_frame_is_no_second_exit() -> None:
    # pmodels/mpich#6612: the stack's first frame names the same function without the fatal error's words
    line = ("internal_Init_thread(45784): MPI_Init_thread(argc=(nil), argv=(nil), required=3, provided=0x7fff3aff24d4) "
            "failed")
    assert all(e.kind != "process.signal" for e in feed([line]))


# ---------------------------------------------------------------- the driver older than the CUDA the job needs
# PyTorch's check of the driver's CUDA version (cudaErrorInsufficientDriver, 35, in its words), raised, asserted or
# warned: the node's driver stack (node.driver), as the table's message for 35 is.


@pytest.mark.parametrize(
    "line",
    [
        # IEIT-Yuan/Yuan-2.0#65 (a CUDA 12.1 container on driver 450; fixed by driver 535): the warning at CUDA's start
        "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:124: UserWarning: CUDA initialization: The "
        "NVIDIA driver on your system is too old (found version 11000). Please update your GPU driver by downloading "
        "and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: "
        "https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA "
        "driver. (Triggered internally at /opt/pytorch/pytorch/c10/cuda/CUDAFunctions.cpp:108.)",
        # zai-org/ChatGLM3#100: the exception's line
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11060). Please update your GPU "
        "driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx "
        "Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your "
        "version of the CUDA driver.",
        # ai4d-iasc/trixie#9 (a Slurm cluster, PyTorch 1.x): the AssertionError's message on its own line
        "The NVIDIA driver on your system is too old (found version 10010).",
    ],
)
def test_a_driver_older_than_the_jobs_cuda_is_the_driver(line: str) -> None:
    events = [e for e in feed([line]) if e.kind == "app.cuda_error"]
    assert [e.fields.get("error") for e in events] == ["driver"]


def test_the_same_advice_in_another_message_is_not_the_driver() -> None:
    # ai4d-iasc/trixie#9: PyTorch's advice, the lines after the message, says nothing by itself
    assert feed(["a PyTorch version that has been compiled with your version"]) == []


# ---------------------------------------------------------------- the kernel module's word on a mismatched client
# `NVRM: API mismatch`: a client of the user-space driver of another version than the loaded module (an upgrade
# without a reboot): NVML's LIB_RM_VERSION_MISMATCH in the kernel's words, the node's driver stack.


@pytest.mark.parametrize(
    "line",
    [
        # stackhpc/ansible-slurm-appliance#287 (fixed by a reboot): syslog with its #012 newlines
        "Jun 30 11:07:05 gpu-0 kernel: NVRM: API mismatch: the client has the version 535.54.03, but#012NVRM: this "
        "kernel module has the version 530.30.02.  Please#012NVRM: make sure that this kernel module and all NVIDIA "
        "driver#012NVRM: components have the same version.",
        # saharmor/dalle-playground#104: dmesg, the older wording
        "[ 7386.259769] NVRM: API mismatch: the client has the version 515.48.07, but",
        # Frogging-Family/nvidia-all#394: dmesg, the newer wording that names the client
        "[    9.424670] NVRM: API mismatch: the client 'kwin_wayland' (pid 1005)",
    ],
)
def test_the_kernel_modules_api_mismatch_is_the_driver(line: str) -> None:
    events = feed([line])
    assert [(e.kind, e.fields.get("error")) for e in events] == [("gpu.nvml_error", "driver")]


def test_the_kernel_module_loading_is_nothing() -> None:
    # nvidiavgpuarchive/index#1: the module's banner, before the mismatch
    assert feed(["[    6.252567] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.148.06  Mon May  5 11:36:21 UTC "
                 "2025"]) == []
