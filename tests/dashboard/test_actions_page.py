"""The verdict page's Actions section: every drain / cordon decided on the verdict, done or refused."""

from __future__ import annotations

import re
from pathlib import Path

from alembic import command
from alembic.config import Config

from firstfault.model import Enrichment, Verdict
from firstfault.store import VerdictStore, create_store_engine
from firstfault.store.actions import ActionLedger, ActionRecord
from firstfault.store.db import MIGRATIONS, WRITE
from tests.dashboard.conftest import NOW, Client, dashboard_app


def test_the_page_lists_done_and_refused_actions(client: Client, store: VerdictStore,
                                                 samples: dict[str, Verdict]) -> None:
    vid = store.write(samples["xid149"])
    other = store.write(samples["cuda-oom"], Enrichment(cluster="other"))
    ledger = ActionLedger(store)
    base = {"verdict_id": vid, "cluster": "prod-a", "category": "gpu.nvlink.signal_integrity", "created_at": NOW}
    with ledger.locked() as conn:
        ledger.record(conn, ActionRecord(kind="drain", target="node-02", outcome="done", dry_run=False,
                                         detail="ran scontrol update nodename=node-02 state=drain <reason>", **base))
        ledger.record(conn, ActionRecord(kind="cordon", target="node-02", outcome="refused", dry_run=True,
                                         detail="rate limit: 2 cordon(s) in the last hour", **base))
    html = client.get(f"/verdicts/{vid}").text
    table = html.split('<table class="list" id="actions">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr class=\"action-(\w+)\">(.*?)</tr>", table, re.S)
    assert [r[0] for r in rows] == ["done", "refused"]
    assert "drain" in rows[0][1] and "node-02" in rows[0][1] and "2026-11-29 12:00:00Z" in rows[0][1]
    assert "&lt;reason&gt;" in rows[0][1]  # escaped like every other text on the page
    assert "dry run" in rows[1][1] and "rate limit: 2 cordon(s) in the last hour" in rows[1][1]
    # A verdict nothing was decided on has no Actions section.
    assert 'id="actions"' not in client.get(f"/verdicts/{other}").text


def test_a_store_not_yet_at_0002_actions_shows_the_page_without_actions(tmp_path: Path,
                                                                        samples: dict[str, Verdict]) -> None:
    """A dashboard opened without migrating (auto_migrate=False) on a store the Blueprint has not upgraded yet."""
    engine = create_store_engine(f"sqlite:///{tmp_path / 'old.db'}")
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.connect().execution_options(**WRITE) as conn, conn.begin():
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0002_fleet")  # the revision before the actions ledger
    old = VerdictStore(engine)
    vid = old.write(samples["xid149"])
    page = Client(dashboard_app(old)).get(f"/verdicts/{vid}")
    assert page.status_code == 200 and "gpu.nvlink.signal_integrity" in page.text
    assert 'id="actions"' not in page.text
    engine.dispose()
