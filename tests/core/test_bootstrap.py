"""The paired bootstrap's cheaper ways to the same distribution, against drawing every
resample value by value (the reference), on realistic score and latency changes."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from checkweigh.core._stats import EXACT_PICKS, _binomial, _drawn, paired_bootstrap


def _reference(deltas: list[float], seed: int = 0) -> tuple[float, float, float]:
    """p-value, low, high of the value-by-value bootstrap (4000 resamples)."""
    mean = math.fsum(deltas) / len(deltas)
    b = _drawn(deltas, mean, random.Random(seed), 4000)
    return b.p_value, b.low, b.high


def _latencies(n: int, shift: float, seed: int) -> list[float]:
    """Paired latency changes (ms): noisy, right-skewed (a tenth of the calls hit a slow
    path), moved by ``shift``."""
    r = random.Random(seed)
    out = [r.gauss(0, 120) + (r.expovariate(1 / 250) if r.random() < 0.1 else 0) for _ in range(n)]
    mean = math.fsum(out) / n
    return [x - mean + shift for x in out]


def _scores(n: int, changed: int, seed: int) -> list[float]:
    """Paired case-score changes (points) of a 14-point rubric: most cases keep their score,
    ``changed`` move by a check or two, more often down."""
    r = random.Random(seed)
    out = [0.0] * n
    for i in r.sample(range(n), changed):
        out[i] = r.choice([-100 / 14, -200 / 14, -100 / 14, 100 / 14])
    return out


@pytest.mark.parametrize(
    ("deltas", "way"),
    [
        # many distinct changes: the Edgeworth expansion
        (_latencies(120, 28.0, 1), "computed"),
        (_latencies(150, 0.0, 2), "computed"),
        (_latencies(130, -30.0, 3), "computed"),
        # few cases moved: only those drawn
        (_scores(150, 20, 4), "drawn away from the mode"),
        (_scores(200, 8, 5), "drawn away from the mode"),
    ],
)
def test_the_cheaper_ways_agree_with_drawing_every_value(deltas: list[float], way: str) -> None:
    assert len(deltas) * 4000 > EXACT_PICKS  # not the value-by-value way
    fast = paired_bootstrap(deltas, random.Random(0))
    p, low, high = _reference(deltas)
    # the reference is itself a Monte Carlo estimate: its standard error is about
    # sqrt(p (1 - p) / 4000), under 0.008; the two differ by a few of those at most
    assert fast.p_value == pytest.approx(p, abs=0.03), way
    se = statistics.pstdev(deltas) / math.sqrt(len(deltas))
    assert fast.low == pytest.approx(low, abs=0.25 * se), way
    assert fast.high == pytest.approx(high, abs=0.25 * se), way
    assert fast.mean == pytest.approx(math.fsum(deltas) / len(deltas))


def test_a_small_comparison_is_drawn_value_by_value_as_before() -> None:
    deltas = _latencies(100, 20.0, 6)
    assert len(deltas) * 4000 <= EXACT_PICKS
    assert paired_bootstrap(deltas, random.Random(3)) == _drawn(
        deltas, math.fsum(deltas) / 100, random.Random(3), 4000
    )


def test_every_way_is_reproducible_from_its_seed() -> None:
    for deltas in (_latencies(5000, 5.0, 7), _scores(5000, 30, 8), _latencies(50, 5.0, 9)):
        a = paired_bootstrap(deltas, random.Random(11))
        assert paired_bootstrap(deltas, random.Random(11)) == a


def test_a_clear_latency_regression_on_10000_cases() -> None:
    deltas = _latencies(10_000, 40.0, 10)
    b = paired_bootstrap(deltas, random.Random(0))
    # computed, not drawn: no floor at 1 / 4001
    assert b.p_value < 1e-20
    assert b.low < 40.0 < b.high
    # right-skewed changes: the interval reaches further above the mean than below it
    assert b.high - b.mean > b.mean - b.low


def test_no_change_is_not_significant_on_10000_cases() -> None:
    b = paired_bootstrap(_latencies(10_000, 0.0, 12), random.Random(0))
    assert b.p_value == pytest.approx(1.0)
    assert b.low < 0.0 < b.high


@pytest.mark.parametrize(
    ("n", "p"),
    [(10_000, 0.004), (500, 0.2), (3500, 0.2)],  # the last by geometric jumps
)
def test_binomial_draws_have_the_binomials_mean_and_variance(n: int, p: float) -> None:
    rng = random.Random(13)
    draws = [_binomial(n, p, rng) for _ in range(1000)]
    assert all(0 <= k <= n for k in draws)
    sd = math.sqrt(n * p * (1 - p))
    assert statistics.fmean(draws) == pytest.approx(n * p, abs=4 * sd / math.sqrt(1000))
    assert statistics.pstdev(draws) == pytest.approx(sd, rel=0.12)


def test_changes_too_small_to_square_are_read_as_identical() -> None:
    deltas = [0.0] * 5000 + [1e-200] * 5000
    b = paired_bootstrap(deltas, random.Random(0))
    assert (b.low, b.high) == (b.mean, b.mean)
    assert b.p_value == 0.0
