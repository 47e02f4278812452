"""What a launcher's or a scheduler's exit number means, by who printed it (catalog/exits.yaml, codes.exit_reading),
and the readers that ask it: the same `9` is SIGKILL in one printer's words and the process's own exit(9) in
another's; a printer whose versions differ, where the evidence does not say which printed it, is read the weaker
way."""

from __future__ import annotations

from typing import Any

import pytest

from firstfault.catalog import tables
from firstfault.catalog.tables import exit_printers, version_key
from firstfault.catalog.vocab import CatalogTableError
from firstfault.extract.codes import ExitReading, exit_reading
from firstfault.model import Event
from tests.extract import helpers


def signals(lines: list[str]) -> list[Event]:
    return [e for e in helpers.events(lines) if e.kind in ("process.signal", "torch.child_failed")]


# ---------------------------------------------------------------- the table


def test_versions_sort_pre_releases_before_their_release() -> None:
    assert version_key("1.5a1") < version_key("1.5b2") < version_key("1.5") < version_key("3.1") < version_key("3.2")


def test_every_printer_a_reader_names_has_rows() -> None:
    printers = {r.printer for r in exit_printers()}
    assert {"hydra", "intel-hydra", "hydra-signal", "mpd", "mpd-signal", "mpi-abort", "openmpi", "openmpi-signal",
            "tgi-signal", "srun", "torchrun", "python", "kubernetes", "lsf", "sge", "pbs", "flux",
            "generic"} <= printers


def _build_with(monkeypatch: pytest.MonkeyPatch, doc: dict[str, Any]) -> object:
    real = tables._document

    def fake(name: str) -> Any:
        return doc if name == "exits.yaml" else real(name)

    monkeypatch.setattr(tables, "_document", fake)
    build = exit_printers.__wrapped__.__wrapped__  # type: ignore[attr-defined]  # lru_cache, then _kept
    return build()


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        ([{"printer": "generic", "means": "negative"}, {"printer": "x", "means": "wait", "since": "3.0"},
          {"printer": "x", "means": "shell", "until": "3.1"}], "its versions overlap"),
        ([{"printer": "generic", "means": "negative"}, {"printer": "x", "means": "wait"},
          {"printer": "x", "means": "shell"}], "its versions overlap"),
        ([{"printer": "generic", "means": "negative"}, {"printer": "x", "means": "wait", "since": "3.2",
                                                        "until": "3.1"}], "since must come before until"),
        ([{"printer": "generic", "means": "hex"}], r"exits\[0\].means"),
        ([{"printer": "x", "means": "wait"}], "no row for the generic printer"),
    ],
)
def test_a_bad_row_is_named(monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]], problem: str) -> None:
    with pytest.raises(CatalogTableError, match=problem):
        _build_with(monkeypatch, {"exits": rows})


