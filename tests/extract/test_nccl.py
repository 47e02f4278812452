"""NCCL / c10d extractors on real lines (domain-facts sections 3.1-3.5).

Lines are verbatim from the public issues cited next to them unless marked
`synthetic`; each meant to match is checked to hold one of the extractor's
literals (the scanner's prefilter contract).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault.extract import nccl
from firstfault.extract.base import Draft, LineContext, LineExtractor
from tests.extract import helpers
from tests.extract.helpers import assert_fields, kinds

TIMEOUT = nccl.C10dTimeoutExtractor()
ERROR = nccl.NcclErrorExtractor()
ADDRESS = nccl.NcclAddressExtractor()
ALL: tuple[LineExtractor, ...] = (*nccl.EXTRACTORS, *helpers.APPLICATION)


def scan(
    extractors: tuple[LineExtractor, ...] | LineExtractor,
    lines: list[str],
    source: str = "application",
    rank: int | None = None,
) -> list[Draft]:
    return helpers.scan(extractors, lines, source, rank)


def one(ex: LineExtractor, line: str, source: str = "application") -> Draft:
    return helpers.one(ex, line, source)


# ------------------------------------------------------------ nccl.timeout

TIMEOUT_CASES: list[tuple[str, dict[str, Any], int | None]] = [
    # PyTorch <= 2.0 (OFA-Sys/OFA#271)
    (
        "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds "
        "before timing out.",
        {"seq": 469508, "op": "ALLREDUCE", "timeout_ms": 1800000, "ran_ms": 1802212, "stuck": False},
        None,
    ),
    # PyTorch 2.2+ rank prefix and glog header (hiyouga/LlamaFactory#7396)
    (
        "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, "
        "NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.",
        {"seq": 1580, "op": "ALLREDUCE", "timeout_ms": 600000, "ran_ms": 600060, "stuck": False},
        0,
    ),
    # PyTorch 2.6+ (NVIDIA/nccl#1730)
    (
        "[rank118]:[E603 17:48:01.005271823 ProcessGroupNCCL.cpp:632] [Rank 118] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=2398459, OpType=ALLREDUCE, NumelIn=8652160, "
        "NumelOut=8652160, Timeout(ms)=1800000) ran for 1800068 milliseconds before timing out.",
        {"seq": 2398459, "op": "ALLREDUCE", "timeout_ms": 1800000, "ran_ms": 1800068},
        118,
    ),
    # the abort's what() (NVIDIA/Megatron-LM#935)
    (
        "  what():  [PG 1 Rank 7] Process group watchdog thread terminated with exception: [Rank 7] "
        "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=199, OpType=_REDUCE_SCATTER_BASE, "
        "NumelIn=7098994688, NumelOut=443687168, Timeout(ms)=600000) ran for 882725 milliseconds before "
        "timing out.",
        {"seq": 199, "op": "_REDUCE_SCATTER_BASE", "timeout_ms": 600000, "ran_ms": 882725},
        None,
    ),
    # PyTorch 1.8 (no SeqNum), synthetic from the 1.8 format string
    (
        "[E ProcessGroupNCCL.cpp:566] [Rank 3] Watchdog caught collective operation timeout: "
        "WorkNCCL(OpType=BROADCAST, Timeout(ms)=1800000) ran for 1800310 milliseconds before timing out.",
        {"op": "BROADCAST", "timeout_ms": 1800000, "ran_ms": 1800310},
        None,
    ),
]


@pytest.mark.parametrize(("line", "expected", "rank"), TIMEOUT_CASES)
def test_watchdog_timeout_forms(line: str, expected: dict[str, Any], rank: int | None) -> None:
    d = one(TIMEOUT, line)
    assert d.kind == "nccl.timeout"
    assert_fields(d, expected)
    assert d.rank == rank


def test_pytorch_18_timeout_has_no_seq() -> None:
    d = one(TIMEOUT, TIMEOUT_CASES[4][0])
    assert "seq" not in d.fields


@pytest.mark.parametrize(
    ("line", "timeout_ms", "rank"),
    [
        # PyTorch 2.4+ heartbeat (modelscope/ms-swift#7992)
        (
            "[rank4]:[E205 18:11:06.375750231 ProcessGroupNCCL.cpp:1870] [PG ID 12 PG GUID "
            "99(EXPERT_MODEL_PARALLEL_GROUP) Rank 4] ProcessGroupNCCL's watchdog got stuck for 480 seconds "
            "without making progress in monitoring enqueued collectives. This typically indicates a "
            "NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog",
            480000,
            4,
        ),
        # PyTorch 2.3 fatal glog level (Intellindust-AI-Lab/DEIM#105)
        (
            "[rank1]:[F ProcessGroupNCCL.cpp:1169] [PG 0 Rank 1] [PG 0 Rank 1] ProcessGroupNCCL's watchdog "
            "got stuck for 600 seconds without making progress in monitoring enqueued collectives.",
            600000,
            1,
        ),
    ],
)
def test_heartbeat_watchdog_stuck(line: str, timeout_ms: int, rank: int) -> None:
    d = one(TIMEOUT, line)
    assert_fields(d, {"stuck": True, "timeout_ms": timeout_ms})
    assert d.rank == rank


def test_heartbeat_pair_is_one_event() -> None:
    """2.3 prints `Heartbeat monitor timed out!` then `watchdog got stuck`: one abort."""
    lines = [
        "[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Heartbeat monitor timed out! Process will be "
        "terminated after dumping debug info. workMetaList_.size()=103",
        "[rank1]:[E ProcessGroupNCCL.cpp:1153] [PG 0 Rank 1] ProcessGroupNCCL preparing to dump debug info.",
        "[rank1]:[F ProcessGroupNCCL.cpp:1169] [PG 0 Rank 1] [PG 0 Rank 1] ProcessGroupNCCL's watchdog got "
        "stuck for 600 seconds without making progress in monitoring enqueued collectives.",
    ]
    drafts = scan(TIMEOUT, lines)
    assert len(drafts) == 1
    assert drafts[0].fields["stuck"] is True


def test_watchdog_and_abort_what_count_once() -> None:
    """Megatron-LM#935: the watchdog line, then the abort repeating the same WorkNCCL."""
    lines = [
        "[rank7]:[E1102 10:03:09.123456 4242 ProcessGroupNCCL.cpp:607] [Rank 7] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=199, OpType=_REDUCE_SCATTER_BASE, NumelIn=7098994688, "
        "NumelOut=443687168, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.",
        "[rank7]:[E1102 10:03:09.223456 4242 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 7] Exception (either an "
        "error or timeout) detected by watchdog at work: 199, last enqueued NCCL work: 199, last completed "
        "NCCL work: 198.",
        "[rank7]:terminate called after throwing an instance of 'c10::DistBackendError'",
        "[rank7]:  what():  [PG 1 Rank 7] Process group watchdog thread terminated with exception: [Rank 7] "
        "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=199, OpType=_REDUCE_SCATTER_BASE, "
        "NumelIn=7098994688, NumelOut=443687168, Timeout(ms)=600000) ran for 882725 milliseconds before "
        "timing out.",
        "Exception raised from checkTimeout at /opt/pytorch/pytorch/torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:567 (most recent call first):",
    ]
    drafts = scan(ALL, lines)
    # The status line is its own fact (nccl.watchdog_status, read by the leads).
    assert kinds(drafts) == ["nccl.timeout", "nccl.watchdog_status"], drafts
    assert drafts[0].rank == 7
    assert drafts[0].fields["ran_ms"] == 600012


