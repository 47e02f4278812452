"""GPU health monitors' reports read as the fault they report, or as nothing.

- A monitor's record of an Xid is the Xid's event, the same row of catalog/xid.yaml as the kernel's line, `via` the
  monitor (catalog/platform.yaml `xid_relays`: leptonai/gpud's Xid component, DCGM's DCGM_FR_XID_ERROR message as
  NVSentinel passes it on), on the GPU the record names by its PCI address; where the driver's own line of the same
  Xid is read on the same node (and GPU), the relay is folded into it (engine/normalise.py `_relayed_xids`).
- NVML's code for a GPU's state in Go's spelling (`ERROR_GPU_IS_LOST`, go-nvml's Return.String()) is NVML's result
  without an anchor (extract/gpu.py `_nvml_index`); a code of what the calling process could load is not.
- DCGM's codes that say a check could not run or the node's set-up was wanting (catalog/accel.yaml `dcgm_errors`,
  class not_run / config / environment / internal), named by a monitor, are understood and nothing.

Lines from public threads are marked with their thread; lines marked "ours" are the printing program's format (its
source named) filled in by us.
"""

from __future__ import annotations

import pytest

from firstfault.engine.normalise import _relayed_xids
from firstfault.model import Event
from tests.extract import helpers


def _xids(events: list[Event]) -> list[tuple[object, object, str | None]]:
    return [(e.fields.get("xid"), e.fields.get("via"), e.device) for e in events if e.kind == "gpu.xid"]


# leptonai/gpud#604 (https://github.com/leptonai/gpud/issues/604): gpud v0.4's Xid component reason
GPUD_604 = "XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00"
# NVIDIA/NVSentinel#1357 (https://github.com/NVIDIA/NVSentinel/issues/1357): platform-connectors' log of the health
# event preflight-dcgm-diag sent (DCGM's DCGM_FR_XID_ERROR message)
NVSENTINEL_1357 = (
    '{"time":"2026-06-02T19:47:38.025768133Z","level":"INFO","msg":"Health events received","module":'
    '"platform-connectors","version":"v1.8.0","events":{"version":1,"events":[{"version":1,"agent":'
    '"preflight-dcgm-diag","componentClass":"GPU","checkName":"DcgmDiagnosticMemory","isFatal":true,"message":'
    '"Detected XID 145 for GPU 0 Please consult the documentation for details of this XID.","errorCode":'
    '["DCGM_FR_XID_ERROR"],"entitiesImpacted":[{"entityType":"GPU_UUID","entityValue":'
    '"GPU-95d4eaef-812a-5157-fec0-7d64667313dc"}],"nodeName":"ip-....internal","processingStrategy":1}]}}')
# the kernel's line of the same Xid in the same thread
KERNEL_1357 = ("NVRM: Xid (PCI:0000:c5:00): 145, RLW_SRC_TRACK Nonfatal XC1 i0 Link 17 (0x04084507 0x00000004 "
               "0x00000000 0x00000000 0x00000000 0x00000000")


@pytest.mark.parametrize(("line", "want"), [
    (GPUD_604, [(79, "gpud", "pci:0000:ae:00")]),
    # ours: gpud's later reason (components/accelerator/nvidia/xid/health_state.go newXIDErrorReason,
    # `XID %d (%s) detected on GPU %s UUID:%s`), the device the kernel line's `PCI:` form
    ("XID 94 (Contained ECC error) detected on GPU PCI:0000:1b:00 UUID:GPU-0b9e2c1a-1111-2222-3333-444455556666",
     [(94, "gpud", "pci:0000:1b:00")]),
    (NVSENTINEL_1357, [(145, "dcgm", None)]),
])
def test_a_monitors_record_of_an_xid_is_the_xid(line: str, want: list[tuple[object, object, str | None]]) -> None:
    got = helpers.events([line], "application")
    assert _xids(got) == want
    # the same row of the Xid table as the kernel's line of that code
    kernel = helpers.events([f"NVRM: Xid (PCI:0000:ae:00): {want[0][0]}, pid=1, name=python, x"], "kernel",
                            file="kern.log", node="n1")
    assert [e.fields["xid_class"] for e in got if e.kind == "gpu.xid"] == [
        e.fields["xid_class"] for e in kernel if e.kind == "gpu.xid"]


