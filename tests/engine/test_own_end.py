"""The end of an attempt in its own programs' words, where no scheduler record or workload.yaml gives it
(engine/normalise.py `own_end`, over extract/runend.py and catalog/ends.yaml)."""

from __future__ import annotations

from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from tests.conftest import BundleMaker

# A completed torchrun (a public log, ncnn-style detection training: the agent's two success lines).
AGENT_OK = [
    "INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully finished. Waiting 300 "
    "seconds for other agents to finish.",
    "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (SUCCEEDED). Waiting 300 seconds "
    "for other agents to finish",
]
CAUGHT_OOM = [
    "Traceback (most recent call last):",
    '  File "/app/train.py", line 10, in step',
    "    loss = model(x)",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.14 GiB "
    "of which 1.2 GiB is free.",
    "Retrying with batch size 16",
]
RESTART = ["INFO:torch.distributed.elastic.agent.server.api:[default] Worker group FAILED. 3/3 attempts left; will "
           "restart worker group"]
AGENT_FAILED = ["ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 4242) "
                "of binary: /usr/bin/python3"]
CHILD_FAILED = [
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    "============================================================",
    "train.py FAILED",
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2026-11-02_10:30:00",
    "  host      : node-001",
    "  rank      : 1 (local_rank: 1)",
    "  exitcode  : 1 (pid: 4242)",
]


def _workload(declared: str | None) -> dict[str, Any]:
    wl: dict[str, Any] = {"id": "t", "scheduler": "static", "nodes": ["node-001"]}
    if declared:
        wl["terminal_state"] = declared
    return {"apiVersion": "firstfault/v1", "workload": wl,
            "sources": [{"kind": "application", "path": "app/torchrun.log"}]}


@pytest.mark.parametrize(
    ("lines", "outcome", "domain"),
    [
        # the agent says every worker exited 0: the caught OOM did not end the run
        (CAUGHT_OOM + AGENT_OK, "succeeded", "none"),
        # a group that failed, was restarted and then finished
        (RESTART + AGENT_OK, "succeeded", "none"),
        # without the agent's word the same traceback is the failure
        (CAUGHT_OOM, "unknown", "software"),
        # the last word of the stream is a failure
        (AGENT_OK + RESTART, "unknown", "unknown"),
        # a failure summary beside the success line: the summary is the launcher's record of a failed process, so
        # the run failed (the summary names no exception, so no cause is established)
        (AGENT_OK + CHILD_FAILED, "failed", "unknown"),
        # the agent's own one-line record that a worker failed, posted without its summary (PyTorch's elastic agent,
        # torch/distributed/elastic/multiprocessing/api.py: `failed (exitcode: 1) local_rank: 0 (pid: N) of binary:
        # ...`): the run failed, where nothing else says how it ended (no cause: the worker's words are not shown)
        (AGENT_FAILED, "failed", "unknown"),
        # ... and a group the agent restarted after it, which then finished: that failure was an earlier attempt's
        (AGENT_FAILED + RESTART + AGENT_OK, "succeeded", "none"),
    ],
)
def test_the_launchers_exit_record_ends_an_attempt_nobody_else_recorded(
        make_bundle: BundleMaker, lines: list[str], outcome: str, domain: str) -> None:
    root = make_bundle({"app/torchrun.log": "".join(x + "\n" for x in lines)}, _workload(None))
    v = Analyzer().analyze_path(str(root))
    assert (v.outcome, v.attributed_domain) == (outcome, domain)


def test_a_declared_end_state_wins_over_the_launcher(make_bundle: BundleMaker) -> None:
    root = make_bundle({"app/torchrun.log": "".join(x + "\n" for x in CAUGHT_OOM + AGENT_OK)}, _workload("FAILED"))
    v = Analyzer().analyze_path(str(root))
    assert v.attributed_domain == "software"


def test_deepspeeds_launcher_success_line_is_read_only_from_the_launcher() -> None:
    from firstfault.extract.base import LineContext
    from firstfault.extract.runend import EndReportExtractor

    ex = EndReportExtractor()

    def read(line: str) -> list[str]:
        ctx = LineContext(source="application", file="a.log", lineno=1, node=None, rank=None, time=None, state={})
        return [str(d.fields["state"]) for d in ex.extract(line, ctx)]

    assert read("[2023-04-07 13:09:33,220] [INFO] [launch.py:351:main] Process 80 exits successfully.") == ["SUCCEEDED"]
    assert read("worker.py: Process 80 exits successfully.") == []


def _run(make_bundle: BundleMaker, lines: list[str], nodes: list[str]) -> Any:
    wl = {"apiVersion": "firstfault/v1",
          "workload": {"id": "t", "scheduler": "static", "nodes": nodes, "terminal_state": "FAILED"},
          "sources": [{"kind": "application", "path": "app/job.log"}]}
    root = make_bundle({"app/job.log": "".join(x + "\n" for x in lines)}, wl)
    return Analyzer().analyze_path(str(root))


