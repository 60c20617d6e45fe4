"""Token usage and cost of one case, summed from what its steps' attributes recorded."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, NamedTuple

from ._case import Step


class CaseUsage(NamedTuple):
    """What a case's agent consumed, where its log said (None: nothing recorded)."""

    input_tokens: int | None = None
    """Tokens sent to the model, summed over the steps' ``input_tokens``."""
    output_tokens: int | None = None
    """Tokens the model produced, summed over the steps' ``output_tokens``."""
    cost_usd: float | None = None
    """Cost in US dollars, summed over the steps' ``cost_usd``."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return self._asdict()


_NUMBERS = (int, float)
_INF = math.inf


def trace_usage(trace: Iterable[Step]) -> CaseUsage | None:
    """The summed ``input_tokens``, ``output_tokens`` and ``cost_usd`` of the steps'
    attributes; None when no step recorded any (the common case costs one dict test a step).

    A value counts when it is a finite number >= 0; booleans (ints to Python), text and
    anything else are data the source gave, not usage, and are left out.
    """
    tokens_in: float | None = None
    tokens_out: float | None = None
    cost: float | None = None
    numbers, inf = _NUMBERS, _INF
    for step in trace:
        attrs = step.__dict__["attributes"]  # the hot path: skip pydantic's descriptors
        if not attrs:
            continue
        # type() in a tuple, not isinstance: True is an int; 0 <= v < inf drops NaN and inf
        v = attrs.get("input_tokens")
        if type(v) in numbers and 0 <= v < inf:
            tokens_in = (tokens_in or 0) + v
        v = attrs.get("output_tokens")
        if type(v) in numbers and 0 <= v < inf:
            tokens_out = (tokens_out or 0) + v
        v = attrs.get("cost_usd")
        if type(v) in numbers and 0 <= v < inf:
            cost = (cost or 0.0) + v
    if tokens_in is None and tokens_out is None and cost is None:
        return None
    return CaseUsage(_whole(tokens_in), _whole(tokens_out), _finite(cost))


def _finite(total: float | None) -> float | None:
    """A sum of finite values can still overflow to infinity (two counts near 1e308): that is
    no usage anyone had, so it is unknown rather than an error that would stop the run."""
    return total if total is not None and total < _INF else None


MAX_TOKENS = 2**63 - 1
"""The largest token count kept (what a JSON reader takes as an integer everywhere): a count
past it is no usage anyone had, and is unknown."""


def _whole(total: float | None) -> int | None:
    """A token count as a whole number, unknown when its sum overflowed."""
    finite = _finite(total)
    return int(finite) if finite is not None and finite <= MAX_TOKENS else None
