"""The fake provider's requests- and tokens-per-minute limits: continuous token buckets, and
429s and rate-limit headers read back through the real ``openai`` and ``anthropic`` SDKs."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import anthropic
import openai
import pytest

from checkweigh.judges import read_limits
from checkweigh.testing import FakeLimits, Reply, fake_llm_server
from checkweigh.testing._fake_limits import go_duration, request_tokens

KEY = "sk-test-key-for-the-fake-0001"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_past_one_seconds_share_is_refused_and_the_bucket_refills_continuously() -> None:
    clock = Clock()
    limits = FakeLimits(rpm=600, clock=clock)  # 10 a second, holding 10
    assert [limits.admit(0).allowed for _ in range(12)] == [True] * 10 + [False] * 2
    refused = limits.admit(0)
    assert (refused.refused_by, refused.retry_after_s) == ("requests", 1)
    clock.now = 0.25  # 2.5 requests flowed back in: two pass, the third waits
    assert [limits.admit(0).allowed for _ in range(3)] == [True, True, False]
    assert limits.refused == 4
    clock.now = 10.0  # full again, never fuller
    admitted = limits.admit(0)
    assert admitted.allowed
    assert admitted.state["requests"][:2] == (600, 9)


def test_tokens_are_counted_from_the_request_and_a_huge_one_passes_a_full_bucket() -> None:
    body = {
        "messages": [{"role": "user", "content": "x" * 401}],
        "system": "s" * 99,
        "max_tokens": 300,
    }
    assert request_tokens(body) == 125 + 300
    clock = Clock()
    limits = FakeLimits(tpm=60_000, clock=clock)  # 1,000 a second, holding 1,000
    assert limits.admit(600).allowed
    refused = limits.admit(600)
    assert (refused.allowed, refused.refused_by) == (False, "tokens")
    clock.now = 1.0
    assert limits.admit(5_000).allowed  # more than the bucket: let through when it is full
    assert not limits.admit(1).allowed  # and the bucket is in debt for it


@pytest.mark.parametrize(
    ("seconds", "text"), [(0.02, "20ms"), (1.0, "1s"), (1.5, "1.5s"), (360.0, "6m0s")]
)
def test_resets_are_written_as_openai_writes_them(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text


def test_openai_sdk_reads_the_429_body_and_headers() -> None:
    answer = Reply('{"verdict": "yes"}')
    with fake_llm_server([], default=answer, rpm=60) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
        params: dict[str, Any] = {
            "model": "gpt-test",
            "messages": [{"role": "user", "content": "Is it booked?"}],
            "max_tokens": 50,
        }
        ok = client.chat.completions.with_raw_response.create(**params)
        with pytest.raises(openai.RateLimitError) as refused:
            client.chat.completions.create(**params)
        stats = server.stats()
    readings = {r.kind: r for r in read_limits(ok.headers, 0.0)}
    assert (readings["requests"].limit, readings["requests"].remaining) == (60, 0)
    assert readings["requests"].reset_s == pytest.approx(1.0, abs=0.05)
    error = refused.value
    assert error.status_code == 429
    assert error.body == {
        "message": error.body["message"],  # type: ignore[index]
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
    assert "Limit 60" in error.message
    assert error.response.headers["retry-after"] == "1"
    assert error.response.headers["x-ratelimit-limit-requests"] == "60"
    assert (stats["requests"], stats["rate_limited"]) == (1, 1)


def test_anthropic_sdk_reads_the_429_body_and_headers() -> None:
    answer = Reply(tool_input={"verdict": "yes"})
    with fake_llm_server([], wire="anthropic", default=answer, tpm=6_000) as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key=KEY, max_retries=0)
        params: dict[str, Any] = {
            "model": "claude-test",
            "messages": [{"role": "user", "content": "Is it booked?"}],
            "max_tokens": 90,
        }
        ok = client.messages.with_raw_response.create(**params)
        with pytest.raises(anthropic.RateLimitError) as refused:
            client.messages.create(**params)
    readings = {r.kind: r for r in read_limits(ok.headers, 0.0)}
    assert set(readings) == {"tokens"}  # no requests limit was set
    assert (readings["tokens"].limit, readings["tokens"].remaining) == (6_000, 100 - 94)
    error = refused.value
    assert error.status_code == 429
    assert error.body == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": error.body["error"]["message"]},  # type: ignore[index]
    }
    assert error.response.headers["retry-after"] == "1"
    assert error.response.headers["anthropic-ratelimit-tokens-limit"] == "6000"
    assert error.response.headers["anthropic-ratelimit-tokens-reset"].endswith("Z")


def test_the_command_line_server_takes_limits_and_counts_its_429s() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "checkweigh.testing", "--rpm", "60", "--stats"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    base_url = proc.stdout.readline().strip()
    client = openai.OpenAI(base_url=base_url, api_key=KEY, max_retries=0)
    params: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    client.chat.completions.create(**params)
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(**params)
    out, _ = proc.communicate(timeout=10)
    assert '"rate_limited": 1' in out.splitlines()[-1]


@pytest.mark.parametrize("flag", ["--rpm", "--tpm"])
def test_the_command_line_refuses_a_limit_below_one(flag: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "checkweigh.testing", flag, "0"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    assert done.returncode == 2
    assert f"{flag}: expected a whole number >= 1, got '0'" in done.stderr
