"""A recorded suite large enough to span several chunks of worker processes, with a python
check (imported by each worker from the suite's folder), optionally async."""

from __future__ import annotations

import json
from pathlib import Path

from support.recorded_suite import make_case

CHECKS = """\
import asyncio


def polite(case):
    reply = case.output or ""
    return any(w in reply for w in ("please", "Booked", "Done"))


async def slow_polite(case):
    await asyncio.sleep(0)
    return polite(case)
"""

SUITE = """\
name: bookings-at-scale
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
  checked_first: {type: before, first: check_availability, then: book_meeting}
  polite: {type: python, function: "worker_suite_checks:POLITE"}
rubrics:
  completion:
    weights:
      correct_participants: 0.4
      correct_time: {weight: 0.3, required: true}
      checked_first: {weight: 0.1, not_applicable: pass}
      polite: 0.2
thresholds: {metrics_pass_threshold: 50.0, cases_pass_threshold: 30.0}
gates:
  - {rubric: completion, metric: tcr, min: 0.5}
"""


def case_line(i: int) -> str:
    """The i-th case: four kinds in turn (right, wrong time, missing person, no check first)."""
    kind = i % 4
    case = make_case(
        f"booking-{i:05d}",
        participants=["Alice"] if kind == 2 else ["Alice", "Bob"],
        time="11:00" if kind == 1 else "10:00",
        order=("book_meeting",) if kind == 3 else ("check_availability", "book_meeting"),
        reply="Booked Alice and Bob on Tuesday." if i % 5 else "Okay.",
    )
    case["latency_ms"] = 200.0 + (i * 7919) % 1800
    return json.dumps(case)


def write_worker_suite(folder: Path, n: int, *, async_check: bool = False) -> Path:
    """The suite and ``n`` cases in ``folder``; its path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "worker_suite_checks.py").write_text(CHECKS)
    name = "slow_polite" if async_check else "polite"
    (folder / "suite.yaml").write_text(SUITE.replace("POLITE", name))
    (folder / "cases.jsonl").write_text("".join(case_line(i) + "\n" for i in range(n)))
    return folder / "suite.yaml"
