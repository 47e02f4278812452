"""Process signals as srun, slurmstepd, the shell, PBS and the process itself report them.

srun's task kills, slurmstepd's cancellation banners, faulthandler's and the
shell's fault reports, exit codes that are 128+N or -N. torchrun's own signal
lines are torchrun.py's; srun's and Open MPI's exit reports with a rank are
launcher.py's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import platform_program_of
from firstfault.extract import traceback as tb
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.codes import (
    by_whom,
    exit_reading,
    signal_name,
    signal_names,
    signal_of_text,
    strsignal_alternation,
)
from firstfault.extract.exceptions import TERMINATED, printer
from firstfault.extract.launcher import reports_exit
from firstfault.extract.nccl import NCCL_MARK, clip, recent, split_rank_prefix
from firstfault.model import FieldValue

_STRSIGNAL_ALT = strsignal_alternation()
_FAULT_ALT = "Segmentation fault|Aborted|Bus error|Floating point exception|Illegal instruction"

# `srun: error: node-03: task 17: Killed`, `... tasks 0-3: Segmentation fault (core dumped)`.
_SRUN_TASK = re.compile(
    r"error:\s+(?P<host>[A-Za-z0-9][\w.\-]*):\s+tasks?\s+(?P<tasks>\d+(?:\s*[-,]\s*\d+)*):\s+"
    rf"(?P<what>{_STRSIGNAL_ALT})"
)
# srun tearing its step down itself (src/srun/ step launch: `_step_signal`, and its --wait / WaitTime timer): `srun:
# First task exited 30s ago`, `srun: launch/slurm: _step_signal: Terminating StepId=1.0` (older: `srun: Terminating
# job step 4242.0`); the `task N: Killed` reports after it in the same output are srun killing the survivors, not
# them failing (real srun -W 5 runs under the lab's Slurm: tests/fixtures/srun-teardown/).
_SRUN_TEARDOWN = re.compile(r"\bsrun: (?:First task exited \d+s ago|(?:launch/slurm: _step_signal: )?Terminating "
                            r"(?:StepId=|job step ))")
_K_TEARDOWN = "ff.srun.teardown"
# `slurmstepd: error: *** STEP 4242.0 ON node-01 CANCELLED AT 2026-11-02T10:05:00 ***`
# and `*** JOB 4242 ON node-01 CANCELLED AT ... DUE TO TIME LIMIT ***`.
# Before Slurm 17.11 the node came last:
# `*** JOB 830329 CANCELLED AT 2018-08-06T17:21:44 DUE TO TIME LIMIT on n447 ***`.
_SLURM_CANCELLED = re.compile(
    r"\*\*\* (?P<scope>STEP|JOB) (?P<id>\S+) (?:ON (?P<host>\S+) )?CANCELLED AT (?P<at>\S+)(?P<rest>[^*]*)\*\*\*"
)
_LEGACY_ON = re.compile(r"\bon (?P<host>[A-Za-z0-9][\w.\-]*)\s*$")
_FATAL_PYTHON = re.compile(rf"Fatal Python error: (?P<what>{_FAULT_ALT})")
# The shell's report: `Segmentation fault (core dumped)`, `line 12: 4242 Aborted
# (core dumped) python train.py`; UCX `Caught signal 11 (Segmentation fault: ...`; Open MPI's signal handler in
# the process (opal/util/stacktrace.c: `[host:pid] *** Process received signal ***`, then `[host:pid] Signal:
# Segmentation fault (11)`, its code, address and frames, `*** End of error message ***`).
_SHELL_FAULT = re.compile(
    rf"(?:^|\s|\d)(?P<what>{_FAULT_ALT})\s*\(core dumped\)"
    rf"|^\s*(?:\S+: line \d+:\s+\d+\s+)?(?P<bare>Segmentation fault)\b"
    rf"|^\s*\S+: line \d+:\s+\d+\s+(?P<job>{_STRSIGNAL_ALT})\s"
    rf"|Caught signal \d+ \((?P<ucx>{_FAULT_ALT})"
    rf"|^\s*\[(?P<ohost>[A-Za-z0-9][\w.\-]*):\d+\] Signal: (?P<ompi>{_FAULT_ALT}) \(\d+\)"
    # bash's own report of its foreground job killed by SIGKILL (strsignal's `Killed`, the whole line: the job's
    # output ends and the shell says only that), by whom it does not say: the OOM killer, a limit, an operator
    rf"|^\s*(?P<killed>Killed)\s*$"
)

# The C++ runtime aborting the process on its own (std::terminate, then abort(3): SIGABRT) where no exception was
# thrown: libstdc++'s handler for a call through a pure virtual function (libsupc++/pure.cc __cxa_pure_virtual: `pure
# virtual method called`, then std::terminate), its verbose terminate handler with no exception in flight (a joinable
# std::thread destroyed, a noexcept function's end; libsupc++/vterminate.cc: `terminate called without an active
# exception`, `terminate called recursively`) and libc++abi's (src/cxa_virtual.cpp: `Pure virtual function called!`,
# after its `libc++abi: ` tag), and libc++abi's default terminate handler with no C++ exception of a known type in
# flight (src/cxa_default_handlers.cpp: `libc++abi: terminating` alone, `terminating due to uncaught foreign exception`,
# `with` before LLVM 15; one with a type is an uncaught exception, extract/exceptions.py `_LIBCXXABI`). The program's
# own fault, the line whole (a title or prose quoting it is not read).
_CXX_ABORT = re.compile(r"^\s*(?:pure virtual method called|terminate called (?:without an active exception"
                        r"|recursively)|(?:libc\+\+abi(?: \(PID \d+\))?: )?Pure virtual function called!"
                        r"|libc\+\+abi(?:\.dylib)?: terminating(?: (?:due to|with) (?:uncaught|unexpected)"
                        r" foreign exception)?)\s*$")

# glibc's malloc finding its heap corrupted and aborting the process (malloc/malloc.c, malloc_printerr: the message,
# then abort(3): SIGABRT): `free(): invalid pointer`, `double free or corruption (out)`, `malloc(): corrupted top
# size`, `corrupted size vs. prev_size`, `munmap_chunk(): invalid pointer`; before glibc 2.26 inside `*** Error in
# `python': ...: 0x00007f3e9009cdd0 ***` (2.18-2.25) or `*** glibc detected *** python: ...` (before 2.18), a
# backtrace after it. The process's own abort (a write past a buffer, a double free in the program or a library it
# loaded): glibc's messages whole, the line nothing else (a title, a log's own words or prose that quote them are not
# read; `my_free(): invalid pointer` is another program's words).
_HEAP_ABORT = re.compile(
    r"^\s*(?:\*\*\* (?:Error in `[^`]{1,300}'|glibc detected \*\*\* [^:*]{1,300}): )?(?:"
    r"free\(\): (?:invalid (?:pointer|size|next size \((?:fast|normal)\))|double free detected in tcache 2"
    r"|too many chunks detected in tcache|unaligned chunk detected in tcache 2|corrupted unsorted chunks)"
    r"|malloc\(\): (?:memory corruption(?: \(fast\))?|(?:small|large)bin double linked list corrupted"
    r"(?: \((?:nextsize|bk)\))?|corrupted unsorted chunks(?: 2)?|corrupted top size"
    r"|unaligned (?:tcache|fastbin) chunk detected(?: [23])?|invalid (?:next )?size \(unsorted\)"
    r"|mismatching next->prev_size \(unsorted\)|unsorted double linked list corrupted)"
    r"|realloc\(\): invalid (?:pointer|old size|next size)"
    r"|malloc_consolidate\(\): (?:invalid chunk size|unaligned fastbin chunk detected)"
    r"|m(?:un|re)map_chunk\(\): invalid pointer"
    r"|tcache_thread_shutdown\(\): unaligned tcache chunk detected"
    r"|double free or corruption \((?:top|out|!prev|fasttop)\)"
    r"|corrupted size vs\. prev_size(?: while consolidating| in fastbins)?"
    r"|corrupted double-linked list(?: \(not small\))?"
    r"|invalid fastbin entry \(free\))"
    r"(?:: 0x[0-9a-fA-F]+ \*\*\*)?\s*$"
)
# glibc's other checks that end the process with abort(3) (debug/stack_chk_fail.c, debug/fortify_fail.c):
# `*** stack smashing detected ***: terminated` (a canary the program overwrote; before glibc 2.30 with the
# program's name or `<unknown>` before `terminated`), `*** buffer overflow detected ***: terminated` (a _FORTIFY_SOURCE
# check). The program's own memory fault, the line whole.
_LIBC_FORTIFY = re.compile(r"^\s*\*\*\* (?:stack smashing|buffer overflow) detected \*\*\*: (?:\S{1,500} )?"
                           r"terminated\s*$")
_HEAP_WORDS: Final = ("*** stack smashing detected ***", "*** buffer overflow detected ***",
                      "free(): ", "malloc(): ", "realloc(): ", "malloc_consolidate(): ", "munmap_chunk(): ",
                      "mremap_chunk(): ", "tcache_thread_shutdown(): ", "double free or corruption (",
                      "corrupted size vs. prev_size", "corrupted double-linked list", "invalid fastbin entry (free)")

# A C++ program's failure-signal handler writing the signal it caught before its stack: abseil's
# (absl/debugging/failure_signal_handler.cc WriteSignalMessage: `*** SIGSEGV received at time=1663811727 on cpu 11 ***`,
# ` on cpu N` only where the platform tells the CPU, `*** Signal N received at time=... ***` for a signal it has no name
# for), which Ray's processes, TensorFlow, JAX and gRPC install, and glog's older one (src/signalhandler.cc
# DumpSignalInfo: `*** SIGSEGV (@0x0) received by PID 17711 (TID 0x7f893090a6f0) from PID 0; stack trace: ***`). Read
# anywhere in the line: Ray's logger copies the report behind its own stamp (`[2022-09-21 18:55:27,600 E 1768 1803]
# logging.cc:361: *** SIGSEGV received ...`). The frames after it (`PC: @ ...`, `    @ ...`) say nothing more.
_FAILURE_HANDLER = re.compile(
    r"\*\*\* (?:(?P<name>SIG[A-Z]{2,7})|Signal (?P<num>\d{1,3})) received at time=\d{1,20}(?: on cpu \d{1,6})? \*\*\*"
    r"|\*\*\* (?P<gname>SIG[A-Z]{2,7}) \(@0x[0-9a-fA-F]{1,16}\) received by PID \d{1,10} \(TID 0x[0-9a-fA-F]{1,16}\)"
    r"(?: from PID \d{1,10})?; stack trace: \*\*\*"
)
# Triton Inference Server's handler of the crash signals it traps, SIGSEGV and SIGABRT (triton-inference-server/server
# src/triton_signal.cc ErrorSignalHandler, added in server PR #3257: `Signal (11) received.` on stderr, boost's stack
# trace (` 0# 0x... in tritonserver`), then exit(1)). The same words come from its handler of SIGINT and SIGTERM,
# the graceful shutdown it was asked for: only a crash signal is read (a kill from outside is the sender's, and the
# sender says so). The line whole: prose or a title quoting it is not the report.
_TRITON_SIGNAL = re.compile(r"^\s*Signal \((?P<num>\d{1,3})\) received\.\s*$")
_CRASH_SIGNALS: Final = frozenset({"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGABRT"})
# A language runtime's own report of the crash signal that ended its program, in a form only that runtime prints (the
# line whole; prose or a title quoting it is not the report):
# - GNU Fortran's (libgfortran/runtime/compile_options.c show_signal, from the backtrace_handler it installs by
#   default): `Program received signal SIGSEGV: Segmentation fault - invalid memory reference.`, then `Backtrace for
#   this error:` and the frames. gdb's words for a signal the debugger stopped on (`Program received signal SIGSEGV,
#   Segmentation fault.`, a comma) are a debugging session's, not read.
# - Go's (src/runtime/signal_unix.go fatalsignal): a signal the runtime could not turn into a panic (in C code called
#   through cgo, in the runtime itself) printed as its signal table's name alone on the line
#   (runtime/sigtab_linux_generic.go: `SIGSEGV: segmentation violation`, `SIGFPE: floating-point exception`), then
#   `PC=0x... m=N sigcode=N` (`signal arrived during cgo execution` where it came in C code). Not `SIGABRT: abort`,
#   which GOTRACEBACK=crash prints after a panic already read, nor `SIGQUIT: quit`, a dump someone asked for.
# - Apple's crash report (a .crash, or an .ips as the system's viewer renders it; Apple's "Understanding the exception
#   types in a crash report"): `Exception Type:  EXC_BAD_ACCESS (SIGSEGV)`, the Mach exception and the signal it became.
#   `EXC_CRASH (SIGKILL)` is the system's kill (a watchdog, jetsam: its Termination Reason says), not read.
# Each read only for a crash signal (_CRASH_SIGNALS): the process's own fault.
_RUNTIME_SIGNAL = re.compile(
    r"^\s*Program received signal (?P<gf>SIG[A-Z]{2,7}): [A-Z][^.]{0,120}\.\s*$"
    r"|^(?P<go>SIG(?:SEGV|BUS|FPE|ILL)): (?:segmentation violation|bus error|floating-point exception"
    r"|illegal instruction)\s*$"
    r"|^\s*Exception Type: +EXC_[A-Z_]{2,30} \((?P<mach>SIG[A-Z]{2,7})\)\s*$"
)
_RUNTIME_SIGNAL_WORDS: Final = ("Program received signal SIG", "Exception Type:", "SIGSEGV: segmentation violation",
                                "SIGBUS: bus error", "SIGFPE: floating-point exception",
                                "SIGILL: illegal instruction")

# The DataLoader's worker signal handler: `ERROR: Unexpected segmentation fault
# encountered in worker.`, `... bus error ...` (a too-small /dev/shm), `... floating-point exception ...`:
# strsignal() texts in lower case (codes.signal_of_text reads them).
_WORKER_FAULT = re.compile(r"Unexpected (?P<what>segmentation fault|bus error|floating-point exception) encountered"
                           r" in worker")
# The elastic agent's own signal: `Signal 9 (SIGKILL) received by PID 4242`;
# `subprocess` / multiprocessing reprs `<Signals.SIGKILL: 9>`.
_AGENT_SIGNAL = re.compile(r"Signal (?P<num>\d+) \((?P<sig>SIG[A-Z0-9]+)\) received by PID")
# A container's or process's exit code: `exited with exit code 137`, `exit status 139`,
# `Exit code: 137`, `ExitCode 9`, `returned non-zero exit status -9`; 128+N and -N are signals.
_EXIT_CODE = re.compile(
    r"\b(?:exit(?:ed)?(?: with)?(?: exit)? (?:code|status)|[Ee]xit [Cc]ode|returned non-zero exit status"
    r"|exits with return code)"
    r"[:= ]+\(?(?P<code>-?\d+)\b"
)

# Nextflow's report of a task that failed (TaskProcessor: `Process `NAME` terminated with an error exit status (N)`
# under `Caused by:` in its error report; `NOTE: ... -- Execution is retried (N)` where its errorStrategy resubmits
# the task: one try, no end) and its console's executor line (AnsiLogObserver: `executor >  slurm (10)`), which
# says which scheduler ran the tasks. N is the task's exit status as its wrapper (.command.run, bash) wrote it:
# 128+N for a signal (catalog/exits.yaml, printer nextflow).
_NEXTFLOW_EXIT = re.compile(r"^\s*(?:\[[0-9a-f]{2}/[0-9a-f]{6}\] )?(?:NOTE: )?Process `[^`]{1,500}` terminated with an "
                            r"error exit status \((?P<code>-?\d+)\)(?P<retried> -- Execution is retried \(\d+\))?")
_NEXTFLOW_EXECUTOR = re.compile(r"^\s*executor >\s+(?P<name>[a-z][\w\-]*) \(\d+\)")
_K_NF_EXECUTOR = "ff.nextflow.executor"
# The signal a scheduler sends a task at its time limit, where that is the signal's one sender, by Nextflow's name
# for the executor: Nextflow submits every Slurm task with `--signal B:USR2@30` (unless the pipeline sets its own
# --signal; nextflow-io/nextflow SlurmExecutor.getDirectives, nextflow-io/nextflow#2163), so Slurm's batch shell gets
# SIGUSR2 30 s before the time limit and the task ends 140; LSF sends SIGUSR2 at a job's run limit, then kills it
# (IBM Spectrum LSF 10.1, bsub -W). A SIGKILL or a SIGTERM has other senders and stays what it is.
_TIME_LIMIT_SIGNAL: Final = {"slurm": "SIGUSR2", "lsf": "SIGUSR2"}

# PBS's `Exit_status=271` in its accounting and tracejob lines: 256+N is signal N, 128+N its shell's child's
# (catalog/exits.yaml, printer pbs); negative codes are the MOM's (catalog/scheduler.yaml).
_PBS_EXIT = re.compile(r"\bExit_status=(?P<code>-?\d+)")

# How far the shell's report of a fault may trail faulthandler's (which dumps
# every thread's stack in between).
_FAULT_REPORT_LINES: Final = 300


class ProcessSignalExtractor:
    """srun task kills, slurmstepd cancellations, Python / shell fault reports."""

    name = "process.signal"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "app.exception": frozenset({"exc_type", "message", "shm", "signal", "limit"}),
        "process.signal": frozenset({"by", "detail", "due_to", "exitcode", "scheduler", "signal", "slurm_scope",
                                     "unprompted", "program", "part", "pid", "proc"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})  # slurmstepd also logs to syslog
    literals: tuple[str, ...] = (
        ": task ",
        ": tasks ",
        "*** STEP ",
        "*** JOB ",
        "Fatal Python error: ",
        "Segmentation fault",
        "(core dumped)",
        # UCX's signal report behind its `[host:pid:thread:tid]` tag (`[nid005060:78213:0:78213] Caught signal 7 (Bus
        # error: nonexistent physical address)`): without this word only its segmentation faults reached the
        # extractor, through the word above. Another program's words (Xorg's `(EE) Caught signal 7 (Bus error).
        # Server aborting` in a node's journal) are no report of the job's.
        "] Caught signal ",
        "encountered in worker",
        ") received by PID",
        " received at time=",
        "Signal (",
        "exit code",
        "exited with code",
        "exit status",
        "Exit code",
        "Exit Code",
        "return code",
        ": line ",
        "Exit_status=",
        "executor >  ",
        "] Signal: ",
        "Killed",
        "First task exited ",
        "Terminating StepId=",
        "Terminating job step ",
        "pure virtual method called",
        "terminate called without an active exception",
        "terminate called recursively",
        "Pure virtual function called!",
        "abi: terminating",  # libc++abi's (`libc++abi: `, `libc++abi.dylib: `)
        *_HEAP_WORDS,
        *_RUNTIME_SIGNAL_WORDS,
    )

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        if "srun: " in body and _SRUN_TEARDOWN.search(body):
            ctx.state[_K_TEARDOWN] = True  # the step's later `task N: Killed` reports are srun's own kill
            ctx.claimed = True
            return
        if "executor >" in body and (ex := _NEXTFLOW_EXECUTOR.match(body)) is not None:
            ctx.state[_K_NF_EXECUTOR] = ex.group("name")  # Nextflow's console: the scheduler of its tasks
            ctx.claimed = True
            return
        if "terminated with an error exit status" in body and (nf := _NEXTFLOW_EXIT.match(body)) is not None:
            ctx.claimed = True
            # (its status's reading hangs on the code's value, not on the range of its digits: LineContext.keyed)
            ctx.keyed = True
            draft = None if nf.group("retried") else _nextflow_exit(int(nf.group("code")), ctx.state, clip(body))
        else:
            draft = self._match(body, ctx)
        if draft is None:
            return
        if rank is not None:
            draft.rank = rank
        if draft.kind == "process.signal":
            if ctx.proc is not None and draft.fields.get("by") == "self" and "pid" not in draft.fields:
                # the process a prefix named as the printer of its own fault (Ray's `(RayTrainWorker pid=1768)`, its
                # daemon's `(raylet)`, kubectl's pod/container): which process crashed
                if ctx.proc.isdigit():
                    draft.fields["pid"] = int(ctx.proc)
                else:
                    draft.fields["proc"] = ctx.proc
            row = printer(body, ctx)
            if row is not None:
                # the line's printer is a program of the platform, not a rank (Ray's raylet, an idle worker): its
                # crash is that program's (app-crash reads no event with a `part`)
                draft.fields["program"], draft.fields["part"] = row.program, row.part
        if draft.fields.get("signal") == "SIGABRT" and draft.fields.get("by") == "self" and (
                ctx.state.get(NCCL_MARK) or ctx.state.get(TERMINATED)):
            # The stream already reported an NCCL failure or a C++ terminate: the abort is the runtime's
            # reaction (the c10d watchdog, std::terminate), not a crash of its own.
            draft.fields["by"] = "runtime"
        if draft.fields.get("by") in ("self", "runtime"):
            # faulthandler's "Fatal Python error: Segmentation fault", its
            # thread dump, then the shell's "Segmentation fault (core dumped)":
            # one fault of one process (an abort the runtime made after a failure
            # the stream reported, `terminate called ...` then faulthandler's
            # `Aborted`, as much as a crash of its own).
            key = (draft.fields["signal"], draft.rank if draft.rank is not None else ctx.rank, draft.host)
            seen = recent(ctx.state, "ff.app.self_signal")
            prev = seen.get(key)
            seen[key] = ctx.lineno
            if prev is not None and ctx.lineno - prev <= _FAULT_REPORT_LINES:
                return
        yield draft

    def _match(self, body: str, ctx: LineContext) -> Draft | None:
        state, lineno = ctx.state, ctx.lineno
        detail = clip(body)
        if "*** " in body and (h := _FAILURE_HANDLER.search(body)) is not None:
            sig = h.group("name") or h.group("gname") or signal_name(int(h.group("num")))
            if sig not in signal_names():
                return None
            # the process's own word on the signal it caught (an abort: its own abort(3), as faulthandler's)
            by = "self" if sig == "SIGABRT" else by_whom(sig, "launcher")
            return Draft("process.signal", {"signal": sig, "by": by, "detail": detail})
        if body.lstrip().startswith("Signal (") and (t := _TRITON_SIGNAL.match(body)) is not None:
            sig = signal_name(int(t.group("num")))
            if sig not in _CRASH_SIGNALS:
                return None  # its graceful shutdown on SIGINT / SIGTERM
            # the process's own word on the signal it caught, as abseil's handler's
            by = "self" if sig == "SIGABRT" else by_whom(sig, "launcher")
            return Draft("process.signal", {"signal": sig, "by": by, "detail": detail})
        if "SIG" in body and (r := _RUNTIME_SIGNAL.match(body)) is not None:
            sig = r.group("gf") or r.group("go") or r.group("mach")
            if sig not in _CRASH_SIGNALS:
                return None  # a limit's signal (SIGXCPU), one sent from outside (SIGKILL, SIGQUIT)
            # the runtime inside the process reporting the fault it caught
            return Draft("process.signal", {"signal": sig, "by": "self", "detail": detail})
        m = _SRUN_TASK.search(body)
        if m:
            sig = signal_of_text(m.group("what")) or "SIGKILL"
            tasks = m.group("tasks")
            draft = Draft("process.signal", {"signal": sig, "by": by_whom(sig, "launcher"), "detail": detail})
            if state.get(_K_TEARDOWN) and sig in ("SIGKILL", "SIGTERM"):
                draft.fields["due_to"] = "step_teardown"  # srun ended the step: the survivors' kill
            draft.host = m.group("host")
            if tasks.isdigit():
                draft.rank = int(tasks)  # srun task id == rank
            return draft
        m = _SLURM_CANCELLED.search(body)
        if m:
            # Slurm cancels with SIGTERM, then SIGKILL after KillWait. A JOB banner means the
            # allocation was ended (scancel, or the reason after DUE TO); a STEP banner alone
            # is also printed when srun tears a step down after one task failed.
            due = re.search(r"DUE TO ([A-Z][A-Z ]*[A-Z])", m.group("rest"))
            fields: dict[str, FieldValue] = {"signal": "SIGTERM", "by": "scheduler", "detail": detail,
                                             "slurm_scope": m.group("scope").lower()}
            if due:
                fields["due_to"] = due.group(1).lower().replace(" ", "_")
            draft = Draft("process.signal", fields)
            legacy = _LEGACY_ON.search(m.group("rest")) if m.group("host") is None else None
            draft.host = m.group("host") or (legacy.group("host") if legacy else None)
            return draft
        m = _WORKER_FAULT.search(body)
        if m and m.group("what") == "bus error":
            return tb.shm_exhausted("DataLoader worker bus error", body)
        fatal = _FATAL_PYTHON.search(body)
        m = m or fatal or _SHELL_FAULT.search(body)
        if m:
            what = next(v for k, v in m.groupdict().items() if v is not None and k != "ohost")
            sig = signal_of_text(what) or "SIGSEGV"
            # faulthandler's "Fatal Python error: Aborted" is the process's own word on an abort.
            by = "self" if fatal is not None and sig == "SIGABRT" else by_whom(sig, "launcher")
            host = m.groupdict().get("ohost")  # the host Open MPI's handler names
            return Draft("process.signal", {"signal": sig, "by": by, "detail": detail}, host=host)
        if _CXX_ABORT.match(body) or _HEAP_ABORT.match(body) or _LIBC_FORTIFY.match(body):
            return Draft("process.signal", {"signal": "SIGABRT", "by": "self", "detail": detail})
        m = _PBS_EXIT.search(body)
        if m:
            # An exit status's reading (catalog/exits.yaml) hangs on its value (128+N is a signal, 1 is not), which no
            # range of its digits' bytes bounds: no copy of the line may be counted for another (LineContext.keyed,
            # collect/fold.py).
            ctx.keyed = True
            code = int(m.group("code"))
            pbs_sig = exit_reading("pbs", code).signal
            if pbs_sig is not None:
                return Draft("process.signal", {"signal": pbs_sig, "by": by_whom(pbs_sig, "scheduler"),
                                                "detail": detail, "exitcode": code})
            return None
        m = _AGENT_SIGNAL.search(body) if "traceback :" not in body else None
        if m:
            # Sent to torchrun's agent from above it (scancel, the kubelet, an operator).
            sig = m.group("sig")
            return Draft("process.signal", {"signal": sig, "by": by_whom(sig, "scheduler"), "detail": detail})
        if "exitcode" not in body and "local_rank" not in body:  # torchrun's own lines: TorchrunExtractor
            m = _EXIT_CODE.search(body)
            if m and not reports_exit(body, state, lineno):  # srun's or Open MPI's, with the rank: launcher.py
                ctx.keyed = True  # (the code's reading hangs on its value, as Exit_status's above)
                # Python's own words (subprocess's CalledProcessError, DeepSpeed's launcher) are Popen.returncode;
                # any other program's, the generic reading (catalog/exits.yaml).
                python = m.group(0).startswith(("returned non-zero exit status", "exits with return code"))
                sig_or_none = exit_reading("python" if python else "generic", int(m.group("code"))).signal
                if sig_or_none is not None:
                    return Draft("process.signal", {"signal": sig_or_none, "by": by_whom(sig_or_none, "launcher"),
                                                    "detail": detail, "exitcode": int(m.group("code"))})
        return None


def _nextflow_exit(code: int, state: Mapping[str, object], detail: str) -> Draft | None:
    """Nextflow's task that ended with `code`: the signal its status means, and where the stream's executor line names
    a scheduler whose one use of that signal is the time limit, the scheduler's time limit."""
    sig = exit_reading("nextflow", code).signal
    if sig is None:
        return None  # the task's own exit value: what the task printed says why
    executor = state.get(_K_NF_EXECUTOR)
    if isinstance(executor, str) and _TIME_LIMIT_SIGNAL.get(executor) == sig:
        # the scheduler's own word, as a banner is: the pipeline's end (engine/normalise.py banner_state)
        return Draft("process.signal", {"signal": sig, "by": "scheduler", "due_to": "time_limit", "detail": detail,
                                        "exitcode": code, "scheduler": executor})
    return Draft("process.signal", {"signal": sig, "by": by_whom(sig, "launcher"), "detail": detail, "exitcode": code})


