"""The real anthropic SDK against a local Messages-API server: the answer as a forced tool
call, the system prompt moved out of the messages, retries on 429/529, and clear errors."""

from __future__ import annotations

import asyncio

import pytest

from checkweigh.core import Case, VerdictState
from checkweigh.judges import (
    AnthropicJudge,
    BinaryAnswer,
    JudgeCheck,
    JudgeError,
    JudgeReply,
    JudgeRequest,
    Message,
    RetryPolicy,
)
from checkweigh.testing import Reply, fake_llm_server
from support.closing import closing

KEY = "sk-ant-test-not-real-5678"
FAST = RetryPolicy(attempts=3, initial_s=0.01, max_wait_s=2.0)
REQUEST = JudgeRequest(
    messages=(
        Message(role="system", content="You are a strict evaluator."),
        Message(role="user", content="Did the agent book the right room?"),
    ),
    schema_name="binary_verdict",
    json_schema=BinaryAnswer.model_json_schema(),
)


def judge_for(base_url: str, **kwargs: object) -> AnthropicJudge:
    options: dict[str, object] = {"base_url": base_url, "api_key": KEY, "retry": FAST}
    options.update(kwargs)
    return AnthropicJudge("claude-test", **options)  # type: ignore[arg-type]


def ask(judge: AnthropicJudge) -> JudgeReply:
    """One call to ``judge``, which is closed afterwards."""
    return asyncio.run(closing(judge, judge.complete(REQUEST)))


def test_the_answer_comes_as_a_forced_tool_call() -> None:
    answer = {"verdict": "yes", "reason": "room 4B matches the request"}
    with fake_llm_server([Reply(tool_input=answer)], wire="anthropic") as server:
        reply = ask(judge_for(server.base_url))
    assert BinaryAnswer.model_validate_json(reply.text) == BinaryAnswer(**answer)
    assert (reply.model, reply.input_tokens, reply.output_tokens) == ("claude-test", 150, 25)
    body = server.requests[0]
    # no shared user prefix is marked: the system prompt is what repeats, marked for caching
    assert body["system"] == [
        {
            "type": "text",
            "text": "You are a strict evaluator.",
            "cache_control": {"type": "ephemeral"},
        }
    ]
    assert body["messages"] == [{"role": "user", "content": "Did the agent book the right room?"}]
    assert body["tool_choice"] == {"type": "tool", "name": "binary_verdict"}
    assert body["tools"][0]["input_schema"]["required"] == ["verdict", "reason"]
    sent = server.headers[0]  # older SDKs send x-api-key, newer ones a bearer token
    assert sent.get("x-api-key") == KEY or sent.get("authorization") == f"Bearer {KEY}"


def test_plain_text_answers_are_used_when_structure_is_off() -> None:
    text = '{"verdict": "no", "reason": "wrong floor"}'
    with fake_llm_server([Reply(text)], wire="anthropic") as server:
        reply = ask(judge_for(server.base_url, structured=False))
    assert reply.text == text
    assert "tools" not in server.requests[0]


def test_rate_limits_and_overload_are_retried() -> None:
    script = [
        Reply(status=429, retry_after="0.2"),
        Reply(status=529),
        Reply(tool_input={"verdict": "no", "reason": "double booked"}),
    ]
    with fake_llm_server(script, wire="anthropic") as server:
        reply = ask(judge_for(server.base_url))
    assert '"double booked"' in reply.text
    assert len(server.requests) == 3
    assert server.times[1] - server.times[0] >= 0.15


def test_exhausted_retries_are_a_judge_error() -> None:
    script = [Reply(status=500), Reply(status=500), Reply(status=500)]
    with (
        fake_llm_server(script, wire="anthropic") as server,
        pytest.raises(JudgeError, match="anthropic:claude-test: HTTP 500"),
    ):
        ask(judge_for(server.base_url))


def test_a_judge_check_through_anthropic() -> None:
    case = Case(
        id="r1",
        input={"message": "Book room 4B"},
        trace=[{"kind": "assistant", "content": "Room 4B is booked for 10:00."}],
    )
    script = [Reply(tool_input={"verdict": "yes", "reason": "4B was booked as asked"})]
    with fake_llm_server(script, wire="anthropic") as server:
        check = JudgeCheck(question="Did the agent do what was asked?")
        judge = judge_for(server.base_url)
        verdict = asyncio.run(closing(judge, check.evaluate(case, judge)))
    assert verdict == (VerdictState.PASSED, "4B was booked as asked", None)
