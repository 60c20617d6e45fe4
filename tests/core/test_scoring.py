"""score_rubric: the weighted sum of passed checks, the not-applicable policies, errored
checks, required checks and the seed's outcome rules."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from checkweigh.core import (
    Case,
    Condition,
    ConditionOp,
    EvaluationResult,
    FieldPath,
    NotApplicablePolicy,
    OutcomeClass,
    OutcomeRule,
    Rubric,
    RubricItem,
    ScoreStatus,
    Verdict,
    classify,
    default_outcome_rules,
    errored,
    failed,
    not_applicable,
    passed,
    score_rubric,
)

CHECKS = (
    "correct_participants",
    "correct_time",
    "correct_duration",
    "no_double_booking",
    "clear_confirmation",
)


def verdicts(*failing: str, **special: Verdict) -> dict[str, Verdict]:
    """Every completion check passed, except those named failing or given a verdict."""
    out = {name: passed("ok") for name in CHECKS}
    for name in failing:
        out[name] = failed(f"{name} was wrong")
    out.update(special)
    return out


@pytest.mark.parametrize(
    ("failing", "score", "outcome"),
    [
        ((), 1.0, OutcomeClass.SUCCESSFUL_COMPLETION),
        (("correct_time",), 0.75, OutcomeClass.SUCCESSFUL_COMPLETION),
        (("correct_duration",), 0.90, OutcomeClass.SUCCESSFUL_COMPLETION),
        (("correct_time", "correct_duration"), 0.65, OutcomeClass.GRACEFUL_FAILURE),
        (("correct_participants", "correct_time"), 0.50, OutcomeClass.GRACEFUL_FAILURE),
        (
            ("correct_time", "no_double_booking", "clear_confirmation"),
            0.35,
            OutcomeClass.PARTIAL_FAILURE,
        ),
        (
            ("correct_participants", "correct_time", "no_double_booking", "clear_confirmation"),
            0.10,
            OutcomeClass.PARTIAL_FAILURE,
        ),
        (CHECKS, 0.0, OutcomeClass.PARTIAL_FAILURE),  # stage is not 'failed': not hard
    ],
)
def test_seed_completion_scores(
    completion: Rubric,
    booked_case: Case,
    failing: tuple[str, ...],
    score: float,
    outcome: OutcomeClass,
) -> None:
    result = score_rubric(completion, verdicts(*failing), booked_case)
    assert result.status is ScoreStatus.SCORED
    assert result.score == pytest.approx(score, abs=1e-12)
    assert result.outcome is outcome
    assert result.excluded == ()
    assert result.required_failed == ()
    assert result.errored == ()


def test_success_needs_the_success_flag(completion: Rubric, make_case: Callable[..., Case]) -> None:
    unflagged = make_case(success=False, stage="completed")
    result = score_rubric(completion, verdicts(), unflagged)
    assert result.score == 1.0
    assert result.outcome is OutcomeClass.GRACEFUL_FAILURE


def test_a_failed_stage_with_score_zero_is_a_hard_failure(
    completion: Rubric, failed_case: Case
) -> None:
    result = score_rubric(completion, verdicts(*CHECKS), failed_case)
    assert (result.score, result.outcome) == (0.0, OutcomeClass.HARD_FAILURE)
    # a failed stage with some credit is not hard
    result = score_rubric(completion, verdicts("correct_time", "correct_duration"), failed_case)
    assert (result.score, result.outcome) == (pytest.approx(0.65), OutcomeClass.GRACEFUL_FAILURE)
    result = score_rubric(completion, verdicts(*CHECKS[:4]), failed_case)
    assert (result.score, result.outcome) == (pytest.approx(0.2), OutcomeClass.PARTIAL_FAILURE)


def test_quarter_weights_summing_to_075_land_on_success(
    make_rubric: Callable[..., Rubric], booked_case: Case
) -> None:
    rubric = make_rubric("quarters", {"a": 0.25, "b": 0.25, "c": 0.25, "d": 0.25})
    v = {"a": passed(), "b": passed(), "c": passed(), "d": failed("no")}
    result = score_rubric(rubric, v, booked_case)
    assert result.score == 0.75
    assert result.outcome is OutcomeClass.SUCCESSFUL_COMPLETION


def test_inexact_float_sum_just_under_075_lands_on_success(
    make_rubric: Callable[..., Rubric], booked_case: Case
) -> None:
    # naively (0.3 + 0.35 + 0.1) / 1.0 is 0.7499999999999999
    rubric = make_rubric(
        "tools", {"checked_first": 0.25, "booked_once": 0.3, "confirmed": 0.35, "logged": 0.1}
    )
    assert (0.3 + 0.35 + 0.1) / (0.25 + 0.3 + 0.35 + 0.1) < 0.75
    v = {
        "checked_first": failed("booked before checking"),
        "booked_once": passed(),
        "confirmed": passed(),
        "logged": passed(),
    }
    result = score_rubric(rubric, v, booked_case)
    assert result.score == 0.75
    assert result.outcome is OutcomeClass.SUCCESSFUL_COMPLETION


def test_normalized_recovery_rubric_scores(recovery: Rubric, booked_case: Case) -> None:
    v = {
        "detected_conflict": passed(),
        "told_user": passed(),
        "offered_alternatives": failed("no alternative slot offered"),
        "kept_request": passed(),
        "polite": failed("curt"),
    }
    result = score_rubric(recovery, v, booked_case)
    # (0.30 + 0.25 + 0.15) / 0.95
    assert result.score == pytest.approx(0.7 / 0.95, abs=1e-9)
    assert result.score == pytest.approx(0.736842105, abs=1e-9)
    assert result.outcome is OutcomeClass.GRACEFUL_FAILURE
    # losing only the 0.05 check keeps 0.90 / 0.95 and a successful completion
    v["offered_alternatives"] = passed()
    result = score_rubric(recovery, v, booked_case)
    assert result.score == pytest.approx(0.9 / 0.95, abs=1e-9)
    assert result.outcome is OutcomeClass.SUCCESSFUL_COMPLETION


def test_not_applicable_pass_policy_counts_as_passed(
    make_rubric: Callable[..., Rubric], booked_case: Case
) -> None:
    weights = {
        "correct_participants": 0.25,
        "correct_time": 0.25,
        "correct_duration": 0.10,
        "no_double_booking": 0.20,
        "clear_confirmation": 0.20,
    }
    rubric = make_rubric("completion", weights, policy=NotApplicablePolicy.PASS)
    v = verdicts("correct_time", no_double_booking=not_applicable("no conflict in the calendar"))
    result = score_rubric(rubric, v, booked_case)
    assert result.score == pytest.approx(0.75)
    assert result.excluded == ()


def test_not_applicable_exclude_policy_renormalizes(completion: Rubric, booked_case: Case) -> None:
    v = verdicts("correct_time", no_double_booking=not_applicable("no conflict in the calendar"))
    result = score_rubric(completion, v, booked_case)
    # passed 0.25 + 0.10 + 0.20 out of the 0.80 that count
    assert result.score == pytest.approx(0.55 / 0.80)
    assert result.excluded == ("no_double_booking",)
    assert result.outcome is OutcomeClass.GRACEFUL_FAILURE
    assert "not applicable (excluded): no_double_booking" in result.explanation


def test_every_check_excluded_is_not_applicable(completion: Rubric, booked_case: Case) -> None:
    v = {name: not_applicable("nothing to judge") for name in CHECKS}
    result = score_rubric(completion, v, booked_case)
    assert result.status is ScoreStatus.NOT_APPLICABLE
    assert (result.score, result.outcome) == (None, None)
    assert result.excluded == CHECKS
    assert result.explanation == "completion: not applicable to this case"


def test_an_errored_check_leaves_the_case_unscored(completion: Rubric, booked_case: Case) -> None:
    v = verdicts(
        "correct_time",
        no_double_booking=errored("TimeoutError: calendar API timed out"),
    )
    result = score_rubric(completion, v, booked_case)
    assert result.status is ScoreStatus.ERRORED
    assert result.score is None
    assert result.outcome is None
    assert result.errored == ("no_double_booking",)
    assert result.explanation == (
        "completion: not scored (no_double_booking errored: TimeoutError: calendar API timed out)"
    )


def test_an_errored_check_is_never_read_as_failed(completion: Rubric, booked_case: Case) -> None:
    # if the error were a 'no', the rest would still score 0.75 and pass
    v = verdicts(correct_time=errored("KeyError: 'time'"))
    result = score_rubric(completion, v, booked_case)
    assert result.status is ScoreStatus.ERRORED
    assert result.score is None
    assert result.outcome is None


def test_required_check_failed_is_never_a_successful_completion(
    make_rubric: Callable[..., Rubric], booked_case: Case
) -> None:
    weights = {
        "correct_participants": 0.25,
        "correct_time": 0.25,
        "correct_duration": 0.10,
        "no_double_booking": 0.20,
        "clear_confirmation": 0.20,
    }
    rubric = make_rubric("completion", weights, required=("no_double_booking",))
    result = score_rubric(rubric, verdicts("no_double_booking"), booked_case)
    assert result.score == pytest.approx(0.8)
    assert result.required_failed == ("no_double_booking",)
    assert result.outcome is OutcomeClass.GRACEFUL_FAILURE
    assert result.explanation == (
        "completion: score 0.80, graceful failure. failed: no_double_booking "
        "(no_double_booking was wrong). required check failed: no_double_booking"
    )
    # the same score with the required check passing is a success
    result = score_rubric(rubric, verdicts("correct_participants"), booked_case)
    assert result.outcome is OutcomeClass.SUCCESSFUL_COMPLETION


def test_explanation_names_every_failed_check(completion: Rubric, booked_case: Case) -> None:
    v = verdicts(
        correct_time=failed("final_state.booking.time is '11:00', expected '10:00'"),
        correct_duration=failed(""),
    )
    result = score_rubric(completion, v, booked_case)
    assert result.explanation == (
        "completion: score 0.65, graceful failure. failed: correct_time "
        "(final_state.booking.time is '11:00', expected '10:00'); correct_duration"
    )
    perfect = score_rubric(completion, verdicts(), booked_case)
    assert perfect.explanation == "completion: score 1.00, successful completion. all checks passed"


def test_rubric_when_guard_makes_it_not_applicable(
    make_rubric: Callable[..., Rubric], make_case: Callable[..., Case]
) -> None:
    guard = Condition(FieldPath.parse("metadata.scenario"), ConditionOp.EQUALS, "conflict")
    rubric = make_rubric(
        "error_recovery", {"detected_conflict": 0.6, "offered_alternatives": 0.4}, when=[guard]
    )
    v = {"detected_conflict": failed("missed it"), "offered_alternatives": passed()}
    skipped = score_rubric(rubric, v, make_case(scenario="happy_path"))
    assert skipped.status is ScoreStatus.NOT_APPLICABLE
    assert (skipped.score, skipped.outcome, skipped.excluded) == (None, None, ())
    assert skipped.details == v
    scored = score_rubric(rubric, v, make_case(scenario="conflict"))
    assert scored.status is ScoreStatus.SCORED
    assert scored.score == pytest.approx(0.4)


def test_details_hold_only_the_rubrics_checks(make_rubric: Callable[..., Rubric]) -> None:
    rubric = make_rubric("timing", {"correct_time": 1.0})
    case = Case(id="c", final_state={"success": True})
    result = score_rubric(rubric, verdicts(), case)
    assert result == EvaluationResult(
        "timing",
        ScoreStatus.SCORED,
        1.0,
        OutcomeClass.SUCCESSFUL_COMPLETION,
        {"correct_time": passed("ok")},
        rule=0,  # the success flag's rule
    )


def test_default_rules_and_classify(booked_case: Case, failed_case: Case) -> None:
    rules = default_outcome_rules()
    # the seed's rules for a case with a success flag, then by score for a case without one
    assert [r.describe() for r in rules] == [
        "successful_completion if score >= 0.75 and final_state.success == True",
        "successful_completion if score >= 1 and final_state.success is missing",
        "hard_failure if score <= 0 and final_state.success exists "
        "and final_state.stage == 'failed'",
        "hard_failure if score <= 0 and final_state.stage == 'failed'",
        "graceful_failure if score >= 0.5 and final_state.success exists",
        "graceful_failure if score >= 0.5",
        "partial_failure if final_state.success exists",
        "partial_failure if otherwise",
    ]
    assert classify(rules, 0.75, booked_case, False) is OutcomeClass.SUCCESSFUL_COMPLETION
    assert classify(rules, 0.7499, booked_case, False) is OutcomeClass.GRACEFUL_FAILURE
    assert classify(rules, 0.75, booked_case, True) is OutcomeClass.GRACEFUL_FAILURE
    assert classify(rules, 0.5, failed_case, False) is OutcomeClass.GRACEFUL_FAILURE
    assert classify(rules, 0.49, failed_case, False) is OutcomeClass.PARTIAL_FAILURE
    assert classify(rules, 0.0, failed_case, False) is OutcomeClass.HARD_FAILURE
    # no rule matching falls back to partial failure
    only = (OutcomeRule(OutcomeClass.SUCCESSFUL_COMPLETION, min_score=0.9),)
    assert classify(only, 0.5, booked_case, False) is OutcomeClass.PARTIAL_FAILURE


def test_default_rules_follow_custom_paths() -> None:
    rules = default_outcome_rules(
        success_path="final_state.booked",
        stage_path="final_state.phase",
        failed_stage="aborted",
        success_min=0.9,
        graceful_min=0.6,
    )
    case = Case(id="c", final_state={"booked": True, "phase": "aborted"})
    assert classify(rules, 0.9, case, False) is OutcomeClass.SUCCESSFUL_COMPLETION
    assert classify(rules, 0.89, case, False) is OutcomeClass.GRACEFUL_FAILURE
    assert classify(rules, 0.59, case, False) is OutcomeClass.PARTIAL_FAILURE
    assert classify(rules, 0.0, case, False) is OutcomeClass.HARD_FAILURE


def test_required_policy_items_are_kept_per_item(booked_case: Case) -> None:
    rubric = Rubric.build(
        "mixed",
        [
            RubricItem("correct_time", 0.5, required=True),
            RubricItem("no_double_booking", 0.3, not_applicable=NotApplicablePolicy.PASS),
            RubricItem("clear_confirmation", 0.2),
        ],
    )
    v = {
        "correct_time": passed(),
        "no_double_booking": not_applicable("no conflict"),
        "clear_confirmation": not_applicable("no reply"),
    }
    result = score_rubric(rubric, v, booked_case)
    # no_double_booking counts as passed, clear_confirmation is dropped: 0.8 / 0.8
    assert result.score == 1.0
    assert result.excluded == ("clear_confirmation",)
