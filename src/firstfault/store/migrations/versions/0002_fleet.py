"""The fleet view by failure time, at fleet size: verdicts.failed_at, fleet_hits, fleet_exposure, indexes.

Revision ID: 0002_fleet
Revises: 0002_alerts
Create Date: 2026-12-01

- verdicts.failed_at: when the attempt failed (its window's end; when the
  window has no end, when it was analysed). Existing rows get it from their
  own columns.
- fleet_hits and fleet_exposure (docs/storage.md, "The store at fleet
  size"): what the fleet view counts, one narrow row per fact. Existing
  verdicts are spelled out into them here, in batches, by the same function
  the write path uses (firstfault.store.fleetrows.hit_rows), read from the
  child tables and the stored document.
- indexes the dashboard list, the fleet view and retention need at a million
  verdicts (measured by bench/store_scale.py).

SQLite: a NOT NULL column can only be added with a default, so failed_at
gets one there (every write gives the real value); no table is rebuilt (a
rebuild of `verdicts` with foreign keys on would cascade-delete its children).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op

from firstfault.store.fleetrows import failure_time, hit_rows

revision: str = "0002_fleet"
down_revision: str | None = "0002_alerts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 1000

_TS = sa.DateTime(timezone=True)
_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _aware(d: Any) -> datetime | None:
    if d is None:
        return None
    if isinstance(d, str):  # SQLite hands back its text form
        d = datetime.fromisoformat(d)
    assert isinstance(d, datetime)
    return d.replace(tzinfo=UTC) if d.tzinfo is None else d.astimezone(UTC)


def _store(d: datetime, dialect: str) -> datetime:
    return d.replace(tzinfo=None) if dialect == "sqlite" else d


def _fleet_table(name: str, *columns: sa.Column[Any]) -> None:
    op.create_table(
        name,
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("verdict_id", _ID, nullable=False),
        sa.Column("failed_at", _TS, nullable=False),
        *columns,
        sa.ForeignKeyConstraint(["verdict_id"], ["verdicts.id"], name=op.f(f"fk_{name}_verdict_id_verdicts"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{name}")),
    )
    op.create_index(op.f(f"ix_{name}_verdict_id"), name, ["verdict_id"])


def upgrade() -> None:
    bind = op.get_bind()
    dialect = bind.dialect.name
    if dialect == "sqlite":
        op.add_column("verdicts", sa.Column("failed_at", _TS, nullable=False,
                                            server_default=sa.text("'1970-01-01 00:00:00.000000'")))
    else:
        op.add_column("verdicts", sa.Column("failed_at", _TS, nullable=True))
    op.execute("UPDATE verdicts SET failed_at = COALESCE(window_end, analyzed_at)")
    if dialect != "sqlite":
        op.alter_column("verdicts", "failed_at", nullable=False)
    op.create_index(op.f("ix_verdicts_failed_at"), "verdicts", ["failed_at"])

    _fleet_table(
        "fleet_hits",
        sa.Column("failed_day", sa.Integer(), nullable=False),
        sa.Column("cluster", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("node", sa.Text(), nullable=True),
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column("domains", sa.Integer(), nullable=False),
    )
    op.create_index("ix_fleet_hits_failed_at_kind", "fleet_hits", ["failed_at", "kind"])
    op.create_index("ix_fleet_hits_cluster_failed_at", "fleet_hits", ["cluster", "failed_at"])
    _fleet_table(
        "fleet_exposure",
        sa.Column("cluster", sa.Text(), nullable=False),
        sa.Column("node", sa.Text(), nullable=False),
    )
    op.create_index("ix_fleet_exposure_failed_at_node", "fleet_exposure", ["failed_at", "node"])
    op.create_index("ix_fleet_exposure_cluster_failed_at", "fleet_exposure", ["cluster", "failed_at"])
    op.create_index("ix_processed_verdict_id", "processed", ["verdict_id"])
    _backfill(bind)


def _backfill(bind: sa.Connection) -> None:
    """Spell out the verdicts stored before this revision into the fleet tables, BATCH at a time."""
    dialect = bind.dialect.name
    v = sa.table("verdicts", sa.column("id"), sa.column("cluster"), sa.column("window_end"),
                 sa.column("analyzed_at"), sa.column("verdict_json"))
    c = sa.table("causes", sa.column("verdict_id"), sa.column("role"), sa.column("category"),
                 sa.column("domain"), sa.column("nodes"), sa.column("position"))
    d = sa.table("devices", sa.column("verdict_id"), sa.column("role"), sa.column("node"), sa.column("device"),
                 sa.column("id"))
    e = sa.table("evidence", sa.column("verdict_id"), sa.column("role"), sa.column("node"), sa.column("port"),
                 sa.column("category"), sa.column("position"))
    hits = sa.table("fleet_hits", *(sa.column(n) for n in (
        "verdict_id", "failed_at", "failed_day", "cluster", "kind", "key", "node", "role", "domains")))
    exposure = sa.table("fleet_exposure", *(sa.column(n) for n in ("verdict_id", "failed_at", "cluster", "node")))
    last = 0
    while True:
        batch = bind.execute(sa.select(v.c.id, v.c.cluster, v.c.window_end, v.c.analyzed_at, v.c.verdict_json)
                             .where(v.c.id > last).order_by(v.c.id).limit(BATCH)).all()
        if not batch:
            return
        ids = [r.id for r in batch]
        last = ids[-1]
        causes: dict[int, list[dict[str, Any]]] = {}
        for cr in bind.execute(sa.select(c.c.verdict_id, c.c.role, c.c.category, c.c.domain, c.c.nodes)
                              .where(c.c.verdict_id.in_(ids)).order_by(c.c.verdict_id, c.c.role, c.c.position)):
            nodes = json.loads(cr.nodes) if isinstance(cr.nodes, str) else cr.nodes
            causes.setdefault(cr.verdict_id, []).append(
                {"role": cr.role, "category": cr.category, "domain": cr.domain, "nodes": nodes or []})
        devices: dict[int, list[dict[str, Any]]] = {}
        for dr in bind.execute(sa.select(d.c.verdict_id, d.c.role, d.c.node, d.c.device)
                              .where(d.c.verdict_id.in_(ids)).order_by(d.c.verdict_id, d.c.id)):
            devices.setdefault(dr.verdict_id, []).append({"role": dr.role, "node": dr.node, "device": dr.device})
        ports: dict[int, list[dict[str, Any]]] = {}
        for er in bind.execute(sa.select(e.c.verdict_id, e.c.role, e.c.node, e.c.port, e.c.category)
                              .where(e.c.verdict_id.in_(ids), e.c.port.is_not(None))
                              .order_by(e.c.verdict_id, e.c.position)):
            ports.setdefault(er.verdict_id, []).append(
                {"role": er.role, "node": er.node, "port": er.port, "category": er.category})
        hit_out: list[dict[str, Any]] = []
        exp_out: list[dict[str, Any]] = []
        for r in batch:
            analyzed = _aware(r.analyzed_at)
            assert analyzed is not None
            at = failure_time(_aware(r.window_end), analyzed)
            doc = json.loads(r.verdict_json)
            h, x = hit_rows(r.id, at, r.cluster, causes=causes.get(r.id, []), devices=devices.get(r.id, []),
                            ports=ports.get(r.id, []), leads=doc.get("leads") or [],
                            workload_nodes=(doc.get("workload") or {}).get("nodes") or [])
            hit_out += h
            exp_out += x
        for rows, table in ((hit_out, hits), (exp_out, exposure)):
            for row in rows:
                row["failed_at"] = _store(row["failed_at"], dialect)
            if rows:
                bind.execute(sa.insert(table), rows)


def downgrade() -> None:
    op.drop_index("ix_processed_verdict_id", table_name="processed")
    op.drop_table("fleet_exposure")
    op.drop_table("fleet_hits")
    op.drop_index(op.f("ix_verdicts_failed_at"), table_name="verdicts")
    op.drop_column("verdicts", "failed_at")
