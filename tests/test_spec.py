"""spec.py's category patterns: what rules, recovery policies and followers' expectations mean by `x.*` and `x`."""

from __future__ import annotations

import pytest

from firstfault.spec import category_matches, ended_in_failure


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


@pytest.mark.parametrize(("state", "failed"), [
    ("FAILED", True), ("NODE_FAIL", True), ("CANCELLED by 0", True), ("OUT_OF_MEMORY", True),
    ("COMPLETED", False), (None, False), ("", False), ("SOMETHING_ELSE", False),
])
def test_ended_in_failure_needs_a_recorded_failing_end(state: str | None, failed: bool) -> None:
    # the cause-words last resort runs only where this holds (analysis/analyze.py)
    assert ended_in_failure(state) is failed
