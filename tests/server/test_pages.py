"""The web UI's pages, in process, over runs the real engine stored from recorded traces: each
page renders with the hooks of the page contract, filters, sorts and pages agree with the API,
and every piece of agent text stays text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from checkweigh.core import Case, ExchangeMessage, JudgeExchange
from checkweigh.server import create_app
from checkweigh.server._html import CSP
from checkweigh.store import ResultDetail, Store, find_result, store_run
from server.conftest import SCRIPT_ID, Stored, run_suite
from support.html_page import Node, assert_inert, parse
from support.recorded_suite import make_case

CHECKS = ["correct_participants", "correct_time", "checked_first", "clear_explanation"]
IMG = '"><img src=x onerror=alert(1)>'
SCRIPT = "<script>alert(1)</script>"


def page(client: TestClient, path: str, status: int = 200) -> Node:
    answer = client.get(path)
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    assert answer.headers["content-security-policy"] == CSP
    tree = parse(answer.text)
    assert_inert(tree)
    return tree


def test_home_opens_the_runs_list(client: TestClient) -> None:
    answer = client.get("/", follow_redirects=False)
    assert (answer.status_code, answer.headers["location"]) == (307, "/runs")


def test_the_runs_list_shows_each_run_and_picks_two_to_compare(
    client: TestClient, stored: Stored
) -> None:
    tree = page(client, "/runs")
    rows = [r for r in tree.by_id("runs").all("tr") if r.get("data-run-id")]
    assert [r.get("data-run-id") for r in rows] == [stored.candidate, stored.base]
    for row, run_id in zip(rows, [stored.candidate, stored.base], strict=True):
        assert row.one("a", "run-link").get("href") == f"/runs/{run_id}"
        assert row.one("input", type="checkbox", name="pick").get("value") == run_id
        assert "bookings" in row.text
        assert "complete" in row.text
        passed = client.get(f"/api/runs/{run_id}").json()["gates_passed"]
        word = "passed" if passed else "failed"
        assert row.one("td", "gates").get("data-verdict") == word
        assert row.one("td", "gates").text == ("✓ " if passed else "✗ ") + word
    # the candidate books three good cases at the wrong time: 6 of 13 pass, not 9 of 13
    api = client.get(f"/api/runs/{stored.candidate}").json()["summary"]["case_gates"]
    assert f"{api['cases_pass_rate_pct']:.1f}%" in rows[0].text
    form = tree.by_id("compare-form")
    assert (form.get("method"), form.get("action")) == ("get", "/compare")
    assert form.one(id="compare-button").tag == "button"
    # picked in any order, the older run is the base
    answer = client.get(
        f"/compare?pick={stored.base}&pick={stored.candidate}", follow_redirects=False
    )
    assert answer.status_code == 303
    assert answer.headers["location"] == f"/compare?base={stored.base}&candidate={stored.candidate}"
    assert (
        page(client, "/runs?status=running").by_id("runs").all("tr", data_run_id=stored.base) == []
    )
    assert "no runs stored" in page(client, "/runs?suite=other").by_id("runs").text


def _case_rows(tree: Node) -> list[Node]:
    return [r for r in tree.by_id("cases").all("tr") if r.get("data-case-id") is not None]


def test_the_run_page_has_gates_charts_and_every_case_with_its_verdicts(
    client: TestClient, stored: Stored
) -> None:
    tree = page(client, f"/runs/{stored.candidate}")
    gates = tree.by_id("gates").all("li", "gate")
    summary = client.get(f"/api/runs/{stored.candidate}").json()["summary"]
    dims = summary["case_gates"]
    expected = [dims["metrics_passed"], dims["cases_passed"], summary["gates"][0]["passed"]]
    assert [g.get("data-passed") for g in gates] == [str(p).lower() for p in expected]
    assert False in expected  # a failed gate shows as failed
    assert ">= 80%" in gates[0].text
    assert ">= 0%" in gates[1].text
    assert "completion tcr >= 0.5" in gates[2].text
    charts = tree.by_id("charts")
    assert len(charts.all("svg")) == 3  # one rubric: outcomes, pass rates, histogram
    bars = charts.all("svg")[1]
    assert {t.text for t in bars.all("text")} >= set(CHECKS)
    assert len(bars.all("line")) == 3 * 4  # each check's interval: a whisker and two ends

    rows = _case_rows(tree)
    api = client.get(f"/api/runs/{stored.candidate}/results").json()["items"]
    assert [r.get("data-case-id") for r in rows] == [i["case_id"] for i in api]
    for row, item in zip(rows, api, strict=True):
        cells = row.all("td", "verdict")
        assert [c.get("data-state") for c in cells] == [item["verdicts"][n] for n in CHECKS]
        link = row.one("a", "case-link").get("href")
        assert link == f"/runs/{stored.candidate}/cases/{quote(item['case_id'], safe='')}?repeat=0"
        assert row.get("data-state") == item["state"]
    hostile = next(r for r in rows if r.get("data-case-id") == SCRIPT_ID)
    assert hostile.one("a", "case-link").text == SCRIPT_ID  # shown as text, exactly


def test_the_cases_filter_agrees_with_the_api(client: TestClient, stored: Stored) -> None:
    form = page(client, f"/runs/{stored.candidate}").by_id("case-filter")
    assert form.get("method") == "get"
    assert [o.get("value") for o in form.one("select", name="state").all("option")] == [
        "",
        "passed",
        "failed",
        "errored",
    ]
    options = form.one("select", name="failed_check").all("option")
    assert [o.get("value") for o in options] == ["", *CHECKS]
    assert form.one(id="filter-button").tag == "button"
    for query in ("state=failed", "failed_check=correct_time", "state=passed", "errored=true"):
        page_query = query.replace("errored=true", "errored=yes")
        rows = _case_rows(page(client, f"/runs/{stored.candidate}?{page_query}"))
        api = client.get(f"/api/runs/{stored.candidate}/results?{query}").json()["items"]
        assert [r.get("data-case-id") for r in rows] == [i["case_id"] for i in api], query
    failed = _case_rows(page(client, f"/runs/{stored.candidate}?state=failed"))
    assert failed
    assert {r.get("data-state") for r in failed} == {"failed"}
    # the empty fields of a submitted form mean "any"
    everything = page(client, f"/runs/{stored.candidate}?state=&failed_check=&outcome=&sort=")
    assert len(_case_rows(everything)) == 13


def test_sorting_by_score_and_latency(client: TestClient, stored: Stored) -> None:
    api = client.get(f"/api/runs/{stored.candidate}/results").json()["items"]
    by_id = {i["case_id"]: i for i in api}
    lowest = _case_rows(page(client, f"/runs/{stored.candidate}?sort=score"))
    scores = [by_id[r.get("data-case-id")]["score"] for r in lowest]
    assert scores == sorted(scores)
    assert scores[0] < scores[-1]
    highest = _case_rows(page(client, f"/runs/{stored.candidate}?sort=-score"))
    assert [by_id[r.get("data-case-id")]["score"] for r in highest] == sorted(scores, reverse=True)
    slowest = _case_rows(page(client, f"/runs/{stored.candidate}?sort=-latency"))
    latencies = [by_id[r.get("data-case-id")]["latency_ms"] for r in slowest]
    assert latencies == sorted(latencies, reverse=True)


@pytest.fixture(scope="module")
def big_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A run of 120 cases, every seventh booking the wrong time."""
    folder = tmp_path_factory.mktemp("big")
    cases = [
        make_case(
            f"c{i:03d}", participants=["Alice", "Bob"], time="11:00" if i % 7 == 0 else "10:00"
        )
        for i in range(120)
    ]
    db = f"sqlite:///{folder / 'big.db'}"
    return db, run_suite(folder, cases, db)


