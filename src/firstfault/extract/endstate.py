"""A workload manager's end state, in whatever layout it was posted: (key, value) pairs read through one table.

A scheduler or an orchestrator says why it ended a job as a key and its value: a Kubernetes container's
`Reason:  OOMKilled` (`kubectl describe`), `reason: Evicted` (YAML), `"reason": "DeadlineExceeded"` (JSON),
HTCondor's `HoldReason = "..."` and `HoldReasonCode = 34` (a job ad), AWS Batch's `Status reason<TAB>...`,
docker's `"OOMKilled": true`, Nomad's `Exit Message: "OOM Killed"`. This module finds such pairs on a line in
each of those layouts, and reads the value by what catalog/scheduler.yaml's `keys` say the key is (a reason
word, a message in prose, a flag, a code), through the table's `words`, `texts` and `resources`. So a new
scheduler is a row of words or keys, a new layout a layout here, never a pattern per wording.

Guards, each a reason the words of the table on a line are no end state: a comment (`# ... OOMKilled`), a
template (`{{ $labels.pod }} was OOMKilled`), a flag
that is false (`"OOMKilled": false`), a label matcher of a query (`{reason="OOMKilled"}`), a reason that names
no cause (`Reason: Completed`, `reason: Error`), a container's earlier end whose restart recovered (`State:
Running` above its `Last State: Terminated`, kubectl describe's order), an HTCondor policy expression that did
not evaluate to true or names several resources.

Two phrase readers work beside the pairs, for the messages a scheduler writes itself: an HTCondor policy
expression that removed or held the job (`The job attribute PeriodicRemove expression '(DiskUsage > 2e7)'
evaluated to TRUE`: the resource its attributes name), and a kill for excessive use of a named resource
(`Not retrying job due to excessive disk usage (job automatically killed on the worker node)`).

Read by the job-output extractor (extract/jobend.py) on every line that holds a word of the table.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from functools import lru_cache
from typing import NamedTuple

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import SchedKey, SchedResource, SchedWord, sched_tables
from firstfault.extract.reasons import text_reasons, word_reason


class Reading(NamedTuple):
    """What one line's end state says: a normalised reason (None: understood, names no cause), where."""

    reason: str | None
    scheduler: str
    spelling: str  # the key and value, or the phrase, it was read from
    resource: str | None = None  # the resource it names (an eviction's, a policy's)
    host: str | None = None
    by_uid: int | None = None  # who ended it, where the record's qualifier says (Slurm's `CANCELLED by <uid>`)


# A line that is one pair, as describe, YAML, a ClassAd, `qstat -f`, a console's tab or a JSON member prints it:
# indentation and a YAML list's dash, the key (quoted or not; words with single spaces: `Last State`, `Status
# reason`), a colon, `=` or a tab, the value. Each part is one run of a class, so the match is linear.
_LEADING = re.compile(r"^(?P<indent>[ \t]*)(?:- )?(?P<q>\"?)(?P<key>[A-Za-z][\w.\-]*(?: [A-Za-z][\w.\-]*){0,2})"
                      r"(?P=q)[ \t]*(?::|=(?![=~?])|\t)[ \t]*(?P<value>.*)$")
# Members inside a line: JSON's `"key": value` (a string or a bare word: `true`, `137`), and `key=value` outside a
# comparison (`=?=`, `==`, `!=`, `=~`) as an accounting line or a policy prints them.
_MEMBER = re.compile(r"\"(?P<key>[A-Za-z][\w.\-]{0,60})\"[ \t]*:[ \t]*(?P<value>\"(?:[^\"\\]|\\.)*\"|[\w.\-]+)")
# `Key: value` inside a line: Nomad's task event (`Exit Code: 137, Exit Message: "OOM Killed"`), a Go struct as
# controllers log it (`&ContainerStateTerminated{ExitCode:137,Signal:0,Reason:OOMKilled,...}`), a describe block
# flattened onto one line. A key of one or two words after a separator, its value one word or a quoted string.
_INLINE = re.compile(r"(?:^|(?<=[\s,;{(]))(?P<key>[A-Za-z][A-Za-z]{0,40}(?: [A-Za-z][A-Za-z]{0,40})?):[ \t]*"
                     r"(?P<value>\"[^\"]*\"|[^\s,;{}\"]+)")