def test_same_seqnum_on_different_ranks_in_one_file_counts_per_rank() -> None:
    lines = [
        f"[rank{r}]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, "
        "Timeout(ms)=600000) ran for 600060 milliseconds before timing out."
        for r in (0, 1, 2)
    ]
    drafts = scan(TIMEOUT, lines)
    assert [d.rank for d in drafts] == [0, 1, 2]


def test_old_some_operations_line_after_watchdog_is_not_a_second_timeout() -> None:
    """pytorch/pytorch#97066: the <= 2.0 trio after one timeout."""
    lines = [
        "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds "
        "before timing out.",
        "[E ProcessGroupNCCL.cpp:478] Some NCCL operations have failed or timed out. Due to the "
        "asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete "
        "data.",
        "[E ProcessGroupNCCL.cpp:483] To avoid data inconsistency, we are taking the entire process down.",
    ]
    drafts = scan(TIMEOUT, lines)
    assert len(drafts) == 1
    assert drafts[0].fields["seq"] == 469508


def test_old_some_operations_line_alone_is_a_timeout() -> None:
    line = (
        "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous "
        "nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data."
    )
    d = one(TIMEOUT, line)
    assert d.kind == "nccl.timeout"
    assert d.fields == {"stuck": False}


def test_joined_remote_error_line_is_not_a_timeout() -> None:
    """tatsu-lab/stanford_alpaca#207 (NCCL 2.14.3), the whole report on one line."""
    line = (
        "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous "
        "nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data. "
        "[E ProcessGroupNCCL.cpp:460] To avoid data inconsistency, we are taking the entire process down. "
        "terminate called after throwing an instance of 'std::runtime_error' what(): NCCL error: remote "
        "process exited or there was a network error, NCCL version 2.14.3 ncclRemoteError: A call failed "
        "possibly due to a network error or a remote process exiting prematurely. Last error: NET/IB : Got "
        "completion from peer 11.214.147.122<39138> with error 12, opcode 0, len 0, vendor err 129"
    )
    drafts = scan(ALL, [line])
    assert sorted(kinds(drafts)) == ["nccl.ib_completion_error", "nccl.remote_error"], drafts
    ib = next(d for d in drafts if d.kind == "nccl.ib_completion_error")
    assert_fields(ib, {"status": 12, "vendor_err": 129, "peer": "11.214.147.122", "opcode": 0})


# ------------------------------------------------- nccl.ib_completion_error

