"""The default retry budget holds under a realistic storm: a burst of 429s followed by 30%
of 503s, 60 judge checks at once through the real openai SDK, none errored. Waits are scaled
down (the backoff via the options, Retry-After by the server) to keep the test quick."""

from __future__ import annotations

import asyncio
import random

import pytest

from checkweigh.core import Case, Verdict, VerdictState
from checkweigh.judges import JudgeCheck, JudgeOptions, MeteredJudge, make_judge
from checkweigh.testing import Reply, fake_llm_server
from support.closing import closing

YES = '{"verdict": "yes", "reason": "the booking matches the request"}'


def storm(seed: int) -> list[Reply]:
    """A rate-limit burst, then a provider that fails 30% of requests with a 503."""
    rng = random.Random(seed)
    burst = [Reply(status=429, retry_after="0.05") for _ in range(48)]
    flaky = [Reply(status=503) if rng.random() < 0.3 else Reply(YES) for _ in range(400)]
    return burst + flaky


def test_sixty_checks_survive_a_429_burst_then_30_percent_503s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cases = [
        Case(
            id=f"booking-{i:02d}",
            input={"message": f"Book Alice and Bob on day {i}"},
            trace=[{"kind": "assistant", "content": f"Booked Alice and Bob on day {i}."}],
        )
        for i in range(60)
    ]
    options = JudgeOptions(backoff_initial_s=0.005, backoff_max_s=0.1)  # defaults otherwise
    with fake_llm_server(storm(seed=9), default=Reply(YES), keep_alive=True) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        metered = MeteredJudge(make_judge("openai:gpt-test", options=options), concurrency=16)
        check = JudgeCheck(question="Did the agent book what was asked?")

        async def every() -> list[Verdict]:
            return list(await asyncio.gather(*(check.evaluate(c, metered) for c in cases)))

        verdicts = asyncio.run(closing(metered, every()))
    errors = [v.error for v in verdicts if v.state is VerdictState.ERRORED]
    assert errors == []
    assert [v.state for v in verdicts] == [VerdictState.PASSED] * 60
    statuses_seen = len(server.requests)
    assert statuses_seen > 60 + 48  # every 429 and some 503s were retried
    assert (metered.calls, metered.errors) == (60, 0)
