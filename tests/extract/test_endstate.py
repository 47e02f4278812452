"""A workload manager's end state in whatever layout it was posted (extract/endstate.py): (key, value) pairs read
through catalog/scheduler.yaml's keys, words, texts and resources, in a job's output (extract/jobend.py) and in the
kubectl readers (kubetext.py, kube.py). Every block is as posted in the public thread named beside it (none of
them is a wild-corpus bundle's); expectations are the thread's own diagnosis."""

from __future__ import annotations

from datetime import UTC

import pytest

from firstfault.extract.batch import read_batch
from firstfault.extract.endstate import excessive_use, key_name, limit_exceeded, line_reading, policy_expression
from firstfault.extract.jobend import EXTRACTORS
from firstfault.extract.kube import read_k8s
from firstfault.extract.kubetext import read_kubectl_text
from tests.extract.helpers import scan


def causes(lines: list[str]) -> list[tuple[str, object]]:
    """The job-output extractors' events that name a cause: (kind, due_to or who killed for memory)."""
    drafts = scan(EXTRACTORS, lines, "application")
    return [(d.kind, d.fields.get("due_to") or d.fields.get("proc")) for d in drafts
            if d.kind == "host.oom_kill" or d.fields.get("due_to") is not None]


def describe(text: str) -> list[tuple[str, object]]:
    res = read_kubectl_text(text, "k8s-describe", "describe.txt")
    return [(e.kind, e.fields.get("due_to")) for e in res.events]


def pods(text: str) -> list[tuple[str, object]]:
    res = read_k8s(text, "k8s-pods", "pod.yaml")
    return [(e.kind, e.fields.get("due_to")) for e in res.events]


# --------------------------------------------------------------------------
# Positive: the same end state in each layout, each scheduler
# --------------------------------------------------------------------------

# gimlet-io/gimlet#649 (https://github.com/gimlet-io/gimlet/issues/649): "Alerts should trigger if the `kubectl
# describe pod <pod-name>` command has a `Last State` section of:" -- a container's state cut out of its pod, at
# column 0.
GIMLET_649 = """\
Last State:     Terminated
  Reason:       OOMKilled
  Exit Code:    137
  Started:      Fri, 15 Sep 2023 09:56:14 +0200
  Finished:     Fri, 15 Sep 2023 09:56:17 +0200
"""

# hmcts/cnp-flux-config#28772 (https://github.com/hmcts/cnp-flux-config/pull/28772) "seeing OOM": the pod row and the
# container's state, pasted in the description (the memory limit was raised).
HMCTS_28772 = """\
kubectl get pods
NAME                                                 READY   STATUS      RESTARTS      AGE
tax-tribunals-application-base-74464f6b98-2kj6g      0/1     OOMKilled   4 (57s ago)   2m40s
    Last State:     Terminated
      Reason:       OOMKilled
"""


def test_a_describe_state_cut_out_of_its_pod_is_read_in_the_job_output_and_as_a_describe_file() -> None:
    assert causes(GIMLET_649.splitlines()) == [("host.oom_kill", "kubernetes")]
    assert ("k8s.pod", "memory_limit") in describe(GIMLET_649)


def test_a_pod_row_and_its_state_pasted_together() -> None:
    assert ("host.oom_kill", "kubernetes") in causes(HMCTS_28772.splitlines())


def test_a_describe_state_that_lost_its_indentation_keeps_its_reason() -> None:
    # The three lines of a posted describe, each indented alike (the paste lost the state's own indentation).
    text = "      Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n"
    assert describe(text) == [("k8s.pod", "memory_limit")]


# kubernetes/kubernetes#3044 (https://github.com/kubernetes/kubernetes/pull/3044): the docker-era kubelet's status
# of an OOM-killed container, `"reason": "OOM Killed"`, in JSON.
K8S_3044 = """\
        "oom-test": {
            "state": {
                "termination": {
                    "exitCode": 137,
                    "reason": "OOM Killed",
                    "startedAt": "2014-12-18T23:22:25Z",
                    "finishedAt": "2014-12-18T23:22:26Z"
                }
            },
"""


