"""The failure lab: real PyTorch jobs (gloo, CPU) with one injected fault each, against firstfault.

Every run is produced afresh: the torchrun faults on bare `torchrun --standalone`,
the Slurm faults with sbatch + srun on the session's real Slurm (`slurm_cluster`),
except the two memory-limit faults, which need memory enforcement (task/cgroup;
jobacct_gather OverMemoryKill) and get the lab's own Slurm clusters
(lab.slurm.start) so that the session cluster keeps its configuration. The
expectation of each fault is lab/faults.py's, decided from the fault, never
from firstfault's answer.

All runs happen once per module, WORKERS at a time (the machine has 2 cores), the lanes (the Slurm admin
faults, the Ray faults) each in a thread of its own; each test then analyses one bundle. LAB_KEEP=DIR keeps
the bundles in DIR. Which faults run afresh is tests/lab/selection.py's: by default one per launcher and mode,
every fault with FIRSTFAULT_LAB=all (CI), LAB_ONLY="PATTERN ..." (shell-style patterns of fault names) only
those; the others' tests are deselected (tests/conftest.py).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from lab.check import DEFINITIVE, compare
from lab.faults import FAULTS, LOCAL_MODES

from firstfault.analysis.analyze import Analyzer
from lab import driver
from tests.lab.first_run import WRONG
from tests.lab.selection import selected

pytestmark = pytest.mark.integration

TORCHRUN = [f.name for f in FAULTS.values() if f.mode == "torchrun"]
SLURM = [f.name for f in FAULTS.values() if f.mode == "slurm"]
# mpirun, Lightning, JAX, Ray, Accelerate, DeepSpeed, Dask
LOCAL = [f.name for f in FAULTS.values() if f.mode in LOCAL_MODES]
# Runs at once. A run is CPU-bound for a few seconds (4 Python processes importing torch) and then mostly
# waits (gloo timeouts, scancel, the time limit), so 3 at a time keep 2 cores busy.
WORKERS = 3


def _launcher_missing(mode: str) -> str | None:
    """Why a new launcher's faults cannot run here (None when they can): its package or binary is missing."""
    if mode == "mpirun" and shutil.which("mpirun") is None:
        return "mpirun not installed (scripts/ci/install-servers.sh: openmpi-bin)"
    module = {"mpirun": "mpi4py", "lightning": "lightning", "jax": "jax", "ray": "ray.train",
              "accelerate": "accelerate", "deepspeed": "deepspeed", "dask": "distributed",
              "tf": "tensorflow"}[mode]
    top = module.split(".")[0]
    if importlib.util.find_spec(top) is None:
        return f"{top} is not installed (pip install -e '.[lab]')"
    return None


