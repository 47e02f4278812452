"""Kubernetes objects in a bundle's scheduler source: Kueue Workloads, PodLists, EventLists (YAML or JSON).

They become `kueue.condition`, `k8s.pod` and `k8s.event` events (docs/events.md),
each with the line of the object it came from. A malformed object is a
ParseIssue naming its path, never allowed to hide the objects around it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import yaml

from firstfault.catalog.tables import kueue_end
from firstfault.extract.codes import exit_signum
from firstfault.extract.container import backoff_fields, container_fields
from firstfault.extract.reasons import clear_placed, k8s_pending, k8s_reason, k8s_unstarted, recovered_or_clean
from firstfault.extract.structured import (
    CHECK_EVERY,
    MAX_INT_DIGITS,
    ParseIssue,
    StructuredResult,
    clip,
    fits_int64,
    int_or_text,
    output_spans,
)
from firstfault.model import Event, Evidence, FieldValue

K8S_FORMATS: tuple[str, ...] = ("kueue-workload", "k8s-pods", "k8s-events", "k8s-table", "k8s-describe")
K8S_TEXT_FORMATS: tuple[str, ...] = ("k8s-table", "k8s-describe")  # kubectl's text (extract/kubetext.py)

EMITS: Mapping[str, frozenset[str]] = {
    # program and part: added by engine/normalise.py for an event about a pod of a platform program
    # pending: the event says a pod waits for a place and names no cause (extract/reasons.py k8s_pending);
    # unstarted: the kubelet could not start the pod and nothing names a cause (k8s_unstarted)
    "k8s.event": frozenset({"due_to", "message", "object_kind", "object_name", "reason", "type", "program", "part",
                            "pending", "unstarted"}),
    # storage_daemon: added by engine/normalise.py for a sidecar that runs a FUSE daemon (catalog/platform.yaml);
    # program and part: added there for a container or pod of a platform program (`platform_programs`)
    "k8s.pod": frozenset({"container", "due_to", "exit_code", "message", "phase", "pod", "pressure", "reason",
                          "restart", "signal", "storage_daemon", "program", "part"}),
    "kueue.condition": frozenset({"due_to", "message", "reason", "status", "type", "workload"}),
    "sched.node_down": frozenset({"host", "reason"}),
    "container.error": frozenset({"runtime", "error", "text", "message", "reported_by"}),
    "k8s.backoff": frozenset({"reason", "container", "pod", "delay", "message", "program", "part"}),
}


class _LineDict(dict[Any, Any]):
    """A YAML mapping that remembers the 1-based line it started on."""

    __slots__ = ("line",)

    def __init__(self) -> None:
        super().__init__()
        self.line: int | None = None


class _LineLoader(yaml.SafeLoader):
    """SafeLoader whose mappings carry their line, so evidence can point into the file (`first_line`: the lines
    of the file before the text it reads)."""

    first_line = 0


def _construct_line_map(loader: yaml.SafeLoader, node: yaml.MappingNode) -> Iterator[_LineDict]:
    data = _LineDict()
    data.line = node.start_mark.line + 1 + getattr(loader, "first_line", 0)
    yield data
    data.update(loader.construct_mapping(node))


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int | str:
    """An integer wider than 64 bits stays text (the field's reader reports it), as in JSON (int_or_text)."""
    text = str(loader.construct_scalar(node))
    if len(text.replace("_", "").lstrip("+-")) > MAX_INT_DIGITS:
        return text
    value: int = loader.construct_yaml_int(node)
    return value


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_line_map)
_LineLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def _line_of(obj: object) -> int | None:
    return obj.line if isinstance(obj, _LineDict) else None


def _load_documents(text: str, issues: list[ParseIssue]) -> list[Any]:
    """The documents of a file: each command's output on its own where the commands were pasted above them
    (`$ kubectl get pod x -o yaml`; structured.output_spans), the whole file where none was."""
    lines = text.splitlines()
    spans = output_spans(lines)
    if len(spans) == 1 and spans[0][0] is None:
        return _load_output(text, 0, issues)
    return [doc for _, start, end in spans for doc in _load_output("\n".join(lines[start:end]), start, issues)]