def test_rows_that_meet_at_a_version_do_not_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [{"printer": "generic", "means": "negative"}, {"printer": "x", "means": "shell", "until": "3.2"},
            {"printer": "x", "means": "wait", "since": "3.2"}]
    assert len(_build_with(monkeypatch, {"exits": rows})) == 3  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("printer", "value", "kw", "reading"),
    [
        # MPICH's Hydra from 3.2 prints the banner for a signaled process only: the raw status.
        ("hydra", 9, {"since": "3.2"}, ExitReading(None, "SIGKILL")),
        ("hydra", 139, {"since": "3.2"}, ExitReading(None, "SIGSEGV")),  # 0x80 | 11: a core dumped
        # ... from 1.5b2 to 3.1 the exit value of a process that exited: 9 is either, read the weaker way.
        ("hydra", 9, {}, ExitReading(9, None, ambiguous=True)),
        ("hydra", 15, {"since": "3.1"}, ExitReading(15, None, ambiguous=True)),
        ("hydra", 1, {"since": "1.5b2", "until": "3.2"}, ExitReading(1, None, ambiguous=True)),
        # 129-255: a wrapper's 128+N or a status with the core flag, one signal either way.
        ("hydra", 134, {}, ExitReading(None, "SIGABRT")),
        # 1.5a printed the raw status of a process that exited (exit(1) as 256).
        ("hydra", 256, {}, ExitReading(1, None)),
        ("intel-hydra", 9, {}, ExitReading(9, None, ambiguous=True)),
        ("hydra-signal", 9, {}, ExitReading(None, "SIGKILL")),
        # MPI_Abort's errorcode is the program's value: -1 is no SIGHUP, 137 no SIGKILL.
        ("mpi-abort", -1, {}, ExitReading(-1, None)),
        ("mpi-abort", 137, {}, ExitReading(137, None)),
        ("srun", 137, {}, ExitReading(137, "SIGKILL")),
        ("srun", 1, {}, ExitReading(1, None)),
        ("srun", -9, {}, ExitReading(-9, None)),
        ("torchrun", -9, {}, ExitReading(None, "SIGKILL")),
        ("torchrun", 1, {}, ExitReading(1, None)),
        ("kubernetes", 137, {}, ExitReading(137, "SIGKILL")),
        ("kubernetes", 255, {}, ExitReading(255, None)),
        ("pbs", 271, {}, ExitReading(None, "SIGTERM")),
        ("pbs", 137, {}, ExitReading(137, "SIGKILL")),
        ("pbs", -29, {}, ExitReading(-29, None)),
        ("pbs", 256, {}, ExitReading(256, None)),
        ("flux", 36352, {}, ExitReading(142, "SIGALRM")),  # the job shell exited 142: 128 + SIGALRM
        ("flux", 9, {}, ExitReading(None, "SIGKILL")),
        ("flux", 256, {}, ExitReading(1, None)),
        ("generic", -9, {}, ExitReading(None, "SIGKILL")),
        ("generic", 139, {}, ExitReading(139, "SIGSEGV")),
        ("generic", 9, {}, ExitReading(9, None)),
        # a negative number beyond the signals is the program's own (a Windows console's NTSTATUS)
        ("generic", -1073741819, {}, ExitReading(-1073741819, None)),
        ("torchrun", -65, {}, ExitReading(-65, None)),
    ],
)
def test_a_number_reads_by_its_printers_meaning(printer: str, value: int, kw: dict[str, str],
                                                reading: ExitReading) -> None:
    assert exit_reading(printer, value, **kw) == reading


def test_an_unknown_printer_is_a_programming_error() -> None:
    with pytest.raises(KeyError):
        exit_reading("nobody", 9)


# ---------------------------------------------------------------- through the readers

BANNER = "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES"


def test_hydras_exit_code_that_its_versions_read_differently_claims_no_signal() -> None:
    # pyiron/executorlib#192 (MPICH 3.2 or later printed it, the EXIT STRING below says SIGTERM; a 3.1 banner has the
    # same shape and would mean exit(15)): the weaker reading, no SIGTERM.
    lines = ["=" * 83, BANNER, "=   PID 4827 RUNNING AT fv-az1256-113", "=   EXIT CODE: 15",
             "=   CLEANING UP REMAINING PROCESSES"]
    [e] = signals(lines)
    assert (e.fields["exitcode"], e.fields.get("signal"), e.fields["host"]) == (15, None, "fv-az1256-113")


def test_hydras_exit_code_that_every_version_reads_as_a_signal() -> None:
    # IntelligentSoftwareSystems/Galois#37: 139 is SIGSEGV with a core whichever Hydra printed it.
    lines = [BANNER, "=   PID 4774 RUNNING AT IIPLab-WS1", "=   EXIT CODE: 139"]
    [e] = signals(lines)
    assert (e.fields["signal"], e.fields["by"], e.fields["exitcode"]) == ("SIGSEGV", "self", 139)


def test_the_oldest_hydras_raw_status_of_an_exit_is_its_exit_value() -> None:
    # MPICH2 1.5a (svn-r8019's banner, no PID line) printed exit(1) as 256 (synthetic, its format string).
    [e] = signals([BANNER, "=   EXIT CODE: 256", "=   CLEANING UP REMAINING PROCESSES"])
    assert (e.fields["exitcode"], e.fields.get("signal")) == (1, None)


