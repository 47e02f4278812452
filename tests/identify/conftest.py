"""A Kubernetes replay server for the Kueue attempt source's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.kube_replay import KubeReplay, start_kube_replay

KUBE_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "kube"


@pytest.fixture(scope="session")
def kube_replay() -> Iterator[KubeReplay]:
    """A loopback HTTP server answering Kubernetes API requests from recorded bodies (no API server runs here)."""
    server = start_kube_replay(KUBE_FIXTURES)
    try:
        yield server
    finally:
        server.stop()