def test_the_cases_table_pages_fifty_at_a_time(big_run: tuple[str, str]) -> None:
    db, run_id = big_run
    with Store(db) as store, TestClient(create_app(store)) as client:
        first = page(client, f"/runs/{run_id}")
        assert [r.get("data-case-id") for r in _case_rows(first)] == [
            f"c{i:03d}" for i in range(50)
        ]
        assert first.all("a", "page-prev") == []
        third_link = page(client, first.one("a", "page-next").get("href") or "").one(
            "a", "page-next"
        )
        third = page(client, third_link.get("href") or "")
        assert [r.get("data-case-id") for r in _case_rows(third)] == [
            f"c{i:03d}" for i in range(100, 120)
        ]
        assert third.all("a", "page-next") == []
        assert third.one("a", "page-prev").get("href") == f"/runs/{run_id}?page=2#cases-section"
        # a filter is kept from page to page: 18 failures (i = 0, 7, ..., 119) in one page
        failed = page(client, f"/runs/{run_id}?state=failed&sort=-score")
        ids = [r.get("data-case-id") for r in _case_rows(failed)]
        assert ids == [f"c{i:03d}" for i in range(0, 120, 7)]
        assert failed.all("a", "page-next") == []


def test_a_case_page_shows_its_checklist(client: TestClient, stored: Stored) -> None:
    with Store(stored.url) as store:
        run = store.get_run(stored.candidate)
        result = find_result(store, run, SCRIPT_ID, 0)
    assert result is not None
    tree = page(client, f"/runs/{stored.candidate}/cases/{quote(SCRIPT_ID, safe='')}?repeat=0")
    assert SCRIPT_ID in tree.one("h1").text
    checks = tree.by_id("checklist").all("li", "check")
    assert [(c.get("data-check"), c.get("data-state")) for c in checks] == [
        (name, result.verdicts[name].state.value) for name in CHECKS
    ]
    for c in checks:
        reason = result.verdicts[c.get("data-check") or ""].reason
        assert c.one(cls="reason").text == " ".join(reason.split())
    api = client.get(f"/api/runs/{stored.candidate}/results/{quote(SCRIPT_ID, safe='')}")
    assert tree.by_id("verdict-summary").get("data-state") == api.json()["state"] == "failed"
    assert api.json()["reason"] in tree.by_id("verdict-summary").text


