"""Launchers' reports of a rank's exit: Open MPI's, srun's, MPICH's Hydra and mpd's, TGI's on a shard.

A launcher saying a rank died names no cause: these are the leads' first exit, and symptoms. How the whole run
ended, in a launcher's or a framework's own words (torchrun's `worker group successfully finished`, Open MPI's
`Per user-direction, the job has been aborted.`), is extract/runend.py's, over catalog/ends.yaml.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Final, NamedTuple

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import MpichErrorClass, mpich_classes
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.codes import by_whom, exit_reading, signal_of_text
from firstfault.extract.prefix import split_prefixes
from firstfault.extract.traceback import clip
from firstfault.model import FieldValue

# Open MPI's launcher on a rank that died by a signal: `mpirun noticed that process rank 3 with PID 0 on
# node gpu04 exited on signal 9 (Killed).` (prterun / mpiexec / orterun in other versions). PRRTE's help text
# (src/mca/schizo/prte/help-prun.txt, `[prun:proc-aborted-strsignal]`: Open MPI 5's mpirun) breaks the sentence
# after `exited on`, the signal on the next line: `signal 9 (Killed).`
_MPI_SIGNAL = re.compile(
    r"\b(?:mpirun|mpiexec|prterun|orterun|prun|prte) noticed that process rank (?P<rank>\d+) with PID (?P<pid>\d+) "
    r"on node (?P<host>[A-Za-z0-9][\w.\-]*) exited on(?: signal (?P<num>\d+)(?: \((?P<what>[^)]+)\))?|\s*$)"
)
_MPI_SIGNAL_REST = re.compile(r"^\s*signal (?P<num>\d+)(?: \((?P<what>[^)]+)\))?\.?\s*$")
_K_MPI_SIGNAL = "ff.mpi.signal_split"  # (lineno, rank, pid, host, line) of PRRTE's sentence cut after `exited on`
_FAULTS: Final = frozenset({"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"})
# Hugging Face TGI's launcher on a shard that a signal ended (huggingface/text-generation-inference launcher/src/main.rs
# shard_manager: `Shard process was signaled to shutdown with signal 4 rank=0`, after `Shard complete standard error
# output:`; its tracing fields after the message, the rank the shard's).
_TGI_SHARD_SIGNAL = re.compile(
    r"\bShard process was signaled to shutdown with signal (?P<num>\d+)(?: rank=(?P<rank>\d+))?")
# Dask's nanny on the worker process it watches, one a signal ended (dask/distributed distributed/nanny.py
# WorkerProcess._on_exit: `Worker process 6707 was killed by signal 11`; catalog/exits.yaml printer dask-signal). It
# restarts the worker; the task the worker ran is retried elsewhere. A fault signal is the worker's own, as mpirun's.
_DASK_NANNY_SIGNAL = re.compile(r"\bWorker process (?P<pid>\d{1,10}) was killed by signal (?P<num>\d{1,3})\b")
# Flux's job shell on the first task that exited, ending the job for it (flux-core src/shell/doom.c: `doom: sh: rank
# 3 on host frontier10490 exited and exit-timeout=30s has expired`, flux-framework/flux-core#7037; `task-exit: foo.sh:
# task rank 1 on host system76-pc failed and exit-on-error is set`, #7328; before 0.63 no host, `doom: rank 1 exited
# and ...`, #5736; since 765434e2 how it ended: `failed (Killed)`, `exited (Exit 2)`), as its log's FATAL line says
# it. The same words as a job exception's note are that exception (extract/jobend.py).
_FLUX_DOOM = re.compile(
    r"\bFATAL: (?:doom|task-exit): (?:[^\s:]{1,200}: )?(?:(?P<shell>task|shell) )?rank (?P<rank>\d+)"
    r"(?: on host (?P<host>[A-Za-z0-9][\w.\-]*))? (?:failed|exited)(?: \((?P<how>[^()]{1,80})\))? and "
    r"(?:exit-on-error is set|exit-timeout=\S+ has expired)")
_FLUX_EXIT = re.compile(r"^Exit (?P<code>\d+)$")
# srun's word on the step's tasks, when asked for it (one Ctrl-C: src/srun/task_state.c _task_state_print, `%ps task%s
# %s: %s` with `exited abnormally` for the tasks a signal ended; before 20.11 `step %u.%u task%s ...`): `srun:
# StepId=4242.0 task 1: exited abnormally`. No time and no host: the launcher saw the task die (the leads' first
# exit, placed at the first peer loss before it). Its other states (`running`, `exited`, `failed to start`, `unknown`)
# name no death.
_SRUN_ABNORMAL = re.compile(r"\bsrun: (?:StepId=[\w.+]{1,64}|step \d{1,12}\.\d{1,12}) tasks? "
                            r"(?P<tasks>\d{1,9}(?:[-,]\d{1,9}){0,64}): exited abnormally\b")
# HTCondor's job event log on a job whose process a signal ended (event 005 `Job terminated.`, its next line; htcondor/
# htcondor src/condor_utils/condor_event.cpp JobTerminatedEvent: `\t(0) Abnormal termination (signal %d)`, beside
# `\t(1) Normal termination (return value %d)` for a process that exited; the number is the signal's,
# catalog/exits.yaml printer htcondor-signal). The shadow saw only the end: a fault signal is the process's own.
_CONDOR_SIGNAL = re.compile(r"^\s{0,16}\(\d\) Abnormal termination \(signal (?P<num>\d{1,3})\)")
# srun told by slurmctld that a node of its step failed: `srun: error: Node failure on gpu-node-12`.
_SRUN_NODE_FAILURE = re.compile(r"\bsrun: error: Node failure on (?P<host>[A-Za-z0-9][\w.\-\[\],]*)")
# srun's word on tasks that exited non-zero by themselves: `srun: error: snowflake7: task 0: Exited with exit code 1`,
# `srun: error: node30: tasks 0-1: Exited with exit code 1` (a task killed by a signal is extract/signals.py's
# `task 1: Killed`).
_SRUN_EXIT = re.compile(
    r"\berror:\s+(?P<host>[A-Za-z0-9][\w.\-]*):\s+tasks?\s+(?P<tasks>\d+(?:\s*[-,]\s*\d+)*):\s+"
    r"Exited with exit code (?P<code>\d+)"
)


class LauncherSignalExtractor:
    """Launchers' reports of a rank's death (Open MPI) and of a failed node (srun): process.signal."""

    name = "launcher.signal"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "process.signal": frozenset({"by", "detail", "due_to", "signal", "pid", "exitcode"}),
    }
    sources: frozenset[str] = frozenset({"application"})
    literals: tuple[str, ...] = (" noticed that process rank ", "Node failure on ", "Exited with exit code ",
                                 "Shard process was signaled", "FATAL: doom: ", "FATAL: task-exit: ",
                                 "Abnormal termination (signal ", ": exited abnormally", " was killed by signal ",
                                 "signal ")

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        split = ctx.state.get(_K_MPI_SIGNAL)
        if split is None and "signal " in line and not any(w in line for w in self.literals[:-1]):
            return  # `signal ` is the prefilter word of PRRTE's second line only
        body = split_prefixes(line).body
        if isinstance(split, tuple):
            ctx.state.pop(_K_MPI_SIGNAL, None)
            rest = _MPI_SIGNAL_REST.match(body) if ctx.lineno - split[0] == 1 else None
            if rest is not None:
                ctx.claimed = True
                yield self._mpi_signal(rest, split[2], split[1], split[3], f"{split[4]} {body.strip()}")
                return
        m = _MPI_SIGNAL.search(body)
        if m and m.group("num") is None:
            ctx.state[_K_MPI_SIGNAL] = (ctx.lineno, int(m.group("rank")), int(m.group("pid")), m.group("host"),
                                        body.strip()[:300])
            ctx.claimed = True
            return
        if m:
            yield self._mpi_signal(m, int(m.group("pid")), int(m.group("rank")), m.group("host"), body.strip())
            return
        d = _FLUX_DOOM.search(body) if "FATAL: " in body else None
        if d:
            # The shell's word on the task (or the node's shell: `shell rank N`) that ended first: the leads' first
            # exit. How it ended, where the line says: strsignal's text, or `Exit N` (the task's exit value).
            how = d.group("how") or ""
            code = _FLUX_EXIT.match(how)
            fields = _exit_fields(clip(body), int(code.group("code")) if code else None,
                                  None if code else signal_of_text(how), printer="flux-task")
            yield Draft("process.signal", fields, rank=int(d.group("rank")), host=d.group("host"))
            return
        t = _TGI_SHARD_SIGNAL.search(body) if "Shard process" in body else None
        if t:
            sig = _signal_of("tgi-signal", int(t.group("num")))
            by = by_whom(sig, "launcher") if sig in _FAULTS else "launcher"  # as mpirun's: it only saw the exit
            rank = t.group("rank")
            yield Draft("process.signal", {"signal": sig, "by": by, "detail": body.strip()[:400]},
                        rank=int(rank) if rank is not None else None)
            return
        a = _SRUN_ABNORMAL.search(body) if "exited abnormally" in body else None
        if a:
            tasks = a.group("tasks")
            yield Draft("process.signal", _exit_fields(clip(body), printer="srun"),
                        rank=int(tasks) if tasks.isdigit() else None)
            return
        k = _DASK_NANNY_SIGNAL.search(body) if "was killed by signal" in body else None
        if k:
            sig = _signal_of("dask-signal", int(k.group("num")))
            yield Draft("process.signal", {"signal": sig, "by": by_whom(sig, "launcher") if sig in _FAULTS
                                           else "launcher", "detail": body.strip()[:400], "pid": int(k.group("pid"))})
            return
        c = _CONDOR_SIGNAL.match(body) if "Abnormal termination" in body else None
        if c:
            sig = _signal_of("htcondor-signal", int(c.group("num")))
            yield Draft("process.signal", {"signal": sig, "by": by_whom(sig, "launcher") if sig in _FAULTS
                                           else "launcher", "detail": body.strip()[:400]})
            return
        n = _SRUN_NODE_FAILURE.search(body)
        if n:
            # The scheduler's word that the node failed, as slurmstepd's `DUE TO NODE FAILURE` banner says it.
            yield Draft("process.signal", {"signal": "SIGKILL", "by": "scheduler", "due_to": "node_failure",
                                           "detail": body.strip()[:400]}, host=n.group("host"))
            return
        x = _SRUN_EXIT.search(body)
        if x:
            # The tasks' own exit, as srun saw it (the task id is the rank): names no cause, the leads' first exit.
            tasks = x.group("tasks")
            yield Draft("process.signal", _exit_fields(clip(body), int(x.group("code")), printer="srun"),
                        rank=int(tasks) if tasks.isdigit() else None, host=x.group("host"))


    @staticmethod
    def _mpi_signal(m: re.Match[str], pid: int, rank: int, host: str, detail: str) -> Draft:
        what = m.group("what")
        sig = (signal_of_text(what) if what else None) or _signal_of("openmpi-signal", int(m.group("num")))
        # mpirun only saw the exit: an abort may be the runtime's answer to another failure (gloo's
        # `terminate called` after a refused connection), so only the fault signals are the rank's own.
        by = by_whom(sig, "launcher") if sig in _FAULTS else "launcher"
        return Draft("process.signal", {"signal": sig, "by": by, "detail": detail[:400], "pid": pid},
                     rank=rank, host=host)


def reports_exit(body: str, state: Mapping[str, object], lineno: int) -> bool:
    """Whether an exit-code line is a launcher's report of a rank's exit that this module reads, with the rank and
    host it names: srun's `task 0: Exited with exit code 137`, the `Exit code:` line of Open MPI's first-exit block
    (`state`: the stream's, `lineno`: the line's). The generic exit-code reading (extract/signals.py) leaves it, so one
    exit is one event."""
    if _SRUN_EXIT.search(body):
        return True
    ompi = state.get(_K_OMPI)
    return isinstance(ompi, tuple) and lineno - ompi[0] <= _BLOCK_LINES and _OMPI_EXIT.match(body) is not None


# --------------------------------------------------------------------------
# MPI launchers' and runtimes' word on the rank that exited
# --------------------------------------------------------------------------

# Open MPI's errmgr, the first process to exit non-zero, over three lines after its opening sentence:
#   mpirun detected that one or more processes exited with non-zero status, thus causing
#   the job to be terminated. The first process to do so was:
#     Process name: [[50371,1],0]          (Open MPI 5 / PRRTE: [prterun-host-4242@1,3])
#     Exit code:    1
_OMPI_FIRST: Final = "exited with non-zero status"
_OMPI_PROC = re.compile(r"^\s*Process name:\s*\[(?:\[\d+,\d+\],(?P<rank>\d+)\]|[^\]\s]*@\d+,(?P<rank5>\d+)\])")
_OMPI_EXIT = re.compile(r"^\s*Exit code:\s*(?P<code>-?\d+)\s*$")
# A rank that called MPI_Abort: `MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD with errorcode 1.`
_MPI_ABORT = re.compile(r"MPI_ABORT was invoked on rank (?P<rank>\d+)\b(?:.*?\bwith errorcode (?P<code>-?\d+))?")
# MPICH's Hydra (and Intel MPI's), in a banner of `=` lines:
#   =   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES
#   =   RANK 6 PID 2447372 RUNNING AT node0009           (older: `=   PID 9665 RUNNING AT NeuroRTX6000`)
#   =   KILLED BY SIGNAL: 9 (Killed)                      (older: `=   EXIT CODE: 139`)
_HYDRA_BANNER: Final = "BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES"
_HYDRA_WHERE = re.compile(r"^=?\s*(?:RANK (?P<rank>\d+) )?PID (?P<pid>\d+) RUNNING AT (?:[^@\s]+@)?(?P<host>[\w.\-]+)")
_HYDRA_HOW = re.compile(r"^=?\s*(?:EXIT CODE: (?P<code>-?\d+)|KILLED BY SIGNAL: (?P<num>\d+)(?: \((?P<what>[^)]+)\))?)")
# MPICH before Hydra (mpd): `exit status of rank 59: killed by signal 9`, `exit status of rank 42: return code 1`.
_MPD = re.compile(r"exit status of rank (?P<rank>\d+): (?:killed by signal (?P<num>\d+)|return code (?P<code>-?\d+))")
# A rank's MPI library giving up: `Fatal error in PMPI_Allreduce: Other MPI error, error stack:`, under Cray MPICH's
# `MPICH ERROR [Rank 11122] [job id 41595204.0] [Thu Aug 14 08:27:11 2025] [nid006700] - Abort(2695311) (rank 11122
# in comm 0): ...`, and MPICH's PMI client announcing it: `[cli_1]: aborting job:` (the prefix layer reads the rank).
# MPICH 4.1 and later name the internal function the call went through (`Abort(204069007): Fatal error in
# internal_Init_thread: Other MPI error, error stack:`), and Cray MPICH its own collective algorithms' (`Fatal error in
# MPIR_CRAY_Bcast_Tree: Invalid count, error stack:`).
_MPI_FATAL = re.compile(r"\bFatal error in (?P<call>P?MPI_\w+|internal_\w+|MPIR_\w+)")
MPI_FATAL_WORDS: Final = "Fatal error in "
_MPI_INIT_CALLS: Final = frozenset({"MPI_Init", "MPI_Init_thread"})
# Open MPI's predefined fatal error handler (ompi/errhandler/errhandler_predefined.c): `[host:pid] *** An error
# occurred in MPI_Send`, `*** reported by process [...]`, `*** on communicator MPI_COMM_WORLD`, then the class and its
# words, `*** MPI_ERR_RANK: invalid rank`, and `*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now
# abort,` (older releases: the same lines without the host tag, `... MPI_ERRORS_ARE_FATAL: your MPI job will now
# abort`). The class line is read by the same table as MPICH's stack (its `argument` column); the call named a few
# lines before it.
_OMPI_ERRH_CALL = re.compile(r"(?:^|\] )\*\*\* An error occurred in (?P<call>MPI_\w+)")
_OMPI_ERRH_CLASS = re.compile(r"^(?:\[(?P<host>[A-Za-z0-9][\w.\-]*):\d+\] )?\*\*\* (?P<cls>MPIX?_ERR_[A-Z_]+): "
                              r"(?P<msg>\S.*)$")
_OMPI_ERRH_WORDS: Final = ("*** An error occurred in MPI_", "*** MPI_ERR_")
_K_OMPI_ERRH = "ff.mpi.ompi_errh"  # (lineno, call) of Open MPI's handler's first line
_OMPI_ERRH_LINES: Final = 6
_CRAY_HEAD = re.compile(
    r"MPICH ERROR \[Rank (?P<rank>\d+)\](?: \[job id [^\]]*\])?(?: \[[^\]]*\])? \[(?P<host>[\w.\-]+)\]"
)
_ABORTING: Final = "aborting job:"
# MPICH's (and Intel MPI's) head of a rank's abort (pmodels/mpich src/mpid/ch4/src/ch4_globals.c MPID_Abort at
# 6a79bf6575: `Abort(%d)%s%s: %s%s`, ` on node %d` of MPIR_Process.rank, then ` (rank %d in comm %d)` of the
# communicator's): the number after `on node` is the process's rank in MPI_COMM_WORLD, whatever the word says.
_MPICH_ABORT = re.compile(r"\bAbort\(-?\d{1,12}\) on node (?P<rank>\d{1,9})\b")
# Hydra's proxies and mpiexec tearing the job down once a process ended badly: `[proxy:0:1@host] HYD_pmcd_pmip_...
# (pm/pmiserv/pmip_cb.c:878): assert (!closed) failed`, `[mpiexec@host] HYDT_bscu_wait_for_completion (...): one of
# the processes terminated badly; aborting`, and its utilities' socket writes to a peer already gone (`[proxy:0:0@node5]
# HYDU_sock_write (utils/sock/sock.c:256): write error (Broken pipe)`, MPICH's utils/sock/sock.c, Intel MPI's copy of
# it). The launcher's reaction: understood, nothing of its own.
_HYDRA_TEARDOWN = re.compile(r"^\[(?:proxy:[\d:]+|mpiexec)@[\w.\-]+\] HYD[TU]?_\w+")
# The MPICH the stream names (src/mpi/init/initinfo.c, MPI_Get_library_version, and mpichversion: `MPICH Version:
# 3.3.2`; Hydra's `mpiexec --version`: `HYDRA build details:` then `    Version:   3.3.2`): its Hydra's EXIT CODE reads
# by that version's meaning (catalog/exits.yaml).
_MPICH_VERSION = re.compile(r"^\s*(?:MPICH )?Version:\s+(?P<v>\d+(?:\.\d+){1,3}(?:[ab]\d+)?)\s*$")
_HYDRA_DETAILS: Final = "HYDRA build details:"
_K_MPICH = "ff.mpi.mpich_version"  # the version named, or (lineno,) of Hydra's details header awaiting its line
_BLOCK_LINES: Final = 8
_K_OMPI = "ff.mpi.ompi_first"  # (lineno, rank) of Open MPI's first-exit block
_K_HYDRA = "ff.mpi.hydra"  # (lineno, rank, pid, host) of Hydra's banner


class MpiFatal(NamedTuple):
    """An MPICH-family error stack's first line, read (`mpi_fatal`)."""

    call: str  # by its standard name: `PMPI_Init_thread` and MPICH 4's `internal_Init_thread` are `MPI_Init_thread`
    mpi_class: str | None  # catalog/transport.yaml `mpich_error_classes`: `Other MPI error` is MPI_ERR_OTHER
    rank: int | None  # Cray MPICH's header names the rank and the node, MPICH's `Abort(N) on node R` the rank
    host: str | None
    argument: bool = False  # the class is an error in the arguments of the program's call (the table's `argument`)
    said: str = ""  # the words after the call's name (`Invalid count, error stack:`)