def test_intel_mpis_banner_names_the_signal_by_number() -> None:
    # bsc-performance-tools/extrae#101 (Intel MPI's RANK-form banner)
    [e] = signals([BANNER, "=   RANK 6 PID 2447372 RUNNING AT node0009", "=   KILLED BY SIGNAL: 9 (Killed)"])
    assert (e.rank, e.fields["signal"]) == (6, "SIGKILL")
    # ... and its EXIT CODE, whose meaning no source shows us, is no signal (synthetic)
    [e] = signals([BANNER, "=   RANK 6 PID 2447372 RUNNING AT node0009", "=   EXIT CODE: 9"])
    assert (e.rank, e.fields["exitcode"], e.fields.get("signal")) == (6, 9, None)


def test_mpi_aborts_errorcode_is_never_a_signal() -> None:
    # open-mpi/ompi help-mpi-api.txt `mpi-abort`, with the -1 programs commonly pass (synthetic rank)
    [e] = signals(["MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD with errorcode -1."])
    assert (e.rank, e.fields["exitcode"], e.fields.get("signal"), e.fields["by"]) == (0, -1, None, "launcher")
    [e] = signals(["MPI_ABORT was invoked on rank 2 in communicator MPI_COMM_WORLD with errorcode 134."])
    assert (e.fields["exitcode"], e.fields.get("signal")) == (134, None)


def test_sruns_exit_code_above_128_is_the_signal_a_wrapper_passed_on() -> None:
    # srun's own words for a task that exited (src/srun: `%s: task %s: Exited with exit code %d`; synthetic host)
    [e] = signals(["srun: error: gpu-07: task 3: Exited with exit code 137"])
    assert (e.rank, e.fields["host"], e.fields["signal"], e.fields["exitcode"]) == (3, "gpu-07", "SIGKILL", 137)
    [e] = signals(["srun: error: gpu-07: task 3: Exited with exit code 9"])
    assert (e.fields["exitcode"], e.fields.get("signal")) == (9, None)


def test_pbs_exit_status_in_its_own_encoding_and_its_shells() -> None:
    # OpenPBS mom_start.c: 256+N for a job shell a signal ended, 128+N its child's; -29 is the MOM's walltime kill.
    [e] = signals(["06/07/2021 10:14:20;E;4242.pbs01;user=u group=g queue=workq Exit_status=271"])
    assert (e.fields["signal"], e.fields["exitcode"]) == ("SIGTERM", 271)
    [e] = signals(["06/07/2021 10:14:20;E;4242.pbs01;user=u group=g queue=workq Exit_status=137"])
    assert e.fields["signal"] == "SIGKILL"
    # the MOM's own code is its limit's word (catalog/scheduler.yaml), no signal of an exit status
    [e] = signals(["06/07/2021 10:14:20;E;4242.pbs01;user=u group=g queue=workq Exit_status=-29"])
    assert (e.fields.get("due_to"), "exitcode" in e.fields) == ("time_limit", False)
    assert signals(["06/07/2021 10:14:20;E;4242.pbs01;user=u group=g queue=workq Exit_status=1"]) == []


def test_torchruns_negative_exitcode_is_a_signal_and_a_positive_one_an_exit() -> None:
    # torch/distributed/elastic/multiprocessing/api.py's format (synthetic pid): `failed (exitcode: -9) local_rank: 0`
    [e] = signals(["ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 "
                   "(pid: 4242) of binary: /usr/bin/python3"])
    assert e.fields["signal"] == "SIGKILL"
    assert signals(["ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 "
                    "(pid: 4242) of binary: /usr/bin/python3"]) == []


# ---------------------------------------------------------------- Ray's worker exit type


@pytest.mark.parametrize(
    "line",
    [
        # `ray list workers --detail` (YAML) and the state API's JSON (src/ray/protobuf/common.proto WorkerExitType)
        "  exit_type: NODE_OUT_OF_MEMORY",
        '    "exit_type": "NODE_OUT_OF_MEMORY",',
    ],
)
def test_a_ray_worker_that_exited_for_the_nodes_memory_is_the_hosts_memory(line: str) -> None:
    [e] = [e for e in helpers.events([line]) if e.kind == "host.oom_kill"]
    assert e.fields["proc"] == "ray"


