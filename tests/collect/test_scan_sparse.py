"""The sparse path's loops in C (_lines.c: may_stamp, lines_of, fold_hits) give what the Python beside them gives:
the lines TimeParser.parse reads a stamp on, the prefilter's hit lines and their literals, and the verdict bytes of
reading every line (issue 27: the per-line path in compiled code)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.collect import scan
from firstfault.extract import memo
from firstfault.timeparse import TimeParser
from tests import chatty, tier

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
TESTS = Path(__file__).parents[1]
CORPORA = [TESTS / "wild", TESTS / "lab" / "captured", TESTS / "scenarios"]
needs_c = pytest.mark.skipif(scan._fold_hits is None, reason="the C module (_lines) is not built")


# --- may_stamp: a superset of the lines TimeParser.parse finds a stamp on ---

def _tp() -> TimeParser:
    return TimeParser(UTC, datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 11, 3, tzinfo=UTC))


# Real stamp forms, one each (the sources in timeparse.py's comments), and near misses that hold none of the
# stamp forms' characters.
STAMPED = [
    "2026-11-02T10:03:07.123456789Z stderr F [rank2]: Traceback (most recent call last):",
    "Nov  2 10:00:07 node-001 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.",
    "[  123.456789] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.",
    "[rank86]:[E1102 11:10:27.399738418 ProcessGroupNCCL.cpp:632] [Rank 86] Watchdog caught collective",
    "[1708520807.064665] [node-01:1234:0]  ib_iface.c:735 UCX  ERROR ibv_create_cq(cqe=4096) failed",
    "libfabric:451707:1708520807::efa:cq:efa_rdm_cq_proc_err():120<warn> err: 5, message: Input/output error",
    "slurmstepd: error: *** STEP 4242.0 ON node-001 CANCELLED AT 2026-11-02T11:10:30 ***",
    "ERROR 07-23 19:34:51 [multiproc_executor.py:487] WorkerProc hit an exception.",
    # gcsfuse's JSON record (its time in seconds and nanoseconds: no time of day, no fraction's `.`)
    '{"timestamp":{"seconds":1793613000,"nanos":553918512},"severity":"ERROR","message":"fuse: read failed"}',
]
UNSTAMPED = [
    "node-011:32508:32508 [6] NCCL INFO Bootstrap : Using ib0:10.0.10.16<0>",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f3c2b0e7446 in libc10.so)",
    "terminate called after throwing an instance of 'c10::DistBackendError'",
    "libfabric 451707 1708520807 efa",  # libfabric's name, not its stamp's form
]


@needs_c
@pytest.mark.parametrize("line", STAMPED)
def test_a_line_with_a_stamp_may_hold_one(line: str) -> None:
    assert _tp().parse(line) is not None
    assert scan._may_stamp(line.encode())


@needs_c
@pytest.mark.parametrize("line", UNSTAMPED)
def test_a_line_with_none_of_the_forms_characters_holds_none(line: str) -> None:
    assert _tp().parse(line) is None
    assert not scan._may_stamp(line.encode())


@needs_c
def test_every_stamped_line_of_the_corpora_may_hold_a_stamp() -> None:
    """Real lines: every line of the corpora's logs that parse reads a stamp on passes may_stamp (and some do
    not pass: the filter is not everything)."""
    tp = _tp()
    stamped = skipped = 0
    for root in CORPORA:
        for path in sorted(root.rglob("*")):
            if not path.is_file() or path.suffix not in (".log", ".out", ".err", ".txt", ""):
                continue
            for raw in path.read_bytes().splitlines()[:2000]:
                text = raw.decode("utf-8", errors="replace")
                if tp.parse(text) is not None:
                    stamped += 1
                    assert scan._may_stamp(raw), (path, text)
                elif not scan._may_stamp(raw):
                    skipped += 1
    assert stamped > 1000 and skipped > 1000


_PIECES = ["2026-11-02", "T", " ", "10:03:07", "10:03", ".123", ",5", "Z", "+02:00", "Nov", " 2 ", "[", "]", "E1102",
           "libfabric:", "451707:", "1708520807::", "<12>", "[rank3]:", "a", "0", "1", ":", ".", "\t", "é", "٣"]


@needs_c
@given(st.lists(st.sampled_from(_PIECES), max_size=12))
@settings(max_examples=tier.examples(1500), deadline=None)
def test_no_line_may_stamp_refuses_has_a_stamp(pieces: list[str]) -> None:
    line = "".join(pieces)
    if not scan._may_stamp(line.encode()):
        assert _tp().parse(line) is None


# --- lines_of: the prefilter's matches grouped by line ---

@needs_c
@given(st.text(alphabet="ab\n", max_size=60), st.lists(st.tuples(st.integers(0, 5), st.integers(-2, 64)), max_size=20))
@settings(max_examples=tier.examples(1500), deadline=None)
def test_the_lines_of_the_matches_in_c_are_the_python_ones(text: str, matches: list[tuple[int, int]]) -> None:
    buf = text.encode()
    ordered = sorted(matches, key=lambda m: m[1])
    assert scan._lines_of_c(buf, ordered) == scan._lines_of_py(buf, ordered)


@needs_c
def test_a_match_that_ends_at_a_newline_belongs_to_that_line() -> None:
    buf = b"xid\nno\nxid xid\n"
    want = ([0, 7], [[0], [1, 2]])
    assert scan._lines_of_py(buf, [(0, 3), (1, 10), (2, 14)]) == want
    assert scan._lines_of_c(buf, [(0, 3), (1, 10), (2, 14)]) == want
    # near miss: one byte past the first line's newline is the next line's
    assert scan._lines_of_c(buf, [(0, 5)]) == ([4], [[0]])


# --- fold_hits: the fold's copies among the hit lines counted in C ---

BUILDERS: list[Callable[[Path], chatty.Chatty]] = [
    chatty.noise_then_cuda_error, chatty.xid_behind_its_own_shape, chatty.srun_labelled_ranks, chatty.count_of_zero,
    chatty.unstamped_burst, chatty.two_ranks_and_a_kernel, chatty.clock_steps_back, chatty.hex_ids_then_cuda_error,
    chatty.unstamped_warning_clock_steps_back,
]


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer()


@needs_c
@pytest.mark.parametrize("build", BUILDERS, ids=lambda b: b.__name__)
def test_copies_among_the_hits_counted_in_c_give_the_verdict_of_reading_every_line(
        build: Callable[[Path], chatty.Chatty], analyzer: Analyzer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Chatty files whose copies are among other lines (the prefilter's sparse loop): reading every line, the fold
    with its hit-line copies counted in C, and the fold without that loop give the same bytes."""
    case = build(tmp_path)
    with memo.fastpath(False):
        every = records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2)
    in_c = chatty.count_in(monkeypatch, scan, "_fold_hits", lambda out: out[3])
    with memo.fastpath(True):
        assert records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2) == every
    if build is not chatty.count_of_zero:  # a count of 0: every copy is read
        assert in_c[0] > 0, "no copy folded in C: the comparison would prove nothing"
    monkeypatch.setattr(scan, "_fold_hits", None)
    with memo.fastpath(True):
        assert records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2) == every


