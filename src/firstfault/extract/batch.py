"""Accounting of the batch schedulers other than Slurm, as their tools print it: SGE/UGE, PBS/Torque, LSF, Flux.

Formats (docs/evidence-bundle.md, "Scheduler formats"): `sge-qacct` (`qacct -j`), `sge-messages` (the qmaster's
and the execd's messages files), `htcondor-ad` (`condor_q -l`, `condor_history -l`), `pbs-tracejob`
(`tracejob`, and the server / MOM / accounting log lines it is made of), `pbs-qstat` (`qstat -f` /
`qstat -fx`), `lsf-bjobs` (`bjobs -l`), `lsf-bhist` (`bhist -l`), `flux-jobs` (`flux jobs` listings and
a job's eventlog, `flux job eventlog` / `flux job info ID eventlog`).

Each job record becomes one `sched.job` event (docs/events.md) with its state in Slurm's vocabulary, so
that the rules written for Slurm's states decide: the reason the scheduler names goes through
catalog/scheduler.yaml (extract/reasons.py) to one normalised reason (`due_to`) and its state. Where
the record names no reason but says the job was killed (a signal, PBS's negative exit, SGE's "qmaster
enforced ... limit" that names three limits), the job's own use against its limits decides between
the time and the memory limit; when neither or both were reached, the record says FAILED and no more.
A node the record names as lost also becomes a `sched.node_down`. A malformed record is a ParseIssue,
never allowed to hide the records around it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.extract.codes import exit_reading, exit_signum, signal_number
from firstfault.extract.endstate import message_reading
from firstfault.extract.reasons import state_of, text_reasons, word_reason
from firstfault.extract.structured import Output, ParseIssue, StructuredResult, clip, outputs
from firstfault.hostlist import hostlist_expand
from firstfault.model import Event, Evidence, FieldValue
from firstfault.timeparse import TimeParser

EMITS: Mapping[str, frozenset[str]] = {
    "sched.job": frozenset({"due_to", "exit_code", "job_id", "nodelist", "raw_state", "reason", "scheduler",
                            "scope", "signal", "state"}),
    "sched.node_down": frozenset({"host", "reason"}),
}

BATCH_FORMATS: tuple[str, ...] = ("sge-qacct", "sge-messages", "pbs-tracejob", "pbs-qstat", "lsf-bjobs", "lsf-bhist",
                                  "flux-jobs", "htcondor-ad")

# How near its limit a job's use must come for the limit to be the one that killed it: the scheduler reads
# use at intervals (a job killed at its wall-clock limit has used all of it; the memory it was last seen
# using may be a little short of the limit it hit).
_TIME_REACHED = 0.99
_MEMORY_REACHED = 0.95
# Where a record says a limit was enforced but not which, and names no time limit to compare with (SGE's `failed
# 37` without the `-l h_rt=` of its `category`): a limit a person asks for is a whole number of quarter hours
# (`h_rt=05:00:00`, `-l walltime=72:00:00`), and the scheduler kills at its next check after it, within a minute.
# So a wall clock (or CPU time) from 0 to 60 s past a whole quarter hour is the time limit. Real ends at a limit:
# SGE 18001 s and 86401 s (StatFunGen/xqtl-protocol#156, #571; PennLINC/babs), PBS 259217 s for 259200
# (biocore/qiime#1048) and 72:00:25 (cBio/cbio-cluster#256). A memory kill lands there by chance 1 time in 15.
_WHOLE_LIMIT = 900.0
_LIMIT_LAG = 60.0
# Signals a scheduler kills with: SIGKILL / SIGTERM; SGE's soft limits: SIGUSR1 (s_rt), SIGXCPU (s_cpu,
# s_vmem, s_rss); LSF's run-limit warning: SIGUSR2.
_KILL_SIGNALS = frozenset({9, 15, 10, 12, 24})


@dataclass(slots=True)
class _Job:
    """What one record said, gathered before its state is decided."""

    scheduler: str
    job_id: str
    line: int
    summary: list[str] = field(default_factory=list)
    raw_state: str = ""
    state: str | None = None  # a state the record says outright (running, pending, completed)
    finished: bool = False
    exit_code: int | None = None
    signal: int | None = None
    negative_exit: bool = False  # PBS: the MOM's own code, not the job's
    reason: str | None = None  # the scheduler's own word or phrase
    due_to: str | None = None
    start: datetime | None = None
    end: datetime | None = None
    hosts: list[str] = field(default_factory=list)
    lost: list[tuple[str, str]] = field(default_factory=list)  # (host, why) the record says it lost
    # (host or "", why, the table's words) of a node the record says failed to take or keep the job, naming no cause
    troubles: list[tuple[str, str, str]] = field(default_factory=list)
    used_time: float | None = None  # seconds of wall clock
    used_cpu: float | None = None
    used_mem: float | None = None  # bytes
    time_limit: float | None = None
    cpu_limit: float | None = None
    mem_limit: float | None = None

    def say(self, hit_reason: str | None, spelling: str) -> None:
        """The record names a reason: the first that names a cause stands."""
        if self.reason is None:
            self.reason = spelling
        if hit_reason is not None and self.due_to is None:
            self.due_to = hit_reason
            self.reason = spelling


def read_batch(text: str, fmt: str, file: str, *, job_id: str | None, tz: tzinfo,
               window: tuple[datetime | None, datetime | None] = (None, None)) -> StructuredResult:
    """Read one accounting file of format `fmt` (one of BATCH_FORMATS).

    `job_id` keeps the records of that job (its array tasks too) when the file holds it; a file that does
    not hold it is read whole (a bundle's id need not be the scheduler's), and says so. `tz` is the zone of
    the tools' zone-less local times; `window` gives the year where a time prints none (LSF, Flux).
    """
    result = StructuredResult(events=[], issues=[], lines=len(text.splitlines()), hosts=set())
    times = TimeParser(tz, *window)
    readers = {"sge-qacct": _qacct, "sge-messages": _sge_messages, "pbs-tracejob": _tracejob, "pbs-qstat": _qstat,
               "lsf-bjobs": _lsf, "lsf-bhist": _lsf, "flux-jobs": _flux, "htcondor-ad": _htcondor}
    # Each command's output on its own (a prompt and a command line above each part, several in one file).
    jobs = [job for out in outputs(text) for job in readers[fmt](out, tz, times, result.issues)]
    if job_id is not None and jobs:
        mine = [j for j in jobs if _same_job(j.job_id, job_id)]
        if mine:
            jobs = mine
        elif len({j.job_id for j in jobs}) > 1:
            result.issues.append(ParseIssue(None, f"no record of job {job_id}; read all {len(jobs)} records"))
    for job in jobs:
        _emit(job, file, result)
    return result


def _same_job(record_id: str, job_id: str) -> bool:
    """`4242`, `4242.server` (PBS), `4242[7]` / `4242[].server` (arrays) and Flux's `ƒ` / `f` ids are one job."""
    def base(s: str) -> str:
        s = s.strip().replace("ƒ", "f")
        return s.split(".", 1)[0].split("[", 1)[0]

    return bool(record_id) and base(record_id) == base(job_id)


