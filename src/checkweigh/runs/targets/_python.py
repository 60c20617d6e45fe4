"""The Python target: a user's ``module:function`` that turns a case's input into a trace."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..._process import ProcessExit, error_text, shown_value
from ...checks import ImportTargetError, load_object
from ...core import Case
from ...errors import InputError, TargetError
from ...suites import PythonTargetSpec, first_error, loc_text
from ._base import AgentFailure, AgentRun, TargetRequest, history_messages
from ._timing import timed


class CallableTarget:
    """Runs a sync or async agent callable on a case's input.

    The callable takes the input (in a conversation: the messages so far, as
    :func:`history_messages` gives them) and returns an :class:`AgentRun`, a dict with
    ``trace`` and ``final_state``, or a ``(trace, final_state)`` pair. Sync callables run in a
    daemon thread of their own (see :func:`call_in_thread`) so that several cases can run at
    once and a blocked one can be abandoned.
    """

    kind = "python"
    spec = PythonTargetSpec

    @classmethod
    def check(cls, spec: PythonTargetSpec, base: Path, *, load_agent: bool) -> None:
        """The agent is imported now (unless the run calls no agent: a replay).

        Raises:
            InputError: it cannot be imported, or is not callable.
        """
        if not load_agent:
            return
        try:
            agent = load_object(spec.agent, [base])
        except ImportTargetError as exc:
            raise InputError(str(exc), field="agent") from None
        if not callable(agent):
            raise InputError(f"{spec.agent!r} is not callable", field="agent")

    @classmethod
    def build(cls, spec: PythonTargetSpec, base: Path) -> CallableTarget:
        """The agent ``spec`` names, imported with ``base`` on the import path.

        Raises:
            TargetError: it cannot be imported, or is not callable.
        """
        return cls.load(spec.agent, base)

    def __init__(self, fn: Callable[..., Any], *, timeout_s: float | None = None) -> None:
        self.fn = fn
        self.timeout_s = timeout_s
        """Kept for :meth:`run_case`; the engine applies the suite's limit itself."""
        # an object with an `async def __call__` (an agent class's instance) is async too
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            type(fn).__call__
        )

    @classmethod
    def load(cls, dotted: str, base: Path, timeout_s: float | None = None) -> CallableTarget:
        """Import ``module:function`` with ``base`` on the import path."""
        try:
            fn = load_object(dotted, [base])
        except ImportTargetError as exc:
            raise TargetError(str(exc)) from None
        if not callable(fn):
            raise TargetError(f"{dotted} is not callable")
        return cls(fn, timeout_s=timeout_s)

    async def run(self, request: TargetRequest) -> AgentRun:
        """The agent's trace and final state for ``request``.

        Raises:
            AgentFailure: with a one-line reason.
        """
        value = history_messages(request.history) if request.conversational else request.case.input
        try:
            raw = await self._call(value)
        except (AgentFailure, asyncio.CancelledError):  # the run is being stopped: let it
            raise
        except BaseException as exc:  # noqa: BLE001 - the agent's failure is its case's error
            raise AgentFailure(agent_error(exc)) from None
        return _coerce(raw)

    async def run_case(self, case: Case) -> tuple[Case, float]:
        """``case`` with the agent's trace and final state, and the wall time in ms, within
        this target's ``timeout_s`` (for callers outside the engine, e.g. a suite's tests).

        Raises:
            AgentFailure: with a one-line reason.
        """
        ran, ms = await timed(self, TargetRequest(case), self.timeout_s)
        return case.model_copy(update={"trace": ran.trace, "final_state": ran.final_state}), ms

    async def aclose(self) -> None:
        """Nothing to release: the callable's module stays imported."""

    async def _call(self, value: Any) -> Any:
        if not self.is_async:
            return await call_in_thread(self.fn, value)
        try:
            return await self.fn(value)
        except EXITS as exc:
            # raised in a task, these would stop the event loop and end the whole run
            raise AgentFailure(exit_text("agent", exc)) from None


EXITS = (SystemExit, KeyboardInterrupt, GeneratorExit)
"""What user code can raise to end the interpreter: in an agent or a check, an error."""


def exit_text(who: str, exc: BaseException) -> str:
    """``agent called sys.exit(3)``, ``check raised KeyboardInterrupt``, ..."""
    if isinstance(exc, ProcessExit):
        return exc.describe(who)
    if isinstance(exc, SystemExit):
        return f"{who} called sys.exit({shown_value(exc.code)})"
    return f"{who} raised {type(exc).__name__}"


def agent_error(exc: BaseException) -> str:
    """What an agent's exception says on its case: ``agent raised ValueError: ...``."""
    if isinstance(exc, EXITS):
        return exit_text("agent", exc)
    return f"agent raised {error_text(exc)}"


_abandoned: set[threading.Thread] = set()


def abandoned_threads() -> list[threading.Thread]:
    """Agent threads still running whose result nobody waits for any more (timed out or
    cancelled). The process exits without joining them."""
    return [t for t in list(_abandoned) if t.is_alive()]


async def call_in_thread(fn: Callable[[Any], Any], value: Any) -> Any:
    """``fn(value)`` in a new daemon thread; the result comes back through the event loop.

    Unlike ``asyncio.to_thread``, whose executor threads are joined when the loop and the
    interpreter shut down, a call that never returns (an agent stuck on a socket) does not
    keep the run or the process alive: on timeout or cancellation the thread is abandoned.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def deliver(ok: bool, value: Any) -> None:
        if future.done():  # timed out or cancelled meanwhile
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def work() -> None:
        try:
            outcome: tuple[bool, Any] = (True, fn(value))
        except BaseException as exc:  # noqa: BLE001 - anything the agent raises is its case's error
            outcome = (False, AgentFailure(agent_error(exc)))
        try:
            loop.call_soon_threadsafe(deliver, *outcome)
        except RuntimeError:  # the loop is closed: the run ended without this result
            return
        finally:
            _abandoned.discard(threading.current_thread())

    thread = threading.Thread(target=work, name="checkweigh-agent", daemon=True)
    thread.start()
    try:
        return await future
    except asyncio.CancelledError:
        if thread.is_alive():
            _abandoned.add(thread)
        raise


def _coerce(raw: Any) -> AgentRun:
    if isinstance(raw, AgentRun):
        return raw
    if isinstance(raw, tuple) and len(raw) == 2:
        raw = {"trace": raw[0], "final_state": raw[1]}
    elif not isinstance(raw, dict) and hasattr(raw, "trace") and hasattr(raw, "final_state"):
        raw = {"trace": raw.trace, "final_state": raw.final_state}
    if not isinstance(raw, dict):
        if inspect.iscoroutine(raw):
            raw.close()  # never awaited: close it rather than print the interpreter's warning
        raise AgentFailure(
            f"agent returned {type(raw).__name__}; expected AgentRun, a dict with trace and "
            "final_state, or (trace, final_state)"
        )
    try:
        return AgentRun.model_validate(raw)
    except ValidationError as exc:
        loc, message = first_error(exc)
        raise AgentFailure(f"agent returned an invalid {loc_text(loc)}: {message}") from None
