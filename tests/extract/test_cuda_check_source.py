"""A program's own CUDA check macro: cudaGetErrorString's words, then the check's __FILE__ and __LINE__
(extract/codes.py `_AT_SOURCE`). The location right after the table's message says the status of a CUDA call was
checked there, as strong as an anchor; the macros print it in a few orders, each read here, and only a message as long
and as CUDA's own as an unanchored one must be.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import analyze
from firstfault.extract import codes
from tests.conftest import BundleMaker, workload_ending

# hiyouga/LlamaFactory#2965 (the description): bitsandbytes' csrc CUDA_CHECK_RETURN, ` at line N in file FILE`
_BNB = ("Error invalid configuration argument at line 216 in file "
        "/mmfs1/gscratch/zlab/timdettmers/git/bitsandbytes/csrc/ops.cu")
# lattice/quda#93 (the description): QUDA's errorQuda, the location in a parenthesis after the words
_QUDA = "ERROR: (CUDA) invalid resource handle (rank 0, host blast, dslash_quda.cu:1434 in wilsonDslashCuda())"
# "CUDA by Example"'s HANDLE_ERROR (`printf("%s in %s at line %d\n", cudaGetErrorString(err), file, line)`), the
# shape its copies print
_HANDLE_ERROR = "an illegal memory access was encountered in histogram.cu at line 45"


@pytest.mark.parametrize(("line", "code", "cls"), [
    (_BNB, 9, "config"),
    (_QUDA, 400, "usage"),
    (_HANDLE_ERROR, 700, "illegal_address"),
    # the shape read before: ` at FILE:LINE` (Horovod's cuda_operations.cc `throw std::logic_error(std::string(
    # cudaGetErrorString(err)) + " at " + __FILE__ ...`)
    ("an illegal memory access was encountered at horovod/common/ops/cuda_operations.cc:110", 700, "illegal_address"),
])
def test_a_checks_location_anchors_the_message(line: str, code: int, cls: str) -> None:
    err = codes.cuda_error_of(line)
    assert err is not None and (err.code, err.cls) == (code, cls)


@pytest.mark.parametrize("line", [
    # near misses: a short message or strerror's words are any program's (`invalid argument`, EINVAL's)
    "invalid argument at line 12 in file main.cu",
    "out of memory in main.cu at line 3",
    # a parenthesis naming a file that is no CUDA source, or the message not right before it
    "invalid resource handle (see handles.c:12)",
    "ERROR: (CUDA) invalid resource handle was freed, then later (rank 0, dslash_quda.cu:1434 in f())",
    # the words quoted in a Python frame's location: no CUDA source
    "invalid resource handle (rank 0, host blast, util.py:14 in f())",
])
def test_the_words_without_a_checks_location_are_not_cudas(line: str) -> None:
    assert codes.cuda_error_of(line) is None


@pytest.mark.parametrize(("line", "category"), [
    (_BNB, "app.exception.cuda_config"),
    (_QUDA, "app.exception.cuda_usage"),
])
def test_the_verdict(make_bundle: BundleMaker, line: str, category: str) -> None:
    v = analyze(str(make_bundle({"app/rank-0.log": line + "\n"}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == category
