"""The calibrated interval's coverage over simulated judges with known error rates.

Each simulated run draws N executions from a population whose true pass rate is known, lets a
judge with a known sensitivity and specificity answer each, and reveals the truth of L of them
(labels), picked in random order or by the labelling queue's rule. Over 1,000 runs the 95%
interval must cover the true pass rate 93-97% of the time; the raw rate's Wilson interval,
which trusts the judge, must miss it on a biased judge.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

from checkweigh.core import Confusion, calibrate, next_stratum, queue_order, wilson_interval

RUNS = 1000


class Judge(NamedTuple):
    """A population and a judge of it."""

    pass_rate: float
    sensitivity: float
    specificity: float


BALANCED = Judge(0.6, 0.85, 0.80)
"""The judge says yes on 59% of executions."""
LENIENT = Judge(0.8, 0.95, 0.55)
"""The imbalanced case: the judge says yes on 85% (0.8 * 0.95 + 0.2 * 0.45)."""


def _labelled(
    rng: np.random.Generator, yes: list[int], no: list[int], labels: int, queue: bool
) -> Confusion:
    """Labels on ``labels`` executions of a run whose yes verdicts hold ``yes`` = [human yes,
    human no] and no verdicts ``no`` = [human yes, human no]."""
    if not queue:
        tp, fp, fn, tn = rng.multivariate_hypergeometric([*yes, *no], labels)
        return Confusion(true_yes=tp, false_yes=fp, false_no=fn, true_no=tn)
    # the queue as the labelling page uses it: the rule recomputed after every label, and a
    # random unlabelled execution of the verdict it picks
    confusion, left = Confusion(), {True: list(yes), False: list(no)}
    n1, n0 = sum(yes), sum(no)
    for _ in range(labels):
        verdict = next_stratum(n1, n0, confusion)
        human_yes, human_no = left[verdict]
        human = bool(rng.random() < human_yes / (human_yes + human_no))
        left[verdict][0 if human else 1] -= 1
        confusion.add(human=human, judge=verdict)
    return confusion


def _coverage(judge: Judge, n: int, labels: int, *, queue: bool, seed: int) -> tuple[float, float]:
    """(calibrated, raw) shares of ``RUNS`` simulated runs whose interval holds the true rate."""
    rng = np.random.default_rng(seed)
    truth = rng.random((RUNS, n)) < judge.pass_rate
    says_yes = np.where(
        truth, rng.random((RUNS, n)) < judge.sensitivity, rng.random((RUNS, n)) >= judge.specificity
    )
    covered = raw_covered = 0
    for run in range(RUNS):
        t, j = truth[run], says_yes[run]
        yes = [int((t & j).sum()), int((~t & j).sum())]
        no = [int((t & ~j).sum()), int((~t & ~j).sum())]
        confusion = _labelled(rng, yes, no, labels, queue)
        cal = calibrate("c", sum(yes), sum(no), confusion, draws=2000, seed=run)
        assert cal.calibrated_low is not None
        assert cal.calibrated_high is not None
        covered += cal.calibrated_low <= judge.pass_rate <= cal.calibrated_high
        low, high = wilson_interval(sum(yes), n)
        raw_covered += low <= judge.pass_rate <= high
    return covered / RUNS, raw_covered / RUNS


@pytest.mark.parametrize("queue", [False, True], ids=["random", "queue"])
@pytest.mark.parametrize(
    ("judge", "n", "labels"),
    [(BALANCED, 500, 100), (LENIENT, 2000, 150)],
    ids=["balanced", "lenient"],
)
def test_the_interval_covers_the_true_pass_rate(
    judge: Judge, n: int, labels: int, queue: bool
) -> None:
    covered, raw = _coverage(judge, n, labels, queue=queue, seed=24)
    assert 0.93 <= covered <= 0.97
    if judge is LENIENT:
        # the judge passes 85% where 80% deserve it: the raw interval is nowhere near
        assert raw < 0.8


@pytest.mark.parametrize("queue", [False, True], ids=["random", "queue"])
def test_with_few_labels_the_coverage_dips_a_little(queue: bool) -> None:
    # 40 labels, about 6 of them on the no verdicts: the Jeffreys posterior covers about 94%
    # here (measured over 8 seeds of 1,000 runs: 93.7-94.5% on average, single samples of
    # 1,000 from 92.2% to 95.1%), the same with the labels' split fixed in advance, so the dip
    # is the small counts', not the queue's
    covered, raw = _coverage(LENIENT, 2000, 40, queue=queue, seed=24)
    assert 0.91 <= covered <= 0.97
    assert raw < 0.8


def test_the_queue_starts_where_its_rule_points() -> None:
    # the coverage runs call the rule directly, label by label; the page reads queue_order
    rng = np.random.default_rng(5)
    verdicts = [bool(v) for v in rng.random(300) < 0.85]
    labelled = {i for i in range(300) if rng.random() < 0.1}
    confusion = Confusion()
    for i in sorted(labelled):
        confusion.add(human=bool(rng.random() < 0.7), judge=verdicts[i])
    order = queue_order(verdicts, labelled, confusion, seed=1)
    n1 = sum(verdicts)
    assert verdicts[order[0]] is next_stratum(n1, 300 - n1, confusion)
