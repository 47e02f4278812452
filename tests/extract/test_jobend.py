"""A scheduler's reason for ending the job in the job's own output (extract/jobend.py), read through the one
reasons table (catalog/scheduler.yaml). Every line is as posted in the thread named beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from firstfault.extract.base import Draft
from firstfault.extract.jobend import EXTRACTORS, memory_limit_kill
from tests.extract.helpers import claimed, scan

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "scheduler"


def read(line: str) -> list[tuple[str, object]]:
    drafts = scan(EXTRACTORS, [line], "application")
    return [(d.kind, d.fields.get("due_to") or d.fields.get("proc")) for d in drafts]


@pytest.mark.parametrize(
    ("line", "want"),
    [
        # biocore/qiime#1048, NGEET/fates-release#1: Torque's walltime kill.
        ("=>> PBS: job killed: walltime 259217 exceeded limit 259200", ("process.signal", "time_limit")),
        ("PBS: job killed: walltime 43252 exceeded limit 43200", ("process.signal", "time_limit")),
        # marbl/canu#530, veg/hyphy#500: its memory kills.
        ("=>> PBS: job killed: mem 38427376kb exceeded limit 33554432kb", ("host.oom_kill", "pbs")),
        ("=>> PBS: job killed: vmem 3372163072 exceeded limit 2147483648", ("host.oom_kill", "pbs")),
        # cBio/cbio-cluster#256, nf-core/sarek#541: Torque's abort mails.
        ("Job exceeded its walltime limit. Job was aborted", ("process.signal", "time_limit")),
        ("Job exceeded a memory resource limit (vmem, pvmem, etc.). Job was aborted", ("host.oom_kill", "pbs")),
        # CoBrALab/MAGeTbrain#20: Moab over Torque.
        ("MOAB_INFO:  job exceeded wallclock limit", ("process.signal", "time_limit")),
        # wheaton5/souporcell#20: LSF's job report.
        ("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.", ("host.oom_kill", "lsf")),
        # LSF's counts of the job's threads and processes (IBM Spectrum LSF 10.1, "Termination reasons displayed by
        # bacct, bhist, and bjobs"; cdanielmachado/carveme#34's job report), PBS Pro's MOM on its CPUs
        # (ComparativeGenomicsToolkit/cactus#362, joblib/joblib#1268): the scheduler's count limits.
        ("TERM_THREADLIMIT: job killed after reaching LSF thread limit.", ("process.signal", "count_limit")),
        ("TERM_PROCESSLIMIT: job killed after reaching LSF process limit.", ("process.signal", "count_limit")),
        ("=>> PBS: job killed: ncpus 70.54 exceeded limit 64 (sum)", ("process.signal", "count_limit")),
        ("PBS: job killed: ncpus 19.38 exceeded limit 8", ("process.signal", "count_limit")),
        # cBio/cbio-cluster#403: root deleting the job.
        ("Job deleted at request of root@hal-sched1", ("process.signal", "admin_cancelled")),
        # flux-framework/flux-core#5304: `flux run`'s report of the job's timeout.
        ("1.045s: job.exception type=timeout severity=0 resource allocation expired", ("process.signal", "time_limit")),
        # kubernetes/kubernetes#132001: the kubelet's eviction for disk, in its newer wording.
        ("The node was low on resource: ephemeral-storage. Threshold quantity: 30Gi, available: 24094024Ki. Container "
         "infras-logstash was using 2456Ki, request is 0, has larger consumption of ephemeral-storage. ",
         ("k8s.pod", "eviction")),
        # argoproj/argo-workflows#6135: a workflow node's message, the kubelet's for a pod's activeDeadlineSeconds.
        ("        message: Pod was active on the node longer than the specified deadline",
         ("process.signal", "time_limit")),
        # climate-cms.org "How and when to use PBS Jobfs on NCI HPC systems" (2022-11-10), the message it quotes:
        # NCI Gadi's PBS killing a job over its node-local jobfs quota.
        ("Job 12345678.gadi-pbs killed due to exceeding jobfs quota", ("process.signal", "eviction")),
        # dask/dask-jobqueue#178: PBS Pro's MOM summing the job's memory over its hosts (posted with grep's file name).
        ("dask-worker.o1838772:=>> PBS: job killed: mem job total 115343360 kb exceeded limit 115343360 kb",
         ("host.oom_kill", "pbs")),
        # LibreTexts/metalc#133 and kubernetes/kubernetes#66889: `kubectl get pods -A -o wide | grep Evicted` rows.
        ("binderhub        binder-7c5df8bbf6-2vqvt                                     0/1     Evicted    0        "
         "  38d     <none>           chick18   <none>           <none>", ("k8s.pod", "eviction")),
        ("huan-a             account-local-8447bc8dbc-l5z7b                                 0/1       Evicted       "
         "      0          32m       <none>            10.171.2.38", ("k8s.pod", "eviction")),
        # kubernetes/kubernetes#96038: the Job controller's event, as kube-controller-manager logs it.
        ('I1030 01:08:14.634565      12 event.go:291] "Event occurred" object="test-9dedmf-11/big-job-0" kind="Job" '
         'apiVersion="batch/v1" type="Warning" reason="BackoffLimitExceeded" message="Job has reached the specified '
         'backoff limit"', ("k8s.event", "backoff_limit")),
    ],
)
def test_each_schedulers_words(line: str, want: tuple[str, object]) -> None:
    assert read(line) == [want]


@pytest.mark.parametrize(
    "line",
    [
        # cBio/cbio-cluster#256: the use of walltime in a mail is no kill.
        "resources_used.walltime=72:00:25",
        # flux-framework/flux-core#6021: an exec exception that names no scheduler's reason.
        "job.exception type=exec severity=0 rank 2 exited and exit-timeout=30s has expired",
        # PennLINC/babs: SGE's limit of three, which the job's use alone could tell apart.
        "qacct: failed: 37  : qmaster enforced h_rt, h_cpu, or h_vmem limit",
        # A word inside another: not LSF's.
        "MY_TERM_OWNERSHIP: see docs",
        # argoproj/argo-workflows#9934: a person's words for the kubelet's message are not its message.
        "After 10 seconds the pod received an error: the pod was active on the node for more than the specified "
        "deadline",
        # payu-org/payu#587: Gadi's usage report names the jobfs it used, and kills nothing.
        "   JobFS requested:    60.0GB                 JobFS used: 11.74GB         ",
        # marbl/canu#530: the PBS epilogue's memory use is no kill.
        "Mem usage : 38427376kb",
        # a PBS job's accounting of the CPUs it asked for and used is no kill, nor a process count in prose
        "resources_used.ncpus=8",
        "Resource_List.ncpus = 64",
        "the job reached its thread limit",
        # kubernetes/kubernetes#86023: `Evicted` in prose is not a pod row.
        "If a pod's status become `Evicted`, its previous info should be cleaned up, only keep its event is better.",
    ],
)
def test_near_misses(line: str) -> None:
    assert read(line) == []


def test_the_node_a_scheduler_says_it_lost_is_the_events_host() -> None:
    # The message Flux's job-exec composes for a lost shell (flux-framework/flux-core#5813's diff:
    # `"%s on broker %s (rank %d)", "lost contact with job shell"`), as `flux run` prints a job exception; no
    # thread posts one whole, so its host and rank here are filled in (a host of flux-core#6653).
    [d] = scan(EXTRACTORS, ["flux-job: job.exception type=exec severity=0 lost contact with job shell on broker "
                            "elcap8767 (rank 1127)"], "application")
    assert (d.kind, d.fields["due_to"], d.host) == ("process.signal", "node_failure", "elcap8767")


def test_a_ci_service_that_lost_its_runner_names_the_runner_lost() -> None:
    # pytorch/serve#2736 (GitHub Actions' job annotation, verbatim): the runner's host rebooted under the job
    [d] = scan(EXTRACTORS, ["The self-hosted runner: regression-test-gpu-3 lost communication with the server. Verify "
                            "the machine is running and has a healthy network connection. Anything in your workflow "
                            "that terminates the runner process, starves it for CPU/Memory, or blocks its network "
                            "access can cause this error."], "application")
    assert (d.fields["due_to"], d.host) == ("node_failure", "regression-test-gpu-3")
    # fedimint/fedimint#6021 (a GitHub-hosted runner, GitHub's pool's name: no host) and buildkite/agent#991's
    for line in ("The hosted runner: GitHub Actions 9 lost communication with the server. Anything in your workflow "
                 "that terminates the runner process, starves it for CPU/Memory, or blocks its network access can "
                 "cause this error.", "Exited with status -1 (agent lost)"):
        [d] = scan(EXTRACTORS, [line], "application")
        assert (d.fields["due_to"], d.host) == ("node_failure", None), line


def test_near_miss_a_runner_told_to_shut_down_names_no_lost_node() -> None:
    # the runner's own notice (a service stopped or a VM taken back: it does not say which), and a job's own words
    for line in ("The runner has received a shutdown signal. This can happen when the runner service is stopped, or a "
                 "manually started runner is canceled.",
                 "client lost communication with the server, retrying in 5s"):
        assert all(d.fields.get("due_to") != "node_failure" for d in scan(EXTRACTORS, [line], "application")), line


def test_a_flux_exec_exception_for_a_program_the_job_named_is_its_own() -> None:
    # flux-framework/flux-core#6892 (https://github.com/flux-framework/flux-core/issues/6892), garlick on fluke: `flux
    # run -N1 /g/g0/garlick/nosuchcommand`. The exception names the job, the task's host and the program that
    # could not start: the job's own configuration on fluke120, not the node's.
    [d] = scan(EXTRACTORS, ["3.417s: job.exception fdsPAmQhXV1 type=exec severity=0 task 0 (host fluke120): start "
                            "failed: /g/g0/garlick/nosuchcommand: No such file or directory"], "application")
    assert (d.kind, d.fields["exc_type"], d.fields["path"], d.host) == (
        "app.exception", "FileNotFoundError", "/g/g0/garlick/nosuchcommand", "fluke120")
    assert str(d.fields["message"]).startswith("job.exception fdsPAmQhXV1 type=exec")
    # flux-framework/flux-core#4195 (https://github.com/flux-framework/flux-core/issues/4195): the older form, no job
    # id and no host; the exec failures come before the timeout the hung job then met.
    got = scan(EXTRACTORS, ["0.784s: job.exception type=exec severity=0 task 0: start failed: stress: No such file or "
                            "directory",
                            "5.488s: job.exception type=timeout severity=0 resource allocation expired"], "application")
    assert [(d.kind, d.fields.get("path") or d.fields.get("due_to")) for d in got] == [
        ("app.exception", "stress"), ("process.signal", "time_limit")]


def test_a_flux_exec_exception_that_names_no_program_names_no_cause() -> None:
    # Near miss, flux-core#6892 again, on tuolumne (sdexec): the same missing command, but the exception only says
    # the unit could not start; whose failure that is, it does not say.
    assert scan(EXTRACTORS, ["5.099s: job.exception f23uHVxHxGXZ type=exec severity=0 job shell exec error on broker "
                             "tuolumne1216 (rank 216): unit process could not be started (systemd error 255)"],
                "application") == []


def test_memory_limit_kill_names_who() -> None:
    assert memory_limit_kill("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.") == "lsf"
    assert memory_limit_kill("slurmstepd: error: Exceeded job memory limit") == "slurm"  # its row in the table
    assert memory_limit_kill("The node was low on resource: ephemeral-storage.") is None


def test_a_pasted_pod_row_names_its_pod_and_node() -> None:
    # LibreTexts/metalc#133: `kubectl get pods -A -o wide | grep Evict` (NAMESPACE first, IP `<none>`, NODE chick18).
    [d] = scan(EXTRACTORS, ["default          quickstart-nginx-ingress-controller-68c6f57975-t5tc5        0/1     "
                            "Evicted    0          84d     <none>           chick18   <none>           <none>"],
               "application")
    assert (d.kind, d.fields["pod"], d.fields["reason"], d.host) == (
        "k8s.pod", "quickstart-nginx-ingress-controller-68c6f57975-t5tc5", "Evicted", "chick18")
    assert d.fields["restart"] is False


# --------------------------------------------------------------------------
# LSF's job report
# --------------------------------------------------------------------------


def records(lines: list[str]) -> list[Draft]:
    return [d for d in scan(EXTRACTORS, lines, "application") if d.kind == "sched.job"]


def report(name: str) -> list[str]:
    return (FIX / name).read_text().splitlines()


def test_lsf_report_of_a_job_that_completed() -> None:
    # FredslundMagnus/dtu-server-example outputs/Example3/Markdown/Example3_1.md (tests/fixtures/scheduler/SOURCES.md).
    [d] = records(report("lsf-report-done-dtu-example3.txt"))
    assert d.fields == {"scope": "job", "scheduler": "lsf", "state": "COMPLETED",
                        "raw_state": "Successfully completed.", "job_id": "12548598", "nodelist": "n-62-31-21"}


def test_lsf_report_of_a_job_that_exited_and_one_lsf_killed() -> None:
    # FredslundMagnus/Myretuen: the job's own exit 120; FredslundMagnus/DeepLearningProject: LSF's run limit
    # (exit 140 = 128 + SIGUSR2, the run-limit warning), both in one stream as `bsub -o` appends reports.
    first, second = records(report("lsf-report-exit120-myretuen.txt") + report(
        "lsf-report-runlimit-deeplearningproject.txt"))
    assert (first.fields["state"], first.fields["exit_code"], first.fields["job_id"]) == ("FAILED", 120, "6068150")
    assert "due_to" not in first.fields and "signal" not in first.fields
    assert (second.fields["state"], second.fields["due_to"], second.fields["reason"]) == (
        "TIMEOUT", "time_limit", "TERM_RUNLIMIT")
    assert (second.fields["exit_code"], second.fields["signal"], second.fields["job_id"]) == (140, 12, "8254049")


def test_lsf_report_of_a_signal_by_number() -> None:
    # nextflow-io/nextflow#1592 (https://github.com/nextflow-io/nextflow/issues/1592), the task's .command.log from
    # the report's end: the owner's bkill, the job's signal 7 with a core.
    [d] = records(["TERM_OWNER: job killed by owner.", "Exited with signal termination: 7, and core dumped.", "",
                   "Resource usage summary:", "", "    CPU time :                                   117037.00 sec."])
    assert (d.fields["state"], d.fields["due_to"], d.fields["signal"]) == ("CANCELLED", "cancelled", 7)
    assert "exit_code" not in d.fields


@pytest.mark.parametrize(
    "lines",
    [
        # wheaton5/souporcell#20 (https://github.com/wheaton5/souporcell/issues/20): the report's end as posted, cut
        # before its summary: the TERM_ line speaks (host.oom_kill), the end alone is no record.
        ["TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.", "Exited with exit code 143."],
        # srun's words for a task's exit (tests/lab/captured/slurm_segv, real srun output): no LSF report follows.
        ["srun: error: ffnode1: tasks 0,2: Exited with exit code 1", "srun: error: ffnode1: task 1: Exited with exit "
         "code 1"],
        # PacificBiosciences/FALCON-integrate#94 (https://github.com/PacificBiosciences/FALCON-integrate/issues/94),
        # its `grep Exit */*` over the jobs' outputs: LSF's lines, taken out of their reports.
        ["J1744346edb1387c55cce7afb0050342daf80521b129465eedfa55c452ec3b0db/stdout:Exited with signal termination: "
         "Alarm clock."],
    ],
)
def test_an_end_line_without_the_reports_summary_is_no_record(lines: list[str]) -> None:
    assert records(lines) == []


# --------------------------------------------------------------------------
# SGE: the qmaster on a job that failed on a host
# --------------------------------------------------------------------------


def test_sge_qmaster_on_an_output_file_the_job_may_not_open() -> None:
    # kaldi-asr/kaldi#4358 (https://github.com/kaldi-asr/kaldi/issues/4358): the queue log queue.pl names, in a
    # directory the user cannot write; the maintainer: "make sure you can write into that directory".
    [d] = scan(EXTRACTORS, ["12/01/2020 22:46:24|worker|master|W|job 84.1 failed on host ubuntu general opening "
                            "input/output file because: 12/02/2020 11:46:22 [1006:5837]: error: can't open output "
                            'file "/home/ybZhang/changcheng_asr_ch/./q/test.log": Permission denied'], "syslog")
    assert (d.kind, d.host, d.fields["setup"], d.fields["errno"], d.fields["exc_type"]) == (
        "app.exception", "ubuntu", True, "EACCES", "PermissionError")
    assert d.fields["path"] == "/home/ybZhang/changcheng_asr_ch/./q/test.log"
    assert d.fields["message"] == ("opening input/output file: can't open output file "
                                   '"/home/ybZhang/changcheng_asr_ch/./q/test.log": Permission denied')


def test_sge_qmaster_with_an_errno_that_names_no_side() -> None:
    # TIGRLab/admin#227 (https://github.com/TIGRLab/admin/issues/227): EPERM on /scratch of two nodes, which the
    # admins took for the nodes' /scratch; the errno is not the path's permissions, and this reader does not guess.
    assert scan(EXTRACTORS, ["06/03/2015 17:58:32|worker|mrsdti|W|job 208911.1 failed on host tesla.kimel.ric general "
                             "opening input/output file because: 06/03/2015 17:58:31 [1008:300]: error: can't open "
                             'output file "/scratch/anne/Julie_CIVET/nusdast/output/NM1089/logs/'
                             'NM1089.nuc_inorm_t1.log": Operation not permitted'], "syslog") == []


def test_pbs_execution_node_down_in_the_jobs_mail_names_the_node() -> None:
    # OpenPBS src/server/node_manager.c: `Job requeued, execution node %s down`, the comment and mail the server gives
    # a running job whose host went down (filled in; no posted copy was found). Near miss: the server taking a node
    # down to provision it (`node down for provisioning: %s`, the same file) names no job's node lost.
    [d] = scan(EXTRACTORS, ["Job requeued, execution node cn042 down"], "application")
    assert (d.kind, d.fields["due_to"], d.host) == ("process.signal", "node_failure", "cn042")
    assert scan(EXTRACTORS, ["node down for provisioning: aoe rhel9"], "application") == []


def test_htcondor_reconnect_failed_is_the_execute_node_lost() -> None:
    # The shadow's words on a job whose execute host it lost past the job's lease (htcondor/htcondor
    # src/condor_shadow.V6.1/remoteresource.cpp), as a public LSST batch report quotes its event log's 024 record.
    got = scan(EXTRACTORS, ["024 (16452834.000.000) 2025-05-06 22:19:12 Job reconnection failed",
                            "    Job disconnected too long: JobLeaseDuration (2400 seconds) expired",
                            "    Can not reconnect to slot_lsstsvc1_31838_1_9@sdfmilan167.sdf.slac.stanford.edu, "
                            "rescheduling job"], "application")
    assert [(d.fields["due_to"], d.host) for d in got] == [("node_failure", None)]
    # Near miss: the same record after the execute machine answered that it had no such job (its starter killed:
    # gwastro/pycbc#2596's test of condor's checkpointing, form as the shadow prints it): no node was lost.
    assert scan(EXTRACTORS, ["024 (6509789.000.000) 03/27 15:12:51 Job reconnection failed",
                             "    Job not found at execution machine",
                             "    Can not reconnect to slot1@node-88, rescheduling job"], "application") == []
    # The 024 record's title line says no more than its number (the reason lines decide): understood, so that a
    # rescheduled job is not left `unknown` by it (gwastro/pycbc#2596's event log, verbatim)
    assert claimed("024 (6509789.000.000) 03/27 15:12:51 Job reconnection failed", "application")
    # Near miss: a record's title that is a failure of its own stays unread here (HTCondor's 007, its title as
    # condor_event.cpp ShadowExceptionEvent writes it; filled in)
    assert not claimed("007 (6509789.000.000) 03/27 15:12:51 Shadow exception!", "application")
    # Near miss: the 022 disconnection, which the shadow may end by reconnecting, names no loss.
    assert scan(EXTRACTORS, ["022 (16452834.000.000) 2025-05-06 21:39:12 Job disconnected, attempting to reconnect",
                             "    Socket between submit and execute hosts closed unexpectedly"], "application") == []


def test_pbs_unable_to_run_job_in_a_line_is_a_node_symptom() -> None:
    # OpenPBS src/server/req_runjob.c: `Unable to Run Job, MOM rejected` as the job's comment, pasted; near miss: the
    # same server's word on a job it ran (`Job Run at request of`) says nothing of a node.
    [d] = scan(EXTRACTORS, ["comment = Unable to Run Job, MOM rejected"], "application")
    assert (d.kind, d.fields["text"]) == ("sched.node_reason", "Unable to Run Job, MOM rejected")
    assert scan(EXTRACTORS, ["Job Run at request of root@pbs01"], "application") == []
