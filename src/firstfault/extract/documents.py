"""Whole documents (scheduler records, metrics, flight-recorder dumps, stack dumps, fabric maps) read into events.

One dispatch by source kind and format for the embedded engine and for the
Blueprint's request form (which reads a document only to count its lines).
A document's problems come back capped: the first 100 (structured.MAX_ISSUES)
and one that counts the rest. `check` (the Service's deadline) is handed to
the readers, which call it as they go, so a long document stops at the
deadline instead of after its last record.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import IO, BinaryIO, cast

from firstfault.bundle import Context
from firstfault.extract.structured import StructuredResult

MAX_STRUCTURED_BYTES = 256 << 20
# Structured sources read one file at a time with the file's {node}/{rank} binding (a fabric file: the host
# an lldpctl answer was taken on).
PER_FILE_DOCUMENTS = ("flight_recorder", "stack_dump", "fabric")


def read_document(source: str, fmt: str | None, file: str, data: bytes | IO[bytes],
                     ctx: Context, *, node: str | None = None,
                     rank: int | None = None, check: Callable[[], None] | None = None,
                     ) -> tuple[StructuredResult | None, list[tuple[int | None, str]]]:
    if source == "fabric":  # no event: the cables between host ports and switch ports (extract/fabric.py)
        from firstfault.extract.fabric import read_fabric

        raw = data if isinstance(data, bytes) else data.read(MAX_STRUCTURED_BYTES)
        fab = read_fabric(raw, fmt, file, node=node)
        return fab, [(i.line, i.message) for i in fab.issues]
    if source in PER_FILE_DOCUMENTS:
        from firstfault.extract.flightrec import read_flight_recorder
        from firstfault.extract.stackdump import read_stack_dump

        raw = data if isinstance(data, bytes) else data.read(MAX_STRUCTURED_BYTES)
        reader = read_flight_recorder if source == "flight_recorder" else read_stack_dump
        res = reader(raw, file, node=node, rank=rank, check=check)
        return res, res.problems()
    if fmt is None:
        return None, [(None, f"cannot read: a {source} source needs a format")]
    if source == "scheduler":
        from firstfault.extract.scheduler import read_scheduler

        raw = data if isinstance(data, bytes) else data.read(MAX_STRUCTURED_BYTES)
        res = read_scheduler(raw, fmt, file, job_id=ctx.workload.id, tz=ctx.tz,
                             window=(ctx.window_start, ctx.window_end), check=check)
    elif source == "metrics":
        from firstfault.extract.metrics import read_metrics

        res = read_metrics(io.BytesIO(data) if isinstance(data, bytes) else cast(BinaryIO, data), fmt, file,
                           check=check)
    else:
        return None, [(None, f"cannot read: source kind {source} has no structured reader")]
    return res, res.problems()


__all__ = ["MAX_STRUCTURED_BYTES", "PER_FILE_DOCUMENTS", "read_document"]
