"""catalog/vocab.py's check of a field that must be a regular expression (vendor tables and rules use it)."""

from __future__ import annotations

import re

import pytest

from firstfault.catalog.vocab import check_regex


@pytest.mark.parametrize("pattern", [r"Xid \(PCI:[0-9a-f:.]+\): (\d+)", r"^ncclSystemError$", "(?i)out of memory"])
def test_a_regex_that_compiles_passes(pattern: str) -> None:
    assert check_regex(pattern) is None


@pytest.mark.parametrize(("pattern", "why"), [
    (r"Xid \(PCI:[0-9a-f:.+\): (\d+)", "unterminated character set"),  # one bracket short of the one above
    ("(?P<a>x)(?P<a>y)", "redefinition of group name"),
    ("*oops", "nothing to repeat"),
])
def test_a_regex_that_does_not_compile_is_a_value_error_naming_it(pattern: str, why: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"bad regex {pattern!r}: {why}")):
        check_regex(pattern)