def test_an_old_spelling_of_the_reason_is_a_word_of_the_table_read_as_a_keys_value() -> None:
    assert causes(K8S_3044.splitlines()) == [("host.oom_kill", "kubernetes")]
    # The two words are read only as a reason key's value, never as prose.
    assert causes(["the container got OOM Killed after a while"]) == []


# moby/moby#15621 (https://github.com/moby/moby/issues/15621): "then do `docker inspect`, I see `"OOMKilled": true`
# and `"ExitCode": 137`" (a container run with `-m 200m`).
def test_dockers_oomkilled_flag_true_is_the_memory_cgroups_kill() -> None:
    line = 'python /waste_memory.py` and then do `docker inspect`, I see `"OOMKilled": true` and `"ExitCode": 137`.'
    assert causes([line]) == [("host.oom_kill", "docker")]


# aws/amazon-ecs-agent#1187 (https://github.com/aws/amazon-ecs-agent/issues/1187): the ECS console's task status, a
# tab between each key and its value ("It usually means that your application needs more memory").
def test_an_ecs_status_reason_in_the_consoles_layout() -> None:
    line = " Status reason\tOutOfMemoryError: Container killed due to memory usage Exit Code\t137"
    assert causes([line]) == [("host.oom_kill", "ecs")]


# kubernetes/kubernetes#104798 (https://github.com/kubernetes/kubernetes/pull/104798): pods of a node that was shut
# down, `kubectl describe pod` (graceful node shutdown).
K8S_104798 = """\
Name:         nginx-deployment-66b6c48dd5-2pw4q
Namespace:    default
Priority:     0
Node:         k22-node1/10.80.230.235
Start Time:   Tue, 07 Sep 2021 16:41:51 +0000
Status:       Running
Reason:       Terminated
Message:      Pod was terminated in response to imminent node shutdown.
"""


def test_a_pod_ended_by_its_nodes_shutdown_is_its_preemption() -> None:
    assert describe(K8S_104798) == [("k8s.pod", "preemption")]
    assert causes(K8S_104798.splitlines()) == [("process.signal", "preemption")]
    # The reason word alone names nothing: `Terminated` is also every container's ordinary end.
    assert causes(["Reason:       Terminated"]) == []


# dmwm/CRABServer#9367 (https://github.com/dmwm/CRABServer/issues/9367): CRAB's post-job log of a job HTCondor's
# PeriodicRemove took off for its memory.
CRAB_9367 = ("Mon, 27 Jul 2026 11:05:34 CEST(+0200):ERROR:RetryJob Job killed by HTCondor due to excessive memory use "
             "(RSS=2250 MB). Will not retry it.")


def test_a_kill_for_excessive_use_of_a_named_resource() -> None:
    assert causes([CRAB_9367]) == [("host.oom_kill", "scheduler")]
    reading = excessive_use(CRAB_9367)
    assert reading is not None and (reading.reason, reading.resource) == ("memory_limit", "memory")


# A BLAST wrapper's submit script in a public repository (the search tool's code index does not name it) keeps, as a
# comment, the event log of a job its `periodic_remove` held:
#   012 (38534006.002.000) 08/31 13:29:19 Job was held.
#       The job attribute PeriodicRemove expression '( ServerTime - JobCurrentStartDate ) >= 7200' evaluated to
#       UNDEFINED          (one line in the log)
#       Code 5 Subcode 0
HELD_UNDEFINED = ("    The job attribute PeriodicRemove expression '( ServerTime - JobCurrentStartDate ) >= 7200' "
                  "evaluated to UNDEFINED")


def test_an_htcondor_policy_names_its_resource_by_the_attributes_of_its_expression() -> None:
    # The same expression had it evaluated to TRUE (the value changed here, not posted so): a run time limit.
    fired = HELD_UNDEFINED.replace("UNDEFINED", "TRUE")
    reading = policy_expression(fired)
    assert reading is not None and (reading.reason, reading.resource) == ("time_limit", "time")
    assert causes([fired]) == [("process.signal", "time_limit")]


