"""Rows of kubectl's text output pasted into a log, read alone (without their table's header): a `kubectl get pods`
row, an Events row of `kubectl get events` or of a describe's Events section. The cells and the places they name;
what the rows mean is extract/kubetext.py's (whole tables and describe text) and extract/container.py's (the kubelet's
back-off)."""

from __future__ import annotations

from firstfault import lazyre as re

CELL_GAP = re.compile(r"\s{2,}|\t+")
EVENT_TYPES = frozenset({"Normal", "Warning"})


# A `kubectl get pods` row pasted without its header, as `kubectl get pods -A -o wide | grep Evict` prints it
# (LibreTexts/metalc#133, kubernetes/kubernetes#66889): NAME (after the NAMESPACE with -A), READY (`0/1`),
# STATUS (`Evicted`, `Init:0/1`, the kubelet's `OutOfnvidia.com/gpu`: GoogleCloudPlatform/container-engine-accelerators
# #100), RESTARTS (`0`, `3 (2m ago)`), AGE (`7m9s`, `38d`), then with -o wide IP and NODE. Names are DNS labels
# and subdomains (lower case, digits, `-`, `.`); each cell is one run of a class, so the match is linear.
POD_ROW = re.compile(
    r"^\s*(?:(?P<ns>[a-z0-9][a-z0-9.-]*)\s+)?(?P<name>[a-z0-9][a-z0-9.-]*)\s+(?P<ready>\d+/\d+)\s+"
    r"(?P<status>[A-Za-z][\w:./-]*)\s+(?P<restarts>\d+)(?:\s+\([\w.]+ ago\))?\s+"
    r"(?P<age>(?:\d+[smhdy])+|<unknown>|<invalid>)(?:\s+(?P<ip>\S+)\s+(?P<node>\S+))?(?:\s.*)?$")


def pod_row(line: str) -> dict[str, str] | None:
    """A `kubectl get pods` row without its header: its cells by the header's names, or None."""
    m = POD_ROW.match(line)
    if m is None:
        return None
    cells = {"NAME": m.group("name"), "READY": m.group("ready"), "STATUS": m.group("status")}
    if m.group("node"):
        cells["NODE"] = m.group("node")
    return cells


EVENT_AGE = re.compile(r"^(?:(?:\d+[smhdy])+|<unknown>|<invalid>)(?: \(x\d+ over (?:\d+[smhdy])+\))?$")


# The same row with its column padding collapsed to one space, as a tracker's Markdown renders a row posted outside a
# code block (volcano-sh/devices#29: `Warning UnexpectedAdmissionError 79s kubelet Allocate failed due to
# rpc error: ...`): the cells are still told apart by their classes, a type, a reason in one CamelCase word, kubectl's
# age (EVENT_AGE's forms), the source as kubectl prints it (`kubelet`, `kubelet, NODE`, `default-scheduler`), then the
# message. Each cell one run of a class: linear.
_COLLAPSED_ROW = re.compile(
    r"^(Normal|Warning) ([A-Z][A-Za-z]+) ((?:\d+[smhdy])+(?: \(x\d+ over (?:\d+[smhdy])+\))?|<unknown>|<invalid>) "
    r"([a-z][\w.-]*(?:, [\w.-]+)?) (\S.*)$")


def event_cells(line: str) -> list[str] | None:
    """The cells of a describe Events row outside its section, or None for any other line."""
    body = line.strip()
    cells = CELL_GAP.split(body, maxsplit=4)
    if len(cells) >= 4 and cells[0] in ("Normal", "Warning") and EVENT_AGE.match(cells[2]):
        return cells
    if len(cells) == 1 and body.startswith(("Normal ", "Warning ")):
        m = _COLLAPSED_ROW.match(body)
        if m is not None:
            return list(m.groups())
    return None


def event_row_place(line: str) -> tuple[str | None, str | None]:
    """The pod and the node an Events row pasted into text names: `kubectl get events`' object cell `pod/NAME`, a
    describe row's From `kubelet, NODE`; (None, None) for any other line."""
    parts = CELL_GAP.split(line.strip(), maxsplit=4)
    if len(parts) >= 4 and parts[1] in EVENT_TYPES and parts[3].startswith("pod/"):
        return parts[3].partition("/")[2] or None, None
    cells = event_cells(line)
    return (None, from_node(cells)) if cells is not None else (None, None)


def source_node(source: str) -> str | None:
    """The node an event's source as kubectl prints it names (`kubelet, NODE`), or None."""
    component, comma, host = source.partition(",")
    host = host.strip()
    return host if comma and component.strip() == "kubelet" and host and " " not in host else None


def from_node(cells: list[str]) -> str | None:
    """The node an Events row's From cell names: kubectl prints an event's source as `COMPONENT, HOST` (kubectl's
    describe.go formatEventSource; pkg/printers' takes reportingController and reportingInstance where source is
    empty), so the kubelet's events read `kubelet, minikube`; a component without a host (`default-scheduler`, a
    bare `kubelet`) names none."""
    return source_node(cells[3]) if len(cells) > 3 else None
