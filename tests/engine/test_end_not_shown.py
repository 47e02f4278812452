"""A run whose end is not shown and whose evidence holds no failure: nothing is attributed (`none`), the outcome stays
`unknown`; any failure in the evidence, read or not, keeps it `unknown` (docs/verdict.md, "A run whose end is not
shown"). Each case is decided from what the lines say, through the real extractors and engine."""

from __future__ import annotations

from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from tests.conftest import BundleMaker

# Open MPI's openib BTL warning on a node whose job then ran on another transport (open-mpi/ompi#8403, posted block)
OPENIB_WARNING = [
    "WARNING: There was an error initializing an OpenFabrics device.",
    "  Local host:   compute-0-27",
    "  Local device: mlx4_0",
    "Epoch 1/10 loss 0.52",
]
# Triton's startup warning, glog's W level (triton-inference-server/server#4797)
TRITON_WARNING = ["W0821 08:49:41.251296 104802 server.cc:208] failed to enable peer access for some device pairs",
                  "I0821 08:49:41.300000 104802 grpc_server.cc:4819] Started GRPCInferenceService at 0.0.0.0:8001"]
# c10d's older bracketed warning marker (NVIDIA/NeMo#7351)
C10D_WARNING = ["[W socket.cpp:601] [c10d] The client socket has failed to connect to [ip-26-0-146-37]:22456 "
                "(errno: 22 - Invalid argument).", "Epoch 0: 100%| 500/500 [01:40<00:00, 4.98it/s, loss=2.31]"]
# the same client at the error level, the rendezvous never reached (hpcaitech/Open-Sora#667)
C10D_ERROR = ["[E socket.cpp:753] [c10d] The client socket has failed to connect to any network address of "
              "(6841231, 47389)."]
RESTARTED = ["INFO:torch.distributed.elastic.agent.server.api:[default] Worker group FAILED. 3/3 attempts left; "
             "will restart worker group"]
NCCL_TIMEOUT = ["[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective "
                "operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, "
                "Timeout(ms)=600000) ran for 600020 milliseconds before timing out."]


def _analyze(make_bundle: BundleMaker, lines: list[str], state: str | None = None, kind: str = "application",
             path: str = "app/train.log") -> Any:
    wl: dict[str, Any] = {"id": "t", "scheduler": "static", "nodes": ["node-001"]}
    if state:
        wl["terminal_state"] = state
    root = make_bundle({path: "".join(x + "\n" for x in lines)},
                       {"apiVersion": "firstfault/v1", "workload": wl, "sources": [{"kind": kind, "path": path}]})
    return Analyzer().analyze_path(str(root))


# a Python warning's category line (facebookresearch/sam2#492: DDP's grad-strides UserWarning, "This is not an error")
PY_WARNING = ["UserWarning: Grad strides do not match bucket view strides. This may indicate grad was not created "
              "according to the gradient layout contract, or that the param's strides changed since DDP was "
              "constructed.  This is not an error, but may impair performance."]

# NCCL's info records of its search for optional libraries (NVIDIA/nccl#1653 and NVIDIA/nccl-tests#166, as posted): its
# INFO level, below a warning, whatever failure word the message holds
NCCL_INFO = ["DESKTOP-1CE5APL:1689:2800 [0] NCCL INFO Failed to open libibverbs.so[.1]",
             "DESKTOP-1CE5APL:1689:2800 [0] NCCL INFO NET/Socket : Using [0]eth0:172.21.131.59<0>",
             "ubuntu:9621:9621 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: "
             "cannot open shared object file: No such file or directory"]


@pytest.mark.parametrize("lines", [OPENIB_WARNING, TRITON_WARNING, C10D_WARNING, PY_WARNING, NCCL_INFO,
                                   ["Epoch 3: loss 0.12"]])
def test_warnings_alone_in_a_run_whose_end_is_not_shown_attribute_nothing(make_bundle: BundleMaker,
                                                                          lines: list[str]) -> None:
    v = _analyze(make_bundle, lines)
    assert (v.outcome, v.attributed_domain, v.root_cause) == ("unknown", "none", None)
    assert "nothing says how the workload ended" in v.explanation[0]


@pytest.mark.parametrize(("lines", "why"), [
    (C10D_ERROR, "a line the catalog missed that does not call itself a warning"),
    (RESTARTED, "a worker group that failed and was restarted, the end not shown"),
    (NCCL_TIMEOUT, "a symptom"),
    (["Traceback (most recent call last):", '  File "train.py", line 10, in <module>', "    step()"],
     "a traceback cut before its exception line"),
])
def test_any_failure_in_the_evidence_keeps_it_unknown(make_bundle: BundleMaker, lines: list[str], why: str) -> None:
    v = _analyze(make_bundle, lines)
    assert (v.outcome, v.attributed_domain) == ("unknown", "unknown"), why


def test_a_launchers_record_that_a_worker_failed_is_the_runs_end(make_bundle: BundleMaker) -> None:
    # torchrun's agent's record of a failed worker, the one line posted (QwenLM/Qwen-VL#161's line): the run failed,
    # where it began is not shown
    v = _analyze(make_bundle, ["ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 "
                               "(pid: 888) of binary: /opt/conda/bin/python3"])
    assert (v.outcome, v.attributed_domain) == ("failed", "unknown")


