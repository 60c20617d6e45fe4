"""Graded metrics against people: average ranks and Spearman's rho on hand-computed examples
(ties included), its Fisher-z interval, the grade figures of a whole report, and yes/no judge
checks against graded metrics by the bootstrap of the kappa difference."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkweigh.core import (
    CaseResult,
    CheckKind,
    CheckRole,
    Confusion,
    HumanLabel,
    Verdict,
    align,
    average_ranks,
    errored,
    failed,
    kendall_tau_b,
    measured,
    pair_labels,
    passed,
    spearman,
    spearman_interval,
)
from checkweigh.core._grades import compare_kinds, grade_agreement

PROPS = settings(max_examples=200, deadline=None, database=None)


def test_tied_values_share_the_average_of_the_ranks_they_span() -> None:
    assert average_ranks([5, 4, 4, 3, 3, 3, 2, 2, 1, 0, 4, 3]) == [
        12, 10, 10, 6.5, 6.5, 6.5, 3.5, 3.5, 2, 1, 10, 6.5,
    ]  # fmt: skip
    assert average_ranks([2.5, 2.5]) == [1.5, 1.5]
    assert average_ranks([]) == []


@pytest.mark.parametrize(
    ("xs", "ys", "rho"),
    [
        # no ties: 1 - 6 * sum(d^2) / (n (n^2 - 1)) = 1 - 6 * 4 / 120
        ([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], 0.8),
        ([1, 2, 3, 4, 5], [5, 4, 3, 2, 1], -1.0),
        # ties: ranks x 1, 2.5, 2.5, 4 and y 1, 3, 2, 4 (mean 2.5): Sxy 4.5, Sxx 4.5, Syy 5
        ([1, 2, 2, 3], [1, 3, 2, 4], 4.5 / math.sqrt(4.5 * 5)),
        # ties on both sides: x ranks 1.5, 1.5, 3.5, 3.5; y ranks 1, 2.5, 2.5, 4
        ([0, 0, 5, 5], [1, 3, 3, 4], 3.0 / math.sqrt(4 * 4.5)),
    ],
)
def test_spearman_by_hand(xs: list[float], ys: list[float], rho: float) -> None:
    assert spearman(xs, ys) == pytest.approx(rho)
    assert spearman(ys, xs) == pytest.approx(rho)


def test_spearman_is_undefined_without_order_on_a_side() -> None:
    assert spearman([3, 3, 3], [1, 2, 3]) is None
    assert spearman([1, 2, 3], [4, 4, 4]) is None
    assert spearman([2], [5]) is None
    with pytest.raises(ValueError, match="expected pairs"):
        spearman([1, 2], [1])


@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=2, max_size=40).filter(
        lambda p: len({a for a, _ in p}) > 1 and len({b for _, b in p}) > 1
    )
)
@PROPS
def test_spearman_is_pearson_of_ranks_and_ignores_monotone_rescaling(
    pairs: list[tuple[int, int]],
) -> None:
    xs, ys = [a for a, _ in pairs], [b for _, b in pairs]
    rho = spearman(xs, ys)
    assert rho is not None
    assert -1 <= rho <= 1
    rx, ry = average_ranks(xs), average_ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    den = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    assert rho == pytest.approx(num / den)
    assert spearman([20 * x + 1 for x in xs], [y**3 for y in ys]) == pytest.approx(rho)


def test_the_fisher_interval() -> None:
    # z = atanh(0.5) = 0.5493, half-width 1.96 * sqrt(1.06 / 25) = 0.4036
    low, high = spearman_interval(0.5, 28) or (0, 0)
    assert low == pytest.approx(math.tanh(0.549306 - 0.403577), abs=1e-5)
    assert high == pytest.approx(math.tanh(0.549306 + 0.403577), abs=1e-5)
    assert (low, high) == pytest.approx((0.1447, 0.7411), abs=1e-4)
    assert spearman_interval(0.5, 3) is None
    assert spearman_interval(1.0, 50) is None


def test_grade_agreement_notes_what_is_missing() -> None:
    assert grade_agreement([], 3.75).note == "no human grades"
    one = grade_agreement([(4, 4)], 3.75)
    assert (one.spearman, one.mean_abs_diff, one.note) == (None, 0.0, "one grade pair")
    flat = grade_agreement([(4, 1), (4, 3), (4, 5)], 3.75)
    assert flat.note == "undefined: the judge gave one grade throughout"
    assert flat.mean_abs_diff == pytest.approx(5 / 3)  # 3 + 1 + 1 points over 3
    few = grade_agreement([(1, 1), (2, 3), (3, 2)], 3.75)
    assert few.spearman == pytest.approx(0.5)
    assert few.note == "only 3 grade pairs: no interval"
    exact = grade_agreement([(1, 0), (2, 1), (3, 2), (4, 5)], 3.75)
    assert (exact.spearman, exact.spearman_low) == (1.0, None)
    assert exact.note == "the ranks agree exactly: no Fisher interval"
    assert grade_agreement([(i % 5, (i * 3) % 5) for i in range(12)], 3).note is None


def _metric(score: float, threshold: float = 60) -> Verdict:
    """A graded judge's metric verdict: passed when score / 5 x 100 reaches the threshold."""
    line = f"response_delivery {score:g}"
    ok = score / 5 * 100 >= threshold
    return measured(passed(line) if ok else failed(line), {"score": score})


