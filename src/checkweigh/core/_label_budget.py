"""How many more labels a judge check needs: the calibrated interval's width, projected.

The projection is a normal approximation of the calibrated pass rate's posterior (see
``_calibration``): the exact variance of p * q1 + (1 - p) * q0 with independent Betas,
Var(p) * ((E q1 - E q0)^2 + Var q1 + Var q0) + E[p]^2 Var q1 + (1 - E[p])^2 Var q0, taken
either side of the posterior mean E[p] E[q1] + (1 - E[p]) E[q0] times the normal quantile. Each
future label's answer is assumed at the current share of its verdict (TP / (TP + FP) on a yes
verdict), so with L labels E q = (share * L + 1/2) / (L + 1) and Var q = E q (1 - E q) / (L + 2).
(E q1 - E q0)^2 is held at the larger of its value now and with many labels, so the projected
width never grows with labels. It follows the Monte Carlo interval to within a few thousandths
once each verdict has a handful of labels; it is symmetric where the posterior is a little
skewed. Future labels fall where the
labelling queue would put them (``_label_queue``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import NormalDist

from ._alignment import Confusion
from ._calibration import PRIOR, Calibration


def projected_half_width(cal: Calibration, more_yes: int = 0, more_no: int = 0) -> float | None:
    """The calibrated interval's half-width after more labels, by a normal approximation (see
    the module's docstring): each added label's answer is taken at the current estimate.

    Args:
        cal: The current calibration.
        more_yes: Labels added on the judge's yes verdicts.
        more_no: Labels added on the judge's no verdicts.

    Returns:
        The half-width; None without executions.
    """
    state = State.of(cal)
    if state is None:
        return None
    return state.half_width(state.l1 + more_yes, state.l0 + more_no)


def labels_to_decide(cal: Calibration, bound: float, *, max_labels: int = 10_000) -> int | None:
    """More labels needed until the calibrated interval leaves ``bound`` out.

    Labels are allocated one at a time by the queue's rule (:func:`next_stratum`), their answers
    assumed at the current estimates, and the interval is the normal approximation of
    :func:`projected_half_width`, around the posterior mean those labels would give.

    Returns:
        0 if the interval already leaves ``bound`` out; None if more than ``max_labels``
        labels, or more than the run's unlabelled executions, would be needed (as when the
        estimate sits on the bound) or there are no executions.
    """
    if cal.calibrated_low is None or cal.calibrated_high is None:
        return None
    if not cal.calibrated_low <= bound <= cal.calibrated_high:
        return 0
    return _more_labels(cal, lambda low, high: not low <= bound <= high, max_labels)


def labels_for_width(
    cal: Calibration, half_width: float, *, max_labels: int = 10_000
) -> int | None:
    """More labels needed for the calibrated interval's half-width to reach ``half_width``.

    Allocated and approximated as in :func:`labels_to_decide`.

    Returns:
        0 if the interval is already that narrow; None if more than ``max_labels`` labels,
        or more than the run's unlabelled executions, would be needed (the run's own sampling
        sets a floor), or there are no executions.
    """
    if cal.calibrated_low is None or cal.calibrated_high is None:
        return None
    if (cal.calibrated_high - cal.calibrated_low) / 2 <= half_width:
        return 0
    return _more_labels(cal, lambda low, high: (high - low) / 2 <= half_width, max_labels)


def _more_labels(
    cal: Calibration, done: Callable[[float, float], bool], max_labels: int
) -> int | None:
    state = State.of(cal)
    if state is None:
        return None
    l1, l0 = state.l1, state.l0
    for added in range(1, max_labels + 1):
        pick = state.pick(l1, l0)
        if pick is None:
            return None
        l1, l0 = (l1 + 1, l0) if pick else (l1, l0 + 1)
        if done(*state.bounds(l1, l0)):
            return added
    return None


class State:
    """The posterior summaries the approximation and the queue rule need."""

    def __init__(self, n1: int, n0: int, c: Confusion, z: float) -> None:
        n = n1 + n0
        self.n1, self.n0, self.z = n1, n0, z
        self.l1, self.l0 = c.true_yes + c.false_yes, c.false_no + c.true_no
        self.p = (n1 + PRIOR) / (n + 2 * PRIOR)
        self.var_p = self.p * (1 - self.p) / (n + 2 * PRIOR + 1)
        # the shares future labels are assumed to keep (one half for a verdict without any)
        self.share1 = c.true_yes / self.l1 if self.l1 else 0.5
        self.share0 = c.false_no / self.l0 if self.l0 else 0.5
        # the queue weighs each verdict by its least certain spread within two standard
        # errors: a verdict whose first labels happen to agree would otherwise get few more,
        # its lucky estimate would stick, and the interval would lose coverage
        q1, q0 = self._mean(self.share1, self.l1), self._mean(self.share0, self.l0)
        # E[q1 - q0] drifts from the current means to the shares as labels come in; the
        # larger square keeps the run's sampling term fixed, so more labels never widen
        self.gap2 = max((q1 - q0) ** 2, (self.share1 - self.share0) ** 2)
        self.g1 = (self.var_p + self.p**2) * _spread(q1, self.l1)
        self.g0 = (self.var_p + (1 - self.p) ** 2) * _spread(q0, self.l0)

    @classmethod
    def of(cls, cal: Calibration) -> State | None:
        if cal.judged_yes + cal.judged_no == 0:
            return None
        z = NormalDist().inv_cdf((1 + cal.level) / 2)
        return cls(cal.judged_yes, cal.judged_no, cal.confusion, z)

    @staticmethod
    def _mean(share: float, labels: int) -> float:
        return (share * labels + PRIOR) / (labels + 2 * PRIOR)

    def bounds(self, l1: int, l0: int) -> tuple[float, float]:
        """The approximate interval with ``l1`` and ``l0`` labels on the two verdicts."""
        m1, m0 = self._mean(self.share1, l1), self._mean(self.share0, l0)
        # a Beta(a, b)'s variance is m (1 - m) / (a + b + 1)
        v1 = m1 * (1 - m1) / (l1 + 2 * PRIOR + 1)
        v0 = m0 * (1 - m0) / (l0 + 2 * PRIOR + 1)
        var = (
            self.var_p * self.gap2
            + (self.var_p + self.p**2) * v1
            + (self.var_p + (1 - self.p) ** 2) * v0
        )
        centre, half = self.p * m1 + (1 - self.p) * m0, self.z * math.sqrt(var)
        return centre - half, centre + half

    def half_width(self, l1: int, l0: int) -> float:
        """Half the width of :meth:`bounds`."""
        low, high = self.bounds(l1, l0)
        return (high - low) / 2

    def pick(self, l1: int, l0: int) -> bool | None:
        """The verdict the next label should fall on (True: yes), None when all are labelled."""
        extra = 1 + 2 * PRIOR
        gain1 = self.g1 / ((l1 + extra) * (l1 + extra + 1)) if l1 < self.n1 else -1.0
        gain0 = self.g0 / ((l0 + extra) * (l0 + extra + 1)) if l0 < self.n0 else -1.0
        if gain1 < 0 and gain0 < 0:
            return None
        return gain1 >= gain0


def _spread(q: float, labels: int) -> float:
    """The largest q (1 - q) within two standard errors of the estimate ``q``."""
    reach = 2 * math.sqrt(q * (1 - q) / (labels + 1 + 2 * PRIOR))
    nearest = min(max(0.5, q - reach), q + reach)
    return nearest * (1 - nearest)
