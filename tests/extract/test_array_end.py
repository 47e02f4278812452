"""A Slurm array job's end: its tasks' records (sacct's `N_k` rows, scontrol's ArrayJobId/ArrayTaskId) and the
array's terminal state, the first failed task's (engine/normalise.py `_array_end`).

Sources: the sacct and scontrol records are those of the lab's `slurm_array_task_failed` run (Slurm 22.05, Debian's
slurm-wlm; tests/lab/captured/slurm_array_task_failed: `sbatch --array=0-1%1`, task 1's rank 1 raises); the rule is
Slurm's own, sbatch(1) `--wait`: "In the case of a job array, the exit code recorded will be the highest value for
any task in the job array." The near-misses: one task named alone (`identify` asks for one task of an array), a
requeued job's two records of one id (the last one stands), an array's pending remainder (`N_[2-3%1]`, no task).
"""

from __future__ import annotations

from datetime import UTC

import pytest

from firstfault.engine.normalise import terminal_state
from firstfault.extract.scheduler import read_scheduler

SACCT = """JobID|JobName|State|ExitCode|Start|End|NodeList|Reason
1_0|lab-slurm_array_task_failed|COMPLETED|0:0|2026-12-07T05:27:28|2026-12-07T05:27:55|ffnode1|None
1_0.batch|batch|COMPLETED|0:0|2026-12-07T05:27:28|2026-12-07T05:27:55|ffnode1|
1_0.0|python|COMPLETED|0:0|2026-12-07T05:27:28|2026-12-07T05:27:55|ffnode1|
1_1|lab-slurm_array_task_failed|FAILED|1:0|2026-12-07T05:27:56|2026-12-07T05:28:22|ffnode1|JobArrayTaskLimit
1_1.batch|batch|FAILED|1:0|2026-12-07T05:27:56|2026-12-07T05:28:22|ffnode1|
1_1.0|python|FAILED|1:0|2026-12-07T05:27:56|2026-12-07T05:28:22|ffnode1|
"""
SCONTROL = """JobId=1 ArrayJobId=1 ArrayTaskId=1 ArrayTaskThrottle=1 JobName=lab-slurm_array_task_failed
   JobState=FAILED Reason=NonZeroExitCode Dependency=(null)
   ExitCode=1:0
   StartTime=2026-12-07T05:27:56 EndTime=2026-12-07T05:28:22
   NodeList=ffnode1
JobId=2 ArrayJobId=1 ArrayTaskId=0 ArrayTaskThrottle=1 JobName=lab-slurm_array_task_failed
   JobState=COMPLETED Reason=None Dependency=(null)
   ExitCode=0:0
   StartTime=2026-12-07T05:27:28 EndTime=2026-12-07T05:27:55
   NodeList=ffnode1
"""


def _jobs(text: str, fmt: str, job_id: str | None = "1") -> list:
    return [e for e in read_scheduler(text.encode(), fmt, f"scheduler/{fmt}.txt", job_id=job_id, tz=UTC).events
            if e.fields.get("scope") == "job"]


def test_each_task_record_names_its_task() -> None:
    assert [e.fields.get("array_task") for e in _jobs(SACCT, "sacct")] == ["1_0", "1_1"]
    assert [e.fields.get("array_task") for e in _jobs(SCONTROL, "scontrol")] == ["1_1", "1_0"]


@pytest.mark.parametrize("fmt", ["sacct", "scontrol", "both"])
def test_an_array_whose_task_failed_ended_failed(fmt: str) -> None:
    jobs = _jobs(SACCT, "sacct") * (fmt != "scontrol") + _jobs(SCONTROL, "scontrol") * (fmt != "sacct")
    state, ev = terminal_state(jobs, None)
    assert state == "FAILED" and ev is not None and ev.fields["array_task"] == "1_1"


def test_an_array_whose_tasks_all_completed_completed() -> None:
    jobs = _jobs(SACCT.replace("FAILED|1:0", "COMPLETED|0:0"), "sacct")
    assert terminal_state(jobs, None)[0] == "COMPLETED"


def test_near_miss_one_task_alone_is_that_tasks_end() -> None:
    # the user named task 1_0 (firstfault's identify asks for one task of an array): its own end, not the array's
    assert terminal_state(_jobs(SACCT, "sacct", job_id="1_0"), None)[0] == "COMPLETED"


def test_near_miss_a_requeued_jobs_records_are_no_array() -> None:
    # one job id twice (a requeue's earlier record, then the run that completed): the last record stands
    text = ("JobID|JobName|State|ExitCode|Start|End|NodeList|Reason\n"
            "7|train|NODE_FAIL|0:0|2026-12-07T05:00:00|2026-12-07T05:10:00|n1|None\n"
            "7|train|COMPLETED|0:0|2026-12-07T05:12:00|2026-12-07T05:30:00|n2|None\n")
    jobs = _jobs(text, "sacct", job_id="7")
    assert [e.fields.get("array_task") for e in jobs] == [None, None]
    assert terminal_state(jobs, None)[0] == "COMPLETED"


def test_near_miss_a_pending_remainder_is_no_task() -> None:
    # task 0 ran; the rest waits behind the throttle (`1_[1%1]`, Start/End Unknown): one task, the last record stands
    text = "\n".join(SACCT.splitlines()[:4]) + (
        "\n1_[1%1]|lab-slurm_array_task_failed|PENDING|0:0|Unknown|Unknown|None assigned|JobArrayTaskLimit\n")
    jobs = _jobs(text, "sacct")
    assert [e.fields.get("array_task") for e in jobs] == ["1_0", None]
    assert terminal_state(jobs, None)[0] == "PENDING"