# (case, judge grade, human grade) for a metric passing at 60/100 = grade 3
GRADED = [
    ("c01", 5, 5), ("c02", 4, 5), ("c03", 4, 3), ("c04", 3, 3), ("c05", 3, 2), ("c06", 3, 4),
    ("c07", 2, 2), ("c08", 2, 1), ("c09", 1, 1), ("c10", 0, 0), ("c11", 4, 2), ("c12", 3, 3),
]  # fmt: skip
ROLES = {
    "tone": CheckRole(CheckKind.BINARY),
    "quality": CheckRole(CheckKind.GRADED),
    "quality.response_delivery": CheckRole(CheckKind.GRADED, 60.0),
    "booked": CheckRole(CheckKind.OTHER),
}


def test_a_report_with_a_graded_metric_a_yes_no_judge_and_a_code_check() -> None:
    results, labels = [], []
    for i, (case, judge, human) in enumerate(GRADED):
        tone = passed("polite") if i % 3 else failed("curt")
        results.append(
            CaseResult(
                case,
                0,
                {"tone": tone, "quality.response_delivery": _metric(judge), "booked": passed()},
                {},
                None,
                None,
            )
        )
        labels.append(HumanLabel(case, "quality.response_delivery", human >= 3, grade=human))
        labels.append(HumanLabel(case, "tone", bool(i % 3)))  # the human agrees every time
    labels.append(HumanLabel("c01", "booked", True))
    # a graded label without a grade counts for the yes/no figures only
    results.append(CaseResult("c13", 0, {"quality.response_delivery": _metric(1)}, {}, None, None))
    labels.append(HumanLabel("c13", "quality.response_delivery", True))
    results.append(
        CaseResult("c14", 0, {"quality.response_delivery": errored("no JSON")}, {}, None, None)
    )
    labels.append(HumanLabel("c14", "quality.response_delivery", True, grade=4))

    report = align(pair_labels(labels, results), ROLES)
    by_name = {c.check: c for c in report.checks}
    metric = by_name["quality.response_delivery"]
    assert metric.kind is CheckKind.GRADED
    # thresholded at grade 3: both yes c01-c04, c06, c12; judge-only yes c05, c11; c13 no/yes
    assert metric.confusion == Confusion(true_yes=6, false_yes=2, false_no=1, true_no=4)
    grades = metric.grades
    assert grades is not None
    assert grades.threshold == 3.0
    assert grades.graded == 12  # c13 has no grade, c14's verdict errored
    # Pearson of the ranks written out by hand (judge 12, 10, 10, 6.5, ...; human 11.5, ...)
    judge_ranks = [12, 10, 10, 6.5, 6.5, 6.5, 3.5, 3.5, 2, 1, 10, 6.5]
    human_ranks = [11.5, 11.5, 8, 8, 5, 10, 5, 2.5, 2.5, 1, 5, 8]
    m = 6.5
    sxy = sum((a - m) * (b - m) for a, b in zip(judge_ranks, human_ranks, strict=True))
    sxx = sum((a - m) ** 2 for a in judge_ranks)
    syy = sum((b - m) ** 2 for b in human_ranks)
    assert (sxy, sxx, syy) == (109.75, 135.5, 138.0)
    assert grades.spearman == pytest.approx(109.75 / math.sqrt(135.5 * 138))
    assert grades.spearman_low is not None
    assert grades.spearman_high is not None
    assert grades.spearman_low < grades.spearman < grades.spearman_high
    assert grades.mean_abs_diff == pytest.approx(7 / 12)
    # tau-b by counting the 66 pairs one by one
    sign = [
        (j1, h1, j2, h2) for i, (_, j1, h1) in enumerate(GRADED) for _, j2, h2 in GRADED[i + 1 :]
    ]
    score = sum(((j1 > j2) - (j1 < j2)) * ((h1 > h2) - (h1 < h2)) for j1, h1, j2, h2 in sign)
    tied_j = sum(j1 == j2 for j1, _, j2, _ in sign)
    tied_h = sum(h1 == h2 for _, h1, _, h2 in sign)
    assert grades.kendall_tau_b == pytest.approx(score / math.sqrt((66 - tied_j) * (66 - tied_h)))
    assert grades.note is None
    assert [(d.case_id, d.judge_grade, d.human_grade) for d in metric.disagreements] == [
        ("c05", 3, 2),
        ("c11", 4, 2),
        ("c13", 1, None),
    ]
    assert by_name["tone"].kind is CheckKind.BINARY
    assert by_name["tone"].grades is None
    assert by_name["tone"].kappa == 1.0
    assert by_name["booked"].kind is CheckKind.OTHER

    kinds = {k.kind: k for k in report.kinds}
    assert kinds[CheckKind.GRADED].checks == ["quality.response_delivery"]
    assert kinds[CheckKind.GRADED].figures.compared == 13
    assert kinds[CheckKind.OTHER].kappa_low is None  # not compared, no interval
    comparison = report.comparison
    assert comparison is not None
    assert comparison.labels == 25
    graded_kappa = kinds[CheckKind.GRADED].figures.kappa
    assert graded_kappa is not None
    assert comparison.difference == pytest.approx(1.0 - graded_kappa)
    # 12 and 13 labels cannot tell a kappa of 1 from one of 0.53: not claimed
    assert comparison.better is None
    assert comparison.difference_low is not None
    assert comparison.difference_low <= 0
    assert report.model_dump(mode="json")["comparison"]["better"] is None


