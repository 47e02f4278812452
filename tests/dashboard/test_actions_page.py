"""The verdict page's Actions section: every drain / cordon decided on the verdict, done or refused."""

from __future__ import annotations

import re

from firstfault.blueprint.base import Enrichment
from firstfault.model import Verdict
from firstfault.store import VerdictStore
from firstfault.store.actions import ActionLedger, ActionRecord
from tests.dashboard.conftest import NOW, Client


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
