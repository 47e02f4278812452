"""Shared fixtures for the dashboard tests: sample verdicts from the shipped bundles, stores, an in-process client."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from fastapi import FastAPI

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.dashboard import make_router
from firstfault.model import Enrichment, Verdict, Window, iso
from firstfault.store import VerdictStore

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCENARIOS = ROOT / "tests" / "scenarios"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
ANALYSIS_LAG = timedelta(minutes=10)  # the watch daemon analyses an attempt minutes after it ends

# A small, varied set: one bundle per domain, node-02 twice (hardware and software).
PICKS = {
    "xid149": EXAMPLES / "nvlink-xid149",
    "cuda-oom": EXAMPLES / "cuda-oom",
    "ambiguous": EXAMPLES / "ambiguous",
    "clock-skew": SCENARIOS / "hw-trap-node-clock-skew",
    "port-down": SCENARIOS / "net-ib-port-down-mlx5",
    "sxid": SCENARIOS / "hw-nvswitch-sxid-fatal",
    "node-fail": SCENARIOS / "hw-slurm-node-fail",
    "timeout": SCENARIOS / "sch-slurm-timeout",
    "lustre": SCENARIOS / "st-lustre-hang",
    "ok": SCENARIOS / "ok-completed-nccl-noise",
    "unknown": SCENARIOS / "unk-watchdog-only",
}
# With a fabric source (kept apart: the tests above count the samples): switch leaf01 port 3 is the cause
# (both ends of its cable named), and transport errors behind leaf01 make it a common-switch lead.
FABRIC_PICKS = {
    "fabric": SCENARIOS / "net-ib-switch-port-down-fabric",
    "leaf": SCENARIOS / "net-ib-transport-common-leaf-fabric",
}


@pytest.fixture(scope="session")
def samples() -> dict[str, Verdict]:
    analyzer = Analyzer()
    return {name: analyzer.analyze_path(str(path), now=NOW) for name, path in PICKS.items()}


@pytest.fixture(scope="session")
def fabric_samples() -> dict[str, Verdict]:
    analyzer = Analyzer()
    return {name: analyzer.analyze_path(str(path), now=NOW) for name, path in FABRIC_PICKS.items()}


def variant(v: Verdict, workload_id: str, *, analyzed_at: datetime | None = None,
            nodes: list[str] | None = None, failed_at: datetime | None = None) -> Verdict:
    """The same verdict for another job (another id, analysis time or node list): a repeat failure.

    Its window is moved to end at `failed_at` (default: ANALYSIS_LAG before the analysis), keeping its length.
    """
    at = analyzed_at or NOW
    end = failed_at or at - ANALYSIS_LAG
    start = v.workload.window.start
    if start and v.workload.window.end:
        length = datetime.fromisoformat(v.workload.window.end) - datetime.fromisoformat(start)
        start = iso(end - length)
    window = Window(start=start, end=iso(end))
    changes = {"id": workload_id, "window": window, **({"nodes": nodes} if nodes else {})}
    workload = records.replace(v.workload, **changes)
    return records.replace(v, workload=workload, analyzed_at=iso(at))


def load(store: VerdictStore, samples: dict[str, Verdict], names: list[str] | None = None,
         age: timedelta = timedelta(hours=1)) -> dict[str, int]:
    """Write the named samples (each its own cluster), analysed `age` before NOW; returns name -> id."""
    ids = {}
    for name in names or list(samples):
        ids[name] = store.write(variant(samples[name], samples[name].workload.id, analyzed_at=NOW - age),
                                Enrichment(cluster=name))
    return ids


def repeat_failures(store: VerdictStore, v: Verdict, count: int, prefix: str = "rep") -> list[int]:
    """`count` more failures like `v`, one a day going back from NOW."""
    return [store.write(variant(v, f"{prefix}-{i}", analyzed_at=NOW - timedelta(days=i, hours=2)))
            for i in range(count)]


def healthy_runs(store: VerdictStore, ok: Verdict, count: int, nodes: list[str]) -> None:
    """Succeeded jobs on `nodes`: the exposure a failure rate is measured against."""
    for i in range(count):
        store.write(variant(ok, f"ok-{i}", analyzed_at=NOW - timedelta(days=i % 6, hours=3), nodes=nodes))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[VerdictStore]:
    s = VerdictStore.open(f"sqlite:///{tmp_path / 'verdicts.db'}")
    yield s
    s.close()


class Client:
    """A synchronous client over httpx's ASGI transport: the real routing, validation and JSON, no server."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app

    def get(self, url: str, **kw: Any) -> httpx.Response:
        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://dash.test") as c:
                return await c.get(url, **kw)

        return anyio.run(go)


def dashboard_app(store: VerdictStore, clock: Callable[[], datetime] = lambda: NOW) -> FastAPI:
    app = FastAPI()
    app.include_router(make_router(lambda: store, clock=clock))
    return app


@pytest.fixture
def client(store: VerdictStore) -> Client:
    return Client(dashboard_app(store))
