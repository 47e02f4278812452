"""Memory and accelerator faults in the words of the printers other than the NVIDIA driver's Xid line (brief hw42):
DCGM's failure codes, Intel's GPU drivers, amdgpu's poison, the GSP RPC channel failing without an Xid
(catalog/accel.yaml, catalog/platform.yaml `nvrm_messages`), and the host's memory errors in the words of rasdaemon,
the kernel's memory-failure handler and user-space memory testers (catalog/platform.yaml `firmware_memory_events`).

Lines marked with a source file follow that file's format string; lines marked with a thread or write-up are as posted.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.collect.scan import Extraction, all_line_extractors
from firstfault.model import Event
from tests.conftest import BundleMaker
from tests.extract import helpers
from tests.extract.helpers import assert_cause_with_collective_fallout


def feed(lines: list[str], source: str = "kernel") -> list[Event]:
    return helpers.events(lines, source, file="f.log", node=None if source == "application" else "n1")


def diag(lines: list[str]) -> list[Event]:
    """A job's output to its end: `dcgmi diag`'s results are held until the reasons under them are read, and what the
    stream's end decides is given back there (collect/scan.py `Extraction.open_ends`)."""
    ex = Extraction(all_line_extractors())
    return [*helpers.events(lines, "application", file="f.log", extraction=ex), *ex.open_ends()]


claimed = helpers.claimed


def accel(events: list[Event]) -> list[tuple[str, str, str, str]]:
    return [(str(e.fields["vendor"]), str(e.fields["driver"]), str(e.fields["accel_class"]), str(e.fields["reason"]))
            for e in events if e.kind == "gpu.accel_error"]


# ---------------------------------------------------------------- DCGM (NVIDIA/DCGM dcgmlib/dcgm_errors.h)

@pytest.mark.parametrize(("line", "cls", "reason"), [
    # the code's name before DCGM_FR_VOLATILE_DBE_DETECTED_MSG
    ("nv-hostengine[2211]: DCGM_FR_VOLATILE_DBE_DETECTED: Detected 2 volatile double-bit ECC error(s) in GPU 5.",
     "memory", "volatile_dbe"),
    # the message alone, as `dcgmi health -c` prints it in its table
    ("|                     | Detected 2 volatile double-bit ECC error(s) in GPU 0.  |", "memory", "volatile_dbe"),
    ("GPU 3 had uncorrectable memory errors and row remapping failed.", "memory", "row_remap_failure"),
    ("GPU 3 had memory errors and row remappings are pending", "memory", "row_remap_pending"),
    ("GPU 3 had uncorrectable memory errors and 2 rows were remapped", "memory", "uncorrectable_row_remap"),
    ("| Warning                   | GPU 1 Found 3 faulty memory elements on GPU 1     |", "memory", "faulty_memory"),
    ("error: DCGM_FR_ROW_REMAP_FAILURE on GPU 2", "memory", "row_remap_failure"),
    # corrected errors and the history of retired pages: DCGM says to monitor
    ("More than 10 single-bit ECC error(s) detected in GPU 0 Volatile SBEs: 12", "memory_info", "volatile_sbe"),
    ("DCGM_FR_PENDING_PAGE_RETIREMENTS: A pending retired page has been detected in GPU 5.", "memory_info",
     "pending_retirement"),
    ("GPU 3's NvLink link 5 is currently down", "link", "nvlink_down"),
])
def test_dcgm_failure_codes_and_messages(line: str, cls: str, reason: str) -> None:
    assert accel(feed([line], "application")) == [("nvidia", "dcgm", cls, reason)]


@pytest.mark.parametrize("line", [
    # near misses: a pending retirement without a DBE is DCGM's monitor advice, not the DBE row; the same words of
    # another program; the code of a state that is no fault
    "DCGM_FR_PENDING_PAGE_RETIREMENTS: A pending retired page has been detected in GPU 5.",
    "More than 10 single-bit ECC error(s) detected in GPU 0 Volatile SBEs: 12",
])
def test_dcgm_corrected_counts_are_no_memory_fault(line: str) -> None:
    assert all(c != "memory" for _v, _d, c, _r in accel(feed([line], "application")))


def test_dcgm_words_that_name_no_fault_give_nothing() -> None:
    # DCGM_FR_ECC_DISABLED_MSG, DCGM_FR_PERSISTENCE_MODE_MSG: no row
    assert feed(["Skipping test Memory because ECC is not enabled on GPU 0",
                 "Persistence mode for GPU 0 is disabled."], "application") == []


