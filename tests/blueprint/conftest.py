"""Fixtures for the execution-context connectors' servers: a Kubernetes replay server; a real Alertmanager.

The real Slurm (`slurm_cluster`) lives in tests/conftest.py: the failure lab's tests use it too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.blueprint.kube_replay import KubeReplay, start_kube_replay

KUBE_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "kube"


@pytest.fixture(scope="session")
def kube_replay() -> Iterator[KubeReplay]:
    """A loopback HTTP server answering Kubernetes API requests from recorded bodies (no API server runs here)."""
    server = start_kube_replay(KUBE_FIXTURES)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def am(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real Alertmanager (tests/sinks/am_harness.py), one per test module."""
    from tests.sinks.am_harness import alertmanager, binary

    if binary() is None:
        pytest.skip("not installed: prometheus-alertmanager")
    with alertmanager(tmp_path_factory.mktemp("am")) as a:
        yield a
