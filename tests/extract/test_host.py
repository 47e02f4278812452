"""Host kernel / syslog extractors on real lines (domain-facts sections 4.x and 5.1).

Lines are verbatim from public issues unless marked `synthetic`.
"""

from __future__ import annotations

from typing import Any

import pytest

from firstfault.catalog import tables
from firstfault.extract import host
from tests.extract.helpers import assert_fields, one, scan

NET = host.NetLinkExtractor()
AER = host.PcieAerExtractor()
OOM = host.OomKillExtractor()
STORAGE = host.StorageExtractor()
HUNG = host.HungTaskExtractor()
MCE = host.MceExtractor()
PANIC = host.KernelPanicExtractor()
NODE = host.NodeDownExtractor()


# ------------------------------------------------------------------ net.link

NET_CASES: list[tuple[str, dict[str, Any], str | None]] = [
    # IB core port state prints (kernel 6.x), real dmesg from a RoCE host
    ("[ 4443.974372] mlx5_core 0000:53:00.0 mlx5_3: Port: 1 Link DOWN",
     {"state": "down", "iface": "mlx5_3", "port": 1}, "mlx5_3"),
    ("16:28:14 mlx5_core 0000:01:00.1 rocep1s0f1: Port: 1 Link DOWN",
     {"state": "down", "iface": "rocep1s0f1", "port": 1}, "rocep1s0f1"),
    ("Feb 14 05:03:41 000-000-00000-1-gpu-1 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE",
     {"state": "up", "iface": "mlx5_5", "port": 1}, "mlx5_5"),
    # netdev side of the same NIC
    ("[ 4443.968257] mlx5_core 0000:53:00.0 enp83s0f0np0: Link down",
     {"state": "down", "iface": "enp83s0f0np0", "port": None,
      "detail": "mlx5_core 0000:53:00.0 enp83s0f0np0: Link down"}, "enp83s0f0np0"),
    ("mlx5_core 0000:01:00.0 enp1s0f0np0: Link up", {"state": "up", "iface": "enp1s0f0np0"}, "enp1s0f0np0"),
    ("Sun Jun 11 23:02:41 2023 kern.info kernel: [39210.778735] igc 0000:05:00.0 eth5: NIC Link is Down",
     {"state": "down", "iface": "eth5"}, "eth5"),
    # port module events (drivers/net/ethernet/mellanox/mlx5/core/events.c wording)
    ("mlx5_core 0000:12:00.0: Port module event: module 0, Cable unplugged",
     {"state": "module_event", "iface": "pci:0000:12:00"}, "pci:0000:12:00"),
    ("mlx5_core 0000:5c:00.0: mlx5_port_module_event:1131:(pid 0): Port module event[error]: module 0, Cable "
     "error, High Temperature", {"state": "error", "iface": "pci:0000:5c:00"}, "pci:0000:5c:00"),
    # NVSentinel's fatal NIC patterns
    ("mlx5_core 0000:d2:00.0: poll_health:174: device's health compromised - reached miss count.",
     {"state": "adapter", "iface": "pci:0000:d2:00", "fault": "device's health compromised"}, "pci:0000:d2:00"),
    ("mlx5_core 0000:03:00.0: wait_func:964:(pid 112): ENABLE_HCA(0x104) timeout. Will cause a leak of a "
     "command resource", {"state": "adapter"}, "pci:0000:03:00"),
    ("systemd-networkd[1234]: ib0: Lost carrier", {"state": "down", "iface": "ib0"}, "ib0"),  # synthetic
    # a NIC's own ECC error, which the driver resets the adapter for: intel-wired-lan (lists.osuosl.org), April
    # 2020, "ECC error" on X550 NICs with ixgbe 5.1.0 (its quoted-printable line break undone), and
    # openstreetmap/operations#1308 (the card was replaced)
    ("2020-04-06T08:35:16.077662-05:00 dell-server1 kernel: [155528.916479] ixgbe 0000:19:00.1 eno2: Received ECC "
     "Err, initiating reset", {"state": "adapter", "iface": "eno2"}, "eno2"),
    ("[  757.936687] ixgbe 0000:5d:00.1 eno6: Received ECC Err, initiating reset",
     {"state": "adapter", "iface": "eno6"}, "eno6"),
]


@pytest.mark.parametrize(("line", "expected", "device"), NET_CASES)
def test_net_link(line: str, expected: dict[str, Any], device: str | None) -> None:
    d = one(NET, line)
    assert d.kind == "net.link"
    assert d.device == device
    assert_fields(d, expected)


def test_net_link_up_is_never_down() -> None:
    for line in ("mlx5_core 0000:01:00.0 enp1s0f0np0: Link up",
                 "Feb 14 05:03:41 gpu-1 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE"):
        assert one(NET, line).fields["state"] == "up"


# A network adapter's own failure in its driver's words (catalog/platform.yaml `adapter_faults`): state `adapter`,
# the row's words as `fault`; never a link's `down` or a module's `error`.
ADAPTER_CASES: list[tuple[str, str, str | None]] = [
    # TACC Frontera, ConnectX-6 firmware assert (charm++ issue 2635's kern.log): the header and the syndrome line
    ("[198542.853543] mlx5_core 0000:5e:00.0: device's health compromised - reached miss count",
     "device's health compromised", "pci:0000:5e:00"),
    ("[198542.918249] mlx5_core 0000:5e:00.0: synd 0x7: irisc not responding", "irisc not responding",
     "pci:0000:5e:00"),
    # health.c since 5.17: the header names the syndrome's words (synthetic, the format string's words)
    ("mlx5_core 0000:5e:00.0: print_health_info:431:(pid 0): Health issue observed, firmware internal error, "
     "severity(3) ERROR:", "firmware internal error", "pci:0000:5e:00"),
    ("mlx5_core 0000:5e:00.0: synd 0x10: High temprature", "High temprature", "pci:0000:5e:00"),  # before 5.10
    ("mlx5_core 0000:3b:00.0: poll_health:800:(pid 0): Fatal error 1 detected", "Fatal error {n} detected",
     "pci:0000:3b:00"),
    ("mlx5_core 0000:3b:00.0: mlx5_health_try_recover:335:(pid 9): health recovery flow aborted, PCI reads still "
     "not working", "health recovery flow aborted", "pci:0000:3b:00"),
    # the bnxt_en PCI function that bnxt_re prints under (a Proxmox host's dmesg, BCM57416, 6.5 kernel)
    ("Nov 29 13:06:13 pve2-xxx kernel: bnxt_en 0000:12:00.0: QPLIB: bnxt_re_is_fw_stalled: FW STALL Detected. "
     "cmdq[0xe]=0x3 waited (103641 > 100000) msec active 1 ", "FW STALL Detected", "pci:0000:12:00"),
    ("bnxt_en 0000:41:00.0 enp65s0f0np0: Detected firmware fatal condition, initiating reset",  # synthetic
     "Detected firmware fatal condition", "enp65s0f0np0"),
    # an ixgbe adapter gone to firmware recovery mode after it was removed (a posted dmesg)
    ("[   47.571188] ixgbe 0000:01:00.0: Firmware recovery mode detected. Limiting functionality. Refer to the "
     "Intel(R) Ethernet Adapters and Devices User Guide for ", "Firmware recovery mode detected", "pci:0000:01:00"),
    # gislab-npo/gislab#407 (https://github.com/gislab-npo/gislab/issues/407): e1000e's transmit unit hung
    ("[ 9327.470501] e1000e 0000:00:19.0 eth0: Detected Hardware Unit Hang:", "Detected Hardware Unit Hang", "eth0"),
    ("igb 0000:04:00.0 eno1: Detected Tx Unit Hang", "Detected Tx Unit Hang", "eno1"),  # the format of igb_main.c
]


