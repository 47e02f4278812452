"""ibv_modify_qp's errnos about the source GID its address handle names (extract/verbs.py `verbs_path_errno`): ENODEV,
a GID whose net device is gone, down or outside the process's network namespace (Linux drivers/infiniband/core/cache.c
rdma_read_gid_attr_ndev_rcu), and ENODATA, no GID at that index (cache.c rdma_get_gid_attr), are the network's path
(rule network-transport-verbs), as its network errnos are; the same errnos on any other verbs call stay the node's RDMA
stack (rule node-rdma-stack), and a call without an errno says neither.

Provenance: the NCCL-headed line is NVIDIA/nccl-tests' rdma-shared Docker report (tests/wild ...-551: NCCL 2.4's
`misc/ibvwrap.cu:284 NCCL WARN Call to ibv_modify_qp failed with error No such device`); the headerless line is the
gitcode post's quotation of NCCL 2.21's `Call to ibv_modify_qp failed with error No such device errno 19` (tests/wild
...-86e4dc9e); the ENODATA, open_device and dmabuf lines are ours in NCCL's words (src/misc/ibvwrap.cc
IBV_INT_CHECK_RET_ERRNO, IBV_PTR_CHECK_ERRNO); the errno-less `Call to ibv_reg_mr failed` is NCCL's IBV_PTR_CHECK
before it printed errno (tests/wild ...-hhhyunwoo)."""

from __future__ import annotations

import pytest

from firstfault.extract.verbs import verbs_path_errno
from tests.extract.helpers import events


def _kinds(lines: list[str]) -> list[tuple[str, object]]:
    """The line's transport events, one each (an NCCL WARN is extract/nccl.py's alone, with its header's host)."""
    return [(e.kind, e.fields.get("errno")) for e in events(lines) if e.kind in ("net.ib_verbs_error", "nccl.error")]


@pytest.mark.parametrize(
    ("line", "errno"),
    [
        ("gpunodev2:10770:10794 [0] misc/ibvwrap.cu:284 NCCL WARN Call to ibv_modify_qp failed with error No such "
         "device", "ENODEV"),
        ("Call to ibv_modify_qp failed with error No such device errno 19", "ENODEV"),
        ("node-3:881:902 [2] misc/ibvwrap.cc:316 NCCL WARN Call to ibv_modify_qp failed with error No data available "
         "errno 61", "ENODATA"),
    ],
)
def test_modify_qp_gid_errnos_are_the_path(line: str, errno: str) -> None:
    assert _kinds([line]) == [("net.ib_verbs_error", errno)]


def test_the_same_errnos_elsewhere_are_not() -> None:
    # near miss: ENODEV on another call is the node's RDMA stack (nccl.error with its errno: rule node-rdma-stack)
    assert _kinds(["node-3:881:902 [2] misc/ibvwrap.cc:130 NCCL WARN Call to ibv_open_device failed with error No such "
                   "device errno 19"]) == [("nccl.error", "ENODEV")]
    # near miss: a call that printed no errno names no path (NCCL's IBV_PTR_CHECK before errno)
    assert [k for k, _ in _kinds(["ibvwrap.c: 106 NCCL WARN Call to ibv_reg_mr failed"])] == ["nccl.error"]
    assert not verbs_path_errno("ibv_reg_dmabuf_mr", "ENODEV")
    assert not verbs_path_errno("ibv_modify_qp", "EINVAL")
    assert not verbs_path_errno("modify_qp", None)
    assert verbs_path_errno("modify_qp", "ETIMEDOUT") and verbs_path_errno("ibv_modify_qp", "ENODEV")
