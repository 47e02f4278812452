"""catalog/scheduler.yaml audited against the schedulers' own enumerations: each member added by the audit, read in
every form its printer prints it (a key's value in scontrol's pairs, describe's `Reason:`, YAML, JSON, a `kubectl get`
table, an event row, LSF's job report), and the near misses (the word as prose, inside a longer identifier, another
key's value).

Provenance: the words and message formats are the printers' own source (cited per case); the lines around them are
constructed in each printer's layout (labelled so), none copied from a wild-corpus bundle.
"""

from __future__ import annotations

import pytest

from firstfault.catalog.tables import sched_tables
from firstfault.extract.endstate import line_reading
from firstfault.extract.kube import read_k8s
from firstfault.extract.kubetext import read_kubectl_text
from tests.extract.test_endstate import causes, describe, pods

# (scheduler, field, word, reason) of every row the audit added: each must stay a row with that reason.
ADDED = [
    ("slurm", "reason", "DeadLine", "time_limit"),  # job_state_reason.c FAIL_DEADLINE
    ("lsf", "reason", "TERM_CWD_NOTEXIST", "setup"),  # IBM LSF 10.1 termination reasons, 25
    ("htcondor", "hold_code", "7", "setup"),  # UnableToOpenOutput
    ("htcondor", "hold_code", "8", "setup"),  # UnableToOpenInput
    ("htcondor", "hold_code", "14", "setup"),  # IwdError
    ("htcondor", "hold_code", "35", "setup"),  # InvalidDockerImage
    ("kubernetes", "reason", "Rebooted", "node_failure"),  # pkg/kubelet/events NodeRebooted
    ("kubernetes", "reason", "NodeAffinity", "placement"),  # kubelet admission, predicate.go
    ("kubernetes", "reason", "NodeSelectorMismatching", "placement"),
    ("kubernetes", "reason", "InsufficientFreeCPU", "placement"),
    ("kubernetes", "reason", "InsufficientFreeMemory", "placement"),
    ("kubernetes", "reason", "FailedIndexes", "backoff_limit"),  # batch/v1 JobReasonFailedIndexes
    ("kubernetes", "reason", "MaxFailedIndexesExceeded", "backoff_limit"),
    ("kubernetes", "reason", "FailedJobs", "backoff_limit"),  # jobset pkg/constants
    ("kubernetes", "reason", "ReachedMaxRestarts", "backoff_limit"),
    ("kubernetes", "reason", "InClusterQueue", "preemption"),  # kueue workload_types.go
    ("kubernetes", "reason", "InCohortReclamation", "preemption"),
    ("kubernetes", "reason", "InCohortFairSharing", "preemption"),
    ("kubernetes", "reason", "InCohortReclaimWhileBorrowing", "preemption"),
    ("kubernetes", "reason", "NodeFailures", "node_failure"),
]


@pytest.mark.parametrize(("sched", "field", "word", "reason"), ADDED)
def test_every_added_member_is_a_row_with_its_reason(sched: str, field: str, word: str, reason: str) -> None:
    rows = [w for w in sched_tables().words if (w.scheduler, w.field, w.word) == (sched, field, word)]
    assert [w.reason for w in rows] == [reason]


# The Kubernetes reason words in each record layout a pasted record has: describe's `Reason:`, YAML's `reason:`,
# JSON's `"reason": "..."`. The cause each must give in the job-output path (`causes`: the event's due_to).
KUBE_WORDS = [(w, r) for s, f, w, r in ADDED if s == "kubernetes"]


@pytest.mark.parametrize(("word", "reason"), KUBE_WORDS)
@pytest.mark.parametrize("layout", ["    Reason:       {w}", "    reason: {w}", '      "reason": "{w}",'])
def test_a_kubernetes_member_in_each_record_layout(word: str, reason: str, layout: str) -> None:
    hit = line_reading(layout.format(w=word))
    assert hit is not None and (hit.reason, hit.scheduler) == (reason, "kubernetes")
    assert [due for _, due in causes([layout.format(w=word)])] == [reason]


@pytest.mark.parametrize("line", [
    # scontrol show job's pairs (src/api/job_info.c: `JobState=%s Reason=%s Dependency=%s`), one line and wrapped
    "JobId=7 JobName=train UserId=u(1000) JobState=DEADLINE Reason=DeadLine Dependency=(null)",
    "   JobState=DEADLINE Reason=DeadLine Dependency=(null)",
    # slurmrestd's / `squeue --json`'s job (data_parser v0.0.43 parsers.c: `state_reason`)
    '      "state_reason": "DeadLine",',
])
def test_slurms_deadline_reason_in_scontrol_and_json(line: str) -> None:
    assert causes([line]) == [("process.signal", "time_limit")]


