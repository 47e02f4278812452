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

from firstfault import records
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
            rc = records.replace(base.root_cause, nodes=[f"n{i:02d}"])
            wl = records.replace(base.workload, id=f"job-{i}", nodes=[f"n{i:02d}"])
            ids.append((s.write(records.replace(base, root_cause=rc, workload=wl)),
                        records.replace(base, root_cause=rc, workload=wl)))
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


class SlowFleet(Fleet):
    """A fleet whose node states and drains take their time (a slow slurmctld): each says when it starts and runs
    until the test lets it finish (at most 30 s), so the other writer's write always falls inside the command, however
    slowly a loaded machine writes."""

    def __init__(self) -> None:
        super().__init__()
        self.reading, self.acting = threading.Event(), threading.Event()
        self.read_done, self.act_done = threading.Event(), threading.Event()

    def inventory(self) -> Inventory:
        self.reading.set()
        self.read_done.wait(30)
        return super().inventory()

    def act(self, node: str, reason: str, category: str, verdict_id: int) -> str:
        self.acting.set()
        self.act_done.wait(30)
        return super().act(node, reason, category, verdict_id)


def test_no_command_runs_inside_the_write_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26, item 4: sinfo and scontrol ran inside the ledger's write transaction, so SQLite's write lock was
    held while they ran, and a concurrent `run` storing its verdict failed with "database is locked" (its verdict
    lost). With a busy timeout far shorter than the commands, the other writer must get through while each runs."""
    from firstfault.store import db

    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 300)
    url = f"sqlite:///{tmp_path / 'v.db'}"
    base = scenario("hw-nvlink-xid149-showcase")
    assert base.root_cause is not None
    v = records.replace(base, root_cause=records.replace(base.root_cause, nodes=["n00"]),
                        workload=records.replace(base.workload, nodes=["n00", "n01"]))
    with VerdictStore.open(url) as s:
        vid = s.write(v)
    fleet = SlowFleet()
    done: list[str] = []

    def act() -> None:
        with VerdictStore.open(url) as store:
            done.extend(r.outcome for r in Actor(fleet, Policy(max_per_hour=3, max_share=1.0, dry_run=False),
                                                 store=store, cluster="c").act(v, vid))

    stored = []
    # The other writer's store is opened (its schema checked) before the worker opens its own: two opens at once race
    # for the lock this test shortens, which is not what it tests.
    # Each command runs until the other writer's write has returned (or failed): a command run inside the write
    # transaction would hold the lock past the 300 ms busy timeout and fail that write.
    with VerdictStore.open(url) as other:
        worker = threading.Thread(target=act)
        worker.start()
        for started, finish, job in ((fleet.reading, fleet.read_done, "other-1"),
                                     (fleet.acting, fleet.act_done, "other-2")):
            assert started.wait(30)
            try:
                stored.append(other.write(records.replace(base, workload=records.replace(base.workload, id=job))))
            finally:
                finish.set()
    worker.join(60)
    assert done == ["done"] and fleet.drained == ["n00"]
    assert len(stored) == 2
    with VerdictStore.open(url) as s:
        (rec,) = ActionLedger(s).for_verdict(vid)
    assert (rec.outcome, rec.target, rec.detail) == ("done", "n00", "drained n00")


def test_a_run_of_the_same_verdict_while_its_claim_is_open_does_not_act_again(tmp_path: Path) -> None:
    """Near miss of the above: the claim is committed before the command runs, so a second run of the same verdict
    (the epilog and `watch` at once) sees it and does not drain the node a second time."""
    url = f"sqlite:///{tmp_path / 'v.db'}"
    base = scenario("hw-nvlink-xid149-showcase")
    assert base.root_cause is not None
    v = records.replace(base, root_cause=records.replace(base.root_cause, nodes=["n00"]),
                        workload=records.replace(base.workload, nodes=["n00"]))
    with VerdictStore.open(url) as s:
        vid = s.write(v)
    fleet = SlowFleet()
    first: list[str] = []
    policy = Policy(max_per_hour=3, max_share=1.0, dry_run=False)

    def act() -> None:
        with VerdictStore.open(url) as store:
            first.extend(r.outcome for r in Actor(fleet, policy, store=store, cluster="c").act(v, vid))

    fleet.read_done.set()  # the node states answer at once; the drain runs until the second run has looked
    worker = threading.Thread(target=act)
    worker.start()
    assert fleet.acting.wait(30)
    try:
        with VerdictStore.open(url) as store:
            (again,) = Actor(fleet, policy, store=store, cluster="c").act(v, vid)
    finally:
        fleet.act_done.set()
    worker.join(60)
    # the open claim: the first run's drain had not answered when the second run looked
    assert (again.outcome, again.target) == ("pending", "n00")
    assert first == ["done"] and fleet.drained == ["n00"]
    with VerdictStore.open(url) as s:
        assert [r.id for r in ActionLedger(s).for_verdict(vid)] == [again.id]
