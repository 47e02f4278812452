"""A program's own word that /dev/shm was too small for the shared-memory region it asked for (catalog/exceptions.yaml
family `shm`): Triton's Python backend for a model instance's region or its pool's growth, the Triton client's system
shared memory for a request. The job's configuration on the node that printed it (app.exception with `shm` and
`limit: shm`, docs/verdict.md), raised or logged alone; other shared-memory words are not this.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import analyze
from tests.conftest import BundleMaker, workload_ending
from tests.extract.helpers import events

# python_backend src/shm_manager.cc's message (its format, the region and size as a 64 MB default gives them)
REGION = ("Unable to initialize shared memory key 'triton_python_backend_shm_region_1' to requested size (67108864 "
          "bytes). If you are running Triton inside docker, use '--shm-size' flag to control the shared memory region "
          "size. Each Python backend model instance requires at least 64MBs of shared memory. Error: No space left on "
          "device")


def shm(lines: list[str]) -> list[dict[str, object]]:
    return [dict(e.fields) for e in events(lines) if e.kind == "app.exception" and e.fields.get("shm")]


@pytest.mark.parametrize(
    "line",
    [
        # a model's load refused, as tritonserver's model table and a client print it
        "E1204 10:11:12.123456 1 model_lifecycle.cc:626] failed to load 'preprocess' version 1: Internal: " + REGION,
        f"tritonclient.utils.InferenceServerException: [StatusCode.INTERNAL] {REGION}",
        # the pool's growth (python_backend's shm_manager.cc GrowIfNeeded, its format)
        "tritonclient.utils.InferenceServerException: Failed to increase the shared memory pool size for key "
        "'triton_python_backend_shm_region_2' to 67108864 bytes. If you are running Triton inside docker, use "
        "'--shm-size' flag to control the shared memory region size. Error: No space left on device",
        # the client's system shared memory for a request's tensors (shm_utils.cc's format)
        "RuntimeError: unable to initialize shared memory key /input_data to requested size: 8388608",
    ],
)
def test_a_region_dev_shm_could_not_hold_is_the_shm_limit(line: str) -> None:
    (f,) = shm([line])
    assert f["limit"] == "shm"


@pytest.mark.parametrize(
    "line",
    [
        # the client's other shared-memory failures name no size (shm_utils.cc: shm_open refused, a region already
        # registered)
        "RuntimeError: unable to get shared memory descriptor for key: /input_data",
        "tritonclient.utils.InferenceServerException: shared memory region 'input_data' already in manager",
    ],
)
def test_other_shared_memory_words_are_not_the_limit(line: str) -> None:
    assert shm([line]) == []


def test_the_region_in_a_failed_servers_log_is_its_configuration(make_bundle: BundleMaker) -> None:
    log = ("I1102 10:01:10.000000 1 server.cc:674] loading models\n"
           "E1102 10:01:12.123456 1 model_lifecycle.cc:626] failed to load 'preprocess' version 1: Internal: "
           f"{REGION}\n")
    v = analyze(str(make_bundle({"app/rank-4.log": log}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "app.exception"
    assert v.root_cause.nodes == ["node-03"]
