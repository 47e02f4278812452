"""One real Service per configuration for the whole session, stopped by PID at the end."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.service.server import FULL_TOKEN, VIEW_TOKEN, ServiceProcess

ROOT = Path(__file__).resolve().parents[1]
BUNDLES = sorted({p.parent for p in (ROOT / "scenarios").glob("*/workload.yaml")}
                 | {p.parent for p in (ROOT.parent / "examples").glob("*/workload.yaml")})


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """Authentication on (two tokens: one may analyse, one may only read the catalog), default limits."""
    tokens = [{"name": "blueprint-a", "secret": FULL_TOKEN},
              {"name": "viewer", "secret": VIEW_TOKEN, "scopes": ["catalog"]}]
    proc = ServiceProcess("main", {"FIRSTFAULT_TOKENS": json.dumps(tokens), "FIRSTFAULT_MAX_QUEUE": "64"},
                          tmp_path_factory.mktemp("svc-main"))
    yield proc
    proc.stop()


TIGHT = {
    "FIRSTFAULT_MAX_BODY_BYTES": str(2 << 20),
    "FIRSTFAULT_MAX_DECOMPRESSED_BYTES": str(4 << 20),
    "FIRSTFAULT_MAX_RECORD_BYTES": str(64 << 10),
    "FIRSTFAULT_MAX_ARCHIVE_MEMBERS": "50",
    "FIRSTFAULT_MAX_CONCURRENT": "1",
    "FIRSTFAULT_MAX_QUEUE": "0",
    "FIRSTFAULT_ANALYSIS_TIMEOUT": "1.5",
    "FIRSTFAULT_RETRY_AFTER": "7",
    "FIRSTFAULT_BODY_TIMEOUT": "3",
}


@pytest.fixture(scope="session")
def tight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """No authentication, small limits: one analysis at a time, no wait list, a 1.5 s time limit."""
    proc = ServiceProcess("tight", TIGHT, tmp_path_factory.mktemp("svc-tight"))
    yield proc
    proc.stop()


@pytest.fixture
def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {FULL_TOKEN}"}
