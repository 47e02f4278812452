"""AlertmanagerSink against a real Alertmanager (tests/sinks/am_harness.py), listed by its own API.

Expected labels come from the scenarios' descriptions (tests/scenarios/*/expected.yaml), decided
before the tool ran: the showcase's cause is NVLink on node-02 GPU 3, the mlx5 scenario's is
the rail-3 HCA port mlx5_5 of dgx-b200-006, the ambiguous one names node-01 (GPU memory) and
node-03 (host OOM).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.blueprint.pipeline import Pipeline
from firstfault.model import Enrichment, Verdict
from firstfault.sinks import SinkError
from firstfault.sinks.alertmanager import AlertmanagerDeliveryError, AlertmanagerSink, alerts_for
from firstfault.store import VerdictStore
from tests.sinks.am_harness import Alertmanager, alertmanager, binary

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


@pytest.fixture(scope="module")
def verdicts() -> dict[str, Verdict]:
    an = Analyzer()
    names = ("hw-nvlink-xid149-showcase", "amb-xid48-hostoom", "sw-segfault", "net-ib-port-down-mlx5",
             "ok-completed-nccl-noise")
    return {n: an.analyze_path(str(SCENARIOS / n)) for n in names}


@pytest.fixture(scope="module")
def am(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Alertmanager]:
    if binary() is None:
        pytest.skip("not installed: prometheus-alertmanager")
    with alertmanager(tmp_path_factory.mktemp("am")) as a:
        yield a


def listed(am: Alertmanager, cluster: str) -> list[dict[str, Any]]:
    return am.alerts(filter=f'cluster="{cluster}"')


def sink(am: Alertmanager | str, **kw: Any) -> AlertmanagerSink:
    url = am if isinstance(am, str) else am.url
    kw.setdefault("dashboard_url", "https://firstfault.example/ui/")
    return AlertmanagerSink(url, sleep=kw.pop("sleep", lambda _s: None), **kw)


@pytest.mark.integration
def test_a_hardware_verdict_is_listed_with_its_labels(am: Alertmanager, verdicts: dict[str, Verdict]) -> None:
    v = verdicts["hw-nvlink-xid149-showcase"]
    enr = Enrichment(cluster="eos-hw", owner="alice")
    with sink(am, labels={"severity": "page"}) as s:
        s.write(v, enr)
        assert s.last is not None and s.last.ok and s.last.alerts == 1
    (alert,) = listed(am, "eos-hw")
    lab = alert["labels"]
    assert lab["alertname"] == "FirstfaultVerdict" and lab["severity"] == "page"
    assert lab["domain"] == "hardware" and lab["category"].startswith("gpu.nvlink")
    assert (lab["node"], lab["gpu"]) == ("node-02", "gpu3")
    assert (lab["cluster"], lab["workload"], lab["attempt"], lab["outcome"]) == ("eos-hw", v.workload.id, "0",
                                                                                "failed")
    assert "candidate_domain" not in lab
    ann = alert["annotations"]
    assert v.root_cause is not None and ann["summary"] == v.root_cause.summary
    assert ann["recommended_action"] == v.root_cause.recommended_action and ann["recommended_action"]
    link = ("https://firstfault.example/ui/verdicts/find?workload=" + v.workload.id + "&attempt=0&cluster=eos-hw"
            "&catalog=" + v.catalog.sha256)
    assert ann["dashboard"] == link and alert["generatorURL"] == link
    assert alert["status"]["state"] == "active"
    # startsAt: when the cause was first seen (10:03:07 in the scenario), not when it was analysed.
    starts = datetime.fromisoformat(alert["startsAt"].replace("Z", "+00:00"))
    assert starts.strftime("%H:%M:%S") == "10:03:07"
    ends = datetime.fromisoformat(alert["endsAt"].replace("Z", "+00:00"))
    assert timedelta(hours=5, minutes=59) < ends - datetime.now(UTC) <= timedelta(hours=6)


@pytest.mark.integration
def test_a_repeat_updates_the_alert_instead_of_adding_one(am: Alertmanager, verdicts: dict[str, Verdict]) -> None:
    v = verdicts["hw-nvlink-xid149-showcase"]
    enr = Enrichment(cluster="eos-repeat")
    with sink(am) as s:
        s.write(v, enr)
        first = listed(am, "eos-repeat")
        # A rerun: analysed again later (another analyzed_at), sent again.
        s.write(records.replace(v, analyzed_at="2031-01-01T00:00:00.000000Z"), enr)
        s.write(v, enr)
    again = listed(am, "eos-repeat")
    assert len(first) == len(again) == 1
    assert first[0]["fingerprint"] == again[0]["fingerprint"]
    # ...while another attempt of the same job is another alert.
    wl = records.replace(v.workload, attempt=1)
    with sink(am) as s:
        s.write(records.replace(v, workload=wl), enr)
    assert sorted(a["labels"]["attempt"] for a in listed(am, "eos-repeat")) == ["0", "1"]


@pytest.mark.integration
def test_an_ambiguous_verdict_alerts_once_per_candidate(am: Alertmanager, verdicts: dict[str, Verdict]) -> None:
    v = verdicts["amb-xid48-hostoom"]
    with sink(am) as s:
        s.write(v, Enrichment(cluster="eos-amb"))
    got = {(a["labels"]["category"], a["labels"]["node"]): a for a in listed(am, "eos-amb")}
    assert set(got) == {("gpu.memory", "node-01"), ("host.oom", "node-03")}
    assert {a["labels"]["domain"] for a in got.values()} == {"ambiguous"}
    assert got[("gpu.memory", "node-01")]["labels"]["candidate_domain"] == "hardware"
    assert got[("gpu.memory", "node-01")]["labels"]["gpu"] == "gpu2"
    assert all(a["annotations"]["summary"].startswith("ambiguous, one candidate: ") for a in got.values())


@pytest.mark.integration
def test_a_network_verdict_names_the_port(am: Alertmanager, verdicts: dict[str, Verdict]) -> None:
    v = verdicts["net-ib-port-down-mlx5"]
    with sink(am) as s:
        s.write(v, Enrichment(cluster="eos-net"))
    (alert,) = listed(am, "eos-net")
    lab = alert["labels"]
    assert (lab["domain"], lab["category"], lab["node"]) == ("network", "network.link", "dgx-b200-006")
    assert "mlx5_5:1" in lab["port"].split(",")  # the HCA port (and its netdev, ibp94s0, when the log names it)


@pytest.mark.integration
def test_outcome_and_domain_filters(am: Alertmanager, verdicts: dict[str, Verdict]) -> None:
    hw, sw, ok = verdicts["hw-nvlink-xid149-showcase"], verdicts["sw-segfault"], verdicts["ok-completed-nccl-noise"]
    assert ok.attributed_domain == "none" and sw.attributed_domain == "software"
    with sink(am) as s:  # the defaults: causes alert, a succeeded job with no cause does not
        s.write(ok, Enrichment(cluster="eos-f1"))
        assert s.last is not None and s.last.ok and s.last.alerts == 0 and s.last.skipped
        s.write(sw, Enrichment(cluster="eos-f1"))
    assert [a["labels"]["domain"] for a in listed(am, "eos-f1")] == ["software"]
    with sink(am, domains=["hardware", "network"]) as s:
        s.write(sw, Enrichment(cluster="eos-f2"))
        assert s.last is not None and "domain software" in (s.last.skipped or "")
        s.write(hw, Enrichment(cluster="eos-f2"))
    assert [a["labels"]["domain"] for a in listed(am, "eos-f2")] == ["hardware"]
    with sink(am, outcomes=["timeout"]) as s:
        s.write(hw, Enrichment(cluster="eos-f3"))
        assert s.last is not None and "outcome failed" in (s.last.skipped or "")
    assert listed(am, "eos-f3") == []


def test_a_down_alertmanager_is_a_recorded_delivery_error(verdicts: dict[str, Verdict]) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    waits: list[float] = []
    v = verdicts["hw-nvlink-xid149-showcase"]
    with sink(f"http://127.0.0.1:{port}", retries=2, sleep=waits.append, backoff=0.5) as s:
        with pytest.raises(AlertmanagerDeliveryError) as err:
            s.write(v, Enrichment(cluster="eos"))
        d = err.value.delivery
        assert isinstance(err.value, SinkError)
        assert (d.ok, d.attempts, d.status, d.alerts) == (False, 3, None, 1)
        assert d.error is not None and "ConnectError" in d.error and f"127.0.0.1:{port}" in str(err.value)
        assert len(waits) == 2 and all(0 <= w <= 0.5 * 2**i for i, w in enumerate(waits))
        # In a pipeline it is that output's failure; the other outputs still get the verdict.
        seen: list[Verdict] = []

        class Other:
            name = "other"

            def write(self, verdict: Verdict, _e: Enrichment) -> None:
                seen.append(verdict)

        pipe = Pipeline(context=None, sinks=[s, Other()])  # type: ignore[arg-type]
        outcomes = pipe.write(v, Enrichment(cluster="eos"))
    assert [(o.sink, o.ok) for o in outcomes] == [("alertmanager", False), ("other", True)]
    assert "did not take" in outcomes[0].message and seen == [v]


def test_retries_5xx_and_stops_at_400(verdicts: dict[str, Verdict]) -> None:
    """Alertmanager's own answers (recorded from 0.25: a 400 names the bad field); the transport is scripted."""
    answers = [httpx.Response(503, text="busy"), httpx.Response(200, text="")]
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return answers.pop(0)

    v = verdicts["hw-nvlink-xid149-showcase"]
    with sink("http://am.example:9093", transport=httpx.MockTransport(handler)) as s:
        d = s.deliver(v, Enrichment())
    assert d.ok and d.attempts == 2 and [c.url.path for c in calls] == ["/api/v2/alerts"] * 2
    assert calls[0].content == calls[1].content  # the same alerts on the retry

    answers = [httpx.Response(400, text='"start time must be before end time"')] * 3
    calls.clear()
    with sink("http://am.example:9093", transport=httpx.MockTransport(handler)) as s:
        d = s.deliver(v, Enrichment())
    assert (d.ok, d.attempts, d.status) == (False, 1, 400) and "start time" in (d.error or "")


