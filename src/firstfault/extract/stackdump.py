"""Stack dumps of hung processes (source kind `stack_dump`): py-spy and faulthandler.

Two text forms, both innermost frame first:

    Process 3842: python train.py                       (py-spy dump)
    Thread 3842 (idle): "MainThread"
        all_reduce (torch/distributed/distributed_c10d.py:2050)
        train_step (train.py:120)

    Thread 0x00007f8b1c7fe700 (most recent call first):  (faulthandler)
      File "/usr/lib/python3.10/threading.py", line 320 in wait
    Current thread 0x00007f8b2e6c1740 (most recent call first):
      File ".../torch/distributed/distributed_c10d.py", line 2050 in all_reduce

Older py-spy prints `Thread 0x7F4AA36D9700 (active)` and tab-indented frames.

Each process (a file, or each `Process N:` block of one) gives one
`stack.frame` event: the innermost interesting frame of its main thread (a
collective, a data-loader wait, a checkpoint write), else of any thread for
a checkpoint write, else the main thread's innermost frame (category
`other`). engine/leads.py makes `stuck_frame` leads of them.

Reading is linear in the dump. A number wider than 64 bits (a line number,
a pid) is a problem naming its line, and that frame or pid is left out; at
most MAX_PROCESSES processes of one dump are read, the rest counted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.extract.structured import CHECK_EVERY, MAX_INT_DIGITS, ParseIssue, StructuredResult, clip, fits_int64
from firstfault.model import Event, Evidence, FieldValue

# The event kinds this reader emits and their fields (docs/events.md; extract/registry.py).
EMITS: Mapping[str, frozenset[str]] = {
    "stack.frame": frozenset({"category", "depth", "file", "func", "line", "pid", "thread"}),
}

_PROCESS = re.compile(r"^Process (?P<pid>\d+):")
_THREAD = re.compile(
    r"^(?P<current>Current thread|Thread) (?P<id>0x[0-9A-Fa-f]+|\d+)(?: \((?P<state>[\w\s,]+?)\))?"
    r"(?::\s*\"(?P<name>[^\"]*)\")?"
)
_PYSPY_FRAME = re.compile(r"^\s+(?P<func>[^\s()][^()]*?) \((?P<file>[^()]*?):(?P<line>\d+)\)\s*$")
_FH_FRAME = re.compile(r"^\s+File \"(?P<file>[^\"]+)\", line (?P<line>\d+) in (?P<func>\S+)")

MAX_PROCESSES: Final = 4096  # processes read from one dump (py-spy dumps one; a node's worth is a few dozen)

COLLECTIVES: Final = frozenset({
    "all_reduce", "all_gather", "all_gather_into_tensor", "_all_gather_base", "all_gather_object",
    "reduce_scatter", "reduce_scatter_tensor", "_reduce_scatter_base", "broadcast", "broadcast_object_list",
    "barrier", "monitored_barrier", "all_to_all", "all_to_all_single", "send", "recv", "isend", "irecv",
    "gather", "scatter", "reduce", "batch_isend_irecv", "all_reduce_coalesced", "allreduce",
})


@dataclass(slots=True)
class _Frame:
    """One frame of a stack dump: function, file and line, and the dump's line that shows it."""

    func: str
    file: str
    line: int
    lineno: int  # line of the dump


@dataclass(slots=True)
class _Thread:
    """One thread of a stack dump, with its frames, innermost last."""

    ident: str
    name: str | None
    current: bool
    lineno: int
    frames: list[_Frame] = field(default_factory=list)


@dataclass(slots=True)
class _Process:
    """One process of a stack dump, with its threads."""

    pid: str | None
    lineno: int
    threads: list[_Thread] = field(default_factory=list)


def category(fr: _Frame) -> str | None:
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
                "checkpoint": "a checkpoint write", "other": "its innermost frame"}


def describe(cat: str) -> str:
    return _WHAT.get(cat, cat)


def _fits(digits: str) -> bool:
    """Whether a number the dump prints fits 64 bits (its digits are never converted when they cannot)."""
    return len(digits) <= MAX_INT_DIGITS and fits_int64(int(digits))


def _parse(lines: list[str], issues: list[ParseIssue], check: Callable[[], None] | None = None) -> list[_Process]:
    procs: list[_Process] = []
    cur: _Process | None = None
    th: _Thread | None = None
    for i, raw in enumerate(lines, start=1):
        if check is not None and not i % CHECK_EVERY:
            check()
        line = raw.rstrip()
        m = _PROCESS.match(line)
        if m:
            pid: str | None = m.group("pid")
            if pid is not None and not _fits(pid):
                issues.append(ParseIssue(i, f"a pid of {len(pid):,} digits, past 64 bits; the process is read "
                                            "without it"))
                pid = None
            cur = _Process(pid, i)
            procs.append(cur)
            th = None
            continue
        m = _THREAD.match(line.lstrip())
        if m and not line[:1].isspace():
            if cur is None:
                cur = _Process(None, i)
                procs.append(cur)
            th = _Thread(m.group("id"), m.group("name"), m.group("current") == "Current thread", i)
            cur.threads.append(th)
            continue
        if th is None:
            continue
        fm = _PYSPY_FRAME.match(line) or _FH_FRAME.match(line)
        if fm:
            number = fm.group("line")
            if not _fits(number):
                issues.append(ParseIssue(i, f"a frame line number of {len(number):,} digits, past 64 bits; the "
                                            "frame is left out"))
                continue
            th.frames.append(_Frame(fm.group("func").strip(), fm.group("file"), int(number), i))
    return procs


def _pick(proc: _Process) -> tuple[_Thread, _Frame, str] | None:
    threads = [t for t in proc.threads if t.frames]
    if not threads:
        return None
    main = next((t for t in threads if t.name == "MainThread"), None) or next(
        (t for t in threads if t.current), None) or threads[0]
    for fr in main.frames:
        cat = category(fr)
        if cat is not None:
            return main, fr, cat
    for t in threads:
        for fr in t.frames:
            if category(fr) == "checkpoint":
                return t, fr, "checkpoint"
    return main, main.frames[0], "other"


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
        fields: dict[str, FieldValue] = {"func": clip(fr.func), "file": clip(fr.file), "line": fr.line,
                                         "category": cat, "thread": clip(th.name or th.ident), "depth": len(th.frames)}
        if proc.pid is not None:
            fields["pid"] = int(proc.pid)
        res.events.append(Event(kind="stack.frame", time=None, node=node, rank=rank, fields=fields,
                                evidence=Evidence(source="stack_dump", file=file, line=fr.lineno,
                                                  text=clip(lines[fr.lineno - 1].strip()))))
    return res
