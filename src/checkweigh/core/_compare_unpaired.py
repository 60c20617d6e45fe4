"""Comparing two samples that share no case: two windows of a monitor, whose cases are
different traces ("this hour" against "the same hour last week").

Without pairs the paired tests of :mod:`._compare` do not apply, so each figure gets the
unpaired test of its kind: Fisher's exact test for pass rates (the suite's and each check's),
Welch's t-test for the mean case score and the mean latency. The thresholds, the significance
level and how the verdict is reached are the paired comparison's (:func:`._compare.verdict_of`):
every p-value is two-sided, as McNemar's and the paired bootstrap's are.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

from ._case_pass import CaseState
from ._compare import (
    CompareVerdict,
    Comparison,
    SuiteDelta,
    drop_delta,
    latency_change,
    mean_of,
    verdict_of,
)
from ._paired import CheckDelta, Decided, check_delta
from ._stats import t_cdf, t_quantile
from ._tails import hypergeom_cdf
from ._thresholds import CompareThresholds
from ._verdict import VerdictState

_TIES = 1e-7
"""Relative slack under which two tables' probabilities count as equal in Fisher's test (their
log-probabilities come from ``lgamma`` sums, not exact arithmetic)."""


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def fisher_exact(base_passed: int, base_n: int, candidate_passed: int, candidate_n: int) -> float:
    """Two-sided p-value of Fisher's exact test that two pass rates are equal.

    Given both totals and the passes of both samples together, the base's passes follow a
    hypergeometric law; the p-value is the probability of every table no more likely than the
    observed one. That law is log-concave, so those tables form its two tails: each is found by
    bisection and summed exactly (:func:`~._tails.hypergeom_cdf`), never table by table.
    An empty sample gives 1.0 (nothing to test).

    Raises:
        ValueError: passes outside ``0..n`` of their sample.
    """
    if not (0 <= base_passed <= base_n and 0 <= candidate_passed <= candidate_n):
        raise ValueError(
            f"passes must be within their samples: {base_passed} of {base_n}, "
            f"{candidate_passed} of {candidate_n}"
        )
    total, marked, drawn = base_n + candidate_n, base_passed + candidate_passed, base_n
    unmarked = total - marked
    lo, hi = max(0, drawn - unmarked), min(drawn, marked)
    if lo == hi:
        return 1.0  # one table only (an empty sample, or every trace passed or failed)

    def log_pmf(i: int) -> float:
        return _log_comb(marked, i) + _log_comb(unmarked, drawn - i)  # up to a constant

    mode = min(hi, max(lo, (drawn + 1) * (marked + 1) // (total + 2)))
    bound = log_pmf(base_passed) + math.log1p(_TIES)
    if log_pmf(mode) <= bound:
        return 1.0  # the observed table is as likely as the likeliest: every table counts
    # below the mode: the largest i whose term is within the bound (terms rise up to the mode)
    lower = 0.0
    if log_pmf(lo) <= bound:
        good, bad = lo, mode
        while bad - good > 1:
            mid = (good + bad) // 2
            good, bad = (mid, bad) if log_pmf(mid) <= bound else (good, mid)
        lower = hypergeom_cdf(good, total, marked, drawn)
    # above the mode: the smallest i within the bound, and P(X >= i) as the lower tail of the
    # unmarked items drawn (no cancellation in 1 - P(X < i))
    upper = 0.0
    if log_pmf(hi) <= bound:
        bad, good = mode, hi
        while good - bad > 1:
            mid = (good + bad) // 2
            bad, good = (bad, mid) if log_pmf(mid) <= bound else (mid, good)
        upper = hypergeom_cdf(drawn - good, total, unmarked, drawn)
    return min(1.0, lower + upper)


class Welch(NamedTuple):
    """Welch's unpaired t-test of the difference of two means (candidate - base)."""

    change: float
    low: float
    """Lower end of the 95% interval of the change."""
    high: float
    """Upper end of the 95% interval of the change."""
    p_value: float | None
    """Two-sided; None when a sample has fewer than two values (no variance to weigh)."""
    df: int
    """Welch-Satterthwaite degrees of freedom, rounded down (a slightly wider t: the test
    errs on the side of "not significant")."""


def welch_test(base: list[float], candidate: list[float]) -> Welch:
    """Welch's t-test of ``mean(candidate) - mean(base)``, without assuming equal variances.

    When both samples are constant the change is certain: p is 1.0 if the means are equal,
    else 0.0 (as the paired bootstrap treats identical deltas).

    Raises:
        ValueError: an empty sample.
    """
    if not base or not candidate:
        raise ValueError("both samples need a value")
    n1, n2 = len(base), len(candidate)
    m1, m2 = math.fsum(base) / n1, math.fsum(candidate) / n2
    change = m2 - m1
    if n1 < 2 or n2 < 2:
        return Welch(change, change, change, None, 0)
    w1 = math.fsum([(x - m1) ** 2 for x in base]) / (n1 - 1) / n1
    w2 = math.fsum([(x - m2) ** 2 for x in candidate]) / (n2 - 1) / n2
    se2 = w1 + w2
    if not se2 > 0.0:
        return Welch(change, change, change, 1.0 if change == 0 else 0.0, n1 + n2 - 2)
    df = max(1, math.floor(se2 * se2 / (w1 * w1 / (n1 - 1) + w2 * w2 / (n2 - 1))))
    se = math.sqrt(se2)
    half = t_quantile(0.975, df) * se
    p = min(1.0, 2.0 * t_cdf(-abs(change) / se, df))
    return Welch(change, change - half, change + half, p, df)


