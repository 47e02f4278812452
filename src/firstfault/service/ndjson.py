"""The streamed request form: NDJSON records, one per line, validated as they arrive.

Line 1 is the execution context, {"type": "context", ...WorkloadSpec fields};
every later line is one record with "type": line | document | activity |
coverage | error (docs/service.md). Records are fed to the analysis as they
are read, so a large attempt is never held whole, and an invalid record is
refused with its line number and field path.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from firstfault import records
from firstfault.bundle import WorkloadSpec, workload_spec
from firstfault.collect.wire import (
    AnalyzeRequest,
    DocumentObservation,
    LineObservation,
    NodeActivity,
    Record,
    record_dict,
)
from firstfault.model import CoverageItem, ErrorItem
from firstfault.responses import ProblemDetail
from firstfault.service.body import too_large
from firstfault.service.errors import from_validation, invalid

RECORD_TYPES: dict[str, type[records.Record]] = {
    "line": LineObservation,
    "document": DocumentObservation,
    "activity": NodeActivity,
    "coverage": CoverageItem,
    "error": ErrorItem,
}
# Records whose model has no `type` field carry it only on the wire.
_TYPE_STRIPPED = frozenset({"coverage", "error"})


def split_lines(chunks: Iterable[bytes], max_record: int) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, line) for every non-blank line; a line over max_record is a 413."""
    buf = bytearray()
    lineno = 0
    for chunk in chunks:
        buf += chunk
        start = 0
        while True:
            nl = buf.find(b"\n", start)
            if nl < 0:
                break
            lineno += 1
            line = bytes(buf[start:nl])
            start = nl + 1
            if len(line) > max_record:
                raise too_large(max_record, f"record on line {lineno}")
            if line.strip():
                yield lineno, line
        del buf[:start]
        if len(buf) > max_record:
            raise too_large(max_record, f"record on line {lineno + 1}")
    if buf.strip():
        yield lineno + 1, bytes(buf)


def _object(lineno: int, raw: bytes) -> dict[str, Any]:
    try:
        # msgspec's parser, as for the JSON form: it refuses a lone surrogate ("\udcff"), which
        # json.loads lets through and no verdict can hold (a 500 when it is sent back).
        obj = msgspec.json.decode(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise invalid(f"line {lineno}: not valid JSON: {exc}",
                      [ProblemDetail(loc="", msg=f"not valid JSON: {exc}", type="json_invalid", line=lineno)]) from exc
    if not isinstance(obj, dict):
        raise invalid(f"line {lineno}: a record is a JSON object",
                      [ProblemDetail(loc="", msg="a record is a JSON object", type="model_type", line=lineno)])
    return obj


def _bad_type(lineno: int, got: object, allowed: str) -> Exception:
    msg = f"unknown record type {got!r} (one of {allowed})"
    return invalid(f"line {lineno}: type: {msg}", [ProblemDetail(loc="type", msg=msg, type="literal_error",
                                                                   line=lineno)])


def read_context(lines: Iterator[tuple[int, bytes]]) -> WorkloadSpec:
    first = next(lines, None)
    if first is None:
        raise invalid("the body holds no records: line 1 must be the context record",
                      [ProblemDetail(loc="", msg="missing context record", type="missing", line=1)])
    lineno, raw = first
    obj = _object(lineno, raw)
    if obj.get("type") != "context":
        raise _bad_type(lineno, obj.get("type"), "'context' first")
    obj.pop("type")
    try:
        return workload_spec(obj)
    except records.ValidationError as exc:
        raise from_validation(exc, line=lineno) from exc


def read_records(lines: Iterator[tuple[int, bytes]]) -> Iterator[Record]:
    """The records after the context, validated one by one as they are read."""
    allowed = ", ".join(RECORD_TYPES)
    for lineno, raw in lines:
        obj = _object(lineno, raw)
        kind = obj.get("type")
        model = RECORD_TYPES.get(kind) if isinstance(kind, str) else None
        if model is None:
            raise _bad_type(lineno, kind, allowed)
        if kind in _TYPE_STRIPPED:
            obj.pop("type")
        try:
            yield records.convert(obj, model)  # type: ignore[misc]
        except records.ValidationError as exc:
            raise from_validation(exc, line=lineno) from exc


def request_records(req: AnalyzeRequest) -> Iterator[dict[str, Any]]:
    """An AnalyzeRequest as NDJSON records (JSON-ready dicts), in the order the Service feeds them."""
    yield {"type": "context", **records.to_builtins(req.context)}
    for group in (req.documents, req.lines, req.activity, req.coverage, req.errors):
        for r in group:
            yield record_dict(r)
