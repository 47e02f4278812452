"""The watch cursor shared by the attempt sources' ended_since().

'<newest end, RFC 3339>|<ref>@<end epoch>,...': the newest end time seen and
the attempts already returned near it. It only moves forward; a connector
looks back from it as far as its source may deliver records late and leaves
out the attempts it holds.
"""

from __future__ import annotations

from datetime import UTC, datetime

from firstfault.identify.base import IdentifyError


def iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat().replace("+00:00", "Z")


def format_cursor(t: datetime, attempts: set[tuple[str, int]]) -> str:
    return f"{iso(t)}|{','.join(f'{ref}@{epoch}' for ref, epoch in sorted(attempts))}"


def parse_cursor(cursor: str) -> tuple[datetime, set[tuple[str, int]]]:
    """'<RFC 3339>|4242@1764441999,...' -> (time, {(ref, end epoch)}); IdentifyError when malformed."""
    stamp, _, rest = cursor.partition("|")
    try:
        t = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        seen = set()
        for item in filter(None, rest.split(",")):
            ref, at, epoch = item.rpartition("@")
            if not at or not ref:
                raise ValueError(item)
            seen.add((ref, int(epoch)))
    except ValueError as exc:
        raise IdentifyError(f"cursor {cursor[:80]!r}: expected '<RFC 3339 time>|<ref>@<epoch>,...'") from exc
    if t.tzinfo is None:
        raise IdentifyError(f"cursor {cursor[:80]!r}: the time needs a zone")
    return t.astimezone(UTC), seen