@pytest.mark.parametrize("line", [
    # slurmrestd's JSON of a pending job and of a job that has none (job_state_reason.c WAIT_PRIORITY, WAIT_NO_REASON)
    '      "state_reason": "Priority",',
    '      "state_reason": "None",',
    # the word as prose, and a longer identifier that begins with it
    "the job hit its DeadLine before the checkpoint was written",
    "   JobState=RUNNING Reason=DeadLineSoon Dependency=(null)",
    # FAIL_DOWN_PARTITION prints what WAIT_PART_DOWN prints: a pending job's, no end
    "   JobState=PENDING Reason=PartitionDown Dependency=(null)",
])
def test_slurm_reasons_that_name_no_end(line: str) -> None:
    assert causes([line]) == []


def test_lsf_cwd_notexist_in_the_job_report_and_as_a_record_word() -> None:
    # LSF's job report at the end of the job's output (the layout of IBM LSF 10.1's "Job report" sample, the TERM_
    # line and its description the termination reasons table's): the record is FAILED for the job's set-up.
    from firstfault.extract.jobend import EXTRACTORS
    from tests.extract.helpers import scan
    report = [
        "Subject: Job 4711: <train> in cluster <c1> Exited",
        "Job <train> was submitted from host <login1> by user <u> in cluster <c1>.",
        "Job was executed on host(s) <gpu07>, in queue <gpu>, as user <u> in cluster <c1>.",
        "TERM_CWD_NOTEXIST: Current working directory is not accessible or does not exist on the execution host.",
        "Exited with exit code 1.",
        "",
        "Resource usage summary:",
    ]
    drafts = scan(EXTRACTORS, report, "application")
    jobs = [d for d in drafts if d.kind == "sched.job"]
    assert [(d.fields.get("due_to"), d.fields.get("reason"), d.fields.get("state")) for d in jobs] == [
        ("setup", "TERM_CWD_NOTEXIST", "FAILED")]
    # the TERM_ line alone (a bjobs -l or bhist -l paste) is the job's set-up failing
    alone = scan(EXTRACTORS, [report[3]], "application")
    assert [(d.kind, d.fields.get("setup")) for d in alone] == [("app.exception", True)]
    # near misses: a longer identifier that begins with the keyword, the keyword's description without it
    assert scan(EXTRACTORS, ["TERM_CWD_NOTEXIST_RETRY=3 set in lsb.params"], "application") == []
    assert [d for d in scan(EXTRACTORS, ["cwd does not exist on the execution host, skipping"], "application")
            if d.fields.get("setup")] == []


@pytest.mark.parametrize(("line", "reason"), [
    # condor_q -l / condor_history -l (the job ad's `HoldReasonCode = 14`), the condor_holdcodes.h numbers
    ("HoldReasonCode = 14", "setup"),
    ("LastHoldReasonCode = 7", "setup"),
    ("HoldReasonCode = 35", "setup"),
])
def test_htcondor_set_up_hold_codes(line: str, reason: str) -> None:
    hit = line_reading(line)
    assert hit is not None and (hit.reason, hit.scheduler) == (reason, "htcondor")


@pytest.mark.parametrize("line", [
    "HoldReasonCode = 12",  # TransferOutputError: the transfer's errno in the reason decides
    "HoldReasonCode = 6",  # FailedToCreateProcess: the node's or the job's
    "HoldReasonCode = 26",  # SystemPolicy: the policy's expression decides
    "ExitCode = 14",  # another key's value
])
def test_htcondor_codes_that_name_no_cause(line: str) -> None:
    hit = line_reading(line)
    assert hit is None or hit.reason is None


# kubelet admission (pkg/kubelet/lifecycle/predicate.go): the pod's status as `kubectl describe pod` prints it; the
# failed filter's name is the reason, `Predicate %s failed` the message after `Pod was rejected: `.
DESCRIBE_NODE_AFFINITY = """\
Name:             trainer-0
Namespace:        default
Node:             gpu-node-3/10.0.0.3
Status:           Failed
Reason:           NodeAffinity
Message:          Pod was rejected: Predicate NodeAffinity failed
"""


