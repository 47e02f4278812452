"""Replay evidence: per verdict, the compressed candidate lines and documents it was judged on.

Revision ID: 0002_alerts
Revises: 0001
Create Date: 2026-12-01

Frozen, like 0001: types are spelled out here.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_alerts"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "replay_evidence",
        sa.Column("verdict_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("codec", sa.Text(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("raw_bytes", sa.BigInteger(), nullable=False),
        sa.Column("truncated", sa.Boolean(), nullable=False),
        sa.Column("lines_kept", sa.Integer(), nullable=False),
        sa.Column("lines_total", sa.Integer(), nullable=False),
        sa.Column("documents_kept", sa.Integer(), nullable=False),
        sa.Column("documents_total", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["verdict_id"], ["verdicts.id"], name=op.f("fk_replay_evidence_verdict_id_verdicts"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("verdict_id", name=op.f("pk_replay_evidence")),
    )


def downgrade() -> None:
    op.drop_table("replay_evidence")
