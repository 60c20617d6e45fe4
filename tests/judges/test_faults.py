"""Provider faults through the real openai and anthropic SDKs against the scripted loopback
server: a hung provider ends within the deadline, resets read as resets, final 4xx are not
retried, Retry-After is honoured as seconds, HTTP date or milliseconds, the concurrency slot
is free while a call waits to retry, and the API key is scrubbed from every error."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from checkweigh.judges import (
    AnthropicJudge,
    BinaryAnswer,
    JudgeError,
    JudgeReply,
    JudgeRequest,
    Message,
    MeteredJudge,
    OpenAIJudge,
    RetryPolicy,
)
from checkweigh.testing import Reply, fake_llm_server
from support.closing import closing

KEY = "sk-ant-test-0123456789-secret-key"
YES = '{"verdict": "yes", "reason": "supported by the trace"}'
FAST = RetryPolicy(attempts=4, initial_s=0.01, max_wait_s=5.0, timeout_s=5.0, deadline_s=10.0)
REQUEST = JudgeRequest(
    messages=(Message(role="system", content="judge"), Message(role="user", content="q?")),
    schema_name="binary_verdict",
    json_schema=BinaryAnswer.model_json_schema(),
)
WIRES = ["openai", "anthropic"]

Judge = OpenAIJudge | AnthropicJudge


def make(wire: str, base_url: str, retry: RetryPolicy = FAST) -> Judge:
    if wire == "anthropic":
        return AnthropicJudge("claude-test", base_url=base_url, api_key=KEY, retry=retry)
    return OpenAIJudge("gpt-test", base_url=base_url, api_key=KEY, retry=retry)


def ok(wire: str) -> Reply:
    """A good answer in the wire's own form (a tool call for anthropic)."""
    return Reply(tool_input=json.loads(YES)) if wire == "anthropic" else Reply(YES)


def call(judge: Judge) -> JudgeReply:
    return asyncio.run(closing(judge, judge.complete(REQUEST)))


def failure(judge: Judge) -> str:
    with pytest.raises(JudgeError) as caught:
        call(judge)
    return str(caught.value)


@pytest.mark.parametrize("wire", WIRES)
def test_a_hung_provider_ends_within_the_deadline(wire: str) -> None:
    policy = RetryPolicy(attempts=11, initial_s=0.01, max_wait_s=1.0, timeout_s=0.4, deadline_s=1.0)
    with fake_llm_server([], wire=wire, default=Reply(hang=True)) as server:
        judge = make(wire, server.base_url, policy)  # the SDK's first use imports a lot
        start = time.monotonic()
        text = failure(judge)
        took = time.monotonic() - start
    assert text.startswith(
        f"{'anthropic:claude-test' if wire == 'anthropic' else 'openai:gpt-test'}"
    )
    assert "timed out after 1.0 s" in text
    assert "deadline 1 s" in text
    assert 0.9 < took < 2.0
    assert 2 <= len(server.requests) <= 4  # 0.4 s attempts until the 1 s deadline, no more


@pytest.mark.parametrize("wire", WIRES)
def test_a_reset_connection_reads_as_a_reset_and_is_retried(wire: str) -> None:
    with fake_llm_server([Reply(reset=True), Reply(reset=True), ok(wire)], wire=wire) as server:
        reply = call(make(wire, server.base_url))
    assert json.loads(reply.text) == json.loads(YES)
    assert len(server.requests) == 3
    with fake_llm_server([], wire=wire, default=Reply(reset=True)) as server:
        text = failure(make(wire, server.base_url))
    assert "connection reset" in text
    assert "timed out" not in text
    assert len(server.requests) == 4