# ---------------------------------------------------------------- Intel's GPU drivers

def test_xe_engine_reset_and_job_timeout() -> None:
    # drivers/gpu/drm/xe/xe_guc_submit.c, as an xe_exec_reset run posted it
    evs = feed(["[12725.787350] xe 0000:03:00.0: [drm] GT0: Engine reset: engine_class=rcs, logical_mask: 0x1, "
                "guc_id=2",
                "[12725.787377] xe 0000:03:00.0: [drm] GT0: Timedout job: seqno=4294967169, lrc_seqno=4294967169, "
                "guc_id=2, flags=0x0 in xe_exec_reset [26019]",
                "[12725.815980] xe 0000:03:00.0: [drm] Xe device coredump has been created"])
    assert accel(evs) == [("intel", "xe", "hang", "engine_reset"), ("intel", "xe", "hang", "job_timeout")]
    assert {e.device for e in evs} == {"pci:0000:03:00"}


def test_i915_gpu_hang_and_its_companions() -> None:
    # drivers/gpu/drm/i915/i915_gpu_error.c and gt/intel_reset.c, in the order a posted dmesg holds them
    evs = feed(["[ 1831.944273] i915 0000:00:02.0: [drm] GPU HANG: ecode 12:1:8ed9fff2, in python3 [6414]",
                "[ 1831.944340] i915 0000:00:02.0: [drm] Resetting chip for stopped heartbeat on rcs0",
                "[ 1831.944474] i915 0000:00:02.0: [drm] python3[6414] context reset due to GPU hang"])
    assert accel(evs) == [("intel", "i915", "hang", "gpu_hang")]


def test_near_miss_intel_companions_alone_are_understood_and_nothing() -> None:
    line = "[ 1831.944474] i915 0000:00:02.0: [drm] python3[6414] context reset due to GPU hang"
    assert feed([line]) == [] and claimed(line)


def test_a_hang_after_a_memory_error_on_the_device_is_its_consequence() -> None:
    evs = feed(["amdgpu 0000:03:00.0: amdgpu: 2 uncorrectable hardware errors detected in umc block",
                "i915 0000:03:00.0: [drm] GPU HANG: ecode 12:1:8ed9fff2, in python3 [6414]"])
    hang = [e for e in evs if e.fields.get("reason") == "gpu_hang"]
    assert hang and hang[0].fields.get("cause_class") == "memory"


# ---------------------------------------------------------------- amdgpu's poison

def test_amdgpu_poison_created_is_a_memory_info_not_a_fault() -> None:
    # drivers/gpu/drm/amd/amdgpu/amdgpu_ras.c, the poison creation handler
    assert accel(feed(["amdgpu 0000:03:00.0: amdgpu: Poison is created, no user action is needed."])) == [
        ("amd", "amdgpu", "memory_info", "ras_poison_created")]


# ---------------------------------------------------------------- the GSP RPC channel without an Xid

def test_rpc_send_failed_is_the_gsp_not_answering() -> None:
    evs = feed(["NVRM: GPU0 _issueRpcAndWait: rpcSendMessage failed with status 0x00000065 for fn 76 sequence 12!"])
    assert [(e.kind, e.fields["reason"]) for e in evs] == [("gpu.reset_required", "firmware_hung")]


def test_rpc_send_failed_with_gpu_is_lost_is_the_gpu_off_the_bus() -> None:
    # a public GPU crash write-up's journal: the teardown's RPCs after Xid 79 (status 0x0f: NV_ERR_GPU_IS_LOST)
    evs = feed(["Oct  6 04:30:32 medusa5 kernel: NVRM: GPU0 _issueRpcAndWait: rpcSendMessage failed with status "
                "0x0000000f for fn 10 sequence 24013!"])
    assert [(e.kind, e.fields["error"]) for e in evs] == [("gpu.nvml_error", "lost")]


def test_near_miss_an_xid_119_line_is_the_xids_not_a_second_event() -> None:
    # an NHC health log's line (Xid 119 holds the RPC timeout's words)
    evs = feed(["[ 3606.832215] NVRM: Xid (PCI:0002:00:00): 119, pid=67769, name=nvidia-smi, Timeout waiting for RPC "
                "from GSP1! Expected function 76 (GSP_RM_CONTROL) (0x2080014b 0x5)."])
    assert [e.kind for e in evs] == ["gpu.xid"]


