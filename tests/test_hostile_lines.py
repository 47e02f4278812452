"""A line no extractor can read without failing costs that line, never the analysis.

The lines below hold numbers of 5,000 digits where the launcher prefixes, the watchdog, torchelastic, srun,
Open MPI and the NaN reader take a rank, a pid, an exit code or a timeout: Python's int() refuses more than
4,300 digits (a ValueError). Before the guard in Extraction.drafts the first of them stopped the analysis
of the whole bundle with a traceback.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer

SHOWCASE = Path(__file__).resolve().parent.parent / "examples" / "nvlink-xid149"
D = "9" * 5000
HOSTILE = [
    f"[rank{D}]: NCCL WARN NET/IB : Got completion with error 12",
    f"[1,{D}]<stderr>: RuntimeError: boom",
    f"[rank{D}]:[E ProcessGroupNCCL.cpp:1234] [Rank {D}] Watchdog caught collective operation timeout: "
    f"WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)={D}) ran for 600001 milliseconds before timing out.",
    f"srun: error: node-01: task {D}: Killed",
    f"torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -{D}) local_rank: {D} "
    f"(pid: {D}) of binary: /usr/bin/python",
    f"mpirun noticed that process rank {D} with PID {D} on node node-01 exited on signal 9 (Killed).",
]


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer()


def _verdict(analyzer: Analyzer, path: Path) -> dict[str, object]:
    return json.loads(records.dumps(analyzer.analyze_path(str(path))))  # type: ignore[no-any-return]


def _showcase_with(tmp_path: Path, lines: list[str]) -> tuple[Path, int]:
    """The showcase with `lines` after rank 0's log; the number of the first of them."""
    bundle = tmp_path / "b"
    shutil.copytree(SHOWCASE, bundle)
    log = bundle / "app" / "rank-0.log"
    first = len(log.read_text(encoding="utf-8").splitlines()) + 1
    with log.open("a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return bundle, first


def _unrecognized_places(v: dict[str, object]) -> set[tuple[str, int]]:
    return {(u["first"]["file"], u["first"]["line"]) for u in v["unrecognized"]}  # type: ignore[index,union-attr]


def test_hostile_numbers_cost_their_lines_only(analyzer: Analyzer, tmp_path: Path) -> None:
    bundle, first = _showcase_with(tmp_path, HOSTILE)
    clean = _verdict(analyzer, SHOWCASE)
    v = _verdict(analyzer, bundle)
    root, clean_root = v["root_cause"], clean["root_cause"]
    assert isinstance(root, dict) and isinstance(clean_root, dict)
    assert (v["attributed_domain"], root["category"]) == (clean["attributed_domain"], clean_root["category"])
    # The first hostile line (a rank no int() takes) is listed where to look, by file and line.
    assert ("app/rank-0.log", first) in _unrecognized_places(v)


def test_a_rank_of_nine_digits_is_still_read(analyzer: Analyzer, tmp_path: Path) -> None:
    """Near miss: a large but readable rank is peeled as a rank, not listed as unreadable."""
    bundle, first = _showcase_with(tmp_path, ["[rank123456789]: NCCL WARN NET/IB : Got completion with error 12"])
    assert ("app/rank-0.log", first) not in _unrecognized_places(_verdict(analyzer, bundle))
