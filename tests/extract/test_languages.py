"""One traceback model for every language an AI job's stack is written in (extract/traceback.py `LANGUAGES`, the
exception group's frame, catalog/exceptions.yaml's class rows of other languages).

Each language's uncaught error is read as a Python traceback's last line is (`classify`, through the same class,
errno, status and object-store tables): Go's `panic:` and `fatal error:`, Julia's `ERROR: LoadError: X`, Java's
`Exception in thread "main"` and its `Caused by:` chain, C++'s `terminate called after throwing` + `what():`, and
Python 3.11's exception groups, whose sub-exceptions decide. Every test runs a small bundle through the real
extractors and engine (bundle -> verdict). Lines copied from public threads carry the thread in a comment; lines
written here say so (in the form the comment names).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract import nccl
from firstfault.extract import traceback as tb
from firstfault.model import Verdict
from tests.extract import helpers

ALL = (*nccl.EXTRACTORS, *helpers.APPLICATION)


def verdict(tmp: Path, text: str, app: str = "logs/node-a/app.log",
            window: tuple[str, str] = ("2026-12-03T15:00:00Z", "2026-12-03T16:30:00Z")) -> Verdict:
    """A failed one-node job whose only evidence is its own output (`app`: the file's path under the bundle)."""
    (tmp / app).parent.mkdir(parents=True, exist_ok=True)
    (tmp / app).write_text(text)
    pattern = app.replace("node-a", "{node}")
    (tmp / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\nworkload:\n  id: '7'\n  scheduler: static\n"
        f"  window: {{start: '{window[0]}', end: '{window[1]}'}}\n  nodes: [node-a]\n"
        "  terminal_state: FAILED\n  timezone: UTC\n"
        f"sources:\n  - {{kind: application, path: '{pattern}'}}\n")
    return Analyzer().analyze_path(str(tmp))


def cause(v: Verdict) -> tuple[str, list[str]] | None:
    return None if v.root_cause is None else (v.root_cause.category, v.root_cause.nodes)


def kinds(lines: list[str]) -> list[str]:
    return [d.kind for d in helpers.scan(ALL, lines, "application")]


# --------------------------------------------------------------------------
# Go
# --------------------------------------------------------------------------

# volcano-sh/devices#42 (https://github.com/volcano-sh/devices/issues/42): a nil dereference the runtime turned into
# a panic, its signal on the next line
GO_NIL = """panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1092953]

goroutine 68 [running]:
""" + ("volcano.sh/k8s-device-plugin/pkg/plugin/vgpu4pd.(*NvidiaDevicePlugin).Allocate(0xc00038ec80, "
       "{0x14cfee0, 0xc0003ee510}, 0xc0005eca00)\n")
# NVIDIA/k8s-device-plugin#140 (https://github.com/NVIDIA/k8s-device-plugin/issues/140), a comment's build
GO_NIL_2 = """panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x8414d7]

goroutine 1 [running]:
main.getDevices(0xc4200c3e38, 0x1, 0x1)
\t/go/src/nvidia-device-plugin/nvidia.go:49 +0x177
main.main()
\t/go/src/nvidia-device-plugin/main.go:42 +0x111
"""
# NVIDIA/k8s-device-plugin#338 (https://github.com/NVIDIA/k8s-device-plugin/issues/338): a panic with an error value
GO_VALUE = """2022/10/19 18:51:07 Retreiving plugins.
panic: Unable to load resource managers to manage plugin devices: error building device map: error \
building device map from config.resources: error building GPU device map: error getting device handle for index \
'0': Unknown Error

goroutine 1 [running]:
main.(*migStrategyNone).GetPlugins(0xc00011c278)
        /build/cmd/nvidia-device-plugin/mig-strategy.go:57 +0x1a5
"""
# neoql/btlet#11 (https://github.com/neoql/btlet/issues/11)
GO_DEADLOCK = """Start crawl ...
fatal error: all goroutines are asleep - deadlock!

goroutine 1 [chan receive]:
main.main()
        /.../.../example/btsniffer/btsniffer.go:21 +0x36d
"""
# golang/tour#1052 (https://github.com/golang/tour/issues/1052)
GO_DEADLOCK_2 = """fatal error: all goroutines are asleep - deadlock!

goroutine 1 [chan receive]:
main.main()
\t/tmp/sandbox915641541/prog.go:9 +0xfd
"""
# milo2012/pathbrute#17 (https://github.com/milo2012/pathbrute/issues/17): the runtime's mmap failed
GO_OOM = """fatal error: runtime: out of memory

runtime stack:
runtime.throw(0x9d3bfc, 0x16)
        /usr/lib/go-1.13/src/runtime/panic.go:774 +0x72
"""
# mozilla/tls-observatory#377 (https://github.com/mozilla/tls-observatory/issues/377), the same record
GO_OOM_2 = """fatal error: runtime: out of memory

runtime stack:
runtime.throw(0x6731d0, 0x16)
        /tmp/go/src/runtime/panic.go:608 +0x72
"""


@pytest.mark.parametrize("text", [GO_NIL, GO_NIL_2])
def test_a_go_nil_dereference_is_the_programs_crash_on_its_signal(tmp_path: Path, text: str) -> None:
    assert kinds(text.splitlines()) == ["process.signal"]
    assert cause(verdict(tmp_path, text)) == ("app.crash", ["node-a"])


@pytest.mark.parametrize("text", [GO_VALUE, GO_DEADLOCK, GO_DEADLOCK_2, GO_OOM, GO_OOM_2])
def test_a_go_panic_or_fatal_error_is_the_workloads_exception(tmp_path: Path, text: str) -> None:
    # A panic on a value and the runtime's own fatal errors: the program's failure, read as an uncaught exception.
    # Go's `runtime: out of memory` is the runtime's own allocation failing, not a kill by the kernel's OOM killer
    # or a cgroup (host.oom): the workload's exception, as C++'s bad_alloc and the JVM's heap limit.
    assert cause(verdict(tmp_path, text)) == ("app.exception", ["node-a"])
    exc = next(tb.foreign_exception(line) for line in text.splitlines() if tb.foreign_exception(line) is not None)
    assert exc.cls in (tb.PANIC_CLASS, tb.GO_FATAL_CLASS)


# ebitengine/purego#169 (https://github.com/ebitengine/purego/issues/169): a fault in C code the program called,
# the signal named on the line after, the runtime's frames with GOTRACEBACK's fp/sp/pc
GO_UNEXPECTED = """fatal error: unexpected signal during runtime execution
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x7f2e4f83a501]

runtime stack:
runtime.throw({0xc7d0a3?, 0x0?})
\t/opt/my-apps/go/src/runtime/panic.go:1047 +0x5d fp=0x7f2e258debf8 sp=0x7f2e258debc8 pc=0x436efd
runtime.sigpanic()
\t/opt/my-apps/go/src/runtime/signal_unix.go:821 +0x3e9 fp=0x7f2e258dec58 sp=0x7f2e258debf8 pc=0x44db49
"""
# golang/go#16331 (https://github.com/golang/go/issues/16331), a comment's record
GO_UNEXPECTED_2 = """fatal error: unexpected signal during runtime execution
[signal SIGSEGV: segmentation violation code=0x2 addr=0x7fbe13fc2000 pc=0x7fbe13b8112d]

runtime stack:
runtime.throw(0x8f655c, 0x2a)
        /usr/local/go/src/runtime/panic.go:596 +0x95
"""


@pytest.mark.parametrize("text", [GO_UNEXPECTED, GO_UNEXPECTED_2])
def test_a_go_fatal_signal_is_the_programs_crash_on_the_signal_the_next_line_names(tmp_path: Path, text: str) -> None:
    drafts = helpers.scan(ALL, text.splitlines(), "application")
    assert [(d.kind, d.fields.get("signal"), d.fields.get("by")) for d in drafts] == [
        ("process.signal", "SIGSEGV", "self")]
    v = verdict(tmp_path, text)
    assert cause(v) == ("app.crash", ["node-a"])
    # a frame's file line is the record's, never unrecognized (`panic.go`'s name aside); a function's line
    # (`runtime.sigpanic()`) holds no word the record's reader is given, and may still be listed
    assert not any(".go:" in u.template for u in v.unrecognized)


def test_a_signal_line_alone_is_no_crash() -> None:
    # the same signal line with no fatal error before it (a posted excerpt; a record cut at its head): part of a
    # record whose error is not in the evidence, no event of its own
    assert kinds(["[signal SIGSEGV: segmentation violation code=0x2 addr=0x7fbe13fc2000 pc=0x7fbe13b8112d]"]) == []


def test_a_go_panic_in_a_container_runtimes_log_format_is_read_past_its_prefix(tmp_path: Path) -> None:
    # volcano-sh/devices#58 (https://github.com/volcano-sh/devices/issues/58): the CRI log format's time, stream and
    # tag before each line of the panic's record
    text = ("2024-03-07T10:55:48.374277561Z stderr F panic: runtime error: invalid memory address or nil pointer "
            "dereference\n"
            "2024-03-07T10:55:48.374309502Z stderr F [signal SIGSEGV: segmentation violation code=0x1 addr=0x0 "
            "pc=0x1092953]\n"
            "2024-03-07T10:55:48.374313183Z stderr F\n"
            "2024-03-07T10:55:48.374316238Z stderr F goroutine 234 [running]:\n")
    v = verdict(tmp_path, text, window=("2024-03-07T10:00:00Z", "2024-03-07T11:00:00Z"))
    assert cause(v) == ("app.crash", ["node-a"])


def test_a_recovered_go_panic_logged_at_warning_is_no_cause(tmp_path: Path) -> None:
    # written here: a program's logger reports a panic it recovered from, and the run goes on
    text = ("2026-12-03 15:10:00,000 WARNING recovered: panic: runtime error: index out of range [3] with length 3\n"
            "2026-12-03 15:10:05,000 INFO step 101 loss=2.31\n")
    assert cause(verdict(tmp_path, text)) is None


def test_a_reraised_go_panics_mark_is_not_its_message() -> None:
    # Go 1.25's release notes (go.dev/issue/71517): a value recovered and re-panicked
    exc = tb.foreign_exception("panic: PANIC [recovered, reraised]")
    assert exc is not None and exc.msg == "PANIC"
    exc = tb.foreign_exception("panic: PANIC [recovered]")
    assert exc is not None and exc.msg == "PANIC"


def test_a_go_panic_names_the_errno_its_error_carries(tmp_path: Path) -> None:
    # written here, in Go's form (os.PathError's `open <path>: <strerror>`, lower-cased as Go's syscall spells it)
    text = "panic: open /data/ckpt/step-100.bin: no space left on device\n\ngoroutine 1 [running]:\nmain.main()\n"
    v = verdict(tmp_path, text)
    assert cause(v) == ("storage.filesystem", ["node-a"])


def test_a_platform_programs_panic_is_not_the_workloads(tmp_path: Path) -> None:
    # The device plugin's own log (its pod's log file, named as the kubelet names it): the plugin's panic is the
    # platform's, not the job's exception: the plugin failing on its node (platform.error, part device_plugin: the
    # node's device-plugin plumbing, weak; tests/extract/test_platform_panic.py); the same lines in the job's own
    # output are the job's.
    app = "pods/kube-system_nvidia-device-plugin-daemonset-x2x7q/node-a/0.log"
    assert cause(verdict(tmp_path / "plugin", GO_VALUE, app)) == ("node.driver.device_plugin", ["node-a"])
    assert cause(verdict(tmp_path / "job", GO_VALUE)) == ("app.exception", ["node-a"])
    # a program the table of the platform's programs names beyond the device plugins (catalog/platform.yaml
    # `platform_programs`): the GPU operator's driver validation, its pod's log as the kubelet names it
    app = "pods/gpu-operator_nvidia-operator-validator-5xq2z/driver-validation/0.log"
    assert cause(verdict(tmp_path / "validator", GO_VALUE, app)) is None


def test_a_sigquit_goroutine_dump_is_no_crash(tmp_path: Path) -> None:
    # moby/moby#44791 (https://github.com/moby/moby/pull/44791): a dump someone asked for with Ctrl+\ (the signal
    # came from outside), with the caret the terminal echoed; no `panic:` or `fatal error:` line
    text = ("^\\SIGQUIT: quit\nPC=0x55b049d6ada1 m=0 sigcode=128\n\ngoroutine 0 [idle]:\nruntime.futex()\n"
            "\t/usr/local/go/src/runtime/sys_linux_amd64.s:559 +0x21 fp=0x7ffd274e41b0 sp=0x7ffd274e41a8 "
            "pc=0x55b049d6ada1\n")
    assert kinds(text.splitlines()) == []
    assert cause(verdict(tmp_path, text)) is None


@pytest.mark.parametrize("line", [
    # Kubernetes' apimachinery logs a panic it recovered (HandleCrash; written here in its form): not at the head
    'E0615 08:06:11.338349       1 runtime.go:79] Observed a panic: "invalid memory address or nil pointer '
    'dereference" (runtime error: invalid memory address or nil pointer dereference)',
    # a C compiler's fatal error is after the file's name, not at the head (written here, in gcc's form)
    "csrc/ops.cu:12:10: fatal error: cuda_runtime.h: No such file or directory",
    # a warning about a panic the program went on from (written here)
    "panic: worker 3 stalled, retrying in 5s",
])
def test_lines_that_are_no_go_panic(line: str) -> None:
    assert tb.foreign_exception(line) is None or "retrying" in line
    assert "process.signal" not in kinds([line])
    assert not any(d.fields.get("exc_type") == tb.PANIC_CLASS for d in helpers.scan(ALL, [line], "application"))


# --------------------------------------------------------------------------
# Python 3.11's exception groups
# --------------------------------------------------------------------------

# The header and the group's own lines in CPython's form (Lib/traceback.py TracebackException.format); the
# sub-exception's lines from python/cpython#115068 (https://github.com/python/cpython/issues/115068)
GROUP_REFUSED = """  + Exception Group Traceback (most recent call last):
  |   File "/app/serve.py", line 10, in <module>
  |     asyncio.run(main())
  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "/usr/lib/python3.11/socket.py", line 836, in create_connection
    |     return self._sock.connect(address)
    | ConnectionRefusedError: [Errno 111] Connection refused
    +------------------------------------
"""
PLAIN_REFUSED = """Traceback (most recent call last):
  File "/usr/lib/python3.11/socket.py", line 836, in create_connection
    return self._sock.connect(address)
ConnectionRefusedError: [Errno 111] Connection refused
"""
# The group's lines from davidbrochart/anycorn#89 (https://github.com/davidbrochart/anycorn/issues/89), nested one
# level deeper; its header in CPython's form; the sub-exception's last line written here (a checkpoint write)
GROUP_ENOSPC = """      + Exception Group Traceback (most recent call last):
        |     raise BaseExceptionGroup(
        |         "unhandled errors in a TaskGroup", self._exceptions
        |     ) from None
        | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)
        +-+---------------- 1 ----------------
          | Traceback (most recent call last):
          |   File "/home/khteh/workspace/stem-video-service/.venv/lib/python3.14/site-packages/anyio/_core/\
_tasks.py", line 327, in _run_coro
          |     retval = await self._coro
          |              ^^^^^^^^^^^^^^^^
          | OSError: [Errno 28] No space left on device: '/ckpt/step_100.pt'
          +------------------------------------
"""
# written here in CPython's form: every sub-exception was cancelled
GROUP_CANCELLED = """  + Exception Group Traceback (most recent call last):
  |   File "/app/main.py", line 10, in <module>
  |     asyncio.run(main())
  | BaseExceptionGroup: unhandled errors in a TaskGroup (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "/app/main.py", line 5, in worker
    |     await asyncio.sleep(10)
    | asyncio.exceptions.CancelledError
    +---------------- 2 ----------------
    | asyncio.exceptions.CancelledError
    +------------------------------------
"""


def test_a_groups_sub_exception_decides_as_a_plain_tracebacks_last_line_would() -> None:
    group = helpers.scan(ALL, GROUP_REFUSED.splitlines(), "application")
    plain = helpers.scan(ALL, PLAIN_REFUSED.splitlines(), "application")
    assert [(d.kind, d.fields) for d in group] == [(d.kind, d.fields) for d in plain] == [
        ("nccl.remote_error", {"detail": "ConnectionRefusedError: [Errno 111] Connection refused"})]


def test_a_groups_storage_errno_is_the_cause(tmp_path: Path) -> None:
    assert kinds(GROUP_ENOSPC.splitlines()) == ["storage.error"]
    assert cause(verdict(tmp_path, GROUP_ENOSPC)) == ("storage.filesystem", ["node-a"])


def test_a_nested_groups_sub_exception_decides(tmp_path: Path) -> None:
    # written here in CPython's form: a group inside a group prints its header inside the outer group's frame
    text = """  + Exception Group Traceback (most recent call last):
  |   File "/app/main.py", line 10, in <module>
  | ExceptionGroup: outer (1 sub-exception)
  +-+---------------- 1 ----------------
    | Exception Group Traceback (most recent call last):
    |   File "/app/main.py", line 7, in inner
    | ExceptionGroup: inner (1 sub-exception)
    +-+---------------- 1 ----------------
      | Traceback (most recent call last):
      |   File "/app/main.py", line 5, in save
      | OSError: [Errno 28] No space left on device: '/ckpt/x.pt'
      +------------------------------------
"""
    assert kinds(text.splitlines()) == ["storage.error"]
    assert cause(verdict(tmp_path, text)) == ("storage.filesystem", ["node-a"])


def test_a_sub_exception_without_a_traceback_of_its_own_decides_too() -> None:
    # written here in CPython's form: a sub-exception that was never raised prints its last line alone
    text = ("  + Exception Group Traceback (most recent call last):\n  |   File \"/app/main.py\", line 3, in <module>\n"
            "  | ExceptionGroup: writes (1 sub-exception)\n  +-+---------------- 1 ----------------\n"
            "    | OSError: [Errno 122] Disk quota exceeded: '/home/u/ckpt.pt'\n"
            "    +------------------------------------\n")
    drafts = helpers.scan(ALL, text.splitlines(), "application")
    assert [(d.kind, d.fields.get("errno"), d.fields.get("terminal")) for d in drafts] == [
        ("storage.error", "EDQUOT", None)]


def test_a_group_whose_sub_exceptions_were_all_cancelled_names_no_cause(tmp_path: Path) -> None:
    # A cancelled task was cancelled because of something else, which decides (as the CANCELLED status word)
    assert kinds(GROUP_CANCELLED.splitlines()) == []
    assert cause(verdict(tmp_path, GROUP_CANCELLED)) is None


def test_a_table_row_outside_a_group_is_not_peeled() -> None:
    # a Markdown table's row in a job's output (written here): no group was opened, so the bar stays
    model = tb.TracebackModel()
    body, grouped = model._peel_group("| ValueError: 1 |", None, _ctx(1))
    assert not grouped and body.startswith("|")


def _ctx(n: int) -> object:
    from firstfault.extract.base import LineContext
    return LineContext("application", "a.log", n, None, None, None, {})


# --------------------------------------------------------------------------
# Java / Scala
# --------------------------------------------------------------------------

# sparklyr/sparklyr#1390 (https://github.com/sparklyr/sparklyr/issues/1390): the driver's line names the executor's
# IOException; gbif/ipt#3034 (https://github.com/gbif/ipt/issues/3034): the deepest `Caused by`, then `... N more`
JAVA_CAUSED_BY = """Exception in thread "main" org.apache.spark.SparkException: Job aborted due to stage \
failure: Task 0 in stage 762.0 failed 4 times
\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:1889)
\tCaused by: java.io.IOException: No space left on device
\t\tat java.base/java.io.FileOutputStream.writeBytes(Native Method)
\t\tat java.base/java.io.FileOutputStream.write(FileOutputStream.java:349)
\t\t... 110 more
"""
# ONLYOFFICE/build_tools#805 (https://github.com/ONLYOFFICE/build_tools/issues/805): the exception alone, its frames
JAVA_ALONE = """java.io.IOException: No space left on device
        at java.base/java.io.FileOutputStream.writeBytes(Native Method)
        at java.base/java.io.FileOutputStream.write(FileOutputStream.java:354)
"""


@pytest.mark.parametrize("text", [JAVA_CAUSED_BY, JAVA_ALONE])
def test_javas_deepest_cause_with_a_strerror_goes_to_the_errno_table(tmp_path: Path, text: str) -> None:
    assert cause(verdict(tmp_path, text)) == ("storage.filesystem", ["node-a"])


def test_the_jvms_heap_limit_is_the_workloads_exception(tmp_path: Path) -> None:
    # the JVM's heap (-Xmx) exhausted: the program's own limit, not the kernel's OOM killer (written here, in the
    # JVM's form)
    text = ('Exception in thread "main" java.lang.OutOfMemoryError: Java heap space\n'
            "\tat java.util.Arrays.copyOf(Arrays.java:3236)\n")
    assert cause(verdict(tmp_path, text)) == ("app.exception", ["node-a"])


@pytest.mark.parametrize("line", [
    # koordinator-sh/koordinator#1004 (https://github.com/koordinator-sh/koordinator/issues/1004): Spark retries a lost
    # task (a WARN)
    "23/02/08 08:34:25 WARN TaskSetManager: Lost task 12057.0 in stage 372.0 (TID 178902) (172.16.0.127 executor 4): "
    "java.io.IOException: **No space left on device**",
    # an INFO retry line that names its cause (written here, in Hadoop's RetryInvocationHandler form)
    "2023-05-01 12:00:00,000 INFO retry.RetryInvocationHandler: Exception while invoking create. Caused by: "
    "java.io.IOException: No space left on device. Retrying after sleeping for 1000ms.",
])
def test_a_java_cause_in_a_warning_or_a_retry_is_no_cause(tmp_path: Path, line: str) -> None:
    assert cause(verdict(tmp_path, line + "\n")) is None


# --------------------------------------------------------------------------
# C++
# --------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    # pavel-odintsov/fastnetmon#290 (https://github.com/pavel-odintsov/fastnetmon/issues/290)
    "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n",
    # yinlabniu/HGT-Finder#7 (https://github.com/yinlabniu/HGT-Finder/issues/7): glued to the program's own words
    "Reading in tax DB...terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n",
])
def test_bad_alloc_is_the_workloads_own_allocation_failure(tmp_path: Path, text: str) -> None:
    # operator new failing is the program's allocation (a size its bug asked for, a limit it was given), not a kill
    # by the kernel's OOM killer, a cgroup or the scheduler (host.oom): the workload's exception
    drafts = helpers.scan(ALL, text.splitlines(), "application")
    assert [(d.kind, d.fields.get("exc_type")) for d in drafts] == [("app.exception", "bad_alloc")]
    assert cause(verdict(tmp_path, text)) == ("app.exception", ["node-a"])


