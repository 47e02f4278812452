"""Slurm's node plugins and slurmstepd's own set-up errors (catalog/slurm.yaml `plugin_functions`, the cgroup and
job-container `messages`, `spool_files`) and a site's cli_filter refusal, read by extract/slurmerr.py; and an errno of a
pseudo file system's path, which no storage reader takes (catalog/exceptions.yaml `pseudo_filesystems`).

Lines are Slurm's format strings filled in (SchedMD/slurm, the file cited beside each) or copied from the public
threads cited; each reading has a near miss beside it.
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog.tables import SlurmMessage, pseudo_fs_table, slurm_tables
from firstfault.extract.codes import pseudo_fs
from firstfault.extract.slurmerr import SlurmErrorExtractor
from firstfault.model import Event, Verdict
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract.helpers import events, scan

# Azure/cyclecloud-slurm#388 (https://github.com/Azure/cyclecloud-slurm/issues/388), the reporter's five lines: the
# cpuset cgroup of a dynamic node without CPUs refuses the batch step's pid (ENOSPC), verbatim but the indentation
CPUSET = [
    "slurmstepd: error: common_file_write_uints: write value '39981' to "
    "'/sys/fs/cgroup/cpuset/slurm/uid_20006/job_6457/step_batch/cgroup.procs' failed: No space left on device",
    "slurmstepd: error: unable to add pids to '/sys/fs/cgroup/cpuset/slurm/uid_20006/job_6457/step_batch'",
    "slurmstepd: error: task_g_set_affinity: File exists",
    "slurmstepd: error: _exec_wait_child_wait_for_parent: failed: Interrupted system call",
    "slurmstepd: error: job_manager: exiting abnormally: Slurmd could not execve job",
]
# ArjunaCluster/ArjunaUsers#123 (https://github.com/ArjunaCluster/ArjunaUsers/issues/123): job_container/tmpfs
JOIN = ["slurmstepd: error: container_p_join: open failed /scratch/119383/.active: No such file or directory",
        "slurmstepd: error: container_g_join failed: 119383"]
# galaxyproject/ansible-slurm#37 (https://github.com/galaxyproject/ansible-slurm/issues/37): SlurmdSpoolDir unset
SPOOL = "slurmstepd-node-1: error: execve(): /var/lib/slurm/slurmctld/job00218/slurm_script: Permission denied"
# ComputationalRadiationPhysics/picongpu#5458 (https://github.com/ComputationalRadiationPhysics/picongpu/pull/5458)
CLI_FILTER = ["srun: lua: Non-exclusive jobs on Alpha Centauri are allowed to request at most 193250 MB memory per "
              "requested GPU to allow a fair sharing of resources within a single node. ",
              "srun: error: cli_filter plugin terminated with error"]


def ours(lines: list[str], source: str = "application") -> list[Event]:
    got = events(lines, source, file="slurm-77.out" if source == "application" else "nodes/n1/syslog",
                 node=None if source == "application" else "n1")
    return [e for e in got if e.kind in ("sched.error", "storage.error")
            or (e.kind == "app.exception" and e.fields.get("setup"))]


def sides(lines: list[str], source: str = "application") -> list[tuple[str, object, object]]:
    return [(e.kind, e.fields.get("side"), e.fields.get("weak")) for e in ours(lines, source)]


# --------------------------------------------------------------------------
# plugin_functions: every row, in every form Slurm prints it
# --------------------------------------------------------------------------

FUNCTIONS = slurm_tables().plugin_functions


@pytest.mark.parametrize("row", FUNCTIONS, ids=[f.prefix for f in FUNCTIONS])
@pytest.mark.parametrize("form", [
    "slurmstepd: error: {m}",  # the step's stderr, srun's output (src/common/log.c: argv0 `slurmstepd`)
    "slurmd[4242]: error: {m}",  # syslog
    "[2024-01-01T10:00:00.000] [6457.batch] error: {m}",  # SlurmdLogFile, the step's tag
    "slurmstepd: fatal: {m}",
])
def test_every_plugin_function_in_every_form(row: object, form: str) -> None:
    assert hasattr(row, "prefix")
    line = form.format(m=f"{row.prefix}step_create: unable to write '/var/spool/x': Operation not permitted")
    got = sides([line])
    assert got == [("sched.error", "node", True if row.weak else None)]  # type: ignore[attr-defined]
    assert row.prefix in SlurmErrorExtractor().literals  # type: ignore[attr-defined]


@pytest.mark.parametrize("line", [
    # the prefix inside a longer identifier (a site's own function, the user's program): not the plugin's
    "slurmstepd: error: my_container_p_join: open failed /scratch/1/.active: No such file or directory",
    "slurmstepd: error: mytask_g_set_affinity: File exists",
    # the function named later in the message, not as its printer
    "slurmstepd: error: job_manager: the container_p_join step said so",
    # a plugin's function in a line without an error level (a debug or a verbose line)
    "slurmstepd: container_p_join: joined /scratch/1/.active",
    # the word as prose in a job's own output
    "container_p_join: open failed is what the admins reported",
])
def test_near_miss_a_plugin_function_not_at_the_messages_head(line: str) -> None:
    assert [s for s in sides([line]) if s[0] == "sched.error"] == []


def test_the_function_rows_are_the_plugin_types_of_the_node() -> None:
    prefixes = {f.prefix for f in FUNCTIONS}
    # the job container, cgroups, tasks, process tracking, prolog/epilog, the interconnect: each its _p_ and _g_
    for kind in ("container", "namespace", "cgroup", "task", "proctrack", "prep", "switch"):
        assert {f"{kind}_p_", f"{kind}_g_"} <= prefixes
    # mpi (PMIx) and accounting decide nothing (the table's comment block): no row
    assert not any(p.startswith(("mpi_", "pmixp_", "acct_gather", "jobacct_")) for p in prefixes)


# --------------------------------------------------------------------------
# the cgroup plugins' and slurmstepd's own messages, the job container
# --------------------------------------------------------------------------

MESSAGES = slurm_tables().messages


@pytest.mark.parametrize("form", ["slurmstepd: error: {m}", "slurmstepd: fatal: {m}",
                                  "[2024-01-01T10:00:00.000] [6457.0] error: {m}"])
@pytest.mark.parametrize("row", MESSAGES, ids=[m.text for m in MESSAGES])
def test_every_message_row_in_slurmstepds_forms(row: SlurmMessage, form: str) -> None:
    # each placeholder filled as Slurm prints it, then a value after the row's words (a path, a number)
    text = row.text.replace("{id}", "StepId=4242.0").replace("{host}", "node01").replace("{any}", "x")
    got = scan(SlurmErrorExtractor(), [form.format(m=f"{text}x/y 2")], "application")
    want = {"node": [("sched.error", "node", True if row.weak else None)], "job": [("app.exception", None, None)],
            "none": []}[row.side]
    assert [(d.kind, d.fields.get("side"), d.fields.get("weak")) for d in got] == want


def test_the_cpuset_without_cpus_is_the_nodes_slurm_not_the_storage() -> None:
    got = ours(CPUSET)
    assert [(e.evidence.line, e.kind, e.fields.get("side")) for e in got if e.kind != "app.exception"] == [
        (1, "sched.error", "node"), (2, "sched.error", "node"), (3, "sched.error", "node")]
    # line 4 is slurmstepd's own plumbing after it (no row), line 5 ESLURMD_EXECVE_FAILED's text (the job's, weak)
    assert not any(e.kind == "storage.error" for e in got)


def test_the_job_container_that_could_not_join() -> None:
    assert sides(JOIN) == [("sched.error", "node", None), ("sched.error", "node", None)]


def test_near_miss_a_storage_errno_of_a_data_path_in_slurmstepds_line_is_still_the_storages() -> None:
    # the same words about the job's output file on a full file system: the storage readers' (Slurm's
    # `Could not open output file` row leaves a full file system to them)
    got = ours(["slurmstepd: error: Could not open output file /scratch/u/slurm-77.out: No space left on device"])
    assert [e.kind for e in got] == ["storage.error"]


# --------------------------------------------------------------------------
# the batch script in slurmd's spool directory; the program the job gave
# --------------------------------------------------------------------------

def test_the_batch_script_the_spool_may_not_run_is_the_nodes() -> None:
    # (`slurmstepd-node-1: `: slurmstepd's tag with its node, which the prefix layer takes for a host's)
    got = [e for e in ours([SPOOL]) if e.kind == "sched.error"]
    assert [(e.fields["side"], e.fields["name"], e.fields["program"]) for e in got] == [
        ("node", "spool_file", "slurmstepd")]


@pytest.mark.parametrize("line", [
    # the interpreter the script's #! names is not there (or DOS line ends): the job's script
    "slurmstepd: error: execve(): /var/spool/slurmd/job00218/slurm_script: No such file or directory",
    # the program the job gave srun
    "slurmstepd: error: execve(): ./a.out: Permission denied",
    "slurmstepd-node-1: error: execve(): python3: No such file or directory",
])
def test_near_miss_the_jobs_own_program_or_script_is_its_set_up(line: str) -> None:
    got = sides([line])
    assert ("sched.error", "node", None) not in got
    assert any(k == "app.exception" for k, _, _ in got)


def test_the_spool_file_row_names_slurms_own_file() -> None:
    assert [(f.file, f.errnos) for f in slurm_tables().spool_files] == [("slurm_script", ("EACCES", "EPERM"))]


# --------------------------------------------------------------------------
# a site's cli_filter refusing the job's options
# --------------------------------------------------------------------------

@pytest.mark.parametrize("program", ["srun", "sbatch", "salloc"])
def test_cli_filters_refusal_is_the_jobs_request(program: str) -> None:
    got = ours([f"{program}: error: cli_filter plugin terminated with error"])
    assert [(e.kind, e.fields.get("setup")) for e in got] == [("app.exception", True)]


def test_near_miss_the_sites_broken_cli_filter_script_is_the_sites() -> None:
    # src/plugins/cli_filter/lua/cli_filter_lua.c: the Lua error in the plugin's voice
    got = sides(["srun: error: cli_filter_p_pre_submit/lua: /etc/slurm/cli_filter.lua: "
                 "/etc/slurm/cli_filter.lua:12: attempt to index a nil value"])
    assert got == [("sched.error", "node", True)]
    # and the refusal's words in prose, no error level: nothing
    assert ours(["the cli_filter plugin terminated with error when the template asked for 200 GB"]) == []


# --------------------------------------------------------------------------
# pseudo file systems: no storage errno
# --------------------------------------------------------------------------

ROWS = pseudo_fs_table()


@pytest.mark.parametrize("row", ROWS, ids=[r.prefix for r in ROWS])
def test_every_pseudo_fs_row(row: object) -> None:
    prefix, fs = row.prefix, row.fs  # type: ignore[attr-defined]
    assert pseudo_fs(prefix + "a/b") == fs
    assert pseudo_fs(prefix.rstrip("/")) == fs  # the mount point itself
    # near miss: a directory whose name only begins like it (`/procs/`, `/system/`), and a relative path
    assert pseudo_fs(prefix.rstrip("/") + "x/a") != fs
    assert pseudo_fs(prefix.lstrip("/") + "a") is None


def test_the_longest_prefix_decides_and_shm_is_no_pseudo_fs() -> None:
    assert pseudo_fs("/sys/fs/cgroup/cpuset/slurm/cgroup.procs") == "cgroup"
    assert pseudo_fs("/sys/class/net/ib0/mtu") == "sysfs"
    assert pseudo_fs("/dev/shm/torch_1_2") is None  # the node's shared memory (codes.is_shm)
    assert pseudo_fs("/dev/sdb") is None  # a device: a block device's errno is its disk's
    assert pseudo_fs("/data/ckpt.pt") is None


# Python's OSError on a pseudo file system's path, not Slurm's: the kernel object's errno (kernel/cgroup/cpuset.c
# cpuset_can_attach's -ENOSPC; a PCI device's sysfs attribute's EIO), no file system's. The traceback is ours.
def _oserror(msg: str) -> list[str]:
    return ["Traceback (most recent call last):", '  File "/opt/pin.py", line 4, in <module>',
            "    f.write(str(os.getpid()))", msg]


@pytest.mark.parametrize("msg", [
    "OSError: [Errno 28] No space left on device: '/sys/fs/cgroup/cpuset/job/cgroup.procs'",
    "OSError: [Errno 5] Input/output error: '/sys/bus/pci/devices/0000:3b:00.0/reset'",
    "OSError: [Errno 28] No space left on device: '/proc/sys/fs/inotify/max_user_watches'",
])
def test_an_errno_of_a_pseudo_fs_path_is_no_storage(msg: str) -> None:
    assert [e for e in events(_oserror(msg)) if e.kind == "storage.error"] == []
    # and a C program's own line ending in the strerror (codes.storage_strerror_rx)
    line = "echo: write error on '/sys/fs/cgroup/cpuset/job/cgroup.procs': No space left on device"
    assert [e for e in events([line]) if e.kind == "storage.error"] == []


@pytest.mark.parametrize("msg", [
    "OSError: [Errno 28] No space left on device: '/scratch/run/ckpt/model.pt'",
    "OSError: [Errno 28] No space left on device: '/system/ckpt/model.pt'",  # only begins like /sys/
])
def test_near_miss_the_same_errno_of_a_data_path_is_the_storages(msg: str) -> None:
    assert [e.kind for e in events(_oserror(msg)) if e.kind == "storage.error"] == ["storage.error"]


# --------------------------------------------------------------------------
# the engine
# --------------------------------------------------------------------------

def _analyze(make_bundle: BundleMaker, lines: list[str]) -> Verdict:
    wl = copy.deepcopy(WORKLOAD)
    wl["sources"] = [{"kind": "application", "path": "slurm-77.out"}]
    return Analyzer().analyze_path(str(make_bundle({"slurm-77.out": "".join(s + "\n" for s in lines)}, wl)))


def test_engine_the_cpuset_is_the_nodes_scheduler(make_bundle: BundleMaker) -> None:
    rc = _analyze(make_bundle, CPUSET).root_cause
    assert rc is not None and rc.category == "node.scheduler"


def test_engine_the_spool_is_the_nodes_scheduler(make_bundle: BundleMaker) -> None:
    rc = _analyze(make_bundle, [SPOOL]).root_cause
    assert rc is not None and rc.category == "node.scheduler"


def test_engine_near_miss_cli_filters_refusal_is_the_jobs_set_up(make_bundle: BundleMaker) -> None:
    rc = _analyze(make_bundle, CLI_FILTER).root_cause
    assert rc is not None and rc.category == "app.exception.setup"
