"""Mechanisms batches b218, b219, b222 and b223 showed missing (GBDT on Dask/Spark/Ray/YARN, protein-structure models,
NeMo 2, HTCondor and the grid), each tested on lines of other threads or filled in from the printing program's source,
with the look-alikes that must keep their old reading.

Provenance: a line `as posted` is copied from the public thread named beside it; a line `filled in` is ours, written
from the format string cited beside it.
"""

from __future__ import annotations

import pytest

from firstfault.extract import traceback as tb
from firstfault.extract.endstate import line_reading, policy_expression
from firstfault.extract.prefix import PrefixLayer
from firstfault.model import Event
from tests.extract import helpers
from tests.extract.test_endstate import causes


def feed(lines: list[str]) -> list[Event]:
    return helpers.events(lines)


def kinds(lines: list[str]) -> list[tuple[str, object, object]]:
    """(kind, exc_type, setup) of each event the lines give."""
    return [(e.kind, e.fields.get("exc_type"), e.fields.get("setup")) for e in feed(lines)]


# ---------------------------------------------------------------- an application master's word on YARN's memory kill
# dmlc-core tracker/yarn ApplicationMaster.onContainersCompleted (and Rabit's older copy): `[DMLC] Task <id> killed
# because of exceeding allocated physical memory` for ContainerExitStatus KILLED_EXCEEDED_PMEM, `... virtual memory`
# for KILLED_EXCEEDED_VMEM; any other status `[DMLC] Task <id> exited with status <n>`.


@pytest.mark.parametrize(
    "line",
    [
        # filled in: dmlc-core's virtual twin
        "16/02/01 11:02:03 INFO dmlc.ApplicationMaster: [DMLC] Task 3 killed because of exceeding allocated virtual "
        "memory",
        # filled in: Rabit's older application master
        "INFO rabit.ApplicationMaster: [Rabit] Task 1 killed because of exceeding allocated physical memory",
    ],
)
def test_an_application_masters_word_on_yarns_memory_kill_is_the_memory_limit(line: str) -> None:
    assert causes([line]) == [("host.oom_kill", "yarn")]


@pytest.mark.parametrize(
    "line",
    [
        # filled in: the application master's other exits (a task's own failure)
        "INFO dmlc.ApplicationMaster: [DMLC] Task 0 exited with status 1",
        "INFO dmlc.ApplicationMaster: [DMLC] Task 0 killed by the user",
    ],
)
def test_an_application_masters_other_exits_name_no_memory_kill(line: str) -> None:
    assert causes([line]) == []


# ---------------------------------------------------------------- Ray's tag for a file whose name holds no pid


def test_rays_tag_with_pid_none_is_peeled_and_its_name_keeps_the_process() -> None:
    # as posted: mars-project/mars#2816
    got = PrefixLayer().split("(RayMainPool pid=None, ip=172.16.210.21) mars.utils.gaierror: [Errno -2] Name or "
                              "service not known")
    assert (got.body[:19], got.host, got.proc, got.program) == ("mars.utils.gaierror", "172.16.210.21",
                                                                "RayMainPool", None)


@pytest.mark.parametrize(
    ("line", "proc"),
    [
        ("(RayTrainWorker pid=4331, ip=10.0.0.7) step 3", "4331"),  # the worker's pid stays the process
        ("(pid=Nonesuch) step 3", None),  # no tag: `None` is the whole value or none
    ],
)
def test_rays_other_tags_keep_their_reading(line: str, proc: str | None) -> None:
    assert PrefixLayer().split(line).proc == proc


# ---------------------------------------------------------------- the standard library's lower-case exception classes


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        # filled in: CPython Modules/socketmodule.c set_gaierror, glibc's EAI_NONAME words
        ("socket.gaierror: [Errno -2] Name or service not known", "gaierror"),
        # as posted: mars-project/mars#2816, Mars's subclass of the same name in its own module
        ("mars.utils.gaierror: [address=ray://ray-cluster-1647246620/0/3, pid=16013] [Errno -2] Name or service not "
         "known", "gaierror"),
        # filled in: Python 3.9's socket.timeout, Modules/_struct.c's struct.error, zlib's
        ("socket.timeout: timed out", "timeout"),
        ("struct.error: unpack requires a buffer of 4 bytes", "error"),
        ("zlib.error: Error -3 while decompressing data: invalid stored block lengths", "error"),
    ],
)
def test_a_lower_case_standard_library_class_is_an_exception_line(line: str, cls: str) -> None:
    assert [k for k in kinds([line]) if k[0] == "app.exception"] == [("app.exception", cls, None)]
    frame = '  File "/usr/lib/python3.9/socket.py", line 953, in getaddrinfo'
    assert ("app.exception", cls, None) in kinds(["Traceback (most recent call last):", frame, line])


