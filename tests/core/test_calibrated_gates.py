"""Gates over a judge check's calibration, on a run of 200 executions: decided by the
calibrated interval, not decided while it holds the bound (saying how many labels would
settle it), and not decided whatever they read while the judge is below its trust bar."""

from __future__ import annotations

import pytest

from checkweigh.core import (
    CheckCalibration,
    CheckStats,
    Confusion,
    Gate,
    GateMetric,
    RubricSummary,
    RunSummary,
    apply_gates,
    calibrate,
    trust,
)


def _summary(
    confusion: Confusion, *, bar: dict[str, float | int | None] | None = None
) -> RunSummary:
    figures = calibrate("tone", 170, 30, confusion)
    verdict = None if bar is None else trust(figures, **bar)  # type: ignore[arg-type]
    stats = CheckStats(check="tone", weight=1.0, passed=170, failed=30, pass_rate=0.85)
    rubric = RubricSummary(
        rubric="clarity",
        executions=200,
        scored=200,
        errored=0,
        checks=[stats],
        not_applicable=0,
        tcr=0.85,
        tcr_low=0.8,
        tcr_high=0.9,
        band="needs improvement",
        outcomes={},
        top_failing=[],
    )
    return RunSummary(
        executions=200,
        cases=200,
        errored_executions=0,
        agent_errors=0,
        rubrics=[rubric],
        slowest=[],
        calibration=[CheckCalibration(check="tone", figures=figures, trust=verdict)],
    )


CALIBRATED = Gate(GateMetric.CALIBRATED_PASS_RATE, minimum=0.7, check="tone")
RAW = Gate(GateMetric.CHECK_PASS_RATE, minimum=0.7, rubric="clarity", check="tone")
TCR = Gate(GateMetric.TCR, minimum=0.1, rubric="clarity")
ERRORS = Gate(GateMetric.ERRORED_EXECUTIONS, maximum=0)


def test_a_calibrated_gate_whose_interval_holds_its_bound_says_how_many_labels_would_decide() -> (
    None
):
    # ten labels: the judge's yes held on 8 of 8, its no on 1 of 2
    summary = apply_gates(_summary(Confusion(true_yes=8, false_no=1, true_no=1)), (CALIBRATED,))
    (gate,) = summary.gates
    cal = summary.calibration[0].figures
    assert cal.calibrated_low is not None
    assert cal.calibrated_high is not None
    assert cal.calibrated_low < 0.7 < cal.calibrated_high
    assert (gate.status, gate.passed, gate.decided) == ("not_decided", False, False)
    assert gate.needs is not None
    assert "more label(s) of tone would decide it (10 made)" in gate.needs
    assert summary.gates_passed is None
    assert summary.to_decide() == [f"tone calibrated_pass_rate >= 0.7: {gate.needs}"]


def test_enough_labels_decide_a_calibrated_gate_either_way() -> None:
    agreeing = Confusion(true_yes=80, false_no=2, true_no=14, false_yes=4)
    passed = apply_gates(_summary(agreeing), (CALIBRATED,))
    assert passed.gates[0].status == "passed"
    assert passed.gates_passed is True
    lenient = Confusion(true_yes=30, false_yes=50, false_no=1, true_no=19)  # yes, wrongly
    failed = apply_gates(_summary(lenient), (CALIBRATED, RAW))
    calibrated, raw = failed.gates
    assert calibrated.status == "failed"
    assert raw.status == "passed"  # the raw rate, 0.85, reads the lenient judge as right
    assert failed.gates_passed is False


def test_a_judge_below_its_bar_leaves_every_gate_resting_on_it_not_decided() -> None:
    few = Confusion(true_yes=8, true_no=2)
    summary = apply_gates(
        _summary(few, bar={"min_kappa": 0.6, "min_labels": 50}), (RAW, TCR, ERRORS)
    )
    raw, tcr, errors = summary.gates
    assert (raw.status, tcr.status, errors.status) == ("not_decided", "not_decided", "passed")
    assert raw.needs == (
        "tone's agreement with people is inconclusive: 40 more labels (50 required, 10 made)"
    )
    assert summary.case_gates_undecided == raw.needs
    assert summary.gates_passed is None


def test_a_failed_gate_decides_the_run_even_beside_one_not_decided() -> None:
    few = Confusion(true_yes=8, true_no=2)
    failing = Gate(GateMetric.ERRORED_EXECUTIONS, maximum=-1)
    summary = apply_gates(_summary(few, bar={"min_kappa": None, "min_labels": 50}), (RAW, failing))
    assert [g.status for g in summary.gates] == ["not_decided", "failed"]
    assert summary.gates_passed is False


def test_a_trusted_judge_leaves_its_gates_to_their_values() -> None:
    agreeing = Confusion(true_yes=45, true_no=14, false_no=1)
    summary = apply_gates(_summary(agreeing, bar={"min_kappa": 0.6, "min_labels": 50}), (RAW,))
    assert summary.calibration[0].trust is not None
    assert summary.calibration[0].trust.status.value == "trusted"
    assert summary.gates[0].status == "passed"


def _rubric(tcr: float, *checks: CheckStats) -> RubricSummary:
    return RubricSummary(
        rubric="clarity",
        executions=200,
        scored=200,
        errored=0,
        not_applicable=0,
        tcr=tcr,
        tcr_low=tcr - 0.05,
        tcr_high=tcr + 0.05,
        band="needs improvement",
        outcomes={},
        top_failing=[],
        checks=list(checks),
    )


def test_a_linear_tcr_is_corrected_by_the_calibrated_rates_and_a_nonlinear_one_says_why() -> None:
    from checkweigh.core import calibrated_tcr

    lenient = Confusion(true_yes=30, false_yes=50, false_no=1, true_no=19)
    cal = _summary(lenient).calibration
    figures = cal[0].figures
    assert figures.calibrated_pass_rate is not None
    tone = CheckStats(check="tone", weight=0.6, passed=170, failed=30, pass_rate=0.85)
    grounded = CheckStats(check="grounded", weight=0.4, passed=100, failed=100, pass_rate=0.5)
    rubric = _rubric(0.6 * 0.85 + 0.4 * 0.5, tone, grounded)
    value, why = calibrated_tcr(rubric, set(), cal)
    assert why is None
    assert value == pytest.approx(0.6 * figures.calibrated_pass_rate + 0.4 * 0.5)
    assert value < rubric.tcr  # the lenient judge's yes answers were worth less

    assert calibrated_tcr(rubric, {"grounded"}, cal) == (
        None,
        "the TCR is not corrected: a required check zeroes a case's score when it fails, "
        "so it is not linear in the pass rates",
    )
    partial = grounded.model_copy(update={"passed": 90, "not_applicable": 10})
    value, why = calibrated_tcr(_rubric(rubric.tcr or 0, tone, partial), set(), cal)
    assert value is None
    assert why is not None
    assert "did not decide on every scored execution" in why
    # a rubric without a labelled judge check has nothing to correct and nothing to say
    assert calibrated_tcr(_rubric(0.5, grounded), set(), cal) == (None, None)
