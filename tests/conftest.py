"""Shared helpers: small bundles written on the fly."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from tests.blueprint.slurm_harness import SlurmCluster, missing_binaries, start_slurm

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

    Used by the execution-context connector tests (tests/blueprint) and the failure lab (tests/lab)."""
    missing = missing_binaries()
    if missing:
        pytest.skip(f"Slurm test stack not installed (missing {', '.join(missing)}); "
                    "scripts/ci/install-servers.sh installs it")
    cluster = start_slurm(tmp_path_factory.mktemp("slurm"))
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """In CI an integration test may not skip: a missing server is a failure there."""
    outcome = yield
    report = outcome.get_result()
    if (
        os.environ.get("CI") == "true"
        and report.skipped
        and item.get_closest_marker("integration") is not None
    ):
        report.outcome = "failed"
        report.longrepr = f"integration test skipped in CI: {report.longrepr}"
