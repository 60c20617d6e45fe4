"""``checkweigh run`` with the judge's defaults against a provider with a rate limit: the
adaptive concurrency learns the limit from the headers and paces its calls under it, so few
calls are answered 429 and every verdict is decided, on both wires; a fixed
``--judge-concurrency`` still waits out the 429s it gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from checkweigh.core import VerdictState
from checkweigh.judges import MAX_WINDOW
from checkweigh.reports._console import judge_line
from checkweigh.server import create_app
from checkweigh.store import Store
from checkweigh.testing import Reply, fake_llm_server
from support.html_page import parse
from support.judge_suite import judge_suite, run_judged
from support.recorded_suite import make_case

CALLS = 40
VERDICT = {"verdict": "yes", "reason": "every claim is in the trace"}


def many_cases_suite(folder: Path) -> Path:
    """The judged booking suite with ``CALLS`` cases, each a different prompt (no cache hits)."""
    suite = judge_suite(folder)
    cases = [
        make_case(
            f"booking-{i:02d}",
            participants=["Alice", "Bob"],
            time="10:00",
            reply=f"Booked Alice and Bob on Tuesday at 10:00 in room {i}.",
        )
        for i in range(CALLS)
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return suite


@pytest.mark.parametrize(
    ("wire", "judge"), [("openai", "openai:gpt-test"), ("anthropic", "anthropic:claude-test")]
)
def test_defaults_learn_the_limit_and_pace_under_it(tmp_path: Path, wire: str, judge: str) -> None:
    suite = many_cases_suite(tmp_path / "s")
    answer = Reply(json.dumps(VERDICT), tool_input=VERDICT)
    # 600 a minute holds 10 at once: a burst of 32 would see 22 of them refused
    with fake_llm_server([], wire=wire, default=answer, keep_alive=True, rpm=600) as server:
        markdown = tmp_path / "report.md"
        code, out = run_judged(suite, server, tmp_path, "--markdown", str(markdown), judge=judge)
        seen = server.stats()
    assert code == 0, out
    assert seen["requests"] == CALLS
    assert seen["rate_limited"] <= 1
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    info = store.get_run("latest")
    states = [r.verdicts["grounded"].state for r in store.iter_results(info.id)]
    assert states == [VerdictState.PASSED] * CALLS
    assert info.summary is not None
    stats = info.summary.judge
    assert stats is not None
    assert (stats.calls, stats.errors) == (CALLS, 0)
    assert (stats.adaptive, stats.concurrency) == (True, MAX_WINDOW)
    assert (stats.learned_rpm, stats.answered_429) == (600, seen["rate_limited"])
    assert f"{stats.answered_429} 429(s) answered, limit learned 600 rpm" in judge_line(stats)
    assert "Concurrency: adaptive: window peak" in markdown.read_text()
    assert "limit learned 600 rpm" in markdown.read_text()
    with TestClient(create_app(store)) as client:
        page = parse(client.get(f"/runs/{info.id}").text)
    # what the pacing learned is on hover over the judge's name (the cases stay on the first
    # screen); 429s, when there were any, are said on the line
    assert page.by_id("judge-name").get("title") == stats.pacing_line()
    if stats.answered_429:
        assert page.by_id("judge-pacing").text == f"{stats.answered_429} answered 429"
    store.close()


def test_a_fixed_concurrency_waits_out_the_429s_and_decides_every_verdict(tmp_path: Path) -> None:
    suite = many_cases_suite(tmp_path / "s")
    with fake_llm_server(
        [], default=Reply(json.dumps(VERDICT)), keep_alive=True, rpm=1200
    ) as server:
        code, out = run_judged(suite, server, tmp_path, "--judge-concurrency", "32")
        seen = server.stats()
    assert code == 0, out
    # a burst of 32 against a bucket of 20: refused, each retried after its retry-after
    assert seen["rate_limited"] >= 12
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    info = store.get_run("latest")
    states = [r.verdicts["grounded"].state for r in store.iter_results(info.id)]
    assert states == [VerdictState.PASSED] * CALLS
    assert info.summary is not None
    stats = info.summary.judge
    assert stats is not None
    assert (stats.calls, stats.errors, stats.concurrency) == (CALLS, 0, 32)
    assert (stats.adaptive, stats.answered_429) == (False, seen["rate_limited"])
    assert f"{seen['rate_limited']} 429(s) answered" in judge_line(stats)
    assert "adaptive" not in judge_line(stats)
    with TestClient(create_app(store)) as client:
        page = parse(client.get(f"/runs/{info.id}").text)
    assert page.by_id("judge-pacing").text == f"{seen['rate_limited']} answered 429"
    store.close()
