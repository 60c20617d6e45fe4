"""A small booking suite on disk: recorded cases (one on time, one late, one whose reply is
missing so a python check errors) and an agent suite whose agent can raise."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

SUITE = """\
name: booking
cases: cases.yaml
checks:
  correct_time:
    type: equals
    path: final_state.booking.time
    expected_path: ground_truth.time
  correct_people:
    type: set_equals
    path: final_state.booking.people
    expected_path: ground_truth.people
  checked_calendar:
    type: tool_called
    step: check_availability
  short_reply:
    type: python
    function: booking_checks:short_reply
  polite:
    type: judge
    question: Is the final reply polite?
rubrics:
  completion:
    weights:
      correct_time: {weight: 0.5, required: true}
      correct_people: 0.3
      checked_calendar: 0.2
  reply:
    weights:
      short_reply: 0.6
      polite: 0.4
"""

CASES = """\
- id: on-time
  input: Book Alice and Bob at 10:00
  trace:
    - {kind: tool_call, name: check_availability}
    - {kind: tool_call, name: book_meeting}
    - {kind: assistant, content: Booked Alice and Bob at 10:00.}
  final_state:
    booking: {time: "10:00", people: [Alice, Bob]}
    reply: Booked Alice and Bob at 10:00.
    success: true
  ground_truth: {time: "10:00", people: [Alice, Bob]}
- id: late
  input: Book Alice and Bob at 10:00
  trace:
    - {kind: tool_call, name: book_meeting}
    - {kind: assistant, content: Booked Alice at 11:00.}
  final_state:
    booking: {time: "11:00", people: [Alice]}
    reply: Booked Alice at 11:00.
  ground_truth: {time: "10:00", people: [Alice, Bob]}
- id: no-reply
  input: Book Alice and Bob at 10:00
  trace:
    - {kind: tool_call, name: check_availability}
    - {kind: tool_call, name: book_meeting}
  final_state:
    booking: {time: "10:00", people: [Alice, Bob]}
  ground_truth: {time: "10:00", people: [Alice, Bob]}
"""

CHECKS = '''\
"""The booking suite's own check: async, so the suite takes the event-loop path."""

from checkweigh import check, failed, passed


@check
async def short_reply(case):
    words = len(case.final_state["reply"].split())  # a missing reply raises: errored
    return passed(f"{words} words") if words <= 12 else failed(f"{words} words, more than 12")
'''

AGENT_SUITE = """\
name: booking-agent
cases: agent_cases.yaml
target: {agent: booking_agent:run}
checks:
  correct_time:
    type: equals
    path: final_state.booking.time
    expected_path: ground_truth.time
  checked_calendar:
    type: tool_called
    step: check_availability
rubrics:
  completion:
    weights:
      correct_time: {weight: 0.7, required: true}
      checked_calendar: 0.3
"""

AGENT_CASES = """\
- {id: ten, input: Book Alice at 10:00, ground_truth: {time: "10:00"}}
- {id: outage, input: Book Alice at 10:00 (explode), ground_truth: {time: "10:00"}}
"""

AGENT = '''\
"""Books the time after " at "; raises when asked to explode."""


def run(message):
    if "explode" in message:
        raise RuntimeError("calendar service down")
    time = message.split(" at ")[1]
    return {
        "trace": [
            {"kind": "tool_call", "name": "check_availability"},
            {"kind": "tool_call", "name": "book_meeting"},
            {"kind": "assistant", "content": f"Booked at {time}."},
        ],
        "final_state": {"booking": {"time": time}, "success": True},
    }
'''


def write_booking(folder: Path) -> Path:
    """Write both suites and their files into ``folder``; returns ``folder / "suite.yaml"``."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "suite.yaml": SUITE,
        "cases.yaml": CASES,
        "booking_checks.py": CHECKS,
        "agent_suite.yaml": AGENT_SUITE,
        "agent_cases.yaml": AGENT_CASES,
        "booking_agent.py": AGENT,
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder / "suite.yaml"


@pytest.fixture
def booking(tmp_path: Path, fresh_modules: None) -> Path:
    """The booking suite's file, in a folder of its own."""
    return write_booking(tmp_path / "booking")


@pytest.fixture
def write_suite() -> Callable[[Path], Path]:
    """Writes the booking suites into a folder (for pytester's)."""
    return write_booking
