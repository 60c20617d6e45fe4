"""Batch mode: a case's yes/no judge checks share one checklist call; each keeps its own
verdict; guarded questions are asked only where they apply; a bad checklist errors them all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkweigh.core import Case, CaseResult, VerdictState
from checkweigh.judges import JudgeRequest, ScriptedJudge
from checkweigh.runs import Evaluator
from checkweigh.suites import Suite, load_suite
from support.evaluating import evaluate_all

SUITE = """\
name: replies
cases: cases.jsonl
checks:
  polite:
    type: judge
    question: Is the reply polite?
  grounded:
    type: judge
    question: Is every claim in the reply supported by the trace?
    when: {path: metadata.kind, equals: booking}
  short:
    type: word_count
    path: output
    max: 40
rubrics:
  clarity:
    weights: {polite: 0.4, grounded: 0.4, short: 0.2}
"""


def make(case_id: str, reply: str, kind: str) -> Case:
    return Case(
        id=case_id,
        trace=[{"kind": "assistant", "content": reply}],
        metadata={"kind": kind},
    )


CASES = [
    make("b1", "Booked Alice at 10:00. See you then!", "booking"),
    make("b2", "Booked Bob at 09:00, room 7 (there is no room 7).", "booking"),
    make("q1", "WHAT DO YOU WANT?", "question"),
]


@pytest.fixture
def suite(tmp_path: Path) -> Suite:
    (tmp_path / "suite.yaml").write_text(SUITE)
    (tmp_path / "cases.jsonl").write_text("".join(c.model_dump_json() + "\n" for c in CASES))
    return load_suite(tmp_path / "suite.yaml")


def checklist(request: JudgeRequest) -> str:
    text = request.messages[1].content
    questions = [line for line in text.splitlines() if line[:2] in ("1.", "2.")]
    reply = text.split("<agent_final_answer>\n")[1]
    answers = []
    for i, q in enumerate(questions, start=1):
        ok = not reply.startswith("WHAT") if "polite" in q else "room 7" not in reply
        answers.append({"index": i, "verdict": "yes" if ok else "no", "reason": f"q{i}: {ok}"})
    return json.dumps({"answers": answers})


def run(suite: Suite, judge: ScriptedJudge) -> dict[str, CaseResult]:
    results: list[CaseResult] = []
    results.extend(evaluate_all(Evaluator.from_suite(suite, judge, batch=True), CASES))
    return {r.case_id: r for r in results}


def test_one_call_per_case_with_each_checks_own_verdict(suite: Suite) -> None:
    judge = ScriptedJudge([checklist] * 3)
    by_id = run(suite, judge)
    assert len(judge.requests) == 3  # one checklist call per case, not one per check
    assert by_id["b1"].verdicts["polite"].state is VerdictState.PASSED
    assert by_id["b1"].verdicts["grounded"].state is VerdictState.PASSED
    assert by_id["b2"].verdicts["polite"].state is VerdictState.PASSED
    assert by_id["b2"].verdicts["grounded"].state is VerdictState.FAILED
    assert by_id["q1"].verdicts["polite"].state is VerdictState.FAILED
    # the guarded question is not asked where it does not apply
    assert by_id["q1"].verdicts["grounded"].state is VerdictState.NOT_APPLICABLE
    asked = {r.messages[1].content.count("\n2. ") for r in judge.requests}
    assert asked == {0, 1}  # two questions for bookings, one for the question case
    assert judge.requests[0].tags["check"] == "judge-batch/1"


def test_a_bad_checklist_errors_every_question_of_the_case(suite: Suite) -> None:
    incomplete = json.dumps({"answers": [{"index": 1, "verdict": "yes", "reason": "ok"}]})
    judge = ScriptedJudge([incomplete, incomplete] + [checklist] * 2)
    results: list[CaseResult] = []
    results.extend(evaluate_all(Evaluator.from_suite(suite, judge, batch=True), CASES[:1]))
    (result,) = results
    for name in ("polite", "grounded"):
        verdict = result.verdicts[name]
        assert verdict.state is VerdictState.ERRORED
        assert "expected one answer for each of questions 1..2" in verdict.error
