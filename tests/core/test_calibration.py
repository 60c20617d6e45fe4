"""Calibrated pass rates: the hand-computed Rogan-Gladen example, the degenerate runs, the label
budgets checked against the Monte Carlo interval, and properties of the estimator and the queue.

The interval's coverage over simulated judges is in ``test_calibration_coverage.py``.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkweigh.core import (
    Calibration,
    Confusion,
    calibrate,
    labels_for_width,
    labels_to_decide,
    next_stratum,
    projected_half_width,
    queue_order,
    random_order,
    wilson_interval,
)

PROPS = settings(max_examples=200, deadline=None, database=None)


def _confusion(tp: int, fp: int, fn: int, tn: int) -> Confusion:
    return Confusion(true_yes=tp, false_yes=fp, false_no=fn, true_no=tn)


def test_the_calibrated_rate_is_rogan_gladen_on_the_weighted_sensitivity_and_specificity() -> None:
    # a lenient judge: 850 yes and 150 no verdicts; 48 yes verdicts labelled (8 wrong), 12 no
    # verdicts labelled (3 wrong): the labels over-sample the no verdicts, so weights differ
    cal = calibrate("tone", 850, 150, _confusion(40, 8, 3, 9))
    n1, n0, n = Fraction(850), Fraction(150), Fraction(1000)
    q1, q0 = Fraction(40, 48), Fraction(3, 12)
    stratified = n1 / n * q1 + n0 / n * q0
    assert stratified == Fraction(179, 240)  # 0.7458...
    w1, w0 = n1 / 48, n0 / 12
    se = 40 * w1 / (40 * w1 + 3 * w0)
    sp = 9 * w0 / (9 * w0 + 8 * w1)
    p = n1 / n
    assert (p + sp - 1) / (se + sp - 1) == stratified
    assert cal.calibrated_pass_rate == pytest.approx(float(stratified), abs=1e-12)
    assert cal.sensitivity == pytest.approx(float(se), abs=1e-12)
    assert cal.specificity == pytest.approx(float(sp), abs=1e-12)
    # the reported figures are enough to redo it by hand with the textbook formula
    assert cal.raw_pass_rate is not None
    assert cal.sensitivity is not None
    assert cal.specificity is not None
    by_hand = (cal.raw_pass_rate + cal.specificity - 1) / (cal.sensitivity + cal.specificity - 1)
    assert by_hand == pytest.approx(cal.calibrated_pass_rate, abs=1e-12)
    w = cal.weighted
    assert (w.true_yes, w.false_yes, w.false_no, w.true_no) == pytest.approx(
        (float(40 * w1), float(8 * w1), float(3 * w0), float(9 * w0))
    )
    assert w.true_yes + w.false_yes + w.false_no + w.true_no == pytest.approx(1000)
    assert (cal.raw_low, cal.raw_high) == pytest.approx(wilson_interval(850, 1000))
    assert cal.kappa == cal.confusion.kappa()
    assert cal.labels == 60
    assert cal.note is None
    # the judge passes 85% but a person would pass about 75%, and the interval says so
    assert cal.calibrated_low is not None
    assert cal.calibrated_high is not None
    assert 0.6 < cal.calibrated_low < 0.7458 < cal.calibrated_high < cal.raw_pass_rate
    assert cal.sensitivity_low is not None
    assert cal.sensitivity_high is not None
    assert cal.sensitivity_low < cal.sensitivity < cal.sensitivity_high
    assert cal.specificity_low is not None
    assert cal.specificity_high is not None
    assert cal.specificity_low < cal.specificity < cal.specificity_high


def test_labels_in_proportion_give_the_plain_confusion_ratios() -> None:
    # 1 label in 20 on each verdict: every weight is 20
    cal = calibrate("tone", 800, 200, _confusion(30, 10, 2, 8))
    assert cal.sensitivity == pytest.approx(30 / 32)
    assert cal.specificity == pytest.approx(8 / 18)
    assert cal.calibrated_pass_rate == pytest.approx(0.8 * 30 / 40 + 0.2 * 2 / 10)


def test_the_interval_is_deterministic_and_settles_with_more_draws() -> None:
    confusion = _confusion(40, 8, 3, 9)
    first = calibrate("tone", 850, 150, confusion)
    assert calibrate("tone", 850, 150, confusion) == first
    other = calibrate("tone", 850, 150, confusion, seed=7)
    assert other.calibrated_low == pytest.approx(first.calibrated_low, abs=0.01)
    assert other.calibrated_high == pytest.approx(first.calibrated_high, abs=0.01)
    narrower = calibrate("tone", 850, 150, confusion, level=0.8)
    assert narrower.calibrated_low is not None
    assert first.calibrated_low is not None
    assert narrower.calibrated_low > first.calibrated_low


def test_a_run_without_verdicts_or_labels() -> None:
    empty = calibrate("tone", 0, 0, Confusion())
    assert empty.calibrated_pass_rate is None
    assert empty.raw_pass_rate is None
    assert empty.note == "no passed or failed verdicts: nothing to calibrate"
    unlabelled = calibrate("tone", 850, 150, Confusion())
    assert unlabelled.raw_pass_rate == 0.85
    assert unlabelled.calibrated_pass_rate == 0.5
    assert unlabelled.sensitivity is None
    assert unlabelled.specificity is None
    assert unlabelled.calibrated_low is not None
    assert unlabelled.calibrated_high is not None
    # nothing is known of the judge: the interval spans most of the range
    assert unlabelled.calibrated_low < 0.1
    assert unlabelled.calibrated_high > 0.9
    assert unlabelled.note is not None
    assert unlabelled.note.startswith("no labels")


def test_labels_on_one_verdict_only() -> None:
    cal = calibrate("tone", 850, 150, _confusion(45, 5, 0, 0))
    assert cal.sensitivity is None
    assert cal.specificity is None
    assert cal.calibrated_pass_rate == pytest.approx(0.85 * 0.9 + 0.15 * 0.5)
    assert cal.note == "no labels on the judge's no verdicts: their truth is unknown"
    assert cal.calibrated_low is not None
    assert cal.calibrated_high is not None
    # the unlabelled 15% could hold anything: about 15 points of width on its own
    assert cal.calibrated_high - cal.calibrated_low > 0.15


def test_a_judge_that_always_says_yes_is_calibrated_by_its_yes_labels() -> None:
    # Rogan-Gladen is 0/0 here (sensitivity 1, specificity 0); the stratified rate is q1
    cal = calibrate("tone", 500, 0, _confusion(36, 4, 0, 0))
    assert cal.calibrated_pass_rate == pytest.approx(0.9)
    assert (cal.sensitivity, cal.specificity) == (1.0, 0.0)
    assert cal.note is not None
    assert "sensitivity + specificity = 1" in cal.note


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((850, -1, Confusion()), r"must not be negative"),
        ((10, 150, _confusion(8, 3, 1, 1)), r"more labels than executions: 11 labels on 10"),
    ],
)
def test_impossible_counts_are_refused(args: tuple[int, int, Confusion], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        calibrate("tone", *args)


def test_bad_level_and_draws_are_refused() -> None:
    with pytest.raises(ValueError, match="level must be between 0 and 1, got 95"):
        calibrate("tone", 10, 10, Confusion(), level=95)
    with pytest.raises(ValueError, match="draws must be at least 100, got 10"):
        calibrate("tone", 10, 10, Confusion(), draws=10)


def _with_labels_at_the_estimates(cal: Calibration, more: int) -> Calibration:
    """``cal`` after ``more`` labels placed by the queue's rule, each answered so the counts
    keep the current shares (what the label budgets assume)."""
    c = cal.confusion.model_copy()
    q1 = c.true_yes / (c.true_yes + c.false_yes)
    q0 = c.false_no / (c.false_no + c.true_no)
    for _ in range(more):
        on_yes = next_stratum(cal.judged_yes, cal.judged_no, c)
        labelled, human_yes, share = (
            (c.true_yes + c.false_yes, c.true_yes, q1)
            if on_yes
            else (c.false_no + c.true_no, c.false_no, q0)
        )
        c.add(human=human_yes + 0.5 < share * (labelled + 1), judge=on_yes)
    return calibrate(cal.check, cal.judged_yes, cal.judged_no, c)


def test_labels_for_width_matches_the_monte_carlo_interval() -> None:
    cal = calibrate("tone", 850, 150, _confusion(40, 8, 3, 9))
    needed = labels_for_width(cal, 0.05)
    assert needed is not None
    assert 100 < needed < 400
    after = _with_labels_at_the_estimates(cal, needed)
    assert after.calibrated_low is not None
    assert after.calibrated_high is not None
    assert (after.calibrated_high - after.calibrated_low) / 2 == pytest.approx(0.05, abs=0.005)
    assert labels_for_width(cal, 0.2) == 0
    # a run of 60 executions cannot reach 2 points whatever is labelled
    small = calibrate("tone", 50, 10, _confusion(10, 2, 1, 2))
    assert labels_for_width(small, 0.02) is None


def test_labels_to_decide() -> None:
    cal = calibrate("tone", 850, 150, _confusion(40, 8, 3, 9))
    assert cal.calibrated_low is not None
    assert cal.calibrated_high is not None
    assert labels_to_decide(cal, cal.calibrated_high + 0.01) == 0
    assert labels_to_decide(cal, 0.6) == 0
    assert labels_to_decide(cal, cal.calibrated_pass_rate or 0.0) is None  # the estimate itself
    near, far = labels_to_decide(cal, 0.78), labels_to_decide(cal, 0.82)
    assert near is not None
    assert far is not None
    assert far < near
    after = _with_labels_at_the_estimates(cal, far)
    assert after.calibrated_pass_rate == pytest.approx(cal.calibrated_pass_rate, abs=0.002)
    assert after.calibrated_high == pytest.approx(0.82, abs=0.005)
    assert labels_to_decide(cal, 0.78, max_labels=near - 1) is None


def test_the_queue_spends_labels_where_the_rate_is_least_certain() -> None:
    # no labels yet: both verdicts are equally unknown and the bigger one weighs more
    assert next_stratum(850, 150, Confusion()) is True
    # the yes verdicts are settled (100 labels), the no verdicts have 2
    assert next_stratum(850, 150, _confusion(90, 10, 1, 1)) is False
    # a verdict whose executions are all labelled is never chosen
    assert next_stratum(850, 2, _confusion(0, 0, 1, 1)) is True
    with pytest.raises(ValueError, match="all 4 executions are labelled"):
        next_stratum(2, 2, _confusion(1, 1, 1, 1))


def test_queue_order_follows_the_rule_and_stays_put_as_labels_come_in() -> None:
    verdicts = [i % 7 != 0 for i in range(70)]  # 60 yes, 10 no
    labelled = {1, 2, 3, 7}
    confusion = _confusion(3, 0, 0, 1)
    order = queue_order(verdicts, labelled, confusion, seed=3)
    assert verdicts[order[0]] is next_stratum(60, 10, confusion)
    assert queue_order(verdicts, labelled, confusion, seed=3) == order
    # labelling the head leaves the rest of each verdict's order as it was
    head = order[0]
    grown = queue_order(verdicts, labelled | {head}, _confusion(3, 0, 0, 2), seed=3)
    for verdict in (True, False):
        assert [i for i in grown if verdicts[i] is verdict] == [
            i for i in order[1:] if verdicts[i] is verdict
        ]


@PROPS
@given(
    st.integers(0, 400),
    st.integers(0, 400),
    st.integers(0, 40),
    st.integers(0, 40),
    st.integers(0, 40),
    st.integers(0, 40),
)
def test_the_interval_holds_its_estimate(
    n1: int, n0: int, tp: int, fp: int, fn: int, tn: int
) -> None:
    tp, fp = min(tp, n1), min(fp, n1 - min(tp, n1))
    fn, tn = min(fn, n0), min(tn, n0 - min(fn, n0))
    cal = calibrate("c", n1, n0, _confusion(tp, fp, fn, tn), draws=1000)
    if n1 + n0 == 0:
        assert cal.calibrated_pass_rate is None
        return
    for point, low, high in (
        (cal.calibrated_pass_rate, cal.calibrated_low, cal.calibrated_high),
        (cal.sensitivity, cal.sensitivity_low, cal.sensitivity_high),
        (cal.specificity, cal.specificity_low, cal.specificity_high),
    ):
        if point is None:
            continue
        assert low is not None
        assert high is not None
        assert 0.0 <= low <= point <= high <= 1.0
    se, sp, p = cal.sensitivity, cal.specificity, cal.raw_pass_rate
    if se is not None and sp is not None and p is not None and abs(se + sp - 1) > 1e-6:
        assert (p + sp - 1) / (se + sp - 1) == pytest.approx(cal.calibrated_pass_rate, abs=1e-9)


@PROPS
@given(
    st.integers(1, 400),
    st.integers(1, 400),
    st.integers(0, 20),
    st.integers(0, 20),
    st.integers(0, 20),
    st.integers(0, 20),
    st.integers(0, 50),
    st.integers(0, 50),
)
def test_more_labels_never_widen_the_projected_interval(
    n1: int, n0: int, tp: int, fp: int, fn: int, tn: int, more_yes: int, more_no: int
) -> None:
    n1, n0 = n1 + tp + fp, n0 + fn + tn
    cal = calibrate("c", n1, n0, _confusion(tp, fp, fn, tn), draws=200)
    now = projected_half_width(cal)
    assert now is not None
    later = projected_half_width(cal, more_yes, more_no)
    assert later is not None
    assert later <= now
    assert projected_half_width(cal, more_yes + 1, more_no) <= later  # type: ignore[operator]
    assert projected_half_width(cal, more_yes, more_no + 1) <= later  # type: ignore[operator]


@PROPS
@given(st.lists(st.booleans(), max_size=120), st.data())
def test_every_unlabelled_execution_is_queued_once(
    verdicts: list[bool], data: st.DataObject
) -> None:
    labelled = data.draw(st.sets(st.integers(0, max(len(verdicts) - 1, 0)))) if verdicts else set()
    c = Confusion()
    for i in labelled:
        c.add(human=data.draw(st.booleans()), judge=verdicts[i])
    seed = data.draw(st.integers(0, 5))
    unlabelled = sorted(set(range(len(verdicts))) - labelled)
    assert sorted(queue_order(verdicts, labelled, c, seed=seed)) == unlabelled
    assert sorted(random_order(verdicts, labelled, seed=seed)) == unlabelled
