"""The judge cache keys of every judge check kind are pinned: answers cached by earlier runs
still hit. They were recorded before judge checks became one class each (commit d6f2ddf), and
again when the trace formatter became ``plain@2`` (its version is part of the key of every call
that renders the trace: a changed prompt must not reuse an answer given to the old one)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from checkweigh.core import Case
from checkweigh.judges import (
    Example,
    ExpectedOutcomesCheck,
    FaithfulnessCheck,
    GoalAccuracyCheck,
    GradedJudgeCheck,
    JudgeCheck,
    JudgeRequest,
    Question,
    QuestionBatch,
    ScriptedJudge,
    cache_key,
)

CASE = Case(
    id="k1",
    input={"message": "Refund my cancelled flight HAT170"},
    trace=[
        {"kind": "user", "content": "Refund my cancelled flight HAT170"},
        {
            "kind": "tool_call",
            "name": "issue_refund",
            "arguments": {"amount": 400},
            "result": {"ok": True},
        },
        {"kind": "assistant", "content": "Refunded 400 USD."},
    ],
    ground_truth={
        "expected_outcomes": ["A refund was issued.", "The user was told the amount."],
        "goal": "refund",
    },
)


def reply(request: JudgeRequest) -> str:
    """A valid answer of the shape asked for, so every call of a check is made."""
    name = request.schema_name
    text = request.messages[1].content
    if name == "binary_verdict":
        return '{"verdict": "yes", "reason": "r"}'
    if name == "statements":
        statement = {"text": "A refund of 400 was issued.", "load_bearing": True}
        return json.dumps({"statements": [statement]})
    if name == "workflow":
        return json.dumps({"user_goal": "g", "end_state": "e"})
    if name == "scores":
        names = [line[2:].split(":")[0] for line in text.splitlines() if line.startswith("- ")]
        return json.dumps({"scores": [{"metric": n, "score": 4, "reason": "ok"} for n in names]})
    n = sum(1 for line in text.splitlines() if re.match(r"^\d+\. ", line))
    answers = [{"index": i, "verdict": "yes", "reason": "ok"} for i in range(1, n + 1)]
    return json.dumps({"answers": answers})


Ask = Callable[[ScriptedJudge], Coroutine[Any, Any, Any]]
CHECKS: dict[str, Ask] = {
    "judge": lambda j: JudgeCheck(
        question="Was the refund right?",
        rubric="Be strict.",
        examples=(Example(situation="s", verdict="no", reason="r"),),
        samples=3,
        temperature=0.7,
    ).evaluate(CASE, j),
    "outcomes": lambda j: ExpectedOutcomesCheck().evaluate(CASE, j),
    "faith": lambda j: FaithfulnessCheck().evaluate(CASE, j),
    "goal": lambda j: GoalAccuracyCheck(reference_path="ground_truth.goal").evaluate(CASE, j),
    "graded": lambda j: GradedJudgeCheck().evaluate(CASE, j),
    "graded_bin": lambda j: GradedJudgeCheck(mode="binary").evaluate(CASE, j),
    "batch": lambda j: QuestionBatch(
        (
            Question("polite", JudgeCheck(question="Polite?", rubric="g")),
            Question("grounded", JudgeCheck(question="Grounded?")),
        )
    ).evaluate(CASE, j),
}

GOLDEN = {
    "batch": [
        "a8c37e443e00ead06757cfae157fae7fd28dc05451ed27a01ebd63d295daf8ed",
    ],
    "faith": [
        "47e6e3d76c85ad424359845a443d346de8118ef7901d798bf13f4a2256684b11",
        "5fc3cfa317f97a00d61ad8e4337fb0174b921398f20cfc555633f0b3818f2ec9",
    ],
    "goal": [
        "6845df14a77b53a109335d718c109f42ceb9f086277647cbd48bdbe635bba208",
        "b0d026b2a345c948ff0f5aaec4d5acbed184d111c4523cb94fbf64024db88c0b",
    ],
    "graded": [
        "b682943dfb1bae5072bc06e8ba34dade4174ea0624688fd0df97e6dcdfa0bc2e",
    ],
    "graded_bin": [
        "8b2fc3ab08897a88963b52f89bc0d5d51986e642a100495869c502dd7e23a1d7",
    ],
    "judge": [
        "7984ac2b0613d122b95f41057abe88698304f905afccef52be8fad529cc10bbb",
        "e099e3637035589cb6a350d58d3d7dd9da7fad7e71cce3a5d9c7016e40e3017f",
        "f8297537cf33b08856a57689676e4d9b49d9b310becca415e10779422c504d05",
    ],
    "outcomes": [
        "2c41de242443c90926379e629c8ef7881283213127cb6cda5e076b9fc5d79f52",
        "41ab6603c0a74bef8bd0fd4a02348259b50c597fe7dd107ba86a8b48a66c82aa",
    ],
}


@pytest.mark.parametrize("kind", sorted(CHECKS))
def test_cache_keys_are_unchanged(kind: str) -> None:
    judge = ScriptedJudge([reply] * 10)
    asyncio.run(CHECKS[kind](judge))
    assert sorted(cache_key("openai:m", r) for r in judge.requests) == GOLDEN[kind]
