"""Problems a request can have, each with its HTTP status and a message that names the fault."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from firstfault import records
from firstfault.responses import ProblemBody, ProblemDetail


class Problem(Exception):
    def __init__(self, status: int, error: str, message: str, detail: Sequence[ProblemDetail] = (),
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message
        self.detail = list(detail)
        self.headers = headers or {}

    def body(self) -> ProblemBody:
        return ProblemBody(error=self.error, message=self.message, detail=self.detail)


def json_path(loc: Sequence[Any], prefix: str = "") -> str:
    """('lines', 3, 'time') -> 'lines[3].time'."""
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def invalid(message: str, detail: Sequence[ProblemDetail] = ()) -> Problem:
    return Problem(422, "invalid_request", message, detail)


def _record_detail(exc: records.ValidationError, prefix: str, line: int | None) -> ProblemDetail:
    """A records.ValidationError (msgspec's first problem) as the detail naming its key path."""
    loc, msg = records.location(exc)
    unknown = msg == "unknown key"
    return ProblemDetail(loc=json_path(loc, prefix), msg="unknown field" if unknown else msg,
                         type="extra_forbidden" if unknown else "invalid", line=line)


def from_validation(exc: Any, prefix: str = "", line: int | None = None, limit: int = 50) -> Problem:
    """A validation error as a 422 naming each field path (and the NDJSON line): a records.ValidationError
    (its first problem, which is all msgspec reports) or a pydantic one (up to `limit` problems)."""
    details = []
    if isinstance(exc, records.ValidationError):
        details.append(_record_detail(exc, prefix, line))
    else:
        for err in exc.errors(include_url=False)[:limit]:
            msg = "unknown field" if err["type"] == "extra_forbidden" else str(err["msg"])
            details.append(ProblemDetail(loc=json_path(err["loc"], prefix), msg=msg, type=err["type"], line=line))
    first = details[0] if details else None
    where = f"line {line}: " if line is not None else ""
    head = f"{where}{first.loc or '(body)'}: {first.msg}" if first else f"{where}invalid request"
    more = f" (and {len(details) - 1} more)" if len(details) > 1 else ""
    return invalid(head + more, details)
