"""The verdict store's tables (SQLAlchemy 2 declarative), documented in docs/storage.md.

One `verdicts` row per stored verdict holds the whole document (`verdict_json`,
the source of truth that `get` returns) next to the columns the dashboard
filters on; the child tables spell out the document's lists so SQL can count
and filter them (fleet views, node and category filters). Child rows are
derived from `verdict_json` and are written in the same transaction.

The same tables serve SQLite and PostgreSQL, so only portable types are used:
timestamps are `UTCDateTime` (aware UTC in, aware UTC out), lists and maps
are JSON, free text is TEXT (PostgreSQL TEXT costs the same as VARCHAR(n)).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# Constraint names are fixed so the migrations and the models agree on them
# (and so a later migration can drop one by name on both databases).
NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# The table alembic records the schema revision in: prefixed so a PostgreSQL
# database shared with another alembic-managed application does not clash.
VERSION_TABLE = "firstfault_alembic_version"

# A BIGINT primary key is not a rowid alias in SQLite and would not
# autoincrement there; INTEGER is (and is 64-bit in SQLite anyway).
Id = BigInteger().with_variant(Integer(), "sqlite")


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that is always UTC and always timezone-aware in Python.

    PostgreSQL stores `timestamptz`; SQLite has no timezone storage, so the
    value is stored as naive UTC (its text form sorts in time order) and the
    tzinfo is put back on the way out.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


metadata = Base.metadata


def _verdict_fk() -> Mapped[int]:
    # Children go with their verdict (retention deletes the verdict row only).
    return mapped_column(Id, ForeignKey("verdicts.id", ondelete="CASCADE"), nullable=False, index=True)


class VerdictRow(Base):
    __tablename__ = "verdicts"
    __table_args__ = (
        # cluster is '' (never NULL) when unknown: both databases treat NULLs
        # as distinct in a UNIQUE constraint, which would defeat idempotency.
        UniqueConstraint("workload_id", "attempt", "catalog_sha256", "cluster"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    workload_id: Mapped[str] = mapped_column(Text, nullable=False)
    attempt: Mapped[int] = mapped_column(Integer, nullable=False)
    scheduler: Mapped[str] = mapped_column(Text, nullable=False)
    cluster: Mapped[str] = mapped_column(Text, nullable=False, default="")
    name: Mapped[str | None] = mapped_column(Text)
    window_start: Mapped[datetime | None] = mapped_column(UTCDateTime)
    window_end: Mapped[datetime | None] = mapped_column(UTCDateTime)
    terminal_state: Mapped[str | None] = mapped_column(Text)
    outcome: Mapped[str] = mapped_column(Text, nullable=False, index=True)
    attributed_domain: Mapped[str] = mapped_column(Text, nullable=False, index=True)
    root_category: Mapped[str | None] = mapped_column(Text, index=True)
    root_summary: Mapped[str | None] = mapped_column(Text)
    root_rule: Mapped[str | None] = mapped_column(Text)
    first_seen: Mapped[datetime | None] = mapped_column(UTCDateTime)
    catalog_version: Mapped[str] = mapped_column(Text, nullable=False)
    catalog_sha256: Mapped[str] = mapped_column(Text, nullable=False)
    analyzed_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, index=True)
    api_version: Mapped[str] = mapped_column(Text, nullable=False)
    owner: Mapped[str | None] = mapped_column(Text)
    links: Mapped[dict[str, str]] = mapped_column(JSON, nullable=False)
    previous_attempts: Mapped[list[str]] = mapped_column(JSON, nullable=False)
    verdict_json: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    # 0002_fleet: when the attempt failed (window end, else analysed_at): the fleet view's and retention's time.
    failed_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, index=True)


class CauseRow(Base):
    __tablename__ = "causes"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    verdict_id: Mapped[int] = _verdict_fk()
    role: Mapped[str] = mapped_column(Text, nullable=False)  # root | candidate | secondary
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    category: Mapped[str] = mapped_column(Text, nullable=False, index=True)
    domain: Mapped[str] = mapped_column(Text, nullable=False)
    summary: Mapped[str] = mapped_column(Text, nullable=False)
    rule: Mapped[str] = mapped_column(Text, nullable=False)
    first_seen: Mapped[datetime | None] = mapped_column(UTCDateTime)
    recommended_action: Mapped[str | None] = mapped_column(Text)
    count: Mapped[int] = mapped_column(Integer, nullable=False)
    nodes: Mapped[list[str]] = mapped_column(JSON, nullable=False)


class AffectedNodeRow(Base):
    __tablename__ = "affected_nodes"
    __table_args__ = (UniqueConstraint("verdict_id", "node"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    verdict_id: Mapped[int] = _verdict_fk()
    node: Mapped[str] = mapped_column(Text, nullable=False, index=True)


class DeviceRow(Base):
    __tablename__ = "devices"
    __table_args__ = (Index("ix_devices_node_device", "node", "device"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    verdict_id: Mapped[int] = _verdict_fk()
    role: Mapped[str] = mapped_column(Text, nullable=False)  # the role of the cause that names it
    node: Mapped[str | None] = mapped_column(Text)
    device: Mapped[str] = mapped_column(Text, nullable=False)  # as in the verdict: "node-02/gpu3"


class SymptomRow(Base):
    __tablename__ = "symptoms"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    verdict_id: Mapped[int] = _verdict_fk()
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    category: Mapped[str] = mapped_column(Text, nullable=False)
    nodes: Mapped[list[str]] = mapped_column(JSON, nullable=False)
    ranks_count: Mapped[int] = mapped_column(Integer, nullable=False)
    count: Mapped[int] = mapped_column(Integer, nullable=False)
    first_seen: Mapped[datetime | None] = mapped_column(UTCDateTime)
    explained_by: Mapped[str | None] = mapped_column(Text)


class EvidenceRow(Base):
    __tablename__ = "evidence"
    __table_args__ = (Index("ix_evidence_node_port", "node", "port"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    verdict_id: Mapped[int] = _verdict_fk()
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    role: Mapped[str] = mapped_column(Text, nullable=False)
    source: Mapped[str] = mapped_column(Text, nullable=False)
    node: Mapped[str | None] = mapped_column(Text)
    file: Mapped[str | None] = mapped_column(Text)
    line: Mapped[int | None] = mapped_column(Integer)
    time: Mapped[datetime | None] = mapped_column(UTCDateTime)
    event: Mapped[str] = mapped_column(Text, nullable=False)
    category: Mapped[str | None] = mapped_column(Text)
    rank: Mapped[int | None] = mapped_column(Integer)
    query: Mapped[str | None] = mapped_column(Text)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    # Host or switch port the line names (derived at write time, see repo.port_of).
    port: Mapped[str | None] = mapped_column(Text)
    # The cable of that port, from a fabric source (the verdict's `cable`; 0005_fabric): its switch end and
    # the other end (a host port, or another switch's port).
    cable_switch: Mapped[str | None] = mapped_column(Text)
    cable_switch_port: Mapped[str | None] = mapped_column(Text)
    cable_node: Mapped[str | None] = mapped_column(Text)
    cable_port: Mapped[str | None] = mapped_column(Text)


class CoverageRow(Base):
    __tablename__ = "coverage"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    verdict_id: Mapped[int] = _verdict_fk()
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    source: Mapped[str] = mapped_column(Text, nullable=False)
    status: Mapped[str] = mapped_column(Text, nullable=False)
    nodes_seen: Mapped[int] = mapped_column(Integer, nullable=False)
    nodes_expected: Mapped[int] = mapped_column(Integer, nullable=False)
    lines: Mapped[int] = mapped_column(BigInteger, nullable=False)  # big bundles pass 2**31 lines
    files: Mapped[int] = mapped_column(Integer, nullable=False)


class ErrorRow(Base):
    __tablename__ = "errors"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    verdict_id: Mapped[int] = _verdict_fk()
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    source: Mapped[str] = mapped_column(Text, nullable=False)
    file: Mapped[str | None] = mapped_column(Text)
    line: Mapped[int | None] = mapped_column(Integer)
    message: Mapped[str] = mapped_column(Text, nullable=False)


class CursorRow(Base):
    """Where the watch daemon got to in each feed (e.g. the last sacct end time)."""

    __tablename__ = "cursors"

    name: Mapped[str] = mapped_column(Text, primary_key=True)
    value: Mapped[str] = mapped_column(Text, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)


class ProcessedRow(Base):
    """One row per ended attempt the daemon has attributed: the exactly-once ledger."""

    __tablename__ = "processed"

    source: Mapped[str] = mapped_column(Text, primary_key=True)
    ref: Mapped[str] = mapped_column(Text, primary_key=True)
    attempt: Mapped[int] = mapped_column(Integer, primary_key=True)
    # NULL when the attempt was settled without a verdict (or the verdict was pruned).
    verdict_id: Mapped[int | None] = mapped_column(Id, ForeignKey("verdicts.id", ondelete="SET NULL"))
    done_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)


# -- revision 0002_alerts: the evidence a verdict was judged on, for catalog replay -----------


class ReplayEvidenceRow(Base):
    """Per verdict: the prefiltered candidate lines, documents and samples its analysis used.

    `data` is the zlib-compressed JSON of a Service request (wire.AnalyzeRequest),
    bounded to a cap (docs/storage.md, "Catalog replay"); `truncated` says
    that some lines or documents were left out to stay under it.
    """

    __tablename__ = "replay_evidence"

    verdict_id: Mapped[int] = mapped_column(Id, ForeignKey("verdicts.id", ondelete="CASCADE"), primary_key=True)
    codec: Mapped[str] = mapped_column(Text, nullable=False)  # "zlib+json/firstfault-v1"
    data: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)
    raw_bytes: Mapped[int] = mapped_column(BigInteger, nullable=False)  # the JSON before compression
    truncated: Mapped[bool] = mapped_column(Boolean, nullable=False)
    lines_kept: Mapped[int] = mapped_column(Integer, nullable=False)
    lines_total: Mapped[int] = mapped_column(Integer, nullable=False)
    documents_kept: Mapped[int] = mapped_column(Integer, nullable=False)
    documents_total: Mapped[int] = mapped_column(Integer, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)

# ---------------------------------------------------------------------------
# 0002_fleet: the fleet view's tables (derived at write time, see fleetrows.py)
# ---------------------------------------------------------------------------


class FleetHitRow(Base):
    """One node, device or port a verdict names, per role (fleetrows.hit_rows)."""

    __tablename__ = "fleet_hits"
    __table_args__ = (
        Index("ix_fleet_hits_failed_at_kind", "failed_at", "kind"),
        Index("ix_fleet_hits_cluster_failed_at", "cluster", "failed_at"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    verdict_id: Mapped[int] = _verdict_fk()
    failed_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    failed_day: Mapped[int] = mapped_column(Integer, nullable=False)  # UTC days since 1970-01-01
    cluster: Mapped[str] = mapped_column(Text, nullable=False)
    # node | device | host_port | switch_port | switch | cable (0005_fabric) | verdict
    kind: Mapped[str] = mapped_column(Text, nullable=False)
    key: Mapped[str] = mapped_column(Text, nullable=False)
    node: Mapped[str | None] = mapped_column(Text)
    role: Mapped[str] = mapped_column(Text, nullable=False)  # root | candidate | lead | seen | cause
    domains: Mapped[int] = mapped_column(Integer, nullable=False)  # bit mask over model.CAUSE_DOMAINS


class FleetExposureRow(Base):
    """One node a verdict's workload ran on: the node-jobs of the repeat-offender rule."""

    __tablename__ = "fleet_exposure"
    __table_args__ = (
        Index("ix_fleet_exposure_failed_at_node", "failed_at", "node"),
        Index("ix_fleet_exposure_cluster_failed_at", "cluster", "failed_at"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    verdict_id: Mapped[int] = _verdict_fk()
    failed_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    cluster: Mapped[str] = mapped_column(Text, nullable=False)
    node: Mapped[str] = mapped_column(Text, nullable=False)


verdicts = cast(Table, VerdictRow.__table__)
causes = cast(Table, CauseRow.__table__)
affected_nodes = cast(Table, AffectedNodeRow.__table__)
devices = cast(Table, DeviceRow.__table__)
symptoms = cast(Table, SymptomRow.__table__)
evidence = cast(Table, EvidenceRow.__table__)
coverage = cast(Table, CoverageRow.__table__)
errors = cast(Table, ErrorRow.__table__)
cursors = cast(Table, CursorRow.__table__)
processed = cast(Table, ProcessedRow.__table__)
replay_evidence = cast(Table, ReplayEvidenceRow.__table__)

fleet_hits = cast(Table, FleetHitRow.__table__)
fleet_exposure = cast(Table, FleetExposureRow.__table__)

CHILD_TABLES = (causes, affected_nodes, devices, symptoms, evidence, coverage, errors)


# ---------------------------------------------------------------------------
# Recovery actions (revision 0002_actions; firstfault.actions, docs/actions.md)
# ---------------------------------------------------------------------------


class ActionRow(Base):
    """One decision of the actions layer: a drain or cordon done, previewed, refused or skipped.

    `target` is the node ('' for a decision about the verdict as a whole,
    e.g. "not eligible: software verdict"). `outcome`: done | dry_run |
    refused | skipped | ineligible | error. The rate limit counts `done`
    rows (and `dry_run` rows in dry-run mode) per (kind, cluster) over the
    last hour.
    """

    __tablename__ = "actions"
    __table_args__ = (Index("ix_actions_kind_cluster_created_at", "kind", "cluster", "created_at"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    # NULL once the verdict is pruned: the record of what was done to a node outlives it.
    verdict_id: Mapped[int | None] = mapped_column(Id, ForeignKey("verdicts.id", ondelete="SET NULL"), index=True)
    kind: Mapped[str] = mapped_column(Text, nullable=False)  # drain | cordon
    cluster: Mapped[str] = mapped_column(Text, nullable=False, default="")
    target: Mapped[str] = mapped_column(Text, nullable=False, default="")
    outcome: Mapped[str] = mapped_column(Text, nullable=False)
    dry_run: Mapped[bool] = mapped_column(Boolean, nullable=False)
    category: Mapped[str | None] = mapped_column(Text)
    detail: Mapped[str] = mapped_column(Text, nullable=False)  # why, or the command and what it answered
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    # 0006_provisional: a decision taken on a provisional verdict (verdict_id is NULL then).
    provisional_id: Mapped[int | None] = mapped_column(Id, ForeignKey("provisional.id", ondelete="SET NULL"),
                                                       index=True)


actions = cast(Table, ActionRow.__table__)

FLEET_TABLES = (fleet_hits, fleet_exposure)

# 0002_fleet: retention deletes verdicts, and processed.verdict_id is ON DELETE SET NULL: without this
# index every deleted verdict would scan the whole ledger.
Index("ix_processed_verdict_id", processed.c.verdict_id)

# ---------------------------------------------------------------------------
# 0003_rollup: the fleet view's daily rollups (store/rollups.py; docs/storage.md, "Rollups")
# ---------------------------------------------------------------------------


class FleetKeyRow(Base):
    """Every node, device and port any verdict has named or run on (the entities seen are counted over it)."""

    __tablename__ = "fleet_keys"

    kind: Mapped[str] = mapped_column(Text, primary_key=True)  # node | device | host_port | switch_port
    key: Mapped[str] = mapped_column(Text, primary_key=True)


class FleetDayVerdictsRow(Base):
    """Per UTC failure day, cluster and the verdict's cause-domain mask: verdicts and their node-jobs."""

    __tablename__ = "fleet_day_verdicts"

    failed_day: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster: Mapped[str] = mapped_column(Text, primary_key=True)
    domains: Mapped[int] = mapped_column(Integer, primary_key=True)  # 0: no root cause or candidate
    verdicts: Mapped[int] = mapped_column(BigInteger, nullable=False)
    node_jobs: Mapped[int] = mapped_column(BigInteger, nullable=False)


class FleetDayKeyRow(Base):
    """Per key, day and cluster: its fleet_hits rows (any role) and, for a node, the jobs it ran."""

    __tablename__ = "fleet_day_keys"
    __table_args__ = (Index("ix_fleet_day_keys_kind_failed_day_key", "kind", "failed_day", "key"),)

    kind: Mapped[str] = mapped_column(Text, primary_key=True)
    key: Mapped[str] = mapped_column(Text, primary_key=True)
    failed_day: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster: Mapped[str] = mapped_column(Text, primary_key=True)
    hits: Mapped[int] = mapped_column(BigInteger, nullable=False)
    jobs: Mapped[int] = mapped_column(BigInteger, nullable=False)


class FleetDayHitRow(Base):
    """Per kind, day, cluster, key, role (root | candidate | lead), domain mask and node: the verdicts that
    named it, and the latest failure time among them. `node` is '' where fleet_hits.node is NULL."""

    __tablename__ = "fleet_day_hits"
    __table_args__ = (Index("ix_fleet_day_hits_kind_key_failed_day", "kind", "key", "failed_day"),)

    kind: Mapped[str] = mapped_column(Text, primary_key=True)
    failed_day: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster: Mapped[str] = mapped_column(Text, primary_key=True)
    key: Mapped[str] = mapped_column(Text, primary_key=True)
    role: Mapped[str] = mapped_column(Text, primary_key=True)
    domains: Mapped[int] = mapped_column(Integer, primary_key=True)
    node: Mapped[str] = mapped_column(Text, primary_key=True)
    n: Mapped[int] = mapped_column(BigInteger, nullable=False)
    last: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)


class FleetKeyBlockRow(Base):
    """Per kind, block of BLOCK_DAYS UTC days, key and cluster: the days of the block on which the key has a
    fleet_day_keys row (`seen`, bit d for day block * BLOCK_DAYS + d) and those with jobs on it (`jobs`, a
    node's). 0004_key_blocks; store/rollups.py. Counting the keys seen in a window reads a row or two per key,
    not one per key and day."""

    __tablename__ = "fleet_key_blocks"

    kind: Mapped[str] = mapped_column(Text, primary_key=True)
    block: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(Text, primary_key=True)
    cluster: Mapped[str] = mapped_column(Text, primary_key=True)
    seen: Mapped[int] = mapped_column(BigInteger, nullable=False)
    jobs: Mapped[int] = mapped_column(BigInteger, nullable=False)


fleet_keys = cast(Table, FleetKeyRow.__table__)
fleet_day_verdicts = cast(Table, FleetDayVerdictsRow.__table__)
fleet_day_keys = cast(Table, FleetDayKeyRow.__table__)
fleet_day_hits = cast(Table, FleetDayHitRow.__table__)
fleet_key_blocks = cast(Table, FleetKeyBlockRow.__table__)
ROLLUP_TABLES = (fleet_keys, fleet_day_verdicts, fleet_day_keys, fleet_day_hits, fleet_key_blocks)


# ---------------------------------------------------------------------------
# 0006_provisional: verdicts sent while an attempt ran (watch --follow; docs/storage.md, "Provisional verdicts")
# ---------------------------------------------------------------------------


class ProvisionalRow(Base):
    """One provisional verdict: one per attempt (workload id, attempt, cluster) and cause category, the
    follower's exactly-once ledger. `final_verdict_id` and `held` are set, in the final verdict's own
    transaction, when the attempt's final verdict supersedes it (`settled_at`)."""

    __tablename__ = "provisional"
    __table_args__ = (UniqueConstraint("workload_id", "attempt", "cluster", "category"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    workload_id: Mapped[str] = mapped_column(Text, nullable=False)
    attempt: Mapped[int] = mapped_column(Integer, nullable=False)
    cluster: Mapped[str] = mapped_column(Text, nullable=False, default="")
    ref: Mapped[str] = mapped_column(Text, nullable=False)  # the scheduler's name for the job (requeue, cancel)
    category: Mapped[str] = mapped_column(Text, nullable=False)
    domain: Mapped[str] = mapped_column(Text, nullable=False)
    summary: Mapped[str] = mapped_column(Text, nullable=False)
    nodes: Mapped[list[str]] = mapped_column(JSON, nullable=False)
    first_seen: Mapped[datetime | None] = mapped_column(UTCDateTime)
    delivery: Mapped[str] = mapped_column(Text, nullable=False)  # the webhook delivery id it was sent under
    verdict_json: Mapped[str] = mapped_column(Text, nullable=False)
    sent_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, index=True)
    final_verdict_id: Mapped[int | None] = mapped_column(Id, ForeignKey("verdicts.id", ondelete="SET NULL"),
                                                         index=True)
    held: Mapped[bool | None] = mapped_column(Boolean)
    settled_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


provisional = cast(Table, ProvisionalRow.__table__)
