"""The verdict store's behaviour, as test functions every backend runs.

test_sqlite.TestSqliteStore and test_postgres.TestPostgresStore inherit
StoreContract and provide the `url` fixture (a fresh, empty database per
test), so SQLite and a real PostgreSQL run exactly these functions.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import event, func, inspect, select, text

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.model import Enrichment, Verdict
from firstfault.store import ProcessedMark, StoreError, VerdictStore, create_store_engine, migrate
from firstfault.store import schema as t
from firstfault.store.db import current_revision, head_revision

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
BUNDLES = (
    "hw-nvlink-xid149-showcase",  # hardware, one GPU
    "net-ib-port-down-mlx5",  # network, HCA port + netdev
    "hw-nvswitch-sxid-fatal",  # NVSwitch link from SXid and Fabric Manager
    "amb-example",  # ambiguous: two candidates
    "sw-cuda-oom-rank3",  # software
    "unk-watchdog-only",  # unknown: no cause
    "ok-completed-nccl-noise",  # none
    "bad-encoding-cuda-oom",  # carries a read error
)


@cache
def _scenario_json() -> dict[str, str]:
    analyzer = Analyzer()
    return {name: records.dumps(analyzer.analyze_path(str(SCENARIOS / name))) for name in BUNDLES}


def scenario_json(name: str) -> str:
    """A scenario's verdict as records.dumps writes it (analysed once a process)."""
    return _scenario_json()[name]


def scenario(name: str, **workload: Any) -> Verdict:
    """A scenario's verdict (a fresh copy), with workload fields overridden."""
    v = records.decode(scenario_json(name), Verdict)
    if workload:
        v = records.replace(v, workload=records.replace(v.workload, **workload))
    return v


def at(v: Verdict, when: datetime) -> Verdict:
    return records.replace(v, analyzed_at=when.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))


def _count(url: str) -> int:
    """How many verdicts are committed (a plain read; no migration, no check)."""
    engine = create_store_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(t.verdicts)).scalar_one())
    finally:
        engine.dispose()


def assert_whole(url: str) -> int:
    """Open the store and check every verdict row is whole; returns the number of verdicts.

    Whole: its child rows say exactly what its verdict_json says (compared
    field by field against the document, not against the writer's code), no
    child row lacks its verdict, and every processed mark names a verdict.
    """
    store = VerdictStore.open(url)
    try:
        # One snapshot for the whole check: a killed client's COMMIT may still land
        # on the PostgreSQL server while we read (the server finishes what it was sent).
        # (SQLite in WAL mode: our BEGIN already reads one snapshot.)
        snapshot = {"isolation_level": "REPEATABLE READ"} if store.engine.dialect.name == "postgresql" else {}
        with store.engine.connect().execution_options(**snapshot) as conn:
            if conn.dialect.name == "sqlite":
                assert conn.exec_driver_sql("PRAGMA integrity_check").scalar_one() == "ok"
            docs = dict(conn.execute(select(t.verdicts.c.id, t.verdicts.c.verdict_json)).all())
            totals = {"causes": 0, "affected_nodes": 0, "devices": 0, "symptoms": 0, "evidence": 0,
                      "coverage": 0, "errors": 0}
            for vid, doc in docs.items():
                v = records.decode(doc, Verdict)

                def rows(table: Any, *cols: str, vid: int = vid) -> list[tuple[Any, ...]]:
                    q = select(*(table.c[c] for c in cols)).where(table.c.verdict_id == vid).order_by(table.c.id)
                    return [tuple(r) for r in conn.execute(q)]

                causes = ([v.root_cause] if v.root_cause else []) + v.candidates + v.secondary_causes
                assert [r[0] for r in rows(t.causes, "category")] == [c.category for c in causes]
                assert sorted(r[0] for r in rows(t.affected_nodes, "node")) == sorted(set(v.affected_nodes))
                assert sorted(r[0] for r in rows(t.devices, "device")) == sorted(
                    d for c in causes for d in dict.fromkeys(c.devices))
                assert rows(t.symptoms, "category", "count") == [(s.category, s.count) for s in v.symptoms]
                assert rows(t.evidence, "file", "line", "text") == [(e.file, e.line, e.text) for e in v.evidence]
                assert rows(t.coverage, "source", "status", "lines") == [
                    (c.source, c.status, c.lines) for c in v.coverage]
                assert rows(t.errors, "source", "message") == [(e.source, e.message) for e in v.errors]
                totals["causes"] += len(causes)
                totals["affected_nodes"] += len(set(v.affected_nodes))
                totals["devices"] += sum(len(set(c.devices)) for c in causes)
                totals["symptoms"] += len(v.symptoms)
                totals["evidence"] += len(v.evidence)
                totals["coverage"] += len(v.coverage)
                totals["errors"] += len(v.errors)
            for name, n in totals.items():
                got = conn.execute(select(func.count()).select_from(t.metadata.tables[name])).scalar_one()
                assert got == n, f"{name}: {got} rows, the documents account for {n}"
            marks = conn.execute(select(t.processed.c.verdict_id)).scalars().all()
            assert all(m in docs for m in marks), "a processed mark names a missing verdict"
        return len(docs)
    finally:
        store.close()


