"""Records that are plain dataclasses until something validates or serialises them with pydantic.

Importing pydantic and building its models costs a short command (`firstfault analyze` on a small
bundle) more than the analysis itself. A `Model` is a slotted, keyword-only dataclass: building one
costs what a dataclass costs, and pydantic is imported only when a method below is first called. The
methods keep pydantic's names and meaning (validate from Python or JSON, dump to Python or JSON,
copy, JSON schema), through one `TypeAdapter` per class, built once.

`model_dump_json` (with no option but `indent`) needs no pydantic for records whose fields hold
only str, int, bool, None, lists of these and other such records: it writes the bytes pydantic
would (same key order, separators, escaping, non-ASCII written as is). A value of any other type,
or of a type the field does not declare, goes to pydantic, so its output (and its error for a lone
surrogate) is pydantic's own.

Declare a record as

    @dataclass(slots=True, kw_only=True)
    class Thing(Model):
        count: Annotated[int, STRICT]
        names: list[str] = field(default_factory=list)

With `eq=False, repr=False` the record takes `Model`'s `==` and repr (the same results, without
the two methods per class that `dataclass` compiles at import). Field order is the output order
(kw_only: defaults may come first). A field declared `Annotated[X | None, OMIT_NONE] = None` is left out
of the JSON while it is None (a field added to a document whose readers, and whose byte-for-byte
output, predate it). Unknown keys are refused
(`extra="forbid"`, as the verdict contract says). Validation errors are pydantic's `ValidationError`;
`model_errors` lists them in the words pydantic uses for a BaseModel (a record's unknown key is
`unexpected_keyword_argument` to pydantic, `extra_forbidden` to a BaseModel and to our clients).
"""

import types
import typing
from dataclasses import MISSING, fields, is_dataclass, replace
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Self, Union

if TYPE_CHECKING:
    from pydantic import TypeAdapter


class _Strict:
    """`Annotated` marker: the field takes only its own type (a JSON `false` or `"3"` is not an int).

    pydantic's own `Strict()` would import pydantic where the record is declared."""

    __slots__ = ()

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        schema = dict(handler(source))
        schema["strict"] = True
        return schema

    def __repr__(self) -> str:
        return "STRICT"


STRICT = _Strict()


