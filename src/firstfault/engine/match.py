"""Selections over event fields (the `match` part of a rule)."""

from __future__ import annotations

import re
from functools import lru_cache

from firstfault.engine.rules import Condition, Op, Rule, Selection
from firstfault.model import Event, FieldValue


@lru_cache(maxsize=1024)
def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _eq(a: FieldValue, b: object) -> bool:
    if a is None:
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return str(a) == str(b)


def _num(v: FieldValue) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(v)
    except ValueError:
        return None


def holds(value: FieldValue, cond: Condition) -> bool:
    if isinstance(cond, Op):
        if cond.exists is not None and (value is not None) != cond.exists:
            return False
        if cond.not_ is not None:
            options = cond.not_ if isinstance(cond.not_, list) else [cond.not_]
            if any(_eq(value, o) for o in options):
                return False
        if cond.re is not None and (value is None or not _rx(cond.re).search(str(value))):
            return False
        if cond.startswith is not None and (value is None or not str(value).startswith(cond.startswith)):
            return False
        if cond.gte is not None or cond.lte is not None:
            n = _num(value)
            if n is None:
                return False
            if cond.gte is not None and n < cond.gte:
                return False
            if cond.lte is not None and n > cond.lte:
                return False
        return True
    if isinstance(cond, list):
        return any(_eq(value, c) for c in cond)
    return _eq(value, cond)


def kind_matches(pattern: str, kind: str) -> bool:
    if pattern.endswith(".*"):
        return kind.startswith(pattern[:-1])
    return kind == pattern


def selection_matches(sel: Selection, ev: Event) -> bool:
    if not kind_matches(sel.event, ev.kind):
        return False
    for name, cond in sel.where.items():
        if not holds(ev.get(name), cond):
            return False
    return all(not holds(ev.get(name), cond) for name, cond in sel.where_not.items())


def rule_matches(rule: Rule, ev: Event) -> bool:
    return any(selection_matches(sel, ev) for sel in rule.match)


class RuleIndex:
    """Rules by the event kinds they select, so each event meets only its rules."""

    def __init__(self, rules: list[Rule]) -> None:
        self.exact: dict[str, list[Rule]] = {}
        self.prefix: list[tuple[str, Rule]] = []
        for r in rules:
            for sel in r.match:
                if sel.event.endswith(".*"):
                    self.prefix.append((sel.event[:-1], r))
                else:
                    lst = self.exact.setdefault(sel.event, [])
                    if r not in lst:
                        lst.append(r)
        # each kind's rules, worked out once per kind (a 16k-rank job's watchdog lines are two kinds), not per event
        self._by_kind: dict[str, tuple[Rule, ...]] = {}

    def candidates(self, kind: str) -> tuple[Rule, ...]:
        hit = self._by_kind.get(kind)
        if hit is None:
            out = list(self.exact.get(kind, ()))
            for pre, r in self.prefix:
                if kind.startswith(pre) and r not in out:
                    out.append(r)
            hit = self._by_kind[kind] = tuple(out)
        return hit
