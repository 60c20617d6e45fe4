"""The provider batch APIs through the real SDKs against checkweigh.testing's fake on
127.0.0.1: OpenAI's Batch API (file upload, batch, output and error files) and Anthropic's
Message Batches, each item answered by the same script as a synchronous call."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest

from checkweigh.judges import (
    AnthropicJudge,
    BatchBackend,
    BatchItemFailure,
    BatchProgress,
    BinaryAnswer,
    JudgeError,
    JudgeReply,
    JudgeRequest,
    Message,
    OpenAIJudge,
    RetryPolicy,
)
from checkweigh.testing import BatchScript, FakeLLM, Reply, fake_llm_server
from support.closing import closing

KEY = "sk-batch-test-not-real-4321"
FAST = RetryPolicy(attempts=3, initial_s=0.01, max_wait_s=0.5)
T = TypeVar("T")

Judge = OpenAIJudge | AnthropicJudge

# tickets of an airline's support agent, one judge question each
TICKETS = {
    "t01": "Rebooked LH 401 to the 18:05 after the cancellation; fee waived.",
    "t02": "Refund of 412.50 EUR issued to the original card within the policy window.",
    "t03": "Told the customer a checked bag may weigh 32 kg in economy (the limit is 23 kg).",
    "t04": "Seat 14C assigned; the aisle request was honoured.",
    "t05": "Escalated the lost-bag claim PIR FRALH12345 to baggage services.",
}


def request(ticket: str) -> JudgeRequest:
    return JudgeRequest(
        messages=(
            Message(role="system", content="You are a strict evaluator of airline support."),
            Message(role="user", content=f"Did the agent follow policy?\n\n{TICKETS[ticket]}"),
        ),
        schema_name="binary_verdict",
        json_schema=BinaryAnswer.model_json_schema(),
    )


ITEMS = [(ticket, request(ticket)) for ticket in TICKETS]
YES = {"verdict": "yes", "reason": "the agent followed the policy"}


@pytest.fixture(params=["openai", "anthropic"])
def wire(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def server(wire: str) -> Iterator[FakeLLM]:
    answer = Reply(tool_input=YES) if wire == "anthropic" else Reply(content=json.dumps(YES))
    with fake_llm_server([], wire=wire, default=answer) as fake:
        yield fake


def judge_for(server: FakeLLM, wire: str) -> Judge:
    if wire == "anthropic":
        return AnthropicJudge("claude-test", base_url=server.base_url, api_key=KEY, retry=FAST)
    return OpenAIJudge("gpt-test", base_url=server.base_url, api_key=KEY, retry=FAST)


def run(server: FakeLLM, wire: str, work: Callable[[BatchBackend], Awaitable[T]]) -> T:
    """``work`` on a fresh judge's batch backend, the judge closed afterwards."""
    judge = judge_for(server, wire)
    backend = judge.batch_backend()
    assert isinstance(backend, BatchBackend)
    return asyncio.run(closing(judge, work(backend)))


async def until_done(backend: BatchBackend, batch_id: str) -> list[BatchProgress]:
    polls = [await backend.progress(batch_id)]
    while not polls[-1].done:
        polls.append(await backend.progress(batch_id))
    return polls


async def whole_batch(
    backend: BatchBackend,
) -> tuple[str, list[BatchProgress], dict[str, JudgeReply | BatchItemFailure]]:
    batch_id = await backend.submit(ITEMS)
    polls = await until_done(backend, batch_id)
    return batch_id, polls, await backend.results(batch_id)


def usage(wire: str) -> tuple[int, int]:
    """The fake's usage for every answer (what its synchronous calls report too)."""
    return (150, 25) if wire == "anthropic" else (120, 18)


def test_submit_poll_and_read_every_answer_with_its_usage(server: FakeLLM, wire: str) -> None:
    server.batches.script = BatchScript(polls=2)
    batch_id, polls, results = run(server, wire, whole_batch)
    states = [(p.state, p.succeeded) for p in polls]
    assert states == [("in_progress", 1), ("in_progress", 3), ("ended", 5)]
    assert all(p.total == 5 and p.failed == 0 and p.batch_id == batch_id for p in polls)
    assert sorted(results) == sorted(TICKETS)
    for reply in results.values():
        assert isinstance(reply, JudgeReply)
        assert BinaryAnswer.model_validate_json(reply.text) == BinaryAnswer(**YES)
        assert (reply.input_tokens, reply.output_tokens) == usage(wire)
        assert reply.model == ("claude-test" if wire == "anthropic" else "gpt-test")
    assert server.batches.stats() | {"polls": 0} == {
        "batches": 1,
        "items": 5,
        "files": 1 if wire == "openai" else 0,
        "polls": 0,
        "results": 1,
        "cancels": 0,
    }


