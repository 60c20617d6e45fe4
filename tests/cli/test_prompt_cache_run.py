"""The provider's prompt cache in a whole run: ``checkweigh run`` with a judge check whose
rubric and examples repeat from case to case (over 1,024 tokens), against the fake provider
on both wires. The run's cached tokens add up to the stored exchanges', the cost recomputed
by hand from those counts is the stored cost, and every report shows the prompt cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from checkweigh.core import JudgeExchange
from checkweigh.server import create_app
from checkweigh.store import Store, result_detail
from checkweigh.testing import Reply, fake_llm_server
from support.html_page import parse
from support.judge_suite import CASES, judge_suite, run_judged

YES = {"verdict": "yes", "reason": "every claim is in the trace"}
GUIDANCE = [
    "A claim is supported when a tool result or the final state says it.",
    "Times, names and counts must match the trace exactly; a near match is a no.",
    "A claim about a booking needs the booking in the final state, not only in the reply.",
    "Apologies, greetings and restated questions are neither supported nor unsupported.",
    "When a tool failed, any claim that it succeeded is unsupported.",
]
EXAMPLES = [
    (
        "The reply says Alice and Bob are booked at 10:00; the final state books both at 10:00.",
        "yes",
    ),
    ("The reply says the meeting is at 10:00; the final state books it at 11:00.", "no"),
    ("The reply says Bob is invited; the final state lists only Alice.", "no"),
    ("The reply says the booking failed; the booking tool returned an error.", "yes"),
    ("The reply says 30 minutes; the booking in the final state lasts 30 minutes.", "yes"),
    ("The reply says the room is 4B; no tool result names a room.", "no"),
]


def _cached_suite(folder: Path) -> Path:
    """The standard judged suite, its judge check given a long rubric and worked examples."""
    suite = judge_suite(folder)
    rubric = " ".join(GUIDANCE * 8)
    lines = [f"    rubric: {json.dumps(rubric)}", "    examples:"]
    for situation, verdict in EXAMPLES * 3:
        lines += [
            f"      - situation: {json.dumps(situation + ' The user asked for Tuesday.')}",
            f'        verdict: "{verdict}"',  # quoted: YAML reads a bare yes as true
            f"        reason: the trace {'shows' if verdict == 'yes' else 'does not show'} it",
        ]
    question = "    question: Is every statement in the final answer supported by the trace?\n"
    text = suite.read_text().replace(question, question + "\n".join(lines) + "\n", 1)
    suite.write_text(text)
    return suite


def _exchanges(db: str) -> list[JudgeExchange]:
    store = Store(db)
    run = store.get_run("latest")
    details = [result_detail(store, run, r.case_id, r.repeat) for r in store.iter_results(run.id)]
    return [x for d in details if d is not None for x in d.exchanges if not x.error]


@pytest.mark.parametrize(
    ("wire", "judge", "prices", "rates"),
    [
        # OpenAI: cached input at 0.5x input when not given; no write charge
        ("openai", "openai:gpt-test", "2,8", (2.0, 8.0, 1.0, 2.0)),
        # Anthropic: reads at 0.1x, writes at 1.25x input when not given
        ("anthropic", "anthropic:claude-test", "3,15", (3.0, 15.0, 0.3, 3.75)),
        # all four given
        ("anthropic", "anthropic:claude-test", "3,15,0.5,4", (3.0, 15.0, 0.5, 4.0)),
    ],
)
def test_a_run_counts_prices_and_reports_the_prompt_cache(
    tmp_path: Path, wire: str, judge: str, prices: str, rates: tuple[float, ...]
) -> None:
    suite = _cached_suite(tmp_path / "s")
    default = Reply(tool_input=YES) if wire == "anthropic" else Reply(json.dumps(YES))
    reports = ("--markdown", str(tmp_path / "run.md"), "--json", str(tmp_path / "run.json"))
    with fake_llm_server([], wire=wire, default=default) as server:
        code, out = run_judged(
            suite,
            server,
            tmp_path,
            "--judge-prices",
            prices,
            "--judge-concurrency",
            "1",  # one call at a time: the first writes the prefix, the others read it
            *reports,
            judge=judge,
        )
    assert code in (0, 1), out
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    stats = Store(db).get_run("latest").summary.judge
    assert stats is not None
    sent = _exchanges(db)
    assert len(sent) == stats.calls == CASES
    assert sent[0].cached_input_tokens == 0  # nothing in the cache yet
    assert all(x.cached_input_tokens > 1024 for x in sent[1:])
    cached = sum(x.cached_input_tokens for x in sent)
    written = sum(x.cache_write_tokens for x in sent)
    tokens_in = sum(x.input_tokens for x in sent)
    tokens_out = sum(x.output_tokens for x in sent)
    assert (stats.input_tokens, stats.cached_input_tokens, stats.cache_write_tokens) == (
        tokens_in,
        cached,
        written,
    )
    assert (written > 0) is (wire == "anthropic")  # OpenAI reports no writes
    # the cost, by hand from the stored counts
    p_in, p_out, p_cached, p_write = rates
    plain = tokens_in - cached - written
    cost = (plain * p_in + cached * p_cached + written * p_write + tokens_out * p_out) / 1e6
    assert stats.cost_usd == pytest.approx(cost)
    assert stats.prompt_cache_saved_usd == pytest.approx(
        (tokens_in * p_in + tokens_out * p_out) / 1e6 - cost
    )
    assert stats.prompt_cache_hit_rate == pytest.approx(cached / tokens_in)
    assert stats.per_check["grounded"].cached_input_tokens == cached
    # every report says it
    line = f"prompt cache: {cached / tokens_in:.1%} hit rate, {cached:,} of {tokens_in:,} input"
    assert line in out
    assert f"saved ${stats.prompt_cache_saved_usd:.4f}" in out
    assumed = "assumed" in (stats.prompt_cache_prices or "")
    assert assumed is (prices.count(",") < 3)
    markdown = (tmp_path / "run.md").read_text()
    assert f"Prompt cache: {cached / tokens_in:.1%} hit rate" in markdown
    exported: dict[str, Any] = json.loads((tmp_path / "run.json").read_text())["summary"]["judge"]
    assert exported["cached_input_tokens"] == cached
    assert exported["cache_write_tokens"] == written
    assert exported["prompt_cache_saved_usd"] == pytest.approx(stats.prompt_cache_saved_usd)
    with Store(db) as store, TestClient(create_app(store)) as client:
        run_id = store.get_run("latest").id
        html = parse(client.get(f"/runs/{run_id}").text)
    # the run page: a short part of the judge line (the cases stay on the first screen), the
    # whole line on hover
    shown = html.by_id("prompt-cache-rate")
    rate_pct = 100 * cached / tokens_in
    assert (
        shown.text == f"prompt cache {rate_pct:.1f}% hit, saved ${stats.prompt_cache_saved_usd:.4f}"
    )
    assert (shown.get("title") or "").startswith(line)


def test_without_prices_the_prompt_cache_is_still_counted(tmp_path: Path) -> None:
    suite = _cached_suite(tmp_path / "s")
    with fake_llm_server([], default=Reply(json.dumps(YES))) as server:
        code, out = run_judged(suite, server, tmp_path, "--judge-concurrency", "1")
    assert code in (0, 1), out
    stats = Store(f"sqlite:///{tmp_path / 'runs.db'}").get_run("latest").summary.judge
    assert stats is not None
    assert stats.cached_input_tokens > 0
    assert (stats.cost_usd, stats.prompt_cache_saved_usd) == (None, None)
    assert "prompt cache: " in out
    assert "saved $" not in out


@pytest.mark.parametrize("prices", ["3,15,0.3,3.75,1", "3,15,cheap", "3,15,-0.3"])
def test_bad_prompt_cache_prices_are_one_line_naming_the_flag(tmp_path: Path, prices: str) -> None:
    code, out = run_judged(judge_suite(tmp_path / "s"), None, tmp_path, "--judge-prices", prices)
    assert code == 2
    lines = out.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: --judge-prices: ")
    assert repr(prices) in lines[0]