def test_a_what_message_goes_through_the_errno_table(tmp_path: Path) -> None:
    # written here, in libstdc++'s verbose terminate handler's form, with std::system_error's what()
    text = ("terminate called after throwing an instance of 'std::system_error'\n"
            "  what():  write: No space left on device\n")
    assert cause(verdict(tmp_path, text)) == ("storage.filesystem", ["node-a"])


# --------------------------------------------------------------------------
# Julia
# --------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "cls", "category"), [
    # JuliaLang/Pkg.jl#2392 (https://github.com/JuliaLang/Pkg.jl/issues/2392): a file the program named is not there
    ('ERROR: LoadError: SystemError: opening file "/Users/moha/.julia/registries/General/Registry.toml": No such '
     "file or directory\nStacktrace:\n [1] systemerror(::String, ::Int32; extrainfo::Nothing) at ./error.jl:168\n",
     "SystemError", "app.exception"),
    # BASEforHANK/BASEtoolbox_KrusellSmith.jl#1 (https://github.com/BASEforHANK/BASEtoolbox_KrusellSmith.jl/issues/1)
    ('ERROR: LoadError: IOError: cd("./src"): no such file or directory (ENOENT)\nStacktrace:\n [1] uv_error\n',
     "IOError", "app.exception"),
    # QuEraComputing/Bloqade.jl#567 (https://github.com/QuEraComputing/Bloqade.jl/issues/567): Julia's own heap
    ("ERROR: OutOfMemoryError()\nStacktrace:\n  [1] Array\n    @ .\\boot.jl:461 [inlined]\n",
     "OutOfMemoryError", "app.exception"),
    # written here in Julia's form: a checkpoint write on a full file system
    ('ERROR: LoadError: SystemError: opening file "/scratch/ckpt/step_100.jld2": No space left on device\n',
     "SystemError", "storage.filesystem"),
])
def test_julias_error_line_is_read_past_its_loaderror(tmp_path: Path, text: str, cls: str, category: str) -> None:
    exc = tb.foreign_exception(text.splitlines()[0])
    assert exc is not None and exc.cls == cls
    got = cause(verdict(tmp_path, text))
    assert got is not None and got[1] == ["node-a"]
    assert got[0] == category or got[0].startswith(category + ".")  # a refinement (app.exception.io) is the family's


