"""Who printed a crash in a Ray job, and abseil's (and glog's) failure-signal report.

Ray prints each process's lines in the driver's output behind a tag naming who printed it (extract/prefix.py): an
actor or task by name and pid (`(RayTrainWorker pid=1768, ip=...)`: a Ray Train worker, a rank), Ray's own daemons
by name (`(raylet)`, `(gcs_server)`, `(autoscaler +1m2s)`), a worker that runs nothing of the job by its pid alone
(`(pid=1768)`). The daemons and the idle workers are programs of the platform under the workload
(catalog/platform.yaml `platform_programs`, part `cluster`): their crash is no rank's (app-crash reads no event with a
part). Ray's C++ processes, TensorFlow, JAX and gRPC print abseil's report of the signal they caught
(absl/debugging/failure_signal_handler.cc: `*** SIGSEGV received at time=N on cpu N ***`), older builds glog's
(src/signalhandler.cc: `*** SIGSEGV (@0x8) received by PID N (TID 0x...) from PID N; stack trace: ***`).

Lines from public threads, cited per test: ray-project/ray#28716 (an idle worker's SIGSEGV in absl::Mutex::Lock, Ray
2.0), #23410 (the raylet's), #29576 (an actor's SIGABRT), #15083 (the raylet's glog report), #25650 (the raylet's own
log); the raylet's fatal record as in tests/wild/unk-ray-raylet-mistakenly-marked-dead-last-heartbeat-130s-stale-4741.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog.tables import platform_program_of
from firstfault.collect.scan import feed_lines
from firstfault.extract.base import Candidate
from firstfault.extract.prefix import PrefixLayer, split_prefixes
from tests.conftest import BundleMaker, workload_ending


def _events(*lines: str, file: str = "app/driver.log", step: int = 400) -> list[Any]:
    return feed_lines([Candidate("application", file, n * step + 1, "node-02", None, None, text)
                       for n, text in enumerate(lines)])


# --- the prefix layer keeps the printer's role ------------------------------------------------------------------


@pytest.mark.parametrize(("line", "program"), [
    ("(raylet) *** SIGSEGV received at time=1647977864 on cpu 0 ***", "ray-raylet"),  # ray-project/ray#23410
    ("(raylet, ip=192.168.1.153) PC: @     0x7faf40ff1643  (unknown)  (unknown)", "ray-raylet"),
    ("(gcs_server) *** SIGSEGV received at time=1662744491 ***", "ray-gcs-server"),  # ray-project/ray#28198
    ("(autoscaler +1m23s) Resized to 4 CPUs.", "ray-autoscaler"),
    ("(pid=1768, ip=172.31.92.227)     @     0x7fb01b9c0830  (unknown)  (unknown)", "ray-idle-worker"),  # #28716
    ("(pid=91480, ip=172.31.76.62) *** SIGSEGV received at time=1626321279 on cpu 2 ***", "ray-idle-worker"),  # #17080
])
def test_ray_tags_of_its_own_processes_name_a_platform_program(line: str, program: str) -> None:
    p = split_prefixes(line)
    assert p.program == program
    assert p.proc is not None and not p.body.startswith("(")


@pytest.mark.parametrize("line", [
    "(RayTrainWorker pid=2875) Moving model to device: cpu",  # the lab's ray_* captures
    "(Actor pid=11471) *** SIGABRT received at time=1666400179 on cpu 14 ***",  # ray-project/ray#29576
    "(TorchTrainer pid=7313) The actor is dead because its worker process has died.",  # ray-project/ray#49252
    "(VllmWorker rank=3 pid=406) ERROR ...",
    "(base) user@host:~$ python train.py",  # a conda prompt: no layer at all
])
def test_a_named_actor_or_task_is_the_workloads_own(line: str) -> None:
    assert split_prefixes(line).program is None


def test_the_split_memo_keeps_the_role_for_every_pid() -> None:
    layer = PrefixLayer()
    for pid in ("1768", "1769", "20001"):
        assert layer.split_settled(f"(pid={pid}) *** SIGSEGV received at time=1 ***")[0].program == "ray-idle-worker"
        assert layer.split_settled(f"(MyActor pid={pid}) *** SIGSEGV received at time=1 ***")[0].program is None


@pytest.mark.parametrize(("line", "body"), [
    ("\x1b[36m(pid=3900)\x1b[0m hello", "hello"),  # the reset Ray prints after its tag
    ("[36m(RayWorkerWrapper pid=4009)[0m hello", "hello"),  # pasted without the escape character
    ("(pid=3900)\x1b[m hello", "hello"),
    ("(pid=3900)[m hello", "hello"),
    # near miss: absl's raw record right after the tag, whose file name starts with `m` (ray-project/ray#28716)
    ("(pid=3900) [mutex.cc : 1908] RAW: Check x failed: y", "[mutex.cc : 1908] RAW: Check x failed: y"),
    ("(pid=3900) [model.py:12] loss 0.5", "[model.py:12] loss 0.5"),
])
def test_the_colour_reset_after_a_ray_tag_is_not_a_bracket_of_the_line(line: str, body: str) -> None:
    assert split_prefixes(line).body == body


def test_ray_spells_its_daemons_with_underscores() -> None:
    row = platform_program_of("gcs_server")
    assert row is not None and row.part == "cluster"
    assert platform_program_of("dashboard_agent") is not None
    assert platform_program_of("my-raylets") is None  # a run of the dash-separated words, not a substring
    # the title Ray gives a worker between tasks (python/ray/_raylet.pyx), as the kernel's fault report names it
    row = platform_program_of("ray::IDLE")
    assert row is not None and row.program == "ray-idle-worker"
    assert platform_program_of("ray::RayTrainWorker.train_func") is None


# --- abseil's and glog's failure-signal reports -----------------------------------------------------------------


@pytest.mark.parametrize(("line", "signal"), [
    ("*** SIGSEGV received at time=1706692238 on cpu 68 ***", "SIGSEGV"),  # ray-project/ray#42868
    ("*** SIGSEGV received at time=1654847357 ***", "SIGSEGV"),  # macOS: no cpu (ray-project/ray#25650)
    ("*** SIGABRT received at time=1660614327 on cpu 53 ***", "SIGABRT"),  # tests/wild/sw-ray-train-tf-pthread-...
    ("*** Signal 11 received at time=1706692238 on cpu 68 ***", "SIGSEGV"),  # a signal absl has no name for
    ("[2022-09-27 00:21:27,008 E 73412 73420] logging.cc:361: *** SIGSEGV received at time=1664230887 on cpu 14 ***",
     "SIGSEGV"),  # Ray's logger's copy (ray-project/ray#28791)
    ("*** SIGSEGV (@0x8) received by PID 2710225 (TID 0x7fdc09652800) from PID 8; stack trace: ***",
     "SIGSEGV"),  # glog's (ray-project/ray#15083)
])
def test_a_failure_signal_report_is_the_processs_signal(line: str, signal: str) -> None:
    (ev,) = _events(line)
    assert ev.kind == "process.signal" and ev.fields["signal"] == signal and ev.fields["by"] == "self"
    assert "part" not in ev.fields


@pytest.mark.parametrize("line", [
    "grep '*** SIGSEGV received at time' raylet.err",  # the words quoted, no report
    "SIGSEGV received at time=1706692238 on cpu 68",  # no report's stars
    "*** SIGFOO received at time=1706692238 ***",  # no signal of this system
])
def test_words_that_only_look_like_the_report_are_not_read(line: str) -> None:
    assert [e for e in _events(line) if e.kind == "process.signal"] == []


def test_a_sigterm_the_process_caught_was_sent_from_outside() -> None:
    (ev,) = _events("*** SIGTERM received at time=1706692238 on cpu 3 ***")
    assert ev.fields["signal"] == "SIGTERM" and ev.fields["by"] != "self"


def test_the_report_and_rays_copy_of_it_are_one_signal() -> None:
    # ray-project/ray#29576: the raw report on stderr, then Ray's logger's copy a few lines on
    evs = _events("(Actor pid=11471) *** SIGABRT received at time=1666400179 on cpu 14 ***",
                  "(Actor pid=11471) [2022-10-21 17:56:19,050 E 11471 11471] logging.cc:361: *** SIGABRT received at "
                  "time=1666400179 on cpu 14 ***", step=3)
    assert [e.fields["signal"] for e in evs if e.kind == "process.signal"] == ["SIGABRT"]


def test_the_printer_is_marked_on_the_signal() -> None:
    (ev,) = _events("(raylet, ip=192.168.1.153) *** SIGSEGV received at time=1647978005 on cpu 0 ***")
    assert ev.fields["program"] == "ray-raylet" and ev.fields["part"] == "cluster"
    # Ray's own log file: its C++ logger names the component (ray-project/ray#25650), or the file's name does
    (ev,) = _events("[2022-06-10 00:49:17,113 E 44686 99451332] (raylet) logging.cc:325: *** SIGSEGV received at "
                    "time=1654847357 ***")
    assert ev.fields["program"] == "ray-raylet"
    (ev,) = _events("*** SIGSEGV received at time=1662744491 ***", file="logs/gcs_server.err")
    assert ev.fields["program"] == "ray-gcs-server"
    (ev,) = _events("*** SIGSEGV received at time=1662744491 ***", file="logs/worker-01.err")
    assert "program" not in ev.fields


def test_a_platform_programs_fatal_record_is_no_ranks_exception() -> None:
    # the raylet aborting on a failed check (tests/wild/unk-ray-raylet-mistakenly-marked-dead-...: its raylet.log)
    rec = ("F0501 14:26:21.964082  4048 node_manager.cc:395]  Check failed: client_id != "
           "gcs_client_->client_table().GetLocalClientId() Exiting because this node manager has mistakenly been "
           "marked dead by the monitor.")
    (ev,) = _events(rec, file="app/raylet.log")
    assert ev.kind == "platform.error" and ev.fields["part"] == "cluster"
    (ev,) = _events("(raylet) " + rec)
    assert ev.kind == "platform.error" and ev.fields["program"] == "ray-raylet"
    (ev,) = _events("(RayTrainWorker pid=2875) " + rec)  # a rank's own fatal record stays its exception
    assert ev.kind == "app.exception"


# --- through the engine -------------------------------------------------------------------------------------------

# a Ray Train job whose ranks hang in their allreduce (the lab's ray_hang: gloo's timeout) while an idle worker aborts
# on absl's corrupted mutex (the CI failure of the lab's ray_hang under Slurm; the abort's words as ray-project/ray
# printed them in #28716 and abseil's mutex.cc RAW check)
_HANG = (
    "2026-11-02 10:30:00,000\tINFO worker.py:2038 -- Started a local Ray instance.\n"
    "(RayTrainWorker pid=2875) Setting up process group for: env:// [rank=0, world_size=3]\n"
    "(pid=3900) [mutex.cc : 1908] RAW: Check (v & (kMuWait | kMuWrWait)) != kMuWrWait failed: Lock: Mutex corrupt: "
    "waiting writer with no waiters: 0x7fbdb40b1ff0\n"
    "(pid=3900) *** SIGABRT received at time=1764780251 on cpu 3 ***\n"
    "(pid=3900) PC: @     0x7f70d75e000b  (unknown)  raise\n"
    "(pid=3900)     @     0x7f70d77a3420  (unknown)  (unknown)\n"
)


def _driver_log(make_bundle: BundleMaker, text: str) -> Any:
    wl = workload_ending("FAILED")
    wl["sources"].append({"kind": "application", "path": "nodes/{node}/ray-driver.log"})
    return Analyzer().analyze_path(str(make_bundle({"nodes/node-02/ray-driver.log": text}, wl)))


def test_an_idle_workers_abort_is_not_the_jobs_crash(make_bundle: BundleMaker) -> None:
    v = _driver_log(make_bundle, _HANG)
    assert v.root_cause is None or v.root_cause.category != "app.crash"
    assert all(c.category != "app.crash" for c in v.candidates)


def test_a_ranks_failed_check_and_abort_is_the_jobs_failure(make_bundle: BundleMaker) -> None:
    # absl's RAW check is the rank's own fatal check (extract/traceback.py fatal_log), the abort its consequence
    v = _driver_log(make_bundle, _HANG.replace("(pid=3900)", "(RayTrainWorker pid=3900)"))
    assert v.root_cause is not None and v.root_cause.category == "app.exception"
    assert "Mutex corrupt" in v.root_cause.summary


def test_a_ranks_abort_is_the_jobs_crash(make_bundle: BundleMaker) -> None:
    hang = "".join(line + "\n" for line in _HANG.splitlines() if "RAW:" not in line)
    v = _driver_log(make_bundle, hang.replace("(pid=3900)", "(RayTrainWorker pid=3900)"))
    assert v.root_cause is not None and v.root_cause.category == "app.crash"


def test_rays_own_fatal_record_is_read_by_its_printer() -> None:
    # Ray's C++ logger's fatal record (severity C; ray-project/ray#15990, from the raylet's raylet.out)
    rec = "[2021-05-25 17:19:12,506 C 30268 30268] pull_manager.cc:338:  Check failed: it->second.bundle_request_ids"
    (ev,) = _events(rec, file="logs/raylet.out")
    assert ev.kind == "platform.error" and ev.fields["program"] == "ray-raylet"
    (ev,) = _events("(RayTrainWorker pid=2875) " + rec)  # a rank's core worker failing its check: its exception
    assert ev.kind == "app.exception" and ev.fields["message"].startswith("Check failed:")
    # an error record (E) that quotes a check is no fatal record
    assert _events(rec.replace(" C 30268", " E 30268")) == []


# The lab's ray_hang (tests/lab/captured/ray_hang: rank 1 stops, the others time out in gloo's allreduce; nothing says
# why: unknown), with an idle worker's abort on absl's corrupted mutex in the driver's output, as the lab's run under
# Slurm printed it once in CI: still unknown, never the job's crash.
_CAPTURED = Path(__file__).resolve().parents[1] / "lab" / "captured" / "ray_hang"
_IDLE_ABORT = (
    "\x1b[36m(pid=3900)\x1b[0m [mutex.cc : 1908] RAW: Check (v & (kMuWait | kMuWrWait)) != kMuWrWait failed: Lock: "
    "Mutex corrupt: waiting writer with no waiters: 0x7fbdb40b1ff0\n"
    "\x1b[36m(pid=3900)\x1b[0m *** SIGABRT received at time=1764780251 on cpu 3 ***\n"
    "\x1b[36m(pid=3900)\x1b[0m PC: @     0x7f70d75e000b  (unknown)  raise\n"
    "\x1b[36m(pid=3900)\x1b[0m     @     0x7f70d77a3420  (unknown)  (unknown)\n"
    "\x1b[36m(pid=3900)\x1b[0m     @ ... and at least 3 more frames\n"
    "\x1b[36m(pid=3900)\x1b[0m Fatal Python error: Aborted\n"  # the worker's faulthandler after it (as in #28791)
    "\x1b[36m(pid=3900)\x1b[0m \n"
)


def _ray_hang_with(tmp_path: Path, lines: str) -> Any:
    root = tmp_path / "ray_hang"
    shutil.copytree(_CAPTURED, root)
    log = root / "nodes" / "vm" / "ray-driver.log"
    text = log.read_text()
    at = text.index("Started training worker group of size 3")
    at = text.index("\n", at) + 1
    log.write_text(text[:at] + lines + text[at:])
    return Analyzer().analyze_path(str(root))


def test_an_idle_workers_abort_in_a_hung_ray_job_names_no_cause(tmp_path: Path) -> None:
    v = _ray_hang_with(tmp_path, _IDLE_ABORT)
    assert v.attributed_domain == "unknown" and v.root_cause is None
    assert all(c.category != "app.crash" for c in v.candidates)


def test_a_ranks_failed_check_in_the_same_job_is_its_failure(tmp_path: Path) -> None:
    v = _ray_hang_with(tmp_path, _IDLE_ABORT.replace("(pid=3900)", "(RayTrainWorker pid=3900)"))
    assert v.root_cause is not None and v.root_cause.category == "app.exception"
    assert "Mutex corrupt" in v.root_cause.summary


def test_the_crash_names_the_process_the_tag_names() -> None:
    (ev,) = _events("(RayTrainWorker pid=1768, ip=172.31.92.227) *** SIGSEGV received at time=1663811727 on cpu 11 ***")
    assert ev.fields["pid"] == 1768 and ev.fields["host"] == "172.31.92.227"
    (ev,) = _events("(raylet) *** SIGSEGV received at time=1647977864 on cpu 0 ***")
    assert ev.fields["proc"] == "raylet"
    (ev,) = _events("*** SIGSEGV received at time=1647977864 on cpu 0 ***")  # no tag: no process named
    assert "pid" not in ev.fields and "proc" not in ev.fields
    (ev,) = _events("(raylet) *** SIGTERM received at time=1647977864 on cpu 0 ***")  # a kill it was sent: not its own
    assert "proc" not in ev.fields


# --- a bare tag in a log of Ray before 1.7 ---------------------------------------------------------------------------
# Ray before 1.7 tagged every task's and actor's output `(pid=N)` (ray-project/ray#18105, merged for 1.7, shows it
# before and after: `(pid=1191773) hello there` became `(task pid=1191773) hello there`), so there a bare tag is the
# job's process. A Dask-on-Ray worker's SIGSEGV from a nightly of July 2021 (ray-project/ray#17080, Ray 1.5's time:
# before #18105), after a traceback the same tag printed from the job's own code (its `__del__` raising while the
# collector ran: Python's `Exception ignored in`, the job going on): the log's bare tags are the job's processes.
_RAY1_CRASH = (
    # (Ray 1.x's banner, on the bundle's day)
    "2026-11-02 10:30:00,000\tINFO services.py:1267 -- View the Ray dashboard at http://127.0.0.1:8265\n"
    "(pid=91480, ip=172.31.76.62) Exception ignored in: <function PartitionCache.__del__ at 0x7f5387a1c8b0>\n"
    "(pid=91480, ip=172.31.76.62) Traceback (most recent call last):\n"
    "(pid=91480, ip=172.31.76.62)   File \"{frame}\", line 42, in __del__\n"
    "(pid=91480, ip=172.31.76.62)     self.store.close()\n"
    "(pid=91480, ip=172.31.76.62) AttributeError: 'NoneType' object has no attribute 'close'\n"
    "(pid=91480, ip=172.31.76.62) *** SIGSEGV received at time=1626321279 on cpu 2 ***\n"
    "(pid=91480, ip=172.31.76.62) PC: @     0x7f53874b36d3  (unknown)  ray::GcsServerAddressUpdater::"
    "UpdateGcsServerAddress()\n"
    "(pid=91480, ip=172.31.76.62)     @     0x7f53889123c0       3440  (unknown)\n"
)


def test_a_bare_tag_that_printed_the_jobs_own_code_is_the_jobs_process(make_bundle: BundleMaker) -> None:
    v = _driver_log(make_bundle, _RAY1_CRASH.format(frame="/home/ray/dask_on_ray_job.py"))
    assert v.root_cause is not None and v.root_cause.category == "app.crash"


@pytest.mark.parametrize("frame", [
    "/home/ray/anaconda3/lib/python3.7/site-packages/ray/worker.py",  # Ray's own code, installed
    "/home/ray/ray/python/ray/_private/worker.py",  # ... or from its source tree
    "/usr/lib/python3.8/threading.py",  # the standard library's
])
def test_a_bare_tag_that_printed_no_code_of_the_job_stays_rays_idle_worker(
        make_bundle: BundleMaker, frame: str) -> None:
    v = _driver_log(make_bundle, _RAY1_CRASH.format(frame=frame))
    assert v.root_cause is None or v.root_cause.category != "app.crash"
    assert all(c.category != "app.crash" for c in v.candidates)


def test_the_evidence_is_the_files_own() -> None:
    # the job's frame behind a bare tag in one file says nothing of another file's bare tags
    crash = "(pid=7) *** SIGSEGV received at time=1626321279 on cpu 2 ***"
    evs = feed_lines([
        Candidate("application", "a/driver.log", 1, "node-02", None, None, '(pid=5)   File "/home/u/job.py", line 3, '
                                                                            "in f"),
        Candidate("application", "a/driver.log", 2, "node-02", None, None, crash),
        Candidate("application", "b/driver.log", 1, "node-02", None, None, crash),
    ])
    signals = [e for e in evs if e.kind == "process.signal"]
    assert [(e.evidence.file, e.fields.get("program")) for e in signals] == [("a/driver.log", None),
                                                                             ("b/driver.log", "ray-idle-worker")]
