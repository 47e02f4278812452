"""The dashboard's own queries on a real PostgreSQL (tests/store/pg_harness.py): the JSON path into the
verdict document differs from SQLite's, so the fleet figures and the list are checked on both."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from firstfault.model import Verdict
from firstfault.store import VerdictStore
from tests.dashboard.conftest import Client, dashboard_app, healthy_runs, load, repeat_failures
from tests.store.pg_harness import PgServer, find_bindir

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def pg() -> Iterator[PgServer]:
    bindir = find_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) are not installed")
    server = PgServer(bindir).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_store(pg: PgServer) -> Iterator[VerdictStore]:
    name = pg.create_database()
    store = VerdictStore.open(pg.url(name))
    try:
        yield store
    finally:
        store.close()
        pg.drop_database(name)


def test_api_on_postgres_matches_sqlite(pg_store: VerdictStore, store: VerdictStore,
                                        samples: dict[str, Verdict]) -> None:
    answers = []
    for s in (pg_store, store):
        assert Client(dashboard_app(s)).get("/v1/fleet").json()["verdicts"] == 0  # empty database
        load(s, samples)
        repeat_failures(s, samples["xid149"], 5)
        healthy_runs(s, samples["ok"], 20, ["node-01", "node-03", "node-04", "node-05"])
        c = Client(dashboard_app(s))
        fleet = c.get("/v1/fleet", params={"since": "7d"}).json()
        listing = c.get("/v1/verdicts", params={"domain": "hardware", "node": "node-02"}).json()
        assert c.get("/v1/verdicts?since=never").status_code == 422
        answers.append((fleet, [(i["workload_id"], i["root_category"]) for i in listing["items"]], listing["total"]))
    (pg_fleet, pg_list, pg_total), (lite_fleet, lite_list, lite_total) = answers
    assert pg_fleet["node_jobs"] > 0 and pg_fleet["node_jobs"] == lite_fleet["node_jobs"]
    assert pg_fleet["tables"] == lite_fleet["tables"]
    assert pg_fleet["tables"][0]["entries"][0]["key"] == "node-02"
    assert pg_list == lite_list and pg_total == lite_total == 7
