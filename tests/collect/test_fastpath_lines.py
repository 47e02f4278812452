"""Stop 66's per-line memos (issue 27: a rank log's every candidate line, 16k times over) change no verdict.

- extract/nccl.py `_ib_ports`: NCCL's `NET/IB : Using [0]mlx5_0:1/IB ...` device list read to its ports once per
  list text (every rank of a job prints its node's list);
- collect/stamps.py `c_time`: a stamp's time built once per instant (every rank reads the same few stamps);
- extract/prefix.py `note_settled`: the settled body's answer built when an extractor asks for it, not per line.

Each is the same bytes with the fast paths on and off, on rank logs built to use it; and a line whose template
(its digits zeroed) is another's but whose answer differs is answered as itself, never from the other's entry.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.collect import stamps
from firstfault.collect.scan import feed_store
from firstfault.extract import memo, nccl
from firstfault.extract.base import Candidate
from firstfault.extract.memo import digits_zeroed
from firstfault.extract.prefix import Prefixed, PrefixLayer, note_settled, split_prefixes

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cuda-oom"
NOW = datetime(2026, 11, 3, tzinfo=UTC)

# Two device lists of one template (the same text with its digits zeroed) and different ports, and a third list.
LIST_A = "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [RO]; OOB ib0:10.0.0.1<0>"
LIST_B = "NET/IB : Using [0]mlx5_4:1/IB [1]mlx5_5:2/IB [2]mlx5_6:1/IB [3]mlx5_7:1/IB [RO]; OOB ib0:10.0.0.1<0>"
LIST_C = "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_bond_0+mlx5_bond_1:1/RoCE [RO]; OOB eth0:10.0.0.9<0>"


def _line(host: str, gpu: int, listed: str) -> str:
    return f"{host}:{21411 + gpu}:{21543 + gpu} [{gpu}] NCCL INFO {listed}"


def _ports(lines: list[str]) -> list[str]:
    store = feed_store([Candidate("application", f"app/rank-{i}.log", 5, "node-01", i, None, text)
                        for i, text in enumerate(lines)], hosts=["node-01", "node-02"])
    return [p[0] for p in store.ports_used]  # (model.PortsUsed: ports, program, node, host, rank)


def test_lists_of_one_template_keep_their_own_ports() -> None:
    """The memo's key is the list's own text: two lists whose digits alone differ (a near miss for a template key)
    each give their own ports, read first or second, with the fast paths on or off."""
    assert digits_zeroed(LIST_A) == digits_zeroed(LIST_B) and LIST_A != LIST_B
    want_a = "mlx5_0:1 mlx5_1:1 mlx5_2:1 mlx5_3:1"
    want_b = "mlx5_4:1 mlx5_5:2 mlx5_6:1 mlx5_7:1"
    want_c = "mlx5_0:1 mlx5_bond_0:1 mlx5_bond_1:1"
    for on in (True, False):
        with memo.fastpath(on):
            for order in ((LIST_A, LIST_B, LIST_C), (LIST_B, LIST_A, LIST_C), (LIST_C, LIST_B, LIST_A)):
                got = _ports([_line("node-01", g, listed) for g, listed in enumerate(order)])
                want = {LIST_A: want_a, LIST_B: want_b, LIST_C: want_c}
                assert got == [want[listed] for listed in order]
            # each rank's copy of one list: one fact (its node's), the same ports, fast or not
            assert _ports([_line("node-01", g, LIST_A) for g in range(8)]) == [want_a]


def test_the_ports_memo_is_bounded_and_off_with_the_fast_paths() -> None:
    with memo.fastpath(True):
        for i in range(memo.DEFAULT_SIZE + 10):
            nccl._ib_ports(f"NET/IB : Using [0]dev{i}:1/IB")
        assert len(nccl._PORTS) <= memo.DEFAULT_SIZE
        assert nccl._ib_ports("NET/IB : Using [0]devX:1/IB [1]devY:2/IB") == "devX:1 devY:2"
    with memo.fastpath(False):
        assert len(nccl._PORTS) == 0
        assert nccl._ib_ports("NET/IB : Using [0]devX:1/IB [1]devY:2/IB") == "devX:1 devY:2"
        assert len(nccl._PORTS) == 0  # nothing remembered with the fast paths off


def test_a_stamps_time_is_its_own_instants_however_often_asked() -> None:
    clock = ((2026, 0, 0), stamps.DAY_US)
    base = datetime(1, 1, 1, tzinfo=UTC)
    for us in (stamps.DAY_US + 1, 63_900_000_000_000_000, 63_900_000_000_000_001, 63_900_000_000_000_000):
        assert stamps.c_time(us, clock) == base + timedelta(microseconds=us - stamps.DAY_US)
    # another clock (another zone's offset) puts one count at another instant
    other = ((2026, 0, 0), stamps.DAY_US + 3_600_000_000)
    assert stamps.c_time(63_900_000_000_000_000, other) == stamps.c_time(63_900_000_000_000_000, clock) - timedelta(
        hours=1)
    for i in range(stamps._TIMES_MAX + 5):
        stamps.c_time(stamps.DAY_US + i, clock)
    assert len(stamps._TIMES) <= stamps._TIMES_MAX


def test_a_noted_body_is_answered_as_a_fresh_split_and_no_other_string_is() -> None:
    body = "node-001:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB"
    note_settled(body)
    assert split_prefixes(body) == PrefixLayer().split(body) == Prefixed(body)
    # an equal string that is not the noted object, and a string with a layer, are split
    layered = "[rank3]: " + body
    note_settled(body)
    assert split_prefixes(layered) == PrefixLayer().split(layered) and split_prefixes(layered).rank == 3
    copy = "".join(list(body))
    assert copy is not body and split_prefixes(copy) == Prefixed(body)


def _ranks_bundle(root: Path) -> Path:
    """The cuda-oom example with more ranks: each rank log's NCCL set-up (its node's device list, a near-miss list
    on one node) and its watchdog's stamped lines, as a many-rank job prints them."""
    shutil.copytree(EXAMPLE, root)
    app = root / "app"
    template = (app / "rank-1.log").read_text().splitlines()
    for rank in range(2, 12):
        node, gpu = ("node-01", rank) if rank < 8 else ("node-02", rank - 8)
        lines = []
        for text in template:
            if "NET/IB : Using [" in text:
                text = _line(node, gpu, LIST_B if node == "node-02" else LIST_A)
            lines.append(text.replace("[rank1]", f"[rank{rank}]").replace("Rank 1]", f"Rank {rank}]"))
        (app / f"rank-{rank}.log").write_text("\n".join(lines) + "\n")
    return root


@pytest.mark.parametrize("workers", [1, 2])
def test_rank_logs_read_the_same_with_the_fast_paths_on_and_off(tmp_path: Path, workers: int) -> None:
    bundle = _ranks_bundle(tmp_path / "b")
    with memo.fastpath(False):
        slow = records.dumps(Analyzer().analyze_path(str(bundle), now=NOW, workers=workers), indent=2)
    with memo.fastpath(True):
        fast = records.dumps(Analyzer().analyze_path(str(bundle), now=NOW, workers=workers), indent=2)
        again = records.dumps(Analyzer().analyze_path(str(bundle), now=NOW, workers=workers), indent=2)
    assert slow == fast == again
