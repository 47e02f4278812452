"""The lab's captured runs (tests/lab/captured/): one real run per fault, kept so that the verdict on real
PyTorch and Slurm output is checked on every test run, torch or no torch (test_lab.py makes them afresh)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lab.check import check_bundle

from firstfault.analysis.analyze import Analyzer
from tests.lab.first_run import LEADS_WRONG, WRONG

CAPTURED = Path(__file__).parent / "captured"
BUNDLES = sorted(p.parent for p in CAPTURED.glob("*/expected.yaml"))


def _param(bundle: Path) -> object:
    """A captured run; one whose first-run verdict is wrong (first_run.WRONG) is a strict expected failure."""
    why = WRONG.get(bundle.name)
    marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
    return pytest.param(bundle, id=bundle.name, marks=marks)


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer()


def test_every_fault_has_a_captured_run() -> None:
    from lab.faults import FAULTS

    assert sorted(b.name for b in BUNDLES) == sorted(FAULTS)


def test_first_run_table_names_real_faults() -> None:
    from lab.faults import FAULTS

    assert set(WRONG) <= set(FAULTS)
    assert set(LEADS_WRONG) <= set(LEADS)


@pytest.mark.parametrize("bundle", [_param(b) for b in BUNDLES])
def test_captured_run(bundle: Path, analyzer: Analyzer) -> None:
    c = check_bundle(bundle, analyzer)
    assert c.ok, f"{bundle.name}: {c.problems} (got {c.domain} {c.category} on {c.nodes}: {c.summary})"


# The lead each fault must give, from the fault itself: the rank that stopped (a hang) is the laggard the
# others waited for (or never joined); the rank killed or stopped from outside, or gone by itself, is the first exit.
LEADS = {
    "hang_collective": "laggard_rank",
    "hang_monitored_barrier": "laggard_rank",
    "sigkill_external": "first_exit",
    "dataloader_worker_sigkill": "first_exit",
    # a stop signal torchrun did not send, a silent exit code, a clean early return, a rank that never joined
    "sigterm_external": "first_exit",
    "sigint_external": "first_exit",
    "os_exit_code": "first_exit",
    "os_exit_torn_error_file": "first_exit",
    "early_exit_clean": "first_exit",
    "store_timeout": "laggard_rank",
    # the new launchers (a JAX or MPI hang has no collective timeout that could tell a laggard: no lead asked)
    "mpirun_sigkill_external": "first_exit",
    "jax_sigkill_external": "first_exit",
    "lightning_sigkill_external": "first_exit",
    "lightning_hang": "laggard_rank",
    # fourth round: Accelerate's launcher (torchrun inside it) and DeepSpeed's. DeepSpeed's launcher's own line for
    # the failed process names the last command it spawned, not the one that failed (launch.py's sigkill_handler
    # prints its loop variable `cmd`: `['python', '-u', 'job.py', '--local_rank=2'] exits with return code = -9`
    # when rank 1 was killed), so the lead must come from the ranks' own words, never from that `--local_rank`
    "accelerate_sigkill_external": "first_exit",
    "accelerate_hang": "laggard_rank",
    "deepspeed_sigkill_external": "first_exit",
    "deepspeed_hang": "laggard_rank",
    # sixth round: a rank frozen from outside (SIGSTOP) is the laggard its peers waited for
    "sigstop_external": "laggard_rank",
    # seventh round: a rank gone by its own MPI_Abort with no message, as os._exit(3)
    "mpirun_abort": "first_exit",
    # twelfth round, TensorFlow: a worker killed from outside; a worker hung, the others' collective timeout
    "tf_sigkill_external": "first_exit",
    "tf_hang": "laggard_rank",
}


@pytest.mark.parametrize("fault", [pytest.param(f, marks=[pytest.mark.xfail(strict=True, reason=LEADS_WRONG[f])]
                                                  if f in LEADS_WRONG else []) for f in sorted(LEADS)])
def test_captured_runs_name_the_faulty_rank_as_a_lead(fault: str, analyzer: Analyzer) -> None:
    from lab.faults import FAULTS

    want_ranks = [int(r) for r in FAULTS[fault].ranks.split(",")]
    v = analyzer.analyze_path(str(CAPTURED / fault))
    assert v.attributed_domain == "unknown" and v.affected_nodes == []
    kinds = [(ld.kind, ld.ranks) for ld in v.leads]
    assert kinds and kinds[0] == (LEADS[fault], want_ranks), kinds