def test_each_item_is_the_body_a_synchronous_call_sends(server: FakeLLM, wire: str) -> None:
    judge = judge_for(server, wire)
    asyncio.run(closing(judge, judge.complete(request("t03"))))
    run(server, wire, whole_batch)
    sync, *items = server.requests  # the fake answers batch items as it answers calls
    assert len(items) == 5
    assert items[2] == sync


def test_failed_and_expired_items_are_failures_with_a_reason(server: FakeLLM, wire: str) -> None:
    server.batches.script = BatchScript(fail={"t02"}, expire={"t04"})
    _, polls, results = run(server, wire, whole_batch)
    assert (polls[-1].succeeded, polls[-1].failed) == (3, 2)
    assert polls[-1].state == ("expired" if wire == "openai" else "ended")
    failures = {k: v.reason for k, v in results.items() if isinstance(v, BatchItemFailure)}
    assert failures == {"t02": "errored: 500 api_error: scripted item failure", "t04": "expired"}
    assert all(isinstance(results[t], JudgeReply) for t in ("t01", "t03", "t05"))


def test_an_item_missing_from_the_output_is_a_failure(server: FakeLLM, wire: str) -> None:
    server.batches.script = BatchScript(lose={"t05"})
    _, polls, results = run(server, wire, whole_batch)
    assert (polls[-1].state, polls[-1].succeeded) == ("ended", 5)  # the provider says all done
    assert results["t05"] == BatchItemFailure("missing from the batch's results")
    assert sum(isinstance(r, JudgeReply) for r in results.values()) == 4


def test_a_scripted_error_answer_becomes_a_scrubbed_reason(server: FakeLLM, wire: str) -> None:
    kind = "invalid_request_error"
    message = f"prompt too long; key {KEY} was used"
    body = (
        {"type": "error", "error": {"type": kind, "message": message}}
        if wire == "anthropic"
        else {"error": {"type": kind, "message": message}}
    )
    refused = Reply(status=400, raw=json.dumps(body))
    server.respond = lambda sent: refused if "32 kg" in json.dumps(sent) else None
    _, _, results = run(server, wire, whole_batch)
    assert results["t03"] == BatchItemFailure(
        f"errored: 400 {kind}: prompt too long; key *** was used"
    )
    assert sum(isinstance(r, JudgeReply) for r in results.values()) == 4


def test_cancel_keeps_what_was_answered_and_cancels_the_rest(server: FakeLLM, wire: str) -> None:
    server.batches.script = BatchScript(polls=3)

    async def work(backend: BatchBackend) -> Any:
        batch_id = await backend.submit(ITEMS)
        first = await backend.progress(batch_id)
        await backend.cancel(batch_id)
        polls = await until_done(backend, batch_id)
        return first, polls, await backend.results(batch_id)

    first, polls, results = run(server, wire, work)
    assert (first.state, first.succeeded) == ("in_progress", 1)
    assert (polls[-1].state, polls[-1].succeeded, polls[-1].failed) == ("cancelled", 1, 4)
    assert isinstance(results["t01"], JudgeReply)
    assert {results[t] for t in TICKETS if t != "t01"} == {BatchItemFailure("cancelled")}
    assert server.batches.stats()["cancels"] == 1
    assert len(server.requests) == 1  # only the answered item reached the model


def test_an_openai_batch_that_fails_validation() -> None:
    with fake_llm_server([], default=Reply(content=json.dumps(YES))) as server:
        server.batches.script = BatchScript(invalid="model gpt-test is not available in batch")
        batch_id, polls, results = run(server, "openai", whole_batch)
    detail = "invalid_request: model gpt-test is not available in batch"
    assert polls == [BatchProgress(batch_id, "failed", total=5, detail=detail)]
    assert set(results.values()) == {BatchItemFailure(f"batch failed: {detail}")}
    assert sorted(results) == sorted(TICKETS)
    assert server.requests == []


def test_an_anthropic_batch_that_fails_validation_is_refused_on_submit() -> None:
    with fake_llm_server([], wire="anthropic") as server:
        server.batches.script = BatchScript(invalid="model claude-test does not support batches")
        with pytest.raises(JudgeError, match=r"HTTP 400: .*does not support batches"):
            run(server, "anthropic", lambda backend: backend.submit(ITEMS))
    assert server.batches.stats()["batches"] == 0


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ([], "a batch holds 1 to"),
        ([("t 01", request("t01"))], r"custom_id 't 01': expected 1-64 characters"),
        ([ITEMS[0], ITEMS[0]], "custom_id 't01' is used twice"),
    ],
)
def test_items_that_are_no_batch_are_refused_before_anything_is_sent(
    server: FakeLLM, wire: str, items: list[tuple[str, JudgeRequest]], expected: str
) -> None:
    with pytest.raises(JudgeError, match=expected):
        run(server, wire, lambda backend: backend.submit(items))
    assert server.batches.stats()["batches"] == server.batches.stats()["files"] == 0


