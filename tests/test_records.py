"""The engine's records of the rule catalog agree with the pydantic models that validate them.

The rules a start-up reads from the on-disk cache are plain records (engine/rules.py); the models of
engine/ruleschema.py validate the YAML and are turned into those records (the vendor tables' rows are
declared once, catalog/tables.py). A field added to one side only, or given another type or default, fails
here rather than being dropped or defaulted silently.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from types import ModuleType
from typing import Any

import pytest
from pydantic import BaseModel

from firstfault.engine import rules, ruleschema

REQUIRED = "<required>"


def _plain(annotation: object) -> str:
    """An annotation's text without the module of each class it names (the model's Op is the record's Op)."""
    return re.sub(r"\bfirstfault(?:\.\w+)+\.(\w+)", r"\1", repr(annotation)).replace("typing.", "")


def _model_fields(model: type[BaseModel]) -> dict[str, tuple[str, Any]]:
    # A default that is a model is compared as its record.
    return {name: (_plain(f.annotation),
                   REQUIRED if f.is_required() else ruleschema.to_records(f.get_default(call_default_factory=True)))
            for name, f in model.model_fields.items()}


def _record_fields(record: type) -> dict[str, tuple[str, Any]]:
    hints = typing.get_type_hints(record)
    if dataclasses.is_dataclass(record):
        out = {}
        for f in dataclasses.fields(record):
            if f.default is not dataclasses.MISSING:
                default: Any = f.default
            elif f.default_factory is not dataclasses.MISSING:
                default = f.default_factory()
            else:
                default = REQUIRED
            out[f.name] = (_plain(hints[f.name]), default)
        return out
    defaults = record._field_defaults  # type: ignore[attr-defined]  # a NamedTuple
    return {name: (_plain(hints[name]), defaults.get(name, REQUIRED)) for name in record._fields}  # type: ignore[attr-defined]


def _pairs(schema: ModuleType, records: ModuleType) -> list[tuple[type[BaseModel], type]]:
    return [(m, getattr(records, m.__name__)) for m in schema.MODELS]


@pytest.mark.parametrize(("model", "record"), _pairs(ruleschema, rules), ids=lambda x: x.__name__)
def test_a_record_has_its_models_fields_types_and_defaults(model: type[BaseModel], record: type) -> None:
    fields = _record_fields(record)
    if model.model_config.get("extra") == "allow":  # the model's other keys: the record's `extra`
        assert fields.pop("extra") == ("dict[str, Any]", {})
    assert fields == _model_fields(model)


def test_every_model_is_listed() -> None:
    # MODELS drives to_records and the check above: a model left out of it would go unchecked.
    defined = {v for v in vars(ruleschema).values()
               if isinstance(v, type) and issubclass(v, BaseModel) and v.__module__ == ruleschema.__name__
               and not v.__name__.startswith("_")}
    assert defined == set(ruleschema.MODELS)


def test_the_check_sees_a_changed_default() -> None:
    @dataclasses.dataclass(kw_only=True)
    class WidespreadSettings:
        min_nodes: int = 4
        min_fraction: float = 0.5
        window: float = 60.0

    assert _record_fields(WidespreadSettings) != _model_fields(ruleschema.WidespreadSettings)
    assert _record_fields(rules.WidespreadSettings) == _model_fields(ruleschema.WidespreadSettings)


def test_a_validated_rule_becomes_records_all_the_way_down() -> None:
    rule = ruleschema.Rule.model_validate({
        "id": "x", "title": "X", "role": "cause", "category": "a.b",
        "match": [{"event": "gpu.xid", "where": {"xid": {"not": [1, 2]}, "n": [3]}}],
        "tests": [{"name": "t", "events": [{"kind": "gpu.xid", "xid": 79}], "expect": []}]})
    rec = ruleschema.to_records(rule)
    assert isinstance(rec, rules.Rule) and isinstance(rec.match[0], rules.Selection)
    assert rec.match[0].where == {"xid": rules.Op(not_=[1, 2]), "n": [3]}
    assert rec.tests[0].events[0] == rules.TestEvent(kind="gpu.xid", extra={"xid": 79})
    assert rec.group_by == ["node"] and rec.priority == 50
