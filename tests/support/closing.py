"""Run one piece of judge work and close the judge's HTTP client afterwards, as a run does."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from checkweigh.judges import close_judge

T = TypeVar("T")


async def closing(judge: object, work: Awaitable[T]) -> T:
    """Await ``work``, then close ``judge`` (its connections belong to this event loop)."""
    try:
        return await work
    finally:
        await close_judge(judge)