def test_a_batch_resumed_by_a_fresh_backend_is_read_not_resubmitted(
    server: FakeLLM, wire: str
) -> None:
    server.batches.script = BatchScript(fail={"t04"}, lose={"t05"})
    batch_id = run(server, wire, lambda backend: backend.submit(ITEMS))

    async def resume(backend: BatchBackend) -> dict[str, JudgeReply | BatchItemFailure]:
        await until_done(backend, batch_id)
        return await backend.results(batch_id)

    results = run(server, wire, resume)  # another judge, as after a restart
    assert results["t04"] == BatchItemFailure("errored: 500 api_error: scripted item failure")
    if wire == "openai":  # the custom_ids come back from the batch's input file
        assert results["t05"] == BatchItemFailure("missing from the batch's results")
    assert sum(isinstance(r, JudgeReply) for r in results.values()) == 3
    assert (server.batches.stats()["batches"], server.batches.stats()["items"]) == (1, 5)


def test_polls_and_downloads_are_retried_and_unknown_batches_named(
    server: FakeLLM, wire: str
) -> None:
    script = BatchScript(polls=0)
    server.batches.script = script

    async def work(backend: BatchBackend) -> Any:
        batch_id = await backend.submit(ITEMS)
        script.faults = [503, 429]  # the first poll fails twice
        polls = await until_done(backend, batch_id)
        script.faults = [502]
        return polls, await backend.results(batch_id)

    polls, results = run(server, wire, work)
    assert script.faults == []  # every fault was answered, and retried past
    assert [p.state for p in polls] == ["ended"]
    assert sum(isinstance(r, JudgeReply) for r in results.values()) == 5
    with pytest.raises(JudgeError, match=r"HTTP 404"):
        run(server, wire, lambda backend: backend.progress("batch_9999"))


def test_an_openai_batch_created_before_its_answer_was_lost_is_not_created_again() -> None:
    with fake_llm_server([], default=Reply(content=json.dumps(YES))) as server:
        server.batches.script = BatchScript(
            polls=0, faults=[503], lost_answers={"POST /v1/batches": [500]}
        )
        batch_id, _, results = run(server, "openai", whole_batch)
    assert server.batches.script.lost_answers == {"POST /v1/batches": []}
    assert batch_id == "batch_0001"
    assert sum(isinstance(r, JudgeReply) for r in results.values()) == 5
    assert (server.batches.stats()["batches"], server.batches.stats()["items"]) == (1, 5)


def test_an_anthropic_batch_is_created_again_only_when_it_surely_was_not() -> None:
    with fake_llm_server([], wire="anthropic", default=Reply(tool_input=YES)) as server:
        server.batches.script = BatchScript(faults=[429, 529])  # not created: retried
        run(server, "anthropic", lambda backend: backend.submit(ITEMS))
        assert server.batches.stats()["batches"] == 1
        server.batches.script = BatchScript(lost_answers={"POST /v1/messages/batches": [500]})
        with pytest.raises(JudgeError, match=r"HTTP 500: .*not retried: .*could pay twice"):
            run(server, "anthropic", lambda backend: backend.submit(ITEMS))
    assert (server.batches.stats()["batches"], server.batches.stats()["items"]) == (2, 10)


def test_results_of_a_running_batch_are_refused(server: FakeLLM, wire: str) -> None:
    server.batches.script = BatchScript(seconds=60.0)

    async def work(backend: BatchBackend) -> Any:
        batch_id = await backend.submit(ITEMS)
        assert (await backend.progress(batch_id)).state == "in_progress"
        return await backend.results(batch_id)

    with pytest.raises(JudgeError, match=r"batch batch_0001 is still in_progress"):
        run(server, wire, work)


def test_max_items_are_the_providers_limits() -> None:
    with fake_llm_server([]) as openai_server, fake_llm_server([], wire="anthropic") as other:
        assert run(openai_server, "openai", _max_items) == 50_000
        assert run(other, "anthropic", _max_items) == 100_000


async def _max_items(backend: BatchBackend) -> int:
    return backend.max_items


def test_an_ollama_judge_offers_no_batch_api() -> None:
    with fake_llm_server([]) as server:
        judge = OpenAIJudge(
            "llama3.1", provider="ollama", base_url=server.base_url, api_key="ollama"
        )
        assert judge.batch_backend() is None
        asyncio.run(judge.aclose())
    assert server.batches.stats()["batches"] == 0
