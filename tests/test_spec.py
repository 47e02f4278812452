"""spec.py's category patterns: what rules, recovery policies and followers' expectations mean by `x.*` and `x`."""

from __future__ import annotations

import pytest

from firstfault.spec import category_matches


@pytest.mark.parametrize(("pattern", "category"), [
    ("nccl.*", "nccl.timeout"),
    ("nccl", "nccl.timeout"),
    ("app.cuda_oom", "app.cuda_oom"),
    ("gpu.*", "gpu.nvlink.signal_integrity"),
])
def test_a_pattern_covers_its_category_and_those_below(pattern: str, category: str) -> None:
    assert category_matches(pattern, category)


@pytest.mark.parametrize(("pattern", "category"), [
    ("nccl", "ncclx.timeout"),  # a longer word with the same start is another family
    ("gpu.mem", "gpu.memory.ecc"),
    ("app.cuda_oom", "app"),  # a category does not cover the family above it
    ("nccl.timeout.*", "nccl.timeout_x"),
])
def test_near_misses_are_not_covered(pattern: str, category: str) -> None:
    assert not category_matches(pattern, category)
