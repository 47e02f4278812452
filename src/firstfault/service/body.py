"""Request bodies: received whole (counted, within a time limit) before a slot is taken, then inflated in steps."""

from __future__ import annotations

import asyncio
import tempfile
import zlib
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import IO

from firstfault.service.errors import Problem, invalid
from firstfault.service.limits import Deadline

INFLATE_STEP = 1 << 20  # bytes inflated per zlib call, so one small chunk never becomes gigabytes at once


def too_large(limit: int, what: str = "request body") -> Problem:
    return Problem(413, "body_too_large", f"the {what} is over the {limit} byte limit")


SPOOL_IN_MEMORY = 8 << 20  # a body up to this size stays in memory; a larger one goes to a temporary file


class UploadSlots:
    """At most `limit` bodies being received at once (each may spool up to max_body_bytes to disk)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0

    @contextmanager
    def slot(self, retry_after: int) -> Iterator[None]:
        if self.active >= self.limit:  # the event loop is one thread: no lock needed
            raise Problem(503, "overloaded", f"{self.limit} request bodies are being received; retry later",
                          headers={"Retry-After": str(retry_after)})
        self.active += 1
        try:
            yield
        finally:
            self.active -= 1


async def receive_body(stream: AsyncIterator[bytes], max_bytes: int, timeout: float) -> IO[bytes]:
    """The whole body, counted as it arrives, in a spool file; 413 past max_bytes, 408 past `timeout` seconds.

    This runs on the event loop before an analysis slot is taken: a client
    that sends one byte a second holds a connection and a spool, never a slot.
    """
    spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY, prefix="firstfault-body-")  # noqa: SIM115 - handed to the analysis, which closes it
    total = 0
    try:
        async with asyncio.timeout(timeout):
            async for chunk in stream:
                total += len(chunk)
                if total > max_bytes:
                    raise too_large(max_bytes)
                spool.write(chunk)
    except TimeoutError as exc:
        spool.close()
        raise Problem(408, "body_timeout", f"the request body did not arrive within the {timeout:g} s limit "
                                           f"({total} bytes received)") from exc
    except BaseException:
        spool.close()
        raise
    spool.seek(0)
    return spool


def spooled_chunks(spool: IO[bytes], deadline: Deadline, size: int = INFLATE_STEP) -> Iterator[bytes]:
    """A received body again, in chunks, stopping at the analysis deadline."""
    while True:
        deadline.check()
        chunk = spool.read(size)
        if not chunk:
            return
        yield chunk


def inflate(chunks: Iterator[bytes], max_out: int) -> Iterator[bytes]:
    """Gunzips a stream (concurrent members too) without ever holding more than INFLATE_STEP of output."""
    d = zlib.decompressobj(wbits=31)
    total = 0
    seen_input = False
    try:
        for chunk in chunks:
            data = chunk
            seen_input = True
            while True:
                out = d.decompress(data, INFLATE_STEP)
                total += len(out)
                if total > max_out:
                    raise too_large(max_out, "decompressed body")
                if out:
                    yield out
                if d.eof:  # a gzip member ended; another may follow in the same body
                    data = d.unused_data
                    if not data:
                        break
                    d = zlib.decompressobj(wbits=31)
                    continue
                data = d.unconsumed_tail
                if not data and len(out) < INFLATE_STEP:
                    break  # input used up and no output held back
    except zlib.error as exc:
        raise invalid(f"the body is not valid gzip: {exc}") from exc
    if seen_input and not d.eof:
        raise invalid("the gzip body is truncated")
