"""YAML through libyaml when it is there (10x faster than pure Python)."""

from __future__ import annotations

from typing import Any

import yaml

SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(text: str | bytes) -> Any:
    return yaml.load(text, Loader=SafeLoader)


def load_with_lines(text: str) -> tuple[Any, dict[str, int]]:
    """The document, and the line of each top-level key (for file:line errors)."""
    loader = SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for k, _v in node.value:
            lines[str(k.value)] = k.start_mark.line + 1
    return data, lines