IB_CASES: list[tuple[str, dict[str, Any], str, str]] = [
    # NCCL >= 2.19 ib_plugin (NVIDIA/nccl#1814)
    (
        "hostname-test:984:1357 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer "
        "172.36.143.59<44206> with status=12 opcode=129 len=65536 vendor err 129 (Recv) localGid "
        "::ffff:29.87.88.182 remoteGids::ffff:29.87.4.221",
        {"status": 12, "opcode": 129, "vendor_err": 129, "peer": "172.36.143.59"},
        "hostname-test",
        "gpu4",
    ),
    # the flush error that follows it on the same QP (NVIDIA/nccl#1814)
    (
        "hostname-test:984:1357 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer "
        "172.36.143.59<44206> with status=5 opcode=32656 len=32659 vendor err 249 (Recv) localGid "
        "::ffff:29.87.88.182 remoteGids::ffff:29.87.4.221",
        {"status": 5, "vendor_err": 249, "peer": "172.36.143.59"},
        "hostname-test",
        "gpu4",
    ),
    # RoCE IPv6 GIDs (NVIDIA/nccl#1405)
    (
        "kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer "
        "10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid "
        "fd00:1148:9000:5000:4:200:3:ff22 remoteGidsfd00:1148:9000:5000:4:200:3:ff1f",
        {"status": 12, "opcode": 0, "vendor_err": 129, "peer": "10.216.210.236"},
        "kp-ddp-worker-0",
        "gpu4",
    ),
    # NCCL <= 2.18, link-local IPv6 peer (NVIDIA/nccl#928)
    (
        "H100-2:19989:20082 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
        "fe80::966d:ae03:8b:df78%ib0<53249> with error 4, opcode 32564, len 32564, vendor err 81 (Send)",
        {"status": 4, "opcode": 32564, "vendor_err": 81, "peer": "fe80::966d:ae03:8b:df78%ib0"},
        "H100-2",
        "gpu1",
    ),
    # newest net_ib format string (NCCL source: ncclIbLogCompletionWithError), synthetic values
    (
        "node-02:4242:4300 [3] transport/net_ib.cc:2210 NCCL WARN NET/IB: Got completion from peer "
        "10.0.0.2<35512> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RECV(128) vendor_err=129 "
        "localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_3",
        {"status": 12, "opcode": 128, "vendor_err": 129, "peer": "10.0.0.2", "hca": "mlx5_3"},
        "node-02",
        "gpu3",
    ),
]


@pytest.mark.parametrize(("line", "expected", "host", "device"), IB_CASES)
def test_ib_completion_forms(line: str, expected: dict[str, Any], host: str, device: str) -> None:
    d = one(ERROR, line)
    assert d.kind == "nccl.ib_completion_error"
    assert_fields(d, expected)
    assert d.host == host
    assert d.device == device


def test_ib_completion_with_timestamp_prefix_and_glog_rank_prefix() -> None:
    line = (
        "[rank12]:[2026-11-02 10:03:07] node-03:1234:1300 [4] transport/net_ib.cc:1698 NCCL WARN NET/IB : "
        "Got completion from peer 10.0.0.2<35512> with status=12 opcode=129 len=0 vendor err 129 (Recv) "
        "localGid ::ffff:10.0.0.3 remoteGids::ffff:10.0.0.2"
    )
    d = one(ERROR, line)
    assert (d.rank, d.host, d.device) == (12, "node-03", "gpu4")


def test_ib_completion_quoted_by_pytorch_counts_once() -> None:
    """The WARN line, NCCL's INFO back-trace, then DistBackendError quoting it as `Last error:`
    (deepseek-ai/DeepEP#106 shape)."""
    lines = [
        "gpu-7:5151:5200 [2] transport/net_ib.cc:1698 NCCL WARN NET/IB : Got completion from peer "
        "172.21.17.89<38536> with error 5, opcode 48, len 32710, vendor err 249",
        "gpu-7:5151:5200 [2] NCCL INFO transport/net.cc:1298 -> 6",
        "gpu-7:5151:5200 [2] NCCL INFO proxy.cc:694 -> 6",
        "Traceback (most recent call last):",
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
        "remote process exited or there was a network error, NCCL version 2.21.5",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        "Last error:",
        "NET/IB : Got completion from peer 172.21.17.89<38536> with error 5, opcode 48, len 32710, vendor err 249",
    ]
    drafts = scan(ALL, lines)
    assert kinds(drafts) == ["nccl.ib_completion_error", "nccl.remote_error"], drafts
    assert drafts[0].host == "gpu-7"


# ------------------------------------------------------- nccl.remote_error


@pytest.mark.parametrize(
    "line",
    [
        # NVIDIA/nccl#2076
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
        "NCCLUtils.hpp:268, remote process exited or there was a network error, NCCL version 2.21.5",
        # NVIDIA/nccl#795
        "node-5:1234:1290 [0] misc/socket.cc:518 NCCL WARN Net : Call to recv from 10.200.84.247<58355> "
        "failed : Broken pipe",
        "node-5:1234:1290 [0] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer node-6<47861>",
        "node-5:1234:1291 [0] proxy.cc:1119 NCCL WARN [Proxy Service 9] Failed to execute operation Connect "
        "from rank 9, retcode 6",
        # PyTorch 2.x store failure while creating a communicator (synthetic from the c10d format)
        "[rank3]:torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving "
        "ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: "
        "Connection reset by peer",
    ],
)
def test_remote_error_forms(line: str) -> None:
    d = one(ERROR, line)
    assert d.kind == "nccl.remote_error"
    assert d.fields["detail"]