# The kill -9 child: writes distinct verdicts (each with its processed mark) until killed.
CHILD = r"""
import sys
from firstfault import records
from firstfault.model import Verdict
from firstfault.store import ProcessedMark, VerdictStore

url, docs_path, run = sys.argv[1], sys.argv[2], sys.argv[3]
docs = [records.decode(line, Verdict) for line in open(docs_path)]
store = VerdictStore.open(url)
print("ready", flush=True)
i = 0
while True:
    v = docs[i % len(docs)]
    ref = f"kill-{run}-{i}"
    v = records.replace(v, workload=records.replace(v.workload, id=ref))
    store.write(v, mark=ProcessedMark("test", ref, 0))
    i += 1
"""


class StoreContract:
    @pytest.fixture
    def store(self, url: str) -> Any:
        s = VerdictStore.open(url)
        yield s
        s.close()

    def test_round_trip_scenario_verdicts(self, store: VerdictStore, url: str) -> None:
        enr = Enrichment(cluster="eos", links={"job": "https://slurm.example/job/4242"}, owner="alice",
                         previous_attempts=["4242.0"])
        ids = {name: store.write(scenario(name), enr) for name in BUNDLES}
        assert len(set(ids.values())) == len(BUNDLES)
        for name, vid in ids.items():
            got = store.get(vid)
            assert got is not None
            assert records.dumps(got) == records.dumps(scenario(name)), name
            rec = store.get_record(vid)
            assert rec is not None and rec.enrichment == enr and rec.verdict == got
        assert store.get(max(ids.values()) + 1000) is None
        assert assert_whole(url) == len(BUNDLES)
        # The typed columns hold what the document says.
        row = store.list(domain="hardware", category="gpu.nvlink")[0]
        assert (row.workload_id, row.cluster, row.owner, row.root_rule) == ("4242", "eos", "alice",
                                                                           "gpu-nvlink5-netir")
        assert row.first_seen == datetime(2026, 11, 2, 10, 3, 7, tzinfo=UTC)
        assert row.affected_nodes == ("node-02",)

    def test_replay_with_the_same_catalog_changes_nothing(self, store: VerdictStore) -> None:
        """The stored evidence gives back each verdict, byte for byte, on this database."""
        from firstfault.analysis.analyze import analyze_request
        from firstfault.bundle import load_bundle
        from firstfault.engine.loader import shipped_catalog
        from firstfault.replay import capture_bundle, replay, unpack

        analyzer = Analyzer()
        now = datetime.now(UTC) - timedelta(hours=1)
        ids = {}
        for name in BUNDLES:
            v, captured = capture_bundle(analyzer, load_bundle(str(SCENARIOS / name)), now=now)
            ids[name] = store.write(v, Enrichment(cluster="eos"), evidence=captured)
            ev = store.replay_evidence(ids[name])
            assert ev is not None and not ev.truncated and ev.lines_kept == ev.lines_total
            again = analyze_request(analyzer, unpack(ev.codec, ev.data), now=now)
            assert records.dumps(again) == records.dumps(v), name
        report = replay(store, shipped_catalog(), since=now - timedelta(days=7))
        assert (report.replayed, report.changed, report.failed, report.without_evidence) == (len(BUNDLES), [], [], 0)
        # A verdict stored without evidence is counted, not replayed; the window bounds what is read.
        store.write(scenario("sw-cuda-oom-rank3", id="no-evidence"))
        assert replay(store, shipped_catalog()).without_evidence == 1
        assert replay(store, shipped_catalog(), since=datetime.now(UTC) + timedelta(days=1)).replayed == 0

    def test_write_is_idempotent_per_key(self, store: VerdictStore) -> None:
        v = scenario("hw-nvlink-xid149-showcase")
        first = store.write(v, Enrichment(cluster="eos"))
        later = at(v, datetime(2030, 1, 1, tzinfo=UTC))  # re-analysed: same key, other content
        assert store.write(later, Enrichment(cluster="eos", owner="bob")) == first
        assert store.get(first) == v
        rec = store.get_record(first)
        assert rec is not None and rec.enrichment.owner is None
        assert store.count() == 1
        with store.engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(t.evidence)).scalar_one() == len(v.evidence)
        # Each part of the key makes a new verdict: cluster, attempt, catalog.
        other_cluster = store.write(v, Enrichment(cluster="selene"))
        no_cluster = store.write(v)
        assert store.write(v, None) == no_cluster  # None cluster is a key value too, not "always new"
        retry = store.write(scenario("hw-nvlink-xid149-showcase", attempt=1), Enrichment(cluster="eos"))
        cat = records.replace(v, catalog=records.replace(v.catalog, sha256="0" * 64))
        new_catalog = store.write(cat, Enrichment(cluster="eos"))
        assert len({first, other_cluster, no_cluster, retry, new_catalog}) == 5
        assert store.count() == 5

    def test_another_attempt_under_a_stored_key_is_refused_loudly(self, store: VerdictStore) -> None:
        """Same key, other window or node set: not a re-analysis but another attempt; never silently dropped."""
        v = scenario("hw-nvlink-xid149-showcase")
        first = store.write(v, Enrichment(cluster="eos"))
        wl = v.workload
        moved = records.replace(v, workload=records.replace(
            wl, window=records.replace(wl.window, start="2026-11-03T00:00:00Z")))
        fewer = records.replace(v, workload=records.replace(wl, nodes=wl.nodes[:1]))
        for other in (moved, fewer):
            with pytest.raises(StoreError, match=r"stored already .* not stored"):
                store.write(other, Enrichment(cluster="eos"))
        assert store.count() == 1 and store.get(first) == v

    def test_concurrent_writers_of_one_key_get_one_row(self, store: VerdictStore) -> None:
        v = scenario("net-ib-port-down-mlx5")
        ids: list[int] = []
        errors: list[BaseException] = []

        def write() -> None:
            try:
                ids.append(store.write(v, mark=ProcessedMark("slurm", "77120", 0)))
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=write) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert errors == []
        assert len(set(ids)) == 1 and store.count() == 1
        assert store.is_processed("slurm", "77120", 0)

    def test_list_filters_and_order(self, store: VerdictStore) -> None:
        base = datetime(2026, 11, 1, tzinfo=UTC)
        names = ["hw-nvlink-xid149-showcase", "net-ib-port-down-mlx5", "hw-nvswitch-sxid-fatal", "amb-example",
                 "sw-cuda-oom-rank3", "unk-watchdog-only", "ok-completed-nccl-noise"]
        ids = {n: store.write(at(scenario(n), base + timedelta(hours=i))) for i, n in enumerate(names)}

        def listed(**kw: Any) -> list[int]:
            return [s.id for s in store.list(**kw)]

        assert listed() == [ids[n] for n in reversed(names)]  # newest first
        assert listed(limit=2) == [ids["ok-completed-nccl-noise"], ids["unk-watchdog-only"]]
        assert listed(limit=2, offset=5) == [ids["net-ib-port-down-mlx5"], ids["hw-nvlink-xid149-showcase"]]
        assert listed(domain="network") == [ids["net-ib-port-down-mlx5"]]
        assert listed(domain=["hardware", "none"]) == [
            ids["ok-completed-nccl-noise"], ids["hw-nvswitch-sxid-fatal"], ids["hw-nvlink-xid149-showcase"]]
        assert listed(outcome="succeeded") == [ids["ok-completed-nccl-noise"]]
        assert set(listed(outcome="failed")) == set(ids.values()) - {ids["ok-completed-nccl-noise"]}
        # Category prefixes follow the dots; candidates of ambiguous verdicts count.
        assert listed(category="gpu.nvlink") == [ids["amb-example"], ids["hw-nvlink-xid149-showcase"]]
        assert listed(category="gpu.nvlink.signal_integrity") == [ids["hw-nvlink-xid149-showcase"]]
        assert listed(category="gpu.nv") == []
        assert listed(category="gpu") == [ids["amb-example"], ids["hw-nvswitch-sxid-fatal"],
                                          ids["hw-nvlink-xid149-showcase"]]
        assert listed(category="app.cuda_oom") == [ids["sw-cuda-oom-rank3"]]
        assert listed(category="app.cuda%oom") == [] and listed(category="app.cuda_") == []  # no LIKE wildcards
        assert listed(node="node-02") == [ids["amb-example"], ids["hw-nvlink-xid149-showcase"]]
        assert listed(node="dgx-b200-006", domain="network") == [ids["net-ib-port-down-mlx5"]]
        assert listed(node="no-such-node") == []
        assert listed(since=base + timedelta(hours=5)) == [ids["ok-completed-nccl-noise"], ids["unk-watchdog-only"]]
        assert listed(since=base + timedelta(hours=1), until=base + timedelta(hours=3)) == [
            ids["hw-nvswitch-sxid-fatal"], ids["net-ib-port-down-mlx5"]]
        assert store.count(domain="hardware") == 2 and store.count(category="gpu") == 3
        amb = store.list(domain="ambiguous")[0]
        assert amb.root_category is None and len(amb.candidate_categories) == 2
        assert amb.first_seen is not None  # the earliest candidate's
        with pytest.raises(ValueError):
            store.list(limit=-1)

    def test_fleet_counts_nodes_devices_and_ports(self, store: VerdictStore) -> None:
        base = datetime(2026, 11, 1, tzinfo=UTC)
        for i, (name, job) in enumerate([("hw-nvlink-xid149-showcase", "1"), ("hw-nvlink-xid149-showcase", "2"),
                                         ("net-ib-port-down-mlx5", "3"), ("hw-nvswitch-sxid-fatal", "4"),
                                         ("amb-example", "5"), ("unk-watchdog-only", "6")]):
            store.write(at(scenario(name, id=job), base + timedelta(days=i)))
        fleet = store.fleet()
        nodes = {n.key: (n.root, n.candidate) for n in fleet.nodes}
        assert nodes["node-02"] == (2, 1)  # twice the root cause, once an ambiguous candidate
        assert nodes["dgx-b200-006"] == (1, 0) and nodes["dgx-a100-04"] == (1, 0)
        assert fleet.nodes[0].key == "node-02"  # worst first
        devs = {d.key: (d.node, d.root, d.candidate) for d in fleet.devices}
        assert devs["node-02/gpu3"] == ("node-02", 2, 0)
        assert devs["node-02/mlx5_0"] == ("node-02", 0, 1) and devs["node-01/gpu2"] == ("node-01", 0, 1)
        ports = {(p.node, p.key): p.root for p in fleet.ports}
        assert ports[("dgx-b200-006", "mlx5_5:1")] == 1 and ports[("dgx-b200-006", "ibp94s0")] == 1
        assert ports[("dgx-a100-04", "nvswitch2:30")] == 1  # the SXid's "Link 30"
        assert ports[("dgx-a100-04", "nvswitch-phys2:30")] == 1  # Fabric Manager's "physical id 2 port 30"
        assert all(p.root == 0 for p in fleet.ports if p.node == "node-02")  # a GPU fault names no port
        recent = store.fleet(since=base + timedelta(days=1, hours=12))
        assert {n.key: (n.root, n.candidate) for n in recent.nodes}["node-02"] == (0, 1)  # only the candidate
        assert store.fleet(until=base).nodes == []

    def test_cursors(self, store: VerdictStore) -> None:
        assert store.get_cursor("slurm:eos") is None
        store.set_cursor("slurm:eos", "2026-11-02T10:00:00")
        store.set_cursor("kueue:eos", "rv-1")
        store.set_cursor("slurm:eos", "2026-11-02T11:00:00")
        assert store.get_cursor("slurm:eos") == "2026-11-02T11:00:00"
        assert store.get_cursor("kueue:eos") == "rv-1"
        with store.engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(t.cursors)).scalar_one() == 2

    def test_processed_marks(self, store: VerdictStore) -> None:
        assert not store.is_processed("slurm", "4242", 0)
        vid = store.write(scenario("hw-nvlink-xid149-showcase"), mark=ProcessedMark("slurm", "4242", 0))
        assert store.is_processed("slurm", "4242", 0)
        assert not store.is_processed("slurm", "4242", 1) and not store.is_processed("kueue", "4242", 0)
        assert store.mark_processed("slurm", "4242", 0, None) is False  # the first mark stays
        assert store.mark_processed("slurm", "4243", 0) is True  # settled without a verdict
        with store.engine.connect() as conn:
            marks = dict(conn.execute(select(t.processed.c.ref, t.processed.c.verdict_id)).all())
        assert marks == {"4242": vid, "4243": None}

    def test_text_with_nul_survives(self, store: VerdictStore) -> None:
        v = scenario("sw-cuda-oom-rank3")
        ev = records.replace(v.evidence[0], text="garbage\x00in a log line")
        v = records.replace(v, evidence=[ev, *v.evidence[1:]])
        vid = store.write(v)
        got = store.get(vid)
        assert got is not None and got.evidence[0].text == "garbage\x00in a log line"

    def test_migrations_create_then_do_nothing(self, url: str) -> None:
        engine = create_store_engine(url)
        try:
            assert current_revision(engine) is None
            assert not inspect(engine).has_table("verdicts")
            migrate(engine)
            assert current_revision(engine) == head_revision()
            names = set(inspect(engine).get_table_names())
            assert set(t.metadata.tables) | {t.VERSION_TABLE} <= names
            with engine.connect() as conn:  # the migration builds exactly what the models declare
                mc = MigrationContext.configure(conn, opts={"compare_type": True, "version_table": t.VERSION_TABLE})
                assert compare_metadata(mc, t.metadata) == []
            statements: list[str] = []

            @event.listens_for(engine, "before_cursor_execute")
            def record(_c: Any, _cur: Any, statement: str, *_a: Any) -> None:
                statements.append(statement)

            migrate(engine)
            VerdictStore(engine).write(scenario("sw-cuda-oom-rank3"))
            migrate(engine)
            ddl = [s for s in statements if s.lstrip().upper().startswith(("CREATE", "ALTER", "DROP"))]
            assert ddl == []
            with engine.connect() as conn:
                assert conn.execute(text("SELECT count(*) FROM verdicts")).scalar_one() == 1
        finally:
            engine.dispose()

    def test_kill_9_leaves_only_whole_verdicts(self, url: str, tmp_path: Path) -> None:
        docs = tmp_path / "verdicts.jsonl"
        docs.write_text("".join(records.dumps(scenario(n)) + "\n" for n in BUNDLES))
        child = tmp_path / "writer.py"
        child.write_text(CHILD)
        rng = random.Random(9)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        total = 0
        for run in range(5):
            proc = subprocess.Popen([sys.executable, str(child), url, str(docs), str(run)], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                assert proc.stdout is not None
                assert proc.stdout.readline().strip() == "ready", proc.stderr.read() if proc.stderr else ""
                # Killed at a random moment once it has written something (a loaded machine may take a while).
                deadline = time.monotonic() + 20
                while _count(url) <= total and time.monotonic() < deadline and proc.poll() is None:
                    time.sleep(0.05)
                time.sleep(rng.uniform(0.0, 0.5))
                assert proc.poll() is None, "the writer died before it was killed"
                proc.send_signal(signal.SIGKILL)
            finally:
                proc.wait(timeout=30)
                proc.stdout.close() if proc.stdout else None
                proc.stderr.close() if proc.stderr else None
            assert proc.returncode == -signal.SIGKILL
            n = assert_whole(url)
            assert n > total, "the writer wrote nothing between kills"
            total = n
        engine = create_store_engine(url)
        with engine.connect() as conn:
            marks = conn.execute(select(func.count()).select_from(t.processed)).scalar_one()
        engine.dispose()
        assert marks == total  # verdict and mark commit together: never one without the other
        print(f"kill -9: {total} whole verdicts over 5 kills")
