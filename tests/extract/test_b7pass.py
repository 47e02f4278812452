"""Classes of input batch b7 showed unread, each tested on real instances from other threads (not the bundle).

Each block names the class, the threads its lines come from, and the look-alikes that must not match.
"""

from __future__ import annotations

import pytest

from firstfault.collect.scan import Extraction, all_line_extractors
from firstfault.extract.base import Candidate
from firstfault.model import Event


def feed(lines: list[str]) -> list[Event]:
    ex = Extraction(all_line_extractors())
    out: list[Event] = []
    for i, text in enumerate(lines, 1):
        out.extend(ex.events(Candidate("application", "app.log", i, None, None, None, text)))
    return out


# ---------------------------------------------------------------- NCCL's shared-memory segment, any spelling
# NCCL's report that it could not make or grow its /dev/shm segment, with or without its WARN header and errno:
# the container's /dev/shm (or the host) cannot give the job what it asks, the workload's configuration.


@pytest.mark.parametrize(
    "lines",
    [
        # hiyouga/EasyR1#228: the bare line behind Ray's worker prefix (fixed by a larger shm)
        ["(Runner pid=868697) Error while creating shared memory segment /dev/shm/nccl-UmqSM9 (size 7340384)"],
        # NVIDIA/nccl-tests#166: the header, no errno; the extend and the create are one report
        ["ubuntu:9621:9691 [6] misc/shmutils.cc:71 NCCL WARN Error: failed to extend /dev/shm/nccl-fjwOOB to "
         "5967876 bytes",
         "ubuntu:9621:9691 [6] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment "
         "/dev/shm/nccl-fjwOOB (size 5967872)"],
        # NVIDIA/nccl#1518: the rank-only header NCCL prints without a host (NCCL_SHM_DISABLE=1 worked around it)
        ["[1] misc/shmutils.cc:114 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-NzwJ7O "
         "(size 9637888)"],
    ],
)
def test_nccl_shm_segment_any_spelling(lines: list[str]) -> None:
    events = feed(lines)
    assert [(e.kind, e.fields.get("shm")) for e in events] == [("app.exception", True)]


def test_nccl_shm_attach_is_not_the_segment_size() -> None:
    # NVIDIA/nccl#1589: attaching to a peer's segment that is gone (a release's bug, fixed by a downgrade)
    events = feed(["g148:14937:69361 [0] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory "
                   "segment /dev/shm/nccl-glnlGK (size 14156128), error: No such file or directory (2)"])
    assert all(not e.fields.get("shm") for e in events)


# ---------------------------------------------------------------- a transport's node lacking what the job named
# The launcher's remote shell finding no daemon of the launcher's (Open MPI's orted, PRRTE's prted), and Gloo
# finding no address for the interface or host it was told to use: the job's own set-up on that node.


@pytest.mark.parametrize(
    ("line", "status"),
    [
        ("bash: orted: command not found", "daemon_not_found"),  # horovod/horovod#760, open-mpi/ompi#8870
        ("/bin/bash: orted: command not found", "daemon_not_found"),  # easybuilders/easybuild-easyconfigs#204
        ("bash: prted: command not found", "daemon_not_found"),  # openpmix/prrte#371
        # NVIDIA/Megatron-LM#436
        ("RuntimeError: [enforce fail at /root/pytorch/third_party/gloo/gloo/transport/tcp/device.cc:83] "
         "ifa != nullptr. Unable to find address for: bond1", "no_interface"),
        # Megvii-BaseDetection/YOLOX#139
        ("RuntimeError: [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. "
         "Unable to find address for: ib0", "no_interface"),
        # msr-fiddle/pipedream#32: a host name with no address it can bind
        ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:127] rp != nullptr. "
         "Unable to find address for: dgx-1.ai", "no_interface"),
    ],
)
def test_transport_node_lacks_what_the_job_named(line: str, status: str) -> None:
    setup = [e for e in feed([line]) if e.fields.get("setup")]
    assert [(e.kind, e.fields.get("local_status")) for e in setup] == [("nccl.error", status)]


@pytest.mark.parametrize(
    "line",
    [
        # open-mpi/ompi#2843: the launcher's own progress about its daemons
        "[savbu-usnic-a:16604] [[4570,0],0] plm:base:orted_report_launch from daemon [[4570,0],1] on node mpi001",
        # another program missing on the node is not the launcher's daemon
        "bash: nvidia-smi: command not found",
        # pytorch/pytorch#15592: a peer refusing Gloo's connection is the peer's status, not the set-up
        "  what():  [/opt/conda/conda-bld/pytorch_1544084119927/work/third_party/gloo/gloo/transport/tcp/pair.cc:724] "
        "connect [127.0.1.1]:3210: Connection refused",
        # a program's own DNS message in the same words, without Gloo's enforce
        "Unable to find address for: db.internal",
    ],
)
def test_transport_node_lacks_near_misses(line: str) -> None:
    assert not [e for e in feed([line]) if e.fields.get("setup")]
