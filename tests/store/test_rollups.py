"""The fleet rollups (store/rollups.py, revision 0003_rollup) stay equal to what the fleet tables say.

The invariant every test checks: the four rollup tables hold exactly the
sums a fresh roll-up of the stored verdicts' fleet_hits / fleet_exposure rows
gives (fleet_keys may keep keys of deleted verdicts: it is never pruned),
after plain writes, a rewrite of the same attempt (no double count), a
refused conflicting write, concurrent writers on the real PostgreSQL
(several threads, the same keys in different orders: no lost increment, no
deadlock), retention's prune (cut mid-day), a deletion out of failure-time
order (the `last` of a group recomputed), and the migration's build of the
rollups for verdicts stored before it. SQLite and the real PostgreSQL of the
suite (tests/store/pg_harness.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import delete, select

from firstfault import records
from firstfault.model import Enrichment, Verdict, Window, iso
from firstfault.store import VerdictStore, rollups
from firstfault.store import db as store_db
from firstfault.store import schema as t
from firstfault.store.db import WRITE
from firstfault.store.repo import StoreConflict
from firstfault.store.retention import prune
from tests.store.contract import scenario
from tests.store.pg_harness import fresh_database, store_url

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)]
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with store_url(request.param, tmp_path) as u:
        yield u


@pytest.fixture
def store(url: str) -> Iterator[VerdictStore]:
    s = VerdictStore.open(url)
    try:
        yield s
    finally:
        s.close()


def failing(v: Verdict, wid: str, failed_at: datetime, nodes: list[str] | None = None) -> Verdict:
    wl = records.replace(v.workload, **{"id": wid, "window": Window(start=iso(failed_at - timedelta(hours=1)),
                                                                    end=iso(failed_at)),
                                       **({"nodes": nodes} if nodes else {})})
    return records.replace(v, workload=wl, analyzed_at=iso(failed_at + timedelta(minutes=5)))


def snapshot(store: VerdictStore) -> dict[str, list[tuple[Any, ...]]]:
    with store.engine.connect() as conn:
        return {tb.name: sorted((tuple(r) for r in conn.execute(select(tb))), key=repr) for tb in t.ROLLUP_TABLES}


def expected(store: VerdictStore) -> dict[str, list[tuple[Any, ...]]]:
    """The rollups a fresh roll-up of every stored verdict's fleet rows gives (table-shaped, sorted)."""
    with store.engine.connect() as conn:
        ids = [int(i) for i in conn.execute(select(t.verdicts.c.id)).scalars()]
        d = rollups.of_verdicts(conn, ids)
    return {
        "fleet_keys": sorted(d.keys, key=repr),
        "fleet_day_verdicts": sorted(((*k, v[0], v[1]) for k, v in d.day_verdicts.items()), key=repr),
        "fleet_day_keys": sorted(((*k, v[0], v[1]) for k, v in d.day_keys.items()), key=repr),
        "fleet_day_hits": sorted(((*k, n, last) for k, (n, last) in d.day_hits.items()), key=repr),
        "fleet_key_blocks": key_blocks(d.day_keys),
    }


