"""`firstfault watch` on a real Slurm with a real verdict store (PostgreSQL and SQLite): exactly once, across kill -9.

Real pieces: the session's single-node Slurm with accounting
(tests/harness/slurm_harness.py), a private PostgreSQL server
(tests/store/pg_harness.py) or a SQLite file, the venv's `firstfault watch`
as a subprocess, and a loopback webhook receiver that verifies signatures.

The watch daemon sees every attempt that ended in this session's accounting
database (this module's jobs, including a job requeued after losing its node,
and whatever other modules ran before), so the expected set is read from
sacct itself: every ended (job, attempt) must end up with exactly one verdict
row and one processed mark pointing at it.

The crash test kills the daemon twice: once deterministically at the one
point where at-least-once outputs can repeat (the webhook receiver SIGKILLs
the daemon while it waits for the answer to its third delivery, so that
attempt's verdict is delivered but not committed), and once at whatever
moment it has committed five marks. A final `--once` pass settles the rest.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from firstfault.store import VerdictStore
from tests.harness.e2e_util import (
    FIRSTFAULT,
    Delivery,
    WebhookReceiver,
    ended_attempts,
    invoke,
    lose_node_running,
    store_rows,
    submit,
    wait_queue_empty,
    write_config,
)
from tests.harness.slurm_harness import TERMINAL, SlurmCluster
from tests.store.pg_harness import store_url

pytestmark = pytest.mark.integration
SECRET = "e2e-watch-secret-0123456789"


@dataclass
class Watched:
    root: Path
    requeued: str  # attempt 0 lost its node (NODE_FAIL), attempt 1 exited 0
    exit3: str
    valueerror: str
    cancelled: str


def _sh(body: str) -> str:
    return f"#!/bin/sh\n{body}\n"


def _attempt_states(c: SlurmCluster, job: str) -> list[str]:
    out = c.run("sacct", "-P", "-n", "-X", "-D", "-j", job, "-o", "State").stdout
    return [ln.split()[0] for ln in out.splitlines() if ln.strip()]


@pytest.fixture(scope="module")
def watched(slurm_cluster: SlurmCluster, tmp_path_factory: pytest.TempPathFactory) -> Watched:
    c = slurm_cluster
    root = tmp_path_factory.mktemp("e2e-watch-jobs")
    wait_queue_empty(c)  # the lost node must not take other modules' jobs with it
    requeued = submit(c, root, "ff-w-requeue", _sh('if [ "${SLURM_RESTART_COUNT:-0}" -gt 0 ]; then exit 0; fi; '
                                                   "sleep 300"))
    lose_node_running(c, requeued)
    # Skip the ~2 min requeue delay, but not within the second of the requeue: slurmd still holds the old
    # attempt's credential as revoked then and kills the new one ("Job credential revoked", FAILED 1:0).
    time.sleep(2)
    c.run("scontrol", "update", f"jobid={requeued}", "starttime=now")
    exit3 = submit(c, root, "ff-w-exit3", _sh("exit 3"))
    valueerror = submit(c, root, "ff-w-valueerror", _sh("/usr/bin/env python3 -c 'raise ValueError(\"bad batch\")'"))
    cancelled = submit(c, root, "ff-w-cancel", _sh("sleep 300"))
    c.wait_state(cancelled, {"RUNNING"}, 20)
    c.run("scancel", cancelled)
    # Filler so that the daemon has enough attempts to be killed in the middle even when this module runs alone.
    array = submit(c, root, "ff-w-array", _sh("exit $SLURM_ARRAY_TASK_ID"), "--array=0-3")
    quick = [submit(c, root, f"ff-w-quick{i}", _sh(f"exit {i}")) for i in range(2)]
    for job in (exit3, valueerror, cancelled, *quick, *(f"{array}_{k}" for k in range(4))):
        c.wait_state(job, TERMINAL, 30)
    deadline = time.monotonic() + 60
    while _attempt_states(c, requeued)[-1:] != ["COMPLETED"]:
        assert time.monotonic() < deadline, _attempt_states(c, requeued)
        time.sleep(0.3)
    wait_queue_empty(c)
    return Watched(root, requeued, exit3, valueerror, cancelled)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with store_url(request.param, tmp_path) as u:
        yield u


def _config(path: Path, watched: Watched, db_url: str, hook_url: str | None = None) -> Path:
    outputs: dict[str, Any] = {"stdout": None, "database": {"url": db_url}}
    if hook_url:
        outputs["webhooks"] = [{"url": hook_url, "secret": {"env": "FF_WEBHOOK_SECRET"},
                                "dead_letter": str(path.parent / "dead.jsonl"), "retries": 0}]
    write_config(path, {
        "cluster": "fftest",
        "scheduler": {"slurm": {"timeout": 20}},
        "logs": {"files": {"root": f"{watched.root}/{{job}}", "sources": [{"kind": "application", "path": "*.out"}]}},
        "outputs": outputs,
        "watch": {"poll_interval": 0.2},
    })
    return path


def _env(c: SlurmCluster) -> dict[str, str]:
    return {"SLURM_CONF": str(c.conf), "FF_WEBHOOK_SECRET": SECRET}


def _assert_exactly_once(url: str, expected: set[tuple[str, int]]) -> None:
    rows = store_rows(url)
    dupes = [k for k, n in Counter(rows.verdicts).items() if n > 1]
    assert dupes == [], f"verdicts written twice: {dupes}"
    assert set(rows.verdicts) == expected, (sorted(set(rows.verdicts) ^ expected))
    marks = [(ref, attempt) for ref, attempt, _ in rows.marks]
    assert sorted(marks) == sorted(expected)
    for ref, attempt, vid in rows.marks:  # each mark points at its own verdict, committed with it
        assert vid is not None and rows.verdict_ids[vid] == (ref, attempt)


def test_watch_once_one_verdict_per_ended_attempt(watched: Watched, slurm_cluster: SlurmCluster, db_url: str,
                                                  tmp_path: Path) -> None:
    c = slurm_cluster
    cfg = _config(tmp_path / "cluster.yaml", watched, db_url)
    expected = ended_attempts(c)
    mine = {(watched.requeued, 0), (watched.requeued, 1), (watched.exit3, 0), (watched.valueerror, 0),
            (watched.cancelled, 0)}
    assert mine <= expected

    t0 = time.monotonic()
    res = invoke(["watch", "-c", str(cfg), "--once", "--json"], _env(c))
    took = time.monotonic() - t0
    assert res.exit_code == 0, (res.stdout, res.stderr)
    events = [json.loads(line)["event"] for line in res.stdout.splitlines()]
    assert len(events) == len(expected) and not any("failed" in e for e in events), events
    _assert_exactly_once(db_url, expected)
    rows = store_rows(db_url)
    assert rows.cursors.get("watch:slurm:fftest", "").count("|") == 1  # moved after the pass

    with VerdictStore.open(db_url) as store:
        by_key = {(s.workload_id, s.attempt): s for s in store.list(limit=1000)}
    lost, rerun = by_key[(watched.requeued, 0)], by_key[(watched.requeued, 1)]
    assert (lost.outcome, lost.attributed_domain, lost.root_category) == ("node_fail", "infrastructure",
                                                                          "node.unreachable")
    assert (rerun.terminal_state, rerun.outcome) == ("COMPLETED", "succeeded")
    assert by_key[(watched.valueerror, 0)].root_category == "app.exception"
    assert by_key[(watched.cancelled, 0)].attributed_domain == "scheduler"
    assert by_key[(watched.exit3, 0)].terminal_state == "FAILED"

    again = invoke(["watch", "-c", str(cfg), "--once", "--json"], _env(c))
    assert again.exit_code == 0 and again.stdout == "", again.stdout  # nothing new ended: nothing redone
    _assert_exactly_once(db_url, expected)
    print(f"watch --once: {len(expected)} attempts in {took:.1f}s")


def _start_watch(cfg: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen([str(FIRSTFAULT), "watch", "-c", str(cfg), "--json"], stdout=out,
                                stderr=subprocess.STDOUT, env=dict(os.environ) | env)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait(30)


def test_kill_9_and_restart_lose_nothing_and_repeat_nothing(watched: Watched, slurm_cluster: SlurmCluster,
                                                            db_url: str, tmp_path: Path) -> None:
    c = slurm_cluster
    expected = ended_attempts(c)
    assert len(expected) >= 8, "too few attempts to kill the daemon in the middle"
    hook = WebhookReceiver(SECRET.encode())
    cfg = _config(tmp_path / "cluster.yaml", watched, db_url, hook.url)
    log = tmp_path / "watch.log"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        # 1. Killed while waiting for the webhook's answer to its third delivery: after the sinks, before the commit.
        def kill_on_third(n: int, _d: Delivery) -> None:
            if n == 3:
                procs[-1].send_signal(signal.SIGKILL)
                procs[-1].wait(10)

        hook.set_hook(kill_on_third)
        procs.append(_start_watch(cfg, _env(c), log))
        assert procs[-1].wait(120) == -signal.SIGKILL, log.read_text()
        hook.set_hook(None)
        rows = store_rows(db_url)
        assert len(rows.marks) == 2 and len(rows.verdicts) == 2, rows  # the third was delivered, not committed
        assert rows.cursors == {}  # the pass never finished
        third = hook.deliveries[2].doc["workload"]
        assert (third["id"], third["attempt"]) not in {(r, a) for r, a, _ in rows.marks}

        # 2. Killed at whatever point it has reached once five marks are committed.
        procs.append(_start_watch(cfg, _env(c), log))
        deadline = time.monotonic() + 120
        while len(store_rows(db_url).marks) < 5:
            assert procs[-1].poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the restarted daemon made no progress"
            time.sleep(0.02)
        _kill(procs[-1])
        assert procs[-1].returncode == -signal.SIGKILL
        partial = store_rows(db_url)
        assert len(partial.marks) == len(partial.verdicts)  # never a verdict without its mark, or the reverse
        assert len(set(partial.verdicts)) == len(partial.verdicts)

        # 3. A clean pass settles the rest: exactly one verdict and one mark per ended attempt.
        res = invoke(["watch", "-c", str(cfg), "--once", "--json"], _env(c))
        assert res.exit_code == 0, (res.stdout, res.stderr)
        _assert_exactly_once(db_url, expected)
        assert "watch:slurm:fftest" in store_rows(db_url).cursors

        # Webhooks are at-least-once: every attempt delivered, signed; only the crash window may repeat.
        delivered = Counter((d.doc["workload"]["id"], d.doc["workload"]["attempt"]) for d in hook.deliveries)
        assert all(d.verified for d in hook.deliveries)
        assert set(delivered) == expected
        assert delivered[(third["id"], third["attempt"])] >= 2
        # ... and a repeat carries the first delivery's id, so the receiver can drop it.
        repeats = {d.headers["X-Firstfault-Delivery"] for d in hook.deliveries
                   if (d.doc["workload"]["id"], d.doc["workload"]["attempt"]) == (third["id"], third["attempt"])}
        assert len(repeats) == 1
        assert not (tmp_path / "dead.jsonl").exists()
    finally:
        for p in procs:
            _kill(p)
        hook.stop()


def test_requeued_attempt_names_its_previous_attempt(watched: Watched, slurm_cluster: SlurmCluster,
                                                     tmp_path: Path) -> None:
    from firstfault.blueprint import build
    from firstfault.blueprint.config import load_config

    cfg = load_config(_config(tmp_path / "cluster.yaml", watched, f"sqlite:///{tmp_path / 'v.db'}"))
    os.environ["SLURM_CONF"] = str(slurm_cluster.conf)  # read when the connector is built
    try:
        ctx = build.context_connector(cfg, "slurm")
    finally:
        del os.environ["SLURM_CONF"]
    pipe = build.pipeline(cfg, ctx, job_id=watched.requeued, output_sinks=[])
    identified = pipe.identify(watched.requeued)
    assert identified.workload.attempt == 1
    assert pipe.enrich(identified).previous_attempts == [f"{watched.requeued}#0"]