@pytest.mark.parametrize("line", [
    # the dump after a failure, and the notes of a healthy boot: understood, and nothing
    "NVRM: GPU0 RPC history (CPU -> GSP):",
    "NVRM: GPU0 RPC event history (CPU <- GSP):",
    "NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:01:00 (printing 1 of every 30).",
    "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.71.05  Release Build  (dvs-builder@U22)",
])
def test_near_miss_gsp_lines_without_a_failure(line: str) -> None:
    assert feed([line]) == [] and claimed(line)


# ---------------------------------------------------------------- the host's memory (catalog/platform.yaml
# `memory_error_words`)

def mce(events: list[Event]) -> list[tuple[str, str | None]]:
    return [(str(e.fields["severity"]), e.fields.get("source")) for e in events  # type: ignore[misc]
            if e.kind == "host.mce"]


@pytest.mark.parametrize(("line", "severity", "source"), [
    # ipmitool sel elist's rows (IPMI memory sensor offsets 01h and 05h)
    ("   1 | 05/14/2023 | 10:00:00 | Memory #0x87 | Uncorrectable ECC | Asserted", "uncorrected", "bmc"),
    ("   2 | 05/14/2023 | 10:00:00 | Memory #0x87 | Correctable ECC logging limit reached | Asserted",
     "corrected", "bmc"),
    # rasdaemon's log of the mc_event trace event (mchehab/rasdaemon ras-mc-handler.c's format)
    ("rasdaemon[812]:            <...>-1234  [012]  0.000000: mc_event: 2024-01-02 03:04:05 +0000 1 Uncorrected "
     "error: memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (mc: 0 location: 0:1:0 address: 0x1234 grain: 32)",
     "uncorrected", "rasdaemon"),
    ("rasdaemon[812]:            <...>-1234  [012]  0.000000: mc_event: 2024-01-02 03:04:05 +0000 4 Corrected "
     "errors: memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (mc: 0 location: 0:1:0)", "corrected", "rasdaemon"),
    # ras-mc-ctl --errors and --summary (util/ras-mc-ctl.in)
    ("1 2024-01-02 03:04:05 +0000 1 Uncorrected error(s): memory read error at CPU_SrcID#0_MC#0_Chan#1_DIMM#0 "
     "location: 0:1:0:-1, addr 0x1234, grain 32, syndrome 0", "uncorrected", "rasdaemon"),
    ("\tUncorrected on DIMM Label(s): 'CPU_SrcID#0_MC#0_Chan#1_DIMM#0' location: 0:1:0:-1 errors: 1",
     "uncorrected", "rasdaemon"),
    ("\tCorrected on DIMM Label(s): 'CPU_SrcID#0_MC#0_Chan#1_DIMM#0' location: 0:1:0:-1 errors: 12",
     "corrected", "rasdaemon"),
    # the kernel's memory-failure handler, as a posted dmesg holds it (a landscape-sysinfo process killed for it)
    ("[352317.358250] Memory failure: 0x8c53ae: Sending SIGBUS to landscape-sysin:8540 due to hardware memory "
     "corruption", "uncorrected", "memory_failure"),
    ("[352317.358572] Memory failure: 0x8c53ae: recovery action for dirty LRU page: Recovered", "uncorrected",
     "memory_failure"),
    # arch/x86/kernel/cpu/mce/core.c kill_me_maybe, as a posted dmesg holds it
    ("[197426.771495] MCE: Killing a.out:299207 due to hardware memory corruption fault at 7fea7092d000",
     "uncorrected", "memory_failure"),
])
def test_host_memory_errors_in_each_printers_words(line: str, severity: str, source: str) -> None:
    assert mce(feed([line])) == [(severity, source)]


@pytest.mark.parametrize(("line", "source"), [
    # the JVM's hs_err siginfo for a SIGBUS of poisoned memory
    ("siginfo: si_signo: 7 (SIGBUS), si_code: 4 (BUS_MCEERR_AR), si_addr: 0x00007f2b1c000000", "sigbus"),
    # the Go runtime's report of the fatal signal (code 4: BUS_MCEERR_AR), in the layout posted Go crashes show
    ("[signal SIGBUS: bus error code=0x4 addr=0x7f2b1c000000 pc=0x466a49]", "sigbus"),
    # memtester's tests.c (compare_regions, test_stuck_address)
    ("FAILURE: 0x00000000 != 0x00000800 at offset 0x00004ab0.", "memtester"),
    ("  Stuck Address       : testing   0FAILURE: possible bad address line at offset 0x00001234.", "memtester"),
])
def test_a_process_sees_the_hosts_bad_memory(line: str, source: str) -> None:
    assert mce(feed([line], "application")) == [("uncorrected", source)]


