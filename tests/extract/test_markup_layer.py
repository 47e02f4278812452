"""Markdown around a pasted line (extract/prefix.py `_markup_inner`, `_tagged_markup`): emphasis, a code span and a
list bullet are peeled like any other layer, so the line reads as it would bare; a `**` or a backtick that is a
glob, a source line's keyword arguments or Python's power operator is no markup.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract.prefix import split_prefixes
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers

# facebookresearch/fairseq#2924, verbatim: the reporter's paste, a job tag then the line in strong emphasis
FAIRSEQ = ("fairseq-master: **RuntimeError: NCCL error in: ../torch/lib/c10d/ProcessGroupNCCL.cpp:514, invalid usage, "
           "NCCL version 2.6.3**")
BARE = "RuntimeError: NCCL error in: ../torch/lib/c10d/ProcessGroupNCCL.cpp:514, invalid usage, NCCL version 2.6.3"


def kinds(line: str) -> list[tuple[str, object]]:
    return [(e.kind, e.fields.get("nccl_result"))
            for e in helpers.events([line], "application", file="f.log", node=None)]


@pytest.mark.parametrize("line", [
    f"**{BARE}**",  # the fairseq line without its tag
    f"`{BARE}`",  # ... in a code span
    f"- `{BARE}`",  # ... as a list item
    f"> **{BARE}**",  # ... quoted
])
def test_markup_around_a_pasted_line_is_peeled(line: str) -> None:
    assert split_prefixes(line).body == BARE
    # NCCL's invalid usage (the engine's app-setup rule makes it the job's set-up), as the bare line reads
    assert kinds(line) == kinds(BARE) == [("nccl.error", "ncclInvalidUsage")]


def test_a_code_span_that_keeps_its_padding_is_peeled_to_its_text() -> None:
    # BSC-ES/autosubmit#382 (https://github.com/BSC-ES/autosubmit/issues/382): each row of sacct's fixed-width table
    # pasted as a code span, the last cell's padding kept inside the backticks
    row = "`1488666.bat+      batch                 bsc32          4 OUT_OF_ME+    0:125 `"
    assert split_prefixes(row).body == "1488666.bat+      batch                 bsc32          4 OUT_OF_ME+    0:125"
    # ... but a span whose text starts with a space, or holds nothing but spaces, is no pasted line
    assert split_prefixes("` OUT_OF_ME+ `").body == "` OUT_OF_ME+ `"
    assert split_prefixes("`   `").body == "`   `"


def test_a_tag_before_the_emphasis_is_kept_and_the_markers_go() -> None:
    assert split_prefixes(FAIRSEQ).body == "fairseq-master: " + BARE


def test_the_tagged_line_reads_as_the_jobs_set_up(make_bundle: BundleMaker) -> None:
    w: dict[str, Any] = copy.deepcopy(WORKLOAD)
    w["workload"]["nodes"] = ["node-01"]
    w["workload"]["ranks"] = {"node-01": "0"}
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": FAIRSEQ + "\n"}, w)))
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup"


@pytest.mark.parametrize("line", [
    "**/*.py",  # a glob (a linter's or a packager's pattern)
    "**kwargs)",  # a source line of a traceback, its indentation taken
    "result = base ** exponent  # RuntimeError: never raised",  # Python's power operator
    "`a` and `b` failed",  # two code spans, not one around the line
    "**Error** in the second step",  # emphasis on one word, not the line
    "- python=3.10",  # a bullet before no pasted log line (a conda environment's list)
    "```",  # a fence
    # koordinator-sh/koordinator#1004, verbatim: emphasis a person put on the words after a sentence, not a tag
    "23/02/08 08:34:25 WARN TaskSetManager: Lost task 12057.0 in stage 372.0 (TID 178902) (172.16.0.127 executor 4): "
    "java.io.IOException: **No space left on device**",
])
def test_near_miss_stars_and_backticks_that_are_no_markup_around_the_line(line: str) -> None:
    assert split_prefixes(line).body == line


# defilantech/LLMKube#1031 (https://github.com/defilantech/LLMKube/pull/1031), verbatim: vLLM's argparse refusing a flag
# its deployment passed. The same line as a person's prose puts it, the message after the program's `name: error: `
# tag in a code span (the shape llm-d/llm-d-benchmark#1572 posted), reads as the bare line.
VLLM_REFUSAL = "vllm: error: unrecognized arguments: --enable-metrics"
VLLM_SPANNED = "vllm: error: `unrecognized arguments: --enable-metrics`"


def test_a_code_span_after_a_programs_tag_and_level_is_peeled() -> None:
    assert split_prefixes(VLLM_SPANNED).body == VLLM_REFUSAL
    setup = [e.kind for e in helpers.events([VLLM_SPANNED], "application", file="f.log", node=None)
             if e.fields.get("setup")]
    assert setup == ["app.exception"]


@pytest.mark.parametrize("line", [
    # the compilers' own code spans in their messages (a person did not put them there): the span does not close the
    # line (leanprover's `error: `simp` made no progress`, gcc 3's `error: `boot_cpu_data' undeclared`), or the tag
    # before it holds a file's place with spaces in a sentence
    "Poincare/Global/IntrinsicLaplacianCoordinateForm.lean:144:10: error: `simp` made no progress",
    "/usr/include/asm/atomic.h:189: error: `boot_cpu_data' undeclared (first use",
    "Step 3 failed: `make install`",
])
def test_a_code_span_that_is_the_programs_own_or_after_a_sentence_stays(line: str) -> None:
    assert split_prefixes(line).body == line
    assert not [e for e in helpers.events([line], "application", file="f.log", node=None) if e.fields.get("setup")]


# ENCODE-DCC/atac-seq-pipeline#446 (https://github.com/ENCODE-DCC/atac-seq-pipeline/issues/446), verbatim: bash's
# report of a command it could not run in an LSF job's script (`<script>: line N: `, bash's error.c), the message
# after it put in strong emphasis by the reporter
ATAC = ("/home/stbresnahan/.lsbatch/1724344190.9833039: line 8: **/rsrch5/home/epi/stbresnahan/o7cw6oj0.sh: No such "
        "file or directory**")


def test_a_shells_script_and_line_before_the_emphasis_are_one_tag() -> None:
    assert split_prefixes(ATAC).body == ATAC.replace("**", "")
    assert kinds(ATAC) == kinds(ATAC.replace("**", ""))


@pytest.mark.parametrize("line", [
    # (synthetic) a sentence that says `line N` before emphasis: words with spaces are no tag
    "The job failed at line 8: **No such file or directory**",
    # (synthetic) a bold-marked heading of a post, the log under it: the whole line in emphasis, ending in a colon
    "**Error log of line 8:**",
    "/home/u/run.sh: line 8 was: **cd /scratch**",
])
def test_near_miss_line_words_that_are_no_shells_place_keep_the_emphasis(line: str) -> None:
    assert split_prefixes(line).body == line
