"""A CUDA error of the `config` class in cudaGetErrorString's words alone (catalog/cuda.yaml `alone`).

A kernel's own error check, a CUDA extension or a framework's status often writes the runtime's message after words
of its own, with no `CUDA error:` before it. The messages of the `config` rows are CUDA's own and name the job's build
or launch (an architecture the build has no code for, a launch the device cannot run), so they are read wherever they
stand whole. The fault classes stay anchored: once a context is dead every later call, a destructor's clean-up among
them, returns the same words, which say nothing of where the fault began. Lines from public threads, not the corpus.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import analyze
from tests.conftest import BundleMaker, workload_ending
from tests.extract import helpers


def _cuda(line: str) -> list[tuple[object, object]]:
    return [(e.fields.get("error"), e.fields.get("cuda_code")) for e in helpers.events([line])
            if e.kind in ("app.cuda_error", "app.cuda_oom")]


@pytest.mark.parametrize(
    "line",
    [
        # mmcv's deformable convolution kernel check, printed on every call (xinntao/EDVR#171)
        "error in modulated_deformable_im2col_cuda: no kernel image is available for execution on the device",
        # XLA's status for the same launch under JAX (YoshitakaMo/localcolabfold#26, its title)
        "RuntimeError: Unknown: no kernel image is available for execution on the device",
        # a C++ program's own check (kysucix/fusibile#15)
        "Error: no kernel image is available for execution on the device",
    ],
)
def test_a_build_for_another_architecture_in_cudas_words_alone(line: str) -> None:
    assert _cuda(line) == [("config", 209)]


def test_the_verdict_is_the_jobs_cuda_configuration(make_bundle: BundleMaker) -> None:
    line = "RuntimeError: Unknown: no kernel image is available for execution on the device"
    v = analyze(str(make_bundle({"app/rank-0.log": line + "\n"}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "app.exception.cuda_config"


@pytest.mark.parametrize(
    "line",
    [
        # PyCUDA's clean-up as the garbage collector frees memory on a dead context (its CUDAPP_CALL_GUARDED_CLEANUP):
        # the sticky fault's words from a destructor, no anchor
        "cuMemFree failed: an illegal memory access was encountered",
        # a probe for peer access a program falls back from (217 stays anchored)
        "Warning: peer access is not supported between these two devices, using staged copies",
        # words any program may say (9 stays anchored)
        "argparse: error: invalid configuration argument --foo",
    ],
)
def test_near_miss_fault_words_and_common_words_alone_are_no_cuda_error(line: str) -> None:
    assert _cuda(line) == []


@pytest.mark.parametrize(
    ("line", "want"),
    [
        # a call the installed driver lacks, after a program's own words
        ("cuStreamBeginCaptureToGraph: API call is not supported in the installed CUDA driver", ("driver", 36)),
        # an MPS client refused by its daemon, after a program's own words
        ("init failed: MPS client failed to connect to the MPS control daemon or the MPS server", ("unavailable", 805)),
    ],
)
def test_cudas_own_long_words_for_the_driver_and_the_os_are_read_alone(line: str, want: tuple[str, int]) -> None:
    # driver-class and symptom-class rows whose message no other program prints (catalog/cuda.yaml `alone`; 304's
    # under a native exception: test_native_terminal.py)
    assert _cuda(line) == [want]


def test_near_miss_the_c_librarys_words_that_cuda_shares_are_not_read_alone() -> None:
    # 801's `operation not supported` is EOPNOTSUPP's strerror: any program prints it
    assert _cuda("rsync: [receiver] set_acl: operation not supported") == []
