"""Switches, switch ports and cables in the store, the fleet figures, `firstfault fleet --by` and the dashboard.

The verdicts are those of the two fabric scenarios (tests/scenarios/net-ib-*-fabric: the real tools'
topology): leaf01 port 3 is a cause (its cable to node-03 named at both ends), and leaf01 is a common-switch
lead. On SQLite and on the suite's real PostgreSQL (tests/store/pg_harness.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.cli.fleet import fleet
from firstfault.model import Enrichment, Verdict
from firstfault.store import VerdictStore
from firstfault.store import db as store_db
from firstfault.store import schema as t
from tests.dashboard.conftest import NOW, SCENARIOS, Client, dashboard_app, variant
from tests.store.pg_harness import store_url

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)]
CABLE = "leaf01/3 - node-03/mlx5_0:1"


@pytest.fixture(scope="module")
def port_down() -> Verdict:
    return Analyzer().analyze_path(str(SCENARIOS / "net-ib-switch-port-down-fabric"), now=NOW)


@pytest.fixture(scope="module")
def leaf_lead() -> Verdict:
    return Analyzer().analyze_path(str(SCENARIOS / "net-ib-transport-common-leaf-fabric"), now=NOW)


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with store_url(request.param, tmp_path) as u:
        yield u


def _fill(store: VerdictStore, port_down: Verdict, leaf_lead: Verdict) -> None:
    """leaf01 port 3 fails four days running; the leaf is a lead twice."""
    for i in range(4):
        store.write(variant(port_down, f"pd-{i}", analyzed_at=NOW - timedelta(days=i, hours=2)),
                    Enrichment(cluster="ib"))
    for i in range(2):
        store.write(variant(leaf_lead, f"lead-{i}", analyzed_at=NOW - timedelta(days=i, hours=3)),
                    Enrichment(cluster="ib"))


def _tables(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {tb["kind"]: tb for tb in doc["tables"]}


def test_the_fleet_ranks_switches_switch_ports_and_cables(url: str, port_down: Verdict, leaf_lead: Verdict) -> None:
    with VerdictStore.open(url) as store:
        _fill(store, port_down, leaf_lead)
        body = Client(dashboard_app(store)).get("/v1/fleet", params={"since": "7d"}).json()
    tables = _tables(body)
    (sw,) = [e for e in tables["switches"]["entries"] if e["key"] == "leaf01"]
    assert (sw["root"], sw["lead"], sw["node"]) == (4, 2, "leaf01")
    port = tables["switch_ports"]["entries"][0]
    assert (port["key"], port["node"], port["root"]) == ("leaf01/3", "leaf01", 4)
    cable = tables["cables"]["entries"][0]
    assert (cable["key"], cable["node"], cable["root"]) == (CABLE, "node-03", 4)
    assert cable["jobs"] == 6  # the cable's host end ran every one of the six jobs: the exposure is its node's
    # the reporters' own cables were seen in the evidence, never blamed
    assert all(e["root"] == 0 for e in tables["switch_ports"]["entries"] if e["key"] != "leaf01/3")
    # seen: the reporters' ports too (node-01, node-02 and node-03 report; node-04 is only a peer)
    assert tables["switch_ports"]["seen"] == 3 and tables["switches"]["seen"] == 1
    # a switch port the fabric names is a switch port, not a device
    assert all(e["key"] != "leaf01/3" for e in tables["devices"]["entries"])
    assert (tables["devices"]["entries"][0]["key"], tables["devices"]["entries"][0]["root"]) == ("node-03/mlx5_0", 4)


def test_the_store_keeps_the_cables(url: str, port_down: Verdict) -> None:
    with VerdictStore.open(url) as store:
        vid = store.write(port_down)
        with store.engine.connect() as conn:
            rows = conn.execute(select(t.evidence.c.role, t.evidence.c.cable_switch, t.evidence.c.cable_switch_port,
                                       t.evidence.c.cable_node, t.evidence.c.cable_port)
                                .where(t.evidence.c.verdict_id == vid, t.evidence.c.role == "cause")).all()
        assert rows and all(tuple(r)[1:] == ("leaf01", "3", "node-03", "mlx5_0:1") for r in rows)
        got = store.get(vid)
    assert got is not None and records.dumps(got) == records.dumps(port_down)


def test_a_store_written_before_0005_is_spelled_out_by_it(url: str, port_down: Verdict, leaf_lead: Verdict) -> None:
    """Verdicts with cables written to a store at 0004 (opened without migrating): the document keeps the cables;
    0005 adds the columns, fills them in and spells the fleet rows out as the write path does at head."""
    with VerdictStore.open(url) as fresh:
        _fill(fresh, port_down, leaf_lead)
        want = _snapshot(fresh)
    engine = store_db.create_store_engine(url)
    try:
        cfg = store_db._config()
        from alembic import command

        with engine.connect().execution_options(**store_db.WRITE) as conn, conn.begin():
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "base")
        with engine.connect().execution_options(**store_db.WRITE) as conn, conn.begin():
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "0004_key_blocks")
        old = VerdictStore(engine)
        _fill(old, port_down, leaf_lead)
        store_db.migrate(engine)
        assert store_db.current_revision(engine) == store_db.head_revision()
        assert _snapshot(VerdictStore(engine)) == want
    finally:
        engine.dispose()


def _snapshot(store: VerdictStore) -> dict[str, Any]:
    """What the fleet reads, without ids: fleet hits, the rollups, the evidence's cables."""
    h, e, v = t.fleet_hits.c, t.evidence.c, t.verdicts.c
    with store.engine.connect() as conn:
        ids = {r.id: r.workload_id for r in conn.execute(select(v.id, v.workload_id))}
        return {
            "hits": sorted((ids[r.verdict_id], r.kind, r.key, r.node or "", r.role, r.domains)
                           for r in conn.execute(select(h.verdict_id, h.kind, h.key, h.node, h.role, h.domains))),
            "cables": sorted((ids[r.verdict_id], r.position, r.cable_switch, r.cable_switch_port, r.cable_node,
                              r.cable_port) for r in conn.execute(
                select(e.verdict_id, e.position, e.cable_switch, e.cable_switch_port, e.cable_node, e.cable_port)
                .where(e.cable_switch.is_not(None)))),
            "day_hits": sorted(tuple(str(x) for x in r) for r in conn.execute(select(t.fleet_day_hits))),
            "day_keys": sorted(tuple(str(x) for x in r) for r in conn.execute(select(t.fleet_day_keys))),
        }


