"""Alembic environment for the verdict store.

firstfault runs it through the programmatic API (firstfault.store.db.migrate),
which hands over an open connection in `config.attributes["connection"]`.
It also works with the alembic CLI for operators: put `script_location` and
`sqlalchemy.url` in an alembic.ini (offline `--sql` mode is supported).
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine, text
from sqlalchemy.pool import NullPool

from firstfault.store.schema import VERSION_TABLE, metadata

# Any constant will do: it only has to be the same for every firstfault.
PG_LOCK_KEY = 0x66697273746661  # "firstfa"

config = context.config


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        version_table=VERSION_TABLE,
        compare_type=True,
        # SQLite cannot ALTER most things: later migrations use batch mode there.
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # Serialise concurrent migrators (two daemons starting on an empty database).
            connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": PG_LOCK_KEY})
        context.run_migrations()


def run_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=metadata,
        version_table=VERSION_TABLE,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    given = config.attributes.get("connection")
    if given is not None:
        _configure(given)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("alembic: set sqlalchemy.url or pass a connection in config.attributes")
    engine = create_engine(url, poolclass=NullPool)
    with engine.connect() as conn:
        _configure(conn)
        conn.commit()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
