"""Batch systems beyond Slurm in their own words (catalog/batch.yaml): HTCondor's daemons ending themselves or
unreachable, and PBS's server refusing a job's submission, each with who failed.

HTCondor's daemons write their own logs (StartLog, StarterLog.slot1, ShadowLog, SchedLog, MasterLog, CollectorLog),
each line after a stamp (`12/07/26 10:00:01 (pid:1234) `). One reader per record's layout:

    **** condor_startd (condor_STARTD) pid 3700140 EXITING WITH STATUS 4          DaemonCore's exit banner
    ERROR "Ran out of system resources in auto allocation" at line 201 in file /.../condor_startd.V6/slot_builder.cpp
    The STARTD (pid 3700140) exited with status 4                                  the master's record of a daemon
    CEDAR:6001:Failed to connect to <10.0.0.1:9618>                                an entry of its error stack
    Error: Couldn't contact the condor_collector on cm.example.org.                a client's own words

the daemon the record names (its program, its subsystem, the directory of the source file its EXCEPT names) looked up
in the table: the pool's own daemons failing below the job are `sched.error` with side `node` (rules
node-scheduler-batch, node-scheduler-batch-weak), on the node whose log printed it; a clean shutdown (status 0), a
status that is the job's fate (the shadow's) or a slot the starter could not clean up after the job, nothing.

PBS's qsub prints the server's refusal as the text of a PBSE_* error (`qsub: submit error (Job exceeds queue resource
limits MSG=cannot satisfy queue max mem requirement)` in Torque, `qsub: Unknown queue` in OpenPBS): the job's own
request (`app.exception` with `setup`, rule app-setup), or the server or its link failing (`sched.error`, weak).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Final, NamedTuple

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import CondorDaemon, PbsError, batch_tables
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.nccl import clip, split_rank_prefix
from firstfault.model import FieldValue

# DaemonCore's exit banner (src/condor_daemon_core.V6/daemon_core_main.cpp DC_Exit). Bounded.
_BANNER = re.compile(r"\*\*\*\* (?P<prog>condor_[a-z_]{1,40}) \(\w{1,40}_(?P<sub>[A-Z_]{1,40})\) pid \d{1,10} "
                     r"EXITING WITH STATUS (?P<status>-?\d{1,5})\b")
# The EXCEPT macro's record (src/condor_utils/except.cpp _EXCEPT_); the message is any text, its quotes unescaped.
_EXCEPT = re.compile(r"(?<![\w\"])ERROR \"(?P<msg>.{0,2000}?)\" at line \d{1,7} in file (?P<path>\S{1,1000})")
# The master's record of a daemon it runs (src/condor_master.V6/masterDaemon.cpp daemon::Exited)
_MASTER = re.compile(r"(?<![\w])The (?P<sub>[A-Z][A-Z0-9_]{0,40}) \(pid \d{1,10}\) (?:exited with status "
                     r"(?P<status>\d{1,5})|(?P<died>died due to \S.{0,120})|(?P<hung>was killed because it was no "
                     r"longer responding))")
# an entry of HTCondor's error stack (`SUBSYS:CODE:message`, entries joined with `|` on one line)
_STACK = re.compile(r"(?<![\w:])(?P<sub>[A-Z]{2,16}):(?P<code>\d{4,5}):(?P<msg>[^|]{0,400})")
# qsub's refusal: Torque's `qsub: submit error (TEXT)` and `qsub: Error (N - TEXT) submitting job`, OpenPBS's
# `qsub: TEXT`
_QSUB = re.compile(r"(?<![\w/\-])qsub: (?:submit error \(|Error \(\d{1,6} - )?(?P<msg>\S.{0,600})$")
_CLEAN: Final = 0
_PROGRAM_UNNAMED: Final = "condor"  # a record whose program the words do not name: a client's or any daemon's


class _Tables(NamedTuple):
    by_program: Mapping[str, CondorDaemon]
    by_subsystem: Mapping[str, CondorDaemon]
    by_dir: Mapping[str, CondorDaemon]
    library_dirs: frozenset[str]
    exits: Mapping[tuple[str, int], tuple[str, bool]]  # (program, status) -> (side, weak)
    errors: Mapping[tuple[str, int], tuple[str, str, bool]]  # (subsystem, code) -> (name, side, weak)
    messages: tuple[tuple[str, str, bool], ...]  # (text, side, weak)
    pbs: tuple[PbsError, ...]  # longest text first


@lru_cache(maxsize=1)
def _tables() -> _Tables:
    t = batch_tables()
    return _Tables({d.program: d for d in t.condor_daemons}, {d.subsystem: d for d in t.condor_daemons},
                   {d.dir: d for d in t.condor_daemons}, frozenset(d.dir for d in t.condor_library_dirs),
                   {(e.program, e.status): (e.side, e.weak) for e in t.condor_exits},
                   {(e.subsystem, e.code): (e.name, e.side, e.weak) for e in t.condor_errors},
                   tuple((m.text, m.side, m.weak) for m in t.condor_messages),
                   tuple(sorted(t.pbs_errors, key=lambda p: -len(p.text))))


class CondorRead(NamedTuple):
    """What an HTCondor record says: its kind (`name`), the words of the table that read it, the program, who failed."""

    name: str
    text: str
    program: str
    side: str
    weak: bool


def _exit(program: str, status: int) -> tuple[str, bool] | None:
    daemon = _tables().by_program.get(program)
    if daemon is None:
        return None  # a client's or a daemon the table does not hold: not read
    row = _tables().exits.get((program, status))
    if row is not None:
        return row
    if status == _CLEAN or daemon.exits == "job":
        return "none", False
    return "node", daemon.weak


def _except(path: str) -> tuple[str, bool] | None:
    """The program whose source directory the EXCEPT's file is in (node), a shared library's (node, weak), or None:
    a client's, or a path that names no directory of HTCondor's."""
    parts = path.replace("\\", "/").split("/")
    for part in reversed(parts[:-1]):
        daemon = _tables().by_dir.get(part)
        if daemon is not None:
            return daemon.program, daemon.weak
        if part in _tables().library_dirs:
            return _PROGRAM_UNNAMED, True
    return None


def read_condor(body: str) -> CondorRead | None:
    """The record of HTCondor's own a line holds, and who it says failed; None for a line that holds none."""
    if (m := _BANNER.search(body)) is not None:
        program, status = m.group("prog"), int(m.group("status"))
        said = _exit(program, status)
        return None if said is None else CondorRead("htcondor_exit", f"EXITING WITH STATUS {status}", program, *said)
    if (m := _EXCEPT.search(body)) is not None:
        found = _except(m.group("path"))
        if found is None:
            return None
        return CondorRead("htcondor_except", clip(m.group("msg")), found[0], "node", found[1])
    if (m := _MASTER.search(body)) is not None:
        daemon = _tables().by_subsystem.get(m.group("sub"))
        program = daemon.program if daemon is not None else "condor_master"
        code = m.group("status")
        if code is not None and int(code) == _CLEAN:
            return CondorRead("htcondor_master", f"exited with status {code}", program, "none", False)
        text = f"exited with status {code}" if code is not None else (m.group("died") or m.group("hung"))
        return CondorRead("htcondor_master", clip(text), program, "node", daemon.weak if daemon else False)
    for m in _STACK.finditer(body):
        row = _tables().errors.get((m.group("sub"), int(m.group("code"))))
        if row is not None:
            name, side, weak = row
            return CondorRead(name, f"{m.group('sub')}:{m.group('code')}", _PROGRAM_UNNAMED, side, weak)
    for text, side, weak in _tables().messages:
        if text in body:
            return CondorRead("htcondor_message", text.strip(), _PROGRAM_UNNAMED, side, weak)
    return None


