"""Node health checks in their own words (catalog/health.yaml, extract/healthcheck.py): a check that examines a
part of the node is a weak finding there, an Xid it quotes is that Xid, a check that could not run is nothing, and
Slurm's drain reason `NHC: ...` is read through the same table."""

from __future__ import annotations

import pytest

from firstfault.catalog.tables import health_tables
from firstfault.extract.healthcheck import SETUP, read_health_message
from firstfault.model import Event
from tests.extract import helpers


def _events(lines: list[str], source: str = "syslog") -> list[Event]:
    return helpers.events(lines, source, file="nodes/gpu-07/nhc.log", node="gpu-07")


def _health(lines: list[str], source: str = "syslog") -> list[tuple[str | None, str | None]]:
    return [(str(e.fields.get("check")), str(e.fields.get("part")))
            for e in _events(lines, source) if e.kind == "node.health_check"]


@pytest.mark.parametrize(
    ("line", "want"),
    [
        # mej/nhc scripts/lbnl_hw.nhc check_hw_ib (`No IB port$DEV is $STATE ($PHYS_STATE$RATE).`), as die() logs it
        ("ERROR:  nhc:  Health check failed:  check_hw_ib:  No IB port mlx5_2:1 is ACTIVE (LinkUp 400 Gb/sec).",
         [("check_hw_ib", "network")]),
        # the same check's version test: the driver stack, not the port (the row's `says` refines it)
        ("ERROR:  nhc:  Health check failed:  check_hw_ib:  Version mismatch between kernel OFED drivers and "
         "userspace OFED libraries.", [("check_hw_ib", "driver")]),
        # syslog's copy (`syslog "Health check failed:  $*"`), mej/nhc scripts/lbnl_fs.nhc check_fs_mount
        ("Jun 11 19:12:23 gpu-07 nhc[4242]: Health check failed:  check_fs_mount:  /scratch not mounted",
         [("check_fs_mount", "filesystem")]),
        # NVIDIA/deepops#660: a site's own check (check_nv_*: the prefix row), NHC's fallback words
        ("ERROR:  nhc:  Health check failed:  Check check_nv_gpu_count 2 returned 1", [("check_nv_gpu_count", "gpu")]),
        # Azure/azurehpc-health-checks customTests/azure_gpu_ecc.nhc: the memory row before the check_gpu_ prefix
        ("ERROR:  nhc:  Health check failed:  check_gpu_ecc: GPU id 4: Row remap error. FaultCode: NHC2007",
         [("check_gpu_ecc", "gpu_memory")]),
        # near miss: a check of what runs there (mej/nhc scripts/lbnl_hw.nhc check_hw_mem_free) names no part
        ("ERROR:  nhc:  Health check failed:  check_hw_mem_free:  Not enough free memory (10 kB < 2097152 kB).", []),
        # a check whose command is not there (bash's 127, as NHC's fallback reports it) could not run: the
        # checker's own set-up, no part of the node
        ("ERROR:  nhc:  Health check failed:  Check check_nvsmi_healthmon returned 127",
         [("check_nvsmi_healthmon", "setup")]),
        # a wrapper's summary of the same (Azure/az-hop#1796, https://github.com/Azure/az-hop/issues/1796)
        ("ERROR : Node Health Checks failed - viz3d-1 - AMS081063509028 - Check check_nvsmi_healthmon returned 127",
         [("check_nvsmi_healthmon", "setup")]),
        # Azure/azurehpc-health-checks#72: aznhc's dependency check finding HPC-X not sourced (customTests/
        # azure_common.nhc check_all_reduce_dependencies), the checker's environment
        ("[1705939176] - ERROR:  nhc:  Health check failed:  check_all_reduce_dependencies: HPCX_DIR is not set. "
         "Ensure HPCX is installed and sourced correctly.", [("check_all_reduce_dependencies", "setup")]),
        # near miss: NHC's timeout names the check it was running; it could not finish (mej/nhc#95)
        ('Health check failed:  Script timed out while executing "check_ps_daemon sshd root"', []),
        # a site's own filesystem check by its prefix (mej/nhc#71, https://github.com/mej/nhc/pull/71)
        ('ERROR:  nhc:  Health check failed:  check_gpfs_health NETWORK: GPFS health for "NETWORK" is FAILED',
         [("check_gpfs_health", "filesystem")]),
        # near miss: aznhc's own set-up (FaultCode NHCNA: the test's tool could not run)
        ("ERROR:  nhc:  Health check failed:  check_ib_bw_gdr: ib_write_bw returned error code 1. "
         "FaultCode: NHCNA", []),
        # near miss: NHC's own timeout (mej/nhc#161) and its watchdog (mej/nhc#134)
        ("2025-06-11T19:12:23.050922+00:00 cpu001 nhc[1013622]: Health check failed:  Script timed out.", []),
        ("ERROR:  nhc:  Health check failed:  Watchdog timer unable to terminate hung NHC process 16263.", []),
    ],
)
def test_a_failed_check_is_its_part(line: str, want: list[tuple[str, str]]) -> None:
    assert _health([line]) == want


