"""GPU kernel / Fabric Manager extractors on real lines (domain-facts sections 1 and 2.1).

Lines are verbatim from public issues unless marked `synthetic`.
"""

from __future__ import annotations

from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog.tables import (
    XID_CLASSES,
    NvrmMessage,
    nvrm_messages,
    sxid_class,
    sxid_table,
    xid_class,
    xid_info,
    xid_table,
)
from firstfault.collect.scan import Extraction
from firstfault.extract import gpu
from firstfault.extract.base import Candidate
from tests.conftest import BundleMaker
from tests.extract import helpers
from tests.extract.helpers import assert_fields, holds_literal, one, scan

XID = gpu.XidExtractor()
SXID = gpu.SxidExtractor()
FM = gpu.FabricManagerExtractor()
RESET = gpu.NvrmExtractor()


# ---------------------------------------------------------------- Xid lines

XID_CASES: list[tuple[str, dict[str, Any], str | None]] = [
    # leptonai/gpud#46, dmesg -T, pid='<unknown>'
    (
        "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, "
        "Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter",
        {"xid": 13, "pid": None, "proc": None, "pci": "0000:cb:00", "xid_class": "app", "via": "log",
         "detail": "Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter"},
        "pci:0000:cb:00",
    ),
    (
        "[Fri Aug 30 11:43:14 2024] NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, "
        "Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005",
        {"xid": 109, "pid": 1797828, "proc": "pt_main_thread",
         "mnemonic": "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "immediate_action": "RESET_GPU",
         "detail": "Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005"},
        "pci:0000:cb:00",
    ),
    # akash-network/support#244, driver 535
    (
        "[Wed Jul 31 23:14:18 2024] NVRM: Xid (PCI:0000:00:05): 43, pid=1045242, name=pt_main_thread, Ch "
        "00000008",
        {"xid": 43, "pid": 1045242, "proc": "pt_main_thread", "detail": "Ch 00000008", "xid_class": "app"},
        "pci:0000:00:05",
    ),
    (
        "[Mon Aug  5 03:54:13 2024] NVRM: Xid (PCI:0000:00:07): 31, pid=2512125, name=python3.10, Ch "
        "00000008, "
        "intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_8 faulted @ 0x73ac_1c000000. "
        "Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE",
        {"xid": 31, "pid": 2512125, "proc": "python3.10", "xid_class": "app"},
        "pci:0000:00:07",
    ),
    (
        "[Fri Aug  9 13:32:56 2024] NVRM: Xid (PCI:0000:00:08): 94, pid='<unknown>', name=<unknown>, "
        "Contained: SM (0x1). RST: No, D-RST: No",
        {"xid": 94, "xid_class": "memory", "detail": "Contained: SM (0x1). RST: No, D-RST: No"},
        "pci:0000:00:08",
    ),
    # NVIDIA/gpu-operator#1146, syslog BSD with host + bare uptime
    (
        "Dec  2 11:38:47 worker4 kernel: [  219.470994] NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', "
        "name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer "
        "at physAddr 0x7fffa8860 partition 7, subpartition 1.",
        {"xid": 48, "xid_class": "memory", "mnemonic": "ROBUST_CHANNEL_GPU_ECC_DBE",
         "immediate_action": "WORKFLOW_XID_48", "pid": None},
        "pci:0000:07:00",
    ),
    (
        "Dec  2 11:38:47 worker4 kernel: [  219.471050] NVRM: Xid (PCI:0000:07:00): 64, pid='<unknown>', "
        "name=<unknown>, Dynamic Page Retirement: Blacklisting failed.  Page should have been blacklisted on "
        "boot(0x00000000007fffa8).",
        {"xid": 64, "xid_class": "memory"},
        "pci:0000:07:00",
    ),
    # stas00/ml-engineering: pid without name
    (
        "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to "
        "activate.",
        {"xid": 63, "pid": 1896, "proc": None, "xid_class": "memory_info",
         "detail": "Row Remapper: New row marked for remapping, reset gpu to activate."},
        "pci:0000:10:1c",
    ),
    # 2012 driver: no `PCI:`, no pid/name
    (
        "NVRM: Xid (0000:01:00): 13, 0005 00000000 0000502d 00000104 00000000 00000100",
        {"xid": 13, "pci": "0000:01:00", "pid": None, "detail": "0005 00000000 0000502d 00000104 00000000 "
                                                                "00000100"},
        "pci:0000:01:00",
    ),
    # NVIDIA/open-gpu-kernel-modules#1150: the sympathetic 45 names its cause
    (
        "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous "
        "Xid 149",
        {"xid": 45, "cause_xid": 149, "xid_class": "sympathetic", "proc": "python3"},
        "pci:0000:dc:00",
    ),
    # open-gpu-kernel-modules#1045: 62 then 154
    (
        "[Mon May  4 14:09:23 2026] NVRM: Xid (PCI:0000:3e:00): 62, pid=213710, name=nvtop, 323b6a66 "
        "000066f0 "
        "00000000 2029d806 2029da2c 2029de9c 202fa89e 202facec",
        {"xid": 62, "xid_class": "firmware", "proc": "nvtop"},
        "pci:0000:3e:00",
    ),
    (
        "[Mon May  4 14:09:23 2026] NVRM: Xid (PCI:0000:3e:00): 154, GPU recovery action changed from 0x0 "
        "(None) "
        "to 0x1 (GPU Reset Required)",
        {"xid": 154, "recovery_action": "GPU Reset Required", "recovery_code": 1, "xid_class": "recovery",
         "pid": None},
        "pci:0000:3e:00",
    ),
    (
        "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot "
        "Required)",
        {"recovery_action": "Node Reboot Required", "recovery_code": 2},
        "pci:0000:01:00",
    ),
    (
        "NVRM: Xid (PCI:0018:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain and "
        "Reset)",
        {"recovery_action": "Drain and Reset", "recovery_code": 4},
        "pci:0018:01:00",
    ),
    # leptonai/gpud#1174: NVLink5 NETIR with the full word list; subcode 37 = INVESTIGATE_PEER_DEVICE
    (
        "NVRM: Xid (PCI:0000:00:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 00 (0x025001c6 0x00000000 "
        "0x00000000 "
        "0x00000000 0x00000000 0x00000000)",
        {"xid": 149, "unit": "NETIR_LINK_EVT", "severity": "Fatal", "link": 0, "intrinfo": 0x025001C6,
         "status_word": 0, "subcode": 37, "xid_class": "nvlink5", "mnemonic": "NVLINK_NETIR_ERROR"},
        "pci:0000:00:00",
    ),
    (
        "NVRM: Xid (PCI:0019:01:00): 149, NETIR Fatal XC0 i0 Link -1 (0x000fe406 0x00000000 0x00000000 "
        "0x00000000 0x00000000 0x00000000)",
        {"unit": "NETIR", "link": -1, "intrinfo": 0x000FE406, "subcode": 0},
        "pci:0019:01:00",
    ),
    (
        "NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008 "
        "0x00000001 "
        "0x00000000 0x00100000 0x00000004)",
        {"xid": 145, "unit": "RLW_RXPIPE", "severity": "Nonfatal", "link": 13, "intrinfo": 0x0409A0C2,
         "status_word": 8, "subcode": None},
        "pci:0018:01:00",
    ),
    # leptonai/gpud#1160
    (
        "NVRM: Xid (PCI:0000:01:00): 144, SAW_MVB Nonfatal XC0 i0 Link 0 (0x00000001 0x00000008 0x00000000 "
        "0x00000000 0x00000000 0x00000000)",
        {"xid": 144, "unit": "SAW_MVB", "severity": "Nonfatal", "status_word": 8},
        "pci:0000:01:00",
    ),
    # GB200 fixture: ragged spacing, no word list
    (
        "NVRM: Xid (PCI:0018:01:00): 149, NETIR_INT  Fatal   XC0 i0 Link -1",
        {"unit": "NETIR_INT", "severity": "Fatal", "link": -1, "intrinfo": None, "subcode": None},
        "pci:0018:01:00",
    ),
    # NVIDIA/nccl#2241 as pasted: the PCI id was elided, so no device
    (
        "kernel: NVRM: Xid (PCI:...): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (...)",
        {"xid": 145, "pci": None, "unit": "RLW_RXPIPE", "link": 11, "intrinfo": None},
        None,
    ),
    (
        "kernel: NVRM: Xid (PCI:...): 137, RLW_RXPIPE interrupt hit on link 11 on GPU0: PRIV Error",
        {"xid": 137, "link": 11, "xid_class": "app", "unit": None},
        None,
    ),
    # NVSentinel / HyperPod Xid 74 forms
    (
        "[449410.332316] NVRM: Xid (PCI:0003:00:00): 74, pid='<unknown>', name=<unknown>, NVLink: fatal "
        "error "
        "detected on link 14(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
        {"xid": 74, "link": 14, "xid_class": "nvlink", "pid": None, "proc": None},
        "pci:0003:00:00",
    ),
    (
        "kernel: NVRM: Xid (PCI:0000:b9:00): 74, pid=<unknown>, name=<unknown>, NVLink: fatal error detected "
        "on "
        "link 6(0x10000, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)",
        {"xid": 74, "link": 6, "pid": None, "proc": None},
        "pci:0000:b9:00",
    ),
    # gpud testdata (synthetic/test), GSP RPC timeout
    (
        "[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout "
        "after "
        "6s of waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).",
        {"xid": 119, "xid_class": "firmware", "proc": "nvidia-smi", "immediate_action": "RESET_GPU"},
        "pci:0000:9b:00",
    ),
    # journal short-iso prefix (spec format illustration)
    (
        "2026-11-02T10:03:07.123456+00:00 node-02 kernel: NVRM: Xid (PCI:0000:3B:00): 79, pid='<unknown>', "
        "name=<unknown>, GPU has fallen off the bus.",
        {"xid": 79, "pci": "0000:3b:00", "xid_class": "fallen_off_bus", "immediate_action": "RESTART_BM",
         "via": "log"},
        "pci:0000:3b:00",
    ),
]


