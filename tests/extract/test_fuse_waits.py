"""FUSE mounts in the kernel's and the platform's words (issue: pass tfuse97): a task blocked on a request its FUSE
daemon never answered (catalog/platform.yaml `storage_wait_frames`), a container runtime that cannot make a bind
mount's source on a dead FUSE mount (`mount_source_words`, `dead_mount_errors`), and a FUSE daemon's sidecar killed
for memory that the kubelet restarted (extract/reasons.py recovered_or_clean)."""

from __future__ import annotations

import pytest


# --- a FUSE daemon's sidecar killed for memory, restarted ------------------------------------------------------

_DESCRIBE = """Name:         trainer-0
Namespace:    default
Node:         gke-pool-1-abcd/10.0.0.5
Status:       Pending
Init Containers:
  {name}:
    Container ID:    containerd://a1fa8f6c349f
    Image:           gke.gcr.io/gcs-fuse-csi-driver-sidecar-mounter:v1.4.2-gke.0
    State:          Running
      Started:      Wed, 17 Jul 2024 20:42:10 -0700
    Last State:     Terminated
      Reason:       StartError
      Message:      {message}
      Exit Code:    128
      Started:      Wed, 31 Dec 1969 16:00:00 -0800
      Finished:     Wed, 17 Jul 2024 20:41:19 -0700
    Ready:          True
    Restart Count:  4
"""

_MESSAGE = ("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create "
            "failed: unable to start container process: container init was OOM-killed (memory limit too low?): "
            "unknown")


@pytest.mark.parametrize(("container", "due_to"), [
    # GoogleCloudPlatform/gcs-fuse-csi-driver#314: the gcsfuse sidecar OOM-killed at its start, Running again
    ("gke-gcsfuse-sidecar", "memory_limit"),
    # the same state of the job's own container: its restart recovered from it (kubernetes/kubernetes#122256)
    ("trainer", None),
])
def test_a_fuse_sidecars_memory_kill_stays_a_cause_after_its_restart(container: str, due_to: str | None) -> None:
    from datetime import UTC

    from firstfault.extract.scheduler import read_scheduler

    text = _DESCRIBE.replace("{name}", container).replace("{message}", _MESSAGE)
    res = read_scheduler(text.encode(), "k8s-describe", "describe-pod.txt", job_id=None, tz=UTC)
    [ev] = [e for e in res.events if e.kind == "k8s.pod" and e.fields.get("container") == container]
    assert ev.fields.get("due_to") == due_to