@pytest.mark.parametrize("line", [
    # ours: gpud's SXID component's reason (components/accelerator/nvidia/sxid: `SXID %d(%s) detected on %s`): an
    # NVSwitch's error, not a GPU's Xid
    "SXID 12028(Non-fatal, Link LTSSM Fault Up) detected on PCI:0000:05:00",
    # ours: a person's words about an Xid, without the monitor's ` detected on ` after the number
    "we saw XID 79 on this node again yesterday, is the riser loose?",
    # DCGM's SXid code's message (dcgmlib/dcgm_errors.h DCGM_FR_SXID_ERROR_MSG), filled in
    "Detected fatal NvSwitch SXID 12028",
])
def test_words_that_look_alike_are_no_xid(line: str) -> None:
    assert _xids(helpers.events([line], "application")) == []


def test_a_relay_of_the_drivers_own_xid_is_folded_into_the_drivers_line() -> None:
    kernel = helpers.events([KERNEL_1357], "kernel", file="node/kern.log", node="n1")
    relay = helpers.events([NVSENTINEL_1357], "application", file="app/platform-connectors.log", node="n1")
    kept = _relayed_xids(kernel + relay)
    # the driver's line, which says Nonfatal, speaks for the fault; the monitor's `isFatal: true` adds nothing
    assert _xids(kept) == [(145, "log", "pci:0000:c5:00")]
    assert [e.kind for e in kept if e.kind == "gpu.xid"] == ["gpu.xid"]


def test_a_relay_of_another_gpu_or_another_code_stands() -> None:
    # ours: the kernel's Xid 79 on one GPU, gpud's Xid 79 on another, and gpud's Xid 94 on the first
    kernel = helpers.events(["NVRM: Xid (PCI:0000:ae:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off "
                             "the bus."], "kernel", file="kern.log", node="n1")
    relay = helpers.events(["XID 79(GPU has fallen off the bus) detected on PCI:0000:1b:00",
                            "XID 94(Contained ECC error) detected on PCI:0000:ae:00"],
                           "application", file="gpud.log", node="n1")
    assert sorted(_xids(_relayed_xids(kernel + relay)), key=str) == sorted(
        [(79, "log", "pci:0000:ae:00"), (79, "gpud", "pci:0000:1b:00"), (94, "gpud", "pci:0000:ae:00")], key=str)
    # on another node, the same code and GPU address is another fault
    other = helpers.events([GPUD_604], "application", file="gpud.log", node="n2")
    assert _xids(_relayed_xids(kernel + other)) == [(79, "log", "pci:0000:ae:00"), (79, "gpud", "pci:0000:ae:00")]


def test_nvmls_gpu_state_in_gos_spelling_is_the_result() -> None:
    # leptonai/gpud#604: the remapped-rows component's error, go-nvml's Return.String() of NVML_ERROR_GPU_IS_LOST
    line = ("failed to get remapped rows for GPU-ac896b35-5782-c478-4b2a-a661de07770f: failed to get device remapped "
            "rows: ERROR_GPU_IS_LOST")
    got = [e for e in helpers.events([line], "application") if e.kind == "gpu.nvml_error"]
    assert [(e.fields["error"], e.fields["nvml_error"]) for e in got] == [("lost", "NVML_ERROR_GPU_IS_LOST")]


@pytest.mark.parametrize("line", [
    # NVIDIA/dcgm-exporter#612 (https://github.com/NVIDIA/dcgm-exporter/issues/612): what the exporter's own container
    # could load is no GPU's state; without an anchor it is not read
    'time=2026-09-19T20:06:59.547Z level=ERROR msg="Cannot init NVML library; err: ERROR_LIBRARY_NOT_FOUND"',
    # ours: the same words as the tail of another enum's name are not Go's spelling of NVML's code
    "status=XR_ERROR_GPU_IS_LOST_KHR from the runtime",
])
def test_a_code_of_the_callers_own_or_another_enums_name_is_no_gpu_state(line: str) -> None:
    assert [e for e in helpers.events([line], "application") if e.kind == "gpu.nvml_error"] == []


def test_dcgms_not_run_codes_named_by_a_monitor_are_understood_and_nothing() -> None:
    # NVIDIA/NVSentinel#1471 (https://github.com/NVIDIA/NVSentinel/issues/1471): GpuNvlinkWatch's condition on a
    # single-node NVSwitch system where IMEX is not applicable (DCGM_FR_IMEX_UNHEALTHY, class environment)
    line = "ErrorCode:DCGM_FR_IMEX_UNHEALTHY GPU:0 IMEX daemon status is -3 (not READY)"
    assert helpers.claimed(line, "application")
    assert helpers.events([line], "application") == []
    # near miss: a device's code named the same way is still the device's fault (DCGM_FR_VOLATILE_DBE_DETECTED)
    got = helpers.events(["ErrorCode:DCGM_FR_VOLATILE_DBE_DETECTED GPU:0 Detected 2 volatile double-bit ECC "
                          "error(s) in GPU 0."], "application")
    assert [(e.kind, e.fields.get("accel_class")) for e in got] == [("gpu.accel_error", "memory")]


