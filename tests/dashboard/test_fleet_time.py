"""The fleet view counts by failure time (the window's end), by cluster, and from the fleet tables.

- A week of failures back-filled today (all analysed at NOW) lands on the
  days the attempts failed, not all on today.
- The SQL aggregation (fleetsql.fleet_counts over fleet_hits/fleet_exposure)
  gives the same counts as the reference reading of the child tables
  (queries.fleet_rows + fleet.count_rows) on the shipped samples, for several
  windows, domain sets and cluster filters.
- Migration 0002 spells out verdicts stored before it into the same fleet
  rows the write path writes.

Each runs on SQLite and on the real PostgreSQL of the suite (tests/store/pg_harness.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import select

from firstfault import records
from firstfault.dashboard.fleet import buckets_for, count_rows
from firstfault.dashboard.fleetsql import fleet_counts
from firstfault.dashboard.queries import fleet_rows
from firstfault.model import Enrichment, Verdict, Window
from firstfault.store import VerdictStore
from firstfault.store import db as store_db
from firstfault.store import schema as t
from tests.dashboard.conftest import NOW, Client, dashboard_app, healthy_runs, load, repeat_failures, variant
from tests.store.pg_harness import store_url

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)]


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with store_url(request.param, tmp_path) as u:
        yield u


@pytest.fixture
def db(url: str) -> Iterator[VerdictStore]:
    s = VerdictStore.open(url)
    try:
        yield s
    finally:
        s.close()


def test_a_backfilled_week_lands_on_the_days_it_failed(db: VerdictStore, samples: dict[str, Verdict]) -> None:
    # Seven hardware failures on node-02, one a day, all analysed today (a back-fill after an outage).
    for i in range(7):
        db.write(variant(samples["xid149"], f"backfill-{i}", analyzed_at=NOW,
                         failed_at=NOW - timedelta(days=i, hours=1)))
    client = Client(dashboard_app(db))
    body = client.get("/v1/fleet", params={"since": "7d"}).json()
    # since = NOW - 7d (11-22 12:00): buckets are the days 11-22 .. 11-29; the failure at 11-22 11:00 is out.
    assert [b[:10] for b in body["buckets"]] == [f"2026-11-{d}" for d in range(22, 30)]
    assert body["failures"] == [0, 1, 1, 1, 1, 1, 1, 1]
    assert body["verdicts"] == 7
    nodes = {tb["kind"]: tb for tb in body["tables"]}["nodes"]
    top = nodes["entries"][0]
    assert top["key"] == "node-02" and top["root"] == 7 and top["trend"] == [0, 1, 1, 1, 1, 1, 1, 1]
    assert top["last_seen"].startswith("2026-11-29T11:00:00")
    # A window of failure time: the last two days hold two of the seven, though all seven were analysed in them.
    two = client.get("/v1/fleet", params={"since": "2d"}).json()
    assert sum(two["failures"]) == 2 and two["verdicts"] == 2
    # The verdict list still filters on analysis time: all seven were analysed in the last two days.
    assert client.get("/v1/verdicts", params={"since": "2d"}).json()["total"] == 7


def test_a_verdict_without_a_window_end_counts_when_analysed(db: VerdictStore, samples: dict[str, Verdict]) -> None:
    v = variant(samples["xid149"], "open-window", analyzed_at=NOW - timedelta(hours=5))
    v = records.replace(v, workload=records.replace(v.workload, window=Window(start=None, end=None)))
    vid = db.write(v)
    with db.engine.connect() as conn:
        at = conn.execute(select(t.verdicts.c.failed_at).where(t.verdicts.c.id == vid)).scalar_one()
    assert at == NOW - timedelta(hours=5)
    body = Client(dashboard_app(db)).get("/v1/fleet", params={"since": "6h"}).json()
    assert sum(body["failures"]) == 1


def _fleet_store(db: VerdictStore, samples: dict[str, Verdict], fabric: dict[str, Verdict] | None = None) -> None:
    load(db, samples)  # every sample in its own cluster, named after it
    repeat_failures(db, samples["xid149"], 5)
    repeat_failures(db, samples["port-down"], 4, prefix="ib")
    repeat_failures(db, samples["sxid"], 3, prefix="sw")
    repeat_failures(db, samples["ambiguous"], 3, prefix="amb")
    if fabric:  # switches, switch ports and cables from a fabric source
        load(db, fabric)
        repeat_failures(db, fabric["fabric"], 3, prefix="fab")
        repeat_failures(db, fabric["leaf"], 2, prefix="leaf")
    healthy_runs(db, samples["ok"], 12, ["node-01", "node-03", "node-04", "node-05"])


CASES: list[dict[str, Any]] = [
    {"days": 7, "domains": ["hardware", "network", "infrastructure"], "clusters": []},
    {"days": 3, "domains": ["hardware"], "clusters": []},
    {"days": 30, "domains": ["software", "scheduler", "storage"], "clusters": []},
    {"days": 7, "domains": ["hardware", "network", "infrastructure"], "clusters": ["xid149", "port-down"]},
    {"days": 7, "domains": ["network"], "clusters": ["port-down"]},
    {"days": 7, "domains": ["network"], "clusters": ["fabric", "leaf"]},
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['days']}d-{'+'.join(c['domains'])}-{len(c['clusters'])}")
def test_the_sql_counts_equal_the_reference_reading(db: VerdictStore, samples: dict[str, Verdict],
                                                    fabric_samples: dict[str, Verdict], case: dict[str, Any]) -> None:
    _fleet_store(db, samples, fabric_samples)
    since, until = NOW - timedelta(days=case["days"]), NOW
    size, starts = buckets_for(since, until)
    ref = count_rows(fleet_rows(db.engine, since, until, case["clusters"]), case["domains"], starts, size, 20)
    got = fleet_counts(db.engine, since, until, case["domains"], 20, case["clusters"])
    assert got.verdicts == ref.verdicts and got.jobs == ref.jobs and got.failures == ref.failures
    assert got.kinds == ref.kinds
    assert any(k.top for k in got.kinds.values())  # the case counts something


def test_the_fleet_view_filters_by_cluster(db: VerdictStore, samples: dict[str, Verdict]) -> None:
    _fleet_store(db, samples)
    client = Client(dashboard_app(db))
    everything = client.get("/v1/fleet", params={"since": "7d"}).json()
    only = client.get("/v1/fleet", params={"since": "7d", "cluster": "port-down"}).json()
    assert only["clusters"] == ["port-down"] and only["verdicts"] == 1 < everything["verdicts"]
    tables = {tb["kind"]: tb for tb in only["tables"]}
    pd = samples["port-down"]
    assert pd.root_cause is not None
    roots = {e["key"] for e in tables["nodes"]["entries"] if e["root"]}
    assert roots == set(pd.root_cause.nodes)  # the other clusters' node-02 and friends are not counted
    assert {e["key"] for e in tables["nodes"]["entries"]} <= set(pd.workload.nodes)
    assert tables["nodes"]["seen"] == len(set(pd.workload.nodes))
    page = client.get("/fleet", params={"since": "7d", "cluster": "port-down"})
    assert page.status_code == 200 and 'value="port-down"' in page.text


def test_migration_0002_spells_out_verdicts_stored_before_it(url: str, samples: dict[str, Verdict],
                                                            fabric_samples: dict[str, Verdict]) -> None:
    with VerdictStore.open(url) as db:
        _fleet_store(db, samples, fabric_samples)
        db.write(variant(samples["ambiguous"], "no-cluster"), Enrichment())
        written = _fleet_snapshot(db)
        assert written["hits"] and written["exposure"]
    engine = store_db.create_store_engine(url)
    try:
        cfg = store_db._config()
        with engine.connect().execution_options(**store_db.WRITE) as conn, conn.begin():
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0001")  # the store as it was before the fleet tables
        assert store_db.current_revision(engine) == "0001"
        store_db.migrate(engine)  # and forward again: 0002's data migration fills them from the old rows
        assert _fleet_snapshot(VerdictStore(engine)) == written
    finally:
        engine.dispose()


def _fleet_snapshot(db: VerdictStore) -> dict[str, Any]:
    h, x, v = t.fleet_hits.c, t.fleet_exposure.c, t.verdicts.c
    with db.engine.connect() as conn:
        return {
            "verdicts": sorted(conn.execute(select(v.id, v.failed_at)).all()),
            "hits": sorted(conn.execute(select(h.verdict_id, h.failed_at, h.failed_day, h.cluster, h.kind, h.key,
                                               h.node, h.role, h.domains)).all(), key=repr),
            "exposure": sorted(conn.execute(select(x.verdict_id, x.failed_at, x.cluster, x.node)).all(), key=repr),
        }


def _spread_store(db: VerdictStore, samples: dict[str, Verdict], now: Any = NOW) -> None:
    """Failures and healthy runs over twelve days at all hours, three clusters: whole days and edges."""
    names = ["xid149", "port-down", "sxid", "ambiguous", "node-fail", "cuda-oom", "ok", "ok", "clock-skew"]
    for i in range(45):
        name = names[i % len(names)]
        at = now - timedelta(days=(i * 5) % 12, hours=(i * 7) % 24, minutes=3 * i)
        db.write(variant(samples[name], f"spread-{i}", analyzed_at=at + timedelta(minutes=10), failed_at=at),
                 Enrichment(cluster=["east", "west", "north"][i % 3]))


MIDNIGHT = NOW.replace(hour=0)
WINDOWS: list[tuple[str, Any, Any]] = [  # (id, since, until)
    ("7d-from-now", NOW - timedelta(days=7), NOW),  # starts and ends mid-day: both edges from fleet_hits
    ("whole-days", MIDNIGHT - timedelta(days=5), MIDNIGHT),  # no edge at all: rollups only
    ("midnight-to-now", MIDNIGHT - timedelta(days=3), NOW),
    ("mid-day-to-midnight", NOW - timedelta(days=4, hours=5), MIDNIGHT - timedelta(days=1)),
    ("under-a-day", NOW - timedelta(hours=20), NOW),  # no whole day inside
    ("a-day-and-a-half", NOW - timedelta(hours=36), NOW),
    ("30d", NOW - timedelta(days=30), NOW + timedelta(hours=1)),
    ("empty", NOW, NOW),
]


def _assert_same(db: VerdictStore, since: Any, until: Any, domains: list[str], clusters: list[str],
                 limit: int = 20) -> None:
    size, starts = buckets_for(since, until)
    ref = count_rows(fleet_rows(db.engine, since, until, clusters), domains, starts, size, limit)
    got = fleet_counts(db.engine, since, until, domains, limit, clusters)
    assert (got.verdicts, got.node_jobs, got.job_nodes, got.jobs, got.failures) == (
        ref.verdicts, ref.node_jobs, ref.job_nodes, ref.jobs, ref.failures)
    assert got.kinds == ref.kinds


@pytest.mark.parametrize(("since", "until"), [w[1:] for w in WINDOWS], ids=[w[0] for w in WINDOWS])
def test_the_rollup_counts_equal_the_reference_for_any_window(db: VerdictStore, samples: dict[str, Verdict],
                                                              since: Any, until: Any) -> None:
    _spread_store(db, samples)
    for domains, clusters in ((["hardware", "network", "infrastructure"], []), (["hardware"], ["east", "north"]),
                              (["software", "network"], ["west"])):
        _assert_same(db, since, until, domains, clusters)
    if until > since + timedelta(days=2):
        got = fleet_counts(db.engine, since, until, ["hardware", "network", "infrastructure"], 20)
        assert got.verdicts and any(k.top for k in got.kinds.values())  # the window counts something


@pytest.mark.parametrize("limit", [1, 2, 3, 5])
def test_a_short_ranking_is_the_reference_ranking_ties_included(db: VerdictStore, samples: dict[str, Verdict],
                                                                limit: int) -> None:
    """With fewer rows shown than keys with a root, the ranking's first pass (root sums alone) picks the keys
    the full ranking runs over (fleetsql._top); keys tied at the cut-off root must all be ranked."""
    _spread_store(db, samples)
    repeat_failures(db, samples["xid149"], 3, prefix="tie")  # more keys at the same root counts
    for _name, since, until in WINDOWS:
        for domains in (["hardware", "network", "infrastructure"], ["hardware"]):
            _assert_same(db, since, until, domains, [], limit)
    got = fleet_counts(db.engine, NOW - timedelta(days=30), NOW + timedelta(hours=1),
                       ["hardware", "network", "infrastructure"], limit)
    ranked = [k for k in got.kinds.values() if len(k.top) == limit and k.top[-1].root > 0]
    assert ranked  # the first pass decided at least one ranking here


def test_the_rollup_counts_are_exact_across_a_key_block_boundary(db: VerdictStore,
                                                                 samples: dict[str, Verdict]) -> None:
    """fleet_key_blocks holds 63 days a row (store/rollups.py): windows that start, end and span across the
    boundary between two blocks (UTC day 330 * 63, 2026-12-03) count what the reference reading counts."""
    from datetime import UTC, datetime

    boundary = datetime(2026, 12, 3, tzinfo=UTC)
    now = boundary + timedelta(days=5, hours=12)
    _spread_store(db, samples, now)  # twelve days: seven before the boundary, five after
    for since, until in ((boundary - timedelta(days=4), boundary + timedelta(days=3)),  # whole days, both blocks
                         (boundary - timedelta(days=6, hours=5), now),  # edges in both blocks
                         (boundary - timedelta(days=2), boundary),  # ends on it
                         (boundary, boundary + timedelta(days=2, hours=7))):  # starts on it
        for domains, clusters in ((["hardware", "network", "infrastructure"], []), (["software"], ["west"])):
            _assert_same(db, since, until, domains, clusters)
    got = fleet_counts(db.engine, boundary - timedelta(days=4), boundary + timedelta(days=3),
                       ["hardware", "network", "infrastructure"], 20)
    assert got.job_nodes and got.kinds["nodes"].seen  # the window counts something on both sides


def test_the_rollup_counts_stay_equal_after_prunes_and_rewrites(db: VerdictStore,
                                                                samples: dict[str, Verdict]) -> None:
    from firstfault.store.retention import prune

    _spread_store(db, samples)
    # A rewrite of a stored attempt (same key, same window) changes nothing and is not counted twice.
    again = variant(samples["xid149"], "spread-0", analyzed_at=NOW + timedelta(minutes=10), failed_at=NOW)
    assert db.write(again, Enrichment(cluster="east")) is not None
    for cutoff in (NOW - timedelta(days=8, hours=5), NOW - timedelta(days=4, hours=17)):  # both mid-day
        assert prune(db, cutoff, batch=3).deleted > 0
        for _name, since, until in WINDOWS:
            _assert_same(db, since, until, ["hardware", "network", "infrastructure"], [])
            _assert_same(db, since, until, ["hardware", "software"], ["west"])