@pytest.mark.parametrize(("line", "fault", "device"), ADAPTER_CASES)
def test_adapter_fault(line: str, fault: str, device: str | None) -> None:
    d = one(NET, line)
    assert d.kind == "net.link"
    assert d.device == device
    assert_fields(d, {"state": "adapter", "fault": fault})


@pytest.mark.parametrize(
    "line",
    [
        # UCX's completion syndrome, not the health buffer's: no colon after the code, no mlx5_core header
        "[1612345678.123456] [gpu-3:12:0] ib_mlx5_log.c:143 UCX ERROR Transport retry count exceeded on "
        "mlx5_0:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)",
        # the print_health_info block's other lines, and a syndrome's words without `synd 0x..: ` before them
        "[198542.924637] mlx5_core 0000:5e:00.0: ext_synd 0x40d0",
        "mlx5_core 0000:5e:00.0: EQ error on something else",
        # the firmware's announced reset (an update's activation) and a recovery that succeeded: no failure
        "bnxt_en 0000:41:00.0 enp65s0f0np0: Firmware non-fatal reset event received, max wait time 2000 msec",
        "mlx5_core 0000:3b:00.0: mlx5_health_try_recover:345:(pid 9): health recovery succeeded",
        # the words under no driver of their row
        "some-daemon: device's health compromised",
        "myservice: Firmware recovery mode detected in config",
        # a Tx hang under a driver of no row (virtio's, r8169's own words are no Intel driver's)
        "r8169 0000:03:00.0 enp3s0: Detected Tx Unit Hang",
    ],
)
def test_adapter_fault_near_miss(line: str) -> None:
    assert not [d for d in scan(NET, [line]) if d.fields.get("state") == "adapter"]


def test_adapter_fault_is_no_link_down() -> None:
    # a real link-down on the same adapter stays the link's
    assert one(NET, "[ 4443.968257] mlx5_core 0000:53:00.0 enp83s0f0np0: Link down").fields["state"] == "down"


def test_net_link_module_error_without_bdf_prefix() -> None:
    # gpud matcher sample: the `mlx5_core <bdf>` prefix was cut in the paste.
    d = one(NET, "mlx5_port_module_event:1131:(pid 0): Port module event[error]: module 0, Cable error, "
                 "High Temperature")
    assert_fields(d, {"state": "error", "iface": "mlx5"})
    assert d.device is None


@pytest.mark.parametrize(
    "line",
    [
        "[    2.935012] mlx5_core 0000:0b:00.0: Port module event: module 0, Cable plugged",
        "Feb 14 05:03:41 000-000-00000-1-gpu-1 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link INIT",
        "IPv6: ADDRCONF(NETDEV_CHANGE): ib0: link becomes ready",
        "[ 4443.975417] bond0: (slave enp83s0f0np0): speed changed to 0 on port 2",
        "[ 4444.035309] bond0: (slave enp83s0f0np0): link status definitely down, disabling slave",
        "systemd-networkd[1234]: veth3f2a1b: Lost carrier",
        "[ 6166.009184] mlxsw_spectrum 0000:01:00.0 swp1: link down",
        "[...] ny2g1r12hh2 kernel: mlx5_core 0000:5c:00.0: mlx5_pcie_event:299:(pid 268269): Detected "
        "insufficient power on the PCIe slot (27W).",
        "node-02:1234:1290 [3] NCCL WARN NET/IB : Got async event : port error",
        "mlx5_core: INFO: synd 0x8: unrecoverable hardware error.".replace("mlx5_core", "ixgbe"),
        # an ECC error without a NIC driver's header is not a NIC's (nagadit/DeepFaceLab_Linux#89: a GPU's, through
        # TensorFlow)
        "F tensorflow/stream_executor/lib/statusor.cc:34] Attempting to fetch value instead of handling error "
        "Internal: failed initializing StreamExecutor for CUDA device ordinal 0: Internal: failed call to "
        "cuDevicePrimaryCtxRetain: CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error encountered",
    ],
)
def test_net_link_negatives(line: str) -> None:
    assert scan(NET, [line]) == []


# ------------------------------------------------------------------ pcie.aer

@pytest.mark.parametrize(
    ("line", "severity", "bdf"),
    [
        ("pcieport 0000:00:1c.5: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
         "corrected", "0000:00:1c.5"),
        ("pcieport 0000:00:1d.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, id=00e8(Receiver "
         "ID)",
         "corrected", "0000:00:1d.0"),
        ("pcieport 0000:00:01.0: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), TLP UnsupReq",
         "uncorrected_nonfatal", "0000:00:01.0"),
        # synthetic in the kernel's aer.c wording
        ("Nov  2 10:03:07 node-02 kernel: pcieport 0000:3A:00.0: AER: PCIe Bus Error: severity=Uncorrected "
         "(Fatal), type=Transaction Layer, (Receiver ID)", "uncorrected_fatal", "0000:3a:00.0"),
        ("nvidia 0000:b3:00.0: AER: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction "
         "Layer, "
         "(Requester ID)", "uncorrected_nonfatal", "0000:b3:00.0"),
    ],
)
def test_pcie_aer(line: str, severity: str, bdf: str) -> None:
    d = one(AER, line)
    assert d.kind == "pcie.aer"
    assert_fields(d, {"severity": severity, "bdf": bdf})
    assert d.device == "pci:" + bdf[:10]
    assert str(d.fields["detail"]).split(" ")[0] in {"pcieport", "nvidia"}


@pytest.mark.parametrize(
    "line",
    [
        "pcieport 0000:00:1c.5: AER: Corrected error received: 0000:00:1c.5",
        "pcieport 0000:00:1c.5: AER:   device [8086:9d15] error status/mask=00000001/00002000",
        "pcieport 0000:00:1c.5: AER:    [ 0] RxErr                  (First)",
        "nvidia 0000:01:00.0: AER: can't recover (no error_detected callback)",
        "pcieport 0000:00:02.0: AER: Multiple Uncorrectable (Non-Fatal) error message received",
    ],
)
def test_pcie_aer_only_the_bus_error_line_counts(line: str) -> None:
    assert scan(AER, [line]) == []


