"""`firstfault run --job ID` end to end on a real single-node Slurm with accounting (slurmdbd + MariaDB).

Real jobs exit non-zero, are killed by a signal, are cancelled, lose their
node and hit their time limit; two write a real Python traceback / a CUDA OOM
line to their own Slurm output file, which cluster.yaml's `logs.files` reads
through a `{job}` root and a glob. Outputs are real too: a SQLite verdict
store, and a loopback webhook receiver that checks the HMAC signature itself.
The one remote source, Loki, points at a closed loopback port (no Loki server
can run here): that is the failure under test, nothing is replayed.

Cost: the time-limit job takes ~75 s. When the session's Slurm already holds
a TIMEOUT job (tests/identify/test_slurm.py makes one) it is reused; otherwise ours
is submitted first and checked last, so its wait overlaps the other tests.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from firstfault import records
from firstfault.model import Verdict
from firstfault.store import VerdictStore
from tests.harness.e2e_util import (
    TimeLimitJob,
    WebhookReceiver,
    closed_port,
    invoke,
    lose_node_running,
    run_cli,
    sign,
    submit,
    wait_queue_empty,
    write_config,
)
from tests.harness.slurm_harness import TERMINAL, SlurmCluster

pytestmark = pytest.mark.integration
SECRET = "e2e-webhook-secret-0123456789"
PY = "/usr/bin/env python3"


@dataclass
class Jobs:
    root: Path  # JOBS_ROOT/<id>/slurm.out: each job's own Slurm output file
    t0: datetime
    exit3: str
    kill9: str
    cancelled: str
    nodefail: str
    valueerror: str
    oom: str


def _sh(body: str) -> str:
    return f"#!/bin/sh\n{body}\n"


@pytest.fixture(scope="module")
def jobs(slurm_cluster: SlurmCluster, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Jobs:
    c = slurm_cluster
    root = tmp_path_factory.mktemp("e2e-run-jobs")
    wait_queue_empty(c)  # a lost node kills whatever runs on it: nothing else may run now
    t0 = datetime.now(UTC).replace(microsecond=0)
    nodefail = submit(c, root, "ff-e2e-nodefail", _sh("sleep 300"), "--no-requeue")
    lose_node_running(c, nodefail)
    request.getfixturevalue("slurm_time_limit_job")  # its minute runs from here, the node back in service
    exit3 = submit(c, root, "ff-e2e-exit3", _sh("exit 3"))
    kill9 = submit(c, root, "ff-e2e-kill9", _sh("kill -9 $$"))
    # A real interpreter raising a real exception: the traceback lands in the job's output file.
    valueerror = submit(c, root, "ff-e2e-valueerror",
                        _sh(f"{PY} -c 'import sys; print(\"step 10 loss 2.31\", flush=True); "
                            f"raise ValueError(\"bad shard index 7\")'"))
    oom = submit(c, root, "ff-e2e-oom", _sh(
        "echo '[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
        "GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free.' >&2; exit 1"))
    cancelled = submit(c, root, "ff-e2e-cancel", _sh("sleep 300"))
    c.wait_state(cancelled, {"RUNNING"}, 20)
    c.run("scancel", cancelled)
    for job in (exit3, kill9, valueerror, oom, cancelled, nodefail):
        c.wait_state(job, TERMINAL, 30)
    return Jobs(root, t0, exit3, kill9, cancelled, nodefail, valueerror, oom)


@pytest.fixture(scope="module")
def env(slurm_cluster: SlurmCluster) -> dict[str, str]:
    # build.context_connector passes no env: the Slurm clients find the test cluster through SLURM_CONF.
    return {"SLURM_CONF": str(slurm_cluster.conf), "FF_WEBHOOK_SECRET": SECRET}


def _base(jobs: Jobs) -> dict[str, Any]:
    return {
        "cluster": "fftest",
        "scheduler": {"slurm": {"timeout": 20}},
        "logs": {"files": {"root": f"{jobs.root}/{{job}}", "sources": [{"kind": "application", "path": "*.out"}]}},
        "outputs": {"stdout": {"format": "json"}},
    }


@pytest.fixture(scope="module")
def config(jobs: Jobs, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("e2e-run-cfg") / "cluster.yaml"
    write_config(path, _base(jobs))
    return path


def _verdict(config: Path, job: str, env: dict[str, str]) -> Verdict:
    res = invoke(["run", "--config", str(config), "--job", job, "--format", "json"], env)
    assert res.exit_code == 0, (res.stdout, res.stderr, res.exception)
    return records.decode(res.stdout, Verdict)


CASES = [
    # (job, outcome, domain, root category or None, terminal state)
    ("exit3", "failed", "unknown", None, "FAILED"),
    ("kill9", "failed", "unknown", None, "FAILED"),
    ("cancelled", "cancelled", "scheduler", "scheduler.cancelled.by_root", "CANCELLED"),
    ("nodefail", "node_fail", "infrastructure", "node.unreachable", "NODE_FAIL"),
    ("valueerror", "failed", "software", "app.exception", "FAILED"),
    ("oom", "failed", "software", "app.cuda_oom", "FAILED"),
]


@pytest.mark.parametrize(("key", "outcome", "domain", "category", "state"), CASES, ids=[c[0] for c in CASES])
def test_run_job_gives_the_outcome_and_domain(jobs: Jobs, config: Path, env: dict[str, str], key: str, outcome: str,
                                              domain: str, category: str | None, state: str,
                                              slurm_cluster: SlurmCluster) -> None:
    job = getattr(jobs, key)
    v = _verdict(config, job, env)
    assert (v.outcome, v.attributed_domain, v.terminal_state) == (outcome, domain, state)
    assert (v.root_cause.category if v.root_cause else None) == category
    assert (v.workload.id, v.workload.attempt, v.workload.scheduler) == (job, 0, "slurm")
    assert v.workload.nodes == [slurm_cluster.node]
    assert v.errors == []
    cov = {c.source: c.status for c in v.coverage}
    assert cov["scheduler"] == "complete"  # sacct (+ scontrol) from the context connector
    assert cov["kernel"] == "missing"  # nothing configured for it: said, not hidden
    if key in ("valueerror", "oom"):
        assert cov["application"] == "complete"
        assert v.root_cause is not None and v.root_cause.domain == "software"
        texts = [e.text for e in v.evidence if e.role == "cause"]
        want = "ValueError: bad shard index 7" if key == "valueerror" else "CUDA out of memory"
        assert any(want in t for t in texts), texts
        assert all(e.file == "slurm.out" for e in v.evidence if e.source == "application")


def test_cancel_by_root_names_root(jobs: Jobs, config: Path, env: dict[str, str]) -> None:
    v = _verdict(config, jobs.cancelled, env)
    assert v.root_cause is not None
    assert v.root_cause.category == "scheduler.cancelled.by_root"
    assert "?" not in v.root_cause.summary


def test_run_as_a_subprocess_exit_codes_and_quiet(jobs: Jobs, config: Path, env: dict[str, str]) -> None:
    """The installed console script: JSON on stdout, progress on stderr, exit 0; --quiet prints nothing; 2 for an
    unknown job, with the reason and no traceback."""
    res = run_cli(["run", "-c", str(config), "--job", jobs.exit3, "--format", "json"], env)
    assert res.returncode == 0, res.stderr
    v = json.loads(res.stdout)
    assert (v["workload"]["id"], v["outcome"]) == (jobs.exit3, "failed")
    assert f"identify {jobs.exit3} (slurm)" in res.stderr
    quiet = run_cli(["run", "-c", str(config), "--job", jobs.exit3, "--quiet"], env)
    assert (quiet.returncode, quiet.stdout) == (0, "")
    unknown = run_cli(["run", "-c", str(config), "--job", "987654"], env)
    assert unknown.returncode == 2
    assert "no job 987654 in the accounting database" in unknown.stderr
    assert "Traceback" not in unknown.stderr


def test_outputs_sqlite_webhook_and_stdout(jobs: Jobs, env: dict[str, str], tmp_path: Path) -> None:
    """One run writes the same verdict to stdout (JSON), SQLite and a webhook whose receiver verifies the HMAC."""
    hook = WebhookReceiver(SECRET.encode())
    try:
        db = tmp_path / "verdicts.db"
        cfg = _base(jobs) | {"outputs": {
            "stdout": {"format": "json"},
            "database": {"url": f"sqlite:///{db}"},
            "webhooks": [{"url": hook.url, "secret": {"env": "FF_WEBHOOK_SECRET"},
                          "dead_letter": str(tmp_path / "dead.jsonl"), "retries": 0}],
        }}
        write_config(tmp_path / "cluster.yaml", cfg)
        res = invoke(["run", "-c", str(tmp_path / "cluster.yaml"), "--job", jobs.valueerror], env)
        assert res.exit_code == 0, (res.stdout, res.stderr)
        printed = records.decode(res.stdout, Verdict)
        assert printed.root_cause is not None and printed.root_cause.category == "app.exception"

        with VerdictStore.open(f"sqlite:///{db}") as store:
            (row,) = store.list()
            stored = store.get_record(row.id)
        assert stored is not None
        assert stored.verdict == printed  # the same document, analyzed_at included
        assert (stored.enrichment.cluster, stored.enrichment.owner) == ("fftest", "root")

        (d,) = hook.deliveries
        assert d.verified, "the receiver could not verify the signature with the shared secret"
        assert d.headers["X-Firstfault-Signature"] == sign(SECRET.encode(), d.body)
        doc = d.doc
        assert doc.pop("delivery") == d.headers["X-Firstfault-Delivery"] == d.headers["Idempotency-Key"]
        assert doc.pop("enrichment") == {"cluster": "fftest", "links": {}, "owner": "root", "previous_attempts": []}
        assert records.convert(doc, Verdict) == printed
        assert not (tmp_path / "dead.jsonl").exists()
    finally:
        hook.stop()


def test_failing_webhook_exits_1_and_keeps_db_and_dead_letter(jobs: Jobs, env: dict[str, str],
                                                               tmp_path: Path) -> None:
    hook = WebhookReceiver(SECRET.encode(), status=500)
    try:
        db, dead = tmp_path / "v.db", tmp_path / "dl" / "dead.jsonl"
        cfg = _base(jobs) | {"outputs": {
            "stdout": None,
            "database": {"url": f"sqlite:///{db}"},
            "webhooks": [{"url": hook.url, "secret": {"env": "FF_WEBHOOK_SECRET"}, "dead_letter": str(dead),
                          "retries": 1}],
        }}
        write_config(tmp_path / "cluster.yaml", cfg)
        res = invoke(["run", "-c", str(tmp_path / "cluster.yaml"), "--job", jobs.oom], env)
        assert res.exit_code == 1, (res.stdout, res.stderr)
        assert res.stdout == ""  # stdout output switched off
        assert "output webhook failed" in res.stderr and "HTTP 500" in res.stderr
        assert len(hook.deliveries) == 2 and all(d.verified for d in hook.deliveries)  # tried, retried once

        with VerdictStore.open(f"sqlite:///{db}") as store:
            (row,) = store.list()
        assert (row.workload_id, row.root_category) == (jobs.oom, "app.cuda_oom")

        (line,) = dead.read_text().splitlines()
        rec = json.loads(line)
        assert (rec["status"], rec["attempts"], rec["url"]) == (500, 2, hook.url)
        body = rec["body"].encode()
        assert rec["headers"]["X-Firstfault-Signature"] == sign(SECRET.encode(), body)  # replayable as is
        assert body == hook.deliveries[0].body
        assert json.loads(body)["workload"]["id"] == jobs.oom
    finally:
        hook.stop()


def test_failing_loki_does_not_stop_the_files(jobs: Jobs, env: dict[str, str], tmp_path: Path) -> None:
    """Loki on a closed port: its failure is in errors/coverage, the files still give the cause."""
    port = closed_port()
    cfg = _base(jobs)
    cfg["logs"]["loki"] = {"url": f"http://127.0.0.1:{port}", "queries": {"kernel": '{host="{node}"}'},
                           "http": {"retries": 1, "timeout": 2}}
    write_config(tmp_path / "cluster.yaml", cfg)
    res = invoke(["run", "-c", str(tmp_path / "cluster.yaml"), "--job", jobs.valueerror, "-f", "json"], env)
    assert res.exit_code == 0, (res.stdout, res.stderr)
    v = records.decode(res.stdout, Verdict)
    assert v.root_cause is not None and v.root_cause.category == "app.exception"
    loki = [e for e in v.errors if (e.file or "").startswith("loki:")]
    assert loki and len(loki) == len(v.errors), v.errors  # the Loki failure, and nothing else
    assert all(e.source == "kernel" and f"127.0.0.1:{port}/loki/api/v1/query_range" in e.message
               and "Connection refused" in e.message for e in loki), loki
    cov = {c.source: c for c in v.coverage}
    assert cov["kernel"].status == "error", cov["kernel"]
    assert cov["application"].status == "complete"


def test_time_limit_is_a_scheduler_cause(jobs: Jobs, env: dict[str, str], slurm_time_limit_job: TimeLimitJob,
                                         tmp_path: Path) -> None:
    """Last on purpose: the session's time-limit job (tests/conftest.py) has run since the module asked for it."""
    tl = slurm_time_limit_job
    tl.ended()
    config = tmp_path / "cluster.yaml"
    write_config(config, _base(jobs) | {"logs": {"files": {"root": f"{tl.root}/{{job}}", "sources": [
        {"kind": "application", "path": "*.out"}]}}})
    v = _verdict(config, tl.job, env)
    assert (v.outcome, v.attributed_domain, v.terminal_state) == ("timeout", "scheduler", "TIMEOUT")
    assert v.root_cause is not None and v.root_cause.category == "scheduler.time_limit"
    assert {c.source: c.status for c in v.coverage}["application"] == "complete"  # its own output file was read


