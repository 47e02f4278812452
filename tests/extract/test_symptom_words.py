"""Words that say a process failed because of something else, or ended itself, read through the shared tables.

- a message that says no more than that the operation was cancelled is an envelope, as CancelledError is
  (catalog/exceptions.yaml): what cancelled it decides;
- Intel oneCCL's exception (`oneCCL: file:line function: EXCEPTION: ...`) is the collective library's failure, a
  symptom, as NCCL's and MPI's are;
- the C++ runtime aborting the process with no exception in flight (libstdc++'s `pure virtual method called`,
  `terminate called without an active exception`) is the process's own SIGABRT (app-crash), and so is glibc's
  malloc finding its heap corrupted (`free(): invalid pointer`, `double free or corruption (out)`);
- Triton's repository manager refusing a model whose platform it has no backend for is the job's set-up.

Lines are verbatim from the public threads cited, or follow the format string of the source file named.
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract import launcher, nccl
from firstfault.extract.base import LineExtractor
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers

ALL: tuple[LineExtractor, ...] = (*nccl.EXTRACTORS, *helpers.APPLICATION)
TB = helpers.TB


def _app(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def _kinds(lines: list[str]) -> list[str]:
    return [d.kind for d in helpers.scan(ALL, lines, "application")]


# ------------------------------------------------------------------ cancelled

# vllm-project/vllm#29085 (as PR #29156 quotes it): the shared-memory queue's read given up at shutdown
CANCELLED = [
    TB,
    '  File "/usr/local/lib/python3.12/dist-packages/vllm/distributed/device_communicators/shm_broadcast.py", '
    "line 464, in acquire_read",
    '    raise RuntimeError("cancelled")',
    "RuntimeError: cancelled",
]


def test_a_message_that_says_only_cancelled_decides_nothing() -> None:
    assert _kinds(CANCELLED) == []
    assert _kinds(["RuntimeError: cancelled"]) == []  # the lone line too
    assert _kinds(["RuntimeError: Operation was cancelled."]) == []


def test_near_miss_a_message_that_says_what_about_a_cancellation_is_the_exception() -> None:
    # the words around the word decide: the workload's own error
    assert _kinds([TB, '  File "/srv/orders.py", line 9, in check', "ValueError: cancelled orders need a reason"]
                  ) == ["app.exception"]


def test_a_run_whose_only_error_is_a_cancelled_read_is_unknown(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(CANCELLED)})))
    assert v.attributed_domain == "unknown" and v.root_cause is None


# ------------------------------------------------------------------ oneCCL

def test_oneccls_exception_is_the_collective_librarys_failure() -> None:
    # vllm-project/vllm#10109 (its title)
    assert _kinds(["RuntimeError: oneCCL: exec.cpp:122 start_workers: EXCEPTION: failed to start worker # 0"]
                  ) == ["nccl.error"]


def test_near_miss_the_bindings_missing_are_the_workloads_own() -> None:
    kinds = _kinds([TB, '  File "train.py", line 3, in <module>', "    import oneccl_bindings_for_pytorch",
                    "ModuleNotFoundError: No module named 'oneccl_bindings_for_pytorch'"])
    assert "nccl.error" not in kinds and kinds


def test_a_run_whose_only_error_is_oneccls_exception_is_unknown(make_bundle: BundleMaker) -> None:
    lines = ["RuntimeError: oneCCL: exec.cpp:122 start_workers: EXCEPTION: failed to start worker # 0"]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(lines)})))
    assert v.root_cause is None and "nccl.error" in [s.category for s in v.symptoms]


# ------------------------------------------------------------------ the C++ runtime's own abort

@pytest.mark.parametrize("line", [
    "pure virtual method called",  # libstdc++ libsupc++/pure.cc
    "terminate called without an active exception",  # libstdc++ libsupc++/vterminate.cc
    "terminate called recursively",  # the same file
    "libc++abi: Pure virtual function called!",  # libc++abi src/cxa_virtual.cpp, after its tag
])
def test_the_cxx_runtime_aborting_with_no_exception_is_the_processs_own_abort(line: str) -> None:
    drafts = helpers.scan(ALL, [line], "application")
    assert [(d.kind, d.fields.get("signal"), d.fields.get("by")) for d in drafts] == [
        ("process.signal", "SIGABRT", "self")]


@pytest.mark.parametrize("line", [
    # prose and titles that quote the words are not the runtime's line
    "Why do I get 'pure virtual method called' at exit?",
    "terminate called without an active exception when the trainer exits (issue #123)",
])
def test_near_miss_words_quoted_in_prose_are_no_abort(line: str) -> None:
    assert "process.signal" not in _kinds([line])


def test_the_abort_after_a_thrown_exception_is_that_exceptions_consequence() -> None:
    # an exception thrown first: the abort is std::terminate's reaction to it, not a crash of its own
    drafts = helpers.scan(ALL, ["terminate called after throwing an instance of 'std::runtime_error'",
                                "  what():  bad config", "terminate called recursively"], "application")
    assert [(d.kind, d.fields.get("by")) for d in drafts] == [("app.exception", None), ("process.signal", "runtime")]


def test_a_teardown_abort_is_an_app_crash(make_bundle: BundleMaker) -> None:
    # NVIDIA/Megatron-LM#1874's shape: the run's warnings at exit, the runtime's abort, torchrun's record of -6
    lines = [
        "[rank0]:[W1019 08:16:25.280921748 observer.cpp:116] Warning: Leaked callback handle: 1 (function operator())",
        "pure virtual method called",
        "terminate called without an active exception",
        "E1019 08:21:39.599000 3036 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: -6) "
        "local_rank: 0 (pid: 3042) of binary: /usr/bin/python",
    ]
    workload = copy.deepcopy(WORKLOAD)
    workload["workload"]["window"] = {"start": "2026-10-19T08:00:00Z", "end": "2026-10-19T09:00:00Z"}
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(lines)}, workload)))
    assert v.root_cause is not None and v.root_cause.category == "app.crash"


# ------------------------------------------------------------------ glibc's heap checks

@pytest.mark.parametrize("line", [
    "free(): invalid pointer",  # yxlijun/Pelee.Pytorch#20 (https://github.com/yxlijun/Pelee.Pytorch/issues/20)
    "corrupted size vs. prev_size",  # ultralytics/yolov3#911 (https://github.com/ultralytics/yolov3/issues/911)
    "malloc(): unsorted double linked list corrupted",  # datalab-to/marker#824 (https://github.com/datalab-to/marker/issues/824)
    "double free or corruption (!prev)",  # facebookresearch/Detic#99 (https://github.com/facebookresearch/Detic/issues/99)
    # facebookresearch/Detectron#419 (https://github.com/facebookresearch/Detectron/issues/419), glibc 2.23's frame
    "*** Error in `python': free(): corrupted unsorted chunks: 0x00007f3e9009cdd0 ***",
    # format: glibc before 2.18 (malloc/malloc.c malloc_printerr, `*** glibc detected *** %s: %s: 0x%s ***`)
    "*** glibc detected *** python: double free or corruption (fasttop): 0x0000000001c7e010 ***",
    # apache/mxnet#16326 (https://github.com/apache/mxnet/issues/16326), behind mpirun's rank prefix
    "[1,4]<stderr>:free(): corrupted unsorted chunks",
    # glibc's stack canary (Buzztrax/buzztrax#149, https://github.com/Buzztrax/buzztrax/issues/149; before glibc 2.30
    # with the program's name: bahlolab/superSTR#21, https://github.com/bahlolab/superSTR/issues/21)
    "*** stack smashing detected ***: terminated",
    "*** stack smashing detected ***: <unknown> terminated",
    # format: glibc debug/fortify_fail.c (a _FORTIFY_SOURCE check)
    "*** buffer overflow detected ***: terminated",
])
def test_glibcs_heap_check_is_the_processs_own_abort(line: str) -> None:
    drafts = helpers.scan(ALL, [line], "application")
    assert [(d.kind, d.fields.get("signal"), d.fields.get("by")) for d in drafts] == [
        ("process.signal", "SIGABRT", "self")]


@pytest.mark.parametrize("line", [
    # MIC-DKFZ/nnUNet#2523's title (https://github.com/MIC-DKFZ/nnUNet/issues/2523): the words quoted in prose
    "when i training... use my dataset ->free(): corrupted unsorted chunks",
    # the words with more after them (synthetic)
    "free(): invalid pointer passed by the loader, see the docs",
    # another program's function of the same shape (synthetic)
    "my_free(): invalid pointer",
    # a log's own record that quotes them (synthetic)
    "ERROR: worker 3 reported: double free or corruption (out)",
    # colesbury/nogil#43's title (https://github.com/colesbury/nogil/issues/43)
    "Error: Stack smashing detected.",
])
def test_near_miss_heap_words_not_glibcs_line_are_no_abort(line: str) -> None:
    assert "process.signal" not in _kinds([line])


def test_a_stack_smash_with_sruns_report_is_an_app_crash(make_bundle: BundleMaker) -> None:
    # bahlolab/superSTR#21's two lines (its node made node-01)
    lines = ["*** stack smashing detected ***: <unknown> terminated",
             "srun: error: node-01: task 0: Aborted (core dumped)"]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(lines)})))
    assert v.root_cause is not None and v.root_cause.category == "app.crash"


def test_a_heap_abort_with_open_mpis_signal_report_is_an_app_crash(make_bundle: BundleMaker) -> None:
    # apache/mxnet#16326's shape (its host made node-01): glibc's line, then Open MPI's handler in the process
    lines = ["free(): corrupted unsorted chunks",
             "[node-01:84840] *** Process received signal ***",
             "[node-01:84840] Signal: Aborted (6)",
             "[node-01:84840] Signal code:  (-6)"]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-4.log": _app(lines)})))
    assert v.attributed_domain == "software"
    assert v.root_cause is not None and v.root_cause.category == "app.crash"


# ------------------------------------------------------------------ Triton's model repository

# triton-inference-server/server#3026 (the repository manager's record)
PLATFORM = ("E0618 07:08:13.962236 8390 model_repository_manager.cc:1916] Poll failed for model directory 'rul': "
            "unexpected platform type tensorflow_savedmodel for rul")


def test_a_model_whose_platform_the_server_lacks_is_the_jobs_set_up() -> None:
    drafts = helpers.scan(ALL, [PLATFORM], "application")
    assert [(d.kind, d.fields.get("setup")) for d in drafts] == [("app.exception", True)]
    # triton-inference-server/server#2901 (20.x: the words alone after the record's header)
    line = ("E0516 06:19:37.834718 12806 model_repository_manager.cc:1682] unexpected platform type caffe2_netdef for "
            "resnet50_netdef")
    assert [d.kind for d in helpers.scan(ALL, [line], "application")] == ["app.exception"]


def test_near_miss_a_title_that_quotes_the_words_is_not_read() -> None:
    # triton-inference-server/server#2901's title
    assert _kinds(["unexpected platform type caffe2_netdef for Triton 2.7.0 ?"]) == []


# ------------------------------------------------------------------ a node monitor's record of a memory kill

def _npd_event(message: str) -> str:
    # node-problem-detector's kernel monitor turns the kernel's `Killed process` line into a Node event of reason
    # OOMKilling whose message is that line (kubernetes/node-problem-detector config/kernel-monitor.json); the
    # event as Cloud Logging exports it, the keys in its order, the message escaped as JSON escapes it
    return "\n".join([
        "{",
        '  "jsonPayload": {',
        '    "involvedObject": {"kind": "Node", "name": "gke-pool-1-a"},',
        '    "source": {"component": "kernel-monitor", "host": "gke-pool-1-a"},',
        '    "kind": "Event",',
        '    "type": "Warning",',
        '    "reason": "OOMKilling",',
        '    "apiVersion": "v1",',
        f'    "message": "{message}"',
        "  },",
        '  "severity": "WARNING"',
        "}",
    ]) + "\n"


def test_a_monitors_oom_record_that_names_a_fuse_daemon_is_the_mounts_loss(make_bundle: BundleMaker) -> None:
    # the kernel's line from kahing/goofys#56 as the event's message
    msg = ("Memory cgroup out of memory: Kill process 3155 (goofys) score 202 or sacrifice child\\nKilled process "
           "3155 (goofys) total-vm:657140kB, anon-rss:231128kB, file-rss:0kB")
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _npd_event(msg)})))
    assert v.root_cause is not None and v.root_cause.category == "storage.filesystem.daemon_killed", v.candidates


def test_near_miss_the_same_record_naming_the_workloads_process_is_its_oom(make_bundle: BundleMaker) -> None:
    # kubernetes-sigs/aws-efs-csi-driver#1218's kernel line for a python3 process
    msg = ("Memory cgroup out of memory: Killed process 137879 (python3) total-vm:154460kB, anon-rss:25192kB, "
           "file-rss:8968kB, shmem-rss:0kB, UID:0 pgtables:340kB oom_score_adj:-997")
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _npd_event(msg)})))
    assert v.root_cause is not None and v.root_cause.category == "host.oom"
    assert len(v.evidence) == 1  # one kill: the record's reason and its message are the same event


# ------------------------------------------------------------------ an MPI call's own arguments

@pytest.mark.parametrize(("line", "cls"), [
    # hypre-space/hypre#535 (Cray MPICH's header)
    ("MPICH ERROR [Rank 1] [job id 623df1ab-7ae6-4ae9-b5b5-d73add697475] [Fri Nov 19 22:34:34 2021] [x1000c6s7b0n1] - "
     "Abort(269089030) (rank 1 in comm 0): Fatal error in PMPI_Irecv: Invalid rank, error stack:", "MPI_ERR_RANK"),
    # wi4mpi/wi4mpi#63 (MPICH's own header)
    ("Abort(739891974) on node 8 (rank 8 in comm 0): Fatal error in PMPI_Sendrecv: Invalid rank, error stack:",
     "MPI_ERR_RANK"),
    # pmodels/mpich#961
    ("Fatal error in MPI_Comm_size: Invalid communicator, error stack:", "MPI_ERR_COMM"),
])
def test_an_mpi_error_in_the_calls_arguments_is_the_programs_exception(line: str, cls: str) -> None:
    drafts = helpers.scan((*ALL, *launcher.EXTRACTORS), [line], "application")
    exc = [d for d in drafts if d.kind == "app.exception"]
    assert [d.fields["exc_type"] for d in exc] == [cls]
    assert "process.signal" in [d.kind for d in drafts]  # the runtime's abort of the rank, as before


@pytest.mark.parametrize("line", [
    # pmodels/mpich#556: the library's own failure names no argument
    "Fatal error in MPI_Send: Internal MPI error!, error stack:",
    # pmodels/mpich#831
    "Fatal error in MPI_Wait: Other MPI error, error stack:",
])
def test_near_miss_the_librarys_own_error_classes_are_no_exception(line: str) -> None:
    drafts = helpers.scan((*ALL, *launcher.EXTRACTORS), [line], "application")
    assert "app.exception" not in [d.kind for d in drafts] and "process.signal" in [d.kind for d in drafts]


def test_a_run_that_ends_on_an_argument_error_of_its_mpi_call_is_software(make_bundle: BundleMaker) -> None:
    # hypre-space/hypre#535, the error stack as posted
    lines = ["MPICH ERROR [Rank 1] [job id 623df1ab-7ae6-4ae9-b5b5-d73add697475] [Fri Nov 19 22:34:34 2021] "
             "[x1000c6s7b0n1] - Abort(269089030) (rank 1 in comm 0): Fatal error in PMPI_Irecv: Invalid rank, error "
             "stack:",
             "PMPI_Irecv(166): MPI_Irecv(buf=0x8aa0e40, count=56, MPI_BYTE, src=14588, tag=1002, MPI_COMM_WORLD, "
             "request=0x3ecd900) failed",
             "PMPI_Irecv(99).: Invalid rank has value 14588 but must be nonnegative and less than 5"]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(lines)})))
    assert v.root_cause is not None and v.root_cause.category == "app.exception"
    assert "MPI_ERR_RANK" in v.root_cause.summary


def test_cray_mpichs_own_collective_routines_are_read_as_the_call() -> None:
    # Cray MPICH names its collective algorithm where MPICH names the MPI call (the words of its error stack's first
    # line, src/mpi/errhan: `Fatal error in %s: %s, error stack:`, with an MPIR_ routine)
    read = launcher.mpi_fatal("Fatal error in MPIR_CRAY_Allreduce_DPM: Message truncated, error stack:")
    assert read is not None and read.call == "MPIR_CRAY_Allreduce_DPM" and read.mpi_class == "MPI_ERR_TRUNCATE"
    assert read.argument


def test_an_argument_class_inside_mpi_init_is_the_launchs_set_up() -> None:
    # flux-framework/flux-core#3592 (its title: MVAPICH2 started without the PMI_process_mapping it reads): MPI_Init
    # has no tag of the program's
    drafts = helpers.scan((*ALL, *launcher.EXTRACTORS), ["MPI_Abort: Fatal error in MPI_Init: Invalid tag"],
                          "application")
    assert [(d.fields["exc_type"], d.fields.get("setup")) for d in drafts if d.kind == "app.exception"] == [
        ("MPI_ERR_TAG", True)]


# ------------------------------------------------------------------ EC2's Spot interruption notice, as served

# the instance metadata's `spot/instance-action` document, as AWS's user guide gives it
# (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html)
IMDS = '{"action": "terminate", "time": "2017-09-18T08:22:00Z"}'


@pytest.mark.parametrize("line", [
    IMDS,
    # the same document logged by a poller inside its own JSON record (the quotes escaped)
    '{"level":"warn","message":"instance-action: {\\"action\\":\\"stop\\",\\"time\\":\\"2017-09-18T08:22:00Z\\"}"}',
])
def test_the_instance_action_document_is_the_nodes_preemption(line: str, make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-2.log": _app([line])})))
    assert v.root_cause is not None and v.root_cause.category == "scheduler.preempted"
    assert v.root_cause.nodes == ["node-02"]


@pytest.mark.parametrize("line", [
    # an `action` without the document's time: any program's word (an orchestrator's plan, an audit record)
    '{"action": "terminate", "instance": "i-0abc", "reason": "scale-in"}',
    '{"user": "alice", "action": "stop", "time": "2017-09-18T08:22:00Z"}',
])
def test_near_miss_an_action_key_alone_names_no_preemption(line: str, make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-2.log": _app([line])})))
    assert v.root_cause is None or v.root_cause.category != "scheduler.preempted"


# t-sakashita/rokko#544: Open MPI's fatal error handler on a send to a rank the communicator does not have
ROKKO = [
    "[sakashitatatsuyanoMacBook-puro:61179] *** An error occurred in MPI_Send",
    "[sakashitatatsuyanoMacBook-puro:61179] *** reported by process [2336030721,0]",
    "[sakashitatatsuyanoMacBook-puro:61179] *** on communicator MPI_COMM_WORLD",
    "[sakashitatatsuyanoMacBook-puro:61179] *** MPI_ERR_RANK: invalid rank",
    "[sakashitatatsuyanoMacBook-puro:61179] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
    "[sakashitatatsuyanoMacBook-puro:61179] ***    and potentially your MPI job)",
]


def test_open_mpis_handler_on_an_argument_class_is_the_programs_exception() -> None:
    drafts = helpers.scan((*ALL, *launcher.EXTRACTORS), ROKKO, "application")
    exc = [d for d in drafts if d.kind == "app.exception"]
    assert [(d.fields["exc_type"], d.fields.get("mpi_call"), d.fields.get("setup")) for d in exc] == [
        ("MPI_ERR_RANK", "MPI_Send", None)]


def test_near_miss_open_mpis_handler_on_the_librarys_own_class_is_no_exception() -> None:
    # the same handler's record of a class that names no argument (Open MPI's words for MPI_ERR_OTHER)
    lines = [*ROKKO[:3], "[n1:61179] *** MPI_ERR_OTHER: known error not in list", *ROKKO[4:]]
    drafts = helpers.scan((*ALL, *launcher.EXTRACTORS), lines, "application")
    assert "app.exception" not in [d.kind for d in drafts]


def test_a_run_that_ends_in_open_mpis_handler_on_an_argument_class_is_software(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(ROKKO)})))
    assert v.root_cause is not None and v.root_cause.category == "app.exception"
