from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from firstfault.extract.scheduler import read_scheduler
from firstfault.extract.structured import StructuredResult
from firstfault.hostlist import hostlist_expand
from firstfault.model import Event

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "scheduler"


def read(name: str, fmt: str, *, job_id: str | None = None, tz: tzinfo = UTC) -> StructuredResult:
    return read_scheduler((FIX / name).read_bytes(), fmt, f"scheduler/{name}", job_id=job_id, tz=tz)


def by_id(events: list[Event]) -> dict[str, Event]:
    out: dict[str, Event] = {}
    for e in events:
        step = e.fields.get("step")
        out[f"{e.fields['job_id']}.{step}" if step is not None else str(e.fields["job_id"])] = e
    return out


def utc(y: int, mo: int, d: int, h: int, mi: int, s: int) -> datetime:
    return datetime(y, mo, d, h, mi, s, tzinfo=UTC)


# --------------------------------------------------------------------------
# hostlists
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "hosts"),
    [
        ("node-[01-04,07]", ["node-01", "node-02", "node-03", "node-04", "node-07"]),
        ("gpu[1-2]-ib,login1", ["gpu1-ib", "gpu2-ib", "login1"]),
        ("node-01", ["node-01"]),
        ("d[001-003],f[008-010]", ["d001", "d002", "d003", "f008", "f009", "f010"]),
        ("rack[1-2]-n[01-02]", ["rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"]),
        ("ip-10-0-1-23", ["ip-10-0-1-23"]),
        ("node[8-10]", ["node8", "node9", "node10"]),
        ("None assigned", []),
        ("", []),
    ],
)
def test_hostlist_expand(expr: str, hosts: list[str]) -> None:
    assert hostlist_expand(expr) == hosts


@pytest.mark.parametrize("expr", ["node-[01-04", "node-01]", "node-[a-b]", "node-[04-01]", "n[1-[2]]"])
def test_hostlist_expand_rejects_malformed(expr: str) -> None:
    with pytest.raises(ValueError):
        hostlist_expand(expr)


# --------------------------------------------------------------------------
# sacct
# --------------------------------------------------------------------------


def test_sacct_rows_states_exit_codes_and_scopes() -> None:
    res = read("sacct.txt", "sacct")
    rows = by_id(res.events)
    assert set(rows) == {"4242", "4242.batch", "4242.extern", "4242.0", "4242.1", "4300"}
    job = rows["4242"]
    assert job.kind == "sched.job"
    assert job.fields["state"] == "CANCELLED"
    assert job.fields["raw_state"] == "CANCELLED by 0"
    assert job.fields["by_uid"] == 0
    assert job.fields["exit_code"] == 0 and job.fields["signal"] == 15
    assert job.fields["scope"] == "job"
    assert "step" not in job.fields
    assert "reason" not in job.fields  # 'None' is no reason
    assert job.fields["nodelist"] == "node-[01-04]"
    assert job.node is None
    assert job.time == utc(2026, 11, 2, 10, 41, 12)
    assert job.evidence.source == "scheduler"
    assert job.evidence.file == "scheduler/sacct.txt"
    assert job.evidence.line == 2
    assert job.evidence.text.startswith("4242|llama-pretrain|CANCELLED by 0|")

    step0 = rows["4242.0"]
    assert step0.fields["scope"] == "step" and step0.fields["step"] == "0"
    assert step0.fields["state"] == "FAILED" and step0.fields["exit_code"] == 1
    assert rows["4242.batch"].fields["step"] == "batch"
    assert rows["4242.extern"].fields["state"] == "COMPLETED"
    assert "by_uid" not in rows["4242.batch"].fields
    # End 'Unknown': the row still has a time, its Start.
    assert rows["4242.1"].time == utc(2026, 11, 2, 10, 0, 5)
    assert rows["4242.1"].fields["signal"] == 9

    assert res.hosts == {"node-01", "node-02", "node-03", "node-04", "gpu1-ib", "gpu2-ib"}
    assert res.lines == 8


def test_sacct_bad_column_count_is_an_issue_and_other_rows_survive() -> None:
    res = read("sacct.txt", "sacct")
    assert len(res.issues) == 1
    issue = res.issues[0]
    assert issue.line == 7
    assert "5 columns" in issue.message and "header has 8" in issue.message
    assert "4242.2" not in by_id(res.events)
    assert "4300" in by_id(res.events)  # a row after the bad one is still read


