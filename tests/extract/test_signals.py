"""The process-signal extractor (extract/signals.py) on real lines: srun, slurmstepd, the shell, faulthandler.

Lines are verbatim from the public issues cited next to them unless marked
`synthetic`.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract import signals
from tests.conftest import BundleMaker
from tests.extract import helpers
from tests.extract.helpers import assert_fields
from tests.extract.helpers import one_application as one
from tests.extract.helpers import scan_application as scan

SIG = signals.ProcessSignalExtractor()


# ---------------------------------------------------------------- process.signal (srun, slurmstepd, self)


@pytest.mark.parametrize(
    ("line", "signal", "by", "rank", "host"),
    [
        ("srun: error: node-03: task 17: Killed", "SIGKILL", "launcher", 17, "node-03"),
        ("srun: error: node-03: task 5: Segmentation fault (core dumped)", "SIGSEGV", "self", 5, "node-03"),
        ("srun: error: gpu-a17.cluster: tasks 0-3: Terminated", "SIGTERM", "launcher", None, "gpu-a17.cluster"),
        ("srun: error: node-01: task 2: Aborted (core dumped)", "SIGABRT", "launcher", 2, "node-01"),
        (
            "slurmstepd: error: *** STEP 4242.0 ON node-01 CANCELLED AT 2026-11-02T10:05:00 ***",
            "SIGTERM",
            "scheduler",
            None,
            "node-01",
        ),
        (
            "slurmstepd: error: *** JOB 4242 ON node-01 CANCELLED AT 2026-11-02T10:05:00 DUE TO TIME LIMIT ***",
            "SIGTERM",
            "scheduler",
            None,
            "node-01",
        ),
        (
            "slurmstepd: error: *** JOB 4242 ON node-01 CANCELLED AT 2026-11-02T10:05:00 DUE TO PREEMPTION ***",
            "SIGTERM",
            "scheduler",
            None,
            "node-01",
        ),
        ("Fatal Python error: Segmentation fault", "SIGSEGV", "self", None, None),
        ("[rank6]: Fatal Python error: Aborted", "SIGABRT", "self", 6, None),
        ("Segmentation fault (core dumped)", "SIGSEGV", "self", None, None),
        (
            "/var/spool/slurmd/job4242/slurm_script: line 12: 31337 Bus error               (core dumped) python "
            "train.py",
            "SIGBUS",
            "self",
            None,
            None,
        ),
        (
            "[node-02:12345:0:12399] Caught signal 11 (Segmentation fault: address not mapped to object at "
            "address 0x8)",
            "SIGSEGV",
            "self",
            None,
            None,
        ),
        # UCX's report of the other faults, which hold no `Segmentation fault` (a public report of bus errors in a
        # distributed run on AMD MI250x, its first line before UCX's backtrace; an SGLang run's TP workers)
        ("[nid005060:78213:0:78213] Caught signal 7 (Bus error: nonexistent physical address)", "SIGBUS", "self",
         None, None),
        ("[VM-32-28-tencentos:10362:0:10362] Caught signal 7 (Bus error: object-specific hardware error)", "SIGBUS",
         "self", None, None),
        # Open MPI's signal handler in the process (opal/util/stacktrace.c), naming its host: a public thread's
        # TensorRT-LLM run in docker (search index id 9720766258), and behind mpirun's tag (an Open MPI users-list
        # post, id 43536721200)
        ("[2213e8cf917e:00309] Signal: Bus error (7)", "SIGBUS", "self", None, "2213e8cf917e"),
        ("[1,0]<stderr>:[r5i5n13:12597] Signal: Bus error (7) ", "SIGBUS", "self", 0, "r5i5n13"),
        ("[iqaluk:03683] Signal: Segmentation fault (11)", "SIGSEGV", "self", None, "iqaluk"),
        # bash's word on its foreground job killed by SIGKILL, alone on its line after the job's output
        # (baichuan-inc/Baichuan2#119: loading checkpoint shards, then only this)
        ("Killed", "SIGKILL", "launcher", None, None),
    ],
)
def test_process_signal_lines(line: str, signal: str, by: str, rank: int | None, host: str | None) -> None:
    d = one(SIG, line)
    assert d.kind == "process.signal"
    assert_fields(d, {"signal": signal, "by": by})
    assert (d.rank, d.host) == (rank, host)
    assert "DUE TO TIME LIMIT" not in line or "TIME LIMIT" in str(d.fields["detail"])


@pytest.mark.parametrize(
    "line",
    [
        "srun: error: node-03: task 17: Exited with exit code 1",
        "srun: error: node-03: tasks 0-7: Exited with exit code 1",
        "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Segmentation fault. ",
        "Fatal Python error: init_fs_encoding: failed to get the Python codec of the filesystem encoding",
        # the rest of Open MPI's handler report says no more than its `Signal:` line, which decides
        "[iqaluk:03683] *** Process received signal ***",
        "[iqaluk:03683] Signal code: Non-existant physical address (2)",
        # a program's own word `Signal:` about something else (a Python log record naming a signal it handles)
        "[trainer:12] Signal: SIGUSR1 (10) received, checkpointing",
        # the word in a program's own sentence is no shell's report
        "Killed 3 idle workers after 600 s",
        "INFO: Killed",
        # another program's own words for a signal it caught: the X server in a node's journal (a public desktop's
        # gdm-x-session log) and submitit's handler of the scheduler's warning signal
        "Sep  9 03:59:33 robins-desktop /usr/lib/gdm3/gdm-x-session[7255]: (EE) Caught signal 7 (Bus error). Server "
        "aborting",
        "submitit WARNING (2022-08-12 02:06:11,453) - Caught signal SIGUSR2 on SERVER_NAME: this job is preempted.",
    ],
)
def test_process_signal_negatives(line: str) -> None:
    assert scan(SIG, [line]) == []


def test_faulthandler_and_shell_report_one_segfault() -> None:
    lines = [
        "Fatal Python error: Segmentation fault",
        "",
        "Thread 0x00007f3c2a7fe700 (most recent call first):",
        '  File "/usr/lib/python3.10/threading.py", line 324 in wait',
        "Segmentation fault (core dumped)",
        "Segmentation fault (core dumped)",  # much later: a second fault would be a new event
    ]
    lines[5:5] = ["step 1"] * 400
    drafts = scan(SIG, lines)
    assert [d.fields["signal"] for d in drafts] == ["SIGSEGV", "SIGSEGV"]


# ---------------------------------------------------------------- Triton's own crash report


def test_tritons_own_crash_report_is_the_processs_signal(make_bundle: BundleMaker) -> None:
    # triton-inference-server/server#3916 (a TensorFlow backend's crash) and #7400 (python backend, gRPC's flow
    # control), as their reporters posted them: the handler's line, then boost's frames
    crash = ["Signal (11) received.",
             " 0# triton::server::(anonymous namespace)::ErrorSignalHandler(int) at triton_signal.cc:?",
             " 1# 0x00007F2477AC8B50 in /usr/lib64/libc.so.6"]
    got = [(e.kind, e.fields.get("signal"), e.fields.get("by")) for e in helpers.events(crash)]
    assert got == [("process.signal", "SIGSEGV", "self")]
    # clearml/clearml-serving#36: its abort (an uncaught C++ exception) is the process's own
    assert [(e.fields.get("signal"), e.fields.get("by")) for e in helpers.events(["Signal (6) received."])] == [
        ("SIGABRT", "self")]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": "".join(s + "\n" for s in crash)})))
    assert (v.attributed_domain, v.root_cause.category if v.root_cause else None) == ("software", "app.crash")


@pytest.mark.parametrize("line", [
    # the same handler's words for the graceful shutdown it was asked for (SIGTERM, SIGINT; synthetic): the sender's
    "Signal (15) received.",
    "Signal (2) received.",
    # a person's words quoting it (synthetic, after the title of triton-inference-server/server#6723), not the report
    "Triton Server Crash with Signal (11) received. after some hours",
])
def test_near_miss_tritons_signal_words_that_are_no_crash(line: str) -> None:
    assert [e for e in helpers.events([line]) if e.kind == "process.signal"] == []


# ---------------------------------------------------------------- a language runtime's own crash report


@pytest.mark.parametrize(("lines", "signal"), [
    # GNU Fortran's handler (libgfortran/runtime/compile_options.c show_signal), four ranks' copies as merzlab/QUICK#134
    # posted them: one fault of the stream
    (["Program received signal SIGSEGV: Segmentation fault - invalid memory reference.", "",
      "Backtrace for this error:", "",
      "Program received signal SIGSEGV: Segmentation fault - invalid memory reference.", "",
      "Backtrace for this error:", "#0  0x2B56D1DDB697", "#3  0x41A4F9 in mgpu_eri_greedy_distribute()"], "SIGSEGV"),
    # Go's runtime on a signal in C code called through cgo (src/runtime/signal_unix.go fatalsignal, its sigtable's
    # name): dstackai/dstack#2963, the shim dying in go-dcgm's dlopen
    (["SIGFPE: floating-point exception", "PC=0x7c1005975bb9 m=3 sigcode=1", "signal arrived during cgo execution",
      "goroutine 1 gp=0xc0000061c0 m=3 mp=0xc000056e08 [syscall]:"], "SIGFPE"),
    # Apple's crash report: exo-explore/exo#1808, the MLX runner's crash in JACCL's all_gather
    (["Exception Type:  EXC_BAD_ACCESS (SIGBUS)", "                 KERN_PROTECTION_FAILURE at 0xc697fffe0", "",
      "Thread 2 Crashed:", "  0  _platform_memmove                                        + 544"], "SIGBUS"),
])
def test_a_runtimes_own_crash_report_is_the_processs_signal(make_bundle: BundleMaker, lines: list[str],
                                                             signal: str) -> None:
    got = [(e.kind, e.fields.get("signal"), e.fields.get("by")) for e in helpers.events(lines)
           if e.kind == "process.signal"]
    assert got == [("process.signal", signal, "self")]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": "".join(s + "\n" for s in lines)})))
    assert (v.attributed_domain, v.root_cause.category if v.root_cause else None) == ("software", "app.crash")


@pytest.mark.parametrize("line", [
    # gdb's words for a signal the debugger stopped the program on (gdb infrun.c print_signal_received_reason; a
    # comma, no description; synthetic): a debugging session's, not the runtime's report
    "Program received signal SIGSEGV, Segmentation fault.",
    # libgfortran's handler for a limit's signal (its show_signal table; synthetic): the limit's, not a fault
    "Program received signal SIGXCPU: CPU time limit exceeded.",
    # Go's dump on SIGQUIT, which someone sent (its sigtable; synthetic), and its SIGABRT, which GOTRACEBACK=crash
    # raises after a panic already read
    "SIGQUIT: quit",
    "SIGABRT: abort",
    # Apple's report of the system's kill (a watchdog, jetsam; synthetic after Apple's crash report documentation)
    "Exception Type:  EXC_CRASH (SIGKILL)",
    # a person's words quoting a report (after exo-explore/exo#1808's description; synthetic), not the report
    "the MLX runner dies with Exception Type: EXC_BAD_ACCESS (SIGBUS) during prefill",
    "we see SIGSEGV: segmentation violation in the shim",
])
def test_near_miss_runtime_crash_words_that_are_no_report(line: str) -> None:
    assert [e for e in helpers.events([line]) if e.kind == "process.signal"] == []


def test_go_panics_signal_line_is_read_once() -> None:
    # a Go panic's fault (golang/go runtime/panic.go panicmem; the bracketed signal line after it): the panic's
    # reading, the bracketed line no second crash report of this model (synthetic, Go's format)
    lines = ["panic: runtime error: invalid memory address or nil pointer dereference",
             "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x48f0d2]", "",
             "goroutine 1 [running]:", "main.main()", "\t/app/main.go:9 +0x12"]
    assert [e for e in helpers.events(lines) if e.kind == "process.signal" and
            "segmentation violation code" in str(e.fields.get("detail"))] == []
