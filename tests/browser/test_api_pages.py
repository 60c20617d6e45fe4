"""The API as a browser sees it (the JSON of the runs list, the docs page drawn by Swagger UI from
the server's own files), and the browser kept on this machine."""

from __future__ import annotations

import json

import pytest

from browser.conftest import Page, Runs


def test_the_browser_reads_the_runs_list_of_the_api(page: Page, runs: Runs) -> None:
    page.open("/api/runs", expect="body")
    body = json.loads(page.one("body").text)
    assert [run["id"] for run in body["items"]] == [runs.hostile, runs.candidate, runs.base]
    assert body["total"] == 3


def test_the_docs_page_lists_the_endpoints_from_the_servers_own_assets(page: Page) -> None:
    page.open("/docs")
    # Swagger UI draws the page from script: either the operations or why it could not
    page.wait_for("#swagger-ui .opblock, #swagger-ui .version-pragma")
    paths = {e.text for e in page.all("#swagger-ui .opblock-summary-path")}
    assert {"/api/runs", "/api/runs/compare", "/api/runs/{run_id}/stability"} <= paths
    # the teardown checks that Swagger UI's script and style came from the server itself


@pytest.mark.parametrize("url", ["http://example.com/", "http://93.184.216.34/"])
def test_the_browser_cannot_reach_beyond_this_machine(page: Page, url: str) -> None:
    from selenium.common.exceptions import WebDriverException

    with pytest.raises(WebDriverException, match="ERR_PROXY_CONNECTION_FAILED"):
        page.driver.get(url)
    page.driver.get(page.base_url + "/api/runs")  # and loopback is still open
    assert page.path == "/api/runs"
