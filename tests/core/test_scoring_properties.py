"""Property tests of the scoring formula against a direct reference computation."""

from __future__ import annotations

import math

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from checkweigh.core import (
    Case,
    EvaluationResult,
    NotApplicablePolicy,
    OutcomeClass,
    OutcomeRule,
    Rubric,
    RubricItem,
    ScoreStatus,
    Verdict,
    VerdictState,
    classify,
    errored,
    failed,
    not_applicable,
    passed,
    score_rubric,
)

PROPS = settings(max_examples=300, deadline=None, database=None)

CASE = Case(
    id="sched-prop",
    final_state={"success": True, "stage": "failed"},
)
"""Success flag set, so a high score is a success; stage 'failed', so 0 is a hard failure."""

weights = st.one_of(
    st.just(0.0),
    st.floats(min_value=0.001, max_value=50.0, allow_nan=False, allow_infinity=False),
    st.integers(min_value=1, max_value=20),
)
decided = st.sampled_from([VerdictState.PASSED, VerdictState.FAILED, VerdictState.NOT_APPLICABLE])
policies = st.sampled_from(list(NotApplicablePolicy))


@st.composite
def scenarios(
    draw: st.DrawFn, states: st.SearchStrategy[VerdictState] = decided
) -> tuple[list[RubricItem], dict[str, VerdictState]]:
    n = draw(st.integers(min_value=1, max_value=8))
    ws = draw(st.lists(weights, min_size=n, max_size=n))
    assume(sum(ws) > 0)
    items = [
        RubricItem(f"check_{i}", w, draw(st.booleans()), draw(policies)) for i, w in enumerate(ws)
    ]
    return items, {item.check: draw(states) for item in items}


def _verdict(state: VerdictState) -> Verdict:
    return {
        VerdictState.PASSED: passed("ok"),
        VerdictState.FAILED: failed("wrong"),
        VerdictState.NOT_APPLICABLE: not_applicable("does not apply"),
        VerdictState.ERRORED: errored("RuntimeError: boom"),
    }[state]


def _score(items: list[RubricItem], states: dict[str, VerdictState]) -> EvaluationResult:
    rubric = Rubric.build("prop", items)
    return score_rubric(rubric, {c: _verdict(s) for c, s in states.items()}, CASE)


def _reference(items: list[RubricItem], states: dict[str, VerdictState]) -> float | None:
    earned = counted = 0.0
    for item in items:
        state = states[item.check]
        counts_as_pass = state is VerdictState.PASSED or (
            state is VerdictState.NOT_APPLICABLE and item.not_applicable is NotApplicablePolicy.PASS
        )
        if counts_as_pass:
            earned = math.fsum([earned, item.weight])
        if counts_as_pass or state is VerdictState.FAILED:
            counted = math.fsum([counted, item.weight])
    return earned / counted if counted > 0 else None


@PROPS
@given(scenarios())
def test_score_is_in_unit_interval_and_matches_reference(
    scenario: tuple[list[RubricItem], dict[str, VerdictState]],
) -> None:
    items, states = scenario
    result = _score(items, states)
    expected = _reference(items, states)
    if expected is None:
        assert result.status is ScoreStatus.NOT_APPLICABLE
        assert result.score is None
        return
    assert result.status is ScoreStatus.SCORED
    assert result.score is not None
    assert 0.0 <= result.score <= 1.0
    assert math.isclose(result.score, expected, abs_tol=1e-9)
    failed_required = tuple(
        i.check for i in items if i.required and states[i.check] is VerdictState.FAILED
    )
    assert result.required_failed == failed_required
    if failed_required:
        assert result.outcome is not OutcomeClass.SUCCESSFUL_COMPLETION


@PROPS
@given(scenarios(st.just(VerdictState.PASSED)))
def test_all_passed_scores_one(scenario: tuple[list[RubricItem], dict[str, VerdictState]]) -> None:
    result = _score(*scenario)
    assert result.score == 1.0
    assert result.outcome is OutcomeClass.SUCCESSFUL_COMPLETION


@PROPS
@given(scenarios(st.just(VerdictState.FAILED)))
def test_all_failed_scores_zero(scenario: tuple[list[RubricItem], dict[str, VerdictState]]) -> None:
    result = _score(*scenario)
    assert result.score == 0.0
    assert result.outcome is OutcomeClass.HARD_FAILURE


