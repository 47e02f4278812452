"""`count(category=...)` counts from the causes alone; it must still say how many rows `list` pages through.

For each category prefix, alone and with the verdict-side filters beside it
(outcome, domain, node, since), on SQLite and the real PostgreSQL of the
suite: count equals the length of the unpaged list.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from firstfault.model import Enrichment
from firstfault.store import VerdictStore
from tests.store.contract import BUNDLES, at, scenario
from tests.store.pg_harness import store_url

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)]
T0 = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VerdictStore]:
    with store_url(request.param, tmp_path) as url, VerdictStore.open(url) as s:
        yield s


def test_category_count_equals_the_listed_rows(store: VerdictStore) -> None:
    for day in range(4):
        for b in BUNDLES:
            v = scenario(b, id=f"{b}-{day}")
            store.write(at(v, T0 + timedelta(days=day, hours=3)), Enrichment(cluster="c"))
    node = sorted(scenario("hw-nvlink-xid149-showcase").affected_nodes)[0]
    filters = [{}, {"outcome": "failed"}, {"domain": "hardware"}, {"node": node},
               {"since": T0 + timedelta(days=2)}, {"domain": ["hardware", "ambiguous"], "since": T0}]
    counted = 0
    for category in ("gpu", "gpu.nvlink", "network", "app.cuda_oom", "nothing.here"):
        for f in filters:
            n = store.count(category=category, **f)  # type: ignore[arg-type]
            assert n == len(store.list(category=category, limit=10_000, **f)), (category, f)  # type: ignore[arg-type]
            counted += n
    assert store.count(category="gpu") == 4 * 3  # xid149, sxid and the ambiguous one's candidate, 4 days
    assert counted > 0
