"""The split's memo across the name tests it made (extract/prefix.py `_Cuts.guards`).

A syslog file's header names its host, and the split takes it only where it names a node of the allocation; a
bracketed or bare tag likewise (`[node-01] `, `worker-3: `, by the allocation or by its looks), and a storage daemon's
tag stays on its line. These tests read a word's value, not only where its digits stand, so the memo (keyed by the
line's digits made `0`) keeps with its entry each test's place and answer, and answers another line of the key from
it only where every test gives that line the same answer; otherwise the line is split afresh.

Lines: the wild corpus's kernel and syslog lines (each bundle's own, with its allocation) and the same lines with
their digits changed (the same key, other names); the adversarial pairs below, each a pair whose names alone make
the layers differ. Their shapes are rsyslog's file format (`<stamp> <host> <tag>[<pid>]: `, RFC 3164 without the
PRI; RSYSLOG_FileFormat's RFC 3339 stamp), enroot's helper printing its own name (NVIDIA/enroot
src/aufs2ovlfs.c, err(3)'s `progname: `), blobfuse2's syslog tag (Azure/azure-storage-fuse, its `syslog` logger:
`blobfuse2[pid]: `), and mlx5's command error (Linux drivers/net/ethernet/mellanox/mlx5/core/cmd.c
`mlx5_cmd_out_err`) behind the kernel's `[seconds.micros]` stamp.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from firstfault.extract import memo
from firstfault.extract import prefix as P
from firstfault.extract.prefix import PrefixLayer

WILD = Path(__file__).resolve().parents[1] / "wild"
# Batches held out of every pass (their logs are not read here).
_HELD_OUT = frozenset({"b95", "b99", "b101", "b102", *(f"b{n}" for n in range(103, 111))})
_KERNEL_PATH = re.compile(r"kern|syslog|messages|dmesg|journal", re.I)
_HEADER = re.compile(r"(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S*) \S+ \S+: ")
_NEXT_DIGIT = str.maketrans("0123456789", "1234567890")


def _corpus() -> list[tuple[list[str], list[str]]]:
    """(the allocation's nodes, the lines) of each usable wild bundle: its kernel and syslog files' lines, and
    every other file's lines that start with a syslog file's header."""
    out: list[tuple[list[str], list[str]]] = []
    for bundle in sorted(WILD.iterdir()):
        exp = bundle / "expected.yaml"
        if not exp.is_file():
            continue
        if (yaml.safe_load(exp.read_text()) or {}).get("batch") in _HELD_OUT:
            continue
        wl = yaml.safe_load((bundle / "workload.yaml").read_text()) or {}
        nodes = [str(n) for n in (wl.get("workload") or {}).get("nodes") or []]
        lines: list[str] = []
        for f in sorted(bundle.rglob("*")):
            if not f.is_file() or f.suffix in (".yaml", ".md"):
                continue
            text = f.read_text(errors="replace").splitlines()[:5000]
            kernel = bool(_KERNEL_PATH.search(str(f.relative_to(bundle))))
            lines += [ln for ln in text if kernel or _HEADER.match(ln)]
        if lines:
            out.append((nodes, lines))
    return out


def _memo_answers_as_split(layer: PrefixLayer, fresh: PrefixLayer, lines: list[str]) -> None:
    for line in lines:
        assert layer.split_settled(line) == fresh._split(line)[:2], line


def test_the_corpus_kernel_lines_memoised_are_their_own_splits() -> None:
    """Each bundle's kernel lines, then the same lines with every digit moved on by one (`node-01` -> `node-12`: the
    same key, mostly no node of the allocation), in one memo: each answer is the line's own split."""
    corpus = _corpus()
    assert sum(len(lines) for _, lines in corpus) > 800
    held = rejected = 0
    hold = PrefixLayer._guards_hold

    def counting(self: PrefixLayer, guards: tuple[tuple[int, int, int, bool], ...], line: str) -> bool:
        nonlocal held, rejected
        ok = hold(self, guards, line)
        held, rejected = held + ok, rejected + (not ok)
        return ok

    with memo.fastpath(True), pytest.MonkeyPatch.context() as mp:
        mp.setattr(PrefixLayer, "_guards_hold", counting)
        for nodes, lines in corpus:
            fresh = PrefixLayer(nodes)
            moved = [ln.translate(_NEXT_DIGIT) for ln in lines]
            _memo_answers_as_split(PrefixLayer(nodes), fresh, lines + moved)
            _memo_answers_as_split(PrefixLayer(nodes), fresh, moved + lines)
    # the memo was used across the tests, both ways (not bypassed)
    assert held > 100 and rejected > 10, (held, rejected)


