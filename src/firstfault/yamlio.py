"""The one YAML loader of every file firstfault reads (libyaml when it is there: 10x faster than pure Python).

Every document is loaded strictly: a key given twice in one mapping is an error naming both lines,
never the silent last-one-wins of YAML (a second `tokens: []` would turn the Service's authentication
off). workload.yaml, cluster.yaml, the Service settings, the catalog's rules, settings and tables all
come through here.

pydantic is imported only when a document is validated by a model (not by a `fast` check) or its
errors are listed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import yaml

if TYPE_CHECKING:
    from pydantic import ValidationError

M = TypeVar("M")
M_co = TypeVar("M_co", covariant=True)


class Validates(Protocol[M_co]):
    """A model class (pydantic's, or a record class with the same method)."""

    def model_validate(self, obj: Any) -> M_co: ...

SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_PROBLEMS = 50  # validation problems listed per file; the rest are counted


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping names the same key twice (YAML would silently keep the last)."""


_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"


class StrictLoader(SafeLoader):  # type: ignore[misc]
    """SafeLoader that refuses duplicate keys, naming both lines (merge keys `<<` may still override).

    A large document is mostly plain scalars (a 16k-rank job's workload.yaml: 2,048 nodes' rank ranges and GPU
    maps, 40k scalars), and the Python half of the loader spends its time on them one at a time: the
    implicit tag of each (regexes by its first character), then a constructor call with its bookkeeping.
    Both are pure functions of the scalar's text, so here they are worked out once per distinct text
    (`_tags`, `_ints`) and a mapping or sequence whose scalars are strings or integers is built directly;
    anything else (merge keys, other tags, nested collections) goes the standard way. The same document
    as SafeLoader's, built in about two thirds of the time."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._tags: dict[tuple[str, tuple[bool, bool]], str] = {}
        self._ints: dict[str, int] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is not yaml.ScalarNode or self.yaml_path_resolvers:
            return super().resolve(kind, value, implicit)
        key = (value, implicit)
        tag = self._tags.get(key)
        if tag is None:
            tag = self._tags[key] = super().resolve(kind, value, implicit)
        return tag

    def _value(self, node: Any, deep: bool) -> Any:
        """construct_object(node) for a string or integer scalar without the bookkeeping (the same value)."""
        if type(node) is yaml.ScalarNode:
            if node.tag == _STR:
                return node.value
            if node.tag == _INT:
                got = self._ints.get(node.value)
                if got is None:
                    got = self._ints[node.value] = self.construct_yaml_int(node)
                return got
        return self.construct_object(node, deep=deep)

    def construct_sequence(self, node: Any, deep: bool = False) -> Any:
        if not isinstance(node, yaml.SequenceNode):
            return super().construct_sequence(node, deep=deep)
        return [self._value(child, deep) for child in node.value]

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode) and all(
                type(k) is yaml.ScalarNode and (k.tag == _STR or k.tag == _INT) for k, _ in node.value):
            # No merge key and no `=` key for flatten_mapping to rewrite: keys first (the duplicate check,
            # as below), then the values in order, as BaseConstructor.construct_mapping builds them.
            seen: dict[object, int] = {}
            keys = []
            for key_node, _ in node.value:
                key = self._value(key_node, False)
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise DuplicateKeyError(
                        None, None, f"duplicate key {key!r} (first at line {seen[key]}, again at line {line})",
                        key_node.start_mark)
                seen[key] = line
                keys.append(key)
            return {key: self._value(value_node, deep) for key, (_, value_node)
                    in zip(keys, node.value, strict=True)}
        if isinstance(node, yaml.MappingNode):
            first: dict[object, int] = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node)
                if not isinstance(key, (str, int, float, bool)) and key is not None:
                    continue
                line = key_node.start_mark.line + 1
                if key in first:
                    raise DuplicateKeyError(
                        None, None, f"duplicate key {key!r} (first at line {first[key]}, again at line {line})",
                        key_node.start_mark)
                first[key] = line
        return super().construct_mapping(node, deep=deep)


def load(text: str | bytes) -> Any:
    """One YAML document; a duplicate key in any mapping is a DuplicateKeyError (a yaml.YAMLError)."""
    return yaml.load(text, Loader=StrictLoader)


def load_file(path: Path, error: type[Exception]) -> Any:
    """The document in a file; `error` naming the file (and the line, for a duplicate key) when it
    cannot be read or parsed."""
    return _parse(_read(path, error), path, error)


def load_text(path: Path, error: type[Exception]) -> tuple[str, Any]:
    """A file's text (for the lines of errors) and its document, as load_file reads it."""
    text = _read(path, error)
    return text, _parse(text, path, error)


def _read(path: Path, error: type[Exception]) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from exc


def _parse(text: str, path: Path, error: type[Exception]) -> Any:
    try:
        return load(text)
    except DuplicateKeyError as exc:
        mark = exc.problem_mark
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise error(f"{where}: {exc.problem}") from exc
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML: {exc}") from exc


def load_with_lines(text: str) -> tuple[Any, dict[str, int]]:
    """The document, and the line of each top-level key (for file:line errors)."""
    loader = StrictLoader(text)
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


def compose(text: str) -> Any:
    """The node tree of `text` (for line numbers), or None when it does not parse."""
    try:
        return yaml.compose(text, Loader=SafeLoader)
    except yaml.YAMLError:
        return None


def line_of(text: str | None, loc: tuple[Any, ...], root: Any = None) -> int | None:
    """The line of the node at a key path (a pydantic error's `loc`), in `root` (composed once) or `text`."""
    node: Any = root if root is not None else (compose(text) if text is not None else None)
    if node is None:
        return None
    line = None
    for key in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            nxt = None
            for k, v in node.value:
                if k.value == key:
                    line, nxt = k.start_mark.line + 1, v
                    break
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line + 1
        else:
            break
    return line


def validation_problems(exc: ValidationError, text: str, name: str, tag: str = "") -> list[str]:
    """One 'file:line: [tag] key.path: message' per error (at most MAX_PROBLEMS); unknown keys say so.

    The file is composed once for all errors: 4,000 bad nodes cost one parse, not 4,000.
    """
    out = []
    errors = exc.errors()
    root = compose(text)
    for err in errors[:MAX_PROBLEMS]:
        loc = tuple(err["loc"])
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        path = ".".join(str(p) for p in loc) or "(root)"
        out.append(f"{name}:{line_of(None, loc, root) or 1}: {tag + ' ' if tag else ''}{path}: {msg}")
    if len(errors) > MAX_PROBLEMS:
        out.append(f"{name}: ... and {len(errors) - MAX_PROBLEMS} more problem(s)")
    return out


def load_model(path: Path, model: Validates[M], error: type[Exception],
               fast: Callable[[dict[Any, Any]], M | None] | None = None) -> M:
    """Reads a YAML file into a strict model; every problem raises `error` naming file:line and key path.

    `fast`, when given, may build the result from the parsed document without the model (None: it cannot
    vouch for the document); it must accept only what the model accepts, and build what the model would.
    """
    text = _read(path, error)
    data = _parse(text, path, error)
    if not isinstance(data, dict):
        raise error(f"{path}: expected a mapping at the top level")
    if fast is not None:
        made = fast(data)
        if made is not None:
            return made
    from pydantic import ValidationError

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error("\n".join(validation_problems(exc, text, str(path)))) from exc
