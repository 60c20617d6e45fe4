"""Retries for judge calls: exponential backoff with jitter, honouring ``Retry-After``."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry a failed call."""

    attempts: int = 4
    """Calls in all, the first included."""
    initial_s: float = 0.5
    """First backoff (doubled each time, with jitter)."""
    max_wait_s: float = 30.0
    """Longest single wait, also the cap on a server's Retry-After."""


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    retriable: Callable[[BaseException], bool],
    retry_after: Callable[[BaseException], float | None],
) -> T:
    """Run ``call``; retry the failures ``retriable`` accepts, waiting what the server asked
    for (``retry_after``) or else an exponential backoff. The last failure propagates."""

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        asked = retry_after(exc) if exc is not None else None
        if asked is not None:
            return min(max(asked, 0.0), policy.max_wait_s)
        # exponential backoff with full jitter on top, so many clients do not retry in step
        base: float = policy.initial_s * 2.0 ** (int(state.attempt_number) - 1)
        return min(base + random.uniform(0.0, base), policy.max_wait_s)

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.attempts),
        wait=wait,
        retry=retry_if_exception(retriable),
        reraise=True,
    )
    async for attempt in retrying:
        with attempt:
            return await call()
    raise AssertionError("unreachable: tenacity re-raises the last failure")
