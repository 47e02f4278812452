"""Slurm attempts: `sacct -P` (and `scontrol show job`) for one job attempt.

sacct's pipe-separated text is the source of truth: Slurm 22.05's `--json`
(and slurmrestd's /slurmdb/ job endpoint) report exit code 0 for jobs that
exited non-zero, while the text is right.

Attempts: `sacct -D` prints one allocation record per attempt of a requeued
job (earliest first, each followed by its steps); attempt N is the N-th
record of that job id. The default is the latest attempt.

Time: sacct prints local wall time without a zone. With `tz` set, sacct runs
with TZ=<tz> and its times are read in that zone; without it, in this
machine's local zone (the same one sacct used).

Ranks: block distribution of the job's largest numbered step (`NTasks` over
its `NodeList`), else of the allocation's `NumTasks` (scontrol), and only
when the tasks divide evenly over the nodes; otherwise unknown (None).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from firstfault.bundle import WindowSpec, WorkloadSpec
from firstfault.formats import SACCT_DEFAULT_COLUMNS
from firstfault.hostlist import hostlist_expand
from firstfault.identify.base import Identified, IdentifyError, Running
from firstfault.identify.cursor import format_cursor, parse_cursor
from firstfault.identify.cursor import iso as _iso

# Columns read besides the documented eight; they are cut from the 'sacct' document.
_EXTRA_COLUMNS = ("NTasks", "User")
_COLUMNS = SACCT_DEFAULT_COLUMNS + _EXTRA_COLUMNS
_DOC_WIDTH = len(SACCT_DEFAULT_COLUMNS)
_JOBNAME_AT = SACCT_DEFAULT_COLUMNS.index("JobName")

# sacct --state letters for the states a job ends in.
TERMINAL_STATE_CODES = ("BF", "CA", "CD", "DL", "F", "NF", "OOM", "PR", "TO")
TERMINAL_STATES = frozenset(
    {"BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
     "TIMEOUT"}
)
NONE_VALUES = frozenset({"", "unknown", "none", "(null)", "none assigned"})
REF_RE = re.compile(r"^\d+(?:_\d+|\+\d+)?$")
_NUMTASKS_RE = re.compile(r"\bNumTasks=(\d+)")
_NODELIST_RE = re.compile(r"(?:^|\s)NodeList=(\S*)")
_JOBSTATE_RE = re.compile(r"(?:^|\s)JobState=(\S+)")
# Ends seen this long before the newest one stay in the cursor: slurmctld hands
# finished jobs to slurmdbd asynchronously, so one may appear late with an older End.
SETTLE = timedelta(minutes=2)


@dataclass(slots=True)
class RunResult:
    returncode: int
    stdout: str
    stderr: str


Runner = Callable[[Sequence[str], Mapping[str, str], float], RunResult]


def subprocess_runner(argv: Sequence[str], env: Mapping[str, str], timeout: float) -> RunResult:
    """Run a Slurm client; a missing binary or a hang becomes a IdentifyError."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, env=dict(env), timeout=timeout, check=False)
    except FileNotFoundError as exc:
        raise IdentifyError(f"slurm: {argv[0]} not found (is the Slurm client installed and on PATH?)") from exc
    except subprocess.TimeoutExpired as exc:
        raise IdentifyError(
            f"slurm: {argv[0]} did not answer within {timeout:g}s (slurmctld/slurmdbd unreachable?)"
        ) from exc
    return RunResult(proc.returncode, proc.stdout, proc.stderr)


@dataclass(slots=True)
class _Record:
    """One sacct row (an allocation or a step)."""

    cells: list[str]
    values: dict[str, str]
    steps: list[_Record] = field(default_factory=list)

    @property
    def job_id(self) -> str:
        return self.values["JobID"]

    @property
    def base(self) -> str:
        return self.job_id.split(".", 1)[0]


