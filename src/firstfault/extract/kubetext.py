"""Kubernetes as `kubectl` prints it for people: `get` tables and `describe` text.

Formats (docs/evidence-bundle.md): `k8s-table` (`kubectl get events`, `kubectl events`, `kubectl get pods`
(`-o wide` too), `kubectl get nodes`, several tables in one file) and `k8s-describe` (`kubectl describe
pod|node|job`, one or more objects). They become the events the YAML / JSON objects give (kube.py):
`k8s.pod` for a pod's terminated containers and its own end, `k8s.event` for the rows of an Events
table, `sched.node_down` for a node that is not Ready, each with `due_to` from the one reasons table
(extract/reasons.py). A table's relative ages (`4m11s`) are no time: such events have none. Lines that
are not part of a table or an object (a shell prompt, `No resources found`) are passed over.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.extract.codes import exit_signum
from firstfault.extract.container import container_fields
from firstfault.extract.gpu import nvml_fields
from firstfault.extract.kube import backoff_report
from firstfault.extract.kuberows import (
    CELL_GAP,
    EVENT_TYPES,
    event_cells,
    from_node,
    pod_row,
    source_node,
)
from firstfault.extract.reasons import clear_placed, k8s_pending, k8s_reason, k8s_unstarted, recovered_or_clean
from firstfault.extract.structured import ParseIssue, StructuredResult, clip, command_line
from firstfault.model import Event, Evidence, FieldValue

# The event kinds this reader emits and their fields (docs/events.md; extract/registry.py): those the
# objects give (kube.py).
EMITS: Mapping[str, frozenset[str]] = {
    "k8s.event": frozenset({"due_to", "message", "object_kind", "object_name", "reason", "type", "pending",
                            "unstarted"}),
    "k8s.pod": frozenset({"container", "due_to", "exit_code", "message", "phase", "pod", "pressure", "reason",
                          "restart", "signal"}),
    "sched.node_down": frozenset({"host", "reason"}),
    "gpu.nvml_error": frozenset({"error", "message", "nvml_error"}),
    "container.error": frozenset({"runtime", "error", "text", "message", "reported_by"}),
    "k8s.backoff": frozenset({"reason", "container", "pod", "delay", "message", "program", "part"}),
}

# A table's header: upper-case column names (one may hold a space: `LAST SEEN`, `NOMINATED NODE`), split
# from each other by two spaces or more (kubectl's tabwriter pads with at least three).
_HEADER_WORD = re.compile(r"[A-Z][A-Z0-9_()%-]*(?: [A-Z][A-Z0-9_()%-]*)?")
# Pod statuses that are a container's or the pod's end (the others are a pod on its way: Running, Pending,
# ContainerCreating, Terminating, Init:0/1, ...). Reasons of the table are ends too.
_ENDED = frozenset({"Completed", "Error", "ContainerCannotRun", "StartError", "ContainerStatusUnknown"})


@dataclass(slots=True)
class _Table:
    kind: str  # events, pods, nodes
    columns: list[tuple[str, int]]  # name, start column


def read_kubectl_text(text: str, fmt: str, file: str) -> StructuredResult:
    result = StructuredResult(events=[], issues=[], lines=len(text.splitlines()), hosts=set())
    if fmt == "k8s-table":
        _read_tables(text, file, result)
    else:
        _read_describe(text, file, result)
    clear_placed(result.events)
    if not result.events and text.strip():
        result.issues.append(ParseIssue(None, f"{fmt}: no kubectl {'table' if fmt == 'k8s-table' else 'object'}"
                                              " with a pod's, node's or event's end in this file"))
    return result


def _event(kind: str, node: str | None, when: datetime | None, fields: dict[str, FieldValue], file: str,
           line: int, text: str) -> Event:
    return Event(kind=kind, time=when, node=node, fields={k: v for k, v in fields.items() if v is not None},
                 evidence=Evidence(source="scheduler", file=file, line=line, text=clip(text)))


def _device_report(message: str | None, node: str | None, file: str, line: int, text: str,
                   result: StructuredResult, reported_by: str = "event") -> bool:
    """A message (a pod's, an event's) that quotes the GPU stack's own report: the device plugin failing an
    allocation because NVML says a GPU is lost (`error creating nvml.Device 5: nvml: GPU is lost`) is that GPU's
    fault, as nvidia-smi saying so on the node would be (extract/gpu.py, catalog/platform.yaml). So is one that
    quotes a container runtime's words (`Failed to pull image "x": ... manifest unknown`, `failed to create shim task:
    OCI runtime create failed: ...`: extract/container.py), the container the pod could not have; `reported_by` says
    whether a pod's own message said so (`pod`: it never ran) or an event's (`event`: one try, which the kubelet
    retries). True where the message was read so."""
    fields = nvml_fields(message) if message else None
    if fields is not None:
        result.events.append(_event("gpu.nvml_error", node, None, fields, file, line, text))
        return True
    fields = container_fields(message) if message else None
    if fields is not None:
        result.events.append(_event("container.error", node, None, {**fields, "reported_by": reported_by}, file,
                                    line, text))
        return True
    return False


def _unstarted(event: Event, read: bool) -> None:
    """Mark a pod event that says the kubelet could not start the pod, naming no cause (extract/reasons.py
    k8s_unstarted); `read`: its message was read as a report of its own, which stands for it."""
    reason, message = event.fields.get("reason"), event.fields.get("message")
    if k8s_unstarted(reason if isinstance(reason, str) else None, message if isinstance(message, str) else None,
                     read=read):
        event.fields["unstarted"] = True


# --------------------------------------------------------------------------
# kubectl get: tables
# --------------------------------------------------------------------------


def _table_of(line: str) -> _Table | None:
    """The table a header line starts, if it is one kubectl prints for events, pods or nodes."""
    stripped = line.rstrip()
    if not stripped or stripped != stripped.upper() or not stripped[:1].isalpha():
        return None
    columns = [(m.group(0), m.start()) for m in _HEADER_WORD.finditer(stripped)]
    names = {c for c, _ in columns}
    if "REASON" in names and ("OBJECT" in names or "KIND" in names):
        kind = "events"
    elif {"NAME", "READY", "STATUS"} <= names:
        kind = "pods"
    elif {"NAME", "STATUS"} <= names and ("ROLES" in names or "VERSION" in names or names == {"NAME", "STATUS", "AGE"}):
        kind = "nodes"  # (a pods table always has READY; old kubectl printed nodes as NAME STATUS AGE)
    else:
        return None
    return _Table(kind, columns)


def _cells(table: _Table, row: str) -> dict[str, str]:
    """A row's cells by column: split where kubectl padded (two spaces or more), else at the header's
    columns; the last column takes the rest of the line (a message holds spaces)."""
    n = len(table.columns)
    parts = CELL_GAP.split(row.strip(), maxsplit=n - 1)
    if len(parts) < n and (aligned := _aligned(table, row)) is not None:
        # A row with an empty cell (`kubectl get events`' SUBOBJECT of a pod-level event) kept under its header's
        # columns, as kubectl's tabwriter printed them.
        parts = aligned
    elif len(parts) < n:
        # A pasted table that lost its padding: single spaces between all but the last cells.
        parts = row.split(maxsplit=n - 1)
    return {name: value.strip() for (name, _), value in zip(table.columns, parts, strict=False)}


def _aligned(table: _Table, row: str) -> list[str] | None:
    """The row cut at its header's column starts, where every start falls just after a space of the row (the table
    kept its alignment) and the row reaches the last column; else None."""
    starts = [start for _, start in table.columns]
    if any(b <= a for a, b in pairwise(starts)) or len(row) <= starts[-1]:
        return None
    if any(row[start - 1] != " " for start in starts[1:]):
        return None
    return [row[a:b] for a, b in zip(starts, [*starts[1:], len(row)], strict=True)]


# `kubectl get events` / `kubectl events` columns, for rows pasted without their header: a row is one when
# its second cell is an event type.
_EVENT_COLUMNS = _Table("events", [("LAST SEEN", 0), ("TYPE", 0), ("REASON", 0), ("OBJECT", 0), ("MESSAGE", 0)])


# kubectl's STATUS for a container that ended with no reason from its runtime (kubernetes pkg/printers/internalversion/
# printers.go, printPod: `Signal:%d` where the state names a signal, else `ExitCode:%d`): the number by its printer
# (catalog/exits.yaml: `kubernetes`, a container's exit code; the signal's number). An init container's (`Init:...`)
# is its set-up on the way, not the pod's end.
_KUBECTL_EXIT = re.compile(r"^(?:ExitCode:(?P<code>-?\d+)|Signal:(?P<sig>\d+))$")


def pod_row_fields(cells: Mapping[str, str]) -> dict[str, FieldValue] | None:
    """What a `kubectl get pods` row says of its pod's end (k8s.pod's fields, and `node`), or None for a pod on its
    way (Running, Pending, ContainerCreating, ...). Its STATUS is a reason of the table, a phase or an end."""
    status = cells.get("STATUS", "")
    ended = _KUBECTL_EXIT.match(status)
    if ended is not None:
        node = cells.get("NODE")
        fields: dict[str, FieldValue] = {"pod": cells.get("NAME"), "reason": status, "due_to": None, "restart": False,
                                         "node": node if node and node not in ("<none>", "<unknown>") else None}
        if ended.group("code") is not None:
            fields["exit_code"] = int(ended.group("code"))
            signum = exit_signum("kubernetes", int(ended.group("code")))
        else:
            signum = exit_signum("kubectl-signal", int(ended.group("sig")))
        if signum is not None:
            fields["signal"] = signum
        return fields
    due_to, _ = k8s_reason(status, None)
    if due_to is None:
        due_to, _ = k8s_reason(status, None, "phase")
    if due_to is None and status not in _ENDED:
        return None
    node = cells.get("NODE")
    return {"pod": cells.get("NAME"), "reason": status, "due_to": due_to, "restart": False,
            "node": node if node and node not in ("<none>", "<unknown>") else None}


def _read_tables(text: str, file: str, result: StructuredResult) -> None:
    table: _Table | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        header = _table_of(line)
        if header is not None:
            table = header
            continue
        if not line.strip() or command_line(line) is not None or line.startswith("No resources found"):
            continue  # a prompt, a command, a note between tables: the next header starts the next table
        if table is None:
            parts = CELL_GAP.split(line.strip(), maxsplit=4)
            if len(parts) == 5 and parts[1] in EVENT_TYPES and "/" in parts[3]:
                _table_event(_cells(_EVENT_COLUMNS, line), file, lineno, line, result)
            elif (row := pod_row(line)) is not None:
                _table_pod(row, file, lineno, line, result)
            continue
        cells = _cells(table, line)
        if table.kind == "events":
            _table_event(cells, file, lineno, line, result)
        elif table.kind == "pods":
            _table_pod(cells, file, lineno, line, result)
        else:
            _table_node(cells, file, lineno, line, result)


def _object(ref: str) -> tuple[str | None, str | None]:
    """`pod/egg-x` -> ("Pod", "egg-x"); `node/gpu-7` -> ("Node", "gpu-7")."""
    kind, slash, name = ref.partition("/")
    if not slash:
        return None, ref or None
    return kind[:1].upper() + kind[1:], name or None


def _table_event(cells: dict[str, str], file: str, lineno: int, line: str, result: StructuredResult) -> None:
    reason = cells.get("REASON")
    if not reason:
        return
    kind, name = _object(cells.get("OBJECT", ""))
    if kind is None and cells.get("KIND"):
        kind, name = cells["KIND"], cells.get("NAME")
    message = cells.get("MESSAGE")
    due_to, _ = k8s_reason(reason, message)
    # a Node's event is that node's; else the node its SOURCE names (`kubelet, NODE`: `-o wide`, and old kubectl's
    # default columns)
    node = name if kind == "Node" else source_node(cells.get("SOURCE", ""))
    if node:
        result.hosts.add(node)
    result.events.append(_event("k8s.event", node, None, {
        "reason": reason, "due_to": due_to, "object_kind": kind, "object_name": name, "message": message,
        "type": cells.get("TYPE"), "pending": True if k8s_pending(reason, message) else None}, file, lineno, line))
    event = result.events[-1]
    _unstarted(event, _device_report(message, node, file, lineno, line, result))
    backoff_report(message, reason, None, name if kind == "Pod" else None, node, None, lineno, file, result)


def _table_pod(cells: dict[str, str], file: str, lineno: int, line: str, result: StructuredResult) -> None:
    node_cell = cells.get("NODE")
    if cells.get("STATUS", "").endswith("CrashLoopBackOff"):
        # a pod one of whose containers the kubelet backs off restarting (`CrashLoopBackOff`, `Init:CrashLoopBackOff`)
        where = node_cell if node_cell and node_cell not in ("<none>", "<unknown>") else None
        if where:
            result.hosts.add(where)
        backoff_report(None, cells["STATUS"], None, cells.get("NAME"), where, None, lineno, file, result)
        return
    fields = pod_row_fields(cells)
    if fields is None:
        return
    node = fields.pop("node")
    if isinstance(node, str):
        result.hosts.add(node)
    result.events.append(_event("k8s.pod", node if isinstance(node, str) else None, None, fields, file, lineno,
                                line))


def _table_node(cells: dict[str, str], file: str, lineno: int, line: str, result: StructuredResult) -> None:
    name, status = cells.get("NAME"), cells.get("STATUS", "")
    if not name:
        return
    result.hosts.add(name)
    # `NotReady`, `NotReady,SchedulingDisabled`, `Unknown`; `Ready,SchedulingDisabled` (cordoned) is no failure.
    due_to, _ = k8s_reason(status.split(",")[0], None, "node_status")
    if due_to == "node_failure":
        result.events.append(_event("sched.node_down", name, None, {"host": name, "reason": status},
                                    file, lineno, line))


# --------------------------------------------------------------------------
# kubectl describe
# --------------------------------------------------------------------------

# `Status:   Failed`, `IP:`, `Last State:     Terminated`, `QoS Class:  Burstable` (a key starts upper-case; a
# wrapped line of a message starts where the cut fell, most often lower-case).
_FIELD = re.compile(r"^(?P<indent> *)(?P<key>[A-Z][\w()./ -]*?):(?:\s+(?P<value>.*?))?\s*$")


@dataclass(slots=True)
class _Described:
    """One object of `kubectl describe` output: its top-level fields, its containers' states, its tables."""

    line: int
    kind: str = ""  # what the command line said it describes (`pod`, `node`, `job`), if it was pasted
    fields: dict[str, str] = field(default_factory=dict)
    field_lines: dict[str, int] = field(default_factory=dict)
    containers: list[dict[str, tuple[str, int]]] = field(default_factory=list)
    conditions: list[tuple[int, list[str]]] = field(default_factory=list)
    # A node's Conditions table has the kubelet's heartbeat column; a pod's has Type and Status only.
    node_conditions: bool = False
    events: list[tuple[int, list[str], str]] = field(default_factory=list)  # line, cells, the raw line


_STATES = ("State", "Last State")
_STATE_KEYS = frozenset({"Reason", "Exit Code", "Signal", "Message", "Started", "Finished"})
# A container's own line under `Containers:` (its name is whatever the pod spec says: `  pytorch:`).
_CONTAINER = re.compile(r"^  (?P<name>[^\s:][^:]*):\s*$")
# The command a pasted block often starts with (structured.command_line takes its prompt off):
# `kubectl describe pod -n rl NAME`, `kubectl describe node/NAME`, `k describe po NAME` (kubectl's usual alias).
_KUBECTL = frozenset({"kubectl", "k", "oc"})
_DESCRIBED = {"pod": "pod", "pods": "pod", "po": "pod", "node": "node", "nodes": "node", "no": "node", "job": "job",
              "jobs": "job"}


def _describe_command(command: str) -> tuple[str, str]:
    """(the kind, the name) a `kubectl describe` command names; ("", "") for another command."""
    words = command.split()
    words = words[1:] if words[:1] == ["sudo"] else words
    if len(words) < 3 or words[0] not in _KUBECTL or words[1] != "describe":
        return "", ""
    what, slash, slashed = words[2].partition("/")
    kind = _DESCRIBED.get(what, "")
    rest = words[3:]
    # `-n rl NAME`: an option's value is not the name.
    names = [w for i, w in enumerate(rest) if not w.startswith("-") and not (i and rest[i - 1] in
                                                                            ("-n", "--namespace"))]
    return kind, slashed if slash else (names[-1] if names else "")


# A row of a describe's Events table (Type, Reason, Age, From, Message) pasted without the `Events:` line and its
# header, often alone (kserve/kserve#3792, kubeflow/trainer#1661): its type, a reason, then an age as kubectl prints
# it (`5s`, `2m29s`, `3m (x4 over 10m)`, `<unknown>`). Each cell is one run of a class: linear.
def event_row(line: str) -> tuple[str, str | None] | None:
    """(the reason, the message) of an Events row pasted into text without its table: `kubectl get events`'s
    (`LAST SEEN  TYPE  REASON  OBJECT  MESSAGE`, an object as `kind/name`) or a describe's (`TYPE  REASON  AGE  FROM
    MESSAGE`), or None for any other line."""
    parts = CELL_GAP.split(line.strip(), maxsplit=4)
    if len(parts) >= 4 and parts[1] in EVENT_TYPES and "/" in parts[3]:
        return parts[2], parts[4] if len(parts) > 4 else None
    cells = event_cells(line)
    if cells is not None:
        return cells[1], cells[4] if len(cells) > 4 else None
    return None


def event_row_node(line: str) -> str | None:
    """The node a `kubectl get events` row pasted into text is about (its object cell `node/NAME`: Karpenter's and
    the kubelet's node events), or None."""
    parts = CELL_GAP.split(line.strip(), maxsplit=4)
    if len(parts) >= 4 and parts[1] in EVENT_TYPES and parts[3].startswith("node/"):
        return parts[3].partition("/")[2] or None
    return None


def _describe_objects(text: str) -> Iterator[_Described]:
    obj: _Described | None = None
    section = ""
    container: dict[str, tuple[str, int]] | None = None
    state = ""
    state_indent = 4  # a container's State / Last State line's indentation: its Reason, Exit Code are deeper
    last_key = ""
    named = kind = ""  # the name and kind the command line gave
    wrap_at = 0  # the line a wrapped Events row's message would go on at
    for lineno, line in enumerate(text.splitlines(), start=1):
        command = command_line(line)
        if command is not None:
            # A command ends the object above it; what it describes names the next.
            if obj is not None:
                yield obj
            obj = None
            kind, named = _describe_command(command)
            continue
        if section != "Events" and (row := event_cells(line)) is not None:
            # Events rows pasted without their section: the rows of an object the paste does not show.
            if obj is None:
                obj, container, state = _Described(lineno, kind), None, ""
            section, last_key = "Events", ""
            obj.events.append((lineno, row, line))
            wrap_at = _wrap_after(lineno, line)
            continue
        m = _FIELD.match(line)
        if m is not None and m.group("key") in _STATES and (container is None or not section.endswith("Containers")):
            # A container's state pasted without its pod and its `Containers:` section, at whatever indentation it
            # was cut (kubernetes/kubernetes#131530, gimlet-io/gimlet#649: `Last State: Terminated` / `  Reason:
            # OOMKilled` / `  Exit Code: 137`): a container the paste does not name.
            if obj is None:
                obj = _Described(lineno, kind)
                if named:
                    obj.fields["Name"], obj.field_lines["Name"] = named, lineno
            container = {"Name": ("", lineno)}
            obj.containers.append(container)
            section, last_key, state = "Containers", "", m.group("key")
            state_indent = len(m.group("indent"))
            container[state] = (m.group("value") or "", lineno)
            continue
        if line.startswith("Name:") or (obj is None and m is not None and not m.group("indent")):
            # An object starts at its Name (or, pasted without it, at its first field).
            if obj is not None:
                yield obj
            obj, section, container, state, last_key = _Described(lineno, kind), "", None, "", ""
            if named and not line.startswith("Name:"):
                obj.fields["Name"], obj.field_lines["Name"] = named, lineno
        if obj is None or not line.strip() or line.strip() in ("...", "...."):
            continue  # nothing, or a pasting person's elision
        indent = len(line) - len(line.lstrip(" "))
        if m and indent == 0:
            key, value = m.group("key"), m.group("value") or ""
            section, last_key = key, key
            obj.fields.setdefault(key, value)
            obj.field_lines.setdefault(key, lineno)
            container, state = None, ""
            continue
        if indent == 0 and not line.startswith("\t") and last_key in ("Message", "Reason"):
            # A long message kubectl (or the person pasting it) wrapped onto the next line.
            obj.fields[last_key] += line.strip()
            continue
        last_key = ""
        if section == "Containers" or section == "Init Containers":
            head = _CONTAINER.match(line)
            if head:
                container, state = {"Name": (head.group("name"), lineno)}, ""
                obj.containers.append(container)
            elif m and container is not None and indent <= 4 and m.group("key") in _STATES:
                state, state_indent = m.group("key"), indent
                container[state] = (m.group("value") or "", lineno)
            elif m and container is not None and state and (indent > state_indent or (
                    indent == state_indent and m.group("key") in _STATE_KEYS)):
                # (a paste that lost the state's own indentation keeps its keys: `Reason`, `Exit Code`, ...)
                container[f"{state}.{m.group('key')}"] = (m.group("value") or "", lineno)
            elif m and container is not None and indent <= state_indent:
                state = ""
        elif section == "Conditions":
            cells = CELL_GAP.split(line.strip())
            if cells and cells[0] == "Type":
                obj.node_conditions = "LastHeartbeatTime" in cells
            elif cells and cells[0] != "----":
                obj.conditions.append((lineno, cells))
        elif section == "Events":
            cells = CELL_GAP.split(line.strip(), maxsplit=4)
            if cells and cells[0] in ("Normal", "Warning"):
                obj.events.append((lineno, cells, line))
                wrap_at = _wrap_after(lineno, line)
            elif indent == 0 and obj.events and lineno == wrap_at:
                # A long message the terminal (or the person pasting it) wrapped onto the next lines, at the line's
                # start where the cut fell, as a Message field's above: the row's message goes on.
                at, row, raw = obj.events[-1]
                obj.events[-1] = (at, [*row[:-1], row[-1] + line.strip()], raw + line.strip())
                wrap_at = _wrap_after(lineno, line)
    if obj is not None:
        yield obj


