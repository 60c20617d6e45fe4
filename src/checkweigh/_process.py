"""User code must not end the process during a run: ``os._exit`` is refused while one runs.

``sys.exit`` raises ``SystemExit``, which the engine turns into an errored case or check. But
``os._exit(0)`` in an agent or a check would end the process at once with an exit code of the
user's choosing (0 reads as a pass in CI) and leave the run unfinished. While a run executes,
``os._exit`` raises :class:`ProcessExit` in the calling code instead; checkweigh's own exits
call :data:`real_exit`, captured before any guard.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

from ._text import safe_text

real_exit = os._exit
"""The real ``os._exit``, for checkweigh's own exits."""


class ProcessExit(SystemExit):
    """``os._exit(status)`` called by user code during a run."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status

    def describe(self, who: str) -> str:
        """``agent called os._exit(0)``."""
        return f"{who} called os._exit({self.status!r})"


def _refuse(status: int) -> NoReturn:
    raise ProcessExit(status)


@contextmanager
def refuse_process_exit() -> Iterator[None]:
    """While inside, ``os._exit(n)`` raises :class:`ProcessExit` instead of ending the process."""
    previous = os._exit
    setattr(os, "_exit", _refuse)  # noqa: B010 - a module attribute, replaced on purpose
    try:
        yield
    finally:
        setattr(os, "_exit", previous)  # noqa: B010


def error_text(exc: BaseException) -> str:
    """``ValueError: bad input``, or the type alone: user code's exception as text, even when
    its ``__str__`` itself raises (which would otherwise escape from the error handling of the
    agent's thread and leave its case to time out)."""
    try:
        text = str(exc)
    except Exception as failure:  # noqa: BLE001 - a user's __str__ may raise anything
        text = f"<str() raised {type(failure).__name__}>"
    return f"{type(exc).__name__}: {safe_text(text)}" if text else type(exc).__name__


def shown_value(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, even when the user's ``__repr__`` raises."""
    try:
        text = repr(value)
    except Exception as failure:  # noqa: BLE001 - a user's __repr__ may raise anything
        text = f"<{type(value).__name__}: repr() raised {type(failure).__name__}>"
    return text[:limit]