def _load_output(text: str, before: int, issues: list[ParseIssue]) -> list[Any]:
    """One output's documents; `before`: how many lines of the file come before it (its lines are numbered on)."""
    stripped = text.lstrip()
    if not stripped:
        return []
    if stripped[0] in "{[":
        try:
            return [json.loads(text, parse_int=int_or_text)]
        except json.JSONDecodeError as exc:
            issues.append(ParseIssue(exc.lineno + before, f"JSON: {exc.msg} (column {exc.colno}); no events"))
            return []
    docs: list[Any] = []
    loader = _LineLoader if not before else type("_LineLoaderAfter", (_LineLoader,), {"first_line": before})
    try:
        for doc in yaml.load_all(text, Loader=loader):
            if doc is not None:
                docs.append(doc)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 + before if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        issues.append(ParseIssue(line, f"YAML: {problem}; no events from this document"))
    return docs


def _items(doc: Any, kinds: tuple[str, ...], issues: list[ParseIssue]) -> list[tuple[str, Any, str]]:
    """Objects of the `kinds` in a doc, each with its path and kind: the object itself, or the items of a List
    (`kubectl get pods,nodes -o yaml` mixes them). An item that names no kind is its typed List's (a NodeList's
    items are Nodes), else the first of `kinds`."""
    expected_kind = kinds[0]
    if not isinstance(doc, dict):
        issues.append(ParseIssue(None, f"top level: expected a {expected_kind} object, got {type(doc).__name__}"))
        return []
    kind = doc.get("kind")
    if "items" in doc or (isinstance(kind, str) and kind.endswith("List")):
        if kind not in (None, "List", *(k + "List" for k in kinds)):
            issues.append(ParseIssue(_line_of(doc), f"kind: expected {expected_kind}List, got {kind!r}"))
            return []
        items = doc.get("items") or []
        if not isinstance(items, list):
            issues.append(ParseIssue(_line_of(doc), "items: expected a list"))
            return []
        listed = kind[: -len("List")] if isinstance(kind, str) and kind[: -len("List")] in kinds else expected_kind
        out: list[tuple[str, Any, str]] = []
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                issues.append(ParseIssue(None, f"items[{i}]: expected an object"))
                continue
            item_kind = item.get("kind")
            if item_kind is not None and item_kind not in kinds:
                issues.append(
                    ParseIssue(_line_of(item), f"items[{i}].kind: expected {' or '.join(kinds)}, got {item_kind!r}")
                )
                continue
            out.append((f"items[{i}]", item, item_kind or listed))
        return out
    if kind is not None and kind not in kinds:
        issues.append(ParseIssue(_line_of(doc), f"kind: expected {' or '.join(kinds)}, got {kind!r}"))
        return []
    return [("", doc, kind or expected_kind)]


def _k8s_time(value: Any, path: str, line: int | None, issues: list[ParseIssue]) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        # PyYAML turns unquoted RFC 3339 into datetimes; Kubernetes times are UTC.
        t = value
    elif isinstance(value, str):
        try:
            t = datetime.fromisoformat(value.strip())
        except ValueError:
            issues.append(ParseIssue(line, f"{path}: not an RFC 3339 time: {value!r}"))
            return None
    else:
        issues.append(ParseIssue(line, f"{path}: not a time: {value!r}"))
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return t.astimezone(UTC)


def _str(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        # kubectl quotes "True", but hand-written YAML may not.
        return "True" if value else "False"
    return str(value)


def _int(value: Any, path: str, line: int | None, issues: list[ParseIssue]) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool):
        issues.append(ParseIssue(line, f"{path}: expected an integer, got {value!r}"))
        return None
    if isinstance(value, int) and fits_int64(value):
        return value
    text = str(value).strip() if not isinstance(value, int) else ""
    if text and len(text.lstrip("+-")) <= MAX_INT_DIGITS:
        try:
            number = int(text)
        except ValueError:
            pass
        else:
            if fits_int64(number):
                return number
    issues.append(ParseIssue(line, f"{path}: expected an integer, got {clip(repr(value), 80)}"))
    return None


def _mapping(obj: Any, key: str) -> dict[str, Any]:
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}


def _summary(pairs: Mapping[str, FieldValue]) -> str:
    parts = []
    for k, v in pairs.items():
        if v is None or v == "":
            continue
        s = str(v)
        parts.append(f'{k}="{s}"' if (" " in s or "=" in s) else f"{k}={s}")
    return clip(" ".join(parts))


def _compact(fields: dict[str, FieldValue]) -> dict[str, FieldValue]:
    # Optional fields are absent rather than None, so "exists" means the same to every rule.
    return {k: v for k, v in fields.items() if v is not None}


