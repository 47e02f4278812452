"""Readings remembered by a line's template (extract/memo.py `digit_blind`, `Spans`, the quiet templates): each rank's
copy of a watchdog line is searched once, and every copy reads its own numbers; what the per-stream state decides
(a repeat of one collective on one rank) is still decided line by line.
"""

from __future__ import annotations

import re
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault.collect.scan import Extraction, feed_lines
from firstfault.extract import codes, memo, nccl
from firstfault.extract.base import Candidate

# PyTorch's watchdog lines (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp), in the forms tests/extract/test_nccl.py
# and tests/extract/test_hang.py cite: NVIDIA/nccl#1730 (`Watchdog caught ...`, PyTorch 2.6), OpenRLHF/OpenRLHF#1126
# and huggingface/accelerate#3861 (the dump signal's status line). Rank, sequence numbers and sizes are ours.
_WATCHDOG = ("[rank{r}]:[E603 17:48:01.005271823 ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective "
             "operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn={n}, NumelOut={n}, "
             "Timeout(ms)=1800000) ran for {ran} milliseconds before timing out.")
_STATUS = ("[rank{r}]:[E901 05:20:03.118859045 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank {r}] "
           "Received a dump signal due to a collective timeout from {frm} and we will try our best to dump the "
           "debug info. Last enqueued NCCL work: {enq}, last completed NCCL work: {done}.")


@pytest.mark.parametrize("pattern", [
    r"SeqNum=(\d+)", r"OpType=(\w+)", r"[^\s(\]]+", r"(?<=a)\d(?!\w)", r"[0-9a-f]+", r"\bRank (\d+)\]", r"x.y",
    r"(?:a|b\d)+?", r"(?>\d+)z",
])
def test_digit_blind_patterns(pattern: str) -> None:
    assert memo.digit_blind(re.compile(pattern))


@pytest.mark.parametrize("pattern", [
    r"error 80[0-9]", r"[1-9]\d*", r"[^5]", r"(\d)\1", r"[2-4]", r"x7", r"(?P<a>\d)(?P=a)", r"(a)?(?(1)\d|b)",
])
def test_patterns_that_name_a_digit_are_not_digit_blind(pattern: str) -> None:
    assert not memo.digit_blind(re.compile(pattern))