def test_pytorch_remote_error_report_counts_once_per_rank() -> None:
    """NVIDIA/nccl#2076 with the PyTorch >= 2.2 rank prefix on every line."""
    lines = [
        "[rank5]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
        "NCCLUtils.hpp:268, remote process exited or there was a network error, NCCL version 2.21.5",
        "[rank5]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
        "prematurely.",
        "[rank5]: Last error:",
        "[rank5]: socketProgressOpt: Call to recv from 172.16.0.4<33759> failed : Connection reset by peer",
        "[rank6]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
        "NCCLUtils.hpp:268, remote process exited or there was a network error, NCCL version 2.21.5",
    ]
    drafts = scan(ALL, lines)
    assert kinds(drafts) == ["nccl.remote_error", "nccl.remote_error"], drafts
    assert [d.rank for d in drafts] == [5, 6]


def test_bare_connection_reset_is_not_nccl() -> None:
    line = "ConnectionResetError: [Errno 104] Connection reset by peer"
    assert not [d for d in scan(ERROR, [line]) if d.kind.startswith("nccl.")]


# ----------------------------------------------- nccl.communicator_aborted


@pytest.mark.parametrize(
    "line",
    [
        # PyTorch 1.x wait() after a watchdog abort (synthetic from the c10d format string)
        "RuntimeError: NCCL communicator was aborted on rank 3.  Original reason for failure was: "
        "NCCL error: unhandled system error, NCCL version 2.10.3",
        "[rank2]:[E1102 10:03:09.123456 4242 ProcessGroupNCCL.cpp:1285] [PG 0 Rank 2] NCCL communicator was "
        "aborted on rank 2.",
    ],
)
def test_communicator_aborted(line: str) -> None:
    drafts = scan(ERROR, [line])
    assert kinds(drafts) == ["nccl.communicator_aborted"], drafts


def test_aborted_by_timeout_is_aborted_and_timeout() -> None:
    line = (
        "RuntimeError: NCCL communicator was aborted on rank 1.  Original reason for failure was: [Rank 1] "
        "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=77, OpType=BROADCAST, "
        "Timeout(ms)=1800000) ran for 1800931 milliseconds before timing out."
    )
    drafts = scan(ALL, ["Traceback (most recent call last):", line])
    assert sorted(kinds(drafts)) == ["nccl.communicator_aborted", "nccl.timeout"], drafts


# --------------------------------------------------------------- nccl.error

NCCL_ERROR_CASES: list[tuple[str, str | None, int | None]] = [
    # NVIDIA/nccl#1410, PyTorch 2.3 rank prefix
    (
        "[rank7]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "NCCLUtils.hpp:275, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5",
        "ncclUnhandledCudaError",
        7,
    ),
    # pytorch/pytorch#131755
    (
        "n122-164-108:7400:7642 [1] include/alloc.h:125 NCCL WARN Cuda failure 700 'an illegal memory "
        "access was encountered'",
        "ncclUnhandledCudaError",
        None,
    ),
    # NVIDIA/nccl#1488 (NVLS after a Fabric Manager restart)
    (
        "node-9:2001:2050 [6] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'",
        "ncclUnhandledCudaError",
        None,
    ),
    # pytorch#170045 title
    (
        "ncclUnhandledCudaError: Call to CUDA function failed. Last error: Cuda failure 999 'unknown error'",
        "ncclUnhandledCudaError",
        None,
    ),
    # system error, PyTorch 1.x RuntimeError form
    (
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled "
        "system error, NCCL version 2.10.3",
        "ncclSystemError",
        None,
    ),
    (
        "ncclInternalError: Internal check failed.",
        "ncclInternalError",
        None,
    ),
    # NCCL 2.4-2.17's ncclGetErrorString words, as PyTorch frames them (fairseq#2924, NCCL 2.6.3): too plain to find
    # anywhere, named by their frame
    (
        "RuntimeError: NCCL error in: ../torch/lib/c10d/ProcessGroupNCCL.cpp:514, invalid usage, NCCL version 2.6.3",
        "ncclInvalidUsage",
        None,
    ),
    (
        "RuntimeError: NCCL error in: ../torch/lib/c10d/ProcessGroupNCCL.cpp:514, internal error, NCCL version 2.7.8",
        "ncclInternalError",
        None,
    ),
    # the same words outside the frame name no result (a message that mentions them)
    ("RuntimeError: NCCL error in: init.cc:88, bootstrap saw an invalid usage of the socket, NCCL version 2.6.3",
     None, None),
    # a WARN without a result code
    ("node-1:100:200 [0] NCCL WARN NET/IB : Got async event : local access violation work queue error", None, None),
]


def test_ib_port_error_async_event_is_the_link_going_down() -> None:
    """NVIDIA/nccl#905: the HCA port went down under NCCL (IBV_EVENT_PORT_ERR)."""
    d = one(ERROR, "node-1:100:200 [0] NCCL WARN NET/IB : Got async event : port error")
    assert (d.kind, d.fields["state"], d.host) == ("net.link", "down", "node-1")


@pytest.mark.parametrize(("line", "result", "rank"), NCCL_ERROR_CASES)
def test_nccl_error_forms(line: str, result: str | None, rank: int | None) -> None:
    d = one(ERROR, line)
    assert d.kind == "nccl.error"
    assert d.fields.get("nccl_result") == result
    assert d.rank == rank


