"""The verdict store: SQLite or PostgreSQL, migrated on open (docs/storage.md).

Names resolve on first use, so importing a light submodule (store/cli.py,
the `firstfault store` commands) does not import SQLAlchemy and Alembic: the
base install's CLI must load without the `blueprint` extra.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from firstfault.store.db import StoreError, create_store_engine, migrate, must_exist
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

_DB = {"StoreError", "create_store_engine", "migrate", "must_exist"}

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
    "must_exist",
]


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module 'firstfault.store' has no attribute {name!r}")
    value = getattr(import_module("firstfault.store.db" if name in _DB else "firstfault.store.repo"), name)
    globals()[name] = value
    return value
