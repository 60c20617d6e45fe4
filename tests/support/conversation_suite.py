"""A multi-turn suite for tests: a booking desk agent (a Python callable on the conversation's
messages) and cases whose users are scripted or simulated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

AGENT = '''\
import re
import time

TIME = re.compile(r"\\b(\\d{1,2}:\\d{2})\\b")


def desk(messages):
    """Books at the last time any user message named; obeys a few magic words."""
    said = [m["content"] for m in messages if m["role"] == "user"]
    last = said[-1]
    if "crash" in last:
        raise RuntimeError("calendar API unreachable")
    if "hang" in last:
        time.sleep(30)
    if "transfer" in last:
        return {
            "trace": [
                {"kind": "tool_call", "name": "transfer_to_human_agents",
                 "arguments": {"summary": last}, "result": "ok"},
                {"kind": "assistant", "content": "Transferring you to a colleague."},
            ],
            "final_state": {"booking": booking(said)},
        }
    if "bye" in last:
        return {
            "trace": [{"kind": "assistant", "content": "Goodbye."}],
            "final_state": {"booking": booking(said), "conversation": "ended"},
        }
    found = booking(said)
    if found is None:
        return {
            "trace": [{"kind": "assistant", "content": "What time should I book?"}],
            "final_state": {"booking": None},
        }
    return {
        "trace": [
            {"kind": "tool_call", "name": "book_meeting", "arguments": found,
             "result": {"confirmed": True}},
            {"kind": "assistant", "content": "Booked at " + found["time"] + "."},
        ],
        "final_state": {"booking": found},
    }


def booking(said):
    times = [t for text in said for t in TIME.findall(text)]
    return {"time": times[-1]} if times else None
'''

SUITE = """\
name: desk
cases: cases.jsonl
target:
  agent: desk:desk
  concurrency: 4
  max_turns: MAX_TURNS
TIMEOUT
checks:
  final_time:
    type: equals
    path: final_state.booking.time
    expected_path: ground_truth.time
  stop_reason:
    type: equals
    path: final_state.conversation.stop_reason
    expected_path: ground_truth.stop_reason
  last_reply:
    type: equals
    path: turns[-1].output
    expected_path: ground_truth.last_reply
rubrics:
  conversation:
    weights:
      final_time: 0.4
      stop_reason: 0.3
      last_reply: 0.3
thresholds:
  pass_threshold: 50
  metrics_pass_threshold: 0
  cases_pass_threshold: 0
"""


def write_desk(
    folder: Path,
    cases: list[dict[str, Any]],
    *,
    max_turns: int = 10,
    timeout_s: float | None = None,
) -> Path:
    """The desk agent, its suite and ``cases`` in ``folder``; the suite's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "desk.py").write_text(AGENT)
    timeout = f"  timeout_s: {timeout_s}" if timeout_s is not None else ""
    text = SUITE.replace("MAX_TURNS", str(max_turns)).replace("TIMEOUT", timeout)
    (folder / "suite.yaml").write_text(text)
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return folder / "suite.yaml"


def scripted(case_id: str, turns: list[str], **truth: Any) -> dict[str, Any]:
    """A case whose user says ``turns``."""
    return {"id": case_id, "input": turns[0], "user": {"turns": turns}, "ground_truth": truth}


def simulated(case_id: str, goal: str, persona: str = "", **truth: Any) -> dict[str, Any]:
    """A case whose user is simulated with ``goal``."""
    user = {"goal": goal, "persona": persona}
    return {"id": case_id, "input": goal, "user": user, "ground_truth": truth}