# HTCondor's XML ClassAd form (the job event log's XML format, `condor_q -xml`, `condor_history -xml`; the manual's
# "XML ClassAds": `<a n="MyType"><s>JobEvictedEvent</s></a>`, an integer in `<i>`, a real in `<r>`, an expression in
# `<e>`): one attribute a line, its value XML-escaped (`&quot;`, `&amp;`, `&lt;`).
_XML_ATTR = re.compile(r"<a n=\"(?P<key>[A-Za-z][\w.\-]{0,60})\">\s*<(?P<t>[sire])>(?P<value>[^<]{0,4000})</(?P=t)>")
_ASSIGN = re.compile(r"(?<![\w=!<>~?])(?P<key>[A-Za-z][\w.\-]{0,60})=(?![=~?])(?P<value>\"[^\"]*\"|[^\s,;}]+)")
# A query's label matchers (`kube_pod_container_status_last_terminated_reason{reason="OOMKilled"}`): names, not a
# record's pairs.
_SELECTOR = re.compile(r"\w\{[^{}=]*=[^{}]*\}")
# A comment line of a config, a script or a manifest.
_COMMENT = re.compile(r"^\s*(?:#|//|;|--\s)")
# A retry rule's matchers: AWS Batch's retry strategy `evaluateOnExit` (AWS Batch API, EvaluateOnExit: onStatusReason,
# onReason, onExitCode, each a pattern a failed attempt's record is matched against, and its action), printed with a
# job definition in a log: the words a record would say, not what one said.
_MATCHER_KEYS = frozenset({"onstatusreason", "onreason", "onexitcode"})
_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no"})


def key_name(raw: str) -> str:
    """`Last State` -> `laststate`, `"exitCode"` -> `exitcode`, `State.OOMKilled` -> `oomkilled`."""
    last = raw.rsplit(".", 1)[-1]
    return "".join(ch for ch in last.lower() if ch.isalnum())


def _unquote(value: str) -> str:
    v = value.strip().rstrip(",").strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        v = v[1:-1]
    return v.strip()


@lru_cache(maxsize=1)
def _keys() -> Mapping[str, tuple[SchedKey, ...]]:
    """Each key's rows, one per scheduler whose record has it (`reason`: Kubernetes', Slurm's), in table order."""
    out: dict[str, tuple[SchedKey, ...]] = {}
    for k in sched_tables().keys:
        out[k.key] = (*out.get(k.key, ()), k)
    return out


def _read_any(rows: tuple[SchedKey, ...], raw_key: str, raw_value: str) -> Reading | None:
    """The first reading one of a key's rows makes of its value (a reason word of that scheduler), else the first
    row's other reading (a message read as prose)."""
    first: Reading | None = None
    for n, row in enumerate(rows):
        reading = read_value(row, raw_key, raw_value)
        if reading is not None and (reading.reason is not None or len(rows) == 1):
            return reading
        first = first if n else reading
    return first


@lru_cache(maxsize=1)
def _reason_schedulers() -> tuple[str, ...]:
    """The schedulers with words of the `reason` field, in the table's order."""
    return tuple(dict.fromkeys(w.scheduler for w in sched_tables().words if w.field == "reason"))


def _word(scheduler: str | None, field: str, value: str, rest: str = "") -> tuple[str, str | None] | None:
    """(the scheduler, its reason) of a value that is one of the table's words of `field`, or None. `rest`: the
    words after it, where Slurm's qualifier says who cancelled (`by 0`)."""
    for sched in (scheduler,) if scheduler else _reason_schedulers():
        row = word_reason(sched, value, field)
        if row is not None:
            return sched, _qualified(row, rest)
    return None


