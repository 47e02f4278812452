"""PromQL connector against a REAL Prometheus (Debian prometheus 2.42).

History (tests/fixtures/prom/dcgm_node_history.om, 09:30-10:40 UTC on
2026-10-20, 30 s samples) is backfilled with promtool before the server
starts: dcgm-exporter's Xid gauge and ECC DBE counter with a `Hostname`
label, node_exporter's IB link_downed counter with `instance=host:9100`.
gpu-a02 GPU 1 counts 2 uncorrectable ECC errors at 10:13:30 and reports
Xid 79 at 10:14:00; gpu-a03 mlx5_0 goes link-down at 10:20:00; gpu-a04
GPU 0 holds an old Xid 13 from before the window (a baseline, no event);
gpu-z99 (not in the allocation) counts ECC errors that must never be read.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from firstfault.analysis.analyze import Analysis, Analyzer
from firstfault.bundle import Context, WindowSpec, WorkloadSpec
from firstfault.collect.http import HttpOptions
from firstfault.collect.promql import PromQLConnector, build_query
from firstfault.extract.metric_conditions import metric_names
from tests.harness.prom_harness import Prometheus, missing_binaries, prometheus

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "prom" / "dcgm_node_history.om"
NODES = ["gpu-a01", "gpu-a02", "gpu-a03", "gpu-a04"]


def _ctx(nodes: list[str], start: str, end: str) -> Context:
    return Context.from_spec(WorkloadSpec(id="9002", name="llm", scheduler="slurm",
                                          window=WindowSpec(start=start, end=end), nodes=nodes,
                                          terminal_state="FAILED"))


def _t(hms: str) -> datetime:
    return datetime.fromisoformat(f"2026-10-20T{hms}+00:00").astimezone(UTC)


@pytest.fixture(scope="module")
def prom(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    missing = missing_binaries()
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    with prometheus(tmp_path_factory.mktemp("prom"), [FIXTURE]) as p:
        yield p


def _collect(conn: PromQLConnector, ctx: Context) -> tuple[Analysis, list[str]]:
    analysis = Analyzer().start(ctx)
    files: list[str] = []
    add = analysis.add_document

    def spy(source: str, fmt: str | None, file: str, data: bytes) -> tuple[int, list[tuple[int | None, str]]]:
        assert (source, fmt) == ("metrics", "prometheus-json")
        files.append(file)
        return add(source, fmt, file, data)

    analysis.add_document = spy  # type: ignore[method-assign]
    conn.collect(ctx, metric_names(), analysis)
    return analysis, files


# -- query building (no server) ------------------------------------------------------


def test_query_restricts_names_and_nodes_with_escaped_regexes() -> None:
    q = build_query(["b_metric", "a_metric"], ["gpu.a01", 'we"ird'], ["Hostname", "instance"])
    assert q == (
        '{__name__=~"a_metric|b_metric", Hostname=~"gpu\\\\.a01|we\\"ird"} or '
        '{__name__=~"a_metric|b_metric", instance=~"(gpu\\\\.a01|we\\"ird)(:[0-9]+)?"}'
    )


def test_a_thousand_nodes_make_few_queries() -> None:
    conn = PromQLConnector("http://127.0.0.1:9", nodes_per_query=128)
    queries = conn.queries([f"n{i:04d}" for i in range(1000)], metric_names())
    assert len(queries) == 8  # 1000 nodes / 128 per query, every catalog metric in each
    assert all(len(q) < 8000 for q in queries)


def test_query_parameters_are_url_encoded_and_start_before_the_window() -> None:
    seen: list[httpx.URL] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req.url)
        return httpx.Response(200, json={"status": "success", "data": {"resultType": "matrix", "result": []}})

    ctx = _ctx(NODES, "2026-10-20T10:00:00Z", "2026-10-20T10:30:00Z")
    conn = PromQLConnector("http://prom.test", http=HttpOptions(transport=httpx.MockTransport(handler)))
    analysis = Analyzer().start(ctx)
    conn.collect(ctx, metric_names(), analysis)
    assert len(seen) == 1
    raw = str(seen[0])
    assert "%7B__name__%3D~%22" in raw and "[" not in raw.split("?", 1)[1]
    params = seen[0].params
    assert float(params["start"]) == _t("09:45:00").timestamp()  # 15 min of baseline before the start
    assert float(params["end"]) == _t("10:35:00").timestamp()
    assert params["step"] == "30"
    assert analysis.coverage[0].status == "empty"


def test_unreachable_prometheus_is_an_error_not_an_exception() -> None:
    ctx = _ctx(NODES, "2026-10-20T10:00:00Z", "2026-10-20T10:30:00Z")
    sleeps: list[float] = []
    conn = PromQLConnector("http://127.0.0.1:9", http=HttpOptions(retries=2, sleep=sleeps.append,
                                                                  connect_timeout=0.5))
    analysis = Analyzer().start(ctx)
    conn.collect(ctx, metric_names(), analysis)
    assert sleeps == [0.5, 1.0]  # bounded, exponential
    assert len(analysis.errors) == 1
    err = analysis.errors[0]
    assert err.source == "metrics" and err.file is not None and err.file.startswith("promql:{__name__")
    assert "connection failed" in err.message and "after 3 attempts" in err.message
    assert analysis.coverage[0].status == "error"


# -- against the real Prometheus ------------------------------------------------------


@pytest.mark.integration
def test_backfilled_history_gives_the_metric_conditions(prom: Prometheus) -> None:
    ctx = _ctx(NODES, "2026-10-20T10:00:00Z", "2026-10-20T10:30:00Z")
    analysis, files = _collect(PromQLConnector(prom.url, node_label=("Hostname", "instance")), ctx)
    assert len(files) == 1 and files[0].startswith("promql:{__name__=~")
    assert analysis.errors == []
    conds = sorted(
        (e.time, e.node, e.device, e.fields["condition"], e.t_lo)
        for e in analysis.store.events if e.kind == "metric.condition"
    )
    assert conds == [
        (_t("10:13:30"), "gpu-a02", "gpu1", "ecc_dbe_increase", _t("10:13:00")),
        (_t("10:14:00"), "gpu-a02", "gpu1", "xid_reported", _t("10:13:30")),
        (_t("10:20:00"), "gpu-a03", "mlx5_0", "ib_link_downed_increase", _t("10:19:30")),
    ]
    xids = [e for e in analysis.store.events if e.kind == "gpu.xid"]
    assert [(x.node, x.device, x.fields["xid"], x.fields["via"]) for x in xids] == [("gpu-a02", "gpu1", 79, "metrics")]
    assert all(e.node != "gpu-z99" for e in analysis.store.events)
    cov = analysis.coverage
    assert [(c.source, c.status, c.nodes_seen, c.nodes_expected) for c in cov] == [("metrics", "complete", 4, 4)]
    verdict = analysis.finish()
    # A DBE on gpu-a02, then that GPU falls off the bus 30 s later: one failing device, and the
    # earliest fault is where it began; the later IB link of gpu-a03 is an independent finding.
    assert verdict.attributed_domain == "hardware"
    assert verdict.root_cause is not None and verdict.root_cause.category == "gpu.memory"
    assert verdict.affected_nodes == ["gpu-a02"]
    assert [c.category for c in verdict.secondary_causes] == ["network.link"]


@pytest.mark.integration
def test_node_exporter_only_attempt_gets_the_ib_verdict(prom: Prometheus) -> None:
    ctx = _ctx(["gpu-a03", "gpu-a04"], "2026-10-20T10:15:00Z", "2026-10-20T10:30:00Z")
    analysis, _ = _collect(PromQLConnector(prom.url, node_label=("Hostname", "instance")), ctx)
    verdict = analysis.finish()
    assert verdict.attributed_domain == "network"
    assert verdict.root_cause is not None
    assert verdict.root_cause.category == "network.link"
    assert verdict.root_cause.nodes == ["gpu-a03"]
    ev = [e for e in verdict.evidence if e.role == "cause"]
    assert ev and ev[0].file is not None and ev[0].file.startswith("promql:")


@pytest.mark.integration
def test_instance_label_alone_reads_node_exporter_only(prom: Prometheus) -> None:
    ctx = _ctx(NODES, "2026-10-20T10:00:00Z", "2026-10-20T10:30:00Z")
    analysis, _ = _collect(PromQLConnector(prom.url, node_label="instance"), ctx)
    conds = {(e.node, e.fields["condition"]) for e in analysis.store.events if e.kind == "metric.condition"}
    assert conds == {("gpu-a03", "ib_link_downed_increase")}


@pytest.mark.integration
def test_a_label_the_reader_does_not_know_is_mapped_to_the_node(prom: Prometheus) -> None:
    # `job` is not a node label, but it shows the copy into Hostname: every series lands on "node-exporter"
    # only if it is in the allocation, so with that name as the only node the IB counters are read.
    ctx = _ctx(["node-exporter"], "2026-10-20T10:00:00Z", "2026-10-20T10:30:00Z")
    analysis, _ = _collect(PromQLConnector(prom.url, node_label="job"), ctx)
    nodes = {e.node for e in analysis.store.events if e.kind == "metric.condition"}
    assert nodes == {"node-exporter"}
    assert analysis.coverage[0].nodes_seen == 1


@pytest.mark.integration
def test_a_rejected_query_is_recorded_and_the_others_go_on(prom: Prometheus) -> None:
    ctx = _ctx(NODES, "2026-10-20T10:00:00Z", "2026-10-20T10:30:00Z")
    # A label name PromQL cannot parse: Prometheus answers 400 bad_data for that query only.
    conn = PromQLConnector(prom.url, node_label=("Hostname", "instance"), metrics_per_query=12)
    good = conn.queries(NODES, metric_names())
    assert len(good) >= 2  # the catalog's metrics, 12 to a query
    bad = PromQLConnector(prom.url, node_label=("Hostname", "instance"), metrics_per_query=12)
    broken = [good[0], good[1].replace("instance=~", "in-stance=~"), *good[2:]]
    bad.queries = lambda nodes, metrics: broken  # type: ignore[method-assign]
    analysis, files = _collect(bad, ctx)
    assert len(files) == len(good) - 1
    assert len(analysis.errors) == 1
    msg = analysis.errors[0].message
    assert "HTTP 400" in msg and "bad_data" in msg and "/api/v1/query_range?query=" in msg
    assert analysis.coverage[0].status == "partial"
    assert f"1 of {len(good)} request(s) failed" in (analysis.coverage[0].note or "")


@pytest.mark.integration
def test_followed_by_instant_queries_the_conditions_come_once_as_the_samples_do(prom: Prometheus) -> None:
    """watch --follow (collect/follow.py PromFollow): an instant query every 30 s of the history, as if it were
    now; each condition is fed once, when its samples have been read (gpu-a02's ECC increase at 10:13:30, its
    Xid at 10:14:00), and the running attempt is then judged a hardware cause on gpu-a02."""
    from firstfault.collect.follow import PromFollow

    ctx = Context.from_spec(WorkloadSpec(id="9002", name="llm", scheduler="slurm", nodes=NODES,
                                         window=WindowSpec(start="2026-10-20T10:00:00Z")))
    conn = PromQLConnector(prom.url, node_label="Hostname", http=HttpOptions(retries=1))
    follow = PromFollow(conn, ctx, metric_names(), interval=0.0)
    analysis = Analyzer().start(ctx)
    fed: dict[str, int] = {}
    try:
        for k in range(0, 41):  # 10:00:00 .. 10:20:00
            now = _t("10:00:00").replace(minute=k // 2, second=30 * (k % 2))
            fed[now.strftime("%H:%M:%S")] = follow.poll(analysis, now)
            if now == _t("10:13:00"):
                assert analysis.finish(provisional=True).root_cause is None
    finally:
        follow.close()
    # 10:13:30 the ECC increase; 10:14:00 the Xid gauge's condition and the Xid it reports. Once each.
    assert {t: n for t, n in fed.items() if n} == {"10:13:30": 1, "10:14:00": 2}
    v = analysis.finish(provisional=True)
    assert v.root_cause is not None and v.root_cause.nodes == ["gpu-a02"] and v.root_cause.domain == "hardware"
    assert all("gpu-z99" not in (e.node or "") for e in v.evidence)
