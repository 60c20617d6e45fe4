"""Calibrated pass rates: a judge check's pass rate corrected by what people said of its verdicts.

What is corrected, and how. A judge check's raw pass rate is the share of its executions the
judge said yes to. A judge that is wrong some of the time makes that share wrong too: a lenient
judge's yes on a poor answer, or a strict judge's no on a good one, moves the rate, and no
amount of runs removes the bias. People's yes/no labels on some of the executions (the truth)
measure the judge's error, and the calibrated pass rate is the share of the run a person would
have said yes to. The executions split by the judge's verdict: N1 said yes, N0 said no. Among
the labelled ones, q1 = TP / (TP + FP) is the share of the judge's yes answers a person also
said yes to, q0 = FN / (FN + TN) the share of its no answers a person said yes to, and

    calibrated pass rate = (N1 / N) * q1 + (N0 / N) * q0.

This is the Rogan-Gladen correction, (p + sp - 1) / (se + sp - 1) with p = N1 / N, once the
judge's sensitivity and specificity are read from the confusion counts with each label weighted
by its verdict's sampling fraction (N1 / L1 for a label on a yes verdict, N0 / L0 on a no):
the two formulas give the same number. The weighting is what makes the estimate right however
the labelled executions were picked, as long as the pick depended on nothing but the judge's
verdict (a random order, or the labelling queue, which picks the verdict to label next); when
labels fall on the verdicts in proportion, every weight is equal and the weighted sensitivity
and specificity are the plain confusion ratios. The 95% interval is Bayesian: the judge's yes
share p ~ Beta(N1 + 1/2, N0 + 1/2), q1 ~ Beta(TP + 1/2, FP + 1/2), q0 ~ Beta(FN + 1/2, TN + 1/2),
and the interval holds the middle 95% of p * q1 + (1 - p) * q0 over seeded Monte Carlo draws,
so it carries both the run's sampling and the judge's measured error. A verdict with no labels
keeps the Jeffreys prior (a wide interval, and a point estimate of one half for it).

Only a check's pass rate is corrected here. A case's score is the sum of the normalized weights
of its passed checks, so when every check applies to every case the TCR (the mean score) is
the weighted sum of the checks' pass rates, and the same sum of calibrated rates is its
calibrated value (the intervals do not add: the checks' errors are not independent). A check
that is not applicable to some cases and excluded renormalizes each case's weights, and then
the mean score is no longer linear in the pass rates. Anything decided per case by a threshold
or a rule (outcome classes, a case passing, pass@k) is not corrected: a person would have to
label every check of the case.
"""

from __future__ import annotations

import math
from statistics import NormalDist

from pydantic import BaseModel

from ._alignment import Confusion
from ._stats import wilson_interval

PRIOR = 0.5
"""The Jeffreys prior's pseudo-count on each side of every Beta."""

_FIGURES = (
    *("raw_pass_rate", "raw_low", "raw_high"),
    *("sensitivity", "sensitivity_low", "sensitivity_high"),
    *("specificity", "specificity_low", "specificity_high"),
    *("calibrated_pass_rate", "calibrated_low", "calibrated_high"),
)


class WeightedConfusion(BaseModel):
    """The confusion counts with each label weighted by its verdict's sampling fraction, so the
    four add up to the run's executions (of the verdicts that have labels)."""

    true_yes: float
    """Both said yes, each label counting N1 / L1 executions."""
    false_yes: float
    """The judge said yes, the human no, each counting N1 / L1."""
    false_no: float
    """The judge said no, the human yes, each counting N0 / L0."""
    true_no: float
    """Both said no, each counting N0 / L0."""


