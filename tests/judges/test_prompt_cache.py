"""Provider prompt caching through the real ``openai`` and ``anthropic`` SDKs against the fake
provider: the cached-token counts read from usage (OpenAI's ``cached_tokens``; Anthropic's
cache reads and writes, which its ``input_tokens`` leaves out), the fake's simulation of both
caches and its switch, and the prices of cached and written tokens."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from checkweigh.core import Case
from checkweigh.judges import (
    AnthropicJudge,
    Example,
    JudgeCache,
    JudgeCheck,
    JudgeReply,
    JudgeRequest,
    MeteredJudge,
    OpenAIJudge,
    Prices,
    RetryPolicy,
)
from checkweigh.testing import Reply, fake_llm_server
from support.closing import closing
from support.recorded_suite import make_case

KEY = "sk-test-not-real-prompt-cache-1234"
FAST = RetryPolicy(attempts=2, initial_s=0.01, max_wait_s=0.5)
YES = {"verdict": "yes", "reason": "the booked time is the one asked for"}

# a scheduling rubric with worked examples: ~6,000 characters that every case's prompt repeats
SITUATIONS = [
    ("Asked for 10:00 with Alice and Bob; booked 10:00 with both.", "yes", "same time, both"),
    ("Asked for 10:00; booked 10:30 because 10:00 was taken, and said so.", "no", "moved"),
    ("Asked for Tuesday 10:00; booked Wednesday 10:00.", "no", "wrong day"),
    ("Asked for 10:00 in Berlin time; booked 10:00 CET in winter.", "yes", "same zone"),
    ("Asked for 10:00; the calendar API failed and nothing was booked.", "no", "no booking"),
    ("Asked for 10 o'clock; booked 10:00.", "yes", "10 o'clock is 10:00"),
    ("Asked for 10:00 for 30 minutes; booked 10:00 for 60 minutes.", "no", "wrong length"),
    ("Asked for 10:00; booked 22:00.", "no", "evening, not morning"),
]
EXAMPLES = tuple(
    Example(situation=f"{text} {'The reply confirmed the booking. ' * 8}", verdict=v, reason=r)
    for text, v, r in SITUATIONS
)
RUBRIC = " ".join(
    [
        "Compare the time in the final state's booking with the time in the user's request.",
        "A different hour, day, length or time zone is a no, even when the reply claims success.",
        "When the booking failed or is missing, the answer is no.",
        "Ignore the wording of the reply: only the booking the tools made counts.",
    ]
    * 4
)
CHECK = JudgeCheck(
    question="Did the agent book the time the user asked for?", rubric=RUBRIC, examples=EXAMPLES
)
CASES = [
    Case.model_validate(make_case(f"case-{i}", participants=["Alice", "Bob"], time=t))
    for i, t in enumerate(("10:00", "11:00", "10:30"))
]


def _ask_each(
    judge: OpenAIJudge | AnthropicJudge, requests: list[JudgeRequest]
) -> list[JudgeReply]:
    async def each() -> list[JudgeReply]:
        return [await judge.complete(r) for r in requests]

    return asyncio.run(closing(judge, each()))


def _openai(url: str) -> OpenAIJudge:
    return OpenAIJudge("gpt-test", base_url=url, api_key=KEY, retry=FAST)


def _anthropic(url: str) -> AnthropicJudge:
    return AnthropicJudge("claude-test", base_url=url, api_key=KEY, retry=FAST)


def test_openai_counts_the_cached_prefix_in_128_token_steps() -> None:
    requests = [CHECK.request(c) for c in CASES]
    shared_tokens = len(requests[0].messages[0].content + requests[0].shared_text()) // 4
    assert shared_tokens > 1024  # the prefix is long enough to be cached
    with fake_llm_server([], default=Reply(json.dumps(YES))) as server:
        replies = _ask_each(_openai(server.base_url), requests)
    first, *later = replies
    assert first.cached_input_tokens == 0  # nothing seen yet
    assert first.input_tokens >= shared_tokens
    for reply in later:
        assert reply.cached_input_tokens % 128 == 0
        # the whole shared prefix, give or take the last partial step, and never the case
        assert shared_tokens - 128 < reply.cached_input_tokens <= shared_tokens + 128
        assert reply.cached_input_tokens < reply.input_tokens
        assert reply.cache_write_tokens == 0
    # OpenAI caches by itself: nothing extra goes on the wire
    assert all("cache_control" not in json.dumps(body) for body in server.requests)


def test_anthropic_writes_the_marked_prefix_once_then_reads_it() -> None:
    requests = [CHECK.request(c) for c in CASES]
    with fake_llm_server([], wire="anthropic", default=Reply(tool_input=YES)) as server:
        replies = _ask_each(_anthropic(server.base_url), requests)
    first, *later = replies
    assert first.cached_input_tokens == 0
    assert first.cache_write_tokens > 1024
    for reply in later:
        assert reply.cached_input_tokens == first.cache_write_tokens
        assert reply.cache_write_tokens == 0
        assert reply.input_tokens > reply.cached_input_tokens  # the case is not cached
    marked = server.requests[1]["messages"][0]["content"][0]
    assert marked["cache_control"] == {"type": "ephemeral"}
    assert marked["text"] == requests[1].shared_text()


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_fakes_cache_can_be_turned_off(wire: str) -> None:
    requests = [CHECK.request(c) for c in CASES]
    default = Reply(tool_input=YES) if wire == "anthropic" else Reply(json.dumps(YES))
    make = _anthropic if wire == "anthropic" else _openai
    counted = {}
    for on in (True, False):
        with fake_llm_server([], wire=wire, default=default, prompt_cache=on) as server:
            counted[on] = _ask_each(make(server.base_url), requests)
    assert [r.input_tokens for r in counted[True]] == [r.input_tokens for r in counted[False]]
    assert sum(r.cached_input_tokens for r in counted[True]) > 0
    assert [(r.cached_input_tokens, r.cache_write_tokens) for r in counted[False]] == [(0, 0)] * 3


def test_anthropic_input_tokens_leave_out_the_cache_so_the_total_adds_them() -> None:
    usage = {
        "input_tokens": 57,
        "output_tokens": 21,
        "cache_read_input_tokens": 2048,
        "cache_creation_input_tokens": 300,
    }
    block = {"type": "tool_use", "id": "t", "name": "binary_verdict", "input": YES}
    raw = {"id": "m", "type": "message", "role": "assistant", "model": "claude-test"}
    raw |= {"content": [block], "stop_reason": "tool_use", "usage": usage}
    with fake_llm_server([Reply(raw=json.dumps(raw))], wire="anthropic") as server:
        (reply,) = _ask_each(_anthropic(server.base_url), [CHECK.request(CASES[0])])
    assert (reply.input_tokens, reply.cached_input_tokens, reply.cache_write_tokens) == (
        57 + 2048 + 300,
        2048,
        300,
    )


def test_openai_prompt_tokens_include_the_cached_ones() -> None:
    usage = {
        "prompt_tokens": 2100,
        "completion_tokens": 19,
        "total_tokens": 2119,
        "prompt_tokens_details": {"cached_tokens": 1920},
    }
    raw = {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": json.dumps(YES)}}],
        "usage": usage,
    }
    with fake_llm_server([Reply(raw=json.dumps(raw))]) as server:
        (reply,) = _ask_each(_openai(server.base_url), [CHECK.request(CASES[0])])
    assert (reply.input_tokens, reply.cached_input_tokens, reply.output_tokens) == (2100, 1920, 19)


def test_cached_and_written_tokens_are_priced_at_their_rates() -> None:
    prices = Prices(3.0, 15.0, 0.3, 3.75)
    # 5,000 in (3,000 read from the cache, 1,000 written to it), 200 out
    expected = (1_000 * 3.0 + 3_000 * 0.3 + 1_000 * 3.75 + 200 * 15.0) / 1e6
    assert prices.cost(5_000, 200, 3_000, 1_000) == pytest.approx(expected)
    assert prices.cost(5_000, 200) == pytest.approx((5_000 * 3.0 + 200 * 15.0) / 1e6)


@pytest.mark.parametrize(
    ("judge", "read", "write", "named"),
    [
        ("anthropic:claude-test", 0.3, 3.75, "Anthropic's usual rates, assumed"),
        ("openai:gpt-test", 1.5, 3.0, "OpenAI's usual rates, assumed"),
    ],
)
def test_rates_left_out_are_the_providers_usual_ones_and_the_report_says_so(
    judge: str, read: float, write: float, named: str
) -> None:
    class Named:
        name = judge

        async def complete(self, request: JudgeRequest) -> JudgeReply:
            raise AssertionError("not called")

    metered = MeteredJudge(Named(), prices=Prices(3.0, 15.0))
    assert metered.prices is not None
    rates = (metered.prices.cached_input_per_m, metered.prices.cache_write_per_m)
    assert rates == pytest.approx((read, write))
    assert named in (metered.stats().prompt_cache_prices or "")
    given = MeteredJudge(Named(), prices=Prices(3.0, 15.0, 0.75, 3.0))
    assert "assumed" not in (given.stats().prompt_cache_prices or "")


def test_judge_cache_files_from_before_the_prompt_cache_still_load(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    old = {"text": json.dumps(YES), "model": "gpt-test", "input_tokens": 120, "output_tokens": 18}
    key = "ab" + "0" * 62
    (tmp_path / "ab").mkdir()
    (tmp_path / "ab" / f"{key}.json").write_text(json.dumps(old))
    loaded = cache.get(key)
    assert loaded is not None
    assert (loaded.input_tokens, loaded.cached_input_tokens, loaded.cache_write_tokens) == (
        120,
        0,
        0,
    )
    # a new answer keeps its counts through the cache
    new = JudgeReply(
        text="{}", model="m", input_tokens=2100, cached_input_tokens=1920, cache_write_tokens=0
    )
    cache.put("cd" + "0" * 62, new)
    assert cache.get("cd" + "0" * 62) == new