def test_sacct_job_id_filter_keeps_steps_only_of_that_job() -> None:
    res = read("sacct.txt", "sacct", job_id="4242")
    assert {str(e.fields["job_id"]) for e in res.events} == {"4242"}
    assert len(res.events) == 5


def test_sacct_local_time_is_read_in_the_bundle_timezone() -> None:
    res = read("sacct.txt", "sacct", job_id="4242", tz=ZoneInfo("Europe/Berlin"))
    job = by_id(res.events)["4242"]
    # November: CET, UTC+1.
    assert job.time == utc(2026, 11, 2, 9, 41, 12)
    assert job.time is not None and job.time.utcoffset() is not None


def test_sacct_array_and_het_jobs() -> None:
    res = read("sacct_array_het.txt", "sacct")
    rows = by_id(res.events)
    task = rows["4243_7"]
    assert task.fields["scope"] == "job"
    assert task.fields["state"] == "NODE_FAIL"
    assert rows["4243_7.0"].fields["scope"] == "step"
    assert rows["4243_7.batch"].fields["step"] == "batch"
    pending = rows["4243_[8-10]"]
    assert pending.fields["scope"] == "job"
    assert pending.fields["reason"] == "JobArrayTaskLimit"
    assert pending.time is None  # Start and End 'Unknown'
    assert "nodelist" not in pending.fields  # 'None assigned'
    het0, het1 = rows["4244+0"], rows["4244+1"]
    assert het0.fields["scope"] == het1.fields["scope"] == "job"
    assert het0.fields["state"] == "OUT_OF_MEMORY" and het0.fields["signal"] == 125
    assert het1.fields["state"] == "TIMEOUT"
    assert rows["4244+1.0"].fields["scope"] == "step"
    assert res.issues == []
    assert res.hosts == {"node-05", "node-06", "node-07", "node-08"}

    only_array = read("sacct_array_het.txt", "sacct", job_id="4243")
    assert {str(e.fields["job_id"]) for e in only_array.events} == {"4243_7", "4243_[8-10]"}
    only_task = read("sacct_array_het.txt", "sacct", job_id="4243_7")
    assert len(only_task.events) == 3
    only_het = read("sacct_array_het.txt", "sacct", job_id="4244")
    assert len(only_het.events) == 3


def test_sacct_fixed_width_output_with_truncated_states() -> None:
    res = read("sacct_fixed.txt", "sacct")
    assert res.issues == []
    rows = by_id(res.events)
    assert rows["4242"].fields["state"] == "CANCELLED"
    assert rows["4242"].fields["raw_state"] == "CANCELLED+"
    assert rows["4242"].fields["signal"] == 15
    assert rows["4242"].time == utc(2026, 11, 2, 10, 41, 12)
    assert rows["4242.0"].fields["state"] == "OUT_OF_MEMORY"
    assert rows["4242.batch"].fields["scope"] == "step"


def test_sacct_without_header_uses_the_spec_column_order() -> None:
    data = b"4242|llama|FAILED|1:0|2026-11-02T10:00:00|2026-11-02T10:41:12|node-[01-02]|NonZeroExitCode\n"
    res = read_scheduler(data, "sacct", "s.txt", job_id=None, tz=UTC)
    assert len(res.events) == 1
    ev = res.events[0]
    assert ev.fields["reason"] == "NonZeroExitCode"
    assert ev.evidence.line == 1


def test_sacct_bad_exit_code_and_time_are_issues_not_lost_rows() -> None:
    data = (
        b"JobID|JobName|State|ExitCode|Start|End|NodeList|Reason\n"
        b"4242|x|FAILED|oops|2026-11-02T10:00:00|yesterday|node-01|None\n"
    )
    res = read_scheduler(data, "sacct", "s.txt", job_id=None, tz=UTC)
    assert len(res.events) == 1
    assert res.events[0].time == utc(2026, 11, 2, 10, 0, 0)  # End unreadable -> Start
    messages = " | ".join(i.message for i in res.issues)
    assert "ExitCode" in messages and "End" in messages
    assert all(i.line == 2 for i in res.issues)


def test_unknown_format_is_an_issue_not_a_crash() -> None:
    res = read_scheduler(b"JobID|State\n1|FAILED\n", "openmetrics", "x", job_id=None, tz=UTC)
    assert res.events == []
    assert len(res.issues) == 1
    assert res.issues[0].message.startswith("cannot read") and "openmetrics" in res.issues[0].message


# --------------------------------------------------------------------------
# scontrol
# --------------------------------------------------------------------------