# The object kinds each format holds: the first is assumed for an object that names none.
_KINDS = {"kueue-workload": ("Workload",), "k8s-pods": ("Pod", "Node"), "k8s-events": ("Event",)}


def read_k8s(text: str, fmt: str, file: str, check: Callable[[], None] | None = None) -> StructuredResult:
    """`check` (a deadline) is called every CHECK_EVERY objects."""
    if fmt in K8S_TEXT_FORMATS:
        raise ValueError(f"{fmt}: kubectl's text, read by extract/kubetext.py read_kubectl_text")
    result = StructuredResult(events=[], issues=[], lines=len(text.splitlines()), hosts=set())
    n = 0
    for doc in _load_documents(text, result.issues):
        if fmt == "k8s-pods":
            doc = _pod_fragment(doc)
        for path, obj, kind in _items(doc, _KINDS[fmt], result.issues):
            n += 1
            if check is not None and not n % CHECK_EVERY:
                check()
            if fmt == "kueue-workload":
                _workload_events(obj, path, file, result)
            elif kind == "Node":
                _node_events(obj, path, file, result)
            elif fmt == "k8s-pods":
                _pod_events(obj, path, file, result)
            else:
                _event_item(obj, path, file, result)
    clear_placed(result.events)
    return result


def _pod_fragment(doc: Any) -> Any:
    """A pod pasted in part, as people cut `kubectl get pod -o yaml` or `-o json` in threads, read as the pod it is
    part of: its status without the `status:` line above (`phase`, `containerStatuses`), one container's status
    (`lastState:` / `state:` with `terminated:`; kubernetes/kubernetes#3044 posts its `state.termination` of the
    time), or the list of them. A whole object (one with `kind`, `metadata`, `spec`, `status` or `items`) is itself."""
    if isinstance(doc, list) and doc and all(isinstance(d, dict) and _container_like(d) for d in doc):
        return {"status": {"containerStatuses": doc}}
    if not isinstance(doc, dict) or {"kind", "metadata", "spec", "status", "items"} & doc.keys():
        return doc
    if {"containerStatuses", "initContainerStatuses", "phase"} & doc.keys():
        return {"status": doc}
    if _container_like(doc):
        return {"status": {"containerStatuses": [doc]}}
    return doc


def _container_like(d: dict[Any, Any]) -> bool:
    return bool({"state", "lastState"} & d.keys())


