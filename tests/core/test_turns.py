"""The ``turns`` view of a conversation: derived from the trace's user steps, addressable from
check field paths, and a judge check that reads the whole conversation."""

from __future__ import annotations

import asyncio
import json

from checkweigh.checks import Contains, Count, Equals
from checkweigh.core import Case, VerdictState
from checkweigh.judges import JudgeCheck, ScriptedJudge

P, F = VerdictState.PASSED, VerdictState.FAILED

CONVERSATION = {
    "id": "corrects-the-date",
    "input": "Book the review with Alice on Tuesday at 10:00",
    "user": {"turns": ["Book the review with Alice on Tuesday at 10:00", "Sorry, Wednesday"]},
    "trace": [
        {"kind": "system", "content": "You book meetings."},
        {"kind": "user", "content": "Book the review with Alice on Tuesday at 10:00"},
        {"kind": "tool_call", "name": "check_availability", "arguments": {"date": "2025-03-04"}},
        {"kind": "tool_call", "name": "book_meeting", "arguments": {"date": "2025-03-04"}},
        {"kind": "assistant", "content": "Booked Tuesday 2025-03-04 at 10:00.", "latency_ms": 80},
        {"kind": "user", "content": "Sorry, Wednesday"},
        {"kind": "tool_call", "name": "cancel_meeting", "arguments": {"date": "2025-03-04"}},
        {"kind": "tool_call", "name": "book_meeting", "arguments": {"date": "2025-03-05"}},
        {"kind": "assistant", "content": "Moved to Wednesday 2025-03-05 at 10:00."},
    ],
    "final_state": {"conversation": {"stop_reason": "script_end", "turns": 2}},
    "ground_truth": {"date": "2025-03-05"},
}


def test_turns_cut_the_trace_at_each_user_message() -> None:
    case = Case.model_validate(CONVERSATION)
    turns = case.turns
    assert [(t.index, t.user, t.output) for t in turns] == [
        (
            0,
            "Book the review with Alice on Tuesday at 10:00",
            "Booked Tuesday 2025-03-04 at 10:00.",
        ),
        (1, "Sorry, Wednesday", "Moved to Wednesday 2025-03-05 at 10:00."),
    ]
    # the system prompt before the first user message belongs to no turn
    assert [s.name for s in turns[0].trace if s.kind == "tool_call"] == [
        "check_availability",
        "book_meeting",
    ]
    assert (turns[0].latency_ms, turns[1].latency_ms) == (80.0, None)


def test_a_trace_without_user_steps_has_no_turns_and_an_unanswered_user_is_a_turn() -> None:
    assert Case.model_validate({"id": "a", "trace": [{"kind": "assistant"}]}).turns == []
    open_ended = Case.model_validate({"id": "b", "trace": [{"kind": "user", "content": "hi?"}]})
    assert [(t.user, t.output, t.trace) for t in open_ended.turns] == [("hi?", "", [])]


def test_checks_address_turns_by_path() -> None:
    case = Case.model_validate(CONVERSATION)
    rows = [
        (Equals(path="turns[1].user", value="Sorry, Wednesday"), P),
        (Contains(path="turns[-1].output", values=["2025-03-05"]), P),
        (Contains(path="turns[0].output", values=["2025-03-05"]), F),
        # the second turn's booking, not any booking of the conversation
        (
            Equals(
                path="turns[1].trace[name=book_meeting].arguments.date",
                expected_path="ground_truth.date",
                match="all",
            ),
            P,
        ),
        (Equals(path="final_state.conversation.stop_reason", value="script_end"), P),
        (Contains(path="turns[*].output", values=["Moved"], match="any"), P),
        (Equals(path="turns[2].output", value="anything"), F),  # no third turn: missing
        (Count(step="book_meeting", min=2, max=2), P),
    ]
    assert [(c.evaluate(case).state) for c, _ in rows] == [want for _, want in rows]
    missing = Equals(path="turns[2].output", value="anything").evaluate(case)
    assert "turns[2].output" in missing.reason


def test_a_judge_check_reads_the_whole_conversation() -> None:
    case = Case.model_validate(CONVERSATION)
    judge = ScriptedJudge([json.dumps({"verdict": "yes", "reason": "moved as asked"})])
    check = JudgeCheck(question="Did the agent move the meeting when the user corrected the day?")
    verdict = asyncio.run(check.evaluate(case, judge))
    assert verdict.state is P
    prompt = judge.requests[0].messages[-1].content
    order = [
        "[2] user: Book the review with Alice on Tuesday at 10:00",
        "[5] assistant: Booked Tuesday 2025-03-04 at 10:00.",
        "[6] user: Sorry, Wednesday",
        '[8] tool_call book_meeting({"date": "2025-03-05"})',
        "[9] assistant: Moved to Wednesday 2025-03-05 at 10:00.",
    ]
    positions = [prompt.index(line) for line in order]
    assert positions == sorted(positions)
