"""Field paths such as ``final_state.booking.participants`` or ``trace[-1].content``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_TOKEN = re.compile(r"([^.\[\]]+)|\[(-?\d+)\]")
_MISSING = object()


class PathSyntaxError(ValueError):
    """A field path that cannot be parsed."""


@dataclass(frozen=True, slots=True)
class FieldPath:
    """A parsed, reusable field path. Resolve it with :meth:`get`."""

    text: str
    parts: tuple[str | int, ...]

    @classmethod
    def parse(cls, text: str) -> FieldPath:
        """Parse ``a.b[0].c``; raise :class:`PathSyntaxError` on malformed text."""
        if not text or text != text.strip():
            raise PathSyntaxError(f"empty or padded field path {text!r}")
        parts: list[str | int] = []
        pos = 0
        for match in _TOKEN.finditer(text):
            gap = text[pos : match.start()]
            name, index = match.groups()
            # a name follows a '.' (or starts the path); an index follows directly
            expected_gap = "" if index is not None or pos == 0 else "."
            if gap != expected_gap:
                raise PathSyntaxError(f"malformed field path {text!r}")
            parts.append(int(index) if index is not None else name)
            pos = match.end()
        if pos != len(text) or not parts or isinstance(parts[0], int):
            raise PathSyntaxError(f"malformed field path {text!r}")
        return cls(text, tuple(parts))

    def get(self, root: Any, default: Any = _MISSING) -> Any:
        """The value at this path, or ``default``; raise KeyError when missing and no default."""
        value = root
        try:
            for part in self.parts:
                # dicts and lists dominate real paths: index them inline, the rest in _step
                t = type(value)
                if t is dict or (t is list and type(part) is int):
                    value = value[part]
                else:
                    value = _step(value, part)
                    if value is _MISSING:
                        raise KeyError(part)
        except (KeyError, IndexError):
            if default is _MISSING:
                raise KeyError(self.text) from None
            return default
        return value

    def exists(self, root: Any) -> bool:
        """Whether the path resolves to a value (None counts as a value)."""
        return self.get(root, _MISSING_SENTINEL) is not _MISSING_SENTINEL

    def __str__(self) -> str:
        return self.text


_MISSING_SENTINEL = object()


def _step(value: Any, part: str | int) -> Any:
    if type(part) is int:
        if isinstance(value, list | tuple) and -len(value) <= part < len(value):
            return value[part]
        return _MISSING
    if isinstance(value, dict):
        return value.get(part, _MISSING)
    if value is None or isinstance(value, _SCALARS):
        return _MISSING
    fields = getattr(type(value), "__pydantic_fields__", None)
    if fields is not None and part in fields:  # a model's field: no method to guard against
        return getattr(value, part)  # type: ignore[arg-type]
    attr = getattr(value, part, _MISSING)  # type: ignore[arg-type]
    if callable(attr):
        return _MISSING
    return attr


_SCALARS = (str, int, float, bool, list, tuple)
