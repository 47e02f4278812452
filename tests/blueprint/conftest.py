"""A real Alertmanager for the Blueprint's follow tests.

The real Slurm (`slurm_cluster`) lives in tests/conftest.py: the attempt sources', the actions' and the failure
lab's tests use it too."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def am(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real Alertmanager (tests/sinks/am_harness.py), one per test module."""
    from tests.sinks.am_harness import alertmanager, binary

    if binary() is None:
        pytest.skip("not installed: prometheus-alertmanager")
    with alertmanager(tmp_path_factory.mktemp("am")) as a:
        yield a
