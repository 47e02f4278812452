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
from tests.extract.helpers import alone

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
