"""``/api/monitors``: the figures of a monitor's windows, made by the receiver and the live
scorer from posted spans, equal what the windows' stored results say."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest

from checkweigh.core import Counts, evaluate_rule, wilson_interval
from checkweigh.store import windows
from support.live_monitor import NOW, PLAN, T0, Live, build, recompute


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Live]:
    yield from build(tmp_path, monkeypatch)


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def test_a_monitors_windows_are_its_stored_results_counted(live: Live) -> None:
    answer = live.client.get("/api/monitors/airline-prod")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    monitor = body["monitor"]
    assert monitor["name"] == "airline-prod"
    assert (monitor["suite"], monitor["window"], monitor["window_s"]) == ("airline-live", "1m", 60)
    assert monitor["filter"] == {"service": "airline-support-agent"}
    assert monitor["judge"] is None
    got = monitor["windows"]
    assert [w["start"] for w in got] == [_iso(T0 + 60 * w) for w in (2, 1, 0)]
    assert [w["end"] for w in got] == [_iso(T0 + 60 * w) for w in (3, 2, 1)]
    assert [w["closed"] for w in got] == [False, True, True]
    stored = windows(live.store, "airline-prod")
    assert [w["run_id"] for w in got] == [w.run_id for w in stored]
    for window, kinds in zip(reversed(got), PLAN, strict=True):
        expected = recompute(live.store, window["run_id"])
        assert window["traces"] == window["executions"] == expected.executions == len(kinds)
        assert window["cases_passed"] == expected.cases_passed == kinds.count("A")
        assert window["pass_rate"] == pytest.approx(expected.cases_passed / len(kinds))
        assert window["pass_rate_interval"] == pytest.approx(
            list(wilson_interval(expected.cases_passed, len(kinds)))
        )
        assert window["tcr"] == pytest.approx(expected.tcr)
        assert window["tcr_interval"][0] <= window["tcr"] <= window["tcr_interval"][1]
        [rubric] = window["rubrics"]
        assert rubric["rubric"] == "support"
        assert rubric["tcr"] == pytest.approx(expected.tcr)
        rates = {c["check"]: c for c in window["checks"]}
        assert set(rates) == set(expected.checks) == {"answered", "looked_up"}
        for name, (passed, failed) in expected.checks.items():
            c = rates[name]
            assert (c["passed"], c["failed"], c["not_applicable"], c["errored"]) == (
                passed,
                failed,
                0,
                0,
            )
            assert c["pass_rate"] == pytest.approx(passed / (passed + failed))
            assert c["interval"] == pytest.approx(list(wilson_interval(passed, passed + failed)))
        # nothing judged: the monitor has no judge
        assert (window["judged"], window["skipped_rate"], window["skipped_budget"]) == (0, 0, 0)
        assert (window["judge_calls"], window["judge_usd"]) == (0, 0.0)
    # the first window: four good traces, one failing both checks, one failing the lookup only
    first = {c["check"]: (c["passed"], c["failed"]) for c in got[2]["checks"]}
    assert first == {"answered": (5, 1), "looked_up": (4, 2)}
    assert body["budget"] == {
        "hour": _iso(NOW // 3600 * 3600),
        "calls": 0,
        "usd": 0.0,
        "calls_per_hour": None,
        "usd_per_hour": None,
    }


def test_the_alert_rules_and_each_closed_windows_decisions(live: Live) -> None:
    monitor = live.client.get("/api/monitors/airline-prod").json()["monitor"]
    rules = monitor["alerts"]
    assert [(r["check"], r["below"], r["drop"], r["alpha"]) for r in rules] == [
        ("looked_up", 0.9, False, 0.05),
        ("answered", None, True, 0.01),
    ]
    assert rules[0]["text"] == "looked_up below 90% at alpha 0.05"
    # 5% of one-minute windows: 1440 windows a day, 72 false alarms expected
    assert "at most 5% of windows" in rules[0]["false_alarms"]
    # 5% and 1% of 1,440 one-minute windows a day
    assert "about 72 false alarms a day at 1-minute windows" in rules[0]["false_alarms"]
    assert "about 14 false alarms a day" in rules[1]["false_alarms"]
    open_, second, first = monitor["windows"]
    assert open_["alerts"] == []  # still open: nothing decided
    # each closed window's decisions, recomputed from the stored results by the rules' test
    counts = {w["run_id"]: recompute(live.store, w["run_id"]).checks for w in (first, second)}
    below, drop = live.monitor.rules
    for window, before in ((first, None), (second, first)):
        now_counts = counts[window["run_id"]]
        prev_counts = counts[before["run_id"]] if before else None
        for rule, stored in zip((below, drop), window["alerts"], strict=True):
            expected = evaluate_rule(
                rule,
                Counts(*now_counts[rule.check]),
                Counts(*prev_counts[rule.check]) if prev_counts else None,
            )
            assert stored["check"] == rule.check
            assert (stored["state"], stored["p_value"], stored["reason"]) == (
                expected.state,
                expected.p_value,
                expected.reason,
            )
            assert stored["false_alarm_rate"] == expected.false_alarm_rate
    fired, undecided = second["alerts"]
    assert (fired["state"], undecided["state"]) == ("fired", "undecided")
    assert first["alerts"][0]["state"] == "quiet"
    # the webhook answered 503 three times: the decision says the post failed
    assert fired["webhook"]["ok"] is False
    assert fired["webhook"]["status"] == 503
    assert undecided["webhook"] is None


def test_the_failing_traces_of_a_window_link_to_their_case_pages(live: Live) -> None:
    for run_id in (w.run_id for w in windows(live.store, "airline-prod")):
        expected = recompute(live.store, run_id)
        answer = live.client.get(f"/api/monitors/airline-prod/windows/{run_id}/failing")
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["run_id"] == run_id
        assert body["total"] == len(expected.failing)
        got = {item["trace_id"]: [f["check"] for f in item["failed"]] for item in body["items"]}
        assert got == expected.failing
        for item in body["items"]:
            assert item["url"] == f"/runs/{run_id}/cases/{quote(item['trace_id'])}?repeat=0"
            assert live.client.get(item["url"]).status_code == 200
            assert all(f["reason"] for f in item["failed"])
        lookups = live.client.get(
            f"/api/monitors/airline-prod/windows/{run_id}/failing", params={"check": "looked_up"}
        ).json()
        assert {i["trace_id"] for i in lookups["items"]} == {
            t for t, checks in expected.failing.items() if "looked_up" in checks
        }
    oldest = windows(live.store, "airline-prod")[-1].run_id
    page = live.client.get(
        f"/api/monitors/airline-prod/windows/{oldest}/failing", params={"limit": 1, "offset": 1}
    ).json()
    assert (page["total"], len(page["items"])) == (2, 1)


def test_the_list_shows_each_monitor_the_queue_and_the_scorer(live: Live) -> None:
    body = live.client.get("/api/monitors").json()
    [monitor] = body["monitors"]
    assert monitor["name"] == "airline-prod"
    assert len(monitor["windows"]) == 3
    traces = sum(len(kinds) for kinds in PLAN)
    assert body["queue"] == {
        "open": 0,
        "claimed": 0,
        "done": traces,
        "late_spans": 0,
        "chunks": body["queue"]["chunks"],
    }
    assert body["queue"]["chunks"] >= traces
    assert body["scorer"] == {
        "claimed": traces,
        "cases": traces,
        "matched": {"airline-prod": traces},
        "scored": traces,
        "no_case": 0,
        "lost_leases": 0,
        "errors": 0,
        "last_error_in": None,
    }


@pytest.mark.parametrize(
    ("path", "status", "says"),
    [
        ("/api/monitors/nope", 404, "no monitor 'nope'"),
        ("/api/monitors/nope/windows/mon-00000000-20270115T0800/failing", 404, "no monitor"),
        ("/api/monitors/airline-prod/windows/not-a-window/failing", 404, "has no window"),
        ("/api/monitors/airline-prod/windows/mon-1b288c5c-20270101T0000/failing", 404, "window"),
        ("/api/monitors/airline-prod?limit=0", 422, "query parameter limit"),
    ],
)
def test_unknown_monitors_and_windows_are_errors_in_the_apis_shape(
    live: Live, path: str, status: int, says: str
) -> None:
    answer = live.client.get(path)
    assert answer.status_code == status
    assert set(answer.json()) == {"error"}
    assert says in answer.json()["error"]


def test_an_unknown_check_is_named(live: Live) -> None:
    run_id = windows(live.store, "airline-prod")[0].run_id
    answer = live.client.get(
        f"/api/monitors/airline-prod/windows/{run_id}/failing", params={"check": "grounded"}
    )
    assert answer.status_code == 422
    assert answer.json()["error"] == (
        "check: expected a check of the suite, one of answered, looked_up"
    )


def test_the_openapi_document_describes_the_monitors(live: Live) -> None:
    spec = live.client.get("/openapi.json").json()
    assert {
        "/api/monitors",
        "/api/monitors/{name}",
        "/api/monitors/{name}/windows/{run_id}/failing",
    } <= set(spec["paths"])
    window = spec["components"]["schemas"]["WindowOut"]
    assert (
        "Traces whose judge checks were left out"
        in window["properties"]["skipped_budget"]["description"]
    )
    assert window["description"].startswith("One window of a monitor")


def test_a_server_without_monitors_lists_none(live: Live) -> None:
    from fastapi.testclient import TestClient

    from checkweigh.server import create_app

    with TestClient(create_app(live.store)) as bare:
        body = bare.get("/api/monitors").json()
        assert body["monitors"] == []
        assert body["scorer"] is None
        assert body["queue"]["done"] == sum(len(kinds) for kinds in PLAN)
        assert bare.get("/api/monitors/airline-prod").status_code == 404


@pytest.fixture
def judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Live]:
    yield from build(tmp_path, monkeypatch, judged=True)


def test_the_sampling_and_budget_figures_are_what_the_results_say(judged: Live) -> None:
    body = judged.client.get("/api/monitors/airline-prod").json()
    monitor = body["monitor"]
    assert (monitor["judge"], monitor["sample_judge"]) == ("openai:gpt-test", 0.5)
    assert monitor["judge_checks"] == ["grounded"]
    assert monitor["budget"] == {"calls_per_hour": 2, "usd_per_hour": None}
    counted = ("judged", "skipped_rate", "skipped_budget")
    totals = dict.fromkeys((*counted, "judge_calls"), 0)
    for window in monitor["windows"]:
        expected = recompute(judged.store, window["run_id"])
        got = {k: window[k] for k in counted}
        assert got == {
            "judged": expected.judged,
            "skipped_rate": expected.skipped_rate,
            "skipped_budget": expected.skipped_budget,
        }
        # every trace is counted once: judged, or left out by the rate or by the budget
        assert window["traces"] == sum(got.values())
        # a judged trace makes a call, unless an identical trace's answer was cached
        assert window["judge_calls"] <= window["judged"]
        assert (window["judge_usd"] > 0) == (window["judge_calls"] > 0)
        grounded = next(c for c in window["checks"] if c["check"] == "grounded")
        assert grounded["not_applicable"] == got["skipped_rate"] + got["skipped_budget"]
        assert grounded["passed"] == got["judged"]
        for k in totals:
            totals[k] += window[k]
    # the sampling rate and the budget both left traces out
    assert totals["skipped_rate"] > 0
    assert totals["skipped_budget"] > 0
    # the calls counted are the calls the judge's server received, and the hour's spend
    assert judged.judge is not None
    assert totals["judge_calls"] == len(judged.judge.requests) == body["budget"]["calls"] <= 2
    assert body["budget"]["usd"] == pytest.approx(sum(w["judge_usd"] for w in monitor["windows"]))