def _uid(rest: str) -> int | None:
    """The uid of Slurm's qualifier at the head of `rest` (`by 1060117793`), if it is one."""
    m = _BY_UID.match(rest.strip())
    return int(m.group("uid")) if m is not None else None


_BY_UID = re.compile(r"^by (?P<uid>\d+)\b")


def _qualified(row: SchedWord, rest: str) -> str | None:
    """A state's reason with Slurm's `by <uid>` after it (`CANCELLED by 1060117793`: the owner's; by 0: root's)."""
    m = _BY_UID.match(rest.strip()) if row.by_uid is not None else None
    if m is None:
        return row.reason
    return "admin_cancelled" if int(m.group("uid")) == 0 else row.by_uid


def _uncut(scheduler: str | None, field: str, word: str) -> str:
    """A word a fixed-width column cut and marked with `+` (sacct's `OUT_OF_ME+`): the one word of the table it
    begins, else as it is."""
    if not word.endswith("+"):
        return word
    stem = word[:-1]
    found = {w.word for w in sched_tables().words
             if w.field == field and (scheduler is None or w.scheduler == scheduler) and w.word.startswith(stem)}
    return found.pop() if len(found) == 1 else word


def read_value(key: SchedKey, raw_key: str, raw_value: str) -> Reading | None:
    """What `key`'s value says; None where the value is none of the table's (then the line names no end)."""
    value = _unquote(raw_value)
    spelling = f"{raw_key}: {value}"
    if not value:
        return None
    if key.role == "flag":
        low = value.lower()
        if low in _TRUE:
            return Reading(key.reason, key.scheduler or "docker", spelling)
        return Reading(None, key.scheduler or "docker", spelling) if low in _FALSE else None
    if key.role == "code":
        # The code is the value's first word (`OUT_OF_MEMORY (exit code 0)`, `34`), whole or cut by a column.
        first, _, rest = value.partition(" ")
        hit = _word(key.scheduler, key.field, _uncut(key.scheduler, key.field, first), rest)
        return Reading(hit[1], hit[0], spelling, by_uid=_uid(rest) if hit[1] else None) if hit else None
    if key.role == "reason":
        hit = _word(key.scheduler, "reason", value)
        if hit is not None:
            return Reading(hit[1], hit[0], spelling)
    if key.role == "message" and value[:2] in ('["', "['"):
        # A list of quoted strings is a pattern's or a config's (an EventBridge rule's `detail-type = ["EC2 Spot
        # Instance Interruption Warning"]`): the events it would match, not a record's message.
        return Reading(None, key.scheduler or "", spelling)
    # A message, or a reason key whose value is prose (Argo's `message: OOMKilled (exit code 137)`, a hold reason).
    return message_reading(value)


def message_reading(text: str) -> Reading | None:
    """A scheduler's message read with the table: its phrases (every row), its policy expression, its excessive
    use of a resource. The first that names a reason, else one that is understood, else None."""
    found: Reading | None = None
    for hit in text_reasons(text):
        reading = Reading(hit.reason, hit.scheduler, hit.spelling, hit.resource, hit.host)
        if hit.reason is not None:
            return reading
        found = found or reading
    return policy_expression(text) or excessive_use(text) or limit_exceeded(text) or found


# --------------------------------------------------------------------------
# HTCondor's policy expressions
# --------------------------------------------------------------------------

# `The job attribute PeriodicRemove expression '...' evaluated to TRUE`, `The system macro SYSTEM_PERIODIC_HOLD
# expression '...' evaluated to TRUE` (the schedd's hold and remove reasons; dmwm/CRABServer#5165 quotes one that
# evaluated to UNDEFINED). The expression is greedy up to the last `' evaluated to`.
_POLICY = re.compile(r"\b(?:Periodic(?:Remove|Hold)|SYSTEM_PERIODIC_(?:REMOVE|HOLD)) expression '")
_EVALUATED = re.compile(r"' evaluated to (?P<value>[A-Za-z]+)")
_ATTRIBUTE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@lru_cache(maxsize=1)
def _attributes() -> Mapping[str, SchedResource]:
    return {r.word: r for r in sched_tables().resources if r.attribute}


