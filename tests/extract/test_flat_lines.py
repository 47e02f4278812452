"""Log lines a person pasted flat onto one line (collect/scan.py `flat_pieces`, Extraction._flat): the pieces are read
in order as lines of their own at the line's place, so a traceback flattened behind its `[rankN]: ` tags reads as
the traceback, and a message followed on its line by later records reads as the message. One tag after words, or a
run of spaces before no record's head, cuts nothing.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.collect.scan import flat_pieces
from firstfault.model import Verdict
from tests.conftest import WORKLOAD, BundleMaker

# Physical-Intelligence/openpi#868 (https://github.com/Physical-Intelligence/openpi/issues/868), verbatim: rank 2's
# traceback as the text box kept it, one line
OPENPI_868 = ("ERROR MESSAGE [rank2]: Traceback (most recent call last): [rank2]: File "
              "\".../scripts/train_pytorch.py\", line 332, in train_loop [rank2]: shutil.rmtree(config.checkpoint_dir) "
              "[rank2]: File \".../shutil.py\", line 748, in rmtree [rank2]: FileNotFoundError: [Errno 2] No such file "
              "or directory: '/path/to/checkpoint_dir'")
# nlzy/vllm-gfx906#14 (https://github.com/nlzy/vllm-gfx906/issues/14), verbatim but for the middle of the message
# (elided here): the allocator's OOM, then vLLM's records of the engine's traceback after a run of spaces
GAP1, GAP2 = " " * 32, " " * 27
VLLM_14 = ("HIP out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 15.98 GiB of which 22.00 MiB "
           "is free. See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html"
           f"#environment-variables){GAP1}ERROR 07-04 14:53:23 [engine.py:458] Traceback (most recent call last):{GAP2}"
           "ERROR 07-04 14:53:23 [engine.py:458]   File \"/opt/torchenv/lib/python3.12/site-packages/vllm/engine/"
           "multiprocessing/engine.py\", line 446,")


def _verdict(make_bundle: BundleMaker, text: str) -> Verdict:
    w: dict[str, Any] = copy.deepcopy(WORKLOAD)
    w["workload"]["nodes"] = ["node-01"]
    w["workload"]["ranks"] = {"node-01": "0"}
    return Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": text + "\n"}, w)))


def test_a_traceback_flattened_behind_its_rank_tags_reads_as_the_traceback(make_bundle: BundleMaker) -> None:
    pieces = flat_pieces(OPENPI_868)
    assert pieces is not None and pieces[0] == "ERROR MESSAGE" and len(pieces) == 6
    assert all(p.startswith("[rank2]: ") for p in pieces[1:])
    v = _verdict(make_bundle, OPENPI_868)
    assert v.root_cause is not None and v.root_cause.category.startswith("app.exception")
    assert "FileNotFoundError" in v.root_cause.summary


def test_a_message_followed_by_later_records_on_its_line_reads_as_the_message(make_bundle: BundleMaker) -> None:
    pieces = flat_pieces(VLLM_14)
    assert pieces is not None and len(pieces) == 3 and pieces[0].startswith("HIP out of memory.")
    assert pieces[1].startswith("ERROR 07-04 14:53:23 [engine.py:458] Traceback")
    v = _verdict(make_bundle, VLLM_14)
    assert v.root_cause is not None and v.root_cause.category == "app.cuda_oom"


@pytest.mark.parametrize("line", [
    # (synthetic) one rank tag after words: a message that names a rank
    "[rank0]: RuntimeError: the collective timed out waiting for [rank3]: see its log",
    "watchdog caught collective operation timeout on [rank1]: WorkNCCL(SeqNum=1, OpType=BROADCAST)",
    # a run of spaces before no record's head (a table's padded cells; a stamp with no level word or date)
    "GPU 0        ERROR        the table's cell",
    "step 100        loss 0.25        lr 1e-4",
    # (synthetic) a sacct row whose padded columns hold bare stamps: no level word before them
    "12345        train        2024-01-01T10:00:00        2024-01-01T11:00:00        FAILED",
    # a line's own leading indentation before a record
    "        ERROR 07-04 14:53:23 [engine.py:458] Traceback (most recent call last):",
])
def test_near_miss_lines_of_one_record_are_not_cut(line: str) -> None:
    assert flat_pieces(line) is None
