"""Adversarial lines built from a regex's own structure, and a check that its time grows linearly with them.

`attacks(pattern, flags)` reads the pattern's parse tree (`re._parser`) and builds inputs of the shapes that
make a backtracking engine slow: a long run of each kind of character the pattern can repeat; the text that
leads up to each of its repetitions (a sample of what matches before it) followed by a long run of what the
repetition takes (one copy of its body, each kind of character in it) and then nothing, a byte nothing
matches, or the rest of a match; and a sample of a whole match (or of all but its last character)
repeated. `check` times the pattern's `search` on each at length n and 4n and reports the inputs where the
time grows faster than linearly (a ratio bound: the machine's speed divides out) or passes an absolute
bound. A call that runs away is stopped by a timer signal (`re` checks for signals while it matches).
"""

from __future__ import annotations

import gc
import re
import signal
import string
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as P  # type: ignore[attr-defined]
from typing import Any

# The characters an input is made of: printable ASCII, a letter beyond it, and a control byte that no
# pattern of ours names (the junk that ends a run).
JUNK = "\x01"
POOL = [c for c in string.printable if c not in "\n\r\x0b\x0c"] + ["\u00e9", JUNK]
_FIRST_TRIED = "a0 x_.:-/" + "".join(POOL)  # the character a sample takes for a node: the first of these it accepts
ONE_CHAR = (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN)
REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)
_WORD = ("CATEGORY_WORD", "CATEGORY_UNI_WORD")
_CATEGORIES: dict[str, Callable[[str], bool]] = {
    "DIGIT": str.isdigit, "SPACE": str.isspace, "WORD": lambda c: c.isalnum() or c == "_",
    "LINEBREAK": lambda c: c == "\n",
}


def _category(code: Any, ch: str) -> bool:
    name = str(code).replace("CATEGORY_", "").replace("UNI_", "")
    negated = name.startswith("NOT_")
    test = _CATEGORIES.get(name.removeprefix("NOT_"))
    return test is not None and test(ch) != negated


def accepts(op: Any, av: Any, ch: str, icase: bool) -> bool:
    """Whether the one-character node (op, av) of a parse tree accepts ch."""
    cases = {ch, ch.lower(), ch.upper()} if icase else {ch}
    if op is C.LITERAL:
        return any(ord(c) == av for c in cases)
    if op is C.NOT_LITERAL:
        return all(ord(c) != av for c in cases)
    if op is C.ANY:
        return ch != "\n"
    if op is C.IN:
        hit = False
        for o, a in av:
            if o is C.LITERAL:
                hit |= any(ord(c) == a for c in cases)
            elif o is C.RANGE:
                hit |= any(a[0] <= ord(c) <= a[1] for c in cases)
            elif o is C.CATEGORY:
                hit |= _category(a, ch)
        return hit != (bool(av) and av[0][0] is C.NEGATE)
    return False


_ACCEPTED: dict[tuple[Any, Any, bool], tuple[tuple[str, ...], frozenset[str]]] = {}


def _accepted(op: Any, av: Any, icase: bool) -> tuple[tuple[str, ...], frozenset[str]]:
    """The characters of POOL that the one-character node (op, av) accepts, in POOL's order and as a set: worked out
    once for each distinct node (the large alternations of literals repeat the same few thousand times)."""
    key = (op, tuple(av) if isinstance(av, list) else av, icase)
    hit = _ACCEPTED.get(key)
    if hit is None:
        chars = tuple(c for c in POOL if accepts(op, av, c, icase))
        hit = _ACCEPTED[key] = (chars, frozenset(chars))
    return hit


def _children(op: Any, av: Any) -> list[Any]:
    if op is C.BRANCH:
        return list(av[1])
    if op is C.SUBPATTERN:
        return [av[-1]]
    if op in REPEATS:
        return [av[2]]
    if op is C.ATOMIC_GROUP:
        return [av]
    if op in (C.ASSERT, C.ASSERT_NOT):
        return [av[1]]
    if op is C.GROUPREF_EXISTS:
        return [x for x in av[1:] if x is not None]
    return []


def _nodes(seq: Any) -> Iterator[tuple[Any, Any]]:
    for op, av in seq:
        yield op, av
        for child in _children(op, av):
            yield from _nodes(child)


def _holds(seq: Any, target: Any) -> bool:
    return any(av is target for _, av in _nodes(seq))


def _chars(seq: Any, icase: bool) -> list[str]:
    """A few characters of each kind (a letter, a digit, a space, each other character) that some
    one-character node under seq accepts."""
    found: list[str] = []
    for op, av in _nodes(seq):
        if op in ONE_CHAR:
            found.extend(c for c in _accepted(op, av, icase)[0] if c not in found)
    kinds: set[str] = set()
    out: list[str] = []
    for c in found:
        kind = "a" if c.isalpha() else "0" if c.isdigit() else " " if c.isspace() else c
        if kind not in kinds:
            kinds.add(kind)
            out.append(c)
    return out