def test_nccl_warn_sets_host_and_device() -> None:
    d = one(ERROR, NCCL_ERROR_CASES[1][0])
    assert (d.host, d.device) == ("n122-164-108", "gpu1")
    assert d.fields["detail"] == "Cuda failure 700 'an illegal memory access was encountered'"


def test_nccl_error_report_counts_once() -> None:
    """NVIDIA/nccl#1410: four adjacent lines, one failure."""
    lines = [
        "[rank7]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "NCCLUtils.hpp:275, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5",
        "[rank7]: ncclUnhandledCudaError: Call to CUDA function failed.",
        "[rank7]: Last error:",
        "[rank7]: Cuda failure 1 'invalid argument'",
    ]
    drafts = scan(ALL, ["[rank7]: Traceback (most recent call last):", *lines])
    assert kinds(drafts) == ["nccl.error"], drafts
    assert drafts[0].rank == 7


def test_nccl_lines_from_syslog() -> None:
    line = (
        "Nov  2 10:03:07 node-02 python[1234]: node-02:1234:1250 [3] misc/socket.cc:538 NCCL WARN Net : "
        "Connection closed by remote peer node-05<47861>"
    )
    d = one(ERROR, line, source="syslog")
    assert (d.kind, d.host, d.device) == ("nccl.remote_error", "node-02", "gpu3")


# ---------------------------------------------------------------- negatives


@pytest.mark.parametrize(
    "line",
    [
        "node-1:100:200 [0] NCCL INFO Channel 00/32 :    0   1   2   3   4   5   6   7",
        "node-1:100:200 [0] NCCL INFO comm 0x55d1c0 rank 0 nranks 16 cudaDev 0 busId 18000 - Init COMPLETE",
        "hostname-test:984:1357 [4] NCCL INFO transport/net.cc:1298 -> 6",
        "hostname-test:984:1357 [4] NCCL INFO proxy.cc:874 -> 6 [Progress Thread]",
        "node-1:100:200 [0] NCCL INFO [Service thread] Connection closed by localRank 0",
        "node-1:100:200 [0] NCCL WARN NET/Plugin : Plugin load returned 2 : libnccl-net.so: cannot open "
        "shared object file: No such file or directory.",
        "iteration 100 | loss 2.31 | grad norm 0.9",
    ],
)
def test_negative_lines(line: str) -> None:
    assert scan(nccl.EXTRACTORS, [line]) == []


def test_no_event_from_lines_without_literals_even_if_extract_is_called() -> None:
    """extract() on an ordinary INFO line yields nothing even when called directly."""
    line = "node-1:100:200 [0] NCCL INFO Channel 00/32 :    0   1   2   3   4   5   6   7"
    state: dict[str, object] = {}
    ctx = LineContext("application", "f", 1, None, None, None, state)
    for ex in nccl.EXTRACTORS:
        assert list(ex.extract(line, ctx)) == []


# -------------------------------------------------------------- net.address


@pytest.mark.parametrize(
    ("line", "addr", "iface", "host"),
    [
        ("node-01:4242:4242 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.2<0>", "10.0.0.2", "ib0", "node-01"),
        ("node-01:4242:4242 [0] NCCL INFO Bootstrap: Using eth0:10.1.0.12<0>", "10.1.0.12", "eth0", "node-01"),
        (
            "node-01:4242:4242 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.0.0.2<0>",
            "10.0.0.2",
            "ib0",
            "node-01",
        ),
        (
            "gpu-a:11:11 [2] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:172.16.1.5<0>",
            "172.16.1.5",
            "eth0",
            "gpu-a",
        ),
        (
            "node-03:77:77 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.0.12<0> [1]eth1:10.2.0.12<0>",
            "10.1.0.12",
            "eth0",
            "node-03",
        ),
    ],
)
def test_net_address(line: str, addr: str, iface: str, host: str) -> None:
    d = one(ADDRESS, line)
    assert d.kind == "net.address"
    assert d.fields == {"addr": addr, "iface": iface}
    assert d.host == host


def test_split_rank_prefix() -> None:
    assert nccl.split_rank_prefix("[rank12]: x") == (12, "x")
    assert nccl.split_rank_prefix("[rank3]:[E1102 10:03:09.1 1 a.cpp:1] y") == (3, "[E1102 10:03:09.1 1 a.cpp:1] y")
    assert nccl.split_rank_prefix("[1,5]<stderr>:z") == (5, "z")
    assert nccl.split_rank_prefix("[default3]:[rank11]: w") == (11, "w")
    assert nccl.split_rank_prefix("[default3]:w") == (None, "w")
    assert nccl.split_rank_prefix("[E1102 10:03:09] v") == (None, "[E1102 10:03:09] v")


def test_extractor_metadata() -> None:
    for ex in nccl.EXTRACTORS:
        assert ex.sources == frozenset({"application", "syslog"})
        assert ex.literals
        for lit in ex.literals:
            assert lit not in ("NCCL", "INFO", "error", "Error")


