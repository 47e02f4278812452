"""Actions on a provisional verdict (watch --follow, actions.provisional): drain the cause's node, then cancel
(or requeue: here as a dry run) the running job, on the actions tests' own Slurm (tests/actions/conftest.py),
every decision in the ledger under the provisional verdict's id.

The provisional verdict is the engine's: the actions bundle with the kernel's Xid 79 line (tests/actions/
conftest.py) judged as its attempt runs (no end, no terminal state), the job a real `sleep` batch job on the node.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from firstfault import records
from firstfault.actions.actor import Actor, JobActor
from firstfault.actions.policy import Policy
from firstfault.actions.slurm import SlurmDrain, SlurmJob
from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import Context, load_bundle
from firstfault.collect.evidence import collect_bundle
from firstfault.model import Enrichment, Verdict
from firstfault.store import VerdictStore
from firstfault.store.actions import ActionLedger
from firstfault.store.provisional import ProvisionalLedger
from tests.actions.conftest import CUDA_OOM, NODE, XID79, bundle, node_state
from tests.harness.slurm_harness import SlurmCluster

pytestmark = pytest.mark.integration

LIVE = Policy(max_per_hour=5, max_share=1.0, dry_run=False)
DRY = Policy(max_per_hour=5, max_share=1.0, dry_run=True)


def _provisional(root: Path, wid: str, **files: str) -> Verdict:
    b = load_bundle(str(bundle(root, wid, **files)))
    wl = records.replace(b.workload, terminal_state=None, window=records.replace(b.workload.window, end=None))
    b.context = Context.from_spec(wl)
    an = Analyzer()
    analysis = an.start(b.context)
    collect_bundle(an, b, analysis)
    return analysis.finish(provisional=True)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[VerdictStore]:
    s = VerdictStore.open(f"sqlite:///{tmp_path / 'verdicts.db'}")
    yield s
    s.close()


@pytest.fixture(autouse=True)
def _slurm_conf(action_slurm: SlurmCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_CONF", str(action_slurm.conf))


@pytest.fixture
def job(idle_node: SlurmCluster) -> Iterator[str]:
    jid = idle_node.sbatch("#!/bin/sh\nsleep 300\n")
    idle_node.wait_state(jid, ("RUNNING",))
    try:
        yield jid
    finally:
        idle_node.run("scancel", jid, check=False)
        idle_node.wait_state(jid, timeout=60)
        # Its CPUs are free once slurmd has ended it (minutes on a loaded machine): idle_node waits 30 s only.
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and "CPUAlloc=0 " not in idle_node.run(
                "scontrol", "show", "node", NODE, check=False).stdout:
            time.sleep(1)


def _job_state(c: SlurmCluster, jid: str, until: str | None = None) -> tuple[str, str]:
    """(JobState, Restarts) of `scontrol show job`; with `until`, once it is that state (30 s at most)."""
    deadline = time.monotonic() + 30
    while True:
        text = c.run("scontrol", "show", "job", jid).stdout
        fields = dict(f.split("=", 1) for f in text.split() if "=" in f)
        if until is None or fields["JobState"] == until or time.monotonic() > deadline:
            return fields["JobState"], fields["Restarts"]
        time.sleep(0.3)


def test_a_provisional_hardware_cause_drains_the_node_then_cancels_the_job(
        idle_node: SlurmCluster, job: str, store: VerdictStore, tmp_path: Path) -> None:
    v = _provisional(tmp_path, "run-1", kernel=XID79.format(node=NODE))
    assert v.provisional and v.root_cause is not None and v.root_cause.nodes == [NODE]
    pid, _ = ProvisionalLedger(store).record(v, cluster="ffact", ref=job, delivery="d")
    drain = Actor(SlurmDrain(timeout=15), LIVE, store=store, cluster="ffact")
    cancel = JobActor(SlurmJob("cancel", timeout=15), LIVE, SlurmDrain(timeout=15), store=store, cluster="ffact")
    (d,) = drain.act_provisional(v, pid, job)
    assert (d.outcome, d.target, d.provisional_id, d.verdict_id) == ("done", NODE, pid, None)
    assert node_state(idle_node)[1] == f"firstfault: gpu.fallen_off_bus p{pid}"
    (r,) = cancel.act_provisional(v, pid, job)
    assert (r.kind, r.outcome, r.target) == ("cancel", "done", f"job {job}")
    assert r.detail == f"ran scancel {job}"
    # Cancelled: it no longer holds the allocation while its ranks wait for a GPU that is gone.
    assert idle_node.wait_state(job, timeout=60) == "CANCELLED"
    # Sent again (a follower's restart): the decisions stand, nothing is done twice.
    assert [x.id for x in drain.act_provisional(v, pid, job)] == [d.id]
    assert [x.id for x in cancel.act_provisional(v, pid, job)] == [r.id]
    assert [(a.kind, a.outcome) for a in ActionLedger(store).for_provisional(pid)] == [("drain", "done"),
                                                                                      ("cancel", "done")]


def test_a_job_is_not_requeued_onto_a_node_still_in_service(idle_node: SlurmCluster, job: str, store: VerdictStore,
                                                            tmp_path: Path) -> None:
    """Near miss: the same provisional verdict with no drain taken (none configured): the job is left running."""
    v = _provisional(tmp_path, "run-2", kernel=XID79.format(node=NODE))
    pid, _ = ProvisionalLedger(store).record(v, cluster="ffact", ref=job, delivery="d")
    (r,) = JobActor(SlurmJob("cancel", timeout=15), LIVE, SlurmDrain(timeout=15), store=store,
                    cluster="ffact").act_provisional(v, pid, job)
    assert r.outcome == "refused" and r.detail.startswith(f"node(s) {NODE} still in service")
    assert _job_state(idle_node, job)[0] == "RUNNING" and node_state(idle_node)[0] in ("allocated", "mixed")


def test_a_dry_run_says_what_it_would_do_and_changes_nothing(idle_node: SlurmCluster, job: str,
                                                            store: VerdictStore, tmp_path: Path) -> None:
    v = _provisional(tmp_path, "run-3", kernel=XID79.format(node=NODE))
    pid, _ = ProvisionalLedger(store).record(v, cluster="ffact", ref=job, delivery="d")
    (d,) = Actor(SlurmDrain(timeout=15), DRY, store=store, cluster="ffact").act_provisional(v, pid, job)
    (r,) = JobActor(SlurmJob("requeue", timeout=15), DRY, SlurmDrain(timeout=15), store=store,
                    cluster="ffact").act_provisional(v, pid, job)
    assert d.outcome == "dry_run" and r.outcome == "dry_run" and r.detail == f"would run: scontrol requeue {job}"
    assert _job_state(idle_node, job)[0] == "RUNNING"


def test_the_final_verdict_finds_the_node_drained(idle_node: SlurmCluster, job: str, store: VerdictStore,
                                                  tmp_path: Path) -> None:
    v = _provisional(tmp_path, "run-4", kernel=XID79.format(node=NODE))
    pid, _ = ProvisionalLedger(store).record(v, cluster="ffact", ref=job, delivery="d")
    drain = Actor(SlurmDrain(timeout=15), LIVE, store=store, cluster="ffact")
    drain.act_provisional(v, pid, job)
    final = Analyzer().analyze_path(str(tmp_path / "run-4"))
    vid = store.write(final, Enrichment(cluster="ffact"))
    (rec,) = drain.act(final, vid)
    assert rec.outcome == "skipped" and "not drained twice" in rec.detail  # draining: its job still runs


def test_a_software_cause_is_never_acted_on(idle_node: SlurmCluster, job: str, store: VerdictStore,
                                            tmp_path: Path) -> None:
    v = _provisional(tmp_path, "run-5", app=CUDA_OOM)
    if v.root_cause is None:  # a CUDA OOM stands only once the launcher gave up: nothing to act on at all
        return
    pid, _ = ProvisionalLedger(store).record(v, cluster="ffact", ref=job, delivery="d")
    (r,) = JobActor(SlurmJob("requeue", timeout=15), LIVE, SlurmDrain(timeout=15), store=store,
                    cluster="ffact").act_provisional(v, pid, job)
    assert r.outcome == "ineligible"
