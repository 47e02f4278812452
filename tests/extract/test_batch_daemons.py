"""Batch systems beyond Slurm in their own words (catalog/batch.yaml, extract/batchd.py; Grid Engine's `qstat -j` in
extract/jobend.py): HTCondor's daemons' records, PBS's qsub refusals, Grid Engine's shepherd's `error reason` rows, and
the rest of HTCondor's HoldReasonCode table (catalog/scheduler.yaml).

Sources, each line's shape from the printing program's own source:
- htcondor/htcondor 7491a145 (2026-08-21): src/condor_daemon_core.V6/daemon_core_main.cpp DC_Exit (the banner),
  src/condor_utils/except.cpp _EXCEPT_ (the EXCEPT record), src/condor_master.V6/masterDaemon.cpp daemon::Exited,
  src/condor_includes/condor_error_codes.h and src/condor_daemon_client/daemon.cpp (the error stack),
  src/condor_utils/error_utils.cpp (`Couldn't contact the condor_collector`), src/condor_includes/exit.h,
  src/condor_utils/condor_holdcodes.h. The startd's words are those a glideinWMS factory's StartdLog shows
  (`You must specify a percent or fraction for disk in slot type 3`, `Ran out of system resources in auto
  allocation` at src/condor_startd.V6/slot_builder.cpp).
- adaptivecomputing/torque 34ff8454: src/cmds/qsub_functions.c (`qsub: submit error (%s)`, `qsub: Error (%d - %s)
  submitting job`), src/include/pbs_error_db.h; openpbs/openpbs cd7ab5ed: src/cmds/qsub.c,
  src/lib/Liblog/pbs_messages.c.
- gridengine/gridengine 6a5407d5: source/clients/common/show_job.c (`error reason %4d:          %s`),
  source/daemons/shepherd/builtin_starter.c (the shepherd's words and the state each sets).
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog.tables import batch_tables
from firstfault.extract import jobend
from firstfault.extract.batchd import BatchDaemonExtractor, read_condor, read_qsub
from firstfault.extract.reasons import word_reason
from firstfault.model import Verdict
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers

STAMP = "11/17/24 10:01:03 "


# --------------------------------------------------------------------------
# HTCondor: one reader per record's layout
# --------------------------------------------------------------------------

@pytest.mark.parametrize(("line", "name", "program", "side", "weak"), [
    # DC_Exit's banner after a configuration the startd refuses
    (STAMP + "**** condor_startd (condor_STARTD) pid 3700140 EXITING WITH STATUS 4", "htcondor_exit", "condor_startd",
     "node", False),
    # a clean shutdown (`condor_off`, the master stopping it): none
    (STAMP + "**** condor_startd (condor_STARTD) pid 3700140 EXITING WITH STATUS 0", "htcondor_exit", "condor_startd",
     "none", False),
    # the shadow's status is the job's fate (exit.h JOB_EXITED 100, JOB_SHOULD_HOLD 112)
    (STAMP + "**** condor_shadow (condor_SHADOW) pid 37 EXITING WITH STATUS 100", "htcondor_exit", "condor_shadow",
     "none", False),
    (STAMP + "**** condor_shadow (condor_SHADOW) pid 37 EXITING WITH STATUS 112", "htcondor_exit", "condor_shadow",
     "none", False),
    # DAEMON_NO_RESTART (exit.h, 99): the daemon refuses to run on
    (STAMP + "**** condor_schedd (condor_SCHEDD) pid 812 EXITING WITH STATUS 99", "htcondor_exit", "condor_schedd",
     "node", False),
    # EXCEPT in the startd's own source
    (STAMP + "ERROR \"Ran out of system resources in auto allocation\" at line 201 in file "
     "/var/lib/condor/src/condor_startd.V6/slot_builder.cpp", "htcondor_except", "condor_startd", "node", False),
    # EXCEPT in a shared library (DaemonCore's main: a parameter not defined) names no program: weak
    (STAMP + "ERROR \"LOCAL_DIR not defined!\" at line 1162 in file "
     "/builddir/src/condor_daemon_core.V6/daemon_core_main.cpp", "htcondor_except", "condor", "node", True),
    # the shadow's EXCEPT: weak
    (STAMP + "ERROR \"Can no longer talk to condor_starter <10.0.0.5:9618>\" at line 209 in file "
     "/slots/src/condor_shadow.V6.1/NTreceivers.cpp", "htcondor_except", "condor_shadow", "node", True),
    # the master's record of a daemon it runs
    (STAMP + "The STARTD (pid 3700140) exited with status 4", "htcondor_master", "condor_startd", "node", False),
    (STAMP + "The SCHEDD (pid 812) died due to signal 11 (SIGSEGV)", "htcondor_master", "condor_schedd", "node",
     False),
    (STAMP + "The COLLECTOR (pid 99) was killed because it was no longer responding", "htcondor_master",
     "condor_collector", "node", False),
    (STAMP + "The STARTD (pid 3700140) exited with status 0", "htcondor_master", "condor_startd", "none", False),
    # the clients' words that the collector could not be reached
    ("Error: Couldn't contact the condor_collector on cm.example.org.", "htcondor_message", "condor", "node", True),
])
def test_condor_records_are_read_by_their_layout(line: str, name: str, program: str, side: str, weak: bool) -> None:
    read = read_condor(line)
    assert read is not None
    assert (read.name, read.program, read.side, read.weak) == (name, program, side, weak)


@pytest.mark.parametrize("line", [
    # a client's EXCEPT (condor_submit's own directory): no daemon's
    STAMP + "ERROR \"Failed to parse submit file\" at line 512 in file /src/condor_submit.V6/submit.cpp",
    # a program's own banner that is not DaemonCore's (the adstash script, src/condor_scripts/condor_adstash)
    "**** /usr/bin/condor_adstash (CONDOR_ADSTASH) pid 42 EXITING WITH STATUS 0",
    # a daemon the table does not hold (a site's own DaemonCore program)
    STAMP + "**** condor_mysite (condor_MYSITE) pid 7 EXITING WITH STATUS 1",
    # the words in prose, no record
    "the startd kept EXITING WITH STATUS 4 until we fixed the disk fraction",
    "Python: ERROR \"bad\" in the config, see line 4",
])
def test_near_misses_of_condor_records_are_not_read(line: str) -> None:
    assert read_condor(line) is None


@pytest.mark.parametrize("row", batch_tables().condor_exits, ids=lambda r: f"{r.program}-{r.status}")
def test_every_exit_row_says_its_side(row: object) -> None:
    """catalog/batch.yaml htcondor_exits (exit.h STARTER_EXIT_*): the banner with the row's status reads as the row."""
    from firstfault.catalog.tables import CondorExit
    assert isinstance(row, CondorExit)
    sub = row.program.removeprefix("condor_").upper()
    read = read_condor(f"**** {row.program} (condor_{sub}) pid 1 EXITING WITH STATUS {row.status}")
    assert read is not None and (read.side, read.weak) == (row.side, row.weak)


