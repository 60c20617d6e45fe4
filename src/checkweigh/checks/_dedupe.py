"""``dedupe``: one call per key among a trace's calls, for agents that correct an earlier call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, field_validator

from ._argpaths import EVERY, parse_arg_path
from ._calls import Actual

_ABSENT = object()


class Dedupe(BaseModel):
    """Keep one call of a tool per value of ``key`` (the ``last`` made, or the ``first``)
    before the trace's calls are compared; calls without the key are kept as they are.

    In a suite: ``dedupe: {key: arguments.order_id, keep: last}``: of two
    ``modify_pending_order_items`` calls on one order, the correction is what counts.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    """A path into the call: ``arguments.`` and an argument path (``arguments.order_id``,
    ``arguments.flights[0].date``)."""
    keep: Literal["last", "first"] = "last"
    """Which of the calls sharing a key counts."""

    @field_validator("key")
    @classmethod
    def _valid_key(cls, value: str) -> str:
        head, dot, rest = value.partition(".")
        if head != "arguments" or not dot:
            raise ValueError(
                f"dedupe key {value!r} must be a path into the call's arguments, e.g. "
                "arguments.order_id"
            )
        if EVERY in parse_arg_path(rest):
            raise ValueError(f"dedupe key {value!r} must name one value, not [*]")
        return value

    @property
    def argument_path(self) -> str:
        """The key's path inside the arguments (``order_id``)."""
        return self.key.partition(".")[2]

    def apply(self, calls: Sequence[Actual]) -> list[Actual]:
        """``calls`` with one call per (tool, key value), in their order."""
        parts = parse_arg_path(self.argument_path)
        kept: dict[tuple[str, bytes], int] = {}
        keyed: list[tuple[str, bytes] | None] = []
        for i, call in enumerate(calls):
            value = _value_at(call.arguments, parts)
            key = None if value is _ABSENT else (call.name, _canonical(value))
            keyed.append(key)
            if key is not None and (self.keep == "last" or key not in kept):
                kept[key] = i
        return [
            c
            for i, (c, k) in enumerate(zip(calls, keyed, strict=True))
            if k is None or kept[k] == i
        ]


def _value_at(value: Any, parts: tuple[str | int, ...]) -> Any:
    for part in parts:
        if isinstance(part, str):
            if not isinstance(value, dict) or part not in value:
                return _ABSENT
            value = value[part]
        else:
            if not isinstance(value, list) or not -len(value) <= part < len(value):
                return _ABSENT
            value = value[part]
    return value


def _canonical(value: Any) -> bytes:
    """The key value as comparable bytes (objects and lists by their sorted JSON)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # a number orjson cannot write: its repr tells values apart
        return repr(value).encode()
