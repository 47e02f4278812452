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
    """One row per (kind, block, key, cluster) of fleet_day_keys, its days ORed as the write path does."""
    dk = t.fleet_day_keys.c
    q = (sa.select(dk.kind, dk.key, dk.cluster, dk.failed_day, dk.jobs)
         .order_by(dk.kind, dk.key, dk.cluster, dk.failed_day)
         .execution_options(yield_per=BATCH))  # the statement's option: the connection's would stick
    rows: list[dict[str, Any]] = []
    for kind, key, cluster, day, jobs in bind.execute(q):
        block, bit = rollups.block_of(int(day))
        last = rows[-1] if rows else None
        if last is None or (last["kind"], last["block"], last["key"], last["cluster"]) != (kind, block, key, cluster):
            if len(rows) >= BATCH:  # the key order puts a row's days together: every row before is complete
                bind.execute(sa.insert(t.fleet_key_blocks), rows)
                rows.clear()
            last = {"kind": kind, "block": block, "key": key, "cluster": cluster, "seen": 0, "jobs": 0}
            rows.append(last)
        last["seen"] |= bit
        if int(jobs) > 0:
            last["jobs"] |= bit
    if rows:
        bind.execute(sa.insert(t.fleet_key_blocks), rows)


def downgrade() -> None:
    op.drop_table("fleet_key_blocks")
