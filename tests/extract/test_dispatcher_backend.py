"""PyTorch's dispatcher finding no kernel of an op for a device's backend is the job's set-up (setup91).

catalog/exceptions.yaml's `Could not run '<op>' with arguments from the '<key>' backend` row (PyTorch's
aten/src/ATen/core/dispatch/OperatorEntry.cpp reportError): a device's dispatch key or its autograd key means the
installed build, or the device's plugin, has no kernel of that op for that device (a CPU-only torchvision beside a CUDA
torch; a c10d collective on torch-directml's PrivateUse1 device). A sparse, quantized, Meta or CPU key is the program's
own tensors: the plain exception.

Lines: pytorch/vision#3058 (the pre-1.8 wording), ltdrdata/ComfyUI-Impact-Pack#915 (the current wording, the
maintainer's answer a version mismatch of the torch packages), microsoft/DirectML#480; the near-misses ours, the same
format string with the keys the row leaves out.
"""

from __future__ import annotations

import pytest

from firstfault.model import Event
from tests.extract import helpers

_TAIL = (" This could be because the operator doesn't exist for this backend, or was omitted during the "
         "selective/custom build process (if using custom build).")


def _events(line: str) -> list[tuple[str, object]]:
    evs: list[Event] = helpers.events([line])
    return [(e.kind, e.fields.get("setup")) for e in evs]


@pytest.mark.parametrize(
    "line",
    [
        # ltdrdata/ComfyUI-Impact-Pack#915
        "NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend." + _TAIL,
        # pytorch/vision#3058 (torch 1.7)
        "RuntimeError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend. 'torchvision::nms' is "
        "only available for these backends: [CPU, BackendSelect, Named, AutogradOther, AutogradCPU, AutogradCUDA, "
        "AutogradXLA, Tracer, Autocast, Batched, VmapMode].",
        # microsoft/DirectML#480
        "NotImplementedError: Could not run 'c10d::allgather_' with arguments from the 'AutogradPrivateUse1' backend."
        + _TAIL,
    ],
)
def test_an_op_without_a_kernel_for_the_device_is_the_setup(line: str) -> None:
    assert _events(line) == [("app.exception", True)]


@pytest.mark.parametrize("key", ["SparseCPU", "QuantizedCPU", "Meta", "CPU", "SparseCUDA"])
def test_an_op_without_a_kernel_for_a_layout_is_the_programs_exception(key: str) -> None:
    line = f"NotImplementedError: Could not run 'aten::addmm' with arguments from the '{key}' backend." + _TAIL
    assert _events(line) == [("app.exception", None)]