def key_blocks(day_keys: dict[tuple[str, str, int, str], list[int]]) -> list[tuple[Any, ...]]:
    """fleet_key_blocks as its definition says: per kind, block of 63 days, key and cluster, bit d of `seen` for
    each day block*63+d with a fleet_day_keys row, of `jobs` for each such day with jobs."""
    out: dict[tuple[str, int, str, str], list[int]] = {}
    for (kind, key, day, cluster), (_hits, jobs) in day_keys.items():
        b = out.setdefault((kind, day // 63, key, cluster), [0, 0])
        b[0] += 2 ** (day % 63)
        b[1] += 2 ** (day % 63) if jobs > 0 else 0
    return sorted(((*k, v[0], v[1]) for k, v in out.items()), key=repr)


def assert_consistent(store: VerdictStore, *, pruned: bool = False) -> dict[str, list[tuple[Any, ...]]]:
    got, want = snapshot(store), expected(store)
    for name in ("fleet_day_verdicts", "fleet_day_keys", "fleet_day_hits", "fleet_key_blocks"):
        assert got[name] == want[name], name
    if pruned:  # keys of deleted verdicts may stay (never pruned); every live key is there
        assert set(want["fleet_keys"]) <= set(got["fleet_keys"])
    else:
        assert got["fleet_keys"] == want["fleet_keys"]
    return got


def spread(store: VerdictStore, n: int = 24) -> list[int]:
    """Hardware, network, ambiguous and healthy verdicts over ten days, at every hour, in three clusters."""
    kinds = [scenario(b) for b in ("hw-nvlink-xid149-showcase", "net-ib-port-down-mlx5", "hw-nvswitch-sxid-fatal",
                                   "amb-example", "ok-completed-nccl-noise")]
    ids = []
    for i in range(n):
        v = kinds[i % len(kinds)]
        at = NOW - timedelta(days=(i * 7) % 10, hours=(i * 5) % 24, minutes=i)
        ids.append(store.write(failing(v, f"spread-{i}", at), Enrichment(cluster=["a", "b", "c"][i % 3])))
    return ids


def _to_revision(engine: Any, revision: str, *, down: bool = False) -> None:
    """Move the store's schema to `revision` (alembic, in one write transaction)."""
    cfg = store_db._config()
    with engine.connect().execution_options(**store_db.WRITE) as conn, conn.begin():
        cfg.attributes["connection"] = conn
        (command.downgrade if down else command.upgrade)(cfg, revision)


@pytest.mark.parametrize(("lo", "hi", "want"), [
    (0, 0, []),
    (63 * 5, 63 * 5 + 1, [(5, 1)]),
    (63 * 5 + 2, 63 * 5 + 5, [(5, 0b11100)]),
    (63 * 5 + 60, 63 * 6 + 2, [(5, 0b111 << 60), (6, 0b11)]),  # across a boundary
    (63 * 5, 63 * 7, [(5, 2 ** 63 - 1), (6, 2 ** 63 - 1)]),  # two whole blocks: every bit below the sign bit
])
def test_day_masks(lo: int, hi: int, want: list[tuple[int, int]]) -> None:
    assert rollups.day_masks(lo, hi) == want


def test_writes_roll_up_what_the_fleet_tables_hold(store: VerdictStore) -> None:
    spread(store)
    got = assert_consistent(store)
    assert got["fleet_day_hits"] and got["fleet_day_keys"] and got["fleet_day_verdicts"]
    # Repeats on one day and node add up in one row (that is what makes a window a few rows a day).
    assert max(r[-2] for r in got["fleet_day_hits"]) > 1 or max(r[3] for r in got["fleet_day_verdicts"]) > 1


def test_a_rewrite_of_the_same_attempt_does_not_count_twice(store: VerdictStore) -> None:
    xid = scenario("hw-nvlink-xid149-showcase")
    v = failing(xid, "again", NOW - timedelta(hours=3))
    first = store.write(v, Enrichment(cluster="a"))
    before = assert_consistent(store)
    assert store.write(v, Enrichment(cluster="a")) == first  # idempotent: the stored id, nothing added
    other_window = failing(xid, "again", NOW - timedelta(hours=9))
    with pytest.raises(StoreConflict):
        store.write(other_window, Enrichment(cluster="a"))
    assert snapshot(store) == before
    dv = {(r[0], r[1]): r[3] for r in before["fleet_day_verdicts"]}
    assert sum(dv.values()) == 1


def test_prune_takes_the_deleted_verdicts_out(store: VerdictStore) -> None:
    spread(store, 30)
    before = snapshot(store)
    cutoff = NOW - timedelta(days=5, hours=7)  # mid-day: the cut day's rows are decremented, not dropped
    res = prune(store, cutoff, batch=4)
    assert res.deleted > 0 and res.batches > 1
    after = assert_consistent(store, pruned=True)
    assert after["fleet_day_verdicts"] != before["fleet_day_verdicts"]
    cut_day = (cutoff - datetime(1970, 1, 1, tzinfo=UTC)).days
    assert all(r[0] >= cut_day for r in after["fleet_day_verdicts"])
    prune(store, NOW + timedelta(days=1))  # everything: nothing but the keys left
    empty = assert_consistent(store, pruned=True)
    assert not empty["fleet_day_verdicts"] and not empty["fleet_day_keys"] and not empty["fleet_day_hits"]


def test_a_deletion_out_of_order_recomputes_the_latest_failure(store: VerdictStore) -> None:
    xid = scenario("hw-nvlink-xid149-showcase")
    day = NOW.replace(hour=0)
    early = store.write(failing(xid, "early", day + timedelta(hours=2)), Enrichment(cluster="a"))
    late = store.write(failing(xid, "late", day + timedelta(hours=9)), Enrichment(cluster="a"))
    with store.engine.connect() as conn:
        lasts = set(conn.execute(select(t.fleet_day_hits.c.last)).scalars())
    assert lasts == {day + timedelta(hours=9)}
    with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():  # delete the newest one
        taken = rollups.remove(conn, [late])
        conn.execute(delete(t.verdicts).where(t.verdicts.c.id == late))
        rollups.fix_last(conn, taken)
    assert_consistent(store, pruned=True)
    with store.engine.connect() as conn:
        assert set(conn.execute(select(t.fleet_day_hits.c.last)).scalars()) == {day + timedelta(hours=2)}
    assert early


@pytest.mark.integration
def test_concurrent_writers_lose_no_increment_and_do_not_deadlock() -> None:
    with fresh_database() as url, VerdictStore.open(url) as store:
        v = scenario("hw-nvlink-xid149-showcase")
        nodes = sorted({*v.workload.nodes, "n-a", "n-b", "n-c", "n-d"})
        errors: list[BaseException] = []
        start = threading.Barrier(6)

        def writer(w: int) -> None:
            try:
                start.wait()
                for i in range(12):
                    # The same day, cluster and keys for every writer, node lists in opposite orders.
                    order = nodes if (w + i) % 2 else list(reversed(nodes))
                    store.write(failing(v, f"w{w}-{i}", NOW - timedelta(minutes=w * 12 + i), order),
                                Enrichment(cluster="a"))
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(6)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(120)
        assert not errors, errors
        got = assert_consistent(store)
        assert sum(r[3] for r in got["fleet_day_verdicts"]) == 72
        jobs = {r[1]: r[5] for r in got["fleet_day_keys"] if r[0] == "node"}
        assert jobs["n-a"] == 72  # every writer's every job on n-a counted once


@pytest.mark.integration
def test_a_prune_keeps_the_day_bit_of_a_writer_it_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """A prune rebuilds the key blocks it touched; a writer of the same blocks, its transaction still open,
    must not lose its new day's bit to a mask the prune read before the writer committed."""
    from firstfault.store.fleetrows import EPOCH, day_number

    with fresh_database() as url, VerdictStore.open(url) as store:
        v = scenario("hw-nvlink-xid149-showcase")
        base = day_number(NOW) // rollups.BLOCK_DAYS * rollups.BLOCK_DAYS  # two days of NOW's block
        old_at, new_at = EPOCH + timedelta(days=base + 1, hours=12), EPOCH + timedelta(days=base + 5, hours=12)
        assert rollups.block_of(day_number(old_at))[0] == rollups.block_of(day_number(new_at))[0]
        store.write(failing(v, "old", old_at, ["n-race"]), Enrichment(cluster="a"))

        applied, go = threading.Event(), threading.Event()
        real_apply = rollups.apply

        def held_apply(conn: Any, d: rollups.Deltas, sign: int = 1, *, blocks: bool = True) -> None:
            real_apply(conn, d, sign, blocks=blocks)
            if sign == 1 and threading.current_thread().name == "writer":
                applied.set()
                assert go.wait(30)  # the writer's rows (its block rows too) stay locked, uncommitted

        monkeypatch.setattr(rollups, "apply", held_apply)
        errors: list[BaseException] = []

        def run(fn: Any) -> None:
            try:
                fn()
            except BaseException as e:
                errors.append(e)

        writer = threading.Thread(name="writer", target=run, args=(
            lambda: store.write(failing(v, "new", new_at, ["n-race"]), Enrichment(cluster="a")),))
        writer.start()
        assert applied.wait(30)
        pruner = threading.Thread(target=run, args=(lambda: prune(store, old_at + timedelta(hours=1)),))
        pruner.start()
        pruner.join(1.5)  # the prune reaches the writer's locked rows and waits there
        go.set()
        writer.join(30)
        pruner.join(30)
        assert not errors, errors
        got = assert_consistent(store, pruned=True)  # fleet_key_blocks as its definition says
        race = [r for r in got["fleet_key_blocks"] if r[0] == "node" and r[2] == "n-race"]
        assert race and race[0][4] == 2 ** (day_number(new_at) % rollups.BLOCK_DAYS)


def test_migration_0003_builds_the_rollups_of_verdicts_stored_before_it(url: str) -> None:
    with VerdictStore.open(url) as store:
        spread(store, 20)
        written = assert_consistent(store)
    engine = store_db.create_store_engine(url)
    try:
        _to_revision(engine, "0002_actions", down=True)
        assert store_db.current_revision(engine) == "0002_actions"
        from sqlalchemy import inspect

        assert not set(inspect(engine).get_table_names()) & {tb.name for tb in t.ROLLUP_TABLES}
        store_db.migrate(engine)
        assert store_db.current_revision(engine) == store_db.head_revision()
        assert snapshot(VerdictStore(engine)) == written
    finally:
        engine.dispose()


def test_a_store_at_0003_is_written_without_key_blocks_and_0004_builds_them(url: str) -> None:
    """Verdicts written to a store at 0003 (opened without migrating) and pruned there; then 0004 builds
    fleet_key_blocks from fleet_day_keys: what the write path would have written."""
    from firstfault.store.retention import prune

    engine = store_db.create_store_engine(url)
    try:
        _to_revision(engine, "0003_rollup")
        old = VerdictStore(engine)
        spread(old, 20)
        prune(old, NOW - timedelta(days=6), batch=3)
        with engine.connect() as conn:
            assert not rollups.has_blocks(conn)
        store_db.migrate(engine)
        assert store_db.current_revision(engine) == store_db.head_revision()
        got = assert_consistent(VerdictStore(engine), pruned=True)
        assert any(r[5] for r in got["fleet_key_blocks"]) and any(not r[5] for r in got["fleet_key_blocks"])
    finally:
        engine.dispose()


def test_a_store_not_yet_at_0003_is_written_and_read_without_rollups_then_rolled_up(url: str) -> None:
    from datetime import timedelta as td

    from firstfault.dashboard.fleet import buckets_for, count_rows
    from firstfault.dashboard.fleetsql import fleet_counts
    from firstfault.dashboard.queries import fleet_rows

    engine = store_db.create_store_engine(url)
    try:
        _to_revision(engine, "0002_actions")  # a store the Blueprint has not upgraded yet
        old = VerdictStore(engine)  # opened without migrating, as `firstfault fleet` does
        spread(old, 10)
        since, until = NOW - td(days=7), NOW
        size, starts = buckets_for(since, until)
        domains = ["hardware", "network", "infrastructure"]
        ref = count_rows(fleet_rows(engine, since, until), domains, starts, size, 20)
        assert fleet_counts(engine, since, until, domains, 20) == ref  # the reference reading, no rollups read
        store_db.migrate(engine)  # the migration rolls up what was written before it
        assert_consistent(VerdictStore(engine))
        assert fleet_counts(engine, since, until, domains, 20) == ref
    finally:
        engine.dispose()
