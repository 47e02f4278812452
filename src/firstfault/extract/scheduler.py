"""Scheduler files: sacct, scontrol, Kueue Workloads, PodLists, EventLists.

Each format becomes the events of docs/events.md (`sched.job`, `k8s.pod`,
`k8s.event`, `kueue.condition`). Hosts are kept as the record names them;
the engine maps them to allocation nodes. A malformed record is reported as
a ParseIssue and skipped, never allowed to hide the records around it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, tzinfo
from typing import Any

import yaml

from firstfault.extract.structured import ParseIssue, StructuredResult, clip
from firstfault.hostlist import hostlist_expand
from firstfault.model import Event, Evidence, FieldValue

# The event kinds this reader emits and their fields (docs/events.md; extract/registry.py).
EMITS: Mapping[str, frozenset[str]] = {
    "k8s.event": frozenset({"message", "object_kind", "object_name", "reason", "type"}),
    "k8s.pod": frozenset({"container", "exit_code", "message", "phase", "pod", "reason", "restart", "signal"}),
    "kueue.condition": frozenset({"message", "reason", "status", "type", "workload"}),
    "sched.job": frozenset({"batch_host", "by_uid", "exit_code", "job_id", "nodelist", "raw_state", "reason",
                            "scope", "signal", "state", "step"}),
}

SCHEDULER_FORMATS: tuple[str, ...] = ("sacct", "scontrol", "kueue-workload", "k8s-pods", "k8s-events")

# Slurm job states (sacct/squeue long names). Used to undo the '+' truncation of
# fixed-width sacct output ("CANCELLED+", "OUT_OF_ME+").
SLURM_STATES: tuple[str, ...] = (
    "BOOT_FAIL",
    "CANCELLED",
    "COMPLETED",
    "COMPLETING",
    "CONFIGURING",
    "DEADLINE",
    "FAILED",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PENDING",
    "PREEMPTED",
    "REQUEUED",
    "REQUEUE_FED",
    "REQUEUE_HOLD",
    "RESIZING",
    "RESV_DEL_HOLD",
    "REVOKED",
    "RUNNING",
    "SIGNALING",
    "SPECIAL_EXIT",
    "STAGE_OUT",
    "STOPPED",
    "SUSPENDED",
    "TIMEOUT",
)

# `sacct -P -o JobID,JobName,State,ExitCode,Start,End,NodeList,Reason` (the bundle spec's form),
# assumed when the header line is missing.
SACCT_DEFAULT_COLUMNS: tuple[str, ...] = (
    "JobID",
    "JobName",
    "State",
    "ExitCode",
    "Start",
    "End",
    "NodeList",
    "Reason",
)

# Values Slurm prints for "nothing here".
_SLURM_NONE = frozenset({"", "none", "unknown", "(null)", "n/a"})

_BY_UID_RE = re.compile(r"\bby\s+(\d+)")
_EXIT_RE = re.compile(r"^\s*(-?\d+)(?::(-?\d+))?\s*$")
_SCONTROL_KEY_RE = re.compile(r"^([A-Za-z][\w/:]*)=(.*)$")
_DASHES_RE = re.compile(r"-+")


def read_scheduler(data: bytes, fmt: str, file: str, *, job_id: str | None, tz: tzinfo) -> StructuredResult:
    """Read one scheduler file of format `fmt` (spec: evidence-bundle.md, 'Scheduler formats').

    `job_id` keeps only the Slurm records of that job (its steps, array tasks
    and het components included); Kubernetes objects are not filtered.
    `tz` is the zone of Slurm's zone-less local times.
    """
    text = data.decode("utf-8", errors="replace")
    if fmt == "sacct":
        return _read_sacct(text, file, job_id, tz)
    if fmt == "scontrol":
        return _read_scontrol(text, file, job_id, tz)
    if fmt in ("kueue-workload", "k8s-pods", "k8s-events"):
        return _read_k8s(text, fmt, file)
    # A metrics format on a scheduler source gets past the bundle schema; one file's
    # mistake must not stop the analysis, so it is an issue, not an exception.
    return StructuredResult(
        events=[],
        issues=[
            ParseIssue(
                None,
                f"cannot read as a scheduler file: format {fmt!r} is not one of {', '.join(SCHEDULER_FORMATS)}",
            )
        ],
        lines=0,
        hosts=set(),
    )


# --------------------------------------------------------------------------
# Slurm helpers
# --------------------------------------------------------------------------


def _job_matches(record_id: str, job_id: str | None) -> bool:
    if job_id is None:
        return True
    base = record_id.split(".", 1)[0]
    if base == job_id:
        return True
    # 4242 selects its array tasks (4242_7) and het components (4242+1).
    return base.startswith(job_id) and base[len(job_id) : len(job_id) + 1] in ("_", "+")


def _norm_state(raw: str) -> tuple[str, int | None]:
    """'CANCELLED by 1234' -> ('CANCELLED', 1234); 'CANCELLED+' (truncated) -> ('CANCELLED', None)."""
    m = _BY_UID_RE.search(raw)
    by_uid = int(m.group(1)) if m else None
    words = raw.strip().split()
    word = words[0].upper() if words else ""
    if word.endswith("+"):
        stem = word.rstrip("+")
        matches = [s for s in SLURM_STATES if s.startswith(stem)]
        word = matches[0] if len(matches) == 1 else stem
    return word, by_uid


def _parse_slurm_time(value: str, tz: tzinfo) -> datetime | None:
    """Slurm prints local time without a zone; 'Unknown'/'None' mean no time."""
    value = value.strip()
    if value.lower() in _SLURM_NONE:
        return None
    t = datetime.fromisoformat(value)
    if t.tzinfo is None:
        t = t.replace(tzinfo=tz)
    return t.astimezone(UTC)


def _slurm_event(
    values: Mapping[str, str],
    *,
    job_field: str,
    state_field: str,
    end_field: str,
    start_field: str,
    file: str,
    line: int,
    text: str,
    tz: tzinfo,
    issues: list[ParseIssue],
    where: str,
) -> Event:
    record_id = values.get(job_field, "").strip()
    raw_state = values.get(state_field, "").strip()
    state, by_uid = _norm_state(raw_state)
    fields: dict[str, FieldValue] = {"state": state, "raw_state": raw_state}
    if by_uid is not None:
        fields["by_uid"] = by_uid

    exit_raw = values.get("ExitCode", "").strip()
    if exit_raw:
        m = _EXIT_RE.match(exit_raw)
        if m:
            fields["exit_code"] = int(m.group(1))
            if m.group(2) is not None:
                fields["signal"] = int(m.group(2))
        else:
            issues.append(ParseIssue(line, f"{where}ExitCode: expected 'return:signal', got {exit_raw!r}"))

    reason = values.get("Reason", "").strip()
    if reason.lower() not in _SLURM_NONE:
        fields["reason"] = reason

    job_part, dot, step = record_id.partition(".")
    fields["scope"] = "step" if dot else "job"
    if dot:
        fields["step"] = step
    fields["job_id"] = job_part

    nodelist = values.get("NodeList", "").strip()
    if nodelist and nodelist.lower() not in _SLURM_NONE and nodelist.lower() != "none assigned":
        fields["nodelist"] = nodelist

    when: datetime | None = None
    # A running job's EndTime is scontrol's projection (start + time limit), a pending
    # job's StartTime a guess: neither is when anything happened.
    time_keys = {"PENDING": (), "RUNNING": (start_field,), "CONFIGURING": (start_field,)}.get(
        state, (end_field, start_field)
    )
    for key in time_keys:
        raw_time = values.get(key, "")
        try:
            when = _parse_slurm_time(raw_time, tz)
        except ValueError:
            issues.append(ParseIssue(line, f"{where}{key}: not a time: {raw_time.strip()!r}"))
            when = None
        if when is not None:
            break

    return Event(
        kind="sched.job",
        time=when,
        node=None,
        evidence=Evidence(source="scheduler", file=file, line=line, text=clip(text)),
        fields=fields,
    )


def _add_nodelist_hosts(nodelist: str, hosts: set[str], issues: list[ParseIssue], line: int) -> None:
    try:
        hosts.update(hostlist_expand(nodelist))
    except ValueError as exc:
        issues.append(ParseIssue(line, f"NodeList: {exc}"))


# --------------------------------------------------------------------------
# sacct
# --------------------------------------------------------------------------


def _read_sacct(text: str, file: str, job_id: str | None, tz: tzinfo) -> StructuredResult:
    result = StructuredResult(events=[], issues=[], lines=0, hosts=set())
    lines = text.splitlines()
    result.lines = len(lines)
    numbered = [(i + 1, ln) for i, ln in enumerate(lines) if ln.strip()]
    if not numbered:
        return result

    header_no, header = numbered[0]
    rows = numbered[1:]
    fixed_spans: list[tuple[int, int]] | None = None
    if "JobID" not in header:
        columns = list(SACCT_DEFAULT_COLUMNS)
        rows = numbered
        header_no = 0
    elif "|" in header:
        columns = [c.strip() for c in header.rstrip("|").split("|")]
    else:
        # Fixed-width output (no -P): the dashes line under the header gives the column spans.
        columns = header.split()
        if rows and set(rows[0][1].strip()) <= {"-", " "}:
            fixed_spans = [(m.start(), m.end()) for m in _DASHES_RE.finditer(rows[0][1])]
            rows = rows[1:]
        if fixed_spans is None or len(fixed_spans) != len(columns):
            result.issues.append(
                ParseIssue(header_no, "sacct header: fixed-width output without a matching '----' line")
            )
            return result

    if "JobID" not in columns or "State" not in columns:
        result.issues.append(ParseIssue(header_no or None, "sacct header: needs the JobID and State columns"))
        return result

    for lineno, row in rows:
        if fixed_spans is not None:
            cells = [row[a:b].strip() if b < len(row) else row[a:].strip() for a, b in fixed_spans]
        else:
            cells = row.split("|")
            # `sacct -p` (lower case) ends every row with a '|'.
            if len(cells) == len(columns) + 1 and cells[-1] == "":
                cells.pop()
            if len(cells) != len(columns):
                result.issues.append(
                    ParseIssue(lineno, f"sacct row: {len(cells)} columns, header has {len(columns)}; row skipped")
                )
                continue
        values = dict(zip(columns, cells, strict=True))
        if not _job_matches(values["JobID"].strip(), job_id):
            continue
        event = _slurm_event(
            values,
            job_field="JobID",
            state_field="State",
            end_field="End",
            start_field="Start",
            file=file,
            line=lineno,
            text=row,
            tz=tz,
            issues=result.issues,
            where=f"sacct {values['JobID'].strip()}: ",
        )
        result.events.append(event)
        nodelist = event.fields.get("nodelist")
        if isinstance(nodelist, str):
            _add_nodelist_hosts(nodelist, result.hosts, result.issues, lineno)
    return result


# --------------------------------------------------------------------------
# scontrol show job
# --------------------------------------------------------------------------

_SCONTROL_SUMMARY = ("JobId", "JobState", "Reason", "ExitCode", "StartTime", "EndTime", "NodeList")


def _scontrol_records(text: str) -> Iterator[tuple[int, dict[str, str]]]:
    """Split `scontrol show job` output into one key=value dict per job (at each JobId=)."""
    record: dict[str, str] = {}
    start = 0
    last_key: str | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        for token in line.split():
            m = _SCONTROL_KEY_RE.match(token)
            if m is None:
                # Values such as Command= or Comment= may hold spaces.
                if last_key is not None:
                    record[last_key] += " " + token
                continue
            key, value = m.group(1), m.group(2)
            if key == "JobId" and record:
                yield start, record
                record = {}
            if not record:
                start = lineno
            record[key] = value
            last_key = key
    if record:
        yield start, record


def _read_scontrol(text: str, file: str, job_id: str | None, tz: tzinfo) -> StructuredResult:
    result = StructuredResult(events=[], issues=[], lines=len(text.splitlines()), hosts=set())
    for lineno, rec in _scontrol_records(text):
        if "JobId" not in rec:
            result.issues.append(ParseIssue(lineno, "scontrol: key=value record without JobId; skipped"))
            continue
        if "JobState" not in rec:
            result.issues.append(ParseIssue(lineno, f"scontrol JobId={rec['JobId']}: no JobState; skipped"))
            continue
        if not _job_matches(rec["JobId"], job_id):
            # scontrol names an array task by its own JobId; its ArrayJobId is the one asked for.
            array = rec.get("ArrayJobId")
            het = rec.get("HetJobId")
            if not ((array and _job_matches(array, job_id)) or (het and _job_matches(het, job_id))):
                continue
        summary = " ".join(f"{k}={rec[k]}" for k in _SCONTROL_SUMMARY if k in rec)
        event = _slurm_event(
            rec,
            job_field="JobId",
            state_field="JobState",
            end_field="EndTime",
            start_field="StartTime",
            file=file,
            line=lineno,
            text=summary,
            tz=tz,
            issues=result.issues,
            where=f"scontrol JobId={rec['JobId']}: ",
        )
        # scontrol never describes a step; a JobId with a '.' would be a typo, not a step.
        event.fields["scope"] = "job"
        event.fields.pop("step", None)
        batch_host = rec.get("BatchHost", "").strip()
        if batch_host and batch_host.lower() not in _SLURM_NONE:
            event.fields["batch_host"] = batch_host
            result.hosts.add(batch_host)
        result.events.append(event)
        nodelist = event.fields.get("nodelist")
        if isinstance(nodelist, str):
            _add_nodelist_hosts(nodelist, result.hosts, result.issues, lineno)
    return result


# --------------------------------------------------------------------------
# Kubernetes objects (YAML or JSON)
# --------------------------------------------------------------------------


class _LineDict(dict[Any, Any]):
    """A YAML mapping that remembers the 1-based line it started on."""

    __slots__ = ("line",)

    def __init__(self) -> None:
        super().__init__()
        self.line: int | None = None


class _LineLoader(yaml.SafeLoader):
    """SafeLoader whose mappings carry their line, so evidence can point into the file."""


def _construct_line_map(loader: yaml.SafeLoader, node: yaml.MappingNode) -> Iterator[_LineDict]:
    data = _LineDict()
    data.line = node.start_mark.line + 1
    yield data
    data.update(loader.construct_mapping(node))


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_line_map)


def _line_of(obj: object) -> int | None:
    return obj.line if isinstance(obj, _LineDict) else None


def _load_documents(text: str, issues: list[ParseIssue]) -> list[Any]:
    stripped = text.lstrip()
    if not stripped:
        return []
    if stripped[0] in "{[":
        try:
            return [json.loads(text)]
        except json.JSONDecodeError as exc:
            issues.append(ParseIssue(exc.lineno, f"JSON: {exc.msg} (column {exc.colno}); no events"))
            return []
    docs: list[Any] = []
    try:
        for doc in yaml.load_all(text, Loader=_LineLoader):
            if doc is not None:
                docs.append(doc)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        issues.append(ParseIssue(line, f"YAML: {problem}; no events from this document"))
    return docs


def _items(doc: Any, expected_kind: str, issues: list[ParseIssue]) -> list[tuple[str, Any]]:
    """Objects of `expected_kind` in a doc: the object itself, or the items of a (typed) List."""
    if not isinstance(doc, dict):
        issues.append(ParseIssue(None, f"top level: expected a {expected_kind} object, got {type(doc).__name__}"))
        return []
    kind = doc.get("kind")
    if "items" in doc or (isinstance(kind, str) and kind.endswith("List")):
        if kind not in (None, "List", expected_kind + "List"):
            issues.append(ParseIssue(_line_of(doc), f"kind: expected {expected_kind}List, got {kind!r}"))
            return []
        items = doc.get("items") or []
        if not isinstance(items, list):
            issues.append(ParseIssue(_line_of(doc), "items: expected a list"))
            return []
        out: list[tuple[str, Any]] = []
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                issues.append(ParseIssue(None, f"items[{i}]: expected an object"))
                continue
            item_kind = item.get("kind")
            if item_kind not in (None, expected_kind):
                issues.append(
                    ParseIssue(_line_of(item), f"items[{i}].kind: expected {expected_kind}, got {item_kind!r}")
                )
                continue
            out.append((f"items[{i}]", item))
        return out
    if kind not in (None, expected_kind):
        issues.append(ParseIssue(_line_of(doc), f"kind: expected {expected_kind}, got {kind!r}"))
        return []
    return [("", doc)]


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
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        issues.append(ParseIssue(line, f"{path}: expected an integer, got {value!r}"))
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


def _read_k8s(text: str, fmt: str, file: str) -> StructuredResult:
    result = StructuredResult(events=[], issues=[], lines=len(text.splitlines()), hosts=set())
    expected = {"kueue-workload": "Workload", "k8s-pods": "Pod", "k8s-events": "Event"}[fmt]
    for doc in _load_documents(text, result.issues):
        for path, obj in _items(doc, expected, result.issues):
            if fmt == "kueue-workload":
                _workload_events(obj, path, file, result)
            elif fmt == "k8s-pods":
                _pod_events(obj, path, file, result)
            else:
                _event_item(obj, path, file, result)
    return result


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
        fields = _compact(
            {
                "type": _str(cond.get("type")),
                "status": _str(cond.get("status")),
                "reason": _str(cond.get("reason")),
                "message": _str(cond.get("message")),
                "workload": name,
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
            for state_key, restart in (("state", False), ("lastState", True)):
                term = _mapping(_mapping(cs, state_key), "terminated")
                if not term:
                    continue
                here = f"{spath}[{i}].{state_key}.terminated"
                line = _line_of(term) or _line_of(cs)
                exit_code = _int(term.get("exitCode"), f"{here}.exitCode", line, result.issues)
                reason = _str(term.get("reason")) or ("Completed" if exit_code == 0 else "Error")
                signal = _int(term.get("signal"), f"{here}.signal", line, result.issues)
                if signal is None and exit_code is not None and reason != "Completed" and 128 < exit_code <= 192:
                    signal = exit_code - 128
                fields = _compact(
                    {
                        "pod": pod,
                        "container": _str(cs.get("name")),
                        "phase": phase,
                        "reason": reason,
                        "exit_code": exit_code,
                        "signal": signal,
                        "message": _str(term.get("message")),
                        "restart": restart,
                    }
                )
                when = _k8s_time(term.get("finishedAt"), f"{here}.finishedAt", line, result.issues)
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
    if not emitted and pod_reason:
        # Evicted / Terminated (node shutdown) / NodeLost / UnexpectedAdmissionError: the kubelet
        # killed or refused the pod as a whole, so no container state tells when.
        line = _line_of(status)
        fields = _compact(
            {
                "pod": pod,
                "phase": phase,
                "reason": pod_reason,
                "message": _str(status.get("message")),
                "restart": False,
            }
        )
        result.events.append(
            Event(
                kind="k8s.pod",
                time=_pod_status_time(status, _p(path, "status"), result.issues),
                node=node,
                evidence=Evidence(source="scheduler", file=file, line=line, text=_summary({**fields, "node": node})),
                fields=fields,
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


def _event_item(obj: dict[str, Any], path: str, file: str, result: StructuredResult) -> None:
    # core/v1 Event (involvedObject, message, source.host) and events.k8s.io/v1 (regarding, note,
    # deprecatedSource) carry the same facts under different keys.
    involved = _mapping(obj, "involvedObject") or _mapping(obj, "regarding")
    source = _mapping(obj, "source") or _mapping(obj, "deprecatedSource")
    kind = _str(involved.get("kind"))
    name = _str(involved.get("name"))
    host = _str(source.get("host"))
    node = name if kind == "Node" else host
    line = _line_of(obj)
    fields = _compact(
        {
            "reason": _str(obj.get("reason")),
            "object_kind": kind,
            "object_name": name,
            "message": _str(obj.get("message") if obj.get("message") is not None else obj.get("note")),
            "type": _str(obj.get("type")),
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
