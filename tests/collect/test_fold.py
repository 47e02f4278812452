"""The fold (collect/fold.py) counts a chatty file's copies of a line instead of reading them: the verdict must
be the bytes that reading every line gives (the fast paths off), on bundles built to break each of its rules,
and the line that matters must be found among the copies (tests/chatty.py says where it is)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault import records
from firstfault.analysis.analyze import Analyzer, analyze_request
from firstfault.bundle import load_bundle
from firstfault.collect import fold, scan
from firstfault.collect.wire import request_from_bundle
from firstfault.extract import memo
from tests import chatty, tier

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
BUILDERS: list[Callable[[Path], chatty.Chatty]] = [
    chatty.noise_then_cuda_error, chatty.xid_behind_its_own_shape, chatty.srun_labelled_ranks, chatty.count_of_zero,
    chatty.unstamped_burst, chatty.two_ranks_and_a_kernel, chatty.what_after_terminate, chatty.not_utf8,
    chatty.repeated_traceback, chatty.clock_steps_back, chatty.hex_ids_then_cuda_error,
    chatty.unstamped_warning_clock_steps_back, chatty.kernel_noise_on_every_node, chatty.many_hosts_in_one_syslog,
    chatty.many_ranks_in_one_mpirun_output, chatty.pci_noise_in_one_syslog,
    chatty.mpirun_output_whose_stamps_stop_reading, chatty.hosts_folding_across_reads,
    chatty.aer_records_on_every_node, chatty.xid_pids_on_every_node,
]


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer()


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many copies the fold counts (a list of one, filled as each file ends)."""
    n = [0]
    end_file = fold.LineFold.end_file

    def counting(self: fold.LineFold) -> None:
        n[0] += sum(v.counted for sh in self._shapes.values() for v in sh.variants)
        end_file(self)

    monkeypatch.setattr(fold.LineFold, "end_file", counting)
    return n


def _read_both_ways(analyzer: Analyzer, out: Path, lines: list[str],
                    monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[int]]:
    """node-01's kernel log of `lines` under `out`, read line by line and folded: the folded verdict (the same bytes,
    asserted) and how many copies the fold counted."""
    kern = out / "nodes" / "node-01" / "kern.log"
    kern.parent.mkdir(parents=True)
    kern.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with memo.fastpath(False):
        every = records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2)
    counted = _counted(monkeypatch)
    with memo.fastpath(True):
        folded = records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2)
    assert folded == every
    return folded, counted


@pytest.mark.parametrize("build", BUILDERS, ids=lambda b: b.__name__)
def test_a_chatty_bundle_gets_the_verdict_of_reading_every_line(
        build: Callable[[Path], chatty.Chatty], analyzer: Analyzer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    case = build(tmp_path)
    with memo.fastpath(False):
        every = records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2)
    counted = _counted(monkeypatch)
    with memo.fastpath(True):
        folded = records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2)
    assert folded == every
    v = json.loads(folded)
    if build in (chatty.count_of_zero, chatty.not_utf8):
        assert counted[0] == 0  # a count of 0 decides the template, each bad line is counted: every copy is read
    else:
        least = int(case.expect.get("min_folded", 500))  # type: ignore[call-overload]
        assert counted[0] >= least, "the fold did not engage: the test would prove nothing"
    evidence = {(e["file"], e["line"]): e for e in v["evidence"]}
    if "evidence_line" in case.expect:
        assert case.expect["evidence_line"] in evidence, sorted(evidence)
    e = evidence.get(case.expect.get("evidence_line"))  # type: ignore[arg-type]
    if "rank" in case.expect:
        assert e is not None and e["rank"] == case.expect["rank"]
    if "evidence_time" in case.expect:
        assert e is not None and e["time"] == case.expect["evidence_time"]
    if "xid79" in case.expect:
        assert e is not None and ": 79," in e["text"] and e["event"] == "gpu.xid"
    if "bad_utf8" in case.expect:
        assert any(f"{case.expect['bad_utf8']} matching line(s) not valid UTF-8" in e["message"] for e in v["errors"])
    if "unrecognized_line" in case.expect:
        firsts = {(u["first"]["file"], u["first"]["line"]) for u in v["unrecognized"]}
        assert case.expect["unrecognized_line"] in firsts


def test_the_service_reading_every_line_agrees_with_the_fold(analyzer: Analyzer, tmp_path: Path) -> None:
    """A request's candidates are never folded (the Service reads each): same verdict as the embedded fold."""
    case = chatty.two_ranks_and_a_kernel(tmp_path)
    embedded = analyzer.analyze_path(str(case.path), now=NOW)
    served = analyze_request(analyzer, request_from_bundle(analyzer, load_bundle(str(case.path))), now=NOW)
    assert records.dumps(served, indent=2) == records.dumps(embedded, indent=2)


def test_copies_below_the_cap_are_read_and_kept(analyzer: Analyzer, tmp_path: Path) -> None:
    """The store keeps the first 32 events of a signature with their own lines: the fold starts after them."""
    case = chatty.unstamped_burst(tmp_path)
    analysis = analyzer.start(load_bundle(str(case.path)).context)
    from firstfault.collect.evidence import collect_bundle

    collect_bundle(analyzer, load_bundle(str(case.path)), analysis)
    retries = [ev for ev in analysis.store.events if ev.kind == "nccl.remote_error"]
    kept_by_device: dict[str | None, list[int]] = {}
    for ev in retries:
        kept_by_device.setdefault(ev.device, []).append(ev.evidence.line or 0)
    assert all(len(lines) == analysis.store.cap for lines in kept_by_device.values()), kept_by_device
    # Every retry line is counted once: the kept events and the repeats on the last kept one of each device.
    last = {d: max(lines) for d, lines in kept_by_device.items()}
    counted = sum(int(ev.fields.get("repeat") or 1) - 1 for ev in retries if ev.evidence.line == last[ev.device])
    assert len(retries) + counted == 1500


