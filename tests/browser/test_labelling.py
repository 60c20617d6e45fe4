"""Labelling in the browser: a run of a suite with an LLM-judged check (a scripted judge that
says no to shouting replies), served by the real ``checkweigh serve``; a person opens the
check's queue from the run page and labels with the keyboard (y, n, s, j, k), the progress
follows, and the labels are in the store with the reviewer and the fingerprints of what the
judge saw."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import httpx
import pytest

from browser.conftest import TOKEN, Page, _run_suite, serving
from checkweigh.core import LabelSource
from checkweigh.store import Store, criteria, judged_executions, read_labels
from support import browser as chromium
from support.judged_suite import (
    JUDGE,
    QUESTION,
    judged_run_env,
    scripted_judge,
    tone_cases,
    write_tone_suite,
)

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

MARKUP = '<img src=x onerror="window.__pwned=5">'
_NOTHING_RAN = (
    "return [typeof window.__pwned, document.querySelectorAll('[onerror]').length,"
    " document.querySelectorAll('script:not([src])').length]"
)


class ToneRun(NamedTuple):
    db: Path
    run: str
    folder: Path


@pytest.fixture(scope="module")
def tone_run(tmp_path_factory: pytest.TempPathFactory) -> ToneRun:
    folder = tmp_path_factory.mktemp("labelling")
    db = folder / "runs.db"
    cases = tone_cases(count=8, shouting=3)
    cases[5]["id"] = f"tone-05 {MARKUP}"
    cases[5]["trace"][-1]["content"] += f" {MARKUP}"
    suite = write_tone_suite(folder / "suite", cases)
    with scripted_judge() as judge:
        env = judged_run_env(folder, judge.base_url)
        run = _run_suite(suite, f"sqlite:///{db}", folder, "--judge", JUDGE, env=env)
    return ToneRun(db, run, folder)


@pytest.fixture
def store_copy(tone_run: ToneRun, tmp_path: Path) -> str:
    """A copy of the run's store for one test: the labels it makes are its own."""
    copy = tmp_path / "runs.db"
    shutil.copyfile(tone_run.db, copy)
    return f"sqlite:///{copy}"


def _page(driver: WebDriver, url: str, request: pytest.FixtureRequest, tmp: Path) -> Page:
    driver.delete_all_cookies()
    driver.get_log("browser")  # type: ignore[no-untyped-call]
    return Page(driver, url, chromium.screenshot_dir(tmp / "screenshots"), request.node.name)


def _finish(page: Page) -> None:
    page.screenshot()
    assert page.foreign_resources() == []
    unexpected = [
        message
        for message in page.console_errors()
        if not any(fragment in message for fragment in page.allowed_console)
    ]
    assert unexpected == []
    page.driver.delete_all_cookies()


