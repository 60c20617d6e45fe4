"""The retry loop and its settings: Retry-After parsing, backoff bounds, the judge options
built from a suite block and flags (flags win), and their one-line errors."""

from __future__ import annotations

import asyncio
from email.utils import formatdate
from types import SimpleNamespace

import pytest

from checkweigh.errors import InputError
from checkweigh.judges import (
    GaveUp,
    JudgeOptions,
    OpenAIJudge,
    RetryPolicy,
    call_with_retries,
    retry_after,
)
from checkweigh.judges._retry import backoff

NOW = 1_700_000_000.0


def failed_with(headers: dict[str, str]) -> Exception:
    exc = Exception("429")
    exc.response = SimpleNamespace(headers=headers)  # type: ignore[attr-defined]
    return exc


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "4"}, 4.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after": formatdate(NOW + 4, usegmt=True)}, 4.0),
        ({"retry-after": "Tue, 14 Nov 2023 22:13:24 GMT"}, 4.0),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "30"}, 0.25),
        ({"retry-after-ms": "soon", "retry-after": "3"}, 3.0),
        ({"retry-after": "next week"}, None),
        ({"retry-after": "nan"}, None),
        ({"retry-after-ms": "inf", "retry-after": "2"}, 2.0),
        ({"retry-after": "Tue, 14 Nov 2023 22:13:24"}, None),  # no zone: not an HTTP date
        ({}, None),
    ],
)
def test_retry_after_in_seconds_milliseconds_or_as_a_date(
    headers: dict[str, str], seconds: float | None
) -> None:
    assert retry_after(failed_with(headers), now=NOW) == seconds


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    policy = RetryPolicy(initial_s=0.5, max_wait_s=20.0)
    for attempt, base in ((1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0)):
        waits = [backoff(policy, attempt) for _ in range(200)]
        assert all(base <= w <= 2 * base for w in waits)
        assert max(waits) - min(waits) > base / 4  # jittered, not in step
    assert all(backoff(policy, 40) == 20.0 for _ in range(20))


def test_a_failure_that_is_not_retriable_is_not_retried() -> None:
    calls = 0

    async def broken() -> str:
        nonlocal calls
        calls += 1
        raise KeyError("bad request")

    policy = RetryPolicy(attempts=5, initial_s=0.0)
    with pytest.raises(GaveUp) as caught:
        asyncio.run(
            call_with_retries(broken, policy, retriable=lambda e: False, retry_after=lambda e: None)
        )
    assert (caught.value.why, caught.value.attempts, calls) == ("final", 1, 1)
    assert isinstance(caught.value.last, KeyError)


def test_defaults_are_the_documented_ones() -> None:
    options = JudgeOptions()
    assert (options.timeout_s, options.retries, options.deadline_s) == (60.0, 10, 120.0)
    assert (options.backoff_initial_s, options.backoff_max_s) == (0.5, 20.0)
    assert (options.format, options.concurrency) == ("auto", None)
    policy = options.retry_policy()
    assert (policy.attempts, policy.timeout_s, policy.deadline_s) == (11, 60.0, 120.0)


@pytest.mark.parametrize(
    "base_url",
    [
        "https://api.openai.com/v1",
        "https://llm.internal.example:8443/v1",
        # on this machine, but no single-request inference server answers there (nothing
        # listens: the probe is refused at once); tests/judges/test_local_concurrency.py has
        # the servers that do get 2
        "http://127.0.0.1:9/v1",
        "http://[::1]:9/v1",
    ],
)
def test_the_default_concurrency_is_32_and_a_given_one_is_kept(base_url: str) -> None:
    judge = OpenAIJudge("m", base_url=base_url, api_key="x")
    settled = JudgeOptions().for_judge(judge)
    assert (settled.concurrency, settled.limit) == (32, 32)
    assert JudgeOptions(concurrency=8).for_judge(judge).concurrency == 8  # given: kept
    asyncio.run(judge.aclose())


def test_flags_override_the_suite_block() -> None:
    block = {"timeout_s": 20.0, "retries": 3, "format": "json_object", "concurrency": 4}
    options = JudgeOptions.build(block, timeout_s=5.0, retries=None, format="prompt")
    assert (options.timeout_s, options.retries, options.format) == (5.0, 3, "prompt")
    assert (options.deadline_s, options.concurrency) == (120.0, 4)
    assert options.snapshot() == {
        "timeout_s": 5.0,
        "retries": 3,
        "deadline_s": 120.0,
        "backoff_initial_s": 0.5,
        "backoff_max_s": 20.0,
        "format": "prompt",
        "concurrency": 4,
    }