def policy_expression(text: str) -> Reading | None:
    """The resource an HTCondor policy expression that removed or held the job names by its attributes: one
    kind of resource is that limit; several, or an expression that was not true, name no cause (understood)."""
    m = _POLICY.search(text)
    if m is None:
        return None
    end = text.rfind("' evaluated to ")
    value = _EVALUATED.match(text, end) if end >= m.end() else None
    if value is None:
        return None
    spelling = text[m.start():value.end()]
    if value.group("value").upper() != "TRUE":
        return Reading(None, "htcondor", spelling)  # UNDEFINED, FALSE: the policy did not act on the job's use
    table = _attributes()
    rows = {table[a].resource: table[a] for a in _ATTRIBUTE.findall(text, m.end(), end) if a in table}
    if len(rows) != 1:
        return Reading(None, "htcondor", spelling)
    row = next(iter(rows.values()))
    return Reading(row.reason, "htcondor", spelling, row.resource)


# --------------------------------------------------------------------------
# A kill for excessive use of a resource, in a scheduler's own words
# --------------------------------------------------------------------------

# The scheduler acted (killed, removed, held, evicted, terminated, aborted) and says it was for its use of one
# resource: `due to excessive disk usage`, `for exceeding its memory limit`, `because of too much RAM`.
_ACTED = re.compile(r"\b(?:killed|removed|held|put on hold|evicted|terminated|aborted)\b", re.IGNORECASE)
_EXCESS = re.compile(r"\b(?:due to|for|because of)\s+(?:excessive|exceeding(?:\s+(?:its|the|their|job))?"
                     r"|too much)\s+(?P<res>[A-Za-z]+(?: [A-Za-z]+){0,2})", re.IGNORECASE)
# Words that make the line a warning of what would happen, not a report of what did.
_IF = re.compile(r"\b(?:if|may|might|will be|would|could|should|unless|avoid|prevent|to be)\b", re.IGNORECASE)


@lru_cache(maxsize=1)
def _words_resources() -> tuple[tuple[str, SchedResource], ...]:
    """The prose resource words, lower case, longest first (`disk space` before `disk`)."""
    rows = [(r.word.lower(), r) for r in sched_tables().resources if not r.attribute]
    return tuple(sorted(rows, key=lambda x: -len(x[0])))


def excessive_use(text: str) -> Reading | None:
    """A scheduler's kill, hold or removal for excessive use of one named resource, or None."""
    m = _EXCESS.search(text)
    if m is None or _ACTED.search(text) is None or _IF.search(text) is not None:
        return None
    res = m.group("res").lower().strip()
    for word, row in _words_resources():
        if res == word or res.startswith(word + " "):
            return Reading(row.reason, "scheduler", m.group(0).strip(), row.resource)
    return None


# A record's message that says the job went over a limit on one named resource, in any scheduler's or workflow
# manager's words (an exit message of a job record: `Job exceeded its wall clock limit`, `exceeded maximum wall clock
# time`, `memory limit exceeded`; CRAB's `Not retrying job due to wall clock limit (job automatically killed on the
# worker node)`, where a `due to` needs the scheduler's act beside it): the resource named decides, as for an
# excessive use. Read in records' messages only
# (message_reading), never in a log's lines, where a limit is as often a setting or a warning.
_LIMIT = re.compile(
    r"\b(?:exceed(?:ed|s|ing)?|went over|gone over|over|reached|hit)\s+"
    r"(?:(?:the|its|their|job|job's|maximum|max|allowed|requested|specified|configured|allocated)\s+){0,3}"
    r"(?P<res>[A-Za-z][A-Za-z\-]*(?: [A-Za-z][A-Za-z\-]*){0,2}?)\s+limits?\b"
    r"|\b(?:exceed(?:ed|s|ing)?|reached)\s+(?:the\s+|its\s+)?(?:maximum|max|allowed)\s+"
    r"(?P<timed>[A-Za-z][A-Za-z\-]*(?: [A-Za-z][A-Za-z\-]*){0,2}? time)\b"
    r"|\b(?P<before>[A-Za-z][A-Za-z\-]*(?: [A-Za-z][A-Za-z\-]*){0,2}?)\s+limit\s+(?:was\s+|has\s+been\s+)?"
    r"(?:exceeded|reached)\b"
    r"|\b(?:due to|because of)\s+(?:(?:the|its|their|a)\s+)?"
    r"(?P<cause>[A-Za-z][A-Za-z\-]*(?: [A-Za-z][A-Za-z\-]*){0,2}?)\s+limits?\b",
    re.IGNORECASE)
