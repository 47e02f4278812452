"""The verdict store: SQLite or PostgreSQL, migrated on open (docs/storage.md)."""

from firstfault.store.db import StoreError, create_store_engine, migrate
from firstfault.store.repo import (
    Fleet,
    FleetCount,
    ProcessedMark,
    ReplayEvidence,
    ReplayPacker,
    ReplayRecord,
    StoreConflict,
    StoredVerdict,
    VerdictStore,
    VerdictSummary,
)

__all__ = [
    "Fleet",
    "FleetCount",
    "ProcessedMark",
    "ReplayEvidence",
    "ReplayPacker",
    "ReplayRecord",
    "StoreConflict",
    "StoreError",
    "StoredVerdict",
    "VerdictStore",
    "VerdictSummary",
    "create_store_engine",
    "migrate",
]
