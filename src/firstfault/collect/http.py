"""Shared HTTP options for the remote connectors (Loki, Prometheus).

One place decides timeouts, bounded retries with exponential backoff, TLS
and authentication, and how many requests a connector may have in flight:
a 1000-node job must not open 1000 connections to a shared Loki or
Prometheus. Secrets arrive as values from the caller (a settings object that
read them from a file or the environment), never from a config literal, and
they stay out of reprs and error messages.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from firstfault.retry import RetryPolicy, parse_retry_after

# Statuses worth another try: the server is busy or a proxy in front of it hiccupped.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class BearerAuth:
    token: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class BasicAuth:
    username: str
    password: str = field(repr=False)


Auth = BearerAuth | BasicAuth


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """How a connector talks HTTP. `transport` and `sleep` are injected by tests."""

    timeout: float = 30.0  # read/write/pool timeout per request, seconds
    connect_timeout: float = 5.0
    retries: int = 3  # further attempts after the first one
    backoff: float = 0.5  # first retry delay; doubles each time
    max_backoff: float = 8.0
    verify: bool = True
    ca_file: str | None = None
    auth: Auth | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    concurrency: int = 4  # requests in flight at once, and the connection pool size
    transport: httpx.BaseTransport | None = None
    sleep: Callable[[float], None] = time.sleep

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency}")
        if self.retries < 0:
            raise ValueError(f"retries must be >= 0, got {self.retries}")

    @property
    def retry(self) -> RetryPolicy:
        """The shared retry policy (firstfault.retry): no jitter, Retry-After honoured up to max_backoff."""
        return RetryPolicy(retries=self.retries, backoff=self.backoff, max_backoff=self.max_backoff,
                           sleep=self.sleep)


class FetchError(Exception):
    """A request failed for good (after its retries); the message names the URL and why."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def make_client(opts: HttpOptions, base_url: str) -> httpx.Client:
    """A client whose pool never holds more connections than the concurrency limit."""
    headers = dict(opts.headers)
    auth: httpx.Auth | None = None
    if isinstance(opts.auth, BearerAuth):
        headers["Authorization"] = f"Bearer {opts.auth.token}"
    elif isinstance(opts.auth, BasicAuth):
        auth = httpx.BasicAuth(opts.auth.username, opts.auth.password)
    verify: bool | str = opts.ca_file if (opts.verify and opts.ca_file) else opts.verify
    kwargs: dict[str, Any] = {}
    if opts.transport is not None:
        kwargs["transport"] = opts.transport
    return httpx.Client(
        base_url=base_url.rstrip("/"),
        headers=headers,
        auth=auth,
        verify=verify,
        timeout=httpx.Timeout(opts.timeout, connect=opts.connect_timeout),
        limits=httpx.Limits(max_connections=opts.concurrency, max_keepalive_connections=opts.concurrency),
        follow_redirects=False,
        **kwargs,
    )


def describe(url: str, params: Mapping[str, str] | None = None) -> str:
    """URL with its query string, as people paste it (secrets are never in params)."""
    if not params:
        return url
    # A Loki query carries the whole prefilter (~15 KB): errors name it, not
    # repeat it; the short parameters (start, end, limit) stay whole.
    shown = {k: (v if len(v) <= 200 else f"{v[:160]}...({len(v)} chars)") for k, v in params.items()}
    return str(httpx.URL(url, params=shown))


def get(client: httpx.Client, opts: HttpOptions, path: str, params: Mapping[str, str]) -> httpx.Response:
    """GET with bounded retries; returns a 2xx response or raises FetchError.

    Connection errors, timeouts, 429 and 5xx are retried with exponential
    backoff; other 4xx are the query's fault and fail at once.
    """
    where = describe(str(client.base_url) + path, params)

    def once() -> httpx.Response | str:
        try:
            return client.get(path, params=dict(params))
        except httpx.TimeoutException as exc:
            return f"timed out ({type(exc).__name__})"
        except httpx.TransportError as exc:
            return f"connection failed ({type(exc).__name__}: {exc})"

    def again(outcome: httpx.Response | str) -> bool:
        return isinstance(outcome, str) or (not outcome.is_success and outcome.status_code in RETRY_STATUSES)

    def asked(outcome: httpx.Response | str) -> float | None:
        # A 429/503 may say how long to wait; the policy honours it within our own ceiling.
        return None if isinstance(outcome, str) else parse_retry_after(outcome.headers.get("Retry-After"))

    outcome = opts.retry.run(once, again, asked).value
    if isinstance(outcome, httpx.Response) and outcome.is_success:
        return outcome
    status = None if isinstance(outcome, str) else outcome.status_code
    last = outcome if isinstance(outcome, str) else f"HTTP {status}: {_snippet(outcome)}"
    retried = opts.retries and (status is None or status in RETRY_STATUSES)
    tries = f" after {opts.retries + 1} attempts" if retried else ""
    raise FetchError(f"GET {where}: {last}{tries}", status)


def _snippet(response: httpx.Response) -> str:
    text = response.text.strip().replace("\n", " ")
    return text[:300] if text else response.reason_phrase
