"""The target seam: what the engine asks of any agent, wherever it runs.

A :class:`Target` answers one :class:`TargetRequest` (a case, which try it is, and for a
conversation the history so far) with an :class:`AgentRun`. It raises :class:`AgentFailure`
with a one-line reason when the agent cannot give one; the engine turns that into an errored
case and goes on. The engine applies the per-case time limit and measures the wall time, so a
target only has to clean up when it is cancelled (kill its process, drop its request).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, NonNegativeInt

from ...core import Case, Step
from ...errors import CheckweighError


class AgentUsage(BaseModel):
    """What the agent consumed for one call, when it says (else read from the trace's steps)."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: NonNegativeInt | None = None
    output_tokens: NonNegativeInt | None = None
    cost_usd: NonNegativeFloat | None = None


class AgentRun(BaseModel):
    """What an agent returns for one input: its trace and final state."""

    model_config = ConfigDict(extra="forbid")

    trace: list[Step] = Field(default_factory=list)
    """The ordered steps it took (for a conversation turn: the steps of this turn)."""
    final_state: dict[str, Any] = Field(default_factory=dict)
    """Its state when it stopped."""
    usage: AgentUsage | None = None
    """Tokens and cost of the call, when the agent reports them outside its steps."""
    latency_ms: float | None = None
    """The agent's own wall time, when known: a replay gives the recorded one (else the
    engine measures the call)."""


class AgentFailure(CheckweighError):
    """The agent raised, timed out or returned something unusable; the text says which."""


@dataclass(frozen=True, slots=True)
class TargetRequest:
    """One call of a target."""

    case: Case
    """The case being run (its input, metadata and, for conversations, its user)."""
    repeat: int = 0
    """Which try of the case this is (from 0), so a recording can tell tries apart."""
    history: tuple[Step, ...] = ()
    """For a conversation: every step so far, ending with the user's newest message. Empty
    for a single call, which gets ``case.input``."""
    turn: int = 0
    """For a conversation: the user turn being answered (from 0)."""

    @property
    def conversational(self) -> bool:
        """Whether this is a turn of a conversation (then ``history`` is the input)."""
        return bool(self.history)


@runtime_checkable
class Target(Protocol):
    """An agent the engine can drive: a Python callable, an HTTP endpoint, a program, ..."""

    kind: str
    """``python``, ``http``, ``command``, ...: named in messages and recordings."""

    async def run(self, request: TargetRequest) -> AgentRun:
        """The agent's answer to ``request``.

        Raises:
            AgentFailure: with a one-line reason, for anything that gives no usable answer.
        """
        ...

    async def aclose(self) -> None:
        """Release connections and processes; called once, inside the run's event loop."""
        ...


def history_messages(history: tuple[Step, ...] | list[Step]) -> list[dict[str, Any]]:
    """A conversation's steps as chat messages (``role``, ``content``; tool calls and results
    in the OpenAI shape), the form sent to agents outside Python."""
    messages: list[dict[str, Any]] = []
    for step in history:
        if step.kind == "user":
            messages.append({"role": "user", "content": step.content})
        elif step.kind == "assistant":
            messages.append({"role": "assistant", "content": step.content})
        elif step.kind == "tool_call":
            call_id = step.id or f"call_{len(messages)}"
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": step.name, "arguments": _json(step.arguments)},
                        }
                    ],
                }
            )
            if step.result is not None or step.error is not None:
                content = step.error if step.error is not None else step.result
                messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
        elif step.kind == "system":
            messages.append({"role": "system", "content": step.content})
    return messages


def _json(arguments: dict[str, Any] | str | None) -> str:
    """OpenAI sends a call's arguments as JSON text."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)


def request_payload(request: TargetRequest) -> dict[str, Any]:
    """The JSON an out-of-process agent is sent: the case's id, input and metadata, which try
    of the case it is (``repeat``, from 0), and for a conversation the messages so far and the
    turn (from 0)."""
    case = request.case
    payload: dict[str, Any] = {
        "id": case.id,
        "input": case.input,
        "metadata": case.metadata,
        "repeat": request.repeat,
    }
    if request.conversational:
        payload["messages"] = history_messages(request.history)
        payload["turn"] = request.turn
    return payload
