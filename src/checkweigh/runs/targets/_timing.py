"""Calling a target the way the engine does: within a time limit, timed, failures as text."""

from __future__ import annotations

import asyncio
import time

from ..._process import error_text
from ..._text import safe_data
from ._base import AgentFailure, AgentRun, Target, TargetRequest


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
    try:
        # asyncio.timeout, not wait_for: no task of its own per call (one loop hop fewer)
        async with asyncio.timeout(timeout_s):
            ran = await target.run(request)
    except TimeoutError:
        raise AgentFailure(f"agent timed out after {timeout_s:g}s") from None
    except (AgentFailure, asyncio.CancelledError):
        raise
    except Exception as exc:  # noqa: BLE001 - a target's own bug: its case's error, not the run's
        raise AgentFailure(f"{target.kind} target failed: {error_text(exc)}") from None
    if not isinstance(ran, AgentRun):
        raise AgentFailure(f"{target.kind} target gave {type(ran).__name__}, not an AgentRun")
    # where an agent's text enters: a lone surrogate in it could not be stored
    return safe_data(ran), (time.perf_counter() - start) * 1000.0
