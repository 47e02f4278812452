"""CUDA's `usage` class (catalog/cuda.yaml): a call the workload made that CUDA refused for what it passed.

cudaErrorInvalidResourceHandle (400, "a resource handle passed to the API call was not valid") and the stream-capture
codes 900-908 ("the operation is not permitted when the stream is capturing", ...) name the calling program in the
enum's own words (CUDA Runtime API, group__CUDART__TYPES, enum cudaError). Read on a rank's line, they are the job's
exception (rule app-cuda-usage), where nothing of the device or the node failed first. cudaErrorInvalidValue (1,
"invalid argument") stays a symptom: the driver returns it for a platform that is not set up as well (a multinode
fabric allocation, a ROCm device in a container), and the corpus holds such threads with no cause found.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import analyze
from tests.conftest import XID79, BundleMaker, workload_ending
from tests.extract import helpers

# vllm-project/vllm#52778 (the description's one-line block): CustomAllreduce's cudaIpcOpenMemHandle on a peer of
# another node
_IPC_HANDLE = "Cuda error /workspace/csrc/custom_all_reduce.cuh:143 'invalid resource handle'"
# vllm-project/vllm#19034 (the PR description): pplx-kernels' intranode all-to-all
_PPLX = "Failed: Cuda error /app/pplx/csrc/all_to_all/intranode.cpp:84 'invalid resource handle'"
# ROCm/hip#3876 (the description's log): a collective's stream synchronised during vLLM's HIP graph capture
_CAPTURE = ("[rank0]:[E1030 15:32:32.970893361 ProcessGroupNCCL.cpp:2055] [PG ID 5 PG GUID 51 Rank 0] Process group "
            "watchdog thread terminated with exception: HIP error: operation not permitted when stream is capturing")
# NVIDIA/nvbandwidth#44 (the description): cuMemSetAccess refused across two nodes with IMEX running; no cause found
_INVALID_VALUE = ("[CUDA_ERROR_INVALID_VALUE] invalid argument in expression cuMemSetAccess((CUdeviceptr) buffer, "
                  "roundedUpAllocationSize, &desc, 1 ) on gpub200-nom6ae0518, rank = 8 in "
                  "MultinodeMemoryAllocationUnicast::MultinodeMemoryAllocationUnicast(size_t, int)()")
# NCCL's own report of a CUDA call it made (misc/utils.h CUDACHECK: `Cuda failure 'msg'`, src/include/checks.h)
_NCCL_CUDA = "node-01:1234:1300 [0] NCCL WARN Cuda failure 'invalid resource handle'"


def _failed() -> dict:
    """The test workload, failed, with no window: the quoted lines keep the threads' own dates."""
    wl = workload_ending("FAILED")
    del wl["workload"]["window"]
    return wl


def _cuda(line: str) -> list[tuple[str, object, object]]:
    return [(e.kind, e.fields.get("error"), e.fields.get("cuda_code")) for e in helpers.events([line])
            if e.kind.startswith(("app.cuda", "nccl."))]


@pytest.mark.parametrize(("line", "code"), [(_IPC_HANDLE, 400), (_PPLX, 400), (_CAPTURE, 900)])
def test_a_refused_call_is_read_as_usage(line: str, code: int) -> None:
    assert _cuda(line) == [("app.cuda_error", "usage", code)]


@pytest.mark.parametrize("line", [_IPC_HANDLE, _PPLX, _CAPTURE])
def test_the_verdict_is_the_workloads_call(make_bundle: BundleMaker, line: str) -> None:
    v = analyze(str(make_bundle({"app/rank-0.log": line + "\n"}, _failed())))
    assert v.attributed_domain == "software"
    assert v.root_cause is not None and v.root_cause.category == "app.exception.cuda_usage"


def test_invalid_argument_names_no_cause(make_bundle: BundleMaker) -> None:
    # near miss: 1's words come from a platform not set up for the call too (nvbandwidth#44 stays open)
    assert _cuda(_INVALID_VALUE) == [("app.cuda_error", "other", 1)]
    v = analyze(str(make_bundle({"app/rank-8.log": _INVALID_VALUE + "\n"}, _failed())))
    assert v.attributed_domain == "unknown" and v.root_cause is None


def test_nccls_cuda_failure_is_ncclss_not_the_workloads(make_bundle: BundleMaker) -> None:
    # near miss: the same words in NCCL's CUDACHECK report are a CUDA call NCCL made (the NCCL table's), no usage
    assert _cuda(_NCCL_CUDA) == [("nccl.error", None, None)]
    v = analyze(str(make_bundle({"app/rank-0.log": _NCCL_CUDA + "\n"}, _failed())))
    assert v.root_cause is None or v.root_cause.category != "app.exception.cuda_usage"


def test_a_gpu_that_fell_off_the_bus_explains_it(make_bundle: BundleMaker) -> None:
    # near miss: a handle that stops being valid because its GPU is gone is the device's fault
    rank2 = "2026-11-02T10:05:01Z " + _IPC_HANDLE + "\n"
    alone = analyze(str(make_bundle({"app/rank-2.log": rank2}, workload_ending("FAILED"), name="alone")))
    assert alone.root_cause is not None and alone.root_cause.category == "app.exception.cuda_usage"
    v = analyze(str(make_bundle({"nodes/node-02/kern.log": XID79, "app/rank-2.log": rank2},
                                workload_ending("FAILED"), name="xid")))
    assert v.attributed_domain == "hardware"