# A limit the message says was not reached (`did not exceed its memory limit`, `never reached the time limit`).
_NOT = re.compile(r"\b(?:not|never|n't|without)\s+(?:\w+\s+)?(?:exceed|reach|hit|go|gone|went|over)", re.IGNORECASE)


def limit_exceeded(text: str) -> Reading | None:
    """A record's message that names the one resource whose limit the job went over, or None."""
    if _IF.search(text) is not None or _NOT.search(text) is not None:
        return None  # what would happen, or what did not
    for m in _LIMIT.finditer(text):
        if m.group("cause") is not None and _ACTED.search(text) is None:
            continue  # `due to the memory limit` alone may be anything's reason; the scheduler's act makes it a kill
        said = (m.group("res") or m.group("timed") or m.group("before") or m.group("cause") or "").lower().strip()
        for word, row in _words_resources():
            if said == word or said.endswith(" " + word):
                return Reading(row.reason, "scheduler", m.group(0).strip(), row.resource)
    return None


# --------------------------------------------------------------------------
# A line's pairs
# --------------------------------------------------------------------------


class LinePair(NamedTuple):
    indent: int
    key: str  # normalised (key_name)
    raw_key: str
    value: str


def leading_pair(line: str) -> LinePair | None:
    """The pair a whole line is (`    Reason:  OOMKilled`, `reason: Evicted`, `HoldReason = "..."`), or None."""
    m = _LEADING.match(line)
    if m is None:
        return None
    indent = len(m.group("indent").expandtabs(8))
    return LinePair(indent, key_name(m.group("key")), m.group("key"), m.group("value"))


def line_reading(line: str) -> Reading | None:
    """What a line says of a workload manager's end state through its pairs: the reading of the first pair whose
    key the table knows, a guard (a Reading with no reason) for a line whose words are no end state, or None for a
    line that holds no such pair (prose: the phrase readers decide)."""
    if _COMMENT.match(line):
        return Reading(None, "", "a comment")
    if "{{" in line and "}}" in line:
        # A template (an alert rule's `description: "Container {{ $labels.container }} was OOMKilled"`, a Helm
        # chart's): what a record would say, not what one said.
        return Reading(None, "", "a template")
    keys = _keys()
    lead = leading_pair(line)
    if lead is not None and lead.key in _MATCHER_KEYS:
        return Reading(None, "", "a retry rule's matcher")
    if lead is not None and lead.key in keys:
        reading = _read_any(keys[lead.key], lead.raw_key, lead.value)
        if reading is not None:
            return reading
        if keys[lead.key][0].role in ("reason", "flag"):
            # A reason or flag the table does not name a cause for (`Reason: Completed`, `reason: Error`); a code it
            # does not know is another record's key of that name (ibstat's `State: Active`), no end state. A value
            # that is no reason word in its record's spelling (`reason: timeout`) is understood by nobody here.
            value = _unquote(lead.value)
            owner = (keys[lead.key][0].scheduler or "kubernetes") if value[:1].isupper() else ""
            return Reading(None, owner, f"{lead.raw_key}: {value}")
    body = _SELECTOR.sub(" ", line)
    found: Reading | None = None
    named: list[Reading] = []
    for rx in (_MEMBER, _ASSIGN, _INLINE, _XML_ATTR):
        for m in rx.finditer(body):
            if key_name(m.group("key")) in _MATCHER_KEYS:
                return Reading(None, "", "a retry rule's matcher")
            rows = keys.get(key_name(m.group("key")))
            if rows is None:
                continue
            value = html.unescape(m.group("value")) if rx is _XML_ATTR else m.group("value")
            reading = _read_any(rows, m.group("key"), value)
            if reading is not None and reading.reason is not None:
                named.append(reading)
            found = found or reading  # understood, no cause (a false flag): unless another member names one
    if named:
        # The reason word decides; a message refines a generic eviction (`"reason":"Evicted"` with `"message":"The
        # node was low on resource: memory..."`), as reasons.k8s_reason reads a record's pair.
        if named[0].reason == "eviction" and named[0].resource is None:
            return next((r for r in named[1:] if r.resource is not None), named[0])
        return named[0]
    if found is None and body != line:
        return Reading(None, "", "a query's label matcher")
    return found or state_row(line)


