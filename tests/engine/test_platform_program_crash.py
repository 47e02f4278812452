"""A crash the kernel reports of a program of the platform under the workload is no rank's crash (extract/host.py
`UserFaultExtractor` marks it with the program's `part` from catalog/platform.yaml `platform_programs`; rule app-crash
reads no event with a part).

DCGM's exporter segfaults on its own (NVIDIA/dcgm-exporter#412, #447, #450: segfaults at start and in production),
and the kernel logs it on the node as it logs any process's fault (`comm[pid]: segfault at ... in object`,
torvalds/linux arch/x86/mm/fault.c show_signal_msg). In a failed job whose own output says nothing, that line made
`app.crash` ("Rank unknown crashed"): a helper's crash named as the cause. The near misses: the same report of a
process of the workload (python), and the exporter's fault inside the driver's library, which still points at the
node's GPU or driver (gpu-driver-library-crash). Lines ours in the kernel's format."""

from __future__ import annotations

from typing import Any

from firstfault.analysis.analyze import Analyzer
from tests.conftest import BundleMaker, workload_ending

SEGV = ("Nov  2 10:05:00 node-02 kernel: {proc}[3551]: segfault at 1378 ip 00007fff859dbeff sp 00007fff3b60ce60 "
        "error 4 in {obj}[7fff859a0000+dec000]\n")


def _analyze(make_bundle: BundleMaker, proc: str, obj: str) -> Any:
    root = make_bundle({"nodes/node-02/kern.log": SEGV.format(proc=proc, obj=obj)}, workload_ending("FAILED"))
    return Analyzer().analyze_path(str(root))


def test_a_platform_programs_segfault_is_no_ranks_crash(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, "dcgm-exporter", "dcgm-exporter")
    assert v.root_cause is None and not v.candidates
    assert v.attributed_domain == "unknown"


def test_the_workloads_own_segfault_is_a_crash(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, "python", "libtorch_cpu.so")
    assert v.root_cause is not None and v.root_cause.category == "app.crash"


def test_a_platform_programs_fault_in_the_driver_library_still_points_at_the_gpu(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, "dcgm-exporter", "libnvidia-ml.so.1")
    assert v.root_cause is not None and v.root_cause.category == "gpu.error.driver_library"
