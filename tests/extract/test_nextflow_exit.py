"""Nextflow's report of a task that failed, read by who ran the task (extract/signals.py, catalog/exits.yaml printer
`nextflow`): a task that ended 140 (128 + SIGUSR2) under the Slurm or LSF executor met its time limit, since
Nextflow asks Slurm for SIGUSR2 before the limit (`--signal B:USR2@30`, nextflow-io/nextflow SlurmExecutor) and LSF
sends it at a run limit (bsub -W); under another executor, or with another status, it is no time limit.

Lines follow Nextflow's format strings (TaskProcessor's `Process `%s` terminated with an error exit status (%s)`,
AnsiLogObserver's `executor >  %s (%d)`) with the values of the threads cited; none comes from tests/wild or from
the corpora's bundles.
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers

# nf-core/eager#1166 (https://github.com/nf-core/eager/issues/1166): `executor = 'slurm'`, bwa's tasks ending 140;
# the thread's process name, the report as Nextflow prints it once it stops retrying
EXIT_140 = "  Process `bwa (B_S_NHMD_231146)` terminated with an error exit status (140)"
RETRIED = ("[73/e6e607] NOTE: Process `bwa (B_S_NHMD_231146)` terminated with an error exit status (140) -- "
           "Execution is retried (3)")  # the thread's own line: one try, Nextflow resubmits it


def _executor(name: str) -> str:
    # hillerlab/make_lastz_chains#48 (https://github.com/hillerlab/make_lastz_chains/issues/48) prints
    # `executor >  local (627)`; the executor's name is the case's
    return f"executor >  {name} (10)"


def _signals(lines: list[str]) -> list[dict[str, object]]:
    return [d.fields for d in helpers.scan(helpers.APPLICATION, lines, "application") if d.kind == "process.signal"]


@pytest.mark.parametrize("executor", ["slurm", "lsf"])
def test_a_task_that_ended_140_under_a_batch_scheduler_met_its_time_limit(executor: str) -> None:
    got = _signals([_executor(executor), "Caused by:", EXIT_140])
    assert [(f["signal"], f["by"], f.get("due_to"), f.get("scheduler")) for f in got] == [
        ("SIGUSR2", "scheduler", "time_limit", executor)]


@pytest.mark.parametrize(("lines", "why"), [
    ([_executor("local"), EXIT_140], "no scheduler sent it"),
    ([EXIT_140], "the stream names no executor"),
    ([_executor("slurm"), EXIT_140.replace("(140)", "(137)")], "SIGKILL has other senders"),
    ([_executor("slurm"), EXIT_140.replace("(140)", "(1)")], "the task's own exit value"),
])
def test_near_miss_no_time_limit(lines: list[str], why: str) -> None:
    assert not any(f.get("due_to") == "time_limit" for f in _signals(lines)), why


def test_a_task_nextflow_retries_is_no_end() -> None:
    assert _signals([_executor("slurm"), RETRIED]) == []


def test_the_pipelines_end_is_the_schedulers_time_limit(make_bundle: BundleMaker) -> None:
    lines = [_executor("slurm"), "Error executing process > 'bwa (B_S_NHMD_231146)'", "", "Caused by:", EXIT_140]
    workload = copy.deepcopy(WORKLOAD)
    workload["workload"].pop("terminal_state", None)
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": "".join(f"{ln}\n" for ln in lines)}, workload)))
    assert v.attributed_domain == "scheduler"
    assert v.root_cause is not None and v.root_cause.category == "scheduler.time_limit"
    assert v.outcome == "timeout"


def test_under_the_local_executor_the_pipeline_is_not_a_time_limit(make_bundle: BundleMaker) -> None:
    lines = [_executor("local"), "Caused by:", EXIT_140]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": "".join(f"{ln}\n" for ln in lines)})))
    assert v.attributed_domain != "scheduler"