# ------------------------------------------------------------- host.oom_kill

def test_oom_global() -> None:
    # pcyin/tranX#41
    lines = [
        "[2059991.491436] "
        "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,"
        "task_memcg=/user.slice,task=python3,pid=25315,uid=0",
        "[2059991.491542] Out of memory: Killed process 25315 (python3) total-vm:53312244kB, "
        "anon-rss:31451456kB, "
        "file-rss:74816kB, shmem-rss:12296kB, UID:0 pgtables:69068kB oom_score_adj:0",
        "[2059992.056260] oom_reaper: reaped process 25315 (python3), now anon-rss:0kB, file-rss:74732kB, "
        "shmem-rss:12296kB",
    ]
    drafts = scan(OOM, lines)
    # the summary names the victim (read as the header is, `invoked`: the engine keeps it only where no `Killed
    # process` follows), then the kill's own record
    assert [d.kind for d in drafts] == ["host.oom_kill", "host.oom_kill"]
    assert_fields(drafts[0], {"invoked": True, "pid": 25315, "proc": "python3", "cgroup": False})
    assert_fields(drafts[1], {"pid": 25315, "proc": "python3", "cgroup": False})
    assert "invoked" not in drafts[1].fields


def test_oom_header_names_the_invoker_not_a_victim() -> None:
    # flux-framework/flux-core#5359 (`dmesg -H`, the header of a memory-limited job's OOM kill): the task whose
    # allocation found no memory; whom the killer chose is its `Killed process` line's to say
    (d,) = scan(OOM, ["[Jul28 16:05] stress invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, "
                      "oom_score_adj=0"])
    assert d.kind == "host.oom_kill"
    assert_fields(d, {"invoked": True, "invoker": "stress"})
    assert "proc" not in d.fields


def test_words_about_the_oom_killer_are_no_header() -> None:
    # near misses: a person's question, and a sysctl's name
    assert scan(OOM, ["why was the oom-killer invoked on node-3?",
                      "vm.oom_kill_allocating_task = 0 (the task that invoked oom-killer: not chosen)"]) == []


def test_oom_memory_cgroup() -> None:
    lines = [
        "[337533.314408] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),oom_memcg=/leaker,"
        "task_memcg=/leaker,task=leaker,pid=23793,uid=0",
        "[337533.314412] Memory cgroup out of memory: Killed process 23793 (leaker) total-vm:2623712kB, "
        "anon-rss:506500kB, file-rss:1268kB, shmem-rss:0kB",
    ]
    drafts = scan(OOM, lines)
    assert len(drafts) == 2
    assert_fields(drafts[0], {"invoked": True, "pid": 23793, "proc": "leaker", "cgroup": True})
    assert_fields(drafts[1], {"pid": 23793, "proc": "leaker", "cgroup": True})
    # The message alone says it too.
    assert one(OOM, lines[1]).fields["cgroup"] is True


def test_oom_cgroup_from_constraint_line_only() -> None:
    lines = [  # synthetic: a Slurm job cgroup, plain `Killed process` wording
        "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
        "oom_memcg=/slurm/uid_1000/job_42,task_memcg=/slurm/uid_1000/job_42/step_0,task=python,pid=4242,uid=1000",
        "Killed process 4242 (python) total-vm:1000kB, anon-rss:900kB, file-rss:0kB, shmem-rss:0kB",
    ]
    assert scan(OOM, lines)[-1].fields["cgroup"] is True


def test_oom_old_kernel_cgroup_form() -> None:
    lines = [  # synthetic in the pre-4.19 wording
        "Task in /slurm/uid_1000/job_42 killed as a result of limit of /slurm/uid_1000/job_42",
        "Memory cgroup out of memory: Kill process 1234 (python) score 1000 or sacrifice child",
        "Killed process 1234 (python) total-vm:123456kB, anon-rss:120000kB, file-rss:0kB, shmem-rss:0kB",
    ]
    drafts = scan(OOM, lines)
    # the announcement is read as the kill with no victim (`invoked`: the `Killed process` after it answers it,
    # engine/normalise.py), the kill names the victim
    assert len(drafts) == 2
    assert_fields(drafts[0], {"invoked": True, "cgroup": True})
    assert_fields(drafts[1], {"pid": 1234, "proc": "python", "cgroup": True})


@pytest.mark.parametrize(
    "line",
    [
        "slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step tasks have been "
        "OOM "
        "Killed.",
        # the summary cut before its victim names none (a posted line clipped at the width)
        "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),oom_memcg=/leaker,task_memcg=/leaker",
    ],
)
def test_oom_negatives(line: str) -> None:
    assert scan(OOM, [line]) == []


def test_an_oom_header_is_no_kill_of_a_named_process() -> None:
    # the header (dmesg --time-format iso) names the task that invoked the killer, not one it killed: its event is
    # marked `invoked`, and the engine keeps it only where no `Killed process` follows (test_terminal_lines.py)
    (d,) = scan(OOM, ["2024-04-29T14:55:41,678628+02:00 pool invoked oom-killer: "
                      "gfp_mask=0x6200ca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0"])
    assert d.fields.get("invoked") is True and "proc" not in d.fields


# ------------------------------------------------------------- storage.error

@pytest.mark.parametrize(
    ("line", "fs", "detail_start"),
    [
        ("[Mon Oct 16 10:06:17 2017] LustreError: 11-0: jmain01-MDT0000-mdc-ffff88203810d800: operation "
         "obd_ping "
         "to node 172.31.126.88@o2ib failed: rc = -107", "lustre", "LustreError: 11-0"),
        ("Lustre: jmain01-MDT0000-mdc-ffff88203810d800: Connection to jmain01-MDT0000 (at "
         "172.31.126.88@o2ib) was "
         "lost; in progress operations using this service will wait for recovery to complete", "lustre",
         "Lustre: jmain01"),
        ("LustreError: 167-0: jmain01-MDT0000-mdc-ffff88203810d800: This client was evicted by "
         "jmain01-MDT0000; "
         "in progress operations using this service will fail.", "lustre", "LustreError: 167-0"),
        ("nfs: server 7.247.192.16 not responding, timed out", "nfs", "nfs: server"),
        ("Oct 12 10:00:00 node-03 kernel: nfs: server ease not responding, still trying", "nfs",
         "nfs: server ease"),
        # synthetic: GPFS syslog form (no verbatim real line in the corpus)
        ("Dec  1 00:00:00 node-01 mmfs: [E] Node 10.0.0.5 (node-05) is being expelled because of an expired "
         "lease.", "gpfs", "mmfs: [E]"),
        ("[  312.1] blk_update_request: I/O error, dev sda, sector 2048 op 0x1:(WRITE) flags 0x800 phys_seg "
         "1 "
         "prio class 0", "block", "blk_update_request: I/O error"),
        ("[  312.2] I/O error, dev nvme0n1, sector 1234 op 0x0:(READ) flags 0x80700 phys_seg 1 prio class 2",
         "block", "I/O error, dev nvme0n1"),
        ("Buffer I/O error on dev sda1, logical block 0, async page read", "block", "Buffer I/O error"),
        ("nvme nvme4: Disabling device after reset failure: -19", "block", "Disabling device"),
        # Malshare/MalShare#32 (https://github.com/Malshare/MalShare/issues/32): posted by hand without `dev`; the
        # block layer's function says the name is a disk's
        ("blk_update_request: I/O error, sdb, sector 2403408872", "block", "blk_update_request: I/O error, sdb"),
    ],
)
def test_storage(line: str, fs: str, detail_start: str) -> None:
    d = one(STORAGE, line)
    assert d.kind == "storage.error"
    assert d.fields["fs"] == fs
    assert str(d.fields["detail"]).startswith(detail_start)


