"""A worker of `serve --workers N` serves the catalog serve validated, or does not start."""

from __future__ import annotations

import pytest

from firstfault.engine.loader import shipped_catalog
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


def test_the_pool_reports_each_change_to_the_gauges() -> None:
    """The running/waiting gauges are set by the pool as it changes (a callback cannot cross processes)."""
    import asyncio
    import threading

    from firstfault.service.limits import AnalysisPool
    from firstfault.service.metrics import ServiceMetrics

    metrics = ServiceMetrics()
    seen: list[tuple[int, int]] = []

    def record(running: int, admitted: int) -> None:
        seen.append((running, admitted))
        metrics.pool_changed(running, admitted)

    pool = AnalysisPool(1, 4, 10.0, on_change=record)
    gate = threading.Event()
    during: list[bytes] = []

    def slow(_deadline: object) -> int:
        gate.wait(5)
        return 1

    async def main() -> None:
        first = asyncio.ensure_future(pool.run(slow))
        second = asyncio.ensure_future(pool.run(slow))
        while len(seen) < 3:  # two admitted, one running
            await asyncio.sleep(0.01)
        during.append(metrics.render())
        gate.set()
        assert await first == 1 and await second == 1

    asyncio.run(main())
    pool.shutdown()
    assert b"firstfault_analyses_running 1.0" in during[0] and b"firstfault_analyses_waiting 1.0" in during[0]
    assert seen[-1] == (0, 0)
    text = metrics.render()
    assert b"firstfault_analyses_running 0.0" in text and b"firstfault_analyses_waiting 0.0" in text