class Calibration(BaseModel):
    """A judge check's raw and calibrated pass rates, and the judge's measured error."""

    check: str
    """The check's name."""
    judged_yes: int
    """N1: executions the judge said yes to (passed verdicts)."""
    judged_no: int
    """N0: executions the judge said no to (failed verdicts)."""
    confusion: Confusion
    """The labels against the judge's verdicts, the human label taken as the truth."""
    labels: int
    """Labels compared with a passed or failed verdict."""
    level: float
    """The intervals' confidence level (0.95 for 95%)."""
    raw_pass_rate: float | None
    """N1 / N, the judge's own pass rate; None without executions."""
    raw_low: float | None
    """Lower end of the raw rate's Wilson interval: the run's sampling only."""
    raw_high: float | None
    """Upper end of the raw rate's Wilson interval."""
    weighted: WeightedConfusion
    """The confusion counts weighted by sampling fraction, behind the sensitivity and
    specificity (zero for a verdict without labels)."""
    sensitivity: float | None
    """Weighted TP / (TP + FN): of the executions a person would pass, the share the judge
    passed. None unless both verdicts that occur have labels and a person said yes to one."""
    sensitivity_low: float | None
    """Lower end of the sensitivity's interval."""
    sensitivity_high: float | None
    """Upper end of the sensitivity's interval."""
    specificity: float | None
    """Weighted TN / (TN + FP): of the executions a person would fail, the share the judge
    failed. None unless both verdicts that occur have labels and a person said no to one."""
    specificity_low: float | None
    """Lower end of the specificity's interval."""
    specificity_high: float | None
    """Upper end of the specificity's interval."""
    calibrated_pass_rate: float | None
    """(N1 / N) * q1 + (N0 / N) * q0, the share a person would pass (a verdict without labels
    counts one half); equal to the Rogan-Gladen (p + sp - 1) / (se + sp - 1) on the weighted
    sensitivity and specificity. None without executions."""
    calibrated_low: float | None
    """Lower end of the calibrated rate's interval (the run's sampling and the judge's error)."""
    calibrated_high: float | None
    """Upper end of the calibrated rate's interval."""
    kappa: float | None
    """Cohen's kappa of the labels against the judge (the raw confusion); None when undefined."""
    weighted_kappa: float | None
    """Cohen's kappa of the weighted confusion: the kappa expected were every execution
    labelled, whichever verdicts the labels fell on. None when undefined."""
    note: str | None
    """What makes these figures less informative, when something does."""


def calibrate(
    check: str,
    judged_yes: int,
    judged_no: int,
    confusion: Confusion,
    *,
    draws: int = 4000,
    seed: int = 0,
    level: float = 0.95,
) -> Calibration:
    """The calibrated pass rate of one judge check in one run, from its labels.

    Args:
        check: The check's name.
        judged_yes: Executions with a passed verdict (N1).
        judged_no: Executions with a failed verdict (N0).
        confusion: Labels on those executions against their verdicts.
        draws: Monte Carlo draws of the posterior; the same inputs give the same intervals.
        seed: The draws' seed.
        level: The intervals' confidence level.

    Raises:
        ValueError: a count is negative, a verdict has more labels than executions, or
            ``level`` or ``draws`` is out of range.
    """
    c = confusion
    counts = (judged_yes, judged_no, c.true_yes, c.false_yes, c.false_no, c.true_no)
    if min(counts) < 0:
        raise ValueError(f"counts must not be negative, got {counts}")
    l1, l0 = c.true_yes + c.false_yes, c.false_no + c.true_no
    if l1 > judged_yes or l0 > judged_no:
        raise ValueError(
            f"more labels than executions: {l1} labels on {judged_yes} yes verdicts, "
            f"{l0} on {judged_no} no verdicts"
        )
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    if draws < 100:
        raise ValueError(f"draws must be at least 100, got {draws}")
    n = judged_yes + judged_no
    w1 = judged_yes / l1 if l1 else 0.0
    w0 = judged_no / l0 if l0 else 0.0
    weighted = WeightedConfusion(
        true_yes=c.true_yes * w1,
        false_yes=c.false_yes * w1,
        false_no=c.false_no * w0,
        true_no=c.true_no * w0,
    )
    known = (l1 > 0 or judged_yes == 0) and (l0 > 0 or judged_no == 0)
    figures: dict[str, float | None] = dict.fromkeys(_FIGURES)
    if n:
        z = NormalDist().inv_cdf((1 + level) / 2)
        raw = judged_yes / n
        raw_low, raw_high = wilson_interval(judged_yes, n, z)
        figures.update(raw_pass_rate=raw, raw_low=raw_low, raw_high=raw_high)
        figures.update(_posterior(judged_yes, judged_no, c, weighted, known, draws, seed, level))
    wk = _kappa(weighted) if known and n else None
    return Calibration(
        check=check,
        judged_yes=judged_yes,
        judged_no=judged_no,
        confusion=c.model_copy(),
        labels=c.n,
        level=level,
        weighted=weighted,
        kappa=c.kappa(),
        weighted_kappa=wk,
        note=_note(judged_yes, judged_no, l1, l0, figures),
        **figures,
    )