def test_a_case_page_shows_the_stored_conversation(client: TestClient, stored: Stored) -> None:
    tree = page(client, f"/runs/{stored.candidate}/cases/wrong-time?repeat=0")
    assert tree.all(id="no-case") == []
    turns = tree.by_id("conversation").all(cls="turn")
    assert [t.get("data-role") for t in turns] == ["user", "tool", "tool", "assistant"]
    assert [t.one("code", "tool-name").text for t in turns[1:3]] == [
        "check_availability",
        "book_meeting",
    ]
    assert "40 ms" in turns[1].text
    assert turns[3].one(cls="content").text == (
        "Booked Alice and Bob on Tuesday at 10:00 for 30 minutes."
    )
    assert "Book Alice and Bob at 10" in tree.by_id("case-input").text
    assert '"11:00"' in tree.by_id("final-state").text


def test_a_case_page_says_when_the_run_did_not_store_its_case(
    client: TestClient, stored: Stored
) -> None:
    # a run stored whole from elsewhere (as POST /api/runs does) holds results, no cases
    with Store(stored.url) as store:
        run = store.get_run(stored.base)
        results = list(store.iter_results(run.id))
        store_run(store, run.model_copy(update={"id": "uploaded-" + run.id[-6:]}), results)
    tree = page(client, f"/runs/uploaded-{stored.base[-6:]}/cases/wrong-time?repeat=0")
    assert "did not store the case" in tree.by_id("no-case").text
    assert tree.all(id="conversation") == []
    assert [c.get("data-state") for c in tree.by_id("checklist").all("li", "check")] == [
        "passed",
        "failed",
        "passed",
        "passed",
    ]


