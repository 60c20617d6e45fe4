"""Judge alignment: textbook kappa values, the degenerate cases, label matching over repeats,
and properties of the figures against a direct computation with fractions."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkweigh.core import (
    AlignmentFigures,
    CaseResult,
    Confusion,
    HumanLabel,
    KappaBand,
    LabelPair,
    NotCompared,
    Verdict,
    align,
    errored,
    failed,
    kappa_band,
    not_applicable,
    pair_labels,
    passed,
)

PROPS = settings(max_examples=300, deadline=None, database=None)


def _result(
    case_id: str, repeat: int = 0, agent_error: str | None = None, **verdicts: Verdict
) -> CaseResult:
    return CaseResult(case_id, repeat, verdicts, {}, None, agent_error)


@pytest.mark.parametrize(
    ("counts", "kappa", "accuracy"),
    [
        # Wikipedia, "Cohen's kappa": 50 proposals, two readers: p_o 0.7, p_e 0.5
        ((20, 10, 5, 15), 0.4, 0.7),
        # the two tables with equal p_o (0.6) and different kappas
        ((45, 15, 25, 15), 0.06 / 0.46, 0.6),
        ((25, 35, 5, 35), 0.14 / 0.54, 0.6),
        # perfect agreement, and perfect disagreement with balanced answers
        ((3, 0, 0, 2), 1.0, 1.0),
        ((0, 2, 2, 0), -1.0, 0.0),
    ],
)
def test_textbook_kappas(counts: tuple[int, int, int, int], kappa: float, accuracy: float) -> None:
    ty, fy, fn, tn = counts
    figures = AlignmentFigures.of(Confusion(true_yes=ty, false_yes=fy, false_no=fn, true_no=tn), {})
    assert figures.kappa == pytest.approx(kappa)
    assert figures.accuracy == pytest.approx(accuracy)
    assert figures.kappa_note is None


def test_the_first_textbook_example_in_full() -> None:
    figures = AlignmentFigures.of(Confusion(true_yes=20, false_yes=10, false_no=5, true_no=15), {})
    assert figures.compared == 50
    assert figures.precision == pytest.approx(20 / 30)
    assert figures.recall == pytest.approx(20 / 25)
    assert figures.kappa_band is KappaBand.FAIR
    assert figures.accuracy_low == pytest.approx(0.5625, abs=1e-4)
    assert figures.accuracy_high == pytest.approx(0.8090, abs=1e-4)


@pytest.mark.parametrize(
    ("confusion", "answer"),
    [(Confusion(true_yes=7), "yes"), (Confusion(true_no=4), "no")],
)
def test_kappa_is_undefined_when_both_always_gave_the_same_answer(
    confusion: Confusion, answer: str
) -> None:
    figures = AlignmentFigures.of(confusion, {})
    assert figures.accuracy == 1.0
    assert figures.kappa is None
    assert figures.kappa_band is None
    assert figures.kappa_note == f"undefined: the human and the judge both said {answer} every time"


def test_one_sided_answers_that_disagree_give_kappa_zero() -> None:
    """The human always yes, the judge always no: p_e is 0, not 1, so kappa is defined."""
    figures = AlignmentFigures.of(Confusion(false_no=5), {})
    assert figures.kappa == 0.0
    assert figures.kappa_band is KappaBand.SLIGHT
    assert figures.kappa_note == "0 by construction: the human said yes every time"
    assert figures.precision is None  # the judge never said yes
    assert figures.recall == 0.0


@pytest.mark.parametrize(
    ("confusion", "note"),
    [
        (Confusion(true_yes=3, false_no=2), "0 by construction: the human said yes every time"),
        (Confusion(true_no=3, false_yes=2), "0 by construction: the human said no every time"),
        (Confusion(true_yes=3, false_yes=2), "0 by construction: the judge said yes every time"),
        (Confusion(true_no=3, false_no=2), "0 by construction: the judge said no every time"),
    ],
)
def test_kappa_is_zero_whatever_the_other_side_says_when_one_side_never_varies(
    confusion: Confusion, note: str
) -> None:
    figures = AlignmentFigures.of(confusion, {})
    assert figures.kappa == 0.0
    assert figures.accuracy == pytest.approx(0.6)
    assert figures.kappa_note == note


def test_nothing_compared() -> None:
    figures = AlignmentFigures.of(Confusion(), {NotCompared.JUDGE_ERRORED: 2})
    assert figures.compared == 0
    assert (figures.accuracy, figures.kappa, figures.precision, figures.recall) == (None,) * 4
    assert (figures.accuracy_low, figures.accuracy_high) == (None, None)
    assert figures.kappa_note == "nothing compared"
    assert figures.not_compared == {NotCompared.JUDGE_ERRORED: 2}


@pytest.mark.parametrize(
    ("kappa", "band"),
    [
        (-0.01, KappaBand.POOR),
        (0.0, KappaBand.SLIGHT),
        (0.2, KappaBand.SLIGHT),
        (0.21, KappaBand.FAIR),
        (0.4, KappaBand.FAIR),
        (0.6, KappaBand.MODERATE),
        (0.61, KappaBand.SUBSTANTIAL),
        (0.8, KappaBand.SUBSTANTIAL),
        (0.81, KappaBand.ALMOST_PERFECT),
        (1.0, KappaBand.ALMOST_PERFECT),
    ],
)
def test_landis_koch_bands(kappa: float, band: KappaBand) -> None:
    assert kappa_band(kappa) is band


def test_a_whole_report_over_repeats_and_missing_verdicts() -> None:
    labels = [
        HumanLabel("a", "tone", True),  # every repeat of a
        HumanLabel("a", "tone", False, repeat=1, note="second reply was rude"),  # overrides
        HumanLabel("b", "tone", False),
        HumanLabel("c", "tone", True),  # the judge errored
        HumanLabel("d", "tone", True),  # not applicable
        HumanLabel("a", "grounded", True),
        HumanLabel("b", "grounded", True),  # no such check in the run
        HumanLabel("crash", "tone", True),  # the agent failed: no verdicts
        HumanLabel("a", "tone", True, repeat=5),  # no such repeat
        HumanLabel("zzz", "tone", False),  # no such case
    ]
    results = [
        _result("a", 0, tone=passed("friendly"), grounded=passed("all in trace")),
        _result("a", 1, tone=passed("polite enough"), grounded=failed("invented a room")),
        _result("b", 0, tone=passed("fine")),
        _result("c", 0, tone=errored("no JSON", "judge answer unusable")),
        _result("d", 0, tone=not_applicable("no reply")),
        _result("crash", 0, agent_error="boom"),
        _result("unlabelled", 0, tone=failed("curt")),
    ]
    report = align(pair_labels(labels, results))
    assert report.pairs == 11
    assert [c.check for c in report.checks] == ["grounded", "tone"]
    grounded, tone = report.checks

    assert tone.confusion == Confusion(true_yes=1, false_yes=2)
    assert tone.compared == 3
    assert tone.accuracy == pytest.approx(1 / 3)
    assert tone.kappa == 0.0  # the judge always said yes
    assert tone.precision == pytest.approx(1 / 3)
    assert tone.recall == 1.0
    assert tone.not_compared == {
        NotCompared.JUDGE_ERRORED: 1,
        NotCompared.NOT_APPLICABLE: 1,
        NotCompared.AGENT_ERRORED: 1,
        NotCompared.REPEAT_MISSING: 1,
        NotCompared.CASE_MISSING: 1,
    }
    assert [
        (d.case_id, d.repeat, d.human, d.judge, d.reason, d.note) for d in tone.disagreements
    ] == [
        ("a", 1, "no", "yes", "polite enough", "second reply was rude"),
        ("b", 0, "no", "yes", "fine", ""),
    ]

    assert grounded.confusion == Confusion(true_yes=1, false_no=1)
    assert grounded.not_compared == {NotCompared.CHECK_MISSING: 1}
    assert grounded.kappa == 0.0
    assert [(d.case_id, d.repeat, d.judge, d.reason) for d in grounded.disagreements] == [
        ("a", 1, "no", "invented a room")
    ]

    overall = report.overall
    assert overall.confusion == Confusion(true_yes=2, false_yes=2, false_no=1)
    assert overall.compared == 5
    assert overall.accuracy == pytest.approx(0.4)
    assert sum(overall.not_compared.values()) == 6
    assert report.model_dump(mode="json")["checks"][1]["not_compared"]["judge_errored"] == 1


def test_repeated_identical_labels_are_one_and_conflicting_ones_are_refused() -> None:
    same = [HumanLabel("a", "tone", True), HumanLabel("a", "tone", True)]
    pairs = list(pair_labels(same, [_result("a", tone=passed())]))
    assert len(pairs) == 1
    clash = [HumanLabel("a", "tone", True), HumanLabel("a", "tone", False)]
    with pytest.raises(ValueError, match="conflicting labels"):
        list(pair_labels(clash, []))


def test_an_unmatched_repeat_specific_label_keeps_its_repeat() -> None:
    (pair,) = pair_labels([HumanLabel("a", "tone", True, repeat=3)], [_result("a")])
    assert pair == LabelPair(HumanLabel("a", "tone", True, repeat=3), 3, NotCompared.REPEAT_MISSING)


# --- properties -------------------------------------------------------------------------

counts = st.integers(min_value=0, max_value=60)
confusions = st.builds(
    Confusion, true_yes=counts, false_yes=counts, false_no=counts, true_no=counts
)


def _reference_kappa(c: Confusion) -> Fraction | None:
    n = c.n
    if n == 0:
        return None
    p_o = Fraction(c.true_yes + c.true_no, n)
    judge_yes = Fraction(c.true_yes + c.false_yes, n)
    human_yes = Fraction(c.true_yes + c.false_no, n)
    p_e = judge_yes * human_yes + (1 - judge_yes) * (1 - human_yes)
    if p_e == 1:
        return None
    return (p_o - p_e) / (1 - p_e)


@PROPS
@given(confusions)
def test_kappa_matches_the_definition(c: Confusion) -> None:
    expected = _reference_kappa(c)
    got = AlignmentFigures.of(c, {}).kappa
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(float(expected), abs=1e-12)
        assert -1.0 <= got <= 1.0


@PROPS
@given(confusions)
def test_figures_stay_in_range_and_add_up(c: Confusion) -> None:
    f = AlignmentFigures.of(c, {})
    assert f.compared == c.n
    if c.n == 0:
        assert f.accuracy is None
        return
    assert f.accuracy == pytest.approx((c.true_yes + c.true_no) / c.n)
    assert f.accuracy_low is not None
    assert f.accuracy_high is not None
    assert f.accuracy_low <= f.accuracy <= f.accuracy_high
    for value in (f.precision, f.recall):
        assert value is None or 0.0 <= value <= 1.0
    assert (f.precision is None) == (c.true_yes + c.false_yes == 0)
    assert (f.recall is None) == (c.true_yes + c.false_no == 0)
    one_sided = {c.true_yes + c.false_yes, c.true_yes + c.false_no} & {0, c.n}
    assert (f.kappa_note is not None) == bool(one_sided)
    if f.kappa_note is not None and f.kappa is not None:
        assert f.kappa == 0.0
    # kappa is 1 exactly when every pair agrees (and it is defined)
    if f.kappa is not None:
        assert (f.kappa == 1.0) == (c.false_yes + c.false_no == 0)
        assert f.kappa_band is kappa_band(f.kappa)


@PROPS
@given(confusions)
def test_kappa_is_symmetric_in_the_raters_and_in_yes_and_no(c: Confusion) -> None:
    kappa = c.kappa()
    swapped_raters = Confusion(
        true_yes=c.true_yes, false_yes=c.false_no, false_no=c.false_yes, true_no=c.true_no
    )
    swapped_answers = Confusion(
        true_yes=c.true_no, false_yes=c.false_no, false_no=c.false_yes, true_no=c.true_yes
    )
    for other in (swapped_raters.kappa(), swapped_answers.kappa()):
        if kappa is None:
            assert other is None
        else:
            assert other == pytest.approx(kappa, abs=1e-12)


verdicts = st.sampled_from(
    [passed("yes"), failed("no"), not_applicable("n/a"), errored("bad JSON", "unusable")]
)


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[HumanLabel], list[CaseResult]]:
    cases = [f"c{i}" for i in range(draw(st.integers(1, 6)))]
    checks = ["tone", "grounded", "helpful"]
    repeats = draw(st.integers(1, 3))
    results = [
        _result(
            case,
            r,
            **{ch: draw(verdicts) for ch in checks if draw(st.booleans())},
        )
        for case in cases
        for r in range(repeats)
    ]
    keys = st.tuples(
        st.sampled_from([*cases, "missing"]),
        st.sampled_from(checks),
        st.one_of(st.none(), st.integers(0, repeats)),
    )
    chosen = draw(st.lists(keys, unique=True, max_size=20))
    labels = [HumanLabel(c, ch, draw(st.booleans()), r) for c, ch, r in chosen]
    return labels, results


@PROPS
@given(runs())
def test_every_pair_is_either_compared_or_counted_as_not_compared(
    data: tuple[list[HumanLabel], list[CaseResult]],
) -> None:
    labels, results = data
    pairs = list(pair_labels(labels, results))
    report = align(pairs)
    accounted = sum(c.compared + sum(c.not_compared.values()) for c in report.checks)
    assert accounted == report.pairs == len(pairs)
    assert report.overall.compared == sum(c.compared for c in report.checks)
    # every label is used at least once; a case-wide one at most once per repeat
    assert {p.label for p in pairs} == set(labels)
    for check in report.checks:
        wrong = check.confusion.false_yes + check.confusion.false_no
        assert len(check.disagreements) == wrong
        if check.accuracy is not None:
            assert check.accuracy == pytest.approx(1 - wrong / check.compared)
