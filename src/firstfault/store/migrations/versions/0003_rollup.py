"""The fleet view's daily rollups: fleet_keys, fleet_day_verdicts, fleet_day_keys, fleet_day_hits.

Revision ID: 0003_rollup
Revises: 0002_actions
Create Date: 2026-12-01

What they hold: docs/storage.md ("Rollups") and firstfault.store.rollups.
The write path keeps them up to date from now on; the verdicts stored
before this revision are rolled up here, from their fleet_hits and
fleet_exposure rows, by the same functions the write path uses
(rollups.of_verdicts, rollups.apply), BATCH verdicts at a time in
failure-time order (so a batch's days are mostly new rows, not updates).
Downgrade drops the four tables.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from firstfault.store import rollups
from firstfault.store import schema as t

revision: str = "0003_rollup"
down_revision: str | None = "0002_actions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 5000

_TS = sa.DateTime(timezone=True)
_COUNT = sa.BigInteger()


def upgrade() -> None:
    op.create_table(
        "fleet_keys",
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("kind", "key", name=op.f("pk_fleet_keys")),
    )
    op.create_table(
        "fleet_day_verdicts",
        sa.Column("failed_day", sa.Integer(), nullable=False),
        sa.Column("cluster", sa.Text(), nullable=False),
        sa.Column("domains", sa.Integer(), nullable=False),
        sa.Column("verdicts", _COUNT, nullable=False),
        sa.Column("node_jobs", _COUNT, nullable=False),
        sa.PrimaryKeyConstraint("failed_day", "cluster", "domains", name=op.f("pk_fleet_day_verdicts")),
    )
    op.create_table(
        "fleet_day_keys",
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("failed_day", sa.Integer(), nullable=False),
        sa.Column("cluster", sa.Text(), nullable=False),
        sa.Column("hits", _COUNT, nullable=False),
        sa.Column("jobs", _COUNT, nullable=False),
        sa.PrimaryKeyConstraint("kind", "key", "failed_day", "cluster", name=op.f("pk_fleet_day_keys")),
    )
    op.create_index("ix_fleet_day_keys_kind_failed_day_key", "fleet_day_keys", ["kind", "failed_day", "key"])
    op.create_table(
        "fleet_day_hits",
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("failed_day", sa.Integer(), nullable=False),
        sa.Column("cluster", sa.Text(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column("domains", sa.Integer(), nullable=False),
        sa.Column("node", sa.Text(), nullable=False),
        sa.Column("n", _COUNT, nullable=False),
        sa.Column("last", _TS, nullable=False),
        sa.PrimaryKeyConstraint("kind", "failed_day", "cluster", "key", "role", "domains", "node",
                                name=op.f("pk_fleet_day_hits")),
    )
    op.create_index("ix_fleet_day_hits_kind_key_failed_day", "fleet_day_hits", ["kind", "key", "failed_day"])
    _backfill(op.get_bind())


def _backfill(bind: sa.Connection) -> None:
    """Roll up the verdicts stored before this revision, BATCH at a time, oldest failure first."""
    v = t.verdicts.c
    after: tuple[object, int] | None = None
    while True:
        q = sa.select(v.failed_at, v.id).order_by(v.failed_at, v.id).limit(BATCH)
        if after is not None:
            # failed_at >= first, so the failed_at index starts the scan where the last batch ended (an OR
            # alone would make PostgreSQL read the index from its start on every batch).
            q = q.where(v.failed_at >= after[0],
                        sa.or_(v.failed_at > after[0], sa.and_(v.failed_at == after[0], v.id > after[1])))
        batch = bind.execute(q).all()
        if not batch:
            return
        after = (batch[-1].failed_at, int(batch[-1].id))
        # blocks=False: fleet_key_blocks comes with 0004, which builds it from fleet_day_keys.
        rollups.apply(bind, rollups.of_verdicts(bind, [int(r.id) for r in batch]), blocks=False)


def downgrade() -> None:
    op.drop_index("ix_fleet_day_hits_kind_key_failed_day", table_name="fleet_day_hits")
    op.drop_table("fleet_day_hits")
    op.drop_index("ix_fleet_day_keys_kind_failed_day_key", table_name="fleet_day_keys")
    op.drop_table("fleet_day_keys")
    op.drop_table("fleet_day_verdicts")
    op.drop_table("fleet_keys")
