"""The many-valued parts of a field path: ``[*]`` and filters such as ``[kind=assistant]``.

A path holding one of these resolves to every value it reaches, as a list, instead of one
value. Each segment after a ``[*]`` or a filter applies to each value reached so far; values
that are missing there (or null) are skipped.

Filter syntax, inside the brackets: ``field=value`` or ``field!=value``, several joined by
``,`` (all must hold). ``field`` may be dotted (``arguments.id``). An unquoted value matches a
string with exactly that text, or the number, ``true`` / ``false`` or ``null`` it spells (so
``[id=3]`` matches ``3``, ``3.0`` and ``"3"``); a quoted value (``'…'`` or ``"…"``, with ``\\``
escaping the quote) matches that text only and may hold spaces, commas and brackets.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import CheckweighError

_NAME = re.compile(r"[^.\[\]=!,'\"\s]+")
_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?")
_INTEGER = re.compile(r"-?\d+")
_BARE_END = re.compile(r"[,\]'\"]")


class PathSyntaxError(CheckweighError, ValueError):
    """A field path that cannot be parsed."""


def syntax_error(text: str, pos: int, expected: str) -> PathSyntaxError:
    """The one-line error for ``text``, pointing at character ``pos`` (counted from 0)."""
    return PathSyntaxError(f"malformed field path {text!r} at position {pos}: expected {expected}")


@dataclass(frozen=True, slots=True)
class FilterTest:
    """One condition of a filter: the item's ``field`` compared with a written value."""

    field: tuple[str, ...]
    """The dotted field of each item that is compared."""
    raw: str
    """The value as written (without quotes)."""
    quoted: bool
    """Whether the value was quoted: then it matches text only."""
    negated: bool = False
    """``!=`` instead of ``=``."""
    literal: Any = None
    """The unquoted value read as JSON would read it: a number, a boolean, null or the text."""

    def matches(self, actual: Any) -> bool:
        """Whether an item's field value satisfies the test (a missing field never equals)."""
        return self._equal(actual) is not self.negated

    def predicate(self, missing: Any) -> Callable[[Any], bool]:
        """:meth:`matches` as one function of the field's value (``missing`` if absent), made
        cheap for the usual filter on text such as ``kind=assistant``."""
        raw = self.raw
        if self.quoted or isinstance(self.literal, str):
            # only a string can equal text (a missing field is not a string)
            if self.negated:
                return lambda actual: actual != raw
            return lambda actual: actual == raw
        matches = self.matches
        return lambda actual: matches(None if actual is missing else actual)

    def _equal(self, actual: Any) -> bool:
        if isinstance(actual, str):
            return actual == self.raw
        if self.quoted:
            return False
        literal = self.literal
        if isinstance(actual, bool) or isinstance(literal, bool):
            return actual is literal
        if isinstance(actual, int | float) and isinstance(literal, int | float):
            return bool(actual == literal)
        return actual is None and literal is None and self.raw == "null"

    def __str__(self) -> str:
        value = repr(self.raw) if self.quoted else self.raw
        return f"{'.'.join(self.field)}{'!=' if self.negated else '='}{value}"


@dataclass(frozen=True, slots=True)
class Each:
    """``[*]`` (no tests) or a filter: fans out over a list's items (or a mapping's values)."""

    tests: tuple[FilterTest, ...] = ()
    """Conditions every selected item meets; none for ``[*]``."""

    def __str__(self) -> str:
        return "[" + (",".join(map(str, self.tests)) or "*") + "]"


def _literal(raw: str) -> Any:
    if raw in ("true", "false"):
        return raw == "true"
    if raw == "null":
        return None
    if _NUMBER.fullmatch(raw):
        return int(raw) if _INTEGER.fullmatch(raw) else float(raw)
    return raw


def _skip_spaces(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] == " ":
        pos += 1
    return pos


