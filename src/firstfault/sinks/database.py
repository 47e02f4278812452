"""Write verdicts to the verdict store (SQLite or PostgreSQL) through VerdictStore."""

from __future__ import annotations

from sqlalchemy.exc import SQLAlchemyError

from firstfault.model import Enrichment, Verdict
from firstfault.sinks import SinkError
from firstfault.store import ProcessedMark, StoreError, VerdictStore


class DatabaseSink:
    """One transaction per verdict, idempotent per (job, attempt, catalog, cluster).

    The store is opened (and migrated) on the first write, so building the
    sink never touches the database; `last_id` is the id of the last verdict
    written (or found already stored).
    """

    name = "database"

    def __init__(self, url: str | None = None, *, store: VerdictStore | None = None) -> None:
        if (url is None) == (store is None):
            raise ValueError("DatabaseSink needs a store URL or a VerdictStore (one of them)")
        self.url = url
        self._store = store
        self._owned = store is None
        self.last_id: int | None = None

    @property
    def store(self) -> VerdictStore:
        if self._store is None:
            assert self.url is not None
            try:
                self._store = VerdictStore.open(self.url)
            except StoreError as e:
                raise SinkError(str(e)) from e
        return self._store

    def write(self, verdict: Verdict, enrichment: Enrichment, mark: ProcessedMark | None = None) -> None:
        try:
            self.last_id = self.store.write(verdict, enrichment, mark=mark)
        except StoreError as e:  # e.g. the key is stored already for another attempt: refused, and said so
            raise SinkError(str(e)) from e
        except SQLAlchemyError as e:
            raise SinkError(f"verdict store write failed for workload {verdict.workload.id}: "
                            f"{type(e).__name__}: {e}") from e

    def close(self) -> None:
        if self._store is not None and self._owned:
            self._store.close()
            self._store = None
