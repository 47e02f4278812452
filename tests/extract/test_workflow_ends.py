"""A workflow manager's or a batch service's record of a task that failed, read as the run's END and never as its
cause (catalog/ends.yaml's workflow rows, extract/runend.py): Nextflow's `Error executing process > 'NAME'`,
Snakemake's `Exiting because a job execution failed. Look above for error message`, Google Cloud Batch's job event
`Job state is set from RUNNING to FAILED for job projects/...`; Snakemake's `Error in rule NAME:` for one job, undone
by its `Trying to restart job N.` (a try and no end; Nextflow's `-- Execution is retried (N)` is one task's and no
row). And the Slurm state
Snakemake's Slurm executor names for its job (`SLURM-job 'ID' failed, SLURM status is: 'OUT_OF_MEMORY'`), read through
Slurm's own state words (extract/jobend.py).

Provenance of the lines: nf-core/rnaseq's docs/usage.md (its troubleshooting of STAR_ALIGN's exit 137, verbatim);
Nextflow's own troubleshooting page ("Error handling and troubleshooting", verbatim); nextflow-io/nextflow#970's
console and broadinstitute/cromwell#7407's Batch events (threads of the wild corpus, verbatim); Snakemake's
scheduler (snakemake/scheduler.py: `_ERROR_MSG_FINAL`, `Trying to restart job {}.`) in the words it prints, as a
public mosca run's log quotes the first. The near misses are prose, a grep, and the managers' lines that are no end.
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract.prefix import split_prefixes
from firstfault.extract.runend import read_end
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers


def _end(line: str) -> tuple[object, object, object] | None:
    fields = read_end(split_prefixes(line).body)
    return None if fields is None else (fields["state"], fields["system"], fields["scope"])


@pytest.mark.parametrize(("line", "want"), [
    # Nextflow's console (its troubleshooting page; nf-core/rnaseq's usage docs, without the `ERROR ~ `)
    ("ERROR ~ Error executing process > 'INDEX'", ("FAILED", "nextflow", "job")),
    ("Error executing process > 'NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:STAR_ALIGN (WT_REP1)'", ("FAILED", "nextflow", "job")),
    # ... and .nextflow.log's form (the TaskProcessor logger before it; the task name is this test's)
    ("Jan-20 07:33:45.479 [Task monitor] ERROR nextflow.processor.TaskProcessor - Error executing process > "
     "'NFCORE_RNASPLICE:RNASPLICE:ALIGN_STAR:STAR_ALIGN (S1)'", ("FAILED", "nextflow", "job")),
    # Snakemake's scheduler
    ("Exiting because a job execution failed. Look above for error message", ("FAILED", "snakemake", "job")),
    ("Trying to restart job 0.", ("RESTART", "snakemake", "process")),
    # its job's error block's head (snakemake/snakemake-executor-plugin-slurm#371's log, a thread of the wild corpus)
    ("Error in rule use_ram:", ("FAILED", "snakemake", "process")),
    # Google Cloud Batch's job event as Cromwell printed it (cromwell#7407, cut after its first words), and folded by
    # `gcloud batch jobs describe`'s YAML after the job's name (the job is this test's)
    ('  description: "Job state is set from RUNNING to FAILED for job projects/A_JOB_ID. Job failed due to task '
     'failures', ("FAILED", "gcp-batch", "job")),
    ("  - description: 'Job state is set from RUNNING to FAILED for job projects/123/locations/us-central1/jobs/"
     "train-1.Job", ("FAILED", "gcp-batch", "job")),
])
def test_a_managers_record_of_the_runs_end(line: str, want: tuple[str, str, str]) -> None:
    assert _end(line) == want


@pytest.mark.parametrize("line", [
    # the manager's words in prose and in a grep, not its line
    "The message `Error executing process > 'X'` means the task failed, see the docs",
    "grep 'Exiting because a job execution failed. Look above for error message' in the log to find failures",
    # a task resubmitted by its errorStrategy (nf-core/rnaseq's usage docs, nextflow-io/nextflow#970): a try of one
    # task, neither an end nor a restart of the run
    "[62/149eb0] NOTE: Process `NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:STAR_ALIGN (WT_REP1)` terminated with an error exit "
    "status (137) -- Execution is retried (1)",
    "[f4/92c717] NOTE: Error submitting process 'eval_pair_vcf (SampleID.MuTect2)' for execution -- Execution is "
    "retried (1)",
    # a task whose error its errorStrategy ignores: the pipeline goes on
    "[62/149eb0] NOTE: Process `FOO (1)` terminated with an error exit status (1) -- Error is ignored",
    # Batch's events of a job that did not fail (cromwell#7407's, verbatim)
    '  description: "Job state is set from SCHEDULED to RUNNING for job projects/A_JOB_ID."',
    # a restart in another program's words
    "Trying to restart job 0 because it failed",
    "TRYING TO RESTART JOB WITHOUT PREVIOUS WF",
    # another program's `Error in rule` (a linter's message, mid-line)
    "lint: Error in rule E501: line too long",
    "RuleException: Error in rule bwa_map: see the log",
])
def test_look_alikes_are_no_managers_end(line: str) -> None:
    assert _end(line) is None


def _verdict(make_bundle: BundleMaker, console: str) -> tuple[str, str, str | None]:
    wl = copy.deepcopy(WORKLOAD)
    del wl["workload"]["terminal_state"]
    wl["sources"] = [{"kind": "application", "path": "app/nextflow-console.log"}]
    v = Analyzer().analyze_path(str(make_bundle({"app/nextflow-console.log": console}, wl)))
    return v.outcome, v.attributed_domain, v.root_cause.category if v.root_cause else None


# Nextflow's report of a task that failed on its own command (its troubleshooting page's example, verbatim but for
# the work dir): where nothing else says how the run ended, the report is its end (a failure), and no cause.
_NF_FAILED = """ERROR ~ Error executing process > 'INDEX'