@pytest.mark.parametrize("text", [
    # written here in Julia's form: since 1.8 the exception stack prints the earlier exception last, after
    # `caused by: ` (base/errorshow.jl show_exception_stack): the deepest cause is the stream's last word
    'ERROR: LoadError: ArgumentError: could not write checkpoint\nStacktrace:\n [1] save(path::String)\n'
    '   @ Main /app/train.jl:40\ncaused by: SystemError: opening file "/scratch/ckpt/step_100.jld2": No space left '
    "on device\nStacktrace:\n",
    # ... and a task's error under its TaskFailedException (base/task.jl's showerror: `nested task error: `), the
    # envelope deciding nothing
    'ERROR: LoadError: TaskFailedException\n\n    nested task error: SystemError: opening file '
    '"/scratch/ckpt/step_100.jld2": No space left on device\n    Stacktrace:\n',
])
def test_julias_deepest_cause_decides(tmp_path: Path, text: str) -> None:
    assert cause(verdict(tmp_path, text)) == ("storage.filesystem", ["node-a"])


@pytest.mark.parametrize(("text", "sig"), [
    # JuliaParallel/MPI.jl#370 (openucx/ucx#5061: "ReadOnlyMemoryError is Julia's report of a SIGSEGV")
    ("ERROR: LoadError: ReadOnlyMemoryError()\nStacktrace:\n [1] Isend(::MPI.Buffer{CuArray{Float64,1,Nothing}}, "
     "::Int64, ::Int64, ::MPI.Comm) at /src/MPI.jl/src/pointtopoint.jl:230\n", "SIGSEGV"),
    # written here in Julia's form: the SIGINT its handler throws into the task
    ("ERROR: LoadError: InterruptException:\nStacktrace:\n [1] poptask(W::Base.InvasiveLinkedListSynchronized)\n",
     "SIGINT"),
])
def test_a_julia_class_its_runtime_throws_for_a_signal_is_that_signal(tmp_path: Path, text: str, sig: str) -> None:
    drafts = [d for d in helpers.scan(ALL, text.splitlines(), "application") if d.kind == "process.signal"]
    assert [d.fields["signal"] for d in drafts] == [sig]
    if sig == "SIGSEGV":
        assert cause(verdict(tmp_path, text)) == ("app.crash", ["node-a"])


