"""The verdict store on SQLite: the shared contract, plus what only SQLite has (pragmas, WAL, files)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text

from firstfault import records
from firstfault.store import StoreError, VerdictStore, create_store_engine
from firstfault.store.db import BUSY_TIMEOUT_MS
from tests.store.contract import StoreContract, scenario


class TestSqliteStore(StoreContract):
    @pytest.fixture
    def url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path / 'verdicts.db'}"


def test_pragmas_wal_foreign_keys_busy_timeout(tmp_path: Path) -> None:
    store = VerdictStore.open(f"sqlite:///{tmp_path / 'v.db'}")
    try:
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar_one() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar_one() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one() == BUSY_TIMEOUT_MS
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar_one() == 2  # FULL
    finally:
        store.close()
    # WAL is a property of the file: a plain sqlite3 client sees it too.
    with sqlite3.connect(tmp_path / "v.db") as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    raw.close()
    assert (tmp_path / "v.db-wal").exists() or (tmp_path / "v.db").stat().st_size > 0


def test_reader_is_not_blocked_by_an_open_write_transaction(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'v.db'}"
    writer, reader = VerdictStore.open(url), VerdictStore.open(url)
    try:
        vid = writer.write(scenario("sw-cuda-oom-rank3"))
        with writer.engine.connect().execution_options(firstfault_write=True) as conn, conn.begin():
            conn.execute(text("DELETE FROM verdicts"))  # uncommitted, write lock held
            got = reader.get(vid)  # WAL: readers see the last commit, without waiting
            assert got is not None
            conn.rollback()
    finally:
        writer.close()
        reader.close()


def test_foreign_keys_cascade_children(tmp_path: Path) -> None:
    store = VerdictStore.open(f"sqlite:///{tmp_path / 'v.db'}")
    try:
        store.write(scenario("hw-nvlink-xid149-showcase"))
        with store.engine.connect() as conn, conn.begin():
            conn.execute(text("DELETE FROM verdicts"))
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM evidence")).scalar_one() == 0
    finally:
        store.close()


def test_parent_directory_is_created_and_memory_works(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b" / "v.db"
    with VerdictStore.open(f"sqlite:///{deep}") as store:
        store.write(scenario("sw-cuda-oom-rank3"))
    assert deep.exists()
    with VerdictStore.open("sqlite://") as mem:
        vid = mem.write(scenario("sw-cuda-oom-rank3"))
        assert mem.get(vid) == scenario("sw-cuda-oom-rank3")


def test_bad_urls_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="mysql"):
        create_store_engine("mysql://localhost/x")
    (tmp_path / "not-a-db").write_text("this is not a database\n" * 100)
    with pytest.raises(StoreError, match="not-a-db"):
        VerdictStore.open(f"sqlite:///{tmp_path / 'not-a-db'}")


def test_database_sink_writes_once_and_reports_failures(tmp_path: Path) -> None:
    from firstfault.model import Enrichment
    from firstfault.sinks import DatabaseSink, SinkError
    from firstfault.store import ProcessedMark

    url = f"sqlite:///{tmp_path / 'v.db'}"
    sink = DatabaseSink(url)
    try:
        v = scenario("hw-nvlink-xid149-showcase")
        sink.write(v, Enrichment(cluster="eos"), mark=ProcessedMark("slurm", "4242", 0))
        first = sink.last_id
        sink.write(v, Enrichment(cluster="eos"))
        assert first is not None and sink.last_id == first
        assert sink.store.get(first) == v and sink.store.is_processed("slurm", "4242", 0)
    finally:
        sink.close()
    (tmp_path / "junk.db").write_text("not sqlite\n" * 100)
    bad = DatabaseSink(f"sqlite:///{tmp_path / 'junk.db'}")
    with pytest.raises(SinkError, match=r"junk\.db"):
        bad.write(scenario("sw-cuda-oom-rank3"), Enrichment())
    bad.close()
    with pytest.raises(ValueError):
        DatabaseSink()


@pytest.mark.parametrize(("source", "line", "port"), [
    ("kernel", "kernel: mlx5_core 0000:5e:00.0 mlx5_5: Port: 1 Link DOWN", "mlx5_5:1"),
    ("kernel", "kernel: mlx5_core 0000:5e:00.0 ibp94s0: Link down", "ibp94s0"),
    ("kernel", "kernel: ice 0000:17:00.0 ens1f0: NIC Link is Down", "ens1f0"),
    ("kernel", "nvidia-nvswitch2: SXid (PCI:0000:b7:00.0): 20034, Fatal, Link 30 LTSSM Fault Up", "nvswitch2:30"),
    ("kernel", "kernel: nvidia-nvswitch2: SXid (PCI:0000:b7:00.0): 20034, Fatal, Link 30 LTSSM Fault Up",
     "nvswitch2:30"),
    ("fabricmanager", "detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus id 00000000:b7:00.0 "
     "physical id 2 port 30", "nvswitch-phys2:30"),
    # phatut/nmx-c-analyzers docs/CORRELATION.md: an NVL72 switch tray names the switch by its GUID
    ("fabricmanager", "[Jul 19 2025 18:34:57] [WARNING] [tid 134] Trunk port failure detected for switch GUID "
     "0xb0cf0e0300e31440 and switch chassis sn 1825124190178, slot 7 port number 61 port GUID 0xb0cf0e0300e31440 "
     "cage 7.", "nvswitch-0xb0cf0e0300e31440:61"),
    ("kernel", "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus. Link 3", None),
])
def test_ports_named_by_evidence(source: str, line: str, port: str | None) -> None:
    """The port comes from the event's fields (engine/ports.py) into the verdict; the store reads it there."""
    from firstfault.collect.scan import feed_lines
    from firstfault.engine.verdict import _evidence
    from firstfault.extract.base import Candidate
    from firstfault.store.repo import port_of

    (ev,) = feed_lines([Candidate(source, f"nodes/n/{source}.log", 1, "n", None, None, line)])
    item = _evidence(ev, "cause", None)
    assert item.port == port
    assert port_of(item) == port
    # The store never re-reads the text: an item without the structured port names none.
    assert port_of(records.replace(item, port=None)) is None


def test_a_metric_names_its_hca_port() -> None:
    from firstfault.engine.ports import port_of as event_port
    from firstfault.extract.metrics import read_metrics

    body = (b'node_infiniband_link_downed_total{device="mlx5_2",instance="h:9100",port="1"} 0 1796105670000\n'
            b'node_infiniband_link_downed_total{device="mlx5_2",instance="h:9100",port="1"} 4 1796105700000\n'
            b"# EOF\n")
    import io

    res = read_metrics(io.BytesIO(body), "openmetrics", "metrics/h.om")
    ports = {event_port(e) for e in res.events if e.kind == "metric.condition"}
    assert ports == {"mlx5_2:1"}