@needs_c
def test_the_walk_back_in_c_finds_a_libfabric_stamp_as_the_python_walk_does() -> None:
    """libfabric stamps its lines with a Unix time alone (no time of day, no fraction): the C walk back passed
    over such a line as one that cannot hold a stamp, and an unstamped line after it took an earlier time."""
    from firstfault.collect import stamps

    buf = (b"libfabric:451707:1708520807::efa:cq:efa_rdm_cq_proc_err():120<warn> err: 5, message: Input/output "
           b"error\nnode-01:1:1 [0] NCCL WARN NET/OFI Request completed with error\n")
    end = buf.index(b"node-01")
    tp = TimeParser(UTC, None, None)
    want = stamps.walk_back_py(buf, end, tp, False, -1, 400)
    assert want is not None and want.wall == datetime(2024, 2, 21, 13, 6, 47, tzinfo=UTC)
    assert stamps.walk_back(buf, end, tp, False, -1, 400) == want


_SPARSE_OPS = st.lists(st.tuples(st.sampled_from(["step", "back", "glog", "none"]), st.integers(0, 9)),
                       min_size=40, max_size=120)


def _sparse_fold_run(ops: list[tuple[str, int]]) -> int:
    """chatty.steps_and_warnings with 3 lines of no prefilter word before each warning, so that a chunk stays on
    the prefilter's sparse loop: DDP's unstamped warning is a timed variant (its copy counts only where its time,
    the stamp before it, is not earlier than the variant's floor). In chunks of 2 KiB, the verdict's bytes must be
    those of reading every line, with fold_hits and without. Returns how many copies fold_hits counted while the
    table held a timed variant."""
    import tempfile

    timed = [0]
    run = scan._fold_hits

    def counting(*args: object) -> object:
        out = run(*args)  # type: ignore[arg-type]
        table = args[5]
        assert isinstance(table, dict)
        if any(e[4] is not None for entries in table.values() for e in entries):
            timed[0] += out[3]
        return out

    with tempfile.TemporaryDirectory() as tmp:
        out = chatty.steps_and_warnings(Path(tmp), ops, filler=3)
        analyzer = Analyzer()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(scan, "CHUNK", 2048)
            with memo.fastpath(False):
                every = records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2)
            mp.setattr(scan, "_fold_hits", counting)
            with memo.fastpath(True):
                assert records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2) == every
            mp.setattr(scan, "_fold_hits", None)
            with memo.fastpath(True):
                assert records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2) == every
    return timed[0]


