"""Turning pydantic validation errors into one line that names the field and what was expected."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ._text import inert, key_text, shown
from ._yaml import Loc, loc_key

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
    """``('gates', 0, 'min')`` as ``gates[0].min``; a key that is not a plain name is quoted
    (``checks['my check']``), so what a file holds never reaches the terminal raw."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif key_text(part) != part:
            out += f"[{key_text(part)}]"
        else:
            out += f".{part}" if out else part
    return out


_ABSENT = object()
# the parts pydantic adds to a location that are not user keys: union members and validators
# ('function-after[_one_op(), ConditionSpec]', 'list[...]', 'ConditionSpec', 'str') and '[key]'
_TAG = re.compile(r".*\[.*\]\Z|[A-Z][A-Za-z0-9]*\Z|(int|float|str|bool|none|bytes)\Z", re.S)


def _child(node: Any, part: str | int) -> Any:
    if isinstance(node, dict):
        if part in node:
            return node[part]
        for key, value in node.items():  # a None or true key: pydantic names it as text
            if loc_key(key) == part:
                return value
    elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return _ABSENT


def clean_loc(loc: tuple[str | int, ...], data: Any = _ABSENT) -> Loc:
    """pydantic's location of an error without the parts pydantic adds (union members,
    validators), so it names keys as the user wrote them.

    With the validated ``data``, a part is kept when the input holds it (so a user's
    ``pass-threshold`` or ``a[0]`` key stays), dropped when the input lacks it and more parts
    follow (a tag: a missing field is always last), and otherwise kept unless it looks like a
    tag. Without ``data`` only the look decides.
    """
    out: list[str | int] = []
    node = data
    last = len(loc) - 1
    for i, part in enumerate(loc):
        child = _child(node, part) if node is not _ABSENT else _ABSENT
        if child is not _ABSENT:
            out.append(part)
            node = child
            continue
        looks_like_tag = isinstance(part, str) and bool(_TAG.match(part))
        if looks_like_tag or (i < last and isinstance(node, dict)):
            continue
        out.append(part)
        node = _ABSENT
    return tuple(out)


def _actual_key(data: Any, loc: Loc) -> Any:
    node = data
    for part in loc[:-1]:
        node = _child(node, part)
    if isinstance(node, dict):
        for key in node:
            if loc_key(key) == loc[-1]:
                return key
    return loc[-1]


class Described(NamedTuple):
    """One pydantic error as a user reads it."""

    loc: Loc
    """The field the message is about."""
    message: str
    """What is wrong and what was expected, on one line."""
    at: Loc
    """Where to point (the field, or the offending key under it)."""


def _got(value: Any) -> str:
    return shown(value)


def suggest(key: str, known_keys: Iterable[str]) -> str | None:
    """The known key the user most likely meant by ``key``, if any."""
    known = list(known_keys)
    normal = key.strip().lower().replace("-", "_").replace(" ", "_")
    if normal in known and normal != key:
        return normal
    hint = difflib.get_close_matches(normal, known, n=1)
    return hint[0] if hint and hint[0] != key else None


def describe(err: ErrorDetails, known_keys: Iterable[str] = (), data: Any = _ABSENT) -> Described:
    """The location and a one-line message for one pydantic error of validating ``data``."""
    raw = tuple(err["loc"])
    loc = clean_loc(raw, data)
    kind = err["type"]
    if loc and (kind == "invalid_key" or (raw[-1:] == ("[key]",) and kind == "string_type")):
        # a key that is not text (1, null, true): point at the key, name the mapping
        key = _actual_key(data, loc)
        return Described(loc[:-1], f"expected text keys, got the key {_got(key)}", loc)
    if kind == "extra_forbidden":
        key = str(loc[-1]) if loc else "?"
        hint = suggest(key, known_keys)
        suffix = f"; did you mean {hint!r}?" if hint else ""
        return Described(loc, f"unknown key {_got(key)}{suffix}", loc)
    loc, message = _message(err, loc)
    return Described(loc, inert(message), loc)


def _message(err: ErrorDetails, loc: Loc) -> tuple[Loc, str]:
    kind = err["type"]
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
    if kind == "too_short":
        ctx = err.get("ctx") or {}
        return (
            loc,
            f"expected at least {ctx.get('min_length')} entry, got {ctx.get('actual_length')}",
        )
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
    errors.sort(key=lambda e: e["type"] not in ("extra_forbidden", "invalid_key"))
    # a union of shapes reports one error per shape; prefer the one that is not a type mismatch
    for err in errors:
        if err["type"] not in ("model_type", "dict_type", "float_type"):
            return err
    return errors[0]


def first_error(
    exc: ValidationError, known_keys: Iterable[str] = (), data: Any = _ABSENT
) -> tuple[Loc, str]:
    """The location and message of the most useful error of validating ``data``."""
    found = describe(pick(exc), known_keys, data)
    return found.loc, found.message