def test_abort_what_without_prefix_repeats_the_prefixed_report() -> None:
    """One combined, unlabelled file: PyTorch prefixes its own lines with `[rank7]:`, the C++
    runtime's `terminate` / `what():` carry no prefix. The WARN is NCCL's own report (kept);
    PyTorch's report and its abort repeat are one event."""
    frames = [f"frame #{i}: c10d::ProcessGroupNCCL::checkForNCCLErrorsInternal() + 0x220" for i in range(25)]
    lines = [
        "ip-10-1-2-3:203124:203291 [7] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote "
        "peer ip-10-1-2-17<35127>",
        "ip-10-1-2-3:203124:203291 [7] NCCL INFO misc/socket.cc:752 -> 6",
        "[rank7]:[E922 03:17:45.121000 203304 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 7] "
        "Process group watchdog thread terminated with exception: NCCL error: remote process exited or there "
        "was a network error, NCCL version 2.20.5",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        "Last error:",
        "socketProgress: Connection closed by remote peer ip-10-1-2-17<35127>",
        "Exception raised from checkForNCCLErrorsInternal at ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1879 (most recent call first):",
        *frames,
        "terminate called after throwing an instance of 'c10::DistBackendError'",
        "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 7] Process group watchdog thread terminated with "
        "exception: NCCL error: remote process exited or there was a network error, NCCL version 2.20.5",
    ]
    drafts = scan(ALL, lines)
    assert kinds(drafts) == ["nccl.remote_error", "nccl.remote_error"], drafts
    assert (drafts[0].host, drafts[0].device) == ("ip-10-1-2-3", "gpu7")
    assert drafts[1].rank == 7


def test_timeout_what_without_prefix_in_unlabelled_file() -> None:
    lines = [
        "[rank11]:[E1102 10:13:09.082258806 49164 ProcessGroupNCCL.cpp:616] [Rank 11] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=48213, OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, "
        "Timeout(ms)=600000) ran for 600063 milliseconds before timing out.",
        "[rank11]:[E1102 10:13:09.082558906 49164 ProcessGroupNCCL.cpp:630] [Rank 11] Some NCCL operations have "
        "failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might "
        "run on corrupted/incomplete data.",
        "terminate called after throwing an instance of 'c10::DistBackendError'",
        "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 11] Process group watchdog thread terminated with "
        "exception: [Rank 11] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=48213, "
        "OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, Timeout(ms)=600000) ran for 600063 "
        "milliseconds before timing out.",
    ]
    drafts = scan(ALL, lines)
    assert kinds(drafts) == ["nccl.timeout"], drafts
    assert drafts[0].rank == 11


# --------------------------------------------- where in NCCL a WARN came from

def test_nvls_cuda_failure_names_its_transport_and_cuda_class() -> None:
    # NVIDIA/nccl#1488
    line = "node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'"
    [d] = scan(ERROR, [line])
    assert d.kind == "nccl.error"
    assert_fields(d, {"nccl_source": "transport/nvls.cc", "transport": "nvls", "cuda_class": "other"})


def test_nccl_warn_without_a_source_or_cuda_failure_has_neither() -> None:
    # NCCL 2.4-style WARN with no file:line (synthetic)
    [d] = scan(ERROR, ["node1:1:2 [0] NCCL WARN Net : Connect to 10.0.0.2<40811> failed : No route to host"])
    assert "transport" not in d.fields and "cuda_class" not in d.fields
    # a file NCCL's table does not hold: the source is kept, no transport is guessed (synthetic)
    [d2] = scan(ERROR, ["node1:1:2 [0] enqueue.cc:100 NCCL WARN Cuda failure 'invalid argument'"])
    assert d2.fields["nccl_source"] == "enqueue.cc" and "transport" not in d2.fields


def test_bare_warn_keeps_its_source_and_errno() -> None:
    # NVIDIA/nccl#778, posted without the host:pid:tid prefix
    [d] = scan(ERROR, ["misc/ibvwrap.cc:288 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Operation not "
                       "supported"])
    assert d.kind == "nccl.error"
    assert_fields(d, {"nccl_source": "misc/ibvwrap.cc", "transport": "ib"})
    assert d.fields["errno"] in {"EOPNOTSUPP", "ENOTSUP"}  # one number, two names: the stdlib picks one


def test_net_plugin_function_names_map_by_prefix() -> None:
    # aws/aws-ofi-nccl#1020
    line = ("[2025-10-16 22:16:08] ip-172-31-3-90:1929:1937 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI OFI "
            "fi_getinfo() call failed: No data available")
    [d] = scan(ERROR, [line])
    assert_fields(d, {"nccl_source": "nccl_net_ofi_rdma_init", "transport": "ofi", "errno": "ENODATA"})
    # a function of another plugin is not OFI's (synthetic)
    [d2] = scan(ERROR, ["h:1:2 [0] ncclIbInit:100 NCCL WARN something failed"])
    assert "transport" not in d2.fields


def test_ibverbs_call_with_a_strerror_text_is_read_like_the_number() -> None:
    # NVIDIA/nccl-tests#185 (title line)
    line = "misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is unreachable"
    [d] = scan(ERROR, [line])
    assert d.kind == "net.ib_verbs_error"
    assert_fields(d, {"verb": "modify_qp", "errno": "ENETUNREACH"})
    # a non-network errno in the same words stays an NCCL error with its errno (synthetic)
    [d2] = scan(ERROR, ["misc/ibvwrap.cc:105 NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory"])
    assert d2.kind == "nccl.error" and d2.fields["errno"] == "ENOMEM"