_WRAP_WIDTH: Final = 80  # a terminal wraps a line at its width: a shorter line ended where its text did


def _wrap_after(lineno: int, line: str) -> int:
    """The line a wrapped Events row's message goes on at: the next, where this one was cut at a terminal's width;
    none (0) where it is shorter (what follows it at the line's start is another text: a note, a prompt)."""
    return lineno + 1 if len(line) >= _WRAP_WIDTH else 0


def _rfc1123(value: str | None) -> datetime | None:
    """`Fri, 15 Sep 2023 09:56:17 +0200` (kubectl describe's times) -> UTC."""
    if not value:
        return None
    from email.utils import parsedate_to_datetime  # here: the email package costs 5-10 ms of every start-up

    try:
        t = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).astimezone(UTC)


def _read_describe(text: str, file: str, result: StructuredResult) -> None:
    for obj in _describe_objects(text):
        fields = obj.fields
        name = fields.get("Name") or None
        kind: str | None
        # A pod's describe pasted from its middle (`Start Time:` ... `Status:`, the lines above it elided) is still
        # a pod's: a Job's has a Start Time but no Status, a node's neither.
        pod_like = ("Containers" in fields or bool(obj.containers)
                    or ("Status" in fields and ("Node" in fields or "Start Time" in fields)))
        node_like = "Conditions" in fields and ("Roles" in fields or "Taints" in fields or "Addresses" in fields
                                                or obj.node_conditions)
        # A pod's end pasted without its Name and the lines around it (`Status: Failed` / `Reason:
        # UnexpectedAdmissionError` / `Message: Pod was rejected: ...`, often with its `Events:`): a pod's Status is its
        # phase, and only a pod's describe has Status beside Reason or Message; a Job's has neither, a node's no Status.
        fragment = (not obj.kind and not pod_like and not node_like and fields.get("Status") in _PHASES
                    and ("Reason" in fields or "Message" in fields))
        if fragment and name is None:
            result.issues.append(ParseIssue(obj.line, "k8s-describe: a pod's Status, Reason and Message pasted without"
                                                      " its Name: read as one pod the paste does not name"))
        if obj.kind == "pod" or (not obj.kind and (pod_like or fragment)):
            kind = "Pod"
            _described_pod(obj, name, file, result)
        elif obj.kind == "node" or (not obj.kind and node_like):
            kind = "Node"
            _described_node(obj, name, file, result)
        elif obj.kind == "job" or "Pods Statuses" in fields or "Completions" in fields or "Parallelism" in fields:
            kind = "Job"
        else:
            kind = None
        node = name if kind == "Node" else _pod_node(fields) or _reporting_node(obj)
        if fields.get("Message"):
            at = obj.field_lines.get("Message", obj.line)
            _device_report(fields["Message"], node, file, at, f"Message: {fields['Message']}", result, "pod")
        for lineno, cells, line in obj.events:
            if len(cells) < 2:
                continue
            message = cells[4] if len(cells) > 4 else None
            due_to, _ = k8s_reason(cells[1], message)
            # the node its own From names (`kubelet, minikube`), else the object's
            where = from_node(cells) or node
            if where:
                result.hosts.add(where)
            result.events.append(_event("k8s.event", where, None, {
                "reason": cells[1], "due_to": due_to, "object_kind": kind, "object_name": name,
                "message": message, "type": cells[0],
                "pending": True if k8s_pending(cells[1], message) else None}, file, lineno, line))
            event = result.events[-1]
            _unstarted(event, _device_report(message, where, file, lineno, line, result))
            backoff_report(message, cells[1], None, name if kind == "Pod" else None, where, None, lineno, file,
                           result)