def test_past_its_bounds_the_fold_reads_lines_and_stays_right(
        analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Shapes, variants and bytes kept per file are bounded; a line past the bounds is read, as with no fold."""
    case = chatty.two_ranks_and_a_kernel(tmp_path)
    with memo.fastpath(False):
        every = records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2)
    kept: list[int] = []
    end_file = fold.LineFold.end_file

    def watching(self: fold.LineFold) -> None:
        kept.append(len(self._shapes))
        assert all(len(sh.variants) <= fold.MAX_VARIANTS for sh in self._shapes.values())
        end_file(self)

    monkeypatch.setattr(fold.LineFold, "end_file", watching)
    for shapes, variants, size in ((1, 16, 8 << 20), (4, 2, 8 << 20), (4096, 16, 300)):
        monkeypatch.setattr(fold, "MAX_SHAPES", shapes)
        monkeypatch.setattr(fold, "MAX_VARIANTS", variants)
        monkeypatch.setattr(fold, "MAX_BYTES", size)
        kept.clear()
        assert records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2) == every
        assert kept and max(kept) <= shapes


def test_two_outcomes_a_line_could_both_have_make_the_shape_read_line_by_line() -> None:
    """Variants whose copies could be one line (their digits' ranges meet at every byte) leave the outcome of
    such a line untold by its bytes: the shape is no longer folded. Variants told apart by a digit that never
    varied in either (an NCCL line's GPU) stay, and a copy is held by the one whose ranges take its digits."""
    def variant(line: bytes, *others: bytes) -> fold._Variant:
        reading = fold.Reading(((), False, None), None, True)
        v = fold._Variant(int.from_bytes(line), None, reading, 1, len(line), 0, True)
        for o in others:
            v.widen(int.from_bytes(o))
        return v

    gpus = fold._Shape()
    gpus.variants = [variant(b"[1] retry 10", b"[1] retry 42"), variant(b"[2] retry 10", b"[2] retry 57")]
    gpus.reindex()
    assert gpus.stable
    assert [v.holds(int.from_bytes(b"[2] retry 17")) for v in gpus.variants] == [False, True]
    assert [v.holds(int.from_bytes(b"[2] retry 19")) for v in gpus.variants] == [False, False]  # 9 > 7
    crossed = fold._Shape()
    # The first let its GPU digit range over 1-2, the second its last digit over 2-7: `[2] retry 12` could be
    # a copy of either.
    crossed.variants = [variant(b"[1] retry 12", b"[2] retry 12"), variant(b"[2] retry 17", b"[2] retry 12")]
    crossed.reindex()
    assert not crossed.stable and crossed.index == {}


TESTS = Path(__file__).parents[1]
CORPORA = [TESTS / "wild", TESTS / "lab" / "captured", TESTS / "scenarios"]


REAL = [("application", s) for s in range(6)] + [("kernel", s) for s in range(4)]
# Kernel seed 0 draws a ctime-stamped line whose changed digits make its year 0026 or 9026, outside the years the
# analysis holds, before an unstamped candidate that folds. A walk back counts no stamp it reads as none
# (stamps.walk_back), so reading every line and the fold (which walks back from no counted copy) agree: see
# test_a_walk_back_over_a_stamp_outside_the_years_counts_none_on_either_path below.


# The quick tier draws half the seeds (both kinds, seed 0 of each among them: tests/tier.py); the full tier all.
@pytest.mark.parametrize(("kind", "seed", "hex_ids"),
                         [(k, s, h) for h in (False, True) for k, s in tier.sample(REAL, len(REAL) // 2)])
def test_chatty_files_made_of_real_lines_get_the_verdict_of_reading_every_line(
        kind: str, seed: int, hex_ids: bool, analyzer: Analyzer, tmp_path: Path) -> None:
    """Lines from the public threads and the lab's runs, a dozen of them repeated hundreds of times with their
    digits (and, `hex_ids`, the hex digits of their hex ids: PCI and GPU ids, addresses, hashes) changed at
    random, among others read once: the fold must change nothing."""
    case = chatty.from_corpus(tmp_path, CORPORA, kind, seed, hex_ids=hex_ids)
    with memo.fastpath(False):
        every = records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2)
    with memo.fastpath(True):
        folded = records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2)
    assert folded == every


# A bracketed relative stamp (`dmesg -x`'s `[  +0.000006]`: no time of its own) before a real AER line, from the
# sample of real lines that found the divergence (tests/wild, a pcieport AER thread's `dmesg` paste).
_AER_RELATIVE = ("[  +0.000006] pcieport 0000:00:03.0: PCIe Bus Error: severity=Corrected, type=Data Link Layer, "
                 "(Transmitter ID)")


@pytest.mark.parametrize("own", [False, True])
def test_a_walk_back_over_a_stamp_outside_the_years_counts_none_on_either_path(
        own: bool, analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel log's ctime-stamped line of year 9026 (outside the years the analysis holds), then hundreds of copies
    of an unstamped AER line. Reading every line walks back from the first copy over the 9026 line; the fold counts
    the later copies without walking back from them: a walk back counts no stamp it reads as none
    (stamps.walk_back), so neither path names it in `errors`. Near miss (`own`): the year-9026 stamp on a copy of
    the AER line itself, a candidate read on both paths (a copy whose own stamp reads as none is not folded), is
    counted once on each."""
    out = tmp_path / f"walk-over-year-9026-{own}"
    chatty._workload(out, "- {kind: kernel, path: 'nodes/{node}/kern.log'}\n")
    odd = "[Mon Nov  2 10:00:05 9026] " + (_AER_RELATIVE.split("] ", 1)[1] if own
                                            else "IPv6: ADDRCONF(NETDEV_CHANGE): ib0: link becomes ready")
    lines = ["[Mon Nov  2 10:00:01 2026] IPv6: ADDRCONF(NETDEV_UP): ib0: link is not ready"]
    for i in range(600):
        if i == 300:
            lines.append(odd)
        lines.append(_AER_RELATIVE)
    folded, counted = _read_both_ways(analyzer, out, lines, monkeypatch)
    assert counted[0] > 100, "the fold did not engage: the test would prove nothing"
    outside = [e["message"] for e in json.loads(folded)["errors"] if "outside the years" in e["message"]]
    assert outside == (["1 time stamp(s) outside the years 1000-8999 read as none (such a line takes the time of "
                        "the nearest earlier stamped line)"] if own else [])


# The memory cgroup's line of an OOM report (mm/memcontrol.c, mem_cgroup_print_oom_meminfo: "kmem: usage %llukB, limit
# %llukB, failcnt %lu"), behind dmesg -T's stamp; and a line that holds no prefilter word (a candidate of none).
def _kmem(day: str, year: str, usage: int) -> str:
    return f"[Mon Nov {day} 10:00:05 {year}] kmem: usage {usage}kB, limit 9007199254740988kB, failcnt 0"


def _quiet(day: str, year: str) -> str:
    return f"[Mon Nov {day} 10:00:05 {year}] IPv6: ADDRCONF(NETDEV_CHANGE): ib0: link becomes ready"


@pytest.mark.parametrize("no_date_on", ["copy", "quiet"])
def test_stamps_outside_the_years_count_the_same_whether_copies_are_read_or_counted(
        no_date_on: str, analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`N time stamp(s) outside the years` counts the stamps of the lines read for evidence (those that hold a
    prefilter word, each copy the fold counts among them), on every path; a quiet line's is never counted (its stamp
    is read by walks back alone, which count none). A folded copy's stamp is not read: its digits lie within those of
    the copies read to its outcome. A copy whose stamp names no such date (the 0th of November) reads as none
    uncounted, and widened the year's digits to 0: a later copy of year 0026 lay within them, and was counted by the
    fold unread (no stamp outside the years) where reading every line counted one. Such a read makes the fold read
    every later copy of the shape (TimeParser.unread, LineFold.unstable). Near miss (`quiet`): the same stamp of no
    such date on a quiet line changes nothing of the kmem lines' fold, and the copy of year 0026, outside the digits
    read, is read on both paths."""
    out = tmp_path / f"kmem-{no_date_on}"
    chatty._workload(out, "- {kind: kernel, path: 'nodes/{node}/kern.log'}\n")
    lines = [_quiet(" 2", "2026")]
    for i in range(400):
        if i % 40 == 7:
            lines.append(_quiet(" 2", "9026"))  # never counted: no path reads it as a line
        if i == 100:
            lines.append(_kmem(" 0", "0026", 1000) if no_date_on == "copy" else _quiet(" 0", "0026"))
        lines.append(_kmem(" 2", "0026", 1000 + i) if i == 380 else _kmem(" 2", "2026", 1000 + i))
    folded, counted = _read_both_ways(analyzer, out, lines, monkeypatch)
    assert [(e["file"], e["message"]) for e in json.loads(folded)["errors"] if "outside the years" in e["message"]] == [
        ("nodes/node-01/kern.log", "1 time stamp(s) outside the years 1000-8999 read as none (such a line takes the "
                                   "time of the nearest earlier stamped line)")]
    # The copies after the one of no such date are read ("copy"); else up to the copy of year 0026 they are counted.
    assert 50 < counted[0] < 100 if no_date_on == "copy" else counted[0] > 300, counted[0]


def _ghes(uptime: float, seq: int, msg: str) -> str:
    return f"[{uptime:12.6f}] {{{seq}}}[Hardware Error]: {msg}"


@pytest.mark.parametrize("record", [True, False])
def test_a_firmware_records_lines_are_read_while_a_record_is_open(
        record: bool, analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found when this stop's batches joined the corpus (kernel seed 3 drew it): a GHES record's field line
    (`{468}[Hardware Error]:   version: 3.0`) is the record's when a severity line of its number came within 60
    lines before (extract/host.py MceExtractor._ghes), and an unrecognized line otherwise; the fold counted it for
    the copies of other numbers (the same shape, digits within theirs) that no open record claimed, so the folded
    verdict listed one unrecognized line more than reading every line. A field line read while a record is open is
    keyed on its number (LineContext.keyed): it and its variant's later copies are read. Near miss: with no record
    in the file the same field lines fold."""
    out = tmp_path / f"ghes-{record}"
    chatty._workload(out, "- {kind: kernel, path: 'nodes/{node}/kern.log'}\n")
    rng = random.Random(7)

    def version() -> str:
        seq, major, minor = rng.randrange(100, 999), rng.randrange(10), rng.randrange(10)
        return _ghes(rng.uniform(100, 999), seq, f"  version: {major}.{minor}")

    lines = [version() for _ in range(300)]
    if record:
        lines += [_ghes(500.0, 468, "Hardware error from APEI Generic Hardware Error Source: 0"),
                  _ghes(500.1, 468, "event severity: corrected"),
                  _ghes(500.2, 468, " Error 0, type: corrected"),
                  _ghes(500.3, 468, "  section_type: PCIe error")]
    lines += [_ghes(501.0, 944, "  version: 7.0"), _ghes(501.1, 468, "  version: 3.0"),
              _ghes(501.2, 202, "  version: 0.3")]
    lines += [version() for _ in range(100)]
    folded, counted = _read_both_ways(analyzer, out, lines, monkeypatch)  # (the same bytes: asserted there)
    groups = {u["template"]: u["count"] for u in json.loads(folded)["unrecognized"]}
    assert groups["[<UPTIME>] {<N>}[Hardware Error]: version: <N>"] == (402 if record else 403), groups
    # the copies before the record fold either way; with none, the ones after it too
    assert counted[0] > (200 if record else 350), counted[0]


# A divergence found when b22 and b23 joined the corpus (the sample of real lines changed; the same at the session's
# base 4ae7bda): a line stamped with an uptime alone takes its wall time from the last line with both stamps that was
# read (collect/stamps.py Clock), and the fold does not read the copies it counts, so where a file mixes uptime-only
# lines with copies of syslog-and-uptime lines whose boot offsets disagree (here the generator's changed digits: days
# apart; in a real log, the syslog stamp's lost fraction of a second) the two paths can take different boot times.
# (Fixed since: the clock's boot offset is taken the same way on both paths.)
@pytest.mark.parametrize(("kind", "seed", "hex_ids"),
                         [(k, s, h) for k, s in REAL if k == "kernel" for h in (False, True)])
def test_nodes_whose_logs_repeat_real_lines_get_the_verdict_of_reading_every_line(
        kind: str, seed: int, hex_ids: bool, analyzer: Analyzer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Three nodes' kernel logs with the same chatty real lines, their digits changed anew in each: what node-01's
    fold learned is taught to the others (Lessons), and the verdict is still that of reading every line.
    The lines are drawn from the corpora, which grow: a draw may hold no line the fold learns (every one an event's
    line read afresh), which would prove nothing, so the draw is made again (up to four more times, each one's
    verdicts compared as well) until one teaches a lesson."""
    taught = [0]
    teach = fold.Lessons.teach

    def teaching(self: fold.Lessons, key: bytes, v: Any, x: int) -> None:
        teach(self, key, v, x)
        taught[0] += v.reads >= fold.WARM

    monkeypatch.setattr(fold.Lessons, "teach", teaching)
    for draw in range(5):
        case = chatty.from_corpus(tmp_path / str(draw), CORPORA, kind, seed + 1000 * draw, hex_ids=hex_ids, nodes=3)
        with memo.fastpath(False):
            every = records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2)
        taught[0] = 0  # the lessons of the folded reading only
        with memo.fastpath(True):
            folded = records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2)
        assert folded == every, f"draw {draw}"
        if taught[0] > 0:
            break
    assert taught[0] > 0, "no lesson was taught in five draws: the test would prove nothing"


def test_the_fold_engages_on_most_chatty_files_made_of_real_lines(
        analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The files above would test nothing if none of their copies folded (lines of records, unstamped
    unrecognized lines and the like are read)."""
    counted = _counted(monkeypatch)
    engaged = 0
    for kind, seed in REAL:
        before = counted[0]
        analyzer.analyze_path(str(chatty.from_corpus(tmp_path, CORPORA, kind, seed).path), now=NOW)
        engaged += counted[0] > before
    assert engaged >= len(REAL) // 2, engaged


SMALL_CHUNKS = [(b, None) for b in BUILDERS] + [(None, r) for r in REAL[::3]]


@pytest.mark.parametrize(("build", "real"), SMALL_CHUNKS,
                         ids=lambda x: getattr(x, "__name__", None) or (x and "{}-{}".format(*x)))
def test_the_dense_loop_in_c_and_in_python_gets_the_verdict_of_reading_every_line(
        build: Callable[[Path], chatty.Chatty] | None, real: tuple[str, int] | None, analyzer: Analyzer,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In chunks of 4 KiB, a chunk after one whose lines mostly folded is read line by line (the dense loop), its
    copies of ready variants counted in C (_lines.fold_run) when the module is built, then without it (a timed
    copy's time read in C, `_lines.copy_time`, then in Python): each gives the same bytes as reading every line,
    and the C loop does count copies."""
    case = build(tmp_path) if build is not None else chatty.from_corpus(tmp_path, CORPORA, *real)  # type: ignore[misc]
    monkeypatch.setattr(scan, "CHUNK", 4096)
    with memo.fastpath(False):
        every = records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2)
    if scan._fold_run is not None:
        in_c = chatty.count_in(monkeypatch, scan, "_fold_run", lambda out: out[2])
        with memo.fastpath(True):
            assert records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2) == every
        # Every copy of these is read (a count of 0, bad UTF-8, a traceback's lines); the corpus-made files' copies
        # have random digits, so their chunks seldom fold enough to be read line by line: equality is their test.
        # The central syslog's 49 hosts (the mpirun output's 40 ranks) take more than a 4 KiB chunk between two lines
        # of one host (rank), and the table is emptied at each chunk's end (its held copy read): C never holds the
        # next line's variant there.
        if build is not None and build not in (chatty.count_of_zero, chatty.not_utf8, chatty.repeated_traceback,
                                               chatty.many_hosts_in_one_syslog,
                                               chatty.many_ranks_in_one_mpirun_output):
            assert in_c[0] > 0, "no copy folded in C: the comparison would prove nothing"
    monkeypatch.setattr(scan, "_fold_run", None)
    timed = scan._copy_time
    if timed is not None:
        read_in_c = chatty.count_in(monkeypatch, scan, "_copy_time", lambda t: int(t >= 0))
    with memo.fastpath(True):
        assert records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2) == every
    if timed is not None and build is chatty.unstamped_warning_clock_steps_back:
        assert read_in_c[0] > 0, "no timed copy's time read in C: the comparison would prove nothing"
    monkeypatch.setattr(scan, "_copy_time", None)  # and read in Python
    with memo.fastpath(True):
        assert records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2) == every


@given(st.lists(st.text(alphabet="0123456789", min_size=6, max_size=6), min_size=1, max_size=8),
       st.text(alphabet="0123456789", min_size=6, max_size=6))
@settings(max_examples=300, deadline=None)
def test_digit_ranges_taken_in_and_checked_a_whole_line_at_once_are_the_byte_by_byte_ones(
        copies: list[str], probe: str) -> None:
    """widen() and holds() work on a line as one integer (a subtraction with 0x80 in every byte): the same as
    taking each byte's least and greatest value, and checking each byte against them."""
    def line(digits: str) -> bytes:
        return f"E{digits[:2]} x:{digits[2:]} ok".encode()

    reading = fold.Reading(((), False, None), None, True)
    first = line(copies[0])
    v = fold._Variant(int.from_bytes(first), None, reading, 1, len(first), 0, True)
    for c in copies[1:]:
        v.widen(int.from_bytes(line(c)))
    lines = [line(c) for c in copies]
    lo = bytes(min(col) for col in zip(*lines, strict=True))
    hi = bytes(max(col) for col in zip(*lines, strict=True))
    assert v.lo.to_bytes(len(first)) == lo and v.hi.to_bytes(len(first)) == hi
    assert v.fixed.to_bytes(len(first)) == bytes(0xFF if a == b else 0 for a, b in zip(lo, hi, strict=True))
    p = line(probe)
    assert v.holds(int.from_bytes(p)) == all(a <= b <= c for a, b, c in zip(lo, p, hi, strict=True))


@given(st.lists(st.sampled_from([b"deadbeef", b"DEADBEEF0", b"-", b"d609577e-baff-4330-9c9f-2ba1fa227274", b"0x",
                                 b"0x1fA", b"feed", b"cafe", b"x", b"_", b" ", b":", b"9c9f", b"g", b"\xc3\xa9",
                                 b"12345678", b"Z", b"0000", b"3b", b"(", b"[", b".0", b"\t", b")",
                                 b"0000:3b:00.0", b"0000:ab:cd"]), max_size=12))
@settings(max_examples=tier.examples(500), deadline=None)
def test_the_shape_in_c_is_the_shape_in_python(parts: list[bytes]) -> None:
    """memo.line_shape (in C where built) and memo.line_shape_py mask the same bytes: the fold's C loop looks up
    the shapes Python keyed."""
    raw = b"".join(parts)
    assert memo.line_shape(raw) == memo.line_shape_py(raw)
    assert len(memo.line_shape(raw)) == len(raw)


def test_copies_of_a_line_get_one_shape_object_and_other_lines_their_own() -> None:
    """In C, line_shape goes through fold_shape's memo: two lines whose digits alone differ get the one shape object
    (the key LineFold.table_add and quiet_add store is then the object fold_run's lookups get back, found by
    identity). Near misses: a line one byte apart at any place (the memo's hash lanes and tail), a line over
    FOLD_MAX_LINE and a line with a byte over 0x7f get their own shape, each memo.line_shape_py's."""
    lines = pytest.importorskip("firstfault._lines")
    a, b = b"Nov  2 10:00:07 node-003 kernel: [185387.305352] AER: 12", b"Nov  2 11:59:58 node-117 kernel: [9.1] AER: 3"
    assert lines.line_shape(a) is lines.line_shape(a.replace(b"12", b"97"))
    assert lines.line_shape(b) == memo.line_shape_py(b)
    for n in range(0, 80):
        raw = bytes(b"abcdefgh:xyz"[i % 12] for i in range(n))
        assert lines.line_shape(raw) == memo.line_shape_py(raw)
        for k in range(n):  # one letter changed: another shape, not the memo's answer for `raw`
            other = raw[:k] + b"Q" + raw[k + 1:]
            assert lines.line_shape(other) == memo.line_shape_py(other) != memo.line_shape_py(raw)
    long = b"x1 " * 700  # 2,100 bytes: shaped afresh each time
    assert lines.line_shape(long) == memo.line_shape_py(long) and lines.line_shape(long) is not lines.line_shape(long)
    utf8 = "é 12 ".encode()
    assert lines.line_shape(utf8) == memo.line_shape_py(utf8) and lines.line_shape(utf8) is not lines.line_shape(utf8)


def test_a_shape_masks_digits_and_hex_ids_and_nothing_else() -> None:
    """Digits, 8 or more hex digits standing as a token, `0x...` and UUIDs are masked; a word of hex letters
    shorter than 8 (`cafe`), a token with another letter (`deadbeefg`), and letters beside a hex id are not."""
    for shape in (memo.line_shape, memo.line_shape_py):
        assert shape(b"/datasets/d609577e-baff-4330-9c9f-2ba1fa227274/shard-28763.tar") == \
            b"/datasets/00000000-0000-0000-0000-000000000000/shard-00000.tar"
        assert shape(b"comm 0x7f3ac0 rank 3 busId 1b000 id deadbeef12") == \
            b"comm 0x000000 rank 0 busId 0b000 id 0000000000"
        # Near misses: too short, another letter in the token, a UUID with a group too long, 0x with no hex digit.
        line = b"cafe face deadbeefg 0xg1 dead_beef d609577e-baff-4330-9c9f-2ba1fa2272745"
        assert shape(line) == b"cafe face deadbeefg 0xg0 dead_beef 00000000-baff-0000-0c0f-0000000000000"
        assert shape("é".encode() + b"deadbeef") == "é".encode() + b"deadbeef"  # a UTF-8 letter joins the token


def test_a_pci_address_is_a_hex_id_where_the_templates_mask_it_whole() -> None:
    """A PCI address (`0000:3b:00.0`, with or without its function) after a space, a tab, `(` or `[` and before a
    space, `:` after a function, `)` and the like has its hex letters masked: a NIC's warning on every bus is one
    shape (issue 27's shape i). Near misses keep theirs: after `:` (`PCI:0000:3b:00`, the Xid line's), inside a
    longer token, MAC-like (a fourth `:` group), a function that is not one digit."""
    for shape in (memo.line_shape, memo.line_shape_py):
        assert shape(b"kernel: mlx5_core 0000:b4:0e.1: mlx5_cmd_out_err") == \
            b"kernel: mlx0_core 0000:00:00.0: mlx0_cmd_out_err"
        assert shape(b"igb 0000:d5:00.1 eno2: Reset adapter") == b"igb 0000:00:00.0 eno0: Reset adapter"
        assert shape(b"(0000:ab:cd)") == b"(0000:00:00)"
        assert shape(b"[0000:ab:cd.7]\tx") == b"[0000:00:00.0]\tx"
        assert shape(b"0000:ab:cd") == b"0000:00:00"
        assert shape(b"NVRM: Xid (PCI:0000:3b:00): 79") == b"NVRM: Xid (PCI:0000:0b:00): 00"
        assert shape(b"x 0000:3b:00:11 y") == b"x 0000:0b:00:00 y"
        assert shape(b"x a0000:3b:00.0 y") == b"x a0000:0b:00.0 y"
        assert shape(b"x 0000:3b:00.12 y") == b"x 0000:0b:00.00 y"
        assert shape(b"x 0000:3b:00.0.1") == b"x 0000:0b:00.0.0"
        assert shape(b"/sys/0000:3b:00.0 x") == b"/sys/0000:0b:00.0 x"


def test_lines_whose_pci_addresses_differ_in_their_letters_share_their_template() -> None:
    """The unrecognized groups key on the shape (unrecognized.zeroed) and give a key its first line's template: the
    addresses the shape masks are those the template's <HEX> takes whole, so each line's own template is the
    key's (the groups are the ones reading each line by its own template gives)."""
    from firstfault.extract.unrecognized import Unrecognized, zeroed

    bodies = ["mlx5_core 0000:b4:00.0: mlx5_cmd_out_err:838:(pid 28064): ACCESS_REG(0x805) failed",
              "mlx5_core 0000:3e:00.0: mlx5_cmd_out_err:838:(pid 28064): ACCESS_REG(0x805) failed",
              "mlx5_core 0000:12:00.0: mlx5_cmd_out_err:838:(pid 28064): ACCESS_REG(0x805) failed",
              "pcieport 0000:fe:01.0: AER: Corrected error received: 0000:fe:00.0",
              "pcieport 0000:0c:01.0: AER: Corrected error received: 0000:0c:00.0",
              "igb 0000:d5:00.1 eno2: Reset adapter (0000:d5:00.1)"]
    assert len({zeroed(b) for b in bodies}) == 3
    shared = Unrecognized(["node-01"])
    for b in bodies:
        assert shared.template(b) == Unrecognized(["node-01"]).template(b), b  # the key's first line's = its own


def test_hits_of_literals_a_hex_id_may_hold_are_not_taken_for_the_shapes() -> None:
    """A literal whose word is hex digits (`dead`) could lie in a masked hex id: lines of one shape may differ in
    it, so the fold's dense loop (which does not scan) must not count such copies; `error` never lies in one."""
    assert memo.hex_words([b"dead", b"error", b"Xid 79", b"0x1f", b"NCCL WARN", b"ECC error"]) == \
        tuple(sorted({b"0000", b"Xi0 00", b"0x00", b"ECC error".translate(memo.ALL_HEX_ZERO)}))


@pytest.mark.parametrize("word, taken", [
    (b"dead", True), (b"0x", True), (b"0x1f:", True), (b"ab:cd", True), (b"gpu Dec ", True), (b"a", True),
    (b"x0dead", False), (b"0xg", False), (b"_dead", False), (b"dead_", False), (b"\xffdead", False),
    (b"dead\x80", False), (b"gpu", False), (b"0x_", False), (b"", False), (b" :-. ", False),
])
def test_a_literal_is_taken_where_a_whole_run_of_its_word_bytes_is_hex(word: bytes, taken: bool) -> None:
    """hex_words takes a literal where a run of word bytes (ASCII word characters and bytes over 0x7f), the whole
    run, is hex digits or `0x` and hex digits; a run that only starts or ends so (`x0dead`, `dead_`, a UTF-8 byte
    beside it) is not one a hex id could hold."""
    assert (memo.hex_words([word]) == (word.translate(memo.ALL_HEX_ZERO),)) is taken


try:
    from firstfault._lines import stamp_local_us
except ImportError:  # pragma: no cover - depends on the build
    stamp_local_us = None  # type: ignore[assignment]

_ISO_PARTS = st.tuples(
    st.sampled_from(["2026", "1000", "1001", "8998", "8999", "0000", "2024"]), st.sampled_from(["-", "/"]),
    st.sampled_from(["01", "02", "11", "12", "13", "00"]), st.sampled_from(["01", "28", "29", "30", "31", "32"]),
    st.sampled_from([" ", "T", "_"]), st.sampled_from(["00", "10", "23", "24"]), st.sampled_from(["00", "59", "60"]),
    st.sampled_from(["00", "07", "59", "60", "99"]),
    st.sampled_from(["", ",000", ".5", ".123456789", ".1234567890", ",", ".x"]),
    st.sampled_from(["", " ", "\t", "Z", " Z", "UTC", " UTC", "+02:00", " +0200", " -05", " - root", "-x", "]", "|"]),
    st.sampled_from(["", " WARNING x", " [ 12.5] x", " [x] y", "  [  3.141] z", " " + "a" * 80 + "[1.000]"]))


@pytest.mark.skipif(stamp_local_us is None, reason="the C module is not built")
@given(_ISO_PARTS, st.sampled_from(["UTC", "Europe/Berlin", "America/New_York"]))
@settings(max_examples=tier.examples(600), deadline=None)
def test_a_stamp_the_c_fold_reads_is_the_one_the_time_parser_reads(parts: tuple[str, ...], zone: str) -> None:
    """Where _lines.stamp_local_us (no year's context) reads a line's leading stamp (the stamp a timed copy's walk
    back stops at, in the fold's C loop), TimeParser.parse reads that very local time from the line, with no
    uptime; and the fold's floor, in the same count, is not later than it exactly when the parsed time is not
    earlier than the floor's."""
    from zoneinfo import ZoneInfo

    from firstfault.timeparse import TimeParser

    y, sep, mo, d, tsep, h, mi, sec, frac, zone_text, rest = parts
    line = f"{y}-{mo}{sep}{d}{tsep}{h}:{mi}:{sec}{frac}{zone_text}{rest}".replace("-" + mo + "/", "/" + mo + "/")
    tz = ZoneInfo(zone)
    tp = TimeParser(tz, datetime(2026, 11, 2, tzinfo=UTC), datetime(2026, 11, 3, tzinfo=UTC))
    got = stamp_local_us(line.encode(), None)
    if got < 0:
        return  # Python reads it (allowed: C is a shortcut)
    stamp = tp.parse(line)
    assert stamp is not None and stamp.uptime is None and stamp.wall is not None, line
    lf = fold.LineFold(None, None)  # type: ignore[arg-type]
    lf.start_file(tz=tz)
    floor = lf._local_us(stamp.wall)
    if floor is not None:
        assert floor == got, line
    for t in (datetime(2026, 11, 2, 10, tzinfo=UTC), datetime(1500, 1, 1, tzinfo=UTC),
              datetime(8000, 1, 1, tzinfo=UTC)):
        f = lf._local_us(t)
        if f is not None:
            assert (got >= f) == (stamp.wall >= t), (line, t)



# Pieces of stamps and of what stands around them (prefixes, layers, zones, uptimes, separators Python's str
# patterns read as white space, a carriage return, the banner, a tqdm rate, bytes over 0x7f), joined at random:
# near misses of every form _lines.c reads, and lines it must leave to Python or read as no stamp.
_PIECES = ["[", "]", "[rank0]:", "[trainer3|3]:", "[W", "[WW", "W", "I", "E", "F", "X", "1102", "102", "1231",
           "0229", "1302", "0001", "12", "2", " ", "  ", "   ", "10:22:33", "23:59:59", "24:00:00", "10:60:00",
           "10:22:60", ".123456", ".5", ".1234567890", ".", ",123", "2026-11-02", "2024-02-29", "2023-02-29",
           "2027-01-01", "T", "Nov", "Dec", "Jan", "Feb", "Foo", "Mon", "Tue", " 2", " 12", "31", "29", "[ 12.345]",
           "[1506867524.064665]", "[12.34]", "*** ", "\r", "\x1c", "\t", "Z", "UTC", "+02:00", "-05", "kern:", "err:",
           ":", "-", "node-1:", "a/b.log:", "3:", "it/s]", "libfabric:", "é", "> ", "<3>", "INFO ", "DEBUG ",
           "(pid=12) ", "=========", "step 12 ", "x", "a" * 70, "\x1b[0m", "[1;31m", "[0]", "[1,3]<stdout>:",
           "[1,1528]<stderr>:", "[1,3]<stdout>: ", "/opt/m.py:1859:", " UserWarning: x", "[1733300000.993108] ",
           "[gpu-0381:71694:0]", "[h: 7]", "1733300000", "libfabric:451707:1708520807::efa", "12:34",
           # IBM Storage Scale's mmfs.log stamps (ISO with `_`, ctime with milliseconds), gcsfuse's 12-hour text one
           "2016-05-09_15:12:20.603-0500", "2016-05-09_15:12:20.603", "Mon May 09 15:12:20.603 2016", "time=\"",
           "08/09/2023", "\" severity=ERROR", '{"name":"root","message":"x",', '"timestampSeconds":1618078232,',
           '"timestampNanos":397649044}', "{"]
_GLOG = st.tuples(st.sampled_from(["", "[rank0]:", " ", "[rank0]: ", "\x1c"]), st.sampled_from(["[", ""]),
                  st.sampled_from("IWEFX"), st.sampled_from(["11", "1", "01", "12", "13", "00", "2"]),
                  st.sampled_from(["02", "31", "30", "29", "00", "1"]),
                  st.sampled_from([" 10:22:33", " 23:59:59", " 00:00:00", " 24:00:00", " 10:22:60", "10:22:33"]),
                  st.sampled_from(["", ".123456", ".1", ".123456789", ".1234567890", "."]),
                  st.sampled_from([" ", "\t", "\x1d", "", "]"]),
                  st.sampled_from(["ProcessGroupNCCL.cpp:4115] x", "reducer.cpp:1389] y [ 12.345] z", ""]))
_BSD = st.tuples(st.sampled_from(["", "  ", "[rank1]:"]), st.sampled_from(["Nov", "Dec", "Jan", "Feb", "Foo", "NOV"]),
                 st.sampled_from([" ", "  ", "   "]), st.sampled_from(["2", "12", "29", "31", "0", "123"]),
                 st.sampled_from([" 10:00:07", " 23:59:59", " 25:00:00", " 10:00:7"]),
                 st.sampled_from(["", ".123", ".1234567890"]), st.sampled_from([" ", "", "\x1f"]),
                 st.sampled_from(["node-01 kernel: x", "host sshd[12]: [ 1.500] y", "*** z"]))
_BRACKET = st.tuples(st.sampled_from(["", "[rank0]:", "x "]), st.sampled_from(["[", ""]),
                     st.sampled_from(["2026-11-02", "2024-02-29", "2023-02-29", "0999-01-01", "2026-13-01"]),
                     st.sampled_from([" ", "T", "_"]), st.sampled_from(["10:01:40", "23:59:60", "24:00:00"]),
                     st.sampled_from(["", ",123", ".123", ",1234567890", ","]),
                     st.sampled_from(["]", " UTC]", "Z]", "+01:00]", " ]"]),
                     st.sampled_from([" [WARNING] [stage3.py:1850:step] 3 flushes", " *** x", "\r y", " [ 3.25] u",
                                      ""]))
_LINES = st.one_of(
    _GLOG.map("".join), _BSD.map("".join), _BRACKET.map("".join), _GLOG.map("".join), _BSD.map("".join),
    _BRACKET.map("".join),
    st.lists(st.sampled_from(_PIECES), max_size=14).map("".join),
    st.text(alphabet=" 0123456789:.,-[]TZIWEFNovDecl*\r\x1c", max_size=60))
# Windows whose yearless stamps are read in their year, in the year before (a window just after New Year), and
# near the half year after the window's end where TimeParser._yearless moves to the year before.
_WINDOWS = st.sampled_from([(datetime(2026, 11, 2, tzinfo=UTC), datetime(2026, 11, 3, tzinfo=UTC)),
                            (datetime(2027, 1, 1, 1, tzinfo=UTC), datetime(2027, 1, 2, tzinfo=UTC)),
                            (datetime(2026, 5, 1, tzinfo=UTC), datetime(2026, 5, 31, 10, 22, 33, tzinfo=UTC)),
                            (datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 3, 2, tzinfo=UTC))])