@pytest.mark.parametrize(
    ("line", "status", "cls"),
    [
        # NVIDIA/nccl#928 (the description's first line)
        ("H100-2:19989:20082 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
         "fe80::966d:ae03:8b:df78%ib0<53249> with error 4, opcode 32564, len 32564, vendor err 81 (Send)",
         4, "local_access"),
        # NVIDIA/nccl#1405
        ("kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer "
         "10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid "
         "fd00:1148:9000:5000:4:200:3:ff22 remoteGidsfd00:1148:9000:5000:4:200:3:ff1f", 12, "path"),
        # NVIDIA/nccl#1353-style flush (synthetic)
        ("n1:1:2 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with "
         "status=5 opcode=0 len=0 vendor err 249 (Recv)", 5, "flush"),
    ],
)
def test_ib_completion_status_is_classed_from_the_verbs_table(line: str, status: int, cls: str) -> None:
    [d] = scan(ERROR, [line])
    assert d.kind == "nccl.ib_completion_error"
    assert_fields(d, {"status": status, "status_class": cls})
    assert str(d.fields["status_name"]).startswith("IBV_WC_")


def test_a_status_outside_the_verbs_enum_gets_no_class() -> None:
    [d] = scan(ERROR, ["n1:1:2 [0] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> "
                       "with status=77 opcode=0 len=0 vendor err 0 (Recv)"])  # synthetic
    assert d.fields["status"] == 77 and "status_class" not in d.fields


def test_the_nccl_error_words_are_kept_as_the_tables_build_them() -> None:
    """nccl_error_literals is asked again for every line classify_nccl reads: kept, it is the tables' words."""
    from firstfault.extract import nccl as nccl_module

    kept = nccl_module.nccl_error_literals()
    assert kept is nccl_module.nccl_error_literals()
    assert kept == nccl_module.nccl_error_literals.__wrapped__()
    assert "NCCL WARN" in kept or any("NCCL" in w for w in kept)
    # a line with one of the words is classified; a near miss without any is not read at all
    assert nccl_module.classify_nccl("NCCL WARN NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129")
    assert nccl_module.classify_nccl("NCCL INFO Bootstrap : Using ib0:10.0.125.10<0>") == {}


# ------------------------------------------------------------ NCCL's layout under another library's word
# catalog/transport.yaml `nccl_forks`: libraries that print NCCL's debug lines with their own tag.


def test_a_fork_s_warn_is_read_as_nccl_s_and_names_the_library() -> None:
    # AWS Neuron's collectives, no host before pid:tid (JasnahOrg/nrt_efa_comms_repro README.md, a posted run)
    line = ("2023-May-21 01:40:15.0924 93703:93705 [0] transport.cc:36 CCOM WARN No transport found between devices 0 "
            "and 0. Possible replica group misconfiguration")
    [d] = scan(ERROR, [line])
    assert d.kind == "nccl.error"
    assert_fields(d, {"library": "Neuron CCOM", "nccl_source": "transport.cc"})
    # MetaX's MCCL, as its deployment notes quote it: NCCL's socket layer's words, the peer read as NCCL's are
    [d2] = scan(ERROR, ["MCCL WARN socketStartConnect: Connect to 10.3.44.2<56159> failed : Software caused "
                        "connection abort"])
    assert d2.kind == "nccl.remote_error"
    assert_fields(d2, {"library": "MCCL", "peer": "10.3.44.2"})
    # MSCCL++'s header, from the format string of microsoft/mscclpp src/debug.cc mscclppDebugLog (message synthetic)
    [d3] = scan(ERROR, ["node1:4242:4300 [3] core/ib.cc:120 MSCCLPP WARN Call to ibv_reg_mr failed with 12 Cannot "
                        "allocate memory"])
    assert d3.kind == "nccl.error" and d3.host == "node1" and d3.device == "gpu3"
    assert_fields(d3, {"library": "MSCCL++", "nccl_source": "core/ib.cc", "errno": "ENOMEM"})
    # NCCL's own line carries no `library` (the same words, synthetic)
    [d4] = scan(ERROR, ["node1:4242:4300 [3] misc/ibvwrap.cc:105 NCCL WARN Call to ibv_reg_mr failed with 12 Cannot "
                        "allocate memory"])
    assert "library" not in d4.fields


def test_a_fork_s_lines_meet_the_same_rows_as_nccl_s() -> None:
    # A `benign` row under the CCOM tag: aws-ofi-nccl's summary that it did not start, logged through Neuron's
    # collectives (JasnahOrg/nrt_efa_comms_repro README.md): understood, no event
    line = ("2023-May-21 01:40:03.0080 93703:93705 [0] nccl_net_ofi_init:1415 CCOM WARN NET/OFI aws-ofi-nccl "
            "initialization failed")
    assert scan(ERROR, [line]) == []
    assert nccl.classify_nccl(line) == {}
    # an INFO line of a fork's is no failure (microsoft/mscclpp src/debug.cc's INFO header; message synthetic)
    assert scan(ERROR, ["node1:4242:4300 [3] MSCCLPP INFO Bootstrap : Using eth0:10.0.0.1<0>"]) == []