def test_scontrol_show_job() -> None:
    res = read("scontrol.txt", "scontrol", job_id="4242")
    assert res.issues == []
    assert len(res.events) == 1
    ev = res.events[0]
    assert ev.kind == "sched.job"
    assert ev.fields["state"] == "FAILED"
    assert ev.fields["reason"] == "NonZeroExitCode"
    assert ev.fields["exit_code"] == 1 and ev.fields["signal"] == 0
    assert ev.fields["scope"] == "job"
    assert ev.fields["nodelist"] == "node-[01-04]"
    assert ev.fields["batch_host"] == "node-01"
    assert ev.time == utc(2026, 11, 2, 10, 41, 12)
    assert ev.evidence.line == 1
    assert "JobState=FAILED" in ev.evidence.text and "EndTime=2026-11-02T10:41:12" in ev.evidence.text
    assert res.hosts == {"node-01", "node-02", "node-03", "node-04"}


def _scontrol(state: str, reason: str) -> Event:
    # scontrol show job's layout (Slurm's own testsuite reads the reason so: testsuite/python/tests/test_132_1.py
    # `Reason=launch_failed_requeued_held`)
    text = (f"JobId=80634 ArrayJobId=80520 ArrayTaskId=114 JobName=train.sh\n"
            f"   JobState={state} Reason={reason} Dependency=(null)\n"
            f"   Requeue=1 Restarts=1 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
            f"   StartTime=Unknown EndTime=Unknown Deadline=N/A\n"
            f"   BatchHost=gpu-node-23\n")
    res = read_scheduler(text.encode(), "scontrol", "scheduler/scontrol.txt", job_id="80634", tz=UTC)
    assert res.issues == []
    (ev,) = res.events
    return ev


def test_a_job_held_after_its_launch_failed_is_a_failed_attempt() -> None:
    """slurmctld requeues and holds a job whose launch failed (job_mgr.c: `launch failed requeued held`, a prolog or
    the batch launch failed on its node): the record is PENDING, the attempt it tells of failed to start."""
    ev = _scontrol("PENDING", "launch_failed_requeued_held")
    assert (ev.fields["state"], ev.fields["raw_state"]) == ("FAILED", "PENDING")
    assert ev.time is None  # a pending job's times are guesses, still


def test_a_job_pending_for_any_other_reason_is_still_to_run() -> None:
    # near misses: waiting for its priority, and held by its owner (a requeue-hold exit is the user's choice)
    assert _scontrol("PENDING", "Priority").fields["state"] == "PENDING"
    assert _scontrol("PENDING", "JobHeldUser").fields["state"] == "PENDING"


def test_scontrol_several_jobs_and_array_task_selection() -> None:
    res = read("scontrol.txt", "scontrol")
    assert [e.fields["state"] for e in res.events] == ["FAILED", "NODE_FAIL"]
    assert res.events[1].evidence.line == 30
    # The array task has its own JobId; asking for the array job finds it.
    arr = read("scontrol.txt", "scontrol", job_id="4243")
    assert len(arr.events) == 1
    assert arr.events[0].fields["reason"] == "NodeDown"


def test_scontrol_one_liner_form() -> None:
    data = (
        b"JobId=77 JobName=x UserId=a(1) JobState=TIMEOUT Reason=TimeLimit ExitCode=0:15 "
        b"StartTime=2026-11-02T10:00:00 EndTime=2026-11-02T11:00:00 NodeList=gpu[1-2]-ib\n"
    )
    res = read_scheduler(data, "scontrol", "s", job_id=None, tz=UTC)
    assert len(res.events) == 1
    assert res.events[0].fields["state"] == "TIMEOUT"
    assert res.events[0].fields["signal"] == 15
    assert res.hosts == {"gpu1-ib", "gpu2-ib"}


# --------------------------------------------------------------------------
# Kueue
# --------------------------------------------------------------------------


def test_kueue_workload_pods_ready_timeout() -> None:
    res = read("kueue_workload_evicted.yaml", "kueue-workload")
    assert res.issues == []
    conds = [(e.fields["type"], e.fields["status"], e.fields["reason"]) for e in res.events]
    assert conds == [
        ("QuotaReserved", "True", "QuotaReserved"),
        ("Admitted", "True", "Admitted"),
        ("PodsReady", "False", "PodsReady"),
        ("Evicted", "True", "PodsReadyTimeout"),
        ("Requeued", "False", "PodsReadyTimeout"),
    ]
    evicted = res.events[3]
    assert evicted.kind == "kueue.condition"
    assert evicted.fields["message"] == "Exceeded the PodsReady timeout team-a/job-llama-pretrain-3c5a1"
    assert evicted.fields["workload"] == "job-llama-pretrain-3c5a1"
    assert evicted.time == utc(2026, 11, 2, 10, 10, 1)
    assert evicted.node is None
    # Evidence points at the condition's mapping in the file.
    lines = (FIX / "kueue_workload_evicted.yaml").read_text().splitlines()
    assert evicted.evidence.line is not None
    assert "2026-11-02T10:10:01Z" in lines[evicted.evidence.line - 1]
    assert "Evicted" in evicted.evidence.text and "PodsReadyTimeout" in evicted.evidence.text
    # An unquoted timestamp (PyYAML makes it a datetime) is read the same.
    assert res.events[4].time == utc(2026, 11, 2, 10, 10, 1)