_BLIND = [re.compile(p) for p in (r"SeqNum=(\d+)", r"\[PG ID (?P<id>\d+) PG GUID (?P<guid>[^\s(\]]+)",
                                  r"(\w+)=(\d*)\b", r"(?<!\d)[0-9a-f]{2,}x", r"\bRank (\d+)\]")]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789 SeqNum=[]PGIDRankx0af(", max_size=60))
def test_a_digit_blind_pattern_matches_a_text_where_it_matches_its_template(text: str) -> None:
    # The premise of every Spans memo: the same matches, at the same places, group by group.
    zeroed = memo.digits_zeroed(text)
    for p in _BLIND:
        assert memo.digit_blind(p)
        assert [m.regs for m in p.finditer(text)] == [m.regs for m in p.finditer(zeroed)]


def test_the_watchdogs_spans_are_digit_blind() -> None:
    # Were one of them not, nothing would be remembered (Spans.of searches afresh): this says the memo is in use.
    assert nccl._TIMEOUT_SPANS.blind() and nccl._STATUS_SPANS.blind()


def test_spans_with_a_pattern_that_names_a_digit_remember_nothing() -> None:
    spans = memo.Spans("test.spans.valued", (re.compile(r"code (7\d)"),))
    with memo.fastpath(True):
        assert not spans.blind()
        assert spans.of("code 71") == (((0, 7), (5, 7)),)
        assert spans.of("code 81") == (None,)  # the template of `code 71`, read afresh
    assert len(spans._memo) == 0


def _events(lines: list[tuple[str, int]]) -> list[tuple[str, int | None, dict[str, object]]]:
    cands = [Candidate("application", f"app/rank-{rank}.log", i + 1, "node-001", rank, None, text)
             for i, (text, rank) in enumerate(lines)]
    return [(e.kind, e.rank, dict(e.fields)) for e in feed_lines(cands, hosts=["node-001"])]


def _both(lines: list[tuple[str, int]]) -> list[tuple[str, int | None, dict[str, object]]]:
    with memo.fastpath(False):
        slow = _events(lines)
    with memo.fastpath(True):
        fast = _events(lines)
    assert fast == slow
    return fast


def test_each_ranks_watchdog_line_reads_its_own_numbers() -> None:
    lines = [(_WATCHDOG.format(r=r, seq=2398459 + r, n=8652160 + 3 * r, ran=1800068 + r), r) for r in range(100, 140)]
    got = _both(lines)
    assert [(k, rk) for k, rk, _ in got] == [("nccl.timeout", r) for r in range(100, 140)]
    for r, (_, _, f) in zip(range(100, 140), got, strict=True):
        assert (f["seq"], f["numel_in"], f["numel_out"], f["ran_ms"]) == (2398459 + r, 8652160 + 3 * r,
                                                                          8652160 + 3 * r, 1800068 + r)
        assert f["op"] == "ALLREDUCE" and f["timeout_ms"] == 1800000


def test_one_template_whose_stream_state_differs_is_read_by_its_state() -> None:
    # The same line twice on one rank is one collective timing out (the second a repeat: nothing); the same template
    # on another rank's stream (its own rank, seq) is its own event. Its template is remembered after the first.
    a = _WATCHDOG.format(r=7, seq=199, n=7098994688, ran=600012)
    b = _WATCHDOG.format(r=8, seq=199, n=7098994688, ran=600012)
    got = _both([(a, 7), (a, 7), (b, 8), (b, 8)])
    assert [(k, rk) for k, rk, _ in got] == [("nccl.timeout", 7), ("nccl.timeout", 8)]
    # ... and a repeat with another sequence number (another collective) on the same rank is an event again.
    c = _WATCHDOG.format(r=7, seq=200, n=7098994688, ran=600012)
    got = _both([(a, 7), (c, 7), (a, 7)])
    assert [f["seq"] for _, _, f in got] == [199, 200]


def test_status_lines_read_their_own_numbers_and_their_words_decide_the_reading() -> None:
    lines = [(_STATUS.format(r=r, frm=f"rank {r + 1}", enq=460631 + r, done=460630 + r), r) for r in range(10, 30)]
    # The near miss: the same line in the other words (`from this local rank`) is another template and reading.
    lines.append((_STATUS.format(r=31, frm="this local rank", enq=22, done=21), 31))
    got = _both(lines)
    assert [k for k, _, _ in got] == ["nccl.watchdog_status"] * 21
    for r, (_, _, f) in zip(range(10, 30), got[:-1], strict=True):
        assert f == {"dump_signal": True, "from_rank": r + 1, "last_enqueued": 460631 + r,
                     "last_completed": 460630 + r, "pg": "0", "pg_name": "default_pg"}
    assert got[-1][2] == {"dump_signal": True, "self_timeout": True, "last_enqueued": 22, "last_completed": 21,
                          "pg": "0", "pg_name": "default_pg"}


def test_a_quiet_template_of_classify_nccl_answers_each_rank_nothing() -> None:
    with memo.fastpath(True):
        for r in range(40):
            body = (f"[Rank {r}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of "
                    "CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.")
            assert nccl.classify_nccl(body) == {}
        m = next(x for x in memo._ALL if x.name == "nccl.classify.zeroed")
        assert m.hits >= 30, (m.hits, m.misses)  # one template per digit count of the rank
        # The near miss: a body of NCCL's words is classified, whatever quiet templates came before.
        got = nccl.classify_nccl("[Rank 3] NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)")
        assert got, got


# Each rank's NCCL INFO lines the error reader is handed for its INFO words (`NCCL INFO TUNER/Plugin: `, catalog/
# transport.yaml `nccl_info_lines`): NCCL's tuner plugin loader's own lines (NVIDIA/nccl src/misc/tuner.cc
# ncclLoadTunerPlugin, v2.19-2.21: `Plugin load returned %d : %s : when loading %s`, `Using internal tuner plugin.`),
# behind NCCL's INFO header with each rank's host, pid and device. None holds a word of nccl_error_literals.
_TUNER = ("node-{n}:{pid}:{tid} [{d}] NCCL INFO TUNER/Plugin: Plugin load returned 11 : libnccl-net.so: cannot open "
          "shared object file: No such file or directory : when loading libnccl-tuner.so")
_TUNER_INTERNAL = "node-{n}:{pid}:{tid} [{d}] NCCL INFO TUNER/Plugin: Using internal tuner plugin."


def _error_reads(lines: list[str]) -> list[tuple[list[str], bool]]:
    """NcclErrorExtractor's reading of each line on its own stream (each rank's file): kinds, and claimed."""
    out = []
    for r, line in enumerate(lines):
        ex = Extraction((nccl.NcclErrorExtractor(),))
        drafts, ctx = ex.drafts(Candidate("application", f"app/rank-{r}.log", 1, "node-001", r, None, line))
        out.append(([d.kind for d in drafts], ctx is not None and ctx.claimed))
    return out


def test_each_ranks_nccl_info_line_asks_the_error_words_once_a_template() -> None:
    lines = [t.format(n=800 + r, pid=34000 + r, tid=34100 + r, d=r % 8) for r in range(40)
             for t in (_TUNER, _TUNER_INTERNAL)]
    with memo.fastpath(False):
        slow = _error_reads(lines)
    m = next(x for x in memo._ALL if x.name == "nccl.classify.zeroed")
    with memo.fastpath(True):
        fast = _error_reads(lines)
        # two templates (a device of one digit, hosts and pids of three and five), each searched for the words once;
        # every other copy, and the second question of each line (_benign_warn's after _read_error's), answered
        assert len(m) == 2 and m.hits >= 2 * 40, (len(m), m.hits, m.misses)
    assert fast == slow
    assert all(kinds == [] for kinds, _ in fast)


@pytest.mark.parametrize("line", [
    # The near misses: the same header over a WARN with the words of a `benign` row (src/net.cc ncclNetPluginInit,
    # v2.18.3: `NET/Plugin : No plugin found (libnccl-net.so), using internal implementation`), and over a failure's
    # WARN (src/transport/net_ib.cc): read by their words after the quiet INFO templates of the same header.
    "node-812:34099:34159 [6] NCCL WARN NET/Plugin : No plugin found (libnccl-net.so), using internal implementation",
    "node-812:34099:34159 [6] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.3.61.17<53146> "
    "with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.3.61.16 remoteGids::ffff:10.3.61.17",
])
def test_a_line_with_the_words_is_read_after_quiet_templates_of_its_header(line: str) -> None:
    quiet = [_TUNER.format(n=812, pid=34099, tid=34159, d=6), _TUNER_INTERNAL.format(n=812, pid=34099, tid=34159, d=6)]
    with memo.fastpath(False):
        slow = _error_reads([line])
    with memo.fastpath(True):
        _error_reads(quiet)
        fast = _error_reads([line])
    assert fast == slow
    kinds, claimed = fast[0]
    assert kinds or claimed  # a failure's event, or the benign fallback understood


def test_a_word_with_a_digit_turns_the_quiet_templates_off(monkeypatch: pytest.MonkeyPatch) -> None:
    # Were a word of classify_nccl's to hold a digit, `error 0` (no word) and `error 7` (the word) would share a
    # template: no quiet template may then be remembered.
    words = (*nccl.nccl_error_literals(), "code 7x")
    monkeypatch.setattr(nccl, "nccl_error_literals", lambda: words)
    monkeypatch.setattr(nccl, "_words_digit_free", [])
    with memo.fastpath(True):
        assert nccl._classified("ncclInternalError: code 0x") == nccl._classify_nccl("ncclInternalError: code 0x")
        assert nccl._classified("nothing here: code 0x") == {}
        assert nccl._words_digit_free == [False]
        m = next(x for x in memo._ALL if x.name == "nccl.classify.zeroed")
        assert len(m) == 0


def test_digits_zeroed_answers_the_same_object_again_and_never_another_texts() -> None:
    a = "rank 12 of 34"
    b = "".join(["rank 56", " of 78"])
    assert memo.digits_zeroed(a) == "rank 00 of 00"
    assert memo.digits_zeroed(a) == "rank 00 of 00"
    assert memo.digits_zeroed(b) == "rank 00 of 00"
    assert memo.digits_zeroed("rank 9") == "rank 0"
    assert memo.digits_zeroed(a) == "rank 00 of 00"


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from("0123456789aZ :.[]-\t\x7f\x00é٣߂０²Ⅻ\ud800"), max_size=40))
def test_digits_zeroed_in_c_is_the_python_reading(text: str) -> None:
    """An ASCII text is zeroed in C (_lines.digits_zeroed); any other in Python: ASCII digits alone become `0` (a
    digit of another script, a superscript, a full-width digit and a lone surrogate stay), the length kept."""
    memo._LAST_ZEROED[0] = ("", "")
    got = memo.digits_zeroed(text)
    assert got == memo.digits_zeroed_py(text) and len(got) == len(text)
    assert got == "".join("0" if c in "0123456789" else c for c in text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(codes.CUDA_ANCHORS), st.text(max_size=12),
                          st.sampled_from(["s", "S", "_", "ΣΑ", "İ", " ", "cU", "Hip", "nVidia"])), max_size=6))
