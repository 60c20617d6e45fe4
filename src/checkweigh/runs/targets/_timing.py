"""Calling a target the way the engine does: within a time limit, timed, failures as text."""

from __future__ import annotations

import asyncio
import time
from contextvars import ContextVar

from ..._process import error_text
from ..._text import safe_data
from ._base import AgentFailure, AgentRun, Target, TargetRequest

_to_json = AgentRun.__pydantic_serializer__.to_json

# what the call in progress has seen so far (the HTTP tries, a program's stderr, the turn),
# by kind: a time limit cancels the call, and only this says what it was doing
_SEEN: ContextVar[dict[str, str] | None] = ContextVar("checkweigh_call_seen", default=None)


def note_progress(kind: str, text: str) -> None:
    """Record what the running call has seen, for its message if the time limit cuts it
    (``agent timed out after 30s; earlier: 429 x3 (Retry-After 2s)``). A later note of the
    same ``kind`` replaces the earlier one (an empty one clears it); outside :func:`timed` it is
    dropped."""
    seen = _SEEN.get()
    if seen is not None:
        seen[kind] = text


async def timed(
    target: Target, request: TargetRequest, timeout_s: float | None
) -> tuple[AgentRun, float]:
    """``target``'s answer to ``request`` and its wall time in ms.

    A call over ``timeout_s`` is cancelled (the target cleans up: kills its process, drops its
    request). Anything a target raises other than :class:`AgentFailure` is a bug in it, still
    only its case's error.

    Raises:
        AgentFailure: with a one-line reason.
    """
    start = time.perf_counter()
    seen: dict[str, str] = {}
    token = _SEEN.set(seen)
    try:
        # asyncio.timeout, not wait_for: no task of its own per call (one loop hop fewer)
        async with asyncio.timeout(timeout_s):
            ran = await target.run(request)
    except TimeoutError:
        said = "".join(f"; {text}" for text in seen.values() if text)
        raise AgentFailure(f"agent timed out after {timeout_s:g}s{said}") from None
    except (AgentFailure, asyncio.CancelledError):
        raise
    except Exception as exc:  # noqa: BLE001 - a target's own bug: its case's error, not the run's
        raise AgentFailure(f"{target.kind} target failed: {error_text(exc)}") from None
    finally:
        _SEEN.reset(token)
    if not isinstance(ran, AgentRun):
        raise AgentFailure(f"{target.kind} target gave {type(ran).__name__}, not an AgentRun")
    ms = (time.perf_counter() - start) * 1000.0
    return storable(ran), ms


def storable(ran: AgentRun) -> AgentRun:
    """``ran`` as it can be stored: where an agent's text enters, a lone surrogate is made a
    visible escape (see ``checkweigh._text``); a value no JSON encoder takes (an object in a
    Python agent's final state) is its case's error, not the run's end when it is stored.

    Raises:
        AgentFailure: naming what cannot be stored.
    """
    try:
        ran = safe_data(ran)
        _to_json(ran)
    except ValueError as exc:  # pydantic's PydanticSerializationError
        raise AgentFailure(f"agent returned a value that cannot be stored: {exc}") from None
    except RecursionError:
        raise AgentFailure("agent returned a value nested too deeply to store") from None
    return ran
