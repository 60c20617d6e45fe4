"""Every judge prompt puts what repeats first and the case last: for each kind of judge call,
two cases' prompts are the same up to the case (the system message and the user message's
marked shared prefix) and differ after it, and the Anthropic wire marks exactly that prefix."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from checkweigh.core import Case
from checkweigh.judges import (
    Example,
    FaithfulnessCheck,
    GoalAccuracyCheck,
    GradedJudgeCheck,
    JudgeCheck,
    JudgeModel,
    JudgeReply,
    JudgeRequest,
    Question,
    QuestionBatch,
)
from checkweigh.judges._prompt_cache import cache_marked
from support.recorded_suite import make_case

ON_TIME = Case.model_validate(make_case("ok-1", participants=["Alice", "Bob"], time="10:00"))
LATE = Case.model_validate(
    make_case(
        "wrong-time",
        participants=["Alice"],
        time="11:00",
        reply="Booked Alice on Tuesday at 11:00; Bob was busy at 10.",
    )
)
ASKED = JudgeCheck(
    question="Did the agent book the time the user asked for?",
    rubric="A booking at any other time than the one asked for is a no, whatever the reply says.",
    examples=(
        Example(situation="Asked for 10:00, booked 10:00.", verdict="yes", reason="same time"),
        Example(situation="Asked for 10:00, booked 10:30.", verdict="no", reason="moved"),
    ),
)
TOLD = JudgeCheck(question="Does the final reply tell the user the booked time?")


class Recorder:
    """A judge that answers each schema validly and keeps every request."""

    name = "recorder:test"

    def __init__(self) -> None:
        self.requests: list[JudgeRequest] = []

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        user = request.messages[-1].content
        numbered = len(re.findall(r"^\d+\. ", request.shared_text(), re.MULTILINE))
        answers: dict[str, Any] = {
            "binary_verdict": {"verdict": "yes", "reason": "checked"},
            "checklist": {
                "answers": [
                    {"index": i, "verdict": "yes", "reason": "checked"}
                    for i in range(1, numbered + 1)
                ]
            },
            "scores": {
                "scores": [
                    {"metric": m, "score": 4, "reason": "good"}
                    for m in re.findall(r"^- (\w+):", user, re.MULTILINE)
                ]
            },
            "statements": {
                "statements": [
                    {"text": "The meeting is booked.", "load_bearing": True},
                    {"text": "The booking is on Tuesday.", "load_bearing": True},
                ]
            },
            "statement_verdicts": {
                "answers": [
                    {"index": i, "verdict": "yes", "reason": "in the trace"} for i in (1, 2)
                ]
            },
            # the end state is the case's own, so the comparison's case part differs too
            "workflow": {"user_goal": "Book Alice and Bob at 10", "end_state": user[-120:]},
        }
        return JudgeReply(text=json.dumps(answers[request.schema_name]), model="recorder")


Kind = Callable[[Case, JudgeModel], Awaitable[object]]
KINDS: dict[str, Kind] = {
    "judge": ASKED.evaluate,
    "judge without rubric": TOLD.evaluate,
    "batch checklist": QuestionBatch((Question("asked", ASKED), Question("told", TOLD))).evaluate,
    "graded scale": GradedJudgeCheck().evaluate,
    "graded binary": GradedJudgeCheck(mode="binary").evaluate,
    "faithfulness": FaithfulnessCheck().evaluate,
    "goal accuracy": GoalAccuracyCheck().evaluate,
}


def _requests(kind: Kind, case: Case) -> list[JudgeRequest]:
    judge = Recorder()
    asyncio.run(kind(case, judge))
    return judge.requests


@pytest.mark.parametrize("name", list(KINDS))
def test_two_cases_prompts_share_everything_up_to_the_case(name: str) -> None:
    first, second = _requests(KINDS[name], ON_TIME), _requests(KINDS[name], LATE)
    assert first
    assert len(first) == len(second)
    for a, b in zip(first, second, strict=True):
        assert a.messages[0] == b.messages[0]  # the system message
        user_a, user_b = a.messages[1].content, b.messages[1].content
        shared = a.shared_prefix
        assert shared == b.shared_prefix > 0
        assert user_a[:shared] == user_b[:shared] == a.shared_text()
        assert user_a[shared:] != user_b[shared:]  # everything that differs is the case's
        # the prefix ends exactly where the case's first block starts
        assert user_a[shared:].startswith(("<task_input>", "<reference>"))
        assert "11:00" not in user_b[:shared]
        assert "11:00" in user_b[shared:]


@pytest.mark.parametrize("name", list(KINDS))
def test_the_anthropic_wire_marks_the_shared_prefix_for_caching(name: str) -> None:
    for request in _requests(KINDS[name], LATE):
        system, messages = cache_marked(request)
        head, rest = messages[0]["content"]
        assert head == {
            "type": "text",
            "text": request.shared_text(),
            "cache_control": {"type": "ephemeral"},
        }
        assert head["text"] + rest["text"] == request.messages[1].content  # the same prompt
        assert system == [{"type": "text", "text": request.messages[0].content}]


def test_the_shared_prefix_is_not_part_of_the_judge_cache_key() -> None:
    # how a prompt is sent is not what it says: answers cached before the mark still replay
    request = _requests(KINDS["judge"], ON_TIME)[0]
    assert "shared_prefix" not in request.model_dump()
    unmarked = request.model_copy(update={"shared_prefix": 0})
    assert unmarked.model_dump() == request.model_dump()
