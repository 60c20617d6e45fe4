"""Interval estimates used by the aggregates: Wilson for rates, Student t for mean scores."""

from __future__ import annotations

import math
import random
from collections import Counter
from statistics import NormalDist
from typing import NamedTuple

_Z975 = NormalDist().inv_cdf(0.975)


def wilson_interval(successes: int, n: int, z: float = _Z975) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion (95% by default).

    Returns (0.0, 1.0) when ``n`` is 0: nothing is known.
    """
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be within 0..{n}, got {successes}")
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = (z / denom) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # at the edges the interval ends exactly at 0 or 1 (floating point lands just inside)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)


def t_cdf(t: float, df: int) -> float:
    """P(T <= t) for Student's t with integer ``df``, by the exact finite trigonometric series."""
    if df < 1:
        raise ValueError("df must be >= 1")
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    s = math.sin(theta)
    if df % 2 == 1:
        total, term = 0.0, 1.0
        for k in range(1, (df - 1) // 2 + 1):
            if k > 1:
                term *= c2 * (2 * k - 2) / (2 * k - 1)
            else:
                term = 1.0
            total += term
        inner = math.cos(theta) * s * total if df > 1 else 0.0
        a = (2.0 / math.pi) * (theta + inner)
    else:
        total, term = 1.0, 1.0
        for k in range(1, (df - 2) // 2 + 1):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        a = s * total
    return 0.5 * (1.0 + a)


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom.

    Exact for df 1 and 2; otherwise the exact CDF (:func:`t_cdf`) is inverted by bisection
    (to 1e-12) for df up to 1000, and a Cornish-Fisher expansion is used beyond, where it
    agrees with the exact value to better than 1e-6.
    """
    if df < 1:
        raise ValueError("df must be >= 1")
    if not 0.0 < p < 1.0:
        raise ValueError("p must be in (0, 1)")
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    if df <= 1000:
        lo, hi = -1.0, 1.0
        while t_cdf(lo, df) > p:
            lo *= 2
        while t_cdf(hi, df) < p:
            hi *= 2
        while hi - lo > 1e-12 * max(1.0, abs(hi)):
            mid = 0.5 * (lo + hi)
            if t_cdf(mid, df) < p:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)
    z = NormalDist().inv_cdf(p)
    v = float(df)
    z3, z5, z7, z9 = z**3, z**5, z**7, z**9
    return (
        z
        + (z3 + z) / (4 * v)
        + (5 * z5 + 16 * z3 + 3 * z) / (96 * v**2)
        + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v**3)
        + (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * v**4)
    )


def mean_interval(
    n: int, total: float, total_sq: float, confidence: float = 0.95
) -> tuple[float, float, float]:
    """Mean and t-interval from running sums, clipped to [0, 1] (scores live there).

    Returns (mean, low, high); with one observation the interval is the whole [0, 1].
    """
    if n <= 0:
        return (0.0, 0.0, 1.0)
    mean = total / n
    if n == 1:
        return (mean, 0.0, 1.0)
    var = max(0.0, (total_sq - n * mean * mean) / (n - 1))
    half = t_quantile(0.5 + confidence / 2, n - 1) * math.sqrt(var / n)
    return (mean, max(0.0, mean - half), min(1.0, mean + half))


def mcnemar_exact(worse: int, better: int) -> float:
    """Two-sided exact McNemar p-value for paired pass/fail flips.

    ``worse`` pairs went pass -> fail, ``better`` fail -> pass; under no change each flip is a
    fair coin, so p = 2 P(X <= min(worse, better)) for X ~ Binomial(worse + better, 1/2),
    capped at 1. No flips at all give 1.0.
    """
    if worse < 0 or better < 0:
        raise ValueError("flip counts must be >= 0")
    n = worse + better
    if n == 0:
        return 1.0
    k = min(worse, better)
    log_half_n = n * math.log(0.5)
    tail = math.fsum(
        math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + log_half_n)
        for i in range(k + 1)
    )
    return min(1.0, 2.0 * tail)


class Bootstrap(NamedTuple):
    """A paired bootstrap of mean differences."""

    mean: float
    """The observed mean difference."""
    low: float
    """Lower end of its 95% percentile interval."""
    high: float
    """Upper end of its 95% percentile interval."""
    p_value: float
    """Two-sided p-value of "no difference"."""


EXACT_PICKS = 400_000
"""Resampled values (resamples x deltas) the bootstrap draws one by one at most: about 0.1 s of
Python. Past it, see :func:`paired_bootstrap`."""


def paired_bootstrap(deltas: list[float], rng: random.Random, resamples: int = 4000) -> Bootstrap:
    """The mean of paired ``deltas`` with its 95% interval and a two-sided p-value.

    The p-value resamples the deltas re-centred on 0 (the null of no change) and counts how
    often a resampled mean lies at least as far from 0 as the observed one, with the usual +1
    correction so that it is never 0. No deltas, or identical ones, need no resampling.

    The same bootstrap distribution is reached three ways, by cost (a 10,000-case comparison
    must answer in well under a second, in pure Python):

    - ``resamples x len(deltas)`` within :data:`EXACT_PICKS`: every resample drawn value by
      value, as above.
    - otherwise, when few deltas differ from the most common one (a run where most cases kept
      their score): only those are drawn. A resample takes ``K ~ Binomial(n, m/n)`` of the
      ``m`` differing deltas, uniformly, and the common value for the rest: the same resampled
      means in distribution, from another stream of the seeded generator.
    - otherwise (many distinct deltas and many cases): the bootstrap distribution of the mean
      is computed rather than simulated, from its Edgeworth expansion (Hall, *The Bootstrap and
      Edgeworth Expansion*, 1992). The two-sided p-value is ``2 (1 - Phi(|mean| / se))`` with
      ``se`` the plug-in standard error (the skewness terms of the two tails cancel: the error
      is O(1/n)), the interval is the Cornish-Fisher 2.5% and 97.5% quantiles (skewness
      included). With at least :data:`EXACT_PICKS` / ``resamples`` deltas away from the mode,
      that error is below the Monte Carlo error of ``resamples`` draws (about 0.0035 at
      p = 0.05 for 4000), and it has no floor at ``1 / (resamples + 1)``.
    """
    n = len(deltas)
    if n == 0:
        return Bootstrap(0.0, 0.0, 0.0, 1.0)
    mean = math.fsum(deltas) / n
    if all(d == deltas[0] for d in deltas):
        # every pair moved by the same amount: no sampling noise to weigh it against
        return Bootstrap(mean, mean, mean, 1.0 if mean == 0 else 0.0)
    if n * resamples <= EXACT_PICKS:
        return _drawn(deltas, mean, rng, resamples)
    mode, _ = Counter(deltas).most_common(1)[0]
    away = [d - mode for d in deltas if d != mode]
    if len(away) * resamples <= EXACT_PICKS:
        return _drawn_away(n, mode, away, mean, rng, resamples)
    return _expanded(deltas, mean)


def _drawn(deltas: list[float], mean: float, rng: random.Random, resamples: int) -> Bootstrap:
    n = len(deltas)
    centred = [d - mean for d in deltas]
    threshold = abs(mean) - 1e-12
    extreme = 0
    means: list[float] = []
    indices = range(n)
    for _ in range(resamples):
        picks = rng.choices(indices, k=n)
        means.append(math.fsum([deltas[i] for i in picks]) / n)
        if abs(math.fsum([centred[i] for i in picks]) / n) >= threshold:
            extreme += 1
    return _percentiles(mean, means, extreme, resamples)


def _drawn_away(
    n: int, mode: float, away: list[float], mean: float, rng: random.Random, resamples: int
) -> Bootstrap:
    """Resamples of ``n`` deltas of which ``away`` (minus ``mode``) are not ``mode``."""
    q = len(away) / n
    total = math.fsum(away)  # n * (mean - mode)
    threshold = abs(mean) - 1e-12
    extreme = 0
    means: list[float] = []
    for _ in range(resamples):
        k = _binomial(n, q, rng)
        drawn = math.fsum(rng.choices(away, k=k))
        means.append(mode + drawn / n)
        # the resample of the centred deltas: its mean is the resampled mean minus the mean
        if abs((drawn - total) / n) >= threshold:
            extreme += 1
    return _percentiles(mean, means, extreme, resamples)


def _binomial(n: int, p: float, rng: random.Random) -> int:
    """A draw of Binomial(n, p), ``0 < p < 1``, in O(n p) steps (for a small n p)."""
    log_none = n * math.log1p(-p)  # log P(0 successes)
    if log_none > -700.0:
        # inversion: one uniform, the probabilities by their recurrence
        u = rng.random()
        odds = p / (1.0 - p)
        k = 0
        prob = cdf = math.exp(log_none)
        while u > cdf and k < n:
            prob *= (n - k) / (k + 1) * odds
            k += 1
            cdf += prob
        return k
    # P(0) would underflow: count the successes by geometric jumps from one to the next
    log_q = math.log1p(-p)
    k = position = 0
    while True:
        position += int(math.log(1.0 - rng.random()) / log_q) + 1
        if position > n:
            return k
        k += 1


def _percentiles(mean: float, means: list[float], extreme: int, resamples: int) -> Bootstrap:
    means.sort()
    low = means[round(0.025 * (resamples - 1))]
    high = means[round(0.975 * (resamples - 1))]
    return Bootstrap(mean, low, high, (extreme + 1) / (resamples + 1))


def _expanded(deltas: list[float], mean: float) -> Bootstrap:
    """The bootstrap distribution of the mean from its one-term Edgeworth expansion."""
    n = len(deltas)
    centred = [d - mean for d in deltas]
    var = math.fsum([c * c for c in centred]) / n  # the resampled population's: divisor n
    if not var > 0.0:  # differences too small to square (below 1e-150): as if identical
        return Bootstrap(mean, mean, mean, 1.0 if mean == 0 else 0.0)
    sd = math.sqrt(var)
    se = sd / math.sqrt(n)
    skew = math.fsum([c * c * c for c in centred]) / n / (var * sd)
    # Cornish-Fisher: the quantile z_a of the standardised mean moves by skew / (6 sqrt n) *
    # (z_a^2 - 1), in the same direction at both ends (z^2 is the same)
    shift = skew / (6.0 * math.sqrt(n)) * (_Z975 * _Z975 - 1.0)
    low = mean + se * (-_Z975 + shift)
    high = mean + se * (_Z975 + shift)
    p_value = math.erfc(abs(mean) / se / math.sqrt(2.0))
    return Bootstrap(mean, low, high, min(1.0, p_value))
