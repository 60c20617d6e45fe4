"""Conversations: who plays the user of a multi-turn case, and the trace read turn by turn.

A case with a ``user`` is a conversation: the user speaks (from a script, or simulated by an
LLM given a goal and a persona), the agent answers, and so on. The trace keeps every step in
order, each user message as a ``user`` step; :func:`turns_of` reads it back as turns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
)

if TYPE_CHECKING:
    from ._case import Step

MAX_TURNS_LIMIT = 1000
"""The most turns any conversation may be given (a runaway simulator stops well before)."""


class ScriptedUser(BaseModel):
    """A user who says the same messages, in order, whatever the agent answers."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    turns: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)
    """The user's messages, one per turn, the first one opening the conversation."""
    max_turns: int | None = Field(default=None, ge=1, le=MAX_TURNS_LIMIT)
    """Stop after this many turns even if the script goes on (default: the whole script)."""

    @property
    def kind(self) -> Literal["scripted"]:
        """``scripted``."""
        return "scripted"


class SimulatedUser(BaseModel):
    """A user played by an LLM that pursues ``goal`` in the manner of ``persona``."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    goal: str = Field(min_length=1)
    """What the user wants from the agent; the simulator says it is done once it has it (or
    sees that it will not get it)."""
    persona: str = ""
    """Who the user is and how they speak (terse, confused, impatient, ...)."""
    model: str | None = None
    """``provider:model`` that plays the user, as ``--judge`` names one (default: the run's
    judge)."""
    max_turns: int | None = Field(default=None, ge=1, le=MAX_TURNS_LIMIT)
    """The most user turns (default: the suite target's ``max_turns``)."""

    @field_validator("model")
    @classmethod
    def _provider_model(cls, value: str | None) -> str | None:
        provider, sep, model = (value or "").partition(":")
        if value is not None and not (sep and provider and model.strip()):
            raise ValueError(f"expected 'provider:model', e.g. openai:gpt-4o-mini; got {value!r}")
        return value

    @property
    def kind(self) -> Literal["simulated"]:
        """``simulated``."""
        return "simulated"


def _user_kind(value: Any) -> str | None:
    if isinstance(value, dict):
        if "turns" in value:
            return "scripted"
        return "simulated" if "goal" in value else None
    return getattr(value, "kind", None)


def _one_kind(value: Any) -> Any:
    # the discriminator would pick the script and call 'goal' an unknown key: say the rule
    if isinstance(value, dict) and "turns" in value and "goal" in value:
        raise ValueError(
            "'turns' (a scripted user) and 'goal' (a simulated user) cannot both be given; keep one"
        )
    return value


UserSpec = Annotated[
    Annotated[
        Annotated[ScriptedUser, Tag("scripted")] | Annotated[SimulatedUser, Tag("simulated")],
        Discriminator(
            _user_kind,
            custom_error_type="user_kind",
            custom_error_message=(
                "expected 'turns' (a scripted user) or 'goal' (a simulated user, with persona)"
            ),
        ),
    ],
    BeforeValidator(_one_kind),
]
"""A case's ``user:`` block: scripted (``turns``) or simulated (``goal``, ``persona``)."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a conversation: the user's message and what the agent did in reply.

    Read in field paths as ``turns[1].output`` (the agent's last reply of the second turn),
    ``turns[-1].user``, ``turns[0].trace[kind=tool_call].name``.
    """

    index: int
    """The turn's number, from 0."""
    user: str
    """What the user said."""
    trace: list[Step]
    """The agent's steps in reply (the user's step not included)."""

    @property
    def output(self) -> str:
        """The agent's last reply in this turn: the last assistant message, or ''."""
        return last_reply(self.trace)

    @property
    def latency_ms(self) -> float | None:
        """The agent's time on this turn: its steps' latencies summed, where known."""
        known = [s.latency_ms for s in self.trace if s.latency_ms is not None]
        return float(sum(known)) if known else None


WITH_TOOL_CALLS = "tool_calls"
"""The attribute that marks assistant text sent together with tool calls (how many): a
preamble to the calls, not a reply (tau-bench, for one, never shows it the user)."""


def last_reply(trace: list[Step]) -> str:
    """The content of the last assistant message of ``trace`` that is a reply (not text sent
    together with tool calls: see :data:`WITH_TOOL_CALLS`), or ''."""
    for step in reversed(trace):
        if (
            step.kind == "assistant"
            and step.content is not None
            and not step.attributes.get(WITH_TOOL_CALLS)
        ):
            return step.content
    return ""


def turns_of(trace: list[Step]) -> list[Turn]:
    """``trace`` cut at each user message: turn i is the i-th user message and the steps up to
    the next one. Steps before the first user message (a system prompt) belong to no turn."""
    turns: list[Turn] = []
    user: str | None = None
    steps: list[Step] = []
    for step in trace:
        if step.kind == "user":
            if user is not None:
                turns.append(Turn(len(turns), user, steps))
            user, steps = step.content or "", []
        elif user is not None:
            steps.append(step)
    if user is not None:
        turns.append(Turn(len(turns), user, steps))
    return turns