def test_srun_reporting_a_node_failure_is_the_node(make_bundle: BundleMaker) -> None:
    lines = [
        "[rank0]:[E1102 10:30:00.000000 4242 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600068 "
        "milliseconds before timing out.",
        "srun: error: Node failure on gpu-node-12",
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
    ]
    v = _run(make_bundle, lines, ["gpu-node-11", "gpu-node-12"])
    assert v.root_cause is not None
    assert (v.root_cause.category, v.affected_nodes) == ("node.unreachable", ["gpu-node-12"])


@pytest.mark.parametrize(
    ("line", "category"),
    [
        # caffe2/caffe2#360's mpirun line: an abort seen only by mpirun is nobody's established cause
        ("mpirun noticed that process rank 1 with PID 29013 on node 172.17.27.12 exited on signal 6 (Aborted).", None),
        ("mpirun noticed that process rank 3 with PID 4242 on node gpu04 exited on signal 11 (Segmentation fault).",
         "app.crash"),
    ],
)
def test_mpirun_reports_a_ranks_signal(make_bundle: BundleMaker, line: str, category: str | None) -> None:
    v = _run(make_bundle, [line], ["gpu04", "172.17.27.12"])
    assert (v.root_cause.category if v.root_cause else None) == category
    assert any(e.event == "process.signal" and e.rank in (1, 3) for e in v.evidence)


# ---------------------------------------------------------------------------
# The end in the words of any program that ran the job (catalog/ends.yaml): each success guarded, each failure read
# ---------------------------------------------------------------------------

# UCX's pools checked at MPI_Finalize (rapidsai/ucx-py#276): the processes reached their normal end
UCX_AT_EXIT = [
    "[1571252924.998706] [dgx15:14737:0]          mpool.c:43   UCX  WARN  object 0x561d7a46f7c0 was not returned to "
    "mpool ucp_requests",
    "[1571252924.998708] [dgx15:14737:0]          mpool.c:43   UCX  WARN  object 0x561d7a46f900 was not returned to "
    "mpool ucp_requests",
]
# PyTorch's notice at interpreter exit (NVIDIA/Megatron-LM#1541: "distributed training can be performed")
PG_AT_EXIT = [
    "[rank0]:[W326 09:37:44.848694228 ProcessGroupNCCL.cpp:1487] Warning: WARNING: destroy_process_group() was not "
    "called before program exit, which can leak resources. For more info, please see "
    "https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
]
# ... printed as a failed run exits too: hpcaitech/ColossalAI#6202, where torchrun then stops the other workers
PG_AT_EXIT_THEN_STOPPED = [
    "[rank0]:[W219 09:17:03.293812312 ProcessGroupNCCL.cpp:1168] Warning: WARNING: process group has NOT been "
    "destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call "
    "destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare cases "
    "this process can exit before this point and block the progress of another member of the process group. This "
    "constraint has always been present,  but this warning has only been added since PyTorch 2.4 (function "
    "operator())",
    "W0219 09:17:03.837000 140066961602368 torch/distributed/elastic/multiprocessing/api.py:858] Sending process "
    "2448006 closing signal SIGTERM",
]
FIT_DONE = ["`Trainer.fit` stopped: `max_epochs=30` reached."]  # kwea123/ngp_pl#147
# open-mpi/ompi#12607: the tests passed, but mpirun ended non-zero for a rank that exited without finalize
MPIRUN_IMPROPER = ["15:50:32   OK", "15:50:32   mpirun has exited due to process rank 1 with PID 0 on"]


def _files(make_bundle: BundleMaker, files: dict[str, list[str]], name: str = "b") -> Any:
    wl = {"apiVersion": "firstfault/v1", "workload": {"id": "t", "scheduler": "static", "nodes": ["node-001"]},
          "sources": [{"kind": "application", "path": "app/*.log"}]}
    root = make_bundle({k: "".join(x + "\n" for x in v) for k, v in files.items()}, wl, name)
    return Analyzer().analyze_path(str(root))


