"""Suite folders written into tmp_path: a realistic scheduling suite, its cases and checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

SUITE = """\
name: scheduling
description: Recorded runs of the scheduling agent
cases: cases.jsonl
checks:
  correct_participants:
    type: set_equals
    path: final_state.booking.participants
    expected_path: ground_truth.participants
    description: everyone asked for is invited
  correct_time:
    type: equals
    path: final_state.booking.time
    expected_path: ground_truth.time
  correct_duration:
    type: within_tolerance
    path: final_state.booking.duration
    expected_path: ground_truth.duration
    abs_tol: 5
  no_double_booking:
    type: count
    step: book_meeting
    max: 1
  clear_confirmation:
    type: regex
    path: output
    pattern: "(?i)booked .* at \\\\d{1,2}:\\\\d{2}"
  checked_first:
    type: before
    first: check_availability
    then: {name: book_meeting}
  detected_conflict:
    type: tool_called
    step: {kind: event, name: conflict_detected}
    when: {path: metadata.scenario, equals: conflict}
  offered_alternatives:
    type: contains
    path: trace[3].content
    values: ["14:00", "16:30"]
    when:
      - {path: metadata.scenario, in: [conflict]}
      - {path: final_state.error, truthy: false}
  kept_request:
    type: python
    function: sched_suite_checks:duration_between
    args: {low: 15, high: 60}
  polite:
    type: python
    function: sched_suite_checks:polite_judge
rubrics:
  completion:
    weights:
      correct_participants: 0.25
      correct_time: {weight: 0.25, required: true}
      correct_duration: 0.10
      no_double_booking: 0.20
      clear_confirmation: {weight: 0.20, not_applicable: pass}
  error_recovery:
    when: {path: metadata.scenario, equals: conflict}
    weights:
      detected_conflict: 0.30
      offered_alternatives: 0.25
      checked_first: 0.20
      kept_request: 0.15
      polite: 0.05
    outcomes: {success_min: 0.8, graceful_min: 0.4, failed_stage: aborted}
    bands: {production_ready: 0.9, needs_improvement: 0.6}
  process:
    weights: {checked_first: 1, no_double_booking: 1}
    outcome_rules:
      - {outcome: successful_completion, min_score: 1.0}
      - outcome: hard_failure
        max_score: 0.0
        state: {path: final_state.stage, equals: failed}
      - {outcome: partial_failure}
gates:
  - {metric: tcr, rubric: completion, min: 0.7}
  - {metric: outcome_rate, rubric: completion, outcome: hard_failure, max: 0.1}
  - {metric: check_pass_rate, rubric: completion, check: correct_time, min: 0.8}
  - {metric: errored_executions, max: 0}
  - {metric: tcr_lower, rubric: error_recovery, min: 0.5}
"""

CHECKS_MODULE = """
import asyncio

from checkweigh.checks import check


@check(version="2")
def duration_between(case, low=15, high=60):
    minutes = case.final_state["booking"]["duration"]
    return low <= minutes <= high, f"{minutes} minutes"


@check
async def polite_judge(case):
    await asyncio.sleep(0)
    return "Would" in case.trace[3].content, "offered politely"
"""

REQUEST = "Book a 30 minute Weekly Sync with Alice and Bob on Tuesday at 10:00"


def scheduling_case(case_id: str, *, conflict: bool = True, time: str = "14:00") -> dict[str, Any]:
    """A recorded run; with a conflict, the agent asks, gets a yes and books 14:00."""
    trace: list[dict[str, Any]] = [
        {"kind": "user", "content": REQUEST},
        {
            "kind": "tool_call",
            "name": "check_availability",
            "arguments": {"participants": ["Alice", "Bob"], "day": "Tuesday"},
            "result": {"free": ["14:00", "16:30"] if conflict else ["10:00"]},
            "latency_ms": 120.0,
        },
    ]
    if conflict:
        trace += [
            {"kind": "event", "name": "conflict_detected", "content": "Bob is busy at 10:00"},
            {"kind": "assistant", "content": "Bob is busy at 10:00. Would 14:00 or 16:30 work?"},
            {"kind": "user", "content": "14:00 works"},
            {"kind": "event", "name": "user_confirmed"},
        ]
    trace += [
        {
            "kind": "tool_call",
            "name": "book_meeting",
            "arguments": {"participants": ["Alice", "Bob"], "time": time, "duration": 30},
            "result": {"booking_id": "bk-88"},
            "latency_ms": 210.0,
        },
        {"kind": "assistant", "content": f"Booked Alice and Bob on Tuesday at {time}."},
    ]
    return {
        "id": case_id,
        "input": REQUEST,
        "trace": trace,
        "final_state": {
            "success": True,
            "stage": "completed",
            "booking": {"participants": ["Alice", "Bob"], "time": time, "duration": 30},
        },
        "ground_truth": {
            "participants": ["Bob", "Alice"],
            "time": "14:00" if conflict else "10:00",
            "duration": 30,
        },
        "metadata": {"scenario": "conflict" if conflict else "happy_path"},
    }


def write_cases(path: Path, cases: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


@pytest.fixture
def suite_dir(tmp_path: Path, fresh_modules: None) -> Path:
    """A folder with the scheduling suite, its cases and its checks module."""
    folder = tmp_path / "scheduling"
    folder.mkdir()
    (folder / "suite.yaml").write_text(SUITE, encoding="utf-8")
    (folder / "sched_suite_checks.py").write_text(CHECKS_MODULE, encoding="utf-8")
    write_cases(
        folder / "cases.jsonl",
        [scheduling_case("conflict-ok"), scheduling_case("happy", conflict=False, time="10:00")],
    )
    return folder


@pytest.fixture
def conflict_case_data() -> dict[str, Any]:
    """One recorded conflict run, as JSON data."""
    return scheduling_case("conflict-ok")


@pytest.fixture
def recorded_cases() -> list[dict[str, Any]]:
    """Three recorded runs: a conflict handled well, a plain booking, a wrong time."""
    return [
        scheduling_case("conflict-1"),
        scheduling_case("happy-1", conflict=False, time="10:00"),
        scheduling_case("wrong-time", conflict=False, time="11:00"),
    ]
