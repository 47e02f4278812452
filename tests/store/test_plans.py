"""The query plans of the fleet view and the category filter, on the real PostgreSQL of the suite.

bench/store_scale.py measures them at a million verdicts; this checks, at a
modest size (20,000 verdicts over a year, ANALYZE'd), that each statement
still reads what it was built to read: the daily rollups and the fleet
tables by their indexes, the causes by their category index, never a
sequential scan of a large table. A change that loses an index (or writes a
statement the planner can only answer by reading every row) fails here
instead of in a benchmark.

The rows are the write path's own (repo._verdict_row, child_rows,
fleet_rows_of over one analysed sample per kind, then rollups.deltas /
apply), copied onto new ids, times and nodes and loaded with COPY (writing
20,000 verdicts one by one would take minutes).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from sqlalchemy import Engine, event

from firstfault import records
from firstfault.dashboard.fleetsql import fleet_counts
from firstfault.model import Enrichment, Verdict
from firstfault.store import VerdictStore
from firstfault.store.fleetrows import day_number
from tests.store.bulkload import Batch
from tests.store.contract import scenario, scenario_json
from tests.store.pg_harness import fresh_database

pytestmark = pytest.mark.integration

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
VERDICTS = 20_000
DAYS = 365
# Tables that grow with the verdicts: none of them may be read whole.
LARGE = {"verdicts", "fleet_hits", "fleet_exposure", "causes", "fleet_day_hits", "fleet_day_keys"}
TEMPLATES = ("hw-nvlink-xid149-showcase", "net-ib-port-down-mlx5", "hw-nvswitch-sxid-fatal", "amb-example",
             "sw-cuda-oom-rank3", "ok-completed-nccl-noise", "ok-completed-nccl-noise", "ok-completed-nccl-noise")


def _load(url: str) -> None:
    rng = random.Random(5)
    nodes = [f"gpu{i:04d}" for i in range(2000)]
    batch = Batch()
    # each template's verdict as JSON text and its nodes, once (a scenario's verdict is the same text every time)
    template = {name: (scenario_json(name), sorted(scenario(name).workload.nodes)) for name in set(TEMPLATES)}
    for vid in range(1, VERDICTS + 1):
        text, old = template[TEMPLATES[vid % len(TEMPLATES)]]
        start = rng.randrange(0, len(nodes) - len(old))
        rename = dict(zip(old, nodes[start:start + len(old)], strict=True))
        end = NOW - timedelta(seconds=rng.randrange(DAYS * 86400))
        for a, b in rename.items():
            text = text.replace(f'"{a}"', f'"{b}"').replace(f'"{a}/', f'"{b}/')
        doc = json.loads(text)
        doc["workload"]["id"] = f"w{vid}"
        doc["workload"]["window"] = {"start": (end - timedelta(hours=1)).isoformat(), "end": end.isoformat()}
        doc["analyzed_at"] = (end + timedelta(minutes=5)).isoformat()
        v = records.convert(doc, Verdict)
        batch.add(v, Enrichment(cluster=["east", "west"][vid % 2]), vid, end)
    with VerdictStore.open(url) as store, store.engine.connect() as sconn:
        batch.copy(sconn)
        sconn.commit()
    with psycopg.connect(url.replace("postgresql+psycopg", "postgresql"), autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    with fresh_database() as url:
        _load(url)
        with VerdictStore.open(url, auto_migrate=False) as store:
            yield store.engine


def _statements(engine: Engine, run: Any) -> list[tuple[str, Any]]:
    got: list[tuple[str, Any]] = []

    def rec(_c: Any, _cur: Any, statement: str, parameters: Any, _ctx: Any, _many: bool) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            got.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", rec)
    try:
        run()
    finally:
        event.remove(engine, "before_cursor_execute", rec)
    return got


def _scans(plan: dict[str, Any]) -> Iterator[tuple[str, str, str | None]]:
    """(node type, relation, index) of every scan in a JSON plan."""
    if "Relation Name" in plan or "Index Name" in plan:  # a Bitmap Index Scan names only its index
        yield plan["Node Type"], plan.get("Relation Name", ""), plan.get("Index Name")
    for sub in plan.get("Plans", []):
        yield from _scans(sub)


def _plans(engine: Engine, statements: list[tuple[str, Any]]) -> list[tuple[str, list[tuple[str, str, str | None]]]]:
    out = []
    raw = engine.raw_connection()
    try:
        cur = raw.cursor()
        for sql, params in statements:
            cur.execute("EXPLAIN (FORMAT JSON) " + sql, params)
            doc = cur.fetchone()[0]
            out.append((sql, list(_scans(doc[0]["Plan"]))))
        raw.rollback()
    finally:
        raw.close()
    return out


def _assert_indexed(plans: list[tuple[str, list[tuple[str, str, str | None]]]]) -> set[str]:
    used: set[str] = set()
    for sql, scans in plans:
        for node, rel, index in scans:
            assert not (node == "Seq Scan" and rel in LARGE), f"{node} on {rel} in:\n{sql}\n{scans}"
            if index:
                used.add(index)
    return used


@pytest.mark.parametrize(("since", "until", "clusters"), [
    (NOW - timedelta(days=7), NOW, []),  # mid-day to mid-day: rollups and both edges
    (NOW - timedelta(days=30), NOW, ["west"]),
    (NOW.replace(hour=0) - timedelta(days=7), NOW.replace(hour=0), []),  # whole days only
], ids=["7d", "30d-cluster", "whole-days"])
def test_the_fleet_statements_read_the_rollups_and_fleet_tables_by_index(
        engine: Engine, since: datetime, until: datetime, clusters: list[str]) -> None:
    stmts = _statements(engine, lambda: fleet_counts(engine, since, until, ["hardware", "network",
                                                                           "infrastructure"], 20, clusters))
    assert len(stmts) >= 10
    used = _assert_indexed(_plans(engine, stmts))
    assert {"pk_fleet_day_hits", "pk_fleet_day_keys"} <= used  # the rollups are what is read
    if since.hour or until.hour:  # partial edge days come from fleet_hits, by its time index
        assert used & {"ix_fleet_hits_failed_at_kind", "ix_fleet_hits_cluster_failed_at"}
    assert day_number(until) - day_number(since) <= 31


def test_the_category_filter_reads_the_causes_by_their_category_index(engine: Engine) -> None:
    store = VerdictStore(engine)
    for category in ("gpu", "gpu.nvlink", "network"):
        stmts = _statements(engine, lambda c=category: (store.list(category=c, limit=50),  # type: ignore[misc]
                                                        store.count(category=c)))
        used = _assert_indexed(_plans(engine, stmts))
        assert "ix_causes_category" in used
        assert store.count(category=category) > 0
