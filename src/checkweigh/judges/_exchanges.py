"""Keeping what each judge check asked and was answered, for the result it decided.

The engine awaits each check inside :func:`recorded`; :func:`ask` notes every call it makes
(the first question, a repair, each sample) in the list of the check that is running. A
context variable carries the list: each check runs in its own task, so concurrent checks of
concurrent cases never mix their calls.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import TypeVar

from ..core import ExchangeMessage, JudgeExchange
from ._model import JudgeReply, JudgeRequest

T = TypeVar("T")
A = TypeVar("A")

_ASKED: ContextVar[tuple[str, list[JudgeExchange]] | None] = ContextVar(
    "checkweigh_judge_exchanges", default=None
)


async def recorded(
    check: str, answer: Callable[[A], Awaitable[T]], arg: A
) -> tuple[T, list[JudgeExchange]]:
    """Await ``answer(arg)`` (a check of one case) and return it with the judge calls it made.

    The coroutine is made here, inside the task: one made before the task started would never
    be awaited should the task be cancelled first."""
    asked: list[JudgeExchange] = []
    token = _ASKED.set((check, asked))
    try:
        return await answer(arg), asked
    finally:
        _ASKED.reset(token)


def note_exchange(
    request: JudgeRequest, reply: JudgeReply | None, error: str | None = None
) -> None:
    """Keep one call (its reply, or why it failed) for the check being evaluated, if any."""
    current = _ASKED.get()
    if current is None:
        return
    check, asked = current
    messages = tuple(ExchangeMessage(role=m.role, content=m.content) for m in request.messages)
    if reply is None:
        asked.append(JudgeExchange(check=check, model="", messages=messages, reply="", error=error))
        return
    asked.append(
        JudgeExchange(
            check=check,
            model=reply.model,
            messages=messages,
            reply=reply.text,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            cached_input_tokens=reply.cached_input_tokens,
            cache_write_tokens=reply.cache_write_tokens,
            latency_ms=reply.latency_ms,
            cached=reply.cached,
        )
    )


def current_check() -> str | None:
    """The name of the check being evaluated in this task, if any (for per-check counts)."""
    current = _ASKED.get()
    return None if current is None else current[0]
