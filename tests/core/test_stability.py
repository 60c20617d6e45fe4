"""Gate stability: judge verdicts flipped with their per-rerun probability, rescored with the
real scoring code, decided by the pass policy and tallied into the run's gates."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkweigh.core import (
    CaseResult,
    PassMode,
    PassPolicy,
    Rubric,
    ScoreStatus,
    Verdict,
    answer_noise_from_share,
    errored,
    expected_minority_share,
    failed,
    majority_flip,
    measured,
    noise_model,
    not_applicable,
    passed,
    rubrics_from_snapshot,
    score_rubric,
    simulate_reruns,
)

SIMS = 4000


def snapshot(weights: dict[str, float], **extra: Any) -> dict[str, Any]:
    """A run snapshot's rubrics entry, as Suite.snapshot() stores it."""
    return {"rubrics": [{"name": "completion", "weights": weights, **extra}]}


def result(
    rubrics: dict[str, Rubric], case_id: str, verdicts: dict[str, Verdict], **status: ScoreStatus
) -> CaseResult:
    """A stored result: every rubric scored by the real code (or kept as ``status`` says)."""
    scores = {}
    for name, rubric in rubrics.items():
        scored = score_rubric(rubric, verdicts, None)
        if name in status:  # e.g. a rubric whose `when` guard was false for this case
            scored = scored._replace(status=status[name], score=None, outcome=None)
        scores[name] = scored
    return CaseResult(case_id, 0, verdicts, scores)


def within(p: float, expected: float, sims: int = SIMS) -> bool:
    """``p`` is within four Monte Carlo standard errors of ``expected``."""
    return abs(p - expected) <= 4 * math.sqrt(expected * (1 - expected) / sims) + 1e-9


def test_one_judge_check_flips_the_case_as_often_as_the_judge_flips() -> None:
    rubrics = rubrics_from_snapshot(snapshot({"tone": 1.0}))
    results = [result(rubrics, "c1", {"tone": passed("friendly")})]
    noise = noise_model(results, {"tone": 1}, default=0.2)
    assert [(n.check, n.source, n.flip, n.tie) for n in noise] == [("tone", "given", 0.2, 0.0)]

    report = simulate_reruns(results, rubrics, PassPolicy(), noise, simulations=SIMS, seed=1)
    (case,) = report.cases
    assert (case.case_id, case.observed, case.score_pct) == ("c1", "passed", 100.0)
    assert within(case.flip.p, 0.2)
    assert case.flip.se == pytest.approx(math.sqrt(case.flip.p * (1 - case.flip.p) / SIMS))
    assert case.pass_chance == pytest.approx(1 - case.flip.p)
    assert (case.score_low, case.score_high) == (0.0, 100.0)
    # one case: the run's gates flip exactly when it does
    assert [g.flip.p for g in report.gates] == [case.flip.p] * 3
    assert report.metrics.mean == pytest.approx(100 * (1 - case.flip.p))
    assert report.simulations == SIMS


def test_a_score_exactly_at_the_pass_threshold_fails_on_any_lost_point() -> None:
    # 3 of 4 equal checks pass: 75, exactly the pass threshold, so the case passes; losing the
    # passing judge check drops it to 50 (fail), gaining the failing one lifts it to 100 (pass)
    weights = {"right_time": 0.25, "right_people": 0.25, "grounded": 0.25, "polite": 0.25}
    rubrics = rubrics_from_snapshot(snapshot(weights))
    verdicts = {
        "right_time": passed(),
        "right_people": passed(),
        "grounded": passed(),
        "polite": failed("curt"),
    }
    results = [result(rubrics, "edge", verdicts)]
    policy = PassPolicy(pass_threshold=75.0, metrics_pass_threshold=75.0)
    noise = noise_model(results, {"grounded": 1, "polite": 1}, default=0.1)
    report = simulate_reruns(results, rubrics, policy, noise, simulations=SIMS, seed=2)

    (case,) = report.cases
    assert (case.observed, case.score_pct) == ("passed", 75.0)
    assert within(case.flip.p, 0.1)  # only the passing judge check matters
    assert case.noisy_checks == ["grounded", "polite"]
    assert (case.score_low, case.score_high) == (50.0, 100.0)
    assert any(w.startswith("pass threshold 75 sits inside") for w in report.warnings)
    assert any(w.startswith("metrics pass threshold 75 sits inside") for w in report.warnings)
    assert all(
        w.endswith("pick the cutoff and the number of checks together") for w in report.warnings
    )