# --------------------------------------------------------------------------
# Deciding a record's state
# --------------------------------------------------------------------------


def _at_whole_limit(used: float | None) -> bool:
    """Whether a time used ends just past a limit a person would ask for (_WHOLE_LIMIT)."""
    return used is not None and used >= _WHOLE_LIMIT and used % _WHOLE_LIMIT <= _LIMIT_LAG


def _limit_reached(job: _Job, *, enforced: bool = False) -> str | None:
    """`time_limit` or `memory_limit` when the job's use reached that limit (and not the other), else None.
    `enforced`: the record says a limit was enforced; where it names no time limit, a time used that ends just
    past a whole quarter hour is one (_WHOLE_LIMIT)."""
    time = any(used is not None and limit and used >= limit * _TIME_REACHED
               for used, limit in ((job.used_time, job.time_limit), (job.used_cpu, job.cpu_limit)))
    if not time and enforced and not job.time_limit and not job.cpu_limit:
        time = _at_whole_limit(job.used_time) or _at_whole_limit(job.used_cpu)
    memory = job.used_mem is not None and bool(job.mem_limit) and job.used_mem >= (job.mem_limit or 0) * _MEMORY_REACHED
    if time == memory:
        return None
    return "time_limit" if time else "memory_limit"


def _decide(job: _Job) -> str | None:
    """The job's state (Slurm's words), or None when the record says nothing of how it ended."""
    killed = job.negative_exit or (job.signal is not None and job.signal in _KILL_SIGNALS)
    if job.due_to == "resource_limit" or (job.due_to is None and killed):
        limit = _limit_reached(job, enforced=job.due_to == "resource_limit")
        job.due_to = limit if limit is not None else (None if job.due_to == "resource_limit" else job.due_to)
    if job.due_to is not None:
        return state_of(job.due_to)
    if job.state is not None:
        return job.state
    if job.exit_code is None and job.signal is None and not job.finished:
        return None
    if (job.exit_code or 0) == 0 and job.signal is None and not job.negative_exit:
        return "COMPLETED"
    return "FAILED"


def _emit(job: _Job, file: str, result: StructuredResult) -> None:
    state = _decide(job)
    when = job.end or job.start
    for host, why in job.lost:
        result.hosts.add(host)
        result.events.append(Event(
            kind="sched.node_down", time=when, node=None,
            evidence=Evidence(source="scheduler", file=file, line=job.line, text=clip(why)),
            fields={"host": host, "reason": clip(why, 120)},
        ))
    for host, why, words in job.troubles:
        if host:
            result.hosts.add(host)
        result.events.append(Event(
            kind="sched.node_reason", time=when, node=None,
            evidence=Evidence(source="scheduler", file=file, line=job.line, text=clip(why)),
            fields={"host": host, "reason": clip(why, 120), "text": words} if host else
            {"reason": clip(why, 120), "text": words},
        ))
    if state is None:
        return
    fields: dict[str, FieldValue] = {"state": state, "raw_state": job.raw_state or state, "scope": "job",
                                     "job_id": job.job_id, "scheduler": job.scheduler}
    if job.due_to is not None:
        fields["due_to"] = job.due_to
    if job.reason:
        fields["reason"] = clip(job.reason, 200)
    if job.exit_code is not None:
        fields["exit_code"] = job.exit_code
    if job.signal is not None:
        fields["signal"] = job.signal
    hosts = list(dict.fromkeys(job.hosts))
    if hosts:
        fields["nodelist"] = ",".join(hosts)
        result.hosts.update(hosts)
    summary = " ".join(dict.fromkeys(s for s in job.summary if s))
    result.events.append(Event(
        kind="sched.job", time=when, node=None,
        evidence=Evidence(source="scheduler", file=file, line=job.line, text=clip(summary or job.raw_state)),
        fields=fields,
    ))


def _read_prose(job: _Job, text: str) -> None:
    """A message, note or comment of a record: the table's phrases, and the hosts they name as lost."""
    for hit in text_reasons(text):
        job.say(hit.reason, text[hit.start:hit.end])
        if hit.reason == "node_failure" and hit.host:
            job.lost.append((hit.host, text.strip()))
        if hit.symptom:
            job.troubles.append((hit.host or "", text.strip(), hit.spelling))


# --------------------------------------------------------------------------
# Values: durations, sizes, times
# --------------------------------------------------------------------------

_HMS = re.compile(r"^(?:(?P<d>\d+)[-+])?(?:(?P<h>\d+):)?(?P<m>\d+):(?P<s>\d+(?:\.\d+)?)$")
_SECONDS = re.compile(r"^(?P<v>\d+(?:\.\d+)?)\s*(?P<u>s|sec\.?|seconds|min|minutes)?$")
_SIZE = re.compile(r"^(?P<v>\d+(?:\.\d+)?)\s*(?P<u>[kKmMgGtTpP]?)(?P<b>[bBwW]?)(?:ytes)?$")


def _duration(value: str | None) -> float | None:
    """`24:00:00`, `1:00:00:00`, `86400`, `86401.123s`, `480.0 min` -> seconds."""
    if not value:
        return None
    v = value.strip()
    m = _HMS.match(v)
    if m:
        return (int(m.group("d") or 0) * 86400 + int(m.group("h") or 0) * 3600 + int(m.group("m")) * 60
                + float(m.group("s")))
    m = _SECONDS.match(v)
    if m:
        return float(m.group("v")) * (60 if (m.group("u") or "").startswith("min") else 1)
    return None


def _size(value: str | None, *, decimal_lower: bool) -> float | None:
    """`25G`, `3548kb`, `48 G`, `11.108G`, `1.3 Gbytes` -> bytes. SGE's lower-case k/m/g are powers of 1000
    (`decimal_lower`); PBS's `kb`/`mb`/`gb` and LSF's units are powers of 1024; PBS's `w` is an 8-byte word."""
    if not value:
        return None
    m = _SIZE.match(value.strip())
    if m is None:
        return None
    unit = m.group("u")
    power = " kmgtp".index(unit.lower()) if unit else 0
    base = 1000 if (decimal_lower and unit.islower() and not m.group("b")) else 1024
    word = 8 if m.group("b").lower() == "w" else 1
    return float(m.group("v")) * float(base**power) * word


