"""A kernel line stamped with an uptime alone (dmesg's `[ 7261.123456]`) takes its wall-clock time from the boot time
of the nearest line before it with both stamps (a syslog line's `Nov  2 10:01:01 host kernel: [ 7260.402153]`):
collect/stamps.py Clock. The boot time is a function of the file's bytes, so the fold (which reads some copies of a
chatty syslog line and counts the others) and reading every line give such a line one time, and a reboot in the
file moves it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import load_bundle
from firstfault.collect import fold, scan, stamps
from firstfault.collect.evidence import collect_bundle
from firstfault.extract import memo
from firstfault.timeparse import TimeParser
from tests import tier

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
# Two boots of node-01, each at a fraction of a second the syslog stamps (whole seconds) drop.
BOOT1 = datetime(2026, 11, 2, 8, 0, 0, 612345, tzinfo=UTC)
BOOT2 = datetime(2026, 11, 2, 11, 0, 0, 871234, tzinfo=UTC)

# Real lines. The AER lines: tests/scenarios/hw-pcie-aer-fatal-then-xid79/nodes/c-gpu-022/kern.log (a syslog kern.log,
# its kernel lines stamped `Mon DD HH:MM:SS host kernel: [uptime]`). The Xid 79 line: leptonai/gpud's sxid README, as
# quoted in the project's domain notes (plain dmesg: the uptime alone).
AER = "pcieport 0000:00:01.1: AER: Corrected error received: 0000:00:01.1"
AER_DEVICE = "pcieport 0000:00:01.1: AER:   device [1022:14ab] error status/mask=00000001/0000e000"
XID79 = "NVRM: Xid (PCI:0000:{bus}:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."


def _uptime(u: float) -> str:
    return f"[{u:12.6f}]"  # dmesg's `[%5lu.%06lu]`, wider past 99,999 s


def _syslog(boot: datetime, u: float, text: str) -> str:
    wall = (boot + timedelta(seconds=u)).replace(microsecond=0)  # rsyslog's stamp: whole seconds
    return f"{wall.strftime('%b %e %H:%M:%S')} node-01 kernel: {_uptime(u)} {text}"


def _dmesg_t(boot: datetime, u: float, text: str) -> str:
    wall = boot + timedelta(seconds=u)  # dmesg -T: a wall-clock stamp alone, no uptime
    return f"[{wall.strftime('%a %b %e %H:%M:%S %Y')}] {text}"


def _kern_log(out: Path) -> dict[int, datetime]:
    """A node's kern.log: a chatty AER line in syslog form (with the uptime), some lines of plain dmesg (the uptime
    alone) and of dmesg -T (the wall clock alone) among them, an Xid 79 in plain dmesg; then the node reboots and
    it all comes again, another GPU falling off the bus. Returns each Xid line's number and its true time."""
    lines: list[str] = []
    truth: dict[int, datetime] = {}
    for boot, start, bus in ((BOOT1, 7260.402153, "91"), (BOOT2, 31.207771, "47")):
        u = start
        for i in range(1200):
            u += 0.731 + (i * 7919 % 1000) / 1e6
            lines.append(_syslog(boot, u, AER))
            if i % 7 == 3 or i >= 1170:  # the Xid after a run whose syslog copies are counted, not read
                lines.append(f"{_uptime(u + 0.000011)} {AER_DEVICE}")
            if i % 50 == 17:
                lines.append(_dmesg_t(boot, u + 0.5, AER))
        u += 0.3
        lines.append(f"{_uptime(u)} {XID79.format(bus=bus)}")
        truth[len(lines)] = boot + timedelta(seconds=u)
        for _ in range(40):
            u += 1.01
            lines.append(_syslog(boot, u, AER))
    (out / "nodes" / "node-01").mkdir(parents=True)
    (out / "nodes" / "node-01" / "kern.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\n"
        "workload:\n  id: '5150'\n  name: reboots\n  scheduler: slurm\n"
        "  window: {start: '2026-11-02T09:59:00Z', end: '2026-11-02T12:00:00Z'}\n"
        "  nodes: [node-01]\n  ranks: {node-01: 0-7}\n  timezone: UTC\n"
        "sources:\n- {kind: kernel, path: 'nodes/{node}/kern.log'}\n", encoding="utf-8")
    return truth


def _xid_times(analyzer: Analyzer, path: Path) -> dict[int, datetime]:
    analysis = analyzer.start(load_bundle(str(path)).context)
    collect_bundle(analyzer, load_bundle(str(path)), analysis)
    return {ev.evidence.line or 0: ev.time for ev in analysis.store.events
            if ev.kind == "gpu.xid" and ev.time is not None}


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer()