def read_qsub(body: str) -> PbsError | None:
    """The PBSE_* error whose text begins qsub's message of the line, if any."""
    m = _QSUB.search(body)
    if m is None:
        return None
    msg = m.group("msg").strip()
    return next((p for p in _tables().pbs if msg.startswith(p.text)), None)


class BatchDaemonExtractor:
    """HTCondor's daemons' own records (the node's pool plumbing: `sched.error`) and qsub's refusals (the job's
    request: `app.exception` with `setup`; the server's failure: `sched.error`, weak), through catalog/batch.yaml."""

    name = "sched.batch_daemon"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "app.exception": frozenset({"exc_type", "message", "setup"}),
        "sched.error": frozenset({"batch", "message", "name", "program", "side", "text", "weak"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog", "scheduler"})
    def __init__(self) -> None:
        # the error stack's codes with their subsystem (`CEDAR:6001:`), from the table: a bare `:6001:` is a
        # digit-bearing word a pid or a port in any log's shape could spell (collect/fold.py `_same_hits`)
        t = _tables()
        self.literals: tuple[str, ...] = (
            " EXITING WITH STATUS ", "\" at line ", " (pid ", "qsub: ",
            *sorted(f"{sub}:{code}:" for sub, code in t.errors), *(text.strip() for text, _, _ in t.messages))

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        _, body = split_rank_prefix(line)
        pbs = read_qsub(body) if "qsub: " in body else None
        if pbs is not None:
            yield from self._pbs(pbs, body, ctx)
            return
        read = read_condor(body)
        if read is None:
            return
        if read.side == "none":
            ctx.claimed = True
            return
        fields: dict[str, FieldValue] = {"name": read.name, "side": "node", "text": read.text,
                                         "message": clip(body.strip()), "program": read.program, "batch": "htcondor"}
        if read.weak:
            fields["weak"] = True
        yield Draft("sched.error", fields)

    @staticmethod
    def _pbs(row: PbsError, body: str, ctx: LineContext) -> Iterator[Draft]:
        message = clip(body[body.index("qsub: ") + len("qsub: "):].strip())
        if row.side == "none":
            ctx.claimed = True
            return
        if row.side == "job":
            yield Draft("app.exception", {"exc_type": row.name, "message": message, "setup": True})
            return
        fields: dict[str, FieldValue] = {"name": row.name, "side": "node", "text": row.text, "message": message,
                                         "program": "qsub", "batch": "pbs"}
        if row.weak:
            fields["weak"] = True
        yield Draft("sched.error", fields)


EXTRACTORS: tuple[LineExtractor, ...] = (BatchDaemonExtractor(),)
