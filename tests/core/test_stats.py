"""Wilson intervals for pass rates, Student t quantiles and the TCR's t-interval."""

from __future__ import annotations

import math
import statistics

import pytest

from checkweigh.core import mean_interval, t_quantile, wilson_interval


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        (8, 10, 0.4902, 0.9433),
        (5, 10, 0.2366, 0.7634),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (1, 1, 0.2065, 1.0),
        (45, 50, 0.7864, 0.9565),
    ],
)
def test_wilson_interval_known_values(successes: int, n: int, low: float, high: float) -> None:
    lo, hi = wilson_interval(successes, n)
    assert lo == pytest.approx(low, abs=5e-4)
    assert hi == pytest.approx(high, abs=5e-4)
    assert 0.0 <= lo <= successes / n + 1e-12
    assert successes / n <= hi <= 1.0


def test_wilson_interval_edges() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    # a narrower z gives a narrower interval
    assert wilson_interval(8, 10, z=1.0) == pytest.approx((0.6491, 0.8964), abs=5e-4)
    with pytest.raises(ValueError, match=r"successes must be within 0\.\.10, got 11"):
        wilson_interval(11, 10)
    with pytest.raises(ValueError, match="got -1"):
        wilson_interval(-1, 10)


@pytest.mark.parametrize(
    ("df", "expected"),
    [(1, 12.706205), (2, 4.302653), (5, 2.570582), (10, 2.228139), (30, 2.042272)],
)
def test_t_quantile_textbook_values(df: int, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=2e-3)


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [
        (0.95, 3, 2.353363),
        (0.975, 3, 3.182446),
        (0.995, 3, 5.840909),
        (0.975, 4, 2.776445),
        (0.995, 4, 4.604095),
        (0.995, 5, 4.032143),
        (0.95, 10, 1.812461),
        (0.995, 10, 3.169273),
    ],
)
def test_t_quantile_meets_its_documented_accuracy_for_small_df(
    p: float, df: int, expected: float
) -> None:
    # the docstring promises an error below 1e-3 for df >= 3 at the usual confidence levels
    assert t_quantile(p, df) == pytest.approx(expected, abs=1e-3)


def test_t_quantile_symmetry_and_limits() -> None:
    assert t_quantile(0.5, 7) == pytest.approx(0.0, abs=1e-12)
    assert t_quantile(0.025, 10) == pytest.approx(-t_quantile(0.975, 10))
    assert t_quantile(0.025, 1) == pytest.approx(-12.706205, abs=1e-4)
    # large df tends to the normal quantile
    assert t_quantile(0.975, 10_000) == pytest.approx(1.959964, abs=1e-3)
    with pytest.raises(ValueError, match="df must be >= 1"):
        t_quantile(0.975, 0)
    with pytest.raises(ValueError, match=r"p must be in \(0, 1\)"):
        t_quantile(1.0, 5)


def test_mean_interval_from_running_sums() -> None:
    scores = [1.0, 0.75, 0.9, 0.65, 1.0, 0.8, 0.9, 1.0, 0.75, 0.85]
    mean, low, high = mean_interval(len(scores), sum(scores), sum(s * s for s in scores))
    sd = statistics.stdev(scores)
    half = t_quantile(0.975, 9) * sd / math.sqrt(10)
    assert mean == pytest.approx(0.86)
    assert (low, high) == pytest.approx((0.86 - half, 0.86 + half))
    # textbook: t(0.975, 9) = 2.262
    assert half == pytest.approx(2.262 * sd / math.sqrt(10), abs=1e-3)


def test_mean_interval_edges() -> None:
    assert mean_interval(0, 0.0, 0.0) == (0.0, 0.0, 1.0)
    assert mean_interval(1, 0.75, 0.5625) == (0.75, 0.0, 1.0)
    # identical scores: no spread
    assert mean_interval(4, 3.0, 2.25) == pytest.approx((0.75, 0.75, 0.75))
    # a wide spread is clipped to [0, 1]
    mean, low, high = mean_interval(2, 1.0, 1.0)
    assert (mean, low, high) == (0.5, 0.0, 1.0)
    # a lower confidence gives a narrower interval
    scores = [0.6, 0.8, 0.7, 0.9]
    _, lo95, hi95 = mean_interval(4, sum(scores), sum(s * s for s in scores))
    _, lo80, hi80 = mean_interval(4, sum(scores), sum(s * s for s in scores), confidence=0.8)
    assert lo95 < lo80 < 0.75 < hi80 < hi95


def test_wilson_ends_exactly_at_the_edges() -> None:
    assert wilson_interval(5, 5)[1] == 1.0
    assert wilson_interval(0, 5)[0] == 0.0
    assert wilson_interval(1000, 1000)[1] == 1.0