@pytest.mark.parametrize("line", [
    # a bus error that names no hardware cause is the program's own crash, not the memory's
    "Bus error (core dumped)",
    "siginfo: si_signo: 7 (SIGBUS), si_code: 2 (BUS_ADRERR), si_addr: 0x00007f2b1c000000",
    # a Go program's SIGBUS on a mapped file cut short (code 2, BUS_ADRERR), as posted Go crashes show it
    "[signal SIGBUS: bus error code=0x2 addr=0x769affff pc=0x979e58]",
    # the kernel's and the BMC's words are not read in a process's own output
    "   1 | 05/14/2023 | 10:00:00 | Memory #0x87 | Uncorrectable ECC | Asserted",
    # a test's own words of success, and a FAILURE that is no memtester comparison
    "  Compare XOR         : ok",
    "FAILURE: could not allocate memory",
])
def test_near_miss_no_host_memory_error_in_a_process_output(line: str) -> None:
    assert mce(feed([line], "application")) == []


def test_near_miss_a_deasserted_sel_event_and_a_rasdaemon_notice() -> None:
    assert mce(feed(["   3 | 05/14/2023 | 10:00:00 | Memory #0x87 | Uncorrectable ECC | Deasserted",
                     "rasdaemon[812]: ras:mc_event event enabled"])) == []


def test_near_miss_the_handlers_lines_for_a_page_a_test_poisoned() -> None:
    # a posted note on memory-failure injection (mm/hwpoison-inject.c): the injection, then the handler's line
    lines = ["[ 7165.324423] Injecting memory failure at pfn 0x17bcde",
             "[ 7165.324824] Memory failure: 0x17bcde: recovery action for dirty LRU page: Recovered"]
    assert mce(feed(lines)) == []
    # and a real one later in the same log is read again
    assert mce(feed([*lines, *[f"[ 7166.0000{i}] usb 1-1: new high-speed USB device" for i in range(6)],
                     "[ 7200.324824] Memory failure: 0x2bcde: recovery action for dirty LRU page: Recovered"])) == [
        ("uncorrected", "memory_failure")]


# ---------------------------------------------------------------- nvidia-smi -q's memory sections
# (catalog/accel.yaml `nvidia_smi_query`; the layout of nvidia-smi(1)'s -q output)

# A100: a remap pending for correctable errors alone (the counts as a public write-up on Xid 63 posted them)
SMI_A100_CE_PENDING = """GPU 00000000:07:00.0
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 177
            DRAM Uncorrectable            : 0
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 177
            DRAM Uncorrectable            : 0
    Retired Pages
        Single Bit ECC                    : N/A
        Double Bit ECC                    : N/A
        Pending Page Blacklist            : N/A
    Remapped Rows
        Correctable Error                 : 1
        Uncorrectable Error               : 0
        Pending                           : Yes
        Remapping Failure Occurred        : No
        Bank Remap Availability Histogram
            Max                           : 639 bank(s)""".splitlines()

# H100: uncorrectable errors since the driver loaded, a remap pending for them, and a remap that failed
SMI_H100_UE = """GPU 00000000:0F:00.0
    ECC Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 3
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 1
        Pending                           : Yes
        Remapping Failure Occurred        : Yes""".splitlines()

# V100 (before Ampere): the bit kinds under each scope, the double-bit total since the driver loaded
SMI_V100_DBE = """GPU 00000000:3B:00.0
    ECC Errors
        Volatile
            Single Bit
                Device Memory             : 4
                Total                     : 4
            Double Bit
                Device Memory             : 2
                Total                     : 2
        Aggregate
            Single Bit
                Total                     : 9
            Double Bit
                Total                     : 2
    Retired Pages
        Single Bit ECC                    : 1
        Double Bit ECC                    : 1
        Pending Page Blacklist            : Yes""".splitlines()


def smi(events: list[Event]) -> list[tuple[str, str, str | None]]:
    return [(str(e.fields["accel_class"]), str(e.fields["reason"]), e.device) for e in events
            if e.kind == "gpu.accel_error" and e.fields.get("driver") == "nvidia-smi"]