def _local_of(count: int) -> datetime:
    """The local date and time _lines.c counts as `count` microseconds (fold._count's inverse)."""
    return datetime(1, 1, 1) + timedelta(microseconds=count - 86400 * 10**6)


@pytest.mark.skipif(stamp_local_us is None, reason="the C module is not built")
@given(_LINES, st.sampled_from(["UTC", "Europe/Berlin", "America/New_York", "Pacific/Kiritimati", "Etc/GMT-3"]),
       _WINDOWS)
@settings(max_examples=tier.examples(3000), deadline=None)
def test_the_c_stamp_reading_is_the_time_parsers_or_declines(line: str, zone: str,
                                                              window: tuple[datetime, datetime]) -> None:
    """_lines.stamp_local_us (the stamp the fold's C loop reads from a timed copy, or from a line its walk back
    meets) gives the local time TimeParser.parse reads from the line, with no uptime; or -2 where parse reads no
    stamp at all (the walk back then goes on, in C as in Python); or -1 (Python decides). Generated glog, syslog
    and bracketed ISO stamps and their near misses, and random joins of pieces of every form."""
    from zoneinfo import ZoneInfo

    from firstfault.timeparse import TimeParser

    tz = ZoneInfo(zone)
    tp = TimeParser(tz, *window)
    got = stamp_local_us(line.encode(), fold.yearless_clock(tz, tp.year, tp.window_end))
    if got == -1:
        return
    for _ in range(2):  # the second parse takes TimeParser's caches of the first
        stamp = tp.parse(line)
        if got == -2:
            assert stamp is None, line
            continue
        assert stamp is not None and stamp.uptime is None and stamp.wall is not None, line
        assert _local_of(got).replace(tzinfo=tz).astimezone(UTC) == stamp.wall, line
    assert tp.out_of_range == 0


@pytest.mark.skipif(stamp_local_us is None, reason="the C module is not built")
@given(_LINES, st.sampled_from(["UTC", "Etc/GMT-3", "Etc/GMT+11", "+05:30"]), _WINDOWS)
@settings(max_examples=tier.examples(2000), deadline=None)
def test_a_stamp_read_in_c_is_the_time_the_parser_gives(line: str, zone: str,
                                                       window: tuple[datetime, datetime]) -> None:
    """The scanner takes a candidate's stamp (and a walk back's) from _lines.stamp_local_us where it reads one, in a
    zone of one UTC offset (stamps.c_clock): stamps.c_time of its count is the wall TimeParser.parse gives, to the
    microsecond and with the same zone object (the verdict's bytes); where C declines, parse reads it."""
    from datetime import timezone
    from zoneinfo import ZoneInfo

    from firstfault.collect import stamps
    from firstfault.timeparse import TimeParser

    tz = timezone(timedelta(hours=5, minutes=30)) if zone == "+05:30" else ZoneInfo(zone)
    tp = TimeParser(tz, *window)
    clock = stamps.c_clock(tp)
    assert clock is not None
    got = stamp_local_us(line.encode(), clock[0])
    if got < 0:
        return
    stamp = tp.parse(line)
    assert stamp is not None and stamp.wall is not None and stamp.uptime is None, line
    t = stamps.c_time(got, clock)
    assert t == stamp.wall and t.tzinfo is stamp.wall.tzinfo and t.isoformat() == stamp.wall.isoformat(), line


def test_a_zone_of_two_offsets_leaves_the_stamps_to_the_parser() -> None:
    """Near miss: where the zone's offset changes (summer time), a C count is not turned into a time (c_clock
    None): the parse applies the zone's rules; with the fast paths off, every stamp is parsed."""
    from zoneinfo import ZoneInfo

    from firstfault.collect import stamps
    from firstfault.timeparse import TimeParser

    window = (datetime(2026, 11, 2, tzinfo=UTC), datetime(2026, 11, 3, tzinfo=UTC))
    assert stamps.c_clock(TimeParser(ZoneInfo("Europe/Berlin"), *window)) is None
    assert stamps.c_clock(TimeParser(UTC, *window)) is not None
    with memo.fastpath(False):
        assert stamps.c_clock(TimeParser(UTC, *window)) is None


