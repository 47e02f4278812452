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