@pytest.mark.parametrize(
    "line",
    [
        "  exit_type: SYSTEM_ERROR",  # a crash: no cause by the word
        "  exit_type: INTENDED_USER_EXIT",
        "The worker exit type NODE_OUT_OF_MEMORY is set when the memory monitor kills a worker.",  # prose, no record
    ],
)
def test_rays_other_exit_types_and_the_word_in_prose_are_no_cause(line: str) -> None:
    assert [e for e in helpers.events([line]) if e.kind in ("host.oom_kill", "process.signal")] == []


def test_rays_exit_type_beside_the_memory_monitors_detail_is_one_kill() -> None:
    # gcs_actor_manager.cc's death cause, its exit type and detail on one line (the detail is node_manager.cc's)
    line = ("The actor is dead because its worker process has died. Worker exit type: NODE_OUT_OF_MEMORY Worker exit "
            "detail: Task was killed due to the node running low on memory.")
    assert [e.kind for e in helpers.events([line]) if e.kind == "host.oom_kill"] == ["host.oom_kill"]


# ---------------------------------------------------------------- SGE's shepherd on a job a signal ended


def test_sges_died_through_signal_on_the_host_the_qmaster_names() -> None:
    # StarExec/StarExec#79 (a qmaster messages line pasted into a job's log)
    [e] = signals(["02/25/2018 04:29:57|worker|starexec2|W|job 9882833.1 failed on host n110.star.cs.uiowa.edu "
                   "assumedly after job because: job 9882833.1 died through signal KILL (9)"])
    assert (e.fields["signal"], e.fields["by"], e.fields["host"]) == ("SIGKILL", "launcher", "n110.star.cs.uiowa.edu")


def test_sges_died_through_signal_in_the_jobs_mail() -> None:
    # the mail's two lines as a public user guide quotes them (`failed assumedly after job because:` / `job
    # 8974017.1 died through signal KILL (9)`)
    [e] = signals(["failed assumedly after job because:", "job 8974017.1 died through signal KILL (9)"])
    assert e.fields["signal"] == "SIGKILL"


def test_sges_time_limit_on_the_same_line_is_the_cause_not_a_second_signal() -> None:
    # the qmaster's `failed` words name the limit: the scheduler's reason alone (synthetic ids)
    got = signals(["03/24/2022 13:33:32|worker|qm01|W|job 9638568.1 failed on host c12 qmaster enforced h_rt limit "
                   "because: job 9638568.1 died through signal KILL (9)"])
    assert [(e.fields["signal"], e.fields.get("due_to")) for e in got] == [("SIGTERM", "time_limit")]


@pytest.mark.parametrize(
    "line",
    [
        "the clean command died through signal",  # the shepherd's own trace, no job (sge_shepherd.c)
        "job 42.1 died through signal handling in the wrapper (3)",  # no signal name in Grid Engine's form
    ],
)
def test_sges_words_without_a_jobs_signal_are_no_exit(line: str) -> None:
    assert signals([line]) == []


# ---------------------------------------------------------------- PRRTE's sentence over two lines


def test_prrtes_signal_sentence_cut_after_exited_on() -> None:
    # openpmix/prrte src/mca/schizo/prte/help-prun.txt [prun:proc-aborted-strsignal] (Open MPI 5's mpirun), the
    # help text's own line break; synthetic rank, pid and node
    [e] = signals(["prterun noticed that process rank 1 with PID 4242 on node gpu-03 exited on",
                   "signal 9 (Killed)."])
    assert (e.rank, e.fields["host"], e.fields["pid"], e.fields["signal"], e.fields["by"]) == (
        1, "gpu-03", 4242, "SIGKILL", "launcher")


def test_prrtes_first_line_alone_or_a_later_signal_line_is_no_exit() -> None:
    assert signals(["prterun noticed that process rank 1 with PID 4242 on node gpu-03 exited on",
                    "[gpu-03:4242] mca_base_component_repository_open: unable to open mca_btl_openib",
                    "signal 9 (Killed)."]) == []
    assert signals(["signal 9 (Killed)."]) == []