# --------------------------------------------------------------------------
# Near misses: the table's words where they are no end state
# --------------------------------------------------------------------------

# AbdBarho/stable-diffusion-webui-docker#457 (https://github.com/AbdBarho/stable-diffusion-webui-docker/issues/457),
# docker/cli#2665: `docker inspect` of a container that exited 137 without the memory cgroup's kill.
INSPECT_457 = """\
        "State": {
            "Status": "exited",
            "Running": false,
            "Paused": false,
            "Restarting": false,
            "OOMKilled": false,
            "Dead": false,
            "Pid": 0,
            "ExitCode": 137,
            "Error": "",
"""


def test_a_false_oomkilled_flag_says_there_was_no_memory_kill() -> None:
    assert causes(INSPECT_457.splitlines()) == []
    # coderaiser/cloudcmd#440: the same state printed without quotes.
    assert causes(["OOMKilled:false,"]) == []


# kubernetes/kubernetes#122256 (https://github.com/kubernetes/kubernetes/issues/122256): a container restarted once
# and running again (its Last State an exit 137), as posted.
K8S_122256 = """\
wk64c
    State: Running
      Started: Mon, 13 Nov 2023 03:50:57 +0100
    Last State: Terminated
      Reason: Error
      Exit Code: 137
      Started: Mon, 13 Nov 2023 03:48:52 +0100
      Finished: Mon, 13 Nov 2023 03:50:55 +0100
    Ready: True
    Restart Count: 1
"""


def test_a_restart_that_recovered_is_no_cause() -> None:
    assert causes(K8S_122256.splitlines()) == []
    # The same block with the memory kill as its earlier end: still a container running again.
    recovered = K8S_122256.replace("Reason: Error", "Reason: OOMKilled")
    assert causes(recovered.splitlines()) == []
    assert all(due is None for _, due in describe("Containers:\n  c:\n" + recovered.split("\n", 1)[1]))
    # Without the Running state above it the same Last State is the container's end.
    assert causes(recovered.splitlines()[3:]) == [("host.oom_kill", "kubernetes")]


def test_a_recovered_restart_in_a_pods_yaml_is_no_cause() -> None:
    # kubectl get pod -o yaml prints lastState before state (its keys sorted): the state running again.
    status = """\
- lastState:
    terminated:
      exitCode: 137
      reason: OOMKilled
  name: trainer
  restartCount: 1
  state:
    running:
      startedAt: "2023-11-13T02:50:57Z"
"""
    assert pods(status) == [("k8s.pod", None)]
    assert pods(status.replace("  state:\n    running:", "  state:\n    waiting:")) == [("k8s.pod", "memory_limit")]


def test_a_reason_in_a_query_a_template_or_a_comment_is_no_end_state() -> None:
    # An alert rule as public monitoring notes write it for kube-state-metrics' metric, and a Helm-style comment.
    assert causes(['        kube_pod_container_status_last_terminated_reason{reason="OOMKilled"} == 1']) == []
    assert causes(['        description: "Container {{ $labels.container }} was OOMKilled. Consider increasing'
                   ' memory limits."']) == []
    assert causes(["# if the pod gets OOMKilled, raise resources.limits.memory"]) == []


def test_a_reason_that_names_no_cause_and_a_completed_pod() -> None:
    assert causes(["      Reason:       Completed", "      Exit Code:    0"]) == []
    assert causes(['{"reason": "Error", "exitCode": 1}']) == []


