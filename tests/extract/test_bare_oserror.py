"""Python's OSError printed without its class (extract/traceback.py `bare_oserror`): CPython's OSError_str form,
`[Errno N] <strerror>: '<filename>'`, which `print(e)` or a logger's `%s` of the exception leaves, read as the
OSError it is where it is the line's whole record or ends a logger's error record.

Lines are verbatim from the public threads cited next to them unless marked `synthetic`.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from tests.conftest import BundleMaker
from tests.extract import helpers


def _exceptions(lines: list[str]) -> list[tuple[str | None, str | None]]:
    return [(str(e.fields.get("exc_type")), str(e.fields.get("errno"))) for e in helpers.events(lines)
            if e.kind == "app.exception"]


@pytest.mark.parametrize(("line", "errno"), [
    # HuangLK/transpeeder#28: the one error line the reporter posted, the class left off
    ("[Errno 2] No such file or directory: 'llama_13b_pp/global_step001/zero_pp_rank_0_mp_rank_03_optim_states.pt'",
     "ENOENT"),
    # gpustack/gpustack#5337: the worker's collector logging the exception it caught at ERROR
    ("gpustack.worker.collector - ERROR - Failed to detect GPU devices: [Errno 19] No such device: '/dev/dri/card1'",
     "ENODEV"),
    # CPython's form with two filenames (os.rename; synthetic)
    ("ERROR: could not move the shard: [Errno 18] Invalid cross-device link: '/tmp/a.tmp' -> '/data/a'", "EXDEV"),
])
def test_pythons_oserror_without_its_class_is_the_exception(line: str, errno: str) -> None:
    assert _exceptions([line]) == [("OSError", errno)]


def test_a_bare_oserror_ends_the_run_as_the_workloads_exception(make_bundle: BundleMaker) -> None:
    # HuangLK/transpeeder#28: the run's one line
    line = ("[Errno 2] No such file or directory: "
            "'llama_13b_pp/global_step001/zero_pp_rank_0_mp_rank_03_optim_states.pt'\n")
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": line})))
    assert v.attributed_domain == "software"
    assert v.root_cause is not None and v.root_cause.category.startswith("app.exception")


@pytest.mark.parametrize("line", [
    # webdataset/webdataset#411: the pipe's note on a download the loader stopped reading (the run went on): the
    # errno after a program's own words, no error record's
    "download failed: <s3_url> [Errno 32] Broken pipe",
    # ai-dynamo/modelexpress#549 as posted: the filename wrapped to the next line, so the line is no CPython form
    "[Errno 13] Permission denied:",
    # a logger's warning record of the same form (synthetic): gone on from
    "fsspec.cache - WARNING - could not remove the cache entry: [Errno 2] No such file or directory: '/tmp/c/x'",
    # words that are no strerror after the number (synthetic): not CPython's OSError
    "[Errno 3] Shard missing: 'x'",
    # prose quoting the form (synthetic, after gpustack#5337's title): not at the line's head, no error record
    "device detection fails with [Errno 19] No such device: '/dev/dri/card1'",
])
def test_near_miss_errno_words_that_are_no_oserror_record(line: str) -> None:
    assert _exceptions([line]) == []
