"""Text as it enters checkweigh: the one conversion that makes any Python string storable.

A Python ``str`` can hold lone surrogates (``"\\ud800"``: from a JSON ``\\ud800`` escape read
by the standard library or an SDK, from YAML, from UTF-16 decoded with ``surrogatepass``, or
written in user code). No UTF-8 encoder takes them: stored, exported or printed, one ends a
write with an error. So text from agents' replies, checks' reasons and errors, judges'
answers and case files passes through :func:`safe_text` (or :func:`safe_data` for a JSON-like
value) where it enters: a lone surrogate becomes the visible escape ``\\ud800``, as the
reports show a control character (see ``reports/_safe.py``); a high and a low surrogate in a
row are the one character they encode; all other text is returned as it is, without a copy.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final, TypeVar

_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR_OR_LONE = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")
# a \uD800-\uDFFF escape in JSON text: the fast parsers refuse a lone one
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89abcdefABCDEF][0-9a-fA-F]{2}")

T = TypeVar("T")


def _visible(match: re.Match[str]) -> str:
    found = match.group()
    if len(found) == 2:  # a UTF-16 pair: the character it encodes
        return found.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    return f"\\u{ord(found):04x}"


def safe_text(text: str) -> str:
    """``text`` with each lone surrogate written as the visible escape ``\\udXXX``.

    Returns:
        The same object when it holds no surrogate (ASCII is told at C speed).
    """
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _PAIR_OR_LONE.sub(_visible, text)


def safe_data(value: T) -> T:
    """``value`` with every string in it (dict keys too) passed through :func:`safe_text`,
    through dicts, lists, tuples and pydantic models.

    Returns:
        The same object when nothing in it changed, else a changed copy (models copied with
        ``model_copy``; anything else, a number or an opaque object, as it is).
    """
    return _safe(value)  # type: ignore[no-any-return]


def _safe(value: Any) -> Any:
    if type(value) is str:
        return safe_text(value)
    if isinstance(value, dict):
        changed = None
        for key, item in value.items():
            new_key = safe_text(key) if type(key) is str else key
            new_item = _safe(item)
            if new_key is not key or new_item is not item:
                changed = changed or {}
                changed[key] = (new_key, new_item)
        if changed is None:
            return value
        out = {}
        for key, item in value.items():
            new_key, new_item = changed.get(key, (key, item))
            out[new_key] = new_item
        return out
    if type(value) is list or type(value) is tuple:
        # a named tuple (a Verdict a worker answered) is checkweigh's own value, made safe
        # where it was built, and rebuilding it as a plain tuple would lose its type
        items = [_safe(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items if type(value) is list else tuple(items)
    if hasattr(type(value), "__pydantic_fields__"):  # a model (pydantic is not imported here)
        fields = value.__dict__
        update = {k: new for k, v in fields.items() if (new := _safe(v)) is not v}
        return value.model_copy(update=update) if update else value
    if isinstance(value, str):  # a str subclass (an enum's value): itself unless it changes
        return safe_text(value)
    return value


NOT_JSON: Final = object()
"""What :func:`json_with_surrogates` gives for text it cannot read either."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def json_with_surrogates(raw: bytes | str) -> Any:
    """JSON text that a fast parser (orjson, jiter, msgspec) refused, read again by the
    standard library, which takes an escaped lone surrogate (``"\\ud800"``, valid JSON);
    its strings are made safe. NaN and Infinity are still refused.

    Returns:
        The value, or :data:`NOT_JSON` when the text holds no ``\\uD800``-``\\uDFFF``
        escape or is not JSON for another reason too (the caller reports the fast parser's
        own error, which says where).
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if _ESCAPED_SURROGATE.search(data) is None:
        return NOT_JSON
    try:
        return safe_data(json.loads(data, parse_constant=_refuse_constant))
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return NOT_JSON
