"""Graded judges against people, and yes/no judges against graded ones. Pure.

A graded judge scores each metric 0-5 and the metric's verdict passes when the score reaches the
check's pass threshold: that verdict *is* the thresholded grade, compared with a yes/no label
like any verdict. When people also gave grades, :func:`grade_agreement` says whether the judge
ranks the cases as they do (Spearman's rho, ties at their average rank, with a Fisher-z
interval) and how far apart the grades are (mean absolute difference).

:func:`compare_kinds` pools the yes/no judge checks and the graded metrics separately and says
which kind agrees with people better, only when a bootstrap interval of the difference of the
two kappas excludes 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum
from statistics import NormalDist
from typing import TYPE_CHECKING, NamedTuple

from pydantic import BaseModel

from ._agreement import AlignmentFigures, Confusion

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

_Z975 = NormalDist().inv_cdf(0.975)
FEW_GRADES = 10
"""Below this many graded pairs the rank correlation's interval is noted as rough."""
RESAMPLES = 4000
"""Bootstrap draws behind the kappa intervals of :func:`compare_kinds`."""


class CheckKind(StrEnum):
    """What answered a check's verdicts, for comparing kinds of judge."""

    BINARY = "binary"
    """A judge asked a yes/no question."""
    GRADED = "graded"
    """A graded judge: a metric scored 0-5 (or its overall score), passed at a threshold."""
    OTHER = "other"
    """Not an LLM judge (a code check): left out of the comparison."""


class CheckRole(NamedTuple):
    """A check's kind and, for a graded metric, the threshold at which its verdict passes."""

    kind: CheckKind
    pass_threshold: float | None = None
    """For a graded metric: its check's ``pass_threshold`` (out of 100); a grade passes when
    grade / 5 x 100 reaches it."""

    @property
    def grade_threshold(self) -> float | None:
        """The grade (0-5) from which a graded metric passes."""
        return None if self.pass_threshold is None else self.pass_threshold / 20


