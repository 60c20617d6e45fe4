"""The case under evaluation: its input, trace, final state and ground truth."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import from_json

from ._conversation import Turn, UserSpec, last_reply, turns_of

StepKind = Literal["user", "assistant", "tool_call", "system", "event"]


def parsed_arguments(text: str) -> dict[str, Any] | str:
    """Arguments given as JSON text (as OpenAI logs them), parsed; text that is not a JSON
    object stays as given. Only text reaches this validator: an object (the common case) is
    taken as it is, without a call into Python for each step."""
    try:
        parsed = from_json(text)
    except ValueError:
        return text
    return parsed if isinstance(parsed, dict) else text


class Step(BaseModel):
    """One step of an agent's trace, in the order it happened."""

    # field docstrings become descriptions in `checkweigh schema case`
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    kind: StepKind
    """What the step is: a user or assistant message, a tool call, a system note or an event."""
    content: str | None = None
    """The message text (for user, assistant and system steps)."""
    name: str | None = None
    """The tool's name for a tool call, or the event's name for an event."""
    arguments: dict[str, Any] | Annotated[str, AfterValidator(parsed_arguments)] | None = None
    """The arguments the tool was called with: an object. Given as JSON text (as OpenAI logs
    them), the text is parsed; text that is not a JSON object stays a string, which marks it
    as unparsed (see :attr:`arguments_parsed`)."""
    result: Any = None
    """What the tool returned."""
    error: str | None = None
    """The error a tool call or event raised, if any."""
    id: str | None = None
    """The step's id in its source: a tool call's id, or a span's id."""
    parent_id: str | None = None
    """The id of the step (span) this one ran inside, e.g. a sub-agent's tool call."""
    attributes: dict[str, Any] = Field(default_factory=dict)
    """Data the source carried about the step: ``model``, ``input_tokens``,
    ``output_tokens``, ``cost_usd`` by those names where known, and anything else as given."""
    timestamp: datetime | None = None
    """When the step started, where known."""
    # a NaN would be stored as NULL by SQLite and break the run's summary after the run
    latency_ms: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """How long the step took, in milliseconds, where known."""

    @property
    def arguments_parsed(self) -> bool:
        """False when the arguments were text that is not a JSON object (kept as given)."""
        return not isinstance(self.arguments, str)

    @property
    def label(self) -> str:
        """The name trajectory predicates match on: the tool or event name, else the kind."""
        return self.name if self.name is not None else self.kind


class Case(BaseModel):
    """One scenario: what the agent was asked, what it did and what it should have done."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    id: str = Field(min_length=1)
    """A stable identifier, unique within a suite; runs are compared case by case on it."""
    input: Any = None
    """What the agent was asked: a string or any JSON value."""
    trace: list[Step] = Field(default_factory=list)
    """The ordered steps of the agent's run."""
    final_state: dict[str, Any] = Field(default_factory=dict)
    """The agent's state when it stopped."""
    ground_truth: Any = None
    """The reference: what a correct run ends with."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form tags (scenario kind, source, ...)."""
    latency_ms: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """How long the agent took on this case, where known."""
    user: UserSpec | None = None
    """For a multi-turn case: who plays the user, scripted (``{turns: [...]}``) or simulated
    by an LLM (``{goal, persona, model, max_turns}``). The target is then called once per turn
    with the conversation so far (see docs/conversations.md)."""
    error: str | None = None
    """Why the recorded run failed, when its log shows it did (the model's API answered with
    an error, say): the case is reported errored, with this text, and not scored. A target
    that runs the case again replaces it."""

    @property
    def turns(self) -> list[Turn]:
        """The trace read as a conversation: one :class:`Turn` per user message, with the
        agent's steps up to the next one (``turns[1].output`` in a field path)."""
        return turns_of(self.trace)

    @property
    def output(self) -> str:
        """The agent's final answer: the content of the last assistant message, or ''."""
        return last_reply(self.trace)

    def total_latency_ms(self) -> float | None:
        """The case's latency: recorded on the case, else summed over the trace's steps."""
        latency: float | None = self.__dict__["latency_ms"]  # the hot path: skip descriptors
        if latency is not None:
            return latency
        known = [s.latency_ms for s in self.trace if s.latency_ms is not None]
        if known:
            return float(sum(known))
        stamps = [s.timestamp for s in self.trace if s.timestamp is not None]
        if len(stamps) >= 2:
            return (max(stamps) - min(stamps)).total_seconds() * 1000.0
        return None
