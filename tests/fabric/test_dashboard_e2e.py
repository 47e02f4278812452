"""The Switches view and the verdict page's far ends in a real browser (Debian's Chromium, Playwright).

A real SQLite store holds the two fabric scenarios' verdicts (the real tools' topology), leaf01 port 3
failing on five days and leaf01 a common-switch lead on two, beside healthy runs. Screenshots go to
test-artifacts/screenshots/ (docs/images/switches.png is one of them, looked at).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.model import Enrichment
from firstfault.store import VerdictStore
from tests.dashboard.conftest import NOW, SCENARIOS, dashboard_app, healthy_runs, variant
from tests.dashboard.test_e2e import SHOTS, VIEWPORT, ThreadServer

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    analyzer = Analyzer()
    down = analyzer.analyze_path(str(SCENARIOS / "net-ib-switch-port-down-fabric"), now=NOW)
    lead = analyzer.analyze_path(str(SCENARIOS / "net-ib-transport-common-leaf-fabric"), now=NOW)
    ok = analyzer.analyze_path(str(SCENARIOS / "ok-completed-nccl-noise"), now=NOW)
    store = VerdictStore.open(f"sqlite:///{tmp_path_factory.mktemp('fabric') / 'verdicts.db'}")
    healthy_runs(store, ok, 20, ["node-01", "node-02", "node-03", "node-04"])
    for i in range(5):
        store.write(variant(down, f"ib-{i}", analyzed_at=NOW - timedelta(days=i, hours=2)), Enrichment(cluster="ib"))
    for i in range(2):
        store.write(variant(lead, f"tr-{i}", analyzed_at=NOW - timedelta(days=i, hours=5)), Enrichment(cluster="ib"))
    vid = store.write(variant(down, "ib-latest", analyzed_at=NOW - timedelta(minutes=30)), Enrichment(cluster="ib"))
    server = ThreadServer(dashboard_app(store, clock=lambda: NOW))
    url = server.start()
    try:
        yield url, vid
    finally:
        server.stop()
        store.close()


def test_switches_view_and_far_ends_in_a_real_browser(site: tuple[str, int], browser: object) -> None:
    from playwright.sync_api import Browser, expect

    assert isinstance(browser, Browser)
    base, vid = site
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport=VIEWPORT)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))

    page.goto(base + "/fleet?since=7d")
    expect(page.locator("#fleet-switches tbody tr").first).to_have_attribute("data-key", "leaf01")
    expect(page.locator("#fleet-cables tbody tr").first).to_have_attribute("data-key",
                                                                          "leaf01/3 - node-03/mlx5_0:1")
    page.locator("nav a", has_text="Switches").click()
    expect(page.locator('section.switch[data-switch="leaf01"]')).to_be_visible()
    port = page.locator('section.switch[data-switch="leaf01"] .switch-ports tbody tr').first
    expect(port).to_have_attribute("data-key", "leaf01/3")
    expect(port).to_contain_text("port 3")
    assert page.evaluate("document.documentElement.scrollWidth") <= VIEWPORT["width"]
    page.screenshot(path=str(SHOTS / "switches.png"), full_page=True)

    page.goto(f"{base}/verdicts/{vid}")
    expect(page.locator(".cause-card")).to_contain_text("leaf01/3")
    cause = page.locator("#evidence tbody tr.role-cause").first
    expect(cause.locator(".far")).to_contain_text("↔ leaf01 port 3")
    page.screenshot(path=str(SHOTS / "verdict-fabric.png"), full_page=True)
    assert errors == []
