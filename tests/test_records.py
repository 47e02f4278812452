"""The vendor tables' records agree with the pydantic models that validate them.

The table rows a start-up reads from the on-disk cache are plain records (catalog/tables.py); the models of
catalog/tableschema.py validate the YAML and are turned into those records. A field added to one side only,
or given another type or default, fails here rather than being dropped or defaulted silently. (The rule
catalog's records are declared once, in engine/rules.py: nothing of theirs to compare.)
"""

from __future__ import annotations

import re
import typing
from typing import Any

import pytest
from pydantic import BaseModel

from firstfault.catalog import tables, tableschema

REQUIRED = "<required>"


def _plain(annotation: object) -> str:
    """An annotation's text without the module of each class it names (the model's Op is the record's Op)."""
    return re.sub(r"\bfirstfault(?:\.\w+)+\.(\w+)", r"\1", repr(annotation)).replace("typing.", "")


def _model_fields(model: type[BaseModel]) -> dict[str, tuple[str, Any]]:
    return {name: (_plain(f.annotation), REQUIRED if f.is_required() else f.get_default(call_default_factory=True))
            for name, f in model.model_fields.items()}


def _record_fields(record: type) -> dict[str, tuple[str, Any]]:
    hints = typing.get_type_hints(record)
    defaults = record._field_defaults  # type: ignore[attr-defined]  # a NamedTuple
    return {name: (_plain(hints[name]), defaults.get(name, REQUIRED)) for name in record._fields}  # type: ignore[attr-defined]


@pytest.mark.parametrize(("model", "record"), [(m, getattr(tables, m.__name__)) for m in tableschema.MODELS],
                         ids=lambda x: x.__name__)
def test_a_record_has_its_models_fields_types_and_defaults(model: type[BaseModel], record: type) -> None:
    assert _record_fields(record) == _model_fields(model)


def test_every_model_is_listed() -> None:
    # MODELS drives the check above: a model left out of it would go unchecked.
    defined = {v for v in vars(tableschema).values()
               if isinstance(v, type) and issubclass(v, BaseModel) and v.__module__ == tableschema.__name__
               and not v.__name__.startswith("_")}
    assert defined == set(tableschema.MODELS)
