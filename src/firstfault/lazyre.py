"""`re`, with `compile` deferred to a pattern's first use.

The extractors define a few hundred patterns at module level; compiling
them all is most of what importing the analyze path costs, while a small
bundle reaches only a few of them. A module that writes

    from firstfault import lazyre as re

keeps its `re.compile(...)` lines as they are: each returns a stand-in that
compiles the real pattern (what `re.compile` gives for the same pattern and
flags; see below for where its code comes from) the first time one of its methods is called or `.flags`, `.groups` or
`.groupindex` is read (`.pattern` needs no compiling), then holds the
compiled pattern's methods as its own attributes. A stand-in made at a
module's import also rebinds, at its first use, the module-level names
that hold it to the compiled pattern itself, so `PATTERN.search(line)` in
that module costs after the first call exactly what it costs with `re`; a
stand-in reached another way (in a tuple, imported by name elsewhere) stays
one, and a call through it costs a little more (about 170 instructions, an
attribute that CPython cannot specialise as a method). Everything else
(`re.escape`, `re.IGNORECASE`, `re.Match`, `re.sub` on a string, ...) is the
standard module's.

A stand-in is not an `re.Pattern` instance (`isinstance` says so), compares
and hashes by identity, and pickles as its pattern and flags (compiled again,
lazily, where it is unpickled).
A bad pattern raises `re.error` at its first use instead of at import: the
tests import and exercise every module, and tests/test_lazyre.py compiles
every stand-in the analyze path defines.

What compiling costs is the pure-Python half of `re` (parsing the pattern
and generating its matcher code); the C half (`_sre.compile`, which checks
the code and builds the pattern object) is quick. So the code generated for
each stand-in is also kept in the on-disk cache (firstfault/cache.py), in
one entry per Python build (`sys.version` and the matcher's magic number
are in its key): a later process hands the kept code straight to
`_sre.compile`, exactly as `re` does after generating it; a compiled
pattern compares equal to another only when their code is the same, which
tests/test_lazyre.py checks against `re.compile` for every stand-in. This
uses `re`'s internals (`re._parser`, `re._compiler`, `_sre`): where they
differ from what this module expects, or an entry does not load, patterns
are compiled by `re.compile` and nothing is kept. Only patterns made while
a module is being imported (at its top level, or by the functions its top
level calls), and those a caller says are made from the shipped tables alone
(`compile(..., keep=True)`, `Literals(..., keep=True)`: the CUDA and strerror
tables' texts, built at their first use, which a job's NCCL or CUDA error
line reaches in each process, a worker of `-j N` included: about 70 ms of
generating), are kept: a pattern built at run time from the input (a
bundle's host names) is compiled by `re.compile`, so the entry does not
change from run to run. The entry is written at exit when new code was
generated, and holds at most MAX_KEPT patterns and MAX_KEPT_BYTES (past
that, this process's patterns only).
"""

from __future__ import annotations

import atexit
import importlib
import marshal
import re as _re
import sys
import threading
from array import array
from collections.abc import Iterable, Mapping
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
    "ASCII", "DOTALL", "IGNORECASE", "LOCALE", "MULTILINE", "NOFLAG", "UNICODE", "VERBOSE", "A", "I", "L", "Literals",
    "M", "Match", "Pattern", "RegexFlag", "S", "U", "X", "alternation", "compile", "created", "error", "escape",
    "findall", "finditer", "fullmatch", "is_compiled", "match", "purge", "search", "split", "sub", "subn",
    "write_at_worker_exit",
]

# The compiled pattern's methods, which a stand-in holds as its own attributes: before the first
# use each is a trampoline that compiles; after it, the compiled pattern's bound method itself.
# Instance attributes, not class attributes (nor a __getattr__), keep the attribute lookup of a
# call as fast as on a compiled pattern.
_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner")

_created: WeakSet[_Lazy] = WeakSet()  # the stand-ins alive, for the test that compiles them all

MAX_KEPT = 4096  # patterns in the on-disk entry
MAX_KEPT_BYTES = 16 << 20

# (pattern, flags) -> the arguments of _sre.compile after the pattern: (flags, code, groups - 1,
# groupindex, indexgroup), the code as the bytes of an array of _sre's code words (_CODE_TYPE), made a list
# at its use: read back as a list of ints, an entry of 800 patterns (350,000 words) took 12 ms of every start-up
# to unmarshal, as bytes under 1 ms. `_kept` is what the on-disk entry held, `_made` what this process generated.
_Parts = tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]]
_kept: dict[tuple[str | bytes, int], _Parts] | None = None
_made: dict[tuple[str | bytes, int], _Parts] = {}
_used: set[tuple[str | bytes, int]] = set()
_lock = threading.Lock()

try:  # re's internals (CPython 3.11+), typed Any: typeshed does not describe them
    _sre: Any = importlib.import_module("_sre")
    _re_parser: Any = importlib.import_module("re._parser")
    _re_compiler: Any = importlib.import_module("re._compiler")
