"""The dashboard's running attempts: provisional verdicts (watch --follow) listed with a "running" badge, their
page, the JSON API, and the final verdict's "superseded" section. The provisional verdict is the engine's own,
built from the showcase bundle (examples/nvlink-xid149) judged as its attempt ran; a real SQLite store."""

from __future__ import annotations

import re

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import Context, load_bundle
from firstfault.collect.evidence import collect_bundle
from firstfault.model import Enrichment, Superseded, Verdict
from firstfault.store import VerdictStore
from firstfault.store.provisional import ProvisionalLedger
from tests.dashboard.conftest import EXAMPLES, NOW, Client


def _provisional() -> Verdict:
    b = load_bundle(str(EXAMPLES / "nvlink-xid149"))
    wl = records.replace(b.workload, terminal_state=None, exit_code=None,
                         window=records.replace(b.workload.window, end=None))
    b.context = Context.from_spec(wl)
    b.sources = [s for s in b.sources if s.spec.kind != "scheduler"]
    an = Analyzer()
    analysis = an.start(b.context)
    collect_bundle(an, b, analysis)
    return analysis.finish(now=NOW, provisional=True)


def test_a_running_attempt_is_listed_with_its_badge_until_its_final_verdict(client: Client,
                                                                           store: VerdictStore) -> None:
    v = _provisional()
    assert v.root_cause is not None
    ledger = ProvisionalLedger(store)
    pid, new = ledger.record(v, cluster="eos", ref="4242", delivery="d-1")
    assert new and ledger.record(v, cluster="eos", ref="4242", delivery="d-1") == (pid, False)
    page = client.get("/verdicts").text
    row = re.search(rf'<tr data-provisional="{pid}".*?</tr>', page, re.S)
    assert row is not None and 'class="badge running"' in row.group(0) and v.root_cause.category in row.group(0)
    api = client.get("/v1/provisional").json()
    assert [(p["id"], p["category"], p["held"]) for p in api] == [(pid, v.root_cause.category, None)]
    one = client.get(f"/provisional/{pid}")
    assert one.status_code == 200 and "Provisional: sent while the attempt ran" in one.text
    assert client.get(f"/v1/provisional/{pid}").json()["verdict"]["provisional"] is True
    # An alert's link (workload, attempt, cluster) leads to it while no final verdict is stored.
    found = client.get("/verdicts/find", params={"workload": v.workload.id, "attempt": "0", "cluster": "eos"},
                       follow_redirects=False)
    assert found.status_code == 302 and found.headers["location"].endswith(f"/provisional/{pid}")

    final = Analyzer().analyze_path(str(EXAMPLES / "nvlink-xid149"), now=NOW)
    final = records.replace(final, supersedes=[Superseded(
        category=v.root_cause.category, nodes=v.root_cause.nodes, first_seen=v.root_cause.first_seen,
        sent_at="2026-11-29T11:00:00Z", delivery="d-1", held=True)])
    vid = store.write(final, Enrichment(cluster="eos"), also=lambda conn, vid: ledger.settle(conn, {pid: True}, vid))
    assert 'data-provisional' not in client.get("/verdicts").text  # no longer running
    assert client.get("/v1/provisional").json() == []
    page = client.get(f"/verdicts/{vid}").text
    assert 'id="supersedes"' in page and "<b>held</b>" in page and "running</span>" not in page
    settled = client.get(f"/provisional/{pid}").text
    assert f'href="/verdicts/{vid}"' in settled
    assert client.get(f"/v1/provisional/{pid}").json()["final_verdict_id"] == vid


def test_a_missing_provisional_verdict_is_404(client: Client) -> None:
    assert client.get("/provisional/7").status_code == 404
    assert client.get("/provisional/x").status_code == 404
    assert client.get("/v1/provisional/7").json()["error"] == "not_found"