def test_smi_query_uncorrectable_errors_and_failed_remap_are_memory_faults() -> None:
    assert smi(feed(SMI_H100_UE, "application")) == [
        ("memory", "volatile_uncorrectable", "pci:0000:0f:00"),
        ("memory_info", "rows_remapped", "pci:0000:0f:00"),
        ("memory", "row_remap_pending", "pci:0000:0f:00"),
        ("memory", "row_remap_failure", "pci:0000:0f:00")]


def test_smi_query_the_double_bit_total_of_a_gpu_before_ampere() -> None:
    assert smi(feed(SMI_V100_DBE, "application")) == [
        ("memory", "volatile_uncorrectable", "pci:0000:3b:00"),
        ("memory_info", "aggregate_uncorrectable", "pci:0000:3b:00"),
        ("memory_info", "pending_retirement", "pci:0000:3b:00")]


def test_near_miss_a_remap_pending_for_correctable_errors_and_corrected_counts_are_no_fault() -> None:
    # DRAM Correctable 177 and a remap pending with no uncorrectable error: memory_info, no cause
    assert smi(feed(SMI_A100_CE_PENDING, "application")) == [("memory_info", "row_remap_pending", "pci:0000:07:00")]


def test_near_miss_the_same_keys_outside_the_memory_sections() -> None:
    # ECC Mode's and MIG Mode's `Pending`, FB Memory Usage's `Total`: not the memory sections' keys
    lines = ["GPU 00000000:07:00.0", "    FB Memory Usage", "        Total                     : 81920 MiB",
             "    ECC Mode", "        Current                   : Enabled", "        Pending                   : Yes",
             "    MIG Mode", "        Pending                   : Yes"]
    assert smi(feed(lines, "application")) == []
    # a section's lines reach a few lines below its header, not the whole dump after it
    far = [*SMI_H100_UE[:14], *["        Foo                       : 1"] * 10, "        Pending          : Yes"]
    assert SMI_H100_UE[11].strip() == "Remapped Rows"
    assert [r for _c, r, _d in smi(feed(far, "application"))] == ["volatile_uncorrectable", "rows_remapped"]


def test_smi_query_the_next_gpus_header_ends_the_last_gpus_sections() -> None:
    lines = [*SMI_H100_UE[:12], "GPU 00000000:10:00.0", "        Pending                           : Yes"]
    assert smi(feed(lines, "application")) == [("memory", "volatile_uncorrectable", "pci:0000:0f:00")]


# ---------------------------------------------------------------- rasdaemon's and ras-mc-ctl's PCIe AER records
# (mchehab/rasdaemon ras-aer-handler.c's trace line, util/ras-mc-ctl.in's --errors line)

def aer(events: list[Event]) -> list[tuple[str, str | None]]:
    return [(str(e.fields["severity"]), e.device) for e in events if e.kind == "pcie.aer"]


@pytest.mark.parametrize(("line", "severity"), [
    ("rasdaemon[812]:           <idle>-0     [000]  0.000000: aer_event: Crit 2024-01-02 03:04:05 +0000 0000:3b:00.0 "
     "(NVIDIA Corporation Device 20b2 - vendor_id: 0x10de device_id: 0x20b2) Unsupported Request  "
     "Uncorrected (Non-Fatal)", "uncorrected_nonfatal"),
    ("rasdaemon[812]:           <idle>-0     [000]  0.000000: aer_event: Err 2024-01-02 03:04:05 +0000 0000:3b:00.0 "
     "(NVIDIA Corporation Device 20b2 - vendor_id: 0x10de device_id: 0x20b2) Receiver Error  Corrected", "corrected"),
    ("3 2024-01-02 03:04:05 +0000 0000:3b:00.0 Uncorrected (Fatal) error: Completion Timeout", "uncorrected_fatal"),
    ("4 2024-01-02 03:04:05 +0000 0000:3b:00.0 Corrected error: Bad TLP", "corrected"),
])
def test_rasdaemon_aer_records(line: str, severity: str) -> None:
    assert aer(feed([line])) == [(severity, "pci:0000:3b:00")]


@pytest.mark.parametrize("line", [
    # rasdaemon's notice that it listens, and a memory controller's record: no AER
    "rasdaemon[812]: ras:aer_event event enabled",
    "1 2024-01-02 03:04:05 +0000 1 Corrected error(s): memory read error at CPU_SrcID#0_MC#0_Chan#1_DIMM#0 "
    "location: 0:1:0:-1, addr 0x1234, grain 32, syndrome 0",
])
def test_near_miss_no_aer_record(line: str) -> None:
    assert aer(feed([line])) == []