@pytest.mark.skipif(stamp_local_us is None, reason="the C module is not built")
def test_the_stamp_forms_of_rank_logs_are_read_in_c() -> None:
    """The forms common in rank logs are read in C: PyTorch's glog stamp behind its rank prefix (PyTorch issue
    #112926's `[rank0]:[W1102 ...`), DeepSpeed's bracketed ISO stamp with a comma, NCCL's with a dot, syslog's,
    zone-less ISO; a yearless one in TimeParser's year, or the year before in a window just after New Year.
    Near misses: a line with no stamp (-2: the walk back goes on), `[WW1102` and a glog fraction of ten digits (no
    form: -2 too); an uptime beside the stamp, a zone, a day that does not exist, a byte over 0x7f, a layer before
    a time of day, ctime's weekday, no year context (-1: Python decides)."""
    tz = UTC
    clock = fold.yearless_clock(tz, 2026, datetime(2026, 11, 3, tzinfo=UTC))
    new_year = fold.yearless_clock(tz, 2027, datetime(2027, 1, 2, tzinfo=UTC))

    def us(t: datetime) -> int:
        return fold._count(t)

    nov2 = datetime(2026, 11, 2, 10, 22, 33, 123456)
    assert stamp_local_us(b"[rank0]:[W1102 10:22:33.123456 ProcessGroupNCCL.cpp:4115] [PG ID 0] x", clock) == us(nov2)
    assert stamp_local_us(b"I1102 10:22:33.123456 12 reducer.cpp:1389] y", clock) == us(nov2)
    assert stamp_local_us(b"[2026-11-02 10:22:33,123] [WARNING] [stage3.py:1850:step] 3", None) == \
        us(nov2.replace(microsecond=123000))
    assert stamp_local_us(b"[2026-11-02 10:22:33.123456] node-01:311:312 NCCL WARN x", None) == us(nov2)
    assert stamp_local_us(b"Nov  2 10:22:33 node-01 kernel: NVRM: Xid", clock) == us(nov2.replace(microsecond=0))
    assert stamp_local_us(b"2026-11-02T10:22:33.123456 x", None) == us(nov2)
    assert stamp_local_us(b"Dec 31 23:59:59 node-01 kernel: x", new_year) == us(datetime(2026, 12, 31, 23, 59, 59))
    assert stamp_local_us(b"[W1231 23:59:59.000001 x.cpp:1] y", new_year) == \
        us(datetime(2026, 12, 31, 23, 59, 59, 1))
    assert stamp_local_us(b"Jan  1 00:00:01 node-01 kernel: x", new_year) == us(datetime(2027, 1, 1, 0, 0, 1))
    assert stamp_local_us(b"  grad.sizes() = [1024, 4096], strides() = [4096, 1]", clock) == -2
    assert stamp_local_us(b"[rank0]:[WW1102 10:22:33.123456 ProcessGroupNCCL.cpp:4115] [PG ID 0] x", clock) == -2
    assert stamp_local_us(b"[W1102 10:22:33.1234567890 x.cpp:1] y", clock) == -2  # ten digits: glog's form fails
    for near in (b"Nov  2 10:22:33 node-01 kernel: [ 12.345678] x", b"2026-11-02 10:22:33 UTC x",
                 b"[2026-11-02 10:22:33+01:00] x",
                 b"[W0230 10:22:33.1 x.cpp:1] y", b"[W1102 10:22:33.1 x.cpp:1] y \xc3\xa9",
                 b"node-01:311:312 [0] NCCL INFO 10:22:33 x", b"Mon Nov  2 10:22:33 2026[1,3]<stdout>: x"):
        assert stamp_local_us(near, clock) == -1, near
    assert stamp_local_us(b"[W1102 10:22:33.1 x.cpp:1] y", None) == -1
    # Cut short: glog's and syslog's forms need a white space after the time (no stamp: -2); a bracket then a digit
    # that does not open a whole ISO stamp is left to Python's layers (-1).
    for cut, want in ((b"[2026-11-02", -1), (b"[2026-11-02 ", -1), (b"[2026-11-02 10:22:3", -1),
                      (b"[W1102 10:22:33", -2), (b"Nov  2 10:22:33", -2)):
        assert stamp_local_us(cut, clock) == want, cut


def test_lines_whose_shape_tells_they_hold_no_word_are_passed_over_in_c() -> None:
    """A line found to hold none of the prefilter's words makes its shape quiet where every line of the shape holds
    none: the dense loop in C passes over such lines (as the prefilter would) and stops at the first other one.
    Near misses: a shape holding a word with a digit (`Xid 13`, where `Xid 79` could be a word) or a masked hex id
    that could hold a word (`dead` in `deadbeef12`) is not quiet."""
    lf = fold.LineFold(None, None)  # type: ignore[arg-type]
    lf.start_file(digit_words=(b"Xid 00",), hex_words=memo.hex_words([b"dead"]))
    for raw in (b"step 12 loss 3.5", b"NVRM: Xid 13 on bus", b"id deadbeef12 ok", b"id cafe ok"):
        lf.quiet_add(raw)
    assert lf.quiet == {memo.line_shape(b"step 12 loss 3.5"), b"id cafe ok"}
    if scan._fold_run is None:
        return
    buf = b"step 17 loss 9.9\nstep 18 loss 1.0\nid cafe ok\nstep 123 loss 1.0\nstep 19 loss 2.0\n"
    pos, line_no, n, held, counts, passed = scan._fold_run(buf, 0, 0, {}, None, lf.quiet, -1)
    assert (line_no, n, held, counts, passed) == (3, 0, None, [], 3)  # `step 123` has another shape
    assert buf[pos:].startswith(b"step 123")


_OPS = st.lists(st.tuples(st.sampled_from(["step", "warn", "glog", "back", "none", "syslog", "ds", "wglog"]),
                          st.integers(0, 9)),
                min_size=40, max_size=160)


