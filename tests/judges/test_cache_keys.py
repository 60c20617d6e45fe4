"""The judge cache keys of every judge check kind are those recorded before judge checks
became one class each (commit d6f2ddf): answers cached by earlier runs still hit."""

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
        "83e9a361c17517de87b940ef0d6f535b23c8ce2c9837a0b21818d8f05d9e42a2",
    ],
    "faith": [
        "5fc3cfa317f97a00d61ad8e4337fb0174b921398f20cfc555633f0b3818f2ec9",
        "c28d0cf865ee5938c28c0058e7e72a60bcbb2bd2feab101d0d6cd2007fdbb8f2",
    ],
    "goal": [
        "57cfe7a8246fcba4e24d2013fad36e7b4e074eb763adf73f4f615afdb4e929c4",
        "6845df14a77b53a109335d718c109f42ceb9f086277647cbd48bdbe635bba208",
    ],
    "graded": [
        "ffa39fd236e494ae6db5061816864ebce4dfb61e0dba1b9b7470a4dac8e52b55",
    ],
    "graded_bin": [
        "e832b4668a14a3553b68485933e44687c67adcfd893b598826f4eaba8292af97",
    ],
    "judge": [
        "3d3f875d6d6e986c4546145af4c93cae94ca603217c1cefba194afd7a6ed7088",
        "4b9faaa0749440fb7a1df5dccbc49d3dd7f954d1a85bb054c1f86997deaa3583",
        "7cab00ba13f55be4f78a2dc7094f8af565f45efdde46e2bbdf1dff7b489f7a1d",
    ],
    "outcomes": [
        "22d04c9de5bd3bd735a5ff6a4cc3b61bb959dd1be7d3352cf93b90c7b916fa1c",
        "cdd4bd44a3d9f37249783e6d40214b24e2326d4bc5dd4b4c7417bd351d668c1e",
    ],
}


@pytest.mark.parametrize("kind", sorted(CHECKS))
def test_cache_keys_are_unchanged(kind: str) -> None:
    judge = ScriptedJudge([reply] * 10)
    asyncio.run(CHECKS[kind](judge))
    assert sorted(cache_key("openai:m", r) for r in judge.requests) == GOLDEN[kind]