def test_a_run_of_all_checks_reads_each_and_its_count_is_understood() -> None:
    # mej/nhc#152 (https://github.com/mej/nhc/pull/152): `nhc -a` with /tmp full; each failure is read as its check's
    # (weak: here the checker's own /tmp misled it, which the words do not say), the count after them is understood
    lines = ["ERROR:  nhc:  Health check failed:  check_hw_cpuinfo:  Actual CPU socket count (1) does not match "
             "expected (2).",
             "ERROR:  nhc:  Health check failed:  check_hw_physmem:  Actual RAM size (0 kB) less than minimum allowed "
             "(263504064 kB).",
             "ERROR:  nhc:  Health check failed:  check_hw_eth:  Ethernet device ib0 not detected.",
             "ERROR:  nhc:  3 health checks failed."]
    assert _health(lines, "application") == [("check_hw_cpuinfo", "host"), ("check_hw_physmem", "host"),
                                             ("check_hw_eth", "network")]
    assert helpers.claimed(lines[-1], "application")
    # near miss: another program's count of its own checks is not NHC's
    assert not helpers.claimed("ERROR:  3 health checks failed.", "application")


def test_could_not_run_is_understood_not_unrecognized() -> None:
    # mej/nhc#161: NHC's own timeout is read (claimed), so it is no unrecognized error line either
    assert helpers.claimed("cpu001 nhc[1013622]: Health check failed:  Script timed out.", "syslog")
    # near miss: another program's health check (a server's own) is not NHC's
    assert read_health_message("Server couldn't get a response from detokenizer") is None


def test_an_xid_the_check_found_is_that_xid() -> None:
    # mej/nhc#147 (https://github.com/mej/nhc/issues/147): a site's check_xid_errors, as nhc.log holds it; the Xid is
    # catalog/xid.yaml's (platform.yaml xid_relays), the check's failure a weak GPU finding beside it
    got = _events(["Found XID errors: 63", "Node Health Check failed.  Check check_xid_errors returned 1"])
    xids = [e for e in got if e.kind == "gpu.xid"]
    assert [(e.fields["xid"], e.fields["via"], e.fields["xid_class"]) for e in xids] == [(63, "nhc", "memory_info")]
    assert _health(["Node Health Check failed.  Check check_xid_errors returned 1"]) == [("check_xid_errors", "gpu")]
    # Azure/azurehpc-health-checks customTests/azure_gpu_xid.nhc quotes the kernel's line: read as the driver's
    line = ("ERROR:  nhc:  Health check failed:  check_gpu_xid: GPU Xid errors detected: [ 1234.5] NVRM: Xid "
            "(PCI:0000:c1:00): 79, pid=2231, GPU has fallen off the bus.. FaultCode: NHC2001")
    got = _events([line], "application")
    assert [(e.kind, e.fields.get("xid")) for e in got] == [("gpu.xid", 79)]


def test_slurm_drain_reason_reads_through_the_same_table() -> None:
    # NVIDIA/deepops#660: sinfo -R cuts the reason at its column; the check's prefix still reads it
    got = helpers.events(["REASON               USER      TIMESTAMP           NODELIST",
                          "NHC: Check check_nv_ vagrant   2020-09-24T18:05:11 virtual-gpu01"],
                         "scheduler", file="ctl/sinfo.txt", node=None)
    assert [(e.kind, e.fields.get("host"), e.fields.get("part")) for e in got] == [
        ("node.health_check", "virtual-gpu01", "gpu")]
    # scontrol show node's Reason= of a mount check (mej/nhc scripts/lbnl_fs.nhc)
    got = helpers.events(["NodeName=gpu-07 Arch=x86_64", "   Reason=NHC: check_fs_mount_rw:  /scratch not mounted "
                          "[root@2024-03-01T10:00:00]"], "scheduler", file="ctl/nodes.txt", node=None)
    assert [(e.kind, e.fields.get("host"), e.fields.get("part")) for e in got] == [
        ("node.health_check", "gpu-07", "filesystem")]
    # near miss: a drain for NHC's own watchdog (mej/nhc#134) could not run any check: nothing
    got = helpers.events(["NodeName=wn-1-30 Arch=x86_64", "   Reason=NHC: Watchdog timer unable to terminate hung NHC "
                          "process 16263. [root@2023-04-29T16:16:31]"], "scheduler", file="ctl/nodes.txt", node=None)
    assert got == []
    # a drain for a check whose command is not there (bash's 127) is the checker's set-up on that node
    got = helpers.events(["NodeName=viz3d-1 Arch=x86_64", "   Reason=NHC: Check check_nvsmi_healthmon returned 127 "
                          "[root@2023-04-29T16:16:31]"], "scheduler", file="ctl/nodes.txt", node=None)
    assert [(e.kind, e.fields.get("host"), e.fields.get("part")) for e in got] == [
        ("node.health_check", "viz3d-1", "setup")]


def test_every_row_reads_itself() -> None:
    tables = health_tables()
    for row in tables.checks:
        name = row.check.rstrip("*") + ("site_check" if row.check.endswith("*") else "")
        read = read_health_message(f"{name}:  {row.says or 'failed'}")
        assert read is not None and read.part == row.part, row
    for u in tables.unrun:
        read = read_health_message(f"check_hw_ib:  {u.text}")
        assert read is not None and read.part == (SETUP if u.setup else None), u