_SPARSE_OPS = st.lists(st.tuples(st.sampled_from(["step", "back", "glog", "none"]), st.integers(0, 9)),
                       min_size=40, max_size=120)


@needs_c
@given(_SPARSE_OPS)
@settings(max_examples=20, deadline=None)
def test_unstamped_warnings_among_other_lines_fold_as_reading_every_line_gives(ops: list[tuple[str, int]]) -> None:
    _sparse_fold_run(ops)


@needs_c
def test_unstamped_warnings_among_other_lines_are_counted_in_c() -> None:
    """Steps forward, one step back, and on: fold_hits counts timed copies (their floor read in C), and the
    copy after the step back, earlier than the variant's floor, is left to Python (the bytes are equal)."""
    ops = [("step", 9), ("step", 4), ("back", 0), ("step", 9), ("none", 1), ("glog", 2), ("step", 9)] * 4
    assert _sparse_fold_run(ops) > 0


# --- a candidate that holds a stamp form's characters and no stamp: told in C (_lines.stamp_local_us's -2) ---

_NO_STAMP_LINES = (
    # NCCL's `host:pid:tid` head (digits, colons: may_stamp says maybe) on a line that holds no stamp
    b"[rank3]:[I1102 10:22:33.123456 ProcessGroupNCCL.cpp:4115] [PG ID 0] init\n"
    b"node-126:42702:42702 [0] NCCL INFO Bootstrap : Using ib0:10.0.125.10<0>\n"
    b"node-126:42702:42702 [0] NCCL WARN NET/Socket : Connect to 10.0.125.11<45123> failed : Connection refused\n"
    # near misses: stamps of their own, behind PyTorch's rank prefix and at the start
    b"[rank3]:[E1102 10:22:40.5 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout\n"
    b"node-126:42702:42702 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.125.10<0>\n"
    b"2026-11-02 10:22:50,010 ERROR Traceback (most recent call last):\n"
    b"node-126:42702:42702 [0] NCCL WARN Connect to 10.0.125.11<45123> failed at 12:00:00.5\n"
)