@pytest.mark.parametrize("row", batch_tables().condor_errors, ids=lambda r: r.name)
def test_every_error_stack_row_is_read(row: object) -> None:
    """catalog/batch.yaml htcondor_errors (condor_error_codes.h): the entry `SUBSYS:CODE:message` alone and after
    another joined with `|`."""
    from firstfault.catalog.tables import CondorError
    assert isinstance(row, CondorError)
    for line in (f"{row.subsystem}:{row.code}:Failed to connect to <10.0.0.1:9618>",
                 f"AUTHENTICATE:1003:Failed to authenticate with any method|{row.subsystem}:{row.code}:x"):
        read = read_condor(line)
        assert read is not None and (read.name, read.side, read.weak) == (row.name, row.side, row.weak)


@pytest.mark.parametrize("line", [
    # codes no row holds (condor_error_codes.h): an authorization refused, a cancelled call, a transfer
    "SECMAN:2010:Received \"DENIED\" from server for user alice using method FS.",
    "CEDAR:6007:Operation canceled",
    "FILETRANSFER:7002:Upload failed",
    # a row's code under another subsystem, and a time that looks alike
    "CEDAR:2007:x",
    "at 10:6001:00 the job started",
])
def test_near_misses_of_the_error_stack(line: str) -> None:
    assert read_condor(line) is None


