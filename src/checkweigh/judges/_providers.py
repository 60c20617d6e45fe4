"""The built-in judge providers, each a factory of the :class:`JudgeProvider` shape.

``openai:MODEL`` uses the OpenAI-compatible API (the SDK reads ``OPENAI_API_KEY`` and
``OPENAI_BASE_URL``: OpenAI, Azure, vLLM, llama.cpp, LM Studio); ``anthropic:MODEL`` uses
Anthropic's Messages API (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``); ``ollama:MODEL`` uses
Ollama's OpenAI-compatible endpoint (``OLLAMA_BASE_URL``, default localhost:11434).
"""

from __future__ import annotations

import os
from typing import Protocol, runtime_checkable

from ._anthropic import AnthropicJudge
from ._model import JudgeModel
from ._openai import OLLAMA_BASE_URL, OpenAIJudge
from ._options import JudgeOptions

REPLAY_KEY = "replay-without-key"
"""The API key a client is built with when replaying without one: never sent, since replay
answers from the cache only."""


@runtime_checkable
class JudgeProvider(Protocol):
    """What ``PROVIDER`` in ``--judge PROVIDER:MODEL`` names: a factory (a function, or a
    class whose instances are judges) of the judge for one model.

    A plugin registers one in the ``checkweigh.providers`` entry-point group; the entry's name
    is the ``PROVIDER`` a user writes.
    """

    def __call__(self, model: str, options: JudgeOptions, offline: bool) -> JudgeModel:
        """The judge of ``model`` (the string after ``PROVIDER:``).

        Args:
            model: the model's name, as the user wrote it.
            options: timeouts, retries, deadline and output format (defaults unless the
                suite's ``judge:`` block or the ``--judge-*`` flags set them).
            offline: the run replays answers from the cache and makes no call: build the
                client without requiring credentials.

        Raises:
            JudgeError: the judge cannot be built (no API key, SDK not installed); the
                message is shown as the ``--judge`` flag's error.
        """
        ...


def openai(model: str, options: JudgeOptions, offline: bool) -> JudgeModel:
    """A judge over the OpenAI-compatible chat-completions API."""
    key = REPLAY_KEY if offline and not os.environ.get("OPENAI_API_KEY") else None
    return OpenAIJudge(
        model,
        api_key=key,
        timeout_s=options.timeout_s,
        retry=options.retry_policy(),
        format=options.format,
    )


def anthropic(model: str, options: JudgeOptions, offline: bool) -> JudgeModel:
    """A judge over Anthropic's Messages API."""
    key = REPLAY_KEY if offline and not os.environ.get("ANTHROPIC_API_KEY") else None
    return AnthropicJudge(
        model,
        api_key=key,
        timeout_s=options.timeout_s,
        retry=options.retry_policy(),
        format=options.format,
    )


def ollama(model: str, options: JudgeOptions, offline: bool) -> JudgeModel:
    """A judge served by Ollama's OpenAI-compatible endpoint (no key needed)."""
    return OpenAIJudge(
        model,
        provider="ollama",
        base_url=os.environ.get("OLLAMA_BASE_URL") or OLLAMA_BASE_URL,
        api_key="ollama",  # Ollama ignores it; the SDK wants one
        timeout_s=options.timeout_s,
        retry=options.retry_policy(),
        format=options.format,
    )
