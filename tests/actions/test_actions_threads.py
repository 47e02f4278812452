"""The hourly limit with several threads on one store: what `watch --concurrency N` does with its actions.

The watch daemon shares one VerdictStore (one engine, pooled connections) between its threads, and
its actions decide against it. Eight threads act at once on eight stored hardware verdicts naming
the actions Slurm's one node (tests/actions/conftest.py: real sinfo, real slurmctld) under a limit
of three an hour: the ledger's lock (BEGIN IMMEDIATE on SQLite, an advisory lock on PostgreSQL)
must let exactly three through, whichever threads win.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from firstfault.actions.actor import Actor
from firstfault.actions.policy import Policy
from firstfault.actions.slurm import SlurmDrain
from firstfault.model import Enrichment
from firstfault.store import VerdictStore
from firstfault.store.actions import ActionLedger, ActionRecord
from tests.actions.conftest import NODE, Verdicts, node_state
from tests.harness.slurm_harness import SlurmCluster
from tests.store.pg_harness import store_url

pytestmark = pytest.mark.integration
THREADS = 8


@pytest.fixture(autouse=True)
def _slurm_conf(action_slurm: SlurmCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_CONF", str(action_slurm.conf))


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VerdictStore]:
    with store_url(request.param, tmp_path, required=True) as url, VerdictStore.open(url) as s:
        yield s


def test_eight_threads_on_one_store_keep_the_hourly_limit(idle_node: SlurmCluster, store: VerdictStore,
                                                         verdicts: Verdicts) -> None:
    vs = [verdicts.hardware(f"hw-{i}") for i in range(THREADS)]
    ids = [store.write(v, Enrichment(cluster="ffact")) for v in vs]
    actor = Actor(SlurmDrain(timeout=15), Policy(max_per_hour=3, max_share=1.0, dry_run=True), store=store,
                  cluster="ffact")
    start = threading.Barrier(THREADS)

    def act(i: int) -> list[ActionRecord]:
        start.wait(30)  # all at once
        return actor.act(vs[i], ids[i])

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        decided = list(pool.map(act, range(THREADS)))
    assert all(len(rs) == 1 for rs in decided)
    assert Counter(rs[0].outcome for rs in decided) == {"dry_run": 3, "refused": 5}
    for i, vid in enumerate(ids):  # each verdict's one decision is in the ledger, as returned
        assert [(r.outcome, r.target) for r in ActionLedger(store).for_verdict(vid)] == [
            (decided[i][0].outcome, NODE)]
    assert node_state(idle_node)[0] == "idle"  # a dry run changes nothing
