"""The unpaired comparison of two monitor windows: Fisher's exact test against every table
summed by brute force, Welch's t-test against known values, the rate of false regressions at
alpha when nothing changed, and a whole comparison of two windows of traces."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkweigh.core import (
    CaseResult,
    CompareThresholds,
    CompareVerdict,
    EvaluationResult,
    PassPolicy,
    ScoreStatus,
    Verdict,
    compare_unpaired,
    decided,
    failed,
    fisher_exact,
    passed,
    welch_test,
)

POLICY = PassPolicy()


def _brute_fisher(a: int, n1: int, c: int, n2: int) -> float:
    """Every table with the same margins, in exact fractions; those no likelier than the
    observed one summed (with the usual relative slack for ties)."""
    marked, total = a + c, n1 + n2
    pmf = {
        i: Fraction(math.comb(marked, i) * math.comb(total - marked, n1 - i), math.comb(total, n1))
        for i in range(max(0, n1 - (total - marked)), min(n1, marked) + 1)
    }
    bound = pmf[a] * (1 + Fraction(1, 10**7))
    return float(sum((p for p in pmf.values() if p <= bound), Fraction(0)))


@st.composite
def _tables(draw: st.DrawFn) -> tuple[int, int, int, int]:
    n1 = draw(st.integers(0, 40))
    n2 = draw(st.integers(0, 40))
    return n1, draw(st.integers(0, n1)), n2, draw(st.integers(0, n2))


@settings(max_examples=300, deadline=None)
@given(_tables())
def test_fisher_matches_every_table_summed(table: tuple[int, int, int, int]) -> None:
    n1, a, n2, c = table
    assert fisher_exact(a, n1, c, n2) == pytest.approx(_brute_fisher(a, n1, c, n2), abs=1e-9)
    # which sample is called the base does not matter
    assert fisher_exact(c, n2, a, n1) == pytest.approx(fisher_exact(a, n1, c, n2), abs=1e-12)


def test_fisher_known_values_and_large_windows() -> None:
    # the classic table [[1, 9], [11, 3]]: p = 0.002759 (two-sided)
    assert fisher_exact(1, 10, 11, 14) == pytest.approx(0.0027594562, rel=1e-6)
    assert fisher_exact(3, 4, 1, 4) == pytest.approx(34 / 70)  # (1 + 16 + 16 + 1) / 70
    assert fisher_exact(5, 10, 5, 10) == 1.0
    assert fisher_exact(0, 0, 3, 7) == 1.0  # an empty window: nothing to test
    # 100,000 traces a window: no underflow, no table-by-table sum
    assert 0.0 < fisher_exact(90_000, 100_000, 89_500, 100_000) < 1e-3
    assert fisher_exact(90_000, 100_000, 90_010, 100_000) > 0.5
    with pytest.raises(ValueError, match="within their samples"):
        fisher_exact(5, 4, 0, 3)


def test_welch_against_known_values() -> None:
    # equal sizes and variances: df = 4, t = 3.674; p = 0.021312 (two-sided)
    w = welch_test([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert (w.change, w.df) == (3.0, 4)
    assert w.p_value == pytest.approx(0.0213116411, rel=1e-6)
    assert w.low < 3.0 < w.high
    # t_0.975 with 4 df is 2.776445; the standard error sqrt(2/3)
    assert w.high - 3.0 == pytest.approx(2.776445105 * math.sqrt(2 / 3), rel=1e-6)
    # unequal variances: Welch-Satterthwaite df = 6.78, rounded down
    uneven = welch_test([1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 4.0, 6.0, 8.0, 10.0, 12.0])
    assert uneven.df == 6
    assert welch_test([2.0, 4.0, 6.0, 8.0, 10.0, 12.0], [1.0, 2.0, 3.0, 4.0, 5.0]).p_value == (
        uneven.p_value
    )
    assert welch_test([80.0] * 5, [80.0] * 9).p_value == 1.0  # constant and equal
    assert welch_test([80.0] * 5, [60.0] * 9).p_value == 0.0  # constant and different
    assert welch_test([80.0], [60.0, 70.0]).p_value is None  # no variance to weigh
    with pytest.raises(ValueError, match="need a value"):
        welch_test([], [1.0])


def test_false_regressions_when_nothing_changed_stay_under_alpha() -> None:
    """Windows drawn from one process: the comparison calls at most alpha of them a
    regression (the rate of a drop exceeding 0 points that Fisher finds significant)."""
    rng = random.Random(20261202)
    alpha = 0.05
    thresholds = CompareThresholds(alpha=alpha)
    trials = 1500
    fisher_rejects = welch_rejects = regressions = 0
    for _ in range(trials):
        n1, n2 = rng.randint(30, 80), rng.randint(30, 80)
        base = [_row(f"b{i}", rng.random() < 0.8, rng.gauss(70, 15), rng) for i in range(n1)]
        cand = [_row(f"c{i}", rng.random() < 0.8, rng.gauss(70, 15), rng) for i in range(n2)]
        cmp = compare_unpaired(
            (decided(r, POLICY) for r in base),
            (decided(r, POLICY) for r in cand),
            thresholds=thresholds,
        )
        rate, score = cmp.suite[0], cmp.suite[1]
        assert rate.p_value is not None
        assert score.p_value is not None
        fisher_rejects += rate.p_value < alpha
        welch_rejects += score.p_value < alpha
        regressions += cmp.verdict is CompareVerdict.REGRESSION
    assert fisher_rejects / trials <= alpha
    assert welch_rejects / trials <= alpha
    assert regressions / trials <= alpha
    assert fisher_rejects > 0  # the test can reject: the rate is not vacuously 0


def _row(case_id: str, check_ok: bool, score: float, rng: random.Random) -> CaseResult:
    """A trace whose rubric scores ``score`` points (clipped to 0..100) and whose one check
    ``availability_checked`` passed or failed."""
    s = min(1.0, max(0.0, score / 100.0))
    return _result(case_id, s, ms=rng.uniform(800, 1200), checks={"availability_checked": check_ok})


def _result(
    case_id: str, score: float, *, ms: float = 1000.0, checks: dict[str, bool] | None = None
) -> CaseResult:
    verdicts: dict[str, Verdict] = {
        name: passed() if ok else failed(f"{name} did not hold")
        for name, ok in (checks or {}).items()
    }
    rubric = EvaluationResult("completion", ScoreStatus.SCORED, score, None, verdicts)
    return CaseResult(case_id, 0, verdicts, {"completion": rubric}, ms)


def test_a_window_where_a_check_stopped_holding_is_a_regression() -> None:
    # last week: 40 traces, every one checked availability before booking; this hour: 30
    # traces, 12 of which booked without checking (and scored lower for it)
    base = [
        _result(
            f"t-{i:03d}", 0.9, ms=1000 + i, checks={"availability_checked": True, "polite": True}
        )
        for i in range(40)
    ]
    cand = [
        _result(
            f"u-{i:03d}",
            0.4 if i < 12 else 0.9,
            ms=1010 + i,
            checks={"availability_checked": i >= 12, "polite": True},
        )
        for i in range(30)
    ]
    cmp = compare_unpaired((decided(r, POLICY) for r in base), (decided(r, POLICY) for r in cand))
    assert cmp.unpaired
    assert (cmp.paired, cmp.only_base, cmp.only_candidate) == (0, 40, 30)
    assert (cmp.regressions, cmp.improvements, cmp.unchanged) == ([], [], 0)
    rate, score, latency = cmp.suite
    assert (rate.base, rate.candidate) == (100.0, 60.0)
    assert rate.change == pytest.approx(-40.0)
    assert rate.p_value == pytest.approx(_brute_fisher(40, 40, 18, 30), rel=1e-9)
    assert rate.test == "Fisher's exact (unpaired: 40 base, 30 candidate traces)"
    assert rate.exceeded
    assert score.change == pytest.approx(-20.0)
    assert score.p_value is not None
    assert score.p_value < 0.001
    assert score.test.startswith("Welch's t-test (unpaired: 40 base, 30 candidate traces)")
    assert not latency.exceeded  # 10 ms slower: under the 50 ms of jitter
    assert cmp.verdict is CompareVerdict.REGRESSION
    assert cmp.regression_detected
    assert cmp.significant
    drop, same = cmp.checks
    assert (drop.check, drop.base_rate, drop.candidate_rate) == ("availability_checked", 1.0, 0.6)
    assert (drop.worse, drop.better) == (0, 0)  # no flips without pairs
    assert drop.p_value == rate.p_value
    assert (same.check, same.change, same.p_value) == ("polite", 0.0, 1.0)


def test_equal_windows_are_no_regression_and_a_check_in_one_window_only() -> None:
    base = [_result(f"t-{i}", 0.9, checks={"grounded": True}) for i in range(20)]
    cand = [_result(f"u-{i}", 0.9, checks={"tone": True}) for i in range(25)]
    cmp = compare_unpaired((decided(r, POLICY) for r in base), (decided(r, POLICY) for r in cand))
    assert cmp.verdict is CompareVerdict.NO_REGRESSION
    assert [s.p_value for s in cmp.suite] == [1.0, 1.0, 1.0]
    by_name = {d.check: d for d in cmp.checks}
    assert (by_name["grounded"].base_rate, by_name["grounded"].candidate_rate) == (1.0, None)
    assert (by_name["tone"].base_rate, by_name["tone"].candidate_rate) == (None, 1.0)
    assert by_name["tone"].change is None


def test_an_empty_window_has_no_test() -> None:
    cand = [_result(f"u-{i}", 0.9) for i in range(5)]
    cmp = compare_unpaired([], (decided(r, POLICY) for r in cand))
    assert (cmp.only_base, cmp.only_candidate) == (0, 5)
    assert all(s.p_value is None for s in cmp.suite)
    assert cmp.verdict is CompareVerdict.NO_REGRESSION