def test_kueue_workload_preempted_json() -> None:
    res = read("kueue_workload_preempted.json", "kueue-workload")
    assert res.issues == []
    by_type = {e.fields["type"]: e for e in res.events}
    assert by_type["Evicted"].fields["reason"] == "Preempted"
    assert by_type["Preempted"].fields["reason"] == "InClusterQueue"
    assert str(by_type["Preempted"].fields["message"]).startswith("Preempted to accommodate a workload (UID: ")
    assert by_type["Admitted"].fields["status"] == "False"
    assert by_type["Evicted"].time == utc(2026, 11, 2, 10, 0, 0)
    assert by_type["Evicted"].evidence.line is None  # JSON keeps no line numbers


def test_unparseable_yaml_is_one_issue_and_no_events() -> None:
    res = read("broken.yaml", "kueue-workload")
    assert res.events == []
    assert len(res.issues) == 1
    assert res.issues[0].line is not None and res.issues[0].line >= 6
    assert "YAML" in res.issues[0].message


def test_wrong_object_kind_is_reported() -> None:
    res = read("pods.yaml", "kueue-workload")
    assert res.events == []
    assert len(res.issues) == 1
    assert "kind" in res.issues[0].message and "PodList" in res.issues[0].message


def test_bad_json_is_an_issue() -> None:
    res = read_scheduler(b'{"kind": "Workload", "status": ', "kueue-workload", "w.json", job_id=None, tz=UTC)
    assert res.events == []
    assert len(res.issues) == 1 and "JSON" in res.issues[0].message


# --------------------------------------------------------------------------
# Pods
# --------------------------------------------------------------------------


def test_podlist_oomkilled_error_evicted() -> None:
    res = read("pods.yaml", "k8s-pods")
    assert res.issues == []
    pods = {(e.fields["pod"], e.fields.get("container")): e for e in res.events if e.kind == "k8s.pod"}
    assert len(pods) == 4
    # the worker's container waiting in CrashLoopBackOff is also the kubelet's back-off of it (extract/container.py
    # backoff_fields): the workload's own container, a symptom
    (loop,) = [e for e in res.events if e.kind == "k8s.backoff"]
    assert (loop.node, loop.fields["pod"], loop.fields["container"]) == (
        "node-02", "llama-pretrain-worker-1", "pytorch")

    err = pods[("llama-pretrain-worker-0", "pytorch")]
    assert err.kind == "k8s.pod"
    assert err.node == "node-01"
    assert err.fields["reason"] == "Error"
    assert err.fields["exit_code"] == 143 and err.fields["signal"] == 15
    assert err.fields["restart"] is False
    assert err.fields["phase"] == "Failed"
    assert err.time == utc(2026, 11, 2, 10, 3, 15)

    oom = pods[("llama-pretrain-worker-1", "pytorch")]
    assert oom.node == "node-02"
    assert oom.fields["reason"] == "OOMKilled"
    assert oom.fields["exit_code"] == 137 and oom.fields["signal"] == 9
    assert oom.fields["restart"] is True  # from lastState
    assert oom.time == utc(2026, 11, 2, 10, 2, 58)
    assert oom.evidence.line is not None
    assert "node=node-02" in oom.evidence.text and "OOMKilled" in oom.evidence.text

    init = pods[("llama-pretrain-worker-1", "fetch-dataset")]
    assert init.fields["reason"] == "Completed" and init.fields["exit_code"] == 0
    assert "signal" not in init.fields

    evicted = pods[("llama-pretrain-worker-2", None)]
    assert evicted.fields["reason"] == "Evicted"
    assert str(evicted.fields["message"]).startswith("The node was low on resource: memory.")
    assert evicted.node == "node-03"
    assert evicted.time == utc(2026, 11, 2, 10, 4, 30)  # the DisruptionTarget condition

    assert res.hosts == {"node-01", "node-02", "node-03"}