def test_a_julia_error_of_another_class_is_no_signal(tmp_path: Path) -> None:
    """Near miss: Julia's own heap exhausted (OutOfMemoryError) and a bounds error are the workload's exceptions."""
    for text in ("ERROR: OutOfMemoryError()\n", "ERROR: LoadError: BoundsError: attempt to access 2-element "
                 "Vector{Int64} at index [3]\n"):
        assert "process.signal" not in kinds(text.splitlines())
    assert cause(verdict(tmp_path, "ERROR: OutOfMemoryError()\n")) == ("app.exception", ["node-a"])


def test_a_julia_error_line_needs_a_class() -> None:
    # a tool's plain `ERROR: ` line (written here) names no class: no Julia error
    assert tb.foreign_exception("ERROR: could not download dataset, check the URL") is None


# --------------------------------------------------------------------------
# Python's chains: which member decides
# --------------------------------------------------------------------------

ENOSPC = "OSError: [Errno 28] No space left on device: '/ckpt/x.pt'"  # written here, in CPython's form


def _chain(first: str, marker: str, second: str) -> str:
    return (f"Traceback (most recent call last):\n  File \"/app/main.py\", line 8, in save\n    f.write(b)\n{first}\n\n"
            f"{marker}:\n\nTraceback (most recent call last):\n  File \"/app/main.py\", line 9, in <module>\n"
            f"    main()\n{second}\n")


