"""How the scheduler or the container runtime ended a job, as the job's own output says it.

Two extractors. `SchedulerReasonExtractor` reads every spelling of catalog/scheduler.yaml that a job's
output, a pasted e-mail or a pasted `kubectl` line can hold (extract/reasons.py): LSF's job report
(`TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.`), PBS's `=>> PBS: job killed:
walltime 3610 exceeded limit 3600`, Moab's `job exceeded wallclock limit`, SGE's `qmaster enforced h_rt
limit`, Flux's `job.exception type=timeout ... resource allocation expired`, the kubelet's `The node was
low on resource: memory.`; each becomes the event its reason calls for. `MemoryLimitExtractor` reads
the memory-limit kills that are not a scheduler's reason word: slurmstepd's and srun's, Ray's memory
monitor, a memory cgroup at its limit.

Slurm's own `*** JOB ... CANCELLED AT ... DUE TO TIME LIMIT ***` banner is read in app.py with the other
slurmstepd lines; its `DUE TO` words are the same normalised reasons.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.nccl import clip, split_rank_prefix
from firstfault.extract.reasons import first_reason, line_literals, text_reasons

# --------------------------------------------------------------------------
# A scheduler's reason in the job's output
# --------------------------------------------------------------------------

# Reasons the scheduler ended the job for, told as its signal to the job (process.signal `due_to`): the
# rules read `due_to`, and the engine takes the job's end state from it where no record gives one
# (engine/normalise.banner_state).
_SIGNALLED: Final = frozenset({"time_limit", "preemption", "node_failure", "cancelled", "admin_cancelled"})


class SchedulerReasonExtractor:
    """A scheduler's or the kubelet's word on why it ended the job, in the job's own output."""

    name = "sched.reason"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "host.oom_kill": frozenset({"by", "cgroup", "detail", "proc"}),
        "k8s.event": frozenset({"due_to", "message", "reason"}),
        "k8s.pod": frozenset({"due_to", "message", "phase", "pressure", "reason"}),
        "process.signal": frozenset({"by", "detail", "due_to", "scheduler", "signal"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})

    def __init__(self) -> None:
        # The table's phrases and distinctive words are this extractor's prefilter words.
        self.literals: tuple[str, ...] = line_literals()

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        _, body = split_rank_prefix(line)
        hit = first_reason(body, lines=True)
        if hit is None:
            return
        reason = hit.reason
        if reason == "memory_limit":
            yield Draft("host.oom_kill", {"proc": hit.scheduler, "cgroup": True, "by": "limit", "detail": clip(body)})
        elif reason == "eviction":
            fields: dict[str, str | None] = {"reason": "Evicted", "phase": "Failed", "pressure": hit.resource,
                                             "message": clip(body), "due_to": reason}
            yield Draft("k8s.pod", {k: v for k, v in fields.items() if v is not None})
        elif reason == "backoff_limit":
            # The Job controller's word, pasted: its pods failed first (a symptom; sym-process-exited).
            yield Draft("k8s.event", {"reason": "BackoffLimitExceeded", "message": clip(body), "due_to": reason})
        elif reason in _SIGNALLED:
            draft = Draft("process.signal", {"signal": "SIGTERM", "by": "scheduler", "detail": clip(body),
                                             "due_to": reason, "scheduler": hit.scheduler})
            draft.host = hit.host  # the node a scheduler says it lost (Flux's `on broker HOST`)
            yield draft
        else:
            # Understood, but no cause: root deleting a job (for a failed node or a limit it does not name),
            # "a limit" of SGE's without the job's use to tell which.
            ctx.claimed = True


# --------------------------------------------------------------------------
# Memory limits enforced by Slurm, Ray or a memory cgroup
# --------------------------------------------------------------------------

# slurmstepd (jobacct_gather OverMemoryKill): `Job 4242 exceeded memory limit (52 > 50), being killed`,
# `Step 4242.0 exceeded memory limit ...`; task/cgroup: `Detected 1 oom-kill event(s) in StepId=4242.0
# cgroup` (`in step 4242.0 cgroup` before 21.08). The other schedulers' and the kubelet's words are
# catalog/scheduler.yaml's (SchedulerReasonExtractor).
_MEM_LIMIT: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("slurmstepd", re.compile(r"(?:Job|Step|StepId=?)\s*(?P<id>[\w.+]+) exceeded (?:virtual )?memory limit"
                              # `Exceeded step memory limit at some point.` is only a failcnt above 0 at the
                              # end of the step (page cache counts too): no kill by itself.
                              r"|Exceeded (?:job|step) memory limit(?! at some point)")),
    ("slurmstepd", re.compile(
        r"Detected (?P<n>\d+) oom[-_ ]kill events?(?:\(s\))? in (?:StepId=|step )?(?P<id>[\w.+]+)")),
    ("srun", re.compile(r"error:\s+[A-Za-z0-9][\w.\-]*:\s+tasks?\s+[\d\-, ]+:\s+Out Of Memory")),
    # Ray's memory monitor, as the driver re-raises it (`ray.exceptions.OutOfMemoryError: Task was killed due to
    # the node running low on memory.`) and as the raylet sums it up (`2 Workers (tasks / actors) killed due to
    # memory pressure (OOM)`).
    ("ray", re.compile(r"killed due to the node running low on memory|killed due to memory pressure \(OOM\)")),
)


def memory_limit_kill(body: str) -> str | None:
    """Who killed a process for memory on this line (a scheduler, the kubelet, Slurm, Ray), if anyone."""
    for proc, rx in _MEM_LIMIT:
        if rx.search(body):
            return proc
    for hit in text_reasons(body, lines=True):
        if hit.reason == "memory_limit":
            return hit.scheduler
    return None


_MEMCG_FULL = re.compile(r"memory: usage (?P<usage>\d+)kB, limit (?P<limit>\d+)kB, failcnt (?P<failcnt>\d+)")


class MemoryLimitExtractor:
    """A rank killed for memory by Slurm's limit, Ray's memory monitor or its memory cgroup (host.oom_kill)."""

    name = "host.memory_limit"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "host.oom_kill": frozenset({"by", "cgroup", "detail", "proc"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog", "kernel"})
    literals: tuple[str, ...] = (
        "exceeded memory limit", "exceeded virtual memory limit", "oom-kill event", "oom_kill event",
        "Out Of Memory", "failcnt", "Exceeded job memory limit", "Exceeded step memory limit",
        "running low on memory", "memory pressure (OOM)",
    )

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        _, body = split_rank_prefix(line)
        m = _MEMCG_FULL.search(body)
        if m:
            # A memory cgroup at its limit that failed allocations: the report of a cgroup OOM kill.
            usage, limit, failcnt = (int(m.group(k)) for k in ("usage", "limit", "failcnt"))
            if failcnt > 0 and limit > 0 and usage >= limit:
                yield Draft("host.oom_kill", {"proc": "memcg", "cgroup": True, "by": "limit", "detail": clip(body)})
            else:
                ctx.claimed = True
            return
        for proc, rx in _MEM_LIMIT:
            if rx.search(body):
                yield Draft("host.oom_kill", {"proc": proc, "cgroup": True, "by": "limit", "detail": clip(body)})
                return


EXTRACTORS: tuple[LineExtractor, ...] = (
    MemoryLimitExtractor(),
    SchedulerReasonExtractor(),
)