@lru_cache(maxsize=1)
def _classes_longest_first() -> tuple[MpichErrorClass, ...]:
    """MPICH's classes, the longest words first: a class's words may begin another's (`Invalid MPI_Info` and
    `Invalid MPI_Info value`)."""
    return tuple(sorted(mpich_classes(), key=lambda c: -len(c.text)))


def mpi_fatal(body: str) -> MpiFatal | None:
    """The MPI call an MPICH-family error stack's first line says failed and the error class it names, with the
    rank and node of Cray MPICH's header, if the line is one (`Fatal error in PMPI_Init_thread: Other MPI error,
    error stack:`)."""
    if MPI_FATAL_WORDS not in body:
        return None
    m = _MPI_FATAL.search(body)
    if m is None:
        return None
    call = m.group("call")
    call = "MPI_" + call.split("_", 1)[1] if not call.startswith(("MPI_", "MPIR_")) else call
    rest = body[m.end():]
    said = rest[1:].lstrip() if rest.startswith(":") else ""
    row = next((c for c in _classes_longest_first() if said.startswith(c.text)), None)
    cray = _CRAY_HEAD.search(body)
    head = _MPICH_ABORT.search(body[:m.start()]) if cray is None else None
    rank = int(cray.group("rank")) if cray else int(head.group("rank")) if head else None
    return MpiFatal(call, row.name if row else None, rank, cray.group("host") if cray else None,
                    row is not None and row.argument, said)


