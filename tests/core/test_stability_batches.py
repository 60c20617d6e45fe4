"""The batched simulation reruns exactly what drawing one verdict at a time would: the same
draws of ``random.Random(seed)``, the same rescoring and deciding, the same sums, checked
against a plain per-draw loop over the real scoring code, batch by batch."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from checkweigh.core import (
    CaseResult,
    CaseTally,
    PassMode,
    PassPolicy,
    Rubric,
    ScoreStatus,
    SimulationStopped,
    StabilityReport,
    Verdict,
    VerdictState,
    _rerun_batches,
    errored,
    failed,
    noise_model,
    not_applicable,
    passed,
    rubrics_from_snapshot,
    score_rubric,
    simulate_reruns,
)

JUDGED = {"grounded": 1, "polite": 2, "helpful": 3}
"""Judge checks and their samples: polite's even samples can tie (an errored verdict)."""
SNAPSHOT = {
    "rubrics": [
        {
            "name": "completion",
            "weights": {"right_time": 0.4, "grounded": 0.3, "polite": 0.2, "helpful": 0.1},
            "required": ["grounded"],
        },
        {
            "name": "recovery",
            "weights": {"right_time": 0.5, "helpful": 0.5},
            "not_applicable": {"helpful": "pass"},
        },
    ]
}


def _verdict(draw: random.Random) -> Verdict:
    roll = draw.random()
    if roll < 0.55:
        return passed("ok")
    if roll < 0.85:
        return failed("no")
    return not_applicable("n/a") if roll < 0.95 else errored("judge timed out")


def realistic_results(n: int, seed: int) -> tuple[list[CaseResult], dict[str, Rubric]]:
    """``n`` executions scored by the real code: mostly passing verdicts, some failing, not
    applicable or errored, a rubric that did not apply to some cases, a few agent errors."""
    rubrics = rubrics_from_snapshot(SNAPSHOT)
    draw = random.Random(seed)
    results = []
    for i in range(n):
        if i % 37 == 5:
            results.append(CaseResult(f"case-{i // 2:04d}", i % 2, {}, {}, agent_error="timeout"))
            continue
        verdicts = {name: _verdict(draw) for name in ("right_time", *JUDGED)}
        scores = {name: score_rubric(r, verdicts, None) for name, r in rubrics.items()}
        if i % 5 == 0:  # its `when` guard was false for this case
            scores["recovery"] = scores["recovery"]._replace(
                status=ScoreStatus.NOT_APPLICABLE, score=None, outcome=None
            )
        results.append(CaseResult(f"case-{i // 2:04d}", i % 2, verdicts, scores))
    return results, rubrics


def per_draw(
    results: list[CaseResult],
    rubrics: dict[str, Rubric],
    policy: PassPolicy,
    rates: dict[str, tuple[float, float]],
    sims: int,
    seed: int,
) -> tuple[list[float], list[float], Counter[str], list[Counter[tuple[bool, float | None]]]]:
    """Rerun one draw at a time: every rerun's mean score and pass rate, the gate flips, and
    how each execution ended (passed, score) how often."""
    observed = CaseTally(policy)
    for r in results:
        observed.add(r)
    seen = observed.gates()
    draw = random.Random(seed).random
    flipped = {VerdictState.PASSED: failed("flipped"), VerdictState.FAILED: passed("flipped")}
    metrics, pass_rates, gates = [], [], Counter[str]()
    ends: list[Counter[tuple[bool, float | None]]] = [Counter() for _ in results]
    for _ in range(sims):
        tally = CaseTally(policy)
        for r, end in zip(results, ends, strict=True):
            verdicts = dict(r.verdicts)
            for name, v in r.verdicts.items():
                if r.agent_error is None and name in rates and v.state in flipped:
                    u = draw()
                    if u < rates[name][0]:
                        verdicts[name] = flipped[v.state]
                    elif u < rates[name][1]:
                        verdicts[name] = errored("tie", reason="no majority")
            scores = {
                name: stored
                if stored.status is ScoreStatus.NOT_APPLICABLE
                else score_rubric(rubrics[name], verdicts, None)
                for name, stored in r.results.items()
            }
            verdict = tally.add(r._replace(verdicts=verdicts, results=scores))
            end[verdict.passed, verdict.score_pct] += 1
        g = tally.gates()
        gates["metrics"] += g.metrics_passed != seen.metrics_passed
        gates["cases"] += g.cases_passed != seen.cases_passed
        gates["overall"] += g.passed_both != seen.passed_both
        if g.weighted_metrics_score_pct is not None:
            metrics.append(g.weighted_metrics_score_pct)
        pass_rates.append(g.cases_pass_rate_pct)
    return metrics, pass_rates, gates, ends


