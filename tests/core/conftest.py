"""Shared data for the core tests: scheduling cases and the seed's rubrics."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from checkweigh.core import (
    Case,
    NotApplicablePolicy,
    Rubric,
    RubricItem,
)

COMPLETION_WEIGHTS = {
    "correct_participants": 0.25,
    "correct_time": 0.25,
    "correct_duration": 0.10,
    "no_double_booking": 0.20,
    "clear_confirmation": 0.20,
}
"""The seed's completion rubric: weights sum to 1.0."""

RECOVERY_WEIGHTS = {
    "detected_conflict": 0.30,
    "told_user": 0.25,
    "offered_alternatives": 0.20,
    "kept_request": 0.15,
    "polite": 0.05,
}
"""The seed's error-recovery rubric: weights sum to 0.95, so they get normalized."""


def scheduling_case(
    case_id: str = "sched-001",
    *,
    success: bool = True,
    stage: str = "completed",
    time: str = "10:00",
    scenario: str = "happy_path",
) -> Case:
    """A recorded run of a scheduling agent booking a meeting for Alice and Bob."""
    return Case.model_validate(
        {
            "id": case_id,
            "input": "Book a 30 minute sync with Alice and Bob on Tuesday at 10:00",
            "trace": [
                {
                    "kind": "user",
                    "content": "Book a 30 minute sync with Alice and Bob on Tuesday at 10:00",
                },
                {
                    "kind": "tool_call",
                    "name": "check_availability",
                    "arguments": {"participants": ["Alice", "Bob"], "day": "Tuesday"},
                    "result": {"free": ["10:00", "14:00"]},
                    "latency_ms": 120.0,
                },
                {
                    "kind": "tool_call",
                    "name": "book_meeting",
                    "arguments": {"participants": ["Alice", "Bob"], "time": time, "duration": 30},
                    "result": {"booking_id": "bk-88"},
                    "latency_ms": 200.0,
                },
                {
                    "kind": "assistant",
                    "content": f"Booked Alice and Bob on Tuesday at {time} for 30 minutes.",
                    "latency_ms": 450.0,
                },
            ],
            "final_state": {
                "success": success,
                "stage": stage,
                "booking": {"participants": ["Alice", "Bob"], "time": time, "duration": 30},
            },
            "ground_truth": {"participants": ["Alice", "Bob"], "time": "10:00", "duration": 30},
            "metadata": {"scenario": scenario},
        }
    )


@pytest.fixture
def make_case() -> Callable[..., Case]:
    """Build a scheduling case; keyword arguments vary the outcome fields."""
    return scheduling_case


@pytest.fixture
def booked_case() -> Case:
    """A successful booking."""
    return scheduling_case()


@pytest.fixture
def failed_case() -> Case:
    """A run that ended in the failed stage, with the success flag down."""
    return scheduling_case("sched-crash", success=False, stage="failed")


def rubric_from(
    name: str,
    weights: dict[str, float],
    *,
    policy: NotApplicablePolicy = NotApplicablePolicy.EXCLUDE,
    required: tuple[str, ...] = (),
    **kwargs: Any,
) -> Rubric:
    """A rubric over ``weights`` with one not-applicable policy for every check."""
    items = [RubricItem(c, w, c in required, policy) for c, w in weights.items()]
    return Rubric.build(name, items, **kwargs)


@pytest.fixture
def completion() -> Rubric:
    """The seed's completion rubric."""
    return rubric_from("completion", COMPLETION_WEIGHTS)


@pytest.fixture
def recovery() -> Rubric:
    """The seed's error-recovery rubric (weights sum to 0.95)."""
    return rubric_from("error_recovery", RECOVERY_WEIGHTS)


@pytest.fixture
def make_rubric() -> Callable[..., Rubric]:
    """Build a rubric from a name and a check-to-weight mapping."""
    return rubric_from
