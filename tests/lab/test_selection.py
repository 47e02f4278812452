"""tests/lab/selection.py: which lab faults the quick run makes afresh, and FIRSTFAULT_LAB / LAB_ONLY."""

from __future__ import annotations

import dataclasses

import pytest
from lab.faults import FAULTS

from tests.lab import selection


def test_the_sample_is_one_fault_per_mode_that_fails_by_itself() -> None:
    chosen = [FAULTS[n] for n in selection.sample()]
    slow = {f.mode for f in FAULTS.values() if f.slow_first_start}
    assert slow == {"deepspeed"}  # DeepSpeed compiles its CPU shared-memory op at its first start (minutes)
    assert sorted(f.mode for f in chosen) == sorted({f.mode for f in FAULTS.values()} - slow)
    for f in chosen:
        assert f.domain not in ("unknown", "none") and f.outcome == "failed", f.name
        assert not (f.kill_from_outside or f.admin_at_marker or f.scancel_at_marker), f.name
        assert f.slurm_profile == "harness", f.name


def test_the_cheapest_wins_and_a_tie_keeps_the_catalogue_order() -> None:
    a = dataclasses.replace(FAULTS["value_error"], name="a", timeout=120.0)
    b = dataclasses.replace(FAULTS["value_error"], name="b", timeout=60.0)
    c = dataclasses.replace(FAULTS["value_error"], name="c", timeout=60.0)
    assert selection.sample([a, b, c]) == {"b"}


def test_near_misses_cheaper_but_needing_the_driver_or_without_a_cause_are_not_chosen() -> None:
    base = dataclasses.replace(FAULTS["value_error"], name="base", timeout=120.0)
    cheaper = {"killed": {"kill_from_outside": True}, "admin": {"admin_at_marker": (("update",),)},
               "cgroup": {"memcg_limit": 1 << 20}, "hang": {"domain": "unknown", "category": None},
               "clean": {"domain": "none", "category": None, "outcome": "succeeded"},
               "other_slurm": {"slurm_profile": "jobacct"}, "slow_first_start": {"slow_first_start": True}}
    near = [dataclasses.replace(base, name=n, timeout=10.0, **kw) for n, kw in cheaper.items()]
    assert selection.sample([*near, base]) == {"base"}


def test_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAB_ONLY", raising=False)
    monkeypatch.delenv(selection.ENV, raising=False)
    assert {n for n in FAULTS if selection.selected(n)} == selection.sample()
    monkeypatch.setenv(selection.ENV, "all")
    assert all(selection.selected(n) for n in FAULTS)
    monkeypatch.setenv("LAB_ONLY", "ray_* slurm_node_down")  # LAB_ONLY wins over FIRSTFAULT_LAB
    assert {n for n in FAULTS if selection.selected(n)} == {
        "ray_exception", "ray_hang", "ray_sigkill_external", "ray_completed", "slurm_node_down"}
    monkeypatch.setenv(selection.ENV, "al")
    with pytest.raises(ValueError, match="FIRSTFAULT_LAB='al'"):
        selection.mode()
