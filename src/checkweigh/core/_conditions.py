"""Conditions over a case's fields, used by ``when`` guards and outcome rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ._paths import MISSING as _MISSING
from ._paths import FieldPath


def strict_equal(a: Any, b: Any) -> bool:
    """Equality that does not take ``True`` for ``1`` (a success flag of 1 is not true)."""
    return bool(a == b) and (type(a) is bool) == (type(b) is bool)


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

    A missing path satisfies only falsy and not_equals (and exists: false). On a path with
    ``[*]`` or a filter, equals, in and truthy hold when *some* value satisfies them, while
    not_equals and falsy hold when *every* value does (``not_equals: transfer`` on
    ``trace[kind=tool_call].name`` means no call was a transfer); exists asks whether the path
    reached any value.
    """

    path: FieldPath
    op: ConditionOp = ConditionOp.EQUALS
    value: Any = None
    _test: Callable[[Any], bool] = field(default=None, compare=False, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        test = self._slow_holds
        if self.path.many:
            test = self._holds_for_values
        elif self.op is ConditionOp.EQUALS:  # the common guard gets a dedicated closure
            get, value = self.path.getter, self.value
            value_is_bool = type(value) is bool

            def test(root: Any) -> bool:
                actual = get(root)
                return (
                    actual is not _MISSING
                    and actual == value
                    and (type(actual) is bool) is value_is_bool
                )

        elif self.op is ConditionOp.EXISTS:  # the default outcome rules' flag test
            get, wanted = self.path.getter, self._wants_present

            def test(root: Any) -> bool:
                return (get(root) is not _MISSING) is wanted

        object.__setattr__(self, "_test", test)

    @property
    def _wants_present(self) -> bool:
        return bool(self.value if self.value is not None else True)

    @property
    def test(self) -> Callable[[Any], bool]:
        """The condition as a function of the root."""
        return self._test

    def holds(self, root: Any) -> bool:
        """Whether the condition is true of ``root`` (usually a :class:`Case`)."""
        return self._test(root)

    def _slow_holds(self, root: Any) -> bool:
        actual = self.path.getter(root)
        if self.op is ConditionOp.EXISTS:
            return (actual is not _MISSING) is self._wants_present
        if actual is _MISSING:
            return self.op in _NEGATIVE
        return self._holds_for(actual)

    def _holds_for_values(self, root: Any) -> bool:
        values = self.path.getter(root)
        if self.op is ConditionOp.EXISTS or values is _MISSING:
            return self._slow_holds(root)
        if self.op in _NEGATIVE:
            return all(self._holds_for(v) for v in values)
        return any(self._holds_for(v) for v in values)

    def _holds_for(self, actual: Any) -> bool:
        op = self.op
        if op is ConditionOp.EQUALS:
            return strict_equal(actual, self.value)
        if op is ConditionOp.NOT_EQUALS:
            return not strict_equal(actual, self.value)
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
        if self.op is ConditionOp.EXISTS:
            return f"{self.path} {'exists' if self._wants_present else 'is missing'}"
        if self.op in symbols:
            return f"{self.path} {symbols[self.op]} {self.value!r}"
        return f"{self.path} is {self.op.value}"


_NEGATIVE = (ConditionOp.FALSY, ConditionOp.NOT_EQUALS)


def all_hold(conditions: tuple[Condition, ...], root: Any) -> bool:
    """Whether every condition holds (true for none)."""
    for c in conditions:  # noqa: SIM110 - a plain loop beats all() + generator here
        if not c._test(root):
            return False
    return True