@pytest.mark.parametrize(
    ("flags", "field", "message"),
    [
        ({"timeout_s": 0.0}, "--judge-timeout", "expected a number of seconds > 0, got 0.0"),
        ({"timeout_s": float("nan")}, "--judge-timeout", "expected a number of seconds > 0"),
        ({"deadline_s": -1.0}, "--judge-deadline", "expected a number of seconds > 0"),
        ({"retries": -1}, "--judge-retries", "expected a whole number from 0 to 100, got -1"),
        ({"concurrency": 0}, "--judge-concurrency", "expected a whole number >= 1, got 0"),
        (
            {"format": "xml"},
            "--judge-format",
            "expected one of auto, json_schema, json_object, prompt, got 'xml'",
        ),
    ],
)
def test_a_bad_flag_is_one_line_naming_it(
    flags: dict[str, object], field: str, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        JudgeOptions.build(None, **flags)
    assert caught.value.field == field
    assert message in str(caught.value)
    assert "\n" not in caught.value.one_line()


def test_an_attempt_cut_short_by_the_deadline_reports_the_failure_before_it() -> None:
    """A provider that keeps failing slowly: the last attempt only times out because the
    deadline arrives, so the error names the provider's failure, not a timeout."""
    attempts = 0

    async def slow_503() -> str:
        nonlocal attempts
        attempts += 1
        await asyncio.sleep(0.25)
        raise ConnectionError("HTTP 503")

    policy = RetryPolicy(attempts=20, initial_s=0.01, max_wait_s=0.02, timeout_s=1, deadline_s=0.6)
    with pytest.raises(GaveUp) as caught:
        asyncio.run(
            call_with_retries(
                slow_503, policy, retriable=lambda e: True, retry_after=lambda e: None
            )
        )
    assert caught.value.why == "deadline"
    assert isinstance(caught.value.last, ConnectionError)
    assert attempts == 3  # 0.25 s each: the third is cut off at 0.6 s


def test_a_retry_waits_for_a_slot_only_until_the_deadline() -> None:
    """Other calls hold every slot (a hung provider): the retry does not queue past the
    deadline behind them, it gives up at the deadline with the failure it had."""

    async def scenario() -> tuple[GaveUp, float]:
        slots = asyncio.Semaphore(1)
        loop = asyncio.get_running_loop()

        async def fail_then_lose_the_slot() -> str:
            # another call queues for the only slot and takes it when this attempt ends
            hogs.append(asyncio.ensure_future(hog()))
            await asyncio.sleep(0)
            raise ConnectionError("HTTP 503")

        async def hog() -> None:
            async with slots:
                await asyncio.sleep(5)

        hogs: list[asyncio.Future[None]] = []

        policy = RetryPolicy(attempts=5, initial_s=0.0, max_wait_s=0.01, deadline_s=0.5)
        start = loop.time()
        with pytest.raises(GaveUp) as caught:
            await call_with_retries(
                fail_then_lose_the_slot,
                policy,
                retriable=lambda e: True,
                retry_after=lambda e: None,
                slot=lambda: slots,
            )
        took = loop.time() - start
        for task in hogs:
            task.cancel()
        return caught.value, took

    stop, took = asyncio.run(scenario())
    assert (stop.why, stop.attempts) == ("deadline", 1)
    assert isinstance(stop.last, ConnectionError)
    assert 0.4 < took < 1.0  # not the 5 s the slot is held


@pytest.mark.parametrize("asked", [0.0, -5.0])
def test_a_retry_after_of_zero_or_in_the_past_backs_off_instead(asked: float) -> None:
    attempts = 0

    async def busy() -> str:
        nonlocal attempts
        attempts += 1
        raise ConnectionError("HTTP 429")

    async def timed() -> float:
        loop = asyncio.get_running_loop()
        start = loop.time()
        policy = RetryPolicy(attempts=3, initial_s=0.1, max_wait_s=1.0)
        with pytest.raises(GaveUp):
            await call_with_retries(
                busy, policy, retriable=lambda e: True, retry_after=lambda e: asked
            )
        return loop.time() - start

    took = asyncio.run(timed())
    assert attempts == 3
    assert took >= 0.3  # backoffs of >= 0.1 s and >= 0.2 s, not three calls in a burst