# The phases a pod's `Status:` shows (core/v1 PodPhase).
_PHASES = frozenset({"Pending", "Running", "Succeeded", "Failed", "Unknown"})


def _assigned_node(cells: list[str]) -> str | None:
    """The node the scheduler's `Scheduled` event bound the pod to (pkg/scheduler/schedule_one.go: `Successfully
    assigned %v/%v to %v`), or None."""
    message = cells[4] if len(cells) > 4 else ""
    if cells[1] != "Scheduled" or not message.startswith("Successfully assigned "):
        return None
    _, to, node = message.rpartition(" to ")
    node = node.strip()
    return node if to and node and " " not in node else None


def _reporting_node(obj: _Described) -> str | None:
    """The node the object's events name (the first kubelet's `From`, else the scheduler's binding): where the pod the
    paste does not place ran, or the node whose events were pasted without its Name."""
    return (next((n for _, cells, _ in obj.events if (n := from_node(cells)) is not None), None)
            or next((n for _, cells, _ in obj.events if len(cells) > 1 and (n := _assigned_node(cells))), None))


def _pod_node(fields: dict[str, str]) -> str | None:
    """`Node: gke-general-preemptible-.../` or `kubernetes-minion-tf0f/10.240.216.66` -> the node's name."""
    node = fields.get("Node", "").split("/", 1)[0].strip()
    return node if node and node != "<none>" else None