# A row of a job table (`sacct`, `squeue`-like listings) pasted as text, with or without its header: the job's id
# first (`123456`, `123456.batch`, `4242_7`, `1234+0`), its state a later cell, a word of the table's job states
# (with Slurm's `by <uid>` after CANCELLED). Its cells split by whitespace, or by `|` (`sacct -p` / `-P`, any columns:
# `2699001|V_ALPHA_321800001_0_0|CANCELLED by 54321`). A whitespace row is a table's when an exit code as
# `return:signal` (`0:125`) stands beside its state, or, with none (`sacct -o JobID,JobName,State`), when its id is
# a job id of four digits or more and the state its last cell: a number and a state word in prose is no row.
_JOB_ID_CELL = re.compile(r"^\d+(?:[._+][\w\[\]\-]+)?$")
_LONG_JOB_ID = re.compile(r"^\d{4,}(?:[._+][\w\[\]\-]+)?$")
_EXIT_CELL = re.compile(r"^-?\d{1,3}:-?\d{1,3}$")
_ROW_CELLS = 16  # a whitespace row with more cells than this is no job table's
_PIPE_CELLS = 160  # sacct -P prints every field asked for (`--format=ALL`: about 110): a bound, not a layout


@lru_cache(maxsize=1)
def _state_schedulers() -> tuple[str, ...]:
    return tuple(dict.fromkeys(w.scheduler for w in sched_tables().words if w.field == "state"))


# Slurm's mail about a job's end, as its subject reads where people paste it: `Slurm Job_id=12495794 Name=x Ended, Run
# time 7-00:00:27, TIMEOUT, ExitCode 0` (slurmctld's mail; the state one of its comma-separated parts).
_MAIL_JOB = re.compile(r"\bJob_id=\d+ Name=\S+ (?:Ended|Failed), Run time [\d:-]+, (?P<state>[A-Z_]+)\b")


def _row_cells(line: str) -> tuple[list[str], bool] | None:
    """A job table row's cells, each a word (a `|` cell's words in order), and whether its state must be its last
    cell (a whitespace row without an exit code); None for a line that is no job table's row."""
    if "|" in line:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not (2 <= len(cells) <= _PIPE_CELLS and _JOB_ID_CELL.match(cells[0])):
            return None
        return [w for c in cells for w in c.split()], False
    cells = line.split(None, _ROW_CELLS)
    if not (2 < len(cells) <= _ROW_CELLS and _JOB_ID_CELL.match(cells[0])) and not (
            len(cells) == 2 and _LONG_JOB_ID.match(cells[0])):
        return None
    if any(_EXIT_CELL.match(c) for c in cells):
        return cells, False
    return (cells, True) if _LONG_JOB_ID.match(cells[0]) else None