# ---------------------------------------------------------------- gpu-burn's verdict (wilicc/gpu-burn gpu_burn-drv.cpp)

def test_gpu_burn_faulty_is_a_device_error_and_ok_is_nothing() -> None:
    evs = feed(["Tested 8 GPUs:", "\tGPU 0: OK", "\tGPU 3: FAULTY"], "application")
    assert accel(evs) == [("nvidia", "gpu-burn", "other", "gpu_burn_faulty")]


# cuda_memtest's report (ComputationalRadiationPhysics/cuda_memtest tests.cpp report_error, through FPRINTF's
# `[time][host][gpu]:` prefix; the counts, addresses and host ours)
_MEMTEST = [
    "[06/26/2024 07:55:30][gpu-node-7][0]:ERROR: NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15",
    "[06/26/2024 07:55:30][gpu-node-7][0]:ERROR: The unit serial number is 1320219019476",
    "[06/26/2024 07:55:30][gpu-node-7][0]:ERROR: (test10[Memory stress test]) 3 errors found in block 17",
    "[06/26/2024 07:55:30][gpu-node-7][0]:ERROR: the last 3 error addresses are:\t0x7f3a2c011000\t",
    "[06/26/2024 07:55:30][gpu-node-7][0]:ERROR: 0th error, expected value=0x5a5a5a5a5a5a5a5a, current value="
    "0x5a5a5a5a5a5a5a4a, diff=0x10 (second_read=0x5a5a5a5a5a5a5a4a, expect=0x5a5a5a5a5a5a5a5a, diff with expected "
    "value=0x10)",
]


def test_cuda_memtest_errors_are_the_gpus_memory() -> None:
    assert accel(feed(_MEMTEST, "application")) == [("nvidia", "cuda_memtest", "memory", "memtest_errors")]
    assert all(claimed(line, "application") for line in _MEMTEST[1:] if "NVRM version" not in line)


@pytest.mark.parametrize("line", [
    # the test's own progress lines (tests.cpp: a test repeated, a pass), and another program's count
    "[06/26/2024 07:55:30][gpu-node-7][0]:1th repeating test4 because there are 2 errors found in last run",
    "[06/26/2024 07:55:30][gpu-node-7][0]:Test10 [Memory stress test]",
    "checked 4096 blocks, 0 errors found in block scan",
])
def test_near_miss_cuda_memtest_lines_that_report_no_bad_cell(line: str) -> None:
    assert accel(feed([line], "application")) == []


@pytest.mark.parametrize("line", ["PSU 1: FAULTY", "\tGPU 0: OK", "Fan 2 status: FAULTY (GPU 1 side)"])
def test_near_miss_faulty_of_another_device(line: str) -> None:
    assert accel(feed([line], "application")) == []


# ---------------------------------------------------------------- amd-smi's ECC counts
# (ROCm/amdsmi amdsmi_cli/amdsmi_commands.py, `amd-smi metric --ecc`, as a posted bring-up note prints them)

def test_amd_smi_uncorrectable_count_above_zero_is_a_memory_fault() -> None:
    evs = feed(["GPU: 1", "    ECC:", "        TOTAL_CORRECTABLE_COUNT: 12", "        TOTAL_UNCORRECTABLE_COUNT: 2"],
               "application")
    assert accel(evs) == [("amd", "amd-smi", "memory_info", "ecc_correctable"),
                          ("amd", "amd-smi", "memory", "ecc_uncorrectable")]


@pytest.mark.parametrize("line", [
    # a healthy GPU's counts, and a count the GPU does not report
    "        TOTAL_UNCORRECTABLE_COUNT: 0",
    "        TOTAL_CORRECTABLE_COUNT: 0",
    "        TOTAL_UNCORRECTABLE_COUNT: N/A",
])
def test_near_miss_amd_smi_counts_of_zero_are_nothing(line: str) -> None:
    assert accel(feed([line], "application")) == []
    if "N/A" not in line:
        assert claimed(line, "application")


# ---------------------------------------------------------------- through the engine: a bundle, its verdict

_STEPS = [f"2026-11-02 10:0{m}:00,000 INFO step {m}" for m in range(5)]
_TIMEOUT = ("[rank{r}]:[E1102 10:15:20.222288244 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=500045, OpType=ALLREDUCE, NumelIn=67108864, NumelOut=67108864, "
            "Timeout(ms)=600000) ran for 600038 milliseconds before timing out.")


