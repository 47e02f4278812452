"""`firstfault fleet` (CliRunner over a real SQLite store) and `firstfault demo` (a real subprocess)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from firstfault import records
from firstfault.cli import app
from firstfault.cli.demo import load_samples, sample_dirs
from firstfault.model import Verdict
from firstfault.store import VerdictStore
from tests.dashboard.conftest import EXAMPLES, SCENARIOS, variant

runner = CliRunner()


def _store_with_failures(path: Path, samples: dict[str, Verdict]) -> str:
    url = f"sqlite:///{path}"
    from datetime import UTC, datetime, timedelta

    now = datetime.now(UTC)
    with VerdictStore.open(url) as store:
        for i in range(4):
            store.write(variant(samples["xid149"], f"cli-{i}", analyzed_at=now - timedelta(days=i, hours=1)))
        store.write(variant(samples["node-fail"], "cli-nf", analyzed_at=now - timedelta(hours=3)))
    return url


def test_fleet_json_is_the_api_document(tmp_path: Path, samples: dict[str, Verdict]) -> None:
    url = _store_with_failures(tmp_path / "v.db", samples)
    r = runner.invoke(app, ["fleet", "--db", url, "--since", "7d", "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    nodes = next(t for t in doc["tables"] if t["kind"] == "nodes")
    assert nodes["entries"][0]["key"] == "node-02" and nodes["entries"][0]["root"] == 4
    assert doc["domains"] == ["hardware", "network", "infrastructure"]
    assert "Bonferroni" in doc["rule"]


def test_fleet_table(tmp_path: Path, samples: dict[str, Verdict]) -> None:
    url = _store_with_failures(tmp_path / "v.db", samples)
    r = runner.invoke(app, ["fleet", "--db", url, "--since", "7d"], env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    first = next(line for line in lines if re.search(r"\b1\b.*node-0\d", line))
    assert "node-02" in first and " 4 " in first
    assert "node-02/gpu3" in r.stdout or "gpu3" in r.stdout
    assert "Switch ports: none in this window" in r.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--since", "soon"], "is not a time"),
    (["--domain", "ambiguous"], "--domain"),
    (["--limit", "0"], "--limit"),
])
def test_fleet_bad_arguments_exit_2_naming_them(tmp_path: Path, samples: dict[str, Verdict], args: list[str],
                                               message: str) -> None:
    url = _store_with_failures(tmp_path / "v.db", samples)
    r = runner.invoke(app, ["fleet", "--db", url, *args])
    assert r.exit_code == 2 and message in r.output


def test_fleet_on_a_missing_database_does_not_create_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.db"
    r = runner.invoke(app, ["fleet", "--db", f"sqlite:///{missing}"])
    assert r.exit_code == 2 and "no such database file" in r.output
    assert not missing.exists()


def test_demo_samples_skip_copies_and_keep_same_id_jobs_apart(tmp_path: Path) -> None:
    bundles = sample_dirs([EXAMPLES, SCENARIOS])
    assert len(bundles) >= 40 and all((b / "workload.yaml").is_file() for b in bundles)
    url = f"sqlite:///{tmp_path / 'demo.db'}"
    n = load_samples(url, bundles, echo=False)
    with VerdictStore.open(url) as store:
        assert store.count() == n
        # examples/cuda-oom and examples/nvlink-xid149 are both job 4242 attempt 0: both are kept
        assert {s.root_category for s in store.list(limit=500) if s.workload_id == "4242"} >= {
            "app.cuda_oom", "gpu.nvlink.signal_integrity"}
    # the scenario copies of the examples are skipped
    assert n == len(bundles) - 3
    assert load_samples(url, bundles, echo=False) == n  # a second run is idempotent
    with VerdictStore.open(url) as store:
        assert store.count() == n


@pytest.mark.integration
def test_demo_serves_the_dashboard_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTFAULT_")}
    err = (tmp_path / "demo.err").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "firstfault", "demo", "--port", "0", "--db", str(tmp_path / "d.db"),
         "--samples", str(EXAMPLES)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=err, text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        assert m, line + (tmp_path / "demo.err").read_text()
        url = m.group(1)
        deadline = time.monotonic() + 20
        while True:
            try:
                r = httpx.get(url + "verdicts", timeout=5)
                break
            except httpx.ConnectError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.1)
        assert r.status_code == 200 and "Xid 149" in r.text
        assert httpx.get(url + "v1/verdicts", timeout=5).json()["total"] == 3
        assert httpx.get(url + "healthz", timeout=5).status_code == 200  # the Service's own routes
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()
        err.close()
    assert proc.returncode == 0, (tmp_path / "demo.err").read_text()


def test_fleet_counts_leads(tmp_path: Path, samples: dict[str, Verdict]) -> None:
    """`firstfault fleet` shows, beside the causes, how many verdicts' leads point at a node."""
    from datetime import UTC, datetime, timedelta

    from firstfault.model import Lead

    url = f"sqlite:///{tmp_path / 'v.db'}"
    now = datetime.now(UTC)
    with VerdictStore.open(url) as store:
        for i in range(2):
            v = variant(samples["xid149"], f"hang-{i}", analyzed_at=now - timedelta(hours=i + 1))
            v = records.replace(v, root_cause=None, attributed_domain="unknown", affected_nodes=[],
                                leads=[Lead(kind="laggard_rank", nodes=["node-09"], ranks=[70],
                                            summary="rank 70 lagged", first_seen=None)])
            store.write(v)
    r = runner.invoke(app, ["fleet", "--db", url, "--since", "7d", "--format", "json"])
    doc = json.loads(r.stdout)
    nodes = next(t for t in doc["tables"] if t["kind"] == "nodes")
    assert [(e["key"], e["root"], e["lead"]) for e in nodes["entries"] if e["key"] == "node-09"] == [("node-09", 0, 2)]
    table = runner.invoke(app, ["fleet", "--db", url, "--since", "7d"], env={"COLUMNS": "160"}).stdout
    assert "leads" in table and "node-09" in table
