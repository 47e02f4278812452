"""GET /v1/verdicts, /v1/verdicts/{id} and /v1/fleet over a real SQLite store, in process (httpx ASGI transport)."""

from __future__ import annotations

import copy
from datetime import timedelta

import pytest

from firstfault import records
from firstfault.model import Verdict
from firstfault.responses import ProblemBody
from firstfault.store import VerdictStore
from tests.dashboard.conftest import NOW, Client, healthy_runs, load, repeat_failures


def test_empty_store_answers_empty_lists_not_errors(client: Client) -> None:
    r = client.get("/v1/verdicts")
    assert r.status_code == 200
    assert r.json() == {"total": 0, "limit": 50, "offset": 0, "items": []}
    f = client.get("/v1/fleet", params={"since": "7d"})
    assert f.status_code == 200
    body = f.json()
    assert body["verdicts"] == 0 and body["node_jobs"] == 0 and sum(body["failures"]) == 0
    assert [t["kind"] for t in body["tables"]] == ["nodes", "devices", "host_ports", "switch_ports", "switches",
                                                  "cables"]
    assert all(t["entries"] == [] for t in body["tables"])
    assert len(body["buckets"]) == 8  # 7 days back from noon: 8 calendar days
    missing = client.get("/v1/verdicts/1")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"


def test_list_is_newest_first_with_totals_and_paging(client: Client, store: VerdictStore,
                                                     samples: dict[str, Verdict]) -> None:
    load(store, samples, ["xid149", "cuda-oom"], age=timedelta(hours=5))
    load(store, samples, ["timeout"], age=timedelta(hours=1))
    body = client.get("/v1/verdicts").json()
    assert body["total"] == 3
    assert body["items"][0]["root_category"] == "scheduler.time_limit"
    times = [i["analyzed_at"] for i in body["items"]]
    assert times == sorted(times, reverse=True)
    page = client.get("/v1/verdicts", params={"limit": 1, "offset": 1}).json()
    assert page["total"] == 3 and len(page["items"]) == 1 and page["items"][0]["id"] == body["items"][1]["id"]


def test_filters_by_domain_outcome_category_node_and_time(client: Client, store: VerdictStore,
                                                          samples: dict[str, Verdict]) -> None:
    ids = load(store, samples)
    hw = client.get("/v1/verdicts", params={"domain": "hardware"}).json()
    assert hw["total"] == 3 and {i["attributed_domain"] for i in hw["items"]} == {"hardware"}
    two = client.get("/v1/verdicts?domain=hardware&domain=network").json()
    assert two["total"] == 4
    nvlink = client.get("/v1/verdicts", params={"category": "gpu.nvlink"}).json()
    # prefix over root causes and ambiguous candidates: the Xid 149 sample and the ambiguous one
    assert {i["id"] for i in nvlink["items"]} == {ids["xid149"], ids["ambiguous"]}
    node02 = client.get("/v1/verdicts", params={"node": "node-02"}).json()
    assert all("node-02" in i["affected_nodes"] for i in node02["items"])
    assert ids["xid149"] in {i["id"] for i in node02["items"]}
    ok = client.get("/v1/verdicts", params={"outcome": "succeeded"}).json()
    assert [i["id"] for i in ok["items"]] == [ids["ok"]]
    assert client.get("/v1/verdicts", params={"since": "30m"}).json()["total"] == 0
    assert client.get("/v1/verdicts", params={"since": "2h"}).json()["total"] == len(ids)
    assert client.get("/v1/verdicts", params={"until": "2026-11-29T10:00:00Z"}).json()["total"] == 0
    # Empty values (what an HTML form sends for "any") are no filter.
    assert client.get("/v1/verdicts?domain=&node=&since=").json()["total"] == len(ids)


