"""Hang evidence on real posted lines: watchdog status, dump signals, monitored barrier, gloo.

Each line is verbatim from a public thread (repo#number in the comment);
only the line breaks of long lines are Python string joins.
"""

from __future__ import annotations

import pytest

from firstfault.extract import hang, nccl
from firstfault.extract.registry import line_extractors
from tests.extract.helpers import APPLICATION, assert_fields, kinds, one, scan

WATCHDOG = nccl.C10dTimeoutExtractor()
HANG = hang.HangReportExtractor()
ALL = line_extractors()
TB = "Traceback (most recent call last):"


# ---------------------------------------------------------------- c10d watchdog timeouts: new fields


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (  # hiyouga/LlamaFactory#6269 (PyTorch 2.3-2.4: reduce-scatter, in != out)
            "[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, NumelIn=544997376, "
            "NumelOut=68124672, Timeout(ms)=600000) ran for 600061 milliseconds before timing out.",
            {"seq": 7753, "op": "_REDUCE_SCATTER_BASE", "numel_in": 544997376, "numel_out": 68124672},
        ),
        (  # OpenRLHF/OpenRLHF#1126 (2.5+)
            "[rank7]:[E901 05:20:03.123992144 ProcessGroupNCCL.cpp:632] [Rank 7] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=460631, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
            "Timeout(ms)=600000) ran for 600020 milliseconds before timing out.",
            {"seq": 460631, "op": "ALLREDUCE", "numel_in": 1, "numel_out": 1, "timeout_ms": 600000},
        ),
        (  # Intellindust-AI-Lab/DEIMv2#65 (all-gather, out = 4 x in)
            "[rank0]:[E1112 23:34:28.613510957 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=40402014, OpType=_ALLGATHER_BASE, NumelIn=513, NumelOut=2052, "
            "Timeout(ms)=1800000) ran for 1800046 milliseconds before timing out.",
            {"seq": 40402014, "op": "_ALLGATHER_BASE", "numel_in": 513, "numel_out": 2052},
        ),
    ],
)
def test_watchdog_timeout_sizes(line: str, expected: dict[str, object]) -> None:
    d = one(WATCHDOG, line, source="application")
    assert d.kind == "nccl.timeout"
    assert_fields(d, expected)


# ---------------------------------------------------------------- watchdog status / dump-signal lines


@pytest.mark.parametrize(
    ("line", "rank", "expected"),
    [
        (  # hiyouga/LlamaFactory#6269 (2.3: "Exception ... detected by watchdog at work")
            "[rank0]:[E1206 18:44:12.715588844 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an "
            "error or timeout) detected by watchdog at work: 7753, last enqueued NCCL work: 7755, last completed "
            "NCCL work: 7752.",
            0, {"at_seq": 7753, "last_enqueued": 7755, "last_completed": 7752, "pg": "1"},
        ),
        (  # hiyouga/LlamaFactory#6269 (2.3: "Timeout at NCCL work")
            "[rank2]:[E1206 18:44:16.994961143 ProcessGroupNCCL.cpp:1709] [PG 1 Rank 2] Timeout at NCCL work: "
            "7753, last enqueued NCCL work: 7755, last completed NCCL work: 7752.",
            2, {"at_seq": 7753, "last_enqueued": 7755, "last_completed": 7752, "pg": "1"},
        ),
        (  # XPixelGroup/BasicSR#737 (2.5: PG ID / PG GUID prefix)
            "[rank1]:[E626 06:24:44.906457629 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
            "Exception (either an error or timeout) detected by watchdog at work: 808, last enqueued NCCL work: "
            "811, last completed NCCL work: 807.",
            1, {"at_seq": 808, "last_enqueued": 811, "last_completed": 807, "pg": "0", "pg_name": "default_pg"},
        ),
        (  # NVIDIA/nccl#1730 (2.6+: "failure detected by watchdog at work sequence id ... PG status")
            "[rank118]:[E603 17:48:01.005538748 ProcessGroupNCCL.cpp:2268] [PG ID 0 PG GUID 0(default_pg) Rank "
            "118]  failure detected by watchdog at work sequence id: 2398459 PG status: last enqueued work: "
            "2398578, last completed work: 2398458",
            118, {"at_seq": 2398459, "last_enqueued": 2398578, "last_completed": 2398458, "pg": "0"},
        ),
        (  # PrimeIntellect-ai/prime-rl#3186 (a hashed PG GUID of an expert-parallel group)
            "[rank13]:[E804 23:05:54.517045067 ProcessGroupNCCL.cpp:2303] [PG ID 3 PG GUID "
            "d03ba143833c6bf31b072ffdb22f1745957fcbfb Rank 1]  failure detected by watchdog at work sequence id: "
            "1438 PG status: last enqueued work: 1441, last completed work: 1437",
            13, {"at_seq": 1438, "last_enqueued": 1441, "last_completed": 1437,
                 "pg": "d03ba143833c6bf31b072ffdb22f1745957fcbfb"},
        ),
        (  # OpenRLHF/OpenRLHF#1126: a rank that did not time out itself, asked to dump by rank 6
            "[rank2]:[E901 05:20:03.118859045 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 2] "
            "Received a dump signal due to a collective timeout from  rank 6 and we will try our best to dump the "
            "debug info. Last enqueued NCCL work: 460631, last completed NCCL work: 460630.This is most likely "
            "caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of "
            "collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. "
            "Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in "
            "the communications library (e.g. NCCL), etc. ",
            2, {"dump_signal": True, "from_rank": 6, "last_enqueued": 460631, "last_completed": 460630},
        ),
        (  # huggingface/accelerate#3861: "from this local rank" (it timed out itself)
            "[rank1]:[E1128 21:11:49.041194513 ProcessGroupNCCL.cpp:1870] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
            "Received a dump signal due to a collective timeout from this local rank and we will try our best to "
            "dump the debug info. Last enqueued NCCL work: 22, last completed NCCL work: 21.This is most likely "
            "caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of "
            "collectives is not same for all ranks or the scheduled collective, for some reason, didn't run.",
            1, {"dump_signal": True, "self_timeout": True, "last_enqueued": 22, "last_completed": 21},
        ),
    ],
)
def test_watchdog_status_lines(line: str, rank: int, expected: dict[str, object]) -> None:
    d = one(WATCHDOG, line, source="application")
    assert d.kind == "nccl.watchdog_status"
    assert d.rank == rank
    assert_fields(d, expected)