def test_extractor_gives_sched_error_on_the_node_and_claims_a_clean_shutdown() -> None:
    ex = BatchDaemonExtractor()
    got = helpers.scan_application(ex, [STAMP + "**** condor_startd (condor_STARTD) pid 1 EXITING WITH STATUS 4"])
    assert [(d.kind, d.fields["program"], d.fields["side"], d.fields.get("weak")) for d in got] == [
        ("sched.error", "condor_startd", "node", None)]
    assert helpers.scan_application(ex, [STAMP + "**** condor_startd (condor_STARTD) pid 1 EXITING WITH STATUS 0"]) \
        == []


# --------------------------------------------------------------------------
# PBS: qsub's refusals
# --------------------------------------------------------------------------

@pytest.mark.parametrize("row", batch_tables().pbs_errors, ids=lambda r: r.name)
def test_every_pbs_error_is_read_in_both_qsubs(row: object) -> None:
    """catalog/batch.yaml pbs_errors: Torque's `qsub: submit error (TEXT MSG=...)`, `qsub: Error (N - TEXT) submitting
    job` and OpenPBS's `qsub: TEXT`."""
    from firstfault.catalog.tables import PbsError
    assert isinstance(row, PbsError)
    for line in (f"qsub: submit error ({row.text} MSG=cannot satisfy queue max mem requirement)",
                 f"qsub: Error (15000 - {row.text}) submitting job", f"qsub: {row.text}"):
        got = read_qsub(line)
        assert got is not None and got.name == row.name


@pytest.mark.parametrize("line", [
    # the words without qsub's tag: another program's (a scheduler's comment, a person's prose)
    "Job exceeds queue resource limits",
    "sbatch: error: Unknown queue",
    # qsub's own option checks (src/cmds/qsub.c): no server's PBSE text
    "qsub: illegal -l value",
    "qsub: script file:: No such file or directory",
    # a word that only begins a row's
    "qsub: Unknown",
])
def test_near_misses_of_qsub_refusals(line: str) -> None:
    assert read_qsub(line) is None


def test_qsub_job_side_is_setup_server_side_is_weak_node_and_retries_nothing() -> None:
    ex = BatchDaemonExtractor()
    job = helpers.scan_application(ex, ["qsub: submit error (Job exceeds queue resource limits MSG=cannot satisfy "
                                        "queue max mem requirement)"])
    assert [(d.kind, d.fields["exc_type"], d.fields["setup"]) for d in job] == [
        ("app.exception", "PBSE_EXCQRESC", True)]
    node = helpers.scan_application(ex, ["qsub: Error (15133 - Could not connect to batch server) submitting job"])
    assert [(d.kind, d.fields["program"], d.fields["weak"]) for d in node] == [("sched.error", "qsub", True)]
    assert helpers.scan_application(ex, ["qsub: Too many submit retries"]) == []


# --------------------------------------------------------------------------
# Grid Engine: `qstat -j`'s `error reason` rows
# --------------------------------------------------------------------------

@pytest.mark.parametrize("row", batch_tables().sge_shepherd, ids=lambda r: r.failed)
def test_every_shepherd_row_is_the_jobs_setup(row: object) -> None:
    """catalog/batch.yaml sge_shepherd: the shepherd's words in `qstat -j`'s row, read as the `failed` text of the
    state they set (catalog/scheduler.yaml sge texts, reason setup), the errno the path's."""
    from firstfault.catalog.tables import SgeShepherd
    assert isinstance(row, SgeShepherd)
    line = (f"error reason    1:          02/04/2020 12:21:50 [1116:435]: error: {row.text}\"/tmp/toil/x.log\": "
            "No such file or directory")
    got = helpers.scan_application(jobend.SgeFailureExtractor(), [line])
    assert [(d.kind, d.fields["setup"], d.fields["errno"]) for d in got] == [("app.exception", True, "ENOENT")]
    assert str(got[0].fields["message"]).startswith(row.failed)


