"""A CUDA error from the call that starts CUDA in the process (catalog/cuda.yaml `at_init`, codes.INIT_CALLS).

999 (unknown error, 30 in CUDA's numbering before 10.1) and 500 (named symbol not found) say nothing of their own
from any call; from cuInit, from the runtime's first call cudaGetDeviceCount or from THC's THCudaInit (THCGeneral.c)
they are the driver's answer to being started on the node: its modules or device nodes not all there, a driver left
unusable by a suspend and resume or an update before a reboot, a libcuda that lacks the entry point the runtime asks
for. The same codes from a later call stay the program's or unknown; TensorFlow's `UNKNOWN ERROR (-1)` is no CUDA
code at all. Lines come from the public threads cited beside them.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import analyze
from firstfault.extract import codes
from tests.conftest import BundleMaker, workload_ending


@pytest.mark.parametrize(
    ("line", "code"),
    [
        # numba/numba#8638 (its title: numba's own report of the driver's init)
        ("CudaSupportError: Error at driver init: Call to cuInit results in CUDA_ERROR_UNKNOWN (999):", 999),
        # google/deepvariant#619's form (TensorFlow's stream executor), the site's other line number of TF 2.x
        ("2023-03-15 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: "
         "CUDA_ERROR_UNKNOWN: unknown error", 999),
        # torch/cutorch's THCudaInit in CUDA's numbering before 10.1 (jcjohnson/torch-rnn#204's form, the path ours)
        ("THCudaCheck FAIL file=/opt/torch/extra/cutorch/lib/THC/THCGeneral.c line=70 error=30 : unknown error", 999),
        # PyTorch's device count probe (c10/cuda/CUDAFunctions.cpp), 500 (AUTOMATIC1111 webui-docker#694's form)
        ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
         "NumCudaDevices() that might have already set an error? Error 500: named symbol not found", 500),
        # ... and 999, as torch.cuda's warning (its stack's own line number)
        ("UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
         "functions before calling NumCudaDevices() that might have already set an error? Error 999: unknown error "
         "(Triggered internally at ../c10/cuda/CUDAFunctions.cpp:109.)", 999),
        # ggml's CUDA backend under llama.cpp and Ollama: ggml_cuda_init prints cudaGetDeviceCount's failure
        # (ggml/src/ggml-cuda/ggml-cuda.cu: `%s: failed to initialize " GGML_CUDA_NAME ": %s`): its form
        ("ggml_cuda_init: failed to initialize CUDA: unknown error", 999),
    ],
)
def test_an_unknown_error_from_the_call_that_starts_cuda_is_the_drivers(line: str, code: int) -> None:
    err = codes.cuda_error_of(line)
    assert err is not None and (err.code, err.cls) == (code, "driver")


@pytest.mark.parametrize(
    "line",
    [
        # torch/cutorch#197: error 30 after 300k steps, from a storage call, not the init (a later call's: unknown)
        "luajit: cuda runtime error (30) : unknown error at /tmp/luarocks_cutorch-scm-1-9927/cutorch/lib/THC/"
        "THCStorage.c:113",
        # an unknown error from a kernel's synchronisation, no init call on the line
        "RuntimeError: CUDA error: unknown error",
        # kubeflow/pipelines#4339: TensorFlow's text for a result the driver could not name on a CPU node (no 999)
        "2020-08-07 16:51:03.140369: E tensorflow/stream_executor/cuda/cuda_driver.cc:314] failed call to cuInit: "
        "UNKNOWN ERROR (-1)",
        # a code the row gives no init class: THC's benign device-properties check (pytorch/pytorch's 1.0 RTX
        # warnings' form), invalid argument from THCGeneral.cpp
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=663 error=11 : invalid argument",
    ],
)
def test_near_miss_other_calls_and_other_words_keep_their_class(line: str) -> None:
    err = codes.cuda_error_of(line)
    assert err is None or err.cls != "driver"


def test_the_drivers_init_failure_is_the_nodes_driver(make_bundle: BundleMaker) -> None:
    line = ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
            "NumCudaDevices() that might have already set an error? Error 999: unknown error")
    v = analyze(str(make_bundle({"app/rank-0.log": line + "\n"}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category.startswith("node.driver")


def test_near_miss_an_unknown_error_mid_run_claims_no_driver(make_bundle: BundleMaker) -> None:
    line = ("luajit: cuda runtime error (30) : unknown error at /tmp/luarocks_cutorch-scm-1-9927/cutorch/lib/THC/"
            "THCStorage.c:113")
    v = analyze(str(make_bundle({"app/rank-0.log": line + "\n"}, workload_ending("FAILED"))))
    assert v.root_cause is None or not v.root_cause.category.startswith("node.driver")


def test_ggmls_init_failure_names_cudas_own_message_and_a_near_miss_in_prose_does_not() -> None:
    # the same form with 802 (the node's driver daemons not up: a fabric manager on an NVSwitch machine)
    err = codes.cuda_error_of("ggml_cuda_init: failed to initialize CUDA: system not yet initialized")
    assert err is not None and (err.code, err.cls) == (802, "system_not_ready")
    # a program's own words with no colon and no CUDA message after them name no error
    assert codes.cuda_error_of("warning: failed to initialize CUDA, falling back to the CPU backend") is None


def test_pytorchs_own_words_for_999_read_as_999_from_no_named_call() -> None:
    # pytorch/pytorch#190225 and #197073 (c10/cuda/CUDAFunctions.cpp device_count_impl, `case cudaErrorUnknown`),
    # and its warning form (nanoporetech/dorado#319): CUDA's 999, the line naming no call of INIT_CALLS: `other`
    for line in ("RuntimeError: CUDA unknown error - this may be due to an incorrectly set up",
                 "[W CUDAFunctions.cpp:109] Warning: CUDA initialization: CUDA unknown error - this may be due to an "
                 "incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. "
                 "Setting the available devices to be zero. (function operator())"):
        err = codes.cuda_error_of(line)
        assert err is not None and (err.code, err.cls) == (999, "other"), line


def test_near_miss_a_programs_unknown_error_with_cuda_in_prose_is_no_999() -> None:
    assert codes.cuda_error_of("CUDA unknown error handler registered") is None
