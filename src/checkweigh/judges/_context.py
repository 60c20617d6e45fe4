"""The judge model's context window: a prompt that cannot fit is never sent.

A prompt's size is counted before the call: with ``tiktoken`` (``o200k_base``) when it is
installed and its encoding loads, else estimated as one token per 4 characters, rounded up
(close for English and JSON, and on the safe side for most tokenizers' code and prose). A
prompt over the model's input limit ends its verdict errored with the reason
``context: N tokens over the limit of M``; it is never read as a failed answer.

The limit is the suite's ``judge: {max_input_tokens: ...}`` when given, else a known default for
common models (:data:`KNOWN_LIMITS`), else none.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from functools import cache

from ._model import JudgeError, JudgeRequest

KNOWN_LIMITS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-5", 272_000),
    ("o1-mini", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("claude-", 200_000),
)
"""Input limits of common models by name prefix (the first that matches), as their providers
publish them; the output share is left to the provider. A model not listed has no limit unless
the suite sets ``max_input_tokens``: a local server's window (Ollama, llama.cpp) is its own
setting, not the model's, so local models are not guessed at (a server that refuses a prompt
too long for its window makes the verdict errored all the same)."""

PER_MESSAGE_TOKENS = 4
"""Tokens a chat format adds around each message (role and separators), plus 3 for the reply's
priming, as OpenAI counts them."""


def known_limit(judge_name: str) -> int | None:
    """The known input limit of the judge ``provider:model`` (``ollama:llama3.2`` reads the
    model part), None when it is not known."""
    model = judge_name.partition(":")[2] or judge_name
    model = model.rsplit("/", 1)[-1].lower()  # "meta-llama/Llama-3.1-8B" -> the model
    for prefix, limit in KNOWN_LIMITS:
        if model.startswith(prefix):
            return limit
    return None


@cache
def _encoder() -> Callable[[str], int] | None:
    try:
        tiktoken = importlib.import_module("tiktoken")
        encoding = tiktoken.get_encoding("o200k_base")
    except (ImportError, OSError, ValueError):  # not installed, or its file not fetched
        return None
    return lambda text: len(encoding.encode(text, disallowed_special=()))


def count_tokens(request: JudgeRequest) -> int:
    """The prompt tokens of ``request``: its messages' text and their framing."""
    encode = _encoder()
    total = 3
    for message in request.messages:
        text = message.content
        total += PER_MESSAGE_TOKENS + (encode(text) if encode else math.ceil(len(text) / 4))
    return total


class ContextLimitError(JudgeError):
    """A prompt over the judge's input limit: not sent, its verdict errored."""

    def __init__(self, tokens: int, limit: int) -> None:
        super().__init__(f"context: {tokens - limit} tokens over the limit of {limit}")
        self.tokens = tokens
        self.limit = limit


def input_limit(judge: object) -> int | None:
    """The input limit of ``judge`` or of the judge it wraps (a cache, a meter)."""
    seen = 0
    while judge is not None and seen < 8:  # wrappers nest a few deep at most
        limit = getattr(judge, "max_input_tokens", None)
        if isinstance(limit, int):
            return limit
        judge = getattr(judge, "judge", None)
        seen += 1
    return None


def check_context(judge: object, request: JudgeRequest) -> None:
    """Raise :class:`ContextLimitError` when ``request`` cannot fit ``judge``'s input limit."""
    limit = input_limit(judge)
    if limit is None:
        return
    tokens = count_tokens(request)
    if tokens > limit:
        raise ContextLimitError(tokens, limit)