def _hostile_detail(stored: Stored) -> ResultDetail:
    with Store(stored.url) as store:
        run = store.get_run(stored.candidate)
        result = find_result(store, run, "wrong-time", 0)
    assert result is not None
    case = Case.model_validate(
        {
            "id": "wrong-time",
            "input": {"message": f"Book Alice {SCRIPT}"},
            "trace": [
                {"kind": "system", "content": "You book meetings."},
                {"kind": "user", "content": f"Book Alice and Bob at 10 {IMG}"},
                {
                    "kind": "tool_call",
                    "name": "check_availability",
                    "arguments": {"who": [IMG], "note": SCRIPT},
                    "result": {"free": ["11:00"], "html": "<b>bold</b>"},
                    "latency_ms": 41.0,
                },
                {
                    "kind": "tool_call",
                    "name": "book_meeting",
                    "arguments": '{"time": "11:00"',
                    "error": f"calendar refused: {SCRIPT}",
                    "latency_ms": 12.0,
                },
                {"kind": "event", "name": "retry", "content": "retrying"},
                {"kind": "assistant", "content": f"Booked at 11:00 {IMG}", "latency_ms": 300.0},
            ],
            "final_state": {"booking": {"time": "11:00"}, "note": SCRIPT},
            "ground_truth": {"time": "10:00"},
        }
    )
    asked = (
        ExchangeMessage(role="system", content="Answer YES or NO."),
        ExchangeMessage(role="user", content=f"Is the reply clear? <reply>{IMG}</reply>"),
    )
    exchanges = tuple(
        JudgeExchange(
            check="clear_explanation",
            model="scripted-judge",
            messages=asked,
            reply=f"{answer} {SCRIPT}",
            input_tokens=120,
            output_tokens=3,
            latency_ms=80.0,
            cached=i == 2,
        )
        for i, answer in enumerate(["YES", "YES", "NO"])
    )
    return ResultDetail(result, case, exchanges)


def test_a_case_page_renders_the_conversation_and_the_judge_as_text(
    client: TestClient, stored: Stored, monkeypatch: pytest.MonkeyPatch
) -> None:
    detail = _hostile_detail(stored)

    def fake(store: Store, run: Any, case_id: str, repeat: int) -> ResultDetail | None:
        return detail if (case_id, repeat) == ("wrong-time", 0) else None

    monkeypatch.setattr("checkweigh.server._ui_case.result_detail", fake)
    answer = client.get(f"/runs/{stored.candidate}/cases/wrong-time?repeat=0")
    assert answer.status_code == 200
    assert SCRIPT not in answer.text
    assert "<img" not in answer.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in answer.text
    tree = parse(answer.text)
    assert_inert(tree)
    assert tree.all(id="no-case") == []
    turns = tree.by_id("conversation").all(cls="turn")
    assert [t.get("data-role") for t in turns] == [
        "system",
        "user",
        "tool",
        "tool",
        "system",
        "assistant",
    ]
    assert IMG in turns[1].text  # the attacker's text, shown as the text it is
    call = turns[2]
    assert "check_availability" in call.text
    assert "41 ms" in call.text
    assert IMG.replace('"', '\\"') in call.one(cls="arguments").text  # as JSON
    assert "<b>bold</b>" in call.one(cls="result").text
    failed_call = turns[3]
    assert "has-error" in failed_call.classes
    assert failed_call.one("div", "error").text == f"error calendar refused: {SCRIPT}"
    assert "not a JSON object" in failed_call.one(cls="arguments").text
    judge = tree.by_id("judge").one(cls="judge-check", data_check="clear_explanation")
    samples = judge.all(cls="exchange")
    assert len(samples) == 3
    assert [s.one(cls="judge-answer").one("pre").text for s in samples] == [
        f"{a} {SCRIPT}" for a in ("YES", "YES", "NO")
    ]
    assert IMG in samples[0].one(cls="judge-question").text
    assert "cached" in samples[2].text
    assert "cached" not in samples[0].text
    assert SCRIPT in tree.by_id("case-input").text
    assert "10:00" in tree.one(id="ground-truth").text


