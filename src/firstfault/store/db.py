"""Engines for the verdict store, and migrate-on-open.

URLs are SQLAlchemy URLs: `sqlite:///relative.db`, `sqlite:////abs/path.db`,
`sqlite://` (in memory, one shared connection), or
`postgresql+psycopg://user:pass@host:port/db` (`postgresql://` and
`postgres://` mean the same: psycopg 3 is the driver we ship).

SQLite is set up for one writer daemon plus readers (the dashboard): WAL so
readers never block the writer, foreign keys on, a busy timeout instead of
instant "database is locked", synchronous=FULL so a committed "processed"
mark survives a power cut, and transactions opened by us (BEGIN or BEGIN
IMMEDIATE) instead of by the sqlite3 module, whose implicit transactions
leave DDL outside any transaction and upgrade read locks mid-transaction
(which fails at once with SQLITE_BUSY instead of waiting).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.pool import StaticPool

from firstfault.store.schema import VERSION_TABLE

MIGRATIONS = Path(__file__).parent / "migrations"
BUSY_TIMEOUT_MS = 30_000
# Execution option asking for a write transaction (SQLite: BEGIN IMMEDIATE,
# so a writer queues on the busy timeout at BEGIN instead of failing later).
WRITE = {"firstfault_write": True}
# Alembic keeps the running migration in module globals (alembic.context,
# alembic.op): two threads migrating at once would trample each other.
_ALEMBIC = threading.Lock()


class StoreError(Exception):
    """The store URL is unusable or the database cannot be opened or migrated."""


def normalise_url(url: str | URL) -> URL:
    u = make_url(url) if isinstance(url, str) else url
    if u.drivername in ("postgresql", "postgres"):
        u = u.set(drivername="postgresql+psycopg")
    if u.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(f"unsupported store URL scheme {u.drivername!r}: use sqlite:///PATH or postgresql+psycopg://")
    return u


def create_store_engine(url: str | URL) -> Engine:
    """An engine with the pragmas and transaction handling above; does not connect yet."""
    u = normalise_url(url)
    if u.get_backend_name() == "sqlite":
        return _sqlite_engine(u)
    # pre-ping: a long-running daemon outlives PostgreSQL restarts and failovers.
    return create_engine(u, pool_pre_ping=True)


def _sqlite_engine(u: URL) -> Engine:
    kwargs: dict[str, Any] = {}
    memory = u.database in (None, "", ":memory:")
    if memory:
        # One connection, or every checkout would see its own empty database.
        kwargs = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
    else:
        Path(str(u.database)).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(u, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (see module doc)
        cur = dbapi_conn.cursor()
        try:
            cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if not memory:
                cur.execute("PRAGMA journal_mode = WAL")
            cur.execute("PRAGMA synchronous = FULL")
            cur.execute("PRAGMA foreign_keys = ON")
        finally:
            cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        write = conn.get_execution_options().get("firstfault_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def _config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def head_revision() -> str:
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
        return ctx.get_current_revision()


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest revision; a no-op (no DDL) when it is there.

    Runs in one write transaction: concurrent openers of a fresh database
    queue behind the first (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory
    lock taken in env.py) and then find nothing to do.
    """
    if current_revision(engine) == head_revision():
        return
    cfg = _config()
    with _ALEMBIC, engine.connect().execution_options(**WRITE) as conn, conn.begin():
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


def must_exist(url: str) -> None:
    """A read-only command must not create an empty SQLite file because of a typo in the path: ValueError
    when `url` names a SQLite file that is not there."""
    u = make_url(url)
    local = u.get_backend_name() == "sqlite" and u.database not in (None, "", ":memory:")
    if local and not Path(str(u.database)).expanduser().is_file():
        raise ValueError(f"{u.database}: no such database file")