def _p(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _workload_events(obj: dict[str, Any], path: str, file: str, result: StructuredResult) -> None:
    name = _str(_mapping(obj, "metadata").get("name"))
    conditions = _mapping(obj, "status").get("conditions")
    if conditions is None:
        return
    cpath = _p(path, "status.conditions")
    if not isinstance(conditions, list):
        result.issues.append(ParseIssue(_line_of(obj), f"{cpath}: expected a list"))
        return
    for i, cond in enumerate(conditions):
        here = f"{cpath}[{i}]"
        if not isinstance(cond, dict) or not cond.get("type"):
            result.issues.append(ParseIssue(_line_of(cond), f"{here}: a condition needs a type; skipped"))
            continue
        line = _line_of(cond)
        typ, status, reason = _str(cond.get("type")), _str(cond.get("status")), _str(cond.get("reason"))
        fields = _compact(
            {
                "type": typ,
                "status": status,
                "reason": reason,
                "message": _str(cond.get("message")),
                "workload": name,
                "due_to": kueue_end(typ, status, reason)[0],  # why it ended the workload, if it did
            }
        )
        when = _k8s_time(cond.get("lastTransitionTime"), f"{here}.lastTransitionTime", line, result.issues)
        result.events.append(
            Event(
                kind="kueue.condition",
                time=when,
                node=None,
                evidence=Evidence(source="scheduler", file=file, line=line, text=_summary(fields)),
                fields=fields,
            )
        )


def _pod_events(obj: dict[str, Any], path: str, file: str, result: StructuredResult) -> None:
    pod = _str(_mapping(obj, "metadata").get("name"))
    node = _str(_mapping(obj, "spec").get("nodeName")) or None
    status = _mapping(obj, "status")
    phase = _str(status.get("phase"))
    if node:
        result.hosts.add(node)
    emitted = False
    for list_key in ("initContainerStatuses", "containerStatuses"):
        statuses = status.get(list_key)
        if statuses is None:
            continue
        spath = _p(path, f"status.{list_key}")
        if not isinstance(statuses, list):
            result.issues.append(ParseIssue(_line_of(status), f"{spath}: expected a list"))
            continue
        for i, cs in enumerate(statuses):
            if not isinstance(cs, dict):
                result.issues.append(ParseIssue(None, f"{spath}[{i}]: expected an object"))
                continue
            waiting = _mapping(_mapping(cs, "state"), "waiting")
            if waiting:
                # a container the runtime could not create or start, still waiting (CreateContainerError,
                # ErrImagePull, RunContainerError): its message quotes the runtime's words
                _runtime_report(_str(waiting.get("message")), node, None, _line_of(waiting) or _line_of(cs), file,
                                result, "pod")
                # one the kubelet backs off restarting (CrashLoopBackOff): a platform program's, or the workload's
                backoff_report(_str(waiting.get("message")), _str(waiting.get("reason")), _str(cs.get("name")), pod,
                               node, None, _line_of(waiting) or _line_of(cs), file, result)
            for state_key, restart in (("state", False), ("lastState", True)):
                term = _mapping(_mapping(cs, state_key), "terminated")
                if not term:
                    continue
                here = f"{spath}[{i}].{state_key}.terminated"
                line = _line_of(term) or _line_of(cs)
                exit_code = _int(term.get("exitCode"), f"{here}.exitCode", line, result.issues)
                reason = _str(term.get("reason")) or ("Completed" if exit_code == 0 else "Error")
                signal = _int(term.get("signal"), f"{here}.signal", line, result.issues)
                if signal is None and exit_code is not None and reason != "Completed":
                    signal = exit_signum("kubernetes", exit_code)
                due_to, pressure = k8s_reason(reason, _str(term.get("message")))
                running_again = restart and _mapping(cs, "state").get("running") is not None
                if recovered_or_clean(due_to, exit_code, running_again=running_again,
                                      container=_str(cs.get("name"))):
                    # (a container running again, or one that exited 0 under a memory-kill reason: reasons.py)
                    due_to = pressure = None
                fields = _compact(
                    {
                        "pod": pod,
                        "container": _str(cs.get("name")),
                        "phase": phase,
                        "reason": reason,
                        "due_to": due_to,
                        "pressure": pressure,
                        "exit_code": exit_code,
                        "signal": signal,
                        "message": _str(term.get("message")),
                        "restart": restart,
                    }
                )
                when = _k8s_time(term.get("finishedAt"), f"{here}.finishedAt", line, result.issues)
                if reason in _START_FAILED:
                    _runtime_report(_str(term.get("message")), node, when, line, file, result, "pod")
                result.events.append(
                    Event(
                        kind="k8s.pod",
                        time=when,
                        node=node,
                        evidence=Evidence(
                            source="scheduler",
                            file=file,
                            line=line,
                            text=_summary({**fields, "node": node}),
                        ),
                        fields=fields,
                    )
                )
                emitted = True
    pod_reason = _str(status.get("reason"))
    message = _str(status.get("message"))
    due_to, pressure = k8s_reason(pod_reason, message)
    if due_to is None and pod_reason is None and phase:
        # A pod whose phase alone says what happened: `Unknown` (its node stopped answering).
        due_to, _ = k8s_reason(phase, None, "phase")
    disruption = _disruption(status)
    if not emitted and (pod_reason or due_to):
        # Evicted / Terminated (node shutdown) / NodeLost / UnexpectedAdmissionError: the kubelet
        # killed or refused the pod as a whole, so no container state tells when.
        _pod_level(pod, node, phase, pod_reason or phase or "", message, due_to, pressure,
                   _line_of(status), _pod_status_time(status, _p(path, "status"), result.issues), file, result)
    if disruption is not None:
        # The DisruptionTarget condition says why the pod is being ended (the kubelet's eviction, the scheduler's
        # preemption), also where its containers' states say only `Completed` or `Error`.
        cond, when = disruption
        cond_due, cond_pressure = k8s_reason(_str(cond.get("reason")), _str(cond.get("message")))
        if cond_due is not None and (emitted or cond_due != due_to):
            _pod_level(pod, node, phase, _str(cond.get("reason")) or "", _str(cond.get("message")), cond_due,
                       cond_pressure, _line_of(cond), when, file, result)


# A container's terminated reasons for a container the runtime could not start (containerd's and Docker's): its message
# quotes the runtime's words (extract/container.py).
_START_FAILED = frozenset({"StartError", "ContainerCannotRun", "RunContainerError", "CreateContainerError"})


def _runtime_report(message: str | None, node: str | None, when: datetime | None, line: int | None, file: str,
                    result: StructuredResult, reported_by: str) -> bool:
    """A pod's or an event's message that quotes a container runtime's words (`failed to create shim task: OCI runtime
    create failed: ... executable file not found in $PATH`, `Failed to pull image "x": ... manifest unknown`): the
    container the pod could not have, as the runtime's own line would say (catalog/platform.yaml). `reported_by`:
    `pod` (its container's state: it never ran) or `event` (the kubelet's warning of one try, which it retries: the
    container may have started later). True where the message was read so."""
    fields = container_fields(message) if message else None
    if fields is None:
        return False
    fields["reported_by"] = reported_by
    result.events.append(Event(kind="container.error", time=when, node=node,
                               evidence=Evidence(source="scheduler", file=file, line=line,
                                                 text=clip(message or "")),
                               fields=fields))
    return True


def backoff_report(message: str | None, reason: str | None, container: str | None, pod: str | None,
                   node: str | None, when: datetime | None, line: int | None, file: str,
                   result: StructuredResult) -> None:
    """The kubelet backing off a container that keeps failing (a container's waiting reason CrashLoopBackOff, a
    BackOff event, a message in the kubelet's back-off words: extract/container.py backoff_fields): `k8s.backoff`,
    whose `program` and `part` say which platform program the container is (catalog/platform.yaml), if any."""
    fields = backoff_fields(message, reason, container, pod)
    if fields is not None:
        result.events.append(Event(kind="k8s.backoff", time=when, node=node,
                                   evidence=Evidence(source="scheduler", file=file, line=line,
                                                     text=_summary({**fields, "node": node})),
                                   fields=fields))


def _field_container(field_path: str | None) -> str | None:
    """The container an event's involvedObject.fieldPath names (`spec.containers{nvidia-device-plugin-ctr}`,
    `spec.initContainers{driver-validation}`), or None."""
    if not field_path or not field_path.endswith("}"):
        return None
    _, brace, name = field_path[:-1].partition("{")
    return name or None if brace else None


def _pod_level(pod: str | None, node: str | None, phase: str | None, reason: str, message: str | None,
               due_to: str | None, pressure: str | None, line: int | None, when: datetime | None, file: str,
               result: StructuredResult) -> None:
    fields = _compact({"pod": pod, "phase": phase, "reason": reason, "due_to": due_to, "pressure": pressure,
                       "message": message, "restart": False})
    result.events.append(
        Event(
            kind="k8s.pod",
            time=when,
            node=node,
            evidence=Evidence(source="scheduler", file=file, line=line, text=_summary({**fields, "node": node})),
            fields=fields,
        )
    )


def _disruption(status: dict[str, Any]) -> tuple[dict[str, Any], datetime | None] | None:
    """The pod's DisruptionTarget condition when it holds (Kubernetes >= 1.26), with its time."""
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return None
    for cond in conditions:
        if isinstance(cond, dict) and cond.get("type") == "DisruptionTarget" and _str(cond.get("status")) == "True":
            return cond, _k8s_time(cond.get("lastTransitionTime"), "DisruptionTarget.lastTransitionTime",
                                   _line_of(cond), [])
    return None


def _node_events(obj: dict[str, Any], path: str, file: str, result: StructuredResult) -> None:
    """A Node whose Ready condition is not True (False: the kubelet says it is not ready; Unknown: the node
    stopped posting its status): the scheduler lost it (`sched.node_down`)."""
    name = _str(_mapping(obj, "metadata").get("name"))
    if not name:
        result.issues.append(ParseIssue(_line_of(obj), f"{_p(path, 'metadata.name')}: a Node needs a name; skipped"))
        return
    result.hosts.add(name)
    conditions = _mapping(obj, "status").get("conditions")
    if not isinstance(conditions, list):
        return
    for i, cond in enumerate(conditions):
        if not isinstance(cond, dict) or cond.get("type") != "Ready" or _str(cond.get("status")) == "True":
            continue
        word = "NotReady" if _str(cond.get("status")) == "False" else _str(cond.get("status")) or "Unknown"
        due_to, _ = k8s_reason(word, None, "node_status")
        if due_to != "node_failure":
            continue
        line = _line_of(cond)
        here = _p(path, f"status.conditions[{i}]")
        when = _k8s_time(cond.get("lastTransitionTime"), f"{here}.lastTransitionTime", line, result.issues)
        reason = " ".join(x for x in (f"Ready={_str(cond.get('status'))}", _str(cond.get("reason")),
                                      _str(cond.get("message"))) if x)
        result.events.append(
            Event(
                kind="sched.node_down",
                time=when,
                node=name,
                evidence=Evidence(source="scheduler", file=file, line=line, text=clip(f"node {name} {reason}")),
                fields={"host": name, "reason": clip(reason, 120)},
            )
        )


def _pod_status_time(status: dict[str, Any], path: str, issues: list[ParseIssue]) -> datetime | None:
    """The DisruptionTarget condition dates an eviction; else the latest condition change."""
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return None
    best: datetime | None = None
    for i, cond in enumerate(conditions):
        if not isinstance(cond, dict):
            continue
        t = _k8s_time(
            cond.get("lastTransitionTime"),
            f"{path}.conditions[{i}].lastTransitionTime",
            _line_of(cond),
            issues,
        )
        if t is None:
            continue
        if cond.get("type") == "DisruptionTarget":
            return t
        if best is None or t > best:
            best = t
    return best


def _kubelet_instance(obj: dict[str, Any]) -> str | None:
    """The node a kubelet's event names as its reporting instance, or None (another component's instance is no node:
    a controller's pod name, the scheduler's)."""
    controller = _str(obj.get("reportingController") or obj.get("reportingComponent"))
    instance = _str(obj.get("reportingInstance"))
    return instance if controller == "kubelet" and instance else None


def _event_item(obj: dict[str, Any], path: str, file: str, result: StructuredResult) -> None:
    # core/v1 Event (involvedObject, message, source.host) and events.k8s.io/v1 (regarding, note,
    # deprecatedSource) carry the same facts under different keys.
    involved = _mapping(obj, "involvedObject") or _mapping(obj, "regarding")
    source = _mapping(obj, "source") or _mapping(obj, "deprecatedSource")
    kind = _str(involved.get("kind"))
    name = _str(involved.get("name"))
    # The kubelet's events name their node as source.host, and as reportingInstance (the kubelet reports as
    # reportingController `kubelet` with its node's name as the instance: events.k8s.io/v1, and core/v1 since 1.19's
    # reportingComponent / reportingInstance), which kubectl prints in place of an empty source (pkg/printers
    # formatEventSource).
    host = _str(source.get("host")) or _kubelet_instance(obj)
    node = name if kind == "Node" else host
    line = _line_of(obj)
    message = _str(obj.get("message") if obj.get("message") is not None else obj.get("note"))
    due_to, _ = k8s_reason(_str(obj.get("reason")), message)
    fields = _compact(
        {
            "reason": _str(obj.get("reason")),
            "due_to": due_to,
            "object_kind": kind,
            "object_name": name,
            "message": message,
            "type": _str(obj.get("type")),
            "pending": True if k8s_pending(_str(obj.get("reason")), message) else None,
        }
    )
    if "reason" not in fields:
        result.issues.append(ParseIssue(line, f"{_p(path, 'reason')}: missing; event skipped"))
        return
    when: datetime | None = None
    for key in ("lastTimestamp", "deprecatedLastTimestamp", "eventTime", "firstTimestamp"):
        when = _k8s_time(obj.get(key), _p(path, key), line, result.issues)
        if when is not None:
            break
    if when is None:
        series = _mapping(obj, "series")
        when = _k8s_time(series.get("lastObservedTime"), _p(path, "series.lastObservedTime"), line, result.issues)
    if node:
        result.hosts.add(node)
    result.events.append(
        Event(
            kind="k8s.event",
            time=when,
            node=node or None,
            evidence=Evidence(source="scheduler", file=file, line=line, text=_summary(fields)),
            fields=fields,
        )
    )
    event = result.events[-1]
    if k8s_unstarted(_str(obj.get("reason")), message,
                     read=_runtime_report(message, node or None, when, line, file, result, "event")):
        event.fields["unstarted"] = True
    backoff_report(message, fields["reason"] if isinstance(fields["reason"], str) else None,
                   _field_container(_str(involved.get("fieldPath"))), name if kind == "Pod" else None,
                   node or None, when, line, file, result)
