"""records.py: a validation error names the key path and the YAML line of the first problem."""

from typing import Annotated

import msgspec
import pytest

from firstfault import yamlio
from firstfault.records import UNSET, Record, UnsetType, ValidationError, convert, dumps, field, location, problems


class Inner(Record, kw_only=True):
    a: int
    b: list[str] = field(default_factory=list)


class Outer(Record, kw_only=True):
    where: dict[str, Inner] = field(default_factory=dict)
    items: list[Inner] = field(default_factory=list)
    priority: Annotated[int, msgspec.Meta(ge=0, le=100)] = 50
    later: str | UnsetType = UNSET


@pytest.mark.parametrize(("text", "expect"), [
    ("items:\n  - a: 1\n  - a: '3'\n", "f.yaml:3: [schema] items.1.a: Expected `int`, got `str`"),
    ("priority: 101\n", "f.yaml:1: [schema] priority: Expected `int` <= 100"),
    ("items: []\nsurprise: 1\n", "f.yaml:2: [schema] surprise: unknown key"),
    ("where:\n  x:\n    a: 1\n    c: 2\n", "f.yaml:2: [schema] where.*.c: unknown key"),
    ("items:\n  - b: [x]\n", "f.yaml:2: [schema] items.0: Object missing required field `a`"),
])
def test_problem_names_file_line_and_key_path(text: str, expect: str) -> None:
    with pytest.raises(ValidationError) as info:
        convert(yamlio.load(text), Outer)
    assert problems(info.value, text, "f.yaml", "[schema]") == [expect]


def test_location_without_a_path_is_the_root() -> None:
    with pytest.raises(ValidationError) as info:
        convert([1], Outer)
    assert location(info.value) == ((), "Expected `object`, got `array`")


def test_unset_field_is_left_out_and_indent_matches_the_contract_style() -> None:
    assert dumps(Outer(items=[Inner(a=1)])) == '{"where":{},"items":[{"a":1,"b":[]}],"priority":50}'
    assert dumps(Outer(later="x"), indent=2).endswith('"priority": 50,\n  "later": "x"\n}')