def test_node_affinity_refusal_in_describe_json_and_the_get_table() -> None:
    assert describe(DESCRIBE_NODE_AFFINITY) == [("k8s.pod", "placement")]
    pod = ('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer-0", "namespace": "default"},'
           ' "spec": {"nodeName": "gpu-node-3"}, "status": {"phase": "Failed", "reason": "NodeAffinity",'
           ' "message": "Pod was rejected: Predicate NodeAffinity failed"}}')
    assert pods(pod) == [("k8s.pod", "placement")]
    table = ("NAME        READY   STATUS         RESTARTS   AGE\n"
             "trainer-0   0/1     NodeAffinity   0          5m\n"
             "trainer-1   1/1     Running        0          5m\n")
    res = read_kubectl_text(table, "k8s-table", "pods.txt")
    assert [(e.kind, e.fields.get("due_to")) for e in res.events] == [("k8s.pod", "placement")]
    # the message alone, pasted
    assert causes(["Message: Pod was rejected: Predicate NodeAffinity failed"]) == [("k8s.event", "placement")]


@pytest.mark.parametrize("line", [
    # a manifest's field, not a record's reason
    "      nodeAffinity:",
    "    nodeAffinity: requiredDuringSchedulingIgnoredDuringExecution",
    # the scheduler's FailedScheduling message (pkg/scheduler/framework/plugins/nodeaffinity ErrReasonPod): a pod left
    # waiting, no refusal of one placed
    "Warning  FailedScheduling  default-scheduler  0/4 nodes are available: 4 node(s) didn't match Pod's node "
    "affinity/selector.",
])
def test_node_affinity_near_misses(line: str) -> None:
    assert [c for c in causes([line]) if c[1] == "placement"] == []


def test_the_kubelets_rebooted_event_in_the_events_table_and_json() -> None:
    # pkg/kubelet/nodestatus/setters.go: `Node %s has been rebooted, boot id: %s`, a Warning event on the Node
    table = ("LAST SEEN   TYPE      REASON     OBJECT            MESSAGE\n"
             "5m          Warning   Rebooted   node/gpu-node-3   Node gpu-node-3 has been rebooted, boot id: 1b2c3d\n")
    res = read_kubectl_text(table, "k8s-table", "events.txt")
    assert [(e.kind, e.fields.get("due_to"), e.node) for e in res.events] == [
        ("k8s.event", "node_failure", "gpu-node-3")]
    events = ('{"kind":"EventList","apiVersion":"v1","items":[{"kind":"Event","metadata":{"name":"gpu-node-3.1"},'
              '"involvedObject":{"kind":"Node","name":"gpu-node-3"},"reason":"Rebooted","message":"Node gpu-node-3 has'
              ' been rebooted, boot id: 1b2c3d","type":"Warning","lastTimestamp":"2025-01-01T00:00:00Z",'
              '"source":{"component":"kubelet","host":"gpu-node-3"}}]}')
    res = read_k8s(events, "k8s-events", "events.json")
    assert [(e.kind, e.fields.get("due_to"), e.node) for e in res.events] == [
        ("k8s.event", "node_failure", "gpu-node-3")]
    # near misses: the word in prose, the kubelet's start event
    assert causes(["INFO rebooted the node after the run finished"]) == []
    assert causes(["  Normal   Starting   5m   kubelet  Starting kubelet."]) == []


def test_kueue_reasons_in_a_pasted_workload_and_read_whole() -> None:
    # kueue pkg/scheduler/preemption: the Preempted condition's reason and its human-readable message
    wl = ("apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata:\n  name: job-trainer-1a2b3\nstatus:\n"
          "  conditions:\n  - lastTransitionTime: \"2025-01-01T00:00:00Z\"\n"
          "    message: 'Preempted to accommodate a workload (UID: 123) due to reclamation within the cohort'\n"
          "    reason: InCohortReclamation\n    status: \"True\"\n    type: Preempted\n")
    assert causes(wl.splitlines()) == [("process.signal", "preemption")]
    res = read_k8s(wl, "kueue-workload", "wl.yaml")
    assert [(e.kind, e.fields.get("type"), e.fields.get("reason")) for e in res.events] == [
        ("kueue.condition", "Preempted", "InCohortReclamation")]
    # a reason of the queue's own bookkeeping, pasted alone, is no row (rule scheduler-evicted reads it with its type)
    assert causes(["    reason: PodsReadyTimeout"]) == []


