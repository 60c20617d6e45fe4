"""The metered judge: never more calls in flight than its limit, and every call counted."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from checkweigh.judges import (
    BudgetSpent,
    JudgeError,
    JudgeReply,
    JudgeRequest,
    Message,
    MeteredJudge,
    Prices,
)
from checkweigh.judges._exchanges import recorded
from checkweigh.reports._console import judge_line

REQUEST = JudgeRequest(messages=(Message(role="user", content="Is the reply polite?"),))


class SlowJudge:
    """Answers after a pause and records how many calls overlapped."""

    name = "test:slow"

    def __init__(self, fail_every: int = 0) -> None:
        self.in_flight = 0
        self.peak = 0
        self.seen = 0
        self.fail_every = fail_every

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        self.seen += 1
        try:
            await asyncio.sleep(0.01)
            if self.fail_every and self.seen % self.fail_every == 0:
                raise JudgeError("test:slow: 503")
            return JudgeReply(
                text="{}", model="slow", input_tokens=100, output_tokens=10, latency_ms=10.0
            )
        finally:
            self.in_flight -= 1


@pytest.mark.parametrize("limit", [1, 4, 16])
def test_calls_in_flight_never_exceed_the_limit(limit: int) -> None:
    inner = SlowJudge()
    metered = MeteredJudge(inner, concurrency=limit)

    async def many() -> None:
        await asyncio.gather(*(metered.complete(REQUEST) for _ in range(40)))

    asyncio.run(many())
    assert inner.peak == limit
    assert metered.calls == 40


def test_tokens_latency_errors_and_cost_are_counted() -> None:
    inner = SlowJudge(fail_every=5)
    metered = MeteredJudge(inner, concurrency=8, prices=Prices(0.15, 0.60))

    async def many() -> list[object]:
        return await asyncio.gather(
            *(metered.complete(REQUEST) for _ in range(20)), return_exceptions=True
        )

    outcomes = asyncio.run(many())
    assert sum(isinstance(o, JudgeError) for o in outcomes) == 4
    stats = metered.stats(cache_hits=3)
    assert (stats.calls, stats.errors, stats.cache_hits) == (20, 4, 3)
    assert (stats.input_tokens, stats.output_tokens) == (1600, 160)
    assert stats.mean_latency_ms == pytest.approx(8.0)  # 16 answers x 10 ms over 20 calls
    assert stats.cost_usd == pytest.approx((1600 * 0.15 + 160 * 0.60) / 1e6)


def test_a_metered_judge_works_across_event_loops() -> None:
    metered = MeteredJudge(SlowJudge(), concurrency=2)
    asyncio.run(metered.complete(REQUEST))
    asyncio.run(metered.complete(REQUEST))  # a new loop gets its own semaphore
    assert metered.calls == 2


@pytest.mark.parametrize(("calls", "limit", "peak"), [(40, 8, 8), (3, 8, 3)])
def test_the_peak_of_calls_in_flight_is_counted_against_the_limit(
    calls: int, limit: int, peak: int
) -> None:
    inner = SlowJudge()
    metered = MeteredJudge(inner, concurrency=limit)

    async def many() -> None:
        await asyncio.gather(*(metered.complete(REQUEST) for _ in range(calls)))

    asyncio.run(many())
    stats = metered.stats()
    assert (stats.peak_in_flight, stats.concurrency) == (peak, limit)
    assert stats.peak_in_flight == inner.peak  # what the judge itself saw at once
    assert metered.in_flight == 0
    assert f"peak {peak} in flight of {limit} allowed" in judge_line(stats)


def _budgeted(inner: object, calls_allowed: float, concurrency: int) -> MeteredJudge:
    # each SlowJudge call (100 in, 10 out) costs $0.11 at $1,000 per million tokens both ways
    return MeteredJudge(
        inner,  # type: ignore[arg-type]
        concurrency=concurrency,
        prices=Prices(1000.0, 1000.0),
        budget_usd=0.11 * calls_allowed,
    )


def test_a_budget_stops_queued_calls_and_overshoots_by_at_most_those_in_flight() -> None:
    inner = SlowJudge()
    metered = _budgeted(inner, calls_allowed=2.5, concurrency=4)

    async def one(check: str) -> str:
        async def call(_: None) -> str:
            try:
                await metered.complete(REQUEST)
            except BudgetSpent:
                return "stopped"
            return "answered"

        outcome, _ = await recorded(check, call, None)
        return outcome

    async def many() -> list[str]:
        return await asyncio.gather(*(one("a" if i % 2 else "b") for i in range(40)))

    outcomes = asyncio.run(many())
    # three calls reach the $0.275 budget; the four that started together all finish
    assert 3 <= inner.seen <= 3 + 4 - 1
    assert outcomes.count("answered") == inner.seen == metered.calls
    assert outcomes.count("stopped") == metered.budget_stopped == 40 - inner.seen
    stats = metered.stats()
    assert stats.cost_usd == pytest.approx(0.11 * inner.seen)
    assert sum(p.calls for p in stats.per_check.values()) == stats.calls
    assert sum(p.budget_stopped for p in stats.per_check.values()) == stats.budget_stopped
    assert sum(p.cost_usd or 0.0 for p in stats.per_check.values()) == pytest.approx(stats.cost_usd)
    assert f"budget $0.275 stopped {40 - inner.seen} call(s)" in judge_line(stats)


class RetryingJudge:
    """A provider-like judge: its first attempt fails once another call has been answered,
    then it retries in a fresh slot."""

    name = "test:retrying"

    def __init__(self) -> None:
        self.attempts = 0
        self.answered = asyncio.Event()

    async def complete_slotted(self, request: JudgeRequest, slot: Any) -> JudgeReply:
        retry = request.messages[0].content == "retry"
        if retry:
            async with slot():
                self.attempts += 1
                await self.answered.wait()  # fails, as a 503 would
        async with slot():
            self.attempts += 1
            reply = JudgeReply(text="{}", model="r", input_tokens=100, output_tokens=10)
        self.answered.set()
        return reply

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        return await self.complete_slotted(request, None)


def test_a_retry_past_the_budget_is_not_sent_and_counts_as_a_failed_call() -> None:
    inner = RetryingJudge()
    metered = _budgeted(inner, calls_allowed=1, concurrency=2)
    retry = JudgeRequest(messages=(Message(role="user", content="retry"),))

    async def both() -> list[JudgeReply | BaseException]:
        return await asyncio.gather(
            metered.complete(retry), metered.complete(REQUEST), return_exceptions=True
        )

    first, second = asyncio.run(both())
    assert isinstance(first, BudgetSpent)
    assert isinstance(second, JudgeReply)
    assert inner.attempts == 2  # the retry was not sent
    assert (metered.calls, metered.errors, metered.budget_stopped) == (2, 1, 0)


def test_a_budget_needs_prices() -> None:
    with pytest.raises(ValueError, match="needs prices"):
        MeteredJudge(SlowJudge(), budget_usd=1.0)  # type: ignore[arg-type]
