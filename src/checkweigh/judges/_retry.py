"""Retries for judge calls: exponential backoff with jitter, honouring ``Retry-After``, each
attempt under a timeout and the whole call under a deadline.

A concurrency slot (``slot``) is held only while an attempt is in flight, never while waiting
to retry, so a struggling provider does not starve the other calls of slots.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass, replace
from typing import Literal, TypeVar

from ..errors import CheckweighError

T = TypeVar("T")

Slot = Callable[[], AbstractAsyncContextManager[object]]
"""Something to hold while an attempt is in flight (a semaphore, say)."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry a failed call."""

    attempts: int = 11
    """Calls in all, the first included."""
    initial_s: float = 0.5
    """First backoff (doubled each time, with jitter)."""
    max_wait_s: float = 20.0
    """Longest single wait, also the cap on a server's Retry-After."""
    timeout_s: float | None = None
    """Longest single attempt (None: the client's own timeout only)."""
    deadline_s: float | None = None
    """Longest the whole call may take, attempts and waits included (None: no limit)."""


def with_timeout(policy: RetryPolicy, timeout_s: float) -> RetryPolicy:
    """``policy``, with ``timeout_s`` per attempt unless it names its own."""
    return policy if policy.timeout_s is not None else replace(policy, timeout_s=timeout_s)


class AttemptTimeout(CheckweighError):
    """One attempt ran out of time."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"timed out after {seconds:.3g} s")
        self.seconds = seconds


class GaveUp(CheckweighError):
    """The call failed for good: ``last`` is its last failure, ``why`` says why it stopped."""

    def __init__(
        self,
        last: BaseException,
        why: Literal["final", "attempts", "deadline"],
        attempts: int,
        elapsed_s: float,
    ) -> None:
        super().__init__(f"{why}: {last!r}")
        self.last = last
        self.why = why
        self.attempts = attempts
        self.elapsed_s = elapsed_s


def backoff(policy: RetryPolicy, attempt: int) -> float:
    """The wait after failed attempt number ``attempt`` (1-based) when the server named none:
    doubling from ``initial_s``, plus up to as much again of jitter so that many clients do
    not retry in step, capped at ``max_wait_s``."""
    base: float = policy.initial_s * 2.0 ** min(attempt - 1, 30)
    return min(base + random.uniform(0.0, base), policy.max_wait_s)


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    retriable: Callable[[BaseException], bool],
    retry_after: Callable[[BaseException], float | None],
    slot: Slot | None = None,
) -> T:
    """Run ``call``; retry the failures ``retriable`` accepts, waiting what the server asked
    for (``retry_after``, capped) or else an exponential backoff.

    The deadline starts when the first attempt gets its slot and covers every attempt and
    wait after it, waiting for a slot again included; a wait that would pass it ends the call
    at once. A ``Retry-After`` of zero or less (a date in the past) counts as none: retrying
    at once would only spend the attempts in a burst.

    Raises:
        GaveUp: carrying the last failure (an :class:`AttemptTimeout` for a timed-out attempt).
    """
    loop = asyncio.get_running_loop()
    deadline = policy.deadline_s if policy.deadline_s is not None else math.inf
    start: float | None = None
    previous: BaseException | None = None
    attempt = 0
    while True:
        attempt += 1
        async with AsyncExitStack() as held:
            if slot is not None:
                # a retry queues for a slot behind other calls: within the deadline only
                left = math.inf if start is None else deadline - (loop.time() - start)
                try:
                    async with asyncio.timeout(None if math.isinf(left) else max(left, 0.0)):
                        await held.enter_async_context(slot())
                except TimeoutError:
                    if start is None or previous is None:
                        raise
                    elapsed = loop.time() - start
                    raise GaveUp(previous, "deadline", attempt - 1, elapsed) from previous
            if start is None:
                start = loop.time()
            limit = min(policy.timeout_s or math.inf, deadline - (loop.time() - start))
            try:
                if math.isinf(limit):
                    return await call()
                async with asyncio.timeout(max(limit, 0.0)) as scope:
                    return await call()
            except TimeoutError as exc:
                if math.isinf(limit) or not scope.expired():
                    failure: BaseException = exc
                else:
                    failure = AttemptTimeout(limit)
            except Exception as exc:  # noqa: BLE001 - classified below: non-retriable re-raised
                failure = exc
        elapsed = loop.time() - start
        cut_short = isinstance(failure, AttemptTimeout) and elapsed >= deadline
        if cut_short and previous is not None and not isinstance(previous, AttemptTimeout):
            # the deadline, not the server, ended this attempt: the earlier failure says more
            raise GaveUp(previous, "deadline", attempt, elapsed) from previous
        previous = failure
        if not isinstance(failure, AttemptTimeout) and not retriable(failure):
            raise GaveUp(failure, "final", attempt, elapsed) from failure
        if attempt >= policy.attempts:
            raise GaveUp(failure, "attempts", attempt, elapsed) from failure
        asked = retry_after(failure)
        wait = (
            backoff(policy, attempt)
            if asked is None or asked <= 0
            else min(asked, policy.max_wait_s)
        )
        if elapsed + wait >= deadline:
            raise GaveUp(failure, "deadline", attempt, elapsed) from failure
        await asyncio.sleep(wait)