except ImportError:  # pragma: no cover - another implementation: plain re.compile
    _sre = None
# the array type of _sre's code words (its CODESIZE bytes each)
_CODE_TYPE = next((t for t in "IL" if _sre is not None and array(t).itemsize == _sre.CODESIZE), "")
if not _CODE_TYPE:  # pragma: no cover - not what this module expects: plain re.compile
    _sre = None


def _entry_name() -> str:
    from firstfault import cache

    return "re-" + cache.key(sys.version, str(_sre.MAGIC), str(_sre.CODESIZE), str(_sre.MAXGROUPS), sys.byteorder,
                             "code-bytes") + ".marshal"


def _loads(data: bytes | None) -> dict[tuple[str | bytes, int], _Parts]:
    try:
        loaded = marshal.loads(data) if data is not None else None
    except Exception:  # an unreadable or foreign entry: compile, and write a new one at exit
        loaded = None
    return loaded if isinstance(loaded, dict) else {}


def _load_kept() -> dict[tuple[str | bytes, int], _Parts]:
    from firstfault import cache

    return _loads(cache.get(_entry_name()))


def _generate(pattern: str | bytes, flags: int) -> _Parts:
    """What re._compiler.compile hands to _sre.compile, as plain values (marshal takes no int subclass)."""
    p = _re_parser.parse(pattern, flags)
    code = array(_CODE_TYPE, _re_compiler._code(p, flags)).tobytes()
    groupindex = dict(p.state.groupdict)
    indexgroup: list[str | None] = [None] * p.state.groups
    for k, i in groupindex.items():
        indexgroup[i] = k
    return int(flags | p.state.flags), code, p.state.groups - 1, groupindex, tuple(indexgroup)


def _sre_compile(pattern: str | bytes, parts: _Parts) -> Pattern[Any]:
    flags, code, groups, groupindex, indexgroup = parts
    return cast("Pattern[Any]", _sre.compile(pattern, flags, array(_CODE_TYPE, code).tolist(), groups, groupindex,
                                             indexgroup))


def _compile_pattern(pattern: str | bytes, flags: int) -> Pattern[Any]:
    """re.compile(pattern, flags), with the generated code from the on-disk entry when it is there."""
    global _kept
    if _sre is None:  # pragma: no cover
        return _re.compile(pattern, flags)
    key = (pattern, flags)
    with _lock:
        if _kept is None:
            _kept = _load_kept()
        parts = _kept.get(key) or _made.get(key)
    if parts is not None:
        try:
            compiled: Pattern[Any] = _sre_compile(pattern, parts)
            _used.add(key)
            return compiled
        except Exception:  # not what this _sre takes: fall back to re
            pass
    try:
        parts = _generate(pattern, flags)
        compiled = _sre_compile(pattern, parts)
    except _re.error:
        raise
    except Exception:  # re's internals are not what this module expects: plain re, nothing kept
        return _re.compile(pattern, flags)
    with _lock:
        if len(_made) < MAX_KEPT:  # a process building patterns per input keeps a bounded number
            _made[key] = parts
        _used.add(key)
    return compiled


@atexit.register
def _write_kept() -> None:
    """Writes the entry when this process generated code it did not hold (see the module docstring): what it
    generated added to the entry as it is now, read again (a worker of `-j N` may have written it since this
    process read it: write_at_worker_exit), under the entry's lock, so that workers ending together lose none of
    each other's code."""
    from firstfault import cache

    with _lock:
        if not _made:
            return
        made = dict(_made)
        _made.clear()
        in_use = set(_used)

    def merge(data: bytes | None) -> bytes | None:
        kept = _loads(data)
        kept.update(made)
        used = {k: v for k, v in kept.items() if k in in_use}
        for entry in (kept, used):  # all that is kept, else (too much) this process's only
            try:
                out = marshal.dumps(entry)
            except ValueError:
                return None
            if len(entry) <= MAX_KEPT and len(out) <= MAX_KEPT_BYTES:
                return out
        return None

    cache.update(_entry_name(), merge)


def write_at_worker_exit() -> None:
    """In a worker process that multiprocessing started (the pool of `-j N`: analysis/parallel.py), which ends with
    os._exit and so runs no atexit: the entry is written when the worker ends, by multiprocessing's own exit
    finalizers, so the code a worker generated (the patterns only the line readers use, first used there) is kept
    as a one-process run keeps it, not generated again by every worker of every run."""
    from multiprocessing import util

    util.Finalize(None, _write_kept, exitpriority=0)


