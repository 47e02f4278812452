"""The XLA and TensorFlow allocators' out-of-memory statuses in both spellings of their status word (brief bio100):
absl's `RESOURCE_EXHAUSTED: ` and the `Resource exhausted: ` of TensorFlow's and XLA's Status before absl
(codes._STATUS_OOM, one list of messages spelled with each of catalog/exceptions.yaml's spellings of the word); and
the lines alike that are no device's memory.

Provenance: a line `as posted` is copied from the public thread named beside it; a line `filled in` is ours, written
from the printing program's format string cited beside it."""

from __future__ import annotations

import pytest

from firstfault.catalog.tables import status_word_table
from firstfault.extract import codes
from tests.extract.helpers import events


def ooms(lines: list[str]) -> list[str]:
    return [str(ev.fields["message"]) for ev in events(lines, "application") if ev.kind == "app.cuda_oom"]


# as posted (YoshitakaMo/localcolabfold#22): jaxlib 0.1.x's allocator status, the lone last line of a run
OLD_SPELLING = ("jax._src.traceback_util.UnfilteredStackTrace: RuntimeError: Resource exhausted: Failed to allocate "
                "request for 3.25GiB (3488555008B) on device ordinal 0")
# filled in: the same status from a newer jaxlib (xla/stream_executor/stream_executor_pimpl.cc
# StreamExecutorMemoryAllocator::Allocate, absl's ResourceExhaustedError)
NEW_SPELLING = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 2.99GiB "
                "(3206250496B) on device ordinal 0")
TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/opt/colabfold/batch.py", line 412, in predict_structure',
    "    prediction_result = model_runner.predict(input_features, random_seed=seed)",
    "RuntimeError: Resource exhausted: Failed to allocate request for 3.25GiB (3488555008B) on device ordinal 0",
]


@pytest.mark.parametrize("lines", [[OLD_SPELLING], [NEW_SPELLING], TRACEBACK], ids=["old", "absl", "traceback"])
def test_an_allocators_status_in_either_spelling_is_the_accelerators_oom(lines: list[str]) -> None:
    got = ooms(lines)
    assert len(got) == 1 and "Failed to allocate request for" in got[0], events(lines, "application")


@pytest.mark.parametrize("line", [
    # filled in: the Linux crypto self-test's allocation of a request (crypto/testmgr.c `alg: hash: Failed to allocate
    # request for %s`): the same words with no status word, no device's memory
    "alg: hash: Failed to allocate request for sha256-generic",
    # filled in: a cloud quota in gcloud's words (RESOURCE_EXHAUSTED alone is no device's memory)
    "ERROR: (gcloud.ai.custom-jobs.create) RESOURCE_EXHAUSTED: Quota exceeded for quota metric 'Custom model "
    "training Nvidia L4 GPUs per region'",
    # filled in: TensorFlow 1.x's status about a checkpoint file (tensorflow/core/platform/posix: the path only)
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: /home/u/ckpt/model.ckpt-6.tempstate123",
])
def test_the_lines_alike_are_no_device_oom(line: str) -> None:
    assert ooms([line]) == []


def test_the_spellings_are_the_status_tables() -> None:
    row = status_word_table()["RESOURCE_EXHAUSTED"]
    assert set(codes._RESOURCE_EXHAUSTED_SPELLINGS) == {row.word, *row.texts}
    for word in codes._RESOURCE_EXHAUSTED_SPELLINGS:
        assert f"{word}: Failed to allocate request for" in codes.ACCEL_OOM_PHRASES
        assert f"{word}: Out of memory" in codes.ACCEL_OOM_PHRASES