def test_fleet_by_ranks_only_the_tables_asked_for(tmp_path: Path, port_down: Verdict, leaf_lead: Verdict) -> None:
    url = f"sqlite:///{tmp_path / 'v.db'}"
    with VerdictStore.open(url) as store:
        _fill(store, records.replace(port_down), leaf_lead)
    from datetime import UTC, datetime

    age = datetime.now(UTC) - NOW  # the CLI's window ends now: the samples are from NOW
    since = f"{age.days + 8}d"
    runner = CliRunner()
    r = runner.invoke(_app(), ["--db", url, "--since", since, "--by", "switch", "--by", "cable", "-f", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [tb["kind"] for tb in doc["tables"]] == ["switches", "cables"]
    assert doc["tables"][0]["entries"][0]["key"] == "leaf01"
    r = runner.invoke(_app(), ["--db", url, "--since", since, "--by", "switch-port"], env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    assert "Switch ports" in r.stdout and "leaf01/3" in r.stdout and "Nodes" not in r.stdout
    r = runner.invoke(_app(), ["--db", url, "--by", "rack"])
    assert r.exit_code == 2 and "--by" in r.output


def _app() -> Any:
    return fleet


def test_the_switches_view_and_the_verdict_page(tmp_path: Path, port_down: Verdict, leaf_lead: Verdict) -> None:
    with VerdictStore.open(f"sqlite:///{tmp_path / 'v.db'}") as store:
        _fill(store, port_down, leaf_lead)
        vid = store.write(variant(port_down, "page", analyzed_at=NOW - timedelta(hours=1)))
        client = Client(dashboard_app(store))
        page = client.get("/fleet/switches", params={"since": "7d"})
        assert page.status_code == 200
        assert 'data-switch="leaf01"' in page.text and 'data-key="leaf01/3"' in page.text
        assert CABLE in page.text
        bad = client.get("/fleet/switches", params={"since": "soon"})
        assert bad.status_code == 422 and "is not a time" in bad.text
        verdict = client.get(f"/verdicts/{vid}").text
        assert "↔ leaf01 port 3" in verdict  # the far end of the port the cause names
        fleet_page = client.get("/fleet", params={"since": "7d"}).text
        assert 'id="fleet-switches"' in fleet_page and 'id="fleet-cables"' in fleet_page
