"""The command-agent example: the Node scheduling agent scored by `checkweigh run` as its
README says, and the agent's own contract (a request on stdin, a reply on stdout)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from support import cli_process as cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "command_agent"

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def _ask(request: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(
        ["node", "agent.js"],
        cwd=EXAMPLE,
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply


def test_the_suite_scores_the_node_agent_through_checkweigh_run(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    done = cli.run(
        ["run", str(EXAMPLE / "suite.yaml"), "--db", f"sqlite:///{db}"], tmp_path, timeout=120
    )
    assert done.code == 0, done.out + done.err
    assert "8 execution(s) of 8 case(s); 0 errored" in done.out
    assert "cases 7 passed, 1 failed, 0 errored of 8" in done.out
    assert "failed c07-3pm#0: required check failed: correct_participants" in done.out
    assert "gates passed" in done.out
    assert "Traceback" not in done.out + done.err
    assert cli.run_row(db) == ("complete", 8, False)
    with sqlite3.connect(db) as conn:
        errors = conn.execute("select count(*) from case_results where errored")
        assert errors.fetchone()[0] == 0


def test_the_agent_books_checks_first_and_offers_slots_on_a_conflict() -> None:
    booked = _ask(
        {
            "id": "c01",
            "input": {
                "message": "Book a 45 minute meeting with Alice and Bob on 2025-03-04 at 10:00"
            },
            "metadata": {},
        }
    )
    names = [s.get("name") for s in booked["trace"] if s["kind"] == "tool_call"]
    assert names == ["lookup_person", "lookup_person", "check_availability", "book_meeting"]
    assert booked["final_state"]["scheduling_context"]["booked_event"] == {
        "participants": ["Alice", "Bob"],
        "date": "2025-03-04",
        "time": "10:00",
        "duration": 45,
        "event_id": "evt-2025-03-04-10:00",
    }
    conflict = _ask(
        {"id": "c03", "input": {"message": "Book 30 minutes with Alice on 2025-03-04 at 14:00"}}
    )
    context = conflict["final_state"]["scheduling_context"]
    assert context["booking_confirmed"] is False
    assert context["proposed_alternatives"] == [
        {"date": "2025-03-04", "time": "15:00", "duration": 30},
        {"date": "2025-03-04", "time": "15:30", "duration": 30},
    ]


def test_in_a_conversation_the_agent_answers_the_newest_user_message() -> None:
    reply = _ask(
        {
            "id": "c06",
            "input": {"message": "Book a meeting with Dan on 2025-03-07"},
            "metadata": {},
            "messages": [
                {"role": "user", "content": "Book a meeting with Dan on 2025-03-07"},
                {"role": "assistant", "content": "What time on Friday should it start?"},
                {"role": "user", "content": "With Dan on 2025-03-07 at 11:00 please"},
            ],
            "turn": 1,
        }
    )
    assert reply["final_state"]["scheduling_context"]["booked_event"]["time"] == "11:00"
    assert reply["trace"][0] == {
        "kind": "user",
        "content": "With Dan on 2025-03-07 at 11:00 please",
    }