@pytest.mark.parametrize("wire", WIRES)
def test_a_reset_reads_as_a_reset_on_the_httpx_transport_too(
    wire: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without aiohttp the SDKs use httpx, whose reset surfaces differently."""
    monkeypatch.setattr("checkweigh.judges._sdk.aiohttp_client", lambda sdk: None)
    with fake_llm_server([], wire=wire, default=Reply(reset=True)) as server:
        judge = make(wire, server.base_url)
        text = failure(judge)
    assert "connection reset" in text
    assert len(server.requests) == 4


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_a_4xx_that_will_not_change_is_not_retried(wire: str, status: int) -> None:
    with fake_llm_server([], wire=wire, default=Reply(status=status)) as server:
        text = failure(make(wire, server.base_url))
    assert f"HTTP {status}" in text
    assert len(server.requests) == 1


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 529])
def test_statuses_that_may_change_are_retried(wire: str, status: int) -> None:
    with fake_llm_server([Reply(status=status), ok(wire)], wire=wire) as server:
        reply = call(make(wire, server.base_url))
    assert json.loads(reply.text)["verdict"] == "yes"
    assert len(server.requests) == 2


@pytest.mark.parametrize("wire", WIRES)
def test_retry_after_as_an_http_date_is_waited_for(wire: str) -> None:
    # an HTTP date has whole seconds: 2 s ahead means a wait of 1 to 2 s, far above the
    # 0.01 s backoff the judge would otherwise use
    script = [Reply(status=429, retry_after_date_s=2.0), ok(wire)]
    with fake_llm_server(script, wire=wire) as server:
        call(make(wire, server.base_url))
    waited = server.times[1] - server.times[0]
    assert 0.9 < waited < 2.5


def test_retry_after_ms_wins_over_retry_after() -> None:
    script = [Reply(status=429, retry_after="30", retry_after_ms="300"), Reply(YES)]
    with fake_llm_server(script) as server:
        call(make("openai", server.base_url))
    assert 0.25 < server.times[1] - server.times[0] < 1.5


def test_a_retry_after_past_the_deadline_ends_the_call_at_once() -> None:
    policy = RetryPolicy(attempts=5, initial_s=0.01, max_wait_s=60.0, timeout_s=5, deadline_s=2.0)
    with fake_llm_server([Reply(status=429, retry_after="30")]) as server:
        judge = make("openai", server.base_url, policy)
        start = time.monotonic()
        text = failure(judge)
    assert time.monotonic() - start < 1.0
    assert "HTTP 429" in text
    assert "deadline 2 s" in text
    assert len(server.requests) == 1


def test_retry_after_is_capped_by_the_longest_wait() -> None:
    policy = RetryPolicy(attempts=3, initial_s=0.01, max_wait_s=0.3, timeout_s=5, deadline_s=10)
    with fake_llm_server([Reply(status=503, retry_after="3600"), Reply(YES)]) as server:
        call(make("openai", server.base_url, policy))
    assert server.times[1] - server.times[0] < 1.0


def test_the_slot_is_free_while_a_call_waits_to_retry() -> None:
    """One slot: while the first call sleeps 0.8 s on a 503, the second one gets through."""
    script = [Reply(status=503, retry_after="0.8"), Reply(YES), Reply(YES)]
    with fake_llm_server(script, keep_alive=True) as server:
        metered = MeteredJudge(make("openai", server.base_url), concurrency=1)

        async def both() -> list[JudgeReply]:
            first = asyncio.create_task(metered.complete(REQUEST))
            await asyncio.sleep(0.2)  # the first call is in its 0.8 s wait by now
            second_started = time.monotonic()
            second = await metered.complete(REQUEST)
            assert time.monotonic() - second_started < 0.5  # it did not wait for the slot
            return [await first, second]

        replies = asyncio.run(closing(metered, both()))
    assert [json.loads(r.text)["verdict"] for r in replies] == ["yes", "yes"]
    assert len(server.requests) == 3
    assert (metered.calls, metered.errors) == (2, 0)


@pytest.mark.parametrize("wire", WIRES)
def test_the_key_echoed_by_a_proxy_is_scrubbed(wire: str) -> None:
    with fake_llm_server([], wire=wire, default=Reply(status=403, echo_auth=True)) as server:
        text = failure(make(wire, server.base_url))
    assert KEY in json.dumps(server.headers)  # the server did receive it...
    assert KEY not in text  # ...and the error text does not carry it
    assert "***" in text


def test_an_html_error_page_is_retried_then_reported_without_a_traceback() -> None:
    page = Reply(
        status=502, raw="<html><body>502 Bad Gateway</body></html>", content_type="text/html"
    )
    with fake_llm_server([], default=page) as server:
        text = failure(make("openai", server.base_url))
    assert text.startswith("openai:gpt-test: HTTP 502")
    assert len(server.requests) == 4


def test_latency_counts_from_the_first_attempt_not_the_wait_for_a_slot() -> None:
    with fake_llm_server([], default=Reply(YES, delay_s=0.3), keep_alive=True) as server:
        metered = MeteredJudge(make("openai", server.base_url), concurrency=1)

        async def three() -> list[JudgeReply]:
            return list(await asyncio.gather(*(metered.complete(REQUEST) for _ in range(3))))

        replies = asyncio.run(closing(metered, three()))
    # one at a time: the third call waited ~0.6 s for its slot, which is not its latency
    assert all(250 < r.latency_ms < 550 for r in replies), [r.latency_ms for r in replies]
    assert len(server.requests) == 3