def average_ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, tied values sharing the average of the ranks they span."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for k in range(start, end + 1):
            ranks[order[k]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rho: the Pearson correlation of the average ranks (so ties are handled).

    None with fewer than two pairs or when one side gives one value throughout (no order to
    agree with).

    Raises:
        ValueError: ``xs`` and ``ys`` differ in length.
    """
    if len(xs) != len(ys):
        raise ValueError(f"expected pairs, got {len(xs)} and {len(ys)} values")
    n = len(xs)
    if n < 2:
        return None
    rx, ry = average_ranks(xs), average_ranks(ys)
    mean = (n + 1) / 2  # the mean of average ranks is always (n + 1) / 2
    sxy = math.fsum((a - mean) * (b - mean) for a, b in zip(rx, ry, strict=True))
    sxx = math.fsum((a - mean) ** 2 for a in rx)
    syy = math.fsum((b - mean) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def kendall_tau_b(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Kendall's tau-b: (concordant - discordant pairs) / sqrt((n0 - tied x)(n0 - tied y)),
    n0 = n(n - 1) / 2, so ties on either side are accounted for.

    None with fewer than two pairs or when one side gives one value throughout.

    Raises:
        ValueError: ``xs`` and ``ys`` differ in length.
    """
    import numpy as np

    if len(xs) != len(ys):
        raise ValueError(f"expected pairs, got {len(xs)} and {len(ys)} values")
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    n = len(x)
    score = tied_x = tied_y = 0
    for i in range(n - 1):  # one row of the pair matrix at a time: memory stays O(n)
        dx, dy = np.sign(x[i + 1 :] - x[i]), np.sign(y[i + 1 :] - y[i])
        score += int(np.sum(dx * dy))
        tied_x += int(np.sum(dx == 0))
        tied_y += int(np.sum(dy == 0))
    pairs = n * (n - 1) // 2
    if pairs == 0 or tied_x == pairs or tied_y == pairs:
        return None
    return max(-1.0, min(1.0, score / math.sqrt((pairs - tied_x) * (pairs - tied_y))))


def spearman_interval(rho: float, n: int) -> tuple[float, float] | None:
    """A 95% interval for Spearman's rho by Fisher's z with the variance 1.06 / (n - 3)
    (Fieller, Hartley and Pearson, 1957). None for n < 4 or |rho| = 1, where it is undefined."""
    if n < 4 or abs(rho) >= 1:
        return None
    z = math.atanh(rho)
    half = _Z975 * math.sqrt(1.06 / (n - 3))
    return math.tanh(z - half), math.tanh(z + half)


class GradeAgreement(BaseModel):
    """A graded metric's grades against people's grades, where both were given."""

    threshold: float
    """The grade (0-5) from which the metric's verdict passes: the verdict is this threshold
    applied to the judge's grade, so the yes/no figures are the thresholded grade's."""
    graded: int
    """Compared executions with a human grade (and the judge's)."""
    spearman: float | None
    """Spearman's rho of the judge's grades against the human ones; None when undefined."""
    spearman_low: float | None
    """Lower end of its 95% Fisher-z interval (None with fewer than 4 pairs or |rho| = 1)."""
    spearman_high: float | None
    """Upper end of that interval."""
    kendall_tau_b: float | None = None
    """Kendall's tau-b of the same pairs (ties on either side accounted for); None when
    undefined."""
    mean_abs_diff: float | None
    """Mean of |judge grade - human grade|, in grade points; None without grades."""
    note: str | None
    """Why rho or its interval is missing, or that the pairs are few."""


def grade_agreement(pairs: Sequence[tuple[float, float]], threshold: float) -> GradeAgreement:
    """The figures of (judge grade, human grade) ``pairs`` of a metric passing at
    ``threshold``."""
    n = len(pairs)
    judge = [p[0] for p in pairs]
    human = [p[1] for p in pairs]
    rho = spearman(judge, human)
    interval = spearman_interval(rho, n) if rho is not None else None
    note = None
    if n == 0:
        note = "no human grades"
    elif rho is None:
        who = "the judge" if len(set(judge)) < 2 else "the human"
        note = f"undefined: {who} gave one grade throughout" if n > 1 else "one grade pair"
    elif n < 4:
        note = f"only {n} grade pairs: no interval"
    elif interval is None:
        note = f"the ranks {'agree' if rho > 0 else 'disagree'} exactly: no Fisher interval"
    elif n < FEW_GRADES:
        note = f"only {n} grade pairs: the interval is wide and approximate"
    return GradeAgreement(
        threshold=threshold,
        graded=n,
        spearman=rho,
        spearman_low=interval[0] if interval else None,
        spearman_high=interval[1] if interval else None,
        kendall_tau_b=kendall_tau_b(judge, human),
        mean_abs_diff=math.fsum(abs(a - b) for a, b in pairs) / n if n else None,
        note=note,
    )


class KindAlignment(BaseModel):
    """One kind of check, its labels pooled."""

    kind: CheckKind
    """Yes/no judge, graded or other."""
    checks: list[str]
    """Its labelled checks, by name."""
    figures: AlignmentFigures
    """The pooled figures (every compared pair counts once)."""
    kappa_low: float | None = None
    """Lower end of a 95% bootstrap interval of the pooled kappa (binary and graded kinds)."""
    kappa_high: float | None = None
    """Upper end of that interval."""


class KindComparison(BaseModel):
    """Yes/no judge checks against graded metrics, on the labels of both."""

    labels: int
    """Compared pairs of the two kinds together."""
    difference: float | None
    """Kappa of the yes/no judge checks minus kappa of the graded metrics."""
    difference_low: float | None
    """Lower end of its 95% bootstrap interval."""
    difference_high: float | None
    """Upper end."""
    better: CheckKind | None
    """The kind that agrees better, only when the interval excludes 0; else None."""


def compare_kinds(
    binary: Confusion, graded: Confusion, *, seed: int = 0
) -> tuple[tuple[float, float] | None, tuple[float, float] | None, KindComparison]:
    """95% bootstrap intervals of each kind's pooled kappa and the comparison of the two.

    Pairs are resampled within each kind (percentile intervals, ``seed`` fixed so a report
    reads the same twice). The difference is taken over draws where both kappas are defined.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    draws = [_draws(c, rng) for c in (binary, graded)]
    intervals = [_percentiles(d[~np.isnan(d)]) for d in draws]
    b, g = binary.kappa(), graded.kappa()
    both = ~np.isnan(draws[0]) & ~np.isnan(draws[1])
    spread = _percentiles(draws[0][both] - draws[1][both])
    better = None
    if b is not None and g is not None and spread is not None:
        if spread[0] > 0:
            better = CheckKind.BINARY
        elif spread[1] < 0:
            better = CheckKind.GRADED
    comparison = KindComparison(
        labels=binary.n + graded.n,
        difference=b - g if b is not None and g is not None else None,
        difference_low=spread[0] if spread else None,
        difference_high=spread[1] if spread else None,
        better=better,
    )
    return intervals[0], intervals[1], comparison


def _draws(confusion: Confusion, rng: np.random.Generator) -> NDArray[np.float64]:
    """Bootstrap kappas of ``confusion``, NaN where a draw's kappa is undefined."""
    import numpy as np

    c, n = confusion, confusion.n
    if n == 0:
        return np.full(RESAMPLES, np.nan)
    shares = np.array([c.true_yes, c.false_yes, c.false_no, c.true_no], dtype=float) / n
    counts = rng.multinomial(n, shares, size=RESAMPLES).astype(float)
    ty, fy, fn, tn = counts.T
    judge_yes, human_yes = ty + fy, ty + fn
    expected = judge_yes * human_yes + (n - judge_yes) * (n - human_yes)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappas = (n * (ty + tn) - expected) / (n * n - expected)
    return np.where(expected == n * n, np.nan, kappas)


def _percentiles(arr: NDArray[np.float64]) -> tuple[float, float] | None:
    import numpy as np

    # a kind whose draws are mostly undefined has no interval worth showing
    if arr.size < RESAMPLES // 2:
        return None
    low, high = np.percentile(arr, [2.5, 97.5])
    return float(low), float(high)