def test_a_windows_consoles_ntstatus_is_no_signal() -> None:
    # JetBrains' run console on Windows (catalog/ends.yaml's row): `Process finished with exit code -1073741819
    # (0xC0000005)`, an access violation's NTSTATUS, not signal 1073741819
    got = [e for e in helpers.events(["Process finished with exit code -1073741819 (0xC0000005)"])
           if e.kind == "process.signal"]
    assert got == []


# ---------------------------------------------------------------- Flux's job shell on the first task that exited


@pytest.mark.parametrize(
    ("line", "rank", "host", "signal", "exitcode"),
    [
        # flux-framework/flux-core#7037 (0.73: the command's name, the host)
        ("flux-shell[0]: FATAL: doom: sh: rank 3 on host frontier10490 exited and exit-timeout=30s has expired",
         3, "frontier10490", None, None),
        # flux-framework/flux-core#5736 (before the host was named)
        ("33.708s: flux-shell[0]: FATAL: doom: rank 1 exited and exit-timeout=30s has expired", 1, None, None, None),
        # flux-framework/flux-core#7328 (exit-on-error, logged by the task-exit component)
        ("0.037s: flux-shell[0]: FATAL: task-exit: foo.sh: task rank 1 on host system76-pc failed and exit-on-error "
         "is set", 1, "system76-pc", None, None),
        # src/shell/doom.c since 765434e2: how the task ended (synthetic command, rank and host)
        ("0.5s: flux-shell[0]: FATAL: doom: python: task rank 2 on host n2 failed (Killed) and exit-on-error is set",
         2, "n2", "SIGKILL", None),
        ("0.5s: flux-shell[0]: FATAL: doom: python: task rank 2 on host n2 exited (Exit 3) and exit-timeout=30s has "
         "expired", 2, "n2", None, 3),
    ],
)
def test_fluxs_shell_names_the_first_task_that_exited(line: str, rank: int, host: str | None, signal: str | None,
                                                      exitcode: int | None) -> None:
    [e] = signals([line])
    assert (e.rank, e.fields.get("host"), e.fields.get("signal"), e.fields.get("exitcode"), e.fields["by"]) == (
        rank, host, signal, exitcode, "launcher")


@pytest.mark.parametrize(
    "line",
    [
        # the same words as the job exception's note (flux-framework/flux-core#7328): that exception's, no second exit
        "0.038s: job.exception ƒ8ezArJcP type=exec severity=0 foo.sh: task rank 1 on host system76-pc failed and "
        "exit-on-error is set",
        # the option named in prose, no shell's FATAL line
        "Set -o exit-on-error so that when rank 1 failed and exit-on-error is set the job ends.",
    ],
)
def test_fluxs_words_outside_the_shells_fatal_line_are_no_exit(line: str) -> None:
    assert signals([line]) == []


@pytest.mark.parametrize(
    ("line", "state", "code"),
    [
        ("flux-job: task(s) exited with exit code 1", "FAILED", 1),  # flux-framework/flux-core#7328
        ("flux-job: task(s) Killed", "FAILED", None),  # libjob/job.c: a code above 128 as strsignal's text
        ("flux-job: job shell Killed", "FAILED", None),
    ],
)
def test_flux_runs_own_word_on_how_the_job_ended(line: str, state: str, code: int | None) -> None:
    [e] = [e for e in helpers.events([line]) if e.kind == "launcher.exit"]
    assert (e.fields["system"], e.fields["state"], e.fields.get("code")) == ("flux", state, code)


def test_flux_runs_words_mid_sentence_are_no_end() -> None:
    assert [e for e in helpers.events(["It printed flux-job: task(s) Killed twice, then nothing."])
            if e.kind == "launcher.exit"] == []


def test_a_pasted_pbs_exit_status_reads_only_what_every_pbs_means_by_it() -> None:
    # -20 is PBS Professional's MoM connection lost, a code Torque never prints; -14 and -11 mean other things in
    # Torque (its prologue, its walltime) than in OpenPBS (a sister lost, a rerun): no cause from the pair alone
    def due(line: str) -> list[object]:
        return [e.fields.get("due_to") for e in helpers.events([line]) if e.kind == "process.signal"]

    assert due("    Exit_status = -20") == ["node_failure"]
    assert due("    Exit_status = -14") == []
    assert due("    Exit_status = -11") == []


