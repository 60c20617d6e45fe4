"""A valid suite loads into resolved checks, rubrics, outcome rules and gates, and its
snapshot is plain JSON."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from checkweigh.checks import Before, Contains, Count, Equals, FunctionCheck, SetEquals
from checkweigh.core import (
    DEFAULT_GATES,
    Bands,
    Case,
    Condition,
    ConditionOp,
    FieldPath,
    NotApplicablePolicy,
    OutcomeClass,
    RubricItem,
    ScoreStatus,
    score_rubric,
)
from checkweigh.suites import Suite, load_suite


def test_checks_are_resolved(suite_dir: Path) -> None:
    suite = load_suite(suite_dir / "suite.yaml")
    assert isinstance(suite, Suite)
    assert suite.name == "scheduling"
    assert suite.path == suite_dir / "suite.yaml"
    assert suite.base_dir == suite_dir
    assert suite.cases_path == (suite_dir / "cases.jsonl").resolve()
    assert suite.target is None
    assert list(suite.checks) == [
        "correct_participants",
        "correct_time",
        "correct_duration",
        "no_double_booking",
        "clear_confirmation",
        "checked_first",
        "detected_conflict",
        "offered_alternatives",
        "kept_request",
        "polite",
    ]
    checks = suite.checks
    expected = {
        "correct_time": Equals(path="final_state.booking.time", expected_path="ground_truth.time"),
        "no_double_booking": Count(step="book_meeting", max=1),
        "checked_first": Before(first="check_availability", then="book_meeting"),
    }
    for name, spec in expected.items():
        assert type(checks[name].check) is type(spec)
        assert checks[name].check.model_dump() == spec.model_dump()  # type: ignore[attr-defined]
    assert isinstance(checks["correct_participants"].check, SetEquals)
    assert isinstance(checks["offered_alternatives"].check, Contains)
    assert checks["detected_conflict"].when == (
        Condition(FieldPath.parse("metadata.scenario"), ConditionOp.EQUALS, "conflict"),
    )
    # 'truthy: false' reads as falsy
    assert checks["offered_alternatives"].when == (
        Condition(FieldPath.parse("metadata.scenario"), ConditionOp.IN, ["conflict"]),
        Condition(FieldPath.parse("final_state.error"), ConditionOp.FALSY, False),
    )
    kept = checks["kept_request"]
    assert isinstance(kept.check, FunctionCheck)
    assert kept.check.kwargs == {"low": 15, "high": 60}
    assert (kept.version, kept.is_async) == ("2", False)
    assert checks["polite"].is_async is True
    assert suite.has_async_checks is True


def test_rubrics_weights_and_outcome_rules(suite_dir: Path) -> None:
    suite = load_suite(suite_dir / "suite.yaml")
    completion, recovery, process = suite.rubrics
    assert [r.name for r in suite.rubrics] == ["completion", "error_recovery", "process"]
    assert completion.items == (
        RubricItem("correct_participants", 0.25),
        RubricItem("correct_time", 0.25, required=True),
        RubricItem("correct_duration", 0.10),
        RubricItem("no_double_booking", 0.20),
        RubricItem("clear_confirmation", 0.20, not_applicable=NotApplicablePolicy.PASS),
    )
    assert completion.normalized is False
    # the defaults, since the rubric sets no outcomes
    assert [r.describe() for r in completion.outcome_rules] == [
        "successful_completion if score >= 0.75 and final_state.success == True",
        # a case without the success flag is classed by score
        "successful_completion if score >= 1 and final_state.success is missing",
        "hard_failure if score <= 0 and final_state.success exists "
        "and final_state.stage == 'failed'",
        "hard_failure if score <= 0 and final_state.stage == 'failed'",
        "graceful_failure if score >= 0.5 and final_state.success exists",
        "graceful_failure if score >= 0.5",
        "partial_failure if final_state.success exists",
        "partial_failure if otherwise",
    ]
    # the seed's error-recovery weights sum to 0.95
    assert recovery.normalized_weights == pytest.approx(
        {
            "detected_conflict": 0.30 / 0.95,
            "offered_alternatives": 0.25 / 0.95,
            "checked_first": 0.20 / 0.95,
            "kept_request": 0.15 / 0.95,
            "polite": 0.05 / 0.95,
        }
    )
    assert suite.notes() == [
        "weights of rubric 'error_recovery' sum to 0.95, not 1.0; they were normalized",
        "weights of rubric 'process' sum to 2, not 1.0; they were normalized",
    ]
    assert recovery.when == (
        Condition(FieldPath.parse("metadata.scenario"), ConditionOp.EQUALS, "conflict"),
    )
    assert recovery.bands == Bands(0.9, 0.6)
    # the default rules with the settings from 'outcomes:'
    assert [r.describe() for r in recovery.outcome_rules] == [
        "successful_completion if score >= 0.8 and final_state.success == True",
        "successful_completion if score >= 1 and final_state.success is missing",
        "hard_failure if score <= 0 and final_state.success exists "
        "and final_state.stage == 'aborted'",
        "hard_failure if score <= 0 and final_state.stage == 'aborted'",
        "graceful_failure if score >= 0.4 and final_state.success exists",
        "graceful_failure if score >= 0.4",
        "partial_failure if final_state.success exists",
        "partial_failure if otherwise",
    ]
    # explicit 'outcome_rules:'
    assert [r.describe() for r in process.outcome_rules] == [
        "successful_completion if score >= 1",
        "hard_failure if score <= 0 and final_state.stage == 'failed'",
        "partial_failure if otherwise",
    ]
    assert process.normalized_weights == {"checked_first": 0.5, "no_double_booking": 0.5}


def test_gates(suite_dir: Path) -> None:
    suite = load_suite(suite_dir / "suite.yaml")
    assert [g.describe() for g in suite.gates] == [
        "completion tcr >= 0.7",
        "completion hard_failure outcome_rate <= 0.1",
        "completion correct_time check_pass_rate >= 0.8",
        "errored_executions <= 0",
        "error_recovery tcr_lower >= 0.5",
    ]
    assert suite.gates[1].outcome is OutcomeClass.HARD_FAILURE


def test_no_gates_means_the_default_gates(suite_dir: Path) -> None:
    path = suite_dir / "suite.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: text.index("gates:")], encoding="utf-8")
    assert load_suite(path).gates == DEFAULT_GATES


def test_snapshot_is_json(suite_dir: Path) -> None:
    suite = load_suite(suite_dir / "suite.yaml")
    snapshot = json.loads(json.dumps(suite.snapshot()))
    assert snapshot["suite"] == "scheduling"
    assert snapshot["description"] == "Recorded runs of the scheduling agent"
    assert snapshot["cases_path"] == str(suite.cases_path)
    assert snapshot["target"] is None
    assert snapshot["checks"]["kept_request"] == {
        "version": "2",
        "spec": {
            "type": "python",
            "function": "sched_suite_checks:duration_between",
            "args": {"low": 15, "high": 60},
        },
        "when": [],
        "judged": False,
    }
    assert snapshot["checks"]["offered_alternatives"]["when"] == [
        "metadata.scenario in ['conflict']",
        "final_state.error is falsy",
    ]
    assert snapshot["checks"]["correct_participants"]["spec"]["description"] == (
        "everyone asked for is invited"
    )
    recovery = snapshot["rubrics"][1]
    assert recovery["name"] == "error_recovery"
    assert recovery["weight_total"] == pytest.approx(0.95)
    assert recovery["weights"]["detected_conflict"] == 0.30
    assert recovery["normalized_weights"]["detected_conflict"] == pytest.approx(0.30 / 0.95)
    assert recovery["when"] == ["metadata.scenario == 'conflict'"]
    assert recovery["bands"] == {"production_ready": 0.9, "needs_improvement": 0.6}
    completion = snapshot["rubrics"][0]
    assert completion["required"] == ["correct_time"]
    assert completion["not_applicable"]["clear_confirmation"] == "pass"
    assert snapshot["gates"][0] == "completion tcr >= 0.7"


def test_loaded_suite_scores_a_recorded_run(
    suite_dir: Path, conflict_case_data: dict[str, Any]
) -> None:
    suite = load_suite(suite_dir / "suite.yaml")
    case = Case.model_validate(conflict_case_data)

    async def judge_all() -> dict[str, Any]:
        return {name: await nc.arun(case) for name, nc in suite.checks.items()}

    verdicts = asyncio.run(judge_all())
    assert {n: v.state.value for n, v in verdicts.items()} == dict.fromkeys(suite.checks, "passed")
    results = {r.name: score_rubric(r, verdicts, case) for r in suite.rubrics}
    assert {n: (r.status, r.score, r.outcome) for n, r in results.items()} == {
        "completion": (ScoreStatus.SCORED, 1.0, OutcomeClass.SUCCESSFUL_COMPLETION),
        "error_recovery": (ScoreStatus.SCORED, 1.0, OutcomeClass.SUCCESSFUL_COMPLETION),
        "process": (ScoreStatus.SCORED, 1.0, OutcomeClass.SUCCESSFUL_COMPLETION),
    }


def test_suite_path_may_be_text(suite_dir: Path) -> None:
    assert load_suite(str(suite_dir / "suite.yaml")).name == "scheduling"