def _welch_text(test: Welch, over: tuple[int, int], unit: str) -> str:
    text = f"Welch's t-test (unpaired: {over[0]} base, {over[1]} candidate traces)"
    if test.p_value is None:
        return f"{text}: no test (a window has fewer than 2 values)"
    return f"{text}, 95% CI of the change [{test.low:+.1f}, {test.high:+.1f}]{unit}"


def _score_delta(base: list[float], cand: list[float], t: CompareThresholds) -> SuiteDelta:
    test = welch_test(base, cand) if base and cand else None
    return drop_delta(
        "average case score",
        mean_of(base),
        mean_of(cand),
        test.change if test else None,
        allowed=t.max_avg_score_drop,
        p_value=test.p_value if test else None,
        test=_welch_text(test, (len(base), len(cand)), "")
        if test
        else "Welch's t-test: no test (a window has no scored trace)",
    )


def _latency_delta(base: list[float], cand: list[float], t: CompareThresholds) -> SuiteDelta:
    """As the paired :func:`._compare.latency_delta`: the change in percent of the base, and
    an increase under ``t.min_latency_increase_ms`` never exceeds."""
    test = welch_test(base, cand) if base and cand else None
    text = (
        _welch_text(test, (len(base), len(cand)), " ms")
        if test
        else "Welch's t-test: no test (a window has no latency)"
    )
    return latency_change(
        mean_of(base), mean_of(cand), t, p_value=test.p_value if test else None, test=text
    )


def _check_counts(rows: list[Decided]) -> dict[str, tuple[int, int]]:
    """Per check: (passed, decided) over ``rows`` (not applicable and errored do not decide)."""
    counts: dict[str, list[int]] = {}
    # a window's traces share a few patterns of check states: each is walked once
    for (names, states), k in Counter((r.checks, r.verdicts) for r in rows).items():
        for name, state in zip(names, states, strict=True):
            if state is VerdictState.PASSED or state is VerdictState.FAILED:
                slot = counts.setdefault(name, [0, 0])
                slot[0] += k if state is VerdictState.PASSED else 0
                slot[1] += k
    return {name: (p, n) for name, (p, n) in counts.items()}


def unpaired_check_deltas(base: list[Decided], candidate: list[Decided]) -> list[CheckDelta]:
    """Each check's pass rate in both samples, with Fisher's exact test; the paired flips
    (``worse``, ``better``) are 0: no execution is in both. A check that decided in one sample
    only is listed with the other's rate None (and p 1.0)."""
    b, c = _check_counts(base), _check_counts(candidate)
    out = []
    for name in b.keys() | c.keys():
        bp, bn = b.get(name, (0, 0))
        cp, cn = c.get(name, (0, 0))
        out.append(
            check_delta(
                name, bp, bn, cp, cn, worse=0, better=0, p_value=fisher_exact(bp, bn, cp, cn)
            )
        )
    out.sort(key=lambda d: (d.change if d.change is not None else 0.0, d.check))
    return out


def compare_unpaired(
    base: Iterable[Decided],
    candidate: Iterable[Decided],
    *,
    thresholds: CompareThresholds | None = None,
    strict: bool = False,
) -> Comparison:
    """Compare two samples of executions that share no case (see the module docstring).

    The result is a :class:`Comparison` with ``unpaired`` set, ``paired`` 0 and the two
    samples' sizes as ``only_base`` and ``only_candidate``; there are no per-case regressions
    or improvements (no case is in both), and the per-check deltas carry no flips.
    """
    t = thresholds or CompareThresholds()
    base_rows, cand_rows = list(base), list(candidate)
    n1, n2 = len(base_rows), len(cand_rows)
    b_pass = sum(r.state is CaseState.PASSED for r in base_rows)
    c_pass = sum(r.state is CaseState.PASSED for r in cand_rows)
    b_rate = b_pass / n1 * 100.0 if n1 else None
    c_rate = c_pass / n2 * 100.0 if n2 else None
    both = b_rate is not None and c_rate is not None
    suite = [
        drop_delta(
            "case pass rate (%)",
            b_rate,
            c_rate,
            c_rate - b_rate if b_rate is not None and c_rate is not None else None,
            allowed=t.max_pass_rate_drop,
            p_value=fisher_exact(b_pass, n1, c_pass, n2) if both else None,
            test=f"Fisher's exact (unpaired: {n1} base, {n2} candidate traces)",
        ),
        _score_delta(_scores(base_rows), _scores(cand_rows), t),
        _latency_delta(_latencies(base_rows), _latencies(cand_rows), t),
    ]
    exceeded, significant, verdict = verdict_of(suite, t, strict)
    return Comparison(
        paired=0,
        only_base=n1,
        only_candidate=n2,
        suite=suite,
        threshold_exceeded=exceeded,
        regression_detected=verdict is CompareVerdict.REGRESSION,
        significant=significant,
        verdict=verdict,
        alpha=t.alpha,
        strict=strict,
        checks=unpaired_check_deltas(base_rows, cand_rows),
        unpaired=True,
    )


def _scores(rows: list[Decided]) -> list[float]:
    # as the paired comparison: errored executions have no score to compare
    return [r.score for r in rows if r.score is not None and r.state is not CaseState.ERRORED]


def _latencies(rows: list[Decided]) -> list[float]:
    return [r.latency_ms for r in rows if r.latency_ms is not None]
