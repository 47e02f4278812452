"""The NVIDIA toolkit's mount stage finding the host's driver file already in the image is the job's image (its
set-up), not the node's container plumbing, through the real extractors and the engine (catalog/platform.yaml
`container_errors`, the row with `after`).

The hook's words are libnvidia-container's (src/cli/configure.c `mount error: %s`, file creation's strerror); the
paths follow NVIDIA/nvidia-container-toolkit#176 (libnvidia-ml.so.1) and NVIDIA/nvidia-docker#1300 (persistenced's
socket); the overlay ids are this test's.
"""

from __future__ import annotations

from firstfault.analysis.analyze import analyze
from tests.conftest import BundleMaker, workload_ending

HOOK = ("docker: Error response from daemon: OCI runtime create failed: container_linux.go:380: starting container "
        "process caused: process_linux.go:545: container init caused: Running hook #0:: error running hook: exit "
        "status 1, stdout: , stderr: nvidia-container-cli: mount error: file creation failed: "
        "/var/lib/docker/overlay2/5e1f/merged/usr/lib/x86_64-linux-gnu/{tail}: unknown.\n")


def test_a_driver_file_the_image_ships_is_the_jobs_setup(make_bundle: BundleMaker) -> None:
    line = HOOK.format(tail="libnvidia-ml.so.1: file exists")
    v = analyze(str(make_bundle({"app/rank-0.log": line}, workload_ending("FAILED"))))
    assert v.root_cause is not None
    assert (v.root_cause.domain, v.root_cause.category) == ("software", "app.exception.setup")


def test_another_errno_of_the_mount_stage_stays_the_nodes(make_bundle: BundleMaker) -> None:
    line = HOOK.format(tail="libnvidia-ml.so.1: no such device or address")
    v = analyze(str(make_bundle({"app/rank-0.log": line}, workload_ending("FAILED"))))
    assert v.root_cause is not None
    assert v.root_cause.domain == "infrastructure"
