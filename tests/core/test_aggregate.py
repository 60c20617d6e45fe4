"""RunAggregator over a realistic mix of scheduling runs: scored, errored, agent errors,
guarded rubrics and repeats."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable

import pytest

from checkweigh.core import (
    Case,
    CaseResult,
    CaseVariance,
    CheckStats,
    Condition,
    ConditionOp,
    FieldPath,
    PassPolicy,
    Rubric,
    RunAggregator,
    SlowCase,
    Verdict,
    WorstCase,
    errored,
    failed,
    not_applicable,
    passed,
    score_rubric,
    t_quantile,
    wilson_interval,
)

COMPLETION = (
    "correct_participants",
    "correct_time",
    "correct_duration",
    "no_double_booking",
    "clear_confirmation",
)


@pytest.fixture
def rubrics(completion: Rubric, make_rubric: Callable[..., Rubric]) -> tuple[Rubric, Rubric]:
    guard = Condition(FieldPath.parse("metadata.scenario"), ConditionOp.EQUALS, "conflict")
    recovery = make_rubric(
        "error_recovery", {"detected_conflict": 0.6, "offered_alternatives": 0.4}, when=[guard]
    )
    return completion, recovery


def execute(
    case: Case,
    rubrics: tuple[Rubric, ...],
    *,
    failing: tuple[str, ...] = (),
    special: dict[str, Verdict] | None = None,
    repeat: int = 0,
    latency: float | None = None,
) -> CaseResult:
    """Score one recorded run: every check passes except ``failing`` and ``special``."""
    verdicts: dict[str, Verdict] = {c: passed() for r in rubrics for c in r.check_names}
    for name in failing:
        verdicts[name] = failed(f"{name} was wrong")
    verdicts.update(special or {})
    results = {r.name: score_rubric(r, verdicts, case) for r in rubrics}
    return CaseResult(case.id, repeat, verdicts, results, latency_ms=latency)


@pytest.fixture
def mixed_run(rubrics: tuple[Rubric, Rubric], make_case: Callable[..., Case]) -> list[CaseResult]:
    return [
        execute(make_case("ok-1"), rubrics, latency=900.0),
        execute(
            make_case("wrong-time", time="11:00"),
            rubrics,
            failing=("correct_time",),
            latency=1500.0,
        ),
        execute(
            make_case("conflict-1", scenario="conflict"),
            rubrics,
            failing=("correct_time", "correct_duration", "offered_alternatives"),
            latency=2400.0,
        ),
        execute(
            make_case("crash", success=False, stage="failed"),
            rubrics,
            failing=COMPLETION,
            latency=300.0,
        ),
        execute(
            make_case("timeout"),
            rubrics,
            failing=("correct_time",),
            special={"no_double_booking": errored("TimeoutError: calendar API timed out")},
            latency=5000.0,
        ),
        CaseResult("agent-down", 0, {}, {}, agent_error="ConnectionError: model endpoint refused"),
    ]


def test_run_level_counts(rubrics: tuple[Rubric, Rubric], mixed_run: list[CaseResult]) -> None:
    summary = RunAggregator(rubrics).add_all(mixed_run).summary()
    assert (summary.executions, summary.cases) == (6, 6)
    assert summary.errored_executions == 2
    assert summary.agent_errors == 1
    assert summary.slowest == [
        SlowCase(case_id="timeout", repeat=0, latency_ms=5000.0),
        SlowCase(case_id="conflict-1", repeat=0, latency_ms=2400.0),
        SlowCase(case_id="wrong-time", repeat=0, latency_ms=1500.0),
        SlowCase(case_id="ok-1", repeat=0, latency_ms=900.0),
        SlowCase(case_id="crash", repeat=0, latency_ms=300.0),
    ]
    assert summary.gates == []
    assert summary.gates_passed is True
    with pytest.raises(KeyError):
        summary.rubric("tone")


def test_completion_rubric_summary(
    rubrics: tuple[Rubric, Rubric], mixed_run: list[CaseResult]
) -> None:
    c = RunAggregator(rubrics).add_all(mixed_run).summary().rubric("completion")
    # the errored check and the agent error are executions, but not scored
    assert (c.executions, c.scored, c.errored, c.not_applicable) == (6, 4, 2, 0)
    # TCR is the mean of 1.0, 0.75, 0.65 and 0.0: the errored runs are not zeros
    assert c.tcr == pytest.approx(0.6)
    assert c.band == "not ready"
    assert c.outcomes == {
        "successful_completion": 2,
        "graceful_failure": 1,
        "partial_failure": 0,
        "hard_failure": 1,
    }
    weight = dict(zip(COMPLETION, (0.25, 0.25, 0.10, 0.20, 0.20), strict=True))
    counts = {
        "correct_participants": (4, 1, 0, 0),
        "correct_time": (1, 4, 0, 0),
        "correct_duration": (3, 2, 0, 0),
        "no_double_booking": (3, 1, 0, 1),
        "clear_confirmation": (4, 1, 0, 0),
    }
    expected = []
    for name, (p, f, na, e) in counts.items():
        lo, hi = wilson_interval(p, p + f)
        expected.append(
            CheckStats(
                check=name,
                weight=weight[name],
                passed=p,
                failed=f,
                not_applicable=na,
                errored=e,
                pass_rate=p / (p + f),
                ci_low=lo,
                ci_high=hi,
            )
        )
    assert c.checks == expected
    # most failures first; ties broken by the heavier weight, then rubric order
    assert c.top_failing == [
        "correct_time",
        "correct_duration",
        "correct_participants",
        "no_double_booking",
        "clear_confirmation",
    ]
    assert c.errored_examples == [
        "timeout#0: completion: not scored "
        "(no_double_booking errored: TimeoutError: calendar API timed out)",
        "agent-down#0: ConnectionError: model endpoint refused",
    ]
    assert [(w.case_id, w.score, w.outcome) for w in c.worst] == [
        ("crash", 0.0, "hard_failure"),
        ("conflict-1", 0.65, "graceful_failure"),
        ("wrong-time", 0.75, "successful_completion"),
    ]
    assert c.worst[1].explanation.startswith(
        "completion: score 0.65, graceful failure. failed: correct_time"
    )
    assert c.normalization_note is None
    assert c.case_variance == []


def test_guarded_rubric_counts_only_where_it_applies(
    rubrics: tuple[Rubric, Rubric], mixed_run: list[CaseResult]
) -> None:
    r = RunAggregator(rubrics).add_all(mixed_run).summary().rubric("error_recovery")
    assert (r.executions, r.scored, r.errored, r.not_applicable) == (2, 1, 1, 4)
    assert (r.tcr, r.tcr_low, r.tcr_high) == (pytest.approx(0.6), 0.0, 1.0)
    assert r.outcomes["graceful_failure"] == 1
    # the guarded-out runs do not count towards the checks
    assert [(s.check, s.passed, s.failed, s.not_applicable) for s in r.checks] == [
        ("detected_conflict", 1, 0, 0),
        ("offered_alternatives", 0, 1, 0),
    ]
    assert r.top_failing == ["offered_alternatives"]
    assert r.errored_examples == ["agent-down#0: ConnectionError: model endpoint refused"]


def test_all_checks_excluded_counts_as_not_applicable(
    make_rubric: Callable[..., Rubric], make_case: Callable[..., Case]
) -> None:
    rubric = make_rubric("conflicts", {"detected_conflict": 0.5, "offered_alternatives": 0.5})
    case = make_case("quiet-day")
    v = {c: not_applicable("no conflict happened") for c in rubric.check_names}
    result = CaseResult(case.id, 0, v, {"conflicts": score_rubric(rubric, v, case)})
    s = RunAggregator([rubric]).add_all([result]).summary().rubric("conflicts")
    assert (s.executions, s.scored, s.not_applicable) == (0, 0, 1)
    assert (s.tcr, s.tcr_low, s.tcr_high, s.band) == (None, None, None, None)
    stats = s.checks[0]
    assert (stats.not_applicable, stats.pass_rate, stats.ci_low, stats.ci_high) == (
        1,
        None,
        0.0,
        1.0,
    )
    assert s.top_failing == []


def test_worst_keeps_the_five_lowest_in_order(
    completion: Rubric, make_case: Callable[..., Case]
) -> None:
    patterns = {
        "a": ("correct_duration",),  # 0.90
        "b": COMPLETION[:4],  # 0.20
        "c": ("correct_participants", "correct_time"),  # 0.50
        "d": ("correct_time", "no_double_booking", "clear_confirmation"),  # 0.35
        "e": (),  # 1.00: never among the worst
        "f": ("correct_participants", "correct_time", "no_double_booking"),  # 0.30
        "g": ("no_double_booking", "clear_confirmation"),  # 0.60
        "h": ("correct_time", "clear_confirmation"),  # 0.55
        "i": ("correct_participants", "correct_duration", "clear_confirmation"),  # 0.45
    }
    agg = RunAggregator([completion])
    for case_id, failing in patterns.items():
        agg.add(execute(make_case(case_id), (completion,), failing=failing))
    worst = agg.summary().rubric("completion").worst
    assert [(w.case_id, round(w.score, 2)) for w in worst] == [
        ("b", 0.2),
        ("f", 0.3),
        ("d", 0.35),
        ("i", 0.45),
        ("c", 0.5),
    ]
    assert all(isinstance(w, WorstCase) for w in worst)


def test_worst_ties_keep_the_earlier_execution(
    completion: Rubric, make_case: Callable[..., Case]
) -> None:
    agg = RunAggregator([completion])
    for i in range(7):
        agg.add(execute(make_case(f"same-{i}"), (completion,), failing=("correct_time",)))
    worst = agg.summary().rubric("completion").worst
    assert [w.case_id for w in worst] == [f"same-{i}" for i in range(5)]


def test_repeats_report_case_variance(completion: Rubric, make_case: Callable[..., Case]) -> None:
    runs = {
        "flaky": [(), ("correct_time",), ("correct_time", "correct_duration")],  # 1, .75, .65
        "solid": [(), (), ()],
        "meh": [("correct_time",)] * 3,
    }
    results = [
        execute(make_case(cid), (completion,), failing=failing, repeat=k)
        for cid, patterns in runs.items()
        for k, failing in enumerate(patterns)
    ]
    plain = RunAggregator([completion]).add_all(results).summary()
    assert plain.rubric("completion").case_variance == []
    assert (plain.executions, plain.cases) == (9, 3)
    summary = RunAggregator([completion], keep_case_scores=True).add_all(results).summary()
    c = summary.rubric("completion")
    assert [v.model_dump() for v in c.case_variance] == [
        {
            "case_id": "flaky",
            "runs": 3,
            "mean": pytest.approx(0.8),
            "stdev": pytest.approx(statistics.stdev([1.0, 0.75, 0.65])),
            "min": 0.65,
            "max": 1.0,
            "outcomes": {"successful_completion": 2, "graceful_failure": 1},
        },
        {
            "case_id": "meh",
            "runs": 3,
            "mean": 0.75,
            "stdev": 0.0,
            "min": 0.75,
            "max": 0.75,
            "outcomes": {"successful_completion": 3},
        },
        {
            "case_id": "solid",
            "runs": 3,
            "mean": 1.0,
            "stdev": 0.0,
            "min": 1.0,
            "max": 1.0,
            "outcomes": {"successful_completion": 3},
        },
    ]
    assert all(isinstance(v, CaseVariance) for v in c.case_variance)
    # the TCR's interval is the t-interval over the nine scored executions
    scores = [1.0, 0.75, 0.65, 1.0, 1.0, 1.0, 0.75, 0.75, 0.75]
    half = t_quantile(0.975, 8) * statistics.stdev(scores) / math.sqrt(9)
    assert c.tcr == pytest.approx(0.85)
    assert (c.tcr_low, c.tcr_high) == pytest.approx((0.85 - half, 0.85 + half))
    assert c.band == "production ready"


def test_slowest_keeps_the_n_slowest(completion: Rubric, make_case: Callable[..., Case]) -> None:
    latencies = [420.0, 3100.0, None, 87.5, 1900.0, 3100.0]
    agg = RunAggregator([completion], slowest=3)
    for i, ms in enumerate(latencies):
        agg.add(execute(make_case(f"case-{i}"), (completion,), latency=ms))
    assert agg.summary().slowest == [
        SlowCase(case_id="case-5", repeat=0, latency_ms=3100.0),
        SlowCase(case_id="case-1", repeat=0, latency_ms=3100.0),
        SlowCase(case_id="case-4", repeat=0, latency_ms=1900.0),
    ]


def test_normalization_note_reaches_the_summary(
    recovery: Rubric, make_case: Callable[..., Case]
) -> None:
    result = execute(make_case("r"), (recovery,), failing=("polite",))
    s = RunAggregator([recovery]).add_all([result]).summary().rubric("error_recovery")
    assert s.normalization_note == (
        "weights of rubric 'error_recovery' sum to 0.95, not 1.0; they were normalized"
    )
    assert s.checks[0].weight == pytest.approx(0.30 / 0.95)
    assert s.tcr == pytest.approx(0.90 / 0.95)


def test_an_errored_expected_outcome_check_is_an_errored_execution(
    rubrics: tuple[Rubric, Rubric], mixed_run: list[CaseResult], make_case: Callable[..., Case]
) -> None:
    """The outcome check sits in no rubric: only the case verdict says the execution errored,
    and the summary must count it the way the case gates (and JUnit) do."""
    judged = execute(make_case("judged"), rubrics)
    judged = judged._replace(
        verdicts={**judged.verdicts, "outcomes": errored("no cached answer for this call")}
    )
    policy = PassPolicy(outcome_checks=("outcomes",), cases_pass_threshold=0.0)
    summary = RunAggregator(rubrics, policy=policy).add_all([*mixed_run, judged]).summary()
    assert summary.errored_executions == 3  # timeout, agent-down and judged
    assert summary.case_gates is not None
    assert summary.case_gates.errored == 3
    assert summary.rubric("completion").errored == 2  # the rubrics themselves scored "judged"
    # without a pass policy there is no case verdict: only what the rubrics saw counts
    assert RunAggregator(rubrics).add_all([*mixed_run, judged]).summary().errored_executions == 2
