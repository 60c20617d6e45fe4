"""Adaptive judge concurrency: the controller's reaction to rate-limit headers and 429s, on an
explicit clock, and the pacer's queue on a real event loop."""

from __future__ import annotations

import asyncio

import pytest

from checkweigh.judges import Controller, JudgeRequest, Message, Pacer, Reading, rate_costs
from checkweigh.judges import read_limits as read
from checkweigh.judges._limit_headers import parse_duration, parse_reset_time

NOW = 1_800_000_000.0  # epoch seconds, for the RFC 3339 resets


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0.5s", 0.5)],
)
def test_openai_resets_are_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("junk", ["", "soon", "5", "1s junk", "-1s", "1d"])
def test_an_unreadable_duration_is_none(junk: str) -> None:
    assert parse_duration(junk) is None


def test_openai_headers_are_read_whatever_their_case() -> None:
    headers = {
        "X-RateLimit-Limit-Requests": "5000",
        "x-ratelimit-remaining-requests": "4999",
        "x-ratelimit-reset-requests": "12ms",
        "x-ratelimit-limit-tokens": "400000",
        "x-ratelimit-remaining-tokens": "399000",
        "x-ratelimit-reset-tokens": "150ms",
        "content-type": "application/json",
    }
    assert read(headers, NOW) == [
        Reading("requests", 5000, 4999, pytest.approx(0.012)),  # type: ignore[arg-type]
        Reading("tokens", 400000, 399000, pytest.approx(0.15)),  # type: ignore[arg-type]
    ]


def test_anthropic_headers_read_all_four_families_with_rfc3339_resets() -> None:
    headers = {}
    for kind, limit in (
        ("requests", 1000),
        ("tokens", 480000),
        ("input-tokens", 400000),
        ("output-tokens", 80000),
    ):
        headers[f"anthropic-ratelimit-{kind}-limit"] = str(limit)
        headers[f"anthropic-ratelimit-{kind}-remaining"] = str(limit - 10)
        headers[f"anthropic-ratelimit-{kind}-reset"] = "2027-01-15T08:00:02Z"
    readings = read(headers, parse_reset_time("2027-01-15T08:00:00Z", 0.0) or 0.0)
    assert [(r.kind, r.limit, r.remaining) for r in readings] == [
        ("requests", 1000, 990),
        ("tokens", 480000, 479990),
        ("input-tokens", 400000, 399990),
        ("output-tokens", 80000, 79990),
    ]
    assert all(r.reset_s == pytest.approx(2.0) for r in readings)


def test_junk_headers_are_left_out_never_raised() -> None:
    headers = {
        "x-ratelimit-limit-requests": "lots",
        "x-ratelimit-remaining-requests": "-3",
        "anthropic-ratelimit-tokens-limit": "1000",
        "anthropic-ratelimit-tokens-reset": "tomorrow",
    }
    assert read(headers, NOW) == [Reading("tokens", 1000, None, None)]


def test_one_call_probes_before_the_first_burst_then_the_window_opens() -> None:
    c = Controller()
    assert c.allowed == 1
    c.answered(in_flight=1)
    assert c.allowed == 32


def test_the_window_doubles_per_round_trip_while_full_and_stays_when_idle() -> None:
    c = Controller(probing=False)
    for _ in range(32):  # one round trip's answers, the window full each time
        c.answered(in_flight=c.allowed)
    assert c.allowed == 64
    c.answered(in_flight=3)  # the run had few calls waiting: the window was not the limit
    assert c.allowed == 64
    for _ in range(1000):
        c.answered(in_flight=c.allowed)
    assert c.allowed == c.peak_window == 256  # the cap