# Pairs whose digits alone differ and whose layers differ by a name test: the allocation is node-01 and 10.0.0.7
# (NodeNames maps an address by its first label too, so the near misses differ there)
# (and a node named like a level word, warn1, and one in capitals, ERROR1).
_NODES = ["node-01", "10.0.0.7", "warn1", "ERROR1"]
_PAIRS = [
    # a syslog header's host: a node of the allocation, and one that is not
    ("Nov  2 10:03:07 node-01 kernel: [108838.074247] mlx5_core 0000:47:00.0: mlx5_cmd_out_err:838:(pid 268002): "
     "ACCESS_REG(0x805) op_mod(0x1) failed, status bad parameter(0x3), syndrome (0x15c356), err(-22)",
     "Nov  2 10:03:07 node-02 kernel: [108838.074247] mlx5_core 0000:47:00.0: mlx5_cmd_out_err:838:(pid 268002): "
     "ACCESS_REG(0x805) op_mod(0x1) failed, status bad parameter(0x3), syndrome (0x15c356), err(-22)"),
    ("2026-11-02T10:03:07.123456+00:00 node-01 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
     "2026-11-02T10:03:07.123456+00:00 node-02 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."),
    # a host that looks like a level word, and the time glued to the message (no space after the tag's colon)
    ("Nov  2 10:03:07 warn1 kernel:x warn1: y", "Nov  2 10:03:07 warn2 kernel:x warn1: y"),
    ("Nov  2 10:03:07 10.0.0.7 kernel: x", "Nov  2 10:03:07 11.0.0.7 kernel: x"),
    # a storage daemon's tag stays on its line; the same tag with another digit is no such daemon's
    ("Nov  2 10:03:07 node-01 blobfuse2[3214717]: LOG_ERR x", "Nov  2 10:03:07 node-01 blobfuse3[3214717]: LOG_ERR x"),
    # a bracketed tag: an address of the allocation, and the kernel's stamp (no node)
    ("[10.0.0.7] NCCL WARN x", "[11.0.0.7] NCCL WARN x"),
    ("[10.0.0.7] [ 12.345678] x", "[11.0.0.7] [ 12.345678] x"),
    # a bare tag: a node by name (in capitals, which its looks would refuse), and a program that prints its own name
    ("ERROR1: x", "ERROR2: x"),
    ("enroot-aufs2ovlfs: failed to set capabilities: Operation not permitted",
     "enroot-aufs3ovlfs: failed to set capabilities: Operation not permitted"),
]


@pytest.mark.parametrize(("one", "other"), _PAIRS)
def test_a_name_test_that_answers_otherwise_splits_the_line_afresh(one: str, other: str) -> None:
    fresh = PrefixLayer(_NODES)
    assert memo.digits_zeroed(one) == memo.digits_zeroed(other)
    assert fresh._split(one)[:2] != fresh._split(other)[:2]  # the near miss: one key, other layers
    assert fresh._split(one)[2] is not None and fresh._split(one)[2].guards  # kept, with its tests
    with memo.fastpath(True):
        for first, second in ((one, other), (other, one)):
            _memo_answers_as_split(PrefixLayer(_NODES), fresh, [first, second, first, second])


def test_without_the_tests_the_memo_would_answer_wrongly() -> None:
    """The guards are what keeps the memo exact: with every test taken to hold, some pair above is answered with the
    other line's layers."""
    fresh = PrefixLayer(_NODES)
    wrong = 0
    with memo.fastpath(True), pytest.MonkeyPatch.context() as mp:
        mp.setattr(PrefixLayer, "_guards_hold", lambda self, guards, line: True)
        for one, other in _PAIRS:
            layer = PrefixLayer(_NODES)
            layer.split_settled(one)
            wrong += layer.split_settled(other) != fresh._split(other)[:2]
    assert wrong == len(_PAIRS)


def test_a_kernel_log_of_one_node_is_split_once_a_key() -> None:
    """Shape b's kernel noise (bench/gen_bundle.py's kernel lines): the header's host and the stamp's digits vary,
    the key does not; one full split for the key, each line's own host and body."""
    calls = 0
    split = PrefixLayer._split

    def counting(self: PrefixLayer, line: str) -> tuple[P.Prefixed, bool, object]:
        nonlocal calls
        calls += 1
        return split(self, line)

    lines = [f"Nov  2 10:00:0{i} node-1{i} kernel: [10883{i}.07424{i}] mlx5_core 0000:47:00.0: mlx5_cmd_out_err:838:"
             f"(pid 26800{i}): ACCESS_REG(0x805) op_mod(0x1) failed" for i in range(8)]
    layer = PrefixLayer([f"node-1{i}" for i in range(8)])
    with memo.fastpath(True), pytest.MonkeyPatch.context() as mp:
        mp.setattr(PrefixLayer, "_split", counting)
        got = [layer.split_settled(ln)[0] for ln in lines]
    assert calls == 1
    assert [(p.host, p.header_host) for p in got] == [(f"node-1{i}", True) for i in range(8)]
    assert [p.body for p in got] == [ln[ln.index("[", 20):] for ln in lines]