@pytest.mark.parametrize(
    ("line", "signal"),
    [
        # Python's subprocess (CalledProcessError's message): Popen.returncode, -N a signal
        ("subprocess.CalledProcessError: Command '['python', 'x.py']' returned non-zero exit status -9.", "SIGKILL"),
        ("subprocess.CalledProcessError: Command '['sh', 'run.sh']' returned non-zero exit status -11.", "SIGSEGV"),
        # ... a positive code a program's own (the near miss)
        ("subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit status 2.", None),
    ],
)
def test_pythons_returncode_words(line: str, signal: str | None) -> None:
    got = [e.fields.get("signal") for e in helpers.events([line]) if e.kind == "process.signal"]
    assert got == ([signal] if signal else [])


# ---------------------------------------------------------------- the MPICH a stream names decides Hydra's meaning


@pytest.mark.parametrize(
    ("before", "signal"),
    [
        # MPI_Get_library_version / mpichversion (src/mpi/init/initinfo.c's `MPICH Version:      %s`): from 3.2 the
        # banner is printed for a signaled process only, so EXIT CODE 9 is SIGKILL
        (["MPICH Version:      3.3.2"], "SIGKILL"),
        (["MPICH Version:\t4.0.2"], "SIGKILL"),
        # `mpiexec --version` (src/pm/hydra/mpiexec/options.c): `HYDRA build details:` then its `Version:` line; 3.1
        # still printed an exit value there, so 9 stays either
        (["HYDRA build details:", "    Version:                                 3.1.4"], None),
        # no MPICH named (another program's version line): the weaker reading
        (["Python Version: 3.9.1"], None),
        (["MVAPICH2 Version      :\t2.3.7"], None),
    ],
)
def test_the_mpich_a_stream_names_decides_what_hydras_exit_code_means(before: list[str], signal: str | None) -> None:
    # the banner's lines as pyiron/executorlib#192 shows them
    [e] = signals([*before, BANNER, "=   PID 4827 RUNNING AT fv-az1256-113", "=   EXIT CODE: 9"])
    assert (e.fields.get("signal"), e.fields["exitcode"]) == (signal, 9)


def test_htcondor_job_terminated_by_a_signal() -> None:
    # htcondor/htcondor src/condor_utils/condor_event.cpp JobTerminatedEvent's lines, filled in (the event log's 005
    # record): the signal's number is the signal (catalog/exits.yaml htcondor-signal); a fault the process's own.
    got = signals(["005 (1234.000.000) 2023-06-01 10:00:00 Job terminated.",
                   "\t(0) Abnormal termination (signal 11)", "\t(1) Corefile in: /tmp/core.1234"])
    assert [(e.fields["signal"], e.fields["by"]) for e in got] == [("SIGSEGV", "self")]
    got = signals(["\t(0) Abnormal termination (signal 9)"])
    assert [(e.fields["signal"], e.fields["by"]) for e in got] == [("SIGKILL", "launcher")]


def test_htcondor_job_terminated_normally_names_no_signal() -> None:
    # Near miss: the same event for a process that exited by itself (`(1) Normal termination (return value %d)`).
    assert signals(["005 (1235.000.000) 2023-06-01 10:00:00 Job terminated.",
                    "\t(1) Normal termination (return value 1)"]) == []


def test_srun_task_state_summary() -> None:
    # src/srun/task_state.c _task_state_print, filled in (current `StepId=` and the older `step J.S` forms): the tasks
    # a signal ended are the launcher's report of their death; the other states name none.
    got = signals(["srun: StepId=4242.0 task 1: exited abnormally", "srun: step 77.0 tasks 4-5: exited abnormally"])
    assert [(e.rank, e.fields["by"]) for e in got] == [(1, "launcher"), (None, "launcher")]
    assert signals(["srun: StepId=4242.0 tasks 0,2-3: running", "srun: StepId=4242.0 task 6: exited",
                    "srun: StepId=4242.0 task 7: failed to start"]) == []