def test_a_threshold_clear_of_the_noise_is_not_flagged() -> None:
    rubrics = rubrics_from_snapshot(snapshot({"right_time": 0.9, "polite": 0.1}))
    results = [
        result(rubrics, f"c{i}", {"right_time": passed(), "polite": passed()}) for i in range(5)
    ]
    noise = noise_model(results, {"polite": 1}, default=0.3)
    policy = PassPolicy(
        pass_threshold=75.0, metrics_pass_threshold=80.0, cases_pass_threshold=100.0
    )
    report = simulate_reruns(results, rubrics, policy, noise, simulations=500)
    assert [c.flip.p for c in report.cases] == [0.0] * 5  # 90 >= 75 whatever the judge says
    assert [g.flip.p for g in report.gates] == [0.0, 0.0, 0.0]
    assert report.warnings == []
    assert report.metrics.low is not None
    assert report.metrics.low >= 90.0  # the mean of five scores of 90 or 100
    assert report.metrics.high == 100.0
    assert not report.metrics.threshold_inside


def test_required_checks_not_applicable_and_errored_verdicts() -> None:
    rubrics = rubrics_from_snapshot(
        snapshot(
            {"right_time": 0.6, "grounded": 0.2, "polite": 0.2},
            required=["grounded"],
            not_applicable={"polite": "pass"},
        )
    )
    results = [
        result(
            rubrics, "required", {"right_time": passed(), "grounded": passed(), "polite": passed()}
        ),
        result(
            rubrics,
            "na",
            {
                "right_time": passed(),
                "grounded": errored("timeout"),
                "polite": not_applicable("no reply"),
            },
        ),
        CaseResult("agent", 0, {}, {}, agent_error="boom"),
    ]
    noise = noise_model(results, {"grounded": 1, "polite": 1}, default=0.25)
    report = simulate_reruns(results, rubrics, PassPolicy(), noise, simulations=SIMS, seed=3)
    cases = {c.case_id: c for c in report.cases}
    # a flipped polite leaves 80 >= 75 (a pass); a flipped grounded fails the case though its
    # score stays 80, because grounded is required: the case flips with grounded alone
    assert within(cases["required"].flip.p, 0.25)
    # an errored and a not-applicable verdict stay as they are: nothing can change
    assert (cases["na"].observed, cases["na"].flip.p, cases["na"].noisy_checks) == (
        "errored",
        0.0,
        [],
    )
    assert (cases["agent"].observed, cases["agent"].flip.p) == ("errored", 0.0)
    assert report.cases[0].case_id == "required"  # flakiest first


def test_a_rubric_that_did_not_apply_stays_not_applicable() -> None:
    rubrics = rubrics_from_snapshot(
        {
            "rubrics": [
                {"name": "completion", "weights": {"right_time": 1.0}},
                {"name": "recovery", "weights": {"apologised": 1.0}, "when": ["stage == failed"]},
            ]
        }
    )
    verdicts = {"right_time": passed(), "apologised": failed("no apology")}
    results = [result(rubrics, "c1", verdicts, recovery=ScoreStatus.NOT_APPLICABLE)]
    noise = noise_model(results, {"apologised": 1}, default=0.5)
    report = simulate_reruns(results, rubrics, PassPolicy(), noise, simulations=200)
    assert report.cases[0].flip.p == 0.0
    assert (report.metrics.low, report.metrics.high) == (100.0, 100.0)


def test_even_samples_split_evenly_into_an_errored_verdict() -> None:
    # 2 answers, each the other way with p = 0.5: both flip 1/4, they split 1/2
    assert majority_flip(0.5, 2) == pytest.approx((0.25, 0.5))
    rubrics = rubrics_from_snapshot(snapshot({"grounded": 1.0}))
    results = [result(rubrics, "c1", {"grounded": passed()})]
    noise = noise_model(results, {"grounded": 2}, default=0.5)
    report = simulate_reruns(results, rubrics, PassPolicy(), noise, simulations=SIMS, seed=4)
    # errored is never a pass: the case fails on a flip or a split
    assert within(report.cases[0].flip.p, 0.75)
    assert 0 < len(report.metrics.values) < SIMS  # an errored case has no score


def test_majority_flip_is_the_binomial_tail() -> None:
    assert majority_flip(0.2, 1) == pytest.approx((0.2, 0.0))
    assert majority_flip(0.2, 3) == pytest.approx((3 * 0.04 * 0.8 + 0.008, 0.0))
    flip, tie = majority_flip(0.2, 4)
    assert flip == pytest.approx(4 * 0.008 * 0.8 + 0.0016)
    assert tie == pytest.approx(6 * 0.04 * 0.64)
    assert majority_flip(0.0, 5) == (0.0, 0.0)


@settings(deadline=None, max_examples=50)
@given(st.floats(0.0, 0.5), st.integers(2, 9))
def test_the_minority_share_is_inverted_back_to_the_rate(rate: float, k: int) -> None:
    assert answer_noise_from_share(expected_minority_share(rate, k), k) == pytest.approx(
        rate, abs=1e-6
    )