def test_a_fork_s_tag_quoted_or_glued_is_no_warn() -> None:
    # The tag in a filter's list of words (a public Trainium benchmark adapter's noise filter), in a grep pattern
    for line in ('    drop = ("UserWarning", "warnings.warn", "Warning:", "OperatorEntry", "CCOM WARN",',
                 "  | grep -vE 'CCOM WARN|nccl_net_ofi|OFI plugin|neuronpjrt.cc' \\"):
        assert scan(ERROR, [line]) == [] and nccl.classify_nccl(line) == {}
    # a tag inside another word is not the tag (synthetic)
    for line in ("XMCCL WARN socketStartConnect: Connect to 10.3.44.2<56159> failed : Connection refused",
                 "node1:1:2 [0] core/ib.cc:120 XCCOM WARN Call to ibv_reg_mr failed with 12 Cannot allocate memory"):
        assert not any(d.kind.startswith("nccl.") for d in scan(ERROR, [line]))


def test_the_readers_take_their_words_from_the_table() -> None:
    tags = [row.tag for row in nccl.PRINTERS]
    assert tags[0] == "NCCL" and {"CCOM", "MSCCLPP", "MCCL"} <= set(tags)
    assert all(f"{t} WARN" in nccl.nccl_error_literals() for t in tags)
    assert nccl.NcclNetReadyExtractor.literals == tuple(f"{t} INFO Using network " for t in tags)
    [d] = scan(nccl.NcclNetReadyExtractor(), ["node1:1:2 [0] MSCCLPP INFO Using network IB"])
    assert_fields(d, {"network": "IB", "library": "MSCCL++"})


@pytest.mark.parametrize(("rows", "problem"), [
    ([{"tag": "CCOM", "library": "Neuron CCOM", "printed_by": "libnccom, not public"}], "NCCL's own row comes first"),
    ([{"tag": "NCCL", "library": "NCCL", "printed_by": "NVIDIA/nccl src/debug.cc"},
      {"tag": "XNCCL", "library": "Another", "printed_by": "somewhere/else src/debug.cc"}], "meets another row's tag"),
    ([{"tag": "NCCL", "library": "NCCL", "printed_by": "NVIDIA/nccl src/debug.cc"},
      {"tag": "ccom", "library": "Neuron CCOM", "printed_by": "libnccom, not public"}], "tag"),
])
def test_the_forks_table_refuses_what_a_reader_could_not_tell_apart(monkeypatch: pytest.MonkeyPatch,
                                                                   rows: list[dict[str, Any]], problem: str) -> None:
    from firstfault.catalog import tables
    real = tables._document
    monkeypatch.setattr(tables, "_document",
                        lambda name: {**real(name), "nccl_forks": rows} if name == "transport.yaml" else real(name))
    build = tables.nccl_forks.__wrapped__.__wrapped__  # type: ignore[attr-defined]  # lru_cache, then _kept
    with pytest.raises(tables.CatalogTableError, match=problem):
        build()
    # the shipped table builds (the near miss)
    monkeypatch.setattr(tables, "_document", real)
    assert build()[0].tag == "NCCL"


# ------------------------------------------------------------ where the header and net_ready searches start (issue 27)

def test_a_line_without_the_header_s_bracket_and_space_has_no_header() -> None:
    # each rank's abort line, read by the NCCL error extractor: no `] `, so no header (and no search over it)
    assert nccl._nccl_head("terminate called after throwing an instance of 'c10::DistBackendError'") == (None, None)
    # the near misses: a header's `[dev]` glued to its tag is none, with or without the gate (synthetic)
    assert nccl._nccl_head("node1:1:2 [0]NCCL INFO Bootstrap : Using ib0:10.0.0.1<0>")[0] is None
    head, warn = nccl._nccl_head("node1:4242:4300 [3] NCCL WARN Call to ibv_reg_mr failed")
    assert head is not None and head.group("host") == "node1" and head.group("dev") == "3"
    assert warn == "Call to ibv_reg_mr failed"


@pytest.mark.parametrize(("line", "network"), [
    ("MSCCLPP INFO Using network IB", "IB"),  # the longest tag at the line's start: the search starts at 0
    ("node1:1:2 [0] NCCL INFO Using network IBext_v8", "IBext_v8"),
    # a tag glued to a word before it is no tag; a later occurrence of the words is (synthetic)
    ("xNCCL INFO Using network IB; NCCL INFO Using network Socket", "Socket"),
    ("abcMSCCLPP INFO Using network IB", None),  # `\b` reads the character before the search's start
    ("NCCL INFO Using network", None),  # no name after the words
])
def test_net_ready_is_searched_from_where_a_match_can_start(line: str, network: str | None) -> None:
    m = nccl._net_ready(line)
    assert (m.group("net") if m is not None else None) == network


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["NCCL", "MSCCLPP", "CCOM", "MCCL", " INFO Using network ", "] ", "[3]", " ", "x",
                                 "node-1:22:33 ", ":", "IB", "WARN ", "INFO ", "\n", "é"]), max_size=12))
def test_the_searches_started_late_find_what_a_search_from_the_start_finds(parts: list[str]) -> None:
    text = "".join(parts)
    m, full = nccl._net_ready(text), nccl._NET_READY.search(text)
    assert (m.span() if m else None) == (full.span() if full else None)
    h, whole = nccl._nccl_head(text)[0], nccl._NCCL_HEAD.search(text)
    assert (h.span() if h else None) == (whole.span() if whole else None)
