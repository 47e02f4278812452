"""What is left of the vendor tables' pydantic schema: the regex validator engine/ruleschema.py imports.

The table rows are declared once, with their constraints, in catalog/tables.py; this shim goes with
engine/ruleschema.py (the rules' own change), which takes `check_regex` from catalog/vocab.py instead.
"""

from firstfault.catalog.vocab import check_regex


def regex(v: str | None) -> str | None:
    """A field that must be a regular expression (vocab.check_regex), as a pydantic field validator."""
    if v is not None:
        check_regex(v)
    return v
