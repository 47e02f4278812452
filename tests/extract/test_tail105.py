"""Four programs' own words for a job's set-up or an object store's fault (catalog/exceptions.yaml), each with its near
misses: Accelerate's port check, Ray's version check across its nodes, the linkers' words for a library not found
under a run-time op build, and S3's and GCS's InternalError sentence where the error names the store.

Each line is the program's own format string filled in (the file named beside it: huggingface/accelerate 1.16,
ray-project/ray 2.60 as released on PyPI; the linkers run here, GNU ld 2.40 and gold, rust-lld 22 as lld), or a
public thread's line where one is named.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract.base import Draft
from firstfault.extract.excclass import message_store_code
from tests.conftest import BundleMaker
from tests.extract.helpers import alone, last_line


def kinds(drafts: list[Draft]) -> list[str]:
    return [d.kind for d in drafts]


def setup_read(drafts: list[Draft]) -> bool:
    return kinds(drafts) == ["app.exception"] and drafts[0].fields.get("setup") is True


# ------------------------------------------------------------------ Accelerate's port check


def test_accelerates_port_check_is_the_jobs_set_up() -> None:
    # accelerate/utils/launch.py prepare_multi_gpu_env (RAG-Retrieval#50)
    assert setup_read(last_line(
        "ConnectionError: Tried to launch distributed communication on port `29500`, but another process is utilizing "
        "it. Please specify a different port (such as using the `--main_process_port` flag or specifying a different "
        "`main_process_port` in your config file) and rerun your script. To automatically use the next open port (on a "
        "single node), you can set this to `0`."))


@pytest.mark.parametrize("line", [
    # accelerate/utils/launch.py: the single-node warning, which goes on with another port
    "UserWarning: Port `29500` is already in use. Accelerate will attempt to launch in a standalone-like mode by "
    "finding an open port automatically for this session.",
    # (synthetic) the check's words without its port
    "ConnectionError: Tried to launch distributed communication, but the peer did not answer",
])
def test_near_miss_accelerates_other_port_words_are_no_set_up(line: str) -> None:
    assert all(d.fields.get("setup") is None for d in last_line(line) + alone(line))


# ------------------------------------------------------------------ Ray's version check


def test_rays_version_mismatch_across_nodes_is_the_jobs_set_up() -> None:
    # ray/_private/utils.py check_version_info, raised for a worker or driver on a node (gpustack/gpustack#1640)
    assert setup_read(last_line("RuntimeError: Version mismatch: The cluster was started with:"))


@pytest.mark.parametrize("line", [
    # ray/_private/utils.py: the warning forms (a patch version only; Ray Client with RAY_IGNORE_VERSION_MISMATCH)
    "2026-05-01 12:00:00,000\tWARNING utils.py:1400 -- Python patch version mismatch: The cluster was started with:",
    "2026-05-01 12:00:00,000\tWARNING utils.py:1402 -- Version mismatch: The cluster was started with:",
])
def test_near_miss_rays_version_warnings_are_no_set_up(line: str) -> None:
    assert all(d.fields.get("setup") is None for d in alone(line))


# ------------------------------------------------------------------ the linkers' library not found


@pytest.mark.parametrize("line", [
    "/usr/bin/ld: cannot find -lcurand",                               # GNU ld before 2.36 (DeepSpeed#5816)
    "/usr/bin/ld: cannot find -lcuda: No such file or directory",      # GNU ld 2.36 and later
    "/usr/bin/ld: cannot find -l:libcudart.so: No such file or directory",
    "/usr/bin/ld.gold: error: cannot find -lcurand",                   # gold
    "ld.lld: error: unable to find library -lcurand",                  # lld for ELF
    "ld: library not found for -lcudart",                              # ld64 and lld for Mach-O
])
def test_a_library_the_linker_could_not_find_is_the_jobs_set_up(line: str) -> None:
    assert setup_read(alone(line))


@pytest.mark.parametrize("line", [
    # GNU ld's warning of a missing entry symbol: the link goes on
    "/usr/bin/ld: warning: cannot find entry symbol _start; defaulting to 0000000000401000",
    # (synthetic) a file not found, no library flag
    "error: cannot find libcurand.so in the search path",
])
def test_near_miss_the_linkers_other_words_are_no_set_up(line: str) -> None:
    assert all(d.fields.get("setup") is None for d in alone(line))


def test_an_op_build_whose_link_failed_is_the_jobs_set_up(make_bundle: BundleMaker) -> None:
    # DeepSpeed's JIT build of cpu_adam through ninja (microsoft/DeepSpeed#5816), collect2's summary last
    log = "".join(line + "\n" for line in [
        "Building extension module cpu_adam...",
        "[1/1] c++ cpu_adam.o cpu_adam_impl.o -shared -lcurand -L/opt/torch/lib -lc10 -ltorch -o cpu_adam.so",
        "FAILED: cpu_adam.so ",
        "/usr/bin/ld: cannot find -lcurand",
        "collect2: error: ld returned 1 exit status",
    ])
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": log})))
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup"


# ------------------------------------------------------------------ the stores' InternalError sentence


@pytest.mark.parametrize("line", [
    # tensorstore's GCS gRPC kvstore, its source locations naming the driver (google/tensorstore#210)
    "INTERNAL: Error reading [...]: We encountered an internal error. Please try again. [source locations='tensorstore"
    "/kvstore/gcs_grpc/gcs_grpc.cc:503\\ntensorstore/internal/cache/kvs_backed_cache.h:208']",
    # (synthetic) the same status raised in Python, the key's URL in it
    'ValueError: INTERNAL: Error reading "gs://bucket/ckpt/manifest.ocdbt": We encountered an internal error. Please '
    "try again.",
])
def test_the_stores_internal_error_where_the_store_is_named_is_the_stores(line: str) -> None:
    drafts = alone(line)
    assert kinds(drafts) == ["storage.error"] and drafts[0].fields.get("store_code") == "InternalError"


@pytest.mark.parametrize("line", [
    # the sentence alone, no store named: any AWS service's
    "INTERNAL: Error reading [...]: We encountered an internal error. Please try again.",
    # SageMaker's FailureReason (an envelope by its class) and the same quoted by another class
    "InternalServerError: We encountered an internal error. Please try again.",
    "Exception: Training job failed. Reason: InternalServerError: We encountered an internal error. Please try again.",
])
def test_near_miss_the_sentence_without_a_store_is_no_stores(line: str) -> None:
    assert "storage.error" not in kinds(alone(line) + last_line(line))


def test_near_miss_a_shared_message_names_its_code_only_in_a_stores_error() -> None:
    # extract/traceback.py _object_store asks for it; the last resort (words_cause) and any other reader do not
    assert message_store_code("We encountered an internal error. Please try again.") is None
    assert message_store_code("We encountered an internal error. Please try again.", shared=True) == "InternalError"