def test_many_nodes_collapse_into_one_alert_per_cause(verdicts: dict[str, Verdict]) -> None:
    v = verdicts["hw-nvlink-xid149-showcase"]
    assert v.root_cause is not None
    nodes = [f"n{i:03d}" for i in range(40)]
    wide = records.replace(v, root_cause=records.replace(v.root_cause, nodes=nodes))
    now = datetime(2026, 11, 2, 12, tzinfo=UTC)
    (one,) = alerts_for(wide, Enrichment(), now=now, resolve_after=timedelta(hours=1), max_alerts=32)
    assert "node" not in one["labels"] and one["annotations"]["nodes"].startswith("n000, n001")
    split = alerts_for(wide, Enrichment(), now=now, resolve_after=timedelta(hours=1), max_alerts=40)
    assert [a["labels"]["node"] for a in split] == nodes
    # Deterministic: the same verdict and time give the same alerts, byte for byte.
    assert split == alerts_for(wide, Enrichment(), now=now, resolve_after=timedelta(hours=1), max_alerts=40)


def test_bad_configuration_is_refused() -> None:
    with pytest.raises(ValueError, match="retries"):
        AlertmanagerSink("http://127.0.0.1:1", retries=-1)
    with pytest.raises(ValueError, match="node"):
        AlertmanagerSink("http://127.0.0.1:1", labels={"node": "x"})
    with pytest.raises(ValueError, match="label"):
        AlertmanagerSink("http://127.0.0.1:1", labels={"bad-name": "x"})