def state_row(line: str) -> Reading | None:
    """A job table's row whose State cell says why the job ended (`123456  train  OUT_OF_ME+  0:125`,
    `2699001|V_ALPHA_321800001_0_0|CANCELLED by 54321`), or a scheduler's mail subject naming that state, or None
    (also for a row whose state names no cause: Reading(None) where the table knows the word)."""
    mail = _MAIL_JOB.search(line)
    if mail is not None:
        for sched in _state_schedulers():
            row = word_reason(sched, mail.group("state"), "state")
            if row is not None:
                return Reading(row.reason, sched, mail.group(0))
        return None
    got = _row_cells(line)
    if got is None:
        return None
    cells, last_only = got
    for at in range(1, len(cells)):
        rest = " ".join(cells[at + 1:at + 3])
        if last_only and at != len(cells) - 1 and not (at == len(cells) - 3 and _BY_UID.match(rest)):
            continue
        for sched in _state_schedulers():
            row = word_reason(sched, _uncut(sched, "state", cells[at]), "state")
            if row is not None:
                said = f"{cells[0]} {cells[at]}" + (f" {rest}" if _BY_UID.match(rest) else "")
                reason = _qualified(row, rest)
                return Reading(reason, sched, said, by_uid=_uid(rest) if reason != row.reason else None)
    return None


def _distinctive(word: str) -> bool:
    """A word rare enough in text to be a prefilter literal: one with `_` (`OUT_OF_MEMORY`, `TERM_RUNLIMIT`), two
    words (`OOM Killed`), or camel case (`OOMKilled`, `NodeLost`). A word in one case alone (Flux's `timeout`,
    Slurm's `TIMEOUT`) is every other log's: its records reach here by their keys (`JobState=`, `State:`)."""
    return "_" in word or " " in word or (word != word.upper() and sum(c.isupper() for c in word) >= 2)


@lru_cache(maxsize=1)
def literals() -> tuple[str, ...]:
    """Words a line this module reads holds, beyond the table's phrases and words (reasons.line_literals): the
    keys' words that are no reason words (`HoldReasonCode`, `OOMKilled` as a flag), the two phrase readers'."""
    tables = sched_tables()
    out = {w.word for w in tables.words if w.field in ("reason", "state", "maintenance_event", "stop_code",
                                                         "secondary_status", "terminate_reason")
           and _distinctive(w.word)}
    # A job table's state cell that is no distinctive word (`TIMEOUT`, `PREEMPTED`): as a row's cell, after the
    # space or the `|` before it; a state only its qualifier makes a reason, with the qualifier (`CANCELLED by `).
    for w in tables.words:
        if w.field == "state" and w.reason is not None and not _distinctive(w.word):
            out.update({f" {w.word}", f"|{w.word}"})
        if w.by_uid is not None:
            out.add(f"{w.word} by ")
    # (`OUT_OF_ME`: sacct's column cuts the state to `OUT_OF_ME+`)
    out.update({"HoldReasonCode", "MyType", "OOMKilled", "OOM Killed", "evaluated to", "excessive", "exceeding",
                "OUT_OF_ME", "Exit_status", "Job_id=", "JobState=", "exitMsg", "NODE_OUT_OF_MEMORY",
                # a cloud's notice (the table's keys): GCE's metadata, an Azure Scheduled Event, EC2's EventBridge event
                "preempted", "EventType", "instance-action", "detail-type",
                # a managed service's record (the table's keys): an Azure Batch job's terminateReason, a SageMaker
                # training job's SecondaryStatus and FailureReason
                "terminateReason", "TerminateReason", "Terminate reason", "SecondaryStatus", "Secondary status",
                "FailureReason", "Failure reason"})
    # An Azure Batch node's states (`"state": "starttaskfailed"` as the REST API and `az batch node list` print it)
    out.update(w.word for w in tables.words if w.field == "node_state")
    # Google Cloud Batch's reserved exit codes that name a cause, with the words that print them (its status event's
    # `with exit code 50001`, also where YAML folds it after `exit`, a task's `exitCode: 50001` in YAML or JSON):
    # never the bare number, which any id, port or time of a line may hold
    for w in tables.words:
        if w.field == "exit_code" and w.reason is not None:
            out.update({f"code {w.word}", f"exitCode: {w.word}", f'"exitCode": {w.word}'})
    return tuple(sorted(out))


__all__ = ["LinePair", "Reading", "excessive_use", "key_name", "leading_pair", "limit_exceeded", "line_reading",
           "literals", "message_reading", "policy_expression", "read_value", "state_row"]