def test_a_policy_that_did_not_evaluate_true_or_names_no_single_resource_names_none() -> None:
    reading = policy_expression(HELD_UNDEFINED)
    assert reading is not None and reading.reason is None
    assert causes([HELD_UNDEFINED]) == []
    # dmwm/CRABServer#5165 (https://github.com/dmwm/CRABServer/issues/5165): CRAB's PeriodicRemove names memory, disk
    # and time at once: which one removed a job, the expression does not say.
    crab = ("The job attribute PeriodicRemove expression '( ( ( JobStatus =?= 5 ) && ( time() - EnteredCurrentStatus"
            " > 7 * 60 ) ) || ( ( JobStatus =?= 2 ) && ( ( DiskUsage > 100000000 ) || ( ( MaxWallTimeMins * 60 )"
            " < ( time() - EnteredCurrentStatus ) ) || ( MemoryUsage > RequestMemory ) ) ) )' evaluated to TRUE")
    reading = policy_expression(crab)
    assert reading is not None and reading.reason is None
    # A CHTC probe's report in a public repository (the search tool's code index): a job removed for its time in the
    # queue and on hold (QDate, EnteredCurrentStatus), no resource it used.
    queued = ("- Final job state: aborted (The job attribute PeriodicRemove expression '((time() - QDate) > 7200) || "
              "(JobStatus == 5 && (time() - EnteredCurrentStatus) > 600)' evaluated to TRUE)")
    assert causes([queued]) == []


def test_a_warning_of_what_a_scheduler_would_do_is_no_kill() -> None:
    # opensciencegrid/docs#904: "HTCondor will place jobs on hold if they exceed their requested memory".
    assert excessive_use("jobs will be killed if they are held for exceeding memory usage") is None
    assert causes(["HTCondor will place jobs on hold if they exceed their requested memory,"]) == []


def test_key_names_and_a_line_without_pairs() -> None:
    assert [key_name(k) for k in ("Last State", '"exitCode"', "State.OOMKilled", "HoldReason")] == [
        "laststate", "exitcode", "oomkilled", "holdreason"]
    assert line_reading("epoch 3: loss 0.12") is None


@pytest.mark.parametrize("line", [
    # gwastro/pycbc#1428 (https://github.com/gwastro/pycbc/issues/1428): "The killed jobs end up on hold in the queue
    # with ``HoldReasonCode = 34``" (a job ad's `key = value`).
    "HoldReasonCode = 34",
    # A Pegasus workflow's status report in a public repository (the search tool's code index), a held job's reason
    # as HTCondor's starter words it (htcondor/htcondor: `Job has gone over cgroup memory limit of %lld megabytes`).
    '      "hold_reason": "Error from slot1_1@testpool-gpu-20250425144144.novalocal: Job has gone over cgroup memory'
    ' limit of 10624 megabytes. Last measured usage: 404 megabytes.  Consider resubmitting with a higher'
    ' request_memory.",',
])
def test_htcondor_job_ad_keys(line: str) -> None:
    assert causes([line]) == [("host.oom_kill", "htcondor")]


def test_a_hold_code_in_a_policy_is_no_hold() -> None:
    # gwastro/pycbc#1428's own release policy: the code compared, not a job's.
    assert causes(["periodic_release = ((HoldReasonCode =?= 34) && (RequestMemory < 8000))"]) == []


# --------------------------------------------------------------------------
# Slurm's job states and Kubernetes events, pasted as text
# --------------------------------------------------------------------------

# Real `sacct` rows as HPC centres' user guides in public repositories show a job that ran out of memory (the search
# tool's code index; `OUT_OF_ME+`: the State column cut at its width).
SACCT_ROWS = [
    "3851291.0        python              rc_admin          1 OUT_OF_ME+    0:125 ",
    "12064697        pi-cpu2    regular       wehi          2 OUT_OF_ME+    0:125 ",
]


@pytest.mark.parametrize("row", SACCT_ROWS)
def test_an_sacct_row_pasted_as_text_gives_its_state(row: str) -> None:
    assert causes([row]) == [("host.oom_kill", "slurm")]


def test_slurm_states_in_a_records_pairs() -> None:
    # A test fixture of a public Slurm client holding `scontrol show job` of a job past its limit (one line).
    scontrol = ("JobId=3 JobName=test.jcf UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901757 Nice=0 "
                "Account=root QOS=normal JobState=TIMEOUT Reason=TimeLimit Dependency=(null) Requeue=1 Restarts=0 "
                "BatchFlag=1 Reboot=0 ExitCode=0:15 RunTime=00:01:12 TimeLimit=00:01:00")
    assert causes([scontrol]) == [("process.signal", "time_limit")]