def _quoted(text: str, pos: int) -> tuple[str, int]:
    """The quoted string starting at ``pos`` and the position after its closing quote."""
    quote, out, i = text[pos], [], pos + 1
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in (quote, "\\"):
            out.append(text[i + 1])
            i += 2
        elif c == quote:
            return "".join(out), i + 1
        else:
            out.append(c)
            i += 1
    raise syntax_error(text, pos, f"a closing {quote} for the quoted value")


def _test(text: str, pos: int) -> tuple[FilterTest, int]:
    field: list[str] = []
    while True:
        m = _NAME.match(text, pos)
        if m is None:
            raise syntax_error(text, pos, "a field name in the filter")
        field.append(m.group())
        pos = m.end()
        if not text.startswith(".", pos):
            break
        pos += 1
    pos = _skip_spaces(text, pos)
    negated = text.startswith("!=", pos)
    if not negated and not text.startswith("=", pos):
        raise syntax_error(text, pos, "'=' or '!=' after the filter's field name")
    pos = _skip_spaces(text, pos + (2 if negated else 1))
    if pos < len(text) and text[pos] in "'\"":
        raw, pos = _quoted(text, pos)
        return FilterTest(tuple(field), raw, True, negated, raw), pos
    end = _BARE_END.search(text, pos)
    stop = end.start() if end else len(text)
    if end is not None and end.group() in "'\"":
        raise syntax_error(text, stop, "a quote only around a whole value")
    raw = text[pos:stop].rstrip(" ")
    if raw.startswith("="):
        raise syntax_error(text, pos, "one '=' between the field and the value")
    if "=" in raw:
        raise syntax_error(text, pos + raw.index("="), "quotes around a value that holds '='")
    if not raw:
        raise syntax_error(text, pos, "a value after '=' (write '' for empty text)")
    return FilterTest(tuple(field), raw, False, negated, _literal(raw)), pos + len(raw)


def parse_bracket(text: str, pos: int) -> tuple[int | Each, int]:
    """The part written in the brackets opening at ``pos``, and the position after them."""
    start = pos + 1
    close = text.find("]", start)
    if close < 0:
        raise syntax_error(text, pos, "a closing ']'")
    inner = text[start:close]
    if inner == "*":
        return Each(), close + 1
    if _INTEGER.fullmatch(inner):
        return int(inner), close + 1
    if not inner.strip() or inner.startswith("-") or inner[:1].isdigit():
        raise syntax_error(
            text, start, "an integer index, '*' or a filter such as [kind=tool_call]"
        )
    tests: list[FilterTest] = []
    pos = _skip_spaces(text, start)
    while True:
        test, pos = _test(text, pos)
        tests.append(test)
        pos = _skip_spaces(text, pos)
        if text.startswith(",", pos):
            pos = _skip_spaces(text, pos + 1)
            continue
        if text.startswith("]", pos):
            return Each(tuple(tests)), pos + 1
        raise syntax_error(text, pos, "',' or ']' after the filter's value")


Selector = tuple[tuple[Callable[[Any], Any], Callable[[Any], bool]], ...]
"""A filter's tests, ready to run: each the getter of its field and its predicate."""


def fan_out(value: Any, tests: Selector) -> list[tuple[str, Any]]:
    """The items of ``value`` that meet every test, with their index (or key) as path text."""
    if isinstance(value, list | tuple):
        pairs: Any = enumerate(value)
        label = "[{}]".format
    elif isinstance(value, dict):
        pairs, label = value.items(), ".{}".format
    else:
        return []
    # comprehensions, and the place's text made only for the items kept: this runs per step
    # of every trace a conversation check reads
    if not tests:
        return [(label(k), x) for k, x in pairs if x is not None]
    if len(tests) == 1:
        ((get, holds),) = tests
        return [(label(k), x) for k, x in pairs if x is not None and holds(get(x))]
    return [
        (label(k), x)
        for k, x in pairs
        if x is not None and all(holds(get(x)) for get, holds in tests)
    ]
