"""Records: one declaration per concept, a msgspec Struct that msgspec validates, encodes and describes.

A rule, a vendor table row, workload.yaml and the verdict are each declared once, as a subclass of
`Record`. msgspec builds them as cheaply as a slotted dataclass, validates a parsed YAML or JSON
document into them (`convert`, `decode`), writes their JSON (`encode`, `dumps`) and their JSON Schema
(`schemas`), and imports in a few milliseconds, so a short command pays nothing for validation it does
not do. Declare one as `class Thing(Record, kw_only=True)`. Field order is the output order; unknown
keys are refused (the verdict contract says so); a field whose type is `X | UnsetType = UNSET` is left
out of the JSON while it is unset (a field added to a document whose readers, and whose byte-for-byte
output, predate it).

Validation is strict: a YAML `"3"` is not an int, a `false` is not a string. msgspec stops at a
document's first problem; `problems` names it as `file:line: [tag] key.path: message`, the line
found from the key path in the YAML text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import msgspec.structs
from msgspec import UNSET, UnsetType, ValidationError, field

__all__ = ["UNSET", "FrozenRecord", "Record", "UnsetType", "ValidationError", "convert", "decode", "dumps", "encode",
           "field", "location", "problems", "replace", "schemas", "to_builtins"]

T = TypeVar("T")
R = TypeVar("R", bound=msgspec.Struct)


class Record(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The base of every record read from or written to a document: unknown keys refused.

    msgspec applies `kw_only` to the fields a class itself declares, so each record says it again:
    `class Thing(Record, kw_only=True)` (keyword-only, and a required field may follow a default)."""


class FrozenRecord(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    """A record that cannot change once built (a vendor table's row, a metric condition): Record's options, and
    frozen. It derives from msgspec.Struct itself: mypy lets no frozen class derive from an unfrozen one."""


_ENCODER = msgspec.json.Encoder()


def encode(value: Any) -> bytes:
    """The compact JSON of a record (or of builtins holding records): keys in field order, no spaces."""
    return _ENCODER.encode(value)


def dumps(value: Any, indent: int | None = None) -> str:
    """The JSON text of a record; `indent` spaces per level when given (a key's colon then has a space)."""
    raw = _ENCODER.encode(value)
    if indent is not None:
        raw = msgspec.json.format(raw, indent=indent)
    return raw.decode("utf-8")


def decode(data: bytes | bytearray | memoryview | str, type_: type[T]) -> T:
    """A JSON document validated into `type_` (strict: no string for a number); ValidationError otherwise."""
    return msgspec.json.decode(data, type=type_, strict=True)


def convert(data: Any, type_: type[T], *, strict: bool = True) -> T:
    """Parsed Python data (a YAML document, say) validated into `type_`; ValidationError otherwise (a lone
    surrogate where a Literal's value is expected too: msgspec compares it as UTF-8, which cannot hold one)."""
    try:
        return msgspec.convert(data, type=type_, strict=strict)
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start:exc.end] if isinstance(exc.object, str) else ""
        raise ValidationError(f"a lone surrogate ({bad.encode('unicode_escape').decode()}) where one of a fixed "
                              "set of values is expected") from None


def replace(record: R, **changes: Any) -> R:
    """A shallow copy of `record` with `changes` set, unvalidated (copy.deepcopy first for a deep one)."""
    return msgspec.structs.replace(record, **changes)


def to_builtins(value: Any) -> Any:
    """A record as dicts, lists and scalars (what its JSON would decode to), unset fields left out."""
    return msgspec.to_builtins(value)


def schemas(types: list[Any], ref_template: str = "#/components/schemas/{name}") -> tuple[list[dict[str, Any]],
                                                                                           dict[str, Any]]:
    """The JSON Schema of each type and the definitions they refer to (for an OpenAPI document)."""
    out, components = msgspec.json.schema_components(types, ref_template=ref_template)
    return list(out), dict(components)


_AT = " - at `$"  # msgspec ends a message with the path it refers to: "Expected `int` - at `$.a[0]`"
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")
_UNKNOWN = re.compile(r"^Object contains unknown field `(.*)`$")
_FIELD_CHECK = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*): (.+)$", re.DOTALL)


def location(exc: ValidationError) -> tuple[tuple[str | int, ...], str]:
    """The key path and the message of a validation error (`$.match[0].where` -> ("match", 0, "where")).

    A mapping's key, which msgspec does not name, is "*". An unknown key's path ends at the key itself and
    its message is "unknown key". A record's own check (`__post_init__`) names the field it refuses by
    beginning its message with it (`ValueError("end: ... is before start")`): the path then ends at that field."""
    text = str(exc)
    at = text.rfind(_AT) if text.endswith("`") else -1
    msg, steps = (text[:at], text[at + len(_AT):-1]) if at >= 0 else (text, "")
    # msgspec does not name a mapping's key (`[...]`): "*" stands for it, and the line is the mapping's.
    loc: list[str | int] = [s.group(1) if s.group(1) is not None else "*" if s.group(2) == "..." else int(s.group(2))
                            for s in _STEP.finditer(steps)]
    unknown = _UNKNOWN.match(msg)
    if unknown:
        loc.append(unknown.group(1))
        msg = "unknown key"
    else:
        field_check = _FIELD_CHECK.match(msg)
        if field_check:  # a record's own check (__post_init__) that names its field first: "end: before start"
            loc.append(field_check.group(1))
            msg = field_check.group(2)
    return tuple(loc), msg


def problems(exc: ValidationError, text: str | None, name: str, tag: str = "") -> list[str]:
    """The error as one 'file:line: [tag] key.path: message' (the line of the key path in the YAML `text`)."""
    from firstfault.yamlio import line_of

    loc, msg = location(exc)
    path = ".".join(str(p) for p in loc) or "(root)"
    line = line_of(text, loc) if text is not None else None
    return [f"{name}:{line or 1}: {tag + ' ' if tag else ''}{path}: {msg}"]


def load_yaml(path: Path, read: Callable[[dict[Any, Any]], T], error: type[Exception]) -> T:
    """A YAML file as a record: `read` validates its mapping (`convert` into the record's type, say); a problem
    raises `error` naming file:line and key path (yamlio reads the file strictly: a duplicate key is one)."""
    from firstfault import yamlio

    text, data = yamlio.load_text(path, error)
    if not isinstance(data, dict):
        raise error(f"{path}: expected a mapping at the top level")
    try:
        return read(data)
    except ValidationError as exc:
        raise error("\n".join(problems(exc, text, str(path)))) from exc
