"""The node's /dev/shm too small for the job (rule app-shm-limit, docs/verdict.md's limit `shm`) explains what a
process on that node did next with the region it did not get, through the real extractors and the engine.

NCCL's words are its own (NVIDIA/nccl src/misc/shmutils.cc: `WARN("Error: failed to extend %s to %ld bytes, error:
%s (%d)", ...)` behind NCCL's debug prefix); the CUDA check after it follows the format of DeepEP's CUDA_CHECK
(`Failed: CUDA error <file>:<line> '<cudaGetErrorString>'`), a library that builds its buffers over NCCL's; the
host names, paths and sizes are this test's.
"""

from __future__ import annotations

from firstfault.analysis.analyze import analyze
from tests.conftest import BundleMaker, workload_ending

SHM = ("node-01:1795:1890 [1] misc/shmutils.cc:87 NCCL WARN Error: failed to extend /dev/shm/nccl-Ab12Cd to "
       "33554820 bytes, error: No space left on device (28)\n")
ILLEGAL = "Failed: CUDA error /workspace/ep/csrc/kernels/runtime.cu:52 'an illegal memory access was encountered'\n"
KEYERROR = "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\nKeyError: 'labels'\n"


def test_the_segment_then_an_illegal_access_on_that_node(make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-1.log": SHM + ILLEGAL}, workload_ending("FAILED"))))
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.rule) == ("app.exception", "app-shm-limit")


def test_an_ordinary_exception_before_an_illegal_access_does_not_explain_it(make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-1.log": KEYERROR + ILLEGAL}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "app.illegal_access"


def test_an_illegal_access_on_another_node_is_not_the_shm_limits(make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-1.log": SHM, "app/rank-3.log": ILLEGAL}, workload_ending("FAILED"))))
    # app-shm-limit explains on its own node only; the illegal access stands (and, as app-illegal-access reads it,
    # explains the workload's exception wherever it is)
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes) == ("app.illegal_access", ["node-02"])