def _signal_of(printer: str, num: int) -> str:
    """The signal a launcher names by number (catalog/exits.yaml: a `signal` printer)."""
    return exit_reading(printer, num).signal or f"SIG{num}"


def _exit_fields(detail: str, code: int | None = None, sig: str | None = None, *, printer: str = "generic",
                 since: str | None = None, until: str | None = None,
                 version: str | None = None) -> dict[str, FieldValue]:
    """A launcher's report of how a rank exited: a signal by name, else an exit code read by its printer's meaning
    (catalog/exits.yaml: srun's 137 is SIGKILL, MPI_Abort's errorcode never a signal, Hydra's 9 either)."""
    fields: dict[str, FieldValue] = {"by": "launcher", "detail": detail}
    if code is not None:
        read = exit_reading(printer, code, since=since, until=until, version=version)
        # The process's own exit value where the number is a status that holds it (Hydra before 1.5b2 printed
        # exit(1) as 256), else the number as printed.
        fields["exitcode"] = read.exit if read.signal is None and read.exit is not None else code
        sig = sig or read.signal
    if sig is not None:
        fields["signal"] = sig
        fields["by"] = by_whom(sig, "launcher")
    return fields


class MpiExitExtractor:
    """The MPI launchers' and runtimes' report of the rank that exited (Open MPI's errmgr and MPI_ABORT, MPICH's
    Hydra banner, mpd and fatal errors): process.signal with the rank, host, pid and signal or exit code each gives.
    A launcher saying a rank died names no cause: these are the leads' first exit, and symptoms."""

    name = "launcher.mpi_exit"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "process.signal": frozenset({"by", "detail", "exitcode", "mpi_call", "mpi_class", "pid", "signal"}),
        "app.exception": frozenset({"exc_type", "message", "mpi_call", "setup"}),
    }
    sources: frozenset[str] = frozenset({"application"})
    literals: tuple[str, ...] = (_OMPI_FIRST, "Process name:", "Exit code:", "MPI_ABORT was invoked on rank",
                                 _HYDRA_BANNER, " RUNNING AT ", "EXIT CODE:", "KILLED BY SIGNAL:", "EXIT STRING:",
                                 "exit status of rank ", MPI_FATAL_WORDS, _ABORTING, "] HYD", "MPICH Version:",
                                 _HYDRA_DETAILS, "Version:", *_OMPI_ERRH_WORDS)

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        if "Version:" in line and self._version(line, ctx):
            return
        if "*** " in line and any(w in line for w in _OMPI_ERRH_WORDS):
            yield from self._ompi_handler(line, ctx)
            return
        p = split_prefixes(line)
        body = p.body
        if _OMPI_FIRST in body:
            ctx.state[_K_OMPI] = (ctx.lineno, None)
            ctx.claimed = True
            return
        if _HYDRA_BANNER in body:
            ctx.state[_K_HYDRA] = (ctx.lineno, None, None, None)
            ctx.claimed = True
            return
        yield from self._blocks(body, p.rank, p.host, ctx)
        if ctx.claimed:
            return
        m = _MPI_ABORT.search(body)
        if m:
            code = int(m.group("code")) if m.group("code") else None
            yield Draft("process.signal", _exit_fields(clip(body), code, printer="mpi-abort"),
                        rank=int(m.group("rank")), host=p.host)
            return
        m = _MPD.search(body)
        if m:
            sig = _signal_of("mpd-signal", int(m.group("num"))) if m.group("num") else None
            code = int(m.group("code")) if m.group("code") else None
            yield Draft("process.signal", _exit_fields(clip(body), code, sig, printer="mpd"),
                        rank=int(m.group("rank")), host=p.host)
            return
        fatal = _MPI_FATAL.search(body)
        rank = p.rank if p.rank is not None else ctx.rank
        if fatal or (body.startswith(_ABORTING) and rank is not None):
            draft = self._fatal(body, fatal, rank, p.host)
            yield draft
            read = mpi_fatal(body) if fatal else None
            if read is not None and read.argument:
                # an error in the arguments of the program's own call (catalog/transport.yaml `argument`): its
                # exception, on the rank that made the call, beside the runtime's abort of it. MPI_Init takes no
                # count, rank, tag or communicator: one of these there is the launch's (a process manager that did
                # not give the rank what its MPI reads at start, MVAPICH2's `Invalid tag` without
                # PMI_process_mapping), the job's set-up.
                said = read.said.removesuffix("error stack:").rstrip(" ,")
                fields: dict[str, FieldValue] = {"exc_type": str(read.mpi_class), "message": clip(said),
                                                 "mpi_call": read.call}
                if read.call in _MPI_INIT_CALLS:
                    fields["setup"] = True
                yield Draft("app.exception", fields, rank=draft.rank, host=draft.host)
            return
        if _HYDRA_TEARDOWN.match(body):
            ctx.claimed = True

    @staticmethod
    def _ompi_handler(line: str, ctx: LineContext) -> Iterator[Draft]:
        """Open MPI's fatal error handler: the call it names, then its class; a class of the call's own arguments
        (catalog/transport.yaml `argument`) is the program's exception (inside MPI_Init, the launch's set-up)."""
        m = _OMPI_ERRH_CALL.search(line)
        if m is not None:
            # noted, not claimed: the handler's lines name no cause of their own, and stay error lines the run holds
            ctx.state[_K_OMPI_ERRH] = (ctx.lineno, m.group("call"))
            return
        c = _OMPI_ERRH_CLASS.search(line)
        if c is None:
            return
        row = next((r for r in mpich_classes() if r.name == c.group("cls")), None)
        if row is None or not row.argument:
            return
        seen = ctx.state.get(_K_OMPI_ERRH)
        call = seen[1] if isinstance(seen, tuple) and ctx.lineno - seen[0] <= _OMPI_ERRH_LINES else None
        fields: dict[str, FieldValue] = {"exc_type": row.name, "message": clip(c.group("msg"))}
        if isinstance(call, str):
            fields["mpi_call"] = call
            if call in _MPI_INIT_CALLS:
                fields["setup"] = True
        yield Draft("app.exception", fields, host=c.group("host"))

    @staticmethod
    def _version(line: str, ctx: LineContext) -> bool:
        """Note the MPICH version a line names (True: the line was about it)."""
        if _HYDRA_DETAILS in line:
            ctx.state[_K_MPICH] = (ctx.lineno,)
            ctx.claimed = True
            return True
        seen = ctx.state.get(_K_MPICH)
        awaiting = isinstance(seen, tuple) and 0 < ctx.lineno - seen[0] <= 2
        if "MPICH Version:" not in line and not awaiting:
            return False
        m = _MPICH_VERSION.match(split_prefixes(line).body)
        if m is None:
            return False
        ctx.state[_K_MPICH] = m.group("v")
        ctx.claimed = True
        return True

    @staticmethod
    def _fatal(body: str, fatal: re.Match[str] | None, rank: int | None, host: str | None) -> Draft:
        """A rank's MPI library aborting it on a fatal error: the rank's exit (by its runtime), with the rank and
        host a prefix or Cray's header names."""
        read = mpi_fatal(body)
        cray = _CRAY_HEAD.search(body) if read is None else None  # (`aborting job:` under the header)
        if read is not None and read.rank is not None:
            rank, host = read.rank, host or read.host
        elif cray:
            rank, host = int(cray.group("rank")), host or cray.group("host")
        fields = _exit_fields(clip(body))
        fields["by"] = "runtime"
        if fatal:
            fields["mpi_call"] = fatal.group("call")
            if read is not None and read.mpi_class is not None:
                fields["mpi_class"] = read.mpi_class
        return Draft("process.signal", fields, rank=rank, host=host)

    @staticmethod
    def _blocks(body: str, rank: int | None, host: str | None, ctx: LineContext) -> Iterator[Draft]:
        """The lines of Open MPI's first-exit block and of Hydra's banner after their opening line."""
        ompi = ctx.state.get(_K_OMPI)
        if isinstance(ompi, tuple) and ctx.lineno - ompi[0] <= _BLOCK_LINES:
            m = _OMPI_PROC.match(body)
            if m:
                ctx.state[_K_OMPI] = (ompi[0], int(m.group("rank") or m.group("rank5")))
                ctx.claimed = True
                return
            m = _OMPI_EXIT.match(body)
            if m:
                ctx.state.pop(_K_OMPI, None)
                ctx.claimed = True
                yield Draft("process.signal", _exit_fields(clip(body), int(m.group("code")), printer="openmpi"),
                            rank=ompi[1] if ompi[1] is not None else rank, host=host)
                return
        hydra = ctx.state.get(_K_HYDRA)
        if isinstance(hydra, tuple) and ctx.lineno - hydra[0] <= _BLOCK_LINES:
            m = _HYDRA_WHERE.match(body)
            if m:
                ctx.state[_K_HYDRA] = (hydra[0], int(m.group("rank")) if m.group("rank") else None,
                                       int(m.group("pid")), m.group("host"))
                ctx.claimed = True
                return
            m = _HYDRA_HOW.match(body)
            if m:
                ctx.state.pop(_K_HYDRA, None)
                ctx.claimed = True
                if m.group("num"):
                    sig = (signal_of_text(m.group("what")) if m.group("what") else None) or _signal_of(
                        "hydra-signal", int(m.group("num")))
                    fields = _exit_fields(clip(body), None, sig)
                elif hydra[1] is not None:
                    # `RANK n PID p RUNNING AT h`: Intel MPI's copy of Hydra, whose EXIT CODE no source shows us.
                    fields = _exit_fields(clip(body), int(m.group("code")), printer="intel-hydra")
                else:
                    # MPICH's own: its `PID p RUNNING AT h` line came with 3.1; the number is a raw wait status
                    # from 3.2, either it or the exit value before (catalog/exits.yaml).
                    named = ctx.state.get(_K_MPICH)
                    fields = _exit_fields(clip(body), int(m.group("code")), printer="hydra",
                                          since="3.1" if hydra[2] is not None else None,
                                          until=None if hydra[2] is not None else "3.1",
                                          version=named if isinstance(named, str) else None)
                if hydra[2] is not None:
                    fields["pid"] = hydra[2]
                _, r, _, h = hydra
                yield Draft("process.signal", fields, rank=r if r is not None else rank, host=h or host)
                return
        if "EXIT STRING:" in body:
            ctx.claimed = True  # Hydra's closing line, after the banner it sums up


EXTRACTORS: tuple[LineExtractor, ...] = (LauncherSignalExtractor(), MpiExitExtractor())
