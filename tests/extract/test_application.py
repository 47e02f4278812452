"""The application output's extractors together (exceptions, numerics, torchrun, signals, with NCCL's):
a whole per-rank log, a collector's stamps before every line, what each extractor declares.

Lines are verbatim from the public issues cited next to them unless marked
`synthetic`.
"""

from __future__ import annotations

from firstfault.extract import nccl
from firstfault.extract.base import LineExtractor
from tests.extract.helpers import APPLICATION, TB, kinds
from tests.extract.helpers import scan_application as scan

ALL: tuple[LineExtractor, ...] = (*nccl.EXTRACTORS, *APPLICATION)


# ---------------------------------------------------------------- a whole per-rank log


def test_whole_log_counts() -> None:
    """An ordinary training log with a failure at the end: every line through every extractor."""
    lines = [
        "node-01:4242:4242 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.1<0>",
        "node-01:4242:4242 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>",
        "node-01:4242:4300 [0] NCCL INFO Channel 00/32 :    0   1   2   3",
        "node-01:4242:4300 [0] NCCL INFO comm 0x55d1c0 rank 0 nranks 16 cudaDev 0 busId 18000 - Init COMPLETE",
        " iteration      100/    8000 | consumed samples:         6400 | lm loss: 2.310000E+00 | loss scale: 1.0 | "
        "grad norm: 0.900 | number of skipped iterations:   0 | number of nan iterations:   0 |",
        "[rank0]:[E1102 10:03:09.123456 4242 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, "
        "Timeout(ms)=600000) ran for 600060 milliseconds before timing out.",
        "[rank0]:[E1102 10:03:09.465150 4242 ProcessGroupNCCL.cpp:1664] [PG 0 Rank 0] Exception (either an "
        "error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed "
        "NCCL work: 1579.",
        "[rank0]:[E1102 10:03:09.500000 4242 ProcessGroupNCCL.cpp:630] [Rank 0] Some NCCL operations have "
        "failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might "
        "run on corrupted/incomplete data.",
        "[rank0]:terminate called after throwing an instance of 'c10::DistBackendError'",
        "[rank0]:  what():  [PG 0 Rank 0] Process group watchdog thread terminated with exception: [Rank 0] "
        "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, "
        "NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600061 milliseconds before timing "
        "out.",
        "W1102 10:03:10.000000 1 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 4243 "
        "closing signal SIGTERM",
    ]
    drafts = scan(ALL, lines)
    assert kinds(drafts) == ["net.address", "net.address", "net.ports_used", "nccl.timeout", "nccl.watchdog_status",
                             "process.signal"], drafts



def test_extractor_metadata() -> None:
    for ex in APPLICATION:
        assert "application" in ex.sources and ex.sources <= frozenset({"application", "syslog", "kernel"})
        assert ex.name
        for lit in ex.literals:
            assert lit not in ("error", "loss", "INFO", "NCCL", "inf")


def test_collector_timestamps_on_every_line() -> None:
    """`kubectl logs --timestamps`: an RFC 3339 stamp before every line, then the rank prefix."""
    lines = [
        "2026-11-02T10:03:07.123456789Z [rank2]: " + TB,
        '2026-11-02T10:03:07.123456789Z [rank2]:   File "train.py", line 9, in <module>',
        "2026-11-02T10:03:07.123456789Z [rank2]: KeyError: 'labels'",
        "2026-11-02T10:03:08.000000000Z torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "2026-11-02T10:03:08.000000000Z Root Cause (first observed failure):",
        "2026-11-02T10:03:08.000000000Z [0]:",
        "2026-11-02T10:03:08.000000000Z   host      : worker-1",
        "2026-11-02T10:03:08.000000000Z   rank      : 2 (local_rank: 2)",
        "2026-11-02T10:03:08.000000000Z   exitcode  : 1 (pid: 99)",
    ]
    drafts = scan(ALL, lines)
    assert kinds(drafts) == ["app.exception", "torch.child_failed"], drafts
    assert drafts[0].rank == 2 and drafts[0].fields["exc_type"] == "KeyError"
    assert drafts[1].host == "worker-1"
