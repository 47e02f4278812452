"""Scheduler files: sacct and scontrol here; SGE, PBS, LSF and Flux accounting in batch.py; Kueue Workloads,
PodLists and EventLists in kube.py, `kubectl` tables and describe text in kubetext.py.

Each format becomes the events of docs/events.md (`sched.job`, `k8s.pod`,
`k8s.event`, `kueue.condition`). Hosts are kept as the record names them;
the engine maps them to allocation nodes. A malformed record is reported as
a ParseIssue and skipped, never allowed to hide the records around it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, tzinfo

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.extract.batch import BATCH_FORMATS, read_batch
from firstfault.extract.kube import K8S_FORMATS, K8S_TEXT_FORMATS, read_k8s
from firstfault.extract.kubetext import read_kubectl_text
from firstfault.extract.structured import CHECK_EVERY, Output, ParseIssue, StructuredResult, clip, command_line, outputs
from firstfault.formats import SACCT_DEFAULT_COLUMNS
from firstfault.hostlist import hostlist_expand
from firstfault.model import Event, Evidence, FieldValue

# The event kinds this reader emits and their fields (docs/events.md; extract/registry.py).
EMITS: Mapping[str, frozenset[str]] = {
    "sched.job": frozenset({"array_task", "batch_host", "by_uid", "exit_code", "job_id", "nodelist", "raw_state",
                            "reason", "scope", "signal", "state", "step"}),
}

SCHEDULER_FORMATS: tuple[str, ...] = ("sacct", "scontrol", *BATCH_FORMATS, *K8S_FORMATS)

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

# Values Slurm prints for "nothing here".
_SLURM_NONE = frozenset({"", "none", "unknown", "(null)", "n/a"})
# A job back in the queue because its launch failed: slurmctld (src/slurmctld/job_mgr.c, the requeue after
# JOB_LAUNCH_FAILED) holds it with the description `launch failed requeued held` (a prolog or the batch launch
# failed on its node) or `user env retrieval failed requeued held`, which scontrol and squeue print as its reason
# (`Reason=launch_failed_requeued_held`); FAIL_LAUNCH's own reason is `JobLaunchFailure`
# (src/common/job_state_reason.c). Such a record is PENDING, but the attempt it tells of failed to start: it is
# read as FAILED (raw_state keeps what Slurm said), never as a run still to come.
_SLURM_LAUNCH_FAILED = frozenset({"launch_failed_requeued_held", "user_env_retrieval_failed_requeued_held",
                                  "joblaunchfailure"})

_BY_UID_RE = re.compile(r"\bby\s+(\d+)")
_EXIT_RE = re.compile(r"^\s*(-?\d{1,19})(?::(-?\d{1,19}))?\s*$")  # 64 bits at most (MAX_INT_DIGITS)
_SCONTROL_KEY_RE = re.compile(r"^([A-Za-z][\w/:]*)=(.*)$")
_DASHES_RE = re.compile(r"-+")


def read_scheduler(data: bytes, fmt: str, file: str, *, job_id: str | None, tz: tzinfo,
                   window: tuple[datetime | None, datetime | None] = (None, None),
                   check: Callable[[], None] | None = None) -> StructuredResult:
    """Read one scheduler file of format `fmt` (spec: evidence-bundle.md, 'Scheduler formats').

    `job_id` keeps only the Slurm records of that job (its steps, array tasks
    and het components included), and the other batch schedulers' records of
    it where the file holds it; Kubernetes objects are not filtered.
    `tz` is the zone of the tools' zone-less local times, `window` (the
    attempt's start and end) the year of a time printed without one.
    `check` (a deadline) is called every CHECK_EVERY records.
    """
    text = data.decode("utf-8", errors="replace")
    if fmt == "sacct":
        return _read_sacct(text, file, job_id, tz, check)
    if fmt == "scontrol":
        return _read_scontrol(text, file, job_id, tz, check)
    if fmt in BATCH_FORMATS:
        return read_batch(text, fmt, file, job_id=job_id, tz=tz, window=window)
    if fmt in K8S_TEXT_FORMATS:
        return read_kubectl_text(text, fmt, file)
    if fmt in K8S_FORMATS:
        return read_k8s(text, fmt, file, check)
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


# One task of a Slurm array job, as sacct names it (`4243_7`) and scontrol's ArrayJobId / ArrayTaskId give it.
_ARRAY_TASK = re.compile(r"\d{1,10}_\d{1,10}")  # bounded (a job id and a task id): linear on a run of digits


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
            got = clip(repr(exit_raw), 80)
            issues.append(ParseIssue(line, f"{where}ExitCode: expected 'return:signal', got {got}"))

    reason = values.get("Reason", "").strip()
    if reason.lower() not in _SLURM_NONE:
        fields["reason"] = reason

    job_part, dot, step = record_id.partition(".")
    fields["scope"] = "step" if dot else "job"
    if dot:
        fields["step"] = step
    fields["job_id"] = job_part
    if _ARRAY_TASK.fullmatch(job_part):
        fields["array_task"] = job_part  # one task of an array job (sacct's `4243_7`; not its pending `4243_[8-10]`)

    nodelist = values.get("NodeList", "").strip()
    if nodelist and nodelist.lower() not in _SLURM_NONE and nodelist.lower() != "none assigned":
        fields["nodelist"] = nodelist

    when: datetime | None = None
    # A running job's EndTime is scontrol's projection (start + time limit), a pending
    # job's StartTime a guess: neither is when anything happened.
    time_keys = {"PENDING": (), "RUNNING": (start_field,), "CONFIGURING": (start_field,)}.get(
        state, (end_field, start_field)
    )
    if state in ("PENDING", "REQUEUED") and reason.strip("()").replace(" ", "_").lower() in _SLURM_LAUNCH_FAILED:
        fields["state"] = "FAILED"  # the attempt it tells of failed to start (its times stay a pending job's)
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


def _read_sacct(text: str, file: str, job_id: str | None, tz: tzinfo,
                check: Callable[[], None] | None) -> StructuredResult:
    result = StructuredResult(events=[], issues=[], lines=len(text.splitlines()), hosts=set())
    # Each command's output on its own (a prompt and `sacct ...` above each part, several in one file).
    for out in outputs(text):
        _sacct_output(out, file, job_id, tz, check, result)
    return result


def _sacct_output(out: Output, file: str, job_id: str | None, tz: tzinfo,
                  check: Callable[[], None] | None, result: StructuredResult) -> None:
    numbered = [(i, ln) for i, ln in out.lines if ln.strip()]
    if not numbered:
        return

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
            return

    if "JobID" not in columns or "State" not in columns:
        result.issues.append(ParseIssue(header_no or None, "sacct header: needs the JobID and State columns"))
        return

    for n, (lineno, row) in enumerate(rows, start=1):
        if check is not None and not n % CHECK_EVERY:
            check()
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


# --------------------------------------------------------------------------
# scontrol show job
# --------------------------------------------------------------------------

_SCONTROL_SUMMARY = ("JobId", "JobState", "Reason", "ExitCode", "StartTime", "EndTime", "NodeList")


def _scontrol_records(text: str) -> Iterator[tuple[int, dict[str, str]]]:
    """Split `scontrol show job` output into one key=value dict per job (at each JobId=); a pasted command line
    ends the record above it (its words are no value)."""
    record: dict[str, str] = {}
    start = 0
    last_key: str | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if command_line(line) is not None:
            last_key = None
            continue
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


def _read_scontrol(text: str, file: str, job_id: str | None, tz: tzinfo,
                   check: Callable[[], None] | None) -> StructuredResult:
    result = StructuredResult(events=[], issues=[], lines=len(text.splitlines()), hosts=set())
    for n, (lineno, rec) in enumerate(_scontrol_records(text), start=1):
        if check is not None and not n % CHECK_EVERY:
            check()
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
        # an array task's record has a JobId of its own and names its array and task (ArrayJobId=4243
        # ArrayTaskId=7): the task sacct calls 4243_7 (the array's pending remainder, `ArrayTaskId=8-10`, is none)
        array, task = rec.get("ArrayJobId", "").strip(), rec.get("ArrayTaskId", "").strip()
        if _ARRAY_TASK.fullmatch(f"{array}_{task}"):
            event.fields["array_task"] = f"{array}_{task}"
        batch_host = rec.get("BatchHost", "").strip()
        if batch_host and batch_host.lower() not in _SLURM_NONE:
            event.fields["batch_host"] = batch_host
            result.hosts.add(batch_host)
        result.events.append(event)
        nodelist = event.fields.get("nodelist")
        if isinstance(nodelist, str):
            _add_nodelist_hosts(nodelist, result.hosts, result.issues, lineno)
    return result
