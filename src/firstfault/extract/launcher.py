"""The launcher's own word that the workers finished: torchrun's elastic agent, DeepSpeed's launcher.

Where no scheduler record and no workload.yaml says how the attempt ended (a
log posted in a thread, a bare torchrun on a workstation), the launcher that
started the workers still says whether they all exited 0:

    INFO:torch.distributed.elastic.agent.server.api:[default] worker group
        successfully finished. Waiting 300 seconds for other agents to finish.
    [launch.py:351:main] Process 4242 exits successfully.

and, for a group that failed and is restarted, `[default] Worker group FAILED.
3/3 attempts left; will restart worker group`. Each becomes `launcher.exit`
(`state` SUCCEEDED or FAILED); the engine reads the last one of each stream
(engine/normalise.py `launcher_state`), like slurmstepd's JOB banner.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.codes import by_whom, signal_name, signal_of_text
from firstfault.extract.prefix import split_prefixes

_TORCHRUN_OK = re.compile(r"\[(?P<role>[\w\-]+)\] worker group successfully finished\b"
                          r"|Local worker group finished \((?:WorkerState\.)?SUCCEEDED\)")
_TORCHRUN_FAILED = re.compile(r"\[(?P<role>[\w\-]+)\] Worker group (?P<state>FAILED|UNHEALTHY)\b"
                              r"(?:\. (?P<left>\d+)/(?P<max>\d+) attempts left)?")
_DEEPSPEED_OK = re.compile(r"\bProcess (?P<pid>\d+) exits successfully\.")

LITERALS: Final[tuple[str, ...]] = (
    "worker group successfully finished",
    "Local worker group finished (",
    "] Worker group FAILED",
    "] Worker group UNHEALTHY",
    "exits successfully.",
)


class LauncherExitExtractor:
    """torchrun agent and DeepSpeed launcher exit records: launcher.exit."""

    name = "launcher.exit"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "launcher.exit": frozenset({
            "state", "launcher", "pid", "restart", "attempts_left"
        }),
    }
    sources: frozenset[str] = frozenset({"application"})
    literals: tuple[str, ...] = LITERALS

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        p = split_prefixes(line)
        body = p.body
        ok = _TORCHRUN_OK.search(body)
        if ok:
            yield Draft("launcher.exit", {"state": "SUCCEEDED", "launcher": "torchrun"}, host=p.host)
            return
        bad = _TORCHRUN_FAILED.search(body)
        if bad:
            fields: dict[str, str | int | bool] = {"state": "FAILED", "launcher": "torchrun",
                                                   "restart": "will restart" in body}
            if bad.group("left") is not None:
                fields["attempts_left"] = int(bad.group("left"))
            yield Draft("launcher.exit", dict(fields), host=p.host)
            return
        ds = _DEEPSPEED_OK.search(body)
        if ds and "launch.py" in body:
            yield Draft("launcher.exit", {"state": "SUCCEEDED", "launcher": "deepspeed", "pid": int(ds.group("pid"))},
                        host=p.host)


# Open MPI's launcher on a rank that died by a signal: `mpirun noticed that process rank 3 with PID 0 on
# node gpu04 exited on signal 9 (Killed).` (prterun / mpiexec / orterun in other versions).
_MPI_SIGNAL = re.compile(
    r"\b(?:mpirun|mpiexec|prterun|orterun) noticed that process rank (?P<rank>\d+) with PID (?P<pid>\d+) on node "
    r"(?P<host>[A-Za-z0-9][\w.\-]*) exited on signal (?P<num>\d+)(?: \((?P<what>[^)]+)\))?"
)
_FAULTS: Final = frozenset({"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"})
# srun told by slurmctld that a node of its step failed: `srun: error: Node failure on gpu-node-12`.
_SRUN_NODE_FAILURE = re.compile(r"\bsrun: error: Node failure on (?P<host>[A-Za-z0-9][\w.\-\[\],]*)")


class LauncherSignalExtractor:
    """Launchers' reports of a rank's death (Open MPI) and of a failed node (srun): process.signal."""

    name = "launcher.signal"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {"process.signal": frozenset({"by", "detail", "due_to", "signal", "pid"})}
    sources: frozenset[str] = frozenset({"application"})
    literals: tuple[str, ...] = (" noticed that process rank ", "Node failure on ")

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        body = split_prefixes(line).body
        m = _MPI_SIGNAL.search(body)
        if m:
            what = m.group("what")
            sig = (signal_of_text(what) if what else None) or signal_name(int(m.group("num")))
            # mpirun only saw the exit: an abort may be the runtime's answer to another failure (gloo's
            # `terminate called` after a refused connection), so only the fault signals are the rank's own.
            by = by_whom(sig, "launcher") if sig in _FAULTS else "launcher"
            yield Draft("process.signal", {"signal": sig, "by": by, "detail": body.strip()[:400],
                                           "pid": int(m.group("pid"))},
                        rank=int(m.group("rank")), host=m.group("host"))
            return
        n = _SRUN_NODE_FAILURE.search(body)
        if n:
            # The scheduler's word that the node failed, as slurmstepd's `DUE TO NODE FAILURE` banner says it.
            yield Draft("process.signal", {"signal": "SIGKILL", "by": "scheduler", "due_to": "node_failure",
                                           "detail": body.strip()[:400]}, host=n.group("host"))


EXTRACTORS: tuple[LineExtractor, ...] = (LauncherExitExtractor(), LauncherSignalExtractor())