class SlurmAttempts:
    name = "slurm"

    def __init__(
        self,
        *,
        sacct: str = "sacct",
        scontrol: str = "scontrol",
        squeue: str = "squeue",
        timeout: float = 30.0,
        cluster: str | None = None,
        tz: str | None = None,
        env: Mapping[str, str] | None = None,
        runner: Runner | None = None,
        links: Mapping[str, str] | None = None,
        lookback: timedelta | None = timedelta(hours=1),
    ) -> None:
        """`env` is added to the clients' environment (e.g. SLURM_CONF); `links` maps a
        name to a URL template with {job_id}, {attempt} and {cluster}; `lookback` is how far
        back ended_since(None) starts (None: from the beginning of accounting)."""
        self.sacct, self.scontrol, self.timeout, self.cluster = sacct, scontrol, timeout, cluster
        self.squeue = squeue
        self.runner: Runner = runner or subprocess_runner
        self.links = dict(links or {})
        self.lookback = lookback
        self._env = dict(os.environ) | dict(env or {})
        self._tz: tzinfo | None = None
        if tz is not None:
            try:
                self._tz = ZoneInfo(tz)
            except (ZoneInfoNotFoundError, ValueError) as exc:
                raise IdentifyError(f"slurm: unknown time zone {tz!r}") from exc
            self._env["TZ"] = tz

    # ------------------------------------------------------------------ time

    def _to_utc(self, value: str) -> datetime | None:
        value = value.strip()
        if value.lower() in NONE_VALUES:
            return None
        t = datetime.fromisoformat(value)
        if t.tzinfo is None:
            # Without a configured zone, astimezone() reads a naive time in the local zone, DST included.
            t = t.replace(tzinfo=self._tz) if self._tz is not None else t.astimezone()
        return t.astimezone(UTC)

    def _to_local(self, t: datetime) -> str:
        local = t.astimezone(self._tz) if self._tz is not None else t.astimezone()
        return local.strftime("%Y-%m-%dT%H:%M:%S")

    # ---------------------------------------------------------------- clients

    def _cluster_args(self) -> list[str]:
        return [f"--clusters={self.cluster}"] if self.cluster else []

    def _sacct(self, args: Sequence[str], what: str) -> list[_Record]:
        argv = [self.sacct, "-P", "-a", *self._cluster_args(), *args]
        res = self.runner(argv, self._env, self.timeout)
        if res.returncode != 0:
            detail = (res.stderr.strip() or res.stdout.strip() or "no message").splitlines()[-1]
            raise IdentifyError(f"slurm: sacct failed for {what} (exit {res.returncode}): {detail}")
        return _parse_sacct(res.stdout, what)

    def _scontrol(self, ref: str) -> str | None:
        """`scontrol show job` text, or None once slurmctld has forgotten the job (MinJobAge)."""
        try:
            res = self.runner([self.scontrol, *self._cluster_args(), "show", "job", ref], self._env, self.timeout)
        except IdentifyError:
            return None  # sacct answered; scontrol only adds detail
        if res.returncode != 0 or "JobId=" not in res.stdout:
            return None
        return res.stdout

    # --------------------------------------------------------------- identify

    def identify(self, ref: str, attempt: int | None = None) -> Identified:
        """The attempt of job `ref` ('4242', array task '4242_7', het component '4242+1').

        `attempt` picks a requeued attempt (0 = first); default the latest.
        Raises IdentifyError for a malformed or unknown id, an array job named
        without its task, or a failing sacct.
        """
        ref = ref.strip()
        if not REF_RE.match(ref):
            raise IdentifyError(f"slurm: {ref!r} is not a job id (expected 4242, 4242_7 or 4242+1)")
        cols = ",".join(_COLUMNS)
        records = self._sacct(["-D", "-o", cols, "-j", ref], f"job {ref}")
        allocs = _group(records)
        if not allocs:
            raise IdentifyError(f"slurm: no job {ref} in the accounting database" +
                               (f" of cluster {self.cluster}" if self.cluster else ""))
        bases = list(dict.fromkeys(a.base for a in allocs))
        one_job_or_het(bases, ref, "slurm")

        # One workload per id; a het job (several '+' components) is all of them.
        chosen: list[_Record] = []
        n_attempts = 0
        picked = 0
        for base in bases:
            runs = [a for a in allocs if a.base == base]
            n_attempts = max(n_attempts, len(runs))
            idx = len(runs) - 1 if attempt is None else attempt
            if not 0 <= idx < len(runs):
                raise IdentifyError(f"slurm: job {ref} has {len(runs)} attempt(s); attempt {attempt} does not exist")
            chosen.append(runs[idx])
            picked = max(picked, idx)
        latest = attempt is None or picked == n_attempts - 1
        main = _main_component(chosen)
        v = main.values

        starts = [t for t in (self._time(c, "Start") for c in chosen) if t is not None]
        ends = [self._time(c, "End") for c in chosen]
        state = v["State"].strip()
        terminal = state.split()[0].rstrip("+") in TERMINAL_STATES if state else False
        node_keys: dict[str, None] = {}  # an ordered set: linear in the node count
        for c in chosen:
            for n in self._nodes(c, ref):
                node_keys.setdefault(n)
        nodes = list(node_keys)

        scontrol = self._scontrol(ref) if latest else None
        ranks = None if len(chosen) > 1 else _ranks(main, scontrol)

        exit_code = v["ExitCode"].strip() or None
        spec = WorkloadSpec(
            id=ref,
            attempt=picked,
            name=v["JobName"].strip() or None,
            scheduler="slurm",
            window=WindowSpec(
                start=_iso(min(starts)) if starts else None,
                end=_iso(max(t for t in ends if t is not None)) if terminal and any(ends) else None,
            ),
            nodes=nodes,
            ranks=ranks,
            terminal_state=state if terminal else None,
            exit_code=exit_code if exit_code and ":" in exit_code else None,
        )

        header = "|".join(SACCT_DEFAULT_COLUMNS)
        rows = [header] + ["|".join(r.cells[:_DOC_WIDTH]) for c in chosen for r in [c, *c.steps]]
        documents = [("sacct", f"sacct-{ref}.txt", ("\n".join(rows) + "\n").encode())]
        if scontrol is not None and not (terminal and _still_ending(scontrol)):
            # Right after the end slurmctld still says JobState=COMPLETING (KillWait, the epilog) while the
            # accounting has the end: that record is from before the end settled, and the engine would read
            # the job as still running. It is left out (its NumTasks still gave the ranks).
            documents.append(("scontrol", f"scontrol-{ref}.txt", scontrol.encode()))
        fmt = {"job_id": ref, "attempt": picked, "cluster": self.cluster or ""}
        links = {k: t.format(**fmt) for k, t in self.links.items()}
        owner = v.get("User", "").strip() or None
        return Identified(workload=spec, documents=documents, links=links, owner=owner)

    def _time(self, rec: _Record, column: str) -> datetime | None:
        try:
            return self._to_utc(rec.values[column])
        except ValueError as exc:
            raise IdentifyError(f"slurm: sacct {rec.job_id} {column}: not a time: {rec.values[column]!r}") from exc

    @staticmethod
    def _nodes(rec: _Record, ref: str) -> list[str]:
        try:
            return hostlist_expand(rec.values["NodeList"])
        except ValueError as exc:
            raise IdentifyError(f"slurm: job {ref} NodeList: {exc}") from exc

    # ------------------------------------------------------------ ended_since

    def ended_since(self, cursor: str | None) -> tuple[list[str], str]:
        """Job ids whose allocation ended after `cursor`, oldest End first, and the next cursor.

        The cursor is '<newest End, RFC 3339>|<id@End epoch, ...>' listing the
        attempts that ended within SETTLE of the newest End. Each call looks
        back SETTLE before the cursor's time (accounting records may land
        late) and leaves out the attempts the cursor holds, so each ended
        attempt is returned once while cursors are passed on (a requeued job's
        id comes back when a later attempt ends). None starts `lookback` ago.
        """
        since: datetime | None
        seen: set[tuple[str, int]]
        if cursor:
            since, seen = parse_cursor(cursor)
        else:
            since = datetime.now(UTC) - self.lookback if self.lookback is not None else None
            seen = set()
        start = since - SETTLE if since is not None else datetime(1970, 1, 2, tzinfo=UTC)
        records = self._sacct(
            ["-X", "-D", "-o", "JobID,State,End", f"--state={','.join(TERMINAL_STATE_CODES)}",
             "-S", self._to_local(start), "-E", "now"],
            "jobs ended since " + (_iso(since) if since else "the beginning"),
        )
        ended: set[tuple[str, int]] = set()
        for rec in records:
            end = self._time(rec, "End")
            if end is None or not rec.values["State"].strip() or rec.values["State"].split()[0] not in TERMINAL_STATES:
                continue
            if end >= start:
                # A het job's components (4242+0, 4242+1) are one workload: identify('4242').
                ended.add((rec.job_id.split("+", 1)[0], int(end.timestamp())))
        new = sorted((t, j) for j, t in ended - seen)
        ids = list(dict.fromkeys(j for _, j in new))
        stamps = [t for _, t in ended | seen] + ([int(since.timestamp())] if since is not None else [])
        if not stamps:
            return ids, cursor or ""
        newest = max(stamps)
        keep = {(j, t) for j, t in ended | seen if t >= newest - SETTLE.total_seconds()}
        return ids, format_cursor(datetime.fromtimestamp(newest, UTC), keep)


    # ---------------------------------------------------------------- running

    def running(self) -> list[Running]:
        """The jobs running now (`squeue -h -a -t RUNNING -o %i|%S`): ids as identify() takes them (a het
        job's components are its leader's id), each with its start time, in job-id order."""
        argv = [self.squeue, "-h", "-a", *self._cluster_args(), "-t", "RUNNING", "-o", "%i|%S"]
        res = self.runner(argv, self._env, self.timeout)
        if res.returncode != 0:
            detail = (res.stderr.strip() or res.stdout.strip() or "no message").splitlines()[-1]
            raise IdentifyError(f"slurm: squeue failed (exit {res.returncode}): {detail}")
        return parse_squeue(res.stdout)


