"""Every timestamp form of the bundle spec, mixed zones and year inference."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

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
