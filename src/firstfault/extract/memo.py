"""Bounded memos for the per-line hot path, and the switch that turns the fast paths off.

A chatty log prints one line ten thousand times, or ten thousand lines that
differ only in their counters. The extractors are stateful (tracebacks,
report folding live in per-stream state), so what is remembered is never
"the events of this line" but the answer of a *pure* step an extractor takes
on the line body: the NCCL classifier, the Python extractor's reading of a
line that stands alone. Each such step says what its memo key is:

- the body itself (an exact repeat), always safe for a pure function;
- the body with every digit made `0` (`digits_zeroed`: the same length, the
  same `\\d`, `\\w` and `\\b` classes), only where the step's answer provably
  does not depend on which digits a line holds (the step's module says why,
  next to its key function).

Memory is bounded: each memo holds at most `size` entries, forgets its
oldest first, and never keeps a key longer than `MAX_KEY` characters (such a
line is answered afresh each time). Counts stay exact because only answers are remembered; every
line still runs its extractors' stateful part and becomes its own events.

`FIRSTFAULT_FASTPATH=0` in the environment (or `set_enabled(False)`, the
test of record in tests/collect/test_fastpath.py) turns every memo and fast path
here off: the verdicts must be byte-identical either way.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import islice
from re import Match, Pattern
from typing import Any, Final, Generic, TypeVar

from firstfault import lazyre as re  # compiled at its first use

V = TypeVar("V")

DEFAULT_SIZE: Final = 4096
# A full memo forgets its oldest entries this share of its size at a time (_evict), not one a miss.
EVICT_SHARE: Final = 8
MAX_KEY: Final = 1000  # characters: 4096 keys of at most this, a few MB a memo at worst
# Every ASCII digit made `0`, for bytes.translate (a line's key here, its shape in collect/fold.py).
ZERO_DIGITS: Final = bytes.maketrans(b"123456789", b"000000000")

# The switch itself, one element: hot code reads ON[0] (a call per line costs more than the lookup).
ON: Final[list[bool]] = [os.environ.get("FIRSTFAULT_FASTPATH", "1").strip().lower() not in ("0", "false", "no", "off")]
_enabled = ON


def enabled() -> bool:
    """Are the fast paths (memos, routing shortcuts) on?"""
    return ON[0]


def set_enabled(on: bool) -> None:
    from firstfault import timeparse

    _enabled[0] = on
    timeparse.set_fast(on)
    for m in _ALL:
        m.clear()


@contextmanager
def fastpath(on: bool) -> Iterator[None]:
    """Run a block with the fast paths on or off (tests; memos start empty either way)."""
    was = _enabled[0]
    set_enabled(on)
    try:
        yield
    finally:
        set_enabled(was)


# A hex id (a hash, an address, a dataset id): a token, the longest run of word bytes ([0-9A-Za-z_] and any
# byte over 0x7f, so a UTF-8 letter never splits one), that is HEX_MIN or more hex digits, or `0x` and one or
# more hex digits; or a UUID, five such tokens of 8, 4, 4, 4 and 12 hex digits joined by `-`. Its hex letters
# are made `0` too in a line's shape.
HEX_MIN: Final = 8
_HEX_LETTERS: Final = bytes.maketrans(b"abcdefABCDEF", b"000000000000")
# After the digits are zeroed: every hex digit made one byte, so that a run of HEX_MIN of them is one find.
_HEX_CLASS: Final = bytes.maketrans(b"0abcdefABCDEF", b"\0" * 13)
_HEX_RUN: Final = b"\0" * HEX_MIN
# A PCI address (domain:bus:device, with a function or not: `0000:3b:00.0`) is a hex id too, where the unrecognized
# templates' <HEX> mask takes it whole whatever its hex letters and no earlier mask reaches into it: after the
# line's start, a space, a tab, `(` or `[`, and before the line's end or one of ` \t)],;` (or `.`, a digit, and
# one of those or `:`). Not a MAC-like `0000:3b:00:11`, nor `PCI:0000:3b:00` (a `:` before it). One NIC's or
# port's warning then has one shape on every bus of every host of a central syslog (issue 27's shape i).
_PCI_RUN: Final = b"\0\0\0\0:\0\0:\0\0"
_HEX_TOKEN: Final = re.compile(
    rb"(?<![\w\x80-\xff])(?:0x[0a-fA-F]+|[0a-fA-F]{8}(?:-[0a-fA-F]{4}){3}-[0a-fA-F]{12}|[0a-fA-F]{%d,})"
    rb"(?![\w\x80-\xff])"
    rb"|(?:(?<=[ \t(\[])|\A)[0a-fA-F]{4}:[0a-fA-F]{2}:[0a-fA-F]{2}(?=[ \t)\],;]|\Z|\.0(?:[ \t)\],;:]|\Z))"
    % HEX_MIN)


def _hex_zeroed(m: Match[bytes]) -> bytes:
    return m.group().translate(_HEX_LETTERS)


def line_shape_py(raw: bytes) -> bytes:
    """A line's shape: the ONE masking of what varies between copies of a line, which the fold (collect/fold.py)
    and the unrecognized-line templates (extract/unrecognized.py) both key on. Every ASCII digit made `0`, and
    the hex letters of every hex id (HEX_MIN or more hex digits standing as one token, `0x` and hex digits, or
    a UUID) made `0` too; every other byte kept. So the shape has the line's length, and each byte of a copy of the
    shape is the shape's byte, or a digit where the shape has `0` from a digit, or a hex digit where it has `0`
    from a hex id (the fold's byte ranges rest on this). Hosts, IPs and paths vary in their digits and hex ids
    here; a part that varies in its other letters or in its length makes another shape.

    Linear in the line: two translations and two finds, and a token regex (matched whole or not at all, no
    backtracking) only on a line that holds a run of HEX_MIN hex digits or `0x`. `line_shape` is this in C
    (_lines.c) where the module is built; tests/test_fold.py holds the two to each other."""
    zeroed = raw.translate(ZERO_DIGITS)
    if b"0x" not in zeroed:
        classes = zeroed.translate(_HEX_CLASS)
        if _HEX_RUN not in classes and _PCI_RUN not in classes:
            return zeroed  # no hex id: the common line
    return _HEX_TOKEN.sub(_hex_zeroed, zeroed)


def hex_spans(shape: bytes) -> list[tuple[int, int]]:
    """The hex ids of a shape (a line_shape), as (start, end): every byte that holds a hex letter in some line of the
    shape lies in one. A line's hex id stands where the shape has the same token bytes but its letters made `0`, and
    the token rules (HEX_MIN hex digits, `0x`, a UUID, a PCI address) read hex digits alike: the shape's own tokens
    are its lines' hex ids (and a shape's run of digits that could be one)."""
    if b"0x" not in shape:
        classes = shape.translate(_HEX_CLASS)
        if _HEX_RUN not in classes and _PCI_RUN not in classes:
            return []
    return [m.span() for m in _HEX_TOKEN.finditer(shape)]


def _shape_in_c() -> Callable[[bytes], bytes]:
    try:
        from firstfault._lines import line_shape as in_c
    except ImportError:  # pragma: no cover - a build without the C module (or an older one)
        return line_shape_py
    return in_c


line_shape: Final[Callable[[bytes], bytes]] = _shape_in_c()


# Every digit and every hex letter made `0`: a shape's bytes as they may hold a literal through a hex id.
ALL_HEX_ZERO: Final = bytes.maketrans(b"123456789abcdefABCDEF", b"0" * 21)
# A whole run of word bytes (`[\w\x80-\xff]+`, maximal: no word byte before or after it) that is hex digits, or `0x`
# and hex digits. One search a literal: a run's matches of each pattern, one by one, cost each process of -j N 20 ms
# over the catalog's 3,300 words (the scanner's hex_words, worked out in each worker).
_HEX_RUN_WORD: Final = re.compile(rb"(?<![\w\x80-\xff])(?:0x[0-9a-fA-F]*|[0-9a-fA-F]+)(?![\w\x80-\xff])")


def hex_words(literals: Iterable[bytes]) -> tuple[bytes, ...]:
    """The literals whose presence may differ between two lines of one shape through a hex id, with every digit
    and hex letter made `0` (ALL_HEX_ZERO): those with a run of word bytes that is hex digits, or `0x` and hex
    digits (a hex id could hold that run, whole or, at the literal's ends, in part; a run with another letter
    never lies in one). A line whose shape, with its hex letters made `0` too, holds none of these has the
    literals' hits of every line of its shape, wherever its hex ids differ (collect/fold.py)."""
    search = _HEX_RUN_WORD.search
    return tuple(sorted({w.translate(ALL_HEX_ZERO) for w in literals if search(w)}))