def test_podlist_json_node_shutdown_and_explicit_signal() -> None:
    res = read("pods_shutdown.json", "k8s-pods")
    assert res.issues == []
    pods = {(e.fields["pod"], e.fields.get("container")): e for e in res.events}
    shutdown = pods[("finetune-worker-3", None)]
    assert shutdown.fields["reason"] == "Terminated"
    assert shutdown.fields["message"] == "Pod was terminated in response to imminent node shutdown."
    assert shutdown.node == "gpu-node-17"
    assert shutdown.time == utc(2026, 11, 2, 10, 6, 0)  # latest condition change
    abort = pods[("finetune-worker-4", "trainer")]
    assert abort.fields["exit_code"] == 134 and abort.fields["signal"] == 6
    assert "DistBackendError" in str(abort.fields["message"])
    shipper = pods[("finetune-worker-4", "log-shipper")]
    assert shipper.fields["signal"] == 9
    # A pod with terminated containers gets no extra pod-level event.
    assert len(res.events) == 3


# --------------------------------------------------------------------------
# Events
# --------------------------------------------------------------------------


def test_eventlist_node_not_ready_and_pod_events() -> None:
    res = read("events.yaml", "k8s-events")
    events = [e for e in res.events if e.kind == "k8s.event"]
    reasons = [e.fields["reason"] for e in events]
    assert reasons == ["NodeNotReady", "BackOff", "EvictedDueToPodsReadyTimeout"]
    # the BackOff event is also read as the kubelet's back-off of the container its fieldPath names
    (loop,) = [e for e in res.events if e.kind == "k8s.backoff"]
    assert (loop.node, loop.fields["pod"], loop.fields["container"]) == (
        "node-02", "llama-pretrain-worker-1", "pytorch")

    nnr = events[0]
    assert nnr.kind == "k8s.event"
    assert nnr.node == "node-02"
    assert nnr.fields["object_kind"] == "Node" and nnr.fields["object_name"] == "node-02"
    assert nnr.fields["message"] == "Node node-02 status is now: NodeNotReady"
    assert nnr.fields["type"] == "Normal"
    assert nnr.time == utc(2026, 11, 2, 10, 3, 40)

    backoff = events[1]
    assert backoff.node == "node-02"  # source.host
    assert backoff.fields["object_kind"] == "Pod"
    assert backoff.fields["type"] == "Warning"
    assert backoff.time == utc(2026, 11, 2, 10, 3, 31)  # lastTimestamp, not firstTimestamp

    kueue = events[2]
    assert kueue.node is None
    assert kueue.time == datetime(2026, 11, 2, 10, 10, 1, 482913, tzinfo=UTC)  # eventTime

    assert len(res.issues) == 1
    assert "reason" in res.issues[0].message and "items[3]" in res.issues[0].message
    assert res.hosts == {"node-02"}


def test_events_k8s_io_v1_shape() -> None:
    data = b"""{"kind": "EventList", "apiVersion": "events.k8s.io/v1", "items": [
      {"kind": "Event", "reason": "Rebooted", "note": "Node gpu-7 has been rebooted, boot id: 1d2c",
       "type": "Warning", "regarding": {"kind": "Node", "name": "gpu-7"},
       "eventTime": "2026-11-02T10:05:00.000000Z"}]}"""
    res = read_scheduler(data, "k8s-events", "ev.json", job_id=None, tz=UTC)
    assert res.issues == []
    (ev,) = res.events
    assert ev.node == "gpu-7"
    assert ev.fields["message"] == "Node gpu-7 has been rebooted, boot id: 1d2c"
    assert ev.time == utc(2026, 11, 2, 10, 5, 0)


def test_running_job_time_is_its_start_not_the_projected_end() -> None:
    data = (
        b"JobId=78 JobName=x JobState=RUNNING Reason=None ExitCode=0:0 "
        b"StartTime=2026-11-02T10:00:00 EndTime=2026-11-03T10:00:00 NodeList=n1\n"
        b"JobId=79 JobName=y JobState=PENDING Reason=Priority ExitCode=0:0 "
        b"StartTime=2026-11-02T12:00:00 EndTime=2026-11-03T12:00:00 NodeList=(null)\n"
    )
    res = read_scheduler(data, "scontrol", "s", job_id=None, tz=UTC)
    running, pending = res.events
    assert running.time == utc(2026, 11, 2, 10, 0, 0)
    assert pending.time is None and pending.fields["reason"] == "Priority"
    assert "nodelist" not in pending.fields
