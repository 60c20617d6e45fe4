"""pass@k and pass^k: the unbiased estimators against enumeration and against the closed form
of a seeded flaky agent; the run's figures, flaky tasks and gates over repeated tries."""

from __future__ import annotations

import random
from itertools import combinations
from pathlib import Path

import pytest

from checkweigh.core import (
    CaseResult,
    EvaluationResult,
    Gate,
    GateMetric,
    PassPolicy,
    RunAggregator,
    RunSummary,
    ScoreStatus,
    Verdict,
    VerdictState,
    apply_gates,
    compare_runs,
    pass_at_k,
    pass_hat_k,
)
from checkweigh.errors import SuiteError
from checkweigh.reports import comparison_markdown
from checkweigh.suites import load_suite
from support.recorded_suite import make_case, write_suite


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_the_estimators_are_the_share_of_k_subsets_that_pass(n: int) -> None:
    for c in range(n + 1):
        tries = [True] * c + [False] * (n - c)
        for k in range(1, n + 1):
            subsets = list(combinations(tries, k))
            assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
            assert pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))
    with pytest.raises(ValueError, match="0 < k <= n"):
        pass_hat_k(3, 1, 4)


def _result(case_id: str, repeat: int, passed: bool) -> CaseResult:
    """A try scored 1.0 (passes the default 70% case threshold) or 0.0."""
    verdicts = {"done": Verdict(VerdictState.PASSED if passed else VerdictState.FAILED, "")}
    score = EvaluationResult("task", ScoreStatus.SCORED, 1.0 if passed else 0.0, None, verdicts)
    return CaseResult(case_id, repeat, verdicts, {"task": score})


def _summary(results: list[CaseResult]) -> RunSummary:
    aggregator = RunAggregator([], keep_case_scores=True, policy=PassPolicy())
    return aggregator.add_all(results).summary()


def test_a_seeded_flaky_agent_matches_the_closed_form() -> None:
    # 2,000 tasks, each passing a try with its own chance p: E[pass^k] = mean p^k and
    # E[pass@k] = mean 1 - (1-p)^k, whatever the number of tries n >= k
    rng = random.Random(7)
    chances = [rng.choice([0.2, 0.5, 0.9, 1.0]) for _ in range(2000)]
    results = [
        _result(f"t{i}", r, rng.random() < p) for i, p in enumerate(chances) for r in range(5)
    ]
    found = _summary(results).reliability
    assert found is not None
    assert found.tasks == 2000
    assert found.max_tries == 5
    for k in range(1, 6):
        row = found.at(k)
        assert row is not None
        assert row.tasks == 2000
        assert row.pass_hat_k == pytest.approx(sum(p**k for p in chances) / 2000, abs=0.02)
        expected = sum(1 - (1 - p) ** k for p in chances) / 2000
        assert row.pass_at_k == pytest.approx(expected, abs=0.02)
    flaky_expected = sum(1 - p**5 - (1 - p) ** 5 for p in chances) / 2000
    assert found.flaky_rate == pytest.approx(flaky_expected, abs=0.03)


def test_flaky_tasks_errored_tries_and_gates_on_the_run() -> None:
    results = [
        _result("steady", 0, True),
        _result("steady", 1, True),
        _result("flaky", 0, True),
        _result("flaky", 1, False),
        _result("never", 0, False),
        _result("never", 1, False),
        CaseResult("agent-failed", 0, {}, {}, agent_error="boom"),  # errored: not passed
        _result("agent-failed", 1, True),
    ]
    summary = _summary(results)
    found = summary.reliability
    assert found is not None
    assert (found.tasks, found.flaky_tasks, found.flaky_rate) == (4, 2, 0.5)
    assert [(t.case_id, t.tries, t.passes) for t in found.flakiest] == [
        ("agent-failed", 2, 1),
        ("flaky", 2, 1),
    ]
    two = found.at(2)
    assert two is not None
    assert (two.pass_at_k, two.pass_hat_k) == (0.75, 0.25)
    gates = (
        Gate(GateMetric.PASS_HAT_K, minimum=0.25, k=2),
        Gate(GateMetric.PASS_AT_K, minimum=0.8, k=2),
        Gate(GateMetric.FLAKY_RATE, maximum=0.5),
        Gate(GateMetric.PASS_HAT_K, minimum=0.1, k=3),  # nobody tried 3 times: unmeasurable
    )
    gated = apply_gates(summary, gates)
    assert [(g.gate, g.passed, g.actual) for g in gated.gates] == [
        ("pass^2 >= 0.25", True, 0.25),
        ("pass@2 >= 0.8", False, 0.75),
        ("flaky_rate <= 0.5", True, 0.5),
        ("pass^3 >= 0.1", False, None),
    ]
    once = _summary([_result("a", 0, True), _result("b", 0, False)])
    assert once.reliability is None  # no task repeated: nothing to estimate


def test_a_suite_gate_on_pass_hat_k_loads_and_bad_ones_are_one_line(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, [make_case("c1", participants=["Alice", "Bob"], time="10:00")])
    text = suite.read_text()
    good = text + "  - {metric: pass_hat_k, k: 4, min: 0.6}\n  - {metric: flaky_rate, max: 0.2}\n"
    suite.write_text(good)
    loaded = load_suite(suite)
    assert [g.describe() for g in loaded.gates][-2:] == ["pass^4 >= 0.6", "flaky_rate <= 0.2"]
    for bad, message in [
        ("{metric: pass_hat_k, min: 0.6}", "metric pass_hat_k needs 'k' (tries per task)"),
        ("{metric: tcr, rubric: completion, k: 2, min: 0.6}", "'k' is for pass_at_k and"),
        ("{metric: pass_at_k, k: 0, min: 0.6}", "greater than or equal to 1"),
    ]:
        suite.write_text(text + f"  - {bad}\n")
        with pytest.raises(SuiteError, match="gates") as caught:
            load_suite(suite)
        assert message in str(caught.value)
        assert "\n" not in str(caught.value)


def test_compare_gives_both_runs_reliability_over_the_paired_tries() -> None:
    base = [_result("a", r, True) for r in range(3)] + [_result("b", r, r == 0) for r in range(3)]
    cand = [_result("a", r, r != 2) for r in range(3)] + [_result("b", r, False) for r in range(3)]
    cmp = compare_runs(base, cand, base_policy=PassPolicy(), candidate_policy=PassPolicy())
    assert [
        (r.k, r.base_pass_hat_k, r.candidate_pass_hat_k, r.base_pass_at_k, r.candidate_pass_at_k)
        for r in cmp.reliability
    ] == [
        (1, pytest.approx(4 / 6), pytest.approx(2 / 6), pytest.approx(4 / 6), pytest.approx(2 / 6)),
        (2, pytest.approx(0.5), pytest.approx(1 / 6), pytest.approx(5 / 6), 0.5),
        (3, 0.5, 0.0, 1.0, 0.5),
    ]
    once = compare_runs(base[:1], cand[:1], base_policy=PassPolicy(), candidate_policy=PassPolicy())
    assert once.reliability == []
    text = comparison_markdown(cmp, "base-run", "cand-run")
    assert "### Reliability over the paired tries" in text
    assert "| 3 | 1.00 | 0.50 | 0.50 | 0.00 | 2 |" in text
