"""The actions ledger under concurrency, on SQLite and on a real PostgreSQL (tests/store/pg_harness.py).

Many Blueprints finishing at once (one epilog per failed job after a fleet-wide fault) must not all
see "no drain yet this hour". Eight threads, each with its own store connection and a verdict for a
node of its own, decide at once under max_per_hour=3: exactly three act. The scheduler here is an
in-memory fleet of 20 idle nodes (no scheduler is under test: the ledger's lock is); its act()
sleeps to hold the decision open, so without the lock every thread would count zero.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from firstfault.actions.actor import Actor
from firstfault.actions.policy import Inventory, NodeState, Policy
from firstfault.store import VerdictStore
from firstfault.store.actions import ActionLedger
from tests.store.contract import scenario
from tests.store.pg_harness import PgServer, shared_server


class Fleet:
    """20 idle nodes in one partition; remembers what it was asked to drain."""

    kind = "drain"
    group_word = "partition"

    def __init__(self) -> None:
        self.drained: list[str] = []
        self._lock = threading.Lock()

    def inventory(self) -> Inventory:
        with self._lock:
            return Inventory({f"n{i:02d}": NodeState(f"n{i:02d}", ("p",), f"n{i:02d}" in self.drained,
                                                     f"n{i:02d}" in self.drained, "idle") for i in range(20)})

    def command(self, node: str, reason: str, category: str) -> str:
        return f"drain {node}"

    def act(self, node: str, reason: str, category: str, verdict_id: int) -> str:
        time.sleep(0.2)
        with self._lock:
            self.drained.append(node)
        return f"drained {node}"


def _race(url: str) -> tuple[Fleet, list[str]]:
    base = scenario("hw-nvlink-xid149-showcase")
    assert base.root_cause is not None
    with VerdictStore.open(url) as s:
        ids = []
        for i in range(8):
            rc = base.root_cause.model_copy(update={"nodes": [f"n{i:02d}"]})
            wl = base.workload.model_copy(update={"id": f"job-{i}"})
            ids.append((s.write(base.model_copy(update={"root_cause": rc, "workload": wl})),
                        base.model_copy(update={"root_cause": rc, "workload": wl})))
    fleet = Fleet()
    outcomes: list[str] = []
    start = threading.Barrier(len(ids))

    def one(vid: int, v: object) -> None:
        with VerdictStore.open(url) as store:
            actor = Actor(fleet, Policy(max_per_hour=3, max_share=1.0, dry_run=False), store=store, cluster="c")
            start.wait()
            outcomes.extend(r.outcome for r in actor.act(v, vid))  # type: ignore[arg-type]

    threads = [threading.Thread(target=one, args=x) for x in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return fleet, outcomes


def _check(url: str) -> None:
    fleet, outcomes = _race(url)
    assert sorted(outcomes) == ["done"] * 3 + ["refused"] * 5
    assert len(fleet.drained) == 3
    with VerdictStore.open(url) as s:
        recs = [r for vid in range(1, 9) for r in ActionLedger(s).for_verdict(vid)]
    assert sorted(r.outcome for r in recs) == sorted(outcomes)
    assert {r.detail for r in recs if r.outcome == "refused"} == {
        "rate limit: 3 drain(s) in the last hour on this cluster (max_per_hour 3)"}


def test_sqlite_lets_three_of_eight_act(tmp_path: Path) -> None:
    _check(f"sqlite:///{tmp_path / 'v.db'}")


@pytest.fixture
def pg_url() -> Iterator[str]:
    server: PgServer | None = shared_server()
    if server is None:
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) are not installed")
    name = server.create_database()
    yield server.url(name)
    server.drop_database(name)


@pytest.mark.integration
def test_postgresql_lets_three_of_eight_act(pg_url: str) -> None:
    _check(pg_url)
