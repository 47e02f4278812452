"""Literals for the query languages the connectors speak (LogQL, PromQL) and the selectors evidence shows.

Both languages take Go's double-quoted strings for label values and RE2 for
`=~` / `|~` regexes, so one escaper each serves Loki, Prometheus and the
metrics reader's selector text.
"""

from __future__ import annotations

__all__ = ["label_value", "quoted", "re2_literal"]

_RE2_SPECIAL = frozenset("\\.+*?()|[]{}^$")


def re2_literal(text: str) -> str:
    """`text` as an RE2 regex that matches it literally: only RE2's metacharacters are escaped."""
    return "".join("\\" + c if c in _RE2_SPECIAL else c for c in text)


def label_value(text: str) -> str:
    """The inside of a double-quoted LogQL/PromQL (Go) string literal holding `text`."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def quoted(text: str) -> str:
    """A double-quoted LogQL/PromQL (Go) string literal."""
    return '"' + label_value(text) + '"'
