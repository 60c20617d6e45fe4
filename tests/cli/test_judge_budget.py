"""What the judge cost, per check, and ``--judge-budget``: through ``checkweigh run`` against a
scripted chat-completions server (every call: 120 tokens in, 18 out).

The per-check counts add up to the run's totals and to the cost recomputed from the stored
exchanges' tokens; a budget stops the calls past it (errored verdicts, reason "budget", the
run stored complete, its exit code the gates'); a budget without prices is
refused before anything runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from checkweigh.server import create_app
from checkweigh.store import Store, result_detail
from checkweigh.testing import fake_llm_server
from support.html_page import parse
from support.judge_suite import CASES, judge_suite, run_judged, says_no_to

# $1,000 per million tokens both ways: one call (120 in + 18 out) costs $0.138
PRICES = "1000,1000"
PER_CALL = 0.138

_SECOND_CHECK = """\
  no_apology:
    type: judge
    question: Does the final answer avoid apologising?
rubrics:
"""


def _two_judge_checks(folder: Path) -> Path:
    suite = judge_suite(folder)
    text = suite.read_text().replace("rubrics:\n", _SECOND_CHECK, 1)
    text = text.replace("      grounded: 0.2\n", "      grounded: 0.2\n      no_apology: 0.1\n")
    suite.write_text(text)
    return suite


def _exchanges(db: str) -> list[tuple[str, int, int]]:
    store = Store(db)
    run = store.get_run("latest")
    details = [result_detail(store, run, r.case_id, r.repeat) for r in store.iter_results(run.id)]
    return [
        (x.check, x.input_tokens, x.output_tokens)
        for d in details
        if d is not None
        for x in d.exchanges
        if not x.cached and not x.error
    ]


def test_per_check_counts_add_up_to_the_totals_and_the_stored_tokens(tmp_path: Path) -> None:
    suite = _two_judge_checks(tmp_path / "s")
    with fake_llm_server([], respond=says_no_to("I cannot help with that.")) as server:
        code, out = run_judged(
            suite,
            server,
            tmp_path,
            "--judge-prices",
            PRICES,
            "--markdown",
            str(tmp_path / "summary.md"),
            "--json",
            str(tmp_path / "run.json"),
        )
        sent = len(server.requests)
    assert code in (0, 1), out
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    stats = Store(db).get_run("latest").summary.judge
    assert stats is not None
    assert set(stats.per_check) == {"grounded", "no_apology"}
    assert stats.calls == sent == 2 * CASES
    parts = stats.per_check.values()
    assert sum(p.calls for p in parts) == stats.calls
    assert sum(p.input_tokens for p in parts) == stats.input_tokens
    assert sum(p.output_tokens for p in parts) == stats.output_tokens
    assert sum(p.cost_usd or 0.0 for p in parts) == pytest.approx(stats.cost_usd)
    # recomputed from the tokens stored with each verdict's exchanges, at the given prices
    stored = _exchanges(db)
    for name, part in stats.per_check.items():
        tokens_in = sum(i for check, i, _ in stored if check == name)
        tokens_out = sum(o for check, _, o in stored if check == name)
        assert (part.input_tokens, part.output_tokens) == (tokens_in, tokens_out)
        assert part.cost_usd == pytest.approx((tokens_in + tokens_out) * 1000 / 1e6)
    assert stats.cost_usd == pytest.approx(sent * PER_CALL)
    assert "judge by check" in out  # the console splits the calls by check
    markdown = (tmp_path / "summary.md").read_text()
    per_call = (
        f"| {CASES} | 0 | 0 | {120 * CASES:,} | 0 | {18 * CASES:,} | ${CASES * PER_CALL:.4f} | 0 |"
    )
    assert f"| grounded {per_call}" in markdown
    assert f"| no\\_apology {per_call}" in markdown  # check names are escaped
    exported = json.loads((tmp_path / "run.json").read_text())["summary"]["judge"]["per_check"]
    assert exported["grounded"]["calls"] == exported["no_apology"]["calls"] == CASES
    with Store(db) as store, TestClient(create_app(store)) as client:
        run_id = store.get_run("latest").id
        html = parse(client.get(f"/runs/{run_id}").text)
    rows = html.by_id("judge-by-check").all("tr", data_check="no_apology")
    assert len(rows) == 1
    assert f"${CASES * PER_CALL:.4f}" in rows[0].text
    # short prompts: nothing for the provider's prompt cache, and the details say so
    assert html.by_id("prompt-cache").text.startswith(
        f"prompt cache: 0.0% hit rate, 0 of {120 * 2 * CASES:,} input tokens cached"
    )


def test_a_budget_stops_the_calls_past_it(tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "s")
    # one call at a time: four calls ($0.552) pass the $0.50 budget, the fifth is not sent
    with fake_llm_server([], respond=says_no_to()) as server:
        code, out = run_judged(
            suite,
            server,
            tmp_path,
            "--judge-prices",
            PRICES,
            "--judge-budget",
            "0.5",
            "--judge-concurrency",
            "1",
            "--markdown",
            str(tmp_path / "summary.md"),
        )
        sent = len(server.requests)
    assert sent == 4
    assert code == 0, out  # the gates decide the code; the errored executions count in them
    assert "2 errored of 6" in out
    assert f"budget $0.5 stopped {CASES - 4} call(s)" in out
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    store = Store(db)
    run = store.get_run("latest")
    assert run.status == "complete"
    verdicts = [r.verdicts["grounded"] for r in store.iter_results(run.id)]
    assert len(verdicts) == CASES
    assert sorted(v.state.value for v in verdicts) == ["errored"] * (CASES - 4) + ["passed"] * 4
    assert {v.reason for v in verdicts if v.state.value == "errored"} == {"budget"}
    stats = run.summary.judge
    assert stats is not None
    assert (stats.calls, stats.budget_stopped, stats.budget_usd) == (4, CASES - 4, 0.5)
    assert stats.per_check["grounded"].budget_stopped == CASES - 4
    assert stats.cost_usd == pytest.approx(4 * PER_CALL)
    markdown = (tmp_path / "summary.md").read_text()
    assert f"The budget of $0.5 stopped {CASES - 4} call(s)." in markdown
    with TestClient(create_app(store)) as client:
        html = parse(client.get(f"/runs/{run.id}").text)
    assert html.by_id("judge-budget").text == f"the budget of $0.5 stopped {CASES - 4} call(s)"


def test_a_budget_overshoots_by_at_most_the_calls_in_flight(tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "s")
    with fake_llm_server([], respond=says_no_to()) as server:
        code, out = run_judged(
            suite,
            server,
            tmp_path,
            "--judge-prices",
            PRICES,
            "--judge-budget",
            "0.2",
            "--judge-concurrency",
            "2",
        )
        sent = len(server.requests)
    # $0.20 allows two calls; at most two more were already in flight
    assert 2 <= sent <= 2 + 2, out
    assert code == 0, out
    stats = Store(f"sqlite:///{tmp_path / 'runs.db'}").get_run("latest").summary.judge
    assert stats is not None
    assert stats.calls + stats.budget_stopped == CASES
    assert stats.cost_usd == pytest.approx(sent * PER_CALL)


def test_a_budget_without_prices_is_refused(tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "s")
    code, out = run_judged(suite, None, tmp_path, "--judge-budget", "1")
    assert code == 2, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    assert "--judge-budget" in lines[0]
    assert "--judge-prices" in lines[0]
    assert not (tmp_path / "runs.db").exists()


def test_a_rerun_counts_each_checks_cache_hits_at_no_cost(tmp_path: Path) -> None:
    suite = _two_judge_checks(tmp_path / "s")
    with fake_llm_server([], respond=says_no_to()) as server:
        first, out = run_judged(suite, server, tmp_path, "--judge-prices", PRICES)
        assert first == 0, out
        again, out = run_judged(
            suite, server, tmp_path, "--judge-prices", PRICES, "--judge-budget", "0"
        )
        sent = len(server.requests)
    # a spent budget stops no cached answer: the re-run asks the provider nothing
    assert (again, sent) == (0, 2 * CASES), out
    stats = Store(f"sqlite:///{tmp_path / 'runs.db'}").get_run("latest").summary.judge
    assert stats is not None
    assert (stats.calls, stats.cache_hits, stats.budget_stopped) == (0, 2 * CASES, 0)
    assert stats.cost_usd == 0.0
    for part in stats.per_check.values():
        assert (part.calls, part.cache_hits, part.cost_usd) == (0, CASES, 0.0)
    assert sum(p.cache_hits for p in stats.per_check.values()) == stats.cache_hits


def test_a_negative_budget_is_refused(tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "s")
    code, out = run_judged(suite, None, tmp_path, "--judge-prices", PRICES, "--judge-budget", "-1")
    assert code == 2, out
    assert "--judge-budget" in out
    assert "expected US dollars >= 0, got -1" in out
    assert not (tmp_path / "runs.db").exists()