@given(_OPS)
@settings(max_examples=25, deadline=None)
def test_unstamped_warnings_after_clocks_that_step_back_fold_as_reading_every_line_gives(
        ops: list[tuple[str, int]]) -> None:
    """Random runs of DDP's unstamped warning after stamped step lines (zone-less ISO), glog-stamped lines (behind
    a rank prefix, and `[WW`: a near miss that reads as no stamp), syslog-stamped lines, DeepSpeed's bracketed ISO
    stamp (stamp forms the C loop reads too), clocks stepping back and lines of no stamp at all, each run repeated
    so that it folds, in chunks of 2 KiB (the dense loop, in C and in Python): the verdict's bytes are those of
    reading every line."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = chatty.steps_and_warnings(Path(tmp), ops)
        analyzer = Analyzer()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(scan, "CHUNK", 2048)
            with memo.fastpath(False):
                every = records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2)
            with memo.fastpath(True):
                assert records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2) == every
            mp.setattr(scan, "_fold_run", None)
            with memo.fastpath(True):
                assert records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2) == every
            mp.setattr(scan, "_copy_time", None)  # a timed copy's time read in Python too
            with memo.fastpath(True):
                assert records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2) == every


# --- may_count: a chunk none of whose lines could be counted is read outside the fold ---

def _rank_logs(root: Path, copies: int, files: int = 12) -> Path:
    """Rank logs in the 16k-rank job's way (few lines each, issue 27): NCCL's socket retry `copies` times (a real
    wording, tests/chatty.py), a dataloader warning, then the rank's NCCL completion error."""
    rng = random.Random(copies)
    out = root / f"rank-logs-{copies}"
    chatty._workload(out, "- {kind: application, path: 'app/rank-{rank}.log'}\n", ranks=f"{{node-01: 0-{files - 1}}}")
    (out / "app").mkdir()
    t = chatty.T0
    for r in range(files):
        lines = [chatty._nccl_retry(rng, r % 8) for _ in range(copies)]
        t += timedelta(seconds=1)
        lines.append(chatty._dataloader(rng, t, r))
        lines.append(f"node-01:{41000 + r}:{41100 + r} [{r % 8}] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got "
                     "completion from peer 10.0.0.2<41565> with status=12 opcode=0 len=0 vendor err 129 (Recv)")
        (out / "app" / f"rank-{r}.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.mark.parametrize("copies", [fold.WARM, fold.WARM + 1])
def test_files_whose_lines_cannot_fold_are_read_outside_the_fold(
        copies: int, analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rank logs with WARM copies of one line: no variant could fold (it needs WARM reads first), so every line is
    read outside the fold's bookkeeping (pass_on); with WARM + 1 (the near miss) the fold reads them. The bytes
    are those of reading every line either way."""
    out = _rank_logs(tmp_path, copies)
    with memo.fastpath(False):
        every = records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2)
    calls = {"pass_on": 0, "read": 0}
    for name in calls:
        real = getattr(fold.LineFold, name)

        def counted(self: fold.LineFold, *args: Any, _real: Any = real, _name: str = name) -> Any:
            calls[_name] += 1
            return _real(self, *args)

        monkeypatch.setattr(fold.LineFold, name, counted)
    with memo.fastpath(True):
        assert records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2) == every
    if copies <= fold.WARM:
        assert calls["read"] == 0 and calls["pass_on"] == 12 * (copies + 2)
    else:
        assert calls["pass_on"] == 0 and calls["read"] > 0


def test_may_count_needs_more_than_warm_lines_of_a_shape_in_a_fold_that_read_nothing() -> None:
    """may_count's rule itself: WARM lines of one shape (their digits differ) cannot fold, WARM + 1 may; lines too
    long to have a shape never count toward one; once the fold has read a line of its file, it answers yes."""
    class _Nothing:
        unrecognized: Any = None

        def add_events(self, c: Any, store: Any) -> None:
            pass

        def add_events_read(self, c: Any, store: Any) -> Any:
            raise AssertionError("not read here")

    lf = fold.LineFold(_Nothing(), None)  # type: ignore[arg-type]
    lf.start_file()
    rng = random.Random(5)

    def chunk(lines: list[str]) -> tuple[bytes, list[int]]:
        buf = ("\n".join(lines) + "\n").encode()
        starts = [0] + [i + 1 for i, b in enumerate(buf[:-1]) if b == 0x0A]
        return buf, starts

    assert not lf.may_count(*chunk([chatty._nccl_retry(rng) for _ in range(fold.WARM)]))
    assert lf.may_count(*chunk([chatty._nccl_retry(rng) for _ in range(fold.WARM + 1)]))
    long_line = "NCCL WARN " + "x" * fold.MAX_LINE
    assert not lf.may_count(*chunk([long_line] * (fold.WARM + 5)))
    assert not lf.may_count(*chunk([f"{chatty._nccl_retry(rng)} {'y' * i}" for i in range(fold.WARM * 3)]))
    lf.unstable(chatty._nccl_retry(rng).encode())  # the fold now holds a shape of its file
    assert lf.may_count(*chunk([chatty._nccl_retry(rng)]))


def _may_count_by_shapes(lf: fold.LineFold, buf: bytes, starts: list[int]) -> bool:
    """may_count's rule worked out from every line's shape (the way it was before lengths came first)."""
    if lf._shapes or lf._once:
        return True
    taught = lf._taught
    if len(starts) <= (1 if taught else fold.WARM):
        return False
    seen: dict[bytes, int] = {}
    for s in starts:
        e = buf.find(b"\n", s)
        if e - s > fold.MAX_LINE:
            continue
        key = memo.line_shape(buf[s:e])
        n = seen.get(key, 0) + 1
        if n > fold.WARM or (n == 2 and key in taught):
            return True
        seen[key] = n
    return False


def _rank_log_chunk(rank: int) -> tuple[bytes, list[int]]:
    """A rank log's candidate lines (bench/gen_bundle.py's 16k-rank job: a torch watchdog's timeout and its C++
    frames), each template once, and their starts; the last line without its newline."""
    lines = [
        f"node-001:{22581 + rank}:{22640 + rank} [{rank % 8}] NCCL INFO Bootstrap : Using ib0:10.0.0.{15 + rank}<0>",
        f"[rank{rank}]:[E1102 11:10:28.222929819 ProcessGroupNCCL.cpp:632] [Rank {rank}] Watchdog caught "
        f"collective operation timeout: WorkNCCL(SeqNum=24311, OpType=_REDUCE_SCATTER_BASE, NumelIn=7098994688, "
        f"NumelOut=443687168, Timeout(ms)=600000) ran for 600065 milliseconds before timing out.",
        "Exception raised from checkTimeout at /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL."
        "cpp:634 (most recent call first):",
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f3c2b0e7446 in "
        "/usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)",
        "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f3be1e41bb3 in "
        "/usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)",
        "terminate called after throwing an instance of 'c10::DistBackendError'",
    ]
    buf = ("\n".join(lines) + "\n").encode()
    return buf, [0] + [i + 1 for i, b in enumerate(buf[:-1]) if b == 0x0A]


def test_may_count_works_out_no_shape_where_no_two_lines_are_of_one_length(monkeypatch: pytest.MonkeyPatch) -> None:
    """A shape has its lines' length, so a chunk whose lines are each of a length of its own (a rank log's templates,
    once each) cannot fold a copy whatever the lessons are: may_count says so without a shape worked out. The near
    miss: two lines of one length and of a taught shape may count (the second copy of a lesson's shape), and two of
    one length but of two shapes still may not."""
    lf = fold.LineFold(None, None)  # type: ignore[arg-type]
    lf.start_file()
    shapes = 0
    real = fold.line_shape

    def counted(raw: bytes) -> bytes:
        nonlocal shapes
        shapes += 1
        return real(raw)

    monkeypatch.setattr(fold, "line_shape", counted)
    buf, starts = _rank_log_chunk(5)
    lf._taught = {real(buf[starts[0]:starts[1] - 1]): []}  # a lesson of the Bootstrap line's shape
    assert not lf.may_count(buf, starts)
    assert shapes == 0
    other, o_starts = _rank_log_chunk(95)  # rank 95's Bootstrap line: one byte more (10.0.0.110), another shape
    line = buf[:starts[1]]
    again = line.replace(b"22586", b"22599")  # the same shape and length
    assert not lf.may_count(line + other, [0, *(s + len(line) for s in o_starts)])
    assert lf.may_count(line + again + other, [0, len(line), *(s + 2 * len(line) for s in o_starts)])
    assert shapes > 0
    near = line.replace(b"Bootstrap", b"Bootstrop")  # one length, another shape (a letter differs)
    assert not lf.may_count(line + near + other, [0, len(line), *(s + 2 * len(line) for s in o_starts)])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 10 ** 6)), min_size=0, max_size=60),
       st.booleans(), st.booleans())
def test_may_count_by_lengths_is_may_count_by_shapes(picks: list[tuple[int, int]], taught: bool, ends: bool) -> None:
    """may_count (lengths first) gives the answer of working out every line's shape, for chunks of a few templates
    whose numbers differ (so their lengths too), a line too long for a shape among them, with and without a lesson,
    and with and without the chunk's last newline."""
    templates = ["node-01:{n}:4110 [0] NCCL WARN NET/Socket : Call to connect returned Connection refused, retrying",
                 "[rank{n}]: Watchdog caught collective operation timeout: WorkNCCL(SeqNum={n})",
                 "frame #{n}: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f3be1e41bb3 in libc10.so)",
                 "NCCL WARN " + "x" * fold.MAX_LINE + " {n}"]
    lines = [templates[t].format(n=n) for t, n in picks]
    buf = "\n".join(lines).encode() + (b"\n" if ends else b"")
    starts = [0] + [i + 1 for i, b in enumerate(buf[:-1] if ends else buf) if b == 0x0A] if lines else []
    lf = fold.LineFold(None, None)  # type: ignore[arg-type]
    lf.start_file()
    if taught:
        lf._taught = {memo.line_shape(templates[0].format(n=12345).encode()): []}
    assert lf.may_count(buf, starts) == _may_count_by_shapes(lf, buf, starts)


# --- Lessons: what a file's fold learned of a variant holds in the analysis's next files (issue 27) ---

def _reads_by_file(monkeypatch: pytest.MonkeyPatch, word: bytes) -> dict[str, int]:
    """How many lines holding `word` the fold reads in full (LineFold.read), by file."""
    reads: dict[str, int] = {}
    real = fold.LineFold.read

    def read(self: fold.LineFold, c: Any, raw: bytes, hits: Any) -> None:
        if word in raw:
            reads[c.file] = reads.get(c.file, 0) + 1
        real(self, c, raw, hits)

    monkeypatch.setattr(fold.LineFold, "read", read)
    return reads


def test_a_shape_learned_in_one_file_folds_from_its_second_copy_in_the_next(
        analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same kernel noise on every node (bench shape b): node-01's fold reads WARM copies of the mlx5 line and
    more before it folds; node-02 and node-03 read its first copy (their own first line of it, state, stamp) and
    its last (the file's last: the per-stream state) and count the 398 between. Near misses: node-04's log holds
    node-01's lines (the host its header names is not the file's node: another relative outcome), so it learns
    them anew; node-03's first Xid line is an Xid 79 of the Xid 13 lines' shape, read in full and found. Counts,
    first lines and times: the bytes of reading every line."""
    case = chatty.kernel_noise_on_every_node(tmp_path)
    with memo.fastpath(False):
        every = records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2)
    reads = _reads_by_file(monkeypatch, b"mlx5_cmd_out_err")
    counted: dict[str, int] = {}
    end_file = fold.LineFold.end_file

    def ending(self: fold.LineFold) -> None:
        mlx5 = sum(v.counted for k, sh in self._shapes.items() if b"mlx0_cmd" in k for v in sh.variants)
        if mlx5:
            counted[f"node-0{len(counted) + 1}"] = mlx5
        end_file(self)

    monkeypatch.setattr(fold.LineFold, "end_file", ending)
    with memo.fastpath(True):
        folded = records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2)
    assert folded == every
    by_node = {f.split("/")[1]: n for f, n in reads.items()}
    assert by_node["node-01"] >= fold.WARM
    assert by_node["node-02"] == by_node["node-03"] == 2
    assert counted["node-02"] == counted["node-03"] == 400 - 2
    assert by_node["node-04"] >= fold.WARM  # the near miss: not taught
    v = json.loads(folded)
    xid79 = {(e["file"], e["line"]) for e in v["evidence"] if ": 79," in e["text"]}
    assert xid79 == {case.expect["evidence_line"]}
    groups = [u for u in v["unrecognized"] if "mlx5_cmd_out_err" in u["template"]]
    assert sum(u["count"] for u in groups) == 4 * 400


def _kept_events(analyzer: Analyzer, path: Path) -> list[tuple[object, ...]]:
    """The events the store keeps for a bundle, in order, each with its line, time, text and fields."""
    from firstfault.collect.evidence import collect_bundle

    bundle = load_bundle(str(path))
    analysis = analyzer.start(bundle.context)
    collect_bundle(analyzer, bundle, analysis)
    return [(e.kind, e.time, e.node, e.rank, e.device, e.fields, e.evidence.file, e.evidence.line, e.evidence.text)
            for e in analysis.store.events]


def _copies_given(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many copies below the store's cap the fold gave as the events of the copies read (LineFold.copy_events)."""
    n = [0]
    real = fold.LineFold.copy_events

    def giving(self: fold.LineFold, v: Any, line: int, time: Any, text: str) -> None:
        n[0] += 1
        real(self, v, line, time, text)

    monkeypatch.setattr(fold.LineFold, "copy_events", giving)
    return n


def test_copies_below_the_cap_give_the_events_of_the_copies_read_at_their_own_lines(
        analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bench shape b's AER records on every node: the store keeps each file's first 32 `PCIe Bus Error` events with
    their own lines and times. Past SAME_READS copies read in a file to the same events (but for line, time and
    text), its next copies below the cap add those events at their own place without the extractors: every kept
    event (line, time, text, fields) and the verdict are those of reading every line, with a few of each file's
    copies read, not 32."""
    case = chatty.aer_records_on_every_node(tmp_path)
    with memo.fastpath(False):
        every = records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2)
        kept = _kept_events(analyzer, case.path)
    reads = _reads_by_file(monkeypatch, b"PCIe Bus Error")
    given = _copies_given(monkeypatch)
    with memo.fastpath(True):
        assert records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2) == every
        assert _kept_events(analyzer, case.path) == kept
    aer = [k for k in kept if k[0] == "pcie.aer"]
    assert len(aer) == 3 * 32 and len({(k[6], k[7]) for k in aer}) == len(aer)  # each kept with its own line
    # (two runs) node-02 and node-03, taught by node-01: a few copies read each, not the 32 below the cap
    assert given[0] >= 2 * 2 * (32 - 2 * fold.SAME_READS), given[0]
    assert reads["nodes/node-02/kern.log"] <= 2 * 2 * fold.SAME_READS, reads
    assert reads["nodes/node-03/kern.log"] <= 2 * 2 * fold.SAME_READS, reads


def test_a_copy_below_the_cap_whose_digits_its_file_never_varied_is_read(
        analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The near miss: an Xid 13 event holds the pid its line names, which its signature does not. node-02's copies
    read in full all held one pid, though the lesson from node-01 lets the pid's digits range wide: a copy below the
    cap with another pid is read (its own pid kept), not given the event of the copies read. Taking the lesson's
    ranges for the events' would keep the wrong pid."""
    case = chatty.xid_pids_on_every_node(tmp_path)
    with memo.fastpath(False):
        kept = _kept_events(analyzer, case.path)
    given = _copies_given(monkeypatch)
    with memo.fastpath(True):
        assert _kept_events(analyzer, case.path) == kept
        # Most of the one-pid halves of node-02 and node-03 (a few read where a digit of the stamp or uptime first
        # moves), none of the others
        assert 2 * (30 - 3 * fold.SAME_READS) <= given[0] <= 2 * 30, given[0]
        monkeypatch.setattr(fold._Variant, "gives_same", lambda self, x: self.same >= fold.SAME_READS)
        assert _kept_events(analyzer, case.path) != kept
    pids = {k[5]["pid"] for k in kept if k[0] == "gpu.xid" and k[6] == "nodes/node-02/kern.log"}
    assert len(pids) > 1 and 24444 in pids  # (its copies with other pids below the cap, read)


def test_a_lesson_is_not_taught_to_a_file_of_another_rank(
        analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rank log's NCCL retry reads to events of its rank (the file's): the rank stays in the relative outcome,
    so the next rank's file learns its lines anew (three files of 40 copies: each reads WARM of them or more)."""
    out = _rank_logs(tmp_path, 40, files=3)
    with memo.fastpath(False):
        every = records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2)
    reads = _reads_by_file(monkeypatch, b"NET/Socket")
    with memo.fastpath(True):
        assert records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2) == every
    assert len(reads) == 3 and min(reads.values()) >= fold.WARM, reads


def test_an_outcome_relative_to_its_file_leaves_out_the_files_own_names_only() -> None:
    """relative(): an event signature's file and node, an offer's node, and an offer's host that is the node,
    are the file's; a rank, a device, a host that is another node's stay."""
    sig = (("gpu.xid", "kernel", "nodes/node-01/kern.log", "node-01", None, "pci:0000:3b:00", 13), 1)
    other = (("gpu.xid", "kernel", "nodes/node-02/kern.log", "node-02", None, "pci:0000:3b:00", 13), 1)
    assert fold.relative(((sig,), False, None)) == fold.relative(((other,), False, None))
    xid79 = (("gpu.xid", "kernel", "nodes/node-02/kern.log", "node-02", None, "pci:0000:3b:00", 79), 1)
    assert fold.relative(((sig,), False, None)) != fold.relative(((xid79,), False, None))
    ranked = (("gpu.xid", "kernel", "nodes/node-02/kern.log", "node-02", 3, "pci:0000:3b:00", 13), 1)
    assert fold.relative(((sig,), False, None)) != fold.relative(((ranked,), False, None))
    own = ((), False, ("mlx0_core", "node-01", "node-01", None))
    assert fold.relative(own) == fold.relative(((), False, ("mlx0_core", "node-02", "node-02", None)))
    assert fold.relative(own) != fold.relative(((), False, ("mlx0_core", "node-01", "node-02", None)))
    assert fold.relative(own) != fold.relative(((), False, ("mlx0_core", None, "node-02", None)))
    assert fold.relative(own) != fold.relative(((), False, ("mlx0_core", "node-02", "node-02", 0)))


def _variant(line: bytes, outcome: Any = ((), False, ("k", "node-01", "node-01", None))) -> Any:
    reading = fold.Reading(outcome, None, True)
    return fold._Variant(int.from_bytes(line), None, reading, 1, len(line), 0, True)


def test_a_lesson_starts_a_variant_with_its_ranges_less_the_bytes_its_first_copy_lies_outside() -> None:
    """teach(): a variant whose first copy reads to a lesson's relative outcome starts with the lesson's reads and
    digit ranges; where the copy lies outside them (the host's digits: another node) its own byte alone. A copy
    of another relative outcome, or other hits, is not taught."""
    lessons = fold.Lessons()
    key = b"node-00 pid 00"
    learned = _variant(b"node-01 pid 10")
    for line in (b"node-01 pid 35", b"node-01 pid 17"):
        learned.widen(int.from_bytes(line))
    learned.reads = fold.WARM + 3
    lessons.learn(key, learned)
    x = b"node-02 pid 24"
    v = _variant(x, ((), False, ("k", "node-02", "node-02", None)))
    lessons.teach(key, v, int.from_bytes(x))
    assert v.reads == fold.WARM + 3
    assert v.lo.to_bytes(v.size) == b"node-02 pid 10" and v.hi.to_bytes(v.size) == b"node-02 pid 37"
    assert v.holds(int.from_bytes(b"node-02 pid 31")) and not v.holds(int.from_bytes(b"node-01 pid 31"))
    stranger = _variant(x, ((), False, ("k", "node-01", "node-02", None)))  # node-01's line in node-02's file
    lessons.teach(key, stranger, int.from_bytes(x))
    assert stranger.reads == 1 and stranger.lo == stranger.hi == int.from_bytes(x)
    other_hits = _variant(x, ((), False, ("k", "node-02", "node-02", None)))
    other_hits.hits = [3]
    lessons.teach(key, other_hits, int.from_bytes(x))
    assert other_hits.reads == 1


def test_lessons_of_two_outcomes_that_could_claim_one_line_spoil_the_shape() -> None:
    """learn(): a second relative outcome whose ranges meet a lesson's at every byte leaves a line's outcome
    untold by its bytes: the shape is taught no more (each file learns it anew). Ranges apart at a byte (an Xid's
    code) make two lessons."""
    lessons = fold.Lessons()
    key = b"Xid 00 pid 00"
    a = _variant(b"Xid 13 pid 10")
    a.widen(int.from_bytes(b"Xid 13 pid 40"))
    lessons.learn(key, a)
    apart = _variant(b"Xid 79 pid 20", ((), False, ("other", "node-01", "node-01", None)))
    lessons.learn(key, apart)
    assert len(lessons.shapes[key]) == 2 and key not in lessons.spoiled
    meets = _variant(b"Xid 13 pid 20", ((), False, ("third", "node-01", "node-01", None)))
    lessons.learn(key, meets)
    assert key not in lessons.shapes and key in lessons.spoiled
    lessons.learn(key, a)
    assert key not in lessons.shapes


def test_a_file_starts_in_the_dense_loop_where_the_last_of_its_kind_ended_in_it(
        analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lessons.dense and .quiet: node-01's kernel log is searched for the prefilter's words a chunk at a time and
    ends telling that most of its lines folded; node-02's, node-03's and node-04's start in the dense loop, the
    session lines (no word: a quiet shape, found in node-01) passed over in C from their first. Near miss: rank logs
    whose lines do not fold are each searched a chunk at a time. The bytes: those of reading every line."""
    case = chatty.kernel_noise_on_every_node(tmp_path)
    with memo.fastpath(False):
        every = records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2)
    searched: list[str] = []
    at: list[str] = [""]
    scan_file, line_hits = scan.LineScanner.scan_file, scan._Matcher.line_hits

    def scanning(self: scan.LineScanner, path: str, rel: str, **kw: Any) -> Any:
        at[0] = rel
        return scan_file(self, path, rel, **kw)

    def searching(self: scan._Matcher, buf: bytes) -> Any:
        searched.append(at[0])
        return line_hits(self, buf)

    monkeypatch.setattr(scan.LineScanner, "scan_file", scanning)
    monkeypatch.setattr(scan._Matcher, "line_hits", searching)
    passed = chatty.count_in(monkeypatch, scan, "_fold_run", lambda out: int(out[5]))
    with memo.fastpath(True):
        assert records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2) == every
    assert searched == ["nodes/node-01/kern.log"]
    assert passed[0] >= 3 * 99  # the session lines of node-02, -03, -04 (100 each), all but a few in C
    out = _rank_logs(tmp_path, fold.WARM + 1, files=3)
    searched.clear()
    with memo.fastpath(True):
        analyzer.analyze_path(str(out), now=NOW)
    assert searched == [f"app/rank-{r}.log" for r in range(3)]


def test_a_first_chunk_of_lines_the_kind_does_not_know_is_searched_a_chunk_at_a_time() -> None:
    """looks_dense(): the dense loop for a file's first chunk only where the last file of the kind ended in it and
    most of the chunk's first lines are of shapes the kind knows (quiet here); a chunk of other lines (distinct
    words: each would be looked at in Python), or a kind whose last file did not end dense, is not."""
    lf = fold.LineFold(None, None)  # type: ignore[arg-type]
    lf.start_file(kind="kernel")
    session = "Nov  2 10:00:0{} node-01 systemd-logind[1344]: New session {} of user root."
    lf.quiet_add(session.format(1, 4501).encode())
    known = "\n".join(session.format(i % 10, 4500 + i) for i in range(100)).encode() + b"\n"
    rng = random.Random(3)
    other = "\n".join(f"Nov  2 10:00:01 node-01 systemd[1]: Started unit-{rng.getrandbits(40):x}z.scope"
                      for _ in range(100)).encode() + b"\n"
    assert not lf.looks_dense(known)  # the last file did not end dense
    lf.dense = True
    lf.start_file(kind="kernel")  # the next file of the kind: the quiet shapes and the hint are the kind's
    assert lf.looks_dense(known)
    assert not lf.looks_dense(other)
    lf.start_file(kind="another kind")
    assert not lf.looks_dense(known)


def test_a_file_teaches_its_ready_variants_and_spoils_its_unstable_shapes() -> None:
    """end_file(): a variant of WARM reads or more, foldable, of a stable shape becomes a lesson of the file's kind;
    one read fewer times, or not foldable, does not; a shape the file found unstable (its copies read to
    outcomes their bytes do not tell) is taught no more, its lesson from an earlier file dropped."""
    from firstfault.collect.events import EventStore

    lf = fold.LineFold(None, EventStore())  # type: ignore[arg-type]
    lf.start_file(kind="kernel")
    ready, young, unfoldable = _variant(b"Xid 13 pid 10"), _variant(b"Xid 31 pid 10"), _variant(b"Xid 43 pid 10")
    ready.reads, young.reads, unfoldable.reads = fold.WARM, fold.WARM - 1, fold.WARM
    unfoldable.reading.foldable = False
    stable, shaky = fold._Shape(), fold._Shape()
    stable.variants = [ready, young, unfoldable]
    shaky.variants = [_variant(b"NCCL 0 retry 7")]
    shaky.variants[0].reads = fold.WARM
    shaky.stable = False
    lf._shapes = {b"Xid 00 pid 00": stable, b"NCCL 0 retry 0": shaky}
    lf.end_file()
    lessons = lf._lessons_by_kind["kernel"]
    assert [ls.lo for ls in lessons.shapes[b"Xid 00 pid 00"]] == [ready.lo]
    assert b"NCCL 0 retry 0" in lessons.spoiled and b"NCCL 0 retry 0" not in lessons.shapes
    lf.start_file(kind="kernel")
    again = _variant(b"Xid 13 pid 10")
    again.reads = fold.WARM
    gone = fold._Shape()
    gone.variants, gone.stable = [again], False
    lf._shapes = {b"Xid 00 pid 00": gone}
    lf.end_file()
    assert b"Xid 00 pid 00" not in lessons.shapes and b"Xid 00 pid 00" in lessons.spoiled


def test_copies_far_from_a_stamp_walk_back_once_and_time_as_reading_every_line(
        analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One mpirun output (issue 27's n3): an unstamped warning (an unrecognized line: each copy's time is the
    nearest stamp before it) between step lines that hold a stamp's characters and read as none, thousands of
    lines from the last stamp. Each copy's walk back takes the last copy's answer for the
    lines before it (scan.py's walk_far): the lines are parsed about once each, not once per copy. Near misses: a
    stamp outside the years (read as none: a copy whose walk crosses it is read), and a later stamp that the next
    copies take. The bytes of reading every line."""
    out = tmp_path / "mpirun-far-from-a-stamp"
    chatty._workload(out, "- {kind: application, path: 'mpirun.out'}\n", ranks="{node-01: 0-7}")
    rng = random.Random(40)
    lines = ["2026-11-02 10:00:00,000 INFO launcher: starting 8 ranks"]
    for i in range(3000):
        r = rng.randrange(8)
        if i % 2:
            lines.append(f"[1,{r}]<stderr>:/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py:"
                         f"{1000 + rng.randrange(900)}: UserWarning: error-prone path taken for module {i}")
        else:
            lines.append(f"[1,{r}]<stdout>:iter {i} | loss {rng.random() * 3:.5f} | grad_norm {rng.random():.4f} | "
                         f"{rng.randrange(100, 200)} TFLOPS")
        if i == 1400:
            lines.append("1999-01-01 00:00:00,000 INFO a clock before the epoch's years")
        if i == 2200:
            lines.append("2026-11-02 10:30:00,000 INFO launcher: checkpoint")
    (out / "mpirun.out").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with memo.fastpath(False):
        every = records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2)
    calls = [0]
    real = scan.walk_back

    def counting(buf: bytes, end: int, tp: Any, srun: bool, stop: int, limit: int, clock: Any = None) -> Any:
        calls[0] += 1
        real_parse = tp.parse

        def parse(text: str) -> Any:
            calls[1:] = [(calls[1:] or [0])[0] + 1]
            return real_parse(text)

        tp.parse = parse
        try:
            return real(buf, end, tp, srun, stop, limit, clock)
        finally:
            del tp.parse

    monkeypatch.setattr(scan, "walk_back", counting)
    counted = _counted(monkeypatch)
    with memo.fastpath(True):
        folded = records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2)
    assert folded == every
    assert counted[0] > 500, "the fold did not engage: the test would prove nothing"
    parsed = (calls[1:] or [0])[0]
    assert parsed < 2 * len(lines), (parsed, calls[0])  # each walk from the last line read: about 36 times more
    v = json.loads(folded)
    assert any("error-prone" in u["template"] for u in v["unrecognized"])