@pytest.mark.parametrize(
    "line",
    [
        "nfs: server ease OK",
        "Lustre: jmain01-MDT0000-mdc-ffff88203810d800: Connection restored to jmain01-MDT0000 (at "
        "172.31.126.88@o2ib)",
        "LustreError: Skipped 3 previous similar messages",
        "mmfs: [I] Command: mount gpfs0",
        "-bash: cd: /home/ryczkok: Stale file handle",
        "sshd[123]: Connection closed by 10.0.0.1 port 22",
        # without `dev`, only the block layer's own function makes a name a disk's (Malshare/MalShare#32's line
        # without it)
        "I/O error, sdb, sector 2403408872",
    ],
)
def test_storage_negatives(line: str) -> None:
    # a client's word that it is back is no error (a `storage.recovered`, which closes a wait before it)
    assert [d for d in scan(STORAGE, [line]) if d.kind != "storage.recovered"] == []


# ---------------------------------------------------------- kernel.hung_task

def test_hung_task_block() -> None:
    # aws/aws-parallelcluster#1150
    lines = [
        "kernel: INFO: task strat1_sim:78808 blocked for more than 120 seconds.",
        'kernel: "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.',
        "kernel: strat1_sim      D ffff9ea2033cb0c0     0 78808  78611 0x00000082",
    ]
    drafts = scan(HUNG, lines)
    assert len(drafts) == 1
    assert_fields(drafts[0], {"proc": "strat1_sim", "pid": 78808, "seconds": 120})


def test_hung_task_comm_with_colon() -> None:
    d = one(HUNG, "[Mon Oct 16 10:00:12 2017] INFO: task kworker/u16:2:1234 blocked for more than 241 "
                  "seconds.")
    assert_fields(d, {"proc": "kworker/u16:2", "pid": 1234, "seconds": 241})


# ------------------------------------------------------------------ host.mce

@pytest.mark.parametrize(
    ("line", "severity"),
    [
        ("[11189.970968] EDAC MC3: 1 UE memory read error on CPU_SrcID#1_MC#1_Chan#2_DIMM#0 (channel:2 "
         "slot:0 "
         "page:0xb757589 offset:0x140 grain:32 -  OVERFLOW err_code:0101:0092 socket:1 imc:1 rank:0 bg:3 "
         "ba:0 "
         "row:1a1e8 col:180)", "uncorrected"),
        ("EDAC MC0: 1 CE memory read error on CPU_SrcID#0_MC#0_Chan#0_DIMM#0 (channel:0 slot:0 page:0x1234)",
         "corrected"),
        ("[11219.196673] mce: [Hardware Error]: Machine check events logged", "corrected"),
        # synthetic bank lines: MCi_STATUS bit 61 (UC) set / clear
        ("mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 7: be00000000800400", "uncorrected"),
        ("mce: [Hardware Error]: CPU 3: Machine Check: 0 Bank 5: 8c00004000010091", "corrected"),
        ("Kernel panic - not syncing: Fatal machine check", "uncorrected"),
    ],
)
def test_mce(line: str, severity: str) -> None:
    d = one(MCE, line)
    assert d.kind == "host.mce"
    assert d.fields["severity"] == severity


@pytest.mark.parametrize(
    "line",
    [
        "[11219.196715] EDAC skx MC3: HANDLING MCE MEMORY ERROR",
        "EDAC MC0: Giving out device to module skx_edac controller Skylake Socket#0 IMC#0: DEV 0000:3a:0a.0 "
        "(INTERRUPT)",
        "EDAC MC: Ver: 3.0.0",
    ],
)
def test_mce_negatives(line: str) -> None:
    assert scan(MCE, [line]) == []


# --------------------------------------------------------------- kernel.panic

@pytest.mark.parametrize(
    ("line", "panic"),
    [
        ("Kernel panic - not syncing: Fatal machine check", "panic"),
        ("[Thu Oct 10 03:06:53 2024] watchdog: BUG: soft lockup - CPU#18 stuck for 27s! "
         "[pt_data_pin:2254956]",
         "soft_lockup"),
        ("NMI watchdog: Watchdog detected hard LOCKUP on cpu 5", "hard_lockup"),
        ("rcu: INFO: rcu_sched self-detected stall on CPU", "rcu_stall"),
        ("INFO: rcu_preempt detected stalls on CPUs/tasks:", "rcu_stall"),
        ("rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: { 12-... } 21004 jiffies s: 1081",
         "rcu_stall"),
        ("BUG: unable to handle kernel NULL pointer dereference at 0000000000000008", "bug"),
        ("BUG: unable to handle page fault for address: ffffa0d9c0000000", "bug"),
        ("kernel BUG at mm/slub.c:305!", "bug"),
        # x86 since 4.20 (arch/x86/mm/fault.c show_fault_oops), then the die header (dumpstack.c __die_header)
        ("BUG: kernel NULL pointer dereference, address: 0000000000000008", "bug"),
        ("[ 5112.482119] Oops: 0000 [#1] SMP NOPTI", "oops"),
        ("invalid opcode: 0000 [#1] PREEMPT SMP PTI", "oops"),
        ("general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] SMP PTI", "oops"),
        # 6.9 on: every die header after `Oops: `
        ("Oops: general protection fault, probably for non-canonical address 0xdffffc0000000001: 0000 [#1] PREEMPT "
         "SMP KASAN NOPTI", "oops"),
        # arm64 (GH200, GB200 hosts): arch/arm64/mm/fault.c die_kernel_fault, then traps.c __die
        ("Unable to handle kernel NULL pointer dereference at virtual address 0000000000000010", "bug"),
        ("Unable to handle kernel paging request at virtual address ffff80000a1b2c3d", "bug"),
        ("Internal error: Oops: 0000000096000004 [#1] PREEMPT SMP", "oops"),
        ("Internal error: Oops - BUG: 00000000f2000800 [#1] SMP", "oops"),
    ],
)
def test_kernel_panic(line: str, panic: str) -> None:
    d = one(PANIC, line)
    assert d.kind == "kernel.panic"
    assert d.fields["panic"] == panic