def test_slurm_states_that_name_no_cause_and_rows_that_are_no_job_table() -> None:
    # The same guides' rows of a job that completed, or failed on its own.
    assert causes(["3851291.ext+     extern              rc_admin          1  COMPLETED      0:0 ",
                   "3851291        mem_test       test   rc_admin          1     FAILED      1:0 "]) == []
    # A word of the states in a line that is no job's row: no id first, no exit code.
    assert causes(["NCCL WARN Call to connect returned TIMEOUT, retrying"]) == []


def test_kubernetes_events_pasted_as_text() -> None:
    # AliyunContainerService/kube-eventer#131 (https://github.com/AliyunContainerService/kube-eventer/issues/131):
    # kube-eventer's record of node-problem-detector's event, `key:value` without a space.
    assert causes(["Reason:OOMKilling "]) == [("host.oom_kill", "kubernetes")]
    # sapcc/kubernikus#321 (https://github.com/sapcc/kubernikus/pull/321): a node's describe Events row whose reason a
    # site's rule named: the kernel's words in its message decide.
    row = ("  Warning  PodOOMKilling  2m    kernel-monitor, <node>  Memory cgroup out of memory: Kill process 25169 "
           "(hyperkube) score 2109 or sacrifice child")
    assert causes([row]) == [("host.oom_kill", "kubernetes")]
    # An event that names no cause: the kubelet stopping a container.
    assert causes(["  Normal   Killing    2m    kubelet  Stopping container trainer"]) == []


# CESNET MetaCentrum's user documentation (its public docs repository, the search tool's code index): "In case the job
# uses more resources than it has reserved, PBS server sends a SIGKILL ... You can see the signal as `Exit_status`":
#   (BULLSEYE)user123@tarkil:~$ qstat -x -f 13030457.pbs-m1.metacentrum.cz | grep Exit_status
#       Exit_status = -29
def test_pbs_mom_kill_codes_name_their_limit() -> None:
    assert causes(["        Exit_status = -29"]) == [("process.signal", "time_limit")]
    # The same line as the qstat reader reads it (a record cut to it, its id unknown).
    [job] = read_batch("        Exit_status = -29\n", "pbs-qstat", "qstat.txt", job_id=None, tz=UTC).events
    assert (job.fields["state"], job.fields["due_to"]) == ("TIMEOUT", "time_limit")
    # near miss: a code of the MOM's that names no limit (JOB_EXEC_RETRY, the job never ran), and a job's own exit.
    assert causes(["    Exit_status = -3", "    Exit_status = 1"]) == []


def test_slurms_mail_subject_names_the_state_the_job_ended_in() -> None:
    # A Trinity assembly's notes in a public repository (the search tool's code index) keep the subjects of Slurm's
    # mails about its jobs, grouped by how they ended.
    assert causes(["Slurm Job_id=12495794 Name=G2PA.S16C1.15m.3um.A.trinity.slurm Ended, Run time 7-00:00:27, TIMEOUT,"
                   " ExitCode 0"]) == [("process.signal", "time_limit")]
    assert causes(["Slurm Job_id=12495799 Name=G2PA.S17C1.15m.3um.A.trinity.slurm Ended, Run time 00:19:01, NODE_FAIL,"
                   " ExitCode 0"]) == [("process.signal", "node_failure")]
    # near miss: a job that completed (a centre's guide: "a subject line like this") and one that failed on its own
    # (a mail-watching script's comment), both in public repositories (the search tool's code index).
    assert causes(["Slurm Job_id=48886649 Name=submit.sh Ended, Run time 00:00:01, COMPLETED, ExitCode 0",
                   "Slurm Job_id=927584 Name=SHNO_512cells_2axis-yz-400oe_bias_0.1mA Failed, Run time 00:00:07,"
                   " FAILED, ExitCode 1"]) == []


