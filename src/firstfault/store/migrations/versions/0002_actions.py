"""Recovery actions: one row per drain / cordon decision (done, dry run, refused, skipped).

Revision ID: 0002_actions
Revises: 0002_fleet
Create Date: 2026-12-01

Types are spelled out here (not imported from firstfault.store.schema) so
the revision keeps meaning what it meant when it was written.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_actions"
down_revision: str | None = "0002_fleet"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    big = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        "actions",
        sa.Column("id", big, autoincrement=True, nullable=False),
        sa.Column("verdict_id", big, nullable=True),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("cluster", sa.Text(), nullable=False),
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("outcome", sa.Text(), nullable=False),
        sa.Column("dry_run", sa.Boolean(), nullable=False),
        sa.Column("category", sa.Text(), nullable=True),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["verdict_id"], ["verdicts.id"], name=op.f("fk_actions_verdict_id_verdicts"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_actions")),
    )
    op.create_index(op.f("ix_actions_verdict_id"), "actions", ["verdict_id"])
    op.create_index("ix_actions_kind_cluster_created_at", "actions", ["kind", "cluster", "created_at"])


def downgrade() -> None:
    op.drop_table("actions")  # drops its indexes with it