def hex_literals(literals: Iterable[bytes], words_of: Iterable[bytes] | None = None) -> dict[bytes, tuple[bytes, ...]]:
    """The literals hex_words takes, by their form there (every digit and hex letter made `0`); `words_of`: hex_words
    of these literals where the caller has it (it is not worked out again)."""
    literals = list(literals)
    words = set(hex_words(literals) if words_of is None else words_of)
    out: dict[bytes, tuple[bytes, ...]] = {}
    for w in literals:
        z = w.translate(ALL_HEX_ZERO)
        if z in words and w not in out.get(z, ()):
            out[z] = (*out.get(z, ()), w)
    return out


def text_shape(text: str) -> str:
    """line_shape of a text (through UTF-8 bytes: no multi-byte sequence holds an ASCII byte)."""
    return line_shape(text.encode("utf-8", "surrogatepass")).decode("utf-8", "surrogatepass")


# The last text digits_zeroed was asked about and its answer, as one tuple (one store: a thread that reads it sees
# a pair that belongs together). The extractors of one line ask about the same body object, memo after memo.
_LAST_ZEROED: list[tuple[str, str]] = [("", "")]


try:  # an ASCII text's zeroing in C (_lines.c; an older build lacks it)
    from firstfault._lines import digits_zeroed as _zeroed_ascii
