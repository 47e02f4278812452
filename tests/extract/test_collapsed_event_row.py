"""A describe's Events row posted alone with its column padding collapsed to one space (extract/kuberows.py
`_COLLAPSED_ROW`, `event_cells`): the cells are told apart by their classes (type, CamelCase reason, kubectl's age,
source, message), so the row reads as the padded row does; a sentence that starts with `Warning` or `Normal` is no
row.
"""

from __future__ import annotations

import pytest

from firstfault.extract.kuberows import event_cells
from firstfault.extract.kubetext import read_kubectl_text

# volcano-sh/devices#29 (https://github.com/volcano-sh/devices/pull/29), verbatim: the kubelet's admission event as
# the pull request's description posts it, outside a code block
VOLCANO_29 = ("Warning UnexpectedAdmissionError 79s kubelet Allocate failed due to rpc error: code = Unknown desc = "
              "failed to find gpu id, which is unexpected")
PADDED = ("  Warning  UnexpectedAdmissionError  79s   kubelet  Allocate failed due to rpc error: code = Unknown desc = "
          "failed to find gpu id, which is unexpected")


def test_a_collapsed_row_has_the_padded_rows_cells() -> None:
    assert event_cells(VOLCANO_29) == event_cells(PADDED)
    assert event_cells("Normal Pulled 3m (x4 over 10m) kubelet, gpu-node-1 Container image already present") == [
        "Normal", "Pulled", "3m (x4 over 10m)", "kubelet, gpu-node-1", "Container image already present"]


def test_a_collapsed_row_alone_reads_as_the_describes_event() -> None:
    res = read_kubectl_text(VOLCANO_29 + "\n", "k8s-describe", "describe.txt")
    rows = [e for e in res.events if e.kind == "k8s.event"]
    assert [(e.fields["reason"], e.fields["type"]) for e in rows] == [("UnexpectedAdmissionError", "Warning")]
    padded = read_kubectl_text(PADDED + "\n", "k8s-describe", "describe.txt")
    assert sorted(e.kind for e in res.events) == sorted(e.kind for e in padded.events)


@pytest.mark.parametrize("line", [
    # (synthetic) prose and other programs' lines that start with an event type's word
    "Warning UnexpectedAdmissionError happened 5 times on the node",  # no age where the age goes
    "Warning: UnexpectedAdmissionError 79s kubelet Allocate failed",  # a program's `Warning:` tag
    "Warning unexpectedAdmissionError 79s kubelet Allocate failed",  # no CamelCase reason
    "Normal Scheduled 79s",  # no source, no message
    "Warning FailedScheduling 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",  # the age cell lost
])
def test_near_miss_lines_that_start_like_a_row_are_no_row(line: str) -> None:
    assert event_cells(line) is None
