"""Request bodies read incrementally from a pool thread, counted and inflated as they arrive."""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import AsyncIterator, Iterator

from firstfault.service.errors import Problem, invalid
from firstfault.service.limits import AnalysisTimeout, Deadline

INFLATE_STEP = 1 << 20  # bytes inflated per zlib call, so one small chunk never becomes gigabytes at once


def too_large(limit: int, what: str = "request body") -> Problem:
    return Problem(413, "body_too_large", f"the {what} is over the {limit} byte limit")


async def _next(agen: AsyncIterator[bytes]) -> bytes | None:
    try:
        return await agen.__anext__()
    except StopAsyncIteration:
        return None


def pull(stream: AsyncIterator[bytes], loop: asyncio.AbstractEventLoop, max_bytes: int,
         deadline: Deadline) -> Iterator[bytes]:
    """The body's chunks, fetched from the event loop one at a time (backpressure for free)."""
    total = 0
    while True:
        deadline.check()
        fut = asyncio.run_coroutine_threadsafe(_next(stream), loop)
        try:
            chunk = fut.result(timeout=max(0.0, deadline.remaining()))
        except TimeoutError as exc:
            fut.cancel()
            raise AnalysisTimeout(f"reading the body ran past the {deadline.seconds:g} s limit") from exc
        if chunk is None:
            return
        total += len(chunk)
        if total > max_bytes:
            raise too_large(max_bytes)
        if chunk:
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