# A Workload's condition, read whole, and what it says of the workload's end: its event's `due_to` (what the rules
# match), the engine's terminal state and the Blueprint's (identify/kueue.py), all by one reading (kueue_end). Reasons
# from kueue apis/kueue/v1beta2/workload_types.go (ff69552e); `DeactivatedDueTo...` is the Evicted reason Kueue writes
# when it deactivates a workload for a DeactivationTarget reason; the last is a reason of a later release.
@pytest.mark.parametrize(("typ", "status", "reason", "due", "state"), [
    ("Evicted", "True", "Preempted", "preemption", "PREEMPTED"),
    ("Preempted", "True", "InCohortReclamation", "preemption", "PREEMPTED"),
    ("Preempted", "True", "InCohortFairSharing", "preemption", "PREEMPTED"),
    ("Evicted", "True", "PodsReadyTimeout", "eviction", "FAILED"),
    ("Evicted", "True", "ClusterQueueStopped", "eviction", "FAILED"),
    ("Evicted", "True", "DeactivatedDueToMaximumExecutionTimeExceeded", "time_limit", "TIMEOUT"),
    ("Evicted", "True", "NodeFailures", "node_failure", "NODE_FAIL"),
    ("Evicted", "True", "EvictedOnManagerCluster", None, "FAILED"),
    ("Evicted", "True", "SomeReasonOfALaterRelease", "eviction", "FAILED"),
    ("Finished", "True", "Succeeded", None, "COMPLETED"),
    ("Finished", "True", "Failed", None, "FAILED"),
    # near misses: a condition that is not True, or that ends nothing
    ("Evicted", "False", "Preempted", None, None),
    ("Preempted", "False", "InClusterQueue", None, None),
    ("Admitted", "True", "Admitted", None, None),
    ("DeactivationTarget", "True", "MaximumExecutionTimeExceeded", None, None),
])
def test_a_kueue_condition_ends_the_workload_one_way_for_rules_engine_and_blueprint(
        typ: str, status: str, reason: str, due: str | None, state: str | None) -> None:
    from firstfault.engine.normalise import terminal_state
    from firstfault.identify.kueue import _terminal

    wl = ("apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata:\n  name: job-trainer-1a2b3\nstatus:\n"
          "  conditions:\n  - lastTransitionTime: \"2025-01-01T00:00:00Z\"\n"
          f"    message: m\n    reason: {reason}\n    status: \"{status}\"\n    type: {typ}\n")
    [ev] = read_k8s(wl, "kueue-workload", "wl.yaml").events
    assert ev.fields.get("due_to") == due
    assert terminal_state([ev], None)[0] == state
    cond = {"type": typ, "status": status, "reason": reason, "lastTransitionTime": "2025-01-01T00:00:00Z"}
    assert _terminal({typ: cond})[0] == state


def test_a_held_job_ad_with_a_set_up_code_is_the_jobs_set_up() -> None:
    # condor_q -l's ad of a held job (the layout of the attributes the manual's "Job ClassAd Attributes" names;
    # HoldReasonCode 14 IwdError with its errno as the subcode; the starter's words constructed)
    from datetime import UTC

    from firstfault.extract.batch import read_batch
    ad = ("ClusterId = 12\nProcId = 0\nJobStatus = 5\nHoldReasonCode = 14\nHoldReasonSubCode = 2\n"
          "HoldReason = \"Error from slot1_3@e327.example.edu: Failed to change directory to /scratch/u/run: No such"
          " file or directory (errno 2)\"\nLastRemoteHost = \"slot1_3@e327.example.edu\"\n")
    res = read_batch(ad, "htcondor-ad", "job.ad", job_id=None, tz=UTC)
    assert [(e.fields.get("state"), e.fields.get("due_to"), e.fields.get("nodelist")) for e in res.events] == [
        ("FAILED", "setup", "e327.example.edu")]
    # a user's hold (1) names nothing: the job is held, no cause
    res = read_batch(ad.replace("HoldReasonCode = 14", "HoldReasonCode = 1").replace(
        "Error from slot1_3@e327.example.edu: Failed to change directory to /scratch/u/run: No such file or directory"
        " (errno 2)", "via condor_hold (by user u)"), "htcondor-ad", "job.ad", job_id=None, tz=UTC)
    assert [e.fields.get("due_to") for e in res.events] in ([], [None])
