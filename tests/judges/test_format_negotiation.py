"""Structured output negotiated with OpenAI-compatible servers through the real openai SDK:
json_schema where it is supported; json_object with the schema where the server refuses
json_schema as llama-cpp-python's does (a 500 naming response_format, not retried); a plain
prompt that spells out the schema where neither is supported; chosen once per judge, shared
by its calls, and forced with ``format``."""

from __future__ import annotations

import asyncio
import json

import pytest

from checkweigh.core import Case, VerdictState
from checkweigh.judges import (
    JudgeCheck,
    JudgeFormat,
    MeteredJudge,
    OpenAIJudge,
    RetryPolicy,
)
from checkweigh.testing import Reply, fake_llm_server
from support.closing import closing

YES = '{"verdict": "yes", "reason": "the booking matches the request"}'
RETRY = RetryPolicy(attempts=4, initial_s=0.01, max_wait_s=1.0, timeout_s=5.0, deadline_s=10.0)
CASES = [
    Case(
        id=f"booking-{i}",
        input={"message": f"Book Alice and Bob at {9 + i}:00"},
        trace=[
            {"kind": "tool_call", "name": "book_meeting", "arguments": {"time": f"{9 + i}:00"}},
            {"kind": "assistant", "content": f"Booked Alice and Bob at {9 + i}:00."},
        ],
    )
    for i in range(8)
]


def judge_all(base_url: str, fmt: JudgeFormat = "auto") -> tuple[list[object], OpenAIJudge]:
    """Eight yes/no checks at once, through a metered judge as a run makes them."""
    judge = OpenAIJudge(
        "smollm2-135m", base_url=base_url, api_key="anything", retry=RETRY, format=fmt
    )
    metered = MeteredJudge(judge, concurrency=4)
    check = JudgeCheck(question="Did the agent book what was asked?")

    async def every() -> list[object]:
        return list(await asyncio.gather(*(check.evaluate(c, metered) for c in CASES)))

    return asyncio.run(closing(metered, every())), judge


def kinds(requests: list[dict[str, object]]) -> list[str | None]:
    return [(r.get("response_format") or {}).get("type") for r in requests]  # type: ignore[attr-defined]


def test_a_server_with_json_schema_gets_json_schema() -> None:
    with fake_llm_server([], default=Reply(YES)) as server:
        verdicts, judge = judge_all(server.base_url)
    assert {v.state for v in verdicts} == {VerdictState.PASSED}  # type: ignore[attr-defined]
    assert kinds(server.requests) == ["json_schema"] * 8
    assert judge.format_note() == "judge output format: json_schema (negotiated: accepted)"


def test_a_llama_cpp_like_server_gets_json_object_with_the_schema() -> None:
    with fake_llm_server([], default=Reply(YES), structured="llama") as server:
        verdicts, judge = judge_all(server.base_url)
    assert {v.state for v in verdicts} == {VerdictState.PASSED}  # type: ignore[attr-defined]
    sent = kinds(server.requests)
    refused = sent.count("json_schema")
    # the calls in flight when the first refusal came each saw it once; none was retried
    # as json_schema, and every call after that asked for json_object straight away (one of
    # those in flight may reach the server after a json_object call on a loaded machine)
    assert 1 <= refused <= 4
    assert sent[0] == "json_schema"
    assert sorted(sent, key=str) == ["json_object"] * 8 + ["json_schema"] * refused
    accepted = server.requests[sent.index("json_object")]
    schema = accepted["response_format"]["schema"]  # type: ignore[index]
    assert schema["required"] == ["verdict", "reason"]
    assert '"verdict"' in accepted["messages"][0]["content"]  # type: ignore[index]
    assert judge.output_format == "json_object"
    assert judge.format_note() == (
        "judge output format: json_object (negotiated: the server rejected json_schema)"
    )


def test_a_server_without_structured_output_gets_the_schema_in_the_prompt() -> None:
    with fake_llm_server([], default=Reply(YES), structured="none") as server:
        verdicts, judge = judge_all(server.base_url)
    assert {v.state for v in verdicts} == {VerdictState.PASSED}  # type: ignore[attr-defined]
    sent = kinds(server.requests)
    # each call ends asking with the schema in the prompt, once; a call still in flight with a
    # structured format may reach the server after another's prompt call on a loaded machine
    assert sent.count(None) == 8
    assert sent[0] == "json_schema"
    assert set(sent) - {None} <= {"json_schema", "json_object"}
    prompted = [r for r, kind in zip(server.requests, sent, strict=True) if kind is None]
    system = prompted[-1]["messages"][0]["content"]  # type: ignore[index]
    assert "validates against this JSON schema" in system
    assert judge.output_format == "prompt"


def test_prompt_mode_still_parses_strictly_and_repairs_once() -> None:
    script = [Reply("Yes, the booking is right."), Reply(YES)]
    with fake_llm_server(script, structured="none") as server:
        judge = OpenAIJudge(
            "m", base_url=server.base_url, api_key="x", retry=RETRY, format="prompt"
        )
        check = JudgeCheck(question="Did the agent book what was asked?")
        verdict = asyncio.run(closing(judge, check.evaluate(CASES[0], judge)))
    assert verdict == (VerdictState.PASSED, "the booking matches the request", None)
    assert kinds(server.requests) == [None, None]
    assert server.requests[1]["messages"][-1]["content"].startswith("That answer is not valid")  # type: ignore[index]


def test_a_forced_format_the_server_refuses_errors_without_retries() -> None:
    with fake_llm_server([], default=Reply(YES), structured="llama") as server:
        verdicts, judge = judge_all(server.base_url, "json_schema")
    assert {v.state for v in verdicts} == {VerdictState.ERRORED}  # type: ignore[attr-defined]
    error = verdicts[0].error  # type: ignore[attr-defined]
    assert "HTTP 500" in error
    assert "response_format" in error
    assert "try --judge-format auto" in error
    assert len(server.requests) == 8  # one per check: a refusal of the format is final
    assert judge.format_note() == "judge output format: json_schema (forced)"


@pytest.mark.parametrize("fmt", ["json_object", "prompt"])
def test_a_forced_format_is_used_from_the_first_call(fmt: JudgeFormat) -> None:
    with fake_llm_server([], default=Reply(YES), structured="llama") as server:
        verdicts, _ = judge_all(server.base_url, fmt)
    assert {v.state for v in verdicts} == {VerdictState.PASSED}  # type: ignore[attr-defined]
    assert kinds(server.requests) == [None if fmt == "prompt" else fmt] * 8


def test_an_unrelated_500_is_retried_not_taken_for_a_refusal() -> None:
    script = [Reply(status=500), Reply(YES)]
    with fake_llm_server(script) as server:
        judge = OpenAIJudge("m", base_url=server.base_url, api_key="x", retry=RETRY)
        check = JudgeCheck(question="q?")
        verdict = asyncio.run(closing(judge, check.evaluate(CASES[0], judge)))
    assert verdict.state is VerdictState.PASSED
    assert kinds(server.requests) == ["json_schema", "json_schema"]


def test_a_local_base_url_needs_no_real_key_and_no_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from checkweigh.judges import make_judge

    with fake_llm_server([], default=Reply(YES), structured="llama") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "anything")
        judge = make_judge("openai:smollm2")
        check = JudgeCheck(question="q?")
        verdict = asyncio.run(closing(judge, check.evaluate(CASES[0], judge)))
    assert verdict.state is VerdictState.PASSED
    assert json.loads(YES)["reason"] == verdict.reason