def test_another_records_key_of_the_same_name_is_no_end_state() -> None:
    # microsoft/mscclpp#493 (https://github.com/microsoft/mscclpp/issues/493): `ibstat`'s port `State:`, a key of
    # Slurm's table by its name, with values none of its states: not read, not claimed as understood.
    assert line_reading("\t\tState: Active") is None
    assert line_reading("\t\tState: Down") is None


def test_a_clouds_record_of_taking_a_vm_back() -> None:
    # cloudpilot-ai/karpenter-provider-gcp#37 (https://github.com/cloudpilot-ai/karpenter-provider-gcp/pull/37): the
    # CLI output its author posted, a Spot VM of a GKE pool preempted.
    row = ("systemevent-1746631209934-6348d44d25ec7-a6b1f0df-60d95dad  compute.instances.preempted                 "
           "us-central1-a/instances/gke-helen-c1-spot-cast-pool-df29e951           200          DONE    "
           "2025-05-07T08:20:20.201-07:00")
    assert causes([row]) == [("process.signal", "preemption")]
    # near miss: the filter that lists such operations names the type, no VM taken back.
    assert causes(['gcloud compute operations list     --filter="operationType=compute.instances"']) == []


def test_a_pair_inside_a_line() -> None:
    # A Nomad smoke test's notes in a public repository (the search tool's code index): `stress` over its memory,
    # the task event as `nomad alloc status` prints it.
    assert causes(['Exit Code: 1 / Exit Message: "OOM Killed"']) == [("host.oom_kill", "nomad")]
    # near miss: a reason key inside prose whose value is no reason word; another table's word as a reason's value
    # (Flux's `timeout`) is no Kubernetes reason.
    assert causes(["the job failed, Reason: Error in step 3"]) == []
    assert causes(["  reason: timeout"]) == []
    assert line_reading("  reason: timeout") is not None and line_reading("  reason: timeout").scheduler == ""


def test_grid_engines_execd_names_the_hard_limit_it_killed_over() -> None:
    # Built from the execd's own format (Grid Engine execd_ck_to_do.c, MSG_JOB_EXCEEDHLIM_USSFF: `job %u exceeds job
    # hard limit "%s" of queue "%s" (%8.5f > limit:%8.5f) - sending SIGKILL`), the values this test's; no thread's.
    kill = ('job 4242.1 exceeds job hard limit "h_vmem" of queue "all.q@node01" (8589934592.00000 > '
            'limit:8589934592.00000) - sending SIGKILL')
    assert causes([kill]) == [("host.oom_kill", "sge")]
    assert causes([kill.replace('"h_vmem"', '"h_cpu"')]) == [("process.signal", "time_limit")]
    # near miss: the soft limit's warning (SIGXCPU), which the job may outlive.
    assert causes([kill.replace("hard", "soft").replace('"h_vmem"', '"s_vmem"').replace("SIGKILL", "SIGXCPU")]) == []


def test_a_memory_kill_reason_over_an_exit_0_is_no_cause() -> None:
    # kubernetes/kubernetes#131530 (https://github.com/kubernetes/kubernetes/issues/131530): "The exit code of one pod
    # main container is 0. But the reason for the exit is OOM killed. However, the final status of the pod is
    # successed." -- the state as posted.
    state = """\
State:          Terminated
  Reason:       OOMKilled
  Exit Code:    0
  Started:      Tue, 29 Apr 2025 13:43:32 +0800
  Finished:     Tue, 29 Apr 2025 14:10:51 +0800
Ready:          False
Restart Count:  0
"""
    assert describe(state) == [("k8s.pod", None)]
    # near miss: the same state with the kill's exit code is the container's end.
    assert describe(state.replace("Exit Code:    0", "Exit Code:    137")) == [("k8s.pod", "memory_limit")]
    # the pod YAML's form (cortexlabs/cortex#1806 reports the same from container statuses).
    assert pods("- state:\n    terminated:\n      exitCode: 0\n      reason: OOMKilled\n") == [("k8s.pod", None)]


