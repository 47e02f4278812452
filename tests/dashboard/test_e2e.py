"""The dashboard end to end: uvicorn on 127.0.0.1 (a free port) and Debian's Chromium driven by Playwright.

The store is a real SQLite file holding the shipped samples, node-02's Xid 149
failure repeated five more times this week, and healthy runs on other nodes.
Screenshots of each page go to test-artifacts/screenshots/ (CI keeps them).
"""

from __future__ import annotations

import re
import shutil
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import uvicorn

from firstfault.model import Enrichment, Verdict
from firstfault.store import VerdictStore
from tests.dashboard.conftest import NOW, ROOT, dashboard_app, healthy_runs, load, repeat_failures, variant

pytestmark = pytest.mark.integration

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]
SHOTS = ROOT / "test-artifacts" / "screenshots"
VIEWPORT = {"width": 1366, "height": 768}  # a laptop screen


class ThreadServer:
    """uvicorn in a background thread of this process, on 127.0.0.1 and a port the OS picks."""

    def __init__(self, app: object) -> None:
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",  # type: ignore[arg-type]
                                                    access_log=False))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> str:
        self.thread.start()
        end = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > end or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, samples: dict[str, Verdict]) -> Iterator[tuple[str, dict[str, int]]]:
    db = tmp_path_factory.mktemp("dash") / "verdicts.db"
    store = VerdictStore.open(f"sqlite:///{db}")
    ids = load(store, samples)
    repeat_failures(store, samples["xid149"], 5)
    healthy_runs(store, samples["ok"], 30, ["node-01", "node-03", "node-04", "node-05"])
    again = variant(samples["port-down"], "77121", analyzed_at=NOW - timedelta(hours=2))
    store.write(again, Enrichment(cluster="again"))  # the same port fails another job
    server = ThreadServer(dashboard_app(store, clock=lambda: NOW))
    url = server.start()
    try:
        yield url, ids
    finally:
        server.stop()
        store.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.skip("Debian chromium is not installed (scripts/ci/install-servers.sh installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield b
        finally:
            b.close()


def test_list_filter_detail_and_fleet_in_a_real_browser(site: tuple[str, dict[str, int]], browser: object) -> None:
    from playwright.sync_api import Browser, expect

    assert isinstance(browser, Browser)
    base, ids = site
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport=VIEWPORT)
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

    def fits() -> None:
        # readable on a laptop: no sideways scrolling
        assert page.evaluate("document.documentElement.scrollWidth") <= VIEWPORT["width"]

    # The list, newest first.
    page.goto(base + "/")
    expect(page).to_have_url(re.compile(r"/verdicts$"))
    rows = page.locator("#verdicts tbody tr")
    assert rows.count() > 10
    fits()
    page.screenshot(path=str(SHOTS / "verdicts.png"))

    # Filter by domain with the hardware chip: the URL carries the filter, every row is hardware.
    page.locator('a.chip[data-domain="hardware"]').click()
    expect(page).to_have_url(re.compile(r"[?&]domain=hardware"))
    domains = page.locator("#verdicts tbody tr").evaluate_all("rs => rs.map(r => r.dataset.domain)")
    assert domains and set(domains) == {"hardware"}
    expect(page.locator("#f-domain")).to_have_value("hardware")
    page.screenshot(path=str(SHOTS / "verdicts-hardware.png"))

    # The Xid 149 sample's detail.
    page.locator(f'a.wl[href$="/verdicts/{ids["xid149"]}"]').click()
    expect(page).to_have_url(re.compile(rf"/verdicts/{ids['xid149']}$"))
    expect(page.locator(".cause-summary")).to_contain_text("Xid 149")
    expect(page.locator(".cause-card .cause-nodes")).to_have_text(re.compile(r"^\s*node-02\s*$"))
    expect(page.locator(".cause-card")).to_contain_text("gpu.nvlink.signal_integrity")
    symptoms = page.locator("#symptoms tbody tr td:first-child").all_inner_texts()
    assert {"nccl.timeout", "nccl.remote_error", "torch.child_failed"} <= set(symptoms)
    first = page.locator("#evidence tbody tr").first
    expect(first).to_contain_text("nodes/node-02/kern.log:5")
    expect(first).to_contain_text("NETIR_LINK_EVT")
    # The timeline: one lane per node, the cause on node-02, links to its symptoms.
    expect(page.locator("#timeline svg")).to_be_visible()
    assert page.locator("#timeline .lane").count() == 4
    cause = page.locator('#timeline .mark.cause[data-lane="node-02"]')
    expect(cause).to_have_count(1)
    assert page.locator("#timeline path.link").count() >= 10
    cause.click()
    expect(page.locator("#ev-0")).to_have_class(re.compile(r"\bhl\b"))
    page.evaluate("window.scrollTo(0, 0)")
    fits()
    page.screenshot(path=str(SHOTS / "verdict-xid149.png"))
    page.screenshot(path=str(SHOTS / "verdict-xid149-full.png"), full_page=True)

    # An ambiguous verdict shows each candidate side by side.
    page.goto(f"{base}/verdicts/{ids['ambiguous']}")
    cards = page.locator(".cause-card")
    expect(cards).to_have_count(2)
    boxes = [cards.nth(i).bounding_box() for i in range(2)]
    assert boxes[0] and boxes[1] and abs(boxes[0]["y"] - boxes[1]["y"]) < 2 and boxes[0]["x"] < boxes[1]["x"]
    page.screenshot(path=str(SHOTS / "verdict-ambiguous.png"), full_page=True)

    # The fleet view ranks node-02 first and flags it.
    page.goto(base + "/fleet?since=7d")
    first_node = page.locator("#fleet-nodes tbody tr").first
    expect(first_node).to_have_attribute("data-key", "node-02")
    expect(first_node.locator(".flag")).to_have_text("repeat offender")
    expect(page.locator("#fleet-devices tbody tr").first).to_have_attribute("data-key", "node-02/gpu3")
    # The port-down evidence names the HCA port and its netdev; that port failed two jobs.
    ports = page.locator("#fleet-host_ports tbody tr").evaluate_all("rs => rs.map(r => r.dataset.key)")
    assert set(ports[:2]) == {"mlx5_5:1", "ibp94s0"}
    fits()
    page.screenshot(path=str(SHOTS / "fleet.png"))
    page.screenshot(path=str(SHOTS / "fleet-full.png"), full_page=True)

    # Works offline: every request went to this server.
    assert requests and all(u.startswith(base) for u in requests), [u for u in requests if not u.startswith(base)]
    assert errors == []
    page.close()
