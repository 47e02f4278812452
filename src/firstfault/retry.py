"""One retry policy for every HTTP caller: the remote connectors, the Service client, the webhook sink.

Bounded attempts, exponential backoff (with the jitter each caller asks for)
and a server's Retry-After honoured up to a ceiling. The loop itself is
tenacity's; what is ours is the policy (when to stop, how long to wait) and
the one Retry-After parser. `sleep` and `rng` are injectable so tests can
check every wait without waiting.

Each caller hands `run` a function that makes one attempt and returns its
outcome (a response, or the error it caught); `again` says whether that
outcome is worth another try and `retry_after` what the server asked for.
Exceptions the attempt does not catch are not retried: they propagate.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Generic, Literal, NamedTuple, TypeVar

import tenacity

__all__ = ["RetryPolicy", "Tried", "parse_retry_after"]

T = TypeVar("T")

# A Retry-After value longer than this is not one (an HTTP-date is 29 characters).
_MAX_HEADER = 64
_RNG = random.Random()


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP-date (RFC 9110 10.2.3).

    None when there is no usable value; a date in the past gives 0. The
    caller bounds the wait (RetryPolicy.retry_after_max): a server cannot
    make a client sleep for a day.
    """
    if not value:
        return None
    value = value.strip()
    if not value or len(value) > _MAX_HEADER:
        return None
    if value.isdigit():
        return float(value)
    try:
        seconds = float(value)  # not in the RFC, but some servers send "1.5"
    except ValueError:
        pass
    else:
        return seconds if seconds >= 0 and seconds == seconds else None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None  # RFC 9110 dates are GMT; a zone-less one is not one of them
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class Tried(NamedTuple, Generic[T]):
    value: T  # the last attempt's outcome
    attempts: int


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    retries: int = 3  # further attempts after the first one
    backoff: float = 0.5  # the first wait; doubles each time
    max_backoff: float = 8.0
    # none: the wait itself; equal: between half of it and all of it; full: anywhere from 0 to it
    # (many clients retrying one server spread out instead of hammering in step).
    jitter: Literal["none", "equal", "full"] = "none"
    # A server's Retry-After replaces the backoff, up to this many seconds (None: max_backoff).
    retry_after_max: float | None = None
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random | None = None

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise ValueError(f"retries must be >= 0, got {self.retries}")

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """The wait after the 0-based `attempt` failed."""
        if retry_after is not None:
            ceiling = self.max_backoff if self.retry_after_max is None else self.retry_after_max
            return min(max(retry_after, 0.0), ceiling)
        try:
            base = min(self.max_backoff, self.backoff * 2.0**attempt)
        except OverflowError:
            base = self.max_backoff
        if self.jitter == "none":
            return base
        rng = self.rng or _RNG
        if self.jitter == "equal":
            return base * (0.5 + rng.random() / 2)
        return rng.uniform(0, base)

    def run(self, once: Callable[[], T], again: Callable[[T], bool],
            retry_after: Callable[[T], float | None] | None = None) -> Tried[T]:
        """Calls `once` until its outcome is not worth another try or the attempts run out."""
        count = 0

        def attempt() -> T:
            nonlocal count
            count += 1
            return once()

        def wait(state: tenacity.RetryCallState) -> float:
            outcome = state.outcome
            after = None
            if retry_after is not None and outcome is not None and not outcome.failed:
                after = retry_after(outcome.result())
            return self.delay(state.attempt_number - 1, after)

        def last(state: tenacity.RetryCallState) -> T:
            assert state.outcome is not None
            return state.outcome.result()  # type: ignore[no-any-return]

        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.retries + 1),
            wait=wait,
            retry=tenacity.retry_if_result(again),
            sleep=self.sleep,
            retry_error_callback=last,
            reraise=True,
        )
        value = retrying(attempt)
        return Tried(value, count)