@pytest.mark.parametrize("marker", list(tb.CHAIN_MARKERS))
def test_the_first_member_of_a_chain_that_decides_is_the_chains_event(tmp_path: Path, marker: str) -> None:
    # The member printed first began the chain (the cause of a `raise ... from`, the exception being handled): it
    # decides; a later envelope (a framework's RuntimeError around it) is folded into it.
    v = verdict(tmp_path / "a", _chain(ENOSPC, marker, "RuntimeError: checkpoint failed"))
    assert cause(v) == ("storage.filesystem", ["node-a"])
    # ... and a later member's storage errno does not overrule a first member that already decided
    v = verdict(tmp_path / "b", _chain("ValueError: bad shard index", marker, ENOSPC))
    assert cause(v) == ("app.exception", ["node-a"])
    # ... while a first member that decides nothing (an envelope: queue.Empty) leaves it to the next
    v = verdict(tmp_path / "c", _chain("_queue.Empty", marker, ENOSPC))
    assert cause(v) == ("storage.filesystem", ["node-a"])


# ---------------------------------------------------------------- JavaScript (Node.js / V8)

# huridocs/uwazi#7319, verbatim: the AWS SDK for JavaScript v3 throws S3's own code as the error's name
UWAZI_SLOWDOWN = [
    "SlowDown: UnknownError",
    "    at throwDefaultError (/opt/uwazi/cores/core-1.187.3/node_modules/@smithy/smithy-client/dist-cjs/"
    "index.js:840:20)",
    "    at /opt/uwazi/cores/core-1.187.3/node_modules/@smithy/smithy-client/dist-cjs/index.js:849:5",
    "    at de_CommandError (/opt/uwazi/cores/core-1.187.3/node_modules/@aws-sdk/client-s3/dist-cjs/index.js:4743:14)",
]


