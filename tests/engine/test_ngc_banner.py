"""The NGC containers' entrypoint banner `ERROR: This container was built for NVIDIA Driver Release R or later, but
version V was detected and compatibility mode is UNAVAILABLE.` is read only through what CUDA then does.

The banner is the entrypoint's check before the workload starts: the node's driver is older than the container's CUDA
and CUDA's forward compatibility package cannot stand in for it. The workload often runs anyway (NVIDIA/TensorRT-LLM#23:
"FasterTransformer can run ok" in the container that printed it; NVIDIA/nvidia-docker#1479: the driver supports the
CUDA the program uses), so the banner alone names no cause and never explains away a later fault. Where CUDA itself
fails to start under it (`[[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]`, the banner's own next line in
nvidia-docker#1479), that failure is the node's driver (node-driver)."""

from __future__ import annotations

from firstfault.analysis.analyze import Analyzer
from tests.conftest import XID79, BundleMaker, workload_ending

# NVIDIA/TensorRT-LLM#23 (the container ran on a 510 driver)
BANNER = ("ERROR: This container was built for NVIDIA Driver Release 535.86 or later, but\n"
          "       version 510.85.02 was detected and compatibility mode is UNAVAILABLE.\n")
# NVIDIA/nvidia-docker#1479: the same banner where CUDA could not start
CUINIT = "\n       [[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]\n"
VALUE_ERROR = "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\nValueError: bad shape\n"


def test_the_banner_alone_names_no_cause(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": BANNER + "step 1\n"}, workload_ending("FAILED"))))
    assert v.root_cause is None and not v.candidates and v.attributed_domain == "unknown"


def test_cuda_failing_to_start_under_the_banner_is_the_nodes_driver(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": BANNER + CUINIT}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "node.driver"


def test_the_banner_explains_away_no_later_fault(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": BANNER + "step 1\n" + VALUE_ERROR},
                                                workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category.startswith("app.exception")
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": BANNER + "step 1\n",
                                                 "nodes/node-02/kern.log": XID79}, workload_ending("FAILED"),
                                                name="xid")))
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"