# apport's crash report of a program (Ubuntu's and Debian's /var/crash/*.crash, canonical/apport problem_report.py:
# one `Key: value` per line at the line's start, a long value's lines indented under it): the signal that killed it
# (`Signal: 11`) and the source package of its executable (`SourcePackage: opensm`), a few keys apart
_APPORT_SIGNAL = re.compile(r"^Signal: (?P<num>\d{1,2})\s*$")
_APPORT_PACKAGE = re.compile(r"^SourcePackage: (?P<pkg>[a-z0-9][a-z0-9+.\-]{0,80})\s*$")
_APPORT_SPAN: Final = 8  # the most lines between the two keys (SegvAnalysis, SegvReason, ... sort between)
_K_APPORT = "signals.apport"  # per stream: (key, value, line number) of the last of the two keys seen


class ApportExtractor:
    """A platform program's crash in apport's crash report (catalog/platform.yaml `platform_programs`, named by the
    report's source package): `process.signal` by the program itself, with its program and part. A package no row
    names (the workload's own program, whose crash its own output reports) is not read here."""

    name = "process.signal.apport"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "process.signal": frozenset({"by", "detail", "signal", "program", "part"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog", "kernel"})
    literals: tuple[str, ...] = ("Signal: ", "SourcePackage: ")

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        if line[:1] != "S":
            return  # apport's keys start the line
        if (m := _APPORT_SIGNAL.match(line)) is not None:
            key, value = "signal", m.group("num")
        elif (m := _APPORT_PACKAGE.match(line)) is not None:
            key, value = "package", m.group("pkg")
        else:
            return
        last = ctx.state.get(_K_APPORT)
        ctx.state[_K_APPORT] = (key, value, ctx.lineno)
        if not (isinstance(last, tuple) and last[0] != key and 0 < ctx.lineno - last[2] <= _APPORT_SPAN):
            return
        num, pkg = (value, last[1]) if key == "signal" else (last[1], value)
        row = platform_program_of(pkg)
        sig = signal_name(int(num))
        if row is None or sig not in _CRASH_SIGNALS:
            return
        ctx.claimed = True
        yield Draft("process.signal", {"signal": sig, "by": "self", "program": row.program, "part": row.part,
                                       "detail": f"apport crash report: SourcePackage {pkg}, Signal {num} ({sig})"})


EXTRACTORS: tuple[LineExtractor, ...] = (ProcessSignalExtractor(), ApportExtractor())
