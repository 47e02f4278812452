"""A launcher's or a framework's summary of its workers' exceptions decides nothing; the workers' own do.

The exception table's `envelope` rows (catalog/exceptions.yaml): torchrun's ChildFailedError, Ray Train's
WorkerGroupError and TrainingFailedError (and its older `Training has failed even after N attempts`),
torch.distributed.checkpoint's CheckpointException. Each prints its workers' tracebacks in its message, or points
at the errors logged before it; whatever it wraps (a worker's ValueError, a peer that closed the connection) is
read from those, never the summary's own line. Lines are verbatim from the threads cited, or the real output of
the lab's runs here (tests/lab/captured/).
"""

from __future__ import annotations

import pytest

from firstfault.extract import excclass, nccl
from firstfault.extract.base import LineExtractor
from tests.extract import helpers

ALL: tuple[LineExtractor, ...] = (*nccl.EXTRACTORS, *helpers.APPLICATION)
TB = "Traceback (most recent call last):"


@pytest.mark.parametrize("last", [
    # ray-project/ray#39380 (Ray Train v1, the workers' errors logged before it)
    "ray.train.base_trainer.TrainingFailedError: The Ray Train run failed. Please inspect the previous error messages "
    "for a cause. After fixing the issue (assuming that the error is not caused by your own application logic, but "
    "rather an error such as OOM), you can restart the run from scratch or continue this run.",
    # ray-project/ray#47974 (the same, as IPython prints it: the bare class)
    "TrainingFailedError: The Ray Train run failed. Please inspect the previous error messages for a cause. After "
    "fixing the issue (assuming that the error is not caused by your own application logic, but rather an error such "
    "as OOM), you can restart the run from scratch or continue this run.",
    # ray-project/ray#23431 (an older Ray Train's summary, a RuntimeError)
    "(TrainTrainable pid=1236) RuntimeError: Training has failed even after 1 attempts. You can change the number of "
    "max failure attempts by setting the `max_retries` arg in your `Trainer`.",
    # run here (tests/lab/captured/ray_exception): Ray Train v2's summary, its workers' tracebacks below it
    "ray.train.WorkerGroupError: Training failed due to worker errors:",
    # bghira/SimpleTuner#1880: torch.distributed.checkpoint's, every failed rank's traceback after it
    "2025-10-31 03:11:02,473 - SimpleTuner - INFO - [rank7]: torch.distributed.checkpoint.api.CheckpointException: "
    "CheckpointException ranks:dict_keys([0, 1, 2, 3, 4, 5, 6, 7])",
])
def test_a_summary_of_the_workers_exceptions_is_no_exception_of_its_own(last: str) -> None:
    assert helpers.scan(ALL, [TB, last], "application") == []


def test_the_worker_exception_in_the_summary_decides() -> None:
    # run here (tests/lab/captured/ray_exception/nodes/vm/ray-driver.log, lines 161-178)
    lines = [
        TB,
        '  File "/work/wt/lab/lab/ray_job.py", line 69, in main',
        "    result = trainer.fit()",
        '  File "/work/wt/lab/.venv/lib/python3.11/site-packages/ray/train/v2/api/data_parallel_trainer.py", line 195, '
        "in fit",
        "    raise result.error",
        "ray.train.WorkerGroupError: Training failed due to worker errors:",
        "[Rank 1 Error Snippet]:",
        TB,
        '  File "/work/wt/lab/lab/ray_job.py", line 51, in train_loop',
        "    loss = F.binary_cross_entropy(out.sigmoid(), y.sigmoid())",
        '  File "/work/wt/lab/.venv/lib/python3.11/site-packages/torch/nn/functional.py", line 3615, in '
        "binary_cross_entropy",
        "    raise ValueError(",
        "ValueError: Using a target size (torch.Size([3, 1])) that is different to the input size (torch.Size([4, 1]))"
        " is deprecated. Please ensure they have the same size.",
    ]
    drafts = helpers.scan(ALL, lines, "application")
    assert [(d.kind, d.fields.get("exc_type")) for d in drafts] == [("app.exception", "ValueError")]


def test_a_checkpoint_summary_leaves_the_failed_ranks_error_to_decide() -> None:
    # run here (tests/lab/captured/ckpt_missing_shard/torchrun-logs/attempt_0/1/stderr.log, lines 22-46, frames
    # shortened): before, the summary and the rank's own error were two causes of one failure
    lines = [
        "[rank1]: " + TB,
        '[rank1]:   File "/work/wt/lab/.venv/lib/python3.11/site-packages/torch/distributed/checkpoint/utils.py", line '
        "289, in all_gather",
        "[rank1]:     raise CheckpointException(step, node_failures)",
        "[rank1]: torch.distributed.checkpoint.api.CheckpointException: CheckpointException ranks:dict_keys([0, 1, 2])",
        "[rank1]: Traceback (most recent call last): (RANK 0)",
        '[rank1]:   File "/root/.pyenv/versions/3.11.7/lib/python3.11/pathlib.py", line 1044, in open',
        "[rank1]:     return io.open(self, mode, buffering, encoding, errors, newline)",
        "[rank1]: FileNotFoundError: [Errno 2] No such file or directory: "
        "'/tmp/labfinal/.work/ckpt_missing_shard/ckpt/step-0003/__1_0.distcp'",
    ]
    drafts = helpers.scan(ALL, lines, "application")
    assert [(d.kind, d.fields.get("exc_type")) for d in drafts] == [("app.exception", "FileNotFoundError")]


@pytest.mark.parametrize(("qual", "cls", "msg"), [
    # near misses: classes whose names hold a summary's words but which are the workload's own error (constructed)
    ("ValueError", "ValueError", "Training failed due to worker errors"),
    ("megatron.core.dist_checkpointing.core.CheckpointingException", "CheckpointingException",
     "Cannot find global shape metadata"),
    ("ray.train.TrainingFailedErrorHandler", "TrainingFailedErrorHandler", "x"),
    # an older Ray Train's words with another count: the row needs the attempts' count
    ("RuntimeError", "RuntimeError", "Training has failed"),
])
def test_look_alikes_are_no_envelopes(qual: str, cls: str, msg: str) -> None:
    assert not excclass.envelope(qual, cls, msg)
