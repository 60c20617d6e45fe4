"""A C-speed screen of a JSONL cases file: which lines are certainly valid cases.

Before a run starts, ``checkweigh run`` reads the whole cases file once, so that a bad case
anywhere is one error and nothing is stored. Building every case for that (pydantic makes a
model of each step) costs as much as the run's own parse. msgspec decodes a line straight
into the structs below, validating as it goes, at the cost of decoding alone.

The structs accept a subset of what :class:`~checkweigh.core.Case` accepts (never more): only
JSON types, no timestamps, no conversation ``user``, no number outside its range. A line they
refuse is not necessarily bad: it goes through the full validation, which either accepts it or
gives the one-line error naming the file, the line and the field, exactly as the run would.

Where a case holds any JSON value (``input``, a step's ``result``, the values of
``final_state``...), an ASCII line is skimmed: msgspec checks the value's syntax and leaves it
undecoded (a 13 KB trace of tool results: 8 µs instead of 22). Skimming checks everything
decoding would (escapes, control characters, numbers, nesting) but the size of an integer:
one of more digits than Python converts is an error when decoded. A line that may hold such a
run of digits (two sampled bytes half that length apart are both digits), or a byte past
ASCII (whose UTF-8 is checked by decoding), is decoded in full.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Raw

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
    error: str | None = None


class _SkimmedStep(msgspec.Struct, forbid_unknown_fields=True):
    # _Step with its free JSON values skimmed (checked, not decoded)
    kind: Literal["user", "assistant", "tool_call", "system", "event"]
    content: str | None = None
    name: str | None = None
    arguments: dict[str, Raw] | str | None = None
    result: Raw = Raw(b"null")
    error: str | None = None
    id: str | None = None
    parent_id: str | None = None
    attributes: dict[str, Raw] = {}
    timestamp: None = None
    latency_ms: _Latency = None


class _SkimmedCase(msgspec.Struct, forbid_unknown_fields=True):
    id: Annotated[str, msgspec.Meta(min_length=1)]
    input: Raw = Raw(b"null")
    trace: list[_SkimmedStep] = []
    final_state: dict[str, Raw] = {}
    ground_truth: Raw = Raw(b"null")
    metadata: dict[str, Raw] = {}
    latency_ms: _Latency = None
    user: None = None
    error: str | None = None


_screen = msgspec.json.Decoder(_Case).decode
_skim = msgspec.json.Decoder(_SkimmedCase).decode
_INT_DIGITS = 4300
"""The most digits of an integer Python converts by default (``sys.get_int_max_str_digits``)."""
_DIGIT_MARKS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))  # a digit as "0"


def _may_hold_long_integer(raw: bytes) -> bool:
    """Whether ``raw`` may hold a run of more digits than an integer may have: a run longer
    than twice the stride covers two consecutive samples."""
    limit = min(sys.get_int_max_str_digits() or _INT_DIGITS, _INT_DIGITS)
    return b"00" in raw[:: limit // 2].translate(_DIGIT_MARKS)


def screened_id(raw: bytes) -> str | None:
    """The case id of ``raw`` when the line is certainly a valid case; None when it must be
    validated in full (it may still be valid)."""
    try:
        if raw.isascii() and not _may_hold_long_integer(raw):
            return _skim(raw).id
        return _screen(raw).id
    except (ValueError, RecursionError):  # msgspec's DecodeError and ValidationError too
        return None