@pytest.fixture
def labelling(
    driver: WebDriver,
    store_copy: str,
    tone_run: ToneRun,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> Iterator[Page]:
    """The browser on a ``checkweigh serve`` (no token, 127.0.0.1) over a copy of the run."""
    with serving(store_copy, tone_run.folder) as served:
        page = _page(driver, served.url, request, tmp_path)
        yield page
        _finish(page)


def _press(page: Page, keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(page.driver).send_keys(keys).perform()


def _shown(page: Page) -> str:
    """The case id of the execution on screen (the one article not hidden)."""
    shown = [a for a in page.all("article.label-item") if a.is_displayed()]
    assert len(shown) == 1
    return str(shown[0].get_attribute("data-case-id"))


def _wait_text(page: Page, css: str, text: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(page.driver, chromium.WAIT).until(
        lambda d: page.one(css).text == text, message=f"{css} never said {text!r}"
    )


def _wait_shown(page: Page, case_id: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(page.driver, chromium.WAIT).until(
        lambda d: _shown(page) == case_id, message=f"{case_id} never shown"
    )


def test_a_reviewer_labels_with_the_keyboard_and_the_labels_are_stored(
    labelling: Page, tone_run: ToneRun, store_copy: str
) -> None:
    page = labelling
    page.open(f"/runs/{tone_run.run}", expect="#labelling")
    entry = page.one("#labelling .labelling-check[data-check=polite]")
    assert entry.get_attribute("data-labelled") == "0"
    assert entry.get_attribute("data-decided") == "8"
    entry.find_element("css selector", "a.label-link").click()
    page.wait_until_path(f"/runs/{tone_run.run}/label/polite")
    assert page.one("#question").text == QUESTION
    assert page.one("#progress-labelled").text == "0"
    assert page.one("#progress-decided").text == "8"
    assert page.one("#progress-budget").text == "50"
    assert page.one("#rate-raw").text == "62.5%"  # the judge said yes to 5 of 8
    order = [a.get_attribute("data-case-id") for a in page.all("article.label-item")]
    assert len(order) == 8
    assert _shown(page) == order[0]

    page.one("#reviewer").send_keys("ann")
    _press(page, "\ue00c")  # Escape: out of the field, back to the keys
    _press(page, "y")
    _wait_text(page, "#progress-labelled", "1")
    assert _shown(page) == order[1]
    _press(page, "n")
    _wait_text(page, "#progress-labelled", "2")
    assert _shown(page) == order[2]
    _press(page, "s")  # skipped: nothing stored
    _wait_shown(page, order[3])
    _press(page, "k")
    _wait_shown(page, order[2])
    page.one("#note").send_keys("polite enough, but curt")
    _press(page, "\ue00c")
    _press(page, "y")
    _wait_text(page, "#progress-labelled", "3")
    assert _shown(page) == order[3]
    _press(page, "j")
    _wait_shown(page, order[4])
    _press(page, "k")
    _wait_shown(page, order[3])
    _press(page, "n")
    _wait_text(page, "#progress-labelled", "4")
    assert page.one("#item-at").text == "5"
    # the figures on the page are the API's as the four labels now stand
    q = httpx.get(f"{page.base_url}/api/runs/{tone_run.run}/labels/polite?limit=0").json()
    cal = q["calibration"]
    assert cal["labels"] == 4
    _wait_text(page, "#rate-calibrated", f"{100 * cal['calibrated_pass_rate']:.1f}%")
    low, high = (f"{100 * cal[k]:.1f}%" for k in ("calibrated_low", "calibrated_high"))
    assert page.one("#rate-interval").text == f"{low} to {high}"
    assert page.one("#note").get_attribute("value") == ""  # emptied once sent

    # nothing an agent wrote ran, on a page that shows it as text
    assert page.driver.execute_script(_NOTHING_RAN) == ["undefined", 0, 0]
    hostile = f"tone-05 {MARKUP}"
    assert hostile in order

    with Store(store_copy) as store:
        info = store.get_run(tone_run.run)
        labels = {x.case_id: x for x in read_labels(store, checks=["polite"])}
        executions = {e.case_id: e for e in judged_executions(store, info.id, ["polite"])["polite"]}
        criterion = criteria(info.config, ["polite"])["polite"]
    assert {c: x.label for c, x in labels.items()} == {
        order[0]: True,
        order[1]: False,
        order[2]: True,
        order[3]: False,
    }
    for case_id, x in labels.items():
        assert (x.reviewer, x.source, x.run_id, x.judge) == ("ann", LabelSource.UI, info.id, JUDGE)
        assert x.criterion == criterion
        assert x.evidence is not None
        assert x.evidence == executions[case_id].evidence
    assert labels[order[2]].note == "polite enough, but curt"
    assert [x.note for c, x in labels.items() if c != order[2]] == ["", "", ""]

    # the run page counts them; a reload keeps the reviewer's name and queues the rest
    page.open(f"/runs/{tone_run.run}", expect="#labelling")
    assert (
        page.one("#labelling .labelling-check[data-check=polite]").get_attribute("data-labelled")
        == "4"
    )
    page.open(f"/runs/{tone_run.run}/label/polite", expect="#labeller")
    assert page.one("#reviewer").get_attribute("value") == "ann"
    left = [a.get_attribute("data-case-id") for a in page.all("article.label-item")]
    assert sorted(left) == sorted(order[4:])  # the four not labelled
    assert page.one("#progress-labelled").text == "4"


def test_a_second_reviewer_labels_the_same_executions_and_their_kappa_shows(
    labelling: Page, tone_run: ToneRun, store_copy: str
) -> None:
    page = labelling
    # ann labelled three executions through the API
    ann = {"tone-00": False, "tone-03": True, "tone-04": True}
    body = [
        {"run": tone_run.run, "check": "polite", "case": c, "label": v, "reviewer": "ann"}
        for c, v in ann.items()
    ]
    answer = httpx.post(f"{page.base_url}/api/labels", json=body, timeout=10)
    assert answer.status_code == 201, answer.text
    page.open(f"/runs/{tone_run.run}/label/polite", expect="#order-form")
    page.choose("#order", "labelled")
    page.one("#order-button").click()
    page.wait_for_query("order", "labelled")
    assert sorted(a.get_attribute("data-case-id") for a in page.all("article.label-item")) == [
        "tone-00",
        "tone-03",
        "tone-04",
    ]
    reviewer = page.one("#reviewer")
    reviewer.clear()
    reviewer.send_keys("bob")
    _press(page, "\ue00c")
    # bob agrees on tone-00 and tone-03 and not on tone-04
    bob = {"tone-00": "n", "tone-03": "y", "tone-04": "n"}
    from selenium.webdriver.support.ui import WebDriverWait

    for done in range(1, 4):
        _press(page, bob[_shown(page)])
        WebDriverWait(page.driver, chromium.WAIT).until(
            lambda d, n=done: len(page.all("article.label-item[data-labelled]")) == n,
            message=f"label {done} never stored",
        )
    assert page.one("#progress-labelled").text == "3"  # the same executions: none more
    WebDriverWait(page.driver, chromium.WAIT).until(
        lambda d: page.one("#reviewers-kappa").get_attribute("data-overlap") == "3",
        message="the overlap never reached 3",
    )
    # by hand: agree on 2 of 3; ann yes 2/3, bob yes 1/3: p_e = 2/9 + 2/9 = 4/9,
    # kappa = (2/3 - 4/9) / (5/9) = 0.4
    assert page.one("#reviewers-kappa").text == "reviewers' κ 0.40 over 3 execution(s) two labelled"
    with Store(store_copy) as store:
        stored = {(x.reviewer, x.case_id): x.label for x in read_labels(store)}
    assert stored == {
        **{("ann", c): v for c, v in ann.items()},
        **{("bob", c): k == "y" for c, k in bob.items()},
    }


def test_signed_in_with_a_token_a_reviewer_labels_from_the_page(
    driver: WebDriver,
    store_copy: str,
    tone_run: ToneRun,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    with serving(store_copy, tone_run.folder, token=TOKEN) as served:
        page = _page(driver, served.url, request, tmp_path)
        page.open(f"/runs/{tone_run.run}/label/polite", expect="#login-form")
        page.one("#login-form input[name=token]").send_keys(TOKEN)
        page.one("#login-button").click()
        page.wait_until_path(f"/runs/{tone_run.run}/label/polite")
        first = _shown(page)
        page.one("#reviewer").send_keys("carol")
        _press(page, "\ue00c")
        _press(page, "n")
        _wait_text(page, "#progress-labelled", "1")
        _finish(page)
    with Store(store_copy) as store:
        [label] = read_labels(store)
    assert (label.case_id, label.label, label.reviewer) == (first, False, "carol")
