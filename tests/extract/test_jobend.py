"""A scheduler's reason for ending the job in the job's own output (extract/jobend.py), read through the one
reasons table (catalog/scheduler.yaml). Every line is as posted in the thread named beside it."""

from __future__ import annotations

import pytest

from firstfault.extract.jobend import EXTRACTORS, memory_limit_kill
from tests.extract.helpers import scan


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
        # cBio/cbio-cluster#403: root deleting the job.
        ("Job deleted at request of root@hal-sched1", ("process.signal", "admin_cancelled")),
        # flux-framework/flux-core#5304: `flux run`'s report of the job's timeout.
        ("1.045s: job.exception type=timeout severity=0 resource allocation expired", ("process.signal", "time_limit")),
        # kubernetes/kubernetes#132001: the kubelet's eviction for disk, in its newer wording.
        ("The node was low on resource: ephemeral-storage. Threshold quantity: 30Gi, available: 24094024Ki. Container "
         "infras-logstash was using 2456Ki, request is 0, has larger consumption of ephemeral-storage. ",
         ("k8s.pod", "eviction")),
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
        # cdanielmachado/carveme#34: an LSF limit that names no cause the table knows (threads).
        "TERM_THREADLIMIT: job killed after reaching LSF thread limit.",
        # cBio/cbio-cluster#256: the use of walltime in a mail is no kill.
        "resources_used.walltime=72:00:25",
        # flux-framework/flux-core#6021: an exec exception that names no scheduler's reason.
        "job.exception type=exec severity=0 rank 2 exited and exit-timeout=30s has expired",
        # PennLINC/babs: SGE's limit of three, which the job's use alone could tell apart.
        "qacct: failed: 37  : qmaster enforced h_rt, h_cpu, or h_vmem limit",
        # A word inside another: not LSF's.
        "MY_TERM_OWNERSHIP: see docs",
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


def test_memory_limit_kill_names_who() -> None:
    assert memory_limit_kill("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.") == "lsf"
    assert memory_limit_kill("slurmstepd: error: Exceeded job memory limit") == "slurmstepd"
    assert memory_limit_kill("The node was low on resource: ephemeral-storage.") is None