def _kern(node: str, lines: list[str]) -> str:
    return "".join(f"Nov  2 10:05:{i:02d} {node} kernel: {t}\n" for i, t in enumerate(lines))


def _ranks(extra: dict[int, list[str]] | None = None) -> dict[str, str]:
    extra = extra or {}
    return {f"app/rank-{r}.log": "".join(s + "\n" for s in [*_STEPS, *extra.get(r, []), _TIMEOUT.format(r=r)])
            for r in range(6)}


def test_the_kernel_poisoning_a_ranks_page_is_the_host_and_the_collective_errors_its_symptoms(
        make_bundle: BundleMaker) -> None:
    kern = _kern("node-02", [
        "mce: [Hardware Error]: Machine check events logged",
        "Memory failure: 0x8c53ae: Sending SIGBUS to python:8540 due to hardware memory corruption",
        "Memory failure: 0x8c53ae: recovery action for dirty LRU page: Recovered"])
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/kern.log": kern, **_ranks()})))
    assert_cause_with_collective_fallout(v, "hardware", "host.hardware", "node-02")


def test_near_miss_a_bus_error_alone_is_the_programs_crash_not_the_hosts_memory(make_bundle: BundleMaker) -> None:
    corrected = ("rasdaemon[812]:            <...>-1234  [012]  0.000000: mc_event: 2026-11-02 10:05:00 +0000 4 "
                 "Corrected errors: memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (mc: 0 location: 0:1:0)")
    v = Analyzer().analyze_path(str(make_bundle({
        "nodes/node-02/kern.log": _kern("node-02", [corrected]),
        **_ranks({2: ["Fatal Python error: Bus error", "Bus error (core dumped)"]})})))
    assert v.root_cause is not None and v.root_cause.category == "app.crash"


def test_dcgm_and_nvidia_smi_in_a_ranks_output_name_the_gpu_memory(make_bundle: BundleMaker) -> None:
    smi = ["GPU 00000000:0F:00.0", "    Remapped Rows", "        Correctable Error                 : 0",
           "        Uncorrectable Error               : 1", "        Pending                           : Yes",
           "        Remapping Failure Occurred        : Yes"]
    v = Analyzer().analyze_path(str(make_bundle(_ranks({2: smi}))))
    assert_cause_with_collective_fallout(v, "hardware", "gpu.memory", "node-02")
    v = Analyzer().analyze_path(str(make_bundle(
        _ranks({4: ["DCGM_FR_VOLATILE_DBE_DETECTED: Detected 2 volatile double-bit ECC error(s) in GPU 0."]}),
        name="dcgm")))
    assert_cause_with_collective_fallout(v, "hardware", "gpu.memory", "node-03")


def test_near_miss_correctable_counts_in_a_ranks_output_name_no_cause(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle(_ranks({2: [
        "More than 10 single-bit ECC error(s) detected in GPU 0 Volatile SBEs: 12", *SMI_A100_CE_PENDING]}))))
    assert v.attributed_domain == "unknown" and v.root_cause is None


@pytest.mark.parametrize(("lines", "cls", "reason"), [
    # dcgmi diag's table (NVIDIA/DCGM dcgmi/Diag.cpp; the layout a posted DCGM 3 run shows)
    (["| GPU Memory                | Fail - GPU: 0                                  |"],
     "memory", "diag_memory_failed"),
    (["| Memory                    | Fail - All                                     |"],
     "memory", "diag_memory_failed"),
    (["| Memtest                   | Fail - GPU: 3                                  |"],
     "memory", "diag_memtest_failed"),
    (["| Pulse Test                | Fail - GPU: 1                                  |"],
     "other", "diag_pulse_failed"),
    # a posted `-r 2` run on a faulty node: the failure on the row under the test's name
    (["| GPU Memory                | Pass - GPUs: 1, 2, 3, 4, 5, 6, 7               |",
      "|                           | Fail - GPU: 0                                  |",
      "| Warning                   | GPU 0 Thermal violations totaling 13.3 second  |"],
     "memory", "diag_memory_failed"),
])
def test_dcgmi_diag_memory_tests_that_failed(lines: list[str], cls: str, reason: str) -> None:
    assert accel(diag(lines)) == [("nvidia", "dcgm", cls, reason)]


