"""The quick and the full tier (tests/tier.py): the full tier keeps every count written in the tests."""

from __future__ import annotations

import pytest

from tests import tier


def test_the_full_tier_draws_every_example_and_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIRSTFAULT_LAB", "all")
    assert tier.full()
    assert [tier.examples(n) for n in (25, 150, 3000)] == [25, 150, 3000]
    assert tier.sample(list(range(10)), 3) == list(range(10))


def test_the_quick_tier_draws_a_share_and_never_more_than_the_full_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FIRSTFAULT_LAB", raising=False)
    assert not tier.full()
    assert [tier.examples(n) for n in (25, 150, 3000)] == [25, 50, 600]
    # spread over the sequence, its first item among them
    assert tier.sample(list(range(10)), 5) == [0, 2, 4, 6, 8]
    assert tier.sample(list(range(3)), 5) == [0, 1, 2]


def test_a_bad_tier_value_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIRSTFAULT_LAB", "everything")
    with pytest.raises(ValueError, match="FIRSTFAULT_LAB"):
        tier.full()
