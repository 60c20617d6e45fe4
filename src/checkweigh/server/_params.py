"""A page's query parameters, read by hand: a form submits an empty field for "any", and a bad
value must be a 422 page naming the parameter and what was expected (never the value: it
can be anything, of any length), not a validation error in JSON."""

from __future__ import annotations

from collections.abc import Sequence

from starlette.convertors import Convertor, register_url_convertor
from starlette.datastructures import QueryParams

from ._errors import bad_parameter

MAX_COUNT = 10**9
"""The largest count, offset or repeat a request may give: more than any store holds, and
well inside the database's 64-bit integers."""


def choice(params: QueryParams, name: str, allowed: Sequence[str]) -> str | None:
    """``name``'s value, one of ``allowed``; None when absent or empty."""
    value = params.get(name, "")
    if value == "":
        return None
    if value not in allowed:
        raise bad_parameter(name, f"expected one of {', '.join(allowed)}")
    return value


def whole(params: QueryParams, name: str, default: int, low: int = 0, high: int = MAX_COUNT) -> int:
    """``name`` as a whole number from ``low`` to ``high``; ``default`` when absent or empty."""
    value = params.get(name, "").strip()
    if value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise bad_parameter(name, "expected a whole number") from None
    if not low <= number <= high:
        raise bad_parameter(name, f"expected a number from {low} to {high}")
    return number


def number(params: QueryParams, name: str) -> float | None:
    """``name`` as a number (range checked by the caller); None when absent or empty."""
    value = params.get(name, "").strip()
    if value == "":
        return None
    try:
        return float(value)  # nan and inf pass here: the caller's range check names them
    except ValueError:
        raise bad_parameter(name, "expected a number") from None


def flag(params: QueryParams, name: str) -> bool:
    """A checkbox: on when present with any value but an empty one, ``0``, ``false`` or ``off``."""
    return params.get(name, "").strip().lower() not in ("", "0", "false", "off", "no")


class _AnyText(Convertor[str]):
    """The rest of a path, newlines too: ``{name:path}`` stops at a newline (its regex is
    ``.*``), and a case id may hold any text."""

    regex = "[\\s\\S]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("text", _AnyText())
CASE_ID = "{case_id:text}"
"""A route's case id parameter: any text, a newline included."""
