"""Records that are plain dataclasses until something validates or serialises them with pydantic.

Importing pydantic and building its models costs a short command (`firstfault analyze` on a small
bundle) more than the analysis itself. A `Model` is a slotted, keyword-only dataclass: building one
costs what a dataclass costs, and pydantic is imported only when a method below is first called. The
methods keep pydantic's names and meaning (validate from Python or JSON, dump to Python or JSON,
copy, JSON schema), through one `TypeAdapter` per class, built once.

Declare a record as

    @dataclass(slots=True, kw_only=True)
    class Thing(Model):
        count: Annotated[int, STRICT]
        names: list[str] = field(default_factory=list)

Field order is the output order (kw_only: defaults may come first). Unknown keys are refused
(`extra="forbid"`, as the verdict contract says). Validation errors are pydantic's `ValidationError`.
"""

from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Self

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


_ADAPTERS: dict[type, "TypeAdapter[Any]"] = {}


def adapter(cls: type) -> "TypeAdapter[Any]":
    """The pydantic adapter of a record class, built on first use."""
    found = _ADAPTERS.get(cls)
    if found is None:
        from pydantic import TypeAdapter

        found = _ADAPTERS[cls] = TypeAdapter(cls)
    return found


class Model:
    """Base of the lazily validated records (a mixin: the subclass is the dataclass)."""

    __slots__ = ()
    # Read by pydantic when it builds the adapter; a plain dict is a valid ConfigDict.
    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "forbid"}

    @classmethod
    def model_validate(cls, obj: Any, **kw: Any) -> Self:
        return adapter(cls).validate_python(obj, **kw)  # type: ignore[no-any-return]

    @classmethod
    def model_validate_json(cls, data: str | bytes | bytearray, **kw: Any) -> Self:
        return adapter(cls).validate_json(data, **kw)  # type: ignore[no-any-return]

    def model_dump(self, **kw: Any) -> dict[str, Any]:
        return adapter(type(self)).dump_python(self, **kw)  # type: ignore[no-any-return]

    def model_dump_json(self, **kw: Any) -> str:
        return adapter(type(self)).dump_json(self, **kw).decode("utf-8")

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Self:
        return replace(self, **(update or {}))  # type: ignore[type-var]

    @classmethod
    def model_json_schema(cls, **kw: Any) -> dict[str, Any]:
        return adapter(cls).json_schema(**kw)