def percentile(ends: Counter[tuple[bool, float | None]], q: float) -> float | None:
    scores = sorted((s, k) for (_, s), k in ends.items() if s is not None)
    total = sum(k for _, k in scores)
    seen = 0
    for score, k in scores:
        seen += k
        if seen >= q * total:
            return score
    return None


@pytest.mark.parametrize("mode", [PassMode.THRESHOLD, PassMode.ALL_CHECKS])
@pytest.mark.parametrize(
    ("seed", "draws_per_batch", "table"),
    [(0, 64, True), (11, 997, False), (2**40 + 3, 1 << 21, True)],
    ids=["small-batches", "searched-codes", "one-batch"],
)
def test_batched_reruns_are_the_per_draw_reruns_exactly(
    monkeypatch: pytest.MonkeyPatch, mode: PassMode, seed: int, draws_per_batch: int, table: bool
) -> None:
    # a few draws per batch: many batches, each continuing the stream where the last stopped
    monkeypatch.setattr(_rerun_batches, "_BATCH_DRAWS", draws_per_batch)
    if not table:  # outcomes found by searching the sorted codes, as for many noisy checks
        monkeypatch.setattr(_rerun_batches, "_TABLE_CODES", 0)
    results, rubrics = realistic_results(200, seed=seed % 1000)
    policy = PassPolicy(
        pass_policy=mode, pass_threshold=70.0, metrics_pass_threshold=62.0, cases_pass_threshold=45
    )
    noise = noise_model(results, JUDGED, default=0.2)
    rates = {n.check: (n.flip, n.flip + n.tie) for n in noise}
    assert rates["polite"][1] > rates["polite"][0] > 0.0  # ties happen

    sims = 160
    report = simulate_reruns(results, rubrics, policy, noise, simulations=sims, seed=seed)
    metrics, pass_rates, gates, ends = per_draw(results, rubrics, policy, rates, sims, seed)

    assert report.metrics.values == metrics  # the same floats, summed in the same order
    assert report.cases_rate.values == pass_rates
    assert {g.gate: g.flip.p for g in report.gates} == {k: gates[k] / sims for k in gates} | {
        k: 0.0 for k in ("metrics", "cases", "overall") if k not in gates
    }
    assert 0.0 < report.gates[0].flip.p < 1.0  # the run sits near its metrics pass mark
    by_id = {(c.case_id, c.repeat): c for c in report.cases}
    assert len(by_id) == len(results)
    for r, end in zip(results, ends, strict=True):
        case = by_id[r.case_id, r.repeat]
        assert case.pass_chance == sum(k for (ok, _), k in end.items() if ok) / sims
        assert (case.score_low, case.score_high) == (percentile(end, 0.025), percentile(end, 0.975))
    assert any(c.flip.p > 0.0 for c in report.cases)


def test_the_same_seed_gives_the_same_report_and_another_seed_another() -> None:
    results, rubrics = realistic_results(120, seed=3)
    noise = noise_model(results, JUDGED, default=0.25)

    def report(seed: int) -> StabilityReport:
        return simulate_reruns(results, rubrics, PassPolicy(), noise, simulations=500, seed=seed)

    assert report(5).model_dump() == report(5).model_dump()
    assert report(5).metrics.values != report(6).metrics.values


def test_a_stop_asked_for_between_batches_ends_the_simulation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_rerun_batches, "_BATCH_DRAWS", 256)
    results, rubrics = realistic_results(120, seed=4)
    noise = noise_model(results, JUDGED, default=0.1)
    asked = 0

    def stop() -> bool:
        nonlocal asked
        asked += 1
        return asked > 3

    with pytest.raises(SimulationStopped, match=r"stopped with \d+ of 100000 reruns left"):
        simulate_reruns(results, rubrics, PassPolicy(), noise, simulations=100_000, stop=stop)
    assert asked == 4  # asked before each batch, and nothing ran after it said stop


def test_flip_chances_match_the_binomial_on_many_executions() -> None:
    # 2,000 executions of one judge check each: the flip chance of every one is the check's
    results = [
        CaseResult(f"c{i}", 0, {"tone": passed()}, {"r": score_rubric(r, {"tone": passed()}, None)})
        for i in range(2000)
        for r in [rubrics_from_snapshot({"rubrics": [{"name": "r", "weights": {"tone": 1}}]})["r"]]
    ]
    rubrics = rubrics_from_snapshot({"rubrics": [{"name": "r", "weights": {"tone": 1}}]})
    noise = noise_model(results, {"tone": 1}, default=0.3)
    report = simulate_reruns(results, rubrics, PassPolicy(), noise, simulations=400, seed=9)
    flips = [c.flip.p for c in report.cases]
    mean = math.fsum(flips) / len(flips)
    assert abs(mean - 0.3) < 4 * math.sqrt(0.3 * 0.7 / (400 * 2000))
    # the mean score of a rerun is 100 x the share of verdicts kept
    assert report.metrics.mean == pytest.approx(70.0, abs=0.3)