except ImportError:  # pragma: no cover - depends on the build
    _zeroed_ascii = None  # type: ignore[assignment]


def digits_zeroed(text: str) -> str:
    """`text` with every ASCII digit replaced by `0`: same length, same character classes.

    An ASCII text in C (one pass, no bytes object between); any other through UTF-8 bytes (no multi-byte sequence
    holds an ASCII digit byte): str.translate with a table is ten times slower on a log line. The same object asked
    again (the next memo of one line's extractors) is answered from the last call (held, so its identity cannot be
    another text's)."""
    last = _LAST_ZEROED[0]
    if last[0] is text:
        return last[1]
    z = _zeroed_ascii(text) if _zeroed_ascii is not None else None
    if z is None:
        z = digits_zeroed_py(text)
    _LAST_ZEROED[0] = (text, z)
    return z


def digits_zeroed_py(text: str) -> str:
    """digits_zeroed without the C module (and for a text that is not all ASCII)."""
    return text.encode("utf-8", "surrogatepass").translate(ZERO_DIGITS).decode("utf-8", "surrogatepass")


_ALL: list[Memo[object]] = []


class Memo(Generic[V]):
    """A bounded map from a text to a pure step's answer; the oldest entry goes first when full."""

    __slots__ = ("_d", "hits", "misses", "name", "size")

    def __init__(self, name: str, size: int = DEFAULT_SIZE) -> None:
        if size < 1:
            raise ValueError(f"memo {name}: size must be at least 1, not {size}")
        self.name = name
        self.size = size
        self._d: dict[str, V] = {}
        self.hits = 0
        self.misses = 0
        _ALL.append(self)  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(self._d)

    def clear(self) -> None:
        self._d.clear()
        self.hits = self.misses = 0

    def find(self, key: str) -> V | None:
        """The answer remembered for `key`, or None (for memos whose answers are never None)."""
        v = self._d.get(key)
        if v is None:
            self.misses += 1
        else:
            self.hits += 1
        return v

    def put(self, key: str, value: V) -> None:
        if len(key) > MAX_KEY:
            return
        d = self._d
        if key not in d and len(d) >= self.size:
            _evict(d, self.size)
        d[key] = value

    def get(self, key: str, compute: Callable[[], V]) -> V:
        """The answer for `key`, computed by `compute()` the first time (and after it was forgotten)."""
        d = self._d
        try:
            v = d[key]
        except KeyError:
            pass
        else:
            self.hits += 1
            return v
        self.misses += 1
        v = compute()
        if len(key) > MAX_KEY:
            return v
        if len(d) >= self.size:
            _evict(d, self.size)
        d[key] = v
        return v


