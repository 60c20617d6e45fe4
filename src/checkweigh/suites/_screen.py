"""A C-speed screen of a JSONL cases file: which lines are certainly valid cases.

Before a run starts, ``checkweigh run`` reads the whole cases file once, so that a bad case
anywhere is one error and nothing is stored. Building every case for that (pydantic makes a
model of each step) costs as much as the run's own parse. msgspec decodes a line straight
into the structs below, validating as it goes, at the cost of decoding alone.

The structs accept a subset of what :class:`~checkweigh.core.Case` accepts (never more): only
JSON types, no timestamps, no conversation ``user``, no number outside its range. A line they
refuse is not necessarily bad: it goes through the full validation, which either accepts it or
gives the one-line error naming the file, the line and the field, exactly as the run would.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

_FLOAT_MAX = 1.7976931348623157e308
# a latency: a finite number >= 0 (Case and Step refuse infinity and NaN); a number past the
# largest float is refused by msgspec itself
_Latency = Annotated[float, msgspec.Meta(ge=0, le=_FLOAT_MAX)] | None


class _Step(msgspec.Struct, forbid_unknown_fields=True):
    kind: Literal["user", "assistant", "tool_call", "system", "event"]
    content: str | None = None
    name: str | None = None
    # a string is JSON text or kept as given: Step accepts any
    arguments: dict[str, Any] | str | None = None
    result: Any = None
    error: str | None = None
    id: str | None = None
    parent_id: str | None = None
    attributes: dict[str, Any] = {}
    # a timestamp is text that Step parses as a datetime: left to the full validation
    timestamp: None = None
    latency_ms: _Latency = None


class _Case(msgspec.Struct, forbid_unknown_fields=True):
    id: Annotated[str, msgspec.Meta(min_length=1)]
    input: Any = None
    trace: list[_Step] = []
    final_state: dict[str, Any] = {}
    ground_truth: Any = None
    metadata: dict[str, Any] = {}
    latency_ms: _Latency = None
    # a conversation's user (scripted or simulated): left to the full validation
    user: None = None


_screen = msgspec.json.Decoder(_Case).decode


def screened_id(raw: bytes) -> str | None:
    """The case id of ``raw`` when the line is certainly a valid case; None when it must be
    validated in full (it may still be valid)."""
    try:
        case = _screen(raw)
    except (ValueError, RecursionError):  # msgspec's DecodeError and ValidationError too
        return None
    return case.id
