"""Judges named by a model string.

``anthropic:MODEL`` uses Anthropic's Messages API (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``);
``openai:MODEL`` uses the OpenAI-compatible API (the SDK reads ``OPENAI_API_KEY`` and
``OPENAI_BASE_URL``: OpenAI, Azure, vLLM, llama.cpp, LM Studio); ``ollama:MODEL`` uses
Ollama's OpenAI-compatible endpoint (``OLLAMA_BASE_URL``, default localhost:11434).
"""

from __future__ import annotations

import os

from ..errors import InputError
from ._anthropic import AnthropicJudge
from ._model import JudgeError, JudgeModel
from ._openai import OLLAMA_BASE_URL, OpenAIJudge
from ._options import JudgeOptions

PROVIDERS = ("openai", "anthropic", "ollama")


def parse_judge(spec: str) -> tuple[str, str]:
    """``provider:model`` split in two.

    Raises:
        InputError: not of that form, or an unknown provider.
    """
    provider, sep, model = spec.partition(":")
    if not sep or not model or provider not in PROVIDERS:
        raise InputError(
            f"expected PROVIDER:MODEL with PROVIDER one of {', '.join(PROVIDERS)}, got {spec!r}",
            field="--judge",
        )
    return provider, model


def make_judge(
    spec: str,
    *,
    options: JudgeOptions | None = None,
    offline: bool = False,
) -> JudgeModel:
    """The judge a model string names, configured from the environment and ``options``
    (timeouts, retries, deadline, output format; defaults when None).

    ``offline`` (replay from the cache) builds the client without requiring an API key, since
    no call will be made. Nothing here needs a network or a real key: a local server works
    with ``OPENAI_BASE_URL=http://127.0.0.1:PORT/v1`` and any ``OPENAI_API_KEY``.

    Raises:
        InputError: a malformed string, an unknown provider, or a client that cannot be
            built (no API key, SDK not installed).
    """
    provider, model = parse_judge(spec)
    options = options or JudgeOptions()
    timeout_s, retry, fmt = options.timeout_s, options.retry_policy(), options.format
    try:
        if provider == "ollama":
            base = os.environ.get("OLLAMA_BASE_URL") or OLLAMA_BASE_URL
            return OpenAIJudge(
                model,
                provider="ollama",
                base_url=base,
                api_key="ollama",  # Ollama ignores it; the SDK wants one
                timeout_s=timeout_s,
                retry=retry,
                format=fmt,
            )
        if provider == "anthropic":
            anthropic_key = None
            if offline and not os.environ.get("ANTHROPIC_API_KEY"):
                anthropic_key = "replay-without-key"  # never sent, as for openai below
            return AnthropicJudge(
                model, api_key=anthropic_key, timeout_s=timeout_s, retry=retry, format=fmt
            )
        key = None
        if offline and not os.environ.get("OPENAI_API_KEY"):
            key = "replay-without-key"  # never sent: replay answers from the cache only
        return OpenAIJudge(model, api_key=key, timeout_s=timeout_s, retry=retry, format=fmt)
    except JudgeError as exc:
        raise InputError(str(exc), field="--judge") from None
