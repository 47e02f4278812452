"""Managed batch and training services in their own words (catalog/scheduler.yaml: the rows of AWS Batch / ECS, Google
Cloud Batch, Azure Batch, SageMaker and Vertex AI; extract/jobend.py, extract/endstate.py): the status reasons, reserved
exit codes, node states and secondary statuses that say why the service ended a job, read through the real extractors
and the engine, and the near misses (a bare non-zero status, an application printing a reserved number in its own
words, a status that names no cause) that must not be read that way.

Lines marked with a source are verbatim from it, or follow its format where marked so (the ids and names are this
test's).
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.model import Event
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers


def feed(lines: list[str], source: str = "application") -> list[Event]:
    return helpers.events(lines, source, file="nodes/node-02/job.log", node="node-02")


def said(lines: list[str]) -> list[tuple[str, object, object]]:
    return [(e.kind, e.fields.get("due_to"), e.fields.get("scheduler")) for e in feed(lines)
            if e.kind in ("process.signal", "host.oom_kill", "k8s.pod")]


# Google Cloud Batch's status events, as cloud.google.com/batch/docs/troubleshooting#reserved-exit-codes prints them
# (its placeholders filled in), and as the job's own event quotes the task's (broadinstitute/cromwell's GCP Batch test
# fixture: `Job failed due to task failure. Specifically, task with index 0 failed due to the following task event:
# "Task state is updated from PENDING to FAILED on zones/... due to Spot VM preemption with exit code 50001."`).
GCB_EVENT = ("Task state is updated from RUNNING to FAILED on zones/us-central1-a/instances/{vm} due to {why} with "
             "exit code {code}.")


@pytest.mark.parametrize(("why", "code", "due"), [
    ("Spot Preemption", 50001, "preemption"),
    ("Batch no longer receives VM updates", 50002, "node_failure"),
    ("VM is rebooted during task execution", 50003, "node_failure"),
    ("task runs over the maximum runtime", 50005, "time_limit"),
    ("VM is recreated during task execution", 50006, "node_failure"),
])
def test_gcp_batch_reserved_exit_codes_in_its_status_event(why: str, code: int, due: str) -> None:
    line = GCB_EVENT.format(vm="8675309", why=why, code=code)
    assert said([line]) == [("process.signal", due, "gcp")]


@pytest.mark.parametrize("line", [
    # the job's own event quoting the task's (cromwell's fixture, with a zone and an instance filled in)
    'Job state is set from SCHEDULED to FAILED for job projects/p/locations/us-central1/jobs/train-1.Job failed due to '
    'task failure. Specifically, task with index 0 failed due to the following task event: "Task state is updated from '
    'PENDING to FAILED on zones/us-central1-a/instances/8675309 due to Spot VM preemption with exit code 50001."',
    # an event without the `due to` words (the brief of this pass quotes one so)
    "Task state is updated from RUNNING to FAILED on zones/us-central1-b/instances/4321 with exit code 50001.",
    # Nextflow's google-batch executor's task status (nextflow-io/nextflow GoogleBatchTaskHandlerTest)
    "Task failed due to Spot VM preemption with exit code 50001.",
    # `gcloud batch tasks describe`: the task execution's exit code (google.cloud.batch_v1 TaskExecution.exit_code)
    "      exitCode: 50001",
    '        "exitCode": 50001',
])
def test_gcp_batch_preemption_in_every_form(line: str) -> None:
    assert said([line]) == [("process.signal", "preemption", "gcp")]


# `gcloud batch jobs describe` prints the job's events as YAML, which folds a long description (the job's event quoting
# its task's, as cromwell's fixture reads it; the job, zone and instance here are this test's).
GCB_DESCRIBE = "\n".join([
    "status:",
    "  state: FAILED",
    "  statusEvents:",
    "  - description: 'Job state is set from RUNNING to FAILED for job "
    "projects/123/locations/us-central1/jobs/train-1.Job",
    "      failed due to task failure. Specifically, task with index 0 failed due to the",
    '      following task event: "Task state is updated from RUNNING to FAILED on '
    'zones/us-central1-b/instances/7282612962394574867',
    "      due to Spot VM preemption with exit code 50001.\"'",
    "    eventTime: '2024-05-01T10:00:00Z'",
    "    type: STATUS_CHANGED",
])


def test_a_gcp_batch_event_folded_over_yaml_lines() -> None:
    assert said(GCB_DESCRIBE.split("\n")) == [("process.signal", "preemption", "gcp")]
    folded = ["  - description: Task state is updated from RUNNING to FAILED on zones/us-central1-a/instances/123 with "
              "exit", "      code 50005."]
    assert said(folded) == [("process.signal", "time_limit", "gcp")]


@pytest.mark.parametrize("lines", [
    # a head that is no failure, then a program's own number
    ["  - description: Task state is updated from ASSIGNED to RUNNING on zones/us-central1-a/instances/123.",
     "  - note: worker reported exit code 50001"],
    # a head whose exit code is too far below it to be its own
    ["  - description: Task state is updated from RUNNING to FAILED on zones/us-central1-a/instances/123",
     "    eventTime: '2024-05-01T10:00:00Z'", "    type: STATUS_CHANGED", "  - a: 1", "  - b: 2",
     "      due to a reason with exit code 50001."],
])
def test_a_folded_event_near_miss(lines: list[str]) -> None:
    assert said(lines) == []


def test_a_gcp_batch_preemption_names_the_vm_the_event_names() -> None:
    events = feed([GCB_EVENT.format(vm="train-job-group0-0-x1z9", why="Spot Preemption", code=50001)])
    (sig,) = [e for e in events if e.kind == "process.signal"]
    assert sig.fields.get("taken") == "node"


@pytest.mark.parametrize("line", [
    # a task's own non-zero exit: no cause of the service's
    GCB_EVENT.format(vm="8675309", why="", code=1).replace(" due to  with", " with"),
    # 50000: "If the task failed but not due to the following reasons, the exit code will be 50000" (TaskExecution)
    "Task state is updated from RUNNING to FAILED on zones/us-central1-a/instances/8675309 with exit code 50000.",
    # 50004: the task and its VM unresponsive, neither named
    GCB_EVENT.format(vm="8675309", why="tasks cannot be canceled", code=50004),
    # an application printing the number in its own words (PyCharm's console, a script's log)
    "Process finished with exit code 50001",
    "ERROR: worker exited with exit code 50001",
    "retrying: attempt 3 failed, exit code 50005",
    # a kubelet's container status with another exit code under the same key
    '        "exitCode": 137,',
])
def test_gcp_batch_near_misses(line: str) -> None:
    assert said([line]) == []


# AWS Batch's job statusReason and ECS's stoppedReason, as `aws batch describe-jobs` / `aws ecs describe-tasks` print
# them: `Job attempt duration exceeded timeout` (a public RSEM pipeline report quotes it verbatim), `Host EC2 (instance
# i-...) terminated.` (the status reason AWS CDK's Reason.SPOT_INSTANCE_RECLAIMED matches), `Your Spot Task was
# interrupted.` (Amazon ECS task state change event example).
@pytest.mark.parametrize(("line", "due"), [
    ('    "statusReason": "Job attempt duration exceeded timeout",', "time_limit"),
    ("Status reason\tJob attempt duration exceeded timeout", "time_limit"),
    ('            "statusReason": "Host EC2 (instance i-0b1c2d3e4f5a6b7c8) terminated.",', "preemption"),
    ('    "stoppedReason": "Your Spot Task was interrupted.",', "preemption"),
    # the attempt's container reason (aws/amazon-ecs-agent#1187: `Status reason	OutOfMemoryError: Container killed due
    # to memory usage`), the row this table had before
    ('                "reason": "OutOfMemoryError: Container killed due to memory usage",', None),
])
def test_aws_batch_status_reasons(line: str, due: str | None) -> None:
    got = said([line])
    if due is None:
        assert got and got[0][0] == "host.oom_kill"
    else:
        assert got == [("process.signal", due, "ecs")]


@pytest.mark.parametrize("line", [
    # ECS's stop code words that name no cause: the container's own exit (its code and log say why)
    '    "statusReason": "Essential container in task exited",',
    '    "stoppedReason": "Task failed to start",',
    # an EC2 host named in prose that is no status reason
    "Launching job on Host EC2 instance i-0b1c2d3e4f5a6b7c8",
    # a timeout a program sets, not the service's
    "job attempt timeout set to 3600 seconds",
])
def test_aws_batch_near_misses(line: str) -> None:
    assert said([line]) == []


# The same status reason in its short form: what AWS Batch retry strategies match verbatim (public job definitions
# `"onStatusReason": "Host EC2 terminated"`, the glob `Host EC2*` of AWS CDK's Reason.SPOT_INSTANCE_RECLAIMED) and
# Nextflow's task error quotes (`Error executing process > '...'` / `Caused by:` / `  Host EC2 terminated.`, as a public
# Nextflow run viewer's test fixture holds it); the console's capitalised `Status Reason: Host EC2 Terminated`.
@pytest.mark.parametrize("lines", [
    ['    "statusReason": "Host EC2 terminated",'],
    ["Error executing process > 'NFCORE:ABACAS (SAMPLE)'", "Caused by:", "  Host EC2 terminated."],
    ["Status reason\tHost EC2 Terminated"],
])
def test_aws_batch_short_status_reason_of_a_reclaimed_host(lines: list[str]) -> None:
    assert said(lines) == [("process.signal", "preemption", "ecs")]


# A retry strategy's matcher (AWS Batch API, EvaluateOnExit: onStatusReason / onReason / onExitCode) printed with a job
# definition names the words a failed attempt would say, not an end: in JSON (a public job definition's
# `"evaluateOnExit": [{"onStatusReason": "Host EC2 terminated", "action": "RETRY"}]`) or YAML.
@pytest.mark.parametrize("line", [
    '        "onStatusReason": "Host EC2 terminated",',
    '{"onStatusReason": "Host EC2 terminated", "action": "RETRY"}',
    "    - onStatusReason: Host EC2 terminated",
    '            "onReason": "Host EC2 terminated",  # host EC2 rugpulled->try again',
])
def test_a_retry_rules_matcher_is_no_status_reason(line: str) -> None:
    assert said([line]) == []


# An ECS task's stopCode (botocore's ecs model, TaskStopCode), as `aws ecs describe-tasks` and the task state change
# event print it (the ECS guide's Fargate Spot example: `"stoppedReason": "Your Spot Task was interrupted."`,
# `"stopCode": "TerminationNotice"`).
@pytest.mark.parametrize("line", [
    '    "stopCode": "SpotInterruption",',
    '"stopCode":"TerminationNotice","stoppedReason":"Your Spot Task was interrupted.","taskArn":"arn:aws:ecs:x"',
    "Stop code\tSpotInterruption",
])
def test_ecs_stop_code_of_a_spot_interruption(line: str) -> None:
    assert said([line]) == [("process.signal", "preemption", "ecs")]


@pytest.mark.parametrize("line", [
    # a StopTask call: the owner's, or AWS Batch's own on a timeout or TerminateJob (its statusReason says which)
    '    "stopCode": "UserInitiated",',
    '    "stopCode": "EssentialContainerExited",',
    '    "stopCode": "ServiceSchedulerInitiated",',
    # code comparing the word, no record
    'if stop_code == "SpotInterruption": retry()',
])
def test_ecs_stop_code_near_misses(line: str) -> None:
    assert said([line]) == []


# Azure Batch (REST): a compute node's state as `az batch node list` prints it, a job's terminateReason.
@pytest.mark.parametrize(("line", "due"), [
    ('    "state": "preempted",', "preemption"),
    ('    "terminateReason": "MaxWallClockTimeExpiry",', "time_limit"),
    ("Terminate reason: UserTerminate", "cancelled"),
])
def test_azure_batch_records(line: str, due: str) -> None:
    assert said([line]) == [("process.signal", due, "azure")]


@pytest.mark.parametrize("line", [
    # a preempted VM may pass through unusable first (MicrosoftDocs/azure-docs#128508): no cause by itself
    '    "state": "unusable",',
    '    "terminateReason": "TaskFailed",',
    # the task failure information's category and code: the task's own exit (learn.microsoft.com, "Task fail event")
    '            "code": "FailureExitCode",',
    # a state word in another record's lower case (a job's, a program's)
    "state: preempting",
])
def test_azure_batch_near_misses(line: str) -> None:
    assert said([line]) == []


# SageMaker's DescribeTrainingJob (botocore's sagemaker service model; `aws sagemaker describe-training-job`).
@pytest.mark.parametrize(("line", "due"), [
    ('    "SecondaryStatus": "Interrupted",', "preemption"),
    ('    "SecondaryStatus": "MaxRuntimeExceeded",', "time_limit"),
    ('    "SecondaryStatus": "MaxWaitTimeExceeded",', "time_limit"),
    ("SecondaryStatus: Stopped", "cancelled"),
])
def test_sagemaker_secondary_status(line: str, due: str) -> None:
    assert said([line]) == [("process.signal", due, "sagemaker")]


@pytest.mark.parametrize("line", [
    '    "SecondaryStatus": "Failed",',
    '    "SecondaryStatus": "Training",',
    # a transition's status, under another key: the history of the job, not its end
    '            "Status": "Interrupted",',
    # a word of the table in prose
    "Training was Interrupted by the user at epoch 3",
])
def test_sagemaker_near_misses(line: str) -> None:
    assert said([line]) == []


# An Azure Batch node whose StartTask failed (ComputeNodeState starttaskfailed): the pool owner's own set-up command,
# whose output says why; understood, no cause by itself.
def test_azure_batch_start_task_failed_node_names_no_cause() -> None:
    events = feed(['    "state": "starttaskfailed",'])
    assert [e for e in events if e.kind in ("process.signal", "app.exception")] == []


# Azure Batch's task failure codes for a task's container and start (TaskFailureInformationCodes), after the `code`
# key's words.
@pytest.mark.parametrize("line", [
    # Nextflow's Azure Batch executor, verbatim from nextflow-io/nextflow#2099 (an invalid image in `container`)
    "[AZURE BATCH] Task failed. ERROR code: ContainerInvalidImage; message: One or more container images specified are "
    "invalid",
    # the REST API's failureInfo as the task fail event documents its shape (the code here is this test's)
    '        "code": "ContainerInvalidSettings",',
    "    code: ContainerInvalidRegistry",
    '        "code": "BlobAccessDenied",',
    '        "code": "CommandProgramNotFound",',
])
def test_azure_batch_container_codes_are_the_jobs_setup(line: str) -> None:
    errors = [(e.fields.get("error"), e.fields.get("runtime")) for e in feed([line]) if e.kind == "container.error"]
    assert errors == [("job", "azure-batch")]


@pytest.mark.parametrize("line", [
    # the code names as another program's identifiers (a PHP test's helper)
    "        $controller->setContainer($this->getContainerInvalidImage());",
    # the service's own words that name no side: an unknown container error, the task's own exit (the task fail event)
    '        "code": "ContainerMiscError",',
    '        "code": "FailureExitCode",',
    # Azure Storage's own code for a blob that is not there, as its clients print it for any blob of a running job
    '        "code": "BlobNotFound",',
])
def test_azure_batch_container_code_near_misses(line: str) -> None:
    assert [e for e in feed([line]) if e.kind == "container.error"] == []


# Google's Pipelines API v2 / Cloud Life Sciences, in its operation's words as Cromwell and dsub print them.
@pytest.mark.parametrize("line", [
    # a public Cromwell workflow log (a 2025 report of a mutect task), verbatim
    "java.lang.Exception: Task mutect.mutectTask:24:4 failed. The job was stopped before the command finished. PAPI "
    "error code 10. The assigned worker has failed to complete the operation",
    # dsub's error message frame (DataBiosphere/dsub google_v2_base.py error_message; the job id is this test's)
    "Error in job train--alice--201015-120000-00 - code 10: The assigned worker has failed to complete the operation",
    # Cromwell's release notes (44/46, "Enhanced 'error code 10' handling in PAPIv2"), verbatim
    "PAPI error code 14. Task was preempted for the 2nd time.",
    # Cromwell's handlePreemption message (its format; the workflow id and call are this test's)
    "Task 0b6a8a0e-2f6c-4b7e-9a53-1c2d3e4f5a6b:train was preempted for the 1st time. The call will be restarted with "
    "another preemptible VM (max preemptible attempts number is 3). Error code UNAVAILABLE.",
])
def test_papi_worker_lost_is_a_preemption(line: str) -> None:
    assert said([line]) == [("process.signal", "preemption", "gcp")]


@pytest.mark.parametrize("line", [
    # code 9: the task's own command exited non-zero (a public Cromwell report, verbatim; the Life Sciences operation's
    # error as a snakemake guide's `gcloud beta lifesciences operations describe` prints it)
    "Task ldsc_rg.gather_h2:NA:1 failed. The job was stopped before the command finished. PAPI error code 9. Execution "
    'failed: generic::failed_precondition: while running "/cromwell_root/script": unexpected exit status 2 was not '
    "ignored",
    "  message: 'Execution failed: generic::failed_precondition: while running \"snakejob-bwa_map-8\":",
    # the code number alone, and Google's `generic::` status frame in another service's words (a Dataflow worker's)
    "The job was stopped before the command finished. PAPI error code 10.",
    "Error message from worker: generic::aborted: SDK harness sdk-0-0 disconnected.",
    "generic::unavailable: Downstream connection unexpectedly closed",
    # another program's retry count in prose
    "the lock was acquired for the 2nd time",
])
def test_papi_near_misses(line: str) -> None:
    assert said([line]) == []


# Cromwell's GCP Batch backend in its failure message (GcpBatchAsyncBackendJobExecutionActor.StandardException: `Task
# TAG failed. RETURN-CODE-MESSAGE GCP Batch task exited with NAME(CODE). MESSAGE`, the name GcpBatchExitCode's): the
# code is Batch's reserved one, read through the same table as its status event's.
@pytest.mark.parametrize(("line", "due"), [
    # broadinstitute/cromwell#7828, the reporter's quote (its `XXX` redaction kept), verbatim
    ("Task XXX failed. The job was stopped before the command finished. GCP Batch task exited with "
     "VMRecreatedDuringExecution(50006).", "node_failure"),
    # the same format for the other reserved codes (the task tag and the rest are this test's)
    ("java.lang.Exception: Task wgs.align:3:1 failed. The job was stopped before the command finished. GCP Batch task "
     "exited with VMPreemption(50001). ", "preemption"),
    ("Task wgs.align:3:1 failed. The job was stopped before the command finished. GCP Batch task exited with "
     "VMReportingTimeout(50002). ", "node_failure"),
    ("Task wgs.align:3:1 failed. The job was stopped before the command finished. GCP Batch task exited with "
     "VMRebootedDuringExecution(50003). ", "node_failure"),
    ("Task wgs.align:3:1 failed. The job was stopped before the command finished. GCP Batch task exited with "
     "TaskRunsOverMaximumRuntime(50005). ", "time_limit"),
])
def test_cromwell_gcp_batch_exit_code(line: str, due: str) -> None:
    assert said([line]) == [("process.signal", due, "gcp")]


@pytest.mark.parametrize("line", [
    # a code that names no cause: 50004 (the task and its VM unresponsive), and a non-reserved one (a Terra guide quotes
    # `GCP Batch task exited with Success(0)` for a task Batch saw exit 0)
    "Task wgs.align:3:1 failed. GCP Batch task exited with VMAndTaskAreUnresponsive(50004). ",
    "Task wgs.align:3:1 failed. Job exit code 1. Check gs://b/wgs/call-align/stderr for more information. GCP Batch "
    "task exited with Success(0). ",
    # a transient error before the task ran, which Cromwell resubmits (handleTransientErrorRetry's message): no end
    "Task wgs.align:3:1 failed. The job was stopped before the command finished. GCP Batch task exited with "
    "VMRecreatedDuringExecution(50006). Task failed immediately due to a transient GCP Batch error and will be "
    "automatically resubmitted up to 3 more times.",
    # the words without Cromwell's NAME(CODE), and a program's own number in prose
    "GCP Batch task exited with an error, see the logs",
    "worker exited with VMRecreatedDuringExecution 50006",
])
def test_cromwell_gcp_batch_near_misses(line: str) -> None:
    assert said([line]) == []


def test_cromwell_gcp_batch_preemption_restarted_is_read_as_its_restart_words() -> None:
    # handlePreemption's retryable message after the code (its format): the restart words' row decides, as for the
    # Pipelines API's form above; the code does not add a second reading
    line = ("Task wgs.align:3:1 failed. The job was stopped before the command finished. GCP Batch task exited with "
            "VMPreemption(50001). Task 0b6a8a0e-2f6c-4b7e-9a53-1c2d3e4f5a6b:align was preempted for the 1st time. The "
            "call will be restarted with another preemptible VM (max preemptible attempts number is 3).")
    assert said([line]) == [("process.signal", "preemption", "gcp")]


# Vertex AI / AI Platform Training: the job's error for a replica's exit.
def test_vertex_replica_out_of_memory_is_its_memory_limit() -> None:
    # AI Platform's words, as a public write-up quotes its job's error
    got = said(["The replica master 0 ran out-of-memory and exited with a non-zero status of 9(SIGKILL)"])
    assert got and got[0][0] == "host.oom_kill"


def test_vertex_replica_out_of_memory_in_its_guides_words() -> None:
    # the Vertex AI guide's common error, its placeholders filled in
    got = said(["The replica workerpool0-0 ran out of memory and exited with a non-zero status of 137."])
    assert got and got[0][0] == "host.oom_kill"


def test_vertex_termination_reason_after_a_bare_status_decides() -> None:
    # the guide's `... exited with a non-zero status of EXIT_CODE. Termination reason: REASON.` with the container's
    # reason the kubelet gives a memory kill
    got = said(["The replica workerpool0-0 exited with a non-zero status of 137. Termination reason: OOMKilled."])
    assert got and got[0][0] == "host.oom_kill"


def test_vertex_bare_non_zero_status_names_no_cause() -> None:
    events = feed(["The replica workerpool0-0 exited with a non-zero status of 137. Termination reason: Error."])
    assert [e for e in events if e.kind in ("process.signal", "host.oom_kill")] == []


# Modal's runtime, as public reports of Modal runs quote it (the input ids are theirs).
@pytest.mark.parametrize(("line", "due"), [
    ('Task\'s current input(s) ["in-01KPJ3A91C01CVK1YZXBJKX4K1:1776576439351-0"] cancelled because: Task\'s current '
     "input in-01KPJ3A91C01CVK1YZXBJKX4K1:1776576439351-0 hit its timeout of 3600s", "time_limit"),
    ("Runner interrupted due to worker preemption. Your Function will be restarted with the same input.", "preemption"),
])
def test_modal_runtime_words(line: str, due: str) -> None:
    assert said([line]) == [("process.signal", due, "modal")]


# Modal's limit on a container's start-up (`startup_timeout`, by default the function's `timeout`), as public Modal
# deployments quote it (a video model's weight download "killed at exactly 300s (\"Runner has been initializing for
# too long: 300 seconds\")"; a llama.cpp server's troubleshooting notes under `Runner has been initializing for too
# long`, fixed by raising `startup_timeout`), and other programs' start-up words that are no such limit (the
# Kubernetes dashboard's init-container state, KubeRay's RayService comment, a health monitor's grace period).
def test_modal_start_up_timeout_is_the_platforms_limit() -> None:
    line = "Runner failed with exception: Runner has been initializing for too long: 300 seconds"
    assert said([line]) == [("process.signal", "time_limit", "modal")]


@pytest.mark.parametrize("line", [
    "Init container wait-db has been initializing for too long (1/2, 6m0s elapsed)",
    "markFailedOnInitializingTimeout checks if the RayService has been initializing for too long.",
    "Component vllm has been initializing for 320.5s, exceeding grace period",
])
def test_other_start_up_words_are_no_modal_limit(line: str) -> None:
    assert said([line]) == []


# The hosted notebook services' notice of a kernel restarted for the VM's host memory (huggingface/transformers#3660
# and buxiangzhiren/DDCap#39 for Kaggle's, googlecolab/colabtools#2332 and PV-Lab/FTCP#8 for Colab's, verbatim), and
# their notices that name no cause.
@pytest.mark.parametrize(("line", "service"), [
    ("Your notebook tried to allocate more memory than is available. It has restarted.", "kaggle"),
    ("Your session crashed after using all available RAM. If you are interested in access to high-RAM runtimes, you "
     "may want to check out Colab Pro.", "colab"),
])
def test_hosted_notebook_memory_notice_is_its_memory_limit(line: str, service: str) -> None:
    got = [(e.kind, e.fields.get("proc")) for e in feed([line]) if e.kind == "host.oom_kill"]
    assert got == [("host.oom_kill", service)]


@pytest.mark.parametrize("line", [
    "Your session crashed for an unknown reason.",
    "The kernel appears to have died. It will restart automatically.",
    "Your notebook tried to allocate more memory than is available in the free tier, see the docs.",
])
def test_other_notebook_restart_notices_name_no_memory_kill(line: str) -> None:
    assert [e for e in feed([line]) if e.kind in ("host.oom_kill", "process.signal")] == []


def test_modal_timeout_raised_by_its_client_is_the_platforms_limit() -> None:
    line = ("modal.exception.FunctionTimeoutError: Task's current input in-01KPJ3A91C01CVK1YZXBJKX4K1:1776576439351-0 "
            "hit its timeout of 600s")
    events = feed([line])
    assert [e.kind for e in events if e.kind == "app.exception"] == []
    assert said([line]) == [("process.signal", "time_limit", "modal")]


def test_another_programs_timeout_in_those_words_is_no_modal_limit() -> None:
    assert said(["PROBABLE ERROR! Startup of 'svc' hit its timeout of 5000 ms!"]) == []


# submitit's job-side handler raising its scheduler's (or local executor's) time limit when the job cannot be requeued
# (facebookincubator/submitit core/job_environment.py checkpoint_and_try_requeue), alone and as the collector re-raises
# it under FailedJobError with the job's trace (core/core.py exception(); facebookincubator/submitit#1775's report).
_SUBMITIT_TIMED_OUT = ("submitit.core.utils.UncompletedJobError: Job not requeued because: timed-out and not "
                       "checkpointable.")


@pytest.mark.parametrize("lines", [
    [_SUBMITIT_TIMED_OUT],
    ["submitit.core.utils.UncompletedJobError: Job not requeued because: timed-out too many times."],
    ["submitit.core.utils.FailedJobError: Job (task=0) failed during processing with trace:",
     "----------------------", "Traceback (most recent call last):",
     '  File "/x/submitit/core/job_environment.py", line 226, in checkpoint_and_try_requeue',
     "    raise utils.UncompletedJobError(message)", _SUBMITIT_TIMED_OUT],
])
def test_submitit_timed_out_is_its_schedulers_time_limit(lines: list[str]) -> None:
    assert [e.kind for e in feed(lines) if e.kind == "app.exception"] == []
    assert said(lines) == [("process.signal", "time_limit", "submitit")]


@pytest.mark.parametrize("lines", [
    # a job that could not be requeued for another reason (the same function's other no_requeue_reason)
    ["submitit.core.utils.UncompletedJobError: Job not requeued because: checkpoint function returned None."],
    # submitit's FailedJobError for a job killed with no result (core/utils.py)
    ["submitit.core.utils.FailedJobError: Job got killed for an unknown reason."],
    # the job's own exception under the collector's FailedJobError decides
    ["submitit.core.utils.FailedJobError: Job (task=0) failed during processing with trace:",
     "----------------------", "Traceback (most recent call last):", '  File "train.py", line 3, in main',
     "    raise ValueError(\"bad lr\")", "ValueError: bad lr"],
])
def test_other_submitit_failures_stay_the_jobs_exception(lines: list[str]) -> None:
    assert said(lines) == []
    assert [e.kind for e in feed(lines) if e.kind == "app.exception"]


# ---------------------------------------------------------------- through the engine

_STEPS = ["[rank{r}]: step 5000 loss 2.31", "[rank{r}]: step 5010 loss 2.30"]
_TIMEOUT = ("[rank{r}]:[E1102 10:15:20.222288244 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=500045, OpType=ALLREDUCE, NumelIn=67108864, NumelOut=67108864, "
            "Timeout(ms)=600000) ran for 600038 milliseconds before timing out.")


def _analyze(make_bundle: BundleMaker, record: str) -> tuple[str, str | None]:
    wl = copy.deepcopy(WORKLOAD)
    wl["sources"] = [{"kind": "application", "path": "app/rank-{rank}.log"},
                     {"kind": "application", "path": "cluster/service.txt"}]
    ranks = {f"app/rank-{r}.log": "".join(s.format(r=r) + "\n" for s in [*_STEPS, _TIMEOUT]) for r in (0, 1, 4, 5)}
    v = Analyzer().analyze_path(str(make_bundle({**ranks, "cluster/service.txt": record}, wl)))
    return v.attributed_domain, v.root_cause.category if v.root_cause else None


@pytest.mark.parametrize(("record", "category"), [
    (GCB_EVENT.format(vm="8675309", why="Spot Preemption", code=50001) + "\n", "scheduler.preempted"),
    (GCB_EVENT.format(vm="8675309", why="task runs over the maximum runtime", code=50005) + "\n",
     "scheduler.time_limit"),
    ('{\n  "TrainingJobStatus": "Stopped",\n  "SecondaryStatus": "MaxRuntimeExceeded",\n}\n', "scheduler.time_limit"),
    ('{\n  "status": "FAILED",\n  "statusReason": "Job attempt duration exceeded timeout",\n}\n',
     "scheduler.time_limit"),
    ("modal.exception.FunctionTimeoutError: Task's current input in-01KPJ3A91C01CVK1YZXBJKX4K1:1776576439351-0 hit "
     "its timeout of 600s\n", "scheduler.time_limit"),
    ("Task train.step:0:1 failed. The job was stopped before the command finished. PAPI error code 10. The assigned "
     "worker has failed to complete the operation\n", "scheduler.preempted"),
    ("Task train.step:0:1 failed. The job was stopped before the command finished. GCP Batch task exited with "
     "VMRecreatedDuringExecution(50006).\n", "node.unreachable"),
], ids=["gcp-batch-preempted", "gcp-batch-max-run-duration", "sagemaker-max-runtime", "aws-batch-timeout",
        "modal-timeout", "papi-worker-lost", "cromwell-gcp-batch-vm-recreated"])
def test_the_services_word_is_the_cause(make_bundle: BundleMaker, record: str, category: str) -> None:
    _, got = _analyze(make_bundle, record)
    assert got == category


@pytest.mark.parametrize("record", [
    GCB_EVENT.format(vm="8675309", why="", code=1).replace(" due to  with", " with") + "\n",
    "Process finished with exit code 50001\n",
    '{\n  "status": "FAILED",\n  "statusReason": "Essential container in task exited",\n}\n',
    "Task train.step:0:1 failed. The job was stopped before the command finished. PAPI error code 9. Execution failed: "
    'generic::failed_precondition: while running "/cromwell_root/script": unexpected exit status 1 was not ignored\n',
    "Task train.step:0:1 failed. Job exit code 1. Check gs://b/train/call-step/stderr for more information. GCP Batch "
    "task exited with Success(0).\n",
], ids=["own-exit", "app-prints-50001", "essential-container", "papi-own-exit", "cromwell-gcp-batch-own-exit"])
def test_near_misses_through_the_engine(make_bundle: BundleMaker, record: str) -> None:
    domain, got = _analyze(make_bundle, record)
    assert domain != "scheduler" and got not in ("scheduler.preempted", "scheduler.time_limit")


# The ECS agent's and AWS Batch's status reason for a failed pull is a container context (catalog/platform.yaml): the
# registry's own words after it decide whose failure it was (the containerd-based agent's error chain, this test's
# registry path; Docker Hub's `toomanyrequests` is the registry's rate limit).
ECS_PULL_RATE = ("CannotPullContainerError: ref pull has been retried 1 time(s): failed to copy: httpReadSeeker: "
                 "failed open: unexpected status code "
                 "https://registry-1.docker.io/v2/library/python/manifests/sha256:0a1b: 429 Too Many Requests - "
                 "Server message: toomanyrequests: You have reached your pull rate limit.")


def test_an_ecs_pull_failure_is_read_by_the_registrys_words() -> None:
    errors = [(e.fields.get("error"), e.fields.get("text")) for e in feed([ECS_PULL_RATE])
              if e.kind == "container.error"]
    assert errors == [("registry", "toomanyrequests")]


def test_the_registrys_word_alone_is_no_container_error() -> None:
    line = "warning: toomanyrequests: You have reached your pull rate limit."
    assert [e for e in feed([line]) if e.kind == "container.error"] == []


# The ECS agent's own words for an image the job named that the registry does not have (the Amazon ECS guide
# "CannotPullContainer task errors": `CannotPullContainerError: pull image manifest has been retried 5 time(s): failed
# to resolve ref`; the reference and tag here are this test's): containerd's `REF: not found` after it is the job's
# image.
ECS_PULL_MISSING = ("CannotPullContainerError: pull image manifest has been retried 5 time(s): failed to resolve ref "
                    "docker.io/acme/train:v9: not found")


def test_an_ecs_pull_of_an_image_that_is_not_there_is_the_jobs() -> None:
    errors = [(e.fields.get("error"), e.fields.get("runtime")) for e in feed([ECS_PULL_MISSING])
              if e.kind == "container.error"]
    assert errors == [("job", "registry")]


@pytest.mark.parametrize("line", [
    # a shell's own `not found`, with no container's words before it
    "sh: 1: nvidia-smi: not found",
    "/entrypoint.sh: 12: exec: torchrun: not found",
])
def test_a_not_found_without_a_container_context_is_no_pull(line: str) -> None:
    assert [e for e in feed([line]) if e.kind == "container.error"] == []


# A managed service's failure reason spelled like an exception is no exception of the workload's
# (catalog/exceptions.yaml envelopes): SageMaker's capacity and internal errors (DescribeTrainingJob FailureReason), the
# ECS agent's task errors.
@pytest.mark.parametrize("line", [
    "CapacityError: Unable to provision requested ML compute capacity. Please retry using a different ML instance "
    "type.",
    'FailureReason: "CapacityError: Unable to provision requested ML compute capacity. Please retry using a different '
    'ML instance type."',
    "InternalServerError: We encountered an internal error.  Please try again.",
    # aws/amazon-sagemaker-feedback#99, verbatim: SageMaker Studio's start of a space it had no capacity for
    "EC2InsufficientCapacityError: Instance type 'ml.g5.48xlarge' is temporarily unavailable in supported availability "
    "zones [euw1-az1]. Try again in a few minutes, or try a different instance type.",
    # the Amazon ECS guide's "ResourceInitializationError: unable to pull secrets or registry auth" (its causes: the
    # task's network path or its execution role), with this test's endpoint
    "ResourceInitializationError: unable to pull secrets or registry auth: execution resource retrieval failed: unable "
    "to retrieve ecr registry auth: service call has been retried 3 time(s): RequestError: send request failed",
    "CannotStartContainerError: Error response from daemon: cgroups: cgroup mountpoint does not exist: unknown",
])
def test_a_services_failure_reason_is_no_workload_exception(line: str) -> None:
    assert [e for e in feed([line]) if e.kind == "app.exception"] == []


@pytest.mark.parametrize("line", [
    # the workload's own classes of those names, with their own messages
    "CapacityError: replay buffer capacity 1000000 exceeded",
    "InternalServerError: 500 from the tokenizer service",
    # ours: a class of that name whose message is no stock-out of an instance type
    "EC2InsufficientCapacityError: retry budget of 3 exhausted while waiting for the fleet",
    # SageMaker's word that the training script itself failed stays the workload's
    'AlgorithmError: ExecuteUserScriptError: Command "/opt/conda/bin/python3.10 train.py" ExitCode 1',
])
def test_the_workloads_own_errors_of_those_names_stay_exceptions(line: str) -> None:
    assert [e.kind for e in feed([line]) if e.kind == "app.exception"] == ["app.exception"]


def test_an_ecs_pull_of_a_missing_image_is_the_jobs_setup(make_bundle: BundleMaker) -> None:
    _, got = _analyze(make_bundle, ECS_PULL_MISSING + "\n")
    assert got == "app.exception.setup"


def test_an_azure_batch_invalid_container_image_is_the_jobs_setup(make_bundle: BundleMaker) -> None:
    record = ("[AZURE BATCH] Task failed. ERROR code: ContainerInvalidImage; message: One or more container images "
              "specified are invalid\n")
    _, got = _analyze(make_bundle, record)
    assert got == "app.exception.setup"


def test_a_start_the_service_had_no_capacity_for_names_no_cause(make_bundle: BundleMaker) -> None:
    # the run never started: no category of the verdict is the cloud's capacity, and the line is no workload's
    # exception
    record = ('{\n  "TrainingJobStatus": "Failed",\n  "FailureReason": "CapacityError: Unable to provision requested '
              'ML compute capacity. Please retry using a different ML instance type.",\n}\n')
    _, got = _analyze(make_bundle, record)
    assert got not in ("app.exception", "app.exception.setup", "scheduler.preempted")
