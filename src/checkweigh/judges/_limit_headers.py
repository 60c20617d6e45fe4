"""The rate-limit headers providers send with every answer, read into plain values.

OpenAI: ``x-ratelimit-limit-requests``, ``x-ratelimit-remaining-requests``,
``x-ratelimit-reset-requests`` (a Go duration: ``1s``, ``6m0s``, ``20ms``) and the same trio for
``-tokens``. Anthropic: ``anthropic-ratelimit-requests-limit``, ``-remaining``, ``-reset`` (an
RFC 3339 time) for ``requests``, ``tokens``, ``input-tokens`` and ``output-tokens``.

A header that is missing or unreadable is left out: a proxy that mangles one never stops a call.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, get_args

Kind = Literal["requests", "tokens", "input-tokens", "output-tokens"]
"""What a limit counts: requests, or tokens (all, or only input or output, as Anthropic splits
them) per minute."""

KINDS: tuple[Kind, ...] = get_args(Kind)

_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s|us|µs|ns)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


@dataclass(frozen=True, slots=True)
class Reading:
    """One limit as an answer reported it."""

    kind: Kind
    """What the limit counts."""
    limit: int | None
    """The most per minute."""
    remaining: int | None
    """What is left now."""
    reset_s: float | None
    """Seconds until the limit is back to its full value."""


def parse_duration(text: str) -> float | None:
    """Seconds in a Go-style duration (``6m0s``, ``1.5s``, ``20ms``), None when unreadable."""
    text = text.strip()
    if not text:
        return None
    total = 0.0
    end = 0
    for match in _DURATION.finditer(text):
        if match.start() != end:
            return None
        total += float(match.group(1)) * _UNIT_S[match.group(2)]
        end = match.end()
    return total if end == len(text) and math.isfinite(total) else None


def parse_reset_time(text: str, now: float) -> float | None:
    """Seconds from ``now`` (epoch seconds) until the RFC 3339 time ``text``; None when it is
    unreadable or has no zone (never below 0)."""
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return max(when.timestamp() - now, 0.0)


def _count(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        value = int(text.strip())
    except ValueError:
        return None
    return value if value >= 0 else None


def read_limits(headers: Mapping[str, str], now: float) -> list[Reading]:
    """The limits ``headers`` report (any case of header names), ``now`` in epoch seconds."""
    lowered = {k.lower(): v for k, v in headers.items()}
    readings: list[Reading] = []
    for kind in ("requests", "tokens"):
        limit = _count(lowered.get(f"x-ratelimit-limit-{kind}"))
        remaining = _count(lowered.get(f"x-ratelimit-remaining-{kind}"))
        if limit is None and remaining is None:
            continue
        reset = lowered.get(f"x-ratelimit-reset-{kind}")
        readings.append(
            Reading(kind, limit, remaining, None if reset is None else parse_duration(reset))
        )
    for kind in KINDS:
        prefix = f"anthropic-ratelimit-{kind}-"
        limit = _count(lowered.get(prefix + "limit"))
        remaining = _count(lowered.get(prefix + "remaining"))
        if limit is None and remaining is None:
            continue
        reset = lowered.get(prefix + "reset")
        readings.append(
            Reading(kind, limit, remaining, None if reset is None else parse_reset_time(reset, now))
        )
    return readings