class _OmitNone:
    """`Annotated` marker: the field is not written while its value is None (both writers)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "OMIT_NONE"


OMIT_NONE = _OmitNone()


def _is_none(value: Any) -> bool:
    return value is None


_OMITTED: dict[type, frozenset[str]] = {}


def omitted(cls: type) -> frozenset[str]:
    """The fields of record class `cls` marked OMIT_NONE."""
    found = _OMITTED.get(cls)
    if found is None:
        hints = typing.get_type_hints(cls, include_extras=True) if is_dataclass(cls) else {}
        found = _OMITTED[cls] = frozenset(
            f.name for f in fields(cls)
            if typing.get_origin(hints.get(f.name)) is Annotated and any(
                m is OMIT_NONE for m in hints[f.name].__metadata__)) if hints else frozenset()
    return found


_ADAPTERS: dict[type, "TypeAdapter[Any]"] = {}


def adapter(cls: type) -> "TypeAdapter[Any]":
    """The pydantic adapter of a record class, built on first use."""
    found = _ADAPTERS.get(cls)
    if found is None:
        from pydantic import TypeAdapter

        found = _ADAPTERS[cls] = TypeAdapter(cls)
    return found


class _Spec:
    """What a field (or a list's items) may hold for the plain writer: exact types, no subclasses."""

    __slots__ = ("items", "records", "scalars")

    def __init__(self) -> None:
        self.scalars: set[type] = set()  # of str, int, bool, NoneType
        self.records: set[type] = set()  # Model classes
        self.items: _Spec | None = None  # a list's items, when the field may be a list


class _Unplain(Exception):
    """A value (or a class) the plain writer leaves to pydantic."""


_NONE = type(None)
_SCALARS = (str, int, bool, _NONE)


def _add(spec: _Spec, tp: Any) -> None:
    """Fold annotation `tp` into `spec`; _Unplain for anything whose pydantic output is not plain."""
    if tp is str or tp is int or tp is bool or tp is None or tp is _NONE:  # identity: cheaper than ==
        spec.scalars.add(_NONE if tp is None else tp)
        return
    if isinstance(tp, type) and issubclass(tp, Model) and is_dataclass(tp):
        spec.records.add(tp)
        return
    origin = typing.get_origin(tp)
    if origin is Annotated:
        if any(m is not STRICT and m is not OMIT_NONE for m in tp.__metadata__):  # a constraint pydantic applies
            raise _Unplain(tp)
        _add(spec, typing.get_args(tp)[0])
    elif origin is Union or origin is types.UnionType:
        for arg in typing.get_args(tp):
            _add(spec, arg)
    elif origin is Literal:
        for arg in typing.get_args(tp):
            if type(arg) not in _SCALARS:
                raise _Unplain(tp)
            spec.scalars.add(type(arg))
    elif origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        spec.items = spec.items or _Spec()
        _add(spec.items, item)
    else:
        raise _Unplain(tp)


_PLANS: dict[type, tuple[tuple[str, _Spec, bool], ...] | None] = {}


def _plan(cls: type) -> tuple[tuple[str, _Spec, bool], ...] | None:
    """(field name, spec, left out while None) in output order, or None where pydantic must write the class."""
    if cls in _PLANS:
        return _PLANS[cls]
    plan: tuple[tuple[str, _Spec, bool], ...] | None = None
    try:
        if set(getattr(cls, "__pydantic_config__", {})) - {"extra"}:  # aliases, custom encoders, ...
            raise _Unplain(cls)
        fs = fields(cls)
        # The annotations as written, unless a module's `from __future__ import annotations` left strings.
        hints = {f.name: f.type for f in fs}
        if any(isinstance(t, str) for t in hints.values()):
            hints = typing.get_type_hints(cls, include_extras=True)
        out = []
        omit = omitted(cls)
        for f in fs:
            if f.default is not MISSING and type(f.default).__module__.startswith("pydantic"):  # a Field(...)
                raise _Unplain(cls)
            spec = _Spec()
            _add(spec, hints[f.name])
            out.append((f.name, spec, f.name in omit))
        plan = tuple(out)
    except (_Unplain, NameError, TypeError, KeyError):
        plan = None
    _PLANS[cls] = plan
    return plan


def _write(value: Any, spec: _Spec, enc: Any, nl: str | None, step: str) -> str:
    """`value` as JSON text, checked against `spec`; `nl` is a newline and the current indentation
    (None: the compact form), `step` one level of indentation. Separators and escaping are
    json.dumps's with ensure_ascii=False, which are pydantic's."""
    t = type(value)
    if t in spec.scalars:
        if t is str:
            return enc(value)  # type: ignore[no-any-return]
        if value is None:
            return "null"
        if t is bool:
            return "true" if value else "false"
        return int.__repr__(value)  # ValueError past the digit limit
    if t is list and spec.items is not None:
        if not value:
            return "[]"
        items = spec.items
        if nl is None:
            return "[" + ",".join([_write(v, items, enc, None, step) for v in value]) + "]"
        inner = nl + step
        return "[" + inner + ("," + inner).join([_write(v, items, enc, inner, step) for v in value]) + nl + "]"
    if t in spec.records:
        plan = _plan(t)
        if plan is None:
            raise _Unplain(value)
        here = [(name, fs) for name, fs, omit in plan if not omit or getattr(value, name) is not None]
        if not here:
            return "{}"
        if nl is None:
            return "{" + ",".join([f'"{name}":' + _write(getattr(value, name), fs, enc, None, step)
                                   for name, fs in here]) + "}"
        inner = nl + step
        return "{" + inner + ("," + inner).join([f'"{name}": ' + _write(getattr(value, name), fs, enc, inner, step)
                                                 for name, fs in here]) + nl + "}"
    raise _Unplain(value)


def plain_json(obj: Any, indent: int | None = None) -> str | None:
    """The JSON pydantic writes for record `obj`, or None where only pydantic can write it."""
    if indent is not None and (type(indent) is not int or indent < 0):
        return None
    # Here: importing the records should cost nothing they do not use. The C escaper when built.
    from json.encoder import encode_basestring

    spec = _Spec()
    spec.records.add(type(obj))
    try:
        out = _write(obj, spec, encode_basestring, None if indent is None else "\n", " " * (indent or 0))
        out.encode("utf-8")  # a lone surrogate: pydantic refuses it, with its own error
    except (_Unplain, ValueError, RecursionError):  # ValueError: an int past str()'s digit limit
        return None
    return out


def model_errors(exc: Any) -> list[dict[str, Any]]:
    """`exc.errors(include_url=False)` of a pydantic ValidationError, a record's errors named as a
    BaseModel's are: an unknown key is `extra_forbidden`, a non-object where a record goes `model_type`."""
    out: list[dict[str, Any]] = exc.errors(include_url=False)
    for err in out:
        if err["type"] == "unexpected_keyword_argument":
            err["type"], err["msg"] = "extra_forbidden", "Extra inputs are not permitted"
        elif err["type"] == "dataclass_type":  # the message from Python input; from JSON both say "an object"
            err["type"] = "model_type"
            err["msg"] = err["msg"].replace("should be a dictionary or an instance of",
                                            "should be a valid dictionary or instance of")
    return out


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


def _exclude_none(schema: Any, cls: type, names: frozenset[str]) -> bool:
    """Set `serialization_exclude_if` on the fields `names` of `cls`'s dataclass schema (found inside
    whatever pydantic wrapped it in)."""
    if not isinstance(schema, dict):
        return False
    if schema.get("type") == "dataclass" and schema.get("cls") is cls:
        for f in schema["schema"]["fields"]:
            if f["name"] in names:
                f["serialization_exclude_if"] = _is_none
        return True
    if schema.get("type") == "definitions":
        return any(_exclude_none(d, cls, names) for d in schema.get("definitions", ())) or _exclude_none(
            schema.get("schema"), cls, names)
    return _exclude_none(schema.get("schema"), cls, names)


class Model:
    """Base of the lazily validated records (a mixin: the subclass is the dataclass)."""

    __slots__ = ()
    # Read by pydantic when it builds the adapter; a plain dict is a valid ConfigDict.
    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "forbid"}

    # For records declared eq=False, repr=False: what dataclass would generate, for every class at once.
    # (Defining __eq__ leaves Model, and so the records, unhashable, as dataclass's eq=True does.)
    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = _names(self.__class__)
        return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)

    def __repr__(self) -> str:
        cls = self.__class__
        return f"{cls.__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in _names(cls))})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """pydantic's schema of the dataclass, with each OMIT_NONE field left out of a dump while None."""
        schema = handler(source)
        names = omitted(cls)
        if names:
            _exclude_none(schema, cls, names)
        return schema

    @classmethod
    def model_validate(cls, obj: Any, **kw: Any) -> Self:
        return adapter(cls).validate_python(obj, **kw)  # type: ignore[no-any-return]

    @classmethod
    def model_validate_json(cls, data: str | bytes | bytearray, **kw: Any) -> Self:
        return adapter(cls).validate_json(data, **kw)  # type: ignore[no-any-return]

    def model_dump(self, **kw: Any) -> dict[str, Any]:
        return adapter(type(self)).dump_python(self, **kw)  # type: ignore[no-any-return]

    def model_dump_json(self, **kw: Any) -> str:
        if kw.keys() <= {"indent"}:
            out = plain_json(self, kw.get("indent"))
            if out is not None:
                return out
        return adapter(type(self)).dump_json(self, **kw).decode("utf-8")

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Self:
        """A shallow copy (deep: of everything it holds too), with `update`'s fields replaced, unvalidated."""
        if deep:
            from copy import deepcopy

            return replace(deepcopy(self), **(update or {}))  # type: ignore[type-var]
        return replace(self, **(update or {}))  # type: ignore[type-var]

    @classmethod
    def model_json_schema(cls, **kw: Any) -> dict[str, Any]:
        return adapter(cls).json_schema(**kw)
