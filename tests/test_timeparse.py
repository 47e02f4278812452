"""Every timestamp form of the bundle spec, mixed zones and year inference."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.timeparse import TimeParser, parse_rfc3339

START = parse_rfc3339("2026-11-02T10:00:00Z")
END = parse_rfc3339("2026-11-02T11:00:00Z")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("2026-11-02T10:03:07.123456+00:00 node-02 kernel: NVRM: Xid", "2026-11-02T10:03:07.123456"),
        ("2026-11-02T12:03:07.5+02:00 node-02 kernel: x", "2026-11-02T10:03:07.500000"),
        ("2026-11-02T10:03:07.123456789Z stdout F line", "2026-11-02T10:03:07.123456"),
        ("Nov  2 10:03:07 node-02 kernel: [1234.567890] NVRM: Xid", "2026-11-02T10:03:07"),
        ("[Mon Nov  2 10:03:07 2026] NVRM: Xid", "2026-11-02T10:03:07"),
        ("2026-11-02 10:03:07,123 INFO step", "2026-11-02T10:03:07.123000"),
        (
            "[rank3]:[E1102 10:03:09.123456 4242 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog",
            "2026-11-02T10:03:09.123456",
        ),
        ("E1102 10:03:09.123456 4242 x.cc:1] y", "2026-11-02T10:03:09.123456"),
        # Recent PyTorch prints the month without zero padding.
        ("[rank1]:[E505 21:47:14.000321 77 ProcessGroupNCCL.cpp:616] x", "2026-05-05T21:47:14.000321"),
        ("[Nov 02 2026 10:03:07] [ERROR] [tid 1234] detected", "2026-11-02T10:03:07"),
        # blobfuse2's log header, date(1)'s form with the zone (Azure/azure-storage-fuse#1083)
        ("Tue Mar 14 14:49:09 GMT 2023 : blobfuse2[1429] : LOG_CRIT [mount.go (384)]: Starting Blobfuse2 Mount",
         "2023-03-14T14:49:09"),
        # gcsfuse's JSON (internal/logger/slog_helper.go: seconds, then nanoseconds, since the epoch)
        ('{"timestamp":{"seconds":1793613787,"nanos":12345678},"severity":"ERROR","message":"ReadFile: '
         'input/output error, x"}', "2026-11-02T10:03:07.012345"),
        # IBM Storage Scale's (GPFS) mmfs.log, its ISO form (`_` between date and time, a zone) and its earlier
        # ctime form with milliseconds (IBM Spectrum Scale 4.2.2 docs, "Time stamp in GPFS log entries")
        ("2026-11-02_05:03:07.603-0500: [E] Lost membership in cluster c1. Unmounting file systems.",
         "2026-11-02T10:03:07.603000"),
        ("2026-11-02_10:03:07.603: [I] Command: mount gpfs1", "2026-11-02T10:03:07.603000"),
        ("Mon Nov 02 10:03:07.603 2026: [E] Lost membership in cluster c1. Unmounting file systems.",
         "2026-11-02T10:03:07.603000"),
        # gcsfuse's JSON before v1, its Unix time last (GoogleCloudPlatform/gcsfuse#516)
        ('{"name":"root","levelname":"ERROR","severity":"ERROR","message":"fuse: *fuseops.SyncFileOp error: '
         'input/output error\\n","timestampSeconds":1793613787,"timestampNanos":12345678}',
         "2026-11-02T10:03:07.012345"),
        ("[default0]:2026-11-02 10:03:07,123 INFO", "2026-11-02T10:03:07.123000"),
        (
            "slurmstepd: error: *** JOB 55 ON gpu-q11 CANCELLED AT 2026-11-02T10:40:07 DUE TO TIME LIMIT ***",
            "2026-11-02T10:40:07",
        ),
    ],
)
def test_forms(line: str, expected: str) -> None:
    st = TimeParser(UTC, START, END).parse(line)
    assert st is not None and st.wall is not None
    assert st.wall.strftime("%Y-%m-%dT%H:%M:%S.%f").startswith(expected)


def test_a_ctime_zone_other_than_utc_takes_the_bundles_zone() -> None:
    berlin = TimeParser(ZoneInfo("Europe/Berlin"), START, END)
    st = berlin.parse("Mon Nov  2 11:03:07 CET 2026 : blobfuse2[1] : LOG_ERR x")
    assert st is not None and st.wall == datetime(2026, 11, 2, 10, 3, 7, tzinfo=UTC)
    st = berlin.parse("Mon Nov  2 10:03:07 UTC 2026 : blobfuse2[1] : LOG_ERR x")
    assert st is not None and st.wall == datetime(2026, 11, 2, 10, 3, 7, tzinfo=UTC)


# gcsfuse's text log (GoogleCloudPlatform/gcsfuse internal/logger/slog_helper.go customiseTimeFormat, Go's layout
# `02/01/2006 03:04:05.000000`): day before month, a 12-hour clock with no AM/PM, local time.
_GCSFUSE = 'time="02/11/2026 {hm}:07.437193" severity=ERROR message="ReadFile: input/output error, x" mount-id=a-1'


@pytest.mark.parametrize(("hm", "expected"), [
    ("10:03", datetime(2026, 11, 2, 10, 3, 7, 437193, tzinfo=UTC)),  # the morning reading is in the window
    ("12:30", datetime(2026, 11, 2, 12, 30, 7, 437193, tzinfo=UTC)),  # `12` is noon or midnight: noon is nearer
])
def test_gcsfuse_12_hour_stamp_takes_the_reading_in_the_window(hm: str, expected: datetime) -> None:
    st = TimeParser(UTC, START, END).parse(_GCSFUSE.format(hm=hm))
    assert st is not None and st.wall == expected


def test_gcsfuse_12_hour_stamp_in_an_evening_window_is_the_evening() -> None:
    tp = TimeParser(UTC, parse_rfc3339("2026-11-02T21:00:00Z"), parse_rfc3339("2026-11-02T23:00:00Z"))
    st = tp.parse(_GCSFUSE.format(hm="10:03"))
    assert st is not None and st.wall == datetime(2026, 11, 2, 22, 3, 7, 437193, tzinfo=UTC)


def test_gcsfuse_12_hour_stamp_in_a_day_long_window_follows_the_last_one_read() -> None:
    # near miss: both readings fall in a window longer than 12 hours; the first says nothing, then the one after
    # the last stamped reading that the file gave (here, one that only the afternoon could be)
    tp = TimeParser(UTC, parse_rfc3339("2026-11-02T00:00:00Z"), parse_rfc3339("2026-11-03T00:00:00Z"))
    assert tp.parse(_GCSFUSE.format(hm="10:03")) is None
    tp._clock12_last = datetime(2026, 11, 2, 21, 0, tzinfo=UTC)
    st = tp.parse(_GCSFUSE.format(hm="10:03"))
    assert st is not None and st.wall == datetime(2026, 11, 2, 22, 3, 7, 437193, tzinfo=UTC)


def test_a_json_lines_other_number_is_no_stamp() -> None:
    # near miss: a record's own field that is no gcsfuse stamp
    line = '{"name":"root","levelname":"ERROR","message":"x","timestampSecondsRemaining":1793613787}'
    assert TimeParser(UTC, START, END).parse(line) is None


@pytest.mark.parametrize("line", [
    'time="02/11/2026 13:03:07.437193" severity=ERROR',  # no 13 o'clock on a 12-hour clock
    'time="31/02/2026 10:03:07.437193" severity=ERROR',  # no 31 February
    'time=02/11/2026 10:03:07 severity=ERROR',  # logfmt without gcsfuse's quotes: not its form
])
def test_not_a_gcsfuse_12_hour_stamp(line: str) -> None:
    assert TimeParser(UTC, START, END).parse(line) is None


def test_gos_standard_logger_stamp_is_not_read() -> None:
    # Go's log package prints local time with no zone (`2023/06/09 17:56:36 ...`, rclone's, JuiceFS's). Read in the
    # bundle's zone, it made one more false definitive in the wild corpus (b19, on main after its merge; the bundle
    # was not opened), so such a line stays unstamped and takes the nearest earlier stamped line's time
    assert TimeParser(UTC, START, END).parse("2026/11/02 10:03:07.250000 juicefs[812] <ERROR>: upload inode") is None


def test_unstamped_and_uptime_only() -> None:
    tp = TimeParser(UTC, START, END)
    assert tp.parse("node-02:1:2 [3] NCCL WARN x") is None
    st = tp.parse("[12345.678901] NVRM: Xid (PCI:0000:3b:00): 79")
    assert st is not None and st.wall is None and st.uptime == pytest.approx(12345.678901)


def test_zone_for_unzoned_stamps() -> None:
    tp = TimeParser(ZoneInfo("America/New_York"), START, END)
    st = tp.parse("2026-11-02 05:03:07,000 INFO x")
    assert st is not None and st.wall == datetime(2026, 11, 2, 10, 3, 7, tzinfo=UTC)


def test_new_year_crossing() -> None:
    tp = TimeParser(UTC, parse_rfc3339("2027-01-01T00:10:00Z"), parse_rfc3339("2027-01-01T02:00:00Z"))
    st = tp.parse("Dec 31 23:59:58 node-01 kernel: x")
    assert st is not None and st.wall is not None and st.wall.year == 2026


# Issue 26, item 15: times at datetime's limits (year 1, year 9999) crashed the analysis with OverflowError once
# their zone was applied. A stamp outside timeparse's range (years 1000-8999) is read as no stamp and counted; a
# window outside it is refused, naming the field.

@pytest.mark.parametrize("line", [
    "0001-01-01T00:00:00+05:00 node-01 kernel: x",  # UTC would be year 0
    "9999-12-31T23:59:59-05:00 node-01 kernel: x",  # UTC would be year 10000
    "0001-01-01 00:00:00,000 INFO x",  # zone-less: the bundle's zone (Asia/Tokyo) takes it past year 1
    "[Mon Jan  1 00:00:00 0001] NVRM: x",
    "[Dec 31 9999 23:59:59] [ERROR] [tid 1] x",
    "0500-06-01T00:00:00Z a time datetime holds but firstfault does not",
])
def test_a_stamp_at_the_limits_is_read_as_none_and_counted(line: str) -> None:
    tp = TimeParser(ZoneInfo("Asia/Tokyo"), START, END)
    assert tp.parse(line) is None
    assert tp.out_of_range == 1


@pytest.mark.parametrize(("line", "expected"), [
    ("1970-01-01T00:00:00Z kernel: a node whose clock was never set", "1970-01-01T00:00:00"),
    ("8999-12-31T23:59:59Z x", "8999-12-31T23:59:59"),
    ("1000-01-01T09:00:00+09:00 x", "1000-01-01T00:00:00"),
])
def test_stamps_inside_the_range_are_read(line: str, expected: str) -> None:
    # near miss of the above
    tp = TimeParser(ZoneInfo("Asia/Tokyo"), START, END)
    st = tp.parse(line)
    assert st is not None and st.wall is not None
    assert st.wall.replace(tzinfo=None).isoformat() == expected and tp.out_of_range == 0


@pytest.mark.parametrize(("line", "outside"), [
    ("[Mon Nov  2 10:00:05 0026] kmem: usage 6122kB", 1),  # outside the years: counted, and unread
    ("[Mon Nov  0 10:00:05 2026] kmem: usage 6122kB", 0),  # no 0th of November: unread alone
    ("2026-13-02 10:00:05,000 INFO x", 0),  # no 13th month
    ("2026-11-02T25:00:05+01:00 x", 0),  # no 25th hour, with a zone
    ('time="02/11/2026 13:00:05" level=info', 0),  # gcsfuse's 12-hour clock has no 13 o'clock
])
def test_a_stamp_read_as_none_is_unread_and_counted_where_outside_the_years(line: str, outside: int) -> None:
    """TimeParser.unread: the stamps a form matched that read as no time (the fold reads every later copy of such a
    line's shape, collect/fold.py), of which those outside the years are the verdict's count (out_of_range)."""
    tp = TimeParser(UTC, START, END)
    assert tp.parse(line) is None
    assert (tp.unread, tp.out_of_range) == (1, outside)


@pytest.mark.parametrize("line", ["[Mon Nov  2 10:00:05 2026] kmem: usage 6122kB", "2026-11-02 10:00:05,000 INFO x",
                                  "Nov  2 10:00:05 node-01 kernel: x", "kmem: usage 6122kB (no stamp)"])
def test_a_stamp_read_as_a_time_or_no_stamp_is_not_unread(line: str) -> None:
    # near miss of the above
    tp = TimeParser(UTC, START, END)
    tp.parse(line)
    assert (tp.unread, tp.out_of_range) == (0, 0)


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00", "0999-12-31T23:59:59Z",
                                   "9000-01-01T00:00:00Z"])
def test_a_time_outside_the_range_is_a_named_value_error(value: str) -> None:
    from firstfault.timeparse import TimeRangeError

    with pytest.raises(TimeRangeError, match="outside the times firstfault reads"):
        parse_rfc3339(value)


def test_a_window_at_the_limits_is_refused_naming_the_field(tmp_path: Path) -> None:
    from firstfault.bundle import BundleError, load_bundle

    (tmp_path / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\nworkload:\n  id: '1'\n  window: {start: '2026-01-01T00:00:00Z', "
        "end: '9999-12-31T23:59:59-05:00'}\n")
    with pytest.raises(BundleError, match=r"workload\.window\.end: .*outside the times firstfault reads"):
        load_bundle(tmp_path)


SHOWCASE = Path(__file__).parent.parent / "examples" / "nvlink-xid149"
# An Xid that is a symptom (45: a channel stopped because its process ended): an untimed cause beside the
# showcase's would (rightly) make the verdict ambiguous, since it cannot be ordered; here the stamps are tested.
PLAIN_AT = "{t} node-01 kernel: NVRM: Xid (PCI:0000:3b:00): 45, pid=1, name=python, Ch 00000008\n"
XID79_AT = "{t} node-01 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.\n"


def test_stamps_at_the_limits_in_a_log_leave_the_verdict_and_name_the_file(tmp_path: Path) -> None:
    b = tmp_path / "b"
    shutil.copytree(SHOWCASE, b)
    kern = b / "nodes" / "node-01" / "kern.log"
    kern.write_text(PLAIN_AT.format(t="0001-01-01T00:00:00+05:00") + PLAIN_AT.format(t="9999-12-31T23:59:59-05:00")
                    + kern.read_text())
    v = Analyzer().analyze_path(str(b))
    assert v.root_cause is not None and v.root_cause.category == "gpu.nvlink.signal_integrity"
    assert [(e.file, e.message) for e in v.errors] == [("nodes/node-01/kern.log", (
        "2 time stamp(s) outside the years 1000-8999 read as none (such a line takes the time of the nearest "
        "earlier stamped line)"))]


@pytest.mark.parametrize(("fmt", "text"), [
    ("sacct", "JobID|JobName|State|ExitCode|Start|End|NodeList|Reason\n"
              "77|x|FAILED|1:0|0001-01-01T00:00:00|0001-01-01T00:10:00|node-01|None\n"),
    ("scontrol", "JobId=77 JobName=x\n   JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0\n"
                 "   StartTime=0001-01-01T00:00:00 EndTime=0001-01-01T00:10:00\n   NodeList=node-01\n"),
])
def test_a_scheduler_record_at_the_limits_is_an_error_not_a_crash(tmp_path: Path, fmt: str, text: str) -> None:
    # Slurm prints local times: year 1 in Asia/Tokyo is before year 1 in UTC
    (tmp_path / "s.txt").write_text(text)
    (tmp_path / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\nworkload: {id: '77', nodes: [node-01], timezone: Asia/Tokyo, terminal_state: "
        f"FAILED}}\nsources: [{{kind: scheduler, path: s.txt, format: {fmt}}}]\n")
    v = Analyzer().analyze_path(str(tmp_path))
    assert any(e.file == "s.txt" and e.message.startswith("cannot read: a time past the years 1-9999")
               for e in v.errors), v.errors


def test_a_requests_lines_at_the_limits_are_ignored_with_an_error() -> None:
    from firstfault.bundle import Context, workload_spec
    from firstfault.extract.base import Candidate

    wl = workload_spec({"id": "1", "nodes": ["node-01"], "window": {"start": "2026-11-02T10:00:00Z"}})
    analysis = Analyzer().start(Context.from_spec(wl))
    line = XID79_AT.format(t="").strip()
    analysis.add_candidate(Candidate("kernel", "k.log", 1, "node-01", None, datetime(9999, 12, 31, 23, 59, tzinfo=UTC),
                                     line))
    v = analysis.finish()
    assert v.root_cause is None
    assert [(e.file, e.message) for e in v.errors] == [("k.log", "1 event(s) at a time outside the years 1000-8999: "
                                                                  "ignored")]
