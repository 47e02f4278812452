"""`drain` on a real Slurm (the actions tests' own stack, tests/actions/conftest.py): scontrol and sinfo for real.

Every test starts and ends with the node idle (the `idle_node` fixture resumes it), and each has a
fresh SQLite verdict store, so the hourly count starts at zero.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from firstfault import records
from firstfault.actions.actor import Actor
from firstfault.actions.policy import Policy
from firstfault.actions.slurm import SlurmDrain, parse_sinfo
from firstfault.model import Enrichment, Verdict
from firstfault.store import VerdictStore
from firstfault.store.actions import ActionLedger
from tests.actions.conftest import NODE, XID79_JOB, Verdicts, job_config, node_state
from tests.harness.e2e_util import invoke, write_config
from tests.harness.slurm_harness import SlurmCluster

pytestmark = pytest.mark.integration

LIVE = Policy(max_per_hour=5, max_share=1.0, dry_run=False)


@pytest.fixture
def store(tmp_path: Path) -> VerdictStore:
    return VerdictStore.open(f"sqlite:///{tmp_path / 'verdicts.db'}")


def _drain(c: SlurmCluster, store: VerdictStore, policy: Policy = LIVE) -> Actor:
    # The Slurm clients find the actions cluster through SLURM_CONF (as on a controller: /etc/slurm).
    return Actor(SlurmDrain(timeout=15), policy, store=store, cluster="ffact")


@pytest.fixture(autouse=True)
def _slurm_conf(action_slurm: SlurmCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_CONF", str(action_slurm.conf))


def test_hardware_verdict_drains_the_node_once(idle_node: SlurmCluster, store: VerdictStore,
                                               verdicts: Verdicts) -> None:
    v = verdicts.hardware()
    vid = store.write(v, Enrichment(cluster="ffact"))
    (rec,) = _drain(idle_node, store).act(v, vid)
    assert (rec.outcome, rec.target, rec.dry_run) == ("done", NODE, False)
    assert node_state(idle_node) == ("drained", f"firstfault: gpu.fallen_off_bus {vid}")
    # The same verdict again (a re-run of `firstfault run --job`): the decision stands, nothing new.
    (again,) = _drain(idle_node, store).act(v, vid)
    assert again.id == rec.id
    assert [r.outcome for r in ActionLedger(store).for_verdict(vid)] == ["done"]


def test_software_verdict_leaves_the_node_alone(idle_node: SlurmCluster, store: VerdictStore,
                                                verdicts: Verdicts) -> None:
    v = verdicts.software()
    vid = store.write(v, Enrichment(cluster="ffact"))
    (rec,) = _drain(idle_node, store).act(v, vid)
    assert (rec.outcome, rec.target) == ("ineligible", "")
    assert rec.detail.startswith("software verdict (app.cuda_oom)")
    assert node_state(idle_node)[0] == "idle"


def test_refused_past_the_hourly_limit(idle_node: SlurmCluster, store: VerdictStore, verdicts: Verdicts) -> None:
    once = Policy(max_per_hour=1, max_share=1.0, dry_run=False)
    first, second = verdicts.hardware("hw-a"), verdicts.hardware("hw-b")
    v1 = store.write(first, Enrichment(cluster="ffact"))
    assert _drain(idle_node, store, once).act(first, v1)[0].outcome == "done"
    # An operator puts the node back; another hardware verdict on it in the same hour is refused.
    idle_node.run("scontrol", "update", f"nodename={NODE}", "state=resume")
    idle_node.wait_node(["idle"])
    v2 = store.write(second, Enrichment(cluster="ffact"))
    (rec,) = _drain(idle_node, store, once).act(second, v2)
    assert rec.outcome == "refused"
    assert rec.detail == "rate limit: 1 drain(s) in the last hour on this cluster (max_per_hour 1)"
    assert node_state(idle_node)[0] == "idle"


def test_share_limit_keeps_a_one_node_partition(idle_node: SlurmCluster, store: VerdictStore,
                                                verdicts: Verdicts) -> None:
    v = verdicts.hardware()
    vid = store.write(v, Enrichment(cluster="ffact"))
    (rec,) = _drain(idle_node, store, Policy(max_per_hour=5, max_share=0.5, dry_run=False)).act(v, vid)
    assert rec.outcome == "refused"
    assert rec.detail == ("share limit: draining ffact1 would leave 1 of 1 nodes of partition debug out of "
                          "service (100%), over max_share 50%")
    assert node_state(idle_node)[0] == "idle"


def test_dry_run_changes_nothing_and_says_what_it_would_do(idle_node: SlurmCluster, store: VerdictStore,
                                                           verdicts: Verdicts) -> None:
    v = verdicts.hardware()
    vid = store.write(v, Enrichment(cluster="ffact"))
    (rec,) = _drain(idle_node, store, Policy(max_per_hour=5, max_share=1.0, dry_run=True)).act(v, vid)
    assert (rec.outcome, rec.dry_run) == ("dry_run", True)
    assert rec.detail == (f"would run: scontrol update nodename={NODE} state=drain "
                          f"'reason=firstfault: gpu.fallen_off_bus {vid}'")
    assert node_state(idle_node) == ("idle", "none")
    # A dry run does not settle the live decision: turning dry_run off later drains.
    assert _drain(idle_node, store).act(v, vid)[0].outcome == "done"
    assert node_state(idle_node)[0] == "drained"


def test_a_node_drained_by_an_operator_is_not_touched(idle_node: SlurmCluster, store: VerdictStore,
                                                      verdicts: Verdicts) -> None:
    idle_node.run("scontrol", "update", f"nodename={NODE}", "state=drain", "reason=maintenance: PSU swap")
    v = verdicts.hardware()
    vid = store.write(v, Enrichment(cluster="ffact"))
    (rec,) = _drain(idle_node, store).act(v, vid)
    # sinfo may append a flag under load ("drained*": not responding); the state is reported as sinfo says it.
    assert rec.outcome == "skipped"
    assert re.fullmatch(rf"node {NODE} is already drained[*~#!%$@^-]?: not drained twice", rec.detail), rec.detail
    assert node_state(idle_node) == ("drained", "maintenance: PSU swap")


def test_a_slurm_that_does_not_answer_is_a_recorded_error(store: VerdictStore, verdicts: Verdicts,
                                                          monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bad = tmp_path / "slurm.conf"
    bad.write_text("ClusterName=nowhere\nSlurmctldHost=nowhere(127.0.0.1)\nSlurmctldPort=9\n")
    monkeypatch.setenv("SLURM_CONF", str(bad))
    v = verdicts.hardware()
    vid = store.write(v)
    (rec,) = Actor(SlurmDrain(timeout=5), LIVE, store=store, cluster="ffact").act(v, vid)
    assert rec.outcome == "error" and rec.detail.startswith("could not read node states: sinfo -a -h -N")
    # An error is not a decision: the next run tries again (and records again).
    (rec2,) = Actor(SlurmDrain(timeout=5), LIVE, store=store, cluster="ffact").act(v, vid)
    assert rec2.outcome == "error" and rec2.id != rec.id


def test_sinfo_states() -> None:
    inv = parse_sinfo("a|debug*|idle\na|gpu|idle\nb|debug*|draining\nc|debug*|idle*\nd|debug*|mixed-\n"
                      "e|debug*|down~\nf|debug*|allocated+drain\n")
    got = {n: (s.groups, s.out, s.acted) for n, s in inv.nodes.items()}
    assert got == {
        "a": (("debug", "gpu"), False, False),
        "b": (("debug",), True, True),
        "c": (("debug",), True, False),  # not responding
        "d": (("debug",), False, False),  # planned by backfill: still in service
        "e": (("debug",), True, False),
        "f": (("debug",), True, True),
    }


def _run_failed_job(c: SlurmCluster, tmp_path: Path, script: str, *, dry_run: bool) -> tuple[str, Any, Verdict]:
    """A job of `script` run to FAILED, then `firstfault run --job` on it with actions.drain: (job, result, verdict)."""
    db = tmp_path / "verdicts.db"
    write_config(tmp_path / "cluster.yaml", job_config(c, db, dry_run=dry_run) | {"outputs": {
        "stdout": {"format": "json"}, "database": {"url": f"sqlite:///{db}"}}})
    job = c.sbatch(script.format(base=c.base, node=NODE))
    c.wait_state(job, {"FAILED"}, 60)
    res = invoke(["run", "-c", str(tmp_path / "cluster.yaml"), "--job", job], {"SLURM_CONF": str(c.conf)})
    assert res.exit_code == 0, (res.stdout, res.stderr)
    return job, res, records.decode(res.stdout, Verdict)


def test_firstfault_run_dry_run_prints_what_it_would_do(idle_node: SlurmCluster, tmp_path: Path) -> None:
    """`firstfault run --job` with actions.drain (dry run): the decision on stderr, the node untouched."""
    c = idle_node
    db = tmp_path / "verdicts.db"
    _, res, v = _run_failed_job(c, tmp_path, XID79_JOB, dry_run=True)
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"
    with VerdictStore.open(f"sqlite:///{db}") as s:
        (row,) = s.list()
    assert (f"action drain {NODE}: dry_run: would run: scontrol update nodename={NODE} state=drain "
            f"'reason=firstfault: gpu.fallen_off_bus {row.id}'") in res.stderr
    assert node_state(c) == ("idle", "none")


def test_watch_acts_after_the_commit(idle_node: SlurmCluster, tmp_path: Path) -> None:
    """`firstfault watch --once`: each verdict committed, then the drain decided on it (here a dry run)."""
    c = idle_node
    db = tmp_path / "verdicts.db"
    write_config(tmp_path / "cluster.yaml", job_config(c, db, dry_run=True))
    hw = c.sbatch(XID79_JOB.format(base=c.base, node=NODE))
    c.wait_state(hw, {"FAILED"}, 60)
    res = invoke(["watch", "-c", str(tmp_path / "cluster.yaml"), "--once"], {"SLURM_CONF": str(c.conf)})
    assert res.exit_code == 0, (res.stdout, res.stderr)
    with VerdictStore.open(f"sqlite:///{db}") as s:
        (row,) = [r for r in s.list(limit=500) if r.workload_id == hw]
        assert s.is_processed("slurm@ffact", hw, 0)  # the ledger names the cluster (watch.py)
        (rec,) = ActionLedger(s).for_verdict(row.id)
    assert (rec.outcome, rec.target, rec.category) == ("dry_run", NODE, "gpu.fallen_off_bus")
    assert f"{hw} attempt 0: action drain {NODE}: dry_run: would run: scontrol update" in res.stderr
    assert node_state(c) == ("idle", "none")


# Issue 26, item 1 on a real Slurm. A failed job on ffact1 whose kernel-log tree (per host, under one root, as many
# sites keep it) also holds another host's log with an Xid 79: before the allocation guard the verdict named that
# host and `scontrol update nodename=<it> state=drain` ran. Now its evidence is not read, and nothing is drained.
OTHER_HOSTS_XID79_JOB = """#!/bin/sh
mkdir -p {base}/kern/$SLURM_JOB_ID/{node} {base}/kern/$SLURM_JOB_ID/ffother9
echo "$(date -u +%Y-%m-%dT%H:%M:%S.%6N+00:00) {node} kernel: usb 1-1: new high-speed USB device" \\
  > {base}/kern/$SLURM_JOB_ID/{node}/kern.log
