"""Stack dumps of hung processes (source kind `stack_dump`), in the debuggers' own forms.

Six text forms, one reader each behind the same `stack.frame` event:

    Process 3842: python train.py                       (py-spy dump; with --native, native frames
    Thread 3842 (idle): "MainThread"                     among the Python ones: `ncclCommAbort (libnccl.so.2)`)
        all_reduce (torch/distributed/distributed_c10d.py:2050)
        train_step (train.py:120)

    Thread 0x00007f8b1c7fe700 (most recent call first):  (faulthandler)
      File "/usr/lib/python3.10/threading.py", line 320 in wait

    Thread 5 (Thread 0x7f3c2bfff700 (LWP 1234)):         (gdb / cuda-gdb `bt`, `thread apply all bt`)
    #0  0x00007f3c... in pthread_cond_wait@@GLIBC_2.3.2 () from /lib64/libpthread.so.0
    #1  0x00007f3c... in ncclCommAbort (comm=0x55d0...) at src/init.cc:2132

    * thread #1, name = 'python', stop reason = signal SIGSTOP     (lldb `bt all`)
      * frame #0: 0x00007f3c... libc.so.6`__futex_abstimed_wait_common + 150
        frame #3: 0x00007f3c... libnccl.so.2`ncclCommAbort + 123

    Traceback for thread 1234 (python) [Has the GIL] (most recent call last):      (pystack; innermost last)
        (Python) File "/work/train.py", line 200, in <module>
        (C) File "src/init.cc", line 2132, in ncclCommAbort (libnccl.so.2)

A form's frame lines are read only under that form's own thread header (a gdb
`bt` of one thread has none: a run of gdb frames from `#0` is a thread), and a
gdb or lldb frame only in its exact shape (an address or a call, `at FILE:LINE`
or `from LIB`), so an application's `#0 ...` line or a Markdown list is no dump.

Each process (a file, each `Process N:` block, each gdb `Attaching to process N`
or lldb `Process N stopped`) gives one `stack.frame` event: the innermost
interesting frame of its main thread, else a checkpoint write or a
communicator's teardown in any other thread, else the main thread's innermost
frame that is no libc wait (category `other`). Which frames are interesting is
one classification for every form (`category`): the Python paths below, and
native names as data (NATIVE_FRAMES). A thread in NCCL's proxy is a helper,
never the main thread nor the one that decides. engine/leads.py makes
`stuck_frame` leads of the events.

Reading is linear in the dump. A number wider than 64 bits (a line number,
a pid) is a problem naming its line, and that frame or pid is left out; at
most MAX_PROCESSES processes of one dump are read, the rest counted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.extract.structured import CHECK_EVERY, MAX_INT_DIGITS, ParseIssue, StructuredResult, clip, fits_int64
from firstfault.model import Event, Evidence, FieldValue

# The event kinds this reader emits and their fields (docs/events.md; extract/registry.py).
EMITS: Mapping[str, frozenset[str]] = {
    "stack.frame": frozenset({"category", "depth", "file", "form", "func", "line", "pid", "thread"}),
}

Form = Literal["py-spy", "faulthandler", "gdb", "lldb", "pystack"]

_PROCESS = re.compile(r"^Process (?P<pid>\d+):")
_DEBUGGER_PROCESS = re.compile(
    r"^(?:Attaching to (?:program: .*, )?process (?P<gdb>\d+)|Process (?P<lldb>\d+) stopped)")
_THREAD = re.compile(
    r"^(?P<current>Current thread|Thread) (?P<id>0x[0-9A-Fa-f]+|\d+)(?: \((?P<state>[\w\s,]+?)\))?"
    r"(?::\s*\"(?P<name>[^\"]*)\")?"
)
_GDB_THREAD = re.compile(
    r"^Thread (?P<id>\d+) \((?:Thread 0x[0-9A-Fa-f]+ \(LWP (?P<lwp>\d+)\)|LWP (?P<lwp2>\d+)|process (?P<proc>\d+))"
    r"(?: \"(?P<name>[^\"]*)\")?\)\s*:\s*$"
)
_LLDB_THREAD = re.compile(r"^(?:\* )?thread #(?P<id>\d+)\b(?P<rest>.*)$")
_LLDB_NAME = re.compile(r"\bname = '(?P<name>[^']*)'")
_PYSTACK_THREAD = re.compile(
    r"^Traceback for thread (?P<id>\d+) \((?P<name>.*?)\)(?: \[[^\]]*\])* \(most recent call last\):\s*$")
_PYSPY_FRAME = re.compile(r"^\s+(?P<func>[^\s()][^()]*?) \((?P<file>[^()]*?):(?P<line>\d+)\)\s*$")
# py-spy --native: a native frame with no line (`ncclCommAbort (libnccl.so.2)`), or a demangled C++ name
_PYSPY_NATIVE = re.compile(r"^\s+(?P<func>[^\s(].*?) \((?P<file>[^()\s:][^()]*?)(?::(?P<line>\d+))?\)\s*$")
_FH_FRAME = re.compile(r"^\s+File \"(?P<file>[^\"]+)\", line (?P<line>\d+) in (?P<func>\S+)")
_GDB_FRAME = re.compile(r"^#(?P<n>\d+) +(?:0x[0-9A-Fa-f]+ in )?(?P<body>\S.*)$")
_GDB_AT = re.compile(r" at (?P<file>[^\s:]+):(?P<line>\d+)$")
_GDB_FROM = re.compile(r" from (?P<file>\S+)$")
_LLDB_FRAME = re.compile(
    r"^\s*(?:\* )?frame #(?P<n>\d+): (?:0x[0-9A-Fa-f]+ )?(?P<module>[^`\s]+)`(?P<func>.+?)"
    r"(?: at (?P<file>[^\s:]+):(?P<line>\d+)(?::\d+)?)?$")  # lines come right-stripped
_PYSTACK_FRAME = re.compile(
    r"^\s+\((?P<kind>Python|C)\) File \"(?P<file>[^\"]*)\", line (?P<line>\d+), in (?P<func>.+?)"
    r"(?: \((?P<lib>[^()]*)\))?$")
# A native name, as every form spells it once its decorations are off (`_base_name`): a C identifier or a C++
# qualified one; gdb's `??` for a frame it has no symbol for.
_NATIVE_NAME = re.compile(r"\?\?|[A-Za-z_~$.][\w:~$.]*")

MAX_PROCESSES: Final = 4096  # processes read from one dump (py-spy dumps one; a node's worth is a few dozen)

COLLECTIVES: Final = frozenset({
    "all_reduce", "all_gather", "all_gather_into_tensor", "_all_gather_base", "all_gather_object",
    "reduce_scatter", "reduce_scatter_tensor", "_reduce_scatter_base", "broadcast", "broadcast_object_list",
    "barrier", "monitored_barrier", "all_to_all", "all_to_all_single", "send", "recv", "isend", "irecv",
    "gather", "scatter", "reduce", "batch_isend_irecv", "all_reduce_coalesced", "allreduce",
})

# Native frame names by what a process stuck there waits on: a name ending in `*` is a prefix, any other is
# exact; names are compared after `_base_name` (no signature, template arguments, symbol version, offset or
# clone suffix; `pnccl` / `PMPI_` profiling entry points as their public names). The first row that holds a
# name decides. `helper` marks a thread of the library's own (NCCL's proxy threads poll the network all run
# long; a verbs program's thread that waits on the adapter's async events): never a process's main thread,
# never its stuck frame. NCCL's device functions (`ncclDevFunc_AllGather_RING_SIMPLE`, a cuda-gdb frame on the
# GPU) are its collectives.
NATIVE_FRAMES: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("helper", ("ncclProxyService*", "ncclProxyProgress*", "ncclProxyServiceUDS*", "ncclProxy*",
                "ncclIbAsyncThreadMain", "ncclCommThreadMain", "persistentThread", "persistentSocketThread",
                "ibv_get_async_event")),
    ("comm_teardown", ("ncclCommAbort", "ncclCommDestroy", "ncclCommFinalize", "commReclaim", "commFree", "commCleanup",
                       "MPI_Finalize", "MPI_Abort", "c10d::ProcessGroupNCCL::abort*",
                       "c10d::ProcessGroupNCCL::~ProcessGroupNCCL", "c10d::ProcessGroupNCCL::shutdown*",
                       "c10d::NCCLComm::abort*", "c10d::NCCLComm::ncclCommAbort", "c10d::NCCLComm::~NCCLComm",
                       "c10d::abortCommsFromMap")),
    ("comm_setup", ("ncclCommInitRank*", "ncclCommInitAll", "ncclCommSplit", "ncclGetUniqueId", "bootstrap*",
                    "MPI_Init", "MPI_Init_thread", "c10d::ProcessGroupNCCL::getNCCLComm*")),
    ("store", ("c10d::TCPStore::*", "c10d::detail::TCPClient::*", "c10d::PrefixStore::*",
               "c10d::FileStore::*")),
    ("collective", ("ncclAllReduce", "ncclAllGather", "ncclReduceScatter", "ncclBroadcast", "ncclBcast",
                    "ncclReduce", "ncclSend", "ncclRecv", "ncclAllToAll", "ncclGroupEnd", "ncclEnqueueCheck",
                    "ncclGroupEndInternal", "ncclDevFunc_*", "ncclKernel_*", "ncclDevKernel_*",
                    "c10d::ProcessGroupNCCL::WorkNCCL::wait", "c10d::ProcessGroupNCCL::WorkNCCL::synchronize*",
                    "c10d::ProcessGroupNCCL::allreduce*", "c10d::ProcessGroupNCCL::allgather*",
                    "c10d::ProcessGroupNCCL::reduce_scatter*", "c10d::ProcessGroupNCCL::broadcast*",
                    "c10d::ProcessGroupNCCL::barrier", "c10d::ProcessGroupNCCL::alltoall*",
                    "c10d::ProcessGroupNCCL::send", "c10d::ProcessGroupNCCL::recv",
                    "c10d::ProcessGroupGloo::*", "gloo::*", "c10d::ProcessGroupMPI::*",
                    "MPI_Allreduce", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv",
                    "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Reduce_scatter*", "MPI_Gather*",
                    "MPI_Scatter*", "MPI_Send", "MPI_Recv", "MPI_Sendrecv", "MPI_Ssend", "MPI_Probe",
                    "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Test*",
                    "ompi_request_default_wait*", "ompi_request_wait*", "ompi_coll_*", "mca_coll_*",
                    "ompi_sync_wait*", "MPIR_Wait*", "MPIR_Allreduce*", "MPIR_Barrier*", "MPIR_Bcast*",
                    "MPIC_Wait*", "horovod::common::*")),
    ("device_sync", ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy",
                     "cudaFree", "cudaFreeHost", "cudaMalloc", "cudaStreamWaitEvent", "cudaStreamDestroy",
                     "cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize", "cuMemFree*",
                     "cuMemcpyDtoH*", "cuMemcpyHtoD*", "cuMemcpy", "cuMemAlloc*", "cuCtxDestroy*",
                     "hipStreamSynchronize", "hipDeviceSynchronize", "hipEventSynchronize", "hipMemcpy",
                     "hipFree", "c10::cuda::*synchronize*", "at::cuda::*synchronize*")),
    ("network_poll", ("ibv_poll_cq", "ibv_get_cq_event", "fi_cq_read", "fi_cq_sread",
                      "fi_cq_readfrom", "ucp_worker_progress", "ucp_worker_wait", "uct_worker_progress")),
)
# A wait in libc or the kernel's entry: where every stuck thread ends, so never interesting by itself
LIBC_WAITS: Final = frozenset({
    "pthread_cond_wait", "pthread_cond_timedwait", "pthread_cond_clockwait", "pthread_join", "pthread_mutex_lock",
    "__pthread_cond_wait", "__pthread_cond_timedwait", "__pthread_clockjoin_ex", "__pthread_mutex_lock",
    "futex_wait", "futex_abstimed_wait", "futex_abstimed_wait_cancelable", "__futex_abstimed_wait_common",
    "__futex_abstimed_wait_common64", "__futex_abstimed_wait_cancelable64", "futex_wait_cancelable",
    "__lll_lock_wait", "__GI___lll_lock_wait", "syscall", "__syscall_cancel_arch", "__internal_syscall_cancel",
    "__syscall_cancel", "poll", "__poll", "ppoll", "__GI___poll", "epoll_wait", "epoll_pwait", "select",
    "__select", "pselect", "nanosleep", "__nanosleep", "clock_nanosleep", "__clock_nanosleep", "usleep",
    "sleep", "sem_wait", "sem_timedwait", "__new_sem_wait_slow", "do_futex_wait", "read", "__libc_read",
    "recv", "__libc_recv", "recvmsg", "accept", "__libc_accept", "wait", "waitpid", "__waitpid", "sched_yield",
    "__GI___sched_yield", "___pthread_cond_wait", "__pthread_cond_wait_common",
    "__GI___futex_abstimed_wait_cancelable64",
    "clock_gettime", "__GI___clock_gettime", "__GI_ppoll", "__GI_epoll_pwait", "start_thread", "clone", "clone3", "??",
})


def _native_table() -> tuple[dict[str, str], tuple[tuple[str, str], ...]]:
    exact: dict[str, str] = {}
    prefixes: list[tuple[str, str]] = []
    for cat, names in NATIVE_FRAMES:
        for name in names:
            if name.endswith("*"):
                prefixes.append((name[:-1], cat))
            else:
                exact.setdefault(name, cat)
    return exact, tuple(prefixes)


_NATIVE_EXACT, _NATIVE_PREFIXES = _native_table()
_CLONE = re.compile(r"\.(?:cold|lto_priv|isra|constprop|part|localalias)\b.*$")


@dataclass(slots=True)
class _Frame:
    """One frame of a stack dump: function, file (a native frame's library where it has no file) and line."""

    func: str
    file: str
    line: int | None
    lineno: int  # line of the dump
    native: bool = False


@dataclass(slots=True)
class _Thread:
    """One thread of a stack dump, with its frames, innermost first."""

    ident: str
    name: str | None
    current: bool
    lineno: int
    form: Form
    main: bool = False  # the debugger's first thread (gdb `Thread 1`, lldb `thread #1`)
    implicit: bool = False  # a gdb `bt` with no thread header
    frames: list[_Frame] = field(default_factory=list)
    last: int = -1  # the last gdb / lldb frame number read


@dataclass(slots=True)
class _Process:
    """One process of a stack dump, with its threads."""

    pid: str | None
    lineno: int
    threads: list[_Thread] = field(default_factory=list)


def _strip_templates(name: str) -> str:
    out: list[str] = []
    depth = 0
    for ch in name:
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


def plain_name(func: str) -> str:
    """A native frame's name without what each debugger adds around it: lldb's ` + 123`, pystack's
    ` (inlined)`, a symbol version (`@@GLIBC_2.3.2`), a C++ signature and template arguments, a compiler's
    clone suffix (`.cold`, `.isra.0`). The event's `func`; the dump's line keeps the rest."""
    name = func.replace("(anonymous namespace)", "anon")
    name = name.split(" + ", 1)[0].removesuffix(" (inlined)")
    name = name.split("@", 1)[0]
    name = name.split("(", 1)[0].strip()
    return _CLONE.sub("", _strip_templates(name)).strip()


def _base_name(func: str) -> str:
    """`plain_name`, a profiling entry point (`pncclAllReduce`, `PMPI_Wait`) as the name it profiles."""
    name = plain_name(func)
    return name[1:] if name.startswith(("pnccl", "PMPI_")) else name


def native_category(func: str) -> str | None:
    """What a native frame's name says its thread waits on (NATIVE_FRAMES), or None."""
    name = _base_name(func)
    cat = _NATIVE_EXACT.get(name)
    if cat is not None:
        return cat
    for prefix, pcat in _NATIVE_PREFIXES:
        if name.startswith(prefix):
            return pcat
    return None


def category(fr: _Frame) -> str | None:
    """The one classification of a frame, every form's: a Python frame by its file and function, a native one
    by its name (NATIVE_FRAMES); `helper` for a library's own thread; None where the frame is no wait of note."""
    if fr.native:
        return native_category(fr.func)
    path = fr.file.replace("\\", "/")
    func = fr.func
    if "torch/distributed/checkpoint" in path or path.endswith("torch/serialization.py") or (
        "checkpoint" in path.lower() and any(w in func.lower() for w in ("save", "write"))
    ):
        return "checkpoint"
    if "torch/utils/data/" in path:
        return "data_loader"
    if func in COLLECTIVES and ("distributed" in path or "deepspeed/comm" in path):
        return "collective"
    if func in ("wait", "synchronize") and "distributed" in path:
        return "collective"
    return None


_WHAT: Final = {"collective": "a collective", "data_loader": "a data-loader wait",
                "checkpoint": "a checkpoint write", "comm_teardown": "a communicator's teardown",
                "comm_setup": "a communicator's set-up", "store": "a wait on the rendezvous store",
                "device_sync": "a wait on the GPU", "network_poll": "a poll of the network",
                "other": "its innermost frame"}


def describe(cat: str) -> str:
    return _WHAT.get(cat, cat)


def _fits(digits: str) -> bool:
    """Whether a number the dump prints fits 64 bits (its digits are never converted when they cannot)."""
    return len(digits) <= MAX_INT_DIGITS and fits_int64(int(digits))


def _gdb_call(body: str) -> tuple[str, str, str | None] | None:
    """A gdb frame's function, file (or library) and line from what follows `#N  0x... in `; None where the
    text is not in gdb's shape: `FUNC (ARGS)`, then ` at FILE:LINE` or ` from LIB` or nothing."""
    file, line = "", None
    m = _GDB_AT.search(body)
    if m:
        file, line = m.group("file"), m.group("line")
        body = body[:m.start()]
    else:
        m = _GDB_FROM.search(body)
        if m:
            file = m.group("file")
            body = body[:m.start()]
    if not body.endswith(")"):
        return None
    depth = 0
    for j in range(len(body) - 1, -1, -1):  # the argument list: the last balanced group
        if body[j] == ")":
            depth += 1
        elif body[j] == "(":
            depth -= 1
            if not depth:
                break
    else:
        return None
    if j < 2 or body[j - 1] != " ":
        return None
    func = body[:j - 1].strip()
    if not _NATIVE_NAME.fullmatch(_base_name(func)):
        return None
    return func, file, line


def _frame_line(th: _Thread, line: str, i: int) -> tuple[str, str, str | None, bool] | None:
    """The frame a line of `th`'s form shows: (func, file, line digits or None, native), or None."""
    if th.form == "gdb":
        m = _GDB_FRAME.match(line)
        if m is None or int(m.group("n")[:6]) <= th.last:
            return None
        call = _gdb_call(m.group("body"))
        if call is None:
            return None
        th.last = int(m.group("n")[:6])
        return (*call, True)
    if th.form == "lldb":
        m = _LLDB_FRAME.match(line)
        if m is None:
            return None
        return m.group("func").strip(), m.group("file") or m.group("module"), m.group("line"), True
    if th.form == "pystack":
        m = _PYSTACK_FRAME.match(line)
        if m is None:
            return None
        native = m.group("kind") == "C"
        file = m.group("file")
        if native and m.group("lib") and file in ("???", ""):
            file = m.group("lib")
        func = m.group("func") if native or m.group("lib") is None else f"{m.group('func')} ({m.group('lib')})"
        return func.strip(), file, m.group("line"), native
    m = _FH_FRAME.match(line) if th.form == "faulthandler" else None
    if m:
        return m.group("func"), m.group("file"), m.group("line"), False
    m = _PYSPY_FRAME.match(line) or _PYSPY_NATIVE.match(line)
    if m is None:
        return None
    file = m.group("file")
    return m.group("func").strip(), file, m.group("line"), not file.endswith(".py")


def _header(line: str, i: int) -> _Thread | None:
    """The thread a header line opens, in its form; None where the line is no thread header."""
    m = _GDB_THREAD.match(line)
    if m:
        return _Thread(m.group("id"), m.group("name") or m.group("lwp") or m.group("lwp2") or m.group("proc"),
                       False, i, "gdb", main=m.group("id") == "1")
    stripped = line.lstrip()
    m = _LLDB_THREAD.match(stripped)
    if m:
        nm = _LLDB_NAME.search(m.group("rest"))
        return _Thread(m.group("id"), nm.group("name") if nm else None, stripped.startswith("*"), i, "lldb",
                       main=m.group("id") == "1")
    m = _PYSTACK_THREAD.match(stripped)
    if m:
        return _Thread(m.group("id"), m.group("name") or None, False, i, "pystack")
    if line.startswith("Stack (most recent call first):"):
        return _Thread("Stack", None, True, i, "faulthandler")  # faulthandler's dump of the current thread alone
    m = _THREAD.match(stripped)
    if m and not line[:1].isspace():
        form: Form = "faulthandler" if "most recent call first" in line else "py-spy"
        return _Thread(m.group("id"), m.group("name"), m.group("current") == "Current thread", i, form)
    return None


def _parse(lines: list[str], issues: list[ParseIssue], check: Callable[[], None] | None = None) -> list[_Process]:
    procs: list[_Process] = []
    cur: _Process | None = None
    th: _Thread | None = None

    def new_process(pid: str | None, i: int) -> _Process:
        if pid is not None and not _fits(pid):
            issues.append(ParseIssue(i, f"a pid of {len(pid):,} digits, past 64 bits; the process is read "
                                        "without it"))
            pid = None
        proc = _Process(pid, i)
        procs.append(proc)
        return proc

    for i, raw in enumerate(lines, start=1):
        if check is not None and not i % CHECK_EVERY:
            check()
        line = raw.rstrip()
        m = _PROCESS.match(line) or _DEBUGGER_PROCESS.match(line)
        if m:
            groups = m.groupdict()
            cur = new_process(groups.get("pid") or groups.get("gdb") or groups.get("lldb"), i)
            th = None
            continue
        header = _header(line, i)
        if header is not None:
            if cur is None:
                cur = new_process(None, i)
            th = header
            cur.threads.append(th)
            continue
        if line.startswith("#0 ") and (th is None or th.form != "gdb" or th.frames):
            implicit = _Thread("1", None, False, i, "gdb", main=True, implicit=True)
            if _frame_line(implicit, line, i) is not None:
                # gdb's `bt` of one thread prints no header: a run of its frames from `#0` is a thread, and a
                # second such run another process's (a `bt` per rank, pasted one after the other)
                if cur is None or (th is not None and th.implicit):
                    cur = new_process(None, i)
                th = implicit
                th.last = -1
                cur.threads.append(th)
        if th is None:
            continue
        fr = _frame_line(th, line, i)
        if fr is None:
            continue
        func, file, number, native = fr
        if number is not None and not _fits(number):
            issues.append(ParseIssue(i, f"a frame line number of {len(number):,} digits, past 64 bits; the "
                                        "frame is left out"))
            continue
        th.frames.append(_Frame(func, file, int(number) if number is not None else None, i, native))
    for proc in procs:
        for t in proc.threads:
            if t.form == "pystack":
                t.frames.reverse()  # pystack prints the innermost call last
    return procs


def _waiting(func: str) -> bool:
    """A native frame no stuck process is told apart by: a libc wait, gdb's `??`, py-spy's bare address."""
    name = _base_name(func)
    return name in LIBC_WAITS or name.startswith("0x")


def _helper(t: _Thread) -> bool:
    return any(fr.native and category(fr) == "helper" for fr in t.frames)


def _pick(proc: _Process) -> tuple[_Thread, _Frame, str] | None:
    threads = [t for t in proc.threads if t.frames]
    if not threads:
        return None
    workers = [t for t in threads if not _helper(t)] or threads
    main = next((t for t in workers if t.name == "MainThread"), None) or next(
        (t for t in workers if t.main), None) or next((t for t in workers if t.current), None) or next(
        (t for t in workers if t.form == "pystack" and any(f.func == "<module>" for f in t.frames)), None) or workers[0]
    for fr in main.frames:
        cat = category(fr)
        if cat is not None and cat != "helper":
            return main, fr, cat
    for cat in ("checkpoint", "comm_teardown"):
        for t in workers:
            for fr in t.frames:
                if category(fr) == cat:
                    return t, fr, cat
    inner = next((fr for fr in main.frames if not (fr.native and _waiting(fr.func))), main.frames[0])
    return main, inner, "other"


def read_stack_dump(data: bytes, file: str, *, node: str | None = None, rank: int | None = None,
                    check: Callable[[], None] | None = None) -> StructuredResult:
    """One `stack.frame` event per process. `check` is the caller's deadline, called every CHECK_EVERY lines."""
    res = StructuredResult()
    text = data.decode("utf-8", errors="replace")
    res.lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    lines = text.split("\n")  # not splitlines(): a form feed or U+2028 in a line does not start a new one
    if lines[-1] == "":
        lines.pop()
    procs = _parse(lines, res.issues, check)
    if len(procs) > MAX_PROCESSES:
        res.issues.append(ParseIssue(procs[MAX_PROCESSES].lineno, f"{len(procs) - MAX_PROCESSES:,} more processes "
                                     f"than {MAX_PROCESSES:,}; not read"))
        del procs[MAX_PROCESSES:]
    for proc in procs:
        picked = _pick(proc)
        if picked is None:
            continue
        th, fr, cat = picked
        func = (plain_name(fr.func) or fr.func) if fr.native else fr.func
        fields: dict[str, FieldValue] = {"func": clip(func), "file": clip(fr.file), "category": cat,
                                         "thread": clip(th.name or th.ident), "depth": len(th.frames),
                                         "form": th.form}
        if fr.line is not None:
            fields["line"] = fr.line
        if proc.pid is not None:
            fields["pid"] = int(proc.pid)
        res.events.append(Event(kind="stack.frame", time=None, node=node, rank=rank, fields=fields,
                                evidence=Evidence(source="stack_dump", file=file, line=fr.lineno,
                                                  text=clip(lines[fr.lineno - 1].strip()))))
    return res