# pytorch/ci-infra#1057 (https://github.com/pytorch/ci-infra/pull/1057): the kubelet's UnexpectedAdmissionError
# message as the PR posts it, wrapped over lines
CI_INFRA_1057 = [
    "Allocate failed due to device plugin GetPreferredAllocation rpc failed with err:",
    "rpc error: code = Unknown desc = error getting list of preferred allocation devices:",
    "unable to get device link information: error getting NVLink for devices (0, 1):",
    "failed to get nvlink remote pci info: failed to get nvlink state: GPU is lost,",
    "which is unexpected",
]


def test_the_device_plugins_topology_walk_quotes_nvmls_result() -> None:
    got = [e for e in helpers.events(CI_INFRA_1057, "application") if e.kind == "gpu.nvml_error"]
    assert [e.fields["error"] for e in got] == ["lost"]


@pytest.mark.parametrize("line", [
    # ours: go-gpuallocator's wording (gpuallocator/device.go, its links' GetNVLink) over NVML's answer that the GPU
    # has no such counter: the client's question, no failure
    "error getting NVLink for devices (0, 1): failed to get nvlink state: Not Supported",
    # ours: the same words over an error that is no NVML result
    "failed to get nvlink state: context deadline exceeded",
])
def test_the_topology_walks_words_over_no_nvml_failure_are_none(line: str) -> None:
    assert [e for e in helpers.events([line], "application") if e.kind == "gpu.nvml_error"] == []


# leptonai/gpud#1151 (https://github.com/leptonai/gpud/pull/1151): the fabric-manager component's state before and
# after the fix, as posted (each cut by the author inside its `data` string)
GPUD_1151_HEALTHY = [
    '    "component": "accelerator-nvidia-fabric-manager",',
    '    "states": [',
    '      {',
    '        "time": "2025-11-20T03:08:36Z",',
    '        "component": "accelerator-nvidia-fabric-manager",',
    '        "name": "accelerator-nvidia-fabric-manager",',
    '        "health": "Healthy",',
    '        "reason": "NVIDIA-H100-80GB-HBM3 checked fabric state",',
]
GPUD_1151_UNHEALTHY = [
    '    "component": "accelerator-nvidia-fabric-manager",',
    '    "states": [',
    '      {',
    '        "time": "2025-11-20T04:46:02Z",',
    '        "component": "accelerator-nvidia-fabric-manager",',
    '        "name": "accelerator-nvidia-fabric-manager",',
    '        "health": "Unhealthy",',
    '        "reason": "NVIDIA-H100-80GB-HBM3 checked fabric state; fabric manager found but not active",',
]


def _checks(lines: list[str]) -> list[tuple[object, object]]:
    return [(e.fields["check"], e.fields["part"]) for e in helpers.events(lines, "application")
            if e.kind == "node.health_check"]


def test_a_monitors_unhealthy_component_is_its_parts_weak_finding() -> None:
    assert _checks(GPUD_1151_UNHEALTHY) == [("accelerator-nvidia-fabric-manager", "driver")]
    # ours: the same state printed compact on one line (gpud's apiv1.HealthState marshalled without indent)
    assert _checks(['{"time":"2025-11-20T04:46:02Z","component":"accelerator-nvidia-remapped-rows","name":'
                    '"accelerator-nvidia-remapped-rows","health":"Unhealthy","reason":"row remapping pending"}']) == [
        ("accelerator-nvidia-remapped-rows", "gpu_memory")]


@pytest.mark.parametrize("lines", [
    GPUD_1151_HEALTHY,
    # ours: a component of part none (what runs on the GPUs), Unhealthy: understood, nothing
    ['{"component":"accelerator-nvidia-utilization","health":"Unhealthy","reason":"high utilization"}'],
    # ours: another program's JSON with the same keys (a Kubernetes component's status): no monitor's component
    ['{"component":"kube-scheduler","health":"Unhealthy","message":"Get https://127.0.0.1:10259/healthz"}'],
    # ours: the Unhealthy state of a component seen far above it is not that component's
    ['"component": "accelerator-nvidia-fabric-manager",', *(['"x": 1,'] * 13), '"health": "Unhealthy",'],
])
def test_a_healthy_state_or_no_known_component_is_no_finding(lines: list[str]) -> None:
    assert _checks(lines) == []


