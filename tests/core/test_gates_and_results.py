"""Gates on a run's aggregates, and the stored form of a case result."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from checkweigh.core import (
    DEFAULT_GATES,
    Case,
    CaseResult,
    Gate,
    GateMetric,
    GateResult,
    OutcomeClass,
    Rubric,
    RunAggregator,
    RunSummary,
    ScoreStatus,
    Verdict,
    VerdictState,
    apply_gates,
    errored,
    failed,
    not_applicable,
    passed,
    score_rubric,
)


def _run(rubric: Rubric, case: Case, verdicts: dict[str, Verdict], repeat: int = 0) -> CaseResult:
    return CaseResult(
        case.id, repeat, verdicts, {rubric.name: score_rubric(rubric, verdicts, case)}
    )


@pytest.fixture
def summary(completion: Rubric, make_case: Callable[..., Case]) -> RunSummary:
    """Four scored runs (1.0, 0.75, 0.65, 0.0), one errored check and one agent error."""
    ok = dict.fromkeys(completion.check_names, passed())
    runs = [
        _run(completion, make_case("ok"), ok),
        _run(completion, make_case("late"), {**ok, "correct_time": failed("11:00")}),
        _run(
            completion,
            make_case("short"),
            {**ok, "correct_time": failed("11:00"), "correct_duration": failed("15 min")},
        ),
        _run(
            completion,
            make_case("crash", success=False, stage="failed"),
            dict.fromkeys(completion.check_names, failed("no booking")),
        ),
        _run(
            completion,
            make_case("slow-api"),
            {**ok, "no_double_booking": errored("TimeoutError: calendar API timed out")},
        ),
        CaseResult("down", 0, {}, {}, agent_error="ConnectionError: refused"),
    ]
    return RunAggregator([completion]).add_all(runs).summary()


def test_gates_on_a_realistic_run(summary: RunSummary) -> None:
    gates = (
        Gate(GateMetric.TCR, minimum=0.55, rubric="completion"),
        Gate(GateMetric.TCR, minimum=0.7, rubric="completion"),
        Gate(GateMetric.TCR, minimum=0.6, rubric="completion"),  # exactly met
        Gate(
            GateMetric.OUTCOME_RATE,
            maximum=0.2,
            rubric="completion",
            outcome=OutcomeClass.HARD_FAILURE,
        ),
        Gate(
            GateMetric.OUTCOME_RATE,
            minimum=0.5,
            rubric="completion",
            outcome=OutcomeClass.SUCCESSFUL_COMPLETION,
        ),
        Gate(GateMetric.CHECK_PASS_RATE, minimum=0.5, rubric="completion", check="correct_time"),
        Gate(
            GateMetric.CHECK_PASS_RATE,
            minimum=0.75,
            maximum=1.0,
            rubric="completion",
            check="no_double_booking",
        ),
        Gate(GateMetric.ERRORED_EXECUTIONS, maximum=0),
        Gate(GateMetric.ERRORED_EXECUTIONS, maximum=2),
        Gate(GateMetric.TCR_LOWER, minimum=0.5, rubric="completion"),
    )
    gated = apply_gates(summary, gates)
    assert summary.gates == []  # apply_gates returns a copy
    assert [(g.gate, g.passed) for g in gated.gates] == [
        ("completion tcr >= 0.55", True),
        ("completion tcr >= 0.7", False),
        ("completion tcr >= 0.6", True),
        ("completion hard_failure outcome_rate <= 0.2", False),
        ("completion successful_completion outcome_rate >= 0.5", True),
        ("completion correct_time check_pass_rate >= 0.5", False),
        ("completion no_double_booking check_pass_rate >= 0.75 and <= 1", True),
        ("errored_executions <= 0", False),
        ("errored_executions <= 2", True),
        ("completion tcr_lower >= 0.5", False),
    ]
    actual = [g.actual for g in gated.gates]
    assert actual[:7] == pytest.approx([0.6, 0.6, 0.6, 0.25, 0.5, 0.4, 0.75])
    assert actual[7:9] == [2.0, 2.0]
    assert gated.gates_passed is False
    assert apply_gates(summary, gates[:1]).gates_passed is True


def test_unmeasurable_gates_fail(completion: Rubric, make_case: Callable[..., Case]) -> None:
    # a run where the agent errored every time: nothing was scored
    down = [CaseResult(f"c{i}", 0, {}, {}, agent_error="ConnectionError") for i in range(3)]
    empty = RunAggregator([completion]).add_all(down).summary()
    gates = (
        Gate(GateMetric.TCR, minimum=0.0, rubric="completion"),
        Gate(GateMetric.TCR_LOWER, minimum=0.0, rubric="completion"),
        Gate(
            GateMetric.OUTCOME_RATE,
            maximum=1.0,
            rubric="completion",
            outcome=OutcomeClass.HARD_FAILURE,
        ),
        Gate(GateMetric.CHECK_PASS_RATE, minimum=0.0, rubric="completion", check="correct_time"),
        Gate(GateMetric.CHECK_PASS_RATE, minimum=0.0, rubric="completion", check="not_in_rubric"),
    )
    results = apply_gates(empty, gates).gates
    assert [(g.passed, g.actual) for g in results] == [(False, None)] * 5
    # a check that only ever was not applicable has no pass rate either
    v = dict.fromkeys(completion.check_names, passed())
    v["no_double_booking"] = not_applicable("no conflict")
    s = RunAggregator([completion]).add_all([_run(completion, make_case("x"), v)]).summary()
    gate = Gate(
        GateMetric.CHECK_PASS_RATE, minimum=0.5, rubric="completion", check="no_double_booking"
    )
    assert gate.evaluate(s) == GateResult(
        gate="completion no_double_booking check_pass_rate >= 0.5", passed=False, actual=None
    )


def test_an_explicit_errored_executions_gate(summary: RunSummary) -> None:
    assert DEFAULT_GATES == ()  # the pass dimensions decide by default (tests/core/test_case_pass)
    gated = apply_gates(summary, (Gate(GateMetric.ERRORED_EXECUTIONS, maximum=0),))
    assert gated.gates == [GateResult(gate="errored_executions <= 0", passed=False, actual=2.0)]
    # the summary survives a JSON round trip with its gates
    again = RunSummary.model_validate_json(gated.model_dump_json())
    assert again == gated
    assert again.gates_passed is False


def test_case_result_record_round_trip(
    completion: Rubric, make_rubric: Callable[..., Rubric], make_case: Callable[..., Case]
) -> None:
    tone = make_rubric("tone", {"clear_confirmation": 0.5, "polite": 0.5})
    case = make_case("late")
    verdicts = {
        "correct_participants": passed("final_state.booking.participants == ['Alice', 'Bob']"),
        "correct_time": failed("final_state.booking.time is '11:00', expected '10:00'"),
        "correct_duration": passed(),
        "no_double_booking": not_applicable("no conflict"),
        "clear_confirmation": passed(),
        "polite": errored("RuntimeError: judge unavailable", reason="check raised an error"),
    }
    results = {r.name: score_rubric(r, verdicts, case) for r in (completion, tone)}
    original = CaseResult(
        case.id, 2, verdicts, results, latency_ms=1234.5, agent_error=None, position=7
    )
    assert original.errored is True
    record = json.loads(json.dumps(original.to_record()))
    assert record["scores"]["completion"] == {
        "status": "scored",
        "score": pytest.approx(0.55 / 0.8),
        "outcome": "graceful_failure",
        "excluded": ["no_double_booking"],
        "required_failed": [],
        "errored": [],
        "outcome_rule": 4,  # with a success flag: graceful failure if score >= 0.5
    }
    assert record["scores"]["tone"]["status"] == "errored"
    assert record["verdicts"]["polite"] == {
        "state": "errored",
        "reason": "check raised an error",
        "error": "RuntimeError: judge unavailable",
    }
    assert "error" not in record["verdicts"]["correct_time"]
    checks_of = {"completion": completion.check_names, "tone": tone.check_names}
    rebuilt = CaseResult.from_record(record, checks_of)
    assert rebuilt == original
    assert CaseResult.from_record(original.to_record(), checks_of) == original
    assert rebuilt.results["tone"].explanation == (
        "tone: not scored (polite errored: RuntimeError: judge unavailable)"
    )
    # without the rubrics' check lists every verdict is attached to every rubric
    loose = CaseResult.from_record(record)
    assert set(loose.results["tone"].details) == set(verdicts)
    assert loose.results["completion"].score == original.results["completion"].score


def test_agent_error_record_round_trip(completion: Rubric, make_case: Callable[..., Case]) -> None:
    original = CaseResult("down", 1, {}, {}, latency_ms=30000.0, agent_error="TimeoutError")
    assert original.errored is True
    rebuilt = CaseResult.from_record(json.loads(json.dumps(original.to_record())))
    assert rebuilt == original
    assert rebuilt.errored is True
    ok = dict.fromkeys(completion.check_names, passed())
    assert _run(completion, make_case("ok"), ok).errored is False


def test_verdict_dict_round_trip() -> None:
    for verdict in (
        passed("ok"),
        failed("final_state.booking.time is '11:00'"),
        not_applicable("no conflict"),
        errored("KeyError: 'time'"),
    ):
        assert Verdict.from_dict(json.loads(json.dumps(verdict.to_dict()))) == verdict
    assert Verdict.from_dict({"state": "passed"}) == Verdict(VerdictState.PASSED, "", None)
    assert passed().passed is True
    assert failed("x").passed is False
    assert errored("x").passed is False
    assert errored("boom").reason == "check raised an error"
    assert ScoreStatus("errored") is ScoreStatus.ERRORED