def test_the_anchor_keys_answer_as_every_anchors_find(parts: list[str]) -> None:
    text = "".join(parts)
    with mock.patch.object(codes, "_ANCHOR_TEST", False):  # every anchor looked for, one find after another
        every = codes._anchored(text)
    assert codes._anchored(text) == every


def test_every_cuda_anchor_holds_a_key() -> None:
    # The keys _anchored spells out: were an anchor added without one, the test would be off (and this fails).
    assert codes._ANCHOR_KEYS == ("cu", "hip", "nvidia") and codes._ANCHOR_TEST
    assert codes._anchored("RuntimeError: CUDA error: an illegal memory access was encountered")
    assert codes._anchored("HIP error: invalid device function")
    # the near misses: prose's plural, and a watchdog line with no anchor at all
    assert not codes._anchored("This may lead to incorrect model outputs or CUDA errors.")
    assert not codes._anchored("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=24311)")


def test_an_exact_repeat_of_a_body_with_digit_words_is_answered_by_its_own_memo() -> None:
    # `[Errno 28]` holds a word of exceptions._DIGIT_WORDS: each copy is read by its body (never its template), and a
    # repeat is answered from the body's memo before any search; the answers are fresh objects each time.
    from firstfault.extract import exceptions

    line = "OSError: [Errno 28] No space left on device: '/ckpt/step_100/model.pt'"
    with memo.fastpath(True):
        first = exceptions._alone(line)
        m = next(x for x in memo._ALL if x.name == "app.alone")
        hits = m.hits
        again = exceptions._alone(line)
        assert m.hits == hits + 1
        assert again == first and again[0] is not first[0]
        again[0].fields["errno"] = "changed by a caller"
        assert exceptions._alone(line) == first
        # the near miss: another errno of the same template is its own body, read afresh
        other = exceptions._alone(line.replace("28", "11"))
    with memo.fastpath(False):
        assert other == exceptions._alone(line.replace("28", "11"))
        assert first == exceptions._alone(line)


