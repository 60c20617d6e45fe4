"""Comparing runs with repeats task by task: a flaky agent run twice is not a regression, a
real drop on some tasks is, and ``regression_detected`` always agrees with the verdict."""

from __future__ import annotations

import random

import pytest

from checkweigh.core import (
    CaseState,
    CompareThresholds,
    CompareVerdict,
    Comparison,
    Decided,
    VerdictState,
    compare_decided,
)
from checkweigh.core._repeats import stratified_permutation

CHECKS = ("correct_time", "clear_explanation")
TRIES = 5
TASKS = 40


def _rates(seed: int) -> list[float]:
    """Each task's chance of passing a try: many always pass, many are flaky."""
    rng = random.Random(seed)
    return [rng.choice([1.0, 1.0, 0.9, 0.8, 0.6, 0.5, 0.3]) for _ in range(TASKS)]


def _run(rates: list[float], seed: int, tries: int = TRIES) -> list[Decided]:
    """One run of an agent that passes task i's tries with chance rates[i]."""
    rng = random.Random(seed)
    rows = []
    for i, rate in enumerate(rates):
        for repeat in range(tries):
            ok = rng.random() < rate
            state = CaseState.PASSED if ok else CaseState.FAILED
            verdict = VerdictState.PASSED if ok else VerdictState.FAILED
            rows.append(
                Decided(
                    f"task-{i:02d}",
                    repeat,
                    i,
                    state,
                    100.0 if ok else 40.0,
                    800.0 + rng.random() * 100,
                    CHECKS,
                    (verdict, VerdictState.PASSED),
                )
            )
    return rows


def _compare(base: list[Decided], candidate: list[Decided], **kw: float) -> Comparison:
    return compare_decided(base, candidate, lambda rows: [], thresholds=CompareThresholds(**kw))


def _consistent(cmp: Comparison) -> None:
    assert cmp.per_task
    assert cmp.regression_detected is (cmp.verdict is CompareVerdict.REGRESSION)
    assert cmp.regressions == cmp.improvements == []  # tries are not paired by number


def test_the_same_flaky_agent_run_twice_is_not_a_regression() -> None:
    rates = _rates(7)
    verdicts = []
    for seed in range(20):  # twenty pairs of runs of one agent: no real change in any
        cmp = _compare(_run(rates, 1000 + seed), _run(rates, 2000 + seed))
        _consistent(cmp)
        verdicts.append(cmp.verdict)
        rate = cmp.suite[0]
        assert rate.metric == "mean task pass rate (%)"
        assert rate.test.startswith(
            f"permutation of each task's tries between the runs, over {TASKS} tasks"
        )
        # flaky tasks move both ways by chance: listed, by what they count, never as regressions
        assert any(c.change < 0 for c in cmp.tasks)
        assert all(c.base_tries == c.candidate_tries == TRIES for c in cmp.tasks)
    # pairing try i with try i would call dozens of flips "regressions"; task by task, a
    # false alarm is as rare as alpha says (at most 2 of 20 at 0.05)
    assert verdicts.count(CompareVerdict.REGRESSION) <= 2
    assert verdicts.count(CompareVerdict.NO_REGRESSION) >= 5  # some runs even came out better


def test_a_real_drop_on_a_set_of_tasks_is_a_regression() -> None:
    rates = _rates(7)
    worse = [r * 0.3 if i < 10 else r for i, r in enumerate(rates)]  # ten tasks break
    cmp = _compare(_run(rates, 11), _run(worse, 12))
    _consistent(cmp)
    assert cmp.verdict is CompareVerdict.REGRESSION
    assert cmp.regression_detected
    assert cmp.threshold_exceeded
    rate = cmp.suite[0]
    assert rate.change is not None
    assert rate.change < -10
    assert rate.p_value is not None
    assert rate.p_value < 0.01
    dropped = [c.case_id for c in cmp.tasks if c.change < 0]
    assert len(set(dropped) & {f"task-{i:02d}" for i in range(10)}) >= 8
    first = cmp.tasks[0]  # the largest drop first
    assert first.change == min(c.change for c in cmp.tasks)
    assert first.k == TRIES
    assert first.candidate_pass_hat_k <= first.base_pass_hat_k
    time = next(c for c in cmp.checks if c.check == "correct_time")
    assert time.p_value < 0.01
    explanation = next(c for c in cmp.checks if c.check == "clear_explanation")
    assert (explanation.change, explanation.p_value) == (0.0, 1.0)


def test_unequal_tries_are_compared_per_task() -> None:
    rates = _rates(3)
    cmp = _compare(_run(rates, 1, tries=3), _run(rates, 2, tries=8))
    _consistent(cmp)
    assert cmp.paired == TASKS
    assert all((c.base_tries, c.candidate_tries, c.k) == (3, 8, 3) for c in cmp.tasks)


def test_the_permutation_test_is_exact_where_it_can_be_checked() -> None:
    # one task, 4 of 4 passed -> 0 of 4: of the C(8,4) = 70 ways to split its 4 passes, 2
    # are as extreme (all in one run or all in the other): p = 2/70
    p = stratified_permutation([(4, 4, 4, 0)], random.Random(0), 20000)
    assert p == pytest.approx(2 / 70, abs=0.005)
    # tasks that always (or never) pass cannot move: no evidence at all
    assert stratified_permutation([(5, 5, 5, 5), (3, 0, 4, 0)], random.Random(0), 100) == 1.0
