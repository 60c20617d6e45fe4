"""Whether a judge agrees with people well enough to gate on, and agreement between reviewers."""

from __future__ import annotations

import math
from collections.abc import Iterable
from enum import StrEnum

from pydantic import BaseModel

from ._alignment import Confusion
from ._calibration import Calibration, WeightedConfusion, _kappa

KAPPA_RESAMPLES = 2000
"""Bootstrap resamples behind a kappa's interval."""

MAX_MORE_LABELS = 10_000
"""Beyond this many more labels, a straddling kappa is said to sit on its bar."""


class TrustStatus(StrEnum):
    """Whether a judge check's agreement with people clears its bar."""

    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"
    INCONCLUSIVE = "inconclusive"


class TrustVerdict(BaseModel):
    """A judge check measured against its agreement bar (``trust: {min_kappa, min_labels}``)."""

    check: str
    """The check's name."""
    status: TrustStatus
    """Trusted: enough labels and a kappa interval wholly at or above the bar. Untrusted: enough
    labels and the interval wholly below it, or the kappa undefined. Inconclusive: too few
    labels, or the interval straddles the bar."""
    labels: int
    """Labels compared with the judge's verdicts."""
    min_labels: int | None
    """The labels required; None for no requirement."""
    min_kappa: float | None
    """The kappa required; None for no requirement."""
    kappa: float | None
    """Cohen's kappa of the labels against the judge; None when undefined."""
    kappa_low: float | None
    """Lower end of the kappa's 95% bootstrap interval."""
    kappa_high: float | None
    """Upper end of the kappa's 95% bootstrap interval."""
    more_labels: int | None
    """More labels that would decide an inconclusive verdict: what ``min_labels`` still asks,
    or, for a straddling interval, an estimate (the interval's width taken to shrink as one
    over the square root of the labels). None when no count of labels (up to 10,000 more)
    would tell."""
    needs: str
    """In words, what is short or would decide; empty when trusted."""


def trust(cal: Calibration, *, min_kappa: float | None, min_labels: int | None) -> TrustVerdict:
    """Measure a judge check's agreement with people against its bar.

    The kappa's 95% interval is a percentile bootstrap: the four confusion counts resampled
    (multinomially, seeded, so the same labels always give the same interval); resamples whose
    kappa is undefined are left out.
    """
    n = cal.labels
    # the kappa the whole run would show: labels the queue picked from one verdict more often
    # than the other would move the raw kappa with the labelling policy, not the judge
    judged = (cal.judged_yes, cal.judged_no)
    kappa = cal.weighted_kappa if cal.weighted_kappa is not None else cal.kappa
    strata = judged if cal.weighted_kappa is not None else None
    l1 = cal.confusion.true_yes + cal.confusion.false_yes
    l0 = cal.confusion.false_no + cal.confusion.true_no
    low, high = kappa_interval(cal.confusion, judged=strata) if kappa is not None else (None, None)
    status, more, needs = TrustStatus.TRUSTED, None, ""
    if min_labels is not None and n < min_labels:
        status, more = TrustStatus.INCONCLUSIVE, min_labels - n
        needs = f"{more} more labels ({min_labels} required, {n} made)"
    elif min_kappa is None:
        pass
    elif n == 0:
        status, needs = TrustStatus.INCONCLUSIVE, f"labels: none made, kappa {min_kappa} required"
    elif 0 in (l1, l0) and cal.judged_yes and cal.judged_no:
        status = TrustStatus.INCONCLUSIVE
        side = "yes" if l1 == 0 else "no"
        needs = (
            f"no label on the judge's {side} verdicts yet: kappa needs labels on both, "
            f"{min_kappa} required"
        )
    elif kappa is None or low is None or high is None:
        status = TrustStatus.UNTRUSTED
        needs = f"kappa is undefined on {n} labels (one answer throughout), {min_kappa} required"
    elif high < min_kappa:
        status = TrustStatus.UNTRUSTED
        needs = f"kappa {kappa:.2f} (95% {low:.2f}-{high:.2f}) is below the required {min_kappa}"
    elif low < min_kappa:
        status = TrustStatus.INCONCLUSIVE
        gap = abs(kappa - min_kappa)
        if gap > 0:
            half = (high - low) / 2
            more = max(1, math.ceil(n * (half / gap) ** 2) - n)
        if more is not None and more > MAX_MORE_LABELS:
            more = None
        settle = (
            f": about {more} more labels would settle it"
            if more
            else ": it sits on the bar, more labels may never settle it"
        )
        needs = (
            f"kappa {kappa:.2f} (95% {low:.2f} to {high:.2f}) straddles the required "
            f"{min_kappa}{settle}"
        )
    return TrustVerdict(
        check=cal.check,
        status=status,
        labels=n,
        min_labels=min_labels,
        min_kappa=min_kappa,
        kappa=kappa,
        kappa_low=low,
        kappa_high=high,
        more_labels=more,
        needs=needs,
    )


def kappa_interval(
    confusion: Confusion,
    *,
    judged: tuple[int, int] | None = None,
    resamples: int = KAPPA_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float] | tuple[None, None]:
    """The 95% percentile bootstrap interval of Cohen's kappa; (None, None) when undefined.

    With ``judged`` (the run's judge-yes and judge-no executions), the kappa is the weighted
    one (each label standing for its verdict's share of the run, as
    :attr:`Calibration.weighted_kappa`) and the labels are resampled within each verdict, as
    they were drawn. The interval is widened, if need be, to hold the kappa itself.
    """
    import numpy as np

    c, n = confusion, confusion.n
    rng = np.random.default_rng(seed)
    if judged is None:
        kappa = confusion.kappa()
        if kappa is None:
            return None, None
        cells = np.array([c.true_yes, c.false_yes, c.false_no, c.true_no]) / n
        a, b, fn, d = rng.multinomial(n, cells, resamples).T.astype(float)
    else:
        l1, l0 = c.true_yes + c.false_yes, c.false_no + c.true_no
        if not l1 or not l0:
            return None, None
        w1, w0 = judged[0] / l1, judged[1] / l0
        kappa = _kappa(
            WeightedConfusion(
                true_yes=c.true_yes * w1,
                false_yes=c.false_yes * w1,
                false_no=c.false_no * w0,
                true_no=c.true_no * w0,
            )
        )
        if kappa is None:
            return None, None
        a = rng.binomial(l1, c.true_yes / l1, resamples).astype(float)
        fn = rng.binomial(l0, c.false_no / l0, resamples).astype(float)
        a, b, fn, d = a * w1, (l1 - a) * w1, fn * w0, (l0 - fn) * w0
        n = judged[0] + judged[1]
    judge_yes, human_yes = a + b, a + fn
    expected = judge_yes * human_yes + (n - judge_yes) * (n - human_yes)
    defined = ~np.isclose(expected, n * n, rtol=1e-12, atol=0.0)
    values = (n * (a + d) - expected)[defined] / (n * n - expected)[defined]
    if values.size == 0:
        return kappa, kappa
    low, high = (float(v) for v in np.quantile(values, [0.025, 0.975]))
    return min(low, kappa), max(high, kappa)


def reviewer_kappa(pairs: Iterable[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of two reviewers on the items both labelled; None when undefined.

    Args:
        pairs: One (first reviewer's, second reviewer's) answer per item, True for yes.
    """
    confusion = Confusion()
    for first, second in pairs:
        confusion.add(human=first, judge=second)
    return confusion.kappa()