@pytest.mark.parametrize(("line", "expected", "device"), XID_CASES)
def test_xid_line_forms(line: str, expected: dict[str, Any], device: str | None) -> None:
    d = one(XID, line)
    assert d.kind == "gpu.xid"
    assert d.device == device
    assert_fields(d, expected)
    # Every Xid event carries the table columns.
    for k in ("xid_class", "mnemonic", "immediate_action", "via", "detail", "pci"):
        assert k in d.fields


def test_xid_unknown_code_is_other() -> None:
    d = one(XID, "NVRM: Xid (PCI:0000:3b:00): 999, pid=1, name=x, something new")  # synthetic
    assert_fields(d, {"xid": 999, "xid_class": "other", "mnemonic": "UNKNOWN", "immediate_action": None})


# ------------------------------------------------- Xid 79 without an Xid line

def test_fallen_off_bus_after_xid_79_is_one_event() -> None:
    # leptonai/gpud sxid README, H100: the Xid line and the NVRM message are one report.
    lines = [
        "[6781741.548768] NVRM: GPU at PCI:0000:91:00: GPU-b6c3b2be-c55b-d076-fa0e-d464e4c7e08b",
        "[6781741.548776] NVRM: GPU Board Serial Number: 1653723052734",
        "[6781741.548779] NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
        "off "
        "the bus.",
        "[6781741.548783] NVRM: GPU 0000:91:00.0: GPU has fallen off the bus.",
        "[6781741.548786] NVRM: GPU 0000:91:00.0: GPU serial number is 1653723052734.",
    ]
    drafts = scan(XID, lines)
    assert len(drafts) == 1
    assert_fields(drafts[0], {"xid": 79, "via": "log", "pci": "0000:91:00"})


def test_fallen_off_bus_pop_os_journal_form() -> None:
    # pop-os/pop#3363: the short Xid 79 form (no pid/name) then the message.
    lines = [
        "Apr 29 19:24:11 EVE kernel: NVRM: GPU at PCI:0000:01:00: GPU-ccdb674e-0f5b-c678-9099-59940ccd0641",
        "Apr 29 19:24:11 EVE kernel: NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.",
        "Apr 29 19:24:11 EVE kernel: NVRM: GPU 0000:01:00.0: GPU has fallen off the bus.",
    ]
    drafts = scan(XID, lines)
    assert [d.fields["via"] for d in drafts] == ["log"]
    assert_fields(drafts[0], {"pid": None, "proc": None, "detail": "GPU has fallen off the bus."})


