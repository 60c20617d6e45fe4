"""A monitor's page in a real browser, served by ``checkweigh serve --monitor`` over windows the
receiver and the live scorer made: it fits the window's width, its figures are on the first
screen, and a failing trace opens its case page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from browser.conftest import Page, Served, serving
from checkweigh.store import Store, windows
from support import browser as chromium
from support.live_monitor import build, recompute

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

MONITOR = "/monitors/airline-prod"
_FIT = """
return {width: document.documentElement.scrollWidth, window: window.innerWidth,
        height: window.innerHeight,
        table: document.querySelector(arguments[0]).getBoundingClientRect().top};
"""


@pytest.fixture(scope="module")
def monitored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, str]]:
    folder = tmp_path_factory.mktemp("browser-monitor")
    with pytest.MonkeyPatch.context() as patch:
        made = build(folder, patch)
        next(made)
        made.close()  # the store is filled and closed: the server opens it anew
    db = f"sqlite:///{folder / 'live.db'}"
    with serving(db, folder, None, "--monitor", str(folder / "monitor.yaml")) as served:
        yield served, db


@pytest.fixture
def page(
    driver: WebDriver, monitored: tuple[Served, str], request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Page]:
    driver.delete_all_cookies()
    driver.get_log("browser")  # type: ignore[no-untyped-call]  # forget earlier tests' messages
    shots = chromium.screenshot_dir(tmp_path / "screenshots")
    opened = Page(driver, monitored[0].url, shots, request.node.name)
    yield opened
    opened.screenshot()
    assert opened.foreign_resources() == []
    assert [m for m in opened.console_errors() if "/favicon.ico " not in m] == []


@pytest.mark.parametrize(("path", "table"), [("/monitors", "#monitors"), (MONITOR, "#windows")])
def test_the_monitor_pages_fit_the_window_with_their_figures_on_the_first_screen(
    page: Page, path: str, table: str
) -> None:
    page.open(path, expect=table)
    fit = page.driver.execute_script(_FIT, table)
    assert fit["width"] <= fit["window"]  # nothing to scroll sideways
    assert fit["table"] < fit["height"]  # the windows' figures before any scrolling


def test_a_failing_trace_opens_its_case_page(page: Page, monitored: tuple[Served, str]) -> None:
    with Store(monitored[1]) as store:
        newest = windows(store, "airline-prod")[0]
        [trace] = recompute(store, newest.run_id).failing
    page.open(MONITOR, expect="#failing-traces")
    page.one(f'#failing-traces tr[data-trace-id="{trace}"] a.case-link').click()
    page.wait_until_path(f"/runs/{newest.run_id}/cases/{trace}")
    page.wait_for("#checklist")