@pytest.mark.parametrize(
    "line",
    [
        "CPU: 24 PID: 1364 Comm: khungtaskd Tainted: P           OE     5.15.0-1053-nvidia #54-Ubuntu",
        "[Thu Oct 10 03:06:53 2024] pt_main_thread[2536443]: segfault at 7f797fe00000 ip 00007f7c7ac69996 sp "
        "00007f7c12fd7c30 error 4 in libnccl.so.2[7f7c7ac00000+d3d3000]",
        "INFO: task strat1_sim:78808 blocked for more than 120 seconds.",
        # a user process's trap is the process's (kernel.segfault), not the kernel's: no `[#N]`
        "traps: python[4121] general protection fault ip:7f5d2c1e4a3b sp:7ffd1c2b3a40 error:0 in "
        "libtorch_cpu.so[7f5d20000000+1e000000]",
        # a WARN() goes on; the registers of an oops or a WARN are no header of their own
        "WARNING: CPU: 3 PID: 1234 at drivers/gpu/drm/amd/amdgpu/amdgpu_vm.c:1234 amdgpu_vm_fini+0x1f/0x30 [amdgpu]",
        "RIP: 0010:svm_range_evict_svm_bo_worker+0x313/0x330 [amdgpu]",
        "Unable to handle kernel request: see the manual",
        "oops: 0x10 [#1] in a daemon's own counter",
    ],
)
def test_kernel_panic_negatives(line: str) -> None:
    assert scan(PANIC, [line]) == []


# ------------------------------------------------------------ sched.node_down

@pytest.mark.parametrize(
    ("line", "hosts", "reason"),
    [
        ("[2024-05-01T10:00:00.123] error: Nodes node-03 not responding", ["node-03"], "not responding"),
        ("[2024-05-01T10:05:00.001] error: Nodes node-03 not responding, setting DOWN", ["node-03"],
         "not responding, setting DOWN"),
        ("May  1 10:00:00 ctl slurmctld[812]: node node-03 not responding", ["node-03"], "not responding"),
        ("error: Nodes node[01-02] not responding", ["node01", "node02"], "not responding"),
        ("error: Nodes gpu-[1-2],cpu07 not responding, setting DOWN", ["gpu-1", "gpu-2", "cpu07"],
         "not responding, setting DOWN"),
        ("[2022-05-27T11:37:57.377] Killing JobId=123 on failed node node01", ["node01"], "node failure"),
        ("requeue job JobId=123 due to failure of node node01", ["node01"], "node failure"),
    ],
)
def test_node_down(line: str, hosts: list[str], reason: str) -> None:
    assert any(w in line for w in NODE.literals)
    drafts = scan(NODE, [line], source="syslog")
    assert [d.host for d in drafts] == hosts
    assert [d.fields["host"] for d in drafts] == hosts
    assert {d.kind for d in drafts} == {"sched.node_down"}
    assert {d.fields["reason"] for d in drafts} == {reason}


@pytest.mark.parametrize(
    "line",
    [
        "nfs: server ease not responding, still trying",
        "NVRM: fallen off the bus and is not responding to commands.",
        "the node is not responding",
        "compute001      1     main*       down*   12   12:1:1  64267        0      1   (null) Not "
        "responding",
    ],
)
def test_node_down_negatives(line: str) -> None:
    assert scan(NODE, [line], source="syslog") == []


@pytest.mark.parametrize(("line", "hosts"), [
    ("Node node01 now responding", ["node01"]),
    ("[2024-03-01T10:14:10.001] node_did_resp: node node01 returned to service", ["node01"]),
    ("Nodes node[01-02] returned to service", ["node01", "node02"]),
])
def test_a_node_that_answered_again_is_its_answer_not_a_loss(line: str, hosts: list[str]) -> None:
    # slurmctld's words as SchedMD/slurm src/slurmctld/node_mgr.c prints them (engine/normalise.py `_answered_nodes`)
    drafts = scan(NODE, [line], source="syslog")
    assert [(d.kind, d.fields["host"]) for d in drafts] == [("sched.node_back", h) for h in hosts]


def test_expand_hostlist() -> None:
    assert host.expand_hostlist("node[001-003]") == ["node001", "node002", "node003"]
    assert host.expand_hostlist("a[1,3-4]b,c") == ["a1b", "a3b", "a4b", "c"]
    assert host.expand_hostlist("rack[1-2]-n[1-2]") == ["rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"]
    assert host.expand_hostlist("solo") == ["solo"]


# ------------------------------------------------------------- declarations

def test_extractor_declarations() -> None:
    names = {e.name for e in host.EXTRACTORS}
    assert names == {"net.link", "pcie.aer", "host.oom_kill", "storage.error", "kernel.hung_task", "host.mce",
                     "kernel.panic", "sched.node_down", "host.user_fault", "pcie.bmc", "host.mce.process",
                     "host.bmc_power", "storage.mount", "storage.wait_frame"}
    for e in host.EXTRACTORS:
        # slurmctld / PBS node messages are also pasted into application logs; a FUSE daemon's own log is one; a
        # process's SIGBUS for poisoned memory and a memory tester's report are in its own output alone; the
        # kubelet's and a CSI driver's mount failures are in the node's journal, a pod's log, events and kubectl's text
        # a process's kernel stack (/proc/<pid>/stack) is pasted into an application's output
        wide = {"sched.node_down", "storage.error", "storage.wait_frame"}
        want = ({"application"} if e.name == "host.mce.process"
                else {"application", "syslog"} if e.name == "storage.mount"
                else {"kernel", "syslog", "application"} if e.name in wide else {"kernel", "syslog"})
        assert e.sources == frozenset(want)
        for w in e.literals:
            assert len(w) >= 4 and w.strip().lower() not in {"error", "fatal", "failed", "warning"}


# ------------------------------------------------------ host.user_fault

USER_FAULT = host.UserFaultExtractor()

