"""`re`, with `compile` deferred to a pattern's first use.

The extractors define a few hundred patterns at module level; compiling
them all is most of what importing the analyze path costs, while a small
bundle reaches only a few of them. A module that writes

    from firstfault import lazyre as re

keeps its `re.compile(...)` lines as they are: each returns a stand-in that
compiles the real pattern (with the standard `re`, same pattern, same flags)
the first time one of its methods is called or `.flags`, `.groups` or
`.groupindex` is read (`.pattern` needs no compiling), then holds the
compiled pattern's methods as its own attributes, so a call after the first
costs what a call on a compiled pattern costs. Everything else
(`re.escape`, `re.IGNORECASE`, `re.Match`, `re.sub` on a string, ...) is the
standard module's.

A stand-in is not an `re.Pattern` instance (`isinstance` says so), compares
and hashes by identity, and pickles as its pattern and flags (compiled again,
lazily, where it is unpickled).
A bad pattern raises `re.error` at its first use instead of at import: the
tests import and exercise every module, and tests/test_lazyre.py compiles
every stand-in the analyze path defines.
"""

from __future__ import annotations

import re as _re
from collections.abc import Mapping
from functools import partial
from re import (
    ASCII,
    DOTALL,
    IGNORECASE,
    LOCALE,
    MULTILINE,
    NOFLAG,
    UNICODE,
    VERBOSE,
    A,
    I,
    L,
    M,
    Match,
    Pattern,
    RegexFlag,
    S,
    U,
    X,
    error,
    escape,
    findall,
    finditer,
    fullmatch,
    match,
    purge,
    search,
    split,
    sub,
    subn,
)
from typing import Any, AnyStr, cast
from weakref import WeakSet

__all__ = [
    "ASCII", "DOTALL", "IGNORECASE", "LOCALE", "MULTILINE", "NOFLAG", "UNICODE", "VERBOSE", "A", "I", "L", "M",
    "Match", "Pattern", "RegexFlag", "S", "U", "X", "compile", "created", "error", "escape", "findall", "finditer",
    "fullmatch", "is_compiled", "match", "purge", "search", "split", "sub", "subn",
]

# The compiled pattern's methods, which a stand-in holds as its own attributes: before the first
# use each is a trampoline that compiles; after it, the compiled pattern's bound method itself.
# Instance attributes, not class attributes (nor a __getattr__), keep the attribute lookup of a
# call as fast as on a compiled pattern.
_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner")

_created: WeakSet[_Lazy] = WeakSet()  # the stand-ins alive, for the test that compiles them all


class _Lazy:
    """A pattern compiled on first use (see the module docstring)."""

    def __init__(self, pattern: str | bytes, flags: int) -> None:
        self.pattern = pattern
        self._flags = flags
        self._compiled: Pattern[Any] | None = None
        for name in _METHODS:  # setattr, not __dict__: keeps the instance's compact attribute layout
            setattr(self, name, partial(self._first_use, name))

    def _first_use(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._compile(), name)(*args, **kwargs)

    def _compile(self) -> Pattern[Any]:
        compiled = self._compiled
        if compiled is None:
            compiled = _re.compile(self.pattern, self._flags)
            for name in _METHODS:
                setattr(self, name, getattr(compiled, name))
            self._compiled = compiled
        return compiled

    @property
    def flags(self) -> int:
        return self._compile().flags

    @property
    def groups(self) -> int:
        return self._compile().groups

    @property
    def groupindex(self) -> Mapping[str, int]:
        return self._compile().groupindex

    def __repr__(self) -> str:
        return repr(self._compile())

    def __reduce__(self) -> tuple[Any, ...]:
        return (compile, (self.pattern, self._flags))

    def __copy__(self) -> _Lazy:
        return self  # as a compiled pattern: immutable, a copy is itself

    def __deepcopy__(self, memo: dict[int, Any]) -> _Lazy:
        return self


def compile(pattern: AnyStr, flags: int = 0) -> Pattern[AnyStr]:
    """A pattern compiled the first time it is used; the same matches as `re.compile(pattern, flags)`.

    A compiled pattern (or a stand-in) passed in is returned as it is, as `re.compile` does."""
    if isinstance(pattern, (Pattern, _Lazy)):
        return cast("Pattern[AnyStr]", pattern)
    lazy = _Lazy(pattern, int(flags))
    _created.add(lazy)
    return cast("Pattern[AnyStr]", lazy)


def is_compiled(p: Pattern[Any]) -> bool:
    """False for a stand-in not used yet; True once used, and for a real compiled pattern."""
    return not isinstance(p, _Lazy) or p._compiled is not None


def created() -> list[Pattern[Any]]:
    """The stand-ins alive in this process, for tests."""
    return cast("list[Pattern[Any]]", list(_created))
