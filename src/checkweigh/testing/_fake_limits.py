"""Requests-per-minute and tokens-per-minute limits for the fake LLM server, answered as the
providers answer them.

The model is the token bucket both providers document: each limit is a bucket that refills
continuously at ``limit / 60`` per second (not a window reset each minute), and, as they warn
that "60 RPM may be enforced as 1 request per second", it holds only ``burst_s`` (1 s) worth of
the limit, so a burst of calls sent together is refused past that share. A request takes 1 from
the requests bucket and its tokens from the tokens bucket, counted before the answer exists as
OpenAI does: the prompt's characters / 4 plus ``max_tokens``. A request larger than the whole
bucket is let through once the bucket is full (its level goes below zero), never refused forever.

A refused request gets HTTP 429 with the provider's error body, ``retry-after`` in whole seconds
(rounded up), and every answer carries the rate-limit headers: OpenAI's ``x-ratelimit-*``
(resets as Go durations) or Anthropic's ``anthropic-ratelimit-requests-*`` and
``anthropic-ratelimit-tokens-*`` (resets as RFC 3339 times).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

LimitKind = Literal["requests", "tokens"]


@dataclass
class _Bucket:
    limit: int
    capacity: float
    level: float
    at: float

    @property
    def rate(self) -> float:
        return self.limit / 60.0

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.at) * self.rate)
        self.at = now

    def short_by(self, cost: float) -> float:
        """How much is missing before ``cost`` may be taken (0: nothing)."""
        return max(min(cost, self.capacity) - self.level, 0.0)

    def reset_s(self) -> float:
        """Seconds until the bucket is full again."""
        return max(self.capacity - self.level, 0.0) / self.rate


@dataclass(frozen=True, slots=True)
class Admission:
    """Whether a request was let through, and the limits as they stand after it."""

    allowed: bool
    refused_by: LimitKind | None
    """The limit that refused it."""
    retry_after_s: int
    """Whole seconds to wait before a retry can pass (0 when allowed)."""
    state: dict[LimitKind, tuple[int, int, float]]
    """Per limit: the limit per minute, what remains (whole units) and seconds until full."""


@dataclass
class FakeLimits:
    """The server's limits (thread-safe: the handler threads share them)."""

    rpm: int | None = None
    tpm: int | None = None
    burst_s: float = 1.0
    """Seconds of each limit a bucket holds."""
    clock: Callable[[], float] = time.monotonic
    refused: int = 0
    """Requests answered 429."""
    tokens: int = 0
    """Tokens of the requests let through, as counted."""
    _buckets: dict[LimitKind, _Bucket] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        now = self.clock()
        for kind, limit in (("requests", self.rpm), ("tokens", self.tpm)):
            if limit is None:
                continue
            if limit < 1:
                raise ValueError(f"{kind} per minute: expected a whole number >= 1, got {limit}")
            capacity = max(limit * self.burst_s / 60.0, 1.0)
            self._buckets[kind] = _Bucket(limit, capacity, capacity, now)  # type: ignore[index]

    @property
    def active(self) -> bool:
        """Whether any limit is set."""
        return bool(self._buckets)

    def admit(self, tokens: int) -> Admission:
        """Let a request of ``tokens`` through, or refuse it."""
        costs: dict[LimitKind, float] = {"requests": 1.0, "tokens": float(tokens)}
        with self._lock:
            now = self.clock()
            refused_by: LimitKind | None = None
            wait = 0.0
            for kind, bucket in self._buckets.items():
                bucket.refill(now)
                short = bucket.short_by(costs[kind])
                if short > 0 and short / bucket.rate >= wait:
                    refused_by, wait = kind, short / bucket.rate
            if refused_by is None:
                for kind, bucket in self._buckets.items():
                    bucket.level -= costs[kind]
                self.tokens += tokens
            else:
                self.refused += 1
            state = {
                kind: (b.limit, max(math.floor(b.level), 0), b.reset_s())
                for kind, b in self._buckets.items()
            }
        retry = 0 if refused_by is None else max(math.ceil(wait), 1)
        return Admission(refused_by is None, refused_by, retry, state)


def request_tokens(body: dict[str, Any]) -> int:
    """A request's tokens as the limiter counts them: the characters of its messages (and
    system prompt) / 4, rounded up, plus ``max_tokens``."""
    chars = 0
    system = body.get("system")
    if isinstance(system, str):
        chars += len(system)
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            chars += sum(
                len(str(part.get("text", ""))) for part in content if isinstance(part, dict)
            )
    max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or 0
    return math.ceil(chars / 4) + (max_tokens if isinstance(max_tokens, int) else 0)


def go_duration(seconds: float) -> str:
    """``seconds`` as OpenAI writes a reset: ``20ms``, ``1.5s``, ``6m0s``."""
    if seconds < 1.0:
        return f"{math.ceil(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60.0)
    text = f"{rest:.3f}".rstrip("0").rstrip(".") + "s"
    return f"{int(minutes)}m{text}" if minutes else text


def limit_headers(wire: str, admission: Admission, now: float | None = None) -> dict[str, str]:
    """The rate-limit headers of an answer (``now``: epoch seconds, for Anthropic's times)."""
    headers: dict[str, str] = {}
    epoch = time.time() if now is None else now
    for kind, (limit, remaining, reset) in admission.state.items():
        if wire == "anthropic":
            when = datetime.fromtimestamp(math.ceil(epoch + reset), UTC)
            prefix = f"anthropic-ratelimit-{kind}-"
            headers[prefix + "limit"] = str(limit)
            headers[prefix + "remaining"] = str(remaining)
            headers[prefix + "reset"] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
        else:
            headers[f"x-ratelimit-limit-{kind}"] = str(limit)
            headers[f"x-ratelimit-remaining-{kind}"] = str(remaining)
            headers[f"x-ratelimit-reset-{kind}"] = go_duration(reset)
    if not admission.allowed:
        headers["retry-after"] = str(admission.retry_after_s)
    return headers


def rate_limit_body(wire: str, admission: Admission) -> dict[str, Any]:
    """The 429's error body, in the provider's words."""
    kind = admission.refused_by or "requests"
    limit = admission.state[kind][0] if kind in admission.state else 0
    unit = "requests" if kind == "requests" else "tokens"
    message = (
        f"Rate limit reached for {unit} per min (RPM/TPM): Limit {limit}. "
        f"Please try again in {admission.retry_after_s}s."
    )
    if wire == "anthropic":
        return {"type": "error", "error": {"type": "rate_limit_error", "message": message}}
    return {
        "error": {"message": message, "type": kind, "param": None, "code": "rate_limit_exceeded"}
    }
