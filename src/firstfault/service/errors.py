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


def from_validation(exc: records.ValidationError, prefix: str = "", line: int | None = None) -> Problem:
    """A validation error as a 422 naming the field path (and the NDJSON line): msgspec reports a
    document's first problem only."""
    loc, msg = records.location(exc)
    unknown = msg == "unknown key"
    first = ProblemDetail(loc=json_path(loc, prefix), msg="unknown field" if unknown else msg,
                          type="extra_forbidden" if unknown else "value_error", line=line)
    where = f"line {line}: " if line is not None else ""
    return invalid(f"{where}{first.loc or '(body)'}: {first.msg}", [first])
