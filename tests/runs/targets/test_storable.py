"""What a target answers is made storable where it enters the engine (``timed``): text with a
lone surrogate as its visible escape, a value no JSON encoder takes as its case's error."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from checkweigh.core import Case
from checkweigh.runs.targets import AgentFailure, AgentRun, CallableTarget, TargetRequest, timed

CASE = Case(id="book-1", input={"time": "10:00"})


def _ran(reply: Any) -> AgentRun:
    target = CallableTarget(lambda _input: reply)
    return asyncio.run(timed(target, TargetRequest(CASE), 5))[0]


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def test_a_python_agents_lone_surrogates_become_visible_escapes() -> None:
    ran = _ran(
        {
            "trace": [{"kind": "tool_call", "name": "book\ud800", "arguments": {"at\udc00": "10"}}],
            "final_state": {"said": ["ok \ud83d\ude00", "\udfff"]},
        }
    )
    assert ran.trace[0].name == "book\\ud800"
    assert ran.trace[0].arguments == {"at\\udc00": "10"}
    assert ran.final_state == {"said": ["ok \U0001f600", "\\udfff"]}


@pytest.mark.parametrize(
    ("final_state", "message"),
    [
        ({"booking": object()}, "agent returned a value that cannot be stored: "),
        ({"deep": _nested(300)}, "agent returned a value that cannot be stored: "),
        ({"deep": _nested(5000)}, "agent returned a value nested too deeply to store"),
    ],
    ids=["an object", "300 levels", "5000 levels"],
)
def test_a_value_no_encoder_takes_is_the_cases_error(
    final_state: dict[str, Any], message: str
) -> None:
    with pytest.raises(AgentFailure) as failed:
        _ran({"trace": [], "final_state": final_state})
    assert str(failed.value).startswith(message)