# virtualcell/vcell's captures of real `sacct -P -o jobid%25,jobname%25,state%13` output (Slurm 23.11.10; its
# vcell-server/src/test/resources/slurm-outputs/sacct-cancelled-by-user.txt and sacct-terminal-states.txt): rows
# split by `|`, no exit code column, a state with Slurm's `by <uid>` qualifier.
@pytest.mark.parametrize(("row", "said"), [
    ("2699001|V_ALPHA_321800001_0_0|CANCELLED by 54321", ("process.signal", "cancelled")),
    ("2699101|V_ALPHA_321800101_0_0|TIMEOUT", ("process.signal", "time_limit")),
    ("2699102|V_ALPHA_321800102_0_0|OUT_OF_MEMORY", ("host.oom_kill", "slurm")),
    ("2699103|V_ALPHA_321800103_0_0|NODE_FAIL", ("process.signal", "node_failure")),
])
def test_a_parsable_sacct_row_of_any_columns_gives_its_state(row: str, said: tuple[str, str]) -> None:
    assert causes([row]) == [said]


def test_cancelled_names_who_only_by_its_qualifier() -> None:
    # sacct(1) "JOB STATE CODES": CANCELLED by <uid>; by 0, root: an administrator's cancel (the weak reason)
    by_root = line_reading("2699001|V_ALPHA_321800001_0_0|CANCELLED by 0")
    assert by_root is not None and by_root.reason == "admin_cancelled"
    # the whitespace layout, the qualifier two cells (the same capture's row in sacct's default spacing)
    assert causes(["2699001        V_ALPHA_321800001_0_0        CANCELLED by 54321"]) == [
        ("process.signal", "cancelled")]
    # who cancelled travels with the event (the verdict's `Cancelled by uid N`)
    (d,) = scan(EXTRACTORS, ["2699001|V_ALPHA_321800001_0_0|CANCELLED by 54321"], "application")
    assert d.fields.get("by_uid") == 54321


@pytest.mark.parametrize("rows", [
    # the same capture: the job's steps, cancelled with it (no qualifier) or completed, and the header
    ["JobID|JobName|State", "2699001.batch|batch|CANCELLED", "2699001.extern|extern|COMPLETED"],
    # martius-lab/cluster_utils#87: `sacct --parsable2 --format=JobID,NodeList,State,ExitCode` of steps that died of a
    # signal: CANCELLED with no one named, and a job that completed
    ["239023|galvani-cn001|COMPLETED|0:0", "239023.0|galvani-cn001|CANCELLED|0:10"],
    # NVIDIA/cloudai#461: `sacct -j 2453846 --format=State --noheader`, the state alone and cut by its width
    ["CANCELLED+ "],
    # nebius/soperator#321: rows without an exit code whose last cell is a state naming no cause
    ["20                sleep          2                        00:00.004     FAILED ",
     "22.0              sleep          2      6036K          0  00:00.004  COMPLETED "],
    # Snakemake-Profiles/slurm#22: the qualifier in prose, no job's row
    ["On my slurm installation, a cancelled job returns a status of the form `'CANCELLED by <uid>'`."],
    # a number and a state word in prose: no row
    ["3 TIMEOUT errors were retried"],
])
def test_rows_that_name_no_cause_or_are_no_job_table(rows: list[str]) -> None:
    assert causes(rows) == []


def test_a_job_records_exit_message_names_the_limit_it_went_over() -> None:
    # dmwm/CRABServer#9366: CRAB's job report JSON as its RetryJob logs it, the wall-clock kill in `exitMsg`
    line = ('Mon, 27 Jul 2026 11:04:56 CEST(+0200):INFO:RetryJob New job_fjr.1.0.json file content: {"exitMsg": "Not '
            'retrying job due to wall clock limit (job automatically killed on the worker node)\\nJobs lasted 131.0 '
            'seconds (0:02:11) vs. 120 (0:02:00) MAX", "jobExitCode": 50664, "exitCode": 50664}')
    assert causes([line]) == [("process.signal", "time_limit")]
    # the same manager's other wordings of a limit in a record's message (dmwm/CRABServer#4375's title, Moab's mail
    # as CoBrALab/MAGeTbrain#20 quotes it)
    for message in ("Jobs that hit the wallclock limit are not detected", "job exceeded wallclock limit"):
        hit = limit_exceeded(message)
        assert hit is not None and hit.reason == "time_limit", message