def test_a_noted_body_and_a_parsed_stamp_are_the_named_tuples_their_constructors_build() -> None:
    # note_settled and TimeParser.parse build their tuples with tuple.__new__ (no Python call): the same values, type
    # and fields as Prefixed(body) and Stamp(wall, uptime) (a field added to either would fail here).
    from datetime import UTC, datetime

    from firstfault.extract import prefix
    from firstfault.timeparse import Stamp, TimeParser

    body = "RuntimeError: boom"
    prefix.note_settled(body)
    noted = prefix.split_prefixes(body)
    assert type(noted) is prefix.Prefixed and noted == prefix.Prefixed(body) and noted._asdict() == prefix.Prefixed(
        body)._asdict()
    tp = TimeParser(UTC, datetime(2026, 11, 2, tzinfo=UTC), datetime(2026, 11, 3, tzinfo=UTC))
    for line in ("[rank3]:[E1102 11:10:27.399738418 ProcessGroupNCCL.cpp:632] x", "[ 1234.567890] NVRM: Xid 79"):
        st = tp.parse(line)
        assert type(st) is Stamp and st is not None and st == Stamp(st.wall, st.uptime)
        assert len(st) == len(Stamp._fields)


def test_the_young_generation_is_larger_only_while_lines_are_read() -> None:
    import gc
    import threading

    was = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with memo.fastpath(True):
            with memo.scan_gc():
                assert gc.get_threshold() == (memo.SCAN_GC_YOUNG, 10, 10)
                with memo.scan_gc():  # nested: one setting
                    assert gc.get_threshold()[0] == memo.SCAN_GC_YOUNG
                assert gc.get_threshold()[0] == memo.SCAN_GC_YOUNG
            assert gc.get_threshold() == (700, 10, 10)
            # Readings in threads that overlap: the last to finish puts back what the first found.
            started, release = threading.Barrier(3), threading.Event()

            def read() -> None:
                with memo.scan_gc():
                    started.wait()
                    release.wait()

            threads = [threading.Thread(target=read) for _ in range(2)]
            for t in threads:
                t.start()
            started.wait()
            assert gc.get_threshold()[0] == memo.SCAN_GC_YOUNG
            release.set()
            for t in threads:
                t.join()
            assert gc.get_threshold() == (700, 10, 10)
            # A threshold set meanwhile by someone else is theirs: left as it is.
            with memo.scan_gc():
                gc.set_threshold(5000, 10, 10)
            assert gc.get_threshold() == (5000, 10, 10)
            # The near misses: a larger threshold, or a collector turned off (0), is left alone.
            gc.set_threshold(50000, 10, 10)
            with memo.scan_gc():
                assert gc.get_threshold() == (50000, 10, 10)
            gc.set_threshold(0, 10, 10)
            with memo.scan_gc():
                assert gc.get_threshold() == (0, 10, 10)
        gc.set_threshold(700, 10, 10)
        with memo.fastpath(False), memo.scan_gc():  # FIRSTFAULT_FASTPATH=0: the collector as it was
            assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*was)


def test_an_analysis_reads_and_decides_with_the_larger_young_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc
    from pathlib import Path

    from firstfault.analysis import analyze

    bundle = next(p.parent for p in sorted((Path(__file__).parents[1] / "wild").glob("*/workload.yaml")))
    seen: list[int] = []
    finish = analyze.Analysis.finish

    def spy(self: analyze.Analysis, *a: object, **kw: object) -> object:
        seen.append(gc.get_threshold()[0])
        return finish(self, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(analyze.Analysis, "finish", spy)
    was = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with memo.fastpath(True):
            analyze.Analyzer().analyze_path(str(bundle))
        assert seen == [memo.SCAN_GC_YOUNG]
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*was)
