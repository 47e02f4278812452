"""A worker of `serve --workers N` serves the catalog serve validated, or does not start."""

from __future__ import annotations

import pytest

from firstfault.engine.catalog import shipped_catalog
from firstfault.service import workers
from firstfault.service.app import create_app_from_env


def test_a_worker_with_another_catalog_fails_its_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(workers.CATALOG_ENV, "0" * 64)
    with pytest.raises(SystemExit) as exc:
        create_app_from_env()
    assert exc.value.code == workers.STARTUP_FAILURE  # uvicorn's supervisor stops instead of restarting it


def test_a_worker_with_the_validated_catalog_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(workers.CATALOG_ENV, shipped_catalog().sha256)
    app = create_app_from_env()
    assert app.state.engine is not None
