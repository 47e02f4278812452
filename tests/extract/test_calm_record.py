"""One definition of a record below a warning (extract/traceback.py `calm_record`): what the end-not-shown policy
reads as gone on from (`says_calm`, engine/verdict.py) and what makes a CUDA error's line a result the program
answered itself (traceback.classify). Two regexes of the same name once stood in the module, the later silently
replacing the earlier; these hold the one that is left to both readings."""

from __future__ import annotations

import pytest

from firstfault.extract import traceback as tb
from tests.extract import helpers


@pytest.mark.parametrize("line", [
    # NVIDIA/nccl#1292: NCCL's INFO record of its search for an optional net plugin
    "gpu-node:1234:1234 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v8 symbol.",
    # glog's and absl's info header at the line's head (format: google/glog's LogMessage header)
    "I0612 10:00:00.123456  4242 server.cc:88] Failed to open optional config, using defaults",
    # format: libfabric's log (prov/util, `libfabric:<pid>:<time>::<prov>:<subsys>:<func>():<line><level> ...`), its
    # CUDA memory interface going on without CUDA (ofiwg/libfabric#7655)
    "libfabric:3617:1660000000::core:core:cuda_hmem_dl_init():437<info> Failed to find CUDA: cudaErrorStubLibrary",
])
def test_a_record_below_a_warning_is_calm(line: str) -> None:
    assert tb.calm_record(line)
    assert tb.says_calm(line)


@pytest.mark.parametrize("line", [
    # NCCL's errors close with the setting to turn on its INFO records: a setting's value, not the record's level
    # (format: PyTorch's ncclGetErrorWithVersion around NCCL's `unhandled cuda error`)
    "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled cuda error, NCCL version 2.14.3 (run with "
    "NCCL_DEBUG=INFO for details)",
    # a louder level before the level word makes the record that level
    "2024-05-01 12:00:00 ERROR loader: INFO block missing from checkpoint header",
    # a level word deep inside a message is the message's, not the record's
    "RuntimeError: " + "x" * 130 + " INFO",
])
def test_near_misses_are_not_calm(line: str) -> None:
    assert not tb.calm_record(line)


def test_a_cuda_error_at_libfabrics_info_level_is_no_failure_and_at_its_warning_level_is() -> None:
    line = ("libfabric:3617:1660000000::core:core:cuda_hmem_dl_init():437<info> Failed to find CUDA: "
            "cudaErrorStubLibrary")
    # (through every line extractor; the same name in an error record is read: test_cuda_enum.py)
    assert not [e for e in helpers.events([line]) if e.kind in ("app.cuda_error", "app.exception")]
    loud = line.replace("<info>", "<warn>")
    assert [e.fields.get("cuda_error") for e in helpers.events([loud]) if e.kind == "app.cuda_error"] == [
        "cudaErrorStubLibrary"]
