"""fleet_key_blocks: the days each fleet key was seen on, as bits, for the fleet view's "seen" counts.

Revision ID: 0004_key_blocks
Revises: 0003_rollup
Create Date: 2026-12-01

What it holds: docs/storage.md ("Rollups") and firstfault.store.rollups. The
write path keeps it up to date from now on; the keys already rolled up are
built here from fleet_day_keys (complete since 0003, which also covers the
verdicts an unmigrated store wrote after 0003), streamed in key order and
inserted BATCH rows at a time. Downgrade drops the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from firstfault.store import rollups
from firstfault.store import schema as t

revision: str = "0004_key_blocks"
down_revision: str | None = "0003_rollup"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 5000


def upgrade() -> None:
    op.create_table(
        "fleet_key_blocks",
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("block", sa.Integer(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("cluster", sa.Text(), nullable=False),
        sa.Column("seen", sa.BigInteger(), nullable=False),
        sa.Column("jobs", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("kind", "block", "key", "cluster", name=op.f("pk_fleet_key_blocks")),
    )
    _backfill(op.get_bind())


def _backfill(bind: sa.Connection) -> None:
    dk = t.fleet_day_keys.c
    rows: list[dict[str, Any]] = []
    current: tuple[str, int, str, str] | None = None
    seen = jobs = 0

    def flush(final: bool = False) -> None:
        if rows and (final or len(rows) >= BATCH):
            bind.execute(sa.insert(t.fleet_key_blocks), rows)
            rows.clear()

    q = (sa.select(dk.kind, dk.key, dk.cluster, dk.failed_day, dk.jobs)
         .order_by(dk.kind, dk.key, dk.cluster, dk.failed_day)
         .execution_options(yield_per=BATCH))  # the statement's option: the connection's would stick
    for kind, key, cluster, day, n_jobs in bind.execute(q):
        block, bit = rollups.block_of(int(day))
        here = (str(kind), block, str(key), str(cluster))
        if here != current:
            if current is not None:
                rows.append({"kind": current[0], "block": current[1], "key": current[2], "cluster": current[3],
                             "seen": seen, "jobs": jobs})
                flush()
            current, seen, jobs = here, 0, 0
        seen |= bit
        if int(n_jobs) > 0:
            jobs |= bit
    if current is not None:
        rows.append({"kind": current[0], "block": current[1], "key": current[2], "cluster": current[3],
                     "seen": seen, "jobs": jobs})
    flush(final=True)


def downgrade() -> None:
    op.drop_table("fleet_key_blocks")