def test_without_roles_the_report_is_the_yes_no_one() -> None:
    results = [CaseResult("a", 0, {"quality.x": _metric(4)}, {}, None, None)]
    report = align(pair_labels([HumanLabel("a", "quality.x", True, grade=4)], results))
    assert report.checks[0].grades is None
    assert report.checks[0].kind is None
    assert report.kinds == []
    assert report.comparison is None


def test_labels_that_differ_only_in_grade_conflict() -> None:
    labels = [HumanLabel("a", "q.m", True, grade=4), HumanLabel("a", "q.m", True, grade=5)]
    with pytest.raises(ValueError, match="conflicting labels"):
        list(pair_labels(labels, []))


@pytest.mark.parametrize(
    ("binary", "graded", "better"),
    [
        # 200 labels each: kappa 0.9 against 0.4, far apart
        (Confusion(true_yes=95, false_yes=5, false_no=5, true_no=95), None, CheckKind.BINARY),
        (None, Confusion(true_yes=95, false_yes=5, false_no=5, true_no=95), CheckKind.GRADED),
        # the same agreement on both sides: no winner
        (Confusion(true_yes=70, false_yes=30, false_no=30, true_no=70), None, None),
    ],
)
def test_compare_kinds_names_a_winner_only_when_the_interval_excludes_zero(
    binary: Confusion | None, graded: Confusion | None, better: CheckKind | None
) -> None:
    middling = Confusion(true_yes=70, false_yes=30, false_no=30, true_no=70)  # kappa 0.4
    b, g = binary or middling, graded or middling
    low_b, low_g, comparison = compare_kinds(b, g)
    assert comparison.better is better
    assert comparison.labels == 400
    assert comparison.difference == pytest.approx((b.kappa() or 0) - (g.kappa() or 0))
    assert low_b is not None
    assert low_b[0] < (b.kappa() or 0) < low_b[1]
    assert low_g is not None
    assert low_g[0] < (g.kappa() or 0) < low_g[1]
    assert compare_kinds(b, g) == (low_b, low_g, comparison)  # the same report twice


