"""A realistic recorded suite of scheduling traces, written into a folder for CLI tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SUITE = """\
name: bookings
description: recorded scheduling traces
cases: cases.jsonl
checks:
  correct_participants:
    type: set_equals
    path: final_state.booking.participants
    expected_path: ground_truth.participants
  correct_time:
    type: equals
    path: final_state.booking.time
    expected_path: ground_truth.time
  checked_first:
    type: before
    first: check_availability
    then: book_meeting
  clear_explanation:
    type: word_count
    path: output
    min: 5
rubrics:
  completion:
    weights:
      correct_participants: 0.4
      correct_time: {weight: 0.3, required: true}
      checked_first: {weight: 0.1, not_applicable: pass}
      clear_explanation: 0.2
THRESHOLDS
gates:
  - {rubric: completion, metric: tcr, min: GATE}
"""

# the standard cases pass 2 of 6 with a mean score of 61.7: lenient enough that report tests
# exit 0; tests of the pass dimensions give their own thresholds (or None: the defaults)
LENIENT = {"metrics_pass_threshold": 50.0, "cases_pass_threshold": 30.0}


def make_case(
    case_id: str,
    *,
    participants: list[str],
    time: str,
    expected_time: str = "10:00",
    reply: str = "Booked Alice and Bob on Tuesday at 10:00 for 30 minutes.",
    order: tuple[str, ...] = ("check_availability", "book_meeting"),
    success: bool = True,
) -> dict[str, Any]:
    trace: list[dict[str, Any]] = [{"kind": "user", "content": "Book Alice and Bob at 10"}]
    for name in order:
        trace.append({"kind": "tool_call", "name": name, "arguments": {}, "latency_ms": 40.0})
    trace.append({"kind": "assistant", "content": reply, "latency_ms": 300.0})
    return {
        "id": case_id,
        "input": {"message": "Book Alice and Bob at 10"},
        "trace": trace,
        "final_state": {
            "success": success,
            "stage": "completed" if success else "failed",
            "booking": {"participants": participants, "time": time},
        },
        "ground_truth": {"participants": ["Alice", "Bob"], "time": expected_time},
    }


def write_suite(
    folder: Path,
    cases: list[dict[str, Any]],
    gate: float = 0.5,
    thresholds: dict[str, float] | None = LENIENT,
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    block = ""
    if thresholds is not None:
        block = "thresholds:\n" + "".join(f"  {k}: {v}\n" for k, v in thresholds.items())
    text = SUITE.replace("GATE", str(gate)).replace("THRESHOLDS\n", block)
    (folder / "suite.yaml").write_text(text)
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return folder / "suite.yaml"


def standard_cases() -> list[dict[str, Any]]:
    return [
        make_case("ok-1", participants=["Alice", "Bob"], time="10:00"),
        make_case("ok-2", participants=["Bob", "Alice"], time="10:00"),
        make_case("wrong-time", participants=["Alice", "Bob"], time="11:00"),
        make_case("missing-bob", participants=["Alice"], time="10:00"),
        make_case(
            "crash",
            participants=[],
            time="",
            reply="",
            order=("book_meeting",),
            success=False,
        ),
        make_case("terse", participants=["Alice"], time="10:00", reply="Done."),
    ]
