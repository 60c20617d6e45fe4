"""Answer schemas are built once per shape, not on every judge call (pydantic's schema
generation cost about as much CPU as the rest of a call through the engine)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from checkweigh.core import Case
from checkweigh.judges import FaithfulnessCheck, JudgeReply, JudgeRequest
from checkweigh.judges._answers import schema_of

STATEMENTS = {"statements": [{"text": "The line opened in 2019.", "load_bearing": True}]}
VERDICTS = {"answers": [{"index": 1, "verdict": "yes", "reason": "in the passage"}]}


class Instant:
    name = "instant:judge"

    def __init__(self) -> None:
        self.schemas: list[Any] = []

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.schemas.append(request.json_schema)
        answer = STATEMENTS if request.schema_name == "statements" else VERDICTS
        return JudgeReply(text=json.dumps(answer), model="instant")


def test_a_hundred_faithfulness_checks_build_each_schema_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[str] = []
    original = BaseModel.model_json_schema.__func__  # type: ignore[attr-defined]

    def counting(cls: type[BaseModel], *args: Any, **kwargs: Any) -> dict[str, Any]:
        built.append(cls.__name__)
        return dict(original(cls, *args, **kwargs))

    monkeypatch.setattr(BaseModel, "model_json_schema", classmethod(counting))
    schema_of.cache_clear()
    judge = Instant()
    check = FaithfulnessCheck()
    case = Case(
        id="rag-1",
        input={"question": "When did the line open?"},
        trace=[
            {"kind": "tool_call", "name": "retrieve", "result": "It opened in 2019."},
            {"kind": "assistant", "content": "The line opened in 2019."},
        ],
    )

    async def many() -> list[str]:
        verdicts = [await check.evaluate(case, judge) for _ in range(100)]
        return [v.state.value for v in verdicts]

    states = asyncio.run(many())
    schema_of.cache_clear()  # later tests build theirs without the counting wrapper
    assert states == ["passed"] * 100
    assert len(judge.schemas) == 200
    assert sorted(built) == ["Checklist", "Statements"]  # once each, not 100 times
    # every request still carries the full schema
    assert all(s == judge.schemas[0] for s in judge.schemas[::2])
    assert all(s == judge.schemas[1] for s in judge.schemas[1::2])
    assert judge.schemas[0]["properties"].keys() == {"statements"}