@PROPS
@given(
    scenarios(),
    st.floats(min_value=0.01, max_value=100.0, allow_nan=False, allow_infinity=False),
)
def test_scaling_every_weight_leaves_the_score_unchanged(
    scenario: tuple[list[RubricItem], dict[str, VerdictState]], factor: float
) -> None:
    items, states = scenario
    scaled = [RubricItem(i.check, i.weight * factor, i.required, i.not_applicable) for i in items]
    assume(sum(i.weight for i in scaled) > 0)
    original, rescaled = _score(items, states), _score(scaled, states)
    assert original.status is rescaled.status
    assert original.outcome == rescaled.outcome or original.score is None
    if original.score is None:
        assert rescaled.score is None
    else:
        assert rescaled.score is not None
        assert math.isclose(original.score, rescaled.score, abs_tol=2e-9)


@PROPS
@given(scenarios())
def test_excluded_not_applicable_equals_dropping_the_check(
    scenario: tuple[list[RubricItem], dict[str, VerdictState]],
) -> None:
    items, states = scenario
    dropped = [
        i
        for i in items
        if not (
            states[i.check] is VerdictState.NOT_APPLICABLE
            and i.not_applicable is NotApplicablePolicy.EXCLUDE
        )
    ]
    assume(dropped and sum(i.weight for i in dropped) > 0)
    full = _score(items, states)
    kept = _score(dropped, {i.check: states[i.check] for i in dropped})
    assert (full.status, full.score, full.outcome) == (kept.status, kept.score, kept.outcome)
    assert set(full.excluded) == {i.check for i in items} - {i.check for i in dropped}


@PROPS
@given(scenarios(st.sampled_from(list(VerdictState))))
def test_any_errored_check_means_no_score(
    scenario: tuple[list[RubricItem], dict[str, VerdictState]],
) -> None:
    items, states = scenario
    result = _score(items, states)
    errored_checks = tuple(c for c, s in states.items() if s is VerdictState.ERRORED)
    if errored_checks:
        assert result.status is ScoreStatus.ERRORED
        assert (result.score, result.outcome) == (None, None)
        assert result.errored == errored_checks
    else:
        assert result.status is not ScoreStatus.ERRORED


def _first_rule_by_hand(
    rules: tuple[OutcomeRule, ...], score: float, case: Case, required_failed: bool
) -> tuple[OutcomeClass, int]:
    """The outcome rules as the docs state them, read off the rules' fields."""
    for index, rule in enumerate(rules):
        if required_failed and rule.outcome is OutcomeClass.SUCCESSFUL_COMPLETION:
            continue
        if rule.min_score is not None and score < rule.min_score:
            continue
        if rule.max_score is not None and score > rule.max_score:
            continue
        if all(c.holds(case) for c in rule.state):
            return rule.outcome, index
    return OutcomeClass.PARTIAL_FAILURE, -1


final_states = st.fixed_dictionaries(
    {},
    optional={
        "success": st.one_of(st.booleans(), st.none(), st.integers(0, 1)),
        "stage": st.sampled_from(["failed", "done", "booking"]),
    },
)


@PROPS
@given(scenarios(), final_states)
def test_the_outcome_scoring_gives_is_the_first_matching_rule(
    scenario: tuple[list[RubricItem], dict[str, VerdictState]], final_state: dict[str, object]
) -> None:
    # the scoring path, classify and OutcomeRule.matches all apply the rules through one
    # function; this holds it to the rules' documented meaning on random cases
    items, states = scenario
    rubric = Rubric.build("prop", items)
    case = Case(id="c", final_state=final_state)
    result = score_rubric(rubric, {c: _verdict(s) for c, s in states.items()}, case)
    assume(result.score is not None)
    by_hand = _first_rule_by_hand(
        rubric.outcome_rules, result.score, case, bool(result.required_failed)
    )
    assert (result.outcome, result.rule) == by_hand
    assert (
        classify(rubric.outcome_rules, result.score, case, bool(result.required_failed))
        is by_hand[0]
    )
    matching = [
        i
        for i, r in enumerate(rubric.outcome_rules)
        if r.matches(result.score, case, bool(result.required_failed))
    ]
    assert (matching[0] if matching else -1) == by_hand[1]
