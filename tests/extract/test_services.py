"""The node's own services failing, in systemd's words about their units (extract/services.py, catalog/platform.yaml
`platform_programs` `units` and `descriptions`).

Lines are copied from public threads, cited beside each, or are systemd's format strings filled in (src/core/service.c
service_sigchld_event and unit_log_failure, src/core/job.c job_done's status messages); each reading has a near miss
beside it.
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog.tables import platform_program_table
from firstfault.extract.services import NodeServiceExtractor, read_unit_record
from firstfault.model import Event, Verdict
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers


def feed(lines: list[str], source: str = "syslog", node: str | None = "node-01") -> list[Event]:
    return helpers.events(lines, source, file=f"nodes/{node}/journal.log", node=node)


def failures(events: list[Event]) -> list[Event]:
    return [e for e in events if e.kind == "platform.error" and e.fields.get("unit") is not None]


# stackhpc/ansible-role-openhpc#157 (https://github.com/stackhpc/ansible-role-openhpc/issues/157): configless slurmd
# that cannot resolve its controller exits; systemd's two records of the unit
OPENHPC_157 = [
    "May 12 09:24:56 testohpc-compute-0 slurmd[31519]: slurmd: error: _fetch_child: failed to fetch remote configs",
    "May 12 09:24:56 testohpc-compute-0 systemd[1]: slurmd.service: Main process exited, code=exited, "
    "status=1/FAILURE",
    "May 12 09:24:56 testohpc-compute-0 systemd[1]: slurmd.service: Failed with result 'exit-code'.",
]
# BiBiServ/bibigrid#705 (https://github.com/BiBiServ/bibigrid/issues/705): the same unit's job result, by its
# description
BIBIGRID_705 = "Feb 02 09:52:07 bibigrid-worker systemd[1]: Failed to start Slurm node daemon."


def test_every_unit_and_description_names_one_program() -> None:
    units = [u for r in platform_program_table() for u in r.units]
    descs = [d for r in platform_program_table() for d in r.descriptions]
    assert len(units) == len(set(units)) and len(descs) == len(set(descs))
    # the parts whose rules read a unit's failure: node-scheduler, node-driver, storage-driver
    assert {r.part for r in platform_program_table() if r.units} <= {"scheduler", "driver", "storage_driver"}


def test_a_failed_unit_is_its_program_failing_once() -> None:
    got = failures(feed([*OPENHPC_157, BIBIGRID_705]))
    assert [(e.fields["program"], e.fields["part"], e.fields["unit"]) for e in got] == [("slurmd", "scheduler",
                                                                                         "slurmd")]
    assert got[0].fields["text"] == "Main process exited, code=exited, status=1/FAILURE"


@pytest.mark.parametrize("line,unit", [
    (BIBIGRID_705, "slurmd"),
    # systemd 250 and later name the unit before its description (src/core/job.c, StatusUnitFormat=combined)
    ("Mar 03 10:00:00 gpu-07 systemd[1]: Failed to start nvidia-persistenced.service - NVIDIA Persistence Daemon.",
     "nvidia-persistenced"),
    # the console's form (src/core/job.c job_print_done_status_message), the advice after it on the same line
    ("[FAILED] Failed to start Slurm node daemon. See 'systemctl status slurmd.service' for details.", "slurmd"),
    # a unit that needs munge, which did not start (src/core/job.c JOB_DEPENDENCY)
    ("Mar 03 10:00:00 gpu-07 systemd[1]: Dependency failed for Slurm node daemon.", "slurmd"),
    ("Mar 03 10:00:00 gpu-07 systemd[1]: munge.service: Start operation timed out. Terminating.", "munge"),
    # systemd before 236
    ("Mar 03 10:00:00 gpu-07 systemd[1]: Unit munge.service entered failed state.", "munge"),
    # `journalctl -u slurmd -o cat`: the record without systemd's tag
    ("slurmd.service: Failed with result 'core-dump'.", "slurmd"),
    # systemctl's word on the start it asked for (src/shared/bus-wait-for-jobs.c), as Ansible's systemd module relays it
    ("fatal: [compute-0]: FAILED! => {\"changed\": false, \"msg\": \"Unable to start service slurmd: Job for "
     "slurmd.service failed because the control process exited with error code.\"}", "slurmd"),
    # aws/aws-parallelcluster#6571 (https://github.com/aws/aws-parallelcluster/issues/6571): Chef's service resource
    # (chef lib/chef/resource.rb custom_exception_message)
    ("service[nvidia-fabricmanager] (aws-parallelcluster-platform::nvidia_config line 35) had an error: "
     "Mixlib::ShellOut::CommandTimeout: Command timed out after 900s:", "nvidia-fabricmanager"),
], ids=["description", "name-and-description", "console", "dependency", "start-timeout", "legacy", "bare", "systemctl",
        "chef"])
def test_the_grammars_failure_records(line: str, unit: str) -> None:
    assert helpers.holds_literal(NodeServiceExtractor(), line)
    read = read_unit_record(line)
    assert read is not None and read.failed and read.unit == unit


@pytest.mark.parametrize("line", [
    # a unit stopped: systemd's job result and the unit's end (src/core/job.c, src/core/unit.c)
    "Mar 03 10:00:00 gpu-07 systemd[1]: Stopped Slurm node daemon.",
    "Mar 03 10:00:00 gpu-07 systemd[1]: slurmd.service: Deactivated successfully.",
    "Mar 03 10:00:00 gpu-07 systemd[1]: slurmd.service: Main process exited, code=exited, status=0/SUCCESS",
    "Mar 03 10:00:00 gpu-07 systemd[1]: slurmd.service: Main process exited, code=killed, status=15/TERM",
    # a restart being scheduled is no failure of its own (the result before it is)
    "Mar 03 10:00:00 gpu-07 systemd[1]: slurmd.service: Scheduled restart job, restart counter is at 1.",
    # units the job does not use: the display manager's, snapd's
    "Mar 03 10:00:00 gpu-07 systemd[1]: gdm.service: Failed with result 'exit-code'.",
    "Mar 03 10:00:00 gpu-07 systemd[1]: snapd.service: Failed with result 'exit-code'.",
    "Mar 03 10:00:00 gpu-07 systemd[1]: Failed to start Snap Daemon.",
    # a unit's name inside another's (`myslurmd.service`) is no unit of the table's
    "Mar 03 10:00:00 gpu-07 systemd[1]: myslurmd.service: Failed with result 'exit-code'.",
    # the OOM killer's result is host.oom_kill's
    "Mar 03 10:00:00 gpu-07 systemd[1]: slurmd.service: Failed with result 'oom-kill'.",
    # a Chef service resource it was told to ignore (chef lib/chef/resource.rb: `...; ignore_failure is set,
    # continuing`), and another service's resource
    "[2024-01-01T10:00:00+00:00] ERROR: service[munge] (cluster::slurm line 12) had an error: "
    "Mixlib::ShellOut::ShellCommandFailed: exit 1; ignore_failure is set, continuing",
    "service[snapd] (base::packages line 3) had an error: Mixlib::ShellOut::ShellCommandFailed: exit 1",
    # systemctl's job for a unit the table does not name
    "Job for gdm.service failed because the control process exited with error code.",
], ids=["stopped", "deactivated", "status-0", "sigterm", "restart-scheduled", "gdm", "snapd", "snapd-desc",
        "longer-name", "oom-kill", "chef-ignored", "chef-other", "systemctl-other"])
def test_near_miss_no_failure_of_the_tables_units(line: str) -> None:
    assert failures(feed([line])) == []


def test_near_miss_fabric_managers_unit_is_its_own_tables() -> None:
    # NVIDIA/gpu-operator#610: Fabric Manager's unit on a machine without NVSwitches, read by fabric_manager_messages
    lines = ["Sep 18 03:19:01 node-02 systemd[1]: nvidia-fabricmanager.service: Control process exited, "
             "code=exited, status=1/FAILURE",
             "Sep 18 03:19:01 node-02 systemd[1]: Failed to start NVIDIA fabric manager service."]
    assert failures(feed(lines)) == []
    assert [e.kind for e in feed(lines)][:1] == ["gpu.fabricmanager"]


# `systemctl status`'s record of a unit (systemd src/systemctl/systemctl-show.c print_status_info): the head line, then
# `Active:` with ` (Result: ...)` where the result is no success. access-ci-org/Basic_Cluster#51
# (https://github.com/access-ci-org/Basic_Cluster/issues/51), `systemctl status munge` on a compute node
BASIC_CLUSTER_51 = [
    "● munge.service - MUNGE authentication service",
    "   Loaded: loaded (/usr/lib/systemd/system/munge.service; enabled; vendor preset: disabled)",
    "   Active: failed (Result: exit-code) since Sat 2022-06-25 16:25:05 -03; 14min ago",
    "     Docs: man:munged(8)",
]


def test_systemctl_status_of_a_failed_unit_is_its_failure() -> None:
    assert all(helpers.holds_literal(NodeServiceExtractor(), line) for line in BASIC_CLUSTER_51[::2])
    got = failures(feed(BASIC_CLUSTER_51))
    assert [(e.fields["program"], e.fields["part"], e.fields["unit"], e.fields["text"]) for e in got] == [
        ("munge", "scheduler", "munge", "systemctl status: result exit-code")]
    assert str(got[0].fields["message"]).startswith("munge.service Active: failed (Result: exit-code)")


def test_systemctl_status_of_a_unit_restarting_after_a_failure() -> None:
    # systemd 248 and later mark a unit that is not active with its own glyph (`×` failed); a unit whose Restart=
    # brings it back is `activating (auto-restart)` with the failed run's result (print_status_info, filled in)
    lines = ["× slurmd.service - Slurm node daemon",
             "     Loaded: loaded (/usr/lib/systemd/system/slurmd.service; enabled; preset: disabled)",
             "    Drop-In: /etc/systemd/system/slurmd.service.d",
             "             └─override.conf",
             "     Active: activating (auto-restart) (Result: exit-code) since Mon 2026-03-02 10:00:00 UTC; 3s ago"]
    assert [e.fields["unit"] for e in failures(feed(lines))] == ["slurmd"]


@pytest.mark.parametrize("lines", [
    # a unit the table does not name (dun/munge#92's reporter's journal names docker's the same way; filled in)
    ["● docker.service - Docker Application Container Engine",
     "   Loaded: loaded (/usr/lib/systemd/system/docker.service; enabled; vendor preset: disabled)",
     "   Active: failed (Result: exit-code) since Tue 2020-12-15 12:54:34 CST; 13s ago"],
    # the table's unit running: no `(Result: ...)` is printed for a success
    ["● munge.service - MUNGE authentication service",
     "   Loaded: loaded (/usr/lib/systemd/system/munge.service; enabled; vendor preset: disabled)",
     "   Active: active (running) since Sat 2022-06-25 16:25:05 -03; 14min ago"],
    # an Active line too far below the head line to be its record (another unit's, its head cut off)
    ["● munge.service - MUNGE authentication service", *[f"Jun 25 16:25:0{i} compute-0 munged[1224]: note"
                                                          for i in range(9)],
     "   Loaded: loaded (/usr/lib/systemd/system/x.service; enabled; vendor preset: disabled)",
     "   Loaded: loaded (/usr/lib/systemd/system/x.service; enabled; vendor preset: disabled)",
     "   Loaded: loaded (/usr/lib/systemd/system/x.service; enabled; vendor preset: disabled)",
     "   Active: failed (Result: exit-code) since Sat 2022-06-25 16:25:05 -03; 14min ago"],
    # an Active line with no head line before it
    ["   Active: failed (Result: exit-code) since Sat 2022-06-25 16:25:05 -03; 14min ago"],
], ids=["other-unit", "running", "too-far", "no-head"])
def test_near_miss_systemctl_status_that_is_no_failure_of_the_tables_units(lines: list[str]) -> None:
    assert failures(feed(lines)) == []


def _analyze(make_bundle: BundleMaker, journal: list[str]) -> Verdict:
    wl = copy.deepcopy(WORKLOAD)
    wl["workload"]["nodes"] = ["gpu-07"]
    wl["workload"]["ranks"] = {"gpu-07": "0"}
    wl["sources"] = [{"kind": "syslog", "path": "nodes/{node}/journal.log"}]  # inside WORKLOAD's window
    return Analyzer().analyze_path(str(make_bundle({"nodes/gpu-07/journal.log": "".join(s + "\n" for s in journal)},
                                                   wl)))


FAILED = ["Nov 02 10:00:00 gpu-07 systemd[1]: slurmd.service: Main process exited, code=exited, status=1/FAILURE",
          "Nov 02 10:00:00 gpu-07 systemd[1]: slurmd.service: Failed with result 'exit-code'."]


def test_engine_the_nodes_slurmd_that_did_not_start(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, FAILED)
    rc = v.root_cause
    assert rc is not None and rc.category == "node.scheduler" and rc.nodes == ["gpu-07"]


def test_engine_near_miss_a_unit_that_restarted_and_came_back(make_bundle: BundleMaker) -> None:
    back = ["Nov 02 10:00:05 gpu-07 systemd[1]: slurmd.service: Scheduled restart job, restart counter is at 1.",
            "Nov 02 10:00:05 gpu-07 systemd[1]: Started Slurm node daemon."]
    v = _analyze(make_bundle, FAILED + back)
    assert v.root_cause is None or v.root_cause.category != "node.scheduler"


def test_engine_a_unit_that_failed_again_after_it_came_back(make_bundle: BundleMaker) -> None:
    again = ["Nov 02 10:00:05 gpu-07 systemd[1]: Started slurmd.service - Slurm node daemon.",
             "Nov 02 10:01:00 gpu-07 systemd[1]: slurmd.service: Main process exited, code=dumped, status=11/SEGV"]
    v = _analyze(make_bundle, FAILED + again)
    rc = v.root_cause
    assert rc is not None and rc.category == "node.scheduler"


def test_engine_the_persistence_daemons_unit_is_the_driver_stack(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, ["Nov 02 10:00:00 gpu-07 systemd[1]: nvidia-persistenced.service: Control process "
                               "exited, code=exited, status=1/FAILURE",
                               "Nov 02 10:00:00 gpu-07 systemd[1]: Failed to start NVIDIA Persistence Daemon."])
    rc = v.root_cause
    assert rc is not None and rc.category == "node.driver" and rc.nodes == ["gpu-07"]
