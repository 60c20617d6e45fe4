"""A real headless Chromium driven by Selenium, for the end-to-end tests of the web UI.

It uses Debian's `chromium` and `chromium-driver` (`/usr/bin/chromium`, `/usr/bin/chromedriver`);
`.ci/run` installs them and sets CHECKWEIGH_REQUIRE_BROWSER=1, so in CI a missing browser fails
the tests. Elsewhere they skip, with the command that installs it.

The browser is kept off the network, as the conftest guard keeps the tests: background services
are disabled, and every request beyond loopback goes to a proxy that is not there, so a page
that loaded an asset from a CDN would show it broken (the tests also check that every resource
came from the server under test).
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

REQUIRE_ENV = "CHECKWEIGH_REQUIRE_BROWSER"
SCREENSHOTS_ENV = "CHECKWEIGH_SCREENSHOTS"
CHROMIUM = Path(os.environ.get("CHECKWEIGH_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("CHECKWEIGH_CHROMEDRIVER", "/usr/bin/chromedriver"))
INSTALL = "apt-get install chromium chromium-driver"

DEAD_PROXY = "http://127.0.0.1:1"
"""Where the browser's requests beyond loopback go: port 1 of loopback, where nothing listens."""

WAIT = 10.0
"""Seconds an explicit wait gives a page (a shared 2-core machine can be slow, never this slow)."""

_FLAGS = (
    "--headless=new",
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox cannot start
    "--disable-gpu",
    "--disable-dev-shm-usage",  # containers give /dev/shm 64 MB
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-features=Translate,OptimizationHints,MediaRouter",
    "--metrics-recording-only",
    # nothing but this machine: every request but loopback's (which Chromium never proxies)
    # goes to a proxy that is not there, and no other host name resolves
    f"--proxy-server={DEAD_PROXY}",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
    "--window-size=1280,1000",
    "--lang=en-US",
)


def _missing() -> str | None:
    """What is missing to drive a browser, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (path.is_file() and os.access(path, os.X_OK)):
            return f"no {path}"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    return None


def require_browser() -> None:
    """Skip the test (or, with CHECKWEIGH_REQUIRE_BROWSER=1, fail it) when there is no browser."""
    missing = _missing()
    if missing is None:
        return
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but {missing}: {INSTALL}")
    pytest.skip(f"no headless browser ({missing}): {INSTALL}")


def start_chromium(profile: Path) -> WebDriver:
    """A fresh headless Chromium with its own profile in ``profile``, its console kept."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in _FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    # the console messages, CSP refusals among them, read back with get_log("browser")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # a driver path given: Selenium Manager (which would download one) is never asked
    service = Service(executable_path=str(CHROMEDRIVER))
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(WAIT * 3)
    return driver


def screenshot_dir(fallback: Path) -> Path:
    """$CHECKWEIGH_SCREENSHOTS when set (made if needed), else ``fallback``."""
    folder = Path(os.environ[SCREENSHOTS_ENV]) if os.environ.get(SCREENSHOTS_ENV) else fallback
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def save_full_page(driver: WebDriver, path: Path) -> Path:
    """The whole page (not just the window) as a PNG at ``path``."""
    chrome: Any = driver  # execute_cdp_cmd is Chromium's, not on the WebDriver type
    metrics = chrome.execute_cdp_cmd("Page.getLayoutMetrics", {})
    size = metrics.get("cssContentSize") or metrics["contentSize"]
    clip = {
        "x": 0,
        "y": 0,
        "width": max(1, int(size["width"])),
        "height": max(1, min(int(size["height"]), 8000)),  # a 10,000-row page stays viewable
        "scale": 1,
    }
    shot = chrome.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip}
    )
    path.write_bytes(base64.b64decode(shot["data"]))
    return path
