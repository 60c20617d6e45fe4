"""Rubric.build validates weights; weights that do not sum to 1 are normalized and noted."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from checkweigh.core import (
    Bands,
    NotApplicablePolicy,
    OutcomeClass,
    OutcomeRule,
    Rubric,
    RubricError,
    RubricItem,
    default_outcome_rules,
)


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([], "rubric 'completion' has no checks"),
        (
            [RubricItem("correct_time", 0.5), RubricItem("correct_participants", -0.1)],
            "weight of 'correct_participants' must be a finite number >= 0, got -0.1",
        ),
        (
            [RubricItem("correct_time", float("nan"))],
            "weight of 'correct_time' must be a finite number >= 0, got nan",
        ),
        (
            [RubricItem("correct_time", float("inf"))],
            "weight of 'correct_time' must be a finite number >= 0, got inf",
        ),
        (
            [RubricItem("correct_time", True)],
            "weight of 'correct_time' must be a number, got True",
        ),
        (
            [RubricItem("correct_time", "0.5")],  # type: ignore[arg-type]
            "weight of 'correct_time' must be a number, got '0.5'",
        ),
        (
            [RubricItem("correct_time", 0.5), RubricItem("correct_time", 0.5)],
            "rubric 'completion' lists check 'correct_time' twice",
        ),
        (
            [RubricItem("correct_time", 0), RubricItem("correct_participants", 0.0)],
            "rubric 'completion': weights sum to 0; give at least one weight > 0",
        ),
    ],
    ids=["empty", "negative", "nan", "inf", "bool", "text", "duplicate", "all-zero"],
)
def test_build_rejects_bad_rubrics(items: list[RubricItem], message: str) -> None:
    with pytest.raises(RubricError) as info:
        Rubric.build("completion", items)
    assert message in str(info.value)


def test_seed_completion_weights_are_kept_as_written(completion: Rubric) -> None:
    assert completion.normalized is False
    assert completion.normalization_note() is None
    assert completion.weight_total == pytest.approx(1.0)
    assert completion.check_names == (
        "correct_participants",
        "correct_time",
        "correct_duration",
        "no_double_booking",
        "clear_confirmation",
    )
    assert completion.normalized_weights == pytest.approx(
        {
            "correct_participants": 0.25,
            "correct_time": 0.25,
            "correct_duration": 0.10,
            "no_double_booking": 0.20,
            "clear_confirmation": 0.20,
        }
    )
    # the defaults: the seed's outcome rules and bands
    assert completion.outcome_rules == default_outcome_rules()
    assert completion.bands == Bands(0.85, 0.70)


def test_seed_recovery_weights_sum_to_095_and_are_normalized(recovery: Rubric) -> None:
    assert recovery.weight_total == pytest.approx(0.95)
    assert recovery.normalized is True
    weights = recovery.normalized_weights
    assert weights == pytest.approx(
        {
            "detected_conflict": 0.30 / 0.95,
            "told_user": 0.25 / 0.95,
            "offered_alternatives": 0.20 / 0.95,
            "kept_request": 0.15 / 0.95,
            "polite": 0.05 / 0.95,
        }
    )
    assert sum(weights.values()) == pytest.approx(1.0)
    assert weights["detected_conflict"] == pytest.approx(0.315789, abs=1e-6)
    assert recovery.normalization_note() == (
        "weights of rubric 'error_recovery' sum to 0.95, not 1.0; they were normalized"
    )


def test_integer_weights_and_zero_weights_are_accepted(
    make_rubric: Callable[..., Rubric],
) -> None:
    rubric = make_rubric("tools", {"checked_first": 3, "booked_once": 1, "logged": 0})
    assert rubric.normalized_weights == {"checked_first": 0.75, "booked_once": 0.25, "logged": 0.0}
    assert rubric.normalization_note() == (
        "weights of rubric 'tools' sum to 4, not 1.0; they were normalized"
    )
    assert rubric.unknown_checks(["checked_first", "logged"]) == ["booked_once"]


def test_weights_that_sum_to_one_up_to_rounding_are_not_noted(
    make_rubric: Callable[..., Rubric],
) -> None:
    # 0.1 * 10 is 0.9999999999999999 when summed naively
    rubric = make_rubric("ten", {f"c{i}": 0.1 for i in range(10)})
    assert rubric.normalized is False
    assert rubric.normalization_note() is None


def test_build_keeps_rules_guard_and_bands(make_rubric: Callable[..., Rubric]) -> None:
    rules = (OutcomeRule(OutcomeClass.SUCCESSFUL_COMPLETION, min_score=0.9),)
    rubric = make_rubric(
        "strict",
        {"correct_time": 1.0},
        policy=NotApplicablePolicy.PASS,
        required=("correct_time",),
        outcome_rules=rules,
        bands=Bands(0.95, 0.8),
    )
    assert rubric.outcome_rules == rules
    assert rubric.items == (RubricItem("correct_time", 1.0, True, NotApplicablePolicy.PASS),)
    assert rubric.bands.label(0.96) == "production ready"
    assert rubric.bands.label(0.95) == "production ready"
    assert rubric.bands.label(0.9) == "needs improvement"
    assert rubric.bands.label(0.8) == "needs improvement"
    assert rubric.bands.label(0.79) == "not ready"