@pytest.mark.parametrize(
    "line",
    [
        # a setting and a logger's record: a generic lower-case name only with its own module
        "config.timeout: 30",
        "request.timeout: 120 s",
        "app.error: could not reach the cache, retrying",
    ],
)
def test_a_generic_lower_case_name_outside_its_module_is_no_exception_line(line: str) -> None:
    assert tb.lone_exception(line) is None
    assert kinds([line]) == []


# ---------------------------------------------------------------- LightGBM's fatal record and its set-up checks


@pytest.mark.parametrize(
    "line",
    [
        # filled in: src/network/linkers_socket.cpp's checks, in LightGBM's fatal record and as its Python error
        "[LightGBM] [Fatal] Machine list file mlist.txt doesn't exist",
        "[LightGBM] [Fatal] Binding port 12400 failed",
        "lightgbm.basic.LightGBMError: Machine list file doesn't contain the local machine",
        # filled in: GPBoost, LightGBM's fork, under its own name
        "[GPBoost] [Fatal] Machine list file doesn't contain the local machine",
    ],
)
def test_lightgbms_machine_list_checks_are_the_jobs_set_up(line: str) -> None:
    assert [k[2] for k in kinds([line]) if k[0] == "app.exception"] == [True]


def test_lightgbms_other_fatal_record_is_the_workloads_exception() -> None:
    # filled in: include/LightGBM/utils/log.h CHECK_GT (`Check failed: (a) > (b) at %s, line %d .`)
    line = "[LightGBM] [Fatal] Check failed: (num_data) > (0) at /src/io/dataset.cpp, line 33 ."
    assert kinds([line]) == [("app.exception", tb.FATAL_LOG_CLASS, None)]


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # filled in: the logger's other levels
        ("[LightGBM] [Warning] Connecting to rank 1 failed, waiting for 200 milliseconds", None),
        ("[LightGBM] [Info] Trying to bind port 12400...", None),
        # as posted (microsoft/LightGBM#6197): a socket error once linked stays the errno table's, a peer's
        ("[LightGBM] [Fatal] Socket recv error, Connection reset by peer (code: 104)", "nccl.remote_error"),
    ],
)
def test_lightgbms_other_records_keep_their_reading(line: str, kind: str | None) -> None:
    assert [e.kind for e in feed([line])] == ([kind] if kind else [])


# ---------------------------------------------------------------- Lightning's checks of the job's Slurm options


@pytest.mark.parametrize(
    "line",
    [
        # filled in: lightning/fabric/plugins/environments/slurm.py validate_settings (both checks)
        "ValueError: You set `devices=4` in Lightning, but the number of tasks per node configured in SLURM "
        "`--ntasks-per-node=2` does not match. HINT: Set `devices=2`.",
        "ValueError: You set `num_nodes=2` in Lightning, but the number of nodes configured in SLURM `--nodes=1` does "
        "not match. HINT: Set `num_nodes=1`.",
        # filled in: _validate_srun_variables
        "RuntimeError: You set `--ntasks=8` in your SLURM bash script, but this variable is not supported. HINT: Use "
        "`--ntasks-per-node=8` instead.",
    ],
)
def test_lightnings_slurm_option_checks_are_the_jobs_set_up(line: str) -> None:
    assert [k[2] for k in kinds([line]) if k[0] == "app.exception"] == [True]


def test_a_program_saying_what_was_set_otherwise_is_the_workloads_exception() -> None:
    line = "ValueError: You set `lr=0.1` in your config, but the optimizer has no such parameter"
    assert [k[2] for k in kinds([line]) if k[0] == "app.exception"] == [None]


# ---------------------------------------------------------------- HTCondor: a policy's restart counts, the event log

