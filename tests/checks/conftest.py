"""A recorded scheduling run with a calendar conflict, for the check tests."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from checkweigh.core import Case

REQUEST = "Book a 30 minute Weekly Sync with Alice and Bob on Tuesday at 10:00"

CONFLICT_RUN: dict[str, Any] = {
    "id": "sched-017",
    "input": REQUEST,
    "trace": [
        {"kind": "user", "content": REQUEST},
        {
            "kind": "tool_call",
            "name": "check_availability",
            "arguments": {"participants": ["Alice", "Bob"], "day": "Tuesday"},
            "result": {"free": ["14:00", "16:30"]},
            "latency_ms": 120.0,
        },
        {"kind": "event", "name": "conflict_detected", "content": "Bob is busy at 10:00"},
        {
            "kind": "assistant",
            "content": "Bob is busy at 10:00 on Tuesday. Would 14:00 or 16:30 work instead?",
        },
        {"kind": "user", "content": "14:00 works, go ahead"},
        {"kind": "event", "name": "user_confirmed"},
        {
            "kind": "tool_call",
            "name": "book_meeting",
            "arguments": {
                "participants": ["Alice", "Bob"],
                "time": "14:00",
                "duration": 30,
                "title": "Weekly Sync",
            },
            "result": {"booking_id": "bk-88"},
            "latency_ms": 210.0,
        },
        {
            "kind": "assistant",
            "content": "Booked the Weekly Sync with Alice and Bob on Tuesday at 14:00 for "
            "30 minutes. Confirmation: bk-88.",
        },
    ],
    "final_state": {
        "success": True,
        "stage": "completed",
        "booking": {
            "participants": ["Alice", "Bob"],
            "time": "14:00",
            "duration": 30,
            "title": "Weekly Sync",
            "price_eur": 41.5,
        },
        "raw_response": '{"booking_id": "bk-88", "time": "14:00", "duration": 30}',
        "alternatives": ["14:00", "16:30"],
    },
    "ground_truth": {
        "participants": ["Bob", "Alice"],
        "time": "14:00",
        "duration": 30,
        "tools": ["check_availability", "book_meeting"],
        "price_eur": 40.0,
    },
    "metadata": {"scenario": "conflict"},
}


@pytest.fixture
def run_data() -> dict[str, Any]:
    """A fresh, editable copy of the conflict run's JSON."""
    return copy.deepcopy(CONFLICT_RUN)


@pytest.fixture
def conflict_case(run_data: dict[str, Any]) -> Case:
    """The conflict run as a case."""
    return Case.model_validate(run_data)


@pytest.fixture
def case_with(run_data: dict[str, Any]) -> Callable[..., Case]:
    """The conflict run with top-level fields replaced, e.g. ``case_with(trace=[...])``."""

    def build(**fields: Any) -> Case:
        return Case.model_validate({**run_data, **fields})

    return build
