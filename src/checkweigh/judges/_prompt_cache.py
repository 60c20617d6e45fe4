"""Provider prompt caching: marking the prompt's shared prefix, reading the cached-token
counts from usage, and pricing them.

Every judge prompt puts what repeats from case to case (the system message, the question,
rubric, metrics and examples) before the case, so a provider can serve that prefix from its
prompt cache. OpenAI caches a prefix of 1,024 tokens or more by itself; Anthropic caches what
the request marks with ``cache_control``. This is the *prompt* cache, billed at a discount by
the provider, not checkweigh's judge answer cache (``cache_hits``), whose answers cost nothing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ._model import JudgeRequest
from ._sdk import token_count

if TYPE_CHECKING:
    from ._metered import Prices

EPHEMERAL = {"type": "ephemeral"}
"""Anthropic's cache mark (a 5-minute cache, refreshed by each hit)."""

ANTHROPIC_READ = 0.1
"""Anthropic bills a cache read at 0.1x the input price."""
ANTHROPIC_WRITE = 1.25
"""Anthropic bills a (5-minute) cache write at 1.25x the input price."""
OPENAI_CACHED = 0.5
"""OpenAI's cached input is at least half off (0.25x-0.5x by model): 0.5x is the safe side."""


def cache_marked(request: JudgeRequest) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The Messages API's ``system`` blocks and ``messages`` for ``request``, with
    ``cache_control`` on the last block of what repeats from case to case: the first user
    message's shared start when the request marks one, else the system message.

    The blocks' texts joined are the messages' texts: the model reads the same prompt.
    """
    system_text = "\n\n".join(m.content for m in request.messages if m.role == "system")
    system: list[dict[str, Any]] = [{"type": "text", "text": system_text}] if system_text else []
    messages: list[dict[str, Any]] = []
    marked = False
    for m in request.messages:
        if m.role == "system":
            continue
        head = m.content[: request.shared_prefix]
        if m.role == "user" and not marked and head:
            rest = m.content[len(head) :]
            blocks: list[dict[str, Any]] = [
                {"type": "text", "text": head, "cache_control": EPHEMERAL}
            ]
            if rest:  # the API refuses an empty text block
                blocks.append({"type": "text", "text": rest})
            messages.append({"role": m.role, "content": blocks})
            marked = True
        else:
            messages.append({"role": m.role, "content": m.content})
    if not marked and system:
        system[-1]["cache_control"] = EPHEMERAL
    return system, messages


def openai_usage(usage: dict[str, Any]) -> dict[str, int]:
    """``input_tokens``, ``cached_input_tokens`` and ``cache_write_tokens`` from an OpenAI
    ``usage`` object, where ``prompt_tokens`` counts the cached ones too (read leniently:
    junk counts as 0, and the parts never exceed the whole)."""
    total = token_count(usage.get("prompt_tokens"))
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    cached = min(token_count(details.get("cached_tokens")), total)
    # some OpenAI-compatible gateways in front of other providers report writes too
    written = min(token_count(details.get("cache_write_tokens")), total - cached)
    return {"input_tokens": total, "cached_input_tokens": cached, "cache_write_tokens": written}


def anthropic_usage(usage: object) -> dict[str, int]:
    """The same three counts from an Anthropic ``usage``, whose ``input_tokens`` leaves out
    the tokens read from and written to the cache: the total input is all three."""
    uncached = token_count(getattr(usage, "input_tokens", None))
    read = token_count(getattr(usage, "cache_read_input_tokens", None))
    written = token_count(getattr(usage, "cache_creation_input_tokens", None))
    return {
        "input_tokens": uncached + read + written,
        "cached_input_tokens": read,
        "cache_write_tokens": written,
    }


def with_cache_rates(prices: Prices, judge: str) -> Prices:
    """``prices`` with the prompt cache's rates filled in for the judge ``provider:model``
    where they were not given, and a note that says which were assumed."""
    anthropic = judge.partition(":")[0] == "anthropic"
    read = ANTHROPIC_READ if anthropic else OPENAI_CACHED
    write = ANTHROPIC_WRITE if anthropic else 1.0
    who = "Anthropic's" if anthropic else "OpenAI's"
    assumed = []
    cached_rate, write_rate = prices.cached_input_per_m, prices.cache_write_per_m
    if cached_rate is None:
        cached_rate = prices.input_per_m * read
        assumed.append(f"cached input at {read:g}x input")
    if write_rate is None:
        write_rate = prices.input_per_m * write
        if anthropic:  # OpenAI does not bill writes: nothing to assume
            assumed.append(f"cache writes at {write:g}x input")
    note = f"priced at ${cached_rate:g}/M cached input, ${write_rate:g}/M cache writes" + (
        f" ({' and '.join(assumed)}: {who} usual rates, assumed)" if assumed else ""
    )
    return replace(prices, cached_input_per_m=cached_rate, cache_write_per_m=write_rate, note=note)


def cache_figures(
    prices: Prices | None, tokens: tuple[int, int, int, int]
) -> dict[str, float | int | None]:
    """The stats' cost and prompt-cache fields for ``tokens`` (input, output, cached input,
    cache writes): the cost, the hit rate (cached input / input) and what caching saved
    (the cost with every input token at the input price, minus the cost)."""
    input_tokens, output_tokens, cached, written = tokens
    figures: dict[str, float | int | None] = {
        "cached_input_tokens": cached,
        "cache_write_tokens": written,
        "prompt_cache_hit_rate": cached / input_tokens if input_tokens else None,
        "cost_usd": None,
        "prompt_cache_saved_usd": None,
    }
    if prices is not None:
        cost = prices.cost(input_tokens, output_tokens, cached, written)
        figures["cost_usd"] = cost
        figures["prompt_cache_saved_usd"] = prices.cost(input_tokens, output_tokens) - cost
    return figures