def test_one_verdict_is_the_stored_document_with_its_enrichment(client: Client, store: VerdictStore,
                                                                 samples: dict[str, Verdict]) -> None:
    ids = load(store, samples, ["xid149"])
    r = client.get(f"/v1/verdicts/{ids['xid149']}")
    assert r.status_code == 200
    body = r.json()
    assert body["id"] == ids["xid149"] and body["cluster"] == "xid149"
    assert records.convert(body["verdict"], Verdict) == store.get(ids["xid149"])
    assert body["verdict"]["root_cause"]["devices"] == ["node-02/gpu3"]
    for bad in ("abc", "-1", "99999999999999999999"):
        assert client.get(f"/v1/verdicts/{bad}").status_code == 404


BAD_LIST = [
    ("domain=bogus", "domain"),
    ("outcome=exploded", "outcome"),
    ("limit=0", "limit"),
    ("limit=501", "limit"),
    ("limit=ten", "limit"),
    ("offset=-1", "offset"),
    ("since=yesterday", "since"),
    ("until=2026-13-45", "until"),
    ("since=999999w", "since"),
    ("since=9999-12-31T23:59:59-01:00", "since"),
    ("since=2026-11-20&until=2026-11-10", "since"),
    ("category=GPU%20NVLink", "category"),
    ("node=node%2002", "node"),
    ("node=%00", "node"),
    ("colour=red", "colour"),
    ("node=a&node=b", "node"),
]


@pytest.mark.parametrize(("query", "field"), BAD_LIST)
def test_bad_list_filters_are_422_naming_the_parameter(client: Client, query: str, field: str) -> None:
    r = client.get("/v1/verdicts?" + query)
    assert r.status_code == 422, r.text
    body = records.convert(r.json(), ProblemBody)
    assert body.error == "invalid_request"
    assert field in body.message
    assert any(d.loc == field for d in body.detail)


@pytest.mark.parametrize(("query", "field"), [
    ("since=soon", "since"), ("domain=ambiguous", "domain"), ("domain=none", "domain"), ("limit=0", "limit"),
    ("since=2999-01-01", "since"), ("until=1d&since=2d&extra=1", "extra"),
])
def test_bad_fleet_parameters_are_422(client: Client, query: str, field: str) -> None:
    r = client.get("/v1/fleet?" + query)
    assert r.status_code == 422, r.text
    assert r.json()["error"] == "invalid_request" and field in r.json()["message"]


def test_problem_shape_is_the_services(client: Client) -> None:
    body = records.convert(client.get("/v1/verdicts?limit=0").json(), ProblemBody)
    assert body.error == "invalid_request" and [d.loc for d in body.detail] == ["limit"]


def test_fleet_ranks_the_repeat_offender_first_and_flags_only_it(client: Client, store: VerdictStore,
                                                                 samples: dict[str, Verdict]) -> None:
    load(store, samples)
    repeat_failures(store, samples["xid149"], 5)  # node-02 gpu3, five more times this week
    # Most jobs succeed, on other nodes: they make node-02's failure rate stand out.
    healthy_runs(store, samples["ok"], 30, ["node-01", "node-03", "node-04", "node-05"])
    body = client.get("/v1/fleet", params={"since": "7d"}).json()
    nodes = {t["kind"]: t for t in body["tables"]}["nodes"]
    top = nodes["entries"][0]
    assert top["key"] == "node-02"
    assert top["root"] == 1 + 1 + 5  # the sample, the clock-skew scenario, five repeats
    assert top["candidate"] == 1  # the ambiguous sample names node-02 (network.link candidate)
    assert top["repeat_offender"] is True
    assert top["p_value"] < nodes["flag_below"]
    assert [e["key"] for e in nodes["entries"] if e["repeat_offender"]] == ["node-02"]
    assert sum(top["trend"]) == top["root"] + top["candidate"]
    devices = {t["kind"]: t for t in body["tables"]}["devices"]
    assert devices["entries"][0]["key"] == "node-02/gpu3" and devices["entries"][0]["root"] == 6
    # software causes do not count against a node unless asked for
    assert not any(e["key"] == "node-02" and e["root"] > 7 for e in nodes["entries"])
    sw = client.get("/v1/fleet", params={"since": "7d", "domain": "software"}).json()
    sw_nodes = {t["kind"]: t for t in sw["tables"]}["nodes"]["entries"]
    # the CUDA OOM sample (entries that only a lead points at are listed too, after the causes)
    assert [(e["key"], e["root"]) for e in sw_nodes if e["root"] or e["candidate"]] == [("node-02", 1)]
    assert all(e["lead"] for e in sw_nodes if not (e["root"] or e["candidate"]))