@pytest.mark.parametrize("carried", [True, False])
def test_copies_of_stampless_chunks_are_timed_in_c_from_the_chunk_before(
        analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, carried: bool) -> None:
    """An mpirun output whose UCX stamps stopped reading as stamps (an eleventh digit: bench/shapes.py's shape j past
    its 1000th second), read in small chunks: before a chunk's first line read in full, a copy of the unstamped
    warning that no stamp lies before takes the previous chunk's last stamp (copy_time's answer), and the dense loop
    in C now compares that time with the variant's floor instead of leaving each such copy to Python (fold_run's
    `before`). The bytes of reading every line, and few copies timed in Python. Near miss: a file with no stamp
    read at all (`carried` False: no time, each copy after every floor)."""
    out = tmp_path / "mpirun-stampless"
    chatty._workload(out, "- {kind: application, path: 'mpirun.out'}\n", ranks="{node-01: 0-7}")
    rng = random.Random(43)
    lines = ["[1,0]<stderr>:[1762077600.000000] [gpu-0001:10:0]      ib_iface.c:1000 UCX  WARN  failed to get port 1 "
             "state on mlx5_0: Connection timed out, retrying"] if carried else []
    for i in range(6000):
        r = rng.randrange(8)
        k = rng.random()
        if k < 0.6:
            lines.append(f"[1,{r}]<stdout>:iter {i} | loss {rng.random() * 3:.5f} | grad_norm {rng.random():.4f}")
        elif k < 0.8:
            lines.append(f"[1,{r}]<stderr>:[17620776{i % 1000:03d}.{rng.randrange(10**6):06d}] [gpu-000{r}:"
                         f"{rng.randrange(99999)}:0]      ib_iface.c:1000 UCX  WARN  failed to get port 1 state on "
                         "mlx5_0: Connection timed out, retrying")
        else:
            lines.append(f"[1,{r}]<stderr>:/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py:"
                         f"{1000 + rng.randrange(900)}: UserWarning: error-prone path taken for module {i}")
    (out / "mpirun.out").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(scan, "CHUNK", 16384)
    with memo.fastpath(False):
        every = records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2)
    counted = _counted(monkeypatch)
    in_python = chatty.count_in(monkeypatch, scan, "_copy_time", lambda t: 1)
    with memo.fastpath(True):
        folded = records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2)
    assert folded == every
    assert counted[0] > 1000, "the fold did not engage: the test would prove nothing"
    if scan._fold_run is not None:
        assert in_python[0] * 20 < counted[0], (in_python[0], counted[0])


@pytest.mark.parametrize("stranger", [False, True])
def test_a_hosts_copies_within_its_kin_pools_ranges_are_counted_in_c_as_they_grow(
        analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stranger: bool) -> None:
    """One central syslog (issue 27's shape i): each host's mlx5 noise, whose stamp and uptime grow with every line,
    so that the kin pool's ranges (every host's copies read in full) grow past each host's own. A host's copy within
    the pool's ranges (its own host's bytes aside) is counted in C on its variant (the table entry's `kin`: the
    pool's ranges as they grow, indexed by the host's bytes alone, its stamp not earlier than the pool's earliest),
    not borrowed in Python once per host and second, nor again at each change of the hour or after the clock went
    back, nor one copy in 64 (a C call's count of variants): few borrows, and the bytes of reading every line. Near
    miss (`stranger`): a host outside the allocation prints the same line (its header is not peeled: an outcome that
    is no kin of the others), so the shape's variants are not all one pool's and no entry reads the pool (its copies
    borrow in Python, as before)."""
    names = [f"node-{100 + i:03d}" for i in range(80)]  # more than one C call counts on (scan._FOLD_MAX_COUNTED)
    out = tmp_path / "kin-pool-grows"
    chatty._central_syslog_workload(out, names)
    rng = random.Random(44)
    t = chatty.T0 + timedelta(minutes=50)  # (the hour's digit changes: bytes every entry held alike until then)
    lines: list[str] = []
    for r in range(60):
        if r == 40:
            t -= timedelta(minutes=3)  # the clock goes back: the pool's earliest stamp stands for each host's
        for host in names + (["node-950"] if stranger and r % 4 == 0 else []):
            t += timedelta(milliseconds=rng.randrange(5, 400))
            lines.append(chatty._mlx5_cmd_err(rng, t, host, 618100 + int((t - chatty.T0).total_seconds())))
    (out / "syslog").mkdir(parents=True)
    (out / "syslog" / "messages").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with memo.fastpath(False):
        every = records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2)
    borrows = [0]
    real_borrow = fold._borrow

    def borrow(v: Any, kin: Any, x: int) -> None:
        borrows[0] += 1
        real_borrow(v, kin, x)

    pooled = [False]
    real_end = fold.LineFold.end_file

    def end_file(self: fold.LineFold) -> None:
        pooled[0] |= any(sh.kin_tabled for sh in self._shapes.values())
        real_end(self)

    monkeypatch.setattr(fold, "_borrow", borrow)
    monkeypatch.setattr(fold.LineFold, "end_file", end_file)
    counted = _counted(monkeypatch)
    with memo.fastpath(True):
        folded = records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2)
    assert folded == every
    assert counted[0] > 2000, "the fold did not engage: the test would prove nothing"
    if scan._fold_run is not None:
        assert pooled[0] != stranger
        if not stranger:  # (a borrow per host at its first copy, at the hour's change and after the clock went back)
            assert borrows[0] * 20 < counted[0], (borrows[0], counted[0])


def test_a_shape_reads_its_kin_pool_in_c_only_while_every_variant_is_a_kin_fixed_at_its_own_bytes() -> None:
    """_Shape.mux: the own bytes every variant of a shape shares and holds fixed (a kin of one family each), else 0
    for good: a variant of no family (own 0), of other own bytes, or another family, or one whose ranges let an own
    byte vary."""
    own = int.from_bytes(b"\0\0\xff\xff\0\0")
    a, b = _variant(b"h 01 x"), _variant(b"h 02 x")
    a.own = b.own = own
    sh = fold._Shape()
    sh.kin[("family",)] = a
    sh.add(a)
    assert sh.mux == own and sh.mux_b == b"\0\0\xff\xff\0\0"
    sh.add(b)
    assert sh.mux == own
    b.widen(int.from_bytes(b"h 03 x"))  # its own bytes vary: no longer fixed there
    sh.changed(b)
    assert sh.mux == 0
    for other in (0, int.from_bytes(b"\0\xff\xff\xff\0\0")):
        sh = fold._Shape()
        sh.kin[("family",)] = a
        sh.add(a)
        c = _variant(b"h 04 x")
        c.own = other
        sh.add(c)
        assert sh.mux == 0, other
    sh = fold._Shape()
    sh.kin[("family",)] = a
    sh.add(a)
    sh.kin[("another",)] = b
    sh.add(b)
    assert sh.mux == 0


def test_a_copy_within_a_variants_pool_is_its_for_the_check_of_a_new_outcome() -> None:
    """_pooled(): a copy that C would count on a variant through its kin pool's ranges (its own host's bytes the
    variant's, the rest within the pool's, the pool warm) is held by it when a line of a new outcome that is no kin
    is read (LineFold._read then makes the shape unstable, as where the variant had borrowed in Python). Near
    misses: another host's bytes, a byte outside the pool's ranges, a pool not yet warm, a variant with no pool."""
    v = _variant(b"h 01 t 10")
    v.own = int.from_bytes(b"\0\0\xff\xff\0\0\0\0\0")
    pool = _variant(b"h 02 t 10")
    pool.widen(int.from_bytes(b"h 03 t 19"))
    pool.widen(v.rep)  # (a pool holds each of its variants' copies read)
    pool.reads = fold.WARM
    v.kin = pool
    assert fold._pooled(v, int.from_bytes(b"h 01 t 15"))
    assert not v.holds(int.from_bytes(b"h 01 t 15"))  # (its own ranges, not borrowed: C's count of it)
    assert not fold._pooled(v, int.from_bytes(b"h 02 t 15"))  # another host's
    assert not fold._pooled(v, int.from_bytes(b"h 01 t 20"))  # outside the pool's
    pool.reads = fold.WARM - 1
    assert not fold._pooled(v, int.from_bytes(b"h 01 t 15"))
    v.kin = None
    assert not fold._pooled(v, int.from_bytes(b"h 01 t 15"))


def test_the_host_and_ranks_a_line_spells_are_its_own_and_nothing_else_is() -> None:
    """_own(): an offer's host and a signature's or an offer's rank that the line itself spells become the line's
    own (two hosts' copies of a syslog line, two ranks' of a tagged NCCL retry: kin), with the bytes that spell
    them. Near misses: a host the line does not spell (a Ray ip from elsewhere), a rank that is only part of a
    longer number (rank 1 in `[1,12]`: the tag's job id alone is no rank), a device, another template."""
    a = b"Nov  2 10:00:01 node-17 kernel: [618100.1] mlx5_core: failed"
    b = b"Nov  2 10:00:01 node-42 kernel: [618100.1] mlx5_core: failed"
    own_a, mask_a = fold._own(((), False, ("k", "node-17", None, None)), a)
    own_b, mask_b = fold._own(((), False, ("k", "node-42", None, None)), b)
    assert own_a == own_b and mask_a == mask_b
    assert mask_a.to_bytes(len(a)) == b"\0" * 16 + b"\xff" * 7 + b"\0" * (len(a) - 23)
    assert fold._own(((), False, ("other", "node-42", None, None)), b)[0] != own_a
    assert fold._own(((), False, ("k", "10.0.0.7", None, None)), b) == (((), False, ("k", "10.0.0.7", None, None)), 0)
    sig = (("nccl.remote_error", "application", "mpirun.out", None, 12, "gpu0", None), 1)
    line = b"[1,12]<stderr>:node-01:41005:41105 [0] NCCL WARN NET/Socket : retrying"
    rel, mask = fold._own(((sig,), False, None), line)
    assert rel[0][0][0][4] is fold._LINE and mask.to_bytes(len(line))[3:5] == b"\xff\xff"
    assert fold._own(((sig,), False, None), line.replace(b"[1,12]", b"[1,13]"))[1] == 0  # 12 not spelled
    one = (("nccl.remote_error", "application", "mpirun.out", None, 1, "gpu0", None), 1)
    assert fold._own(((one,), False, None), b"[1,12]<stderr>:x 12")[1].to_bytes(19)[1:2] == b"\xff"
    assert fold._own(((one,), False, None), b"[0,12]<stderr>:x 12")[1] == 0  # inside 12 only: not its own
    dev = (("nccl.remote_error", "application", "mpirun.out", None, None, "12", None), 1)
    assert fold._own(((dev,), False, None), line)[1] == 0  # a device stays as read


def test_two_gpus_whose_addresses_differ_in_their_letters_alone_stay_two_gpus(
        analyzer: Analyzer, tmp_path: Path) -> None:
    """The near miss of the masked PCI address: amdgpu's XGMI counts on `0000:9d:00.0` and `0000:dd:00.0` are one
    shape, but the address is the event's device: the fold keeps a variant per GPU (the bytes it holds fixed), and
    the verdict shows an event on each, as reading every line does."""
    case = chatty.pci_noise_in_one_syslog(tmp_path)
    with memo.fastpath(True):
        v = json.loads(records.dumps(analyzer.analyze_path(str(case.path), now=NOW), indent=2))
    accel = [e["text"] for e in v["evidence"] if e["event"] == "gpu.accel_error"]
    assert any("amdgpu 0000:9d:00.0:" in t for t in accel) and any("amdgpu 0000:dd:00.0:" in t for t in accel)


