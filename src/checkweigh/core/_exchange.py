"""What a judge was asked and what it answered, kept with the verdict it decided."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class ExchangeMessage(BaseModel):
    """One message sent to the judge."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    """Who speaks."""
    content: str
    """What is said (agent text inside it is data, delimited by the formatter)."""


class JudgeExchange(BaseModel):
    """One call to a judge on behalf of one check of one case: the prompt, the reply and its
    accounting. A check that asked several times (samples, a repair) has several."""

    model_config = ConfigDict(frozen=True)

    check: str
    """The check (or named verdict group) that asked."""
    model: str
    """The model that answered (as its provider named it)."""
    messages: tuple[ExchangeMessage, ...]
    """The prompt, system message first."""
    reply: str
    """The reply text, exactly as received."""
    input_tokens: int = 0
    """Tokens read."""
    output_tokens: int = 0
    """Tokens written."""
    cached_input_tokens: int = 0
    """Of ``input_tokens``, those read from the provider's prompt cache."""
    cache_write_tokens: int = 0
    """Of ``input_tokens``, those written to the provider's prompt cache."""
    latency_ms: float = 0.0
    """How long the call took (0 when it came from the cache)."""
    cached: bool = False
    """Answered from the judge cache, not by the model."""
    error: str | None = None
    """Why the call failed for good (then ``reply`` is empty and the verdict errored)."""