def _described_pod(obj: _Described, name: str | None, file: str, result: StructuredResult) -> None:
    fields = obj.fields
    node = _pod_node(fields) or _reporting_node(obj)
    if node:
        result.hosts.add(node)
    phase = fields.get("Status") or None
    emitted = False
    for container in obj.containers:
        value, line = container.get("State", ("", obj.line))
        if value == "Waiting":
            # a container the kubelet backs off restarting (`State: Waiting` / `Reason: CrashLoopBackOff`)
            backoff_report(None, container.get("State.Reason", ("", line))[0] or None, container["Name"][0] or None,
                           name, node, None, container.get("State.Reason", ("", line))[1], file, result)
        for state, restart in (("State", False), ("Last State", True)):
            value, line = container.get(state, ("", obj.line))
            if value != "Terminated":
                continue
            reason = container.get(f"{state}.Reason", ("", line))[0] or None
            code_raw = container.get(f"{state}.Exit Code", ("", line))[0]
            exit_code = int(code_raw) if code_raw.lstrip("-").isdigit() else None
            signal = exit_signum("kubernetes", exit_code) if exit_code is not None else None
            message = container.get(f"{state}.Message", ("", line))[0] or None
            due_to, pressure = k8s_reason(reason, message)
            # A container running again (kubernetes/kubernetes#122256: `State: Running` / `Last State: Terminated`),
            # or one whose process exited 0 under a memory-kill reason: no cause of an end.
            if recovered_or_clean(due_to, exit_code,
                                  running_again=restart and container.get("State", ("", line))[0] == "Running",
                                  container=container["Name"][0] or None):
                due_to = pressure = None
            when = _rfc1123(container.get(f"{state}.Finished", ("", line))[0])
            text = f"pod {name} container {container['Name'][0]} {state}: Terminated {reason or ''} exit {code_raw}"
            result.events.append(_event("k8s.pod", node, when, {
                "pod": name, "container": container["Name"][0], "phase": phase, "reason": reason,
                "due_to": due_to, "pressure": pressure, "exit_code": exit_code, "signal": signal,
                "message": message, "restart": restart}, file, line, text))
            emitted = True
    reason = fields.get("Reason") or None
    message = fields.get("Message") or None
    due_to, pressure = k8s_reason(reason, message)
    if due_to is None and reason is None and phase:
        due_to, _ = k8s_reason(phase, None, "phase")
    if (reason or due_to) and not (emitted and due_to is None):
        line = obj.field_lines.get("Reason", obj.field_lines.get("Status", obj.line))
        text = " ".join(x for x in (f"pod {name}", f"Status: {phase}" if phase else "",
                                    f"Reason: {reason}" if reason else "", f"Message: {message}" if message else "")
                        if x)
        result.events.append(_event("k8s.pod", node, None, {
            "pod": name, "phase": phase, "reason": reason or phase, "due_to": due_to, "pressure": pressure,
            "message": message, "restart": False}, file, line, text))


