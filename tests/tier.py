"""The two tiers of the test suite: quick (the README's `./scripts/test.sh`, run before every commit, at most ten
minutes on a 2-core machine) and full (`FIRSTFAULT_LAB=all`, what CI's .ci/run sets: every lab fault made afresh,
every property test at its full count of examples, every generated line).

The quick tier runs every test the full tier runs, with the same assertions; only the amount of input of the
heaviest tests is smaller there (`examples`, `sample`): generated input, or the corpus bundles a check reads again
where the claim is each bundle's own (another prefilter engine, the fast paths off). The full tier's amounts are
the ones written in the tests. One variable decides both the lab's runs (tests/lab/selection.py) and these
amounts, so "the full tier" means one thing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from tests.lab import selection

T = TypeVar("T")

# The quick tier's share of a heavy property test's examples (at least QUICK_MIN of them, never more than the full
# count): a fifth still draws hundreds for the tests that take thousands.
QUICK_SHARE = 5
QUICK_MIN = 50


def full() -> bool:
    """Whether this session is the full tier (FIRSTFAULT_LAB=all; a bad value is refused where the lab reads it)."""
    return selection.mode() == "all"


def examples(n: int) -> int:
    """Hypothesis' max_examples for a test that takes `n` in the full tier."""
    return n if full() else min(n, max(QUICK_MIN, n // QUICK_SHARE))


def sample(items: Sequence[T], quick: int) -> list[T]:
    """All of `items` in the full tier; in the quick tier `quick` of them, spread evenly over the sequence (the
    first always among them), so each kind the sequence lists in turn keeps some."""
    if full() or quick >= len(items):
        return list(items)
    return [items[i * len(items) // quick] for i in range(quick)]
