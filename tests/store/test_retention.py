"""Retention (store/retention.py, `firstfault store prune`) on SQLite and the real PostgreSQL of the suite.

What goes: exactly the verdicts whose attempt failed before the cutoff, with
their child and fleet rows; what stays: the newer verdicts, whole, and the
daemon's ledger marks (verdict id cleared). Writers keep writing while a
prune runs: their commits land between its batches.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from firstfault import records
from firstfault.cli import app
from firstfault.model import Enrichment, Verdict, Window, iso
from firstfault.store import ProcessedMark, VerdictStore
from firstfault.store import schema as t
from firstfault.store.retention import count_older, prune
from tests.store.contract import scenario
from tests.store.pg_harness import store_url

NOW = datetime.now(UTC).replace(microsecond=0)
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)]


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with store_url(request.param, tmp_path) as u:
        yield u


def failed(v: Verdict, wid: str, days_ago: float) -> Verdict:
    end = NOW - timedelta(days=days_ago)
    wl = records.replace(v.workload, id=wid, window=Window(start=iso(end - timedelta(hours=1)),
                                                                    end=iso(end)))
    return records.replace(v, workload=wl, analyzed_at=iso(NOW))  # all analysed today: a back-fill


def _count(store: VerdictStore, table: str, ids: list[int]) -> int:
    tb = t.metadata.tables[table]
    with store.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(tb).where(tb.c.verdict_id.in_(ids))).scalar_one())


def test_prune_drops_exactly_the_old_verdicts_with_their_rows(url: str) -> None:
    base = scenario("net-ib-port-down-mlx5")
    with VerdictStore.open(url) as store:
        old = [store.write(failed(base, f"old-{i}", 100 + i), Enrichment(cluster="a"),
                           mark=ProcessedMark("slurm", f"old-{i}", 0)) for i in range(7)]
        new = [store.write(failed(base, f"new-{i}", 80 - i), Enrichment(cluster="a")) for i in range(5)]
        assert all(_count(store, tb, old) > 0 for tb in ("causes", "evidence", "fleet_hits", "fleet_exposure"))
        cutoff = NOW - timedelta(days=90)
        assert count_older(store, cutoff) == 7
        batches: list[int] = []
        res = prune(store, cutoff, batch=3, on_batch=batches.append)
        assert (res.deleted, res.batches, batches) == (7, 3, [3, 3, 1])
        assert all(store.get(i) is None for i in old)
        assert all(store.get(i) is not None for i in new)
        for tb in ("causes", "evidence", "symptoms", "coverage", "affected_nodes", "fleet_hits", "fleet_exposure"):
            assert _count(store, tb, old) == 0, tb
            assert tb in ("affected_nodes",) or _count(store, tb, new) > 0, tb
        # The ledger keeps the attempts: the daemon will not attribute them again.
        assert store.is_processed("slurm", "old-0", 0)
        with store.engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(t.processed)
                                .where(t.processed.c.verdict_id.is_not(None))).scalar_one() == 0
        assert prune(store, cutoff).deleted == 0  # nothing left to do


def test_writers_keep_writing_while_a_prune_runs(url: str) -> None:
    base = scenario("sw-cuda-oom-rank3")
    events: list[str] = []
    lock = threading.Lock()
    with VerdictStore.open(url) as store:
        for i in range(60):
            store.write(failed(base, f"old-{i}", 200))
        stop = threading.Event()
        errors: list[BaseException] = []

        wrote = threading.Condition(lock)

        def writer() -> None:
            i = 0
            try:
                while not stop.is_set():
                    store.write(failed(base, f"live-{i}", 0.01))
                    with wrote:
                        events.append("write")
                        wrote.notify_all()
                    i += 1
            except BaseException as e:
                errors.append(e)

        def batch_done(_n: int) -> None:
            # After a committed batch, a writer must get through before the next one. Waiting for
            # it (not a sleep) keeps the proof independent of the machine's load: a prune that held
            # the database between batches would time out here.
            with wrote:
                events.append("prune")
                if events.count("prune") <= 3:
                    seen = events.count("write")
                    assert wrote.wait_for(lambda: events.count("write") > seen, timeout=30)

        th = threading.Thread(target=writer)
        th.start()
        try:
            res = prune(store, NOW - timedelta(days=90), batch=5, pause=0.02, on_batch=batch_done)
        finally:
            stop.set()
            th.join(30)
        assert not errors
        assert res.deleted == 60 and res.batches == 12
        first, last = events.index("prune"), len(events) - 1 - events[::-1].index("prune")
        assert "write" in events[first:last]  # writes committed between the prune's batches
        live = events.count("write")
        with store.engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(t.verdicts)).scalar_one() == live


def test_the_prune_command(url: str) -> None:
    base = scenario("sw-cuda-oom-rank3")
    with VerdictStore.open(url) as store:
        for i in range(4):
            store.write(failed(base, f"w-{i}", [5, 40, 95, 120][i]))
    runner = CliRunner()
    dry = runner.invoke(app, ["store", "prune", "--db", url, "--older-than", "30d", "--dry-run"])
    assert dry.exit_code == 0 and "would prune 3 verdict(s)" in dry.output
    res = runner.invoke(app, ["store", "prune", "--db", url, "--older-than", "13w", "--batch", "1"])
    assert res.exit_code == 0, res.output
    assert "pruned 2 verdict(s)" in res.output and "in 2 batch(es)" in res.output
    bad = runner.invoke(app, ["store", "prune", "--db", url, "--older-than", "90 days"])
    assert bad.exit_code == 2 and "not an age" in bad.output
    with VerdictStore.open(url) as store:
        assert count_older(store, NOW - timedelta(days=1)) == 2  # 5 and 40 days ago stay
        assert count_older(store, NOW - timedelta(days=30)) == 1