def _ctime(value: str, tz: tzinfo) -> datetime | None:
    """`Wed Mar 13 15:41:02 2019` (ctime, local) or `2019-03-13 15:41:02[.123]` -> UTC."""
    v = " ".join(value.split())
    for form in ("%a %b %d %H:%M:%S %Y", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%m/%d/%Y %H:%M:%S"):
        try:
            t = datetime.strptime(v, form)
        except ValueError:
            continue
        if t.year <= 1970:
            return None  # SGE prints the epoch for "never"
        return t.replace(tzinfo=tz).astimezone(UTC)
    return None


def _epoch(value: object) -> datetime | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    return datetime.fromtimestamp(value, UTC)


def _signal_exit(job: _Job, code: int, printer: str) -> None:
    """An exit status as `printer` prints it (catalog/exits.yaml): the signal it means, if one."""
    job.exit_code = code
    signum = exit_signum(printer, code)
    if signum is not None:
        job.signal = signum


# --------------------------------------------------------------------------
# SGE / UGE / OCS: the qmaster's and the execd's messages files
# --------------------------------------------------------------------------

# `$SGE_ROOT/$SGE_CELL/spool/qmaster/messages` (and each execd's `spool/<host>/messages`): `date time|thread|host|
# level|message` (StarExec/StarExec#79: `02/25/2018 04:29:57|worker|starexec2|W|job 9882833.1 failed on host
# n110.star.cs.uiowa.edu assumedly after job because: job 9882833.1 died through signal KILL (9)`; kaldi-asr/kaldi
# #4358: `... |W|job 84.1 failed on host ubuntu general opening input/output file because: ...`).
_SGE_MESSAGE = re.compile(r"^(?P<t>\d\d/\d\d/\d{4} \d\d:\d\d:\d\d)(?:\.\d+)?\|(?P<who>[^|]*)\|(?P<host>[^|]*)\|"
                          r"(?P<level>[A-Z])\|(?P<msg>.*)$")
# The qmaster on a job that failed on a host: the words after the host are the `failed` code's description (qacct's),
# what follows `because:` the shepherd's or the execd's own.
SGE_FAILED = re.compile(r"\bjob (?P<job>\d+)(?:\.(?P<task>\d+))? failed on host (?P<host>[A-Za-z0-9][\w.\-]*) "
                        r"(?P<what>[^:]+?) because: (?P<why>.*)$")
# The shepherd's word on a job a signal ended, by Grid Engine's signal name and the host's number (also in the
# job's mail: `failed assumedly after job because:` / `job 8974017.1 died through signal KILL (9)`).
SGE_DIED = re.compile(r"\bjob (?P<job>\d+(?:\.\d+)?) died through signal (?P<name>[A-Z][A-Z0-9]{1,9}) \((?P<num>\d+)\)")
# The execd killing a job over a hard limit (execd_ck_to_do.c; the limit's name decides, catalog/scheduler.yaml),
# its wall clock past h_rt among them (`job 1.1 exceeded hard wallclock time - initiate terminate method`).
_SGE_LIMIT = re.compile(r"\bjob (?P<job>\d+)(?:\.(?P<task>\d+))? "
                        r"(?:exceeds job hard limit |exceeded hard wallclock time\b)")


def sge_signal(m: re.Match[str]) -> int | None:
    """The signal's number of a `died through signal KILL (9)` (SGE_DIED): its name where Python knows it, else
    the number as the host numbers signals (catalog/exits.yaml, printer sge-signal)."""
    by_name = signal_number(f"SIG{m.group('name')}")
    return by_name if by_name is not None else exit_signum("sge-signal", int(m.group("num")))


def _sge_messages(out: Output, tz: tzinfo, times: TimeParser, issues: list[ParseIssue]) -> Iterator[_Job]:
    jobs: dict[str, _Job] = {}
    for lineno, line in out.lines:
        m = _SGE_MESSAGE.match(line.strip())
        if m is None:
            continue
        msg, when = m.group("msg"), _ctime(m.group("t"), tz)
        failed = SGE_FAILED.search(msg)
        limit = _SGE_LIMIT.search(msg) if failed is None else None
        hit = failed or limit
        if hit is None:
            continue
        task = hit.group("task")
        job_id = hit.group("job") if task in (None, "1") else f"{hit.group('job')}.{task}"
        job = jobs.get(job_id)
        if job is None:
            job = jobs[job_id] = _Job("sge", job_id, lineno)
        job.finished, job.end = True, when or job.end
        job.summary.append(clip(line, 200))
        if failed is not None:
            job.hosts.append(failed.group("host"))
            what, why = failed.group("what").strip(), failed.group("why").strip()
            job.raw_state = job.raw_state or f"failed {what}"
            _read_prose(job, what)
            _read_prose(job, why)
            died = SGE_DIED.search(why)
            if died is not None:
                job.signal = sge_signal(died)
        else:
            host = m.group("host").strip()
            if host:
                job.hosts.append(host)  # the execd's own messages: its host
            _read_prose(job, msg)
            job.raw_state = job.raw_state or clip(msg, 120)
    yield from jobs.values()


# --------------------------------------------------------------------------
# HTCondor: job ads (condor_q -l, condor_history -l)
# --------------------------------------------------------------------------

# A job ad as `condor_q -l` / `condor_history -l` print it: `Attribute = value` lines, one ad after another (a blank
# line or `-- Schedd:` between them). Attributes (HTCondor's manual, "Job ClassAd Attributes"): JobStatus (1 idle,
# 2 running, 3 removed, 4 completed, 5 held, 6 transferring output, 7 suspended); ExitBySignal, and then ExitSignal,
# the signal's number, else ExitCode, the job's exit value; HoldReason / HoldReasonCode (34 the job's memory, 46 and
# 47 its allowed durations: catalog/scheduler.yaml); RemoveReason; RemoteHost / LastRemoteHost (`slot1_3@host`).
# An ExitSignal beside `ExitBySignal = false` is an earlier run's (a vacated start), not the job's end.
_AD_LINE = re.compile(r"^(?P<key>[A-Za-z_][\w.]{0,80})\s*=\s*(?P<value>.*?)\s*$")
_AD_ENDED = {"3": "Removed", "4": "Completed", "5": "Held"}


def _ad_records(lines: list[tuple[int, str]]) -> Iterator[tuple[int, dict[str, str]]]:
    record: dict[str, str] = {}
    start = 0
    for lineno, line in lines:
        m = _AD_LINE.match(line.strip())
        if m is None:
            if record and (not line.strip() or line.startswith("-- ")):
                yield start, record
                record = {}
            continue
        key = m.group("key")
        if key in record and key in ("ClusterId", "GlobalJobId"):
            yield start, record  # the next ad, pasted without a blank line between them
            record = {}
        if not record:
            start = lineno
        record[key] = m.group("value")
    if record:
        yield start, record


def _ad_text(value: str) -> str:
    v = value.strip()
    return v[1:-1].replace('\\"', '"') if len(v) >= 2 and v[0] == v[-1] == '"' else v


def _htcondor(out: Output, tz: tzinfo, times: TimeParser, issues: list[ParseIssue]) -> Iterator[_Job]:
    for lineno, ad in _ad_records(out.lines):
        status = ad.get("JobStatus", "").strip()
        if status not in _AD_ENDED:
            continue  # not a job ad, or a job that has not ended
        cluster, proc = ad.get("ClusterId", "").strip(), ad.get("ProcId", "").strip()
        job_id = f"{cluster}.{proc}" if cluster and proc else cluster or _ad_text(ad.get("GlobalJobId", "?"))
        job = _Job("htcondor", job_id, lineno)
        job.finished = True
        host = _ad_text(ad.get("RemoteHost") or ad.get("LastRemoteHost") or "")
        if host:
            job.hosts.append(host.rsplit("@", 1)[-1])
        for key in ("CompletionDate", "EnteredCurrentStatus"):
            raw = ad.get(key, "").strip()
            if raw.isdigit():
                job.end = _epoch(int(raw))
                break
        said = [f"JobStatus = {status} ({_AD_ENDED[status]})"]
        if status == "4":
            if ad.get("ExitBySignal", "").strip().lower() == "true" and ad.get("ExitSignal", "").strip().isdigit():
                job.signal = exit_signum("htcondor-signal", int(ad["ExitSignal"].strip()))
                said.append(f"ExitSignal = {ad['ExitSignal'].strip()}")
            elif ad.get("ExitCode", "").strip().lstrip("-").isdigit():
                _signal_exit(job, int(ad["ExitCode"].strip()), "htcondor")
                said.append(f"ExitCode = {job.exit_code}")
        code = ad.get("HoldReasonCode", "").strip() if status == "5" else ""
        if code:
            row = word_reason("htcondor", code, "hold_code")
            job.say(row.reason if row is not None else None, f"HoldReasonCode {code}")
            said.append(f"HoldReasonCode = {code}")
        for key in ("HoldReason",) if status == "5" else ("RemoveReason",) if status == "3" else ():
            text = _ad_text(ad.get(key, ""))
            if text:
                reading = message_reading(text)
                job.say(reading.reason if reading is not None else None, clip(text, 160))
                said.append(f"{key} = {clip(text, 120)}")
        job.raw_state = ", ".join(said)
        job.summary.append(job.raw_state)
        yield job


# --------------------------------------------------------------------------
# SGE / UGE / OCS: qacct -j
# --------------------------------------------------------------------------

_QACCT_KEY = re.compile(r"^(?P<key>[a-z_]+):?\s+(?P<value>.*?)\s*$")
_FAILED = re.compile(r"^(?P<code>\d+)\s*(?::\s*(?P<text>.*))?$")
_CATEGORY_LIMIT = re.compile(r"(?:^|[\s,])(?P<key>[hs]_(?:rt|cpu|vmem|rss))=(?P<value>[^,\s]+)")


def _qacct_records(lines: list[tuple[int, str]]) -> Iterator[tuple[int, dict[str, str]]]:
    record: dict[str, str] = {}
    start = 0
    for lineno, line in lines:
        if line.startswith("=====") or not line.strip():
            if record:
                yield start, record
                record = {}
            continue
        m = _QACCT_KEY.match(line)
        if m is None:
            continue
        if not record:
            start = lineno
        record.setdefault(m.group("key"), m.group("value"))
    if record:
        yield start, record


def _qacct(out: Output, tz: tzinfo, times: TimeParser, issues: list[ParseIssue]) -> Iterator[_Job]:
    for lineno, rec in _qacct_records(out.lines):
        number = rec.get("jobnumber", "").strip()
        if "failed" not in rec and "exit_status" not in rec:
            if number:
                issues.append(ParseIssue(lineno, f"qacct {number}: no failed or exit_status; skipped"))
            continue  # not a qacct record
        if not number:
            issues.append(ParseIssue(lineno, "qacct record without jobnumber: job id unknown"))
        task = rec.get("taskid", "").strip()
        job = _Job("sge", number if task in ("", "undefined", "1") else f"{number}.{task}", lineno)
        host = rec.get("hostname", "").strip()
        if host:
            job.hosts.append(host)
        job.start = _ctime(rec.get("start_time", ""), tz)
        job.end = _ctime(rec.get("end_time", ""), tz)
        failed_raw = rec.get("failed", "").strip()
        exit_raw = rec.get("exit_status", "").strip()
        job.summary += [f"jobnumber={number}" if number else "", f"failed={' '.join(failed_raw.split())}"
                        if failed_raw else "", f"exit_status={' '.join(exit_raw.split())}" if exit_raw else "",
                        f"hostname={host}" if host else ""]
        job.raw_state = " ".join(f"failed {failed_raw}, exit_status {exit_raw}".split())
        m = _FAILED.match(failed_raw) if failed_raw else None
        if failed_raw and m is None:
            issues.append(ParseIssue(lineno, f"qacct {number}: failed: expected a code, got {failed_raw!r}"))
        code = int(m.group("code")) if m else 0
        if code:
            job.finished = True
            reason_text = (m.group("text") or "").strip() if m else ""
            job.reason = f"failed {code}: {reason_text}" if reason_text else f"failed {code}"
            _read_prose(job, reason_text)
            if code != 100 and job.due_to is None and job.reason is not None:
                # 1-36, 38: the shepherd failed before, around or after the job (prolog, directory, shell,
                # epilog): the job did not run to its end, and the code names no limit.
                job.state = "FAILED"
        exit_text = exit_raw.split()[0] if exit_raw else ""
        if exit_text:
            try:
                _signal_exit(job, int(exit_text), "sge")
            except ValueError:
                issues.append(ParseIssue(lineno, f"qacct {number}: exit_status: not a number: {exit_raw!r}"))
        job.finished = True
        wall = _duration(rec.get("ru_wallclock"))
        if wall is None and job.start and job.end:
            wall = (job.end - job.start).total_seconds()
        job.used_time = wall
        job.used_cpu = _duration(rec.get("cpu"))
        job.used_mem = _size(rec.get("maxvmem"), decimal_lower=True)
        limits = {m.group("key"): m.group("value") for m in _CATEGORY_LIMIT.finditer(rec.get("category", ""))}
        job.time_limit = _duration(limits.get("h_rt") or limits.get("s_rt"))
        job.cpu_limit = _duration(limits.get("h_cpu") or limits.get("s_cpu"))
        job.mem_limit = _size(limits.get("h_vmem") or limits.get("s_vmem"), decimal_lower=True)
        # h_vmem is per slot: the execd holds a parallel job's processes on a host to it times the job's slots there
        # (the lab's sge_h_vmem: `-l h_vmem=900M -pe smp 3`, `exceeds job hard limit "h_vmem" ... (3170500608.00000
        # > limit:2831155200.00000)`, 3 x 900M); qacct's `slots` is the job's (one host's for a $pe_slots PE)
        slots = rec.get("slots", "").strip()
        if job.mem_limit and slots.isdigit() and int(slots) > 1 and rec.get("granted_pe", "NONE").strip() != "NONE":
            job.mem_limit *= int(slots)
        yield job


# --------------------------------------------------------------------------
# PBS / Torque: qstat -f and tracejob
# --------------------------------------------------------------------------

_QSTAT_KEY = re.compile(r"^ {4}(?P<key>[A-Za-z_][\w.]*) = (?P<value>.*)$")
_JOB_ID_LINE = re.compile(r"^\s*Job Id:\s*(?P<id>\S+)")
# `qstat -f` job_state letters (PBS Pro: F finished; Torque: C completed; E exiting: both finished or nearly).
_PBS_STATES = {"R": "RUNNING", "Q": "PENDING", "H": "PENDING", "W": "PENDING", "T": "PENDING", "S": "SUSPENDED",
               "U": "SUSPENDED", "B": "RUNNING", "M": "PENDING"}


def _pbs_flavour(values: Mapping[str, str]) -> str | None:
    """Which PBS printed a `qstat -f` record, where it says: PBS Professional / OpenPBS print `Exit_status` and
    job_state F; Torque `exit_status` and C (their manuals' `qstat -f` examples). None: the record does not say."""
    letter = values.get("job_state", "").strip()
    if letter == "F" or "Exit_status" in values:
        return "pbspro"
    if letter == "C" or "exit_status" in values:
        return "torque"
    return None


def _pbs_exit(job: _Job, raw: str, issues: list[ParseIssue], line: int, flavour: str | None = None) -> None:
    """PBS's Exit_status: 0-127 the job's own; 128-255 (PBS Pro, Torque) and above 256 (the MOM's
    signal encoding: 256 + N) a signal; negative, the MOM's own JOB_EXEC_* code (the job was killed or
    could not run), read as `flavour` (pbspro, torque) numbers them where the record says which, else only where
    every PBS reads it alike (catalog/scheduler.yaml, the `pbs` rows)."""
    try:
        code = int(raw.strip())
    except ValueError:
        issues.append(ParseIssue(line, f"Exit_status: not a number: {raw.strip()!r}"))
        return
    job.finished = True
    if code < 0:
        job.exit_code = code
        job.negative_exit = True
        row = (word_reason(flavour, str(code), "exit_status") if flavour else None) or word_reason(
            "pbs", str(code), "exit_status")
        if row is not None:
            # The MOM's code names the limit it killed the job over (JOB_EXEC_KILL_*).
            job.say(row.reason, f"Exit_status {code}")
    else:
        _signal_exit(job, code, "pbs")


def _pbs_hosts(exec_host: str) -> list[str]:
    """`gc-prd-hpcn001/3`, `r2i7n16/0-23+r2i6n14/0-23`, `gpu-2-17/11` -> host names."""
    return [part.split("/", 1)[0].strip() for part in exec_host.split("+") if part.split("/", 1)[0].strip()]


def _pbs_resources(job: _Job, values: Mapping[str, str]) -> None:
    get = values.get
    job.used_time = _duration(get("resources_used.walltime"))
    job.used_cpu = _duration(get("resources_used.cput"))
    job.used_mem = _size(get("resources_used.mem"), decimal_lower=False)
    vmem = _size(get("resources_used.vmem"), decimal_lower=False)
    job.time_limit = _duration(get("Resource_List.walltime"))
    job.cpu_limit = _duration(get("Resource_List.cput"))
    job.mem_limit = _size(get("Resource_List.mem"), decimal_lower=False)
    vmem_limit = _size(get("Resource_List.vmem"), decimal_lower=False)
    if vmem is not None and vmem_limit and (job.mem_limit is None or vmem >= vmem_limit * _MEMORY_REACHED):
        job.used_mem, job.mem_limit = vmem, vmem_limit


# A record pasted without its `Job Id:` line, as threads cut `qstat -f` to the lines that matter (`Exit_status = 271`,
# `resources_used.walltime = ...`), at whatever indentation the paste left: the keys qstat prints.
_QSTAT_LOOSE_KEY = re.compile(r"^\s*(?P<key>(?:resources_used|Resource_List)\.\w+|Exit_status|exit_status|job_state|"
                              r"exec_host|comment) = (?P<value>.*)$")


def _qstat_records(lines: list[tuple[int, str]]) -> Iterator[tuple[int, str, dict[str, str]]]:
    job_id, start, last = "", 0, ""
    fragment = False  # a record whose `Job Id:` line the paste left out (its id unknown)
    values: dict[str, str] = {}
    for lineno, line in lines:
        head = _JOB_ID_LINE.match(line)
        if head:
            if job_id or fragment:
                yield start, job_id, values
            job_id, start, values, last, fragment = head.group("id"), lineno, {}, "", False
            continue
        if not job_id and not fragment and (loose := _QSTAT_LOOSE_KEY.match(line)) is not None:
            fragment, start, values, last = True, lineno, {loose.group("key"): loose.group("value").strip()}, ""
            continue  # (a fragment's lines are its keys only: what else a paste holds is no value's rest)
        if not (job_id or fragment) or not line.strip():
            continue
        m = _QSTAT_KEY.match(line) or (_QSTAT_LOOSE_KEY.match(line) if fragment else None)
        if m:
            last = m.group("key")
            values[last] = m.group("value").strip()
        elif last and not fragment:
            # A long value goes on in the next lines (a tab or a deeper indent), cut where the width ran out.
            values[last] += line.strip()
    if job_id or fragment:
        yield start, job_id, values


def _qstat(out: Output, tz: tzinfo, times: TimeParser, issues: list[ParseIssue]) -> Iterator[_Job]:
    for lineno, job_id, values in _qstat_records(out.lines):
        job = _Job("pbs", job_id, lineno)
        letter = values.get("job_state", "").strip()
        job.raw_state = f"job_state {letter}" if letter else ""
        if letter in _PBS_STATES:
            job.state = _PBS_STATES[letter]
        exit_raw = values.get("Exit_status", values.get("exit_status"))
        if exit_raw is not None:
            _pbs_exit(job, exit_raw, issues, lineno, _pbs_flavour(values))
            job.raw_state += f", Exit_status {exit_raw.strip()}"
            job.state = None if letter in ("F", "C", "E", "") else job.state
        elif letter in ("F", "C"):
            job.finished = True
        job.hosts += _pbs_hosts(values.get("exec_host", ""))
        job.start = _ctime(values.get("stime", values.get("start_time", "")), tz)
        job.end = _ctime(values.get("obittime", values.get("mtime", "")), tz) if job.finished else None
        comment = values.get("comment", "")
        _read_prose(job, comment)
        _pbs_resources(job, values)
        job.summary += [f"Job Id: {job_id}", job.raw_state,
                        f"resources_used.walltime={values['resources_used.walltime']}"
                        if "resources_used.walltime" in values else "",
                        f"Resource_List.walltime={values['Resource_List.walltime']}"
                        if "Resource_List.walltime" in values else "",
                        f"comment={comment}" if comment else ""]
        yield job


# `11/25/2014 10:50:28  S    committing job` (tracejob), `04/18/2016 22:55:25;0008;PBS_Server.12149;Job;
# 7082041.hal-sched1.local;Job deleted at request of root@hal-sched1` (server and MOM logs),
# `06/06/2005 14:07:17;E;407.ign1.zeta2.org;user=guest ... Exit_status=0 ...` (accounting).
_TRACE_LINE = re.compile(r"^(?P<t>\d\d/\d\d/\d{4} \d\d:\d\d:\d\d)(?:\s+(?P<src>[SMAL])\s+|;)(?P<rest>.*)$")
_TRACE_JOB = re.compile(r"^\s*Job:\s*(?P<id>\S+)")
_ACCOUNTING = re.compile(r"^(?P<rec>[A-Z]);(?P<id>[^;]+);(?P<kv>.*)$")
_LOG_RECORD = re.compile(r"^[0-9a-fA-F]{4};[^;]*;(?:Job|Svr|Req|Node);(?P<id>[^;]*);(?P<msg>.*)$")
_KV = re.compile(r"(?P<k>[A-Za-z_][\w.]*)=(?P<v>\S*)")
_EXIT_KV = re.compile(r"\bExit_status=(?P<code>-?\d+)")


def _tracejob(out: Output, tz: tzinfo, times: TimeParser, issues: list[ParseIssue]) -> Iterator[_Job]:
    jobs: dict[str, _Job] = {}
    values: dict[str, dict[str, str]] = {}
    current = ""
    for lineno, line in out.lines:
        head = _TRACE_JOB.match(line)
        if head:
            current = head.group("id")
            continue
        m = _TRACE_LINE.match(line)
        if m is None:
            continue
        when = _ctime(m.group("t"), tz)
        rest = m.group("rest").strip()
        message, job_id = rest, current
        acct = _ACCOUNTING.match(rest) if m.group("src") is None else None
        logged = _LOG_RECORD.match(rest) if m.group("src") is None else None
        if acct:
            job_id, message = acct.group("id"), acct.group("kv")
            kv = {k.group("k"): k.group("v") for k in _KV.finditer(message)}
            values.setdefault(job_id, {}).update(kv)
        elif logged:
            job_id, message = logged.group("id") or current, logged.group("msg")
        if not job_id:
            job_id = "?"
        job = jobs.get(job_id)
        if job is None:
            job = jobs[job_id] = _Job("pbs", job_id, lineno)
            job.start = when
        if m.group("src") == "A" or acct:
            values.setdefault(job_id, {}).update({k.group("k"): k.group("v") for k in _KV.finditer(message)})
        exit_m = _EXIT_KV.search(message)
        if exit_m:
            _pbs_exit(job, exit_m.group("code"), issues, lineno)
            job.end = when
            job.summary.append(clip(line, 160))
        before = (job.reason, job.due_to, len(job.lost))
        _read_prose(job, message)
        if (job.reason, job.due_to, len(job.lost)) != before:
            job.summary.append(clip(line, 160))
            if job.due_to is not None:
                job.finished, job.end = True, job.end or when
    for job_id, job in jobs.items():
        kv = values.get(job_id, {})
        job.hosts += _pbs_hosts(kv.get("exec_host", ""))
        _pbs_resources(job, kv)
        job.raw_state = ", ".join(s for s in (f"Exit_status {job.exit_code}" if job.exit_code is not None else "",
                                              job.reason or "") if s)
        if job.finished or job.lost or job.troubles:
            yield job


# --------------------------------------------------------------------------
# LSF: bjobs -l and bhist -l
# --------------------------------------------------------------------------

# An event line: `Tue Jul 24 10:26:53: Started on <a3010>, ...` or with the year (`Mon Aug  4 12:28:51 2014: `).
_LSF_STAMP = re.compile(r"^(?P<wd>[A-Z][a-z]{2}) (?P<mon>[A-Z][a-z]{2}) +(?P<day>\d{1,2}) "
                        r"(?P<hms>\d\d:\d\d:\d\d)(?: (?P<year>\d{4}))?: ")
_LSF_JOB = re.compile(r"^Job <(?P<id>[^>]+)>")
_LSF_STATUS = re.compile(r"\bStatus <(?P<status>[A-Z]+)>")
_LSF_HOSTS = re.compile(r"(?:Started|Dispatched)(?: \d+ Task\(s\))? on (?:Host\(s\) )?(?P<hosts>(?:<[^>]+>,? ?)+)"
                        r"|Dispatched to (?P<hosts2>(?:<[^>]+>,? ?)+)")
_LSF_EXIT = re.compile(r"Exited with exit code (?P<code>\d+)|Exited by (?:LSF )?signal (?P<sig>\d+)")
_LSF_TERM = re.compile(r"\bTERM_[A-Z_]+\b")
# LSF's job states: DONE and EXIT are final, the others are not.
_LSF_STATES = {"RUN": "RUNNING", "PEND": "PENDING", "PSUSP": "SUSPENDED", "USUSP": "SUSPENDED",
               "SSUSP": "SUSPENDED", "WAIT": "PENDING"}


def _lsf_records(lines: list[tuple[int, str]]) -> Iterator[tuple[int, list[tuple[int, str]]]]:
    """Each `Job <ID>` record, its lines joined again where LSF cut them at the width (a continuation
    line is indented by the width of the record's time stamps, and the cut falls anywhere, mid-word too)."""
    raw: list[tuple[int, str]] = []
    for lineno, line in lines:
        if _LSF_JOB.match(line) or line.startswith("-----"):
            if raw:
                yield raw[0][0], _lsf_join(raw)
            raw = [(lineno, line)] if _LSF_JOB.match(line) else []
        elif raw or _LSF_STAMP.match(line):
            # A record pasted without its `Job <ID>` line starts at its first event.
            raw.append((lineno, line))
    if raw:
        yield raw[0][0], _lsf_join(raw)


def _lsf_join(raw: list[tuple[int, str]]) -> list[tuple[int, str]]:
    stamp = next((m for _, ln in raw if (m := _LSF_STAMP.match(ln))), None)
    indent = stamp.end() if stamp else 21  # `Tue Jul 24 10:26:53: ` (21) or with the year (26)
    out: list[tuple[int, str]] = []
    for lineno, line in raw:
        if out and line.startswith(" " * indent) and line.strip():
            no, prev = out[-1]
            out[-1] = (no, prev + line[indent:])
        else:
            out.append((lineno, line))
    return out


def _lsf_time(m: re.Match[str], tz: tzinfo, times: TimeParser) -> datetime | None:
    if m.group("year"):
        return _ctime(f"{m.group('wd')} {m.group('mon')} {m.group('day')} {m.group('hms')} {m.group('year')}", tz)
    stamp = times.parse(f"{m.group('mon')} {int(m.group('day')):2d} {m.group('hms')} .")
    return stamp.wall if stamp else None


def _lsf(out: Output, tz: tzinfo, times: TimeParser, issues: list[ParseIssue]) -> Iterator[_Job]:
    for start, lines in _lsf_records(out.lines):
        head = _LSF_JOB.match(lines[0][1])
        if head is None:
            issues.append(ParseIssue(start, "LSF record without its `Job <ID>` line: job id unknown"))
        job = _Job("lsf", head.group("id") if head else "", start)
        status = _LSF_STATUS.search(lines[0][1]) if head else None
        if head:
            job.summary.append(clip(lines[0][1], 120))
        if status:
            job.raw_state = status.group("status")
            job.state = _LSF_STATES.get(job.raw_state)
            job.finished = job.raw_state in ("DONE", "EXIT")
        limits: dict[str, str] = {}
        section = ""
        for _, line in lines[1:] if head else lines:
            stamp = _LSF_STAMP.match(line)
            body = line[stamp.end():] if stamp else line
            when = _lsf_time(stamp, tz, times) if stamp else None
            if stamp and job.start is None:
                job.start = when
            hosts = _LSF_HOSTS.search(body)
            if hosts:
                names = re.findall(r"<([^>]+)>", hosts.group("hosts") or hosts.group("hosts2") or "")
                job.hosts += [n.split("*", 1)[-1] for n in names]
            ended = _LSF_EXIT.search(body)
            if ended:
                if ended.group("code") is not None:
                    _signal_exit(job, int(ended.group("code")), "lsf")
                else:
                    job.signal = int(ended.group("sig"))
                job.end, job.finished = when or job.end, True
                job.summary.append(clip(body, 120))
            if "Done successfully" in body:
                job.exit_code, job.end, job.finished = 0, when or job.end, True
                job.summary.append(clip(body, 120))
            for word in _LSF_TERM.findall(body):
                row = word_reason("lsf", word)
                job.say(row.reason if row else None, word)
                job.end, job.finished = when or job.end, True
                job.summary.append(clip(body, 160))
            if not stamp:
                if body.strip().isupper() and " " not in body.strip():
                    section = body.strip()  # ` RUNLIMIT` / ` MEMLIMIT`, its value on the next line
                elif section:
                    limits[section] = body.strip()
                    section = ""
                mem = re.search(r"MAX MEM: (?P<v>[\d.]+ [KMGT]?bytes)", body)
                if mem:
                    job.used_mem = _size(mem.group("v"), decimal_lower=False)
        job.time_limit = _duration(limits.get("RUNLIMIT", "").split(" of ")[0])
        job.mem_limit = _size(limits.get("MEMLIMIT"), decimal_lower=False)
        lost = word_reason("lsf", job.raw_state, "state") if job.raw_state else None
        if lost is not None and lost.reason == "node_failure" and job.hosts:
            # mbatchd lost the job's (first) execution host: that host lost, whatever the job's end turns out to be
            job.lost.append((job.hosts[0], f"Status <{job.raw_state}>: the execution host {job.hosts[0]} was lost"))
        if job.reason:
            job.raw_state = f"{job.raw_state} {job.reason}".strip()
        if job.finished and job.state in _LSF_STATES.values():
            job.state = None
        yield job


# --------------------------------------------------------------------------
# Flux: flux jobs, and a job's eventlog
# --------------------------------------------------------------------------

_FLUX_STATUS = {"CD": "COMPLETED", "COMPLETED": "COMPLETED", "F": "FAILED", "FAILED": "FAILED",
                "CA": "CANCELLED", "CANCELED": "CANCELLED", "TO": "TIMEOUT", "TIMEOUT": "TIMEOUT",
                "R": "RUNNING", "RUNNING": "RUNNING", "C": "RUNNING", "P": "PENDING", "PENDING": "PENDING",
                "S": "PENDING", "D": "PENDING"}
# The columns `flux jobs` names in its header (flux-jobs(1); the formatter's headings) that say how a job ended.
_FLUX_TEXT_COLUMNS = ("EXCEPTION-NOTE", "INACTIVE-REASON", "INFO")
_FLUX_EVENT = re.compile(r"^(?:(?P<epoch>\d{9,}\.\d+)|\[(?P<human>[^\]]+)\])\s+(?P<name>[a-z][\w.\-]*)(?P<ctx>.*)$")
_FLUX_CTX = re.compile(r'(?P<k>[\w.\-]+)=(?:"(?P<q>(?:[^"\\]|\\.)*)"|(?P<v>\S*))')
_FLUX_HUMAN = re.compile(r"^(?P<mon>[A-Z][a-z]{2})(?P<day>\d{1,2}) (?P<hm>\d\d:\d\d)$")
_FLUX_OFFSET = re.compile(r"^\s*\+(?P<s>\d+(?:\.\d+)?)$")
# `flux jobs --stats` / `--stats-only`: `0 running, 2658 completed, 342 failed, 0 pending` (older: `... 0 inactive`).
_FLUX_STATS = re.compile(r"^\s*\d+ running, \d+ completed, \d+ failed")


def _flux_command(words: list[str]) -> tuple[str | None, str]:
    """What a pasted `flux` command printed, and the job it names: (`eventlog`, id) for `flux job eventlog ID` and
    `flux job info ID eventlog`; (`other`, id) for another key of `flux job info` (`R`, `jobspec`), which holds no
    event; (None, "") for anything else (what the output looks like decides)."""
    args = [w for w in words[1:] if not w.startswith("-")]
    if words[:1] != ["flux"] or args[:1] != ["job"] or len(args) < 3:
        return None, ""
    if args[1] == "eventlog":
        return "eventlog", args[2]
    if args[1] == "info" and len(args) >= 4:
        return ("eventlog" if args[3] == "eventlog" else "other"), args[2]
    return None, ""


def _flux(out: Output, tz: tzinfo, times: TimeParser, issues: list[ParseIssue]) -> Iterator[_Job]:
    lines = [(n, ln) for n, ln in out.lines if ln.strip()]
    if not lines:
        return
    what, job_id = _flux_command(out.words())
    if what == "other":
        return  # R, the jobspec: the job's resources and request, no record of how it ended
    first = lines[0][1].lstrip()
    if what == "eventlog" or first.startswith("{") or _FLUX_EVENT.match(first):
        yield from _flux_eventlog(lines, tz, times, issues, job_id)
    else:
        yield from _flux_listing(lines, issues)


def _flux_exception(job: _Job, ctx: Mapping[str, object]) -> None:
    """A job exception: a fatal one (severity 0) ended the job; its type and note say why."""
    if str(ctx.get("severity", "0")) != "0":
        return
    kind = str(ctx.get("type", ""))
    note = str(ctx.get("note", ""))
    row = word_reason("flux", kind)
    job.say(row.reason if row else None, f"exception type={kind}" + (f": {note}" if note else ""))
    _read_prose(job, note)
    job.finished = True
    job.state = job.state or "FAILED"


def _flux_eventlog(lines: list[tuple[int, str]], tz: tzinfo, times: TimeParser,
                   issues: list[ParseIssue], job_id: str = "") -> Iterator[_Job]:
    job = _Job("flux", job_id, lines[0][0])
    base: datetime | None = None
    for lineno, line in lines:
        name: str
        ctx: dict[str, object]
        when: datetime | None = None
        if line.lstrip().startswith("{"):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                issues.append(ParseIssue(lineno, f"eventlog: not JSON: {exc.msg}; line skipped"))
                continue
            if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
                issues.append(ParseIssue(lineno, "eventlog: an entry needs a name; line skipped"))
                continue
            name, when = obj["name"], _epoch(obj.get("timestamp"))
            raw_ctx = obj.get("context")
            ctx = dict(raw_ctx) if isinstance(raw_ctx, dict) else {}
        else:
            m = _FLUX_EVENT.match(line.strip())
            if m is None:
                continue
            name = m.group("name")
            ctx = {c.group("k"): c.group("q") if c.group("q") is not None else c.group("v")
                   for c in _FLUX_CTX.finditer(m.group("ctx"))}
            if m.group("epoch"):
                when = _epoch(float(m.group("epoch")))
            else:
                human = _FLUX_HUMAN.match(m.group("human").strip())
                offset = _FLUX_OFFSET.match(m.group("human"))
                if human:
                    stamp = times.parse(f"{human.group('mon')} {int(human.group('day')):2d} {human.group('hm')}:00 .")
                    base = when = stamp.wall if stamp else None
                elif offset and base is not None:
                    when = base + timedelta(seconds=float(offset.group("s")))
        if name == "submit" or (name in ("alloc", "start") and job.start is None):
            job.start = job.start or when
        elif name == "exception":
            before = job.reason
            _flux_exception(job, ctx)
            if job.reason != before:
                job.summary.append(clip(line, 160))
                job.end = job.end or when
        elif name == "finish":
            status = ctx.get("status")
            try:
                wait = int(str(status))
            except ValueError:
                issues.append(ParseIssue(lineno, f"eventlog: finish status: not a number: {status!r}"))
                continue
            # A wait status: the job shell's exit code in the high byte, a signal in the low bits.
            read = exit_reading("flux", wait)
            if read.exit is not None:
                job.exit_code = read.exit
            if read.signal is not None:
                job.signal = signal_number(read.signal)
            # The job ended at its fatal exception, when it had one; else when it finished.
            job.finished, job.end = True, job.end or when
            job.summary.append(clip(line, 160))
    if job.finished or job.lost:
        job.raw_state = job.reason or (f"finish status {job.exit_code}" if job.exit_code is not None else "")
        yield job


def _flux_columns(header: str) -> list[tuple[str, int, int]]:
    return [(m.group(0), m.start(), m.end()) for m in re.finditer(r"\S+", header)]


def _flux_listing(lines: list[tuple[int, str]], issues: list[ParseIssue]) -> Iterator[_Job]:
    # The header may follow `flux jobs --stats`' own line (`0 running, 2658 completed, 342 failed, 0 pending`);
    # a listing without one (`-n`) is rows from its first line, and a line of counts is no row.
    at = next((i for i, (_, ln) in enumerate(lines[:3]) if "JOBID" in ln.split()), None)
    columns = _flux_columns(lines[at][1]) if at is not None else []
    rows = lines[at + 1:] if at is not None else [r for r in lines if not _FLUX_STATS.match(r[1])]
    for lineno, row in rows:
        cells: dict[str, str] = {}
        tokens = [(m.group(0), m.start(), m.end()) for m in re.finditer(r"\S+", row)]
        if not tokens:
            continue
        if columns and len(tokens) == len(columns):
            # One word a column (a listing pasted without its padding): in order.
            cells = {name: tok for (name, _, _), (tok, _, _) in zip(columns, tokens, strict=True)}
        elif columns:
            for tok, a, b in tokens:
                # Each word goes to the column its span overlaps most (columns are left- or right-aligned);
                # the last column takes the rest of the line.
                best = max(columns, key=lambda c: (min(b, c[2]) - max(a, c[1]), -abs(a - c[1])))
                name = best[0] if a < columns[-1][1] else columns[-1][0]
                cells[name] = f"{cells[name]} {tok}" if name in cells else tok
        else:
            cells["JOBID"] = tokens[0][0]
            rest = row[tokens[0][2]:].strip()
            words = rest.split()
            if words and word_reason("flux", words[0]) is not None:
                cells["EXCEPTION-TYPE"], rest = words[0], rest[len(words[0]):].strip()
            cells["EXCEPTION-NOTE"] = rest
        job_id = cells.get("JOBID", "")
        if not job_id:
            issues.append(ParseIssue(lineno, "flux jobs row without a JOBID; skipped"))
            continue
        job = _Job("flux", job_id, lineno)
        job.summary.append(clip(row.strip(), 200))
        status = cells.get("ST") or cells.get("STATUS") or cells.get("RESULT") or cells.get("RS") or ""
        job.raw_state = status
        if status in _FLUX_STATUS:
            job.state = _FLUX_STATUS[status]
            job.finished = job.state not in ("RUNNING", "PENDING")
        for col in ("RESULT", "RS", "ST", "STATUS"):
            row_word = word_reason("flux", cells.get(col), "result")
            if row_word is not None:
                job.say(row_word.reason, cells[col])
        exc = cells.get("EXCEPTION-TYPE", "")
        if exc:
            _flux_exception(job, {"type": exc, "severity": cells.get("EXCEPTION-SEVERITY", "0"),
                                  "note": cells.get("EXCEPTION-NOTE", "")})
        for col in _FLUX_TEXT_COLUMNS:
            if col in cells and not (col == "EXCEPTION-NOTE" and exc):
                _read_prose(job, cells[col])
        nodes = cells.get("NODELIST", "")
        if nodes and nodes != "-":
            try:
                job.hosts += hostlist_expand(nodes)
            except ValueError as exc:
                issues.append(ParseIssue(lineno, f"NODELIST: {exc}"))
        if job.state == "COMPLETED":
            job.exit_code = 0
        if job.state in ("RUNNING", "PENDING") or job.finished or job.due_to or job.lost:
            yield job
