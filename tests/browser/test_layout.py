"""Where things sit on a page a person reads: a run's cases table on its first screen, above
the charts, and a filter applied or a page turned keeps the reader at the table; one case of
two runs side by side, reached from the comparison."""

from __future__ import annotations

from urllib.parse import parse_qs

from browser.conftest import Page, Runs, Served
from browser.test_pages import CASE, api

# where an element sits: from the top of the document, and from the top of the window
_WHERE = """
const box = arguments[0].getBoundingClientRect();
return {doc: box.top + window.scrollY, view: box.top, bottom: box.bottom + window.scrollY,
        height: window.innerHeight, scrolled: window.scrollY};
"""


def where(page: Page, css: str) -> dict[str, float]:
    found: dict[str, float] = page.driver.execute_script(_WHERE, page.one(css))
    return found


def test_a_run_page_shows_its_cases_on_the_first_screen_above_the_charts(
    page: Page, runs: Runs
) -> None:
    page.open(f"/runs/{runs.candidate}", expect="#cases")
    table = where(page, "#cases")
    # the filter and the table's first rows are on the first screen, before any scrolling
    assert where(page, "#case-filter")["doc"] < table["doc"] < table["height"] - 150
    first_row = where(page, "#cases tbody tr")
    assert first_row["doc"] < table["height"]
    # the charts (thousands of pixels with many checks and rubrics) come after the table
    assert where(page, "#charts")["doc"] > table["bottom"]
    page.screenshot("top")


def test_applying_a_filter_keeps_the_reader_at_the_cases(
    page: Page, runs: Runs, server: Served
) -> None:
    page.open(f"/runs/{runs.candidate}", expect="#case-filter")
    page.driver.execute_script("arguments[0].scrollIntoView()", page.one("#case-filter"))
    page.choose("#case-filter select[name=state]", "failed")
    page.one("#filter-button").click()
    page.wait_for_query("state", "failed")
    page.wait_for("#cases")
    # back at the table, not at the top of the page: the section is at the window's top
    section = where(page, "#cases-section")
    assert section["scrolled"] > 0
    assert abs(section["view"]) < 5
    failed = api(server, f"/runs/{runs.candidate}/results", state="failed", limit=500)
    shown = {r.get_attribute("data-case-id") for r in page.all("#cases tr[data-case-id]")}
    assert shown == {item["case_id"] for item in failed["items"]}
    page.screenshot("filtered")


def test_a_regressed_case_opens_side_by_side_from_the_comparison(
    page: Page, runs: Runs, server: Served
) -> None:
    page.open(f"/compare?base={runs.base}&candidate={runs.candidate}", expect="#regressions")
    assert "suite verdict" in page.one("#verdict h2").text
    row = page.one(f'#regressions tr[data-case-id="{CASE}"]')
    row.find_element("css selector", "a.side-by-side-link").click()
    page.wait_until_path(f"/compare/cases/{CASE}")
    page.wait_for("#check-pairs")
    query = parse_qs(page.query)
    assert (query["base"], query["candidate"]) == ([runs.base], [runs.candidate])
    base = api(server, f"/runs/{runs.base}/results/{CASE}")["verdicts"]
    candidate = api(server, f"/runs/{runs.candidate}/results/{CASE}")["verdicts"]
    pairs = {tr.get_attribute("data-check"): tr for tr in page.all("#check-pairs tr.check-pair")}
    assert set(pairs) == set(base) | set(candidate)
    participants = pairs["correct_participants"]
    assert participants.get_attribute("data-changed") == "true"
    reasons = [d.text for d in participants.find_elements("css selector", ".reason")]
    assert reasons == [
        base["correct_participants"]["reason"],
        candidate["correct_participants"]["reason"],
    ]
    # both traces, side by side: the candidate's column right of the base's
    columns = page.all("#traces section.conversation")
    assert [c.get_attribute("data-side") for c in columns] == ["base", "candidate"]
    assert columns[0].rect["x"] < columns[1].rect["x"]
    assert abs(columns[0].rect["y"] - columns[1].rect["y"]) < 2
    for column in columns:
        assert column.find_elements("css selector", ".turn[data-role=tool]")
    page.screenshot("side-by-side")