USER_FAULT_CASES: list[tuple[str, dict[str, Any]]] = [
    # ai4d-iasc/trixie#55 (cn110 syslog)
    ("Mar 24 09:53:55 cn110 kernel: python[3551]: segfault at 1378 ip 00007fff859dbeff sp 00007fff3b60ce60 error 4 "
     "in libcuda.so.418.67[7fff858c5000+dec000]",
     {"signal": "SIGSEGV", "by": "self", "proc": "python", "pid": 3551, "object": "libcuda.so",
      "driver_library": True}),
    # the same line as the poster's grep wrapped it: still the library
    ("Mar 24 11:31:44 cn110 kernel: python[18851]: segfault at 1378 ip 00007fff859dbeff sp 00007fff3b60ce60 error 4 "
     "in libcuda.so.418.67[7fff8",
     {"object": "libcuda.so", "driver_library": True}),
    # tests/scenarios/sw-segfault (a workload extension)
    ("[88231.122000] pt_autograd_0[214502]: segfault at 10 ip 00007f2b3c9a4e1d sp 00007f29a5ffe9b0 error 4 in "
     "flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so[7f2b3c800000+1d4e000] likely on CPU 37 (core 5, socket 1)",
     {"signal": "SIGSEGV", "proc": "pt_autograd_0", "driver_library": False,
      "object": "flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so"}),
    # synthetic, x86 traps.c wordings
    ("traps: python3[4242] general protection fault ip:7f1c2 sp:7ffd3 error:0 in libtorch_cpu.so[7f1c0+2000]",
     {"signal": "SIGSEGV", "object": "libtorch_cpu.so", "driver_library": False}),
    ("traps: python3[4242] trap invalid opcode ip:7f1c2 sp:7ffd3 error:0 in libnvidia-ptxjitcompiler.so.535.183.01"
     "[7f1c0+2000]",
     {"signal": "SIGILL", "object": "libnvidia-ptxjitcompiler.so", "driver_library": True}),
    ("traps: a.out[77] trap divide error ip:401136 sp:7ffc error:0 in a.out[401000+1000]",
     {"signal": "SIGFPE", "object": "a.out", "driver_library": False}),
]


@pytest.mark.parametrize(("line", "fields"), USER_FAULT_CASES)
def test_user_fault(line: str, fields: dict[str, Any]) -> None:
    d = one(USER_FAULT, line)
    assert d.kind == "process.signal"
    assert_fields(d, fields)


@pytest.mark.parametrize(
    "line",
    [
        # abrt's own report of the same crash names no faulting object (syslog, not the kernel's line)
        "Mar 24 11:31:44 cn110 abrt-hook-ccpp: Process 18817 (python3.7) of user 171971032 killed by SIGSEGV - "
        "dumping core",
        # a kernel oops is the kernel's fault, not a process's (kernel.panic reads it)
        "BUG: unable to handle page fault for address: ffffa0d9c0000000",
        # synthetic: a program's own message that mentions a segfault
        "worker[3]: segfault at startup was fixed in 2.1, see the changelog",
    ],
)
def test_user_fault_negatives(line: str) -> None:
    assert scan(USER_FAULT, [line]) == []


def test_user_fault_quoted_twice_is_one_crash() -> None:
    line = USER_FAULT_CASES[0][0]
    assert len(scan(USER_FAULT, [line, line])) == 1


# ------------------------------------------------------------------ pcie.bmc

BMC = host.BmcBusEventExtractor()


@pytest.mark.parametrize(
    ("line", "severity"),
    [
        # illinois-scicomp/machine-shop-maintenance#76 (ipmitool sel)
        ("  6a | 04/12/2024 | 03:27:29 PM CDT | Critical Interrupt | Bus Correctable error () | Asserted", "corrected"),
        # synthetic, the same table's other offsets
        ("  7b | 04/12/2024 | 03:27:30 PM CDT | Critical Interrupt #0x19 | Bus Fatal Error | Asserted",
         "uncorrected_fatal"),
        ("  7c | 04/12/2024 | 03:27:31 PM CDT | Critical Interrupt | PCI PERR | Asserted", "uncorrected_nonfatal"),
    ],
)
def test_bmc_bus_events(line: str, severity: str) -> None:
    d = one(BMC, line, source="syslog")
    assert d.kind == "pcie.aer"
    assert_fields(d, {"severity": severity, "bdf": None, "source": "bmc"})


def test_bmc_deasserted_bus_event_is_not_an_error() -> None:
    line = "  7d | 04/12/2024 | 03:29:31 PM CDT | Critical Interrupt | Bus Fatal Error | Deasserted"  # synthetic
    assert scan(BMC, [line], source="syslog") == []


def _bus_spellings() -> list[tuple[str, str]]:
    """Every spelling of every catalog/platform.yaml `ipmi_bus_events` row: ipmitool's (include/ipmitool/ipmi_sel.h,
    ipmitool/ipmitool@be11d948) and FreeIPMI's (ipmi_sensor_type_critical_interrupt_short,
    chu11/freeipmi-mirror@53e7bd2c)."""
    return [(s, r.severity) for r in tables.ipmi_bus_events() for s in r.spellings]


@pytest.mark.parametrize(("words", "severity"), _bus_spellings())
def test_bmc_bus_event_rows_in_each_layout(words: str, severity: str) -> None:
    """Each row's words as ipmitool's `sel elist` prints an asserted record, as FreeIPMI's `ipmi-sel -v` does (its
    Event Direction column: ipmi-sel/src/ipmi-sel.c) and as `ipmi-sensors` lists a present state
    (ipmi-sensors/ipmi-sensors-simple-output.c)."""
    for line in (f"  6a | 04/12/2024 | 03:27:29 PM CDT | Critical Interrupt #0x19 | {words} | Asserted",
                 f"  12 | Apr-12-2024 | 03:27:29 | PCIe Err | Critical Interrupt | Assertion Event | {words}",
                 f"4703 | PCIe Err        | Critical Interrupt | N/A        | N/A   | '{words}'"):
        d = one(BMC, line, source="syslog")
        assert_fields(d, {"severity": severity, "bdf": None, "source": "bmc"})


def test_bmc_bus_spellings_are_one_comparison() -> None:
    """ipmitool's `Bus Correctable error` and FreeIPMI's `Bus Correctable Error` (the words tnode97 found read in
    ipmitool's case only) reach the same row through catalog/tables.py ipmi_bus_event."""
    ipmitool, freeipmi = tables.ipmi_bus_event("Bus Correctable error"), tables.ipmi_bus_event("Bus Correctable Error")
    assert ipmitool is not None and ipmitool is freeipmi and ipmitool.severity == "corrected"
    assert tables.ipmi_bus_event("Bus Correctable") is None


@pytest.mark.parametrize("line", [
    # FreeIPMI ipmi-sel -v: the error going away
    "  13 | Apr-12-2024 | 03:29:31 | PCIe Err | Critical Interrupt | Deassertion Event | Bus Uncorrectable Error",
    # the offsets no row reads (critical_interrupt_short 00h, 09h): an NMI that names no bus
    "4703 | PCIe Err        | Critical Interrupt | N/A        | N/A   | 'Front Panel NMI/Diagnostic Interrupt'",
    "  14 | Apr-12-2024 | 03:29:31 | NMI | Critical Interrupt | Assertion Event | Fatal NMI",
    # a healthy sensor in ipmi-sensors, and another sensor type's quoted state
    "4703 | PCIe Err        | Critical Interrupt | N/A        | N/A   | 'OK'",
    "4704 | PS1 Status      | Power Supply      | N/A        | N/A   | 'Presence detected'",
])
def test_near_miss_bmc_bus_rows_that_name_no_bus_error(line: str) -> None:
    assert scan(BMC, [line], source="syslog") == []