# as posted: dmwm/CRABServer#5533, the CMS pool's SYSTEM_PERIODIC_REMOVE
REMOVED_5533 = ("Reason = \"The system macro SYSTEM_PERIODIC_REMOVE expression '( ( ( JobUniverse =!= 7 ) && ( "
                "JobUniverse =!= 12 ) && ( ( ( NumJobStarts > 9 ) =?= true ) || ( ( NumShadowStarts > 19 ) =?= true ) "
                ") ) ) || ( ( DiskUsage > 27000000 ) =?= true )' evaluated to TRUE\"")


def test_a_policy_that_counts_restarts_beside_one_resource_names_none() -> None:
    reading = policy_expression(REMOVED_5533)
    assert reading is not None and reading.reason is None
    assert causes([REMOVED_5533]) == []


def test_a_policy_on_one_resource_alone_still_names_it() -> None:
    # filled in: the same pool's disk clause alone (a policy of one resource)
    alone = ("Reason = \"The system macro SYSTEM_PERIODIC_REMOVE expression '( DiskUsage > 27000000 )' evaluated to "
             "TRUE\"")
    assert causes([alone]) == [("process.signal", "eviction")]


@pytest.mark.parametrize(
    "line",
    [
        # filled in: condor_event.cpp JobEvictedEvent in the text form (its title), the XML form (dmwm/WMCore#5673's
        # layout) and the JSON form
        "004 (8453753.000.000) 04/18 02:08:11 Job was evicted.",
        '    <a n="MyType"><s>JobEvictedEvent</s></a>',
        '    "MyType": "JobEvictedEvent",',
    ],
)
def test_an_htcondor_eviction_event_in_each_form_is_the_eviction(line: str) -> None:
    assert causes([line]) == [("process.signal", "eviction")]


def test_the_xml_form_carries_the_hold_code_as_the_ad_does() -> None:
    # filled in: the XML event log's 012 record, HoldReasonCode 34 (the job's memory)
    assert causes(['    <a n="HoldReasonCode"><i>34</i></a>']) == [("host.oom_kill", "htcondor")]


@pytest.mark.parametrize(
    "line",
    [
        # the log's other events say no more than their numbers; a job ad's own type is none
        '    <a n="MyType"><s>JobHeldEvent</s></a>',
        '    <a n="MyType"><s>JobTerminatedEvent</s></a>',
        'MyType = "Job"',
        '    <a n="Reason"><s>Job not found at execution machine</s></a>',
        "004 (8453753.000.000) 04/18 02:08:11 Job was evicted from the queue's view",  # no title: a phrase cut
    ],
)
def test_the_event_logs_other_records_name_no_eviction(line: str) -> None:
    assert causes([line]) == []


def test_the_xml_forms_value_is_unescaped() -> None:
    reading = line_reading('<a n="HoldReason"><s>Error from slot1_3@e327: Job has gone over memory limit of 2048 '
                           'megabytes. Peak usage: 2100 megabytes. &quot;x&quot;</s></a>')
    assert reading is not None and reading.reason == "memory_limit"


# ---------------------------------------------------------------- TensorFlow's BFC allocator failing for good


def test_the_bfc_allocators_failure_is_the_accelerators_oom() -> None:
    # filled in: tsl/framework/bfc_allocator.cc AllocateRawInternal (google-deepmind/alphafold#651 posted the line)
    line = ("2022-03-01 10:00:00.000000: W external/org_tensorflow/tensorflow/tsl/framework/bfc_allocator.cc:479] "
            "Allocator (GPU_0_bfc) ran out of memory trying to allocate 16.00GiB (rounded to 17179869184)requested by "
            "op ")
    assert [e.kind for e in feed([line])] == ["app.cuda_oom"]


@pytest.mark.parametrize(
    "line",
    [
        # filled in: the same allocator's retry warning (it tries again with less)
        "2022-03-01 10:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:275] Allocator (GPU_0_bfc) ran "
        "out of memory trying to allocate 2.18GiB with freed_by_count=0. The caller indicates that this is not a "
        "failure, but may mean that there could be performance gains if more memory were available.",
        # the host's allocator: no accelerator's memory
        "Allocator (cpu) ran out of memory trying to allocate 16.00GiB (rounded to 17179869184)requested by op Foo",
    ],
)
def test_the_bfc_allocators_warning_and_the_hosts_are_no_device_oom(line: str) -> None:
    assert [e.kind for e in feed([line]) if e.kind == "app.cuda_oom"] == []
