"""Comparing JSON values the way tool arguments are compared: by mode, with the first difference.

Modes name how the *actual* value relates to the *expected* one (the reference):

- ``exact``: the same keys and values all the way down;
- ``subset``: every key the actual object has is in the expected object, with a matching value
  (the actual arguments are a subset of the reference's: nothing unexpected was passed);
- ``superset``: every key the expected object has is in the actual object, with a matching
  value (the actual arguments carry at least the reference's; extra ones are fine);
- ``ignore``: anything matches.

``subset`` and ``superset`` apply recursively to objects nested at any depth, including objects
inside lists. Lists are ordered values: they match when they have the same length and their
items match position by position (under the same mode). Numbers compare by value (``30`` matches
``30.0``), booleans are not numbers (``true`` does not match ``1``), strings compare exactly,
``null`` matches only ``null``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ._model import short

ArgMode = Literal["exact", "ignore", "subset", "superset"]
"""How a call's arguments are compared with the expected ones (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class Difference:
    """Where two values part: the path (``flights[0].date``) and the values on each side.

    A side that lacks the key holds :data:`ABSENT`.
    """

    path: str
    actual: Any
    expected: Any

    def describe(self) -> str:
        """``flights[0].date: '2024-05-17' vs expected '2024-05-18'``."""
        where = self.path or "arguments"
        if self.actual is ABSENT:
            return f"{where}: missing, expected {short(self.expected, 40)}"
        if self.expected is ABSENT:
            return f"{where}: {short(self.actual, 40)} not expected"
        return f"{where}: {short(self.actual, 40)} vs expected {short(self.expected, 40)}"


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Absent()
"""The side of a :class:`Difference` where a key is missing."""

_NUMBER = (int, float)


def same_scalar(actual: Any, expected: Any) -> bool:
    """Equality of leaves: numbers by value, booleans only with booleans, else ``==``."""
    if type(actual) is bool or type(expected) is bool:
        return type(actual) is type(expected) and actual == expected
    if isinstance(actual, _NUMBER) and isinstance(expected, _NUMBER):
        return actual == expected
    if isinstance(actual, _NUMBER) or isinstance(expected, _NUMBER):
        return False  # '30' is not 30
    return bool(actual == expected)


def matches(actual: Any, expected: Any, mode: ArgMode) -> bool:
    """Whether ``actual`` matches ``expected`` under ``mode`` (see the module docstring)."""
    if mode == "exact":
        # Python's == is a fast, C-level first pass: unequal values never match exactly, and
        # equal ones only need the walk that tells a boolean from 1
        return bool(actual == expected) and _match(actual, expected, True, True)
    if mode == "ignore":
        return True
    return _match(actual, expected, mode != "subset", mode != "superset")


def _match(actual: Any, expected: Any, need_expected: bool, allow_no_extra: bool) -> bool:
    """:func:`differences` as a yes/no, without a generator: this runs for every candidate
    pair of calls. ``need_expected``: every expected key must be present; ``allow_no_extra``:
    no key beyond the expected ones may be present."""
    kind = type(actual)
    if kind is str:
        return type(expected) is str and actual == expected
    if kind is dict:
        if type(expected) is not dict:
            return False
        for key, want in expected.items():
            if key in actual:
                got = actual[key]
                if type(want) is str:  # the usual leaf, without a call
                    if type(got) is not str or got != want:
                        return False
                elif not _match(got, want, need_expected, allow_no_extra):
                    return False
            elif need_expected:
                return False
        if allow_no_extra:
            for key in actual:
                if key not in expected:
                    return False
        return True
    if kind is list:
        if type(expected) is not list or len(actual) != len(expected):
            return False
        for got, want in zip(actual, expected, strict=True):
            if type(want) is str:
                if type(got) is not str or got != want:
                    return False
            elif not _match(got, want, need_expected, allow_no_extra):
                return False
        return True
    if type(expected) in (dict, list):
        return False
    return same_scalar(actual, expected)


def first_difference(actual: Any, expected: Any, mode: ArgMode) -> Difference | None:
    """The first place ``actual`` and ``expected`` differ under ``mode``, or None."""
    if mode == "ignore":
        return None
    return next(differences(actual, expected, mode), None)


def differences(actual: Any, expected: Any, mode: ArgMode, path: str = "") -> Iterator[Difference]:
    """Every place ``actual`` and ``expected`` differ under ``mode``, in key order."""
    if mode == "ignore":
        return
    if isinstance(actual, dict) and isinstance(expected, dict):
        for key, want in expected.items():
            sub = f"{path}.{key}" if path else str(key)
            if key in actual:
                yield from differences(actual[key], want, mode, sub)
            elif mode != "subset":
                yield Difference(sub, ABSENT, want)
        if mode != "superset":
            for key, got in actual.items():
                if key not in expected:
                    yield Difference(f"{path}.{key}" if path else str(key), got, ABSENT)
    elif isinstance(actual, list) and isinstance(expected, list):
        if len(actual) != len(expected):
            yield Difference(path, actual, expected)
            return
        for i, (got, want) in enumerate(zip(actual, expected, strict=True)):
            yield from differences(got, want, mode, f"{path}[{i}]")
    elif (
        isinstance(actual, dict | list)
        or isinstance(expected, dict | list)
        or not same_scalar(actual, expected)
    ):
        yield Difference(path, actual, expected)


def count_differences(actual: Any, expected: Any, mode: ArgMode, limit: int = 64) -> int:
    """How many places differ (at most ``limit``): how far a call is from the expected one.
    The same places as :func:`differences`, counted without naming them: this runs for every
    candidate call when a check explains a failure."""
    if mode == "ignore":
        return 0
    return min(_count(actual, expected, mode != "subset", mode != "superset"), limit)


def _count(actual: Any, expected: Any, count_missing: bool, count_extra: bool) -> int:
    if isinstance(actual, dict) and isinstance(expected, dict):
        n = 0
        for key, want in expected.items():
            if key in actual:
                n += _count(actual[key], want, count_missing, count_extra)
            elif count_missing:
                n += 1
        if count_extra:
            n += sum(1 for key in actual if key not in expected)
        return n
    if isinstance(actual, list) and isinstance(expected, list):
        if len(actual) != len(expected):
            return 1
        return sum(
            _count(got, want, count_missing, count_extra)
            for got, want in zip(actual, expected, strict=True)
        )
    if isinstance(actual, dict | list) or isinstance(expected, dict | list):
        return 1
    return 0 if same_scalar(actual, expected) else 1
