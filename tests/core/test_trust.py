"""The trust verdict on a judge check's agreement with people, and agreement between reviewers."""

from __future__ import annotations

from fractions import Fraction

import pytest

from checkweigh.core import (
    Calibration,
    Confusion,
    TrustStatus,
    calibrate,
    kappa_interval,
    reviewer_kappa,
    trust,
)


def _cal(tp: int, fp: int, fn: int, tn: int, judged: tuple[int, int] | None = None) -> Calibration:
    """Ten executions per label on each verdict (labels in proportion: the weighted kappa is
    the raw one), unless ``judged`` says how many yes and no verdicts the run had."""
    confusion = Confusion(true_yes=tp, false_yes=fp, false_no=fn, true_no=tn)
    yes, no = judged or (10 * (tp + fp), 10 * (fn + tn))
    return calibrate("tone", yes, no, confusion)


def test_too_few_labels_is_inconclusive_whatever_the_kappa() -> None:
    verdict = trust(_cal(30, 1, 1, 6), min_kappa=0.6, min_labels=50)
    assert verdict.status is TrustStatus.INCONCLUSIVE
    assert verdict.more_labels == 12
    assert verdict.needs == "12 more labels (50 required, 38 made)"


def test_trust_reads_the_kappa_the_whole_run_would_show_not_the_labelling_policys() -> None:
    # the same judge, labelled mostly on its no verdicts (as the queue does on a lenient
    # judge): the raw kappa moves with that choice, the weighted one stays the run's
    run = (900, 100)
    even = _cal(81, 9, 3, 7, judged=run)  # labels in proportion to the verdicts
    skewed = _cal(27, 3, 21, 49, judged=run)  # 30 yes, 70 no verdicts labelled
    assert even.kappa == pytest.approx(even.weighted_kappa)
    assert skewed.kappa is not None
    assert skewed.weighted_kappa is not None
    assert skewed.kappa > 0.5 > skewed.weighted_kappa
    assert skewed.weighted_kappa == pytest.approx(even.weighted_kappa)
    verdict = trust(skewed, min_kappa=0.5, min_labels=50)
    assert verdict.kappa == pytest.approx(skewed.weighted_kappa)
    assert verdict.status is not TrustStatus.TRUSTED


def test_no_label_on_one_verdict_is_inconclusive() -> None:
    verdict = trust(_cal(40, 10, 0, 0, judged=(900, 100)), min_kappa=0.5, min_labels=None)
    assert verdict.status is TrustStatus.INCONCLUSIVE
    assert verdict.needs.startswith("no label on the judge's no verdicts yet")


def test_a_judge_that_agrees_is_trusted() -> None:
    verdict = trust(_cal(45, 2, 3, 30), min_kappa=0.6, min_labels=50)
    assert verdict.kappa == pytest.approx(0.8705, abs=1e-4)
    assert verdict.kappa_low is not None
    assert verdict.kappa_high is not None
    assert 0.6 < verdict.kappa_low < verdict.kappa < verdict.kappa_high <= 1.0
    assert verdict.status is TrustStatus.TRUSTED
    assert verdict.needs == ""
    assert verdict.more_labels is None


def test_a_judge_below_the_bar_is_untrusted() -> None:
    # agreement 50 of 80, chance 0.508: kappa 0.24
    verdict = trust(_cal(30, 15, 15, 20), min_kappa=0.6, min_labels=50)
    assert verdict.kappa == pytest.approx(float(Fraction(5, 21)))
    assert verdict.status is TrustStatus.UNTRUSTED
    assert verdict.kappa_high is not None
    assert verdict.kappa_high < 0.6
    assert verdict.needs.startswith("kappa 0.24 (95% ")
    assert verdict.needs.endswith(" is below the required 0.6")


def test_a_kappa_whose_interval_straddles_the_bar_says_how_many_labels_would_settle_it() -> None:
    # kappa 0.45 on 70 labels: the interval reaches past 0.6
    cal = _cal(38, 8, 8, 16)
    verdict = trust(cal, min_kappa=0.6, min_labels=50)
    assert verdict.status is TrustStatus.INCONCLUSIVE
    assert verdict.kappa is not None
    assert verdict.kappa_low is not None
    assert verdict.kappa_high is not None
    assert verdict.kappa_low < 0.6 < verdict.kappa_high
    assert verdict.more_labels is not None
    assert "straddles the required 0.6: about" in verdict.needs
    # the estimate: the interval narrowed by the square root of the labels stops at the bar
    half = (verdict.kappa_high - verdict.kappa_low) / 2
    total = 70 + verdict.more_labels
    assert half * (70 / total) ** 0.5 <= 0.6 - verdict.kappa
    assert half * (70 / (total - 1)) ** 0.5 > 0.6 - verdict.kappa


def test_an_undefined_kappa_with_enough_labels_is_untrusted() -> None:
    verdict = trust(_cal(60, 0, 0, 0), min_kappa=0.6, min_labels=50)
    assert verdict.kappa is None
    assert verdict.status is TrustStatus.UNTRUSTED
    assert verdict.needs == "kappa is undefined on 60 labels (one answer throughout), 0.6 required"


def test_no_bar_and_no_labels() -> None:
    assert trust(_cal(30, 15, 15, 20), min_kappa=None, min_labels=None).status == "trusted"
    assert trust(_cal(30, 15, 15, 20), min_kappa=None, min_labels=50).status == "trusted"
    nothing = trust(_cal(0, 0, 0, 0), min_kappa=0.6, min_labels=None)
    assert nothing.status is TrustStatus.INCONCLUSIVE
    assert nothing.needs == "labels: none made, kappa 0.6 required"


def test_the_kappa_interval_is_deterministic_and_shrinks_with_labels() -> None:
    small = Confusion(true_yes=38, false_yes=8, false_no=8, true_no=16)
    large = Confusion(true_yes=380, false_yes=80, false_no=80, true_no=160)
    assert kappa_interval(small) == kappa_interval(small)
    low, high = kappa_interval(small)
    big_low, big_high = kappa_interval(large)
    assert low is not None
    assert high is not None
    assert big_low is not None
    assert big_high is not None
    assert low < big_low < large.kappa() < big_high < high  # type: ignore[operator]
    # the large-sample standard error ~ sqrt(po (1 - po) / n) / (1 - pe) at n = 700
    po, pe = Fraction(540, 700), Fraction(460 * 460 + 240 * 240, 700 * 700)
    se = float((po * (1 - po) / 700) ** 0.5 / (1 - pe))  # type: ignore[operator]
    assert (big_high - big_low) / 2 == pytest.approx(1.96 * se, rel=0.15)


def test_reviewer_kappa() -> None:
    pairs = [(True, True)] * 20 + [(False, False)] * 10 + [(True, False)] * 5 + [(False, True)] * 5
    # agreement 0.75, chance (25 * 25 + 15 * 15) / 40^2 = 0.53125: kappa 7/15
    assert reviewer_kappa(pairs) == pytest.approx(7 / 15)
    assert reviewer_kappa(iter(pairs)) == pytest.approx(7 / 15)
    assert reviewer_kappa([]) is None
    assert reviewer_kappa([(True, True)] * 4) is None