def _described_node(obj: _Described, name: str | None, file: str, result: StructuredResult) -> None:
    """A node whose Ready condition is not True. Its Conditions table pasted alone (no `Name:`, no command naming
    it) still says a node was lost: the event names no host (the engine places it on a one-node allocation)."""
    if name:
        result.hosts.add(name)
    ready = [(n, c) for n, c in obj.conditions if len(c) >= 2 and c[0] == "Ready"]
    for lineno, cells in ready or obj.conditions:
        # Type, Status, LastHeartbeatTime, LastTransitionTime, Reason, Message
        if len(cells) < 2 or (cells[0] == "Ready" and cells[1] == "True"):
            continue
        if cells[0] == "Ready":
            word = "NotReady" if cells[1] == "False" else cells[1]
            due_to, _ = k8s_reason(word, None, "node_status")
        else:
            # A paste that cut the Ready row: any other condition speaks through its reason, the node controller's
            # `NodeStatusUnknown` turning every condition Unknown says the node was lost all the same.
            due_to, _ = k8s_reason(cells[4] if len(cells) > 4 else None, None, "condition_reason")
        if due_to != "node_failure":
            continue
        when = _rfc1123(cells[3]) if len(cells) > 3 else None
        reason = " ".join([f"{cells[0]}={cells[1]}", *cells[4:6]])
        result.events.append(_event("sched.node_down", name, when, {"host": name, "reason": clip(reason, 120)},
                                    file, lineno, f"node {name or '(not named)'} {reason}"))
        return  # one node lost once
