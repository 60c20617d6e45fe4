"""Exact lower tails of the binomial and hypergeometric distributions, for the alert tests.

Both are summed term by term from the observed count away from the distribution's mode, each
term from the previous by the ratio of consecutive probabilities, scaled by the log of the
first term: no factorial is ever formed, nothing underflows at n = 100,000, and the sum stops
once what is left is provably below double precision (both distributions are log-concave, so
the ratios shrink away from the mode and the rest is bounded by a geometric series).
"""

from __future__ import annotations

import math
from collections.abc import Callable

_NEGLIGIBLE = 1e-17
"""What is left of a tail, relative to its sum so far, that may be dropped."""


def _sum_away(
    start: int, end: int, step: int, log_first: float, ratio: Callable[[int], float]
) -> float:
    """The sum of the terms from ``start`` to ``end`` (inclusive, moving by ``step``) when the
    terms do not grow in that direction; ``ratio(i)`` is term(i + step) / term(i)."""
    term, total, i = 1.0, 1.0, start
    while i != end:
        r = ratio(i)
        term *= r
        total += term
        i += step
        if r < 1.0 and term * r / (1.0 - r) <= total * _NEGLIGIBLE:
            break
    return min(1.0, math.exp(log_first + math.log(total)))


def _lower_tail(
    k: int, lo: int, hi: int, log_pmf: Callable[[int], float], up: Callable[[int], float]
) -> float:
    """P(X <= k) for a log-concave X on ``lo..hi``; ``up(i)`` is P(X = i + 1) / P(X = i).

    Sums the side of ``k`` that holds no mode: below ``k`` when the terms still rise at ``k``,
    else the upper tail from ``k + 1``, subtracted from 1.
    """
    if k < lo:
        return 0.0
    if k >= hi:
        return 1.0
    if up(k) >= 1.0:
        return _sum_away(k, lo, -1, log_pmf(k), lambda i: 1.0 / up(i - 1))
    return max(0.0, 1.0 - _sum_away(k + 1, hi, 1, log_pmf(k + 1), up))


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(K <= k) for K ~ Binomial(n, p), with 0 < p < 1.

    Raises:
        ValueError: ``n`` is negative or ``p`` is outside (0, 1).
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    log_p, log_q, odds = math.log(p), math.log1p(-p), p / (1.0 - p)

    def log_pmf(i: int) -> float:
        return _log_comb(n, i) + i * log_p + (n - i) * log_q

    return _lower_tail(k, 0, n, log_pmf, lambda i: (n - i) / (i + 1) * odds)


def hypergeom_cdf(x: int, total: int, marked: int, drawn: int) -> float:
    """P(X <= x) for X the marked items among ``drawn`` taken without replacement from
    ``total`` items of which ``marked`` are marked (the law of Fisher's exact test).

    Raises:
        ValueError: counts that do not describe an urn (negative, or more than it holds).
    """
    if total < 0 or not 0 <= marked <= total or not 0 <= drawn <= total:
        raise ValueError(f"not an urn: total {total}, marked {marked}, drawn {drawn}")
    lo, hi = max(0, drawn - (total - marked)), min(drawn, marked)
    unmarked = total - marked
    log_all = _log_comb(total, drawn)

    def log_pmf(i: int) -> float:
        return _log_comb(marked, i) + _log_comb(unmarked, drawn - i) - log_all

    def up(i: int) -> float:
        return (marked - i) * (drawn - i) / ((i + 1) * (unmarked - drawn + i + 1))

    return _lower_tail(x, lo, hi, log_pmf, up)


def attained_size(cdf: Callable[[int], float], lo: int, hi: int, alpha: float) -> float:
    """The exact size of the test that rejects when ``cdf(k) <= alpha``: the largest
    ``cdf(k)`` that is still ``<= alpha`` over ``k`` in ``lo..hi`` (0 when no ``k`` rejects).

    A discrete test cannot reach ``alpha`` exactly; this is how far below it the chance of a
    false alarm is. Found by bisection (``cdf`` rises with ``k``): about log2(n) evaluations.
    """
    if cdf(lo) > alpha:
        return 0.0
    good, bad = lo, hi + 1  # cdf(good) <= alpha; bad is past every k that rejects
    while bad - good > 1:
        mid = (good + bad) // 2
        if cdf(mid) <= alpha:
            good = mid
        else:
            bad = mid
    return cdf(good)


def normal_lower(z: float) -> float:
    """P(Z <= z) for a standard normal Z (by ``erfc``: accurate far into the lower tail)."""
    return 0.5 * math.erfc(-z / math.sqrt(2.0))
