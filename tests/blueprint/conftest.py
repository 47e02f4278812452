"""Fixtures for the execution-context connectors' servers: a real Slurm and a Kubernetes replay server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.blueprint.kube_replay import KubeReplay, start_kube_replay
from tests.blueprint.slurm_harness import SlurmCluster, missing_binaries, start_slurm

KUBE_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "kube"


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    """munge + MariaDB + slurmdbd + slurmctld + slurmd on 127.0.0.1, once per session, stopped by PID."""
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
def kube_replay() -> Iterator[KubeReplay]:
    """A loopback HTTP server answering Kubernetes API requests from recorded bodies (no API server runs here)."""
    server = start_kube_replay(KUBE_FIXTURES)
    try:
        yield server
    finally:
        server.stop()
