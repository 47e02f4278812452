"""firstfault.retry: the one retry policy and Retry-After parser every HTTP caller uses."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from firstfault.retry import RetryPolicy, parse_retry_after

NOW = datetime(2026, 11, 1, 12, 0, 0, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(("header", "want"), [
    ("7", 7.0),
    (" 120 ", 120.0),
    ("1.5", 1.5),
    ("Sun, 01 Nov 2026 12:00:30 GMT", 30.0),  # an HTTP-date, 30 s ahead
    ("Sun, 01 Nov 2026 11:59:00 GMT", 0.0),  # in the past: go now
    ("", None),
    (None, None),
    ("soon", None),
    ("-3", None),
    ("nan", None),
    ("Sun, 01 Nov 2026 12:00:30", None),  # no zone: not an RFC 9110 date
    ("9" * 100, None),  # not a header value anyone sends
])
def test_retry_after_takes_seconds_and_http_dates(header: str | None, want: float | None) -> None:
    assert parse_retry_after(header, NOW) == want


def test_retry_after_of_a_formatted_date_round_trips() -> None:
    when = datetime.fromtimestamp(NOW + 90, UTC)
    assert parse_retry_after(format_datetime(when, usegmt=True), NOW) == 90.0


def test_a_server_cannot_make_us_sleep_past_the_ceiling() -> None:
    p = RetryPolicy(max_backoff=8.0)
    assert p.delay(0, retry_after=86400.0) == 8.0
    assert RetryPolicy(max_backoff=8.0, retry_after_max=60.0).delay(0, retry_after=86400.0) == 60.0
    assert p.delay(0, retry_after=2.0) == 2.0


def test_backoff_doubles_up_to_the_cap_with_the_jitter_asked_for() -> None:
    plain = RetryPolicy(backoff=1.0, max_backoff=5.0)
    assert [plain.delay(n) for n in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert plain.delay(10_000) == 5.0  # no overflow
    equal = RetryPolicy(backoff=1.0, max_backoff=5.0, jitter="equal", rng=random.Random(1))
    full = RetryPolicy(backoff=1.0, max_backoff=5.0, jitter="full", rng=random.Random(1))
    for n in range(5):
        base = plain.delay(n)
        assert base / 2 <= equal.delay(n) <= base
        assert 0 <= full.delay(n) <= base


def test_run_stops_on_a_final_outcome_and_after_the_last_attempt() -> None:
    sleeps: list[float] = []
    outcomes = iter(["busy", "busy", "ok", "never"])
    p = RetryPolicy(retries=5, backoff=0.5, sleep=sleeps.append)
    value, attempts = p.run(lambda: next(outcomes), again=lambda o: o == "busy")
    assert (value, attempts, sleeps) == ("ok", 3, [0.5, 1.0])

    sleeps.clear()
    value, attempts = RetryPolicy(retries=2, backoff=0.5, sleep=sleeps.append).run(
        lambda: "busy", again=lambda o: o == "busy", retry_after=lambda o: 3.0)
    assert (value, attempts, sleeps) == ("busy", 3, [3.0, 3.0])  # the last outcome, no sleep after it


def test_an_exception_the_attempt_did_not_catch_is_not_retried() -> None:
    calls: list[int] = []

    def boom() -> str:
        calls.append(1)
        raise KeyError("bug")

    with pytest.raises(KeyError):
        RetryPolicy(retries=3, sleep=lambda _s: None).run(boom, again=lambda _o: True)
    assert calls == [1]


def test_negative_retries_are_refused() -> None:
    with pytest.raises(ValueError, match="retries"):
        RetryPolicy(retries=-1)
