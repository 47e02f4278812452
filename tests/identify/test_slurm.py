"""SlurmAttempts against a real single-node Slurm 22.05 with accounting (slurmdbd + MariaDB).

Jobs really fail, are killed, cancelled, time out and lose their node; the
connector must read what sacct recorded. The time-limit job is submitted
first and checked last, so its ~75 s overlap the other tests. Error paths that
a real cluster cannot produce on demand (a hanging client, a het job, which
needs two nodes) use recorded sacct text through the injectable runner.
"""

from __future__ import annotations

import stat
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from firstfault.bundle import Context
from firstfault.identify.base import IdentifyError
from firstfault.identify.cursor import parse_cursor
from firstfault.identify.slurm import RunResult, SlurmAttempts
from firstfault.timeparse import parse_rfc3339
from tests.harness.e2e_util import TimeLimitJob
from tests.harness.slurm_harness import TERMINAL, SlurmCluster

# --------------------------------------------------------------------------
# real Slurm
# --------------------------------------------------------------------------


@dataclass
class Jobs:
    t0: datetime
    exit3: str
    kill9: str
    cancelled: str
    ranks4: str
    nodefail: str
    array: str


def _sbatch_wrap(c: SlurmCluster, name: str, cmd: str, *opts: str) -> str:
    return c.sbatch(f"#!/bin/sh\n{cmd}\n", f"--job-name={name}", *opts)


def _wait_running(c: SlurmCluster, job: str, timeout: float = 20) -> None:
    c.wait_state(job, {"RUNNING"}, timeout)


@pytest.fixture(scope="module")
def jobs(slurm_cluster: SlurmCluster, slurm_time_limit_job: TimeLimitJob) -> Jobs:
    c = slurm_cluster
    # The session's time-limit job (tests/conftest.py), which the lost node below would end NODE_FAIL: at its end
    # already when tests/blueprint/test_e2e_run.py ran first, else a minute from now.
    slurm_time_limit_job.ended()
    t0 = datetime.now(UTC).replace(microsecond=0)
    # Node failure first: setting the only node down kills whatever runs on it.
    # The second attempt (after requeue) exits 0 at once.
    nodefail = _sbatch_wrap(c, "ff-nodefail", 'if [ "${SLURM_RESTART_COUNT:-0}" -gt 0 ]; then exit 0; fi; sleep 300')
    _wait_running(c, nodefail)
    c.run("scontrol", "update", f"nodename={c.node}", "state=down", "reason=ff-test")
    deadline = time.monotonic() + 20
    while "NODE_FAIL" not in c.run("sacct", "-P", "-n", "-D", "-X", "-j", nodefail, "-o", "State").stdout:
        assert time.monotonic() < deadline, "the node-fail job was never recorded as NODE_FAIL"
        time.sleep(0.3)
    # ReturnToService=2 may already have put it back (then 'resume' is refused as invalid).
    c.run("scontrol", "update", f"nodename={c.node}", "state=resume", check=False)
    c.wait_node(["idle", "mixed", "allocated"])
    # A requeued job waits ~2 min before it may start again; let it go now. Not in the same
    # second as the requeue: slurmctld then kills it ("Job credential revoked").
    time.sleep(2)
    c.run("scontrol", "update", f"jobid={nodefail}", "starttime=now")

    exit3 = _sbatch_wrap(c, "ff-exit3", "exit 3")
    kill9 = _sbatch_wrap(c, "ff-kill9", "kill -9 $$")
    ranks4 = _sbatch_wrap(c, "ff-ranks", "srun true; exit 1", "--ntasks=4")
    array = _sbatch_wrap(c, "ff-array", "exit $SLURM_ARRAY_TASK_ID", "--array=5-6")
    cancelled = _sbatch_wrap(c, "ff-cancel", "sleep 300")
    _wait_running(c, cancelled)
    c.run("scancel", cancelled)
    for job in (exit3, kill9, ranks4, cancelled, f"{array}_5", f"{array}_6", nodefail):
        c.wait_state(job, TERMINAL, 30)
    return Jobs(t0, exit3, kill9, cancelled, ranks4, nodefail, array)


@pytest.fixture(scope="module")
def ctx(slurm_cluster: SlurmCluster) -> SlurmAttempts:
    return SlurmAttempts(env={"SLURM_CONF": str(slurm_cluster.conf)}, timeout=20)


def _window_inside(wl_start: str | None, wl_end: str | None, t0: datetime) -> tuple[datetime, datetime]:
    assert wl_start and wl_end
    start, end = parse_rfc3339(wl_start), parse_rfc3339(wl_end)
    now = datetime.now(UTC)
    # sacct has whole seconds: allow one on each side.
    assert t0 - timedelta(seconds=1) <= start <= end <= now + timedelta(seconds=1), (start, end, t0, now)
    return start, end


