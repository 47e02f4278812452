"""srun tearing its step down (its --wait timer after the first task exited, or a task's bad exit): the `task N:
Killed` reports after its `Terminating StepId` are srun's own kill of the survivors, never a first exit
(tests/fixtures/srun-teardown: real srun -W runs)."""

from __future__ import annotations

from pathlib import Path

from firstfault.analysis.analyze import Analyzer
from firstfault.extract.signals import ProcessSignalExtractor
from tests.conftest import BundleMaker
from tests.extract.helpers import scan

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "srun-teardown"
SIG = ProcessSignalExtractor()


def _killed(lines: list[str]) -> list[tuple[str | None, object]]:
    drafts = scan(SIG, lines, source="application")
    return [(d.host, d.fields.get("due_to")) for d in drafts if d.fields.get("signal") == "SIGKILL"]


def test_the_survivors_killed_after_srun_terminates_the_step_are_its_teardown() -> None:
    for name in ("wait-exit0.out", "wait-exit3.out"):
        lines = (FIX / name).read_text().splitlines()
        assert _killed(lines) == [("ffnode1", "step_teardown")], name


def test_a_task_killed_with_no_teardown_before_it_is_its_own_death() -> None:
    # the same report without srun's teardown first (the kernel's OOM killer, someone's kill -9): no due_to
    assert _killed(["srun: error: ffnode1: tasks 0-1: Killed"]) == [("ffnode1", None)]


def test_no_first_exit_lead_names_a_task_srun_killed(make_bundle: BundleMaker) -> None:
    # tasks on four nodes, the first to exit not reported (it exited 0): srun's --wait killed the others (the output
    # of NatLabRockies/torc#318, the job-runner step, the hosts as posted)
    lines = ["srun: First task exited 30s ago", "srun: StepId=5981146.0 tasks 0-3: running",
             "srun: StepId=5981146.0 task 4: exited", "srun: Terminating StepId=5981146.0",
             "*** STEP 5981146.0 ON dane138 CANCELLED AT 2026-05-12T12:43:25 DUE to SIGNAL Killed ***",
             "srun: error: dane900: task 3: Killed", "srun: error: dane138: task 0: Killed",
             "srun: error: dane894: task 2: Killed", "srun: error: dane703: task 1: Killed"]
    wl = {"apiVersion": "firstfault/v1", "workload": {"id": "5981146", "scheduler": "static",
                                                       "nodes": ["dane138", "dane703", "dane894", "dane900"]},
          "sources": [{"kind": "application", "path": "app/slurm.out"}]}
    v = Analyzer().analyze_path(str(make_bundle({"app/slurm.out": "\n".join(lines) + "\n"}, wl)))
    assert v.outcome == "failed" and v.attributed_domain == "unknown"
    assert not [ld for ld in v.leads if ld.kind == "first_exit"]
