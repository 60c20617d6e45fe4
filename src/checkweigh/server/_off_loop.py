"""Long work off the event loop, stopped when its client leaves or the server stops.

A stability simulation of a large run takes seconds of CPU. It runs on a worker thread and
asks a ``stop`` callback between batches; that answers True once the client has disconnected
(uvicorn delivers ``http.disconnect``) or once ``serve`` has begun to stop (``stopping``, set
from its signal handler). Without it, uvicorn waits for every request in flight before it
exits, and an abandoned request computed on for a minute after SIGTERM.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread
from starlette.requests import Request

from ..core import SimulationStopped
from ._errors import ApiError

T = TypeVar("T")

Stop = Callable[[], bool]
"""Asked by the work between its steps: True means end now."""


async def off_loop(request: Request, work: Callable[[Stop], T]) -> T:
    """``work(stop)`` on a worker thread; ``stop`` answers True once the client has left or
    the server is stopping, and the work then raises :class:`SimulationStopped`.

    Raises:
        ApiError: 503 when the work was stopped (a client that left never sees it).
    """
    stopping: threading.Event = request.app.state.stopping
    left = threading.Event()

    def stop() -> bool:
        return left.is_set() or stopping.is_set()

    async def watch() -> None:
        # a GET's one (empty) body message, then nothing until the client disconnects
        while (await request.receive())["type"] != "http.disconnect":
            continue
        left.set()

    watcher = asyncio.ensure_future(watch())
    try:
        # abandon_on_cancel: a request cancelled while it waits returns at once; the
        # `finally` below then stops its thread at the work's next step
        return await anyio.to_thread.run_sync(work, stop, abandon_on_cancel=True)
    except SimulationStopped:
        why = "the client left" if left.is_set() else "the server is stopping"
        raise ApiError(503, f"stopped before it finished: {why}") from None
    finally:
        left.set()
        watcher.cancel()
