"""The dashboard suite's real browser (Debian's Chromium under Playwright), for the Switches view's test."""

from tests.dashboard.test_e2e import browser  # noqa: F401  (a fixture: pytest finds it here)
