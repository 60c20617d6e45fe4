"""A trace longer than the judge's context, through ``checkweigh run``: its verdicts are
errored with the reason "context: N tokens over the limit of M", nothing is sent for them, and
the run finishes and is stored; the other cases are judged as usual."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from checkweigh.core import Case, VerdictState
from checkweigh.judges import (
    JudgeCheck,
    JudgeOptions,
    JudgeRequest,
    Message,
    MeteredJudge,
    ScriptedJudge,
    count_tokens,
    known_limit,
)
from checkweigh.store import Store
from checkweigh.testing import Reply, fake_llm_server
from support.judge_suite import CASES, YES, judge_suite, run_judged
from support.recorded_suite import make_case


def long_case(steps: int = 500) -> dict[str, Any]:
    """A scheduling case whose agent searched calendars ``steps`` times, each answer a page
    of free slots (over 2,000 characters, cut to 2,000 a step): far over 128k tokens."""
    case = make_case("long-search", participants=["Alice", "Bob"], time="10:00")
    slots = [
        {"day": f"2026-12-{d:02d}", "from": f"{h:02d}:00", "to": f"{h:02d}:30"}
        for d in range(1, 7)
        for h in range(8, 12)
    ]
    trace: list[dict[str, Any]] = [case["trace"][0]]
    for i in range(steps - 2):
        trace.append(
            {
                "kind": "tool_call",
                "name": "check_availability",
                "arguments": {"who": ["Alice", "Bob"], "page": i},
                "result": {"free": slots, "page": i},
            }
        )
    trace.append(case["trace"][-1])
    case["trace"] = trace
    return case


LONG = Case.model_validate(long_case())


def add_case(suite: Path, case: dict[str, Any]) -> None:
    cases = suite.parent / "cases.jsonl"
    cases.write_text(cases.read_text() + json.dumps(case) + "\n")


def stored(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path / 'runs.db'}")


def test_a_500_step_trace_over_a_known_limit_is_errored_and_never_sent(tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "s")
    add_case(suite, long_case())
    with fake_llm_server([], default=Reply(YES)) as server:
        # gpt-4o-mini's known limit (128,000 tokens) applies without any setting
        code, out = run_judged(suite, server, tmp_path, judge="openai:gpt-4o-mini")
        sent = [r["messages"][-1]["content"] for r in server.requests]
    assert code == 1, out  # the gate counts errored executions: one, the long trace
    assert len(sent) == CASES  # one call per fitting case, none for the long one
    assert not any("long-search" in p or 'page": 497' in p for p in sent)
    store = stored(tmp_path)
    run = store.get_run("latest")
    assert run.summary is not None
    results = {r.case_id: r for r in store.iter_results(run.id)}
    assert len(results) == CASES + 1
    verdict = results["long-search"].verdicts["grounded"]
    assert verdict.state is VerdictState.ERRORED
    assert verdict.reason.startswith("context: ")
    assert verdict.reason.endswith(" tokens over the limit of 128000")
    excess = int(verdict.reason.split()[1])
    assert excess > 20_000  # 498 steps of up to 2,000 characters: about 177k tokens
    assert all(
        r.verdicts["grounded"].state is VerdictState.PASSED
        for cid, r in results.items()
        if cid != "long-search"
    )


def test_the_suite_sets_the_limit_for_a_model_not_known(tmp_path: Path) -> None:
    block = "judge:\n  max_input_tokens: 2000\n"
    suite = judge_suite(tmp_path / "s", block)
    add_case(suite, long_case(steps=40))
    with fake_llm_server([], default=Reply(YES)) as server:
        code, out = run_judged(suite, server, tmp_path)  # openai:gpt-test: no known limit
        requests = len(server.requests)
    assert (code, requests) == (1, CASES), out
    store = stored(tmp_path)
    run = store.get_run("latest")
    assert run.config["judge_options"]["max_input_tokens"] == 2000
    verdict = next(r for r in store.iter_results(run.id) if r.case_id == "long-search").verdicts[
        "grounded"
    ]
    assert verdict.state is VerdictState.ERRORED
    assert verdict.reason.endswith(" tokens over the limit of 2000")
    assert verdict.error == verdict.reason


def test_a_bad_limit_is_one_line_naming_the_key(tmp_path: Path) -> None:
    suite = judge_suite(tmp_path / "s", "judge:\n  max_input_tokens: 0\n")
    code, out = run_judged(suite, None, tmp_path)
    assert code == 2, out
    assert "max_input_tokens" in out
    assert "Traceback" not in out


@pytest.mark.parametrize(
    ("name", "limit"),
    [
        ("openai:gpt-4o-mini", 128_000),
        ("openai:gpt-4.1-mini", 1_047_576),
        ("openai:o3-mini", 200_000),
        ("anthropic:claude-sonnet-4-5", 200_000),
        ("anthropic:claude-3-5-haiku-latest", 200_000),
        ("ollama:llama3.2", None),  # a local server's window is its own setting
        ("openai:gpt-test", None),
    ],
)
def test_known_limits(name: str, limit: int | None) -> None:
    assert known_limit(name) == limit


def test_the_estimate_counts_a_quarter_token_a_character_plus_framing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the estimate is what counts when tiktoken is not installed
    monkeypatch.setattr("checkweigh.judges._context._encoder", lambda: None)
    request = JudgeRequest(
        messages=(Message(role="system", content="x" * 10), Message(role="user", content="y" * 8))
    )
    # without tiktoken: ceil(10/4) + ceil(8/4) = 5, plus 4 a message and 3 for the reply
    assert count_tokens(request) == 5 + 2 * 4 + 3


@pytest.mark.parametrize("samples", [3, "auto"])
def test_sampled_checks_name_the_context_too(samples: int | str) -> None:
    judge = ScriptedJudge([])  # nothing scripted: a call would fail the test
    over = JudgeCheck(question="Grounded?", samples=samples)
    request = over.request(LONG)
    limited = MeteredJudge(judge, options=JudgeOptions(max_input_tokens=count_tokens(request) - 1))
    verdict = asyncio.run(over.evaluate(LONG, limited))
    assert verdict.state is VerdictState.ERRORED
    assert verdict.reason == "context: 1 tokens over the limit of " + str(count_tokens(request) - 1)
    assert (limited.calls, judge.requests) == (0, [])