def _monitor_rows(monitor: str) -> list[tuple[str, str]]:
    """catalog/health.yaml `monitor_components` of one monitor (leptonai/gpud@4a8de33a components/*/component.go
    Name; NVIDIA/NVSentinel's check names: gpu-health-monitor dcgm_watcher/dcgm.py DCGM_HEALTH_WATCH_*,
    syslog-health-monitor's enabledChecks, nic-health-monitor pkg/checks)."""
    from firstfault.catalog.tables import health_tables
    return [(r.component, r.part) for r in health_tables().components if r.monitor == monitor]


@pytest.mark.parametrize(("component", "part"), _monitor_rows("gpud"))
def test_each_gpud_component_unhealthy(component: str, part: str) -> None:
    """Each gpud component's Unhealthy state, compact as gpud's apiv1.HealthState marshals it (leptonai/gpud#1151's
    keys): its part's weak finding, or nothing for a component of part none."""
    line = f'{{"component":"{component}","health":"Unhealthy","reason":"x"}}'
    assert _checks([line]) == ([] if part == "none" else [(component, part)])
    # near miss: the same component Healthy
    assert _checks([f'{{"component":"{component}","health":"Healthy","reason":"x"}}']) == []


# NVIDIA/NVSentinel#1716 (https://github.com/NVIDIA/NVSentinel/issues/1716): the NIC health monitor's node condition
# as posted (`kubectl get node -o json`), its message wrapped
NVS_1716 = [
    '    "type": "InfiniBandCharDeviceCheck",',
    '    "status": "True",',
    '    "reason": "InfiniBandCharDeviceCheckIsNotHealthy",',
    '    "message": "ErrorCode:issm NIC:mlx5_3 NICPort:1 Device mlx5_3 port 1: issm character device missing from '
    '/sys/class/infiniband_mad (expected for an InfiniBand-mode port). pods cannot open',
    '  /dev/infiniband/issm* Recommended Action=REPLACE_VM;ErrorCode:issm NIC:mlx5_2 NICPort:1 Device mlx5_2 port 1: '
    'issm character device missing from /sys/class/infiniband_mad (expected for an InfiniBand-mode port).',
]


def _understood(lines: list[str]) -> list[str]:
    from firstfault.extract.healthcheck import MonitorConditionExtractor
    from tests.extract.helpers import scan
    return [d.kind for d in scan(MonitorConditionExtractor(), lines, source="application")]


def test_nvsentinel_char_device_condition_is_understood_and_nothing() -> None:
    assert _checks(NVS_1716) == []


@pytest.mark.parametrize(("component", "part"), _monitor_rows("nvsentinel"))
def test_each_nvsentinel_check_condition(component: str, part: str) -> None:
    """Each NVSentinel check's condition, as `kubectl describe node` prints its row (the reason, then the message's
    `ErrorCode:<code> <entity>:<value> ... Recommended Action=<ACTION>;`, fault-quarantine's form, #1716's), with a
    code no other table reads: its part's weak finding, once, or nothing for a check of part none."""
    lines = [f"  {component}  True  Mon, 12 Aug 2026 23:00:02 +0000  {component}IsNotHealthy  "
             "ErrorCode:SOME_CODE GPU:0 the check's words Recommended Action=CONTACT_SUPPORT;",
             "  ErrorCode:SOME_CODE GPU:1 the check's words Recommended Action=CONTACT_SUPPORT;"]
    assert _checks(lines) == ([] if part == "none" else [(component, part)])


@pytest.mark.parametrize("lines", [
    # NVIDIA/NVSentinel#1471: a DCGM code on the message is dcgm_errors' (IMEX not ready: environment), not the check's
    ["GpuNvlinkWatch = True   reason=GpuNvlinkWatchIsNotHealthy",
     "ErrorCode:DCGM_FR_IMEX_UNHEALTHY GPU:0 IMEX daemon status is -3 (not READY)"],
    # ours: an Xid number is the Xid's reading, not the check's
    ["SysLogsXIDError  True  SysLogsXIDErrorIsNotHealthy  ErrorCode:79 PCI:0000:ae:00 GPU has fallen off the bus"],
    # ours: a check the table does not name, and a code far below its condition
    ["OsmoReportedBadNode  True  OsmoReportedBadNodeIsNotHealthy  ErrorCode:OSMO_BAD_NODE Node:n1"],
    ["GpuMemWatch  True  GpuMemWatchIsNotHealthy", *(["x"] * 41), "ErrorCode:SOME_CODE GPU:0"],
    # ours: Azure's storage error code, no NVSentinel condition before it
    ["storage: service returned error: StatusCode=503, ErrorCode:ServerBusy"],
])
def test_near_miss_nvsentinel_condition_gives_no_check_finding(lines: list[str]) -> None:
    assert [c for c in _checks(lines) if c[0] not in ("accelerator-nvidia-error-xid",)] == []
    assert _understood(lines) == []