def test_fallen_off_bus_single_line_without_xid() -> None:
    d = one(XID, "Apr 29 19:24:11 EVE kernel: NVRM: GPU 0000:01:00.0: GPU has fallen off the bus.")
    assert d.device == "pci:0000:01:00"
    assert_fields(d, {"xid": 79, "via": "fallen_off_bus_message", "xid_class": "fallen_off_bus",
                      "mnemonic": "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "pid": None})


def test_fallen_off_bus_multi_line_block() -> None:
    # NVIDIA/NVSentinel#155, driver 570.158.01: three lines, no Xid at all.
    lines = [
        "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0",
        "               NVRM: (PCI ID: 10de:26b5) installed in this system has",
        "               NVRM: fallen off the bus and is not responding to commands.",
        "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).",
    ]
    drafts = scan(XID, lines)
    assert len(drafts) == 1
    assert drafts[0].device == "pci:0000:b3:00"
    assert_fields(drafts[0], {"xid": 79, "via": "fallen_off_bus_message", "pci": "0000:b3:00"})
    # the failed probe that follows is the same report (catalog/platform.yaml nvrm_messages: a companion)
    assert [d.kind for d in scan(gpu.EXTRACTORS, lines)] == ["gpu.xid"]


def test_fallen_off_bus_older_wording() -> None:
    # Bumblebee-Project/Bumblebee#554: closed drivers before the open modules, no Xid line
    lines = ["[   49.261458] NVRM: GPU at 0000:01:00.0 has fallen off the bus.",
             "[   49.261465] NVRM: os_pci_init_handle: invalid context!",
             "[   49.261472] NVRM: GPU at 0000:01:00.0 has fallen off the bus."]
    drafts = scan(XID, lines)
    assert [d.device for d in drafts] == ["pci:0000:01:00"]  # the repeat is the same report
    assert_fields(drafts[0], {"xid": 79, "via": "fallen_off_bus_message"})
    # near miss: the bus is named, not a GPU
    assert scan(XID, ["NVRM: GPU at 0000:01:00.0 has fallen asleep; the bus is fine"]) == []


def test_fallen_off_bus_other_gpu_is_not_deduplicated() -> None:
    lines = [  # synthetic: two GPUs behind one switch
        "NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.",
        "NVRM: GPU 0000:07:00.0: GPU has fallen off the bus.",
    ]
    assert [d.device for d in scan(XID, lines)] == ["pci:0000:06:00", "pci:0000:07:00"]


def test_fallen_off_bus_much_later_is_a_new_report() -> None:
    lines = ["NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus."]
    lines += ["noise"] * 100 + ["NVRM: GPU 0000:06:00.0: GPU has fallen off the bus."]
    assert len(scan(XID, lines)) == 2


@pytest.mark.parametrize(
    "line",
    [
        "NVRM: kgspRcAndNotifyAllChannels_IMPL: RC all channels for critical error 79.",
        "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).",
        "[Mon May  4 14:09:23 2026] NVRM: GPU3 _kgspRpcGspEventPmuHalted: Received signal from GSP that PMU "
        "has "
        "halted.",
        "NVRM: nvCheckOkFailedNoLog: Check failed: GPU lost from the bus [NV...",
        "node-02:1234:1290 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.2<0>",
        "Dec  2 11:38:46 worker4 kernel: [  218.250408] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! "
        "(0x24:0x72:1568)",
    ],
)
def test_xid_negatives(line: str) -> None:
    assert scan(XID, [line]) == []


def test_pending_multi_line_head_alone_emits_nothing() -> None:
    # An unsupported-GPU notice shares the head line; without the tail it is not a Xid 79.
    assert scan(XID, ["NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1eb8)"]) == []


# -------------------------------------------------------------------- SXid

def test_sxid_head_lines() -> None:
    d = one(SXID, "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted "
                  "PRIV "
                  "error (First)")
    assert d.kind == "gpu.sxid"
    assert d.device == "pci:0000:05:00"
    assert_fields(d, {"sxid": 12028, "severity": "Non-fatal", "sxid_class": "nonfatal", "link": 32,
                      "pci": "0000:05:00"})
    d = one(SXID, "[6781753.400584] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM "
                  "Fault Up")
    assert_fields(d, {"sxid": 20034, "severity": "Fatal", "sxid_class": "fatal", "link": 48,
                      "detail": "Fatal, Link 48 LTSSM Fault Up"})


def test_sxid_gpud_block_three_switches() -> None:
    # gpud sxid README, H100 HGX: each line is a different switch, two of them
    # are continuation lines whose head was cut: severity comes from the table.
    lines = [
        "[6781753.400584] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up",
        "[6781753.404848] nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Severity 1 Engine instance 60 "
        "Sub-engine instance 00",
        "[6781753.406566] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Data {0x10000000, 0x10000000, "
        "0x00000000, 0x10000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000}",
    ]
    drafts = scan(SXID, lines)
    assert [d.device for d in drafts] == ["pci:0000:06:00", "pci:0000:07:00", "pci:0000:05:00"]
    assert {d.fields["severity"] for d in drafts} == {"Fatal"}
    assert drafts[1].fields.get("link") is None


def test_sxid_continuation_of_same_switch_is_one_report() -> None:
    lines = [  # synthetic: the real head + continuation lines on one switch
        "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up",
        "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Severity 1 Engine instance 48 Sub-engine instance "
        "00",
        "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Data {0x10000000, 0x10000000, 0x00000000}",
    ]
    assert len(scan(SXID, lines)) == 1


def test_sxid_unknown_code() -> None:
    d = one(SXID, "nvidia-nvswitch0: SXid (PCI:0000:00:00.0): 99999, Non-fatal, Link 1 mystery")  # synthetic
    assert_fields(d, {"sxid_class": "nonfatal", "severity": "Non-fatal"})


def test_sxid_unknown_code_takes_the_printed_severity() -> None:
    # synthetic: a code newer than the table, printed Fatal, is a fatal SXid (gpu-nvswitch-fatal), not a symptom
    d = one(SXID, "nvidia-nvswitch3: SXid (PCI:0000:07:00.0): 99998, Fatal, Link 12 mystery")
    assert_fields(d, {"sxid_class": "fatal", "severity": "Fatal", "switch": 3, "link": 12})
    # and where the line prints none, an unknown code stays `other` (a symptom)
    d = one(SXID, "nvidia-nvswitch3: SXid (PCI:0000:07:00.0): 99997, Severity 1 Engine instance 12")
    assert_fields(d, {"sxid_class": "other"})


@pytest.mark.parametrize(("line", "cls"), [
    # a code of NVIDIA/NVSentinel's mapping on a continuation line that prints no severity: the table's class
    ("nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 19036, Severity 1 Engine instance 12 Sub-engine instance 00", "fatal"),
    ("nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 19039, Severity 0 Engine instance 12 Sub-engine instance 00",
     "nonfatal"),
    # the table and the driver disagree: the printed severity wins (catalog/sxid.yaml's header)
    ("nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 13003, Non-fatal, Link 4 crumbstore single-bit limit", "nonfatal"),
    ("nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 11006, Fatal, Link 4 ingress ECC soft limit", "fatal"),
    # both fatal, of two kinds: the table's kind stays
    ("nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 26006, Fatal, SOE halt", "always_fatal"),
    # a host notice stays one, whatever the line prints
    ("nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 10004, Fatal, NVSWITCH Temperature 96C | TSENSE WARN Threshold 95C",
     "other"),
])
def test_sxid_class_from_the_table_and_the_printed_severity(line: str, cls: str) -> None:
    # the codes and names are NVIDIA/NVSentinel sxiderrorsmapping.csv's; the lines' words ours, in the driver's layout
    assert one(SXID, line).fields["sxid_class"] == cls


def test_sxid_table_covers_nvidias_mapping() -> None:
    # every code of NVIDIA/NVSentinel's sxiderrorsmapping.csv but 28006, which it lists without a name
    from firstfault.catalog.tables import sxid_table
    families = {10: 8, 11: 47, 12: 51, 13: 8, 14: 18, 15: 20, 16: 3, 17: 8, 18: 20, 19: 84, 20: 38, 21: 10, 22: 13,
                23: 17, 24: 10, 25: 10, 26: 8, 27: 7, 28: 5, 29: 6, 30: 6}
    assert {f * 1000 + i for f, n in families.items() for i in range(1, n + 1)} <= set(sxid_table())


def test_sxid_ali_training_failure_is_fatal() -> None:
    # the code and name from NVIDIA/NVSentinel's sxiderrorsmapping.csv (25010 NVLIPT_LNK_ALI_TRAINING_FAIL, FATAL);
    # the line's layout is the driver's (NVSWITCH_PRINT_SXID), its words filled in by us
    d = one(SXID, "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 25010, Fatal, Link 17 ALI training failed")
    assert_fields(d, {"sxid_class": "fatal", "link": 17})
    d = one(SXID, "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 28002, Non-fatal, Link 17 OSFP thermal warning cleared")
    assert_fields(d, {"sxid_class": "nonfatal"})


# ----------------------------------------------------------- Fabric Manager

FM_CASES: list[tuple[str, dict[str, Any], str | None]] = [
    (
        "[Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 on NVSwitch "
        "pci "
        "bus id 00000000:86:00.0 physical id 3 port 33",
        {"fm_event": "nvswitch_fatal", "code": 20034, "port": 33,
         "detail": "detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 "
                   "physical id 3 port 33"},
        "pci:0000:86:00",
    ),
    (
        "[Jul 09 2024 18:14:07] [ERROR] [tid 12727] detected NVSwitch non-fatal error 12028 on fid 0 on "
        "NVSwitch "
        "pci bus id 00000000:86:00.0 physical id 3 port 61",
        {"fm_event": "nvswitch_nonfatal", "code": 12028, "port": 61},
        "pci:0000:86:00",
    ),
    (
        "[Sep 17 2024 06:01:46] [ERROR] [tid 1230079] failed to find the GPU handle 5410063385821516767 in "
        "the "
        "multicast team request setup 6130285411925746235.",
        {"fm_event": "multicast_failure", "code": None, "port": None},
        None,
    ),
    (
        "[Jul 19 2025 18:34:55] [ERROR] [tid 192] Fabric Manager detected GPU NVL Non Fatal error on :",
        {"fm_event": "gpu_nvl_nonfatal", "detail": "Fabric Manager detected GPU NVL Non Fatal error on :"},
        None,
    ),
    (  # synthetic: the fatal twin of the line above
        "[Jul 19 2025 18:34:55] [ERROR] [tid 192] Fabric Manager detected GPU NVL Fatal error on :",
        {"fm_event": "gpu_nvl_fatal"},
        None,
    ),
    (
        "[Jul 19 2025 18:34:57] [WARNING] [tid 134] Trunk port failure detected for switch GUID "
        "0xb0cf0e0300e42e00 "
        "and switch chassis sn 1825124190179, slot 7 port number 61 port GUID 0xb0cf0e0300e42e00 cage 7.",
        {"fm_event": "trunk_port_failure", "port": 61},
        None,
    ),
    (  # phatut/nmx-c-analyzers nmx_table_analyzer.py: the partition's line before the trunk ports' lines
        "[Jul 19 2025 18:34:57] [WARNING] [tid 134] Detected a trunk link failure event for partition Id 32766.",
        {"fm_event": "trunk_port_failure", "port": None},
        None,
    ),
    (  # phatut/nmx-c-analyzers docs/CORRELATION.md: the switch by its GUID, the port by its number
        "[Jul 19 2025 18:34:57] [WARNING] [tid 134] Trunk port failure detected for switch GUID 0xB0CF0E0300E31440 "
        "and switch chassis sn 1825124190178, slot 7 port number 61 port GUID 0xb0cf0e0300e31440 cage 7.",
        {"fm_event": "trunk_port_failure", "port": 61, "switch_guid": "0xb0cf0e0300e31440"},
        None,
    ),
    (  # phatut/nmx-c-analyzers nmx_table_analyzer.py: a port event, read but no cause (gpu-nvswitch-fatal's test)
        "[Jul 19 2025 18:34:55] [INFO] [tid 134] fabric manager received port down event on switch with GUID "
        "0xb0cf0e0300e31440, port GUID 0xb0cf0e0300e31440, and port num 12",
        {"fm_event": "port_down", "port": 12, "switch_guid": "0xb0cf0e0300e31440"},
        None,
    ),
    (  # kubernetes-sigs/dra-driver-nvidia-gpu#289: the IMEX daemon refusing its node configuration
        "[Mar 21 2025 20:45:38] [ERROR] [tid 39] No matching network interface found for any IP addresses in the "
        "node configuration file",
        {"fm_event": "imex_failed", "code": None},
        None,
    ),
    (  # synthetic around gpud's matcher text
        "[Mar 01 2025 10:00:00] [ERROR] [tid 12] detected number of NVSwitches don't match with any "
        "supported "
        "system topology, aborting fabric manager",
        {"fm_event": "topology_mismatch"},
        None,
    ),
]


@pytest.mark.parametrize(("line", "expected", "device"), FM_CASES)
def test_fabricmanager_lines(line: str, expected: dict[str, Any], device: str | None) -> None:
    d = one(FM, line, source="fabricmanager")
    assert d.kind == "gpu.fabricmanager"
    assert d.device == device
    assert_fields(d, expected)


def test_fabricmanager_with_no_switch_to_manage_is_nothing() -> None:
    # NVIDIA/gpu-operator#610 (journal, syslog prefix added): two A40s on a bridge, no NVSwitch; Fabric Manager has
    # nothing to do, and systemd's lines about its unit after it are the same non-event
    lines = [
        "Mar  3 10:00:01 gpu-node-1 nv-fabricmanager[4177]: request to query NVSwitch device information "
        "from "
        "NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]",
        "Mar  3 10:00:01 gpu-node-1 systemd[1]: nvidia-fabricmanager.service: Control process exited, "
        "code=exited, status=1/FAILURE",
        "Mar  3 10:00:01 gpu-node-1 systemd[1]: nvidia-fabricmanager.service: Failed with result "
        "'exit-code'.",
        "Mar  3 10:00:01 gpu-node-1 systemd[1]: Failed to start NVIDIA fabric manager service.",
    ]
    assert scan(FM, lines, source="syslog") == []
    assert all(helpers.claimed(line, "syslog") for line in lines)


def test_fabricmanager_unit_failure_is_one_event() -> None:
    # data-infra/cube-studio#29's journal (the start script's words, then systemd's), without the NOTHING_TO_DO line
    lines = [
        "Sep 18 03:19:01 ubuntu2404 nvidia-fabricmanager-start.sh[4753]: \"/usr/bin/nv-fabricmanager -c "
        "/usr/share/nvidia/nvswitch/fabricmanager.cfg\" failed! Exit code: 1",
        "Sep 18 03:19:01 ubuntu2404 systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, "
        "status=1/FAILURE",
        "Sep 18 03:19:01 ubuntu2404 systemd[1]: nvidia-fabricmanager.service: Failed with result 'exit-code'.",
        "Sep 18 03:19:01 ubuntu2404 systemd[1]: Failed to start NVIDIA fabric manager service.",
    ]
    drafts = scan(FM, lines, source="syslog")
    assert [d.fields["fm_event"] for d in drafts] == ["fm_failed"]


@pytest.mark.parametrize(
    "line",
    [
        "[Feb 25 2025 14:01:18] [INFO] [tid 1808] successfully setup multicast team for request id "
        "8331980469606044544.",
        "[Feb 25 2025 14:01:18] [INFO] [tid 1808] multicast group 0 is allocated.",
        "[Feb 25 2025 14:01:19] [INFO] [tid 1808] successfully released multicast team with handle 1234.",
        "nv-fabricmanager[1120]: Successfully configured all the available NVSwitches to route GPU NVLink "
        "traffic. "
        "NVLink Peer-to-Peer support will be enabled once the GPUs are successfully registered with the "
        "NVLink "
        "fabric.",
        "nvidia-fabricmanager-start.sh[1049]: Detected Pre-NVL5 system",
        "systemd[1]: nvidia-fabricmanager.service: Deactivated successfully.",
        "systemd[1]: nvidia-fabricmanager.service: Main process exited, code=exited, status=0/SUCCESS",
        "systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, status=0/SUCCESS",
        "node-02:1234:1290 [3] NCCL WARN Cuda failure 1 'invalid argument'",
        # synthetic after a public FM-log parser's docstring: an error Fabric Manager reports again as stale
        "[Oct 13 2025 18:14:38] [ERROR] [tid 202] Fabric Manager detected stale GPU NVL Fatal error on :",
        # the GPU NVL block's own lines (an FDT runbook's `grep -A 11` of fabricmanager.log): the head decides
        "errorCode : 0x06",
        "portDownReasonCode : 0x0A",
        # kubernetes-sigs/dra-driver-nvidia-gpu#289 / #1465: the IMEX daemon's banner and configuration at start
        "[Mar 21 2025 20:45:38] [INFO] [tid 39] IMEX version 570.00 is running with the following configuration "
        "options",
        "[Sep 18 2026 06:40:33] [INFO] [tid 77] Treating node config entry 'compute-domain-daemon-7555db58d7-0000' as "
        "a host name.",
        "WARNING: failed to open IMEX log file  errno = No such file or directory",
    ],
)
def test_fabricmanager_negatives(line: str) -> None:
    assert scan(FM, [line], source="fabricmanager") == []
    assert scan(FM, [line], source="application") == []


def test_fabricmanager_rows_cite_a_source() -> None:
    # every row of the table names who prints it and the public log or parser its words were read from
    from firstfault.catalog.tables import fabric_manager_messages
    rows = fabric_manager_messages()
    assert {r.event for r in rows} >= {"nvswitch_fatal", "gpu_nvl_fatal", "trunk_port_failure", "imex_failed"}
    assert all(";" in r.printed_by for r in rows)


def test_imex_startup_failure_then_systemd_is_one_event() -> None:
    # kubernetes-sigs/dra-driver-nvidia-gpu#289's error, then systemd's result line for the unit (synthetic)
    lines = [
        "[Mar 21 2025 20:45:38] [ERROR] [tid 39] No matching network interface found for any IP addresses in the "
        "node configuration file",
        "Mar 21 20:45:38 node-02 systemd[1]: nvidia-imex.service: Failed with result 'exit-code'.",
    ]
    drafts = scan(FM, lines, source="syslog")
    assert [d.fields["fm_event"] for d in drafts] == ["imex_failed"]


# Fabric Manager's start-up on NVL5+ systems and its global manager giving up on the fabric (catalog/platform.yaml
# `fabric_manager_messages`, the rows after the version mismatch): (source of the line, line). Each is fm_failed.
FM_STARTUP = [
    # spectrocloud/CanvOS#700: nvidia-fabricmanager-start.sh on an HGX B200, journal with its host and tag redacted
    ("spectrocloud/CanvOS#700", "Jul 20 16:15:36 edge-...:  Kernel module \"ib_umad\" has not been loaded, fabric "
     "manager cannot be started"),
    # the same refusal as other releases word it (public deployment notes of a B300 node)
    ("B300 deployment notes", "Kernel module \"ib_umad\" has not been loaded, fabric manager cannot start"),
    # the script without NVLSM's package (public deployment notes of a GB300 node), in the journal's form
    ("GB300 deployment notes", "Nov 02 09:12:44 gb300-01 nvidia-fabricmanager-start.sh[2210]: "
     "\"/opt/nvidia/nvlsm/sbin/nvlsm\" does not exist. Please install \"Nvidia NVLink Subnet Manager\" (nvlsm) "
     "package"),
    # siderolabs/docs#581: NVLSM under Talos' extension, behind talosctl's node address
    ("siderolabs/docs#581", "10.0.0.101: nvlsm: ibwarn: [15] umad_init: can't read ABI version from "
     "/sys/class/infiniband_mad/abi_version (No such file or directory): is ib_umad module loaded?"),
    # linux-rdma/rdma-core v64 libibumad/umad.c's IBWARN from get_abi_version (synthetic: NVLSM's unit in a journal)
    ("rdma-core v64 umad.c", "nvlsm[2211]: ibwarn: [2211] get_abi_version: can't read ABI version from "
     "/sys/class/infiniband_mad/abi_version (No such file or directory): is ib_umad module loaded?"),
    # pytorch/ci-infra#552: Fabric Manager's global instance giving up (the lines as the PR posts them)
    ("pytorch/ci-infra#552", "[ERROR] not all local fabric manager instances finished their configuration"),
    ("pytorch/ci-infra#552", "[ERROR] fabric manager error handler is called for unhandled config error type 8"),
    # a public runbook's quote from a p5 whose fabric stayed `In Progress`
    ("p5 runbook", "[Mar 05 2025 10:01:02] [ERROR] [tid 841] failed to configure all the available GPUs or "
     "NVSwitches"),
]


@pytest.mark.parametrize(("origin", "line"), FM_STARTUP, ids=[o for o, _ in FM_STARTUP])
def test_fabricmanager_startup_failures(origin: str, line: str) -> None:
    d = one(FM, line, source="syslog")
    assert d.kind == "gpu.fabricmanager"
    assert d.fields["fm_event"] == "fm_failed"


@pytest.mark.parametrize(
    "line",
    [
        # linux-rdma/rdma-core#393: ibacm's unit, the same libibumad warning: not Fabric Manager's stack
        "ibacm[1796]: ibwarn: [1796] umad_init: can't read ABI version from /sys/class/infiniband_mad/abi_version "
        "(No such file or directory): is ib_umad module loaded?",
        # spectrocloud/CanvOS#700: the script's progress and its advice after the refusal
        "Jul 20 16:15:36 edge-...:  Polling for at least one Infiniband device before starting Fabric Manager...",
        "Jul 20 16:15:36 edge-...:  Using device mlx5_10, port 0x0820e703007b9d9a",
        "Jul 20 16:15:36 edge-...:  Detected NVL5+ system",
        "Jul 20 16:15:36 edge-...:  Please run \"modprobe ib_umad\" to load the module",
        # the script's start of NVLSM, and Fabric Manager's success (the near twin of its failure summary)
        "nvidia-fabricmanager-start.sh[2210]: Started \"Nvidia NVLink Subnet Manager\"",
        "nv-fabricmanager[2214]: Successfully configured all the available GPUs and NVSwitches to route NVLink "
        "traffic",
        # another program's "failed! Exit code" (a CI script's words), not the start-up script's report of FM's exit
        "Build & Test FAILED! Exit code: 1",
        "\"/usr/local/bin/transcode -c job.cfg\" failed! Exit code: 2",
    ],
)
def test_fabricmanager_startup_near_misses(line: str) -> None:
    assert scan(FM, [line], source="syslog") == []
    assert scan(FM, [line], source="application") == []


def test_fabricmanager_startup_refusal_then_systemd_is_one_event() -> None:
    # spectrocloud/CanvOS#700's journal (its progress, the refusal), then systemd's lines for the precheck (synthetic)
    lines = [
        "Jul 20 16:15:36 edge-...:  Polling for at least one Infiniband device before starting Fabric Manager...",
        "Jul 20 16:15:36 edge-...:  Detected NVL5+ system",
        "Jul 20 16:15:36 edge-...:  Kernel module \"ib_umad\" has not been loaded, fabric manager cannot be started",
        "Jul 20 16:15:36 edge-b200 systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, "
        "status=1/FAILURE",
        "Jul 20 16:15:36 edge-b200 systemd[1]: nvidia-fabricmanager.service: Failed with result 'exit-code'.",
    ]
    drafts = scan(FM, lines, source="syslog")
    assert [d.fields["fm_event"] for d in drafts] == ["fm_failed"]
    assert "ib_umad" in str(drafts[0].fields["detail"])


# ------------------------------------------------------------ reset required

def test_reset_required_assertion() -> None:
    # kubernetes-sigs/dra-driver-nvidia-gpu#982, GB200
    d = one(RESET, "[373871.354096] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required "
                   "[NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:2827")
    assert d.kind == "gpu.reset_required"
    assert str(d.fields["detail"]).startswith("NVRM: nvAssertOkFailedNoLog")


def test_reset_required_gsp_alloc_status() -> None:
    # scitix/sichek#51
    line = ("[Sun Jan 11 09:52:01 2026] NVRM: rpcRmApiAlloc_GSP: GspRmAlloc failed: hClient=0xc1d1a616; "
            "hParent=0x5c000054; hObject=0x5c00005b; hClass=0x0000c86f; paramsSize=0x00000170; "
            "paramsStatus=0x00000062; status=0x00000062")
    assert one(RESET, line).kind == "gpu.reset_required"
    other = line.replace("status=0x00000062", "status=0x00000051").replace("Status=0x00000062", "Status=0x51")
    assert scan(RESET, [other]) == []


# ------------------------------------------- the driver's messages without an Xid (platform.yaml nvrm_messages)

# Lines as posted in public threads (none of them a tests/wild bundle's): (thread, line, kind, reason or class, device)
NVRM_POSTED = [
    ("ublue-os/bazzite#4449", "Mar 21 21:42:01 kernel: NVRM: GPU0 _kgspRpcRecvPoll: GSP RM heartbeat timed out",
     "gpu.reset_required", "firmware_hung", None),
    ("NVIDIA/open-gpu-kernel-modules#1230", "[   24.302465] NVRM: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out, "
     "currentTimeMs 812751949 heartbeat 1899482 heartbeatWithOffsetMs 812745879 diff 6070 timeout 5200",
     "gpu.reset_required", "firmware_hung", None),
    ("Cyridd/cmpunlocker#4", "[   21.091872] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:894)",
     "gpu.reset_required", "init_failed", "pci:0000:01:00"),
    ("NVIDIA/cuda-samples#104", "Feb 09 15:47:06 debian kernel: NVRM: GPU 0000:13:00.0: RmInitAdapter failed! "
     "(0x26:0x56:1463)", "gpu.reset_required", "init_failed", "pci:0000:13:00"),
    ("Bumblebee-Project/Bumblebee#722", "[87669.726564] NVRM: RmInitAdapter failed! (0x26:0xffff:1375)",
     "gpu.reset_required", "init_failed", None),
    ("NVIDIA/open-gpu-kernel-modules#393", "              NVRM: installed in this system is not supported by the",
     "gpu.nvml_error", "driver", None),
    ("pop-os/cosmic-epoch#3411", "               NVRM: installed in this system is not supported by open",
     "gpu.nvml_error", "driver", None),
    ("MrMEEE/bumblebee-Old-and-abbandoned#583", "[  652.483305] NVRM: in this system is not supported by the 280.13 "
     "NVIDIA Linux", "gpu.nvml_error", "driver", None),
    ("MrMEEE/bumblebee-Old-and-abbandoned#537", "Jul 31 14:10:32 Demitrius kernel: [ 2739.854587] NVRM: in this system "
     "is not supported by the 280.04 NVIDIA Linux", "gpu.nvml_error", "driver", None),
    ("Bumblebee-Project/Bumblebee#561", "NVRM: installed in this system is not supported by the 331.49",
     "gpu.nvml_error", "driver", None),
    ("openwall/john#5835", "[   35.564060] NVRM: nvCheckOkFailedNoLog: Check failed: GPU lost from the bus "
     "[NV_ERR_GPU_IS_LOST] (0x0000000F) returned from nvdEngineDumpCallbackHelper(pGpu, pPrbEnc, pNvDumpState, "
     "pEngineCallback) @ nv_debug_dump.c:274", "gpu.nvml_error", "lost", None),
    ("NVIDIA/open-gpu-kernel-modules#688", "Feb 17 08:00:34 abggdna-DGX-Station-A100 kernel: NVRM: "
     "nvAssertOkFailedNoLog: Assertion failed: GPU lost from the bus [NV_ERR_GPU_IS_LOST] (0x0000000F) returned "
     "from rmStatus @ kernel_ce_gv100.c:106", "gpu.nvml_error", "lost", None),
    ("ValveSoftware/SteamOS#209", "[  441.170986] NVRM: No NVIDIA graphics adapter found!", "gpu.nvml_error",
     "no_devices", None),
    ("todxx/tdxminer#29", "[  560.790281] NVRM: No NVIDIA graphics adapter found!", "gpu.nvml_error", "no_devices",
     None),
]


@pytest.mark.parametrize(("thread", "line", "kind", "reason", "device"), NVRM_POSTED,
                         ids=[f"{t}-{i}" for i, (t, *_) in enumerate(NVRM_POSTED)])
def test_nvrm_messages_as_posted(thread: str, line: str, kind: str, reason: str, device: str | None) -> None:
    d = one(RESET, line)
    assert d.kind == kind
    assert d.fields["reason" if kind == "gpu.reset_required" else "error"] == reason
    text = d.fields["detail" if kind == "gpu.reset_required" else "message"]
    assert isinstance(text, str) and text.startswith("NVRM")  # the driver's words, without the log's prefix
    assert d.device == device


def test_nvrm_the_driver_format_strings() -> None:
    # kernel-open/nvidia/nv.c's format strings, filled in (no thread outside tests/wild posts these wordings)
    for line, error in (("NVRM: The NVIDIA probe routine was not called for 2 device(s).", "driver"),
                        ("NVRM: No NVIDIA GPU found.", "no_devices")):
        d = one(RESET, line)
        assert (d.kind, d.fields["error"]) == ("gpu.nvml_error", error)


def test_nvrm_banner_and_companion_read_as_nothing() -> None:
    # NVIDIA/open-gpu-kernel-modules#1064 and #1230: every load prints the banner; osapi.c's crash-dump note
    # follows a fault that the driver reported in its own words before it
    for line in ("[    8.108512] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.58.03  Release Build  "
                 "(nixbld@)  ",
                 "[   14.650646] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.71.05  Release Build  "
                 "(root@epyc)  Fri Jul  3 11:27:00 AM UTC 2026",
                 "NVRM: A GPU crash dump has been created. If possible, please run",
                 # NVIDIA/open-gpu-kernel-modules#393: after the line that says why
                 "[  +0.000012] NVRM: The NVIDIA probe routine failed for 1 device(s)."):
        assert holds_literal(RESET, line)
        assert scan(gpu.EXTRACTORS, [line]) == []
        _, ctx = Extraction((RESET,)).drafts(Candidate("kernel", "nodes/n1/kern.log", 1, "n1", None, None, line))
        assert ctx is not None and ctx.claimed  # understood: not an unrecognized line


def test_nvrm_repeats_are_one_report() -> None:
    # the heartbeat pair of ublue-os/bazzite#4449 (one poll prints both), then the next poll's
    lines = [
        "Mar 21 21:42:01 kernel: NVRM: GPU0 _kgspIsHeartbeatTimedOut: Heartbeat timed out, currentTimeMs 322227881 "
        "heartbeat 0 heartbeatWithOffsetMs 318098841 diff 4129040 timeout 5200",
        "Mar 21 21:42:01 kernel: NVRM: GPU0 _kgspRpcRecvPoll: GSP RM heartbeat timed out",
        "Mar 21 21:43:01 kernel: NVRM: GPU0 _kgspRpcRecvPoll: GSP RM heartbeat timed out",
    ]
    drafts = scan(RESET, lines)
    assert [(d.kind, d.fields["reason"]) for d in drafts] == [("gpu.reset_required", "firmware_hung")]


@pytest.mark.parametrize("line", [
    # constructed near misses: someone quoting the driver, not the driver
    "Dec  2 11:38:46 node-02 gpu-check[811]: hint: if dmesg says 'NVRM: The NVIDIA probe routine was not called "
    "for N device(s)', blacklist nouveau",
    'Dec  2 11:38:46 node-02 ticketd[90]: opened INC-1: "NVRM: GPU0 _kgspRpcRecvPoll: GSP RM heartbeat timed out"',
    # the words without the driver's NVRM before them: another program's
    "Dec  2 11:38:46 node-02 gpu-probe[77]: No NVIDIA GPU found, falling back to CPU",
    "Dec  2 11:38:46 node-02 healthd[12]: check GSP RM heartbeat timed out after 30s",
    # a GSP allocation failing with another status (scitix/sichek#51's line, status changed) is not a reset
    "[Sun Jan 11 09:52:01 2026] NVRM: rpcRmApiAlloc_GSP: GspRmAlloc failed: hClient=0xc1d1a616; hParent=0x5c000054; "
    "hObject=0x5c00005b; hClass=0x0000c86f; paramsSize=0x00000170; paramsStatus=0x00000000; status=0x00000051",
    # read by the NVML table and by XidExtractor, not twice
    "NVRM: API mismatch: the client has the version 535.54.03, but",
])
def test_nvrm_near_misses(line: str) -> None:
    assert scan(RESET, [line]) == []


def test_nvrm_as_a_collector_stored_it() -> None:
    # the driver's line as a field's value (constructed: journalctl -o json's MESSAGE, logfmt's msg=) is still the
    # driver's; the line itself is ublue-os/bazzite#4449's
    for line in ('{"SYSLOG_IDENTIFIER":"kernel","MESSAGE":"NVRM: GPU0 _kgspRpcRecvPoll: GSP RM heartbeat timed out"}',
                 'level=warn src=kmsg msg="NVRM: GPU0 _kgspRpcRecvPoll: GSP RM heartbeat timed out"'):
        assert one(RESET, line).fields["reason"] == "firmware_hung"


def test_nvrm_in_an_application_log_is_a_copy() -> None:
    # the same line printed by the job (a health check echoing dmesg) is not the kernel's: no extractor reads it
    line = "Mar 21 21:42:01 kernel: NVRM: GPU0 _kgspRpcRecvPoll: GSP RM heartbeat timed out"
    assert "application" not in RESET.sources
    assert [d for d in scan(gpu.EXTRACTORS, [line], source="application") if d.kind == "gpu.reset_required"] == []


def test_nvrm_table_rows_are_checked() -> None:
    rows = nvrm_messages()
    assert len({r.text for r in rows}) == len(rows)
    assert all(r.text in RESET.literals for r in rows)
    with pytest.raises(ValueError, match="reason 'lost' is not one of reset_required"):
        NvrmMessage(text="GPU has fallen", event="reset_required", reason="lost", printed_by="kernel-open/nvidia/nv.c")
    with pytest.raises(ValueError, match="narrows a reset_required row only"):
        NvrmMessage(text="No NVIDIA GPU found", event="nvml_error", reason="no_devices", status=1,
                    printed_by="kernel-open/nvidia/nv.c")


# --------------------------------------------------------------- the tables

def test_xid_table_covers_the_catalog() -> None:
    table = xid_table()
    assert sorted(table) == list(range(1, 173))
    assert {i.xid_class for i in table.values()} <= XID_CLASSES
    assert xid_table() is table  # loaded once
    expected = {
        13: "app", 31: "app", 43: "app", 45: "sympathetic", 48: "memory", 62: "firmware", 63: "memory_info",
        64: "memory", 74: "nvlink", 79: "fallen_off_bus", 92: "memory_info", 94: "memory", 95: "memory",
        119: "firmware", 120: "firmware", 121: "informational", 136: "nvlink", 140: "memory", 143: "firmware",
        154: "recovery", 155: "nvlink", 158: "firmware", 167: "pcie", 171: "memory", 172: "memory",
    }
    expected.update({c: "nvlink5" for c in range(144, 151)})
    assert {c: xid_class(c) for c in expected} == expected
    info = xid_info(149)
    assert info is not None
    assert (info.mnemonic, info.immediate, info.investigatory) == (
        "NVLINK_NETIR_ERROR", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR")
    newer = xid_info(168)
    assert newer is not None and newer.immediate is None and newer.xid_class == "memory"
    assert xid_class(500) == "other"


def test_sxid_table() -> None:
    assert sxid_class(20034) == "fatal"
    assert sxid_class(12028) == "nonfatal"
    assert sxid_class(23005) == "always_fatal"
    assert sxid_class(22003) == "always_fatal"
    assert sxid_class(10004) == "other"
    assert sxid_class(1) == "other"
    assert len(sxid_table()) > 80


def test_extractor_declarations() -> None:
    names = {e.name for e in gpu.EXTRACTORS}
    assert names == {"gpu.xid", "gpu.xid_relay", "gpu.sxid", "gpu.fabricmanager", "gpu.nvrm", "gpu.nvml", "gpu.accel",
                     "gpu.smi_query", "gpu.dcgm_diag", "gpu.nvlink_smi",
                     "gpu.rocm_smi_ras"}
    for e in gpu.EXTRACTORS:
        assert e.literals and e.sources
        for w in e.literals:
            assert len(w) >= 5 and w.strip().lower() not in {"error", "fatal", "failed", "nvrm"}
    assert "fabricmanager" in FM.sources and "kernel" in FM.sources
    assert XID.sources == frozenset({"kernel", "syslog"})


# ------------------------------------------------- Xid after a link's own error

# NVIDIA/nccl#2241 (reporter's dmesg, PCI redacted as posted)
_RLW_145 = "kernel: NVRM: Xid (PCI:...): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (...)"
_RLW_137 = "kernel: NVRM: Xid (PCI:...): 137, RLW_RXPIPE interrupt hit on link 11 on GPU0: PRIV Error"


def test_xid_137_after_a_link_error_on_the_same_link_names_it_as_cause() -> None:
    drafts = scan(XID, [_RLW_145, _RLW_137])
    assert [d.fields["xid"] for d in drafts] == [145, 137]
    assert_fields(drafts[1], {"link": 11, "cause_xid": 145, "cause_class": "nvlink5", "cause_link": True})
    assert "cause_xid" not in drafts[0].fields


def test_xid_137_on_another_link_or_gpu_names_no_cause() -> None:
    other_link = _RLW_145.replace("Link 11", "Link 3")
    assert "cause_xid" not in scan(XID, [other_link, _RLW_137])[1].fields
    # synthetic: the same link number on another GPU
    a = "NVRM: Xid (PCI:0000:1b:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (0x0 0x0 0x0 0x0 0x0 0x0)"
    b = "NVRM: Xid (PCI:0000:9b:00): 137, RLW_RXPIPE interrupt hit on link 11 on GPU3: PRIV Error"
    assert "cause_xid" not in scan(XID, [a, b])[1].fields
    # a 137 first, the link error after it: the order is the other way round
    assert "cause_xid" not in scan(XID, [_RLW_137, _RLW_145])[0].fields


def test_printed_cause_carries_the_cause_class() -> None:
    d = one(XID, "kernel: NVRM: Xid (PCI:0000:ed:00): 45, pid=1818992, name=python3, Ch 0000000c caused by "
                 "previous Xid 145")
    assert_fields(d, {"cause_xid": 145, "cause_class": "nvlink5"})
    assert "cause_link" not in d.fields


# ----------------------------------------------------- NVML / nvidia-smi

NVML = gpu.NvmlErrorExtractor()

NVML_CASES: list[tuple[str, str, str | None]] = [
    # pytorch/pytorch#190132 (CI job output)
    ("No devices were found", "no_devices", None),
    # synthetic below: nvidia-smi's, NVML's and nvidia-container-cli's wordings of catalog/platform.yaml
    ("Failed to initialize NVML: Unknown Error", "unknown", None),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
     "NVIDIA driver is installed and running.", "driver", None),
    ("Failed to initialize NVML: Driver/library version mismatch", "driver", None),
    ("Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  Reboot the system to recover "
     "this GPU", "lost", "pci:0000:3b:00"),
    ("Error: failed to start container \"cuda\": nvidia-container-cli: initialization error: nvml error: driver "
     "not loaded: unknown", "driver", None),
    ("nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared "
     "object file: no such file or directory: unknown", "driver", None),
    # rwth-i6/returnn#1486 (nvidia-smi on the node): one named GPU, an unnamed error
    ("Unable to determine the device handle for GPU0000:03:00.0: Unknown Error", "unresponsive", "pci:0000:03:00"),
    # synthetic: nvidia-smi's table cell it could not read
    ("| N/A   ERR!  P0    ERR! / 400W |  80000MiB / 81559MiB |    ERR!     Default |", "unresponsive", None),
    # utkuozdemir/nvidia_gpu_exporter#393: one ERR!, at the row's head, where nvidia-smi marks a GPU whose driver asks
    # for a recovery action (its `nvidia-smi -q`: GPU Recovery Action: Reset)
    ("|ERR!   68C    P2             99W /  130W |       1MiB /  20475MiB |     93%      Default |", "unresponsive",
     None),
    # NVIDIA/gpu-operator#523 (kubelet journal): the container CLI's driver timeout is the node's driver set-up
    # (persistence, catalog/platform.yaml 1009), not a GPU that stopped answering
    ("May 05 14:13:15 ip-10-51-52-158.us-west-2.compute.internal kubelet[33460]: nvidia-container-cli: detection "
     "error: driver error: timed out: unknown", "driver", None),
    # NVIDIA/nvidia-container-toolkit#202 (docker's error): the later spelling
    ("nvidia-container-cli: initialization error: driver rpc error: timed out: unknown.", "driver", None),
    # synthetic: NVML's own timeout for one GPU (nvmlErrorString(NVML_ERROR_TIMEOUT)) stays the GPU not answering
    ("Unable to determine the device handle for GPU0000:3B:00.0: Timeout", "unresponsive", "pci:0000:3b:00"),
    # the Kubernetes device plugin in a pod without the driver's libraries: go-nvml's spelling of a code (a k3s
    # guide's copy of the plugin's log), and the older binding's and go-nvlib's words for 12 (the plugin's log as a
    # Kubernetes setup note quotes it)
    ("Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND", "driver", None),
    ("could not load NVML library: libnvidia-ml.so.1: cannot open shared object file", "driver", None),
]


@pytest.mark.parametrize(("line", "cls", "device"), NVML_CASES)
def test_nvml_errors(line: str, cls: str, device: str | None) -> None:
    d = one(NVML, line, source="application")
    assert d.kind == "gpu.nvml_error"
    assert d.fields["error"] == cls
    assert d.device == device


@pytest.mark.parametrize(
    "line",
    [
        # the words without NVML's or nvidia-smi's anchor: anyone may print them
        "RuntimeError: Unknown Error in data loader",
        "warning: GPU is lost track of in the profiler",
        # nvidia-smi's healthy header
        "| NVIDIA-SMI 535.183.01             Driver Version: 535.183.01   CUDA Version: 12.2     |",
        # go-nvml's spelling of a code without NVML's anchor (synthetic)
        "ERROR_LIBRARY_NOT_FOUND while loading plugins",
        # a timeout that is not NVML's (synthetic)
        "nvidia-container-cli: version 1.14.3, Timeout not set",
        # "ERR!" outside nvidia-smi's table (synthetic)
        "worker 3: ERR! retrying the download",
        # Azure/azhpc-diagnostics#77: one reading (the power draw) failed while the GPU answered the rest of its row;
        # its developers: transient, no action to take
        "| N/A   29C    P0   ERR! / 250W |    593MiB / 16160MiB |      0%      Default |",
    ],
)
def test_nvml_negatives(line: str) -> None:
    assert scan(NVML, [line], source="application") == []


def test_a_counter_the_gpu_does_not_offer_is_understood_and_no_failure(make_bundle: BundleMaker) -> None:
    # triton-inference-server/server#73: TensorRT Inference Server's metrics thread on a GPU without the counters,
    # NVML's return code by its number (NVML_ERROR_NOT_SUPPORTED), at glog's error level every 2 s
    lines = ["E0204 21:50:51.341949 44 metrics.cc:213] failed to get power limit for GPU 0, NVML_ERROR 3",
             "E0204 21:50:51.342005 44 metrics.cc:225] failed to get power usage for GPU 0, NVML_ERROR 3",
             "E0204 21:50:51.342018 44 metrics.cc:238] failed to get energy consumption for GPU 0, NVML_ERROR 3"]
    assert helpers.events(lines) == []
    assert all(helpers.claimed(line, "application") for line in lines)
    wl = {"apiVersion": "firstfault/v1", "workload": {"id": "t", "scheduler": "static", "nodes": ["node-001"]},
          "sources": [{"kind": "application", "path": "app/server.log"}]}
    v = Analyzer().analyze_path(str(make_bundle({"app/server.log": "".join(x + "\n" for x in lines)}, wl)))
    assert (v.outcome, v.attributed_domain) == ("unknown", "none")


@pytest.mark.parametrize("line", [
    # triton-inference-server/server#714: the same metrics thread on a Jetson, NVML's code 9 with no anchor of the
    # table's words: the client going without NVML, no driver the job lacked
    "E0821 06:27:34.280622 6 metrics.cc:147] failed to initialize NVML: NVML_ERROR 9",
    # a code the table does not hold (synthetic)
    "E0204 21:50:51.341949 44 metrics.cc:213] failed to get power limit for GPU 0, NVML_ERROR 42",
])
def test_near_miss_nvml_codes_by_number_that_name_nothing(line: str) -> None:
    assert [e for e in helpers.events([line]) if e.kind == "gpu.nvml_error"] == []
    assert not helpers.claimed(line, "application")


def test_nvml_repeat_of_one_failure_is_one_event() -> None:
    drafts = scan(NVML, ["No devices were found", "No devices were found"], source="application")
    assert len(drafts) == 1


def test_platform_tables_load_and_hold_their_keys() -> None:
    from firstfault.catalog.tables import (
        driver_libraries,
        ib_wc_status_table,
        ipmi_bus_events,
        nccl_transports,
        nvml_table,
    )

    assert nvml_table()[18].nvml_class == "driver" and nvml_table()[15].nvml_class == "lost"
    assert {r.nvml_class for r in nvml_table().values()} == {"driver", "no_devices", "lost", "unresponsive", "unknown",
                                                           "not_supported"}
    assert sorted(ib_wc_status_table()) == list(range(1, 22))
    assert ib_wc_status_table()[12].wc_class == "path" and ib_wc_status_table()[4].wc_class == "local_access"
    assert nccl_transports()["transport/nvls.cc"] == "nvls"
    assert "libcuda.so" in driver_libraries()
    assert {e.severity for e in ipmi_bus_events()} == {"uncorrected_fatal", "uncorrected_nonfatal", "corrected"}