Caused by:
  Process `INDEX` terminated with an error exit status (127)

Command executed:

  salmon index --threads 1 -t transcriptome.fa -i index

Command exit status:
  127

Command output:
  (empty)

Work dir:
  /home/user/work/0b/b59f362980defd7376ee0a75b41f62
"""


def test_a_managers_failure_record_is_the_end_not_the_cause(make_bundle: BundleMaker) -> None:
    outcome, domain, category = _verdict(make_bundle, _NF_FAILED)
    assert outcome == "failed"
    assert domain == "unknown" and category is None


def test_a_retried_task_is_no_end(make_bundle: BundleMaker) -> None:
    # the console's retry note alone (nf-core/rnaseq's usage docs): the task runs again, the run has not ended
    console = ("[62/149eb0] NOTE: Process `NFCORE_RNASEQ:RNASEQ:ALIGN_STAR:STAR_ALIGN (WT_REP1)` terminated with an "
               "error exit status (137) -- Execution is retried (1)\n")
    outcome, _, category = _verdict(make_bundle, console)
    assert outcome != "failed" and category is None


# Snakemake's Slurm executor naming the state sacct gave its job (snakemake-executor-plugin-slurm's
# `SLURM-job '{external_jobid}' failed, SLURM status is: '{status}'. `, snakemake 7's slurm executor without the
# trailing words; the job ids are this test's): the state is read through Slurm's own state words.
def _said(lines: list[str]) -> list[tuple[str, object, object]]:
    return [(e.kind, e.fields.get("due_to"), e.fields.get("scheduler")) for e in helpers.events(
        lines, "application", file="snakemake.log", node=None) if e.kind in ("process.signal", "host.oom_kill")]


@pytest.mark.parametrize(("line", "want"), [
    ("    message: SLURM-job '45360507' failed, SLURM status is: 'OUT_OF_MEMORY'. For further error details see the "
     "cluster/cloud log and the log files of the involved rule(s).", ("host.oom_kill", None, None)),
    ("SLURM-job '45360507' failed, SLURM status is: 'TIMEOUT'", ("process.signal", "time_limit", "slurm")),
    ("SLURM-job '45360507' failed, SLURM status is: 'NODE_FAIL'", ("process.signal", "node_failure", "slurm")),
    ("SLURM-job '45360507' failed, SLURM status is: 'PREEMPTED'", ("process.signal", "preemption", "slurm")),
    # its JSON log's record of the same error (snakemake's `--log-handler-script` / json logger: `"msg"`)
    ('{"jobid":2419,"level":"job_error","msg":"SLURM-job \'1373032\' failed, SLURM status is: \'OUT_OF_MEMORY\'"}',
     ("host.oom_kill", None, None)),
])
def test_snakemakes_slurm_state_is_read_as_slurms(line: str, want: tuple[str, object, object]) -> None:
    assert _said([line]) == [want]


@pytest.mark.parametrize("line", [
    # the job's own failure, a cancel that names no one, the plugin's own ERROR: no cause named
    "    message: SLURM-job '45360507' failed, SLURM status is: 'FAILED'. For further error details see the "
    "cluster/cloud log and the log files of the involved rule(s).",
    "SLURM-job '45360507' failed, SLURM status is: 'CANCELLED'",
    "SLURM-job '45360507' failed, SLURM status is: 'ERROR'",
    # the words without the plugin's `SLURM-job 'ID'`
    "the job failed, SLURM status is: 'OUT_OF_MEMORY' as the docs say",
])
def test_snakemakes_slurm_state_near_misses(line: str) -> None:
    assert _said([line]) == []


def test_a_snakemake_job_slurm_killed_for_memory_is_the_jobs_memory(make_bundle: BundleMaker) -> None:
    wl = copy.deepcopy(WORKLOAD)
    wl["sources"] = [{"kind": "application", "path": "app/snakemake.log"}]
    log = ("Error in rule samtools_stats:\n    message: SLURM-job '45360507' failed, SLURM "
           "status is: 'OUT_OF_MEMORY'. For further error details see the cluster/cloud log and the log files of the "
           "involved rule(s).\n    jobid: 55\n    external_jobid: 45360507\n\nShutting down, this might take some "
           "time.\nExiting because a job execution failed. Look above for error message\n")
    v = Analyzer().analyze_path(str(make_bundle({"app/snakemake.log": log}, wl)))
    assert v.root_cause is not None and v.root_cause.category == "host.oom"


# broadinstitute/cromwell#7407's Batch events as Cromwell printed them (verbatim, up to the cut in the stored copy): the
# job's FAILED is its end; the task event that would have named the preemption is not there, so nothing is its cause.
_BATCH_EVENTS = """status_events {
  description: "Job state is set from SCHEDULED to RUNNING for job projects/A_JOB_ID."
  event_time {
    seconds: 1713287919
    nanos: 96623968
  }
  type: "STATUS_CHANGED"
}
status_events {
  description: "Job state is set from RUNNING to FAILED for job projects/A_JOB_ID. Job failed due to task failures
"""


def test_a_batch_jobs_failed_event_is_its_end_and_names_no_cause(make_bundle: BundleMaker) -> None:
    outcome, domain, category = _verdict(make_bundle, _BATCH_EVENTS)
    assert outcome == "failed"
    assert domain == "unknown" and category is None
