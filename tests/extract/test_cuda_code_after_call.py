"""A CUDA error given by its number after the call that returned it, or after its own message.

extract/codes.py finds a CUDA error by message, by name or by number; a number only counts where it is the
error's: the number a named CUDA call `returned` (never the call's own arguments: `cuInit(0)`), or a number in
parentheses right after the table's message for that very number (`... combination (error 803)`). The lines are
real (the thread in each comment); the near misses are lines that look alike and must not be read so.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import analyze
from firstfault.extract import codes, exceptions
from tests.conftest import BundleMaker, workload_ending
from tests.extract import helpers


@pytest.mark.parametrize(
    ("text", "code", "cls"),
    [
        # triton-inference-server/server#2245 (NGC container start-up check on a driver older than the container's)
        ("       [[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]", 804, "driver"),
        # the same check, the other wording of the NGC banner: ai-dynamo/nixl#441
        ("   [[ System has unsupported display driver / cuda driver combination (error 803) ]]", 803, "driver"),
        # szcompressor/cuSZ#43 ("an issue of CUDA driver configuration", the maintainer)
        ("CUDA API failed at src/cusz.cu:154 with error: initialization error (3)", 3, "unavailable"),
        # numba/numba#8638 (the title: the error as numba prints it): 999 from cuInit, the driver that could not
        # start CUDA (catalog/cuda.yaml `at_init`)
        ("CudaSupportError: Error at driver init: Call to cuInit results in CUDA_ERROR_UNKNOWN (999):", 999, "driver"),
        # NVIDIA/multi-gpu-programming-models' CUDA_RT_CALL (its common headers: `ERROR: CUDA RT call "%s" in line %d of
        # file %s failed with %s (%d).`), filled with another call and the runtime's message for 2: the named CUDA
        # call lets a message shorter than an unanchored one count, where its number agrees
        ('ERROR: CUDA RT call "cudaMallocHost(&buf, size)" in line 120 of file jacobi.cu failed with out of memory '
         '(2).', 2, "oom"),
    ],
)
def test_the_number_a_call_returned_or_that_follows_its_message(text: str, code: int, cls: str) -> None:
    err = codes.cuda_error_of(text)
    assert err is not None and (err.code, err.cls) == (code, cls)


@pytest.mark.parametrize(
    "text",
    [
        # triton-inference-server/server#6413: TensorRT's words, no call's result and no table message before the
        # number (the thread shows the job failed for another reason: this line must not be read as the driver's)
        "E1011 08:02:59.085540 1 logging.cc:40] [runtime.cpp::isCudaInstalledCorrectly::38] Error Code 6: Internal "
        "Error (CUDA initialization failure with error 35. Please check your CUDA installation:  "
        "http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html)",
        # NVIDIA/nvidia-container-toolkit's start-up failure (the words `initialization error`, no CUDA number)
        "nvidia-container-cli: initialization error: nvml error: driver not loaded",
        # the cuSZ line with another number: the number and the message before it must agree
        "CUDA API failed at src/cusz.cu:154 with error: initialization error (4)",
        # a message too short to stand without an anchor word, followed by its number
        "unknown error (999)",
        # ... and after a call that is not CUDA's (libc's malloc), or CUDA's call with a number not the message's
        'ERROR: call "malloc(size)" in line 120 of file jacobi.cu failed with out of memory (2).',
        'ERROR: CUDA RT call "cudaMallocHost(&buf, size)" in line 120 of file jacobi.cu failed with out of memory '
        '(3).',
    ],
)
def test_a_number_that_is_not_the_errors_own_is_no_cuda_error(text: str) -> None:
    assert codes.cuda_error_of(text) is None


def test_the_call_s_arguments_are_not_its_result() -> None:
    # triton-inference-server/server#2245 again: before, `(0)` was read as the code (no such error: unknown)
    err = codes.cuda_error_of("[[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]")
    assert err is not None and err.code == 804
    # a call that returned 0 names no error of the table (success is no error's number)
    nothing = codes.cuda_error_of("[[CUDA Driver UNAVAILABLE (cuInit(0) returned 0)]]")
    assert nothing is not None and nothing.code is None


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("       [[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]", 804),
        ("   [[ System has unsupported display driver / cuda driver combination (error 803) ]]", 803),
        ("CUDA API failed at src/cusz.cu:154 with error: initialization error (3)", 3),
    ],
)
def test_the_lines_reach_the_exception_extractor_and_become_cuda_errors(line: str, code: int) -> None:
    ex = exceptions.ExceptionExtractor()
    assert helpers.holds_literal(ex, line)
    drafts = helpers.scan(helpers.APPLICATION, [line], "application")
    assert [(d.kind, d.fields.get("cuda_code")) for d in drafts] == [("app.cuda_error", code)]


def test_a_zeroed_twin_of_a_quiet_line_is_still_read() -> None:
    # The memo of quiet lines is keyed by the line with its digits zeroed (extract/exceptions.py): a line whose number
    # agrees with its message must not be taken for its twin whose number does not.
    quiet = "CUDA API failed at src/cusz.cu:154 with error: initialization error (0)"
    loud = "CUDA API failed at src/cusz.cu:154 with error: initialization error (3)"
    drafts = helpers.scan(helpers.APPLICATION, [quiet, loud], "application")
    assert [d.fields.get("cuda_code") for d in drafts if d.kind == "app.cuda_error"] == [3]


# HAMi-core, the vGPU layer under a HAMi pod, logging a driver call's failure with its CUresult (`<call> failed
# res=<N>`): the number is the call's result, read by the CUDA table.
@pytest.mark.parametrize(
    ("line", "kind", "code"),
    [
        # Project-HAMi/HAMi-core#94 (https://github.com/Project-HAMi/HAMi-core/issues/94): the pod's allocation refused,
        # CUDA_ERROR_OUT_OF_MEMORY
        ("[HAMI-core ERROR (pid:208 thread=139663880746752 allocator.c:121)]: cuMemoryAllocate failed res=2",
         "app.cuda_oom", None),
        # another result (201, CUDA_ERROR_INVALID_CONTEXT; the words a public HAMi write-up quotes:
        # `cuMemoryAllocate failed res=201`): since the table holds the whole CUresult enum, that CUDA error by its
        # number, of class other (a symptom), no OOM
        ("cuMemoryAllocate failed res=201", "app.cuda_error", 201),
    ],
)
def test_a_driver_calls_failure_with_its_result(line: str, kind: str, code: int | None) -> None:
    drafts = helpers.scan(helpers.APPLICATION, [line], "application")
    assert [(d.kind, d.fields.get("cuda_code")) for d in drafts] == [(kind, code)]


@pytest.mark.parametrize(
    "line",
    [
        # Project-HAMi/HAMi-core#67 (https://github.com/Project-HAMi/HAMi-core/issues/67): HAMi-core's own bookkeeping,
        # no driver call's result
        "[HAMI-core ERROR (pid:27 thread=140685756022784 allocator.c:166)]: remove_chunk  a_list length is 0 res=0",
        # a call that is no CUDA call's (no `cu` and a capital) failing with a result
        "curl_easy_perform failed res=2",
        "custom_alloc failed res=2",
    ],
)
def test_a_result_after_no_cuda_call_is_no_cuda_error(line: str) -> None:
    assert codes.cuda_error_of(line) is None


def test_a_vgpu_allocation_refused_in_a_failed_job_is_the_accelerators_memory(make_bundle: BundleMaker) -> None:
    log = ("[HAMI-core Info(27:140685756022784:stream.c:4)]: cuStreamCreate 0x7fffa0dd9248\n"
           "[HAMI-core ERROR (pid:208 thread=139663880746752 allocator.c:121)]: cuMemoryAllocate failed res=2\n")
    v = analyze(str(make_bundle({"app/rank-0.log": log}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "app.cuda_oom"