@pytest.mark.parametrize(("line", "severity"), [
    # FreeIPMI's memory words (ipmi_sensor_type_memory_short 01h, 05h): ipmi-sel -v and ipmi-sensors
    ("  5 | May-14-2023 | 10:00:00 | DIMM_A1 | Memory | Assertion Event | Uncorrectable memory error",
     "uncorrected"),
    ("4701 | DIMM_A1 | Memory            | N/A        | N/A   | 'Correctable memory error logging limit reached'",
     "corrected"),
    # the processor sensor (07h): ipmitool's sel list (00h, 06h, 0Bh, 0Ch) and FreeIPMI's layouts (00h, 0Ch)
    ("   1 | 05/14/2023 | 10:00 | Processor #0x01 | IERR | Asserted", "uncorrected"),
    ("   2 | 05/14/2023 | 10:00:00 | Processor #0x01 | SM BIOS Uncorrectable CPU-complex Error | Asserted",
     "uncorrected"),
    ("   3 | 05/14/2023 | 10:00:00 | Processor #0x01 | Uncorrectable machine check exception | Asserted",
     "uncorrected"),
    ("   4 | 05/14/2023 | 10:00:00 | Processor #0x01 | Correctable machine check error | Asserted",
     "corrected"),
    ("4702 | CPU1 Status     | Processor         | N/A        | N/A   | 'Processor Presence detected' 'IERR'",
     "uncorrected"),
    ("  7 | May-14-2023 | 10:00:00 | CPU1 Status | Processor | Assertion Event | Correctable Machine Check Error",
     "corrected"),
])
def test_bmc_processor_and_freeipmi_memory_events(line: str, severity: str) -> None:
    """catalog/platform.yaml `memory_error_words`' BMC rows for FreeIPMI's memory words and both printers' processor
    words (ipmitool/ipmitool@be11d948 include/ipmitool/ipmi_sel.h; chu11/freeipmi-mirror@53e7bd2c
    libfreeipmi/spec/ipmi-sensor-and-event-code-tables-spec.c)."""
    d = one(host.MceExtractor(), line, source="syslog")
    assert_fields(d, {"severity": severity, "source": "bmc"})


@pytest.mark.parametrize("line", [
    # the error going away, FreeIPMI's direction
    "  8 | May-14-2023 | 10:00:00 | CPU1 Status | Processor | Deassertion Event | IERR",
    # the processor's states that decide nothing (07h offsets 01h, 07h, 0Ah: no row)
    "4702 | CPU1 Status     | Processor         | N/A        | N/A   | 'Processor Presence detected'",
    "   5 | 05/14/2023 | 10:00:00 | Processor #0x01 | Thermal Trip | Asserted",
    "   6 | 05/14/2023 | 10:00:00 | Processor #0x01 | Throttled | Asserted",
    # the memory's that decide nothing (0Ch offset 04h), and the processor's words under another sensor type
    "  9 | May-14-2023 | 10:00:00 | DIMM_A1 | Memory | Assertion Event | Memory Device Disabled",
    "   7 | 05/14/2023 | 10:00:00 | System Event #0x83 | IERR | Asserted",
])
def test_near_miss_bmc_processor_rows(line: str) -> None:
    assert scan(host.MceExtractor(), [line], source="syslog") == []


# ------------------------------------------------------------------ the BMC's power events

POWER = host.BmcPowerEventExtractor()


@pytest.mark.parametrize(
    ("line", "sensor", "state"),
    [
        # openstreetmap/operations#513 and #514 (ipmitool sel list)
        ("   1 | 03/07/2021 | 07:10:10 | Power Supply #0xc4 | Failure detected () | Asserted", "Power Supply",
         "failed"),
        ("1e60 | 02/16/2021 | 23:46:57 | Power Unit #0x44 | Redundancy Lost | Asserted", "Power Unit",
         "redundancy_lost"),
        # synthetic: `sel elist` names the sensor after its type's words; the feed, not the supply
        ("  2a | 03/07/2021 | 07:10:09 | Power Supply PS1 Status | Power Supply AC lost | Asserted", "Power Supply",
         "input_lost"),
        ("  2b | 03/07/2021 | 07:10:09 | Power Unit #0x01 | AC lost | Asserted", "Power Unit", "input_lost"),
    ],
)
def test_bmc_power_events(line: str, sensor: str, state: str) -> None:
    d = one(POWER, line, source="syslog")
    assert d.kind == "host.power"
    assert_fields(d, {"sensor": sensor, "state": state})


@pytest.mark.parametrize("line", [
    # synthetic: the state going away; another sensor's words (a drive's fault, a fan's threshold); a power
    # sensor's words in prose, not a SEL record
    "   2 | 03/07/2021 | 07:40:10 | Power Supply #0xc4 | Failure detected () | Deasserted",
    "   7 | 03/07/2021 | 07:10:09 | Drive Slot / Bay #0x21 | Drive Fault | Asserted",
    "   8 | 03/07/2021 | 07:10:09 | Fan #0x30 | Failure detected | Asserted",
    "Power Supply failure detected on the spare node yesterday, Redundancy Lost was asserted",
])
def test_near_miss_no_power_event(line: str) -> None:
    assert scan(POWER, [line], source="syslog") == []


def _freeipmi_power_rows() -> list[tuple[str, str, str]]:
    """Every FreeIPMI row of catalog/platform.yaml `ipmi_power_events` (printed_by FreeIPMI's short strings,
    libfreeipmi/spec/ipmi-sensor-and-event-code-tables-spec.c, chu11/freeipmi-mirror@282e8bb9)."""
    return [(r.sensor, r.text, r.state) for r in tables.ipmi_power_events() if r.printed_by.startswith("FreeIPMI")]


@pytest.mark.parametrize(("sensor", "text", "state"), _freeipmi_power_rows())
def test_freeipmi_power_rows_in_both_layouts(sensor: str, text: str, state: str) -> None:
    """Each FreeIPMI row as ipmi-sensors prints a present state (after `Presence detected`, as
    openstreetmap/operations#944's PS2 row) and as ipmi-sel -v prints an asserted record (its Event Direction
    column: ipmi-sel/src/ipmi-sel.c)."""
    sensors = f"4694 | PS2 Status      | {sensor}      | N/A        | N/A   | 'Presence detected' '{text}'"
    sel = f"  5 | Mar-07-2021 | 07:10:10 | PS2 Status | {sensor} | Assertion Event | {text}"
    for line in (sensors, sel):
        d = one(POWER, line, source="syslog")
        assert d.kind == "host.power"
        assert_fields(d, {"sensor": sensor, "state": state, "event": text})


