"""Provisional verdicts: the ones sent while an attempt ran, and the actions taken on them.

Revision ID: 0006_provisional
Revises: 0005_fabric
Create Date: 2026-12-02

Table `provisional` (one row per attempt and cause category, unique) and a
nullable `actions.provisional_id` (a decision on a provisional verdict has no
verdict id yet). Types are spelled out here (not imported from
firstfault.store.schema) so the revision keeps meaning what it meant when it
was written. Downgrade drops both.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_provisional"
down_revision: str | None = "0005_fabric"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    big = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    ts = sa.DateTime(timezone=True)
    op.create_table(
        "provisional",
        sa.Column("id", big, autoincrement=True, nullable=False),
        sa.Column("workload_id", sa.Text(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("cluster", sa.Text(), nullable=False),
        sa.Column("ref", sa.Text(), nullable=False),
        sa.Column("category", sa.Text(), nullable=False),
        sa.Column("domain", sa.Text(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("nodes", sa.JSON(), nullable=False),
        sa.Column("first_seen", ts, nullable=True),
        sa.Column("delivery", sa.Text(), nullable=False),
        sa.Column("verdict_json", sa.Text(), nullable=False),
        sa.Column("sent_at", ts, nullable=False),
        sa.Column("final_verdict_id", big, nullable=True),
        sa.Column("held", sa.Boolean(), nullable=True),
        sa.Column("settled_at", ts, nullable=True),
        sa.ForeignKeyConstraint(["final_verdict_id"], ["verdicts.id"],
                                name=op.f("fk_provisional_final_verdict_id_verdicts"), ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_provisional")),
        sa.UniqueConstraint("workload_id", "attempt", "cluster", "category",
                            name=op.f("uq_provisional_workload_id_attempt_cluster_category")),
    )
    op.create_index(op.f("ix_provisional_sent_at"), "provisional", ["sent_at"])
    op.create_index(op.f("ix_provisional_final_verdict_id"), "provisional", ["final_verdict_id"])
    with op.batch_alter_table("actions") as b:  # SQLite: a copy of the table, with the new key
        b.add_column(sa.Column("provisional_id", big, nullable=True))
        b.create_foreign_key(op.f("fk_actions_provisional_id_provisional"), "provisional", ["provisional_id"],
                             ["id"], ondelete="SET NULL")
        b.create_index(op.f("ix_actions_provisional_id"), ["provisional_id"])


def downgrade() -> None:
    with op.batch_alter_table("actions") as b:
        b.drop_index(op.f("ix_actions_provisional_id"))
        b.drop_constraint(op.f("fk_actions_provisional_id_provisional"), type_="foreignkey")
        b.drop_column("provisional_id")
    op.drop_table("provisional")
