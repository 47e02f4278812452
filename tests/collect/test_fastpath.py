"""The hot path's memos and shortcuts (extract/memo.py) change no verdict: the test of record.

Every bundle of the wild corpus and of the lab captures is analysed with the
fast paths off, then on (memos shared across bundles, as a Service shares
them across requests), and the two verdicts must be the same bytes. Then the
memos' own contract: bounded, oldest forgotten first, and a line whose
meaning hangs on a number never answered from another line's memo.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.collect.scan import Extraction, all_line_extractors, feed_lines
from firstfault.extract import exceptions, memo, nccl
from firstfault.extract.base import Candidate
from firstfault.extract.prefix import Prefixed, PrefixLayer, split_prefixes
from tests import tier
from tests.corpus import SHARED_NOW, SHARED_ROOTS, SharedVerdicts, shared_bundles, shared_verdict


def _verdicts(analyzer: Analyzer, bundles: list[Path]) -> dict[str, str]:
    return {b.name: records.dumps(analyzer.analyze_path(str(b), now=SHARED_NOW), indent=2) for b in bundles}


def test_wild_and_lab_verdicts_are_the_same_bytes_with_the_fast_paths_on_and_off(
        shared_verdicts: SharedVerdicts) -> None:
    """The verdicts with the fast paths on are the session's shared ones (tests/corpus.py SharedVerdicts: one
    Analyzer, memos starting empty and shared across these bundles in this order, at this NOW). With the fast
    paths off no memo carries anything from one bundle to the next, so the quick tier reads a fifth of the bundles
    that way, spread evenly (tests/tier.py); the full tier every one."""
    bundles = shared_bundles(SHARED_ROOTS[:2])  # the wild corpus and the lab's captures, in the shared order
    assert len(bundles) >= 150, f"only {len(bundles)} bundles under {SHARED_ROOTS[:2]}"
    bundles = tier.sample(bundles, len(bundles) // tier.QUICK_SHARE)
    with memo.fastpath(False):
        slow = _verdicts(Analyzer(), bundles)
    fast = {b.name: records.dumps(shared_verdict(shared_verdicts, b), indent=2) for b in bundles}
    used = shared_verdicts.memo_hits
    differ = [name for name in slow if slow[name] != fast[name]]
    assert not differ, f"verdicts differ with the fast paths on: {differ}"
    # The memos were exercised, not bypassed: the corpus repeats NCCL and stand-alone lines.
    assert used["nccl.read"] > 0 and used["app.alone"] + used["app.alone.zeroed"] > 0, used


def test_memo_is_bounded_and_forgets_its_oldest_first() -> None:
    m: memo.Memo[int] = memo.Memo("test.bounded", size=3)
    calls: list[str] = []

    def compute(k: str) -> int:
        calls.append(k)
        return len(k)

    for k in ("a", "bb", "ccc", "a", "dddd"):
        assert m.get(k, lambda k=k: compute(k)) == len(k)  # type: ignore[misc]
    assert len(m) == 3
    assert calls == ["a", "bb", "ccc", "dddd"]  # the second "a" was a hit
    assert (m.hits, m.misses) == (1, 4)
    assert m.find("a") is None  # the oldest went when "dddd" came
    assert m.find("dddd") == 4
    m.put("e", 1)
    assert len(m) == 3 and m.find("bb") is None
    long = "x" * (memo.MAX_KEY + 1)  # answered, never kept
    assert m.get(long, lambda: compute(long)) == memo.MAX_KEY + 1
    m.put(long, 0)
    assert m.find(long) is None and len(m) == 3
    with pytest.raises(ValueError, match=r"test\.bad"):
        memo.Memo("test.bad", size=0)


def test_a_full_memo_forgets_a_share_of_its_oldest_at_once() -> None:
    # (one at a time, each look for the oldest walked over the empty slots the ones before had left: memo._evict)
    m: memo.Memo[int] = memo.Memo("test.share", size=64)
    for i in range(64):
        m.put(str(i), i + 1)
    assert len(m) == 64
    m.put("new", 100)
    gone = 1 + 64 // memo.EVICT_SHARE
    assert len(m) == 64 - gone + 1 and m.find("new") == 100
    assert [i for i in range(64) if m.find(str(i)) is None] == list(range(gone))  # the oldest, and only they
    for i in range(gone - 1):  # room again: nothing more is forgotten until the memo is full
        assert m.get(f"more{i}", lambda: 1) == 1
    assert len(m) == 64 and m.find(str(gone)) == gone + 1


def test_memo_shared_by_threads_stays_bounded() -> None:
    import sys
    import threading

    m: memo.Memo[int] = memo.Memo("test.threads", size=64)
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(3000):
                k = f"{t}-{i % 500}"
                assert m.get(k, lambda k=k: len(k)) == len(k)  # type: ignore[misc]
        except BaseException as exc:  # reported below
            errors.append(exc)

    was = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows
    try:
        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(was)
    assert not errors, errors
    assert len(m) <= 64 + 4


def test_digits_zeroed_keeps_length_and_non_ascii_text() -> None:
    assert memo.digits_zeroed("Xid 79, pid=4242 é٣") == "Xid 00, pid=0000 é٣"
    assert len(memo.digits_zeroed("shard-09494.tar")) == len("shard-09494.tar")


def _events(lines: list[str]) -> list[tuple[str, dict[str, object]]]:
    cands = [Candidate("application", "app/rank-0.log", i + 1, "node-001", 0, None, text)
             for i, text in enumerate(lines)]
    return [(e.kind, {k: v for k, v in e.fields.items()}) for e in feed_lines(cands, hosts=["node-001"])]


@pytest.mark.parametrize("fast", [True, False])
def test_a_number_that_decides_is_never_answered_from_another_lines_memo(fast: bool) -> None:
    # EAGAIN (11) is not a storage errno, ENOSPC (28) is: the same words, only the number differs. The quiet
    # line comes first, so a memo keyed without its digits would answer the second line "nothing". (Alone,
    # the quiet line is still a lone exception line, the workload's own: read as terminal, another kind.)
    quiet, loud = "OSError: [Errno 11] write failed", "OSError: [Errno 28] write failed"
    with memo.fastpath(fast):
        assert exceptions._alone(quiet) == []
        got = _events([quiet, loud, quiet, loud])
    assert [k for k, _ in got] == ["app.exception", "storage.error"] * 2, got
    assert [f["errno"] for _, f in got] == ["EAGAIN", "ENOSPC"] * 2


@pytest.mark.parametrize("fast", [True, False])
def test_cuda_error_codes_keep_their_own_class(fast: bool) -> None:
    lines = ["kernel launch: cudaGetLastError returned error (700)",
             "kernel launch: cudaGetLastError returned error (2)",
             "kernel launch: cudaGetLastError returned error (700)"]
    with memo.fastpath(fast):
        got = [k for k, _ in _events(lines)]
    assert got[1] == "app.cuda_oom" and got[0] == got[2] == "app.cuda_error", got


def test_lines_that_differ_only_in_numbers_share_one_quiet_answer() -> None:
    with memo.fastpath(True):
        for i in range(50):
            assert exceptions._alone(f"WARNING [dataloader] Error fetching batch {i} from shard-{i * 7:05d}.tar") == []
        m = next(x for x in memo._ALL if x.name == "app.alone.zeroed")
        assert m.misses <= 10 and m.hits >= 40, (m.hits, m.misses)  # one miss per digit count of i


def test_repeated_nccl_warn_counts_every_line_and_answers_are_not_shared() -> None:
    line = "node-001:41002:41106 [3] NCCL WARN NET/Socket : Call to connect returned Connection refused, retrying"
    with memo.fastpath(True):
        a = nccl.classify_nccl(line)
        a["nccl.remote_error"]["detail"] = "changed by a caller"
        assert nccl.classify_nccl(line)["nccl.remote_error"]["detail"] != "changed by a caller"
        fast = _events([line] * 200)
    with memo.fastpath(False):
        slow = _events([line] * 200)
    assert fast == slow
    assert len(fast) == 200 and {k for k, _ in fast} == {"nccl.remote_error"}


# Launcher layers, in any order and depth, in front of a body: whenever the scanner's split says the body is
# settled, an extractor's own split of that body must name no layer and change nothing.
_LAYERS = st.sampled_from([
    "2026-11-02T10:03:07.123456789Z stderr F ", "[1,2]<stderr>:", "[rank3]: ", "[default1]:", "worker-3: ",
    "node-001: ", "(RayTrainWorker pid=4331, ip=10.0.0.7) ", "(raylet) ", "[pod/trainer-0/pytorch] ",
    "trainer-1  | ", "> ", "Sun Apr 22 11:13:01 2018", "[node-001] ", " ", "rank7: ", "[e1]: ",
])
_BODIES = st.sampled_from([
    "NCCL WARN NET/Socket : Call to connect returned Connection refused",
    "node-001:41002:41106 [0] NCCL WARN x", "Traceback (most recent call last):", "  File \"a.py\", line 1",
    "[rank1]: RuntimeError: boom", "worker-9: ValueError: x", "(base) user@host$ ls",
    "[net_ib.cc:101](http://net_ib.cc:101/) x",
    "> quoted", "", "  indented", "ERROR: failed", "12: srun label", "[pod/a/b] tail",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_LAYERS, max_size=8), _BODIES)
def test_a_settled_body_needs_no_second_split(layers: list[str], body: str) -> None:
    layer = PrefixLayer(["node-001"])
    p, settled = layer.split_settled("".join(layers) + body)
    assert p == layer.split("".join(layers) + body)
    if settled:
        assert PrefixLayer().split(p.body) == Prefixed(p.body)


# The split's memo by a line's digits made `0` (PrefixLayer.split_settled): layers whose reading hangs on a value, not
# only on where digits stand (a name of the allocation, RFC 5424's version `1`, the reset `\x1b[0m` after Ray's tag,
# dmesg's local0-7, Open MPI's tag repeated in the body, Ray's dedup note, a link's text), among layers read by
# place alone, each with its digits drawn afresh: the memo's answer, whichever line of the key came first, is the
# split's own.
_VALUED = st.sampled_from([
    "[node-0#] ", "node-0#: ", "<1#># 2026-12-03T15:31:35Z node-0# kernel - - - ", "local#  :warn  : ",
    "(RayTrainWorker pid=4#, ip=10.0.0.#) \x1b[#m ", "[1,#]<stderr>:", "Nov  # 10:03:07 node-0# kernel: ",
    "[rank#]: ", "[default#]:", "(VllmWorker rank=# pid=4#) ", "[# TP#] ", "trainer-#  | ", "rank#: ",
    '{"level":"ERROR","fields":{"message":"[rank#]: x \\u003#"}} ',
    "2026-11-02T10:0#:07.1#Z stderr F ", "[3#m(RayWorkerWrapper pid=#) ", "[e#]: ", "worker-#: ",
])
_VALUED_BODIES = st.sampled_from([
    "x [1,#]<stderr>:y", "loss 0.# [repeated #x across cluster]", "[net_ib.cc:#](http://net_ib.cc:#/) x",
    "**RuntimeError: NCCL error # in: x**", "`CUDA error: out of memory #`", "- **x #**", "job-#: **x #**",
    "step/#: **x #**",
    "- 2026-11-02T10:0#:07Z x",
    "NCCL WARN Call to connect returned Connection refused #", "ValueError: #", "  0%|  | #/8 [00:0#<?, #.0it/s]",
])


@settings(max_examples=400, deadline=None)
@given(st.lists(_VALUED, max_size=4), _VALUED_BODIES, st.lists(st.sampled_from("0123456789"), min_size=24,
                                                                max_size=24))
def test_the_splits_memo_answers_every_line_of_a_key_as_its_own_split(layers: list[str], body: str,
                                                                        digits: list[str]) -> None:
    template = "".join(layers) + body
    lines = []
    for shift in range(3):
        it = iter(digits[shift:] + digits[:shift])
        lines.append("".join(next(it, "1") if ch == "#" else ch for ch in template))
    with memo.fastpath(True):
        layer = PrefixLayer(["node-01", "node-05"])
        for line in lines:
            assert layer.split_settled(line) == PrefixLayer(["node-01", "node-05"])._split(line)[:2]


def test_the_splits_memo_reads_each_lines_own_rank_and_never_another_lines_host() -> None:
    with memo.fastpath(True):
        layer = PrefixLayer(["node-01"])
        first, _ = layer.split_settled("[rank86]:[E1102 11:10:27.399 ProcessGroupNCCL.cpp:632] Watchdog caught")
        second, _ = layer.split_settled("[rank13]:[E1102 11:10:28.117 ProcessGroupNCCL.cpp:632] Watchdog caught")
        assert (first.rank, second.rank) == (86, 13) and second.body.startswith("[E1102 11:10:28.117")
        assert len(layer._cuts) == 1  # one key, read by place
        # Near miss: the same line from a node of the allocation and from one that is not: the key is one, the
        # layers are not.
        assert layer.split_settled("[node-01] NCCL WARN x")[0].host == "node-01"
        assert layer.split_settled("[node-02] NCCL WARN x")[0] == Prefixed("[node-02] NCCL WARN x")
        assert layer.split_settled("node-01: NCCL WARN x")[0].host == "node-01"
        assert layer.split_settled("rank-02: NCCL WARN x")[0].host == "rank-02"  # a host by its looks, not a memo


# Pairs of lines whose digits alone differ and whose layers do not, one pair for each test of the split that reads a
# value (PrefixLayer._split's `valued`).
_VALUED_PAIRS = [
    ("<13>1 2026-12-03T15:31:35Z node-05 kernel - - - x", "<13>2 2026-12-03T15:31:35Z node-05 kernel - - - x"),
    ("(RayTrainWorker pid=41, ip=10.0.0.7) \x1b[0m x", "(RayTrainWorker pid=41, ip=10.0.0.7) \x1b[1m x"),
    ("local3  :warn  : x", "local8  :warn  : x"),
    ("[1,2]<stderr>:a [1,2]<stderr>:b", "[1,2]<stderr>:a [1,3]<stderr>:b"),
    ("loss 1 [repeated 4x across cluster]\x1b[0m", "loss 1 [repeated 4x across cluster]\x1b[1m"),
    ("[a1](http://a1/) x", "[a1](http://a2/) x"),
    # a JSON record's message (its escapes read: not a place in the line), then the last pair: its same line twice
    ('{"level":"ERROR","message":"Shard 1 failed\\u0030"}', '{"level":"ERROR","message":"Shard 1 failed\\u0031"}'),
    ("  1%|#  | 1/8 [00:01<00:07, 1.00it/s]x", "  1%|#  | 1/8 [00:01<00:07, 1.00it/s]x"),
]


# ... and pairs whose layers differ by a name test alone (whether a word names a node of the allocation, looks like a
# host, is a storage daemon's syslog tag): the memo keeps their entry with the tests it made (_Cuts.guards) and answers
# a line of the key from it only where each test answers that line alike (tests/extract/test_split_guards.py).
_GUARDED_PAIRS = [
    ("Nov  2 10:03:07 node-01 kernel: x", "Nov  2 10:03:07 node-02 kernel: x"),
    ("[node-01] x", "[node-02] x"),
    ("node-01: x", "node-02: x"),
]


@pytest.mark.parametrize(("one", "other"), _VALUED_PAIRS + _GUARDED_PAIRS)
def test_the_splits_memo_reads_no_layer_whose_reading_hangs_on_a_value(one: str, other: str) -> None:
    fresh = PrefixLayer(["node-01"])
    assert memo.digits_zeroed(one) == memo.digits_zeroed(other)
    for line in (one, other):
        cuts = fresh._split(line)[2]
        assert (cuts is None) if (one, other) in _VALUED_PAIRS else (cuts is not None and cuts.guards)
    with memo.fastpath(True):
        for first, second in ((one, other), (other, one)):
            layer = PrefixLayer(["node-01"])
            assert layer.split_settled(first) == fresh._split(first)[:2]
            assert layer.split_settled(second) == fresh._split(second)[:2]


def test_the_valued_pairs_differ_in_their_layers() -> None:
    fresh = PrefixLayer(["node-01"])
    assert all(fresh._split(a)[:2] != fresh._split(b)[:2] for a, b in _VALUED_PAIRS[:-1] + _GUARDED_PAIRS)


def test_split_prefixes_answers_a_noted_body_as_a_fresh_split_would() -> None:
    with memo.fastpath(True):
        ex = Extraction(all_line_extractors(), hosts=["node-001"])
        text = "[rank2]: node-001:1:2 [0] NCCL WARN Call to connect returned Connection refused"
        _, ctx = ex.drafts(Candidate("application", "f", 1, "node-001", None, None, text))
        assert ctx is not None and ctx.rank == 2
        body = "node-001:1:2 [0] NCCL WARN Call to connect returned Connection refused"
        assert split_prefixes(body) == PrefixLayer().split(body) == Prefixed(body)


_ZONES = st.sampled_from(["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kolkata"])
_MON = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@st.composite
def _stamped(draw: st.DrawFn) -> str:
    y, mo, d = draw(st.integers(2025, 2027)), draw(st.integers(1, 12)), draw(st.integers(1, 31))
    h, mi, s = draw(st.integers(0, 23)), draw(st.integers(0, 59)), draw(st.integers(0, 60))
    frac = draw(st.sampled_from(["", ".5", ",123", ".123456", ".123456789"]))
    form = draw(st.integers(0, 2))
    if form == 2:
        # glog's yearless stamp, bare or behind PyTorch's rank prefix (`[rank3]:[E1102 11:10:27.399738418 f.cpp:632]`),
        # its month one or two digits and, as a near miss, one past 12 (no such month: the general path's None)
        mon = draw(st.sampled_from([f"{mo:02d}", str(mo), "13"]))
        head = draw(st.sampled_from(["", "[rank3]:[", "["]))
        return f"{head}{draw(st.sampled_from('IWEF'))}{mon}{d:02d} {h:02d}:{mi:02d}:{s:02d}{frac} 4242 f.cc:12] x"
    if form == 1:
        zone = draw(st.sampled_from(["", "", "Z", "+02:00", " UTC", "-0530"]))
        sep = draw(st.sampled_from("T "))
        return f"{y:04d}-{mo:02d}-{d:02d}{sep}{h:02d}:{mi:02d}:{s:02d}{frac}{zone} app: x"
    return f"{_MON[mo - 1]} {d:2d} {h:02d}:{mi:02d}:{s:02d}{frac} node-1 kernel: [ 12.5] x"


@settings(max_examples=300, deadline=None)
@given(_ZONES, st.sampled_from([(2026, 1, 1), (2026, 11, 2), (2027, 1, 3)]), st.lists(_stamped(), min_size=1,
                                                                                       max_size=12))
def test_stamps_read_by_their_minute_once_are_the_stamps_the_general_path_reads(
        zone: str, day: tuple[int, int, int], lines: list[str]) -> None:
    from zoneinfo import ZoneInfo

    from firstfault import timeparse

    start = datetime(*day, tzinfo=UTC)
    end = start.replace(hour=23)
    tz = ZoneInfo(zone)
    try:
        timeparse.set_fast(False)
        slow = [timeparse.TimeParser(tz, start, end).parse(x) for x in lines]
        timeparse.set_fast(True)
        tp = timeparse.TimeParser(tz, start, end)
        fast = [tp.parse(x) for x in lines + lines]  # the second round answers from the caches
    finally:
        timeparse.set_fast(memo.enabled())
    assert fast == slow + slow


_HEADS = ["2026-11-02 10:00:07", "2026-11-02T10:00:07", "2026-11-02 10:00:59", "2026-11-02 10:00:60",
          "Nov  2 10:00:07", "Nov 12 10:00:07", "Nov 2 10:00:07", "Nov  2 10:00:60", "Nov  2 10:00:\u0667\u0667",
          "Nov  2 10:00:\u00b2\u00b2"]
_TAILS = ["", " ", "\t", "x", ".", ". ", ".5 ", ",123 ", ".123456789 ", ".1234567891 ", "Z", " Z", "  Z", "+02:00",
          " -0530", "+02", " UTC", "  UTC", "UTCx", ".5Z", ",25 +01:00", "\u0663 "]


@settings(max_examples=300, deadline=None)
@given(_ZONES, st.lists(st.tuples(st.sampled_from(_HEADS), st.sampled_from(_TAILS)), min_size=2, max_size=16))
def test_a_second_read_once_answers_every_tail_as_the_general_path(zone: str, parts: list[tuple[str, str]]) -> None:
    """The per-second and per-minute caches are keyed by a stamp's head; the same head with another
    tail (a fraction, a zone, none, a character that ends no stamp) must still read as the general
    path reads that line."""
    from zoneinfo import ZoneInfo

    from firstfault import timeparse

    lines = [f"{head}{tail} host app: x" for head, tail in parts]
    start = datetime(2026, 11, 2, tzinfo=UTC)
    tz = ZoneInfo(zone)
    try:
        timeparse.set_fast(False)
        slow = [timeparse.TimeParser(tz, start, start.replace(hour=23)).parse(x) for x in lines]
        timeparse.set_fast(True)
        tp = timeparse.TimeParser(tz, start, start.replace(hour=23))
        fast = [tp.parse(x) for x in lines + lines]
    finally:
        timeparse.set_fast(memo.enabled())
    assert fast == slow + slow


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="0123456789ab :-x.\u0663\u00e9", max_size=40), st.randoms(use_true_random=False))
def test_unrecognized_key_is_shared_by_lines_that_differ_only_in_digit_values(line: str, rnd: object) -> None:
    """The caches of the unrecognized lines are keyed by the line with its ASCII digits zeroed: a
    line that differs only in which ASCII digits it holds shares the key, and one that differs in
    anything else (a digit run one longer, a non-ASCII digit, a letter) does not."""
    import random

    from firstfault.extract import unrecognized

    assert isinstance(rnd, random.Random)
    other = "".join(rnd.choice("0123456789") if ch.isascii() and ch.isdigit() else ch for ch in line)
    unrecognized._last = ("", "")  # the one-slot cache must not answer
    assert unrecognized.zeroed(line) == unrecognized.zeroed(other)
    assert unrecognized.zeroed(line + "7") != unrecognized.zeroed(line + "x")
    assert unrecognized.zeroed(line + "1") != unrecognized.zeroed(line + "11")
    assert unrecognized.zeroed(line + "\u0663") != unrecognized.zeroed(line + "3")


@pytest.mark.parametrize("known", [
    "NCCL WARN Last error:",
    "[rank3]:[E1102 10:00:07.123456 4242 ProcessGroupNCCL.cpp:1484] Exception raised from c10d at x.cpp:12",
    "Please check rank 12 logs for faulty rank",
    "Nov  2 10:00:08 node-001 kernel: [ 7106.030871] mlx5_core 0000:47:00.0: ACCESS_REG(0x805) failed",
])
def test_the_known_context_probe_answers_every_digit_variant_as_itself(known: str) -> None:
    """The probe remembers its answer by the zeroed key: each digit variant of a line gets the answer a
    fresh search of that very line gives, whichever variant came first."""
    from firstfault.extract import unrecognized
    from firstfault.extract.base import LineContext

    variants = [known, known.translate(str.maketrans("0123456789", "9876543210")),
                known.translate(str.maketrans("0123456789", "1111111111"))]
    probe = unrecognized.ErrorWords()
    with memo.fastpath(True):
        unrecognized._KNOWN_CACHE.clear()
        for v in variants:
            ctx = LineContext(source="application", file="f", lineno=1, node=None, rank=None, time=None, state={})
            list(probe.extract(v, ctx))
            assert ctx.claimed == (unrecognized.KNOWN_CONTEXT.search(v) is not None), v


# -- the walk back to a stamp: the C loop (_lines.prev_stamped) finds what parsing every line finds ----------------

_STAMPED = [
    "2026-11-02 10:00:07,123 ERROR x", "2026-11-02T10:00:07.5Z y", "Nov  2 10:00:07 node-1 kernel: z",
    "Nov 12 10:00:07.250000 h", "[Mon Nov  2 10:00:07 2026] w", "[Nov 02 2026 10:00:07] [ERROR] fm",
    "E1102 10:00:07.114770 12 f.cc:1] g", "[rank3]:[E1102 10:00:07.114770154 P.cpp:1] h", "[ 7106.030871] mlx5",
    "slurmstepd: error: *** STEP 1.0 ON n1 CANCELLED AT 2026-11-02T10:00:07 ***", "3: 2026-11-02 10:00:07 srun",
    "２０２６-11-02 10:00:07 fullwidth", "\u00a0Nov  2 10:00:07 nbsp", "Feb 30 10:00:07 no such day",
    "Nov  2 １０:００:０７ digits of another script", "[ ７106.０３０871] x", "2026-11-02 10:00:07",
]
_PLAIN = [
    "node-001:36081:36142 [7] NCCL INFO Channel 00/0 : 7[7] -> 8[0]", "frame #0: c10::Error + 0x96", "",
    "  what():  terminate", "loss 2.48 at 10:00", "ratio 1.2345 x", "*** not a banner", "caf\udcff",
]


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.sampled_from(_STAMPED + _PLAIN) | st.text(alphabet="0123456789:. *[]-TZabNov\u00e9",
                                                                   max_size=30), min_size=1, max_size=40),
       srun=st.booleans(), stop_at=st.integers(min_value=-1, max_value=40),
       end_at=st.integers(min_value=0, max_value=41), trailing=st.booleans())
def test_the_c_walk_back_finds_the_stamp_that_parsing_every_line_finds(
        lines: list[str], srun: bool, stop_at: int, end_at: int, trailing: bool) -> None:
    from firstfault.collect import scan
    from firstfault.timeparse import TimeParser

    if scan._prev_stamped is None:
        pytest.skip("firstfault._lines is not built")
    buf = "\n".join(lines).encode("utf-8", "surrogateescape") + (b"\n" if trailing else b"")
    starts = [0] + [i + 1 for i, c in enumerate(buf) if c == 0x0A and i + 1 < len(buf)]
    end = starts[end_at] if end_at < len(starts) else len(buf)
    stop = starts[stop_at] if 0 <= stop_at < len(starts) else -1
    window = (datetime(2026, 11, 2, 9, tzinfo=UTC), datetime(2026, 11, 2, 12, tzinfo=UTC))
    for limit in (scan.BACKWALK_LINES, 3):
        old = scan.BACKWALK_LINES
        scan.BACKWALK_LINES = limit
        try:
            want = scan.LineScanner._walk_back_py(buf, end, TimeParser(UTC, *window), srun, stop)
            got = scan.LineScanner._walk_back(buf, end, TimeParser(UTC, *window), srun, stop)
        finally:
            scan.BACKWALK_LINES = old
        assert got == want


@pytest.mark.parametrize("filler", ["node-001:1:2 [0] NCCL INFO x", "ratio 1.2345 x", "loss 2.48 at 10:00"])
def test_the_c_walk_back_stops_where_parsing_every_line_stops(filler: str) -> None:
    """The line limit and the previous candidate bound the walk in C as in Python, to the line."""
    from firstfault.collect import scan
    from firstfault.timeparse import TimeParser

    if scan._prev_stamped is None:
        pytest.skip("firstfault._lines is not built")
    window = (datetime(2026, 11, 2, 9, tzinfo=UTC), datetime(2026, 11, 2, 12, tzinfo=UTC))
    old = scan.BACKWALK_LINES
    scan.BACKWALK_LINES = 3
    try:
        for gap in range(7):
            buf = ("Nov  2 10:00:07 node-1 stamped\n" + (filler + "\n") * gap + "candidate\n").encode()
            end = buf.rindex(b"candidate")
            for stop in (-1, 0, 1):
                want = scan.LineScanner._walk_back_py(buf, end, TimeParser(UTC, *window), False, stop)
                got = scan.LineScanner._walk_back(buf, end, TimeParser(UTC, *window), False, stop)
                assert got == want, (gap, stop)
                assert (want is not None) == (gap < 3 and stop < 0), (gap, stop)
    finally:
        scan.BACKWALK_LINES = old


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.sampled_from(_STAMPED + _PLAIN) | st.text(alphabet="0123456789:. *[]-TZabNov\u00e9",
                                                                   max_size=30), min_size=1, max_size=30),
       stop_at=st.integers(min_value=-1, max_value=30), limit=st.sampled_from([400, 3, 1]))
def test_a_candidates_time_in_one_c_call_is_its_stamps_or_the_walk_backs_as_parsing_finds_them(
        lines: list[str], stop_at: int, limit: int) -> None:
    """_lines.line_time_us (scan.py's candidate, for a line without an srun label): where it answers a time (>= 0),
    that is the wall time TimeParser reads from the line itself, else from the nearest earlier line that has a stamp
    (back to the stop, `limit` lines at most: walk_back_py); where it answers none (-4), parsing finds no stamp on
    the line or back to the stop. Near misses: a stamp it leaves to Python (-1: an uptime alone, a stamp in
    another script's digits) is never answered in C."""
    from firstfault import _lines
    from firstfault.collect.stamps import c_clock, c_time, walk_back_py
    from firstfault.timeparse import TimeParser

    if getattr(_lines, "line_time_us", None) is None:
        pytest.skip("firstfault._lines is not built")
    window = (datetime(2026, 11, 2, 9, tzinfo=UTC), datetime(2026, 11, 2, 12, tzinfo=UTC))
    buf = "\n".join(lines).encode("utf-8", "surrogateescape") + b"\n"
    starts = [0] + [i + 1 for i, c in enumerate(buf) if c == 0x0A and i + 1 < len(buf)]
    with memo.fastpath(True):
        cclock = c_clock(TimeParser(UTC, *window))
    assert cclock is not None
    for k, s in enumerate(starts):
        e = buf.index(b"\n", s)
        stop = starts[stop_at] if 0 <= stop_at < k else -1
        got = _lines.line_time_us(buf, s, e, stop, limit, cclock[0])
        tp = TimeParser(UTC, *window)
        own = tp.parse(buf[s:e].decode("utf-8", errors="replace"))
        back = walk_back_py(buf, s, tp, False, stop, limit)
        if got >= 0:
            want = own.wall if own is not None else back.wall if back is not None else None
            assert want is not None and c_time(got, cclock) == want, (k, buf[s:e])
        elif got == -4:
            assert own is None and back is None, (k, buf[s:e])
        else:
            assert got == -1
        if own is not None and own.wall is None:  # an uptime alone: its boot time is the file's Clock's (Python)
            assert got == -1, buf[s:e]


def test_a_candidates_time_in_one_c_call_leaves_an_uptime_and_other_digits_to_python() -> None:
    """The near misses of line_time_us, each a line it must not answer: an uptime alone (its own, or the walk's
    line), a stamp of another script's digits; and the positive cases beside them (a stamp C reads, a walk back to
    one, none back to the stop)."""
    from firstfault import _lines
    from firstfault.collect.stamps import c_clock, c_time
    from firstfault.timeparse import TimeParser

    if getattr(_lines, "line_time_us", None) is None:
        pytest.skip("firstfault._lines is not built")
    window = (datetime(2026, 11, 2, 9, tzinfo=UTC), datetime(2026, 11, 2, 12, tzinfo=UTC))
    with memo.fastpath(True):
        cclock = c_clock(TimeParser(UTC, *window))
    assert cclock is not None
    ck = cclock[0]

    def at(buf: bytes, line: int, stop: int = -1) -> int:
        s = 0
        for _ in range(line):
            s = buf.index(b"\n", s) + 1
        return _lines.line_time_us(buf, s, buf.index(b"\n", s), stop, 400, ck)

    stamped = b"2026-11-02 10:00:07,123 ERROR x\nframe #0: c10::Error + 0x96\n"
    assert c_time(at(stamped, 0), cclock) == datetime(2026, 11, 2, 10, 0, 7, 123000, tzinfo=UTC)
    assert at(stamped, 1) == at(stamped, 0)  # the walk back's stamp
    assert at(stamped, 1, stop=0) == -4  # none after the stop
    assert at(b"frame #0: c10::Error + 0x96\n", 0) == -4
    assert at(b"[ 7106.030871] mlx5 x\n", 0) == -1  # an uptime alone
    assert at(b"[ 7106.030871] mlx5 x\nframe #0: c10::Error + 0x96\n", 1) == -1
    assert at("Nov  2 １０:００:０７ digits of another script\n".encode(), 0) == -1