def parse_squeue(text: str) -> list[Running]:
    """`%i|%S` lines -> Running, one per job (het components folded); `CLUSTER: name` headers (squeue -M)
    and blank lines are skipped; a line of another shape is a IdentifyError that quotes it."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or (line.startswith("CLUSTER:") and "|" not in line):
            continue
        ref, bar, since = line.partition("|")
        ref = ref.strip().split("+", 1)[0]
        if not bar or not REF_RE.match(ref):
            raise IdentifyError(f"slurm: squeue: unexpected line {line[:120]!r} (wanted JOBID|START)")
        found.setdefault(ref, since.strip())
    return [Running(r, found[r]) for r in sorted(found, key=job_order)]


def job_order(ref: str) -> tuple[int, int, str]:
    """Job ids in submission order: 9 before 10, 4242 before 4242_7."""
    head = re.match(r"\d+", ref)
    return (int(head.group(0)) if head else 0, len(ref), ref)


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def one_job_or_het(ids: list[str], ref: str, who: str) -> None:
    """Several ids for one ref are a het job's components, or an array: then ask for one task."""
    if len(ids) > 1 and not all("+" in i for i in ids):
        shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
        raise IdentifyError(f"{who}: job {ref} is an array of {len(ids)} tasks ({shown}); name one task")