@pytest.mark.parametrize(
    ("files", "outcome", "domain"),
    [
        # notices only printed at a normal exit, and nothing failed: the run ended well
        ({"app/job.log": UCX_AT_EXIT}, "succeeded", "none"),
        ({"app/rank-0.log": PG_AT_EXIT}, "succeeded", "none"),
        ({"app/train.log": FIT_DONE}, "succeeded", "none"),
        # the launcher's failed end: the run failed, its cause unknown
        ({"app/job.log": MPIRUN_IMPROPER}, "failed", "unknown"),
        # an exit notice of a run whose other workers torchrun then stopped: no clean end, the launcher's failed one
        ({"app/job.log": PG_AT_EXIT_THEN_STOPPED}, "failed", "unknown"),
        # the training loop's end after an exception: a stage's end does not outweigh a failure, as a launcher's
        # record of the exit codes does
        ({"app/train.log": CAUGHT_OOM + FIT_DONE}, "unknown", "software"),
        # one rank's clean exit while another rank's log holds the failure
        ({"app/rank-0.log": PG_AT_EXIT, "app/rank-1.log": CAUGHT_OOM}, "unknown", "software"),
        # an end report followed by later errors in the same file is not the end
        ({"app/torchrun.log": AGENT_OK + CAUGHT_OOM}, "unknown", "software"),
        # a success in one file, the launcher's failure in another: failed
        ({"app/rank-0.log": PG_AT_EXIT, "app/mpirun.log": MPIRUN_IMPROPER}, "failed", "unknown"),
        # srun's record of a task that exited non-zero is the launcher's failed end
        ({"app/slurm.log": ["srun: error: snowflake7: task 0: Exited with exit code 1"]}, "failed", "unknown"),
        # torchrun stopping the workers of an attempt it then restarted, and the next attempt finishing: succeeded
        ({"app/torchrun.log": PG_AT_EXIT_THEN_STOPPED[1:] + RESTART + AGENT_OK}, "succeeded", "none"),
        # a run stopped by Ctrl-C (Python's own `KeyboardInterrupt` at the end of its traceback), then the notice at
        # exit: neither a clean end nor a failure
        ({"app/train.log": ["Traceback (most recent call last):", '  File "train.py", line 10, in <module>',
                            "    trainer.fit(model)", "KeyboardInterrupt", *PG_AT_EXIT]}, "unknown", "unknown"),
        # no end report at all: the end is not shown, and the state stays unknown; nothing failed either, so
        # nothing is attributed (tests/engine/test_end_not_shown.py)
        ({"app/train.log": ["Epoch 3: loss 0.12", "Epoch 4: loss 0.11"]}, "unknown", "none"),
    ],
)
def test_the_end_a_jobs_own_output_tells(make_bundle: BundleMaker, files: dict[str, list[str]], outcome: str,
                                        domain: str) -> None:
    v = _files(make_bundle, files)
    assert (v.outcome, v.attributed_domain) == (outcome, domain)


def test_the_notes_cite_the_line_the_end_was_read_from(make_bundle: BundleMaker) -> None:
    v = _files(make_bundle, {"app/job.log": UCX_AT_EXIT})
    [note] = [n for n in v.explanation if "own output" in n]
    assert "app/job.log:2:" in note and "was not returned to mpool" in note
    v = _files(make_bundle, {"app/job.log": MPIRUN_IMPROPER}, "c")
    [note] = [n for n in v.explanation if "own output" in n]
    assert "app/job.log:2:" in note and "mpirun has exited" in note
    # a declared end state needs no such note
    root = make_bundle({"app/torchrun.log": "".join(x + "\n" for x in UCX_AT_EXIT)}, _workload("COMPLETED"), "d")
    assert not [n for n in Analyzer().analyze_path(str(root)).explanation if "own output" in n]


# Real output: Debian's Open MPI 4.1.4 mpirun, run here on a 2-rank program whose rank 1 calls exit(0) after
# MPI_Init without MPI_Finalize (`mpirun --allow-run-as-root --oversubscribe -np 2 ./noexit`); mpirun exited 1.
# Its help text's words (abort, signals) name no cause: the run failed, why is not established.
OMPI_NO_FINALIZE = [
    "--------------------------------------------------------------------------",
    "mpirun has exited due to process rank 1 with PID 0 on",
    "node vm exiting improperly. There are three reasons this could occur:",
    "",
    "1. this process did not call \"init\" before exiting, but others in",
    "the job did. This can cause a job to hang indefinitely while it waits",
    "for all processes to call \"init\". By rule, if one process calls \"init\",",
    "then ALL processes must call \"init\" prior to termination.",
    "",
    "2. this process called \"init\", but exited without calling \"finalize\".",
    "By rule, all processes that call \"init\" MUST call \"finalize\" prior to",
    "exiting or it will be considered an \"abnormal termination\"",
    "",
    "3. this process called \"MPI_Abort\" or \"orte_abort\" and the mca parameter",
    "orte_create_session_dirs is set to false. In this case, the run-time cannot",
    "detect that the abort call was an abnormal termination. Hence, the only",
    "error message you will receive is this one.",
    "",
    "This may have caused other processes in the application to be",
    "terminated by signals sent by mpirun (as reported here).",
    "",
    "You can avoid this message by specifying -quiet on the mpirun command line.",
    "--------------------------------------------------------------------------",
]


def test_mpiruns_own_help_text_on_an_improper_exit_is_a_failed_end(make_bundle: BundleMaker) -> None:
    v = _files(make_bundle, {"app/mpirun.log": OMPI_NO_FINALIZE})
    assert (v.outcome, v.attributed_domain) == ("failed", "unknown")
    assert any("app/mpirun.log:2:" in n for n in v.explanation)
