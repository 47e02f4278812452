"""Slurm's own error words (catalog/slurm.yaml, extract/slurmerr.py): who failed, the job's request or the node's Slurm.

Lines are Slurm's format strings filled in (src/common/slurm_errno.c, src/api/step_launch.c, src/slurmd/...) or copied
from public issue threads, cited beside each; each reading has a near miss beside it.
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog.tables import slurm_tables
from firstfault.engine.attribute import Finding, _read_finer
from firstfault.engine.rules import Rule
from firstfault.extract.prefix import PrefixLayer
from firstfault.extract.slurmerr import SlurmErrorExtractor, read_slurm_error
from firstfault.model import Event, Evidence, Verdict
from tests.conftest import WORKLOAD, BundleMaker
from tests.engine.test_validators import shipped_catalog
from tests.extract import helpers
from tests.extract.helpers import scan


def feed(lines: list[str], source: str = "application", node: str | None = None) -> list[Event]:
    return helpers.events(lines, source, file="slurm-77.out" if source == "application" else f"nodes/{node}/syslog",
                          node=node)


def ours(events: list[Event]) -> list[Event]:
    return [e for e in events if e.kind == "sched.error" or (e.kind == "app.exception" and e.fields.get("setup"))]


# --------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------

def test_every_row_has_one_reading() -> None:
    t = slurm_tables()
    assert len(t.errors) > 90
    assert len({e.text for e in t.errors}) == len(t.errors)
    # each row's side or reason, never both (the loader checks it; a row the extractor can act on)
    assert all((e.side is None) != (e.reason is None) for e in t.errors)
    assert all("{host}" in c.text for c in t.contexts)


def test_literals_hold_every_text() -> None:
    ex = SlurmErrorExtractor()
    for e in slurm_tables().errors:
        assert e.text in ex.literals


# --------------------------------------------------------------------------
# The node's Slurm, on the node the line names
# --------------------------------------------------------------------------

# c3nl-neuraldynamics/c3nl_cluster#62 (https://github.com/c3nl-neuraldynamics/c3nl_cluster/issues/62): the clocks
# out of step; srun's two lines, the second its sum-up
CRED_EXPIRED = [
    "srun: error: Task launch for 1466614.0 failed on node compute-0-1: Job credential expired",
    "srun: error: Application launch failed: Job credential expired",
    "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
    "srun: error: Timed out waiting for job step to complete",
]


def test_a_launch_failure_names_its_node() -> None:
    got = ours(feed(CRED_EXPIRED))
    assert len(got) == 1  # the sum-up that names no node is the same failure, not a second one
    ev = got[0]
    assert ev.fields["name"] == "ESLURMD_CREDENTIAL_EXPIRED"
    assert ev.fields["host"] == "compute-0-1" and ev.fields["names_node"] is True
    assert "weak" not in ev.fields


def test_the_same_text_without_a_node_is_weak() -> None:
    # srun's sum-up alone (the post cut the line before it)
    got = ours(feed(["srun: error: Application launch failed: Job credential expired"]))
    assert [e.fields.get("weak") for e in got] == [True]
    assert "host" not in got[0].fields


def test_near_miss_a_debug_retry_of_munge_is_not_read() -> None:
    # src/plugins/auth/munge/auth_munge.c: `debug("Munge decode failed: %s (retrying ...)")`
    assert read_slurm_error("slurmd: debug:  Munge decode failed: Expired credential (retrying ...)") is None
    assert ours(feed(["slurmd: debug:  Munge decode failed: Expired credential (retrying ...)"])) == []


def test_munge_in_slurmds_syslog_with_its_header_taken_off() -> None:
    # the prefix layer takes `Dec  4 10:00:01 node-03 slurmd[1234]: ` off a node's syslog line
    got = ours(feed(["Dec  4 10:00:01 node-03 slurmd[1234]: error: Munge decode failed: Rewound credential"],
                    "syslog", "node-03"))
    assert [e.fields["side"] for e in got] == ["node"]


def test_near_miss_a_bare_error_line_of_a_job_is_not_a_daemons() -> None:
    # the same bare words in the job's own output are no Slurm daemon's
    assert ours(feed(["error: Munge decode failed: Rewound credential"])) == []


def test_slurmctlds_word_names_the_drained_node() -> None:
    # src/slurmctld/proc_req.c: `error("slurmd error running %pI on Node(s)=%s: %s", ...)`
    line = "[2024-01-01T10:00:00.000] error: slurmd error running JobId=4242 on Node(s)=node01: Job prolog failed"
    got = ours(feed([line], "syslog", "ctl"))
    assert [(e.fields["name"], e.fields["host"]) for e in got] == [("ESLURMD_PROLOG_FAILED", "node01")]


def test_near_miss_the_race_slurmctld_logs_at_info_is_not_read() -> None:
    # src/slurmctld/proc_req.c: `info("slurmd error running %pI from Node(s)=%s: %s")` for a race at the job's end
    line = "[2024-01-01T10:00:00.000] slurmd error running JobId=4242 from Node(s)=node01: Job credential revoked"
    assert ours(feed([line], "syslog", "ctl")) == []


# --------------------------------------------------------------------------
# The job's own request or set-up
# --------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    # ArjunaCluster/ArjunaUsers#112 (https://github.com/ArjunaCluster/ArjunaUsers/issues/112): 56 cores of 54
    "sbatch: error: Batch job submission failed: Requested node configuration is not available",
    # eth-cscs/cscs-reframe-tests#553 (https://github.com/eth-cscs/cscs-reframe-tests/pull/553)
    "srun: error: Unable to allocate resources: Invalid account or account/partition combination specified",
    # ComputeCanada/magic_castle#219 (https://github.com/ComputeCanada/magic_castle/issues/219)
    "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified",
    # src/salloc/salloc.c: `error("Job submit/allocate failed: %m")` with ESLURM_INVALID_PARTITION_NAME
    "salloc: error: Job submit/allocate failed: Invalid partition name specified",
], ids=["node-config", "account-srun", "account-sbatch", "partition"])
def test_the_jobs_request_is_its_set_up(line: str) -> None:
    got = ours(feed([line]))
    assert [(e.kind, e.fields.get("setup")) for e in got] == [("app.exception", True)]
    assert str(got[0].fields["exc_type"]).startswith("ESLURM_")


def test_near_miss_the_same_words_in_a_programs_own_message_are_not_slurms() -> None:
    # a workflow tool quoting the text in its own log line (no Slurm program's error level before it)
    line = "2018-12-19 00:36:37,381: radical.saga.cpi : ERROR : Requested node configuration is not available"
    assert ours(feed([line])) == []


@pytest.mark.parametrize("line,errno", [
    # src/slurmd/slurmstepd/mgr.c _setup_normal_io: `error("Could not open output file %s: %m", ...)`
    ("slurmstepd: error: Could not open output file /scratch/u1/logs/slurm-4242.out: No such file or directory",
     "ENOENT"),
    # src/slurmd/slurmstepd/mgr.c: `error("couldn't chdir to `%s': %m: going to /tmp instead", ...)`
    ("slurmstepd: error: couldn't chdir to `/home/u1/run': Permission denied: going to /tmp instead", "EACCES"),
])
def test_a_path_the_job_named_is_its_set_up(line: str, errno: str) -> None:
    got = ours(feed([line]))
    assert [(e.fields.get("setup"), e.fields.get("errno")) for e in got] == [(True, errno)]


def test_near_miss_a_full_file_system_is_not_the_jobs_set_up() -> None:
    line = "slurmstepd: error: Could not open output file /scratch/u1/slurm-4242.out: No space left on device"
    assert ours(feed([line])) == []


# --------------------------------------------------------------------------
# No cause, and the scheduler's policy
# --------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    # dmtcp/dmtcp#702 (https://github.com/dmtcp/dmtcp/issues/702): slurmstepd goes on with TMPDIR=/tmp
    "slurmstepd: error: Unable to create TMPDIR [/scratch/1504221]: Permission denied",
    "slurmstepd: error: Setting TMPDIR to /tmp",
    # ai4d-iasc/trixie#45 (https://github.com/ai4d-iasc/trixie/issues/45): after the step's cancel
    "[2020-12-14T09:44:56.002] [63532.0] error: *** STEP 63532.0 STEPD TERMINATED ON cn106 AT 2020-12-14T09:44:56 "
    "DUE TO JOB NOT ENDING WITH SIGNALS ***",
    # src/srun/launch.c: a race at the step's end
    "srun: error: Unable to create step for job 4242: Job/step already completing or completed",
    # c3nl-neuraldynamics/c3nl_cluster#60: srun after the step it aborted
    "srun: error: Timed out waiting for job step to complete",
    # src/srun/allocate.c: `error("Job allocation %u has been revoked")`
    "srun: error: Job allocation 69 has been revoked",
], ids=["tmpdir", "tmpdir-fallback", "unkillable", "already-done", "step-timed-out", "revoked"])
def test_understood_and_no_cause(line: str) -> None:
    drafts = scan(SlurmErrorExtractor(), [line], "syslog" if line.startswith("[") else "application")
    assert drafts == []
    assert read_slurm_error(line) is not None


def test_the_schedulers_time_limit_in_its_errno_text() -> None:
    # src/common/slurm_errno.c ESLURM_JOB_TIMEOUT_KILLED, as srun prints a step's end with it
    got = [e for e in feed(["srun: error: Unable to create step for job 4242: Job killed due hitting max wall clock "
                            "limit"]) if e.kind == "process.signal"]
    assert [(e.fields["due_to"], e.fields["scheduler"]) for e in got] == [("time_limit", "slurm")]


# --------------------------------------------------------------------------
# Through the engine: the node the line names is the cause's node
# --------------------------------------------------------------------------

def _analyze(make_bundle: BundleMaker, out: list[str], app: list[str] | None = None) -> Verdict:
    wl = copy.deepcopy(WORKLOAD)
    wl["workload"]["nodes"] = ["login-1", "compute-0-1", "compute-0-2"]
    wl["workload"]["ranks"] = {"compute-0-1": "0", "compute-0-2": "1"}
    wl["sources"] = [{"kind": "application", "path": "slurm-77.out"},
                     {"kind": "application", "path": "app/rank-{rank}.log"}]
    files = {"slurm-77.out": "".join(s + "\n" for s in out)}
    for r, text in enumerate(app or []):
        files[f"app/rank-{r}.log"] = text + "\n"
    return Analyzer().analyze_path(str(make_bundle(files, wl)))


def test_engine_the_node_whose_slurmd_refused_the_credential(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, CRED_EXPIRED)
    assert v.attributed_domain == "infrastructure"
    rc = v.root_cause
    assert rc is not None and rc.category == "node.scheduler" and rc.nodes == ["compute-0-1"]


def test_engine_near_miss_the_jobs_request_is_software(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, ["srun: error: Unable to allocate resources: Requested node configuration is not "
                               "available"])
    rc = v.root_cause
    assert rc is not None and rc.category == "app.exception.setup"
    assert v.attributed_domain == "software"


def test_engine_a_timed_out_call_yields_to_the_workloads_exception(make_bundle: BundleMaker) -> None:
    # mlr-org/batchtools#201's launch line, then a rank's own traceback: the strong cause wins
    v = _analyze(make_bundle,
                 ["srun: error: Task launch for StepId=34.0 failed on node compute-0-2: Socket timed out on send/recv "
                  "operation"],
                 ["Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
                  "ValueError: bad shape"])
    rc = v.root_cause
    assert rc is not None and rc.category.startswith("app.exception")


# --------------------------------------------------------------------------
# Prologs: the node's (slurmd's), the job's own (--task-prolog, srun --prolog)
# --------------------------------------------------------------------------

def test_the_nodes_prolog_that_failed_in_slurmds_log() -> None:
    # src/slurmd/slurmd/req.c: `error("%pI prolog failed status=%d:%d", ...)`
    got = ours(feed(["[2024-01-01T10:00:00.000] error: JobId=4242 prolog failed status=1:0"], "syslog", "node-02"))
    assert [(e.fields["side"], e.fields.get("weak")) for e in got] == [("node", None)]


def test_the_sites_task_prolog_that_failed_is_the_nodes() -> None:
    # NVIDIA/pyxis#163 (slurmd.log, DebugFlags=Script): slurm.conf's TaskProlog, src/slurmd/slurmstepd/task.c
    # `error("TaskProlog failed status=%d", status)`
    got = ours(feed(["[2025-03-20T09:44:42.488] [818.interactive] error: TaskProlog failed status=127"], "syslog",
                    "node-02"))
    assert [(e.fields["side"], e.fields.get("weak")) for e in got] == [("node", None)]


def test_near_miss_a_task_epilog_after_the_task_names_no_cause() -> None:
    # src/slurmd/slurmstepd/mgr.c _wait_for_any_task: after the task ended
    got = ours(feed(["[2025-03-20T09:44:42.488] [818.0] error: TaskEpilog failed status=1"], "syslog", "node-02"))
    assert all(e.fields.get("side") in (None, "none") for e in got)


def test_near_miss_the_jobs_own_task_prolog_is_its_set_up() -> None:
    # src/slurmd/slurmstepd/task.c: `error("--task-prolog failed status=%d", status)`: a script the job gave
    got = ours(feed(["slurmstepd: error: --task-prolog failed status=127"]))
    assert [(e.kind, e.fields.get("setup")) for e in got] == [("app.exception", True)]


def test_slurmstepds_tag_with_its_nodes_name_is_no_host() -> None:
    # the lab's Slurm 22.05.8 (tests/lab/captured/slurm_task_prolog_failed, srun --task-prolog of a script that
    # fails): slurmstepd names itself with its node, `slurmstepd-ffnode1: `; that word is the program's tag, which the
    # reader reads, not a pdsh-style host tag to take off the line (its digits are the node name's)
    for line in ("slurmstepd-ffnode1: error: --task-prolog failed status=1",
                 "0: slurmstepd-ffnode1: error: --task-prolog failed status=1"):
        got = ours(feed([line]))
        assert [(e.kind, e.fields.get("setup")) for e in got] == [("app.exception", True)], line
    p = PrefixLayer().split("slurmstepd-gpu07: error: --task-prolog failed status=1")
    assert (p.host, p.body) == (None, "slurmstepd-gpu07: error: --task-prolog failed status=1")


def test_near_miss_a_hosts_tag_before_slurms_words_stays_a_host() -> None:
    # pdsh's `host: ` tag (a node whose name holds a digit) before the same words is still the host's layer
    p = PrefixLayer().split("gpu07: slurmstepd: error: --task-prolog failed status=1")
    assert (p.host, p.body) == ("gpu07", "slurmstepd: error: --task-prolog failed status=1")
    # and a node named like a Slurm program's prefix but not one (`slurm-07`) is a host
    assert PrefixLayer().split("slurm-07: error: disk quota exceeded").host == "slurm-07"


def test_a_prolog_that_hung_names_its_node() -> None:
    # src/slurmd/common/slurmd_common.c _prolog_timer: `Prolog hung on node %s`, a notice srun prints without a level
    got = ours(feed(["srun: Prolog hung on node gpu-07"]))
    assert [(e.fields["host"], e.fields.get("names_node")) for e in got] == [("gpu-07", True)]


def test_the_prolog_error_slurmd_writes_into_the_jobs_own_output() -> None:
    # src/slurmd/slurmd/req.c _prolog_error: `Error running slurm prolog: %d`, written into the batch job's error file
    # with no program's tag and no level; the lab's slurm_prolog_failed (Slurm 22.05, tests/lab/captured): the node's
    # Prolog failed, the job never ran
    got = ours(feed(["Error running slurm prolog: 1"]))
    assert [(e.kind, e.fields["side"], e.fields["text"]) for e in got] == [
        ("sched.error", "node", "Error running slurm prolog: 1")]


def test_engine_the_prolog_error_alone_is_the_nodes_slurm(make_bundle: BundleMaker) -> None:
    # the lab's slurm_prolog_failed without the node's record: the batch output's one line decides the node's Slurm
    v = _analyze(make_bundle, ["Error running slurm prolog: 1"])
    rc = v.root_cause
    assert (v.attributed_domain, rc and rc.category) == ("infrastructure", "node.scheduler")


@pytest.mark.parametrize("line", [
    # the words inside a line: a job's own echo of them, a wrapper's quotation, not slurmd's write
    'echo "Error running slurm prolog: 1"',
    "job 42 failed: Error running slurm prolog: 1",
    # a tagless line beginning with another row's words is not that row (`Prolog hung on node` comes behind srun's tag)
    "Prolog hung on node gpu-07",
])
def test_near_miss_a_rows_words_without_its_own_place_are_not_read(line: str) -> None:
    assert ours(feed([line])) == []


def test_near_miss_the_epilog_after_the_job_is_no_cause() -> None:
    # src/slurmd/slurmd/req.c: `error("%pI epilog failed status=%d:%d", ...)`, after the job ended
    assert ours(feed(["[2024-01-01T10:00:00.000] error: JobId=4242 epilog failed status=1:0"], "syslog", "n2")) == []


def test_slurmd_that_cannot_stat_a_gres_file_is_the_nodes_slurm() -> None:
    # fgci-org/ansible-role-cuda#3: slurmd started before the driver made /dev/nvidia0 (src/interfaces/gres.c _my_stat)
    line = "Jul  8 15:11:23 gpu slurmd[5421]: fatal: can't stat gres.conf file /dev//nvidia0: No such file or directory"
    got = ours(feed([line], "syslog", "gpu"))
    assert [(e.kind, e.fields["side"], e.fields.get("weak")) for e in got] == [("sched.error", "node", None)]


def test_near_miss_slurmd_waiting_for_a_gres_file_is_no_cause() -> None:
    # the same thread's line before it: slurmd waits and goes on where the file comes
    assert ours(feed(["Jul  8 15:11:04 gpu slurmd[5421]: error: Waiting for gres.conf file /dev//nvidia0"],
                     "syslog", "gpu")) == []


def test_the_journals_tag_then_slurmds_own_is_read() -> None:
    # slurmd in the foreground under systemd prefixes its name, the journal its tag: a line built in that form (the
    # table's munge text; the form as the journals of slurmd's and slurmctld's units print it)
    line = "Feb 20 18:59:13 node2 slurmd[57977]: slurmd: error: Munge decode failed: Expired credential"
    assert [e.fields["side"] for e in ours(feed([line], "syslog", "node2"))] == ["node"]


def test_near_miss_the_journals_tag_then_slurmds_debug_line_is_not_read() -> None:
    line = "Feb 20 18:59:13 node2 slurmd[57977]: slurmd: debug:  Munge decode failed: Expired credential (retrying ...)"
    assert ours(feed([line], "syslog", "node2")) == []


def test_slurmctld_draining_the_node_whose_prolog_failed() -> None:
    # src/slurmctld/node_mgr.c validate_node_specs: `error("%s: Prolog or job env setup failure on node %s, draining
    # the node", __func__, ...)`
    line = ("[2024-01-01T10:00:00.000] error: validate_node_specs: Prolog or job env setup failure on node gpu-07, "
            "draining the node")
    got = ours(feed([line], "scheduler", "ctl"))
    assert [(e.fields["host"], e.fields.get("weak")) for e in got] == [("gpu-07", None)]


def test_near_miss_a_hostlist_names_no_one_node() -> None:
    # src/slurmctld/agent.c: `error("Prolog/Epilog failure on nodes %s%s", ...)` with a hostlist: no node it can name
    line = "[2024-01-01T10:00:00.000] error: Prolog/Epilog failure on nodes gpu-[07-08], set to state DRAIN"
    assert ours(feed([line], "scheduler", "ctl")) == []


# dun/munge#118 (https://github.com/dun/munge/issues/118): munged not running where sbatch ran
MUNGED_DOWN = [
    "sbatch: error: If munged is up, restart with --num-threads=10",
    'sbatch: error: Munge encode failed: Failed to access "/run/munge/munge.socket.2": No such file or directory',
    "sbatch: error: slurm_send_node_msg: auth_g_create: REQUEST_SUBMIT_BATCH_JOB has authentication error",
    "sbatch: error: Batch job submission failed: Protocol authentication error",
]


def test_munged_down_where_sbatch_ran_is_the_nodes_slurm_weakly() -> None:
    got = ours(feed(MUNGED_DOWN))
    # munge's own words and Slurm's errno text, both sbatch's naming no node: weak
    assert [(e.fields["name"], e.fields.get("weak")) for e in got] == [
        ("message", True), ("SLURM_PROTOCOL_AUTHENTICATION_ERROR", True)]


def test_near_miss_munges_encode_retry_is_not_read() -> None:
    # src/plugins/auth/munge/auth_munge.c: `debug("Munge encode failed: %s (retrying ...)")`
    line = ('sbatch: debug:  Munge encode failed: Failed to access "/run/munge/munge.socket.2": No such file or '
            'directory (retrying ...)')
    assert ours(feed([line])) == []


@pytest.mark.parametrize("line,source", [
    # srun's launch failure (src/api/step_launch.c), c3nl-neuraldynamics/c3nl_cluster#62
    ("srun: error: Task launch for 1466614.0 failed on node compute-0-1: Job credential expired", "application"),
    # slurmd in the foreground (`slurmd -D`) or its log: src/slurmd/slurmd/req.c `error("Invalid job credential from
    # %u@%s: %m", ...)`, as the Slurm FAQ quotes it
    ("slurmd: error: Invalid job credential from 1000@10.1.1.1: Job credential expired", "application"),
    ("[2017-12-19T10:53:01.123] error: Invalid job credential from 1000@10.1.1.1: Job credential expired", "syslog"),
    ("Dec 19 10:53:01 compute-0-1 slurmd[812]: error: Invalid job credential from 1000@10.1.1.1: Job credential "
     "expired", "syslog"),
], ids=["srun", "slurmd-foreground", "slurmd-log", "slurmd-syslog"])
def test_every_form_reaches_the_same_row(line: str, source: str) -> None:
    got = ours(feed([line], source, "compute-0-1" if source == "syslog" else None))
    assert [(e.kind, e.fields["name"]) for e in got] == [("sched.error", "ESLURMD_CREDENTIAL_EXPIRED")]


def test_an_errno_text_quoted_with_a_full_stop_is_the_same_row() -> None:
    # ENCODE-DCC/chip-seq-pipeline2#150 (Caper's Slurm backend; the reporter's final period), verbatim
    line = "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation."
    got = ours(feed([line]))
    assert [(e.kind, e.fields["name"], e.fields.get("weak")) for e in got] == [
        ("sched.error", "SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT", True)]


@pytest.mark.parametrize("line", [
    # the text followed by more words, and by an ellipsis, is no errno text: the submitter's own reading decides
    "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation. Retrying later",
    "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation...",
])
def test_near_miss_an_errno_text_with_more_after_it_is_not_that_row(line: str) -> None:
    assert not any(e.fields.get("name") == "SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT" for e in ours(feed([line])))


def test_the_peer_slurm_could_not_hear_from_is_named() -> None:
    # mlr-org/batchtools#201 (https://github.com/mlr-org/batchtools/issues/201): munge keys differed
    lines = ["srun: error: slurm_receive_msgs: [[ubuntu4]:6818] failed: Socket timed out on send/recv operation",
             "srun: error: Task launch for StepId=34.0 failed on node ubuntu4: Socket timed out on send/recv operation",
             "srun: error: Application launch failed: Socket timed out on send/recv operation"]
    got = ours(feed(lines))
    assert [(e.fields["host"], e.fields.get("weak")) for e in got] == [("ubuntu4", True), ("ubuntu4", True)]


def test_slurmctlds_message_on_the_partition_the_job_named() -> None:
    # src/slurmctld/job_mgr.c _get_job_parts: `invalid partition specified: %s`, which sbatch prints before the errno
    got = ours(feed(["sbatch: error: invalid partition specified: gpu",
                     "sbatch: error: Batch job submission failed: Invalid partition name specified"]))
    assert [e.fields["setup"] for e in got] == [True, True]


def test_near_miss_slurmctlds_own_info_line_on_the_partition_is_not_the_jobs_output() -> None:
    # the same words in slurmctld's log at info level (`_get_job_parts: invalid partition specified: gpu`)
    assert ours(feed(["[2024-01-01T10:00:00.000] _get_job_parts: invalid partition specified: gpu"], "syslog",
                     "ctl")) == []


def test_the_step_set_up_on_the_node_failed() -> None:
    # src/slurmd/slurmstepd/mgr.c _fork_all_tasks: the task plugins (the step's cgroups) before the tasks start
    got = ours(feed(["slurmstepd: error: Failed to invoke task plugins: one of task_p_pre_setuid functions returned "
                     "error"], "syslog", "node-02"))
    assert [(e.fields["side"], e.fields.get("weak")) for e in got] == [("node", None)]


def test_near_miss_a_task_binding_at_launch_is_weak() -> None:
    # src/slurmd/slurmstepd/task.c exec_task: a binding the job may have asked for that the node cannot make
    got = ours(feed(["slurmstepd: error: Failed to invoke task plugins: task_p_pre_launch error"], "syslog",
                    "node-02"))
    assert [e.fields.get("weak") for e in got] == [True]


# --------------------------------------------------------------------------
# A node's reason (catalog/slurm.yaml `node_reasons`): why Slurm set it DOWN or DRAIN, in every form that prints it
# --------------------------------------------------------------------------

def reasons(lines: list[str], source: str = "application") -> list[tuple[str, str | None, str | None]]:
    """The node-reason reader's events: (kind, the node the form names, the table's row or the reason)."""
    got = feed(lines, source, None if source == "application" else "ctl")
    return [(e.kind, e.fields.get("host") or None, e.fields.get("text") if e.kind != "sched.node_down"
             else e.fields.get("reason")) for e in got
            if e.kind in ("sched.node_down", "sched.node_reason")
            or (e.kind == "sched.error" and e.fields.get("name") == "node_reason")]


def test_node_reasons_each_row_reads_itself() -> None:
    from firstfault.extract.slurmerr import NodeReasonExtractor, read_node_reason
    rows = slurm_tables().node_reasons
    assert {r.means for r in rows} == {"lost", "node", "health_check", "symptom", "none"}
    for r in rows:
        text = r.text.replace("{any}", "gpu")
        assert read_node_reason(text) == r
        assert any(lit in text for lit in NodeReasonExtractor().literals)


@pytest.mark.parametrize(
    ("lines", "want"),
    [
        # `scontrol show node` (src/api/node_info.c: `Reason=%s [%s@%s]` after the record's NodeName= line)
        (["NodeName=gpu-07 Arch=x86_64 CoresPerSocket=32", "   State=DOWN+NOT_RESPONDING ThreadsPerCore=1",
          "   Reason=Not responding [slurm@2023-05-02T10:00:01]"],
         [("sched.node_down", "gpu-07", "Not responding")]),
        # slurmctld's registration check (src/interfaces/gres.c _node_config_validate), its numbers after the words
        (["NodeName=gpu-08 Arch=x86_64", "   Reason=gres/gpu count reported lower than configured (7 < 8) "
          "[slurm@2024-01-02T03:04:05]"],
         [("sched.error", "gpu-08", "gres/{any} count reported lower than configured")]),
        # the record's reason line pasted alone (`scontrol show node | grep Reason`: no NodeName=, no [who@when]), as
        # a public Slurm-on-Kubernetes runbook quotes slurmd without NVML: a node's reason line stands on its own
        (["Reason=gres/gpu count reported lower than configured (0 < 4)"],
         [("sched.error", None, "gres/{any} count reported lower than configured")]),
        # near miss: `scontrol show job`'s line of the same key, after JobState= (src/api/job_info.c)
        (["   JobState=PENDING Reason=gres/gpu count reported lower than configured (0 < 4) Dependency=(null)"], []),
        # `sinfo -R` (its default `%20E %9u %19H %N`): one event per node of the hostlist
        (["REASON               USER      TIMESTAMP           NODELIST",
          "Not responding       slurm     2023-05-02T10:00:01 node[01-02]",
          "Prolog error         root      2023-05-02T10:00:01 node03"],
         [("sched.node_down", "node01", "Not responding"), ("sched.node_down", "node02", "Not responding"),
          ("sched.error", "node03", "Prolog error")]),
        # SlinkyProject/slurm-operator#14: sinfo cuts a reason longer than its 20 columns (`gres/gpu count reported
        # lower than configured (0 < 4)`): the cut words are the beginning of the row's
        (["REASON               USER      TIMESTAMP           NODELIST",
          "gres/gpu count repor slurm     2026-04-14T06:39:53 slinky-0"],
         [("sched.error", "slinky-0", "gres/{any} count reported lower than configured")]),
        # near misses: a reason shorter than the column is whole, not cut; a cut reason that begins no row (an
        # administrator's words)
        (["gres/gpu count repo  slurm     2026-04-14T06:39:53 slinky-0"], []),
        (["replace DIMM B2 on c root      2026-04-14T06:39:53 slinky-0"], []),
        # ArjunaCluster/ArjunaUsers#157: the reason pasted alone with who set it and when
        (["Node unexpectedly rebooted [slurm@2022-07-13T07:38:29]"],
         [("sched.node_reason", None, "Node unexpectedly rebooted")]),
        # ArjunaCluster/ArjunaUsers#64: an administrator's words, then Slurm's, joined by ` : `: the most telling
        # decides
        (["c011: Reason=apply ntpd fix : reboot issued : reboot timed out [slurm@2021-09-17T20:52:56]"],
         [("sched.node_down", "c011", "apply ntpd fix : reboot issued : reboot timed out")]),
        # slurmctld's log (AWS ParallelCluster's troubleshooting guide quotes the first; src/slurmctld/node_mgr.c)
        (["[2024-09-12T06:42:50.393+00:00] validate_node_specs: Node Login-1 unexpectedly rebooted "
          "boot_time=1726123354 last response=1726123285"],
         [("sched.node_reason", "Login-1", "Node unexpectedly rebooted")]),
        (["[2024-09-12T06:42:50.393] update_node: node gpu-09 reason set to: Low RealMemory (reported:100 < 100.00% "
          "of configured:200)"],
         [("sched.error", "gpu-09", "Low RealMemory")]),
        # validate_node_specs' debug line before the reason it sets (src/slurmctld/node_mgr.c, `Node %s has low
        # real_memory size (%lu / %lu) < %.2f%%`, filled in): the reason's own row, on the node it names
        (["[2024-01-02T03:04:05.000] debug:  Node gpu-09 has low real_memory size (500000 / 512000) < 100.00%"],
         [("sched.error", "gpu-09", "Low RealMemory")]),
        # near misses: what followed the job's end (labordynamicsinstitute/ecco-notes, `scontrol show nodes=... | grep
        # Reason`), an administrator's own words, a job's reason, Slurm's words in prose
        (["Reason=Kill task failed [root@2025-02-21T18:19:11]"], []),
        (["NodeName=gpu-07 Arch=x86_64", "   Reason=replace DIMM B2 [root@2025-02-21T18:19:11]"], []),
        (["JobId=42 JobName=train JobState=FAILED Reason=NonZeroExitCode Dependency=(null)"], []),
        (["JobId=42 JobName=train JobState=PENDING Reason=Prolog error Dependency=(null)"], []),
        (["the login node said Not responding for a while yesterday"], []),
    ],
)
def test_node_reason_forms(lines: list[str], want: list[tuple[str, str | None, str | None]]) -> None:
    assert reasons(lines) == want


def test_node_reason_in_slurmctlds_syslog() -> None:
    line = "Jun 13 06:48:47 master slurmctld[483]: slurmctld: validate_node_specs: Node worker1 unexpectedly " \
           "rebooted boot_time=1781333310 last response=1781333250"
    assert reasons([line], "syslog") == [("sched.node_reason", "worker1", "Node unexpectedly rebooted")]


def _node_bundle(make_bundle: BundleMaker, text: list[str], state: str | None) -> Verdict:
    wl = copy.deepcopy(WORKLOAD)
    wl["workload"]["nodes"] = ["gpu-07", "gpu-08"]
    wl["workload"].pop("ranks")
    if state is None:
        wl["workload"].pop("terminal_state")
    else:
        wl["workload"]["terminal_state"] = state
    wl["sources"] = [{"kind": "application", "path": "node-reasons.txt"}]
    return Analyzer().analyze_path(str(make_bundle({"node-reasons.txt": "".join(s + "\n" for s in text)}, wl)))


def test_engine_a_node_slurm_found_not_responding_is_the_lost_node(make_bundle: BundleMaker) -> None:
    v = _node_bundle(make_bundle, ["NodeName=gpu-08 Arch=x86_64", "   State=DOWN+NOT_RESPONDING",
                                   "   Reason=Not responding [slurm@2026-11-02T10:20:00]"], "NODE_FAIL")
    rc = v.root_cause
    assert rc is not None and rc.category == "node.unreachable" and rc.nodes == ["gpu-08"]


def test_engine_near_miss_an_unexpected_reboot_names_no_cause(make_bundle: BundleMaker) -> None:
    v = _node_bundle(make_bundle, ["NodeName=gpu-08 Arch=x86_64",
                                   "   Reason=Node unexpectedly rebooted [slurm@2026-11-02T10:20:00]"], "FAILED")
    assert v.root_cause is None and v.attributed_domain == "unknown"
    assert [(s.category, s.nodes) for s in v.symptoms] == [("node.out_of_service", ["gpu-08"])]


def test_a_node_health_checks_drain_is_a_symptom_its_reboot_bookkeeping_nothing() -> None:
    # LBNL NHC's reason (mej/nhc helpers/node-mark-offline: `Reason="$LEADER $NOTE"`, LEADER `NHC:`), as a public Slurm
    # parser's test fixture of `scontrol show node` holds it
    assert reasons(["NodeName=node01 Arch=x86_64 CoresPerSocket=8",
                    "    Reason=NHC: check_ps_service:  Service sshd (process sshd) owned by root not running "
                    "[root@2024-08-20T16:32:47]"]) == [("sched.node_reason", "node01", "NHC:")]
    # near miss: NHC's own drain after a reboot it waits to clear (the same helper's `Temporarily offlining ...`)
    assert reasons(["NodeName=node01 Arch=x86_64", "    Reason=NHC: Temporarily offlining node01 after reboot until "
                    "NHC can online it [root@2024-08-20T16:32:47]"]) == []


# --------------------------------------------------------------------------
# The clients that only submit a job (catalog/slurm.yaml `submitters`): a line no row reads is the job's request
# --------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    # FNNDSC/pman#200 (https://github.com/FNNDSC/pman/issues/200): slurmctld's words on the request, before the errno's
    "sbatch: error: CPU count per node can not be satisfied",
    # eth-cscs/DLA-Future#1227 (https://github.com/eth-cscs/DLA-Future/pull/1227): the QOS limit's name alone
    "sbatch: error: QOSMaxSubmitJobPerUserLimit",
    # facebookresearch/LaViLa#42 (https://github.com/facebookresearch/LaViLa/issues/42): a site's job_submit plugin's
    # own message, which slurmctld hands back to the client
    "sbatch: error: You must always specify a type when requesting gpu GRES",
], ids=["cpu-count", "qos-limit", "job-submit-plugin"])
def test_a_submitters_unread_error_is_the_jobs_request(line: str) -> None:
    got = ours(feed([line]))
    assert [(e.kind, e.fields.get("setup"), e.fields["exc_type"]) for e in got] == [
        ("app.exception", True, "SlurmError")]


def test_near_miss_a_submitters_retry_and_its_librarys_plumbing_are_not_the_jobs() -> None:
    # src/sbatch/sbatch.c: `error("Slurm temporarily unable to accept job, sleeping and retrying")`; the library's
    # `error("%s: ...", __func__)` (SchedMD's slurm_send_node_msg, as MUNGED_DOWN above prints it)
    lines = ["sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying",
             "sbatch: error: slurm_send_node_msg: auth_g_create: REQUEST_SUBMIT_BATCH_JOB has authentication error"]
    assert ours(feed(lines)) == []


def test_near_miss_srun_is_no_submitter() -> None:
    # srun launches and watches the job's steps: an error of its that no row reads names no side (src/srun/)
    assert ours(feed(["srun: error: Unable to create step for job 4242: Some words no row holds"])) == []


def test_near_miss_a_submitters_info_line_is_not_read() -> None:
    # sbatch's own notice at no error level (src/sbatch/sbatch.c: `info("Submitted batch job %u")` goes to stdout;
    # a site's `sbatch: ` verbose line)
    assert ours(feed(["sbatch: Submitted batch job 4242", "sbatch: partition gpu has 4 idle nodes"])) == []


def test_engine_an_exception_that_quotes_the_refusal_is_one_cause(make_bundle: BundleMaker) -> None:
    # facebookresearch/LaViLa#42's title, the first of the two sbatch lines it joins: submitit's FailedJobError around
    # the site's refusal, on one line. The class reads `app.exception`, the client's words `app.exception.setup`: one
    # report read twice, one cause (the finer), not two candidates
    v = _analyze(make_bundle, ["submitit.core.utils.FailedJobError: sbatch: error: You must always specify a type when "
                               "requesting gpu GRES"])
    rc = v.root_cause
    assert rc is not None and rc.category == "app.exception.setup"
    assert v.candidates == []


def _found(rule_id: str, *lines: int, file: str = "slurm-77.out") -> Finding:
    rule = shipped_catalog().by_id(rule_id)
    assert isinstance(rule, Rule)
    evs = [Event(kind="x", time=None, node=None, rank=None, fields={},
                 evidence=Evidence(source="application", file=file, line=n, text="t")) for n in lines]
    return Finding(rule=rule, category=rule.category, domain=rule.domain or "", events=evs, nodes=[], devices=[],
                   first=None, count=1, weak=False)


def test_one_line_read_to_a_finer_category_is_one_report() -> None:
    assert _read_finer(_found("app-exception", 1), _found("app-setup", 1))
    assert _read_finer(_found("app-exception", 1), _found("app-setup", 1, 2))


@pytest.mark.parametrize("coarse,fine", [
    (("app-exception", 2), ("app-setup", 1)),  # another line: two reports the evidence does not order
    (("app-exception", 1, 2), ("app-setup", 1)),  # the coarse reading holds a line the finer does not
    (("app-setup", 1), ("app-exception", 1)),  # the coarser category is never the finer one
    (("app-exception", 1), ("host-oom", 1)),  # another domain's reading of the line is another cause
], ids=["other-line", "more-lines", "reversed", "other-domain"])
def test_near_miss_other_lines_or_categories_are_two_reports(coarse: tuple[object, ...],
                                                             fine: tuple[object, ...]) -> None:
    a = _found(str(coarse[0]), *(int(str(n)) for n in coarse[1:]))
    b = _found(str(fine[0]), *(int(str(n)) for n in fine[1:]))
    assert not _read_finer(a, b)


def test_near_miss_the_same_line_number_of_another_file_is_another_report() -> None:
    assert not _read_finer(_found("app-exception", 1, file="a.log"), _found("app-setup", 1, file="b.log"))



# --------------------------------------------------------------------------
# A Slurm daemon that could not run on the node, in its own words (catalog/slurm.yaml `daemons` and its start-up rows)
# --------------------------------------------------------------------------

# ComputeCanada/puppet-magic_castle#27: slurmd's fatal line in the node's syslog, a gres.conf it would not take
MAGIC_CASTLE = ("Feb 20 18:59:13 node2.int.rubberducky.calculquebec.cloud slurmd[57977]: fatal: gres.conf duplicate "
                "records for gpu")


def test_a_daemons_fatal_line_is_the_nodes_slurm() -> None:
    got = ours(feed([MAGIC_CASTLE], "syslog", "node2"))
    assert [(e.kind, e.fields["side"], e.fields.get("weak")) for e in got] == [("sched.error", "node", None)]
    # slurmd in the foreground under systemd, the journal's tag before its own (bibigrid#705's form)
    assert read_slurm_error("slurmd[12912]: slurmd: fatal: unable to load plugin gres/gpu") is not None


@pytest.mark.parametrize("line", [
    # srun is a client: its fatal words are the job's request (src/srun/opt.c), not a daemon's
    "srun: fatal: Invalid --distribution specification",
    # slurmstepd's tag of one step in slurmd's log file: one step's, not the daemon ending itself
    "[2024-01-01T10:00:00.000] [4242.0] fatal: _step_setup: no job step for this node",
    # a daemon's notice, no fatal level
    "Feb 20 18:59:13 node2 slurmd[57977]: slurmd version 23.02.5 started",
], ids=["srun-client", "step-tag", "notice"])
def test_near_miss_no_daemon_ending_itself(line: str) -> None:
    assert ours(feed([line], "syslog", "node2")) == []


def test_near_miss_a_fatal_log_line_in_the_jobs_own_output_is_no_daemons() -> None:
    # the log file's form, but in the job's output: no Slurm daemon's log
    assert ours(feed(["[2024-01-01T10:00:00.000] fatal: cannot open input deck"])) == []


def test_slurmd_initialization_failed_in_its_log() -> None:
    # nateGeorge/slurm_gpu_ubuntu#7: the cgroup/v2 plugin missing from the node's build, then slurmd gives up
    # (src/slurmd/slurmd/slurmd.c main)
    got = ours(feed(["[2023-10-16T10:42:01.139] error: Unable to initialize cgroup plugin",
                     "[2023-10-16T10:42:01.139] error: slurmd initialization failed"], "syslog", "gpu1"))
    assert [e.fields["side"] for e in got] == ["node"]


def test_the_controllers_duplicated_node_host_name() -> None:
    # stackhpc/ansible-role-openhpc#95: two partitions written as two NodeName lines for one host
    line = ("Feb 24 09:21:38 nrel-control.novalocal slurmctld[26180]: error: Duplicated NodeHostName nrel-hpc-0 in "
            "the config file")
    assert [e.fields["side"] for e in ours(feed([line], "syslog", "nrel-control"))] == ["node"]


def test_a_config_only_gpu_discarded_is_weak() -> None:
    # SlinkyProject/slurm-operator#57 (src/plugins/gres/gpu/gres_gpu.c _merge_system_gres_conf)
    got = ours(feed(["[2025-10-06T15:42:05] error: Discarding the following config-only GPU due to lack of File "
                     "specification:"], "syslog", "mi300x-0"))
    assert [(e.fields["side"], e.fields.get("weak")) for e in got] == [("node", True)]


def test_a_daemon_log_line_that_lost_its_opening_bracket() -> None:
    # clustervision/trinity#424: slurmd.log pasted with the line's first `[` lost
    got = ours(feed(["2015-09-14T06:44:37.084] error: Munge decode failed: Expired credential"], "syslog", "c001"))
    assert [e.fields["side"] for e in got] == ["node"]


def test_near_miss_slurmds_success_and_a_retry_are_not_read() -> None:
    assert read_slurm_error("[2023-10-16T10:42:01.139] debug3: slurmd initialization successful") is None
    assert ours(feed(["slurmd: debug:  Munge decode failed: Expired credential (retrying ...)"], "syslog", "c1")) == []


# --------------------------------------------------------------------------
# The SPANK plugin stack the site configures (src/common/spank.c, srun_job.c, sbatch.c, slurmstepd/mgr.c)
# --------------------------------------------------------------------------

@pytest.mark.parametrize("lines", [
    # aws/aws-parallelcluster#6459: a temporary file left in plugstack.conf.d, then srun's word that its stack failed
    ["srun: error: spank: Failed to open /opt/slurm/etc/plugstack.conf.d/sed6Yj8Ga: Permission denied",
     "srun: error: Plug-in initialization failed"],
    # a required plugin that will not load (spank.c's format; the .so gone from the node)
    ["srun: error: spank: /usr/lib64/slurm/spank_pyxis.so: Plugin file not found",
     "srun: error: spank: /etc/slurm/plugstack.conf.d/pyxis.conf:1: Failed to load plugin /usr/lib64/slurm/"
     "spank_pyxis.so. Aborting."],
    ["sbatch: error: Failed to initialize plugin stack"],
    ["slurmstepd: error: _spawn_job_container: Plugin stack initialization failed."],
])
def test_the_sites_plugin_stack_that_will_not_start_is_the_nodes_slurm(lines: list[str]) -> None:
    got = ours(feed(lines))
    assert got and {e.fields["side"] for e in got} == {"node"}


def test_near_miss_a_plugin_refusing_the_jobs_option_is_not_the_stacks() -> None:
    # srun's `Plugin stack post-option processing failed.` follows a plugin's refusal of the job's own option value,
    # and a missing plugstack.conf (ENOENT) is no error (debug only): neither is the site's stack failing
    assert ours(feed(["srun: error: Plugin stack post-option processing failed."])) == []
    assert ours(feed(["srun: debug:  spank: opening plugin stack /etc/slurm/plugstack.conf"])) == []
