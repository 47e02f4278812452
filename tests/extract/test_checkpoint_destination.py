"""A checkpoint library refusing to write over a step the job's output directory already holds (catalog/exceptions.yaml,
the rows after netCDF's NC_NOCLOBBER): orbax-checkpoint's `Destination ... already exists.` and its CheckpointManager's
StepAlreadyExistsError are the job's set-up (its output path), as NC_NOCLOBBER is. The lab's orbax_step_exists
(tests/lab/captured/orbax_step_exists) is the real run."""

from __future__ import annotations

import pytest

from tests.extract import helpers
from tests.extract.test_languages import ALL


def drafts(text: str) -> list[tuple[str, bool]]:
    return [(d.kind, d.fields.get("setup") is True) for d in helpers.scan(ALL, text.splitlines(), "application")]


@pytest.mark.parametrize("text", [
    # the lab's run (orbax-checkpoint 0.12.8, async_checkpointer.py _prepare_destination_async), under torchrun's tag
    "[rank0]: ValueError: Destination /tmp/lab98/run1/.work/orbax_step_exists/out/orbax/step-0003 already exists.\n",
    # the synchronous Checkpointer's same words (checkpointer.py), a gs:// path
    "ValueError: Destination gs://bucket/run-7/checkpoints/1000 already exists.\n",
    # CheckpointManager.save on a step its directory holds (checkpoint_manager.py)
    "orbax.checkpoint.checkpoint_manager.StepAlreadyExistsError: Checkpoint for step 1000 already exists.\n",
])
def test_checkpoint_destination_that_exists_is_the_jobs_set_up(text: str) -> None:
    assert ("app.exception", True) in drafts(text)


@pytest.mark.parametrize("text", [
    # the same words as a log line, no exception: decides nothing of the set-up
    "I1207 09:16:57.710 checkpointer.py:301] Destination /ckpt/step-0003 already exists.\n",
    # another ValueError about a destination: the program's own exception
    "ValueError: Destination /ckpt/step-0003 does not exist.\n",
    # the same message under another class: no orbax refusal
    "RuntimeError: Destination /ckpt/step-0003 already exists.\n",
    # a step the manager found missing, not one already there
    "orbax.checkpoint.checkpoint_manager.StepAlreadyExistsError: No checkpoint for step 1000.\n",
])
def test_checkpoint_destination_near_misses_are_no_set_up(text: str) -> None:
    assert ("app.exception", True) not in drafts(text)