@pytest.mark.parametrize("line", [
    # a full file system is the storage's, not the job's set-up: understood, no event
    "error reason    1:          02/04/2020 12:21:50 [1116:435]: error: can't open output file \"/scratch/x.log\": "
    "No space left on device",
    # shepherd words that name no state of the job's set-up
    "error reason    1:          02/04/2020 12:21:50 [1116:435]: can't get password entry for user \"alice\"",
    # the words outside `qstat -j`'s row
    "can't open output file \"/tmp/x.log\": No such file or directory",
])
def test_near_misses_of_qstat_error_reasons(line: str) -> None:
    assert helpers.scan_application(jobend.SgeFailureExtractor(), [line]) == []


# --------------------------------------------------------------------------
# HTCondor's HoldReasonCode: every code of condor_holdcodes.h decided
# --------------------------------------------------------------------------

@pytest.mark.parametrize(("code", "reason"), [
    ("4", "setup"), ("22", "setup"), ("25", "setup"), ("32", "setup"), ("33", "setup"), ("37", "setup"),
    ("49", "setup"), ("7", "setup"), ("34", "memory_limit"), ("46", "time_limit"),
    ("1", None), ("3", None), ("6", None), ("12", None), ("13", None), ("21", None), ("26", None), ("45", None),
])
def test_every_hold_code_is_decided(code: str, reason: str | None) -> None:
    row = word_reason("htcondor", code, "hold_code")
    assert row is not None and row.reason == reason


def test_hold_codes_cover_condor_holdcodes_h() -> None:
    # CONDOR_HOLD_CODE 0-49 (condor_holdcodes.h); the vacate codes from 1000 are no hold codes (near miss)
    assert all(word_reason("htcondor", str(c), "hold_code") is not None for c in range(50))
    assert word_reason("htcondor", "1002", "hold_code") is None


@pytest.mark.parametrize(("text", "reason"), [
    # the 009 record's reason line (src/condor_rm.V6/rm.cpp `via condor_rm`, the schedd adding who asked)
    ("\tvia condor_rm (by user alice)", "cancelled"),
    ("\tvia condor_rm (by user root)", "admin_cancelled"),
])
def test_condor_rm_is_its_owners_cancel(text: str, reason: str) -> None:
    from firstfault.extract.reasons import text_reasons
    assert [h.reason for h in text_reasons(text) if h.scheduler == "htcondor"] == [reason]


def test_near_miss_condor_release_and_hold_are_no_end() -> None:
    from firstfault.extract.reasons import text_reasons
    assert [h for h in text_reasons("\tvia condor_hold (by user alice)") if h.scheduler == "htcondor"] == []
    assert [h for h in text_reasons("\tvia condor_release (by user alice)") if h.scheduler == "htcondor"] == []


# --------------------------------------------------------------------------
# Through the engine
# --------------------------------------------------------------------------

def _analyze(make_bundle: BundleMaker, node: str, lines: list[str]) -> Verdict:
    wl = copy.deepcopy(WORKLOAD)
    wl["workload"]["nodes"] = [node]
    wl["workload"]["ranks"] = {node: "0"}
    wl["sources"] = [{"kind": "application", "path": "nodes/{node}/StartLog"}]
    return Analyzer().analyze_path(str(make_bundle({f"nodes/{node}/StartLog": "".join(s + "\n" for s in lines)}, wl)))


def test_engine_the_startd_ending_itself_is_node_scheduler_on_its_node(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, "wn-01", [STAMP + "You must specify a percent or fraction for disk in slot type 3",
                                        STAMP + "**** condor_startd (condor_STARTD) pid 3700140 EXITING WITH STATUS 4"])
    rc = v.root_cause
    assert v.attributed_domain == "infrastructure"
    assert rc is not None and rc.category == "node.scheduler" and rc.rule == "node-scheduler-batch"


def test_engine_near_miss_qsubs_queue_limit_is_the_jobs_setup(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, "login-1", ["qsub: submit error (Job exceeds queue resource limits MSG=cannot "
                                          "satisfy queue max mem requirement)"])
    rc = v.root_cause
    assert rc is not None and rc.category == "app.exception.setup"
