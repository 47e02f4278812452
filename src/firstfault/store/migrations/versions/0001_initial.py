"""Initial schema: verdicts and their child tables, cursors, processed.

Revision ID: 0001
Revises:
Create Date: 2026-11-29

Frozen: later schema changes get their own revision; this file never changes.
Types are spelled out here (not imported from firstfault.store.schema) so
the revision keeps meaning what it meant when it was written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_CHILDREN = ("causes", "affected_nodes", "devices", "symptoms", "evidence", "coverage", "errors")


def _id() -> sa.Column[Any]:
    return sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False)


def _ts(name: str, nullable: bool = True) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _text(name: str, nullable: bool = True) -> sa.Column[Any]:
    return sa.Column(name, sa.Text(), nullable=nullable)


def _int(name: str, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.Integer(), nullable=nullable)


def _child(table: str, *columns: sa.Column[Any] | sa.Constraint) -> None:
    op.create_table(
        table,
        _id(),
        sa.Column("verdict_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        *columns,
        sa.ForeignKeyConstraint(
            ["verdict_id"], ["verdicts.id"], name=op.f(f"fk_{table}_verdict_id_verdicts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{table}")),
    )
    op.create_index(op.f(f"ix_{table}_verdict_id"), table, ["verdict_id"])


def upgrade() -> None:
    op.create_table(
        "verdicts",
        _id(),
        _text("workload_id", False),
        _int("attempt"),
        _text("scheduler", False),
        _text("cluster", False),
        _text("name"),
        _ts("window_start"),
        _ts("window_end"),
        _text("terminal_state"),
        _text("outcome", False),
        _text("attributed_domain", False),
        _text("root_category"),
        _text("root_summary"),
        _text("root_rule"),
        _ts("first_seen"),
        _text("catalog_version", False),
        _text("catalog_sha256", False),
        _ts("analyzed_at", False),
        _text("api_version", False),
        _text("owner"),
        sa.Column("links", sa.JSON(), nullable=False),
        sa.Column("previous_attempts", sa.JSON(), nullable=False),
        _text("verdict_json", False),
        _ts("created_at", False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_verdicts")),
        sa.UniqueConstraint(
            "workload_id", "attempt", "catalog_sha256", "cluster",
            name=op.f("uq_verdicts_workload_id_attempt_catalog_sha256_cluster"),
        ),
    )
    for col in ("analyzed_at", "attributed_domain", "outcome", "root_category"):
        op.create_index(op.f(f"ix_verdicts_{col}"), "verdicts", [col])

    _child(
        "causes",
        _text("role", False),
        _int("position"),
        _text("category", False),
        _text("domain", False),
        _text("summary", False),
        _text("rule", False),
        _ts("first_seen"),
        _text("recommended_action"),
        _int("count"),
        sa.Column("nodes", sa.JSON(), nullable=False),
    )
    op.create_index(op.f("ix_causes_category"), "causes", ["category"])

    _child(
        "affected_nodes",
        _text("node", False),
        sa.UniqueConstraint("verdict_id", "node", name=op.f("uq_affected_nodes_verdict_id_node")),
    )
    op.create_index(op.f("ix_affected_nodes_node"), "affected_nodes", ["node"])

    _child("devices", _text("role", False), _text("node"), _text("device", False))
    op.create_index("ix_devices_node_device", "devices", ["node", "device"])

    _child(
        "symptoms",
        _int("position"),
        _text("category", False),
        sa.Column("nodes", sa.JSON(), nullable=False),
        _int("ranks_count"),
        _int("count"),
        _ts("first_seen"),
        _text("explained_by"),
    )

    _child(
        "evidence",
        _int("position"),
        _text("role", False),
        _text("source", False),
        _text("node"),
        _text("file"),
        _int("line", True),
        _ts("time"),
        _text("event", False),
        _text("category"),
        _int("rank", True),
        _text("query"),
        _text("text", False),
        _text("port"),
    )
    op.create_index("ix_evidence_node_port", "evidence", ["node", "port"])

    _child(
        "coverage",
        _int("position"),
        _text("source", False),
        _text("status", False),
        _int("nodes_seen"),
        _int("nodes_expected"),
        sa.Column("lines", sa.BigInteger(), nullable=False),
        _int("files"),
    )

    _child("errors", _int("position"), _text("source", False), _text("file"), _int("line", True),
           _text("message", False))

    op.create_table(
        "cursors",
        _text("name", False),
        _text("value", False),
        _ts("updated_at", False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_cursors")),
    )
    op.create_table(
        "processed",
        _text("source", False),
        _text("ref", False),
        _int("attempt"),
        sa.Column("verdict_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        _ts("done_at", False),
        sa.ForeignKeyConstraint(
            ["verdict_id"], ["verdicts.id"], name=op.f("fk_processed_verdict_id_verdicts"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("source", "ref", "attempt", name=op.f("pk_processed")),
    )


def downgrade() -> None:
    op.drop_table("processed")
    op.drop_table("cursors")
    for table in reversed(_CHILDREN):
        op.drop_table(table)  # drops its indexes with it
    op.drop_table("verdicts")
