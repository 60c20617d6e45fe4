"""Turning pydantic validation errors into one line that names the field and what was expected."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ._yaml import Loc

_EXPECTED = {
    "float_type": "expected a number",
    "int_type": "expected a whole number",
    "bool_type": "expected true or false",
    "string_type": "expected text",
    "dict_type": "expected a mapping",
    "list_type": "expected a list",
    "model_type": "expected a mapping",
    "missing": "required field is missing",
    "finite_number": "expected a finite number",
}


def loc_text(loc: Iterable[str | int]) -> str:
    """``('gates', 0, 'min')`` as ``gates[0].min``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def clean_loc(loc: tuple[str | int, ...]) -> Loc:
    # pydantic adds union-member tags (e.g. 'function-after[...]') that are not user fields
    return tuple(p for p in loc if not (isinstance(p, str) and ("[" in p or "-" in p)))


def _got(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe(err: ErrorDetails, known_keys: Iterable[str] = ()) -> tuple[Loc, str]:
    """The location and a one-line message for one pydantic error."""
    loc = clean_loc(tuple(err["loc"]))
    kind = err["type"]
    if kind == "extra_forbidden":
        key = str(loc[-1]) if loc else "?"
        hint = difflib.get_close_matches(key, list(known_keys), n=1)
        suffix = f"; did you mean '{hint[0]}'?" if hint else ""
        return loc, f"unknown key '{key}'{suffix}"
    if kind == "union_tag_invalid":
        ctx = err.get("ctx") or {}
        return (*loc, "type"), (
            f"unknown check type {ctx.get('tag')!r}; expected one of {ctx.get('expected_tags')}"
        )
    if kind == "union_tag_not_found":
        return (*loc, "type"), "required field is missing (the check's type)"
    if kind == "literal_error":
        ctx = err.get("ctx") or {}
        return loc, f"expected {ctx.get('expected')}, got {_got(err.get('input'))}"
    if kind == "enum":
        ctx = err.get("ctx") or {}
        return loc, f"expected {ctx.get('expected')}, got {_got(err.get('input'))}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        return loc, f"{err['msg'].lower()}, got {_got(err.get('input'))}"
    if kind in _EXPECTED:
        got = "" if kind == "missing" else f", got {_got(err.get('input'))}"
        return loc, _EXPECTED[kind] + got
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    return loc, msg


def pick(exc: ValidationError) -> ErrorDetails:
    """The most useful error of a validation failure."""
    errors = exc.errors(include_url=False)
    # a misspelled key is the root cause of the 'missing' error it also produces
    errors.sort(key=lambda e: e["type"] != "extra_forbidden")
    # a union of shapes reports one error per shape; prefer the one that is not a type mismatch
    for err in errors:
        if err["type"] not in ("model_type", "dict_type", "float_type"):
            return err
    return errors[0]


def first_error(exc: ValidationError, known_keys: Iterable[str] = ()) -> tuple[Loc, str]:
    """The most useful error of a validation failure, described."""
    return describe(pick(exc), known_keys)