def _torch_ok() -> str | None:
    if importlib.util.find_spec("torch") is None:
        return "torch is not installed (pip install -e '.[lab]')"
    probe = subprocess.run([sys.executable, "-c", "import torch.distributed as d; assert d.is_gloo_available()"],
                           capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        return f"torch with gloo not importable: {probe.stderr.strip()[-300:]}"
    return None


@pytest.fixture(scope="module")
def lab_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    why = _torch_ok()
    if why:
        pytest.skip(why)
    clusters: dict[str, Any] = {}
    started: list[Any] = []
    slurm_skip = ""
    # the session's Slurm (munge, MariaDB, slurmdbd, slurmctld, slurmd) only when a Slurm fault is to run: a
    # LAB_ONLY of other launchers' faults starts no daemon
    if any(f.mode == "slurm" and selected(f.name) for f in FAULTS.values()):
        try:
            clusters["harness"] = request.getfixturevalue("slurm_cluster")
        except pytest.skip.Exception as exc:
            slurm_skip = str(exc)
    else:
        slurm_skip = "no Slurm fault selected"
    try:
        if clusters:
            from lab import slurm

            for profile in sorted({f.slurm_profile for f in FAULTS.values() if selected(f.name)} - {"harness"}):
                if profile == "cgroup" and not slurm.cgroup_available():
                    continue  # its faults skip (a failure in CI), the others still run
                c = slurm.start(tmp_path_factory.mktemp(f"lab-slurm-{profile}"), profile)
                started.append(c)
                clusters[profile] = c
        sge_skip = _start_sge(clusters, started, tmp_path_factory)  # twelfth round: the lab's Grid Engine
        memcg_skip = driver.memcg_unavailable()
        pids_skip = driver.pids_cgroup_unavailable()
        faults = [f for f in FAULTS.values()
                  if (f.mode == "torchrun" and not (f.memcg_limit and memcg_skip) and not (f.pids_cgroup and pids_skip)
                      and not driver.under_job_unavailable(f))
                  or (f.mode == "slurm" and f.slurm_profile in clusters)
                  or (f.mode == "sge" and "sge" in clusters)
                  or (f.mode in LOCAL_MODES and not _launcher_missing(f.mode))]
        faults = [f for f in faults if selected(f.name)]
        keep = os.environ.get("LAB_KEEP")  # a directory to keep the bundles in, for reading them afterwards
        out = Path(keep) if keep else tmp_path_factory.mktemp("lab-bundles")
        t0 = time.monotonic()
        results = driver.run_many(faults, out, workers=WORKERS, clusters=clusters)
        elapsed = time.monotonic() - t0
        yield {"results": {r.fault: r for r in results}, "slurm_skip": slurm_skip, "memcg_skip": memcg_skip,
               "pids_skip": pids_skip, "sge_skip": sge_skip,
               "seconds": elapsed, "clusters": set(clusters)}
    finally:
        for c in started:
            c.stop()


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer()


def _analyse(lab_runs: dict[str, Any], analyzer: Analyzer, name: str) -> None:
    fault = FAULTS[name]
    if fault.mode == "slurm" and lab_runs["slurm_skip"]:
        pytest.skip(lab_runs["slurm_skip"])
    if fault.mode == "slurm" and fault.slurm_profile not in lab_runs["clusters"]:
        pytest.skip(f"{name}: no Slurm of profile {fault.slurm_profile} here (cgroup v1 memory+freezer needed)")
    if fault.mode in LOCAL_MODES and (why := _launcher_missing(fault.mode)):
        pytest.skip(f"{name}: {why}")
    if fault.memcg_limit and lab_runs["memcg_skip"]:
        pytest.skip(f"{name}: {lab_runs['memcg_skip']}")
    if fault.pids_cgroup and lab_runs["pids_skip"]:
        pytest.skip(f"{name}: {lab_runs['pids_skip']}")
    if why := driver.under_job_unavailable(fault):  # a FUSE daemon, a loop device, firewall rules (ninth round)
        pytest.skip(f"{name}: {why}")
    if fault.mode == "sge" and lab_runs["sge_skip"]:
        pytest.skip(f"{name}: {lab_runs['sge_skip']}")
    if name not in lab_runs["results"]:
        pytest.skip(f"{name}: not selected (tests/lab/selection.py)")
    r = lab_runs["results"][name]
    assert not r.error, f"{name}: the run itself failed: {r.error}"
    if name in WRONG:  # wrong on its first run (tests/lab/first_run.py): a fresh run may differ, so not strict
        pytest.xfail(WRONG[name])
    exp = yaml.safe_load((r.bundle / "expected.yaml").read_text())
    node = "ffnode1" if fault.mode == "slurm" else socket.gethostname()
    assert exp == fault.expected(node), "expected.yaml must be the fault's own definition"
    v = analyzer.analyze_path(str(r.bundle))
    got = f"{v.attributed_domain} {v.root_cause.category if v.root_cause else '-'} nodes={v.affected_nodes}"
    summary = v.root_cause.summary if v.root_cause else ""
    # the lines the verdict cites as its cause: what read otherwise than the capture, in the message (_tails)
    cited = "".join(f"\n  cause {e.file}:{e.line}: {e.text[:200]}" for e in v.evidence if e.role == "cause")
    if exp["domain"] in ("unknown", "none"):
        assert v.attributed_domain not in DEFINITIVE, (
            f"{name}: FALSE DEFINITIVE: expected {exp['domain']}, got {got} ({summary}); bundle {r.bundle}{cited}"
            f"\n{_tails(r.bundle)}")
    problems = compare(v, exp)
    assert not problems, (f"{name}: {problems}\n  got: {got}\n  summary: {summary}\n  bundle: {r.bundle}"
                          f"\n  run: {r.detail}{cited}\n{_tails(r.bundle)}")


def _tails(bundle: Path, lines: int = 12, budget: int = 6000) -> str:
    """The last lines of each log the run wrote, for the failure's message: a fresh run's bundle is gone with the
    session (CI keeps only what the test printed), and a run that went otherwise than its capture is read here."""
    out: list[str] = []
    for f in sorted(p for p in bundle.rglob("*") if p.is_file() and p.suffix not in (".yaml", ".md")):
        tail = f.read_text(errors="replace").splitlines()[-lines:]
        out.append(f"  == {f.relative_to(bundle)} (last {len(tail)} lines)")
        out += [f"  | {line[:200]}" for line in tail]
    text = "\n".join(out)
    return text if len(text) <= budget else text[:budget] + "\n  | ..."


@pytest.mark.parametrize("name", TORCHRUN)
def test_torchrun_fault(lab_runs: dict[str, Any], analyzer: Analyzer, name: str) -> None:
    _analyse(lab_runs, analyzer, name)


@pytest.mark.parametrize("name", SLURM)
def test_slurm_fault(lab_runs: dict[str, Any], analyzer: Analyzer, name: str) -> None:
    _analyse(lab_runs, analyzer, name)


@pytest.mark.parametrize("name", LOCAL)
def test_launcher_fault(lab_runs: dict[str, Any], analyzer: Analyzer, name: str) -> None:
    _analyse(lab_runs, analyzer, name)


def test_fault_catalogue() -> None:
    """At least 16 faults, every expectation in the verdict's vocabulary, unknown/none never with a cause."""
    assert len(FAULTS) >= 16
    domains = {"software", "storage", "scheduler", "unknown", "none", "hardware", "network", "infrastructure"}
    for f in FAULTS.values():
        assert f.domain in domains, f.name
        if f.domain in ("unknown", "none"):
            assert f.category is None and f.affected_nodes == [], f.name
        else:
            assert f.category, f.name
    assert {f.mode for f in FAULTS.values()} == {"torchrun", "slurm", *LOCAL_MODES, "sge"}


def test_captured_bundles_are_readable() -> None:
    """The saved real runs under tests/lab/captured load as bundles and carry their fault's expectation."""
    root = Path(__file__).parent / "captured"
    bundles = sorted(p.parent for p in root.glob("*/expected.yaml"))
    assert {b.name for b in bundles} == set(FAULTS), "one captured run per fault"
    from firstfault.bundle import load_bundle

    for b in bundles:
        load_bundle(b)
        exp = yaml.safe_load((b / "expected.yaml").read_text())
        assert exp["domain"] == FAULTS[b.name].domain and exp.get("category") == FAULTS[b.name].category


# ---------------------------------------------------------------- twelfth round: Grid Engine (lab/sge.py)
SGE = [f.name for f in FAULTS.values() if f.mode == "sge"]


def _start_sge(clusters: dict[str, Any], started: list[Any], tmp_path_factory: pytest.TempPathFactory) -> str:
    """Starts the lab's Grid Engine cell where a Grid Engine fault is selected; why it is not there otherwise (its
    faults then skip with that reason: the packages missing, or not root)."""
    if not any(f.mode == "sge" and selected(f.name) for f in FAULTS.values()):
        return "no Grid Engine fault selected"
    from lab import sge

    why = sge.unavailable()
    if why:
        return why
    c = sge.start(tmp_path_factory.mktemp("lab-sge"))
    started.append(c)
    clusters["sge"] = c
    return ""


@pytest.mark.parametrize("name", SGE)
def test_sge_fault(lab_runs: dict[str, Any], analyzer: Analyzer, name: str) -> None:
    _analyse(lab_runs, analyzer, name)