@pytest.mark.parametrize("chunk", [None, 4096])
def test_an_uptime_alone_takes_the_boot_of_the_nearest_line_with_both_on_every_path(
        chunk: int | None, analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fold counts most copies of the chatty syslog line (each copy's wall - uptime differs by the fraction
    its stamp dropped), yet both Xid lines get the verdict bytes of reading every line, and each its true time
    within the syslog stamp's second: the first boot's, then after the reboot the second's."""
    if chunk is not None:
        monkeypatch.setattr(scan, "CHUNK", chunk)  # the boot time carried across chunks (Clock.end_chunk)
    truth = _kern_log(tmp_path / "b")
    with memo.fastpath(False):
        every = records.dumps(analyzer.analyze_path(str(tmp_path / "b"), now=NOW), indent=2)
        slow = _xid_times(analyzer, tmp_path / "b")
    counted = [0]
    end_file = fold.LineFold.end_file

    def counting(self: fold.LineFold) -> None:
        counted[0] += sum(v.counted for sh in self._shapes.values() for v in sh.variants)
        end_file(self)

    monkeypatch.setattr(fold.LineFold, "end_file", counting)
    with memo.fastpath(True):
        assert records.dumps(analyzer.analyze_path(str(tmp_path / "b"), now=NOW), indent=2) == every
        fast = _xid_times(analyzer, tmp_path / "b")
    assert counted[0] > 1000, "the fold did not count the syslog copies: the test would prove nothing"
    assert fast == slow and set(fast) == set(truth)
    for line, t in truth.items():
        assert timedelta(0) <= t - fast[line] < timedelta(seconds=1), (line, fast[line], t)


def _clock(buf: bytes) -> tuple[stamps.Clock, TimeParser]:
    tp = TimeParser(UTC, datetime(2026, 11, 2, 9, 59, tzinfo=UTC), datetime(2026, 11, 2, 12, tzinfo=UTC))
    return stamps.Clock(tp, False), tp


BOTH = _syslog(BOOT1, 7300.25, AER).encode()
NEAR_MISSES = [
    f"{_uptime(7301.5)} {AER}",  # plain dmesg: the uptime alone
    f"[rank3]:{_uptime(7301.5)} {AER}",  # the uptime first behind a rank's prefix: alone too
    _dmesg_t(BOOT2, 5.0, AER),  # dmesg -T: the wall clock alone
    # a syslog stamp and UCX's Unix time in brackets (ten digits, 1e9 or more: no uptime)
    "Nov  2 11:00:09 node-01 python[4242]: [1762081209.123456] [node-01:4242:0] ucp_worker.c:1234 UCX ERROR",
    "2026-11-02 11:00:09,000 INFO step 1200 took 0.731 s",  # a wall-clock stamp, digits and a `.`, no bracket
]


@pytest.mark.parametrize("fast", [True, False])
def test_lines_with_one_stamp_are_not_the_boots_source(fast: bool) -> None:
    """Between the syslog line and the uptime alone lie lines with one stamp of either kind: the boot time is the
    syslog line's (wall - uptime), in C and in Python alike; with none before, the uptime reads to no time."""
    buf = b"\n".join([BOTH, *(m.encode() for m in NEAR_MISSES)]) + b"\n"
    clock, tp = _clock(buf)
    up = tp.parse(NEAR_MISSES[0])
    assert up is not None and up.wall is None and up.uptime == 7301.5
    with memo.fastpath(fast):
        assert clock.both_before(buf, len(buf)) is not None
        t = clock.wall_of(up, buf, len(buf))
        assert t is not None and abs(t - (BOOT1 + timedelta(seconds=7301.5))) < timedelta(seconds=1)
        rest = buf[len(BOTH) + 1 :]
        lone, _ = _clock(rest)
        assert lone.both_before(rest, len(rest)) is None and lone.wall_of(up, rest, len(rest)) is None


def test_the_nearest_line_with_both_is_taken_and_a_walk_leaves_the_parser_as_it_was() -> None:
    """A reboot between two syslog lines: an uptime after the second takes the second boot. Stamps outside the
    years that the walk back reads are not counted (a walk one path takes and another does not)."""
    second = _syslog(BOOT2, 40.5, AER).encode()
    bad = b"Nov  2 11:00:09 node-01 kernel: [   41.000000] x\n9999-12-31 23:59:59 y\n"
    buf = BOTH + b"\n" + second + b"\n" + bad
    clock, tp = _clock(buf)
    before = tp.out_of_range
    at = len(BOTH) + 1 + len(second) + 1
    b = clock.both_before(buf, at)
    assert b is not None and b[1] == 40.5 and abs(b[0] - timedelta(seconds=40.5) - BOOT2) < timedelta(seconds=1)
    early = clock.both_before(buf, len(BOTH) + 1)  # an earlier line than the last walk's: walked anew
    assert early is not None and early[1] == 7300.25
    assert clock.both_before(buf, len(buf)) is not None
    assert tp.out_of_range == before


def test_the_boot_carried_into_a_chunk_is_the_last_chunks() -> None:
    """Past a chunk's start, the boot time of the nearest line with both among the last CARRY_LINES of the chunk
    before; a chunk of none carries the one carried into it; a file of one chunk never walks for it."""
    first = BOTH + b"\n" + b"\n".join(m.encode() for m in NEAR_MISSES) + b"\n"
    plain = f"{_uptime(7400.0)} {AER}\n".encode() * 5
    clock, tp = _clock(first)
    up = tp.parse(NEAR_MISSES[0])
    clock.end_chunk(first)
    clock.end_chunk(plain)
    assert clock.wall_of(up) == clock.wall_of(up, plain, len(plain))
    t = clock.wall_of(up)
    assert t is not None and abs(t - (BOOT1 + timedelta(seconds=7301.5))) < timedelta(seconds=1)
    far = BOTH + b"\n" + plain * (stamps.CARRY_LINES // 5 + 1)
    clock2, _ = _clock(far)
    clock2.end_chunk(far)
    assert clock2.wall_of(up) is None  # its line with both lies past CARRY_LINES of the end


_LINE = st.lists(st.sampled_from(["[", "]", " ", "\t", "1", "0", "9", ".", ":", "N", "o", "v", "2", "-", "rank",
                                  "kernel:", "Nov  2 10:01:01 ", "2026-11-02 10:01:01 ", "[ 12.345678]", "é", "\x1c"]),
                 max_size=24).map("".join)


@settings(max_examples=tier.examples(300), deadline=None)
@given(_LINE)
def test_c_passes_over_no_line_with_both_stamps(line: str) -> None:
    """_lines.prev_booted's and booted_starts' test (may_hold_both) is a superset of parse's reading of both
    stamps, and the two walk the same lines."""
    from firstfault._lines import booted_starts, prev_booted

    raw = line.replace("\n", " ").encode()
    _, tp = _clock(raw)
    got = stamps.line_stamp(raw, tp, False)
    if got is not None and got.wall is not None and got.uptime is not None:
        assert prev_booted(raw + b"\n", -1, len(raw) + 1, 1)[0] == 0, line
    buf = raw + b"\n" + raw + b"\n"
    assert booted_starts(buf) == ([0, len(raw) + 1] if prev_booted(buf, -1, len(raw) + 1, 1)[0] == 0 else [])


_MIX = [BOTH.decode(), _syslog(BOOT2, 40.5, AER), *NEAR_MISSES, f"{_uptime(9.25)} {AER_DEVICE}", "no stamp at all"]


@settings(max_examples=tier.examples(200), deadline=None)
@given(st.lists(st.sampled_from(_MIX), min_size=1, max_size=30), st.lists(st.integers(0, 40), max_size=12),
       st.booleans())
def test_the_walks_memo_answers_as_a_fresh_walk_in_any_order(lines: list[str], asks: list[int], fast: bool) -> None:
    """Queries in any order (a held copy read after a later copy's time was worked out): the memo's answer is
    that of a walk from nothing, and a query between the last answer's line and the last walk's start walks not."""
    buf = ("\n".join(lines) + "\n").encode()
    starts = [0] + [i + 1 for i, b in enumerate(buf) if b == 0x0A]
    with memo.fastpath(fast):
        clock, _ = _clock(buf)
        for k in asks:
            at = starts[min(k, len(starts) - 1)]
            fresh, _ = _clock(buf)
            assert clock.both_before(buf, at) == fresh.both_before(buf, at), (lines, at)


def test_a_query_behind_the_last_walk_after_its_line_walks_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """A dmesg file of many lines with no line with both: one walk to its start, then none for the held copies
    read behind the last walk (the walks stay linear in the chunk)."""
    buf = b"".join(f"{_uptime(10.0 + i)} {AER_DEVICE}\n".encode() for i in range(300))
    clock, _ = _clock(buf)
    walks = [0]
    walk = stamps.Clock._walk

    def counting(self: stamps.Clock, *args: object) -> object:
        walks[0] += 1
        return walk(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(stamps.Clock, "_walk", counting)
    line = len(buf) // 300
    assert clock.both_before(buf, 250 * line) is None and walks[0] == 1
    for k in (10, 249, 0, 120):  # behind the last walk: answered by it
        assert clock.both_before(buf, k * line) is None
    assert walks[0] == 1
    assert clock.both_before(buf, 260 * line) is None and walks[0] == 2  # ahead: the ten lines between
