"""Outcome classes for cases with and without a success flag, and the note that says which
rule set classed a rubric's cases and why."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkweigh.core import (
    Case,
    CaseResult,
    OutcomeBasis,
    OutcomeClass,
    OutcomeRule,
    Rubric,
    RubricItem,
    RunAggregator,
    classify,
    default_outcome_rules,
    failed,
    passed,
    score_rubric,
)
from checkweigh.core._outcome import basis_note

RULES = default_outcome_rules()
S, G, P, H = (
    OutcomeClass.SUCCESSFUL_COMPLETION,
    OutcomeClass.GRACEFUL_FAILURE,
    OutcomeClass.PARTIAL_FAILURE,
    OutcomeClass.HARD_FAILURE,
)


def _case(**final_state: Any) -> Case:
    return Case.model_validate({"id": "c", "input": "cancel ZFA04Y", "final_state": final_state})


@pytest.mark.parametrize(
    ("final_state", "score", "required_failed", "expected"),
    [
        # no flag: the score alone decides
        ({"reservation": {"status": "cancelled"}}, 1.0, False, S),
        ({}, 0.99, False, G),
        ({}, 0.5, False, G),
        ({}, 0.49, False, P),
        ({}, 0.0, False, P),  # score 0 alone is not a hard failure: the stage says that
        ({"stage": "failed"}, 0.0, False, H),
        ({}, 1.0, True, G),  # a failed required check (weight 0) forbids success
        # the flag, whatever its value, means the seed's rules apply
        ({"success": True}, 0.75, False, S),
        ({"success": True}, 0.74, False, G),
        ({"success": False}, 1.0, False, G),  # the agent says it failed: not a success
        ({"success": None}, 1.0, False, G),
        ({"success": 1}, 1.0, False, G),  # 1 is not true
        ({"success": False, "stage": "failed"}, 0.0, False, H),
        ({"success": False}, 0.2, False, P),
    ],
)
def test_default_rules(
    final_state: dict[str, Any], score: float, required_failed: bool, expected: OutcomeClass
) -> None:
    assert classify(RULES, score, _case(**final_state), required_failed) is expected


@given(
    score=st.sampled_from([0.0, 0.25, 0.5, 0.75, 0.9, 1.0]),
    flag=st.sampled_from(["missing", True, False, None, "yes"]),
    stage=st.sampled_from(["missing", "failed", "completed"]),
)
def test_the_rule_that_classes_a_case_belongs_to_its_flag(
    score: float, flag: object, stage: str
) -> None:
    state: dict[str, Any] = {}
    if flag != "missing":
        state["success"] = flag
    if stage != "missing":
        state["stage"] = stage
    rubric = Rubric.build("task", [RubricItem("a", score), RubricItem("b", 1.0 - score)])
    verdicts = {"a": passed(), "b": failed("no")}
    if score == 0.0:  # a weight of 0 for "a": make it fail too, so the score is 0
        verdicts["a"] = failed("no")
    result = score_rubric(rubric, verdicts, _case(**state))
    assert result.score == pytest.approx(score)
    rule = rubric.outcome_rules[result.rule]
    assert rule.outcome is result.outcome
    has_flag = flag != "missing"
    assert rule.basis is (OutcomeBasis.SUCCESS_FLAG if has_flag else OutcomeBasis.SCORE)
    # the old rules, for a case with a flag, are unchanged
    if has_flag:
        old = (
            S
            if flag is True and score >= 0.75
            else H
            if stage == "failed" and score == 0.0
            else G
            if score >= 0.5
            else P
        )
        assert result.outcome is old


def test_the_note_names_the_rule_set_and_why() -> None:
    bands = (
        "successful completion at score 1, hard failure at 0 with final_state.stage == "
        "'failed', graceful failure from 0.5, else partial failure"
    )
    flag, score = OutcomeBasis.SUCCESS_FLAG, OutcomeBasis.SCORE
    assert basis_note(RULES, {score: 50}) == (
        f"classed by score, since no case has a success flag at final_state.success: {bands}"
    )
    assert basis_note(RULES, {flag: 50}) == (
        "classed by the success flag at final_state.success (every scored case has one)"
    )
    assert basis_note(RULES, {flag: 30, score: 20}) == (
        "classed by the success flag at final_state.success in 30 case(s), and by score in "
        f"the 20 without one: {bands}"
    )
    assert basis_note(RULES, {}) is None
    own = (OutcomeRule(S, min_score=0.9),)
    assert basis_note(own, {OutcomeBasis.RULES: 3}) == "classed by the suite's outcome_rules"
    custom = default_outcome_rules(
        success_path="final_state.booked", stage_path="final_state.phase", graceful_min=0.6
    )
    assert basis_note(custom, {score: 1}) == (
        "classed by score, since no case has a success flag at final_state.booked: "
        "successful completion at score 1, hard failure at 0 with final_state.phase == "
        "'failed', graceful failure from 0.6, else partial failure"
    )


def test_the_summary_counts_each_rule_set_per_rubric() -> None:
    task = Rubric.build("task", [RubricItem("status", 0.6), RubricItem("reply", 0.4)])
    own = Rubric.build(
        "tone", [RubricItem("reply", 1.0)], outcome_rules=[OutcomeRule(S, min_score=1.0)]
    )
    rows = [
        ({"success": True}, "passed"),
        ({}, "passed"),
        ({}, "failed"),
    ]
    results = []
    for i, (state, reply) in enumerate(rows):
        verdicts = {"status": passed(), "reply": passed() if reply == "passed" else failed("x")}
        case = _case(**state)
        scores = {r.name: score_rubric(r, verdicts, case) for r in (task, own)}
        results.append(CaseResult(f"c{i}", 0, verdicts, scores))
    summary = RunAggregator([task, own]).add_all(results).summary()
    t, o = summary.rubrics
    assert t.outcomes == {
        "successful_completion": 2,
        "graceful_failure": 1,
        "partial_failure": 0,
        "hard_failure": 0,
    }
    assert t.outcome_basis == {"success_flag": 1, "score": 2}
    assert t.outcome_note is not None
    assert t.outcome_note.startswith(
        "classed by the success flag at final_state.success in 1 case(s), and by score in "
        "the 2 without one"
    )
    # no rule matched the failed reply: partial failure, still by the suite's own rules
    assert o.outcomes["partial_failure"] == 1
    assert o.outcome_basis == {"rules": 3}
    assert o.outcome_note == "classed by the suite's outcome_rules"