# JSON records' stamps (TGI's `--json-output`, gcsfuse's seconds and nanoseconds: timeparse's JSON lead and
# _EPOCH_JSON), each before a candidate of no stamp that takes it: the C readings (may_stamp, and stamp_local_us's -2,
# which the walk back passes over) knew neither form, and the fast path gave the candidates no time or an older one.
_JSON_STAMPED = (
    b'{"timestamp":"2026-11-02T10:05:01.149443Z","level":"INFO","fields":{"message":"starting"}}\n'
    b"Traceback (most recent call last):\n"
    b'{"timestamp":{"seconds":1793613000,"nanos":5000},"severity":"INFO","message":"mounted"}\n'
    b"RuntimeError: NCCL error\n"
    b'x.log:{"timestamp":{"seconds":1793613060,"nanos":0},"severity":"INFO","message":"grep -H"}\n'
    b"RuntimeError: NCCL error again\n"
)


def _candidate_times(fast: bool, data: bytes = _NO_STAMP_LINES) -> list[tuple[int, datetime | None]]:
    from firstfault.collect.scan import LineScanner, all_line_extractors

    got: list[tuple[int, datetime | None]] = []
    with memo.fastpath(fast):
        sc = LineScanner("application", all_line_extractors())
        sc.scan_bytes(data, "rank-3.log", node="node-126", rank=3, srun_prefix=False,
                      tp=TimeParser(UTC, datetime(2026, 11, 2, tzinfo=UTC), datetime(2026, 11, 3, tzinfo=UTC)),
                      emit=lambda c: got.append((c.line, c.time)))
    return got


@pytest.mark.parametrize("one_call", [True, False])
def test_a_candidate_the_c_reading_finds_no_stamp_on_takes_the_time_before_it_as_parse_does(
        monkeypatch: pytest.MonkeyPatch, one_call: bool) -> None:
    """With a candidate's time in one C call (_lines.line_time_us) and without it (stamp_local_us, then the walk)."""
    told = [0]
    if not one_call:
        monkeypatch.setattr(scan, "_line_time_us", None)
    if scan._stamp_local_us is not None:
        run = scan._stamp_local_us

        def counting(line: bytes, clock: object) -> int:
            out = run(line, clock)
            told[0] += out == -2
            return out

        monkeypatch.setattr(scan, "_stamp_local_us", counting)
    if scan._line_time_us is not None:
        run_line = scan._line_time_us

        def counting_line(buf: bytes, s: int, e: int, stop: int, limit: int, clock: object) -> int:
            out = run_line(buf, s, e, stop, limit, clock)
            told[0] += out != -1
            return out

        monkeypatch.setattr(scan, "_line_time_us", counting_line)
    fast = _candidate_times(True)
    assert fast == _candidate_times(False)
    at = dict(fast)
    assert at[2] == at[3] == datetime(2026, 11, 2, 10, 22, 33, 123456, tzinfo=UTC)
    assert at[4] == at[5] == datetime(2026, 11, 2, 10, 22, 40, 500000, tzinfo=UTC)  # its own, then taken
    assert at[6] == datetime(2026, 11, 2, 10, 22, 50, 10000, tzinfo=UTC)
    assert at[7] == at[6]  # `12:00:00.5` mid-line is no stamp form
    if scan._stamp_local_us is not None:
        assert told[0] >= 3, "no line was told in C: the comparison would prove nothing"


def test_a_candidate_after_a_json_records_stamp_takes_it_in_c_as_in_python() -> None:
    fast = _candidate_times(True, _JSON_STAMPED)
    assert fast == _candidate_times(False, _JSON_STAMPED)
    at = dict(fast)
    assert at[2] == datetime(2026, 11, 2, 10, 5, 1, 149443, tzinfo=UTC)
    assert at[4] == datetime(2026, 11, 2, 9, 50, 0, 5, tzinfo=UTC)
    assert at[6] == at[4]  # near miss: behind grep -H's file name a record's stamp is read by neither (no lead ends
    # before a `{`), so the candidate after it keeps the stamp before