def test_the_comparison_page_puts_regressions_first_and_takes_thresholds(
    client: TestClient, stored: Stored
) -> None:
    path = f"/compare?base={stored.base}&candidate={stored.candidate}"
    tree = page(client, path)
    api = client.get(f"/api/runs/compare?base={stored.base}&candidate={stored.candidate}").json()
    verdict = tree.by_id("verdict")
    assert verdict.get("data-regression") == str(api["regression_detected"]).lower() == "false"
    assert api["threshold_exceeded"] is True
    assert "threshold exceeded — not significant" in verdict.text
    regressions = [r.get("data-case-id") for r in tree.by_id("regressions").all("tr", "change")]
    assert (
        regressions == [c["case_id"] for c in api["regressions"]] == ["good-0", "good-1", "good-2"]
    )
    assert [r.get("data-kind") for r in tree.by_id("flips").all("tr", "change")] == [
        "regression"
    ] * 3
    assert tree.by_id("score-changes")
    deltas = tree.by_id("check-deltas")
    time_row = deltas.one("tr", data_check="correct_time")
    assert "0.250" in time_row.text
    assert "not significant" in time_row.text
    # sections in the order a reader needs them: the verdict, then what regressed
    ids = [n.get("id") for n in tree.iter() if n.get("id")]
    assert ids.index("verdict") < ids.index("regressions") < ids.index("flips")
    assert ids.index("flips") < ids.index("score-changes") < ids.index("check-deltas")
    form = tree.by_id("thresholds")
    names = {i.get("name"): i.get("value") for i in form.all("input")}
    assert names["max_pass_rate_drop"] == "0.0"
    assert names["alpha"] == "0.05"
    assert {"max_avg_score_drop", "max_latency_increase_pct", "max_case_score_drop"} <= set(names)
    assert form.one(id="thresholds-button").tag == "button"

    lenient = page(client, f"{path}&max_pass_rate_drop=50&max_avg_score_drop=50")
    api = client.get(
        f"/api/runs/compare?base={stored.base}&candidate={stored.candidate}"
        "&max_pass_rate_drop=50&max_avg_score_drop=50"
    ).json()
    assert (
        lenient.by_id("verdict").get("data-regression")
        == "false"
        == str(api["regression_detected"]).lower()
    )
    assert "no regression" in lenient.by_id("verdict").text
    kept = {i.get("name"): i.get("value") for i in lenient.by_id("thresholds").all("input")}
    assert kept["max_pass_rate_drop"] == "50.0"
    # a case that moves less than the per-case threshold is no score change
    assert (
        len(
            page(client, f"{path}&max_case_score_drop=100").by_id("regressions").all("tr", "change")
        )
        == 3
    )


def test_the_stability_page_draws_the_spread_with_its_pass_marks(
    client: TestClient, stored: Stored
) -> None:
    nothing = page(client, f"/runs/{stored.base}/stability").by_id("stability")
    assert "no judge checks" in nothing.text
    assert nothing.all("svg") == []
    tree = page(client, f"/runs/{stored.base}/stability?noise=correct_time%3D0.2&sims=300")
    section = tree.by_id("stability")
    charts = section.all("svg")
    assert len(charts) == 2
    api = client.get(f"/api/runs/{stored.base}/stability?noise=correct_time=0.2&sims=300").json()
    marks = [api["stability"]["metrics"]["threshold"], api["stability"]["cases_rate"]["threshold"]]
    for chart, mark in zip(charts, marks, strict=True):
        assert f"pass mark {mark:g}" in chart.text
        assert chart.all("rect")  # the simulated runs' bars
    assert "300 simulated reruns" in section.text


@pytest.fixture
def token_client(stored: Stored) -> Iterator[TestClient]:
    with Store(stored.url) as store, TestClient(create_app(store, token=TOKEN)) as c:
        yield c


TOKEN = "s3cret; token=with/odd chars"