@pytest.mark.skipif(stamp_local_us is None, reason="the C module is not built")
def test_an_mpirun_tagged_line_and_a_ucx_unix_time_are_read_in_c() -> None:
    """Open MPI's --tag-output before a line (issue 27's shape j): UCX's Unix time behind it is read in C where the
    zone has one offset (UTC, Etc/GMT-3: its local count), and a tagged line with no time of day, Unix time or
    libfabric word in it (a step line, a UserWarning behind its file:line) reads as none (-2: the walk back goes
    on in C). Near misses, left to Python (-1): a zone of two offsets (Berlin), a time of day behind the tag."""
    from zoneinfo import ZoneInfo

    from firstfault.timeparse import TimeParser

    # bench/shapes.py's gen_mpirun_ranks (UCX's ib_iface.c warning, torch's UserWarning, a step line)
    ucx = "[1,3050]<stderr>:[1733300000.993108] [gpu-0381:71694:0]      ib_iface.c:1093 UCX  WARN  failed to get port"
    warning = "[1,1528]<stderr>:/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py:1859: UserWarning: x"
    step = "[1,315]<stdout>:iter 0 | loss 2.28805 | grad_norm 0.9594 | 147 TFLOPS"
    end = datetime(2024, 12, 5, tzinfo=UTC)
    for zone in ("UTC", "Etc/GMT-3"):
        tz = ZoneInfo(zone)
        tp = TimeParser(tz, None, end)
        clock = fold.yearless_clock(tz, tp.year, tp.window_end)
        got = stamp_local_us(ucx.encode(), clock)
        stamp = tp.parse(ucx)
        assert got >= 0 and stamp is not None and _local_of(got).replace(tzinfo=tz).astimezone(UTC) == stamp.wall
        assert stamp_local_us(ucx[17:].encode(), clock) == got  # UCX's own log, untagged
        for line in (warning, step):
            assert stamp_local_us(line.encode(), clock) == -2 and tp.parse(line) is None
    berlin = ZoneInfo("Europe/Berlin")
    assert stamp_local_us(ucx.encode(), fold.yearless_clock(berlin, 2024, end)) == -1
    assert stamp_local_us(b"[1,3]<stdout>:2024-12-04 10:00:00 x", fold.yearless_clock(berlin, 2024, end)) == -1


@pytest.mark.skipif(stamp_local_us is None, reason="the C module is not built")
@given(st.lists(_LINES, min_size=1, max_size=12), st.sampled_from(["UTC", "Europe/Berlin"]), st.booleans())
@settings(max_examples=tier.examples(1500), deadline=None)
def test_a_walk_back_that_passes_over_the_lines_c_reads_as_none_finds_the_stamp_parsing_finds(
        lines: list[str], zone: str, srun: bool) -> None:
    """stamps.walk_back passes over, in C, the lines _lines.stamp_local_us reads as no stamp (prev_stamped's `read`):
    the stamp it finds is walk_back_py's, which parses every line, and neither counts the stamps it reads as none on
    the way (a walk back counts no stamp)."""
    from zoneinfo import ZoneInfo

    from firstfault.collect import stamps
    from firstfault.timeparse import TimeParser

    buf = "\n".join(line.replace("\n", " ") for line in lines).encode() + b"\n"
    window = (datetime(2026, 11, 2, tzinfo=UTC), datetime(2026, 11, 3, tzinfo=UTC))
    tp_c, tp_py = TimeParser(ZoneInfo(zone), *window), TimeParser(ZoneInfo(zone), *window)
    for end in range(len(buf), 0, -1):
        if buf[end - 1:end] != b"\n":
            continue
        assert stamps.walk_back(buf, end, tp_c, srun, -1, 1 << 30) == \
            stamps.walk_back_py(buf, end, tp_py, srun, -1, 1 << 30), (buf, end)
        assert tp_c.out_of_range == tp_py.out_of_range == 0


def _stampless_run(n: int) -> tuple[bytes, list[int]]:
    """A stamped line, then `n` step lines that hold a stamp's characters (`2.24211`: an uptime's form) and read as
    none, each followed by an unstamped warning (bench/shapes.py's gen_mpirun_ranks); the warnings' starts."""
    lines = [b"[1,3]<stderr>:[1733300000.993108] [gpu-0381:71694:0]      ib_iface.c:1093 UCX  WARN  failed"]
    for i in range(n):
        lines.append(b"[1,%d]<stdout>:iter %d | loss 2.%05d | grad_norm 0.9594 | 147 TFLOPS" % (i % 8, i, i))
        lines.append(b"[1,%d]<stderr>:/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py:1859: "
                     b"UserWarning: x" % (i % 8))
    buf = b"\n".join(lines) + b"\n"
    starts = [i + 1 for i in range(len(buf) - 1) if buf[i] == 10 and buf[i + 1:i + 9] == b"[1,0]<st"
              and b"UserWarning" in buf[i + 1:buf.index(b"\n", i + 1)]]
    return buf, starts


@pytest.mark.skipif(stamp_local_us is None, reason="the C module is not built")
def test_a_copy_far_from_its_stamp_is_timed_in_c_and_a_held_copys_walk_takes_c_s_answer() -> None:
    """An mpirun output whose stamps stopped reading (issue 27's shape j: UCX's Unix time grew an eleventh digit):
    a copy's walk back in C (_lines.copy_time, fold_run's) goes past 400 lines where the last walk's memo keeps
    it linear, so it answers what Python's walk (scan.py walk_far, no limit) answers instead of -1; and
    prev_stamp_us (stamps.walk_back: a held copy's walk, read_held's) from the same line, with the same stop and
    clock, takes that answer instead of walking the lines again, limit and all. Near misses: a buffer that is not
    a bytes object (no memo: -1 past 400 lines, as before), a stop after the stamp (no stamp: -4), a limit short of
    the stamp (none found, as walking finds none), and another stop (walked afresh)."""
    from firstfault import _lines

    clock = fold.yearless_clock(UTC, 2024, datetime(2024, 12, 5, tzinfo=UTC))
    buf, starts = _stampless_run(600)
    far = starts[-1]
    end = buf.index(b"\n", far)
    stamp_us = stamp_local_us(buf[:buf.index(b"\n")], clock)
    assert stamp_us >= 0
    # no memo (a bytearray): past 400 lines C leaves it to Python
    assert _lines.copy_time(bytearray(buf), far, end, -1, clock) == -1
    assert _lines.copy_time(buf, far, end, -1, clock) == stamp_us
    assert _lines.copy_time(buf, far, end, 5, clock) == -4  # the stop after the stamp: no stamp back to it
    lines_back = buf.count(b"\n", 0, far)
    fresh = bytes(bytearray(buf))  # (another object: no memo applies)
    for stop in (-1, 5):
        _lines.copy_time(buf, far, end, stop, clock)  # the memo: this walk's answer
        for limit in (1 << 30, lines_back, lines_back - 1, 3):
            got = _lines.prev_stamp_us(buf, stop, far, limit, clock)
            want = _lines.prev_stamp_us(bytes(bytearray(fresh)), stop, far, limit, clock)
            assert got == want, (stop, limit, got, want)
            assert (got[0] == 0 and got[3] == stamp_us) == (stop == -1 and limit >= lines_back), (stop, limit, got)
    _lines.copy_time(buf, far, end, -1, clock)
    assert _lines.prev_stamp_us(buf, 5, far, 1 << 30, clock) == _lines.prev_stamp_us(fresh, 5, far, 1 << 30, clock)


@pytest.mark.skipif(stamp_local_us is None, reason="the C module is not built")
@given(st.lists(st.sampled_from([0, 1, 1, 1, 2, 3]), min_size=1, max_size=40),
       st.lists(st.tuples(st.integers(0, 200), st.integers(-1, 60), st.integers(1, 50), st.booleans()), max_size=30))
@settings(max_examples=400, deadline=None)
def test_walks_that_take_the_last_walks_answer_answer_as_walking_every_line(
        kinds: list[int], calls: list[tuple[int, int, int, bool]]) -> None:
    """Any sequence of copy_time and prev_stamp_us calls on one buffer (the memo of the last walk kept and taken
    where it applies) answers as each call on a buffer of its own (a fresh walk): lines with a stamp C reads, with a
    stamp's characters and none, without them, and with a stamp C leaves to Python (a zone of two offsets aside,
    the ISO stamp with a UTC offset)."""
    from firstfault import _lines

    clock = fold.yearless_clock(UTC, 2024, datetime(2024, 12, 5, tzinfo=UTC))
    text = (b"[1,3]<stderr>:[1733300000.993108] [gpu-0381:71694:0]      ib_iface.c:1093 UCX  WARN  failed",
            b"[1,0]<stdout>:iter 7 | loss 2.24211 | grad_norm 0.9594 | 147 TFLOPS",
            b"[1,1]<stderr>:UserWarning: x",
            b"2024-12-04T10:00:00+05:00 a stamp with an offset")
    buf = b"\n".join(text[k] for k in kinds) + b"\n"
    starts = [0] + [i + 1 for i in range(len(buf) - 1) if buf[i] == 10]
    for at, stop, limit, copy in calls:
        pos = starts[at % len(starts)]
        stop = min(stop, pos - 1)
        if copy and pos < len(buf):
            end = buf.index(b"\n", pos)
            assert _lines.copy_time(buf, pos, end, stop, clock) == \
                _lines.copy_time(bytes(bytearray(buf)), pos, end, stop, clock), (pos, stop)
        else:
            assert _lines.prev_stamp_us(buf, stop, pos, limit, clock) == \
                _lines.prev_stamp_us(bytes(bytearray(buf)), stop, pos, limit, clock), (pos, stop, limit)


def test_a_hex_word_changes_a_shapes_hits_only_where_it_meets_a_hex_id() -> None:
    """_same_hits: a literal that a hex id could hold in part (`dead `, `ECC `) may differ between the lines of a
    shape only where its place meets one of the shape's hex ids (memo.hex_spans). A syslog header's host digits
    beside `Dec ` (hex letters) are no hex id: such a shape with a PCI address elsewhere keeps its hits (its lines
    pass over in C). Near misses: the word over a hex id that has letters, and a PCI address (`ab:cd` in one line
    of the shape). A hex id of digits alone keeps its hits, as before (the byte ranges guard its copies)."""
    lf = fold.LineFold(None, None)  # type: ignore[arg-type]
    lf.start_file(hex_words=memo.hex_words([b"dead ", b"Dec "]))
    syslog = b"Dec  4 10:00:01 node-0123 kernel: igb 0000:d5:00.1 eno2: Reset adapter"
    assert lf._same_hits(memo.line_shape(syslog), syslog)
    for raw in (b"id deadbeef ok", b"id 1234beef ok"):
        assert not lf._same_hits(memo.line_shape(raw), raw), raw
    assert lf._same_hits(memo.line_shape(b"x 0000:00:00.0 dead y"), b"x 0000:00:00.0 dead y")  # beside it
    assert lf._same_hits(memo.line_shape(b"id 12345678 ok"), b"id 12345678 ok")
    lf.start_file(hex_words=memo.hex_words([b"ab:cd"]))
    assert not lf._same_hits(memo.line_shape(b"x 0000:12:3d.0 y"), b"x 0000:12:3d.0 y")
    assert not lf._same_hits(memo.line_shape(syslog), syslog)
    assert memo.hex_spans(memo.line_shape(syslog)) == [(38, 48)]  # `0000:00:00`, its function a digit


def test_files_learn_together_by_their_scanners_word_list_not_by_the_scanner_object(tmp_path: Path) -> None:
    """A file's lessons are those of its kind: the scanner's source and prefilter words (by the interned word list's
    identity, which stands for its words: scan._KEYS), zone, year and srun labels. Two scanners built apart for one
    source share one word list and one kind's lessons; near miss: a scanner of another source (other words) and the
    same scanner reading srun-labelled files each learn alone."""
    from firstfault.collect.events import EventStore
    from firstfault.collect.scan import Extraction, LineScanner, all_line_extractors
    from firstfault.timeparse import TimeParser

    case = chatty.kernel_noise_on_every_node(tmp_path, nodes=2, copies=40)
    path = case.path / "nodes" / "node-01" / "kern.log"
    ex = Extraction(all_line_extractors(), hosts=["node-01", "node-02"])
    tp = TimeParser(UTC, datetime(2026, 11, 2, tzinfo=UTC), datetime(2026, 11, 3, tzinfo=UTC))
    first, again, other = (LineScanner(kind, all_line_extractors()) for kind in ("kernel", "kernel", "application"))
    assert first.matcher is not again.matcher and first.matcher.key is again.matcher.key
    assert other.matcher.key != first.matcher.key
    for scanner, srun in ((first, False), (again, False), (other, False), (first, True)):
        with memo.fastpath(True):
            scanner.scan_file(str(path), "nodes/node-01/kern.log", node="node-01", rank=None, srun_prefix=srun, tp=tp,
                              emit=lambda c: None, fold=fold.LineFold(ex, EventStore()))
    assert len(ex.fold_lessons) == 3  # kernel (twice), application, kernel with srun labels


def _entry(line: bytes, fixed: set[int], variant: object,
           risk: tuple[tuple[int, bytes], ...] | None = None) -> tuple[Any, ...]:
    """A table entry for copies of `line` whose digits vary 0-9 but at the offsets `fixed`."""
    lo = bytes(b if i in fixed or not chr(b).isdigit() else 0x30 for i, b in enumerate(line))
    hi = bytes(b if i in fixed or not chr(b).isdigit() else 0x39 for i, b in enumerate(line))
    return (lo, hi, b"", variant, None) if risk is None else (lo, hi, b"", variant, None, risk)


