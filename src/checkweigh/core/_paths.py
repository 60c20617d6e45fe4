"""Field paths such as ``final_state.booking.participants`` or ``trace[-1].content``."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_TOKEN = re.compile(r"([^.\[\]]+)|\[(-?\d+)\]")
_MISSING = object()
MISSING: Any = _MISSING
"""What :attr:`FieldPath.getter` returns for a path that does not resolve."""


class PathSyntaxError(ValueError):
    """A field path that cannot be parsed."""


@dataclass(frozen=True, slots=True)
class FieldPath:
    """A parsed, reusable field path. Resolve it with :meth:`get`."""

    text: str
    parts: tuple[str | int, ...]
    _getter: Callable[[Any], Any] = field(default=None, compare=False, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self._getter is None:
            object.__setattr__(self, "_getter", _compile(self.parts))

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
        value = self._getter(root)
        if value is _MISSING:
            if default is _MISSING:
                raise KeyError(self.text)
            return default
        return value

    @property
    def getter(self) -> Callable[[Any], Any]:
        """The compiled lookup: returns :data:`MISSING` instead of raising."""
        return self._getter

    def exists(self, root: Any) -> bool:
        """Whether the path resolves to a value (None counts as a value)."""
        return self.get(root, _MISSING_SENTINEL) is not _MISSING_SENTINEL

    def __str__(self) -> str:
        return self.text


_MISSING_SENTINEL = object()


_SCALARS = (str, int, float, bool, list, tuple)


def _attr(value: Any, name: str) -> Any:
    """``value.name`` for models and objects, ``value[name]`` for mappings; KeyError if absent."""
    if isinstance(value, dict):
        return value[name]
    if value is None or isinstance(value, _SCALARS):
        raise KeyError(name)
    fields = getattr(type(value), "__pydantic_fields__", None)
    if fields is not None and name in fields:
        return getattr(value, name)
    attr = getattr(value, name, _MISSING)
    if attr is _MISSING or callable(attr):  # methods are not data
        raise KeyError(name)
    return attr


def _index(value: Any, i: int) -> Any:
    """``value[i]`` for tuples (lists are handled inline); KeyError otherwise."""
    if isinstance(value, list | tuple):
        return value[i]
    raise KeyError(i)


def _walk(root: Any, parts: tuple[str | int, ...]) -> Any:
    """The general lookup: any mix of mappings, sequences, models and objects."""
    value = root
    try:
        for part in parts:
            value = _index(value, part) if isinstance(part, int) else _attr(value, part)
    except (KeyError, IndexError):
        return _MISSING
    return value


def _compile(parts: tuple[str | int, ...]) -> Callable[[Any], Any]:
    """A getter specialized to ``parts``: one straight-line function, no per-part loop.

    Paths are resolved once per check per case, so this is the hot path of scoring, and
    CPython's cost is close to a fixed price per bytecode. So the generated code bets on the
    usual shape: the root is a model (or a dict) and the parts after it are dict keys and list
    indexes, each read with a bare subscript. When the bet fails (a model inside a list, a
    string where a dict was expected) the subscript raises TypeError and :func:`_walk` answers
    instead, so the result is the same either way. The generated source holds only variable
    names (k0, k1, ...); the parts themselves are bound as values, never spliced into code.
    """
    body = []
    for i, part in enumerate(parts):
        if i == 0:
            # an object's own data lives in its __dict__ (pydantic fields too); properties
            # such as Case.output are not there and go through _attr
            body += [
                "        if type(v) is dict:",
                "            v = v[k0]",
                "        else:",
                "            try:",
                "                v = v.__dict__[k0]",
                "            except (AttributeError, KeyError):",
                "                v = _attr(v, k0)",
            ]
        elif isinstance(part, int):
            body.append(f"        v = v[k{i}] if type(v) is list else _index(v, k{i})")
        elif isinstance(parts[i - 1], int):
            # a list's items may be models (trace[-1].content): check before subscripting
            body.append(f"        v = v[k{i}] if type(v) is dict else _attr(v, k{i})")
        else:
            body.append(f"        v = v[k{i}]")
    source = "\n".join(
        [
            "def getter(v):",
            "    root = v",
            "    try:",
            *body,
            "    except (KeyError, IndexError):",
            "        return _MISSING",
            "    except TypeError:",
            "        return _walk(root, parts)",
            "    return v",
        ]
    )
    namespace: dict[str, Any] = {
        "_attr": _attr,
        "_index": _index,
        "_walk": _walk,
        "_MISSING": _MISSING,
        "parts": parts,
    }
    namespace.update({f"k{i}": part for i, part in enumerate(parts)})
    exec(source, namespace)  # generated from a fixed template, see the docstring
    getter: Callable[[Any], Any] = namespace["getter"]
    return getter