def test_fleet_ports_and_switch_ports_from_evidence(client: Client, store: VerdictStore,
                                                    samples: dict[str, Verdict]) -> None:
    load(store, samples, ["port-down", "sxid"])
    body = client.get("/v1/fleet", params={"since": "1d"}).json()
    tables = {t["kind"]: t for t in body["tables"]}
    assert {e["key"] for e in tables["host_ports"]["entries"]} >= {"mlx5_5:1"}
    assert all(e["node"] == "dgx-b200-006" for e in tables["host_ports"]["entries"])
    assert [e["key"] for e in tables["switch_ports"]["entries"]]
    assert all(e["key"].startswith("nvswitch") for e in tables["switch_ports"]["entries"])


def test_fleet_window_excludes_older_verdicts(client: Client, store: VerdictStore,
                                              samples: dict[str, Verdict]) -> None:
    repeat_failures(store, samples["xid149"], 10)  # one a day, 0..9 days back
    week = client.get("/v1/fleet", params={"since": "7d"}).json()
    assert {t["kind"]: t for t in week["tables"]}["nodes"]["entries"][0]["root"] == 7
    old = client.get("/v1/fleet", params={"since": "30d", "until": "7d"}).json()
    assert {t["kind"]: t for t in old["tables"]}["nodes"]["entries"][0]["root"] == 3
    assert sum(week["failures"]) == 7 and week["bucket_days"] == 1


def test_pages_render_and_bad_filters_are_422_pages(client: Client, store: VerdictStore,
                                                    samples: dict[str, Verdict]) -> None:
    ids = load(store, samples, ["xid149", "ambiguous", "unknown"])
    assert client.get("/").status_code == 302
    listing = client.get("/verdicts", params={"domain": "hardware"})
    assert listing.status_code == 200 and f"/verdicts/{ids['xid149']}" in listing.text
    assert f"/verdicts/{ids['ambiguous']}\"" not in listing.text
    bad = client.get("/verdicts", params={"domain": "purple"})
    assert bad.status_code == 422 and "Invalid filter" in bad.text and "domain" in bad.text
    detail = client.get(f"/verdicts/{ids['xid149']}")
    assert detail.status_code == 200 and "gpu.nvlink.signal_integrity" in detail.text
    assert 'id="timeline-data"' in detail.text and "nodes/node-02/kern.log:5" in detail.text
    amb = client.get(f"/verdicts/{ids['ambiguous']}").text
    assert "Candidate 1" in amb and "Candidate 2" in amb
    assert client.get("/verdicts/424242").status_code == 404
    assert client.get("/fleet?since=nope").status_code == 422
    assert client.get("/fleet").status_code == 200
    assert client.get("/static/app.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/static/../router.py").status_code == 404
    assert client.get("/static/nothing.css").status_code == 404


def test_html_escapes_evidence_text(client: Client, store: VerdictStore, samples: dict[str, Verdict]) -> None:
    v = samples["xid149"]
    ev = [records.replace(v.evidence[0], text="<script>alert(1)</script></script>"), *v.evidence[1:]]
    vid = store.write(records.replace(v, evidence=ev))
    html = client.get(f"/verdicts/{vid}").text
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)" in html


