"""MLX's distributed backends' own report of a call that failed with an errno (extract/verbs.py `_MLX_CALL_FAILED`):
a transport's report, so a set-up errno there (EINVAL, ENOMEM) is the job's set-up, as a verbs call's is.

Lines are verbatim from the public threads cited next to them unless marked `synthetic`.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from tests.conftest import BundleMaker
from tests.extract import helpers


def _setup(lines: list[str]) -> list[tuple[object, object, object]]:
    return [(e.fields.get("stack"), e.fields.get("errno"), e.fields.get("setup")) for e in helpers.events(lines)
            if e.kind == "nccl.error"]


@pytest.mark.parametrize(("lines", "stack"), [
    # ml-explore/mlx#3467: JACCL's RDMA queue pair refused (the GID it chose)
    (["[jaccl] Changing queue pair to RTR failed with errno 22"], "jaccl"),
    # ml-explore/mlx#4280: the ring's send of 2 GiB or more, over the syscall's INT_MAX length
    (["[ring] Sending to socket 3 failed with errno 22", "[ring] Sending to socket 3 failed with errno 22",
      "[ring] Too many send/recv errors. Aborting..."], "ring"),
])
def test_an_mlx_backends_failed_call_with_a_setup_errno_is_the_setup(lines: list[str], stack: str) -> None:
    got = _setup(lines)
    assert got and set(got) == {(stack, "EINVAL", True)}


def test_the_rings_einval_ends_the_run_as_the_jobs_setup(make_bundle: BundleMaker) -> None:
    text = "".join(s + "\n" for s in ["[ring] Sending to socket 3 failed with errno 22",
                                      "[ring] Too many send/recv errors. Aborting..."])
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": text})))
    assert v.attributed_domain == "software"
    assert v.root_cause is not None and v.root_cause.category.startswith("app.exception")


@pytest.mark.parametrize("line", [
    # a peer's reset in the ring's words (synthetic, its form): no set-up errno, not read here
    "[ring] Receiving from socket 5 failed with errno 54",
    # a number past 34 from macOS (synthetic: its EADDRINUSE, 48), which this host's table would misname: not read
    "[ring] Binding the socket failed with errno 48",
    # the ring's abort after its errors (ml-explore/mlx#4280): says no errno
    "[ring] Too many send/recv errors. Aborting...",
    # another program's tag with the same words (synthetic): not MLX's
    "[nccl] Sending to socket 3 failed with errno 22",
    # a person's words quoting it (synthetic): not the line whole
    "we see [ring] Sending to socket 3 failed with errno 22 on every large send",
])
def test_near_miss_mlx_words_that_are_no_setup(line: str) -> None:
    assert _setup([line]) == []