@pytest.mark.parametrize("message", [
    # constructed near misses of the reader's shape (labelled as such): a limit not reached, a limit as a setting, a
    # `due to` with no scheduler's act, another kind of limit
    "Job did not exceed its memory limit",
    "batch size reduced due to memory limit",
    "The job may exceed the memory limit if the batch grows",
    "An error occurred (SlowDown): exceeded the rate limit",
])
def test_a_limit_that_was_not_reached_or_names_no_resource_is_no_kill(message: str) -> None:
    assert limit_exceeded(message) is None


def test_the_schedulers_own_codes_for_time_and_a_lost_node() -> None:
    # The codes are the manuals'; the one-pair lines that carry them are constructed in each record's layout (labelled
    # as such), except the hold reason text, which is quoted.
    # HTCondor src/condor_utils/condor_holdcodes.h: 46 JobDurationExceeded, 47 JobExecuteExceeded; a pool's hold
    # summary (the search tool's code index) quotes the schedd's reason for 47
    assert causes(["HoldReasonCode = 47"]) == [("process.signal", "time_limit")]
    assert causes(["LastHoldReason = \"The job exceeded allowed execute duration of 3+00:00:00\""]) == [
        ("process.signal", "time_limit")]
    # PBS Professional's Job Exit Codes (-14 JOB_EXEC_RERUN_ON_SIS_FAIL, -20 JOB_EXEC_RERUN_MS_FAIL; baw-server#880
    # met -20 in a real qstat): a node lost
    assert causes(["    Exit_status = -20"]) == [("process.signal", "node_failure")]
    # Kubernetes' DisruptionTarget reasons ("Pod disruption conditions")
    assert causes(["    Reason:  DeletionByPodGC"]) == [("process.signal", "node_failure")]
    assert causes(["    Reason:  EvictionByEvictionAPI"]) == [("k8s.pod", "eviction")]
    # the codes that name no cause stay so: a user's hold (1), the startd's (21)
    assert causes(["HoldReasonCode = 1", "HoldReasonCode = 21"]) == []


def test_slurms_job_reason_is_read_beside_kubernetes_reason_of_the_same_key() -> None:
    # Slurm's job_reason_string (src/common/slurm_protocol_defs.c): NodeDown, TimeLimit, OutOfMemory name a cause; a
    # `Reason` key has a row per scheduler, each reading its own words (a project's notes quote a node failure as
    # scontrol printed it, the search tool's code index)
    hit = line_reading("   JobState=FAILED Reason=NodeDown Dependency=(null)")
    assert hit is not None and (hit.reason, hit.scheduler) == ("node_failure", "slurm")
    assert causes(["(`JobState=NODE_FAIL Reason=NodeDown`)"]) == [("process.signal", "node_failure")]
    # Kubernetes' words under the same key are still Kubernetes'
    kube = line_reading("      Reason:       OOMKilled")
    assert kube is not None and (kube.reason, kube.scheduler) == ("memory_limit", "kubernetes")


@pytest.mark.parametrize("line", [
    # irush-cs/slurm-scripts t/get_jobs.t: a running job's record
    "   JobState=RUNNING Reason=None Dependency=(null)",
    # a pending job's reason and the nodes it waits for, in scontrol's layout, with the words reframe-hpc/reframe#1049
    # quotes (`ReqNodeNotAvail, UnavailableNodes:nid[...]`; the layout constructed, labelled as such)
    "JobState=PENDING Reason=ReqNodeNotAvail,_UnavailableNodes:nid[00001-11000] Dependency=(null)",
])
def test_a_pending_or_running_jobs_reason_names_no_end(line: str) -> None:
    assert causes([line]) == []