class _Sampler:
    """A text that the pattern (roughly: lookarounds are not honoured) matches, taking the way to `target`
    at each alternation and noting where the expansion of the repetition `target` begins and ends."""

    def __init__(self, icase: bool, target: Any = None) -> None:
        self.icase, self.target = icase, target
        self.out: list[str] = []
        self.groups: dict[int, str] = {}
        self.marks: tuple[int, int] | None = None

    def text(self) -> str:
        return "".join(self.out)

    def walk(self, seq: Any) -> None:
        for op, av in seq:
            if op in ONE_CHAR:
                ok = _accepted(op, av, self.icase)[1]
                self.out.append(next((c for c in _FIRST_TRIED if c in ok), "a"))
            elif op is C.BRANCH:
                alts = av[1]
                self.walk(next((a for a in alts if self.target is not None and _holds(a, self.target)), alts[0]))
            elif op is C.SUBPATTERN:
                start = len(self.out)
                self.walk(av[-1])
                if av[0] is not None:
                    self.groups[av[0]] = "".join(self.out[start:])
            elif op in REPEATS:
                lo, _hi, body = av
                inside = self.target is not None and (av is self.target or _holds(body, self.target))
                start = len(self.text())
                for _ in range(min(max(lo, 1) if inside else lo, 64)):
                    self.walk(body)
                if av is self.target:
                    self.marks = (start, len(self.text()))
            elif op is C.ATOMIC_GROUP:
                self.walk(av)
            elif op is C.GROUPREF:
                self.out.append(self.groups.get(av, ""))
            elif op is C.GROUPREF_EXISTS:
                branch = av[1] if av[0] in self.groups else av[2]
                if branch is not None:
                    self.walk(branch)


@dataclass(frozen=True)
class Attack:
    """The text prefix + pump repeated to n characters + tail."""

    kind: str
    prefix: str
    pump: str
    tail: str

    def text(self, n: int) -> str:
        return self.prefix + (self.pump * (n // len(self.pump) + 1))[:n] + self.tail


def attacks(pattern: str, flags: int) -> list[Attack]:
    tree = P.parse(pattern, flags)
    icase = bool(flags & re.IGNORECASE)
    out: dict[tuple[str, str, str], str] = {}

    def add(kind: str, prefix: str, pump: str, tail: str) -> None:
        if pump:
            out.setdefault((prefix, pump, tail), kind)

    whole = _Sampler(icase)
    whole.walk(tree)
    add("a match, repeated", "", whole.text(), "")
    add("all of a match but its last character, repeated", "", whole.text()[:-1], "")
    for c in [*_chars(tree, icase), JUNK]:
        add("a run of one character", "", c, "")
    repeats = [av for op, av in _nodes(tree) if op in REPEATS and av[1] > 16]
    for av in repeats[:24]:
        s = _Sampler(icase, av)
        s.walk(tree)
        if s.marks is None:
            continue
        text, (a, b) = s.text(), s.marks
        body = _Sampler(icase)
        body.walk(av[2])
        for pump in [body.text(), *_chars(av[2], icase)[:7]]:
            for tail in ("", JUNK, text[b:]):
                add("what leads to a repetition, then a run of what it takes", text[:a], pump, tail)
    return [Attack(kind, *key) for key, kind in out.items()]


class _Stop(Exception):
    pass


def _stop(*_: object) -> None:
    raise _Stop


def timed(fn: Callable[[str], object], text: str, cap: float) -> float:
    """CPU seconds fn(text) takes on this thread; inf past `cap` CPU seconds, where a profiling timer stops it.
    CPU time, not wall time: on a machine shared with other work, a run of a few milliseconds is preempted where a
    run of one does not, so wall time grew 15 times from n to 4n for three linear patterns in every one of five
    pairs (CI, load near 9 on 2 cores) while their CPU time grew 4 times. The cyclic collector is held off while
    it runs: a collection of the objects the earlier attacks left, which the allocations before this call happen to
    trigger, is no time of the pattern's (it failed a linear pattern near the floor, whichever pattern came after)."""
    old = signal.signal(signal.SIGPROF, _stop)
    enabled = gc.isenabled()
    gc.disable()
    signal.setitimer(signal.ITIMER_PROF, cap)
    try:
        t0 = time.thread_time()
        fn(text)
        return time.thread_time() - t0
    except _Stop:
        return float("inf")
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
        if enabled:
            gc.enable()


@dataclass(frozen=True)
class Slow:
    attack: Attack
    t_n: float
    t_4n: float


def check(pattern: str, flags: int, n: int, ratio: float, floor: float, absolute: float) -> Slow | None:
    """The first attack on which search's time from n to 4n characters grows more than `ratio` times
    (when it takes over `floor` seconds at 4n) or passes `absolute` seconds; None when there is none.
    A time over `floor` is taken again, n and 4n one after the other five times: the growth is the least of the
    five pairs' (each pair timed under the same load), the time at 4n the least of its five, so a machine shared
    with other work (a load of 9 on 2 cores slowed every 4n run of eleven linear patterns past the floor, their
    1n runs taken before) fails nothing, and a pattern that does grow faster than the line grows so in every pair."""
    search = re.compile(pattern, flags).search
    cap = 4 * absolute
    for at in attacks(pattern, flags):
        small, big = at.text(n), at.text(4 * n)
        t1, t4 = timed(search, small, cap), timed(search, big, cap)
        if t4 <= floor:
            continue
        pairs = [(t1, t4)]
        for _ in range(4):
            a = timed(search, small, cap)
            pairs.append((a, timed(search, big, cap)))
        t1 = min(a for a, _ in pairs)
        t4 = min(b for _, b in pairs)
        growth = min(b / a if a > 0 else float("inf") for a, b in pairs)
        if t4 > absolute or (t4 > floor and growth > ratio):
            return Slow(at, t1, t4)
    return None