def _doc(ident: object, fmt: str) -> str:
    docs = {d[0]: d[2].decode() for d in ident.documents}  # type: ignore[attr-defined]
    return docs[fmt]


@pytest.mark.integration
def test_nonzero_exit_is_failed_3_0(ctx: SlurmAttempts, jobs: Jobs, slurm_cluster: SlurmCluster) -> None:
    ident = ctx.identify(jobs.exit3)
    wl = ident.workload
    assert (wl.id, wl.attempt, wl.name, wl.scheduler) == (jobs.exit3, 0, "ff-exit3", "slurm")
    assert (wl.terminal_state, wl.exit_code) == ("FAILED", "3:0")
    assert wl.nodes == [slurm_cluster.node]
    assert wl.ranks == {slurm_cluster.node: "0"}  # one task, from scontrol's NumTasks
    _window_inside(wl.window.start, wl.window.end, jobs.t0)
    sacct = _doc(ident, "sacct")
    assert sacct.splitlines()[0] == "JobID|JobName|State|ExitCode|Start|End|NodeList|Reason"
    assert f"{jobs.exit3}|ff-exit3|FAILED|3:0|" in sacct
    assert f"{jobs.exit3}.batch|batch|FAILED|3:0|" in sacct
    assert f"JobId={jobs.exit3} " in _doc(ident, "scontrol") and "JobState=FAILED" in _doc(ident, "scontrol")
    assert ident.owner == "root"
    Context.from_spec(wl)  # the engine accepts it as is


@pytest.mark.integration
def test_kill_9_is_failed_0_9(ctx: SlurmAttempts, jobs: Jobs) -> None:
    wl = ctx.identify(jobs.kill9).workload
    assert (wl.terminal_state, wl.exit_code) == ("FAILED", "0:9")


@pytest.mark.integration
def test_scancel_is_cancelled_by_root(ctx: SlurmAttempts, jobs: Jobs, slurm_cluster: SlurmCluster) -> None:
    ident = ctx.identify(jobs.cancelled)
    wl = ident.workload
    assert wl.terminal_state == "CANCELLED by 0"
    assert wl.nodes == [slurm_cluster.node]
    _window_inside(wl.window.start, wl.window.end, jobs.t0)
    assert "|CANCELLED by 0|" in _doc(ident, "sacct")


@pytest.mark.integration
def test_ranks_follow_the_largest_step(ctx: SlurmAttempts, jobs: Jobs, slurm_cluster: SlurmCluster) -> None:
    ident = ctx.identify(jobs.ranks4)
    assert ident.workload.ranks == {slurm_cluster.node: "0-3"}
    assert ident.workload.exit_code == "1:0"
    assert f"{jobs.ranks4}.0|true|COMPLETED|0:0|" in _doc(ident, "sacct")


@pytest.mark.integration
def test_node_failure_and_requeued_attempt(ctx: SlurmAttempts, jobs: Jobs, slurm_cluster: SlurmCluster) -> None:
    latest = ctx.identify(jobs.nodefail)
    assert (latest.workload.attempt, latest.workload.terminal_state) == (1, "COMPLETED")
    first = ctx.identify(jobs.nodefail, attempt=0)
    wl = first.workload
    assert (wl.attempt, wl.terminal_state, wl.nodes) == (0, "NODE_FAIL", [slurm_cluster.node])
    start, end = _window_inside(wl.window.start, wl.window.end, jobs.t0)
    assert parse_rfc3339(latest.workload.window.start or "") >= end >= start
    sacct = _doc(first, "sacct")
    assert "NODE_FAIL" in sacct and "COMPLETED" not in sacct  # only that attempt's rows
    assert [d[0] for d in first.documents] == ["sacct"]  # scontrol only knows the latest attempt
    with pytest.raises(IdentifyError, match="2 attempt"):
        ctx.identify(jobs.nodefail, attempt=2)


@pytest.mark.integration
def test_array_task_and_array_job(ctx: SlurmAttempts, jobs: Jobs) -> None:
    wl = ctx.identify(f"{jobs.array}_6").workload
    assert (wl.id, wl.terminal_state, wl.exit_code) == (f"{jobs.array}_6", "FAILED", "6:0")
    with pytest.raises(IdentifyError, match=r"array of 2 tasks .*name one task"):
        ctx.identify(jobs.array)


@pytest.mark.integration
def test_configured_zone_reads_the_same_instants(ctx: SlurmAttempts, jobs: Jobs,
                                                 slurm_cluster: SlurmCluster) -> None:
    """sacct prints wall time in its TZ; read in that zone, the instants must not move."""
    kolkata = SlurmAttempts(env={"SLURM_CONF": str(slurm_cluster.conf)}, tz="Asia/Kolkata")
    a, b = ctx.identify(jobs.exit3), kolkata.identify(jobs.exit3)
    assert a.workload.window == b.workload.window
    assert _doc(a, "sacct") != _doc(b, "sacct")  # the printed wall times differ by 5:30


