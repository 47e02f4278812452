"""`firstfault watch --follow` end to end: a real Slurm job, a real Alertmanager, the daemon as its own process.

A batch job runs (it sleeps, then exits 1: FAILED); while it runs, the Xid 79 block of illinois-scicomp/
machine-shop-maintenance#80 is written to its node's kernel log (tests/harness/follow_harness.py). The
provisional alert must be listed by Alertmanager within 10 s of the write, naming the node and the cause; once
the job has failed, the final verdict names the same cause, says it held, and the provisional alert is resolved.
The 20-run figures (a real PyTorch job that hangs) are bench/follow_live.py's.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from firstfault.store.provisional import ProvisionalLedger
from firstfault.store.repo import VerdictStore
from tests.harness.follow_harness import (
    Daemon,
    alerts,
    receiver,
    start_watch_cursor_now,
    wait_alert,
    write_config,
    write_fault,
)


@pytest.mark.integration
def test_a_fault_on_a_running_job_alerts_within_seconds_and_the_final_verdict_agrees(
        slurm_cluster: Any, am: Any, tmp_path: Path) -> None:
    root = tmp_path / "ev"
    (root / "jobs").mkdir(parents=True)
    node = slurm_cluster.node
    with receiver() as hook:
        cfg = write_config(tmp_path, root=root, am_url=am.url, hook_url=hook.url, cluster="ffe2e")
        start_watch_cursor_now(cfg)
        daemon = Daemon(cfg, {**os.environ, "SLURM_CONF": str(slurm_cluster.conf)}, tmp_path / "daemon.log")
        daemon.start()
        jid = ""
        try:
            jid = slurm_cluster.sbatch("#!/bin/sh\nsleep 25\nexit 1\n", f"--output={root}/jobs/slurm-%j.out")
            slurm_cluster.wait_state(jid, ("RUNNING",))
            daemon.wait_event(lambda e: e.get("ref") == jid and "following" in e.get("event", ""), 30)
            t0 = write_fault(root, node)
            t1, alert = wait_alert(am.url, jid, "FirstfaultProvisional", 15)
            assert t1 - t0 < 10
            assert alert["labels"]["node"] == node and alert["labels"]["category"] == "gpu.fallen_off_bus"
            assert alert["labels"]["outcome"] == "running" and alert["labels"]["cluster"] == "ffe2e"
            assert slurm_cluster.wait_state(jid, timeout=60) == "FAILED"
            final = daemon.wait_event(lambda e: e.get("ref") == jid and "verdict_id" in e, 60)
            assert final["category"] == "gpu.fallen_off_bus"
        finally:
            daemon.stop()
            if jid:
                slurm_cluster.run("scancel", jid, check=False)
        with VerdictStore.open(f"sqlite:///{tmp_path / 'verdicts.db'}") as store:
            stored = store.get(final["verdict_id"])
            assert stored is not None and [s.held for s in stored.supersedes] == [True]
            (rec,) = ProvisionalLedger(store).superseded_by(final["verdict_id"])
            assert rec.held and rec.nodes == (node,)
        # The provisional alert is resolved; the final one stands.
        assert alerts(am.url, workload=jid, alertname="FirstfaultProvisional") == []
        assert [a["labels"]["category"] for a in alerts(am.url, workload=jid, alertname="FirstfaultVerdict")] == [
            "gpu.fallen_off_bus"]
        # Two deliveries for the job, each once (the session's Slurm may have ended other jobs just before: the
        # daemon's first pass looks back 2 min); the final one names the provisional one's id.
        mine = [b for b in hook.bodies if b["workload"]["id"] == jid]
        assert sorted(hook.deliveries[b["delivery"]] for b in mine) == [1, 1]
        prov = next(b for b in mine if b["provisional"])
        fin = next(b for b in mine if not b["provisional"])
        assert fin["supersedes"][0]["delivery"] == prov["delivery"] and fin["supersedes"][0]["held"] is True
