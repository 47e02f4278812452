"""Bulk-loading verdicts into a PostgreSQL store with COPY, with the rows the write path makes.

For the store's scale bench (bench/store_scale.py) and its plan test (tests/store/test_plans.py): the
rows of each verdict are made by the store's own functions (repo._verdict_row, child_rows,
fleet_rows_of) and the daily rollups by rollups.deltas / apply, so a loaded database holds what as
many `VerdictStore.write` calls would have written, at COPY speed.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import psycopg
from sqlalchemy import Connection

from firstfault.model import Enrichment, Verdict
from firstfault.store import rollups
from firstfault.store import schema as t
from firstfault.store.repo import _verdict_row, child_rows, fleet_rows_of

TABLES = ["verdicts", *(tb.name for tb in t.CHILD_TABLES), *(tb.name for tb in t.FLEET_TABLES)]
JSON_COLS = {("verdicts", "links"), ("verdicts", "previous_attempts"), ("causes", "nodes"), ("symptoms", "nodes")}


def _columns(table: str) -> list[str]:
    cols = [c.name for c in t.metadata.tables[table].columns]
    return cols if table == "verdicts" else [c for c in cols if c != "id"]


COLUMNS = {tb: _columns(tb) for tb in TABLES}


class Batch:
    """The rows of some verdicts, table by table, until `copy` writes them in one transaction."""

    def __init__(self) -> None:
        self.rows: dict[str, list[dict[str, Any]]] = {tb: [] for tb in TABLES}
        self.failed: dict[int, tuple[datetime, str]] = {}  # verdict id -> (failure time, cluster)

    def add(self, v: Verdict, enr: Enrichment, vid: int, analyzed_at: datetime) -> None:
        row = _verdict_row(v, enr, analyzed_at)
        row["id"] = vid
        self.rows["verdicts"].append(row)
        self.failed[vid] = (row["failed_at"], row["cluster"])
        children = child_rows(v, vid)
        for name, rs in children.items():
            self.rows[name] += rs
        hits, exposure = fleet_rows_of(v, vid, row, children)
        self.rows["fleet_hits"] += hits
        self.rows["fleet_exposure"] += exposure

    def copy(self, sconn: Connection) -> None:
        """COPY every table's rows and upsert their rollups on `sconn` (the caller commits)."""
        conn = sconn.connection.driver_connection  # psycopg's, for COPY, in the same transaction as the rollups
        assert isinstance(conn, psycopg.Connection)
        with conn.cursor() as cur:
            for tb in TABLES:
                if not self.rows[tb]:
                    continue
                cols = COLUMNS[tb]
                with cur.copy(f"COPY {tb} ({', '.join(cols)}) FROM STDIN") as cp:
                    for r in self.rows[tb]:
                        cp.write_row([json.dumps(r[c]) if (tb, c) in JSON_COLS else r[c] for c in cols])
        # The daily rollups by the write path's own functions (one upsert per key of the batch).
        rollups.apply(sconn, rollups.deltas(self.failed, self.rows["fleet_hits"], self.rows["fleet_exposure"]))