def test_the_router_mounts_on_the_service_app(store: VerdictStore, samples: dict[str, Verdict]) -> None:
    from firstfault.dashboard import make_router
    from firstfault.service.app import create_app
    from firstfault.service.settings import ServiceSettings

    app = create_app(ServiceSettings())
    app.include_router(make_router(lambda: store, clock=lambda: NOW))
    load(store, samples, ["xid149"])
    c = Client(app)
    assert c.get("/healthz").status_code == 200
    assert c.get("/v1/verdicts").json()["total"] == 1
    assert c.get("/v1/verdicts?limit=x").status_code == 422
    spec = c.get("/openapi.json").json()
    params = {p["name"] for p in spec["paths"]["/v1/verdicts"]["get"]["parameters"]}
    assert {"domain", "outcome", "category", "node", "since", "until", "limit", "offset"} <= params
    assert "/v1/fleet" in spec["paths"] and "/verdicts" not in spec["paths"]


def test_fleet_counts_leads_beside_causes(client: Client, store: VerdictStore, samples: dict[str, Verdict]) -> None:
    """A hang's laggard (a lead, no cause) is counted per node and GPU, never as a root cause."""
    from firstfault.model import Lead
    from tests.dashboard.conftest import NOW, variant

    for i in range(3):
        v = copy.deepcopy(variant(samples["xid149"], f"hang-{i}", analyzed_at=NOW - timedelta(hours=i + 1)))
        v.root_cause, v.attributed_domain, v.affected_nodes = None, "unknown", []
        v.leads = [Lead(kind="laggard_rank", nodes=["node-07"], ranks=[51], summary="rank 51 lagged",
                        first_seen=None, devices=["node-07/gpu3"])]
        store.write(v)
    body = client.get("/v1/fleet", params={"since": "30d"}).json()
    tables = {t["kind"]: t for t in body["tables"]}
    node = next(e for e in tables["nodes"]["entries"] if e["key"] == "node-07")
    assert (node["root"], node["candidate"], node["lead"]) == (0, 0, 3)
    assert node["repeat_offender"] is False
    dev = next(e for e in tables["devices"]["entries"] if e["key"] == "node-07/gpu3")
    assert (dev["root"], dev["lead"]) == (0, 3)


def test_verdict_page_lists_leads_and_marks_the_laggards_lane(client: Client, store: VerdictStore,
                                                              samples: dict[str, Verdict]) -> None:
    from firstfault.dashboard.detail import timeline
    from firstfault.model import Lead

    lead = Lead(kind="laggard_rank", nodes=["node-03"], ranks=[19], first_seen=None, evidence=[0],
                summary="rank 19 never entered ALLREDUCE SeqNum 48213; the 31 other ranks waited in it")
    v = records.replace(samples["xid149"], leads=[lead])
    vid = store.write(v)
    html = client.get(f"/verdicts/{vid}").text
    assert 'id="leads"' in html and "laggard_rank" in html and v.leads[0].summary.split(";")[0] in html
    assert timeline(v)["laggards"] == ["node-03"]
    assert '"laggards": ["node-03"]' in html


def test_find_redirects_an_alert_link_to_the_verdict_page(client: Client, store: VerdictStore,
                                                          samples: dict[str, Verdict]) -> None:
    from firstfault.model import Enrichment
    from firstfault.sinks.alertmanager import dashboard_link

    ids = load(store, samples, ["xid149", "ambiguous"])
    v = samples["xid149"]
    link = dashboard_link("http://dash.test/", v, Enrichment(cluster="xid149"))
    res = client.get(link)
    assert res.status_code == 302 and res.headers["location"].endswith(f"/verdicts/{ids['xid149']}")
    # Another cluster's job of the same id, or another catalog's verdict, is not this one.
    assert client.get(dashboard_link("http://dash.test", v, Enrichment(cluster="other"))).status_code == 404
    other = records.replace(v, catalog=records.replace(v.catalog, sha256="0" * 64))
    assert client.get(dashboard_link("http://dash.test", other, Enrichment(cluster="xid149"))).status_code == 404
    assert client.get("/verdicts/find?attempt=x&workload=1").status_code == 422
    assert client.get("/verdicts/find").status_code == 422
