"""Three readings the failure lab's seventh round (issue 25, lab/README.md) found missing, each tested both ways: a
class of pyarrow's that its name alone does not mark as an exception (catalog/exceptions.yaml), a class of a package's
private exceptions module (extract/traceback.py `_EXCEPTION_MODULES`), and the DataLoader's own wait on its workers
running out (catalog/exceptions.yaml, family timeout). The lines are the real output of the software named, run here
(tests/lab/captured/<fault>/), or its source's format where said."""

from __future__ import annotations

from firstfault.extract.base import Draft
from tests.extract.helpers import alone, last_line


def one(line: str) -> Draft:
    drafts = last_line(line)
    assert len(drafts) == 1, drafts
    return drafts[0]


# ------------------------------------------------------------------ pyarrow's ArrowInvalid


def test_pyarrows_invalid_data_is_the_workloads_exception() -> None:
    # run here: a parquet file cut to half its size, read by pyarrow 26 in a DataLoader worker
    # (tests/lab/captured/dataloader_parquet_corrupt, rank 1's stderr)
    d = one("pyarrow.lib.ArrowInvalid: Could not open Parquet input source '/data/features-rank01.parquet': Parquet "
            "magic bytes not found in footer. Either the file is corrupted or this is not a parquet file.")
    assert d.kind == "app.exception" and d.fields["exc_type"] == "ArrowInvalid"
    # the DataLoader's re-raise in the rank names the class too (its first line, before `Original Traceback`)
    assert one("pyarrow.lib.ArrowInvalid: Caught ArrowInvalid in DataLoader worker process 1.").kind == "app.exception"


def test_a_skipped_corrupt_file_is_no_failure() -> None:
    # near miss: a loader that logs the same error and goes on (its words: `skipping`) ends nothing
    assert alone("WARNING skipping part-0007.parquet: pyarrow.lib.ArrowInvalid: Parquet magic bytes not found in "
                 "footer. Either the file is corrupted or this is not a parquet file.") == []


# ------------------------------------------------------------------ a private exceptions module


def test_filelocks_timeout_from_its_private_errors_module() -> None:
    # run here: filelock 4.3 (tests/lab/captured/filelock_timeout); filelock 3.x defines the class in
    # src/filelock/_error.py, so Python prints `filelock._error.Timeout` (its form)
    for line in ("filelock._core._errors.Timeout: The file lock '/work/cache/features.lock' could not be acquired.",
                 "filelock._error.Timeout: The file lock '/root/.cache/huggingface/datasets/c.lock' could not be "
                 "acquired."):
        d = one(line)
        assert d.kind == "app.exception" and d.fields["exc_type"] == "Timeout", line


def test_a_class_of_a_private_module_that_is_no_exceptions_module_is_not_read_so() -> None:
    # near miss: a `Timeout` of a private module of another name (a state, not an exception's home) alone on its line
    assert alone("filelock._core._state.Timeout: 5") == []
    assert alone("scheduler._config.Timeout: 30 seconds") == []


# ------------------------------------------------------------------ the DataLoader's wait on its workers


def test_the_dataloaders_timeout_is_a_wait_that_ran_out() -> None:
    # run here: torch 2.13's DataLoader(timeout=5.0) on a worker that stalled (tests/lab/captured/dataloader_timeout);
    # an int timeout prints without the decimal (torch/utils/data/dataloader.py: f"... after {self._timeout} seconds")
    for line in ("RuntimeError: DataLoader timed out after 5.0 seconds",
                 "RuntimeError: DataLoader timed out after 120 seconds"):
        assert one(line).kind == "nccl.timeout", line


def test_a_dataloader_worker_that_died_is_not_a_timeout() -> None:
    # near miss: the same DataLoader's word for a worker that exited (torch/utils/data/dataloader.py
    # `DataLoader worker (pid(s) {pids_str}) exited unexpectedly`) is no wait that ran out
    for line in ("RuntimeError: DataLoader worker (pid(s) 4242) exited unexpectedly",
                 # ... nor a timeout the message only quotes as a setting
                 "ValueError: DataLoader timed out after -1 seconds is not a valid timeout"):
        assert all(d.kind != "nccl.timeout" for d in last_line(line)), line