def test_status_lines_are_not_app_exceptions() -> None:
    """hiyouga/LlamaFactory#7396: the status line is the watchdog's, never a Python exception."""
    line = (
        "[80748] [rank0]:[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an "
        "error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL "
        "work: 1579."
    )
    assert "app.exception" not in kinds(scan(ALL, [line], source="application"))


# ---------------------------------------------------------------- monitored barrier


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (  # NVIDIA/nccl#849 (wait_all_ranks=True)
            "RuntimeError: [Rank 0]: Ranks 4, 5, 6, 7 failed to pass monitoredBarrier in 2000000 ms",
            {"failed_ranks": "4,5,6,7", "timeout_ms": 2000000, "reporter": 0},
        ),
        (  # pytorch/pytorch#53773 / #55009 (the test's message: one failed rank)
            "RuntimeError: Rank 1 failed to pass monitoredBarrier in 1800000 ms",
            {"failed_ranks": "1", "timeout_ms": 1800000},
        ),
        (  # pytorch/pytorch#121606 (a rank that passed, pointing at rank 0's logs)
            "RuntimeError: Rank 2 successfully reached monitoredBarrier, but received errors while waiting for "
            "send/recv from rank 0. Please check rank 0 logs for faulty rank.",
            {"failed_ranks": "", "reporter": 2, "waited_on": 0},
        ),
    ],
)
def test_monitored_barrier(line: str, expected: dict[str, object]) -> None:
    d = one(HANG, line, source="application")
    assert d.kind == "c10d.monitored_barrier"
    assert_fields(d, expected)
    assert "app.exception" not in kinds(scan(ALL, [TB, line], source="application"))


# ---------------------------------------------------------------- gloo


@pytest.mark.parametrize(
    ("line", "op", "ms"),
    [
        (  # Intellindust-AI-Lab/DEIMv2#65
            "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting "
            "1800000ms for recv operation to complete", "recv", 1800000,
        ),
        (  # msr-fiddle/pipedream#39 (older gloo, line 72)
            "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:72] Timed out waiting "
            "1800000ms for recv operation to complete", "recv", 1800000,
        ),
        (  # FoundationVision/VNext#9 (conda build path, send side)
            "RuntimeError: [/opt/conda/conda-bld/pytorch_1656352430114/work/third_party/gloo/gloo/transport/tcp/"
            "unbound_buffer.cc:136] Timed out waiting 1800000ms for send operation to complete", "send", 1800000,
        ),
    ],
)
def test_gloo_timeouts(line: str, op: str, ms: int) -> None:
    d = one(HANG, line, source="application")
    assert (d.kind, d.fields["op"], d.fields["timeout_ms"]) == ("gloo.timeout", op, ms)
    # a hang's symptom: never an app.exception cause
    assert "app.exception" not in kinds(scan(ALL, [TB, line], source="application"))


