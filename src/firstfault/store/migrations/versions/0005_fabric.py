"""evidence: the cable of the port an evidence item names (a fabric source's switch end and other end).

Revision ID: 0005_fabric
Revises: 0004_key_blocks
Create Date: 2026-12-03

The verdict's evidence carries a `cable` when the analysis had a fabric
source (engine/fabric.py); these columns spell it out so that the fleet's
switch, switch-port and cable counts (store/fleetrows.py, kinds `switch`,
`switch_port`, `cable`) and the reference reading (dashboard/queries.py) can
read it.

The verdicts whose document holds a cable (written to a store not yet at
this revision, opened without migrating, or spelled out again by an earlier
revision from their child rows, which had no cable columns) are spelled out
again here, BATCH at a time, by the write path's own functions
(store/repo.py child_rows and fleet_rows_of, from the document): their
evidence rows get the cable columns, their fleet rows are replaced, and the
rollups take the old rows away and the new ones in (store/rollups.py), as
retention and the write path do. Downgrade drops the columns (the fleet rows
of cabled verdicts keep their switch and cable kinds; nothing earlier reads
them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0005_fabric"
down_revision: str | None = "0004_key_blocks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("cable_switch", "cable_switch_port", "cable_node", "cable_port")
BATCH = 200


def upgrade() -> None:
    for name in COLUMNS:
        op.add_column("evidence", sa.Column(name, sa.Text(), nullable=True))
    _respell(op.get_bind())


def _respell(bind: sa.Connection) -> None:
    from firstfault import records
    from firstfault.model import Verdict
    from firstfault.store import rollups
    from firstfault.store import schema as t
    from firstfault.store.repo import child_rows, fleet_rows_of

    v = t.verdicts.c
    ids = list(bind.execute(sa.select(v.id).where(v.verdict_json.contains('"cable":', autoescape=True))
                            .order_by(v.id)).scalars())
    rolled = sa.inspect(bind).has_table(t.fleet_day_verdicts.name)
    blocks = rolled and rollups.has_blocks(bind)
    for i in range(0, len(ids), BATCH):
        chunk = ids[i:i + BATCH]
        taken = rollups.remove(bind, chunk, blocks=blocks) if rolled else None
        bind.execute(sa.delete(t.fleet_hits).where(t.fleet_hits.c.verdict_id.in_(chunk)))
        bind.execute(sa.delete(t.fleet_exposure).where(t.fleet_exposure.c.verdict_id.in_(chunk)))
        hits: list[dict[str, Any]] = []
        exposure: list[dict[str, Any]] = []
        when: dict[int, tuple[Any, str]] = {}
        for vid, cluster, failed_at, doc in bind.execute(
                sa.select(v.id, v.cluster, v.failed_at, v.verdict_json).where(v.id.in_(chunk))):
            verdict = records.decode(doc, Verdict)
            children = child_rows(verdict, vid)
            for pos, row in enumerate(children["evidence"]):
                if row["cable_switch"] is not None:
                    bind.execute(sa.update(t.evidence)
                                 .where(t.evidence.c.verdict_id == vid, t.evidence.c.position == pos)
                                 .values({c: row[c] for c in COLUMNS}))
            h, x = fleet_rows_of(verdict, vid, {"failed_at": failed_at, "cluster": cluster}, children)
            hits += h
            exposure += x
            when[vid] = (failed_at, cluster)
        for table, rows in ((t.fleet_hits, hits), (t.fleet_exposure, exposure)):
            if rows:
                bind.execute(sa.insert(table), rows)
        if rolled:
            rollups.apply(bind, rollups.deltas(when, hits, exposure), blocks=blocks)
            assert taken is not None
            rollups.fix_last(bind, taken)


def downgrade() -> None:
    for name in reversed(COLUMNS):
        op.drop_column("evidence", name)