def test_a_page_without_the_token_opens_the_login_page_and_the_cookie_opens_it(
    token_client: TestClient, stored: Stored
) -> None:
    asked = f"/runs/{stored.base}?state=failed"
    answer = token_client.get(asked, follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/login?next=" + quote(asked, safe="")
    form = page(token_client, answer.headers["location"]).by_id("login-form")
    assert (form.get("method"), form.get("action")) == ("post", "/login")
    assert form.one("input", name="next").get("value") == asked
    assert form.one(id="login-button").tag == "button"

    wrong = token_client.post("/login", data={"token": "guess", "next": asked})
    assert wrong.status_code == 401
    assert wrong.headers["content-security-policy"] == CSP
    assert parse(wrong.text).by_id("login-error").text == "wrong token"
    assert "set-cookie" not in wrong.headers

    right = token_client.post(
        "/login", data={"token": TOKEN, "next": asked}, follow_redirects=False
    )
    assert right.status_code == 303
    assert right.headers["location"] == asked
    cookie = right.headers["set-cookie"]
    assert cookie.startswith("checkweigh_session=")
    assert quote(TOKEN) not in cookie  # a session id, not the token
    flags = {part.strip().lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "samesite=strict", "path=/"} <= flags
    assert "secure" not in flags  # plain http: a Secure cookie would never come back
    opened = token_client.get(asked)  # the client keeps the cookie, as a browser does
    assert opened.status_code == 200
    assert _case_rows(parse(opened.text))
    assert TOKEN not in opened.text
    assert token_client.get(f"/api/runs/{stored.base}").status_code == 200  # reading
    upload = token_client.post("/api/runs", json={})  # writing needs the header
    assert upload.status_code == 401
    assert upload.json() == {
        "error": "this server needs a token: send Authorization: Bearer <token>"
    }


@pytest.mark.parametrize(
    "target",
    [
        "//evil.example/x",
        "https://evil.example/",
        "/\\evil.example",
        "javascript:alert(1)",
        "/runs\r\nSet-Cookie: x=1",
        "evil.example",
        "",
    ],
)
def test_the_login_never_sends_the_browser_to_another_site(
    token_client: TestClient, target: str
) -> None:
    answer = token_client.post(
        "/login", data={"token": TOKEN, "next": target}, follow_redirects=False
    )
    assert answer.status_code == 303
    assert answer.headers["location"] == "/runs"
    form = parse(token_client.get("/login", params={"next": target}).text).by_id("login-form")
    assert form.one("input", name="next").get("value") == "/runs"


def test_without_a_token_the_login_page_goes_straight_on(client: TestClient) -> None:
    answer = client.get("/login?next=/runs%3Fsuite%3Dbookings", follow_redirects=False)
    assert (answer.status_code, answer.headers["location"]) == (303, "/runs?suite=bookings")


PAGES = ["/runs", "/runs/{base}", "/runs/{base}/cases/ok-1", "/runs/{base}/stability",
         "/compare?base={base}&candidate={candidate}", "/login", "/runs/unknown", "/nowhere",
         "/docs"]  # fmt: skip


@pytest.mark.parametrize("path", PAGES)
def test_every_page_carries_the_content_security_policy(
    client: TestClient, stored: Stored, path: str
) -> None:
    answer = client.get(path.format(base=stored.base, candidate=stored.candidate))
    assert answer.headers["content-type"].startswith("text/html")
    assert answer.headers["content-security-policy"] == CSP
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert_inert(parse(answer.text))


def test_every_asset_a_page_loads_is_served_here(client: TestClient, stored: Stored) -> None:
    html = client.get(f"/runs/{stored.base}").text
    tree = parse(html)
    sources = [n.get("src") or n.get("href") for n in tree.iter() if n.tag in ("script", "link")]
    assert sources == ["/static/ui.css", "/static/ui.js"]
    for source in sources:
        assert client.get(source or "").status_code == 200


def test_templates_and_assets_ship_in_the_package() -> None:
    import checkweigh.server as server

    folder = Path(server.__file__).parent
    for name in ("base.html", "runs.html", "run.html", "case.html", "compare.html",
                 "stability.html", "login.html", "error.html"):  # fmt: skip
        assert (folder / "templates" / name).is_file(), name
    assert (folder / "static" / "ui.css").is_file()
    assert (folder / "static" / "ui.js").is_file()