def _parse_sacct(text: str, what: str) -> list[_Record]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return []
    columns = lines[0].split("|")
    if "JobID" not in columns:
        raise IdentifyError(f"slurm: sacct for {what}: no header line (got {lines[0][:80]!r})")
    out: list[_Record] = []
    for line in lines[1:]:
        cells = line.split("|")
        if len(cells) > len(columns) and "JobName" in columns:
            # A '|' inside a job name: the name takes the surplus cells.
            extra = len(cells) - len(columns)
            at = columns.index("JobName")
            cells[at : at + extra + 1] = ["|".join(cells[at : at + extra + 1])]
        if len(cells) != len(columns):
            raise IdentifyError(f"slurm: sacct for {what}: row has {len(cells)} cells, header {len(columns)}: "
                               f"{line[:120]!r}")
        out.append(_Record(cells=cells, values=dict(zip(columns, cells, strict=True))))
    return out


def _group(records: list[_Record]) -> list[_Record]:
    """Allocation records in order, each with the step rows printed after it."""
    allocs: list[_Record] = []
    for rec in records:
        if "." not in rec.job_id:
            allocs.append(rec)
        elif allocs and allocs[-1].base == rec.base:
            allocs[-1].steps.append(rec)
    return allocs


def _main_component(chosen: list[_Record]) -> _Record:
    """A het job speaks through its first component that did not complete, else its leader."""
    for c in chosen:
        if not c.values["State"].startswith("COMPLETED"):
            return c
    return chosen[0]


def block_layout(ntasks: int, nodes: list[str]) -> dict[str, str | int | list[int]] | None:
    if ntasks <= 0 or not nodes or ntasks % len(nodes):
        return None
    per = ntasks // len(nodes)
    return {n: (f"{i * per}-{(i + 1) * per - 1}" if per > 1 else str(i * per)) for i, n in enumerate(nodes)}


def _still_ending(scontrol: str) -> bool:
    """`scontrol show job` says the job is not over yet (COMPLETING, or any other state that is not an end)."""
    m = _JOBSTATE_RE.search(scontrol)
    return m is not None and m.group(1).upper() not in TERMINAL_STATES


def _ranks(alloc: _Record, scontrol: str | None) -> dict[str, str | int | list[int]] | None:
    steps = []
    for s in alloc.steps:
        step = s.job_id.split(".", 1)[1]
        ntasks = s.values.get("NTasks", "").strip()
        if step.isdigit() and ntasks.isdigit():
            steps.append((-int(ntasks), int(step), s))
    if steps:
        neg, _, s = min(steps)
        try:
            return block_layout(-neg, hostlist_expand(s.values["NodeList"]))
        except ValueError:
            return None
    if scontrol:
        m, n = _NUMTASKS_RE.search(scontrol), _NODELIST_RE.search(scontrol)
        if m and n:
            try:
                return block_layout(int(m.group(1)), hostlist_expand(n.group(1)))
            except ValueError:
                return None
    return None