@pytest.mark.parametrize("lines", [
    ["| GPU Memory                | Pass - All                                     |"],
    ["| Pulse Test                | Pass - All                                     |"],
    # performance thresholds, no fault: a posted run's Targeted Power failing on one GPU, a bandwidth test
    ["| Targeted Power            | Pass - GPUs: 0, 2, 3                           |",
     "|                           | Fail - GPU: 1                                  |"],
    ["| Memory Bandwidth          | Fail - GPU: 0                                  |"],
    # a continuation row too far below any test's name
    ["| GPU Memory                | Pass - All                                     |", *["x"] * 5,
     "|                           | Fail - GPU: 0                                  |"],
])
def test_near_miss_dcgmi_diag_rows_that_passed_or_measure_speed(lines: list[str]) -> None:
    assert accel(diag(lines)) == []


# `dcgmi diag -j`: the layout of NVIDIA/DCGM testing/TestDiagManagerStrings.h (PER_GPU_JSON); the failure and the
# warning's words are ours
_DIAG_JSON_MEMORY_FAIL = [
    '            {',
    '                "category": "Hardware",',
    '                "tests": [',
    '                    {',
    '                        "name": "memory",',
    '                        "results": [',
    '                            {',
    '                                "gpu_ids": "0",',
    '                                "status": "FAIL",',
    '                                "warnings": [',
    '                                    {',
    '                                        "warning" : "GPU 0: the memory test found a problem.",',
    '                                        "error_id" : 83,',
    '                                    }',
    '                                ]',
    '                            },',
    '                            { "gpu_ids": "1", "status": "PASS" },',
    '                            { "gpu_ids": "2", "status": "FAIL" }',
]


@pytest.mark.parametrize(("lines", "cls", "reason"), [
    (_DIAG_JSON_MEMORY_FAIL, "memory", "diag_memory_failed"),
    # jsoncpp's own spacing (dcgmi's StyledWriter) and DCGM 4's `Fail` (dcgmi/Diag.cpp HelperDisplayDiagResult)
    (['"name" : "memtest",', '"results" : [', '{', '"entity_id" : 3,', '"status" : "Fail"'],
     "memory", "diag_memtest_failed"),
    # the whole document on one line (a collector's or `jq -c`'s)
    (['{"tests": [{"name": "pulse_test", "results": [{"entity_id": 1, "status": "Fail"}]}]}'],
     "other", "diag_pulse_failed"),
])
def test_dcgmi_diag_json_memory_tests_that_failed(lines: list[str], cls: str, reason: str) -> None:
    assert accel(diag(lines)) == [("nvidia", "dcgm", cls, reason)]


def test_a_ranks_dcgmi_diag_json_memory_failure_is_the_gpus_memory(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle(_ranks({2: _DIAG_JSON_MEMORY_FAIL}), name="dcgm-json")))
    assert_cause_with_collective_fallout(v, "hardware", "gpu.memory", "node-02")


@pytest.mark.parametrize("lines", [
    # every GPU passed (TestDiagManagerStrings.h's memory results), a test skipped for ECC being off
    ['"name": "memory",', '"results": [', '{ "gpu_ids": "0", "status": "SKIP" },',
     '{ "gpu_ids": "1", "status": "PASS" }'],
    # a performance or software test that failed: no device fault (dcgm_diag_tests does not hold it)
    ['"name": "memory_bandwidth",', '"results": [', '{ "gpu_ids": "0", "status": "FAIL" }'],
    ['"name": "Fabric Manager",', '"results": [', '{ "gpu_ids": "0,1,2,3", "status": "FAIL" }'],
    # a memory test's name, then another test's failure: the later name decides
    ['"name": "memory",', '{ "gpu_ids": "0", "status": "PASS" }', '"name": "pcie",',
     '{ "gpu_ids": "0", "status": "FAIL" }'],
    # a Kubernetes object's JSON: a container named memory, a phase, no diagnostic status
    ['{"name": "memory", "state": {"terminated": {"reason": "Error"}}, "status": "Failed"}'],
])
def test_near_miss_dcgmi_diag_json_that_passed_or_is_not_a_device_test(lines: list[str]) -> None:
    assert accel(diag(lines)) == []


def test_smi_query_an_older_drivers_pending_retirement_is_memory_info() -> None:
    lines = ["GPU 00000000:3B:00.0", "    Retired Pages", "        Single Bit ECC                    : 2",
             "        Double Bit ECC                    : 0", "        Pending                           : Yes"]
    assert smi(feed(lines, "application")) == [("memory_info", "pending_retirement", "pci:0000:3b:00")]
