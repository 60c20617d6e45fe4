"""Conditions over a case's fields, used by ``when`` guards and outcome rules."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ._paths import FieldPath

_MISSING = object()


class ConditionOp(StrEnum):
    """How a condition compares the value at its path."""

    EQUALS = "equals"
    NOT_EQUALS = "not_equals"
    IN = "in"
    EXISTS = "exists"
    TRUTHY = "truthy"
    FALSY = "falsy"


@dataclass(frozen=True, slots=True)
class Condition:
    """``path`` compared with ``value`` by ``op``.

    A missing path satisfies only falsy and not_equals (and exists: false).
    """

    path: FieldPath
    op: ConditionOp = ConditionOp.EQUALS
    value: Any = None

    def holds(self, root: Any) -> bool:
        """Whether the condition is true of ``root`` (usually a :class:`Case`)."""
        actual = self.path.get(root, _MISSING)
        op = self.op
        if op is _EQ:
            return actual is not _MISSING and bool(actual == self.value)
        if op is ConditionOp.EXISTS:
            return (actual is not _MISSING) == bool(self.value if self.value is not None else True)
        if actual is _MISSING:
            return op in (ConditionOp.FALSY, ConditionOp.NOT_EQUALS)
        if op is ConditionOp.EQUALS:
            return bool(actual == self.value)
        if op is ConditionOp.NOT_EQUALS:
            return bool(actual != self.value)
        if op is ConditionOp.IN:
            return actual in self.value
        if op is ConditionOp.TRUTHY:
            return bool(actual)
        return not actual

    def describe(self) -> str:
        """A short human form, e.g. ``final_state.stage == 'failed'``."""
        symbols = {
            ConditionOp.EQUALS: "==",
            ConditionOp.NOT_EQUALS: "!=",
            ConditionOp.IN: "in",
        }
        if self.op in symbols:
            return f"{self.path} {symbols[self.op]} {self.value!r}"
        return f"{self.path} is {self.op.value}"


_EQ = ConditionOp.EQUALS


def all_hold(conditions: tuple[Condition, ...], root: Any) -> bool:
    """Whether every condition holds (true for none)."""
    for c in conditions:  # noqa: SIM110 - a plain loop beats all() + generator here
        if not c.holds(root):
            return False
    return True
