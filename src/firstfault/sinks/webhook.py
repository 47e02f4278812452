"""POST verdicts to a webhook, signed, retried, and dead-lettered when all else fails.

The request (docs/storage.md, "Webhook deliveries"):

    POST <url>
    Content-Type: application/json
    X-Firstfault-Delivery: <delivery id: a UUID derived from the verdict, see delivery_id()>
    Idempotency-Key: <the same delivery id>
    X-Firstfault-Timestamp: <unix seconds when the delivery was first tried>
    X-Firstfault-Signature: sha256=<hex HMAC-SHA256 of the raw body, keyed with the secret>

    {...the verdict document...,
     "enrichment": {"cluster": ..., "links": {...}, "owner": ..., "previous_attempts": [...]},
     "delivery": "<the delivery id>"}

Each try has `timeout` seconds in all, connecting, sending and every read
together (firstfault.httptry): a receiver that trickles its answer is cut
there. Retried with exponential backoff and full jitter (a Retry-After header
on 429 or 503 is honoured, up to the backoff cap) after connection errors,
timeouts, 429 and 5xx; any other status is final. When the last try fails, the
delivery (body, headers, last error, time) is appended as one JSON line to
the dead-letter file and fsynced, so it can be replayed byte for byte.

`deliver()` never raises and returns a Delivery. `write()` (the Sink
contract) returns when the webhook took the verdict and otherwise raises
WebhookDeliveryError (a SinkError) carrying the Delivery, after the
dead-letter line is safely written; the pipeline logs it and goes on.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx

from firstfault import __version__, records
from firstfault.httptry import KEEPALIVE_OFF, request_within
from firstfault.model import Enrichment, Verdict
from firstfault.retry import RetryPolicy, parse_retry_after
from firstfault.sinks.base import SinkError

log = logging.getLogger("firstfault.sinks.webhook")

RETRY_STATUS = frozenset({429}) | frozenset(range(500, 600))


# The namespace of firstfault's delivery ids (uuid5): never change it, or receivers see new ids.
DELIVERY_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "firstfault:webhook-delivery")


def delivery_id(verdict: Verdict, enrichment: Enrichment) -> str:
    """The id of a verdict's delivery: the same for every send of the same verdict, so receivers can dedupe.

    A UUID (version 5) of the cluster, workload id, attempt and catalog
    sha256 (the verdict store's key): retries, a rerun of `firstfault run`
    and a redo by `watch` after a crash all carry the same id; the same
    attempt judged by another catalog gets another one.

    A provisional verdict (sent while the attempt runs, one per cause) has an id of its own, of the same
    fields and its root-cause category (not the catalog: a catalog reload does not make the cause new);
    the final verdict lists it under `supersedes[].delivery`, which ties the two together.
    """
    if verdict.provisional:
        cat = verdict.root_cause.category if verdict.root_cause is not None else ""
        key = "\x1f".join(("provisional", enrichment.cluster or "", verdict.workload.id,
                            str(verdict.workload.attempt), cat))
        return str(uuid.uuid5(DELIVERY_NAMESPACE, key))
    key = "\x1f".join((enrichment.cluster or "", verdict.workload.id, str(verdict.workload.attempt),
                        verdict.catalog.sha256))
    return str(uuid.uuid5(DELIVERY_NAMESPACE, key))


def document(verdict: Verdict, enrichment: Enrichment, delivery: str | None = None) -> bytes:
    """The delivery body: the verdict document with the enrichment under "enrichment"
    (and, for a webhook, the delivery id under "delivery")."""
    doc = records.to_builtins(verdict)
    doc["enrichment"] = asdict(enrichment)
    if delivery is not None:
        doc["delivery"] = delivery
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def sign(secret: bytes, body: bytes) -> str:
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class Delivery:
    id: str
    ok: bool
    attempts: int
    status: int | None  # the last HTTP status, None when no response came
    error: str | None  # the last failure, None on success
    dead_lettered: bool = False


class WebhookDeliveryError(SinkError):
    def __init__(self, message: str, delivery: Delivery) -> None:
        super().__init__(message)
        self.delivery = delivery


class WebhookSink:
    name = "webhook"

    def __init__(
        self,
        url: str,
        secret: bytes,
        *,
        timeout: float = 10.0,
        retries: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        dead_letter_path: str | Path | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not secret:
            raise ValueError("webhook secret is empty: deliveries could not be verified")
        if retries < 0:
            raise ValueError("webhook retries must not be negative")
        self.url = url
        self.secret = secret
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.dead_letter_path = Path(dead_letter_path) if dead_letter_path is not None else None
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._clock = clock
        # The shared policy (firstfault.retry): full jitter; a Retry-After is honoured up to the backoff cap.
        self._retry = RetryPolicy(retries=retries, backoff=backoff, max_backoff=max_backoff, jitter="full",
                                  sleep=sleep, rng=self._rng)
        self.timeout = timeout
        self._client = httpx.Client(transport=transport, timeout=timeout, follow_redirects=False,
                                    limits=KEEPALIVE_OFF, headers={"User-Agent": f"firstfault/{__version__}"})

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> WebhookSink:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def write(self, verdict: Verdict, enrichment: Enrichment) -> None:
        d = self.deliver(verdict, enrichment)
        if d.ok:
            return
        kept = f"kept in {self.dead_letter_path}" if d.dead_lettered else "NOT kept (no dead-letter file written)"
        raise WebhookDeliveryError(
            f"webhook {self.url} failed after {d.attempts} attempt(s): {d.error}; delivery {d.id} {kept}", d
        )

    def deliver(self, verdict: Verdict, enrichment: Enrichment) -> Delivery:
        did = delivery_id(verdict, enrichment)
        body = document(verdict, enrichment, did)
        headers = {
            "Content-Type": "application/json",
            "X-Firstfault-Delivery": did,
            "Idempotency-Key": did,
            "X-Firstfault-Timestamp": str(int(self._clock())),
            "X-Firstfault-Signature": sign(self.secret, body),
        }

        def once() -> httpx.Response | _Failed:
            try:
                return request_within(self._client, self.timeout, "POST", self.url, content=body, headers=headers)
            except httpx.TransportError as e:  # connection refused/reset, timeouts, protocol errors
                # A bad URL scheme stays bad.
                return _Failed(f"{type(e).__name__}: {e or 'no detail'}", not isinstance(e, httpx.UnsupportedProtocol))
            except (httpx.HTTPError, httpx.InvalidURL) as e:
                return _Failed(f"{type(e).__name__}: {e}", False)

        def again(outcome: httpx.Response | _Failed) -> bool:
            if isinstance(outcome, _Failed):
                return outcome.retryable
            # 4xx other than 429: retrying would get the same answer.
            return not outcome.is_success and outcome.status_code in RETRY_STATUS

        def asked(outcome: httpx.Response | _Failed) -> float | None:
            if isinstance(outcome, _Failed):
                return None
            return parse_retry_after(outcome.headers.get("Retry-After"), self._clock())

        outcome, attempts = self._retry.run(once, again, asked)
        status: int | None = None
        if isinstance(outcome, _Failed):
            error = outcome.error
        else:
            status = outcome.status_code
            if outcome.is_success:
                return Delivery(did, True, attempts, status, None)
            error = f"HTTP {status}: {outcome.text[:200]}"
        log.warning("webhook delivery %s to %s failed after %d attempt(s): %s", did, self.url, attempts, error)
        kept = self._dead_letter(body, headers, error, status, attempts)
        return Delivery(did, False, attempts, status, error, kept)

    def _dead_letter(self, body: bytes, headers: dict[str, str], error: str, status: int | None,
                     attempts: int) -> bool:
        if self.dead_letter_path is None:
            log.error("webhook delivery %s lost: no dead-letter file configured", headers["X-Firstfault-Delivery"])
            return False
        record = {
            "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "url": self.url,
            "delivery": headers["X-Firstfault-Delivery"],
            "attempts": attempts,
            "status": status,
            "last_error": error,
            "headers": headers,
            "body": body.decode("utf-8"),
        }
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        path = self.dead_letter_path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            created = not path.exists()
            # One write() on an O_APPEND descriptor: concurrent writers never interleave inside a line.
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                view = memoryview(line)
                while view:  # regular files take it in one go; loop for the odd short write
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            if created:  # make the new directory entry durable too
                dfd = os.open(path.parent, os.O_RDONLY)
                try:
                    os.fsync(dfd)
                finally:
                    os.close(dfd)
        except OSError as e:
            log.error("webhook delivery %s lost: cannot write dead-letter file %s: %s",
                      headers["X-Firstfault-Delivery"], path, e)
            return False
        return True


@dataclass(frozen=True, slots=True)
class _Failed:
    """An attempt that got no HTTP answer."""

    error: str
    retryable: bool
