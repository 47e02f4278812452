"""Retention: drop verdicts that failed before a cutoff, in small batches, without locking writers out.

Each batch is its own short write transaction: pick at most `batch` ids of
verdicts whose failure time (`failed_at`, the fleet view's time) is before
the cutoff, oldest first, by the failed_at index, and delete them; their
child rows and fleet rows go with them (ON DELETE CASCADE), the fleet
rollups are decremented in the same transaction (store/rollups.py) and the watch
daemon's ledger (`processed`) keeps its rows with verdict_id set to NULL, so
a pruned attempt is still never attributed twice.

PostgreSQL: the batch's rows are picked FOR UPDATE SKIP LOCKED, so a batch
never waits on (or blocks) a writer touching the same rows, and new verdicts
(all after the cutoff) are never touched. A writer waits for a batch only
on a fleet_key_blocks row whose 63 days hold a pruned day too (a retention
under 63 days, or a late verdict): one transaction, milliseconds. SQLite
has one writer at a time: a batch holds the write lock for
the few milliseconds it takes, and writers queue on the busy timeout
between batches, never for the whole prune. `pause` seconds between
batches leave room for them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select

from firstfault.store import rollups
from firstfault.store import schema as t
from firstfault.store.db import WRITE
from firstfault.store.repo import VerdictStore

DEFAULT_BATCH = 1000


@dataclass(frozen=True, slots=True)
class PruneResult:
    cutoff: datetime
    deleted: int
    batches: int


def count_older(store: VerdictStore, cutoff: datetime) -> int:
    """How many verdicts failed before `cutoff` (what prune would delete)."""
    with store.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(t.verdicts)
                                .where(t.verdicts.c.failed_at < cutoff)).scalar_one())


def prune(store: VerdictStore, cutoff: datetime, *, batch: int = DEFAULT_BATCH, pause: float = 0.0,
          max_batches: int | None = None, on_batch: Callable[[int], None] | None = None) -> PruneResult:
    """Delete every verdict whose failure time is before `cutoff`, `batch` at a time.

    Stops when none is left (or after `max_batches`). `on_batch(deleted)`
    is called after each committed batch (progress, tests).
    """
    if batch < 1:
        raise ValueError("batch must be at least 1")
    v = t.verdicts.c
    deleted = batches = 0
    with store.engine.connect() as conn:
        blocks = rollups.has_blocks(conn)
    while max_batches is None or batches < max_batches:
        pick = select(v.id).where(v.failed_at < cutoff).order_by(v.failed_at, v.id).limit(batch)
        with store.engine.connect().execution_options(**WRITE) as conn, conn.begin():
            if conn.dialect.name == "postgresql":
                pick = pick.with_for_update(skip_locked=True)
            ids = list(conn.execute(pick).scalars())
            if ids:
                taken = rollups.remove(conn, ids, blocks=blocks)  # the fleet rollups, in the same transaction
                conn.execute(delete(t.verdicts).where(v.id.in_(ids)))
                rollups.fix_last(conn, taken)
        if not ids:
            break
        deleted += len(ids)
        batches += 1
        if on_batch is not None:
            on_batch(len(ids))
        if pause > 0:
            time.sleep(pause)
    return PruneResult(cutoff, deleted, batches)