@pytest.mark.integration
def test_unknown_job_and_unreachable_accounting(ctx: SlurmAttempts, slurm_cluster: SlurmCluster,
                                                tmp_path: Path) -> None:
    with pytest.raises(IdentifyError, match="no job 987654 in the accounting database"):
        ctx.identify("987654")
    conf = tmp_path / "slurm.conf"
    text = slurm_cluster.conf.read_text()
    conf.write_text(text.replace(f"AccountingStoragePort={slurm_cluster.ports['dbd']}", "AccountingStoragePort=9"))
    dead = SlurmAttempts(env={"SLURM_CONF": str(conf)}, timeout=20)
    with pytest.raises(IdentifyError, match=r"sacct failed .*Connection refused"):
        dead.identify("1")


@pytest.mark.integration
def test_ended_since_is_monotone(ctx: SlurmAttempts, jobs: Jobs, slurm_cluster: SlurmCluster) -> None:
    ended = ctx.ended_since  # the session's time-limit job ended before the module began (`jobs`)
    ids, cursor = ended(None)
    for job in (jobs.exit3, jobs.kill9, jobs.cancelled, jobs.ranks4, jobs.nodefail, f"{jobs.array}_5"):
        assert job in ids
    assert ids.count(jobs.nodefail) == 1  # both attempts ended within the window: one id
    again, cursor2 = ended(cursor)
    assert again == []
    late = _sbatch_wrap(slurm_cluster, "ff-late", "exit 0")
    slurm_cluster.wait_state(late, TERMINAL)
    ids3, cursor3 = ended(cursor2)
    assert ids3 == [late]
    assert parse_cursor(cursor3)[0] >= parse_cursor(cursor2)[0] >= parse_cursor(cursor)[0]
    assert ended(cursor3)[0] == []


@pytest.mark.integration
def test_time_limit_is_timeout(ctx: SlurmAttempts, slurm_time_limit_job: TimeLimitJob) -> None:
    """The session's time-limit job (tests/conftest.py), at its end since the module started (`jobs`)."""
    tl = slurm_time_limit_job
    tl.ended()
    wl = ctx.identify(tl.job).workload
    assert wl.terminal_state == "TIMEOUT"
    start, end = _window_inside(wl.window.start, wl.window.end, tl.submitted)
    assert 60 <= (end - start).total_seconds() <= 150


# --------------------------------------------------------------------------
# recorded sacct text through the injectable runner (no cluster needed)
# --------------------------------------------------------------------------

HET = """\
JobID|JobName|State|ExitCode|Start|End|NodeList|Reason|NTasks|User
4242+0|train|COMPLETED|0:0|2026-11-02T10:00:00|2026-11-02T10:30:00|gpu-[01-02]|None||alice
4242+0.batch|batch|COMPLETED|0:0|2026-11-02T10:00:00|2026-11-02T10:30:00|gpu-01||1|
4242+1|train|FAILED|1:0|2026-11-02T10:00:05|2026-11-02T10:29:00|gpu-[03-04]|None||alice
"""


class Recorded:
    def __init__(self, answers: Mapping[str, RunResult]) -> None:
        self.answers = answers
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str], env: Mapping[str, str], timeout: float) -> RunResult:
        self.calls.append(list(argv))
        tool = Path(argv[0]).name
        return self.answers.get(tool, RunResult(1, "", f"{tool}: no answer recorded"))


def test_het_job_is_one_workload_over_its_components() -> None:
    runner = Recorded({"sacct": RunResult(0, HET, "")})
    ident = SlurmAttempts(runner=runner, tz="UTC", cluster="c1").identify("4242")
    wl = ident.workload
    assert wl.nodes == ["gpu-01", "gpu-02", "gpu-03", "gpu-04"]
    assert (wl.terminal_state, wl.exit_code, wl.ranks) == ("FAILED", "1:0", None)
    assert (wl.window.start, wl.window.end) == ("2026-11-02T10:00:00Z", "2026-11-02T10:30:00Z")
    assert ident.owner == "alice"
    assert "--clusters=c1" in runner.calls[0] and runner.calls[0][-2:] == ["-j", "4242"]
    # The document keeps the documented eight columns.
    assert all(line.count("|") == 7 for line in _doc(ident, "sacct").splitlines())


def test_pipe_in_job_name_and_uneven_tasks() -> None:
    text = ("JobID|JobName|State|ExitCode|Start|End|NodeList|Reason|NTasks|User\n"
            "7|a|b|FAILED|2:0|2026-11-02T10:00:00|2026-11-02T10:01:00|n[1-2]|None||bob\n"
            "7.0|python|FAILED|2:0|2026-11-02T10:00:00|2026-11-02T10:01:00|n[1-2]||3|\n")
    wl = SlurmAttempts(runner=Recorded({"sacct": RunResult(0, text, "")}), tz="UTC").identify("7").workload
    assert (wl.name, wl.nodes, wl.ranks) == ("a|b", ["n1", "n2"], None)  # 3 tasks over 2 nodes: unknown


