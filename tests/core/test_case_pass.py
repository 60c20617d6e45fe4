"""Case pass/fail (expected outcomes first, else the score against pass_threshold; required
checks and errors) and the run's metrics and cases dimensions."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkweigh.core import (
    Case,
    CaseResult,
    CaseState,
    CaseTally,
    NotApplicablePolicy,
    PassMode,
    PassPolicy,
    Rubric,
    RubricItem,
    RunAggregator,
    RunSummary,
    Verdict,
    errored,
    failed,
    not_applicable,
    passed,
    score_rubric,
)

COMPLETION = {
    "correct_participants": 0.25,
    "correct_time": 0.25,
    "correct_duration": 0.10,
    "no_double_booking": 0.20,
    "clear_confirmation": 0.20,
}


@pytest.fixture
def rubric(make_rubric: Callable[..., Rubric]) -> Rubric:
    return make_rubric("completion", COMPLETION, required=("correct_time",))


def _result(
    rubric: Rubric, case: Case, verdicts: dict[str, Verdict], repeat: int = 0
) -> CaseResult:
    results = {rubric.name: score_rubric(rubric, verdicts, case)}
    return CaseResult(case.id, repeat, verdicts, results)


def _verdicts(**states: Verdict) -> dict[str, Verdict]:
    v: dict[str, Verdict] = dict.fromkeys(COMPLETION, passed())
    v.update(states)
    return v


def test_without_expected_outcomes_the_score_decides(rubric: Rubric, booked_case: Case) -> None:
    policy = PassPolicy()
    # 0.80 >= 75: passes
    r = _result(rubric, booked_case, _verdicts(no_double_booking=failed("two bookings at 10")))
    verdict = policy.decide(r)
    assert verdict.state is CaseState.PASSED
    assert verdict.score_pct == pytest.approx(80.0)
    assert verdict.reason == "score 80.0 >= pass threshold 75"
    # 0.60 < 75: fails, naming the failed checks
    r = _result(
        rubric,
        booked_case,
        _verdicts(
            no_double_booking=failed("two bookings at 10"), clear_confirmation=failed("no reply")
        ),
    )
    verdict = policy.decide(r)
    assert verdict.state is CaseState.FAILED
    assert verdict.reason == "score 60.0 < pass threshold 75"
    assert verdict.failed == (
        "no_double_booking: two bookings at 10",
        "clear_confirmation: no reply",
    )
    # a stricter threshold fails the 0.80 case
    strict = PassPolicy(pass_threshold=90)
    r = _result(rubric, booked_case, _verdicts(no_double_booking=failed("two bookings")))
    assert strict.decide(r).state is CaseState.FAILED


def test_a_failed_required_check_fails_the_case_whatever_the_score(
    rubric: Rubric, booked_case: Case
) -> None:
    r = _result(rubric, booked_case, _verdicts(correct_time=failed("booked 11:00, expected 10:00")))
    verdict = PassPolicy(pass_threshold=50).decide(r)  # 0.75 would pass on score
    assert verdict.state is CaseState.FAILED
    assert verdict.reason == "required check failed: correct_time: booked 11:00, expected 10:00"


def test_expected_outcomes_decide_when_they_apply(rubric: Rubric, booked_case: Case) -> None:
    policy = PassPolicy(outcome_checks=("outcomes",))
    low = _verdicts(no_double_booking=failed("x"), clear_confirmation=failed("y"))  # 0.60
    # all expected outcomes hold: passes although the score is below the threshold
    r = _result(rubric, booked_case, {**low, "outcomes": passed("3 of 3 outcomes hold")})
    verdict = policy.decide(r)
    assert verdict.state is CaseState.PASSED
    assert verdict.reason == "every expected outcome passed"
    assert verdict.score_pct == pytest.approx(60.0)  # still recorded
    # one fails: the case fails although the score is perfect
    r = _result(
        rubric, booked_case, {**_verdicts(), "outcomes": failed("Bob was not invited (2 of 3)")}
    )
    verdict = policy.decide(r)
    assert verdict.state is CaseState.FAILED
    assert verdict.failed == ("outcomes: Bob was not invited (2 of 3)",)
    # not applicable (the case lists no outcomes): back to the score
    r = _result(rubric, booked_case, {**low, "outcomes": not_applicable("no expected outcomes")})
    assert policy.decide(r).reason == "score 60.0 < pass threshold 75"


def test_errors_are_never_a_pass(rubric: Rubric, booked_case: Case) -> None:
    policy = PassPolicy(outcome_checks=("outcomes",))
    r = _result(rubric, booked_case, _verdicts(clear_confirmation=errored("TimeoutError: judge")))
    verdict = policy.decide(r)
    assert verdict.state is CaseState.ERRORED
    assert "clear_confirmation: TimeoutError: judge" in verdict.reason
    r = _result(rubric, booked_case, {**_verdicts(), "outcomes": errored("malformed checklist")})
    assert policy.decide(r).state is CaseState.ERRORED
    agent = CaseResult("c9", 0, {}, {}, None, "RuntimeError: tool down")
    assert policy.decide(agent) == (
        CaseState.ERRORED,
        None,
        "agent error: RuntimeError: tool down",
        (),
    )


def test_a_case_no_rubric_scored_fails(
    booked_case: Case, make_rubric: Callable[..., Rubric]
) -> None:
    guarded = make_rubric("recovery", {"told_user": 1.0}, when=())
    r = CaseResult(
        booked_case.id,
        0,
        {"told_user": not_applicable("no conflict")},
        {"recovery": score_rubric(guarded, {"told_user": not_applicable("x")}, booked_case)},
    )
    verdict = PassPolicy().decide(r)
    assert verdict.state is CaseState.FAILED
    assert verdict.score_pct is None


def test_the_case_score_is_the_mean_of_the_chosen_rubrics(
    booked_case: Case, make_rubric: Callable[..., Rubric]
) -> None:
    a = make_rubric("a", {"x": 0.5, "y": 0.5})
    b = make_rubric("b", {"z": 1.0})
    verdicts = {"x": passed(), "y": failed("no"), "z": passed()}
    r = CaseResult(
        "c", 0, verdicts, {n.name: score_rubric(n, verdicts, booked_case) for n in (a, b)}
    )
    assert PassPolicy().score_pct(r) == pytest.approx(75.0)
    assert PassPolicy(score_rubrics=("a",)).score_pct(r) == pytest.approx(50.0)


def _summary(rubric: Rubric, results: list[CaseResult], policy: PassPolicy) -> RunSummary:
    return RunAggregator([rubric], policy=policy).add_all(results).summary()


def test_the_two_dimensions(rubric: Rubric, booked_case: Case) -> None:
    results = [
        _result(rubric, booked_case, _verdicts()),  # 100, pass
        _result(rubric, booked_case, _verdicts(no_double_booking=failed("x"))),  # 80, pass
        _result(rubric, booked_case, _verdicts(correct_time=failed("11:00"))),  # 75, fail (req)
        _result(rubric, booked_case, _verdicts(clear_confirmation=errored("boom"))),  # errored
    ]
    g = _summary(rubric, results, PassPolicy()).case_gates
    assert g is not None
    # metrics: the mean of the cases that produced a verdict (the errored one did not)
    assert g.weighted_metrics_score_pct == pytest.approx((100 + 80 + 75) / 3)
    assert g.metrics_passed  # 85 >= 80
    # cases: 2 of 4 executions passed; the errored one counts as not passed
    assert g.cases_pass_rate_pct == pytest.approx(50.0)
    assert (g.passed, g.failed, g.errored, g.executions) == (2, 1, 1, 4)
    assert not g.cases_passed  # default threshold 100%
    assert [(f.state, f.case_id) for f in g.failing] == [
        ("failed", booked_case.id),
        ("errored", booked_case.id),
    ]
    summary = _summary(rubric, results, PassPolicy())
    assert summary.gates_passed is False
    lenient = _summary(rubric, results, PassPolicy(cases_pass_threshold=50))
    assert lenient.gates_passed is True
    strict_metrics = _summary(
        rubric, results, PassPolicy(metrics_pass_threshold=90, cases_pass_threshold=0)
    )
    assert strict_metrics.case_gates is not None
    assert not strict_metrics.case_gates.metrics_passed
    assert strict_metrics.gates_passed is False
    # the summary keeps its dimensions through JSON (as stored)
    again = RunSummary.model_validate_json(summary.model_dump_json())
    assert again.case_gates == summary.case_gates


def test_no_verdict_at_all_fails_the_metrics_dimension(rubric: Rubric) -> None:
    tally = CaseTally(PassPolicy(cases_pass_threshold=0))
    tally.add(CaseResult("c1", 0, {}, {}, None, "RuntimeError: down"))
    g = tally.gates()
    assert g.weighted_metrics_score_pct is None
    assert not g.metrics_passed
    assert g.cases_passed  # 0% >= 0%


ALL = PassPolicy(pass_policy=PassMode.ALL_CHECKS)


def test_all_checks_passes_only_when_every_applicable_check_passes(
    rubric: Rubric, booked_case: Case
) -> None:
    # 0.80 passes on score under the threshold policy; under all_checks one failure fails it
    r = _result(rubric, booked_case, _verdicts(no_double_booking=failed("two bookings at 10")))
    assert PassPolicy().decide(r).state is CaseState.PASSED
    assert ALL.decide(r) == (
        CaseState.FAILED,
        pytest.approx(80.0),
        "1 check failed: no_double_booking: two bookings at 10",
        ("no_double_booking: two bookings at 10",),
    )
    # every failure is named once, in rubric order, required or not
    r = _result(
        rubric,
        booked_case,
        _verdicts(correct_time=failed("11:00"), clear_confirmation=failed("no reply")),
    )
    assert ALL.decide(r).reason == (
        "2 checks failed: correct_time: 11:00; clear_confirmation: no reply"
    )
    # not applicable is fine: a perfect case with an excluded check passes
    r = _result(rubric, booked_case, _verdicts(correct_duration=not_applicable("no duration")))
    verdict = ALL.decide(r)
    assert verdict.state is CaseState.PASSED
    assert verdict.reason == "every applicable check passed (4 passed, 1 not applicable)"
    # an errored check stays errored, never a pass nor a failure
    r = _result(rubric, booked_case, _verdicts(clear_confirmation=errored("TimeoutError: judge")))
    assert ALL.decide(r).state is CaseState.ERRORED


def test_all_checks_reads_the_named_rubrics_and_the_expected_outcomes(
    booked_case: Case, make_rubric: Callable[..., Rubric]
) -> None:
    task = make_rubric("task", {"x": 0.5, "y": 0.5})
    style = make_rubric("style", {"z": 1.0})
    verdicts = {"x": passed(), "y": passed(), "z": failed("rambles")}
    r = CaseResult(
        "c", 0, verdicts, {n.name: score_rubric(n, verdicts, booked_case) for n in (task, style)}
    )
    assert ALL.decide(r).state is CaseState.FAILED  # every rubric: style's failure counts
    only_task = PassPolicy(score_rubrics=("task",), pass_policy=PassMode.ALL_CHECKS)
    assert only_task.decide(r).reason == "every applicable check passed (2 passed)"
    # an expected outcome that applies must pass too
    policy = PassPolicy(
        outcome_checks=("outcomes",), score_rubrics=("task",), pass_policy=PassMode.ALL_CHECKS
    )
    bad = r._replace(verdicts={**verdicts, "outcomes": failed("Bob was not invited")})
    assert policy.decide(bad).reason == "1 check failed: outcomes: Bob was not invited"
    good = r._replace(verdicts={**verdicts, "outcomes": passed("3 of 3 hold")})
    assert policy.decide(good).reason == "every applicable check passed (3 passed)"
    # nothing applied at all: not a vacuous pass
    guarded = make_rubric("recovery", {"told_user": 1.0})
    na = {"told_user": not_applicable("no conflict")}
    empty = CaseResult("c", 0, na, {"recovery": score_rubric(guarded, na, booked_case)})
    assert ALL.decide(empty) == (
        CaseState.FAILED,
        None,
        "no check applied to this case and no expected outcome",
        (),
    )


def test_each_policy_says_when_a_case_passes() -> None:
    assert PassPolicy().describe() == "score >= 75 and no required check failed"
    assert PassPolicy(pass_threshold=80, score_rubrics=("task",)).describe() == (
        "score of task >= 80 and no required check failed"
    )
    assert PassPolicy(outcome_checks=("outcomes",)).describe() == (
        "every expected outcome that applies passes (else score >= 75 and no required check failed)"
    )
    assert ALL.describe() == "every applicable check passes"
    assert (
        PassPolicy(
            outcome_checks=("o",), score_rubrics=("a", "b"), pass_policy=PassMode.ALL_CHECKS
        ).describe()
        == "every applicable check passes (rubrics a, b), expected outcomes included"
    )


def test_the_run_records_its_policy_and_the_mean_score_interval(
    rubric: Rubric, booked_case: Case
) -> None:
    results = [
        _result(rubric, booked_case, _verdicts()),  # 100
        _result(rubric, booked_case, _verdicts(no_double_booking=failed("x"))),  # 80
        _result(rubric, booked_case, _verdicts(correct_duration=failed("45 min"))),  # 90
    ]
    g = _summary(rubric, results, ALL).case_gates
    assert g is not None
    assert (g.passed, g.failed, g.pass_policy) == (1, 2, "all_checks")
    assert g.case_pass_rule == "every applicable check passes"
    assert g.weighted_metrics_score_pct == pytest.approx(90.0)
    # t-interval of (100, 80, 90): 90 +- 4.303 * 10 / sqrt(3), clipped to 100
    assert g.weighted_metrics_score_low_pct == pytest.approx(90 - 4.3027 * 10 / 3**0.5, abs=1e-2)
    assert g.weighted_metrics_score_high_pct == pytest.approx(100.0)


def test_policy_snapshot_round_trip_and_validation() -> None:
    policy = PassPolicy(60, 70, 90, ("outcomes",), ("completion",))
    assert PassPolicy.from_snapshot(policy.snapshot()) == policy
    strict = PassPolicy(pass_policy=PassMode.ALL_CHECKS)
    assert PassPolicy.from_snapshot(strict.snapshot()) == strict
    assert strict.with_thresholds(cases_pass_threshold=50).pass_policy is PassMode.ALL_CHECKS
    # runs stored before the policy existed decided by threshold
    assert PassPolicy.from_snapshot({"pass_threshold": 60.0}).pass_policy is PassMode.THRESHOLD
    assert PassPolicy.from_snapshot(None) == PassPolicy()
    assert policy.with_thresholds(cases_pass_threshold=100).cases_pass_threshold == 100
    assert policy.with_thresholds(cases_pass_threshold=100).pass_threshold == 60
    with pytest.raises(ValueError, match="cases_pass_threshold must be a number from 0 to 100"):
        PassPolicy(cases_pass_threshold=101)
    with pytest.raises(ValueError, match="pass_threshold"):
        PassPolicy(pass_threshold=float("nan"))


_STATES = st.sampled_from([passed("ok"), failed("no"), not_applicable("n/a"), errored("boom")])


@given(
    checks=st.fixed_dictionaries({name: _STATES for name in COMPLETION}),
    outcome=st.one_of(st.none(), _STATES),
    threshold=st.sampled_from([0.0, 50.0, 75.0, 80.0, 100.0]),
    agent_error=st.booleans(),
    mode=st.sampled_from(PassMode),
    zero_weight=st.booleans(),
)
def test_the_fast_path_agrees_with_decide(
    checks: dict[str, Verdict],
    outcome: Verdict | None,
    threshold: float,
    agent_error: bool,
    mode: PassMode,
    zero_weight: bool,
) -> None:
    rubric = Rubric.build(
        "completion",
        [
            # a zero weight: a check whose failure leaves the score at 100 (all_checks sees it)
            RubricItem(
                c,
                0.0 if zero_weight and c == "correct_duration" else w,
                c == "correct_time",
                NotApplicablePolicy.PASS
                if c == "clear_confirmation"
                else NotApplicablePolicy.EXCLUDE,
            )
            for c, w in COMPLETION.items()
        ],
    )
    case = Case.model_validate({"id": "c1", "input": "book a meeting"})
    verdicts = dict(checks)
    if outcome is not None:
        verdicts["outcomes"] = outcome
    result = CaseResult(
        case.id,
        0,
        verdicts,
        {"completion": score_rubric(rubric, checks, case)},
        None,
        "RuntimeError: down" if agent_error else None,
    )
    policy = PassPolicy(pass_threshold=threshold, outcome_checks=("outcomes",), pass_policy=mode)
    verdict = policy.decide(result)
    state, score = policy.state(result)
    assert (state, score) == (verdict.state, verdict.score_pct)
