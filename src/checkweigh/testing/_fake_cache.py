"""The fake provider's prompt cache: usage that reports cached tokens as OpenAI and Anthropic
do, so a judge's accounting and a run's prompt-cache figures can be tested end to end.

Tokens are estimated as one per 4 characters, rounded up (the estimate checkweigh's context
check uses without ``tiktoken``). A prompt under :data:`MIN_TOKENS` keeps the fixed usage the
fake has always sent; a longer one is counted by the estimate, cached or not, so runs with the
cache on and off are counted alike.

- OpenAI wire: caching is automatic. A prompt whose first 1,024 tokens or more were seen
  before (same model; the ``response_format`` and ``tools`` come first, then the messages)
  reports ``prompt_tokens_details.cached_tokens``: the longest such prefix, in steps of 128
  tokens from 1,024.
- Anthropic wire: only what a ``cache_control`` mark closes is cached (tools, then system,
  then the messages' blocks, in that order). A marked prefix of 1,024 tokens or more seen
  before reports ``cache_read_input_tokens``; the first time, ``cache_creation_input_tokens``.
  ``input_tokens`` is what is left, as the real API counts it.

Entries never expire (the real caches keep a prefix for minutes after its last use, which a
test or a benchmark never outlasts).
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from typing import Any

MIN_TOKENS = 1024
"""The shortest prefix either provider caches."""
STEP_TOKENS = 128
"""OpenAI reports cached tokens in steps of this many (from :data:`MIN_TOKENS`)."""
CHARS_PER_TOKEN = 4


def tokens_of(chars: int) -> int:
    """The estimated tokens of ``chars`` characters."""
    return math.ceil(chars / CHARS_PER_TOKEN)


def _text(content: Any) -> str:
    """A message's or block list's text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text(part) for part in content)
    if isinstance(content, dict):
        return str(content.get("text") or "")
    return ""


def _prefix_digests(text: str, ends: list[int], salt: str) -> list[str]:
    """The digest of ``text[:end]`` for each of the increasing ``ends`` (one pass)."""
    digest = hashlib.sha256(salt.encode())
    done = 0
    found = []
    for end in ends:
        digest.update(text[done:end].encode("utf-8", "surrogatepass"))
        done = end
        found.append(digest.copy().hexdigest())
    return found


class FakePromptCache:
    """The prefixes seen so far, and the usage they give. ``enabled=False`` counts tokens the
    same way but never reports a cached one (caching off)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def usage(self, wire: str, body: dict[str, Any], fixed: dict[str, Any]) -> dict[str, Any]:
        """The usage object for ``body``'s answer (``fixed``: the fake's usual one)."""
        if wire == "anthropic":
            return self._anthropic(body, fixed)
        return self._openai(body, fixed)

    def _remember(self, digests: list[str]) -> None:
        if self.enabled:
            self._seen.update(digests)

    def _openai(self, body: dict[str, Any], fixed: dict[str, Any]) -> dict[str, Any]:
        head = json.dumps([body.get("response_format"), body.get("tools")], sort_keys=True)
        messages = body.get("messages") or []
        text = head + "".join(
            f"\n{m.get('role')}\n{_text(m.get('content'))}" for m in messages if isinstance(m, dict)
        )
        total = tokens_of(len(text))
        if total < MIN_TOKENS:
            return {**fixed, "prompt_tokens_details": {"cached_tokens": 0}}
        steps = list(range(MIN_TOKENS, total + 1, STEP_TOKENS))
        digests = _prefix_digests(
            text, [t * CHARS_PER_TOKEN for t in steps], str(body.get("model"))
        )
        with self._lock:
            hits = [t for t, d in zip(steps, digests, strict=True) if d in self._seen]
            self._remember(digests)
        cached = hits[-1] if hits else 0
        out = int(fixed.get("completion_tokens") or 0)
        return {
            "prompt_tokens": total,
            "completion_tokens": out,
            "total_tokens": total + out,
            "prompt_tokens_details": {"cached_tokens": cached},
        }

    def _anthropic(self, body: dict[str, Any], fixed: dict[str, Any]) -> dict[str, Any]:
        parts: list[str] = []
        marks: list[int] = []  # where each cache_control mark closes the prefix

        def add(content: Any) -> None:
            blocks = content if isinstance(content, list) else [content]
            for block in blocks:
                parts.append(_text(block) if not isinstance(block, dict) else _block(block))
                if isinstance(block, dict) and block.get("cache_control"):
                    marks.append(sum(len(p) for p in parts))

        for tool in body.get("tools") or []:
            add(tool)
        add(body.get("system") or "")
        for message in body.get("messages") or []:
            if isinstance(message, dict):
                add(message.get("content") or "")
        text = "".join(parts)
        total = tokens_of(len(text))
        eligible = sorted(end for end in marks if tokens_of(end) >= MIN_TOKENS)
        none = {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        if total < MIN_TOKENS:
            return {**fixed, **none}
        if not eligible:  # nothing marked: nothing cached, however often it is sent
            return {**fixed, **none, "input_tokens": total}
        digests = _prefix_digests(text, eligible, str(body.get("model")))
        with self._lock:
            hits = [end for end, d in zip(eligible, digests, strict=True) if d in self._seen]
            self._remember(digests)
        read = tokens_of(hits[-1]) if hits and self.enabled else 0
        written = tokens_of(eligible[-1]) - read if self.enabled else 0
        return {
            "input_tokens": total - read - written,
            "output_tokens": int(fixed.get("output_tokens") or 0),
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
        }


def _block(block: dict[str, Any]) -> str:
    """A content block's text, or a tool definition as JSON (what it costs in the prompt)."""
    if "text" in block or block.get("type") == "text":
        return str(block.get("text") or "")
    return json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True)
