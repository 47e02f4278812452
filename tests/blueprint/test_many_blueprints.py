"""Many Blueprints, one Service, one database: three `firstfault watch` processes for three clusters.

Real pieces: three `firstfault watch` subprocesses, each with its own cluster.yaml and its own
replayed Slurm (tests/harness/sacct_replay.py: sacct pages recorded from the suite's real
Slurm, as ten finished attempts per cluster), one real Service (`firstfault serve`, which
analyses for all three and serves the dashboard API over the store), one real PostgreSQL
(tests/store/pg_harness.py).

The clusters' schedulers hand out the same job ids (800000..800009 on each, as separate Slurm
clusters do), so: every cluster gets its ten verdicts (none taken for another cluster's, in
the store or in the daemon's exactly-once ledger), each verdict keeps its cluster and its
cluster's nodes, and the fleet view filters by cluster.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from sqlalchemy import create_engine, text

from firstfault.store import VerdictStore
from tests.harness.sacct_replay import KINDS, Stream, install, save_stream, write_logs
from tests.service.server import ServiceProcess
from tests.store.pg_harness import fresh_database

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
FIRSTFAULT = Path(sys.executable).parent / "firstfault"
TOKEN = "many-blueprints-0123456789abcdef"
CLUSTERS = ("alpha", "beta", "gamma")
PER_CLUSTER = 10
FIRST_ID = 800000


@pytest.fixture
def db_url() -> Iterator[str]:
    with fresh_database() as url:
        VerdictStore.open(url).close()  # migrated once, before three daemons start
        yield url


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTFAULT_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    return env


def test_three_blueprints_share_one_service_and_one_database(db_url: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", _env()["PYTHONPATH"])  # the Service runs this tree too
    service = ServiceProcess("service", {"FIRSTFAULT_TOKENS": json.dumps([TOKEN]), "FIRSTFAULT_DB": db_url},
                             tmp_path)
    watchers: list[subprocess.Popen[bytes]] = []
    logs: list[Any] = []
    t0 = time.time() - 1200  # every attempt ended in the last 20 minutes: all are due at once
    try:
        for name in CLUSTERS:
            work = tmp_path / name
            nodes = [f"{name}-n{i:02d}" for i in range(4)]
            stream = Stream.per_hour(180, 1.0, PER_CLUSTER, FIRST_ID, nodes, t0=t0)  # one every 20 s
            work.mkdir()
            save_stream(work / "stream.json", stream)
            write_logs(work / "logs", stream)
            tools = install(work / "bin", work / "stream.json")
            (work / "cluster.yaml").write_text(yaml.safe_dump({
                "cluster": name,
                "scheduler": {"slurm": {**tools, "timezone": "UTC"}},
                "logs": {"files": {"root": f"{work}/logs/{{job}}",
                                   "sources": [{"kind": "application", "path": "*.out"}]}},
                "service": {"url": service.url, "token": {"env": "FF_TOKEN"}},
                "outputs": {"stdout": None, "database": {"url": db_url}},
                "watch": {"poll_interval": 0.5},
            }))
            log = (work / "watch.log").open("wb")
            logs.append(log)
            watchers.append(subprocess.Popen([str(FIRSTFAULT), "watch", "--config", str(work / "cluster.yaml")],
                                             env=_env() | {"FF_TOKEN": TOKEN}, stdout=log,
                                             stderr=subprocess.STDOUT))
        engine = create_engine(db_url)
        deadline = time.monotonic() + 240
        done = 0
        while time.monotonic() < deadline and done < PER_CLUSTER * len(CLUSTERS):
            assert all(w.poll() is None for w in watchers), [
                (tmp_path / n / "watch.log").read_text()[-2000:] for n in CLUSTERS]
            with engine.connect() as conn:
                done = int(conn.execute(text("SELECT count(*) FROM processed")).scalar_one())
            time.sleep(0.5)
        for w in watchers:
            w.send_signal(signal.SIGTERM)
        for w in watchers:
            w.wait(30)
        with engine.connect() as conn:
            verdicts = conn.execute(text("SELECT id, workload_id, cluster, verdict_json FROM verdicts")).all()
            marks = conn.execute(text("SELECT source, ref, verdict_id FROM processed")).all()
        engine.dispose()

        # Each cluster: its ten attempts, once, with its own nodes, though the job ids are the same.
        ids = {str(FIRST_ID + i) for i in range(PER_CLUSTER)}
        assert Counter(v.cluster for v in verdicts) == dict.fromkeys(CLUSTERS, PER_CLUSTER)
        for name in CLUSTERS:
            mine = [v for v in verdicts if v.cluster == name]
            assert {v.workload_id for v in mine} == ids
            for v in mine:
                assert all(n.startswith(f"{name}-") for n in json.loads(v.verdict_json)["workload"]["nodes"])
        assert Counter(m.source for m in marks) == {f"slurm@{n}": PER_CLUSTER for n in CLUSTERS}
        by_id = {v.id: v for v in verdicts}
        assert all(by_id[m.verdict_id].cluster == m.source.split("@")[1] for m in marks)

        # The fleet view, from the Service's own dashboard API, per cluster and for all of them.
        headers = {"Authorization": f"Bearer {TOKEN}"}
        every = httpx.get(f"{service.url}/v1/fleet", params={"since": "2h", "domain": "software"},
                          headers=headers, timeout=30).json()
        assert every["verdicts"] == PER_CLUSTER * len(CLUSTERS)
        oom = sum(1 for i in range(PER_CLUSTER) if KINDS[i % len(KINDS)] == "oom")  # the CUDA OOMs: software
        for name in CLUSTERS:
            one = httpx.get(f"{service.url}/v1/fleet", params={"since": "2h", "domain": "software", "cluster": name},
                            headers=headers, timeout=30).json()
            assert one["verdicts"] == PER_CLUSTER and sum(one["failures"]) == oom
            nodes = {tb["kind"]: tb for tb in one["tables"]}["nodes"]
            assert nodes["entries"] and all(e["key"].startswith(f"{name}-") for e in nodes["entries"])
            assert sum(e["root"] for e in nodes["entries"]) == oom
    finally:
        for w in watchers:
            if w.poll() is None:
                w.kill()
                w.wait(10)
        service.stop()
        for log in logs:
            log.close()