@pytest.mark.integration
def test_run_with_an_alertmanager_output(am: Alertmanager, tmp_path: Path) -> None:
    """cluster.yaml -> `firstfault run` -> the alert in Alertmanager; a second, down Alertmanager is exit 1."""
    import yaml
    from click.testing import CliRunner

    from firstfault.cli import app

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        down = probe.getsockname()[1]
    bundle = SCENARIOS / "hw-nvlink-xid149-showcase"
    cfg = {
        "cluster": "eos-run",
        "logs": {"files": {"root": str(bundle), "sources": [
            {"kind": "kernel", "path": "nodes/{node}/kern.log"},
            {"kind": "fabricmanager", "path": "nodes/{node}/fabricmanager.log"},
            {"kind": "application", "path": "app/rank-{rank}.log"}]}},
        "outputs": {"stdout": None, "database": {"url": f"sqlite:///{tmp_path / 'v.db'}"}, "alertmanager": [
            {"url": am.url, "dashboard_url": "http://dash.example", "labels": {"severity": "page"}},
            {"url": f"http://127.0.0.1:{down}", "http": {"retries": 0, "timeout": 2}}]},
    }
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(cfg))
    res = CliRunner().invoke(app, ["run", "-c", str(path), "--window", "2026-11-02T09:59:48Z", "2026-11-02T10:13:14Z",
                                   "--nodes", "node-[01-04]", "--ranks-per-node", "8", "--id", "4242", "-q"])
    assert res.exit_code == 1, res.output
    assert "output alertmanager failed" in " ".join(res.output.split()) and f"127.0.0.1:{down}" in res.output
    (alert,) = listed(am, "eos-run")
    lab = alert["labels"]
    # A static window has no PCI -> index map (a bundle's `gpus:`), so the GPU keeps its PCI address.
    assert (lab["domain"], lab["node"], lab["gpu"], lab["workload"], lab["severity"]) == (
        "hardware", "node-02", "pci:0000:3b:00", "4242", "page")
    assert alert["annotations"]["dashboard"].startswith("http://dash.example/verdicts/find?workload=4242&attempt=0")
    with VerdictStore.open(f"sqlite:///{tmp_path / 'v.db'}") as store:  # the store still has the verdict
        assert store.find("4242", 0, "eos-run") is not None
