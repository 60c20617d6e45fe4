"""Expected-outcome checklists: each statement judged on its own, all must hold."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from checkweigh.core import Case, CaseResult, VerdictState
from checkweigh.judges import ExpectedOutcomesCheck, JudgeRequest, ScriptedJudge
from checkweigh.runs import Evaluator
from checkweigh.suites import load_suite
from support.evaluating import evaluate_all

OUTCOMES = [
    "A meeting with Alice and Bob is booked on 2025-03-04.",
    "The meeting starts at 10:00.",
    "The user is told the meeting lasts 45 minutes.",
]
CASE = Case(
    id="s01",
    input={"message": "Book 45 minutes with Alice and Bob on 2025-03-04 at 10:00"},
    trace=[
        {"kind": "tool_call", "name": "book_meeting", "arguments": {"time": "10:00"}},
        {"kind": "assistant", "content": "Booked Alice and Bob on 2025-03-04 at 10:00."},
    ],
    ground_truth={"expected_outcomes": OUTCOMES},
)


def by_statement(answers: dict[str, str]) -> ScriptedJudge:
    """A judge that answers according to which statement it is asked about."""

    def answer(request: JudgeRequest) -> str:
        text = request.messages[1].content
        for fragment, verdict in answers.items():
            if fragment in text.split("\n", 1)[0]:
                return json.dumps({"verdict": verdict, "reason": f"{fragment}: {verdict}"})
        return "not json"

    return ScriptedJudge([answer] * 10)


def test_all_statements_hold() -> None:
    judge = by_statement({"booked": "yes", "starts at": "yes", "45 minutes": "yes"})
    verdict = asyncio.run(ExpectedOutcomesCheck().evaluate(CASE, judge))
    assert verdict == (VerdictState.PASSED, "all 3 expected outcomes met", None)
    questions = sorted(r.messages[1].content.split("\n", 1)[0] for r in judge.requests)
    assert len(questions) == 3  # one independent question per statement
    assert all(q.startswith("Question: Is this statement about the outcome") for q in questions)


def test_one_unmet_statement_fails_the_case_with_its_justification() -> None:
    judge = by_statement({"booked": "yes", "starts at": "yes", "45 minutes": "no"})
    verdict = asyncio.run(ExpectedOutcomesCheck().evaluate(CASE, judge))
    assert verdict.state is VerdictState.FAILED
    assert verdict.reason == (
        "1 of 3 expected outcomes not met: "
        "'The user is told the meeting lasts 45 minutes.': 45 minutes: no"
    )


def test_an_unjudgeable_statement_errors_instead_of_failing() -> None:
    judge = by_statement({"booked": "yes", "starts at": "yes"})  # the third gets junk twice
    verdict = asyncio.run(ExpectedOutcomesCheck().evaluate(CASE, judge))
    assert verdict.state is VerdictState.ERRORED
    assert verdict.reason == "1 outcome(s) not judged"


def test_no_statements_means_not_applicable() -> None:
    bare = CASE.model_copy(update={"ground_truth": {}})
    verdict = asyncio.run(ExpectedOutcomesCheck().evaluate(bare, ScriptedJudge([])))
    assert verdict.state is VerdictState.NOT_APPLICABLE


def test_declared_in_a_suite_and_bound_to_the_runs_judge(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text(CASE.model_dump_json() + "\n")
    (tmp_path / "suite.yaml").write_text(
        "name: outcomes\n"
        "cases: cases.jsonl\n"
        "checks:\n"
        "  outcomes_met:\n"
        "    type: expected_outcomes\n"
        "rubrics:\n"
        "  completion:\n"
        "    weights: {outcomes_met: 1.0}\n"
    )
    suite = load_suite(tmp_path / "suite.yaml")
    unbound = Evaluator.from_suite(suite).evaluate(CASE)
    assert unbound.verdicts["outcomes_met"].reason.startswith("skipped: no judge configured")

    judge = by_statement({"booked": "yes", "starts at": "yes", "45 minutes": "yes"})
    results: list[CaseResult] = []
    results.extend(evaluate_all(Evaluator.from_suite(suite, judge), [CASE]))
    assert results[0].verdicts["outcomes_met"].state is VerdictState.PASSED
    assert results[0].results["completion"].score == 1.0