def test_measured_noise_pools_the_stored_splits_and_corrects_the_minority_share() -> None:
    rubrics = rubrics_from_snapshot(snapshot({"grounded": 1.0}))
    rng = random.Random(5)
    results = []
    for i in range(4000):  # a judge whose answers each go the other way 20% of the time
        no = sum(rng.random() < 0.2 for _ in range(3))
        v = passed() if no < 2 else failed("unsupported")
        measures = {
            "samples": 3,
            "yes": 3 - no,
            "no": no,
            "errored": 0,
            "flip_rate": min(no, 3 - no) / 3,
        }
        results.append(result(rubrics, f"c{i}", {"grounded": measured(v, measures)}))
    (noise,) = noise_model(results, {"grounded": 3})
    assert (noise.source, noise.samples, noise.answers) == ("measured", 3, 12000)
    # the minority share reads low (a 2-of-3 flip has minority 1): about p (1 - p) = 0.16
    assert noise.minority_share == pytest.approx(0.16, abs=0.01)
    assert noise.answer_noise == pytest.approx(0.2, abs=0.01)
    assert noise.flip == pytest.approx(majority_flip(noise.answer_noise, 3)[0])


def test_given_rates_override_measured_ones_and_unsampled_checks_are_unmeasured() -> None:
    rubrics = rubrics_from_snapshot(snapshot({"grounded": 0.5, "tone": 0.3, "right_time": 0.2}))
    sampled = measured(passed(), {"samples": 3, "yes": 2, "no": 1, "errored": 0})
    results = [
        result(rubrics, "c1", {"grounded": sampled, "tone": passed(), "right_time": passed()})
    ]
    noise = {n.check: n for n in noise_model(results, {"grounded": 3, "tone": 1})}
    assert (noise["grounded"].source, noise["grounded"].minority_share) == ("measured", 1 / 3)
    assert (noise["tone"].source, noise["tone"].flip) == ("unmeasured", 0.0)
    report = simulate_reruns(results, rubrics, PassPolicy(), list(noise.values()), simulations=50)
    assert "no noise measured for tone (no repeated samples stored)" in report.notes[-1]
    noise = {
        n.check: n
        for n in noise_model(
            results, {"grounded": 3, "tone": 1}, default=0.1, per_check={"right_time": 0.05}
        )
    }
    assert noise["grounded"].source == noise["tone"].source == "given"
    assert noise["grounded"].flip == pytest.approx(majority_flip(0.1, 3)[0])
    assert (noise["right_time"].samples, noise["right_time"].flip) == (1, 0.05)
    report = simulate_reruns(results, rubrics, PassPolicy(), list(noise.values()), simulations=50)
    assert not any("no noise measured" in n for n in report.notes)


def test_the_same_seed_gives_the_same_report() -> None:
    rubrics = rubrics_from_snapshot(snapshot({"a": 0.5, "b": 0.5}))
    results = [result(rubrics, f"c{i}", {"a": passed(), "b": failed("no")}) for i in range(6)]
    noise = noise_model(results, {"a": 1, "b": 1}, default=0.3)
    one = simulate_reruns(results, rubrics, PassPolicy(), noise, simulations=300, seed=9)
    two = simulate_reruns(results, rubrics, PassPolicy(), noise, simulations=300, seed=9)
    other = simulate_reruns(results, rubrics, PassPolicy(), noise, simulations=300, seed=10)
    assert one == two
    assert one.metrics.values == two.metrics.values
    assert one.metrics.values != other.metrics.values
    with pytest.raises(ValueError, match="simulations must be >= 1"):
        simulate_reruns(results, rubrics, PassPolicy(), noise, simulations=0)


def test_under_all_checks_any_noisy_check_that_passed_can_flip_the_case() -> None:
    # the same case under all_checks: it fails (polite failed) whatever the score, so only
    # the failing judge check flipping to a pass makes it pass; no score threshold is read
    weights = {"right_time": 0.25, "right_people": 0.25, "grounded": 0.25, "polite": 0.25}
    rubrics = rubrics_from_snapshot(snapshot(weights))
    verdicts = {
        "right_time": passed(),
        "right_people": passed(),
        "grounded": passed(),
        "polite": failed("curt"),
    }
    results = [result(rubrics, "edge", verdicts)]
    policy = PassPolicy(pass_policy=PassMode.ALL_CHECKS, metrics_pass_threshold=0.0)
    noise = noise_model(results, {"grounded": 1, "polite": 1}, default=0.1)
    report = simulate_reruns(results, rubrics, policy, noise, simulations=SIMS, seed=2)
    (case,) = report.cases
    assert (case.observed, case.score_pct) == ("failed", 75.0)
    # passes only when polite flips (0.1) and grounded does not (0.9)
    assert within(case.flip.p, 0.1 * 0.9)
    assert not any(w.startswith("pass threshold") for w in report.warnings)
