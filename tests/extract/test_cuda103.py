"""Mechanisms behind the first-run misses of wild batches b212, b214 and b216 (issue 25), each tested on lines other
than the bundles', through the real extractors: tensorview's CUDA check (spconv, cumm), a CUDA status check in an
assertion's words (FAISS, the C library's assert), and a program the job asked the OS to run that is not there.

Each block names the mechanism, where its lines come from, and the look-alikes that must not match.
"""

from __future__ import annotations

import pytest

from tests.extract.helpers import TB
from tests.extract.test_b7pass import feed  # every extractor, as the scanner runs them, on an application log


def _cuda(lines: list[str]) -> list[tuple[str, object]]:
    return [(e.kind, e.fields.get("error")) for e in feed(lines) if e.kind in ("app.cuda_error", "app.cuda_oom")]


def _exc(lines: list[str]) -> list[tuple[str, object, object]]:
    return [(e.kind, e.fields.get("setup"), e.fields.get("errno")) for e in feed(lines) if e.kind == "app.exception"]


# ---------------------------------------------------------------- tensorview's TV_CHECK_CUDA_ERR (spconv, cumm)
# `<file> <line>` then `cuda execution failed with error <N>` and, in _V2, cudaGetErrorString's words: the number (and
# the message where printed) read by the CUDA table.


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        # traveller59/spconv#262: spconv 2's indice kernel, its error on the line after the file's
        (["RuntimeError: /io/build/temp.linux-x86_64-3.8/spconv/build/src/spconv/indice.cu 274",
          "cuda execution failed with error 700 an illegal memory access was encountered",
          "prepareSubMGridKernel failed"], [("app.cuda_error", "illegal_address")]),
        # spconv 1.x's TV_CHECK_CUDA_ERR prints the number alone (mmdetection3d's vendored spconv under CUDA 11.8)
        (["RuntimeError: /mmdet3d/ops/spconv/src/indice_cuda.cu 124", "cuda execution failed with error 2"],
         [("app.cuda_oom", None)]),
    ],
)
def test_tensorview_cuda_check_is_read_by_the_cuda_table(lines: list[str], expected: list[tuple[str, object]]) -> None:
    assert _cuda(lines) == expected


def test_near_miss_a_program_of_its_own_cuda_execution_code_is_no_cuda_error() -> None:
    # a Rust kernel wrapper's own status number (`Apex CUDA execution failed with error code: 5`), no cudaError_t
    assert _cuda(["Error: Apex CUDA execution failed with error code: 5"]) == []


# ---------------------------------------------------------------- a CUDA status check in an assertion's words
# FAISS's FAISS_ASSERT_FMT / FAISS_THROW_IF_NOT_FMT (`'err == cudaSuccess' failed`) and glibc's assert: the message
# after the checked expression decides, as after glog's `Check failed:`.


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # faiss/gpu/StandardGpuResources.cpp since 1.7.1: the allocator's words for cudaMalloc's result
        ("RuntimeError: Error in virtual void* faiss::gpu::StandardGpuResourcesImpl::allocMemory(const "
         "faiss::gpu::AllocRequest&) at /project/faiss/faiss/gpu/StandardGpuResources.cpp:530: Error: 'err == "
         "cudaSuccess' failed: StandardGpuResources: alloc fail type TemporaryMemoryBuffer dev 0 space Device stream "
         "0x5581 size 4294967296 bytes (cudaMalloc error out of memory [2])", [("app.cuda_oom", None)]),
        # faiss/gpu/utils/DeviceUtils.h CUDA_VERIFY through FAISS_ASSERT_FMT
        ("Faiss assertion 'err__ == cudaSuccess' failed in void faiss::gpu::runL2Norm(...) at "
         "/project/faiss/faiss/gpu/impl/L2Norm.cu:280; details: CUDA error 209 no kernel image is available for "
         "execution on the device", [("app.cuda_error", "config")]),
        # the C library's assert on a status: no error said
        ("bench: bench.cu:41: int main(): Assertion `err == cudaSuccess' failed.", [("app.cuda_error", "other")]),
    ],
)
def test_an_assertion_on_a_cuda_status_is_read_by_its_message(line: str, expected: list[tuple[str, object]]) -> None:
    assert _cuda([line]) == expected


def test_near_miss_a_pinned_host_allocation_is_no_accelerator_oom() -> None:
    # faiss/gpu/StandardGpuResources.cpp: cudaHostAlloc's `out of memory` is the host's
    line = ("RuntimeError: Error in void faiss::gpu::StandardGpuResourcesImpl::initializeForDevice(int) at "
            "/project/faiss/faiss/gpu/StandardGpuResources.cpp:335: Error: 'err == cudaSuccess' failed: failed to "
            "cudaHostAlloc 268435456 bytes for CPU <-> GPU async copy buffer (error 2 out of memory)")
    assert _cuda([line]) == [("app.cuda_error", "other")]


def test_near_miss_an_assertion_on_another_value_is_no_cuda_error() -> None:
    assert _cuda(["python: x.c:12: main: Assertion `n == expected' failed."]) == []


# ---------------------------------------------------------------- a program the job asked the OS to run
# ENOENT / EACCES where exec(2) itself raised (subprocess's child, os.py's _execvpe, an os.exec* call under the
# innermost frame): the job's set-up, never its I/O or the storage's.


@pytest.mark.parametrize(
    "lines",
    [
        # a launcher's mpirun missing from the image's PATH, through subprocess
        [TB, '  File "/opt/conda/lib/python3.10/subprocess.py", line 971, in __init__',
         "    self._execute_child(args, executable, preexec_fn, close_fds,",
         '  File "/opt/conda/lib/python3.10/subprocess.py", line 1863, in _execute_child',
         "    raise child_exception_type(errno_num, err_msg, err_filename)",
         "FileNotFoundError: [Errno 2] No such file or directory: 'mpirun'"],
        # a direct exec of a shell (a launcher's own), the call under the innermost frame
        [TB, '  File "/app/launch.py", line 40, in main', "    os.execvpe('deepspeed', argv, env)",
         '  File "/usr/lib/python3.8/os.py", line 583, in _execvpe',
         "    exec_func(fullname, *argrest)",
         "PermissionError: [Errno 13] Permission denied: '/usr/local/bin/deepspeed'"],
        [TB, '  File "/app/run.py", line 12, in main', "    os.execve('/bin/bash', ['/bin/bash', '-c', cmd], env)",
         "FileNotFoundError: [Errno 2] No such file or directory: '/bin/bash'"],
    ],
)
def test_a_program_exec_could_not_run_is_the_jobs_setup(lines: list[str]) -> None:
    got = _exc(lines)
    assert len(got) == 1 and got[0][1] is True and got[0][2] in ("ENOENT", "EACCES")


def test_near_miss_a_file_the_program_opened_stays_its_io() -> None:
    got = _exc([TB, '  File "/app/train.py", line 9, in main', "    with open('/data/shard-0.bin', 'rb') as f:",
                "FileNotFoundError: [Errno 2] No such file or directory: '/data/shard-0.bin'"])
    assert len(got) == 1 and got[0][1] is None and got[0][2] == "ENOENT"