def _posterior(
    n1: int,
    n0: int,
    c: Confusion,
    w: WeightedConfusion,
    known: bool,
    draws: int,
    seed: int,
    level: float,
) -> dict[str, float | None]:
    """Point estimates and the Monte Carlo intervals of the rate, sensitivity, specificity."""
    import numpy as np

    l1, l0 = c.true_yes + c.false_yes, c.false_no + c.true_no
    q1 = c.true_yes / l1 if l1 else PRIOR
    q0 = c.false_no / l0 if l0 else PRIOR
    point = (n1 * q1 + n0 * q0) / (n1 + n0)
    rng = np.random.default_rng(seed)
    p = rng.beta(n1 + PRIOR, n0 + PRIOR, draws)
    d1 = rng.beta(c.true_yes + PRIOR, c.false_yes + PRIOR, draws)
    d0 = rng.beta(c.false_no + PRIOR, c.true_no + PRIOR, draws)
    yes_yes, no_yes = p * d1, (1 - p) * d0
    tails = [(1 - level) / 2, (1 + level) / 2]

    def interval(point: float, values: np.ndarray) -> tuple[float, float]:
        low, high = (float(v) for v in np.quantile(values, tails))
        # the equal-tailed interval of a skewed posterior can end short of a plug-in estimate
        # that sits at 0 or 1; widened to hold it, as a Wilson interval holds its rate
        return min(low, point), max(high, point)

    out: dict[str, float | None] = {"calibrated_pass_rate": point}
    out["calibrated_low"], out["calibrated_high"] = interval(point, yes_yes + no_yes)
    if known and w.true_yes + w.false_no > 0:
        se = w.true_yes / (w.true_yes + w.false_no)
        out["sensitivity"] = se
        out["sensitivity_low"], out["sensitivity_high"] = interval(se, yes_yes / (yes_yes + no_yes))
    if known and w.true_no + w.false_yes > 0:
        sp = w.true_no / (w.true_no + w.false_yes)
        no_no, yes_no = (1 - p) * (1 - d0), p * (1 - d1)
        out["specificity"] = sp
        out["specificity_low"], out["specificity_high"] = interval(sp, no_no / (no_no + yes_no))
    return out


def _kappa(w: WeightedConfusion) -> float | None:
    n = w.true_yes + w.false_yes + w.false_no + w.true_no
    judge_yes, human_yes = w.true_yes + w.false_yes, w.true_yes + w.false_no
    expected = judge_yes * human_yes + (n - judge_yes) * (n - human_yes)
    if n == 0 or math.isclose(expected, n * n, rel_tol=1e-12):
        return None
    return (n * (w.true_yes + w.true_no) - expected) / (n * n - expected)


def _note(n1: int, n0: int, l1: int, l0: int, figures: dict[str, float | None]) -> str | None:
    if n1 + n0 == 0:
        return "no passed or failed verdicts: nothing to calibrate"
    if l1 + l0 == 0:
        return "no labels: the calibrated rate is a guess (one half) with a wide interval"
    notes = []
    if n1 and not l1:
        notes.append("no labels on the judge's yes verdicts: their truth is unknown")
    if n0 and not l0:
        notes.append("no labels on the judge's no verdicts: their truth is unknown")
    se, sp = figures["sensitivity"], figures["specificity"]
    if se is not None and sp is not None and math.isclose(se + sp, 1.0, abs_tol=1e-12):
        notes.append(
            "the judge's verdicts tell nothing of the labels (sensitivity + specificity = 1): "
            "the textbook Rogan-Gladen formula is undefined, the rate is the labels' own"
        )
    return "; ".join(notes) or None