def test_bad_refs_and_failing_clients(tmp_path: Path) -> None:
    ctx = SlurmAttempts(runner=Recorded({}))
    for bad in ("", "abc", "42.0", "42_", "4242+1_2"):
        with pytest.raises(IdentifyError, match="not a job id"):
            ctx.identify(bad)
    with pytest.raises(IdentifyError, match=r"sacct failed for job 42 .*no answer recorded"):
        ctx.identify("42")
    with pytest.raises(IdentifyError, match="not found"):
        SlurmAttempts(sacct=str(tmp_path / "no-sacct")).identify("42")
    hang = tmp_path / "sacct"
    hang.write_text("#!/bin/sh\nexec sleep 5\n")
    hang.chmod(hang.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(IdentifyError, match=r"did not answer within 0\.3s"):
        SlurmAttempts(sacct=str(hang), timeout=0.3).identify("42")
    with pytest.raises(IdentifyError, match="unknown time zone"):
        SlurmAttempts(tz="Mars/Olympus")
    with pytest.raises(IdentifyError, match="cursor"):
        ctx.ended_since("yesterday|x")


def test_ended_since_cursor_with_late_records() -> None:
    """A record that reaches slurmdbd late, with an End before the cursor, is still returned once."""
    rows = ["JobID|State|End", "10|COMPLETED|2026-11-02T10:00:00", "11|FAILED|2026-11-02T10:00:00"]
    runner = Recorded({"sacct": RunResult(0, "\n".join(rows) + "\n", "")})
    ctx = SlurmAttempts(runner=runner, tz="UTC", lookback=None)
    ids, cur = ctx.ended_since(None)
    assert ids == ["10", "11"] and cur.startswith("2026-11-02T10:00:00Z|")
    assert "1970-01-02T00:00:00" in runner.calls[0]
    rows += ["12|TIMEOUT|2026-11-02T09:59:30", "13|CANCELLED by 0|2026-11-02T10:05:00", "14|RUNNING|Unknown",
             "10|COMPLETED|2026-11-02T10:06:00"]  # 10 requeued and ended again
    runner.answers = {"sacct": RunResult(0, "\n".join(rows) + "\n", "")}
    ids, cur2 = ctx.ended_since(cur)
    assert ids == ["12", "13", "10"]
    assert "2026-11-02T09:58:00" in runner.calls[1]  # looked back SETTLE before the cursor
    assert ctx.ended_since(cur2)[0] == []


def test_local_zone_without_tz(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `tz`, sacct's zone-less times are this machine's local time (here forced to UTC+2)."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        text = ("JobID|JobName|State|ExitCode|Start|End|NodeList|Reason|NTasks|User\n"
                "8|x|FAILED|1:0|2026-07-01T12:00:00|2026-07-01T12:10:00|n1|None||u\n")
        wl = SlurmAttempts(runner=Recorded({"sacct": RunResult(0, text, "")})).identify("8").workload
        assert (wl.window.start, wl.window.end) == ("2026-07-01T10:00:00Z", "2026-07-01T10:10:00Z")
    finally:
        monkeypatch.undo()
        time.tzset()


def test_scontrol_still_completing_after_the_end_is_left_out() -> None:
    """Right after a job ends, sacct has its end (FAILED) while `scontrol show job` still says JobState=COMPLETING
    (KillWait, the epilog; seen by bench/follow_live.py on the test Slurm): that record would read as a job still
    running, so it is not a document; its NumTasks still places the ranks. The texts are the lab's real ones
    (tests/lab/captured/slurm_value_error/scheduler), the scontrol one with the state it had a moment before it
    was taken. Near miss: the same record once it says FAILED is kept."""
    lab = Path(__file__).resolve().parents[1] / "lab" / "captured" / "slurm_value_error" / "scheduler"
    sacct = (lab / "sacct.txt").read_text()
    settled = (lab / "scontrol.txt").read_text()
    assert "JobState=FAILED" in settled
    completing = settled.replace("JobState=FAILED", "JobState=COMPLETING")
    for text, kept in ((completing, False), (settled, True)):
        runner = Recorded({"sacct": RunResult(0, sacct, ""), "scontrol": RunResult(0, text, "")})
        ident = SlurmAttempts(runner=runner, tz="UTC").identify("2")
        assert ident.workload.terminal_state == "FAILED"
        assert ident.workload.ranks == {"ffnode1": "0-2"}
        assert ("scontrol" in [fmt for fmt, _, _ in ident.documents]) is kept
