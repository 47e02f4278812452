"""The verdict store on a real PostgreSQL (tests/store/pg_harness.py): the shared contract, plus PostgreSQL-only cases.

One server for the whole test session; every test gets a fresh database.
Skips locally when the PostgreSQL binaries are missing (CI turns that skip into a failure).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
from sqlalchemy import text

from firstfault.store import StoreError, VerdictStore, create_store_engine
from firstfault.store.db import current_revision, head_revision
from tests.store.contract import StoreContract, scenario
from tests.store.pg_harness import PgServer, shared_server

pytestmark = pytest.mark.integration


@pytest.fixture(scope="session")
def pg() -> PgServer:
    server = shared_server()  # one per test session, shared with other test packages
    if server is None:
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) are not installed")
    return server


@pytest.fixture
def database(pg: PgServer) -> Iterator[str]:
    name = pg.create_database()
    yield name
    pg.drop_database(name)


class TestPostgresStore(StoreContract):
    @pytest.fixture
    def url(self, pg: PgServer, database: str) -> str:
        return pg.url(database)


def test_plain_postgresql_urls_use_psycopg(pg: PgServer, database: str) -> None:
    url = pg.url(database).replace("postgresql+psycopg://", "postgresql://")
    with VerdictStore.open(url) as store:
        assert store.engine.dialect.driver == "psycopg"
        assert store.get(store.write(scenario("sw-cuda-oom-rank3"))) == scenario("sw-cuda-oom-rank3")


def test_concurrent_openers_of_an_empty_database_migrate_once(pg: PgServer, database: str) -> None:
    """Three daemons start at once on an empty database: the advisory lock lets one migrate."""
    code = (
        "import sys\n"
        "from firstfault.store import VerdictStore\n"
        "from tests.store.contract import scenario\n"
        "with VerdictStore.open(sys.argv[1]) as s:\n"
        "    s.write(scenario('sw-cuda-oom-rank3', id=sys.argv[2]))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", code, pg.url(database), f"job-{i}"], env=env,
                              stderr=subprocess.PIPE, text=True) for i in range(3)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    # And threads in one process (alembic's globals are guarded by a lock).
    errors: list[BaseException] = []

    def open_and_write(i: int) -> None:
        try:
            with VerdictStore.open(pg.url(database)) as store:
                store.write(scenario("sw-cuda-oom-rank3", id=f"thread-{i}"))
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=open_and_write, args=(i,)) for i in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    engine = create_store_engine(pg.url(database))
    try:
        assert current_revision(engine) == head_revision()
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM verdicts")).scalar_one() == 6
    finally:
        engine.dispose()


def test_unreachable_server_is_a_clear_error_without_the_password(pg: PgServer) -> None:
    url = f"postgresql+psycopg://ff:s3cret@127.0.0.1:{pg.port + 1 if pg.port < 65535 else 1}/nope"
    with pytest.raises(StoreError) as err:
        VerdictStore.open(url)
    assert "127.0.0.1" in str(err.value) and "s3cret" not in str(err.value)