def test_gloo_repeat_counts_once() -> None:
    """The RuntimeError and its re-raise a few lines later are one report of one rank."""
    line = ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting "
            "1800000ms for recv operation to complete")
    assert kinds(scan(HANG, [line, "    work.wait()", line], source="application", rank=3)) == ["gloo.timeout"]


# ---------------------------------------------------------------- Horovod's stall inspector

_HVD_1012 = ("[1,0]<stderr>:[2019-04-13 13:56:31.861697: W horovod/common/operations.cc:588] One or more tensors were "
             "submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of "
             "ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different "
             "tensors or that only subset of ranks is submitting tensors, which will cause deadlock.")


@pytest.mark.parametrize(
    ("line", "seconds"),
    [
        (_HVD_1012, 60),  # horovod/horovod#1012 (glog's W level, mpirun's tag)
        (  # horovod/horovod#534 (the older stderr form, its op list on the same line)
            "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks "
            "and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks "
            "are trying to submit different tensors or that only subset of ranks is submitting tensors, which will "
            "cause deadlock. Stalled ops: HorovodAllreduce_loss_Mean_0 [ready ranks: 3]", 60,
        ),
    ],
)
def test_horovod_stall_warning_is_a_hang_report(line: str, seconds: int) -> None:
    d = one(HANG, line, source="application")
    assert (d.kind, d.fields["seconds"]) == ("horovod.stall", seconds)


def test_horovod_stall_list_lines_are_not_reports() -> None:
    """The op lines after the warning (horovod/horovod#1012) name tensors, not a new stall: one report."""
    lines = [_HVD_1012,
             "[1,0]<stderr>:Stalled ops:HorovodBroadcast_dense_1_bias_0 [missing ranks: 1]",
             "[1,0]<stderr>:[2019-04-13 13:56:31.861765: W horovod/common/operations.cc:588] "
             "HorovodBroadcast_dense_1_kernel_0 [missing ranks: 1]"]
    assert kinds(scan(HANG, lines, source="application")) == ["horovod.stall"]


# ---------------------------------------------------------------- desync debug report


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # The report's lines as c10d's retrieveDesyncReport writes them (TraceUtils.h); no posted copy found.
        ("\t - To our best knowledge, ranks [1, 2] are the lagging ranks that caused this timeout. They never "
         "joined any collectives", {"lagging_ranks": "1,2", "state": "not_joined"}),
        ("\t   - [3] joined but didn't finish collective #1234 (count from 1)",
         {"lagging_ranks": "3", "seq": 1234, "state": "not_finished"}),
        ("\t   - [5] finished collective #1234, but didn't join collective #1235 (count from 1)",
         {"lagging_ranks": "5", "seq": 1235, "state": "not_joined"}),
    ],
)
def test_desync_report(line: str, expected: dict[str, object]) -> None:
    d = one(HANG, line, source="application")
    assert d.kind == "c10d.desync_report"
    assert_fields(d, expected)


def test_app_extractor_still_sees_ordinary_runtime_errors() -> None:
    line = "RuntimeError: shape mismatch in layer 3"
    assert "app.exception" in kinds(scan(APPLICATION, [TB, line], source="application"))


def test_heartbeat_monitor_line_names_its_process_group() -> None:
    """modelscope/ms-swift#7992: the heartbeat monitor of an expert-parallel group."""
    line = (
        "18:11:06.680 [rank4]:[E205 18:11:06.375750231 ProcessGroupNCCL.cpp:1870] [PG ID 12 PG GUID "
        "99(EXPERT_MODEL_PARALLEL_GROUP) Rank 4] ProcessGroupNCCL's watchdog got stuck for 480 seconds without "
        "making progress in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API (e.g., "
        "CudaEventDestroy) hang blocking the watchdog, and could be triggered by another thread holding the GIL "
        "inside a CUDA api (for example, CudaEventDestroy), or other deadlock-prone behaviors."
    )
    d = one(WATCHDOG, line, source="application")
    assert d.kind == "nccl.timeout"
    assert_fields(d, {"stuck": True, "timeout_ms": 480000, "pg": "99", "pg_name": "EXPERT_MODEL_PARALLEL_GROUP"})
