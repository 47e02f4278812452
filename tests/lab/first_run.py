"""Lab faults whose verdict was wrong on their first run, before any change to firstfault (issue 25).

Each entry names what the verdict got wrong and the lines that should have decided it. The expectation
stays the fault's own (lab/faults.py); the tests mark these runs as expected failures, strictly for the
captured runs (tests/lab/captured/: the same bytes every time, so a fix makes them pass and the entry must
go) and leniently for the fresh runs of test_lab.py (a fresh run's output may differ in timing and order).
Owners of extractors and rules: remove an entry once its fault passes.
"""

from __future__ import annotations

WRONG: dict[str, str] = {
    "ckpt_missing_shard": (
        "ambiguous between app.exception (\"torch.distributed.checkpoint.api.CheckpointException: CheckpointException "
        "ranks:dict_keys([0, 1, 2])\") and app.exception.io (\"FileNotFoundError: [Errno 2] No such file or "
        "directory: '.../__1_0.distcp'\", the same exception's cause, in the same traceback): one exception "
        "chain, one cause; want software/app.exception"),
    "ray_sigkill_external": (
        "FALSE DEFINITIVE software/app.exception, want unknown: rank 1 was kill -9'ed from outside; the driver's "
        "'ray.train.WorkerGroupError: Training failed due to worker errors:' wraps Ray's 'The actor died "
        "unexpectedly before finishing this task ... Worker exit type: SYSTEM_ERROR' (a peer's death, no "
        "exception of the workload), and the other ranks' gloo 'Connection closed by peer' are its fallout; "
        "Ray's hint '(1) the process was killed by the OOM killer' is no OOM record"),
    "ray_hang": (
        "FALSE DEFINITIVE software/app.exception, want unknown: rank 1 stopped in step 3 ('step 3: fetching remote "
        "sample index'); ranks 0 and 2 time out in gloo ('RuntimeError: [...unbound_buffer.cc:78] Timed out "
        "waiting 10000ms for recv operation to complete'), and the driver's 'ray.train.WorkerGroupError: Training "
        "failed due to worker errors:' with its '[Rank 0 Error Snippet]:' / '[Rank 2 Error Snippet]:' only wraps "
        "those timeouts: a launcher's summary of its workers' symptoms is no exception of the workload"),
}


# Faults whose verdict is right (`unknown`) but whose first run gave no lead, or another, than the one the
# fault decides (tests/lab/test_captured.py's LEADS): strict expected failures of the lead test.
LEADS_WRONG: dict[str, str] = {
}