def js(lines: list[str]) -> list[tuple[str, object]]:
    return [(d.kind, d.fields.get("store_code") or d.fields.get("exc_type")) for d in helpers.scan(ALL, lines,
                                                                                                  "application")]


def test_a_js_sdks_error_named_by_the_stores_code_is_the_object_stores(tmp_path: Path) -> None:
    assert js(UWAZI_SLOWDOWN) == [("storage.error", "SlowDown")]
    v = verdict(tmp_path, "".join(s + "\n" for s in UWAZI_SLOWDOWN))
    assert v.root_cause is not None and v.root_cause.category == "storage.object_store"


def test_a_js_error_of_the_program_itself_is_its_exception() -> None:
    # Node's TypeError in the V8 form (message and frame written here, the form of Node's `util.inspect` of an Error)
    assert js(["TypeError: Cannot read properties of undefined (reading 'bucket')",
               "    at uploadCheckpoint (/app/src/upload.js:42:17)",
               "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)"]) == [
        ("app.exception", "TypeError")]


@pytest.mark.parametrize("lines", [
    # a `name: message` line with no stack after it (huridocs/uwazi#7319's request line, verbatim)
    ["url: /api/files/1714673803529gdetwwu5oe9.jpg", "SlowDown is what S3 answered, see below"],
    # the store's code as the name of an error thrown by the program's own code, not the SDK's (written here): the
    # program's exception, not the store's answer
    ["SlowDown: UnknownError", "    at retryUpload (/app/src/upload.js:10:3)"],
    # a frame that does not follow its error's line directly (a line between): no error is made of the earlier line
    ["SlowDown: UnknownError", "(request 6529 logged)", UWAZI_SLOWDOWN[1]],
])
def test_near_miss_no_js_stack_right_after_the_line_or_not_the_sdks(lines: list[str]) -> None:
    assert ("storage.error", "SlowDown") not in js(lines)
