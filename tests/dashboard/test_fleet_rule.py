"""The fleet arithmetic (fleet.py) and the filter grammar (params.py), without a database."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from firstfault.dashboard.fleet import MIN_REPEAT, buckets_for, build_report, poisson_tail, port_kind
from firstfault.dashboard.params import FleetParams, VerdictFilters, parse_when
from firstfault.dashboard.queries import FleetRows, Hit

T = datetime(2026, 11, 29, 12, tzinfo=UTC)


@pytest.mark.parametrize("lam", [0.01, 0.3, 1.0, 2.5, 7.0, 30.0, 140.0])
@pytest.mark.parametrize("k", [1, 2, 3, 5, 8, 13, 40, 150, 600])
def test_poisson_tail_equals_the_exact_sum(k: int, lam: float) -> None:
    """Against the definition in exact rational arithmetic (Fraction; e^-lam from math, the one rounding)."""
    from fractions import Fraction

    lam_q = Fraction(lam)
    term, below = Fraction(1), Fraction(0)  # lam^i / i!, without the e^-lam
    for i in range(k):
        below += term
        term = term * lam_q / (i + 1)
    exact = 1.0 - float(below * Fraction(math.exp(-lam)))
    tail_q = Fraction(0)  # the tail itself, for the tiny values where 1 - below cancels
    term_q = term
    for i in range(k, k + 400):
        tail_q += term_q
        term_q = term_q * lam_q / (i + 1)
    tail = float(tail_q * Fraction(math.exp(-lam)))
    want = tail if exact < 1e-6 else exact
    assert poisson_tail(k, lam) == pytest.approx(want, rel=1e-9, abs=1e-15)


def test_poisson_tail_matches_the_closed_form() -> None:
    assert poisson_tail(0, 2.0) == 1.0
    assert poisson_tail(1, 2.0) == pytest.approx(1 - math.exp(-2))
    assert poisson_tail(3, 0.5) == pytest.approx(1 - math.exp(-0.5) * (1 + 0.5 + 0.125))
    assert poisson_tail(3, 0.0) == 0.0
    assert 0.0 <= poisson_tail(400, 3.0) < 1e-100  # no overflow for large counts


def test_buckets_are_whole_days_and_at_most_sixty() -> None:
    size, starts = buckets_for(T - timedelta(days=7), T)
    assert size == 1 and len(starts) == 8 and starts[0] == datetime(2026, 11, 22, tzinfo=UTC)
    size, starts = buckets_for(T - timedelta(days=365), T)
    assert size == 7 and len(starts) <= 60 and starts[-1] <= T


def test_port_kinds() -> None:
    assert port_kind("nvswitch2:30") == "switch_ports"
    assert port_kind("nvswitch-phys2:30") == "switch_ports"
    assert port_kind("mlx5_5:1") == "host_ports" and port_kind("ibp94s0") == "host_ports"


def _rows(fails: dict[str, int], jobs: dict[str, int], domain: str = "hardware") -> FleetRows:
    rows = FleetRows()
    vid = 0
    for node, n in jobs.items():
        for _ in range(n):
            vid += 1
            rows.verdicts.append((vid, T - timedelta(hours=1), (node,)))
            if fails.get(node, 0) > 0:
                fails[node] -= 1
                rows.nodes.append(Hit(vid, T - timedelta(hours=1), "root", (domain,), node, node))
                rows.cause_domains[vid] = {domain}
    return rows


def test_a_node_failing_far_above_the_fleet_rate_is_flagged() -> None:
    jobs = {f"n{i:02d}": 20 for i in range(20)}
    fails = {"n00": 6, "n01": 1, "n02": 1}
    report = build_report(_rows(dict(fails), jobs), T - timedelta(days=7), T)
    nodes = report.table("nodes")
    assert [e.key for e in nodes.entries] == ["n00", "n01", "n02"]
    assert nodes.rate == pytest.approx(8 / 400)
    top = nodes.entries[0]
    assert top.expected == pytest.approx(8 / 400 * 20)
    assert top.repeat_offender and top.p_value is not None and top.p_value < 0.05 / 20
    assert not any(e.repeat_offender for e in nodes.entries[1:])
    assert sum(report.failures) == 8


def test_many_failures_on_a_busy_node_at_the_fleet_rate_are_not_flagged() -> None:
    # Every node fails a tenth of its jobs; the busy one fails more often, but not more per job.
    jobs = {"busy": 100, **{f"n{i}": 10 for i in range(10)}}
    fails = {"busy": 10, **{f"n{i}": 1 for i in range(10)}}
    nodes = build_report(_rows(dict(fails), jobs), T - timedelta(days=7), T).table("nodes")
    assert nodes.entries[0].key == "busy" and nodes.entries[0].root == 10
    assert not nodes.entries[0].repeat_offender


def test_fewer_than_the_minimum_is_never_flagged() -> None:
    jobs = {f"n{i:02d}": 50 for i in range(40)}
    nodes = build_report(_rows({"n00": MIN_REPEAT - 1}, jobs), T - timedelta(days=7), T).table("nodes")
    assert nodes.entries[0].root == MIN_REPEAT - 1 and not nodes.entries[0].repeat_offender


def test_domains_filter_what_counts() -> None:
    rows = _rows({"n0": 3}, {"n0": 5, "n1": 5}, domain="software")
    assert build_report(rows, T - timedelta(days=1), T).table("nodes").entries == []
    assert build_report(rows, T - timedelta(days=1), T, ["software"]).table("nodes").entries[0].root == 3


@pytest.mark.parametrize(("text", "expected"), [
    ("90m", timedelta(minutes=90)), ("24h", timedelta(hours=24)), ("7d", timedelta(days=7)),
    ("2w", timedelta(weeks=2)), ("2026-11-02", datetime(2026, 11, 2, tzinfo=UTC)),
    ("2026-11-02T10:00:00Z", datetime(2026, 11, 2, 10, tzinfo=UTC)),
    ("2026-11-02T12:00:00+02:00", datetime(2026, 11, 2, 10, tzinfo=UTC)),
])
def test_time_forms(text: str, expected: object) -> None:
    assert parse_when(text) == expected


@pytest.mark.parametrize("text", ["", "7", "7y", "-7d", "yesterday", "2026-02-30", "999999w", "0001-01-01"])
def test_bad_times_name_the_accepted_forms(text: str) -> None:
    with pytest.raises(ValueError, match=r"is not a time|more than|outside"):
        parse_when(text)


def test_filters_round_trip_through_the_url() -> None:
    f = VerdictFilters.model_validate({"domain": ["hardware", "network"], "node": "node-02", "since": "7d"})
    again = VerdictFilters.model_validate({k: v for k, v in _parse(f.query()).items()})
    assert again == f
    assert f.query(offset=50).endswith("offset=50")
    with pytest.raises(ValidationError):
        FleetParams.model_validate({"domain": ["unknown"]})


def _parse(q: str) -> dict[str, object]:
    from urllib.parse import parse_qs

    out: dict[str, object] = {}
    for k, v in parse_qs(q).items():
        out[k] = v if k in ("domain", "outcome") else v[0]
    return out
