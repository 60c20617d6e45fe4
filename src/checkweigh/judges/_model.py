"""What a judge is: a model that takes chat messages and returns text, named and explicit.

Checks receive their judge as an argument; there is no default or global judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from ..errors import CheckweighError


class Message(BaseModel):
    """One chat message sent to a judge."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["system", "user", "assistant"]
    """Who speaks."""
    content: str
    """What is said."""


class JudgeRequest(BaseModel):
    """One call to a judge: the messages and, where the provider supports it, an output schema."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: tuple[Message, ...]
    """The conversation, system message first."""
    schema_name: str = "answer"
    """A name for the expected output shape (providers with structured output use it)."""
    json_schema: dict[str, Any] | None = None
    """The JSON schema the answer must satisfy, for providers with structured output."""
    max_tokens: int = Field(default=512, ge=1)
    """Upper bound on the answer's length."""
    temperature: float = Field(default=0.0, ge=0.0)
    """Sampling temperature; 0 for the steadiest verdicts."""
    tags: dict[str, str] = Field(default_factory=dict)
    """What produced the prompt (e.g. the formatter's ``name@version``): part of the cache
    key, never sent to the provider."""
    shared_prefix: int = Field(default=0, ge=0, exclude=True)
    """How many characters at the start of the first user message are the same for every
    case (the instructions, rubric and examples before the case): with the system message,
    the prompt prefix a provider can cache. How the prompt is sent, not what it says: left
    out of the dump, so of the judge cache's key too."""

    def shared_text(self) -> str:
        """The first user message's shared start (``""`` when none is marked)."""
        user = next((m.content for m in self.messages if m.role == "user"), "")
        return user[: self.shared_prefix]


def joined(parts: Sequence[str], shared: int) -> tuple[str, int]:
    """``parts`` joined by blank lines, and the length of the first ``shared`` parts with the
    blank line after them: the user message and its :attr:`JudgeRequest.shared_prefix`."""
    text = "\n\n".join(parts)
    head = "\n\n".join(parts[:shared])
    return text, len(head) + 2 if shared else 0


class JudgeReply(BaseModel):
    """A judge's raw answer with its accounting."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    """The answer text (parsed by the caller, never trusted blindly)."""
    model: str
    """The model that answered."""
    input_tokens: int = 0
    """Tokens read, all of them: the prompt-cached ones included."""
    output_tokens: int = 0
    """Tokens written."""
    cached_input_tokens: int = 0
    """Of ``input_tokens``, those read from the provider's prompt cache (billed at a
    discount): OpenAI's ``cached_tokens``, Anthropic's ``cache_read_input_tokens``."""
    cache_write_tokens: int = 0
    """Of ``input_tokens``, those written to the provider's prompt cache (Anthropic's
    ``cache_creation_input_tokens``, billed above the input price)."""
    latency_ms: float = 0.0
    """Time the call took."""
    cached: bool = False
    """Answered from the judge cache (never stored in the cache itself)."""


class JudgeError(CheckweighError):
    """A judge call that failed for good (after any retries): the verdict becomes errored."""


@runtime_checkable
class JudgeModel(Protocol):
    """A model that can be asked a question. ``name`` is ``provider:model``."""

    @property
    def name(self) -> str:
        """``provider:model``, e.g. ``openai:gpt-4o-mini``."""
        ...

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """Answer ``request``.

        Raises:
            JudgeError: the call failed for good.
        """
        ...
