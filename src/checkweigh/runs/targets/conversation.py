"""Multi-turn conversations: any target driven turn by turn by a scripted or simulated user.

:class:`ConversationTarget` wraps the suite's target. A case without ``user`` goes straight to
it. A case with one becomes a conversation: the user speaks, the inner target is called with
the conversation so far (``TargetRequest.history`` ending with the user's message, ``turn``
counting from 0, as every message that names a turn does) and returns that turn's new steps
and its state; and again, until

- ``script_end``: a scripted user has said every message;
- ``user_done``: the simulated user says it is done;
- ``agent_ended``: the agent's final state has ``"conversation": "ended"``;
- ``transferred``: the agent's final state has ``"conversation": "transferred"``, or it
  called a tool named like tau-bench's ``transfer_to_human_agents`` (:data:`TRANSFER_TOOLS`);
- ``max_turns``: the case's ``user.max_turns``, else for a simulated user the target's.

The case's final state is the last turn's, with ``final_state["conversation"] =
{"stop_reason": ..., "turns": n}`` for checks to read. An agent or simulator that fails at
turn k errors the case, and the errored case keeps the conversation up to there.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Literal

from ..._process import error_text
from ...core import Case, ScriptedUser, SimulatedUser, Step
from ...judges import JudgeModel
from ...suites import TargetSpecBase
from ._base import AgentFailure, AgentRun, AgentUsage, Target, TargetRequest
from ._timing import note_progress, storable
from ._users import UserFailure, UserModels, scripted_message, simulated_message

StopReason = Literal[
    "script_end", "user_done", "agent_ended", "transferred", "max_turns", "agent_error"
]
"""Why a conversation ended (``agent_error`` only on an errored case's kept conversation)."""

TRANSFER_TOOLS = frozenset({"transfer_to_human_agents", "transfer_to_human", "transfer_to_agent"})
"""Tool calls that hand the user over to someone else: the conversation ends there."""
AGENT_SIGNALS: dict[Any, StopReason] = {"ended": "agent_ended", "transferred": "transferred"}
"""``final_state["conversation"]`` values by which an agent ends the conversation itself."""


class ConversationFailure(AgentFailure):
    """A conversation that broke off: the reason, and the case with the turns so far."""

    def __init__(self, reason: str, case: Case) -> None:
        super().__init__(reason)
        self.case = case


def failed_case(failure: AgentFailure, case: Case, body: bytes | None) -> tuple[Case, bytes | None]:
    """What an errored case keeps: the conversation so far when one broke off, else the case
    as given (with the JSON it was read from)."""
    if isinstance(failure, ConversationFailure):
        return failure.case, None
    return case, body


class ConversationTarget:
    """Drives ``inner`` turn by turn for cases with a ``user``; passes other cases through."""

    def __init__(
        self, inner: Target, *, max_turns: int = 10, judge: JudgeModel | None = None
    ) -> None:
        self.inner = inner
        self.kind = inner.kind
        self.max_turns = max_turns
        """The most turns of a simulated user's conversation, unless its case says."""
        self.users = UserModels.of(judge)

    async def run(self, request: TargetRequest) -> AgentRun:
        """The agent's answer to a single-call case, or the whole conversation of a case with
        a ``user``.

        Raises:
            AgentFailure: the agent failed (a :class:`ConversationFailure` once a conversation
                started, holding its turns so far).
        """
        user = request.case.user
        if user is None:  # one attribute test: single-call cases cost nothing more
            return await self.inner.run(request)
        return await _Conversation(self, request, user).run()

    async def aclose(self) -> None:
        """Close the inner target and any simulator model built for a case."""
        try:
            await self.users.aclose()
        finally:
            await self.inner.aclose()


def conversing(target: Target, spec: TargetSpecBase, judge: JudgeModel | None) -> Target:
    """``target`` able to hold the conversations of cases with a ``user`` (``spec`` gives the
    default ``max_turns``; simulated users speak through ``judge`` unless a case names a
    model)."""
    return ConversationTarget(target, max_turns=spec.max_turns, judge=judge)


class _Conversation:
    """One conversation in progress."""

    def __init__(
        self, owner: ConversationTarget, request: TargetRequest, user: ScriptedUser | SimulatedUser
    ) -> None:
        self.owner = owner
        self.request = request
        self.user = user
        self.history: list[Step] = []
        self.state: dict[str, Any] = {}
        self.turns = 0
        self.usage: AgentUsage | None = None

    async def run(self) -> AgentRun:
        user, reason = self.user, None
        script = len(user.turns) if isinstance(user, ScriptedUser) else None
        limit = user.max_turns or (script if script is not None else self.owner.max_turns)
        while reason is None:
            if script is not None and self.turns >= script:
                reason = "script_end"
            elif self.turns >= limit:
                reason = "max_turns"
            elif not await self._user_speaks():
                reason = "user_done"
            else:
                reason = await self._agent_answers()
        state = {**self.state, "conversation": {"stop_reason": reason, "turns": self.turns}}
        return AgentRun(trace=self.history, final_state=state, usage=self.usage)

    async def _user_speaks(self) -> bool:
        """Add the user's next message; False when the user is done."""
        user, start = self.user, time.perf_counter()
        note_progress("turn", f"at turn {self.turns}")  # should the time limit cut it here
        if isinstance(user, ScriptedUser):
            message, ms = scripted_message(user, self.turns), None
        else:
            try:
                model = self.owner.users.model(user.model)
                message = await simulated_message(model, user, self.history, self.turns)
            except UserFailure as exc:
                raise self._failure(f"turn {self.turns}: {exc}") from None
            ms = (time.perf_counter() - start) * 1000.0
        if message is None:
            return False
        self.history.append(Step(kind="user", content=message, latency_ms=ms))
        return True

    async def _agent_answers(self) -> StopReason | None:
        """Call the agent on the conversation so far; the stop reason if it ended it."""
        inner = self.owner.inner
        request = TargetRequest(
            self.request.case, self.request.repeat, tuple(self.history), self.turns
        )
        start = time.perf_counter()
        try:
            ran = await inner.run(request)
        except asyncio.CancelledError:
            raise
        except AgentFailure as exc:
            raise self._failure(f"turn {self.turns}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - a target's own bug: its case's error
            raise self._failure(
                f"turn {self.turns}: {inner.kind} target failed: {error_text(exc)}"
            ) from None
        if not isinstance(ran, AgentRun):
            raise self._failure(
                f"turn {self.turns}: {inner.kind} target gave {type(ran).__name__}, not an AgentRun"
            )
        ms = (time.perf_counter() - start) * 1000.0
        try:
            ran = storable(ran)  # the next turn's request carries it
        except AgentFailure as exc:
            raise self._failure(f"turn {self.turns}: {exc}") from None
        self.turns += 1
        self.history += _with_turn_time(ran.trace, ms)
        self.state = ran.final_state
        self._add_usage(ran.usage)
        if any(s.kind == "tool_call" and s.name in TRANSFER_TOOLS for s in ran.trace):
            return "transferred"
        signal = ran.final_state.get("conversation")
        return AGENT_SIGNALS.get(signal) if isinstance(signal, str) else None

    def _add_usage(self, usage: AgentUsage | None) -> None:
        if usage is None:
            return
        if self.usage is None:
            self.usage = usage
            return
        self.usage = AgentUsage(
            input_tokens=_plus(self.usage.input_tokens, usage.input_tokens),
            output_tokens=_plus(self.usage.output_tokens, usage.output_tokens),
            cost_usd=_plus(self.usage.cost_usd, usage.cost_usd),
        )

    def _failure(self, reason: str) -> ConversationFailure:
        record = {"stop_reason": "agent_error", "turns": self.turns}
        kept = self.request.case.model_copy(
            update={
                "trace": list(self.history),
                "final_state": {**self.state, "conversation": record},
            }
        )
        return ConversationFailure(reason, kept)


def _with_turn_time(steps: list[Step], ms: float) -> list[Step]:
    """The turn's steps; when none says how long it took, the last one carries the turn's wall
    time, so the trace shows each turn's latency."""
    if not steps or any(s.latency_ms is not None for s in steps):
        return steps
    return [*steps[:-1], steps[-1].model_copy(update={"latency_ms": ms})]


def _plus(a: Any, b: Any) -> Any:
    """Summed, where either side is known."""
    if a is None:
        return b
    return a if b is None else a + b
