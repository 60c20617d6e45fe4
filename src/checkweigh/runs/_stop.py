"""Stopping a run from outside: a signal handler asks, the engine stops between cases.

A signal handler must not raise into whatever the main thread happens to run (a
``KeyboardInterrupt`` in the middle of a batch write loses the batch): it only sets a flag,
which the recorded-trace loop reads between cases, and cancels the asyncio work, which ends
agent calls and judge requests at their next ``await``.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from ..errors import CheckweighError


class Interrupted(CheckweighError):
    """The run was asked to stop (Ctrl-C, SIGTERM); ``str()`` names the signal."""


class StopToken:
    """Set once to stop a run; the engine polls :attr:`requested` between cases."""

    def __init__(self) -> None:
        self.requested = False
        """Whether a stop was asked for (read once per case: keep it a plain attribute)."""
        self.reason = "stopped"
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None

    def request(self, reason: str = "stopped") -> None:
        """Ask the run to stop. Safe from a signal handler or another thread."""
        if not self.requested:
            self.reason = reason
        self.requested = True
        loop, task = self._loop, self._task
        if loop is not None and task is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # the loop closed in between: the run is ending anyway
                return

    def attach(self, task: asyncio.Task[None]) -> None:
        """Cancel ``task`` (the running cases) when a stop is requested."""
        self._loop, self._task = task.get_loop(), task
        if self.requested:
            task.cancel()

    def detach(self) -> None:
        """Forget the task once it has ended."""
        self._loop = self._task = None

    def raise_if_requested(self) -> None:
        """Raise :class:`Interrupted` when a stop was asked for."""
        if self.requested:
            raise Interrupted(self.reason)


SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Ctrl-C, a CI cancel, and a closed terminal or SSH session."""


@contextmanager
def stop_on_signals(
    token: StopToken,
    force: Callable[[int], None],
    signals: tuple[signal.Signals, ...] = SIGNALS,
) -> Iterator[StopToken]:
    """While inside, the first of ``signals`` (SIGINT, SIGTERM, SIGHUP) requests ``token`` to
    stop; a second one calls ``force(signum)`` (which should end the process at once). The previous
    handlers come back on exit. Main thread only, as any signal handler."""

    def handle(signum: int, _frame: FrameType | None) -> None:
        if token.requested:
            force(signum)
            return
        token.request(signal.Signals(signum).name)

    previous = {s: signal.signal(s, handle) for s in signals}
    try:
        yield token
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def interrupt(_signum: int) -> None:
    """A second Ctrl-C in a script: the usual ``KeyboardInterrupt``."""
    raise KeyboardInterrupt


def ctrl_c_is_default() -> bool:
    """Whether Ctrl-C would raise ``KeyboardInterrupt`` here (the main thread, no handler of
    the program's own): then a run can take it over."""
    return (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
