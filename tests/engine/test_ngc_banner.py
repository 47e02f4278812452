"""The NGC containers' entrypoint banner `ERROR: This container was built for NVIDIA Driver Release R or later, but
version V was detected and compatibility mode is UNAVAILABLE.` is no cause where CUDA can still run the image, and
never explains away a later fault.

The banner is the entrypoint's check before the workload starts, and it compares driver releases, not what CUDA
needs: within one CUDA family minor version compatibility runs the image (hiyouga/LlamaFactory#5962: a 545 image on
a 535 driver, both CUDA 12), and workloads ran under the banner (NVIDIA/TensorRT-LLM#23, NVIDIA/nvidia-docker#1479).
Where the two releases are of two CUDA families the check names the node's driver as its stream's last word
(extract/codes.py `ngc_check_failed`, fit44's); where CUDA itself fails to start under it (`[[CUDA Driver
UNAVAILABLE (cuInit(0) returned 804)]]`, the banner's own next line in nvidia-docker#1479), that failure is the
node's driver (node-driver)."""

from __future__ import annotations

from firstfault.analysis.analyze import Analyzer
from tests.conftest import XID79, BundleMaker, workload_ending

# hiyouga/LlamaFactory#5962's releases (545.23 needed, 535.104.05 found: one CUDA family), in the banner's two lines
BANNER = ("ERROR: This container was built for NVIDIA Driver Release 545.23 or later, but\n"
          "       version 535.104.05 was detected and compatibility mode is UNAVAILABLE.\n")
# NVIDIA/nvidia-docker#1479: the same banner where CUDA could not start
CUINIT = "\n       [[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]\n"
VALUE_ERROR = "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\nValueError: bad shape\n"


def test_the_banner_within_one_cuda_family_names_no_cause(make_bundle: BundleMaker) -> None:
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