def test_a_score_of_a_yes_no_judge_is_not_read_as_a_grade() -> None:
    # a faithfulness check stores the share of supported statements as its score
    verdict = measured(passed("4 of 5 statements supported"), {"score": 0.8})
    results = [CaseResult("a", 0, {"grounded": verdict}, {}, None, None)]
    report = align(
        pair_labels([HumanLabel("a", "grounded", False)], results),
        {"grounded": CheckRole(CheckKind.BINARY)},
    )
    (check,) = report.checks
    assert check.grades is None
    assert [(d.judge, d.judge_grade) for d in check.disagreements] == [("yes", None)]


def _drawn(rng: random.Random, n: int, shares: list[float]) -> Confusion:
    counts = [0, 0, 0, 0]
    for cell in rng.choices(range(4), weights=shares, k=n):
        counts[cell] += 1
    return Confusion(true_yes=counts[0], false_yes=counts[1], false_no=counts[2], true_no=counts[3])


def test_equal_kinds_are_rarely_ranked_and_different_ones_usually_are() -> None:
    """The comparison's false claims stay near its 5% level when both kinds agree alike with
    people, and a real gap (kappa 0.9 against 0.5 on 100 labels each) is usually found."""
    rng = random.Random(11)
    alike = [0.45, 0.1, 0.1, 0.35]  # kappa 0.6 on both sides
    claims = sum(
        compare_kinds(_drawn(rng, 60, alike), _drawn(rng, 60, alike))[2].better is not None
        for _ in range(150)
    )
    assert claims <= 15  # at most 10% (about 5% expected)
    sharp, loose = [0.475, 0.025, 0.025, 0.475], [0.375, 0.125, 0.125, 0.375]
    found = [
        compare_kinds(_drawn(rng, 100, sharp), _drawn(rng, 100, loose))[2].better for _ in range(60)
    ]
    assert found.count(CheckKind.BINARY) >= 48  # at least 80%
    assert CheckKind.GRADED not in found


@pytest.mark.parametrize(
    ("xs", "ys", "tau"),
    [
        # no ties: 8 concordant and 2 discordant of 10 pairs
        ([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], (8 - 2) / 10),
        # a tie in x: 5 concordant, 1 tied pair in x, none in y: 5 / sqrt((6 - 1) * 6)
        ([1, 2, 2, 3], [1, 3, 2, 4], 5 / math.sqrt(30)),
        # ties on both sides: pairs (1,3), (1,4), (2,4) concordant, x tied in (1,2) and (3,4),
        # y tied in (2,3): 3 / sqrt((6 - 2) * (6 - 1))
        ([0, 0, 5, 5], [1, 3, 3, 4], 3 / math.sqrt(4 * 5)),
    ],
)
def test_kendall_tau_b_by_hand(xs: list[float], ys: list[float], tau: float) -> None:
    assert kendall_tau_b(xs, ys) == pytest.approx(tau)
    assert kendall_tau_b(ys, xs) == pytest.approx(tau)
    assert kendall_tau_b([4, 4, 4], [1, 2, 3]) is None
    assert kendall_tau_b([1], [1]) is None
