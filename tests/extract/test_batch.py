"""The accounting readers of SGE, PBS/Torque, LSF and Flux (extract/batch.py).

None of these schedulers can run here, so every input is output their tools printed on a real cluster and
someone posted; each fixture's source is named where it is used (tests/fixtures/scheduler/). The expected
states are what the posted record and its thread say happened, decided before the reader ran.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from firstfault.extract.scheduler import read_scheduler
from firstfault.extract.structured import StructuredResult
from firstfault.model import Event

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "scheduler"
WINDOW = (datetime(2021, 1, 1, tzinfo=UTC), datetime(2021, 12, 31, tzinfo=UTC))


def read(name: str, fmt: str, *, job_id: str | None = None, tz: tzinfo = UTC,
         window: tuple[datetime | None, datetime | None] = WINDOW, data: bytes | None = None) -> StructuredResult:
    raw = data if data is not None else (FIX / name).read_bytes()
    return read_scheduler(raw, fmt, f"scheduler/{name}", job_id=job_id, tz=tz, window=window)


def jobs(res: StructuredResult) -> list[Event]:
    return [e for e in res.events if e.kind == "sched.job"]


def the_job(res: StructuredResult) -> Event:
    [job] = jobs(res)
    return job


# --------------------------------------------------------------------------
# SGE / UGE: qacct -j
# --------------------------------------------------------------------------


def test_qacct_a_job_that_exited_1_failed() -> None:
    # marbl/canu#1279 (https://github.com/marbl/canu/issues/1279), `qacct -j 3192235` as posted (the post stops
    # after ru_nvcsw): failed 0, exit_status 1, the job's own error.
    res = read("qacct-canu-1279.txt", "sge-qacct")
    job = the_job(res)
    assert job.fields["state"] == "FAILED" and job.fields["exit_code"] == 1
    assert "due_to" not in job.fields and "signal" not in job.fields
    assert job.fields["scheduler"] == "sge" and job.fields["job_id"] == "3192235"
    assert job.fields["nodelist"] == "node008.cm.cluster" and res.hosts == {"node008.cm.cluster"}
    assert job.time == datetime(2019, 3, 13, 15, 41, 2, tzinfo=UTC)
    assert job.evidence.line == 2 and "exit_status=1" in job.evidence.text


def test_qacct_failed_37_that_names_three_limits_is_decided_by_the_jobs_use() -> None:
    # PennLINC/babs, its notes on failed fMRIPrep jobs: `qacct -j 9638568` as posted (elided with `....`):
    # `failed 37 : qmaster enforced h_rt, h_cpu, or h_vmem limit`, exit_status 137, `-l h_rt=86400,...,h_vmem=25G`;
    # the notes' author: "the job has been running for 24h (see h_rt) and finally got killed because it
    # reached h_rt". The job ran 24 h 1 s against h_rt 86400: the time limit, not the memory one.
    res = read("qacct-h_rt-babs.txt", "sge-qacct")
    job = the_job(res)
    assert (job.fields["state"], job.fields["due_to"], job.fields["signal"]) == ("TIMEOUT", "time_limit", 9)
    assert job.fields["reason"] == "qmaster enforced h_rt, h_cpu, or h_vmem limit"
    assert job.time == datetime(2022, 3, 24, 13, 33, 32, tzinfo=UTC)
    # The posted record lost its jobnumber line: said, not guessed.
    assert [i.message for i in res.issues] == ["qacct record without jobnumber: job id unknown"]


def test_qacct_failed_37_without_its_limits_ends_at_a_whole_limit() -> None:
    # StatFunGen/xqtl-protocol#571 (https://github.com/StatFunGen/xqtl-protocol/issues/571), `qacct -j 5473097`
    # pasted with the prompt line above it: `failed 37` (three limits named), no `category`, ru_wallclock 18001s;
    # the maintainer: "Apparently the two samples' STAR failed due to walltime". 5 h and the second the
    # qmaster's check took: a time limit a person asked for, not a memory one.
    res = read("qacct-failed37-xqtl-571.txt", "sge-qacct", job_id="5473097")
    job = the_job(res)
    assert (job.fields["state"], job.fields["due_to"], job.fields["signal"]) == ("TIMEOUT", "time_limit", 9)
    assert job.fields["job_id"] == "5473097" and job.fields["nodelist"] == "node48" and res.issues == []
    # PennLINC/babs's record (above) without its `category` line: 24 h 1 s, the same end.
    text = b"".join(ln for ln in (FIX / "qacct-h_rt-babs.txt").read_bytes().splitlines(keepends=True)
                    if not ln.startswith(b"category"))
    job = the_job(read("qacct-h_rt-babs.txt", "sge-qacct", data=text))
    assert (job.fields["state"], job.fields["due_to"]) == ("TIMEOUT", "time_limit")


def test_qacct_failed_37_that_ends_at_no_whole_limit_names_no_limit() -> None:
    # Near miss: the xqtl-protocol#571 record with its end moved 7 min 30 s earlier (ru_wallclock 17551s; the
    # end_time line left out): "a limit" of three, and a time used that no limit a person sets explains.
    raw = (FIX / "qacct-failed37-xqtl-571.txt").read_bytes()
    text = raw.replace(b"ru_wallclock 18001s", b"ru_wallclock 17551s").replace(b"end_time", b"#end_time")
    job = the_job(read("x.txt", "sge-qacct", data=text))
    assert job.fields["state"] == "FAILED" and "due_to" not in job.fields and job.fields["signal"] == 9
    # Near miss: the same 5 h, but `failed 100` (killed, no limit said enforced): a kill at a round time is
    # no limit by itself.
    text = raw.replace(b"37  : qmaster enforced h_rt, h_cpu, or h_vmem limit", b"100 : assumedly after job")
    job = the_job(read("x.txt", "sge-qacct", data=text))
    assert job.fields["state"] == "FAILED" and "due_to" not in job.fields and job.fields["signal"] == 9


def test_qacct_failed_100_with_a_signal_and_no_limit_reached_is_no_limit() -> None:
    # hpc-gridware/clusterscheduler#66 (https://github.com/hpc-gridware/clusterscheduler/issues/66): a job under
    # h_vmem=14G that its own application ended with SIGUSR2 (`failed: 100 : assumedly after job`,
    # `exit_status: 140`, in the `key:` form of that report). A signal is not a scheduler's limit.
    job = the_job(read("qacct-failed100-ocs66.txt", "sge-qacct"))
    assert (job.fields["state"], job.fields["signal"], job.fields["exit_code"]) == ("FAILED", 12, 140)
    assert "due_to" not in job.fields


def test_qacct_failed_28_is_the_jobs_own_set_up() -> None:
    # PacificBiosciences/SMRT-Analysis#213 (https://github.com/PacificBiosciences/SMRT-Analysis/issues/213): the
    # job's working directory (`cwd /tmp/smrtanalysis/tmpHMRv1N`) was not on the node it ran on; "This all does work
    # if I manually create the tmp work file on each member of the cluster". `failed 28 : changing into working
    # directory` (SGE's SSTATE_NO_CWD): the job never ran, for its own set-up.
    job = the_job(read("qacct-failed28-smrt-213.txt", "sge-qacct"))
    assert (job.fields["state"], job.fields["due_to"]) == ("FAILED", "setup")
    assert job.fields["reason"] == "changing into working directory"
    assert job.fields["nodelist"] == "node11.na.agrogroup.net"
    # Near miss: failed 100 (`assumedly after job`, above) is a code of the table's kind that names no set-up.
    assert "due_to" not in the_job(read("qacct-failed100-ocs66.txt", "sge-qacct")).fields


def test_qacct_job_id_keeps_that_jobs_record() -> None:
    # qacct prints a line of `=` before each record.
    both = (FIX / "qacct-canu-1279.txt").read_bytes() + b"=" * 62 + b"\n" + (FIX / "qacct-h_rt-babs.txt").read_bytes()
    res = read("two.txt", "sge-qacct", data=both, job_id="3192235")
    assert [e.fields["job_id"] for e in jobs(res)] == ["3192235"]
    # An id no record has: the file is read whole, and the reader says so.
    res = read("two.txt", "sge-qacct", data=both, job_id="4242")
    assert len(jobs(res)) == 2 and any("no record of job 4242" in i.message for i in res.issues)


def test_qacct_times_are_the_bundles_local_time() -> None:
    job = the_job(read("qacct-canu-1279.txt", "sge-qacct", tz=ZoneInfo("Europe/London")))
    assert job.time == datetime(2019, 3, 13, 15, 41, 2, tzinfo=UTC)  # GMT in March
    job = the_job(read("qacct-canu-1279.txt", "sge-qacct", tz=ZoneInfo("America/New_York")))
    assert job.time == datetime(2019, 3, 13, 19, 41, 2, tzinfo=UTC)


# --------------------------------------------------------------------------
# PBS / Torque: qstat -f, tracejob
# --------------------------------------------------------------------------


def test_qstat_fx_a_signal_past_the_walltime_limit_is_the_time_limit() -> None:
    # Griffith University's HPC lesson ("Running and querying your job"), `qstat -xf 49223` of its
    # `simple_failing_test` job on PBS Pro: resources_used.walltime 00:00:49 against Resource_List.walltime
    # 00:00:30, Exit_status 271 (256 + SIGTERM): PBS ended it at its walltime.
    res = read("qstat-fx-griffith-49223.txt", "pbs-qstat")
    job = the_job(res)
    assert (job.fields["state"], job.fields["due_to"], job.fields["signal"], job.fields["exit_code"]) == (
        "TIMEOUT", "time_limit", 15, 271)
    assert job.fields["job_id"] == "49223.gc-prd-hpcadm" and job.fields["nodelist"] == "gc-prd-hpcn001"
    assert job.time == datetime(2020, 6, 24, 15, 34, 9, tzinfo=UTC)  # mtime
    # The comment PBS cut at the width is read whole again.
    assert "(gc-prd-hpcn001:ncpus=1) and failed" in job.evidence.text


def test_qstat_f_a_signal_within_the_limits_is_no_limit() -> None:
    # bcgsc/mavis's Torque scheduler tests, a `qstat -f` of array task 48[1] on torque01.bcgsc.ca: job_state C,
    # exit_status 271, "deleted because its dependency ... can never be satisfied", walltime 16:00:00 and no
    # use recorded. Killed, but by no limit.
    job = the_job(read("qstat-f-torque-mavis-48.txt", "pbs-qstat", job_id="48"))
    assert (job.fields["state"], job.fields["signal"]) == ("FAILED", 15) and "due_to" not in job.fields
    assert job.fields["job_id"] == "48[1].torque01.bcgsc.ca"


def test_tracejob_without_an_end_says_nothing_of_the_end() -> None:
    # cBio/cbio-cluster#188 (https://github.com/cBio/cbio-cluster/issues/188), the posted tracejob: queued,
    # run, cut there. No record of how it ended, so no job state.
    assert read("tracejob-cbio-188.txt", "pbs-tracejob").events == []


def test_pbs_server_log_root_deleting_the_job_is_an_admin_cancel() -> None:
    # cBio/cbio-cluster#403 (https://github.com/cBio/cbio-cluster/issues/403), PBS server log lines: "Job deleted
    # at request of root@hal-sched1"; the admin: "I'm the only person that would ..." (root deleted it).
    job = the_job(read("pbs-server-log-cbio-403.txt", "pbs-tracejob"))
    assert (job.fields["state"], job.fields["due_to"], job.fields["job_id"]) == (
        "CANCELLED", "admin_cancelled", "7082041.hal-sched1.local")
    assert job.time == datetime(2016, 4, 18, 22, 55, 25, tzinfo=UTC)


@pytest.mark.parametrize("message", [
    "Job Rerun at request of Scheduler@pbs-server",
    "job signaled with suspend by Scheduler@pbs-server",
    "Job preempted by requeuing",
    "Job preempted by suspension",
])
def test_pbs_preempting_a_job_is_preemption(message: str) -> None:
    # OpenPBS runs the scheduler's preemption as a request of the scheduler's own (src/server/req_preemptjob.c): a
    # requeue is a rerun the server logs as `Job Rerun at request of Scheduler@HOST` (req_rerun.c, msg_manager), a
    # suspension a signal (`job signaled with suspend by Scheduler@HOST`, the server log line OpenPBS's functional
    # tests wait for); the scheduler logs the method it took (src/scheduler/job_info.cpp). No posted log of these
    # was found beyond one thread's tracejob: each message here stands in the server log's line form (as
    # cBio/cbio-cluster#403's, above), so these lines are composed, not posted.
    line = f"11/06/2019 14:54:53;0008;Server@pbs-server;Job;7537771.pbs-server;{message}\n".encode()
    job = the_job(read("server.log", "pbs-tracejob", data=line))
    assert (job.fields["state"], job.fields["due_to"]) == ("PREEMPTED", "preemption")


@pytest.mark.parametrize("message", [
    # `qrerun` by an operator: the same message, another requester
    "Job Rerun at request of root@pbs-server",
    # the scheduler weighing a job it may still spare (`Simulation: preemption of job not needed.`)
    "Simulation: preempting job",
])
def test_pbs_rerun_by_an_operator_or_a_simulated_preemption_is_none(message: str) -> None:
    # Near miss of the above.
    line = f"11/06/2019 14:54:53;0040;pbs_sched;Job;7537771.pbs-server;{message}\n".encode()
    assert jobs(read("sched.log", "pbs-tracejob", data=line)) == []


def test_tracejob_moms_walltime_kill() -> None:
    # The Torque 4.2 administrator guide, "Using tracejob to locate job failures" (docs.adaptivecomputing.com),
    # its MOM line as quoted there.
    line = b"03/02/2005 18:02:11 M walltime 210 exceeded limit 100\n"
    job = the_job(read("tracejob.txt", "pbs-tracejob", data=line))
    assert (job.fields["state"], job.fields["due_to"]) == ("TIMEOUT", "time_limit")
    # Near miss: the use of walltime in an accounting line is no kill.
    acct = b"06/06/2005 14:07:17;E;407.ign1.zeta2.org;user=guest queue=batch Resource_List.walltime=00:16:40\n"
    assert jobs(read("acct.txt", "pbs-tracejob", data=acct)) == []


# --------------------------------------------------------------------------
# LSF: bjobs -l, bhist -l (and bacct -l, the same records)
# --------------------------------------------------------------------------


def test_bjobs_exit_code_done_and_the_width_cut_joined() -> None:
    # gc3pie/gc3pie's LSF backend tests (gc3libs/tests/test_lsf.py): `bjobs -l` of ETH Brutus jobs 132286
    # (exit code 42) and 131851 (Done successfully), and of job 2073 at dri.edu (stamps with the year).
    failed = the_job(read("bjobs-l-gc3pie-132286.txt", "lsf-bjobs"))
    assert (failed.fields["state"], failed.fields["exit_code"], failed.fields["nodelist"]) == ("FAILED", 42, "a3010")
    assert failed.time == datetime(2021, 7, 24, 10, 26, 53, tzinfo=UTC)  # the year from the window
    done = the_job(read("bjobs-l-gc3pie-131851.txt", "lsf-bjobs"))
    assert (done.fields["state"], done.fields["exit_code"]) == ("COMPLETED", 0) and "due_to" not in done.fields
    dri = the_job(read("bjobs-l-gc3pie-2073.txt", "lsf-bjobs"))
    # `St\n                          atus <EXIT>`: the 26-column continuation is joined back.
    assert (dri.fields["state"], dri.fields["raw_state"], dri.fields["exit_code"]) == ("FAILED", "EXIT", 127)
    assert dri.time == datetime(2014, 8, 4, 12, 28, 51, tzinfo=UTC) and dri.fields["nodelist"] == "pa54.dri.edu"


def test_bacct_owner_kill_is_a_cancel() -> None:
    # gc3pie/gc3pie's LSF tests again: `bacct -l` of Brutus job 3224113, `Completed <exit>; TERM_OWNER: job killed
    # by owner.` (bacct -l prints bhist -l's record).
    job = the_job(read("bacct-l-gc3pie-3224113.txt", "lsf-bhist"))
    assert (job.fields["state"], job.fields["due_to"], job.fields["reason"]) == ("CANCELLED", "cancelled", "TERM_OWNER")
    assert job.fields["nodelist"] == "a3191" and job.time == datetime(2021, 10, 5, 17, 51, 30, tzinfo=UTC)


def test_bhist_memlimit_without_its_job_line() -> None:
    # hbs-rcs/hbsgrid-docs, "Jobs Exceeding Memory Limit": `bhist -a -l` on the HBS grid, the docs' own excerpt
    # (its `Job <...>` line elided): `Completed <exit>; TERM_MEMLIMIT: job killed after reaching\n LSF memory
    # usage limit;`, MAX MEM 48 Gbytes against MEMLIMIT 48 G.
    res = read("bhist-l-hbs-memlimit.txt", "lsf-bhist")
    job = the_job(res)
    assert (job.fields["state"], job.fields["due_to"], job.fields["exit_code"]) == ("OUT_OF_MEMORY", "memory_limit", 1)
    assert job.fields["nodelist"] == "rhrcsnod19"
    assert "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit" in job.evidence.text
    assert [i.message for i in res.issues] == ["LSF record without its `Job <ID>` line: job id unknown"]


# --------------------------------------------------------------------------
# Flux: eventlogs and flux jobs
# --------------------------------------------------------------------------


def test_flux_eventlog_json_timeout() -> None:
    # flux-framework/flux-sched#805 (https://github.com/flux-framework/flux-sched/issues/805): `flux job info
    # ƒNNzkJm7 eventlog` of a job that failed with `exception type=timeout ... resource allocation expired`.
    job = the_job(read("flux-eventlog-sched-805.json", "flux-jobs"))
    assert (job.fields["state"], job.fields["due_to"]) == ("TIMEOUT", "time_limit")
    # finish status 36352 is a wait status: the job shell exited 142 (128 + SIGALRM).
    assert (job.fields["exit_code"], job.fields["signal"]) == (142, 14)
    assert job.time == datetime.fromtimestamp(1611769351.0589771, UTC)  # the exception's time


def test_flux_eventlog_human_form() -> None:
    # flux-framework/flux-core#6713 (https://github.com/flux-framework/flux-core/issues/6713): `flux job eventlog
    # -HF`: `[Mar16 08:11] exception type="timeout" ... note="resource allocation expired"`.
    job = the_job(read("flux-eventlog-human-6713.txt", "flux-jobs"))
    assert (job.fields["state"], job.fields["due_to"]) == ("TIMEOUT", "time_limit")
    assert job.time == datetime(2021, 3, 16, 8, 11, tzinfo=UTC)


def test_flux_eventlog_of_a_job_that_finished_well() -> None:
    # Near miss: flux-framework/flux-core#5300 (https://github.com/flux-framework/flux-core/issues/5300), the raw
    # eventlog of a job without exception: `finish status=0`.
    job = the_job(read("flux-eventlog-raw-5300.txt", "flux-jobs"))
    assert (job.fields["state"], job.fields["exit_code"]) == ("COMPLETED", 0) and "due_to" not in job.fields


def test_flux_outputs_under_their_commands_are_read_each_as_what_its_command_printed() -> None:
    # Three outputs in one file, each under its command (the prompt as flux-framework/flux-core#6892 posted
    # it): `flux jobs --stats-only` (its line from flux-framework/flux-sched#805), `flux job info ID R` (a job's
    # resources, the R of flux-sched#805) and `flux job eventlog -HF ID` (flux-core#6713, above). The counts and
    # R are no record; the eventlog is its job's, named by the command.
    data = ("[garlick@fluke2:t]$ flux jobs --stats-only\n0 running, 2658 completed, 342 failed, 0 pending\n"
            "[garlick@fluke2:t]$ flux job info ƒNNzkJm7 R\n"
            '{"version": 1, "execution": {"R_lite": [{"rank": "10", "children": {"core": "9"}}], '
            '"nodelist": ["opal109"], "starttime": 1611769321, "expiration": 1611769351}}\n'
            "[garlick@fluke2:t]$ flux job eventlog -HF ƒNNzkJm7\n").encode() + (
        FIX / "flux-eventlog-human-6713.txt").read_bytes()
    res = read("flux.txt", "flux-jobs", data=data, job_id="fNNzkJm7")
    job = the_job(res)
    assert (job.fields["job_id"], job.fields["state"], job.fields["due_to"]) == ("ƒNNzkJm7", "TIMEOUT", "time_limit")
    assert job.evidence.line == 6 and res.issues == []  # the eventlog's first line
    # Near miss: the counts and R without the eventlog are no record of any job.
    assert read("flux.txt", "flux-jobs", data=data.split(b"[garlick@fluke2:t]$ flux job eventlog")[0]).events == []


def test_flux_jobs_node_failure_names_the_lost_node() -> None:
    # flux-framework/flux-core#6653 (https://github.com/flux-framework/flux-core/issues/6653): `flux jobs -Af failed
    # -no '{id.f58:<12} {exception.type:<25} {exception.note}'` on El Capitan.
    res = read("flux-jobs-node-failure-6653.txt", "flux-jobs")
    assert [(e.fields["job_id"], e.fields["state"], e.fields["due_to"]) for e in jobs(res)] == [
        ("fdFmCpYwQZ5", "NODE_FAIL", "node_failure"), ("fcod73yYa6b", "NODE_FAIL", "node_failure")]
    down = [e.fields["host"] for e in res.events if e.kind == "sched.node_down"]
    assert down == ["elcap8767", "elcap8659"] and res.hosts == {"elcap8767", "elcap8659"}
    # The job asked for: its own record.
    res = read("flux-jobs-node-failure-6653.txt", "flux-jobs", job_id="ƒcod73yYa6b")
    assert [e.fields["job_id"] for e in jobs(res)] == ["fcod73yYa6b"]


def test_flux_jobs_listing_with_its_header() -> None:
    # flux-framework/flux-workflow-examples, job-submit-cli/README.md: `flux jobs` of two running jobs, as the
    # README prints it (its padding lost to one space).
    listing = ("JOBID USER NAME ST NTASKS NNODES RUNTIME RANKS\n"
               "ƒ3ETxsR9H moussa1 io-forward R 1 1 2.858s 2\n"
               "ƒ38rBqEWT moussa1 compute.lu R 4 2 15.6s [0-1]\n").encode()
    res = read("jobs.txt", "flux-jobs", data=listing)
    assert [(e.fields["job_id"], e.fields["state"]) for e in jobs(res)] == [
        ("ƒ3ETxsR9H", "RUNNING"), ("ƒ38rBqEWT", "RUNNING")]
    assert all("due_to" not in e.fields for e in jobs(res))


def test_flux_a_bad_eventlog_line_is_an_issue_and_the_rest_is_read() -> None:
    data = (FIX / "flux-eventlog-sched-805.json").read_bytes().replace(b'{"timestamp":1611769319.5972605',
                                                                      b'{"timestamp":', 1)
    res = read("bad.json", "flux-jobs", data=data)
    assert the_job(res).fields["state"] == "TIMEOUT"
    assert [(i.line, i.message.split(":")[0]) for i in res.issues] == [(2, "eventlog")]


@pytest.mark.parametrize("fmt", ["sge-qacct", "sge-messages", "pbs-qstat", "pbs-tracejob", "lsf-bjobs", "lsf-bhist",
                                 "flux-jobs", "htcondor-ad"])
def test_empty_and_unrelated_text_give_nothing(fmt: str) -> None:
    for data in (b"", b"hello world\nnothing here\n"):
        res = read("x.txt", fmt, data=data)
        assert jobs(res) == []


def _cut(name: str) -> bytes:
    """A real record cut as threads paste it: its `Job Id:` line (and the command) left out, the lines of the
    keys that say how it ended kept, without their indentation."""
    keep = ("resources_used.", "Resource_List.", "Exit_status", "exit_status", "job_state")
    lines = (FIX / name).read_text().splitlines()
    return "\n".join(line.strip() for line in lines if line.strip().startswith(keep)).encode() + b"\n"


def test_qstat_f_cut_to_its_lines_without_the_job_id_is_still_read() -> None:
    # Griffith University's `qstat -xf 49223` above, cut to its state, exit and resource lines: the walltime kill.
    job = the_job(read("griffith-cut.txt", "pbs-qstat", data=_cut("qstat-fx-griffith-49223.txt")))
    assert (job.fields["state"], job.fields["due_to"], job.fields["signal"]) == ("TIMEOUT", "time_limit", 15)
    assert job.fields["job_id"] == ""
    # bcgsc/mavis's task killed within its limits, cut likewise: killed, by no limit.
    job = the_job(read("mavis-cut.txt", "pbs-qstat", data=_cut("qstat-f-torque-mavis-48.txt")))
    assert job.fields["state"] == "FAILED" and "due_to" not in job.fields


# --------------------------------------------------------------------------
# SGE / UGE: the qmaster's and the execd's messages files
# --------------------------------------------------------------------------


def test_sge_messages_a_job_a_signal_ended_on_a_host() -> None:
    # StarExec/StarExec#79 (the qmaster's messages file; the ticket-order line is no job's end)
    data = (b"02/21/2018 05:23:08|worker|starexec2|W|unable to find job \"9365675\" from the ticket order\n"
            b"02/25/2018 04:29:57|worker|starexec2|W|job 9882833.1 failed on host n110.star.cs.uiowa.edu assumedly "
            b"after job because: job 9882833.1 died through signal KILL (9)\n")
    job = the_job(read("messages", "sge-messages", data=data))
    assert {k: job.fields.get(k) for k in ("job_id", "state", "signal", "nodelist", "due_to")} == {
        "job_id": "9882833", "state": "FAILED", "signal": 9, "nodelist": "n110.star.cs.uiowa.edu", "due_to": None}
    assert job.time == datetime(2018, 2, 25, 4, 29, 57, tzinfo=UTC)


def test_sge_messages_the_qmasters_time_limit_and_the_execds_memory_limit() -> None:
    # the qacct `failed 37` words as the qmaster logs them, and execd_ck_to_do.c's hard-limit kill in an execd's
    # messages file (synthetic ids and hosts, the sources' format strings)
    data = (b"03/24/2022 13:33:32|worker|qm01|W|job 9638568.1 failed on host c12 qmaster enforced h_rt limit "
            b"because: job 9638568.1 died through signal KILL (9)\n"
            b"03/24/2022 14:00:01|  main|c13|W|job 9638570.1 exceeds job hard limit \"h_vmem\" of queue "
            b"\"all.q@c13\" (25769803776.00000 > limit:25769803776.00000) - sending SIGKILL\n")
    res = read("messages", "sge-messages", data=data)
    got = {e.fields["job_id"]: (e.fields["state"], e.fields.get("due_to"), e.fields.get("nodelist")) for e in jobs(res)}
    assert got == {"9638568": ("TIMEOUT", "time_limit", "c12"), "9638570": ("OUT_OF_MEMORY", "memory_limit", "c13")}


def test_sge_messages_a_soft_limit_and_other_daemon_lines_are_no_end() -> None:
    # a soft limit's warning (the job may outlive it) and the qmaster's own bookkeeping (StarExec/StarExec#79)
    data = (b"03/24/2022 14:00:01|  main|c13|W|job 9638571.1 exceeds job soft limit \"s_rt\" of queue \"all.q@c13\" "
            b"(3600.00000 > limit:3600.00000) - sending SIGUSR1\n"
            b"02/21/2018 09:24:38|worker|starexec2|W|unable to find job 9389651 from the scheduler order package\n")
    res = read("messages", "sge-messages", data=data)
    assert [(e.fields["job_id"], e.fields["state"], e.fields.get("due_to")) for e in jobs(res)] == []


# The lab's Grid Engine 8.1.9 (lab/sge.py, twelfth round): real lines of its execd and qacct.


def test_sge_messages_the_execds_hard_wallclock_is_the_time_limit() -> None:
    # lab sge_h_rt: the execd's own words at h_rt (sge_execd's `job %u.%u exceeded hard wallclock time - initiate
    # terminate method`), on the execd's host; the soft one's notice (SIGUSR1) ends no job
    data = (b"12/07/2026 14:01:19|  main|localhost|W|job 1.1 exceeded hard wallclock time - initiate terminate method\n"
            b"12/07/2026 14:01:19|  main|localhost|W|job 2.1 exceeded soft wallclock time - initiate soft notify "
            b"method\n")
    res = read("messages", "sge-messages", data=data)
    assert [(e.fields["job_id"], e.fields["state"], e.fields.get("due_to")) for e in jobs(res)] == [
        ("1", "TIMEOUT", "time_limit")]


QACCT_PE = """==============================================================
hostname     vm
jobnumber    2
taskid       undefined
start_time   Mon Dec  7 14:07:33 2026
end_time     Mon Dec  7 14:07:49 2026
granted_pe   {pe}
slots        3
failed       37  : qmaster enforced h_rt, h_cpu, or h_vmem limit
exit_status  137                  (Killed)
ru_wallclock 16s
maxvmem      {maxvmem}
category     -l h_vmem=900M -pe smp 3
"""


def test_qacct_h_vmem_is_per_slot_in_a_parallel_job() -> None:
    # lab sge_h_vmem: `-l h_vmem=900M -pe smp 3`, the execd's limit 2831155200 (3 x 900M), qacct maxvmem 2.953GB:
    # the memory limit, where 900M alone would be a third of it
    job = the_job(read("qacct", "sge-qacct", data=QACCT_PE.format(pe="smp", maxvmem="2.953GB").encode()))
    assert (job.fields["state"], job.fields["due_to"]) == ("OUT_OF_MEMORY", "memory_limit")
    # near-miss: 1.2 GB is past 900M but far under the job's 2.6 GiB: no limit reached, no reason
    job = the_job(read("qacct", "sge-qacct", data=QACCT_PE.format(pe="smp", maxvmem="1.200GB").encode()))
    assert job.fields["state"] == "FAILED" and "due_to" not in job.fields
    # and a job with no PE keeps the limit as asked
    job = the_job(read("qacct", "sge-qacct", data=QACCT_PE.format(pe="NONE", maxvmem="1.200GB").encode()))
    assert (job.fields["state"], job.fields["due_to"]) == ("OUT_OF_MEMORY", "memory_limit")


# --------------------------------------------------------------------------
# HTCondor: job ads (condor_q -l, condor_history -l)
# --------------------------------------------------------------------------

# The ads below are cut to the attributes that say how the job ended, as threads paste them (`condor_q -long ID |
# grep -i memory`: gwastro/1-ogc#2); the hold reason is the starter's as usegalaxy-eu/infrastructure-playbook#533's
# event log quotes it, the code the one gwastro/pycbc#1428 names. Ids and times are synthetic.
HELD_34 = b"""ClusterId = 36707199
ProcId = 0
JobStatus = 5
EnteredCurrentStatus = 1668147465
HoldReasonCode = 34
HoldReasonSubCode = 0
HoldReason = "Error from slot1_9@vgcnbwc-worker-c36m100-0574.novalocal: Job has gone over memory limit of 4096 \
megabytes. Peak usage: 4088 megabytes."
LastRemoteHost = "slot1_9@vgcnbwc-worker-c36m100-0574.novalocal"
RequestMemory = 4096
"""


def test_htcondor_ad_held_for_its_memory() -> None:
    job = the_job(read("ads.txt", "htcondor-ad", data=HELD_34))
    assert {k: job.fields.get(k) for k in ("job_id", "state", "due_to", "nodelist", "scheduler")} == {
        "job_id": "36707199.0", "state": "OUT_OF_MEMORY", "due_to": "memory_limit",
        "nodelist": "vgcnbwc-worker-c36m100-0574.novalocal", "scheduler": "htcondor"}


def test_htcondor_ad_periodic_hold_for_memory_by_its_words() -> None:
    # gwastro/1-ogc#2: the Open Science Grid pool's SYSTEM_PERIODIC_HOLD (its code, 26, names no resource)
    data = (b'ClusterId = 1050981\nProcId = 0\nJobStatus = 5\nHoldReasonCode = 26\n'
            b'HoldReason = "Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage 3000000."\n')
    assert the_job(read("ads.txt", "htcondor-ad", data=data)).fields["due_to"] == "memory_limit"


def test_htcondor_ads_exit_by_signal_and_an_earlier_runs_signal() -> None:
    # Two ads, a blank line between: one a signal ended; one that completed after an earlier run was killed
    # (condor_history keeps `ExitSignal = 9` and `ExitReason = "died on signal 9 (Killed)"` with `ExitBySignal = false`)
    data = (b'ClusterId = 4242\nProcId = 0\nJobStatus = 4\nExitBySignal = true\nExitSignal = 9\n'
            b'LastRemoteHost = "slot1_13@e4022.chtc.wisc.edu"\n\n'
            b'ClusterId = 4243\nProcId = 0\nJobStatus = 4\nExitBySignal = false\nExitCode = 0\n'
            b'ExitReason = "died on signal 9 (Killed)"\nExitSignal = 9\n')
    got = {e.fields["job_id"]: (e.fields["state"], e.fields.get("signal"), e.fields.get("nodelist"))
           for e in jobs(read("ads.txt", "htcondor-ad", data=data))}
    assert got == {"4242.0": ("FAILED", 9, "e4022.chtc.wisc.edu"), "4243.0": ("COMPLETED", None, None)}


def test_htcondor_ad_of_a_job_still_running_or_idle_is_no_end() -> None:
    data = b'ClusterId = 4244\nProcId = 0\nJobStatus = 2\nExitSignal = 9\n\nClusterId = 4245\nJobStatus = 1\n'
    assert jobs(read("ads.txt", "htcondor-ad", data=data)) == []


def test_htcondor_ad_removed_by_a_policy_on_its_memory() -> None:
    # the schedd's RemoveReason for a PeriodicRemove that named one resource (CRAB's, dmwm/CRABServer#4749's
    # expression; synthetic ad)
    data = (b'ClusterId = 77\nProcId = 3\nJobStatus = 3\nRemoveReason = "The job attribute PeriodicRemove '
            b'expression \'(MemoryUsage > RequestMemory)\' evaluated to TRUE"\n')
    job = the_job(read("ads.txt", "htcondor-ad", data=data))
    assert (job.fields["job_id"], job.fields["state"], job.fields.get("due_to")) == ("77.3", "OUT_OF_MEMORY",
                                                                                    "memory_limit")


# --------------------------------------------------------------------------
# PBS's negative codes, by the PBS that printed them
# --------------------------------------------------------------------------

# `qstat -f` records in each manual's layout (Torque's "Job Exit Status" example: `job_state = C`, `exit_status =`;
# PBS Professional's: `job_state = F`, `Exit_status =`), cut to the lines that say how the job ended; synthetic ids.
def _qstat_f(job_state: str, key: str, code: int) -> bytes:
    return (f"Job Id: 179.host\n    job_state = {job_state}\n    exec_host = node1/0\n    {key} = {code}\n").encode()


@pytest.mark.parametrize(
    ("job_state", "key", "code", "state", "due_to"),
    [
        # Torque 6.1.2's JOB_EXEC_OVERLIMIT_WT / _MEM / _CPUT
        ("C", "exit_status", -11, "TIMEOUT", "time_limit"),
        ("C", "exit_status", -10, "OUT_OF_MEMORY", "memory_limit"),
        ("C", "exit_status", -12, "TIMEOUT", "time_limit"),
        # ... which OpenPBS numbers otherwise: JOB_EXEC_RERUN -11, JOB_EXEC_FAILUID -10 (src/include/job.h)
        ("F", "Exit_status", -11, "FAILED", None),
        ("F", "Exit_status", -10, "FAILED", None),
        # OpenPBS's JOB_EXEC_RERUN_SIS_FAIL -14 is a sister lost; Torque's -14 its prologue that failed
        ("F", "Exit_status", -14, "NODE_FAIL", "node_failure"),
        ("C", "exit_status", -14, "FAILED", None),
        # beyond Torque's codes: PBS Professional's whoever printed the record
        ("C", "exit_status", -29, "TIMEOUT", "time_limit"),
    ],
)
def test_pbs_negative_exit_status_by_the_pbs_that_printed_it(job_state: str, key: str, code: int, state: str,
                                                             due_to: str | None) -> None:
    job = the_job(read("qstat.txt", "pbs-qstat", data=_qstat_f(job_state, key, code)))
    assert (job.fields["state"], job.fields.get("due_to")) == (state, due_to)


def test_pbs_exit_status_whose_flavour_the_line_does_not_say_reads_only_shared_codes() -> None:
    # an accounting record's `Exit_status=` (both PBSes write it): -11 and -14 mean different things in each
    for code in (-11, -14):
        data = f"06/07/2021 10:14:20;E;4242.pbs01;user=u queue=workq Exit_status={code}\n".encode()
        job = the_job(read("acct.txt", "pbs-tracejob", data=data))
        assert job.fields.get("due_to") is None, code


@pytest.mark.parametrize("message", [
    "Job requeued, execution node cn042 down",
    "Job deleted, execution node cn042 down",
])
def test_pbs_execution_node_down_is_that_node_lost(message: str) -> None:
    # OpenPBS src/server/node_manager.c: the server's message for a running job whose execution host went down
    # (`Job requeued, execution node %s down`, `Job deleted, execution node %s down`), in the server log's line form
    # (as cBio/cbio-cluster#403's, above): composed from the format string, no posted log of it was found.
    line = f"10/14/2021 09:12:01;0008;Server@pbs01;Job;4711.pbs01;{message}\n".encode()
    res = read("server.log", "pbs-tracejob", data=line)
    assert [(e.kind, e.fields.get("host")) for e in res.events if e.kind == "sched.node_down"] == [
        ("sched.node_down", "cn042")]
    assert the_job(res).fields["state"] == "NODE_FAIL"


def test_pbs_node_down_for_provisioning_is_no_loss() -> None:
    # Near miss: the server's own note of a node it took down to provision it (OpenPBS node_manager.c
    # `node down for provisioning: %s`) names no job's node lost.
    line = b"10/14/2021 09:12:01;0004;Server@pbs01;Node;cn042;node down for provisioning: aoe rhel9\n"
    assert [e for e in read("server.log", "pbs-tracejob", data=line).events if e.kind == "sched.node_down"] == []


def test_pbs_server_unable_to_run_the_job_on_a_mom_is_a_node_symptom() -> None:
    # Torque's server failing to start a job on its MOM (src/server/req_runjob.c; its unit test
    # src/test/req_runjob/test_uut.c expects `unable to run job, send to MOM '10.1.4.4' failed`), in tracejob's
    # line form: the job goes back to the queue; a node failed to take it, for a reason the words do not say.
    data = (b"Job: 4242.torque01\n"
            b"02/23/2020 00:01:32  S    unable to run job, MOM rejected/timeout\n"
            b"02/23/2020 00:01:32  S    unable to run job, send to MOM '10.1.4.4' failed\n")
    res = read("tracejob.txt", "pbs-tracejob", data=data)
    assert [(e.kind, e.fields.get("host")) for e in res.events] == [
        ("sched.node_reason", None), ("sched.node_reason", "10.1.4.4")]
    assert jobs(res) == []  # requeued, not ended: no state of the job


def test_near_miss_a_pbs_run_request_is_no_symptom() -> None:
    # the server's word that an operator asked for the run (Torque req_runjob.c `Job Run at request of %s`)
    data = b"Job: 4242.torque01\n02/23/2020 00:01:33  S    Job Run at request of root@torque01\n"
    assert read("tracejob.txt", "pbs-tracejob", data=data).events == []


def test_lsf_unknown_status_is_its_execution_host_lost() -> None:
    # IBM Spectrum LSF 10.1 "LSF terms and concepts": UNKWN, mbatchd lost contact with sbatchd on the job's host. The
    # record is gc3pie's `bjobs -l` of job 132286 (above) with the status a running job whose host stopped answering
    # would have: composed, no posted bjobs -l of an UNKWN job was found.
    data = (b"Job <132286>, User <wwolski>, Project <default>, Status <UNKWN>, Queue <pub.1h>,\n"
            b"Tue Jul 24 10:26:47: Started on <a3010>, Execution Home </cluster/home/biol/wwolski>;\n")
    res = read("bjobs.txt", "lsf-bjobs", data=data)
    assert [(e.kind, e.fields.get("host")) for e in res.events] == [("sched.node_down", "a3010")]
    # near miss: a job still running on its host names no loss
    running = data.replace(b"<UNKWN>", b"<RUN>")
    assert [e for e in read("bjobs.txt", "lsf-bjobs", data=running).events if e.kind == "sched.node_down"] == []
