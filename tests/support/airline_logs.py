"""Imported airline customer-service logs: what a converter of OpenAI chat logs writes.

Tool calls carry the provider's ids, arguments as JSON text, their results (or errors) and the
model's token usage; ``final_state`` is the reservation database after the episode, with no
success flag in it (real logs have none). The suite reproduces the benchmark's rule with
``pass_policy: all_checks``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SUITE = """\
name: airline-cancellations
description: recorded customer-service conversations, imported from OpenAI message logs
cases: cases.jsonl
checks:
  looked_up_first:
    type: before
    first: get_reservation_details
    then: cancel_reservation
  right_final_status:
    type: equals
    path: final_state.reservation.status
    expected_path: ground_truth.status
  one_cancellation:
    type: count
    step: cancel_reservation
    max: 1
  told_the_user:
    type: contains
    path: output
    values: [cancel]
    case_insensitive: true
  no_handoff:
    type: count
    step: transfer_to_human_agents
    max: 0
rubrics:
  task:
    weights:
      looked_up_first: {weight: 0.2, not_applicable: pass}
      right_final_status: 0.4
      one_cancellation: 0.1
      told_the_user: 0.2
      no_handoff: 0.1
THRESHOLDS
gates:
  - {metric: errored_executions, max: 0}
"""

ALL_CHECKS = "thresholds:\n  pass_policy: all_checks\n  cases_pass_threshold: 40\n"


def _call(
    call_id: str, name: str, arguments: dict[str, Any], result: Any = None, error: str | None = None
) -> dict[str, Any]:
    step: dict[str, Any] = {
        "kind": "tool_call",
        "id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),  # as OpenAI logs give them
        "attributes": {"model": "gpt-4o-2024-08-06", "input_tokens": 2417, "output_tokens": 38},
    }
    if error is None:
        step["result"] = result
    else:
        step["error"] = error
    return step


def conversation(
    case_id: str,
    reservation: str,
    *,
    expected: str,
    final: str,
    look_up: bool = True,
    cancels: int = 1,
    failed_first_cancel: bool = False,
    handoff: bool = False,
    reply: str | None = None,
) -> dict[str, Any]:
    """One imported conversation asking to cancel ``reservation``."""
    ask = (
        f"Hi, I need to cancel my reservation {reservation}, the trip is off. User id mia_li_3668."
    )
    trace: list[dict[str, Any]] = [
        {"kind": "system", "content": "You are an airline customer-service agent. Policy: ..."},
        {"kind": "user", "content": ask},
    ]
    if look_up:
        trace.append(
            _call(
                f"call_{case_id}_1",
                "get_reservation_details",
                {"reservation_id": reservation},
                {"reservation_id": reservation, "cabin": "economy", "insurance": "yes"},
            )
        )
        trace.append({"kind": "assistant", "content": "I found it. Shall I cancel it? (yes/no)"})
        trace.append({"kind": "user", "content": "yes"})
    if failed_first_cancel:
        trace.append(
            _call(
                f"call_{case_id}_2",
                "cancel_reservation",
                {"reservation_id": reservation.lower()},
                error="Error: reservation not found",
            )
        )
    for n in range(cancels):
        trace.append(
            _call(
                f"call_{case_id}_{3 + n}",
                "cancel_reservation",
                {"reservation_id": reservation},
                {"reservation_id": reservation, "status": "cancelled"},
            )
        )
    if handoff:
        trace.append(
            _call(
                f"call_{case_id}_9",
                "transfer_to_human_agents",
                {"summary": "user wants to cancel"},
                "Transfer successful",
            )
        )
    trace.append(
        {
            "kind": "assistant",
            "content": reply
            or f"Your reservation {reservation} is cancelled; the refund goes to the original "
            "payment method within 5 to 7 business days.",
        }
    )
    return {
        "id": case_id,
        "input": ask,
        "trace": trace,
        "final_state": {"reservation": {"id": reservation, "status": final}},
        "ground_truth": {"status": expected},
        "metadata": {"source": "openai", "task": "cancel"},
    }


def recorded_cases() -> list[dict[str, Any]]:
    """Seven conversations: three the benchmark counts as solved, four it does not."""
    return [
        conversation("task-03-run-0", "ZFA04Y", expected="cancelled", final="cancelled"),
        conversation("task-03-run-1", "8JX2WO", expected="cancelled", final="cancelled"),
        # a basic-economy ticket past 24 hours: refusing is right, and the status stays
        conversation(
            "task-11-run-0",
            "Q69X3R",
            expected="confirmed",
            final="confirmed",
            cancels=0,
            reply="I'm sorry, a basic economy booking can't be cancelled after 24 hours.",
        ),
        # cancelled without looking the reservation up first
        conversation(
            "task-03-run-2", "4WQ150", expected="cancelled", final="cancelled", look_up=False
        ),
        # a failed call, then a retry: two cancel_reservation calls
        conversation(
            "task-07-run-0",
            "M61CQM",
            expected="cancelled",
            final="cancelled",
            failed_first_cancel=True,
        ),
        # cancelled a ticket that must not be cancelled
        conversation("task-11-run-1", "Q69X3R", expected="confirmed", final="cancelled"),
        # handed off to a human and did nothing
        conversation(
            "task-07-run-1",
            "VAAOXJ",
            expected="cancelled",
            final="confirmed",
            cancels=0,
            handoff=True,
            reply="I've transferred you to a human agent who will help you.",
        ),
    ]


def write_airline_suite(
    folder: Path, cases: list[dict[str, Any]] | None = None, thresholds: str = ALL_CHECKS
) -> Path:
    """The suite and its cases file in ``folder``; returns the suite's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.yaml").write_text(SUITE.replace("THRESHOLDS\n", thresholds))
    rows = recorded_cases() if cases is None else cases
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in rows))
    return folder / "suite.yaml"
