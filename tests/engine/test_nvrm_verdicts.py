"""Verdicts over the NVIDIA driver's messages without an Xid (catalog/platform.yaml `nvrm_messages`), through the
embedded engine on small bundles.

The NVRM lines are posted lines (their threads named, none of them a tests/wild bundle's) or the driver's format
strings filled in (kernel-open/nvidia/nv.c); the application lines around them are constructed and say so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.engine.rules import Explains
from firstfault.model import Verdict
from firstfault.records import ValidationError, convert

# ublue-os/bazzite#4449 (journalctl -k), the time moved into the job's window
HEARTBEAT = "Dec  3 15:54:42 node-a kernel: NVRM: GPU0 _kgspRpcRecvPoll: GSP RM heartbeat timed out"
# NVIDIA/open-gpu-kernel-modules#446
XID119 = ("Dec  3 15:54:43 node-a kernel: NVRM: Xid (PCI:0000:61:00): 119, pid=1365232, name=nvidia-smi, Timeout "
          "waiting for RPC from GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801348 0x410).")
# NVIDIA/open-gpu-kernel-modules#1064
BANNER = ("Dec  3 15:10:00 node-a kernel: [    8.108512] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  "
          "595.58.03  Release Build  (nixbld@)  ")
# kernel-open/nvidia/nv.c's format string, filled in
PROBE = "Dec  3 15:10:01 node-b kernel: NVRM: The NVIDIA probe routine was not called for 8 device(s)."


def bundle(tmp: Path, files: dict[str, str], state: str = "FAILED") -> Verdict:
    for rel, text in files.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text)
    (tmp / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\nworkload:\n  id: '7'\n  scheduler: static\n"
        "  window: {start: '2026-12-03T15:00:00Z', end: '2026-12-03T16:30:00Z'}\n  nodes: [node-a, node-b]\n"
        f"  terminal_state: {state}\n  timezone: UTC\n"
        "sources:\n  - {kind: kernel, path: 'nodes/{node}/kern.log'}\n"
        "  - {kind: application, path: 'logs/{node}/app.log'}\n")
    return Analyzer().analyze_path(str(tmp))


def test_a_hung_gsp_is_the_gpus_fault(tmp_path: Path) -> None:
    v = bundle(tmp_path, {"nodes/node-a/kern.log": BANNER + "\n" + HEARTBEAT + "\n"})
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes) == ("gpu.firmware.reset_required", ["node-a"])
    assert not any("loading NVIDIA UNIX" in u.text for u in v.unrecognized)


def test_the_xid_of_the_same_gpu_decides(tmp_path: Path) -> None:
    v = bundle(tmp_path, {"nodes/node-a/kern.log": HEARTBEAT + "\n" + XID119 + "\n"})
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes) == ("gpu.firmware", ["node-a"])


def test_another_driver_owning_the_gpus_is_the_nodes_install(tmp_path: Path) -> None:
    v = bundle(tmp_path, {"nodes/node-b/kern.log": PROBE + "\n"})
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes) == ("node.driver", ["node-b"])


def test_the_probe_message_on_a_job_that_succeeded_is_no_cause(tmp_path: Path) -> None:
    v = bundle(tmp_path, {"nodes/node-b/kern.log": PROBE + "\n"}, state="COMPLETED")
    assert v.root_cause is None and v.outcome == "succeeded" and v.candidates == []


def test_the_banner_alone_is_nothing(tmp_path: Path) -> None:
    v = bundle(tmp_path, {"nodes/node-a/kern.log": BANNER + "\n"})
    assert v.root_cause is None and v.candidates == []


def test_a_copy_in_the_jobs_own_log_is_not_the_kernel(tmp_path: Path) -> None:
    # constructed: a job's health check echoing the kernel's line into its own log
    v = bundle(tmp_path, {"logs/node-a/app.log": "health: dmesg tail: " + HEARTBEAT + "\n"})
    assert v.root_cause is None or v.root_cause.category != "gpu.firmware.reset_required"


def test_the_xid_decides_when_the_driver_printed_the_heartbeat_first(tmp_path: Path) -> None:
    # rule gpu-firmware-xid explains a reset report of its node begun up to a minute before it (`earlier: 60`)
    xid = XID119.replace("15:54:43", "15:55:22")
    v = bundle(tmp_path, {"nodes/node-a/kern.log": HEARTBEAT + "\n" + xid + "\n"})
    assert v.root_cause is not None and v.candidates == []
    assert (v.root_cause.category, v.root_cause.nodes) == ("gpu.firmware", ["node-a"])


def test_a_heartbeat_long_before_the_xid_is_its_own_cause(tmp_path: Path) -> None:
    xid = XID119.replace("15:54:43", "15:58:02")
    v = bundle(tmp_path, {"nodes/node-a/kern.log": HEARTBEAT + "\n" + xid + "\n"})
    assert v.root_cause is not None
    assert v.root_cause.category == "gpu.firmware.reset_required"
    assert [c.category for c in v.secondary_causes] == ["gpu.firmware"]


def test_earlier_needs_a_category_on_the_node() -> None:
    with pytest.raises((ValueError, ValidationError), match="earlier"):
        convert({"set": "host_fault", "earlier": 30}, Explains)
    with pytest.raises((ValueError, ValidationError), match="earlier"):
        convert({"category": "gpu.firmware", "earlier": 30}, Explains)
    assert convert({"category": "gpu.firmware", "same_node": True, "earlier": 30}, Explains).earlier == 30


def test_xid_154_alone_stays_a_symptom(tmp_path: Path) -> None:
    # NVIDIA/open-gpu-kernel-modules#1045's line: the recovery action names no fault of its own
    line = ("Dec  3 15:54:45 node-a kernel: NVRM: Xid (PCI:0000:3e:00): 154, GPU recovery action changed from 0x0 "
            "(None) to 0x1 (GPU Reset Required)")
    v = bundle(tmp_path, {"nodes/node-a/kern.log": BANNER + "\n" + line + "\n"})
    assert v.root_cause is None and v.candidates == []
    v = bundle(tmp_path / "with", {"nodes/node-a/kern.log": HEARTBEAT + "\n" + line + "\n"})
    assert v.root_cause is not None and v.root_cause.category == "gpu.firmware.reset_required"


# The proprietary module on a GPU only the open modules drive, then the init failure it causes (the pair and the
# failure as public RTX 50-series posts show them, driver 580.105.08; the format strings of the driver's device-support
# check and of osinit.c's RmInitAdapter), the time moved into the job's window
OPEN_ONLY = ("Dec  3 15:10:01 node-a kernel: NVRM: The NVIDIA GPU 0000:02:00.0 (PCI ID: 10de:2c58)\n"
             "Dec  3 15:10:01 node-a kernel: NVRM: installed in this system requires use of the NVIDIA open kernel "
             "modules.\n")
INIT_FAILED = "Dec  3 15:10:01 node-a kernel: NVRM: GPU 0000:02:00.0: RmInitAdapter failed! (0x22:0x56:884)\n"
# constructed: a module's unrelated lines between the two reports
FILLER = "".join(f"Dec  3 15:{20 + i // 60:02d}:{i % 60:02d} node-a kernel: usb 1-{i}: new device\n" for i in range(30))


def test_the_init_failure_right_after_the_drivers_reason_is_the_drivers(tmp_path: Path) -> None:
    v = bundle(tmp_path, {"nodes/node-a/kern.log": OPEN_ONLY + INIT_FAILED})
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes) == ("node.driver", ["node-a"])
    assert not any(c.category.startswith("gpu.") for c in v.candidates)


def test_an_init_failure_far_from_the_drivers_reason_stays_the_gpus(tmp_path: Path) -> None:
    # another GPU's adapter failing later, after the boot's other lines: not the report the reason came with
    later = INIT_FAILED.replace("15:10:01", "15:30:00").replace("0000:02:00.0", "0000:81:00.0")
    v = bundle(tmp_path, {"nodes/node-a/kern.log": OPEN_ONLY + FILLER + later})
    causes = [*v.candidates, *v.secondary_causes, *([v.root_cause] if v.root_cause else [])]
    assert ("gpu.firmware.reset_required", ["node-a"]) in [(c.category, c.nodes) for c in causes]


def test_a_quoted_open_module_hint_is_not_the_driver(tmp_path: Path) -> None:
    # a help text that quotes the driver (constructed, in the shape of the public troubleshooting notes)
    v = bundle(tmp_path, {"logs/node-a/app.log": "hint: if dmesg shows \"NVRM: installed in this system requires use "
                                                 "of the NVIDIA open kernel modules.\", install the -open driver\n"})
    assert v.root_cause is None or v.root_cause.category != "node.driver"
