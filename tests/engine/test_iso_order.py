"""model.iso_order: the engine's sort key of times (leads' `_ev_key`, attribute's `event_sort_key`) orders and equates
times as their `iso` strings do, without writing them.

The near misses are the two places where a plain datetime would not: a year before 1000, which strftime writes with
fewer digits (`999-...` sorts after `2026-...` as a string), and two times of one zone in its repeated hour, which
compare equal as datetimes of one zone (wall times) but are two instants (two strings).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from firstfault.engine.attribute import event_sort_key
from firstfault.engine.leads import _ev_key
from firstfault.model import Event, Evidence, iso, iso_order

NEW_YORK = ZoneInfo("America/New_York")


def _order(times: list[datetime], key: object) -> list[int]:
    return sorted(range(len(times)), key=lambda i: key(times[i]))  # type: ignore[operator]


def _same_as_strings(times: list[datetime]) -> None:
    assert _order(times, iso_order) == _order(times, iso)
    for a in times:
        for b in times:
            assert (iso_order(a) == iso_order(b)) == (iso(a) == iso(b))


def test_a_year_before_1000_sorts_as_its_string_after_later_years() -> None:
    early, now = datetime(999, 5, 1, tzinfo=UTC), datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
    assert iso(early) == "999-05-01T00:00:00.000000Z"
    assert iso_order(now) < iso_order(early)  # as the strings: "2026-" < "999-"
    assert now > early  # the datetimes' order, which a plain datetime key would give
    _same_as_strings([early, now, datetime(9990, 1, 1, tzinfo=UTC), datetime(99, 12, 31, tzinfo=UTC),
                      datetime(1000, 1, 1, tzinfo=UTC)])


def test_the_repeated_hour_of_a_zone_is_two_instants() -> None:
    first = datetime(2026, 11, 1, 1, 30, tzinfo=NEW_YORK)  # EDT
    second = first.replace(fold=1)  # EST, an hour later
    assert first == second  # one zone: wall times compare equal
    assert iso(first) != iso(second) and iso_order(first) != iso_order(second)
    assert iso_order(first) < iso_order(second)
    _same_as_strings([second, first, datetime(2026, 11, 1, 6, 0, tzinfo=UTC), datetime(2026, 11, 1, 5, 30)])


def test_naive_times_are_taken_as_utc_as_iso_takes_them() -> None:
    naive, aware = datetime(2026, 11, 2, 10, 0), datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
    assert iso_order(naive) == iso_order(aware)
    assert iso_order(datetime(2026, 11, 2, 12, 0, tzinfo=timezone(timedelta(hours=2)))) == iso_order(aware)


_ZONES = st.sampled_from([None, UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8)),
                          NEW_YORK])
_TIMES = st.builds(
    lambda t, tz, fold: t.replace(tzinfo=tz, fold=fold),
    st.one_of(st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31)),
              st.datetimes(min_value=datetime(2026, 3, 8), max_value=datetime(2026, 3, 9)),  # New York's gap
              st.datetimes(min_value=datetime(2026, 11, 1), max_value=datetime(2026, 11, 2)),  # and its fold
              st.datetimes(min_value=datetime(990, 1, 1), max_value=datetime(1010, 1, 1))),
    _ZONES, st.integers(0, 1))


@given(st.lists(_TIMES, max_size=12))
def test_any_times_sort_and_tie_as_their_strings(times: list[datetime]) -> None:
    _same_as_strings(times)


def _ev(t: datetime | None, node: str, line: int) -> Event:
    return Event("nccl.timeout", t, node, Evidence("application", "app/rank-0.log", line, "x"), rank=line)


@given(st.lists(st.tuples(st.one_of(st.none(), _TIMES), st.sampled_from(["node-1", "node-2"]), st.integers(1, 3)),
                max_size=10))
def test_the_engines_event_keys_order_as_with_the_strings(rows: list[tuple[datetime | None, str, int]]) -> None:
    """The keys that hold the time (leads' `_ev_key`, attribute's `event_sort_key`) order events as the same keys with
    the time's iso string did, no time last."""
    events = [_ev(*r) for r in rows]

    def by_string(e: Event) -> tuple[object, ...]:
        t = e.earliest()
        return (t is None, iso(t) or "", e.node or "", e.evidence.file or "", e.evidence.line or 0, e.kind,
                e.rank if e.rank is not None else -1)

    want = sorted(range(len(events)), key=lambda i: by_string(events[i]))
    assert sorted(range(len(events)), key=lambda i: _ev_key(events[i])) == want
    assert sorted(range(len(events)), key=lambda i: event_sort_key(events[i])) == want
