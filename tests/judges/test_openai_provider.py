"""The real openai SDK against a local chat-completions server: structured output requests,
retries that honour Retry-After, 5xx backoff, malformed bodies, timeouts, and the key kept
out of everything but the Authorization header."""

from __future__ import annotations

import asyncio

import pytest

from checkweigh.core import Case, VerdictState
from checkweigh.judges import (
    BinaryAnswer,
    JudgeCheck,
    JudgeError,
    JudgeReply,
    JudgeRequest,
    Message,
    OpenAIJudge,
    RetryPolicy,
)
from checkweigh.testing import Reply, fake_llm_server
from support.closing import closing

FAST = RetryPolicy(attempts=3, initial_s=0.01, max_wait_s=2.0)
KEY = "sk-test-not-a-real-key-1234"
REQUEST = JudgeRequest(
    messages=(Message(role="system", content="judge"), Message(role="user", content="q?")),
    schema_name="binary_verdict",
    json_schema=BinaryAnswer.model_json_schema(),
)


def judge_for(base_url: str, **kwargs: object) -> OpenAIJudge:
    options: dict[str, object] = {"base_url": base_url, "api_key": KEY, "retry": FAST}
    options.update(kwargs)
    return OpenAIJudge("gpt-test", **options)  # type: ignore[arg-type]


def ask(judge: OpenAIJudge) -> JudgeReply:
    """One call to ``judge``, which is closed afterwards."""
    return asyncio.run(closing(judge, judge.complete(REQUEST)))


def test_a_structured_request_and_its_answer() -> None:
    with fake_llm_server([Reply('{"verdict": "yes", "reason": "grounded"}')]) as server:
        reply = ask(judge_for(server.base_url))
    assert reply.text == '{"verdict": "yes", "reason": "grounded"}'
    assert (reply.model, reply.input_tokens, reply.output_tokens) == ("gpt-test", 120, 18)
    body = server.requests[0]
    assert body["model"] == "gpt-test"
    assert body["messages"] == [
        {"role": "system", "content": "judge"},
        {"role": "user", "content": "q?"},
    ]
    assert body["temperature"] == 0.0
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "binary_verdict"
    assert fmt["json_schema"]["schema"]["required"] == ["verdict", "reason"]
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"


def test_429_waits_for_retry_after_then_succeeds() -> None:
    script = [
        Reply(status=429, retry_after="0.4"),
        Reply('{"verdict": "no", "reason": "wrong time"}'),
    ]
    with fake_llm_server(script) as server:
        reply = ask(judge_for(server.base_url))
    assert reply.text == '{"verdict": "no", "reason": "wrong time"}'
    assert len(server.requests) == 2
    assert server.times[1] - server.times[0] >= 0.35  # the server's 0.4 s, not the 0.01 s backoff


def test_5xx_is_retried_and_gives_up_as_a_judge_error() -> None:
    script = [Reply(status=500), Reply(status=502), Reply(status=503)]
    with fake_llm_server(script) as server, pytest.raises(JudgeError, match="HTTP 503"):
        ask(judge_for(server.base_url))
    assert len(server.requests) == 3


def test_client_errors_are_not_retried() -> None:
    with (
        fake_llm_server([Reply(status=400)]) as server,
        pytest.raises(JudgeError, match="openai:gpt-test: HTTP 400"),
    ):
        ask(judge_for(server.base_url))
    assert len(server.requests) == 1


def test_a_malformed_body_is_a_judge_error() -> None:
    with (
        fake_llm_server([Reply(raw="this is not json")]) as server,
        pytest.raises(JudgeError, match="openai:gpt-test"),
    ):
        ask(judge_for(server.base_url))


def test_a_timeout_is_retried_then_reported() -> None:
    script = [Reply("late", delay_s=1.0), Reply("late", delay_s=1.0)]
    with fake_llm_server(script) as server:
        judge = judge_for(server.base_url, timeout_s=0.2, retry=RetryPolicy(2, 0.01, 1.0))
        with pytest.raises(JudgeError, match="timed out"):
            ask(judge)
    assert len(server.requests) == 2


def test_a_judge_check_end_to_end_with_a_repair() -> None:
    case = Case(
        id="s01",
        input={"message": "Book Alice at 10:00"},
        trace=[{"kind": "assistant", "content": "Booked Alice at 10:00."}],
    )
    script = [Reply("Sure, yes."), Reply('{"verdict": "yes", "reason": "matches the request"}')]
    with fake_llm_server(script) as server:
        check = JudgeCheck(question="Did the agent do what was asked?")
        judge = judge_for(server.base_url)
        verdict = asyncio.run(closing(judge, check.evaluate(case, judge)))
    assert verdict == (VerdictState.PASSED, "matches the request", None)
    assert [m["role"] for m in server.requests[1]["messages"]] == [
        "system",
        "user",
        "assistant",
        "user",
    ]


def test_without_a_key_the_error_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(JudgeError, match="openai:gpt-test"):
        OpenAIJudge("gpt-test", base_url="http://127.0.0.1:9/v1")


@pytest.mark.parametrize(
    "answer",
    [
        '{"verdict": "no", "reason": "rude \\ud800 reply"}',  # the answer's JSON escapes it
        '{"verdict": "no", "reason": "rude \ud800 reply"}',  # the response's JSON does
    ],
)
def test_a_lone_surrogate_in_a_judges_answer_is_a_visible_escape(answer: str) -> None:
    case = Case(id="s01", trace=[{"kind": "assistant", "content": "Booked."}])
    with fake_llm_server([Reply(answer)]) as server:
        check = JudgeCheck(question="Was the agent polite?")
        judge = judge_for(server.base_url)
        verdict = asyncio.run(closing(judge, check.evaluate(case, judge)))
    assert verdict == (VerdictState.FAILED, "rude \\ud800 reply", None)