def _evict(d: dict[str, V], size: int) -> None:
    """Forget the oldest entries (insertion order) until there is room for one, and EVICT_SHARE of `size` more at
    once: a dict keeps a forgotten entry's slot, empty, at the front of its table until it grows again, and every
    look for the oldest walked over all of them (the memos keyed by a line that each rank of a 16k-rank job prints
    under its own header miss on every rank: 4096 entries, a few hundred empty slots walked a miss, 16 us). A
    Service analyses requests in threads that share the memos: when another thread changed the dict meanwhile, this
    one stops, so the memo is over its bound by at most one entry a racing thread, until the next insert."""
    n = len(d) - size + 1
    if n <= 0:
        return
    try:
        oldest = list(islice(d, n + size // EVICT_SHARE))
    except RuntimeError:
        return
    for key in oldest:
        d.pop(key, None)


# --------------------------------------------------------------------------
# Readings remembered by a line's template: where digit-blind patterns match
# --------------------------------------------------------------------------

_DIGIT_CODES: Final = frozenset(range(ord("0"), ord("9") + 1))


def digit_blind(pattern: Pattern[str] | Pattern[bytes]) -> bool:
    """Does `pattern` treat every ASCII digit alike? True when no node of it names a digit of its own (a digit
    literal, `[^7]`, a class or range holding some ASCII digits but not all ten) and it holds no back-reference
    (which compares the digits a group took). Then two texts that differ only in which ASCII digits they hold (one
    digits_zeroed form) have the same matches at the same places, group by group: at every step the pattern asks
    only a character's class (`\\d`, `\\w`, `\\b`, `.`, a class with all ten or none of them), and every ASCII
    digit answers each such question alike. Anything the parser gives that this does not know: False."""
    try:
        import importlib
        c: Any = importlib.import_module("re._constants")
        tree = importlib.import_module("re._parser").parse(pattern.pattern, pattern.flags)
    except Exception:  # pragma: no cover - another Python's internals
        return False

    def klass(items: list[tuple[Any, Any]]) -> bool:
        digits: set[int] = set()
        for op, av in items:
            if op is c.LITERAL:
                if av in _DIGIT_CODES:
                    digits.add(av)
            elif op is c.RANGE:
                lo, hi = av
                digits.update(d for d in _DIGIT_CODES if lo <= d <= hi)
            elif op not in (c.NEGATE, c.CATEGORY):
                return False
        return not digits or digits == _DIGIT_CODES

    def seq(nodes: Any) -> bool:
        for op, av in nodes:
            if op in (c.LITERAL, c.NOT_LITERAL):
                if av in _DIGIT_CODES:
                    return False
            elif op is c.IN:
                if not klass(av):
                    return False
            elif op in (c.ANY, c.AT):
                pass
            elif op is c.BRANCH:
                if not all(seq(b) for b in av[1]):
                    return False
            elif op is c.SUBPATTERN:
                if not seq(av[-1]):
                    return False
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
                if not seq(av[2]):
                    return False
            elif op is c.ATOMIC_GROUP:
                if not seq(av):
                    return False
            elif op in (c.ASSERT, c.ASSERT_NOT):
                if not seq(av[1]):
                    return False
            else:  # a back-reference (GROUPREF, GROUPREF_EXISTS, ...) or a node this does not know
                return False
        return True

    return seq(tree)


Span = tuple[int, int]  # (start, end); (-1, -1): the group took no part in the match
# One pattern's reading: None where it found no match, else its match's `regs` (group 0's span, then each group's).
Found = tuple[Span, ...] | None


class Spans:
    """Where a fixed list of digit-blind patterns match a text (`search`, each from the text's start), with the spans
    of their groups (`Match.regs`), remembered by the text's digits_zeroed form: every line of one template (each
    rank's copy of a watchdog line, its rank, sequence number and sizes aside) is searched once, and the next is sliced
    at the same places (`value`), its own digits read there. Sound because digit_blind holds for every pattern
    (checked at the first use; where one fails, nothing is remembered and each text is searched afresh): two texts of
    one zeroed form have the same matches, group by group."""

    __slots__ = ("_blind", "_memo", "_patterns")

    def __init__(self, name: str, patterns: tuple[Pattern[str], ...]) -> None:
        self._patterns = patterns
        self._memo: Memo[tuple[Found, ...]] = Memo(name)
        self._blind: list[bool] = []

    def blind(self) -> bool:
        if not self._blind:
            self._blind.append(all(digit_blind(p) for p in self._patterns))
        return self._blind[0]

    def search(self, text: str) -> tuple[Found, ...]:
        """The readings of `text`, pattern by pattern (afresh)."""
        out: list[Found] = []
        for p in self._patterns:
            m = p.search(text)
            out.append(None if m is None else m.regs)
        return tuple(out)

    def of(self, text: str) -> tuple[Found, ...]:
        """The readings of `text`: remembered by its template where the fast paths are on."""
        if not ON[0] or not (self._blind[0] if self._blind else self.blind()):
            return self.search(text)
        key = digits_zeroed(text)
        got = self._memo.find(key)
        if got is None:
            got = self.search(text)
            self._memo.put(key, got)
        return got


def value(text: str, span: Span) -> str | None:
    """The text a group took (a Spans reading), or None where it took no part."""
    return None if span[0] < 0 else text[span[0]:span[1]]


def digit_free(words: Iterable[str]) -> bool:
    """Do none of `words` hold an ASCII digit? Then a text holds a word exactly when its digits_zeroed form does
    (a word's every character is matched by a character that zeroing kept)."""
    return not any(ch in "0123456789" for w in words for ch in w)


# --------------------------------------------------------------------------
# The collector while lines are read
# --------------------------------------------------------------------------

# A candidate line builds short-lived tuples, dicts and strings by the dozen, and a rank log's reading keeps a little
# (its stream's state, its events). At CPython's default (a young collection every 700 allocations more than frees)
# the collector ran about 1,500 times on issue 27's shape a (16k rank logs), 0.63 s of its 13 s, most of it in the
# full collections that walk every long-lived object (the catalog, the compiled patterns, every stream's state); at
# SCAN_GC_YOUNG, 52 times and 0.19 s, with the same peak memory (what a cycle holds waits at most that many more
# allocations). Only the first generation's threshold is raised, only while lines are read, and only where the
# fast paths are on; the collector still runs, and what it frees is the same.
SCAN_GC_YOUNG: Final = 20000
_GC_LOCK: Final = threading.Lock()
_gc_held: list[Any] = [0, None]  # how many readings are under way, the threshold before the first


@contextmanager
def scan_gc() -> Iterator[None]:
    """Read lines with the collector's young generation at SCAN_GC_YOUNG (not below what it was; a collector turned
    off stays off). Nested and concurrent readings (a Service's threads) share one setting: the first to start
    raises it, the last to finish puts back what it found, unless someone else changed it meanwhile."""
    if not ON[0]:
        yield
        return
    with _GC_LOCK:
        if _gc_held[0] == 0:
            was = gc.get_threshold()
            raised = (SCAN_GC_YOUNG, *was[1:]) if 0 < was[0] < SCAN_GC_YOUNG else None
            if raised is not None:
                gc.set_threshold(*raised)
            _gc_held[1] = (was, raised)
        _gc_held[0] += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _gc_held[0] -= 1
            if _gc_held[0] == 0:
                was, raised = _gc_held[1]
                if raised is not None and gc.get_threshold() == raised:
                    gc.set_threshold(*was)
                _gc_held[1] = None
