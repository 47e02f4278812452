"""Shared helpers: small bundles written on the fly."""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from tests.harness.slurm_harness import SlurmCluster, missing_binaries, start_slurm
from tests.lab import selection

if TYPE_CHECKING:
    from tests.corpus import SharedVerdicts
    from tests.harness.e2e_util import TimeLimitJob

try:
    from _pytest.nodeid import NodeId  # pytest >= 9.2
except ImportError:  # older pytest: xdist's own `--dist loadgroup` renaming works
    NodeId = None  # type: ignore

WORKLOAD = {
    "apiVersion": "firstfault/v1",
    "workload": {
        "id": "77",
        "scheduler": "static",
        "window": {"start": "2026-11-02T10:00:00Z", "end": "2026-11-02T11:00:00Z"},
        "nodes": ["node-01", "node-02", "node-03"],
        "ranks": {"node-01": "0-1", "node-02": "2-3", "node-03": "4-5"},
        "terminal_state": "FAILED",
    },
    "sources": [
        {"kind": "kernel", "path": "nodes/{node}/kern.log"},
        {"kind": "application", "path": "app/rank-{rank}.log"},
    ],
}

def workload_ending(state: str | None) -> dict[str, Any]:
    """WORKLOAD with its terminal state `state` (None: the end not recorded)."""
    wl = copy.deepcopy(WORKLOAD)
    if state is None:
        del wl["workload"]["terminal_state"]
    else:
        wl["workload"]["terminal_state"] = state
    return wl


XID79 = (
    "Nov  2 10:05:00 node-02 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=123, name=python, "
    "GPU has fallen off the bus.\n"
)
NCCL_REMOTE = (
    "node-01:1:2 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> "
    "with status=12 opcode=0 len=0 vendor err 129 (Recv)\n"
)

BundleMaker = Callable[..., Path]


@pytest.fixture
def make_bundle(tmp_path: Path) -> BundleMaker:
    def make(files: dict[str, str | bytes], workload: dict | None = None, name: str = "b") -> Path:
        root = tmp_path / name
        root.mkdir()
        (root / "workload.yaml").write_text(yaml.safe_dump(workload or WORKLOAD, sort_keys=False))
        for rel, content in files.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                p.write_bytes(content)
            else:
                p.write_text(content)
        return root

    return make


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    """munge + MariaDB + slurmdbd + slurmctld + slurmd on 127.0.0.1, once per session, stopped by PID.

    Used by the attempt sources' tests (tests/identify), the Blueprint's and the actions' end-to-end tests
    and the failure lab (tests/lab)."""
    missing = missing_binaries()
    if missing:
        pytest.skip(f"Slurm test stack not installed (missing {', '.join(missing)}); "
                    "scripts/ci/install-servers.sh installs it")
    cluster = start_slurm(tmp_path_factory.mktemp("slurm"))
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def slurm_time_limit_job(slurm_cluster: SlurmCluster, tmp_path_factory: pytest.TempPathFactory) -> TimeLimitJob:
    """One job a session that runs into its time limit, for every test that reads one (tests/identify/test_slurm.py,
    tests/blueprint/test_e2e_run.py): a limit takes a minute to hit, and each module used to wait for a job of its
    own. Submitted at the first request and not waited for; setting the node down would end it NODE_FAIL, so a
    module that does asks for it after the node is back, or waits for its end (`ended`) before."""
    from tests.harness import e2e_util

    root = tmp_path_factory.mktemp("time-limit-job")
    submitted = datetime.now(UTC).replace(microsecond=0)
    job = e2e_util.submit(slurm_cluster, root, "ff-timeout", "#!/bin/sh\nsleep 300\n", "--time=1")
    return e2e_util.TimeLimitJob(slurm_cluster, root, job, submitted)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """In CI an integration test may not skip: a missing server is a failure there. An expected failure
    (`pytest.xfail`, which pytest reports as skipped with `wasxfail`) is no skip: the lab's first-run entries
    (tests/lab/first_run.py) stay expected failures in CI."""
    outcome = yield
    report = outcome.get_result()
    if (
        os.environ.get("CI") == "true"
        and report.skipped
        and not hasattr(report, "wasxfail")
        and item.get_closest_marker("integration") is not None
    ):
        report.outcome = "failed"
        report.longrepr = f"integration test skipped in CI: {report.longrepr}"


@pytest.fixture(scope="session")
def shared_verdicts() -> SharedVerdicts:
    """The default verdicts of the wild corpus, the lab's captures and the examples, made once per process
    (tests/corpus.py SharedVerdicts) for every test that reads them; their tests run on one worker."""
    from tests import corpus  # not at conftest's import: it imports the analysis

    return corpus.shared_verdicts()


# Fixtures that start a Slurm (or use the session's): one munged serves every Slurm on the host and the Slurm
# that started it stops it, so under pytest-xdist (scripts/test.sh) their tests all run on one worker.
SLURM_FIXTURES = frozenset({"slurm_cluster", "action_slurm", "lab_runs"})
LAB_TESTS = Path(__file__).parent / "lab" / "test_lab.py"
LAB_LEFT_OUT = pytest.StashKey[int]()


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselects the fresh lab runs this session does not make (tests/lab/selection.py), and groups the tests
    for `--dist loadgroup`: each test file on one worker (its module fixtures start once; a file that sets
    `SPREAD_TESTS = True` each test on its own), every Slurm user on one worker, every reader of `shared_verdicts`
    on one worker (they are made once)."""
    try:
        selection.mode()
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    keep, left_out = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        name = callspec.params.get("name") if callspec is not None and item.path == LAB_TESTS else None
        (keep if name is None or selection.selected(name) else left_out).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = keep
    config.stash[LAB_LEFT_OUT] = len({item.callspec.params["name"] for item in left_out})  # type: ignore
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            names = getattr(item, "fixturenames", ())
            module = getattr(item, "module", None)
            group = ("slurm" if SLURM_FIXTURES.intersection(names) else "shared-verdicts" if "shared_verdicts" in names
                     # a file whose tests are each a few subprocesses and share no costly fixture (SPREAD_TESTS):
                     # each its own group, so the file is no serial tail at the run's end
                     else item.nodeid if getattr(module, "SPREAD_TESTS", False)
                     else item.path.relative_to(config.rootpath).as_posix())
            item.add_marker(pytest.mark.xdist_group(group))
            if getattr(config.option, "loadgroup", False) and NodeId is not None:
                # xdist 3.8 puts the group into the test's id through `item._nodeid`, which pytest >= 9.2 no
                # longer reads (the id is `item._id`): without this every group is silently split up.
                item._id = NodeId.parse(f"{item.nodeid}@{group}")


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)  # an xdist worker's report to the controller
    if workeroutput is not None:
        workeroutput["lab_left_out"] = session.config.stash.get(LAB_LEFT_OUT, 0)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """The xdist controller: what its workers deselected (each collects the same tests)."""
    left = getattr(node, "workeroutput", {}).get("lab_left_out", 0)
    config: pytest.Config = node.config  # type: ignore[attr-defined]
    config.stash[LAB_LEFT_OUT] = max(config.stash.get(LAB_LEFT_OUT, 0), left)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    left = config.stash.get(LAB_LEFT_OUT, 0)
    if left:
        how = "FIRSTFAULT_LAB=all runs every fault (CI does)"
        if os.environ.get("LAB_ONLY", "").split():
            how = "LAB_ONLY names the faults to run"
        terminalreporter.write_line(f"lab: {left} of {len(selection.FAULTS)} faults not run afresh (deselected; "
                                    f"their captured runs are checked all the same); {how}")
