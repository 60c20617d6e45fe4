"""The metered judge: never more calls in flight than its limit, and every call counted."""

from __future__ import annotations

import asyncio

import pytest

from checkweigh.judges import (
    JudgeError,
    JudgeReply,
    JudgeRequest,
    Message,
    MeteredJudge,
    Prices,
)
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