@pytest.mark.parametrize("line", [
    # openstreetmap/operations#944: the healthy supply beside the failed one
    "4627 | PS1 Status      | Power Supply      | N/A        | N/A   | 'Presence detected'",
    # FreeIPMI's states that decide nothing (ipmi_sensor_type_power_supply_short offsets 07h, 06h; the redundancy
    # regained), and a healthy sensor's 'OK'
    "4630 | PS3 Status      | Power Supply      | N/A        | N/A   | 'Presence detected' 'Power Supply Inactive'",
    "4631 | PS4 Status      | Power Supply      | N/A        | N/A   | 'Configuration error'",
    "4640 | PS Redundancy   | Power Supply      | N/A        | N/A   | 'Fully Redundant'",
    "4641 | PS Redundancy   | Power Supply      | N/A        | N/A   | 'OK'",
    # ipmi-sel -v: the failure going away
    "  6 | Mar-07-2021 | 07:40:10 | PS2 Status | Power Supply | Deassertion Event | Power Supply Failure detected",
    # another sensor type's failure words in the same layout (a fan, a drive)
    "4700 | FAN1            | Fan               | 0.00       | RPM   | 'Power Supply Failure detected'",
])
def test_near_miss_freeipmi_rows_that_name_no_power_fault(line: str) -> None:
    assert scan(POWER, [line], source="syslog") == []


# ------------------------------------------------------------------ a server event log's memory errors

MCE = host.MceExtractor()


@pytest.mark.parametrize(
    ("line", "severity"),
    [
        # HPE's Integrated Management Log, as check_hpasm's event subsystem (lausser/check_hpasm,
        # HP::Proliant::Component::EventSubsystem) quotes its class-3 entries
        ("Uncorrectable Memory Error detected by ROM-based memory validation (Board 1, Memory Module 4)",
         "uncorrected"),
        ("Corrected Memory Error threshold exceeded (System Memory, Memory Module 1)", "corrected"),
        # openstreetmap/operations#1182 (https://github.com/openstreetmap/operations/issues/1182): the DIMM excluded
        ("DIMM Failure - Uncorrectable Memory Error (Processor 2, DIMM 3)", "uncorrected"),
    ],
)
def test_a_server_event_logs_memory_error(line: str, severity: str) -> None:
    d = one(MCE, line, source="syslog")
    assert d.kind == "host.mce"
    assert_fields(d, {"severity": severity})


@pytest.mark.parametrize(
    "line",
    [
        # BaldMansMojo/check_vmware_esx#176: ESXi's view of the SEL sensors, every one deasserted (healthy)
        "[Ok] [Type: Memory] [Name: Memory Device 1 B  12: Uncorrectable ECC - Deassert] [Label: Green] [Summary: "
        "Sensor is operating under normal conditions]",
        # the same table's other classes are not memory (check_hpasm's quote of a class-5 entry)
        "Processor Correctable error threshold exceeded (Board 0, Processor 2)",
    ],
)
def test_what_is_no_memory_error_of_a_server_event_log(line: str) -> None:
    assert scan(MCE, [line], source="syslog") == []


def test_systemd_says_the_oom_killer_killed_a_process_of_a_unit() -> None:
    # ollama/ollama#9322 (https://github.com/ollama/ollama/issues/9322), the reporter's journal as a contributor
    # quoted it: systemd's two lines for the service (src/core/unit.c, src/core/service.c)
    lines = ["Feb 24 11:16:31 adl systemd[1]: ollama.service: A process of this unit has been killed by the OOM "
             "killer.",
             "Feb 24 11:16:32 adl systemd[1]: ollama.service: Failed with result 'oom-kill'."]
    drafts = scan(OOM, lines)
    assert [d.kind for d in drafts] == ["host.oom_kill", "host.oom_kill"]
    assert_fields(drafts[0], {"proc": "ollama.service", "cgroup": True})


def test_systemds_oom_words_without_the_units_name() -> None:
    # ggml-org/llama.cpp#20509: a commenter's `journalctl -u` excerpt, the words printed without the unit's name
    lines = ["A process of this unit has been killed by the OOM killer.",
             "Control process exited, code=exited, status=1/FAILURE",
             "Failed with result 'oom-kill'."]
    drafts = scan(OOM, lines, source="syslog")
    assert [d.kind for d in drafts] == ["host.oom_kill", "host.oom_kill"]
    assert "proc" not in drafts[0].fields and drafts[0].fields["cgroup"] is True


@pytest.mark.parametrize("line", [
    # the same service's other results (systemd's words for an exit and a signal): no OOM kill
    "Feb 24 11:16:32 adl systemd[1]: ollama.service: Failed with result 'exit-code'.",
    "Feb 24 11:16:32 adl systemd[1]: ollama.service: Failed with result 'signal'.",
    # a person's sentence about the OOM killer names no unit
    "It looks like a process of this unit has been killed by the OOM killer, see above.",
    # quoted inside a sentence: the words are not at the line's start nor after a unit or systemd's tag
    "the journal said A process of this unit has been killed by the OOM killer. twice",
])
def test_near_miss_systemds_other_results_and_prose_are_no_oom_kill(line: str) -> None:
    assert scan(OOM, [line]) == []


# ------------------------------------------------------------ the ConnectX firmware refusing a command it lacks


def test_a_command_the_connectx_firmware_does_not_offer_is_understood() -> None:
    from firstfault.extract.unrecognized import ErrorWords

    # leptonai/gpud#1164 (node1's journal, verbatim): gpud's InfiniBand check asks for a register the adapter lacks;
    # the messages stop when the check is off. Known to the error words' probe: no event, and no unrecognized line
    asked = ("Dec 02 09:56:04 node1 kernel: mlx5_core 0000:d2:00.0: mlx5_cmd_out_err:838:(pid 1441871): "
             "ACCESS_REG(0x805) op_mod(0x1) failed, status bad operation(0x2), syndrome (0x9a6171), err(-22)")
    assert scan(host.EXTRACTORS, [asked]) == [] and ErrorWords.known(asked)
    # the same report before Linux 5.18 (mlx5_cmd_check, the same words)
    assert ErrorWords.known("mlx5_core 0000:5e:00.0: mlx5_cmd_check:794:(pid 3120): ACCESS_REG(0x805) op_mod(0x1) "
                            "failed, status bad operation(0x2), syndrome (0x2a7f2b)")
    # near misses (cmd.c's format, filled in): a command the firmware failed for its state, its parameters or in
    # itself stays an error line, which keeps a run whose end is not shown from `none`
    for status in ("bad resource state(0x9)", "internal error(0x1)", "bad parameter(0x3)"):
        assert not ErrorWords.known("mlx5_core 0000:d2:00.0: mlx5_cmd_out_err:838:(pid 1441871): CREATE_QP(0x500) "
                                    f"op_mod(0x0) failed, status {status}, syndrome (0x3a1b2c), err(-22)")
