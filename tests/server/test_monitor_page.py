"""The monitors' pages: the figures of the windows the receiver and the live scorer made, as
the stored results count them; failing traces linked to their case pages; sampling, budget and
alert decisions; and untrusted text (a trace id, a reason) shown as text, never as markup."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from checkweigh.core import failed, wilson_interval
from checkweigh.server import create_app
from checkweigh.server._html import CSP
from checkweigh.store import note_alerts, windows
from support.html_page import Node, assert_inert, parse
from support.live_monitor import HOSTILE, PLAN, Live, build, recompute

MONITOR = "/monitors/airline-prod"


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Live]:
    yield from build(tmp_path, monkeypatch)


def page(client: TestClient, path: str, status: int = 200) -> Node:
    answer = client.get(path)
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    assert answer.headers["content-security-policy"] == CSP
    tree = parse(answer.text)
    assert_inert(tree)
    return tree


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%"


def test_the_navigation_and_the_list_lead_to_the_monitor(live: Live) -> None:
    tree = page(live.client, "/monitors")
    nav = tree.one("nav")
    assert [a.get("href") for a in nav.all("a")] == ["/runs", "/monitors", "/docs"]
    row = tree.by_id("monitors").one("tr", data_monitor="airline-prod")
    assert row.one("a", "monitor-link").get("href") == MONITOR
    newest = windows(live.store, "airline-prod")[0]
    expected = recompute(live.store, newest.run_id)
    assert row.one("td", "pass-rate").text.startswith(
        _pct(expected.cases_passed, expected.executions)
    )
    assert expected.tcr is not None
    assert row.one("td", "tcr").text.startswith(f"{100 * expected.tcr:.1f}%")
    assert "open" in row.text
    # the last closed window's decisions: one rule fired
    assert "1 fired" in row.text
    assert tree.by_id("queue-open").text == "0"


def test_each_windows_pass_rate_tcr_and_check_rates_are_its_stored_results(live: Live) -> None:
    tree = page(live.client, MONITOR)
    stored = windows(live.store, "airline-prod")
    rows = [r for r in tree.by_id("windows").all("tr") if r.get("data-run-id")]
    assert [r.get("data-run-id") for r in rows] == [w.run_id for w in stored]
    assert [r.get("data-closed") for r in rows] == ["false", "true", "true"]
    checks = {r.get("data-run-id"): r for r in tree.by_id("check-rates").all("tr")}
    for row, window in zip(rows, stored, strict=True):
        expected = recompute(live.store, window.run_id)
        assert row.one("a", "run-link").get("href") == f"/runs/{window.run_id}"
        rate = row.one("td", "pass-rate").text
        assert rate.startswith(_pct(expected.cases_passed, expected.executions))
        assert rate.endswith(f"{expected.cases_passed} of {expected.executions}")
        assert "to" in rate  # its interval
        assert expected.tcr is not None
        assert row.one("td", "tcr").text.startswith(f"{100 * expected.tcr:.1f}%")
        for name, (passed, failed_) in expected.checks.items():
            cell = checks[window.run_id].one("td", data_check=name).text
            assert cell.startswith(_pct(passed, passed + failed_))
            assert cell.endswith(f"{passed}/{passed + failed_}")
    # the trends: a dot a window, oldest left, per chart; one chart a check
    for chart in ("pass-rate-chart", "tcr-chart"):
        assert len(tree.by_id(chart).all("circle")) == len(PLAN)
    figures = tree.by_id("checks").all("figure", "check-trend")
    assert [f.get("data-check") for f in figures] == ["answered", "looked_up"]
    looked_up = figures[1]
    titles = [t.text for t in looked_up.all("title")]
    for title, window in zip(titles, reversed(stored), strict=True):
        passed, failed_ = recompute(live.store, window.run_id).checks["looked_up"]
        low, high = wilson_interval(passed, passed + failed_)
        when = datetime.fromtimestamp(window.start, UTC).strftime("%m-%d %H:%M")
        rate = _pct(passed, passed + failed_)
        assert title == f"{when}: {rate} (95% CI {100 * low:.1f}-{100 * high:.1f}%)"
    assert len(looked_up.all("line", stroke_dasharray="5 3")) == 1  # the alert's floor


def test_the_current_windows_failing_traces_link_to_their_case_pages(live: Live) -> None:
    newest, _, oldest = windows(live.store, "airline-prod")
    for path, window in ((MONITOR, newest), (f"{MONITOR}?window={oldest.run_id}", oldest)):
        tree = page(live.client, path)
        expected = recompute(live.store, window.run_id)
        rows = [r for r in tree.by_id("failing-traces").all("tr") if r.get("data-trace-id")]
        assert {r.get("data-trace-id") for r in rows} == set(expected.failing)
        assert tree.by_id("failing-total").text.startswith(f"{len(expected.failing)} trace(s)")
        for row in rows:
            trace = row.get("data-trace-id") or ""
            link = row.one("a", "case-link").get("href")
            assert link == f"/runs/{window.run_id}/cases/{trace}?repeat=0"
            assert [li.get("data-check") for li in row.all("li")] == expected.failing[trace]
            assert live.client.get(link).status_code == 200
    tree = page(live.client, f"{MONITOR}?window={oldest.run_id}&check=answered")
    rows = [r for r in tree.by_id("failing-traces").all("tr") if r.get("data-trace-id")]
    expected = recompute(live.store, oldest.run_id)
    assert {r.get("data-trace-id") for r in rows} == {
        t for t, checks in expected.failing.items() if "answered" in checks
    }
    assert len(rows) == 1


def test_sampling_budget_and_alert_decisions(live: Live) -> None:
    tree = page(live.client, MONITOR)
    budget = tree.by_id("budget").text
    assert "0 judge call(s)" in budget
    assert "(no budget)" in budget
    sampling = {r.get("data-run-id"): r for r in tree.by_id("sampling-table").all("tr")}
    for window in windows(live.store, "airline-prod"):
        cells = [td.text for td in sampling[window.run_id].all("td")][1:]
        assert cells == [str(window.traces), "0", "0", "0", "0", "$0.0000"]
    rules = tree.by_id("alert-rules").all("li")
    assert [r.get("data-check") for r in rules] == ["looked_up", "answered"]
    assert rules[0].text.startswith("looked_up below 90% at alpha 0.05")
    assert "expected false alarms: fires falsely in at most 5% of windows" in rules[0].text
    decided = [r for r in tree.by_id("alert-decisions").all("tr") if r.get("data-state")]
    # newest closed window first: its below rule fired; the first window's was quiet
    assert [(r.get("data-check"), r.get("data-state")) for r in decided] == [
        ("looked_up", "fired"),
        ("answered", "undecided"),
        ("looked_up", "quiet"),
        ("answered", "undecided"),
    ]
    fired = [td.text for td in decided[0].all("td")]
    stored = windows(live.store, "airline-prod")[1].alerts[0]
    low, high = stored["interval"]
    shown = f"{100 * stored['rate']:.1f}% ({100 * low:.1f}% to {100 * high:.1f}%)"
    assert fired[2:6] == [
        "fired",
        shown,
        f"{stored['p_value']:.3f}",
        f"{100 * stored['false_alarm_rate']:.2f}%",
    ]
    assert fired[7] == "failed (503)"
    assert decided[0].one("td", "reason").text == stored["reason"]
    assert decided[1].all("td")[4].text == "—"


def test_a_hostile_alert_reason_stays_text(live: Live) -> None:
    window = windows(live.store, "airline-prod")[1]
    hostile = [{**window.alerts[0], "reason": f"looked_up fell {HOSTILE}"}, *window.alerts[1:]]
    note_alerts(live.store, "airline-prod", window.start, hostile)
    tree = page(live.client, MONITOR)
    decided = [r for r in tree.by_id("alert-decisions").all("tr") if r.get("data-state")]
    assert decided[0].one("td", "reason").text == f"looked_up fell {HOSTILE}"
    assert_inert(tree)  # the markup is text: no img element, no handler


def test_a_hostile_trace_id_and_reason_stay_text(live: Live) -> None:
    newest = windows(live.store, "airline-prod")[0]
    [result, *_] = live.store.iter_results(newest.run_id)
    hostile = result._replace(
        case_id=HOSTILE,
        position=10_000,
        verdicts={**result.verdicts, "looked_up": failed(f"never looked up {HOSTILE}")},
    )
    live.store.add_results(newest.run_id, [hostile])
    tree = page(live.client, MONITOR)
    row = tree.by_id("failing-traces").one("tr", data_trace_id=HOSTILE)
    assert row.one("a", "case-link").text == HOSTILE
    assert row.one("a", "case-link").get("href") == (
        f"/runs/{newest.run_id}/cases/{quote(HOSTILE, safe='')}?repeat=0"
    )
    assert row.one("li", data_check="looked_up").one("span", "reason").text == (
        f"never looked up {HOSTILE}"
    )
    api = live.client.get(f"/api/monitors/airline-prod/windows/{newest.run_id}/failing").json()
    assert HOSTILE in {i["trace_id"] for i in api["items"]}


@pytest.mark.parametrize(
    ("path", "status", "says"),
    [
        ("/monitors/nope", 404, "no monitor 'nope'"),
        (f"{MONITOR}?window=mon-00000000-20270115T0800", 404, "has no window"),
        (f"{MONITOR}?check=grounded", 422, "check: expected a check of the suite"),
    ],
)
def test_unknown_monitors_windows_and_checks_are_error_pages(
    live: Live, path: str, status: int, says: str
) -> None:
    tree = page(live.client, path, status)
    assert says in tree.text


def test_a_server_without_monitors_says_how_to_start_one(live: Live) -> None:
    with TestClient(create_app(live.store)) as bare:
        tree = page(bare, "/monitors")
        assert "checkweigh serve --monitor monitor.yaml" in tree.by_id("monitors").text


@pytest.fixture
def judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Live]:
    yield from build(tmp_path, monkeypatch, judged=True)


def test_the_sampling_table_and_the_hours_budget_of_a_judged_monitor(judged: Live) -> None:
    tree = page(judged.client, MONITOR)
    assert judged.judge is not None
    calls = len(judged.judge.requests)
    budget = tree.by_id("budget").text
    assert f"{calls} judge call(s) of 2" in budget
    assert "judge sampling rate 50%" in budget
    assert "judge: openai:gpt-test on 50% of traces" in tree.by_id("monitor-spec").text
    sampling = {r.get("data-run-id"): r for r in tree.by_id("sampling-table").all("tr")}
    for window in windows(judged.store, "airline-prod"):
        expected = recompute(judged.store, window.run_id)
        cells = [td.text for td in sampling[window.run_id].all("td")][1:]
        assert cells == [
            str(expected.executions),
            str(expected.judged),
            str(expected.skipped_rate),
            str(expected.skipped_budget),
            str(window.judge_calls),
            f"${window.judge_usd:.4f}",
        ]
    assert sum(w.judge_calls for w in windows(judged.store, "airline-prod")) == calls


def test_the_newest_closed_window_is_compared_with_the_one_before(live: Live) -> None:
    tree = page(live.client, MONITOR)
    _, second, first = windows(live.store, "airline-prod")
    [link] = tree.by_id("compare-windows").all("a", "compare-link")
    assert link.text == "the window before"  # no window a week before in this store
    assert link.get("href") == f"/compare?base={first.run_id}&candidate={second.run_id}"
    compared = page(live.client, link.get("href") or "")
    assert "unpaired" in compared.text