def test_a_failed_end_with_nothing_read_stays_unknown(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, OPENIB_WARNING, state="FAILED")
    assert (v.outcome, v.attributed_domain) == ("failed", "unknown")


def test_an_unreadable_source_keeps_it_unknown(make_bundle: BundleMaker) -> None:
    wl = {"apiVersion": "firstfault/v1", "workload": {"id": "t", "scheduler": "static", "nodes": ["node-001"]},
          "sources": [{"kind": "application", "path": "app/train.log"},
                      {"kind": "metrics", "path": "metrics/dcgm.json", "format": "prometheus-json"}]}
    root = make_bundle({"app/train.log": "Epoch 3: loss 0.12\n", "metrics/dcgm.json": "{not json"}, wl)
    v = Analyzer().analyze_path(str(root))
    assert v.errors, "the corrupt metrics file is named"
    assert (v.outcome, v.attributed_domain) == ("unknown", "unknown")


# One numbered try of a loop that goes on (docs/verdict.md: a line that says it is one try): the loop's end, where
# every try failed, is a line of its own. Format: juicedata/juicefs pkg/chunk/cached_store.go (`Upload %s: %s (try
# %d)`, then `(max tries) upload block %s: %s (after %d tries)`), shown without the logger's level tag as a log
# shipper that keeps only the message shows it; the object store's address is ours.
TRY_LINE = ('juicefs[4242] : Upload chunks/0/1/1001_0_4194304: operation error S3: PutObject, exceeded maximum number '
            'of attempts, 1, https response error StatusCode: 0, RequestID: , HostID: , request send failed, Put '
            '"https://s3.example.org/bucket/chunks/0/1/1001_0_4194304": EOF (try 1) [upload@cached_store.go:422]')
LOOP_END = ("juicefs[4242] : (max tries) upload block chunks/0/1/1001_0_4194304: operation error S3: PutObject, "
            "request send failed: EOF (after 3 tries)")


def test_one_numbered_try_alone_in_a_run_whose_end_is_not_shown_attributes_nothing(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, [TRY_LINE])
    assert (v.outcome, v.attributed_domain, v.root_cause) == ("unknown", "none", None)


@pytest.mark.parametrize(("lines", "state", "why"), [
    ([TRY_LINE, LOOP_END], None, "the loop's own end: every try failed"),
    ([TRY_LINE.replace("(try 1)", "(attempt 3/3)")], None, "a try counted against its total may be the last"),
    ([TRY_LINE], "FAILED", "a run that failed keeps unknown whatever its evidence holds"),
])
def test_near_miss_a_try_that_is_no_loop_going_on(make_bundle: BundleMaker, lines: list[str], state: str | None,
                                                  why: str) -> None:
    v = _analyze(make_bundle, lines, state)
    assert v.attributed_domain == "unknown", why


@pytest.mark.parametrize("line", [
    # synthetic: the record is an error; INFO is a word of its message, well after its head
    "2026-11-02 10:00:00 ERROR loader: could not read the checkpoint manifest of the run stored under "
    "/lustre/projects/team/run-2026-11-01 because its INFO block is missing",
    # ... or near its head, after the error's own level word (synthetic)
    "2026-11-02 10:00:00 ERROR loader: INFO block of the checkpoint manifest failed to parse",
])
def test_near_miss_a_level_word_inside_an_error_message_is_not_the_records_level(make_bundle: BundleMaker,
                                                                                 line: str) -> None:
    v = _analyze(make_bundle, [line])
    assert (v.outcome, v.attributed_domain) == ("unknown", "unknown")


# NVIDIA/NVSentinel#1357 (https://github.com/NVIDIA/NVSentinel/issues/1357): the kernel's line of the Xid a monitor
# called fatal; the driver says Nonfatal (rule sym-gpu-xid-nonfatal, all_clear)
NONFATAL_145 = ["NVRM: Xid (PCI:0000:c5:00): 145, RLW_SRC_TRACK Nonfatal XC1 i0 Link 17 (0x04084507 0x00000004 "
                "0x00000000 0x00000000 0x00000000 0x00000000"]
# ours: the same unit's error as the driver prints a fatal one (the Xid 144-150 format, extract/gpu.py _NVL5)
FATAL_145 = ["NVRM: Xid (PCI:0000:c5:00): 145, RLW_SRC_TRACK Fatal XC1 i0 Link 17 (0x04084507 0x00000004 "
             "0x00000000 0x00000000 0x00000000 0x00000000"]


@pytest.mark.parametrize(("lines", "state", "want"), [
    (NONFATAL_145, None, "none"),
    # near misses: the same unit's Fatal error is a cause; a failed run keeps `unknown` whatever the evidence holds
    (FATAL_145, None, "hardware"),
    (NONFATAL_145, "FAILED", "unknown"),
])
def test_the_drivers_all_clear_alone_attributes_nothing(make_bundle: BundleMaker, lines: list[str],
                                                        state: str | None, want: str) -> None:
    v = _analyze(make_bundle, lines, state, "kernel", "nodes/node-001/kern.log")
    assert v.attributed_domain == want
    if want == "none":
        assert (v.outcome, v.root_cause) == ("unknown", None)