def test_a_429_halves_the_window_once_per_pause_and_growth_turns_additive() -> None:
    c = Controller(probing=False, window=64)
    c.refused(2.0, now=100.0)
    # a burst of 429s to calls sent together: one cut, the pause the longest asked for
    c.refused(2.0, now=100.1)
    c.refused(3.0, now=100.2)
    assert (c.allowed, c.answered_429, c.pause_until) == (32, 3, pytest.approx(103.2))
    assert c.delay({"requests": 1.0}, now=101.0) == pytest.approx(2.2)
    assert c.delay({"requests": 1.0}, now=104.0) == 0.0
    for _ in range(33):  # about a window's worth of answers: one more call, not twice as many
        c.answered(in_flight=c.allowed)
    assert c.allowed == 33
    c.refused(None, now=110.0)  # no retry-after: no pause, but a cut
    assert (c.allowed, c.delay({"requests": 1.0}, now=110.0)) == (16, 0.0)


def test_learned_limits_pace_sends_at_the_limit_times_the_margin() -> None:
    c = Controller(probing=False)
    c.learn([Reading("requests", 600, None, None), Reading("tokens", 60_000, None, None)], 0.0)
    assert (c.learned_rpm(), c.learned_tpm()) == (600, 60_000)
    call = {"requests": 1.0, "tokens": 100.0}
    sent = 0
    now = 0.0
    while now < 60.0:  # a minute of sends, each as soon as the buckets allow
        wait = c.delay(call, now)
        now += wait
        c.take(call, now)
        sent += 1
    # tokens bind: 60,000 a minute of 100 each, at the 0.97 margin, plus the 1 s burst
    assert 0.95 * 600 <= sent <= 600
    assert sent == pytest.approx(600 * 0.97 + 9.7, abs=2)


def test_a_bucket_never_holds_more_than_the_provider_said_remains() -> None:
    c = Controller(probing=False)
    c.learn([Reading("requests", 6000, 0, 0.01)], 0.0)  # another client spent the quota
    assert c.delay({"requests": 1.0}, 0.0) == pytest.approx(1 / (6000 * 0.97 / 60))


def test_a_429_while_paced_lowers_the_margin_and_answers_bring_it_back() -> None:
    c = Controller(probing=False)
    c.learn([Reading("requests", 600, None, None)], 0.0)
    c.refused(1.0, now=5.0)
    assert c.margin == pytest.approx(0.97 * 0.9)
    for _ in range(100):
        c.answered(in_flight=1)
    assert c.margin == pytest.approx(0.97)


def test_a_request_is_costed_as_the_limiters_count_it() -> None:
    request = JudgeRequest(
        messages=(
            Message(role="system", content="s" * 1000),
            Message(role="user", content="u" * 201),
        ),
        max_tokens=300,
    )
    assert rate_costs(request) == {
        "requests": 1.0,
        "tokens": 301.0 + 300.0,
        "input-tokens": 301.0,
        "output-tokens": 300.0,
    }


def test_retries_go_before_first_attempts_and_a_pause_holds_every_send() -> None:
    async def scenario() -> list[str]:
        pacer = Pacer(Controller(probing=False, window=1))
        order: list[str] = []
        await pacer.enter({})  # the one slot is taken

        async def call(name: str, retry: bool) -> None:
            await pacer.enter({}, retry=retry)
            order.append(name)
            pacer.leave()

        waiting = [
            asyncio.create_task(call("first-a", False)),
            asyncio.create_task(call("first-b", False)),
            asyncio.create_task(call("retry", True)),
        ]
        await asyncio.sleep(0)
        pacer.refused([], 0.05)  # a 429 for the call holding the slot: everyone waits
        pacer.leave()
        await asyncio.sleep(0.01)
        assert order == []  # paused
        await asyncio.gather(*waiting)
        return order

    assert asyncio.run(scenario()) == ["retry", "first-a", "first-b"]


def test_a_cancelled_wait_gives_its_turn_back() -> None:
    async def scenario() -> int:
        pacer = Pacer(Controller(probing=False, window=1))
        await pacer.enter({})
        waiting = asyncio.create_task(pacer.enter({}))
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        pacer.leave()
        await asyncio.wait_for(pacer.enter({}), 1.0)  # the slot is free again
        return pacer.in_flight

    assert asyncio.run(scenario()) == 1