def test_a_table_indexed_by_the_bytes_its_entries_hold_fixed_counts_each_copy_on_its_own_entry() -> None:
    """LineFold.table_add indexes a shape's entries by the bytes every entry holds fixed (a host's digits in a central
    syslog: fold._Tabled), and _lines.c looks a line up by its own bytes there: a copy of a host with an entry folds
    on it, a host with none stops the loop (Python reads it). Near miss: one host's Xid 13 on two GPUs whose bus
    addresses differ in one digit (`3b`, `5b`, one shape): each copy counts on its own GPU's entry, never on the
    other's, whichever was tabled first. An entry's risk (a hex id that may spell a prefilter literal: _at_risk):
    a copy that spells it there stops the loop, its hits are not the variant's."""
    if scan._fold_run is None:
        pytest.skip("the C module (_lines) is not built")
    line = b"Dec  4 10:00:01 node-0123 kernel: NVRM: Xid (PCI:0000:3b:00): 13, pid=1234, name=python3"
    host = set(range(21, 25))  # `0123`
    gpu_a, gpu_b = object(), object()
    shape = memo.line_shape(line)
    e_a = _entry(line, host | {54}, gpu_a)
    e_b = _entry(line.replace(b"3b:00", b"5b:00"), host | {54}, gpu_b)
    fixed = int.from_bytes(bytes(0xFF if a == b else 0 for a, b in zip(e_a[0], e_a[1], strict=True)))
    t = fold._Tabled(shape, fixed)
    for e in (e_b, e_a):
        t.index.setdefault(t.key(e[0]), []).append(e)
    assert sorted(t.index) == [b"0123" + b"3", b"0123" + b"5"]  # (the GPU digit holds fixed in both entries too)
    table: dict[bytes, Any] = {shape: t.value}
    copies = [line.replace(b"10:00:01", b"10:00:0" + str(i).encode()).replace(b"3b:00", bus)
              for i, bus in enumerate((b"3b:00", b"5b:00", b"5b:00", b"3b:00"))]
    other_host = line.replace(b"node-0123", b"node-0124")
    buf = b"\n".join([*copies, other_host, copies[0]]) + b"\n"
    pos, line_no, n, held, counts, _passed = scan._fold_run(buf, 0, 0, table, None, set(), -1)
    assert (line_no, n) == (4, 4) and buf[pos:].startswith(other_host)
    assert held is not None and held[3] is gpu_a  # the fourth copy, held (read in full when the next line is not one)
    assert sorted((id(v), k) for v, k in counts) == sorted([(id(gpu_a), 1), (id(gpu_b), 2)])
    # The rekey of fewer bytes (an entry that lets the GPU digit vary) keeps every entry under its line's key.
    t.rekey(int.from_bytes(bytes(0xFF if i in host else 0 for i in range(len(line)))), len(line))
    assert list(t.index) == [b"0123"] and len(t.index[b"0123"]) == 2
    assert scan._fold_run(buf, 0, 0, {shape: t.value}, None, set(), -1)[2] == 4
    # Risk: a page whose hex digits spell `EDAC ` (upper case: the literal) has other hits than its shape's others.
    edac = b"Dec  4 10:00:01 node-0123 kernel: EDAC MC3: 1 CE memory read error (page:0x1bead offset:0x0)"
    at = edac.index(b"bead ")
    lo, hi, *rest = _entry(edac, host, gpu_a, ((at, b"EDAC "),))
    page = range(at - 1, at + 4)  # the page's hex digits took every value from `0` to `f` in the copies read
    risky = (bytes(0x30 if i in page else b for i, b in enumerate(lo)),
             bytes(0x66 if i in page else b for i, b in enumerate(hi)), *rest)
    lf = fold.LineFold(None, None)  # type: ignore[arg-type]
    lf.start_file(hex_words=memo.hex_words([b"EDAC "]), hex_literals=memo.hex_literals([b"EDAC ", b"Xid "]))
    assert lf._at_risk(memo.line_shape(edac)) == ((at, b"EDAC "),)
    assert fold._spells_none(edac, ((at, b"EDAC "),))
    spelled = edac.replace(b"1bead ", b"1EDAC ")
    assert not fold._spells_none(spelled, ((at, b"EDAC "),))
    t = fold._Tabled(memo.line_shape(edac), int.from_bytes(bytes(0xFF if i in host else 0 for i in range(len(edac)))))
    t.index.setdefault(t.key(risky[0]), []).append(risky)
    buf = b"\n".join([edac, edac.replace(b"1bead", b"7bead"), spelled, edac]) + b"\n"
    pos, line_no, n, *_ = scan._fold_run(buf, 0, 0, {t.shape: t.value}, None, set(), -1)
    assert (line_no, n) == (2, 2) and buf[pos:].startswith(spelled)
    # Near misses of _at_risk: a word with a digit in the shape, and a hex word whose literals are not known.
    lf.start_file(digit_words=(b"MC0",), hex_words=memo.hex_words([b"EDAC "]),
                  hex_literals=memo.hex_literals([b"EDAC "]))
    assert lf._at_risk(memo.line_shape(edac)) is None
    lf.start_file(hex_words=memo.hex_words([b"EDAC "]))
    assert lf._at_risk(memo.line_shape(edac)) is None


def test_lines_of_every_length_end_and_mask_in_c_as_a_newline_and_their_shape_say() -> None:
    """fold_run finds a line's end, masks its digits and tells an ASCII line in one pass, 16 bytes at a time
    (_lines.c line_masked, where SSE2 is there): a quiet line of any length up to FOLD_MAX_LINE (2,000 bytes), the
    newline in any place of its last 16 bytes, is passed over. Near misses: a line of 2,001 bytes whose shape is
    quiet (longer than a shape: Python reads it), a byte over 0x7f before the newline (in the first 16 bytes or past
    them), and a line with no newline stop the loop; a byte over 0x7f after the newline, in the same 16 bytes, is
    the next line's and does not stop it."""
    if scan._fold_run is None:
        pytest.skip("the C module (_lines) is not built")

    def line(n: int) -> bytes:
        return bytes(b"step 12 of 345: loss 6.78 ok "[i % 29] for i in range(n))

    for n in (1, 2, 15, 16, 17, 31, 32, 33, 47, 48, 100, 1999, 2000, 2001):
        raw = line(n)
        quiet = {memo.line_shape(raw), memo.line_shape(b"x")}
        buf = raw + b"\n" + b"x\n" + b"other line\n"
        pos, line_no, *_, passed = scan._fold_run(buf, 0, 0, {}, None, quiet, -1)
        if n <= 2000:
            assert (pos, line_no, passed) == (n + 3, 2, 2), n
        else:
            assert (pos, line_no, passed) == (0, 0, 0), n
        assert buf[pos:].startswith(b"other line" if n <= 2000 else raw)
    raw = line(40)
    quiet = {memo.line_shape(raw)}
    for at in (3, 15, 16, 39):
        bad = raw[:at] + b"\xc3" + raw[at + 1:]
        quiet.add(memo.line_shape(bad))
        assert scan._fold_run(raw + b"\n" + bad + b"\n", 0, 0, {}, None, quiet, -1)[5] == 1, at  # stops at `bad`
    assert scan._fold_run(b"ok 1\n\xc3\xa9 2\n", 0, 0, {}, None, {b"ok 0"}, -1)[:2] == (5, 1)
    assert scan._fold_run(raw + b"\n" + raw, 0, 0, {}, None, quiet, -1)[:2] == (41, 1)  # the last line: no newline


def test_a_shape_found_quiet_is_passed_over_for_the_rest_of_one_c_loop_and_asked_again_in_the_next() -> None:
    """fold_run keeps, on a shape's memo slot, that this call found it quiet (the table and the quiet set do not
    change while it runs): its next lines in the call are passed over without a probe of either. Near misses: the
    next call asks again, so a shape no longer quiet stops it, and one the table now holds folds on its entry;
    with the shape memo off (each line its own shape object), the same answers."""
    if scan._fold_run is None:
        pytest.skip("the C module (_lines) is not built")
    from firstfault import _lines

    line = b"Dec  4 10:00:01 node-0123 systemd[1]: session-4501.scope: Deactivated successfully."
    buf = b"".join(line.replace(b"4501", b"45%02d" % i) + b"\n" for i in range(30))
    shape = memo.line_shape(line)
    v = object()
    was = _lines.fold_shape_memo(True)
    try:
        for memo_on in (True, False):
            _lines.fold_shape_memo(memo_on)
            assert scan._fold_run(buf, 0, 0, {}, None, {shape}, -1)[5] == 30
            assert scan._fold_run(buf, 0, 0, {}, None, set(), -1)[:3] == (0, 0, 0)
            got = scan._fold_run(buf, 0, 0, {shape: [_entry(line, set(), v)]}, None, {shape}, -1)
            assert got[2] == 30 and got[5] == 0 and got[3] is not None and got[3][3] is v
            assert scan._fold_run(buf, 0, 0, {}, None, {shape}, -1)[5] == 30
    finally:
        _lines.fold_shape_memo(was)


def test_an_index_lookup_kept_within_one_c_loop_counts_each_host_on_its_own_entry() -> None:
    """Within one fold_run call, the entries list a shape's index gave its last line are tried first for the next
    line of the shape (_lines.c index_memo): an entry that holds the line holds the index's bytes at its key, so the
    lookup would give that list. On a central syslog whose hosts' copies interleave (each host an entry of its own,
    indexed by its digits), one call over every line counts what a call per line (no list kept) counts, copy by
    copy. Near misses: a host with no entry stops the loop right after a copy of a host the call just looked up, and
    a copy outside its host's ranges (a digit its entry never saw) stops it though the list kept holds its host."""
    if scan._fold_run is None:
        pytest.skip("the C module (_lines) is not built")
    base = b"Dec  4 10:00:01 node-0123 kernel: mlx5_core: cmd failed, status bad parameter(0x3), syndrome 5"
    host = set(range(21, 25))
    shape = memo.line_shape(base)
    hosts = [b"%04d" % h for h in (123, 124, 200, 777)]
    variants = {h: object() for h in hosts}
    entries = [_entry(base.replace(b"0123", h), host | {len(base) - 1}, variants[h]) for h in hosts]
    fixed = int.from_bytes(bytes(0xFF if a == b else 0 for a, b in zip(entries[0][0], entries[0][1], strict=True)))
    t = fold._Tabled(shape, fixed)
    for e in entries:
        t.index.setdefault(t.key(e[0]), []).append(e)
    assert len(t.index) == 4
    rng = random.Random(27)
    lines = [base.replace(b"0123", rng.choice(hosts)).replace(b"10:00:01", b"10:%02d:%02d" % (rng.randrange(60),
                                                                                             rng.randrange(60)))
             for _ in range(400)]
    buf = b"\n".join(lines) + b"\n"
    whole = scan._fold_run(buf, 0, 0, {shape: t.value}, None, set(), -1)
    assert whole[:3] == (len(buf), 400, 400)
    one_by_one: dict[int, int] = {}
    for i, raw in enumerate(lines):
        got = scan._fold_run(raw + b"\n", 0, 0, {shape: t.value}, None, set(), -1)
        assert got[2] == 1 and got[3] is not None and got[3][3] is variants[raw[21:25]], i
        if i < len(lines) - 1:
            one_by_one[id(got[3][3])] = one_by_one.get(id(got[3][3]), 0) + 1
    assert whole[3][3] is variants[lines[-1][21:25]]  # the last copy held, the others counted on their own hosts
    assert sorted((id(v), k) for v, k in whole[4]) == sorted(one_by_one.items())
    stranger = base.replace(b"0123", b"0999")
    off_range = base.replace(b"syndrome 5", b"syndrome 7")  # node-0123's entry holds `5` fixed there
    for other in (stranger, off_range):
        buf = b"\n".join([lines[0], lines[1], base, other, base]) + b"\n"
        pos, line_no, n, *_ = scan._fold_run(buf, 0, 0, {shape: t.value}, None, set(), -1)
        assert (line_no, n) == (3, 3) and buf[pos:].startswith(other)


def test_the_table_keeps_its_index_by_a_hosts_bytes_when_one_variant_lets_them_vary() -> None:
    """table_add indexes a shape's entries by the bytes all of them hold fixed: one variant whose copies vary where
    the others spell their host (a line whose outcome names no host, of the same shape) would put every host's
    entry under one key, which C compares a line with one by one (mux39's 512 entries a line). Such a variant stays
    out of the table (its copies are looked up in Python), the index by the host's bytes as it was; one that lets a
    byte vary that does not tell the hosts apart (a later minute) is indexed by fewer bytes."""
    lf = fold.LineFold(None, None)  # type: ignore[arg-type]
    lf.start_file()

    def variant(host: int, *more: bytes) -> tuple[bytes, fold._Variant]:
        raw = b"Dec  4 10:00:01 node-%04d kernel: mlx5_core: failed, status bad parameter" % host
        v = fold._Variant(int.from_bytes(raw), None, fold.Reading(((), False, None), None, True), fold.WARM,
                          len(raw), 0, True)
        for m in more:
            v.widen(int.from_bytes(m))
        return raw, v

    for h in range(40):
        lf.table_add(*variant(h))
    shape = next(iter(lf._tabled))
    t = lf._tabled[shape]
    assert t.n == 40 and len(t.index) == 40 and max(map(len, t.index.values())) == 1
    raw, anyhost = variant(0, *(b"Dec  4 10:00:01 node-%04d kernel: mlx5_core: failed, status bad parameter" % h
                                for h in range(0, 1000, 7)))
    lf.table_add(raw, anyhost)
    assert anyhost.tabled != lf._gen and len(t.index) == 40 and t.n == 40  # kept out, the index as it was
    raw, later = variant(41, b"Dec  4 10:07:01 node-0041 kernel: mlx5_core: failed, status bad parameter")
    lf.table_add(raw, later)
    assert later.tabled == lf._gen and t.n == 41 and len(t.index) == 41  # the minute out of the key, hosts in it


def test_a_chunk_read_outside_the_fold_reads_its_candidates_in_order_with_their_times(
        analyzer: Analyzer, tmp_path: Path) -> None:
    """scan.py's plain loop (a chunk none of whose candidates may be counted: each read with pass_on, in order, no
    fold step between them): the verdict bytes of reading every line, where a candidate's stamp is one C reads,
    one it leaves to Python, none (the time of the candidate before), and outside the years (read as none, and
    counted); with WARM + 1 copies (the near miss) the chunk goes through the fold and gives the same bytes."""
    for copies in (2, fold.WARM + 1):
        out = _rank_logs(tmp_path / str(copies), copies, files=4)
        for r in range(4):
            p = out / "app" / f"rank-{r}.log"
            p.write_text("0999-10-14 09:00:00,000 INFO a stamp outside the years: NCCL error\n"
                         + p.read_text(encoding="utf-8")
                         + "2026-11-02T10:00:09+02:00 NCCL WARN an offset C leaves to Python\n"
                         + "  RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970\n",
                         encoding="utf-8")
        with memo.fastpath(False):
            every = records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2)
        with memo.fastpath(True):
            assert records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2) == every
        assert "outside the years" in every


# CRAB's RetryJob line (tests/wild, an HTCondor CRAB thread's job log), its exit code read by the generic exit table
# (catalog/exits.yaml: 128+N is signal N): from the full tier's draw of real lines whose digits were changed at random.
_RETRY_JOB = ("Tue, 21 Mar 2026 09:17:46 CET(+0100):INFO:RetryJob Job or stageout wrapper finished with exit code {}. "
              "Trying to determine the meaning of the exit code and if it is a recoverable or fatal error.")


@pytest.mark.parametrize("odd", ["00177", "01177"])
def test_an_exit_code_read_by_its_value_is_no_copy_of_the_others(
        odd: str, analyzer: Analyzer, tmp_path: Path) -> None:
    """Hundreds of copies of a line whose exit code's digits range over every value of each byte (no signal: codes
    over 255), and one whose code is 177 (128+49: a signal). The byte ranges of the copies read hold 00177, but its
    reading hangs on the code's value (extract/signals.py sets LineContext.keyed): it is read, not counted as a copy
    of the unrecognized others, on both paths alike. Near miss: 01177 reads as the others (no signal)."""
    out = tmp_path / f"retry-job-{odd}"
    chatty._workload(out, "- {kind: application, path: 'app/rank-0.log'}\n")
    log = out / "app" / "rank-0.log"
    log.parent.mkdir(parents=True)
    rng = random.Random(5)
    codes = [c for c in (f"{rng.randrange(100000):05d}" for _ in range(600)) if int(c) > 255][:400]
    codes[250] = odd  # (each byte of the others has ranged over 0-9 before it)
    log.write_text("\n".join(_RETRY_JOB.format(c) for c in codes) + "\n", encoding="utf-8")
    with memo.fastpath(False):
        every = records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2)
    with memo.fastpath(True):
        folded = records.dumps(analyzer.analyze_path(str(out), now=NOW), indent=2)
    assert folded == every
    unread = [u["count"] for u in json.loads(every)["unrecognized"] if "RetryJob" in u["template"]]
    assert unread == [399 if odd == "00177" else 400]
