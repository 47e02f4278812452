"""A build or an image with no code for the GPU it found, in the program's own words (catalog/exceptions.yaml
`gpu_arch`): read as CUDA's 209 (no kernel image for the device), the workload's build (app.exception.cuda_config).

Lines come from the public threads cited beside them (numbers and names as posted).
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract.base import Draft
from tests.conftest import BundleMaker
from tests.extract import helpers
from tests.extract.helpers import alone, last_line

TB = helpers.TB


def _config(drafts: list[Draft]) -> list[Draft]:
    return [d for d in drafts if d.kind == "app.cuda_error" and d.fields.get("error") == "config"]


@pytest.mark.parametrize("line", [
    # huggingface/text-embeddings-inference#15 (V100, the default Ampere image), the error's `Caused by:` line
    "    Could not start backend: Runtime compute cap 70 is not compatible with compile time compute cap 80",
    # huggingface/text-embeddings-inference#806 (a Blackwell card, TEI 1.8), the backend's own ERROR record
    "2026-01-23T13:41:25.805694Z ERROR text_embeddings_backend: backends/src/lib.rs:491: Could not start Candle "
    "backend: Could not start backend: Runtime compute cap 120 is not compatible with compile time compute cap 80",
    # huggingface/text-embeddings-inference#137, under docker compose's service prefix
    "text-embeddings-1  |     Could not start backend: Runtime compute cap 52 is not compatible with compile time "
    "compute cap 75",
    # fauxpilot/fauxpilot#248: the NGC entrypoint (Triton's image) on an RTX 4060
    "triton-1         | WARNING: Detected NVIDIA NVIDIA GeForce RTX 4060 GPU, which is not yet supported in this "
    "version of the container",
    # Yzichen/FlashOCC#3: TensorRT 22.07's image on an RTX 4090
    "WARNING: Detected NVIDIA NVIDIA GeForce RTX 4090 GPU, which is not yet supported in this version of the container",
])
def test_an_image_built_for_other_gpus_is_the_workloads_build(line: str) -> None:
    d = _config(alone(line))
    assert len(d) == 1, alone(line)
    assert d[0].fields["cuda_code"] == 209
    assert d[0].fields["terminal"] is True  # a line of its own: its stream's last word only


@pytest.mark.parametrize("line", [
    # the NGC entrypoint's error alone also says no GPU was visible at all (triton-inference-server/server#135: a
    # container started without the NVIDIA runtime; NVIDIA/DeepLearningExamples#964: fabric manager not started)
    "ERROR: No supported GPU(s) detected to run this container",
    # TEI's router naming the capability it found, no comparison that failed
    "2023-10-17T07:35:44.204272Z  INFO text_embeddings_router: router/src/main.rs:220: Starting model backend",
    # prose about a card the image supports
    "NOTE: the RTX 4090 is supported in this version of the container",
])
def test_near_miss_other_container_and_server_words_are_no_build_mismatch(line: str) -> None:
    assert _config(alone(line)) == []


def _app(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


# HuangJunJie2017/BEVDet#314, the entrypoint's two lines as posted
NGC = ["WARNING: Detected NVIDIA NVIDIA GeForce RTX 4090 GPU, which is not yet supported in this version of the "
       "container", "ERROR: No supported GPU(s) detected to run this container"]


def test_the_entrypoints_warning_as_the_streams_last_word_is_the_cause(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(NGC)})))
    assert v.root_cause is not None and v.root_cause.category == "app.exception.cuda_config"


def test_near_miss_a_job_that_went_on_after_the_warning_is_not_its_cause(make_bundle: BundleMaker) -> None:
    # the banner a job outlives (the image's PTX JIT runs it): the exception after it is the cause
    lines = [*NGC, "epoch 1 step 10 loss 2.31", TB, '  File "/srv/train.py", line 9, in main', "KeyError: 'label'"]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(lines)})))
    assert v.root_cause is not None and v.root_cause.category == "app.exception"


# A library's or a compiler's own check that the GPU's architecture is not one its kernels are for
# (catalog/exceptions.yaml `gpu_arch`, the row after the entrypoint's): CUDA's 209 in the library's words, the
# workload's build.
@pytest.mark.parametrize("line", [
    # NVIDIA/Megatron-LM#4175: Transformer Engine's MXFP8 recipe check on an RTX PRO 6000 (sm_120), asserted
    "AssertionError: MXFP8 (for all gemm layouts) is not supported on 12.0+ architectures yet.",
    # ... and raised by TE's own check_recipe_support
    "RuntimeError: MXFP8 (for all gemm layouts) is not supported on 12.0+ architectures yet.",
    # vllm-project/vllm#40851: DeepGEMM's dispatch on an A800 (sm_80), DGException's words
    "RuntimeError: Assertion error (.../deepgemm-src/csrc/apis/hyperconnection.hpp:56): Unsupported architecture",
    # DeepGEMM's first releases' DGException
    "RuntimeError: Failed: Assertion error csrc/apis/gemm.hpp:212 'Unsupported architecture'",
    # Dao-AILab/flash-attention flash_api.cpp on a V100 / T4
    "RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
    # Inductor's Triton backend on a P100 (torch._inductor.exc.GPUTooOldForTriton's words)
    "RuntimeError: Found Tesla P100-PCIE-16GB which is too old to be supported by the triton GPU compiler, which is "
    "used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA "
    "capability 6.0",
    # ATen's checks of the ops built for some architectures only
    "RuntimeError: torch._grouped_mm is only supported on CUDA devices with compute capability = 9.0",
    "RuntimeError: torch._scaled_mm is only supported on CUDA devices with compute capability >= 9.0 or 8.9, or "
    "ROCm MI300+",
    "ValueError: torch._scaled_grouped_mm is only supported on CUDA devices with compute capability = [9.0, 10.0], "
    "or ROCm MI300+",
])
def test_a_librarys_check_of_the_gpus_architecture_is_the_workloads_build(line: str) -> None:
    d = _config(last_line(line)) or _config(alone(line))
    assert len(d) == 1, alone(line)
    assert d[0].fields["cuda_code"] == 209


@pytest.mark.parametrize("line", [
    # the bare words are any program's about a CPU or an ISA
    "RuntimeError: Unsupported architecture",
    'thread main panicked at src/host.rs:12:5: Unsupported architecture',
    # a shape on some architectures, a dtype: the input's, not the build's
    "RuntimeError: head_dim size in (192, 224] is not supported on sm86 and sm89",
    "RuntimeError: FlashAttention only support fp16 and bf16 data type",
    # PyTorch's warning that the GPU is newer than its build: a warning the job may outlive (the 209 after it decides)
    "UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
    "installation.",
    # Transformer Engine's check of a number format the GPU cannot do: the job's set-up, not the build
    "AssertionError: Device compute capability 8.9 or higher required for FP8 execution.",
])
def test_near_miss_other_unsupported_words_are_no_build_mismatch(line: str) -> None:
    assert _config(last_line(line)) == [] and _config(alone(line)) == []


def _setup(drafts: list[Draft]) -> list[Draft]:
    return [d for d in drafts if d.kind == "app.exception" and d.fields.get("setup")]


@pytest.mark.parametrize("line", [
    # pytorch/torchtitan#1523: torch._grouped_mm in a ROCm build (ATen's Blas.cpp)
    "RuntimeError: grouped gemm is not supported on ROCM",
    # FBGEMM's and rtp-llm's own checks on ROCm
    "RuntimeError: gqa_attn_splitk with use_tensor_cores=True is not supported on ROCm",
    "RuntimeError: beam search is not supported on ROCm yet",
    # Transformer Engine's recipe checks: a number format the GPU's generation cannot do
    "AssertionError: Device compute capability 8.9 or higher required for FP8 execution.",
    "RuntimeError: Device compute capability 10.0 or higher required for MXFP8 execution.",
    "RuntimeError: FP8 block scaled GEMM requires compute capability 9.0 or higher and CUDA >= 12.9.",
])
def test_a_platform_or_format_the_job_lacks_is_its_setup(line: str) -> None:
    assert len(_setup(last_line(line))) == 1, last_line(line)


@pytest.mark.parametrize("line", [
    # a test suite's skip reason with the same words is no failure
    "SKIPPED [1] tests/test_xformers.py:12: Xformers backend is not supported on ROCm.",
    # a dtype unsupported whatever the platform
    "RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'",
    # TE's check of the toolkit, not of the GPU
    "AssertionError: Cuda version 12.1 or higher required for FP8 execution on Ada.",
])
def test_near_miss_a_skip_or_another_unsupported_word_is_no_setup(line: str) -> None:
    assert _setup(last_line(line)) == [] and _setup(alone(line)) == []