def test_kubernetes_logs_need_a_selector_and_a_failing_api_does_not_stop_the_run(tmp_path: Path) -> None:
    """logs.kubernetes without label_selector is a config error naming it; with one, an API server that does not
    answer (a closed loopback port; the official kubernetes client) is an error in the verdict, not a crash."""
    from firstfault.blueprint.config import ConfigError

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{closed_port()}"}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
""")
    cfg: dict[str, Any] = {"cluster": "fftest", "scheduler": {"kueue": {"kubeconfig": str(kubeconfig)}},
                           "logs": {"kubernetes": {"namespace": "train"}}}
    with pytest.raises(ConfigError, match=r"c\.yaml:\d+: logs\.kubernetes\.label_selector"):
        write_config(tmp_path / "c.yaml", cfg)
    cfg["logs"]["kubernetes"]["label_selector"] = "jobset.sigs.k8s.io/jobset-name={workload}"
    write_config(tmp_path / "c.yaml", cfg)
    res = invoke(["run", "-c", str(tmp_path / "c.yaml"), "--window", "2026-11-02T10:00:00Z", "2026-11-02T10:05:00Z",
                  "--nodes", "node-01", "-f", "json"])
    assert res.exit_code == 0, (res.stderr, repr(res.exception))
    v = records.decode(res.stdout, Verdict)
    (err,) = v.errors
    assert (err.source, err.file) == ("application", "k8s:train") and "Connection refused" in err.message
    assert {c.source: c.status for c in v.coverage}["application"] == "error"


def test_the_example_config_validates() -> None:
    """examples/cluster.yaml (documented in docs/blueprint.md) must stay a valid config."""
    from firstfault.blueprint.config import load_config

    cfg = load_config(Path(__file__).resolve().parents[2] / "examples" / "cluster.yaml")
    assert cfg.scheduler.slurm is not None and cfg.logs.files is not None and cfg.logs.loki is not None
    assert cfg.metrics.prometheus is not None and cfg.outputs.database is not None and cfg.outputs.webhooks
