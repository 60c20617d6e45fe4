# ruff: noqa: E501  (tables: one bad input and its exact answer a line)
"""Robustness of the web UI's pages: each row is a realistic bad request (an unknown run or
case, a bad filter, a threshold that is no number, a hostile id in the path) and the exact page
expected: its status, the one line in ``#error``, the Content-Security-Policy, never a
traceback, never markup an attacker wrote.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from checkweigh.server import create_app
from checkweigh.server._html import CSP
from checkweigh.store import Store
from server.conftest import SCRIPT_ID, Stored, store_two_runs
from support.html_page import assert_inert, parse

CHECKS = "correct_participants, correct_time, checked_first, clear_explanation"
HOSTILE = quote('"><img src=x onerror=alert(1)>', safe="")


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    folder = tmp_path_factory.mktemp("robust-pages")
    return store_two_runs(folder, f"sqlite:///{folder / 'runs.db'}")


@pytest.fixture
def client(stored: Stored) -> Iterator[TestClient]:
    with Store(stored.url) as store, TestClient(create_app(store)) as c:
        yield c


# (path with {base} and {candidate}, status, exact #error text with the same placeholders)
BAD_PAGES = [
    ("/runs/nope", 404, "no run 'nope'"),
    ("/runs/2026", 422, "run id prefix '2026' is ambiguous; give more of it"),
    ("/runs/nope/stability", 404, "no run 'nope'"),
    ("/runs/nope/cases/ok-1", 404, "no run 'nope'"),
    ("/runs/{base}/cases/no-such-case", 404, "run {base} has no case 'no-such-case' (repeat 0)"),
    ("/runs/{base}/cases/ok-1?repeat=7", 404, "run {base} has no case 'ok-1' (repeat 7)"),
    ("/runs/{base}/cases/ok-1?repeat=-1", 422, "repeat: expected a number from 0 to 1000000000"),
    ("/runs/{base}/cases/ok-1?repeat=first", 422, "repeat: expected a whole number"),
    (f"/runs/{{base}}/cases/{HOSTILE}", 404, 'run {base} has no case \'"><img src=x onerror=alert(1)>\' (repeat 0)'),
    ("/runs/{base}/cases/" + quote("<script>alert(1)</script>", safe=""), 404, "run {base} has no case '<script>alert(1)</script>' (repeat 0)"),
    ("/runs/{base}?state=ok", 422, "state: expected one of passed, failed, errored"),
    ("/runs/{base}?failed_check=politeness", 422, f"failed_check: expected one of the run's checks ({CHECKS})"),
    (f"/runs/{{base}}?failed_check={HOSTILE}", 422, f"failed_check: expected one of the run's checks ({CHECKS})"),
    ("/runs/{base}?outcome=success", 422, "outcome: expected one of successful_completion, graceful_failure, partial_failure, hard_failure"),
    ("/runs/{base}?errored=maybe", 422, "errored: expected one of yes, no"),
    ("/runs/{base}?sort=name", 422, "sort: expected one of position, score, -score, latency, -latency"),
    ("/runs/{base}?page=0", 422, "page: expected a number from 1 to 1000000000"),
    ("/runs/{base}?page=two", 422, "page: expected a whole number"),
    ("/runs?status=done", 422, "status: expected one of running, complete, incomplete"),
    ("/runs?page=-3", 422, "page: expected a number from 1 to 1000000000"),
    ("/compare", 422, "base: expected a run id (pick two runs in the runs list)"),
    ("/compare?base={base}", 422, "candidate: expected a run id (pick two runs in the runs list)"),
    ("/compare?pick={base}", 422, "pick: expected two runs to compare, got 1"),
    ("/compare?pick={base}&pick={candidate}&pick={base}", 422, "pick: expected two runs to compare, got 3"),
    ("/compare?pick={base}&pick={base}", 422, "pick: both refer to run {base}"),
    ("/compare?pick={base}&pick=nope", 404, "no run 'nope'"),
    ("/compare?base=nope&candidate={candidate}", 404, "base: no run 'nope'"),
    ("/compare?base={base}&candidate=nope", 404, "candidate: no run 'nope'"),
    ("/compare?base={base}&candidate={base}", 422, "candidate: both refer to run {base}"),
    ("/compare?base={base}&candidate={candidate}&max_pass_rate_drop=-1", 422, "max_pass_rate_drop: expected a number >= 0, got -1"),
    ("/compare?base={base}&candidate={candidate}&max_avg_score_drop=five", 422, "max_avg_score_drop: expected a number"),
    ("/compare?base={base}&candidate={candidate}&max_avg_score_drop=nan", 422, "max_avg_score_drop: expected a number >= 0, got nan"),
    ("/compare?base={base}&candidate={candidate}&max_latency_increase_pct=inf", 422, "max_latency_increase_pct: expected a number >= 0, got inf"),
    ("/compare?base={base}&candidate={candidate}&max_case_score_drop=-5", 422, "max_case_score_drop: expected a number >= 0, got -5"),
    ("/compare?base={base}&candidate={candidate}&min_latency_increase_ms=-1", 422, "min_latency_increase_ms: expected a number >= 0, got -1"),
    ("/compare?base={base}&candidate={candidate}&alpha=1", 422, "alpha: expected a level between 0 and 1, got 1"),
    ("/compare?base={base}&candidate={candidate}&alpha=" + HOSTILE, 422, 'alpha: expected a number'),
    ("/runs/{base}/stability?noise=0.9", 422, "noise: expected RATE or CHECK=RATE with RATE from 0 to 0.5 (the chance one judge answer differs from its usual answer), got '0.9'"),
    ("/runs/{base}/stability?noise=politeness=0.1", 422, f"noise: run {{base}} has no check 'politeness'; its checks: {CHECKS}"),
    ("/runs/{base}/stability?noise=0.1", 422, "noise: run {base} has no judge checks for RATE to apply to; name a check with CHECK=RATE"),
    ("/runs/{base}/stability?noise=correct_time=0.1&sims=0", 422, "sims: expected a number from 1 to 100000"),
    ("/runs/{base}/stability?noise=correct_time=0.1&seed=x", 422, "seed: expected a whole number"),
    ("/nowhere", 404, "no such page: GET /nowhere"),
    (f"/{HOSTILE}", 404, 'no such page: GET /"><img src=x onerror=alert(1)>'),
]  # fmt: skip


@pytest.mark.parametrize(("path", "status", "error"), BAD_PAGES)
def test_a_bad_page_request_is_its_status_and_one_line(
    client: TestClient, stored: Stored, path: str, status: int, error: str
) -> None:
    names = {"base": stored.base, "candidate": stored.candidate}
    answer = client.get(path.format(**names), follow_redirects=False)
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    assert answer.headers["content-security-policy"] == CSP
    assert "Traceback" not in answer.text
    tree = parse(answer.text)
    assert_inert(tree)  # the hostile text in a message is text, not an element
    assert tree.by_id("error").text == error.format(**names)


# a case id an attacker chose, in every place a page shows one: escaped as text, and in links
# percent-encoded so that it opens its own page
@pytest.mark.parametrize(
    "path",
    [
        "/runs/{candidate}",
        "/runs/{candidate}?state=failed",
        "/runs/{candidate}/cases/{hostile}?repeat=0",
        "/runs/{candidate}?sort=-latency&failed_check=correct_time",
    ],
)
def test_a_hostile_case_id_stays_text_everywhere(
    client: TestClient, stored: Stored, path: str
) -> None:
    hostile = quote(SCRIPT_ID, safe="")
    answer = client.get(path.format(base=stored.base, candidate=stored.candidate, hostile=hostile))
    assert answer.status_code == 200
    assert '<script>alert("x")</script>' not in answer.text
    tree = parse(answer.text)
    assert_inert(tree)
    shown = [n for n in tree.iter() if n.get("data-case-id") == SCRIPT_ID] or [
        n for n in tree.all("h1") if SCRIPT_ID in n.text
    ]
    assert shown, "the hostile case is on the page, as its exact text"
    for link in tree.all("a", "case-link"):
        if link.text == SCRIPT_ID:
            assert link.get("href") == f"/runs/{stored.candidate}/cases/{hostile}?repeat=0"
            assert client.get(link.get("href") or "").status_code == 200
