"""Faithfulness and goal accuracy against scripted judges, on the seed's padding example: an
answer whose one real claim is made up, padded with trivially true statements."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from checkweigh.core import Case, CaseResult, VerdictState
from checkweigh.judges import FaithfulnessCheck, GoalAccuracyCheck, ScriptedJudge
from checkweigh.runs import Evaluator
from checkweigh.suites import load_suite
from support.evaluating import evaluate_all

ANSWER = (
    "Q3 revenue grew 30% year over year. The report covers the third quarter. "
    "TechCorp published the report. The report came out on October 14."
)
CASE = Case(
    id="q3-report",
    input={"question": "How did TechCorp's Q3 go?"},
    trace=[
        {"kind": "user", "content": "How did TechCorp's Q3 go?"},
        {
            "kind": "tool_call",
            "name": "fetch_report",
            "arguments": {"quarter": "Q3"},
            "result": "Published October 14; 12 pages; revenue, operating margin and headcount "
            "for the quarter; no year-over-year comparisons.",
        },
        {"kind": "assistant", "content": ANSWER},
    ],
)
MADE_UP = {"text": "TechCorp's Q3 revenue grew 30% year over year.", "load_bearing": True}
PADDING = [
    {"text": "The TechCorp report covers the third quarter.", "load_bearing": False},
    {"text": "TechCorp published the report.", "load_bearing": False},
    {"text": "The TechCorp report came out on October 14.", "load_bearing": False},
]


def verdicts(n_supported_after_first: int) -> str:
    rows = [{"index": 1, "verdict": "no", "reason": "the report makes no YoY comparison"}]
    rows += [
        {"index": i, "verdict": "yes", "reason": "stated in the tool result"}
        for i in range(2, 2 + n_supported_after_first)
    ]
    return json.dumps({"answers": rows})


def judge_for(statements: list[dict[str, object]]) -> ScriptedJudge:
    return ScriptedJudge([json.dumps({"statements": statements}), verdicts(len(statements) - 1)])


def test_plain_fraction_and_the_context_the_judge_sees() -> None:
    judge = judge_for([MADE_UP, *PADDING])
    verdict = asyncio.run(FaithfulnessCheck(threshold=0.8).evaluate(CASE, judge))
    assert verdict.state is VerdictState.FAILED
    assert verdict.reason.startswith("faithfulness 0.75 (3 of 4 statements supported) < 0.8")
    assert "unsupported: TechCorp's Q3 revenue grew 30% year over year." in verdict.reason
    assert len(judge.requests) == 2  # decomposition + one batched entailment call
    assert verdict.measures == {"score": 0.75, "statements": 4.0, "supported": 3.0}
    entailment = judge.requests[1].messages[1].content
    assert "no year-over-year comparisons" in entailment
    assert "1. TechCorp's Q3 revenue grew 30% year over year." in entailment
    assert ANSWER not in entailment  # the answer is not its own evidence


def test_padding_games_the_plain_fraction_but_not_the_weighted_score() -> None:
    padded = [MADE_UP, *PADDING, *PADDING]  # seven statements, six trivially true
    plain = asyncio.run(FaithfulnessCheck(threshold=0.8).evaluate(CASE, judge_for(padded)))
    assert plain.state is VerdictState.PASSED  # 6/7 = 0.86: the gate is fooled
    assert plain.reason.startswith("faithfulness 0.86 (6 of 7 statements supported) >= 0.8")
    weighted = FaithfulnessCheck(threshold=0.8, weighted=True)
    verdict = asyncio.run(weighted.evaluate(CASE, judge_for(padded)))
    assert verdict.state is VerdictState.FAILED
    assert verdict.reason.startswith("faithfulness 0.00 (6 of 7 statements supported, weighted)")


def test_no_statements_is_explicit_and_bad_batches_error() -> None:
    empty = ScriptedJudge([json.dumps({"statements": []})])
    verdict = asyncio.run(FaithfulnessCheck().evaluate(CASE, empty))
    assert verdict == (
        VerdictState.NOT_APPLICABLE,
        "no statements: the answer makes no claim to check",
        None,
    )
    short = json.dumps({"answers": [{"index": 1, "verdict": "no", "reason": "made up"}]})
    # an incomplete batch gets the one repair request, and errors when the repair is short too
    missing = ScriptedJudge([json.dumps({"statements": [MADE_UP, *PADDING]}), short, short])
    verdict = asyncio.run(FaithfulnessCheck().evaluate(CASE, missing))
    assert verdict.state is VerdictState.ERRORED
    assert verdict.error is not None
    assert "after one repair: expected one answer for each of statements 1..4, got [1]" in (
        verdict.error
    )


def test_goal_accuracy_with_and_without_a_reference() -> None:
    workflow = json.dumps(
        {"user_goal": "Learn how TechCorp's Q3 went", "end_state": "Told revenue grew 30%"}
    )
    no = json.dumps({"verdict": "no", "reason": "the growth figure is not what was reported"})
    judge = ScriptedJudge([workflow, no])
    verdict = asyncio.run(GoalAccuracyCheck().evaluate(CASE, judge))
    assert verdict.state is VerdictState.FAILED
    assert verdict.reason.startswith("goal: Learn how TechCorp's Q3 went | end state:")
    assert "<reference>\nLearn how TechCorp's Q3 went\n</reference>" in (
        judge.requests[1].messages[1].content
    )

    with_ref = CASE.model_copy(update={"ground_truth": {"goal": "Get Q3 headcount"}})
    judge = ScriptedJudge([workflow, no])
    check = GoalAccuracyCheck(reference_path="ground_truth.goal")
    asyncio.run(check.evaluate(with_ref, judge))
    assert "<reference>\nGet Q3 headcount\n</reference>" in judge.requests[1].messages[1].content
    assert check.version == "goal-accuracy/1-with-reference+plain@2"
    assert asyncio.run(check.evaluate(CASE, judge)).state is VerdictState.NOT_APPLICABLE


def test_metrics_from_a_suite_file(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text(CASE.model_dump_json() + "\n")
    (tmp_path / "suite.yaml").write_text(
        "name: rag\n"
        "cases: cases.jsonl\n"
        "checks:\n"
        "  faithful:\n"
        "    type: faithfulness\n"
        "    threshold: 0.7\n"
        "rubrics:\n"
        "  answer:\n"
        "    weights: {faithful: 1.0}\n"
    )
    suite = load_suite(tmp_path / "suite.yaml")
    results: list[CaseResult] = []
    results.extend(
        evaluate_all(Evaluator.from_suite(suite, judge_for([MADE_UP, *PADDING])), [CASE])
    )
    assert results[0].verdicts["faithful"].state is VerdictState.PASSED  # 0.75 >= 0.7