class _Lazy:
    """A pattern compiled on first use (see the module docstring)."""

    def __init__(self, pattern: str | bytes, flags: int, keep: bool,
                 home: dict[str, Any] | None = None) -> None:
        self.pattern = pattern
        self._flags = flags
        self._keep = keep  # made by a module's import: its generated code is kept on disk
        self._home = home  # that module's globals, whose names for it are rebound on first use
        self._compiled: Pattern[Any] | None = None
        for name in _METHODS:  # setattr, not __dict__: keeps the instance's compact attribute layout
            setattr(self, name, partial(self._first_use, name))

    def _first_use(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._compile(), name)(*args, **kwargs)

    def _compile(self) -> Pattern[Any]:
        compiled = self._compiled
        if compiled is None:
            compiled = _compile_pattern(self.pattern, self._flags) if self._keep else \
                _re.compile(self.pattern, self._flags)
            for name in _METHODS:
                setattr(self, name, getattr(compiled, name))
            self._compiled = compiled
            home = self._home
            if home is not None:
                for key, value in list(home.items()):
                    if value is self:
                        home[key] = compiled
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
        return (_Lazy, (self.pattern, self._flags, self._keep))

    def __copy__(self) -> _Lazy:
        return self  # as a compiled pattern: immutable, a copy is itself

    def __deepcopy__(self, memo: dict[int, Any]) -> _Lazy:
        return self


def compile(pattern: AnyStr, flags: int = 0, *, keep: bool = False) -> Pattern[AnyStr]:
    """A pattern compiled the first time it is used; the same matches as `re.compile(pattern, flags)`.

    A compiled pattern (or a stand-in) passed in is returned as it is, as `re.compile` does. Its generated code is
    kept on disk where a module's import made it, and where `keep` says it is made from the shipped tables alone
    (the same pattern in every run, built at its first use: a table's `Literals`), never from the input."""
    if isinstance(pattern, (Pattern, _Lazy)):
        return cast("Pattern[AnyStr]", pattern)
    importing = _importing()
    lazy = _Lazy(pattern, int(flags), importing or keep, sys._getframe(1).f_globals if importing else None)
    _created.add(lazy)
    return cast("Pattern[AnyStr]", lazy)


def _importing() -> bool:
    """Whether a module is being imported up the stack (its top level is running)."""
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_name == "<module>":
            spec = f.f_globals.get("__spec__")
            if spec is not None and getattr(spec, "_initializing", False):
                return True
        f = f.f_back  # type: ignore[assignment]
    return False


def is_compiled(p: Pattern[Any]) -> bool:
    """False for a stand-in not used yet; True once used, and for a real compiled pattern."""
    return not isinstance(p, _Lazy) or p._compiled is not None


def created() -> list[Pattern[Any]]:
    """The stand-ins alive in this process, for tests."""
    return cast("list[Pattern[Any]]", list(_created))


def alternation(words: Iterable[str]) -> str:
    """A regex that matches, where any of `words` starts, the longest of them: what the alternation of
    the escaped words sorted longest first matches, there and inside a larger pattern (it tries the
    words that match at a position longest first too), with the same spans.

    The words are factored by their common prefixes (a trie): `re` tries an alternation's branches one
    by one at every position of a line, so a table of a hundred texts cost a hundred tries a character;
    factored, a position costs a look at each distinct first character (one check, in C, when the
    pattern is matched case-sensitively) and a step down one branch. With IGNORECASE, pass the words
    lower-cased (as `Literals` does): words that differ only in case would otherwise sit in two
    branches, and the first branch's shorter word could win over the second's longer one.
    """
    root: dict[str, Any] = {}
    for w in set(words):
        node = root
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}  # a word ends here
    return _branches(root)


def _branches(node: dict[str, Any]) -> str:
    alts: list[str] = []
    for ch in sorted(k for k in node if k):
        run, child = ch, node[ch]
        while len(child) == 1 and "" not in child:  # a chain of single children: one literal
            ((c, child),) = child.items()
            run += c
        alts.append(escape(run) + _branches(child))
    if not alts:
        return ""
    body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
    return "(?:" + body + ")?" if "" in node else body


class Literals:
    """The leftmost, longest of some words in a text: `search` answers what `compile` of their alternation
    sorted longest first answers (the same match: span, group 0 as the text holds it), in time linear in
    the text, case-blind with IGNORECASE.

    Case-blind, `re` has no quick test of a branch's first character, so a line of pure ASCII (every line
    of most logs) is looked for lower-cased in the case-sensitive factored pattern, and the match is then
    taken, at the one position found, from the case-blind pattern: ASCII letters fold only to each other,
    so both find the same position and the same longest word. Other lines, or words that are not all
    ASCII, are read by the case-blind factored pattern alone."""

    def __init__(self, words: Iterable[str], flags: int = 0, *, keep: bool = False) -> None:
        folding = bool(flags & IGNORECASE)
        keys = sorted({w.lower() for w in words} if folding else set(words))
        self.words: tuple[str, ...] = tuple(keys)
        self.pattern = alternation(keys)
        self._exact: Pattern[str] = compile(self.pattern, flags, keep=keep)
        self._lowered: Pattern[str] | None = None
        if folding and all(w.isascii() for w in keys):
            self._lowered = compile(self.pattern, flags & ~IGNORECASE, keep=keep)

    def search(self, text: str) -> Match[str] | None:
        lowered = self._lowered
        if lowered is not None and text.isascii():
            m = lowered.search(text.lower())
            return None if m is None else self._exact.match(text, m.start())
        return self._exact.search(text)
