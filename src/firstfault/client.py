"""A Python client of the firstfault Service (the Blueprint's remote engine).

    with FirstfaultClient("http://firstfault:8080", token=...) as ff:
        words = ff.prefilter()
        verdict = ff.analyze(request)                   # JSON form (gzip-compressed above 64 KiB)
        verdict = ff.analyze_ndjson(context, records)   # streamed NDJSON, gzip
        verdict = ff.analyze_bundle_tar("bundle/")      # a bundle directory or a .tar.gz

Requests are retried on 503 (honouring Retry-After, in seconds or as a
date, up to a minute) and on connection errors, with exponential backoff
(the shared policy of firstfault.retry); analysis is idempotent, so a retry is
safe. Bodies are spooled to a temporary file first (memory stays flat for
a large attempt) so that a retry can send them again. The transport and
the sleep function are injectable, for tests.
"""

from __future__ import annotations

import gzip
import json
import os
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import httpx

from firstfault import records
from firstfault.bundle import WorkloadSpec
from firstfault.collect.wire import AnalyzeRequest, Record
from firstfault.model import Verdict
from firstfault.records import to_builtins
from firstfault.responses import CatalogInfo, Prefilter, ProblemBody
from firstfault.retry import RetryPolicy, parse_retry_after

SPOOL_MEMORY = 8 << 20  # bodies up to this size stay in memory
GZIP_ABOVE = 64 << 10
# The Service parses the JSON form whole and caps it (max_json_bytes, 64 MiB by default): a request
# larger than this goes as NDJSON instead, which the Service streams (same records, same verdict).
JSON_ABOVE = 32 << 20
SEND_CHUNK = 1 << 20
MAX_RETRY_AFTER = 60.0
# The read timeout outlasts the Service's default analysis time limit (300 s).
DEFAULT_TIMEOUT = httpx.Timeout(connect=5.0, read=330.0, write=60.0, pool=10.0)


class FirstfaultError(Exception):
    """The Service refused or failed a request (status, its error code and message)."""

    def __init__(self, status: int, error: str, message: str, detail: list[dict[str, Any]] | None = None) -> None:
        super().__init__(f"{status} {error}: {message}")
        self.status = status
        self.error = error
        self.message = message
        self.detail = detail or []


RETRYABLE_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError, httpx.ReadError,
                    httpx.WriteError, httpx.PoolTimeout)


class FirstfaultClient:
    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        headers = {"User-Agent": "firstfault-client"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout, transport=transport)
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._sleep = sleep
        # The shared policy (firstfault.retry): equal jitter; a Retry-After is honoured up to a minute.
        self._retry = RetryPolicy(retries=retries, backoff=backoff, max_backoff=max_backoff, jitter="equal",
                                  retry_after_max=MAX_RETRY_AFTER, sleep=sleep)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> FirstfaultClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the API -------------------------------------------------------------------------------------------------

    def analyze(self, request: AnalyzeRequest) -> Verdict:
        """The JSON form; bodies over 64 KiB travel gzip-compressed, over JSON_ABOVE as NDJSON."""
        raw = records.encode(request)
        if len(raw) > JSON_ABOVE:
            from firstfault.collect.wire import records as request_records

            del raw
            return self.analyze_ndjson(request.context, request_records(request))
        with _spool() as body:
            headers = {"Content-Type": "application/json"}
            if len(raw) > GZIP_ABOVE:
                raw = gzip.compress(raw, compresslevel=5)
                headers["Content-Encoding"] = "gzip"
            body.write(raw)
            return self._verdict(self._send("POST", "/v1/analyze", headers, body))

    def analyze_ndjson(self, context: WorkloadSpec, records: Iterable[Record]) -> Verdict:
        """The streamed form: the context, then each record, as gzip-compressed NDJSON.

        `records` is consumed once, in order (documents before lines gives the
        embedded engine's order); it is never held in memory whole.
        """
        from firstfault.collect.wire import record_dict

        with _spool() as body:
            with gzip.GzipFile(fileobj=body, mode="wb", compresslevel=5) as gz:
                gz.write(_ndjson_line({"type": "context", **to_builtins(context)}))
                for r in records:
                    gz.write(_ndjson_line(record_dict(r)))
            headers = {"Content-Type": "application/x-ndjson", "Content-Encoding": "gzip"}
            return self._verdict(self._send("POST", "/v1/analyze", headers, body))

    def analyze_bundle_tar(self, path: str | os.PathLike[str]) -> Verdict:
        """An evidence bundle: a directory (archived here) or an existing .tar.gz."""
        p = Path(path)
        with _spool() as body:
            if p.is_dir():
                with tarfile.open(fileobj=body, mode="w:gz", compresslevel=5) as tar:
                    tar.add(str(p), arcname=p.name or "bundle", filter=_plain_members)
            else:
                with p.open("rb") as fh:
                    while chunk := fh.read(SEND_CHUNK):
                        body.write(chunk)
            return self._verdict(self._send("POST", "/v1/analyze", {"Content-Type": "application/gzip"}, body))

    def catalog(self) -> CatalogInfo:
        return records.decode(self._send("GET", "/v1/catalog").content, CatalogInfo)

    def prefilter(self) -> list[str]:
        """The literal words a line must contain to matter (the Blueprint's prefilter)."""
        return self.prefilter_info().words

    def prefilter_info(self) -> Prefilter:
        return records.decode(self._send("GET", "/v1/catalog/prefilter").content, Prefilter)

    def ready(self) -> bool:
        try:
            return self._http.get("/readyz").status_code == 200
        except httpx.HTTPError:
            return False

    # -- plumbing ------------------------------------------------------------------------------------------------

    def _verdict(self, resp: httpx.Response) -> Verdict:
        return records.decode(resp.content, Verdict)

    def _send(self, method: str, url: str, headers: dict[str, str] | None = None,
              body: IO[bytes] | None = None) -> httpx.Response:
        def once() -> httpx.Response | httpx.HTTPError:
            content: Iterator[bytes] | None = None
            if body is not None:
                body.seek(0)
                content = _chunks(body)
            try:
                return self._http.request(method, url, headers=headers, content=content)
            except RETRYABLE_ERRORS as exc:
                return exc

        def again(outcome: httpx.Response | httpx.HTTPError) -> bool:
            return not isinstance(outcome, httpx.Response) or outcome.status_code == 503

        def asked(outcome: httpx.Response | httpx.HTTPError) -> float | None:
            return parse_retry_after(outcome.headers.get("retry-after")) if isinstance(outcome, httpx.Response) \
                else None

        outcome = self._retry.run(once, again, asked).value
        if not isinstance(outcome, httpx.Response):
            raise outcome
        if outcome.status_code >= 400:
            raise _error(outcome)
        return outcome


def _chunks(fh: IO[bytes]) -> Iterator[bytes]:
    while chunk := fh.read(SEND_CHUNK):
        yield chunk


def _spool() -> tempfile.SpooledTemporaryFile[bytes]:
    return tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY, mode="w+b")


def _ndjson_line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _plain_members(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    """The Service refuses links: send regular files and directories only."""
    return info if info.isfile() or info.isdir() else None


def _error(resp: httpx.Response) -> FirstfaultError:
    try:
        body = records.decode(resp.content, ProblemBody)
    except ValueError:  # not JSON, or not a problem body (msgspec.DecodeError, ValidationError)
        return FirstfaultError(resp.status_code, "http_error", resp.text[:500] or resp.reason_phrase)
    return FirstfaultError(resp.status_code, body.error, body.message, [records.to_builtins(d) for d in body.detail])


__all__ = ["FirstfaultClient", "FirstfaultError"]