echo "$(date -u +%Y-%m-%dT%H:%M:%S.%6N+00:00) ffother9 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=$$, \\
name=python, GPU has fallen off the bus." > {base}/kern/$SLURM_JOB_ID/ffother9/kern.log
sleep 1
exit 1
"""


def test_another_hosts_log_in_the_jobs_tree_drains_nothing(idle_node: SlurmCluster, tmp_path: Path) -> None:
    c = idle_node
    job, res, v = _run_failed_job(c, tmp_path, OTHER_HOSTS_XID79_JOB, dry_run=False)
    assert v.workload.nodes == [NODE]  # the allocation, from Slurm's own accounting
    assert v.root_cause is None and "ffother9" not in v.affected_nodes
    assert any(e.file == f"kern/{job}/ffother9/kern.log" and "not in the allocation" in e.message
               for e in v.errors), v.errors
    assert "action drain: ineligible" in res.stderr and "ffother9" not in res.stderr.replace(
        f"kern/{job}/ffother9", "")
    assert node_state(c) == ("idle", "none")


def test_a_verdict_naming_a_node_its_attempt_did_not_hold_drains_nothing(idle_node: SlurmCluster,
                                                                         store: VerdictStore,
                                                                         verdicts: Verdicts) -> None:
    # A verdict whose root cause names ffact1 while its attempt held another node (a stored verdict of an older
    # version, a Service answering for another attempt): the actor refuses, whatever the verdict says.
    v = verdicts.hardware()
    v = records.replace(v, workload=records.replace(v.workload, nodes=["ffother9"]))
    vid = store.write(v, Enrichment(cluster="ffact"))
    (rec,) = _drain(idle_node, store).act(v, vid)
    assert (rec.outcome, rec.target) == ("refused", NODE)
    assert rec.detail == f"node {NODE} is not in the attempt's allocation (ffother9): never drained for it"
    assert node_state(idle_node) == ("idle", "none")
