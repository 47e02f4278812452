"""Write verdicts to the verdict store (SQLite or PostgreSQL) through VerdictStore."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy.exc import SQLAlchemyError

from firstfault.model import Enrichment, Verdict
from firstfault.sinks.base import SinkError
from firstfault.store import ProcessedMark, StoreError, VerdictStore

if TYPE_CHECKING:
    from firstfault.store.repo import ReplayPacker


class DatabaseSink:
    """One transaction per verdict, idempotent per (job, attempt, catalog, cluster).

    The store is opened (and migrated) on the first write, so building the
    sink never touches the database; `last_id` is the id of the last verdict
    written (or found already stored).
    """

    name = "database"
    takes_evidence = True  # the pipeline hands over what the verdict was judged on (catalog replay)

    def __init__(self, url: str | None = None, *, store: VerdictStore | None = None,
                 replay_cap: int | None = None) -> None:
        if (url is None) == (store is None):
            raise ValueError("DatabaseSink needs a store URL or a VerdictStore (one of them)")
        self.url = url
        self._store = store
        self._owned = store is None
        self.last_id: int | None = None
        self.replay_cap = replay_cap

    @property
    def store(self) -> VerdictStore:
        if self._store is None:
            assert self.url is not None
            try:
                self._store = (VerdictStore.open(self.url) if self.replay_cap is None
                               else VerdictStore.open(self.url, replay_cap=self.replay_cap))
            except StoreError as e:
                raise SinkError(str(e)) from e
        return self._store

    def write(self, verdict: Verdict, enrichment: Enrichment, mark: ProcessedMark | None = None,
              evidence: ReplayPacker | None = None) -> None:
        try:
            self.last_id = self.store.write(verdict, enrichment, mark=mark, evidence=evidence)
        except StoreError as e:  # e.g. the key is stored already for another attempt: refused, and said so
            raise SinkError(str(e)) from e
        except SQLAlchemyError as e:
            raise SinkError(f"verdict store write failed for workload {verdict.workload.id}: "
                            f"{type(e).__name__}: {e}") from e

    def close(self) -> None:
        if self._store is not None and self._owned:
            self._store.close()
            self._store = None
