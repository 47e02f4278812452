"""The shipped EpilogSlurmctld (src/firstfault/actions/epilog.sh).

test_epilog_* on the actions tests' real Slurm: slurmctld itself runs the script after each job;
nobody calls firstfault by hand. The script's own bounds (returns at once, holds none of the
caller's pipes, a concurrency cap) are checked by running it directly, as slurmctld would.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from firstfault.store import VerdictStore
from firstfault.store.actions import ActionLedger
from tests.actions.conftest import EPILOG, NODE, XID79_JOB, job_config, node_state
from tests.harness.e2e_util import write_config
from tests.harness.slurm_harness import TERMINAL, SlurmCluster, _pids_under

OOM_JOB = """#!/bin/sh
echo '[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity \
of 79.15 GiB of which 1.02 GiB is free.' >&2
exit 1
"""


def _wait_verdict(db: Path, job: str, timeout: float = 120) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if db.exists():
            with VerdictStore.open(f"sqlite:///{db}") as s:
                for row in s.list(limit=50):
                    if row.workload_id == job:
                        return row.id
        time.sleep(1)
    raise AssertionError(f"no verdict for job {job} in {db} after {timeout}s")


@pytest.mark.integration
def test_epilog_attributes_failed_jobs_and_drains_for_hardware(idle_node: SlurmCluster) -> None:
    c = idle_node
    db = c.base / "verdicts.db"
    write_config(c.base / "cluster.yaml", job_config(c, db, dry_run=False))
    try:
        _epilog_run(c, db)
    finally:
        (c.base / "cluster.yaml").unlink()  # later jobs on this Slurm: their epilogs find no config


def _epilog_run(c: SlurmCluster, db: Path) -> None:
    ok = c.sbatch("#!/bin/sh\nexit 0\n")
    oom = c.sbatch(OOM_JOB)
    hw = c.sbatch(XID79_JOB.format(base=c.base, node=NODE))
    assert {c.wait_state(j, TERMINAL, 60) for j in (ok, oom, hw)} == {"COMPLETED", "FAILED"}

    hw_id, oom_id = _wait_verdict(db, hw), _wait_verdict(db, oom)
    # The verdict is stored before its action runs (a `pending` claim, then `done`): read the ledger once the
    # epilog says the run ended.
    log = _wait_for(c.base / "log" / "firstfault-epilog.log", f"job {hw}: done", 60)
    with VerdictStore.open(f"sqlite:///{db}") as store:
        hw_v, oom_v = store.get(hw_id), store.get(oom_id)
        assert hw_v is not None and oom_v is not None
        assert hw_v.root_cause is not None and hw_v.root_cause.category == "gpu.fallen_off_bus"
        assert oom_v.root_cause is not None and oom_v.root_cause.category == "app.cuda_oom"
        assert ok not in {r.workload_id for r in store.list()}  # COMPLETED: not analysed
        ledger = ActionLedger(store)
        assert [(a.outcome, a.target) for a in ledger.for_verdict(hw_id)] == [("done", NODE)]
        assert [a.outcome for a in ledger.for_verdict(oom_id)] == ["ineligible"]
    assert node_state(c) == ("drained", f"firstfault: gpu.fallen_off_bus {hw_id}")
    assert f"job {ok}: completed: not analysed" in log
    assert f"job {hw}: FAILED: running firstfault" in log and f"job {oom}: FAILED: running firstfault" in log
    # The drain went to the log too (firstfault run prints each decision on stderr).
    assert f"action drain {NODE}: done: ran scontrol update nodename={NODE} state=drain" in log


@pytest.fixture
def script_env(tmp_path: Path) -> Iterator[Path]:
    """An env file for running the script by hand: a sacct that says FAILED, a firstfault that takes 30 s."""
    (tmp_path / "sacct").write_text("#!/bin/sh\necho FAILED\n")
    # One process, its path in its command line: found and ended by PID afterwards.
    (tmp_path / "slow").write_text(f"#!{sys.executable}\nimport sys, time\nprint('slow', *sys.argv[1:], flush=True)\n"
                                   "time.sleep(30)\n")
    for f in ("sacct", "slow"):
        (tmp_path / f).chmod(0o755)
    env = tmp_path / "epilog.env"
    env.write_text(f"FIRSTFAULT={tmp_path}/slow\nFIRSTFAULT_LOG={tmp_path}/epilog.log\n"
                   f"FIRSTFAULT_RUN_DIR={tmp_path}/run\nFIRSTFAULT_MAX_RUNNING=1\nSACCT={tmp_path}/sacct\n"
                   f"FIRSTFAULT_CONFIG={tmp_path}/cluster.yaml\n")
    yield env
    for pid in _pids_under(tmp_path):  # the detached copies we started, by PID
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _epilog(env: Path, job: str) -> tuple[subprocess.CompletedProcess[str], float]:
    # What slurmctld does: a bare environment, the job id, and it waits for the script and its pipes.
    t0 = time.monotonic()
    proc = subprocess.run([str(EPILOG)], env={"SLURM_JOB_ID": job, "FIRSTFAULT_EPILOG_ENV": str(env)},
                          capture_output=True, text=True, timeout=10, check=False)
    return proc, time.monotonic() - t0


def _wait_for(path: Path, text: str, timeout: float = 10) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = path.read_text() if path.exists() else ""
        if text in got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"{text!r} not in {path} after {timeout}s: {got!r}")


def test_epilog_returns_at_once_and_bounds_concurrency(script_env: Path, tmp_path: Path) -> None:
    proc, took = _epilog(script_env, "4242")
    # capture_output: had the detached part kept our stdout/stderr, run() would wait the 30 s out.
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert took < 5, took
    log = _wait_for(tmp_path / "epilog.log", "slow run --config")
    assert "job 4242: FAILED: running firstfault (slot 1)" in log
    assert f"slow run --config {tmp_path}/cluster.yaml --job 4242 --quiet" in log
    (slow,) = [p for p in _pids_under(tmp_path)
               if Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")[1:2] == [str(tmp_path / "slow").encode()]]
    assert os.getsid(slow) != os.getsid(0)  # its own session: slurmctld's epilog kill cannot reach it
    # The one slot is taken: the next job is skipped and says so, and still returns at once.
    proc2, took2 = _epilog(script_env, "4243")
    assert proc2.returncode == 0 and took2 < 5
    _wait_for(tmp_path / "epilog.log", "job 4243: skipped: 1 analyses already running")


def test_epilog_ignores_what_is_not_a_job(script_env: Path, tmp_path: Path) -> None:
    for job in ("", "42;rm -rf /", "$(id)"):
        proc, _ = _epilog(script_env, job)
        assert proc.returncode == 0
    time.sleep(0.5)
    assert not (tmp_path / "epilog.log").exists()
