"""Field paths such as ``final_state.booking.participants``, ``trace[-1].content`` or, with
many values, ``trace[*].content`` and ``trace[kind=assistant].content``."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ._path_select import (
    Each,
    PathSyntaxError,
    Selector,
    fan_out,
    parse_bracket,
    syntax_error,
)

__all__ = ["MISSING", "Each", "FieldPath", "PathSyntaxError"]

_NAME = re.compile(r"[^.\[\]]+")
_MISSING = object()
MISSING: Any = _MISSING
"""What :attr:`FieldPath.getter` returns for a path that does not resolve."""

Part = str | int | Each
"""One segment of a path: a name, an index, or ``[*]`` / a filter."""


@dataclass(frozen=True, slots=True)
class FieldPath:
    """A parsed, reusable field path. Resolve it with :meth:`get`.

    A path with ``[*]`` or a filter (:attr:`many`) resolves to the list of every value it
    reaches, missing and null ones skipped, or to nothing (missing) when it reaches none;
    :meth:`locate` also says where each value was found.
    """

    text: str
    parts: tuple[Part, ...]
    _getter: Callable[[Any], Any] = field(default=None, compare=False, repr=False)  # type: ignore[assignment]
    _many: bool = field(default=False, compare=False, repr=False)
    _plan: tuple[_Step, ...] = field(default=(), compare=False, repr=False)
    # the last root a many-valued path was resolved on, and what it found: the checks of one
    # case often read the same conversation path (every assistant reply, say), and a parsed
    # path is shared by text (see parse), so the case's checks resolve it once. One slot
    # holding a (root, head, size, found) tuple, replaced whole, so threads never see half an
    # update.
    _memo: list[tuple[Any, Any, int, list[tuple[str, Any]]] | None] = field(
        default_factory=lambda: [None], compare=False, repr=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "_many", any(type(p) is Each for p in self.parts))
        if self._getter is None:
            if self._many:
                object.__setattr__(self, "_plan", _plan(self.parts))
                object.__setattr__(self, "_getter", self._values)
            else:
                object.__setattr__(self, "_getter", _compile(self.parts))

    @classmethod
    def parse(cls, text: str) -> FieldPath:
        """Parse ``a.b[0].c`` or ``a[kind=x].b``; raise :class:`PathSyntaxError` (one line,
        naming the path and the position) on malformed text.

        Paths are immutable, so equal text gives the same shared object."""
        if cls is FieldPath:
            return _parse_shared(text)
        return cls._parse(text)

    @classmethod
    def _parse(cls, text: str) -> FieldPath:
        if not text or text != text.strip():
            raise PathSyntaxError(f"empty or padded field path {text!r}")
        parts: list[Part] = []
        pos = 0
        while pos < len(text):
            if pos and text[pos] == "[":
                part, pos = parse_bracket(text, pos)
                parts.append(part)
                continue
            if pos:
                if text[pos] != ".":
                    raise syntax_error(text, pos, "'.' or '[' before a name")
                pos += 1
            match = _NAME.match(text, pos)
            if match is None:
                raise syntax_error(text, pos, "a name")
            parts.append(match.group())
            pos = match.end()
        return cls(text, tuple(parts))

    @property
    def many(self) -> bool:
        """Whether the path has ``[*]`` or a filter, and so resolves to a list of values."""
        return self._many

    def locate(self, root: Any) -> list[tuple[str, Any]]:
        """Every value the path reaches, with where it was found (``trace[3].content``); for a
        plain path, its one value (or nothing)."""
        if not self._many:
            value = self._getter(root)
            return [] if value is _MISSING else [(self.text, value)]
        plan = self._plan
        head: Any = _MISSING
        if plan[0][0] is None:  # a path starts with a name: its first run is a plain lookup
            _, get, text = plan[0]
            head = get(root)
            # the memo holds while the case and the container the path starts in are the same
            # objects of the same size (a trace appended to in place is read afresh)
            size = len(head) if type(head) is list or type(head) is dict else -1
            memo = self._memo[0]
            if memo is not None and memo[0] is root and memo[1] is head and memo[2] == size:
                return memo[3]
            found: list[tuple[str, Any]] = (
                [] if head is _MISSING or head is None else [(text, head)]
            )
            plan = plan[1:]
        else:  # pragma: no cover - the parser makes every path start with a name
            found = [("", root)]
        for tests, get, text in plan:
            step: list[tuple[str, Any]] = []
            if tests is not None:
                for where, value in found:
                    step += [(where + w, x) for w, x in tests(value)]
            else:
                for where, value in found:
                    x = get(value)
                    if x is not _MISSING and x is not None:
                        step.append((where + text, x))
            found = step
        if head is not _MISSING:
            self._memo[0] = (root, head, size, found)
        return found

    def _values(self, root: Any) -> Any:
        values = [x for _, x in self.locate(root)]
        return values if values else _MISSING

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


@lru_cache(maxsize=4096)
def _parse_shared(text: str) -> FieldPath:
    return FieldPath._parse(text)


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


def _walk(root: Any, parts: tuple[Any, ...]) -> Any:
    """The general lookup: any mix of mappings, sequences, models and objects."""
    value = root
    try:
        for part in parts:
            value = _index(value, part) if isinstance(part, int) else _attr(value, part)
    except (KeyError, IndexError):
        return _MISSING
    return value


FanOut = Callable[[Any], list[tuple[str, Any]]]
"""A filter (or ``[*]``) ready to run: the items it keeps, with their place as path text."""

_Step = tuple[FanOut | None, Callable[[Any], Any], str]
"""One step of a many-valued lookup: a fan-out, or a run of names and indexes (its compiled
getter and its text)."""


def _plan(parts: tuple[Part, ...]) -> tuple[_Step, ...]:
    """The lookup of a many-valued path as steps: each run of plain parts becomes one compiled
    getter (the same straight-line code as a plain path), each filter field one too."""
    steps: list[_Step] = []
    run: list[str | int] = []

    def flush() -> None:
        if run:
            text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in run)
            if not steps:  # the path's first name has no dot before it
                text = text[1:]
            steps.append((None, _compile_any(tuple(run)), text))
            run.clear()

    for part in parts:
        if isinstance(part, Each):
            flush()
            steps.append((_fan_out(part), _no_getter, ""))
        else:
            run.append(part)
    flush()
    return tuple(steps)


def _fan_out(part: Each) -> FanOut:
    """The filter as one function; the usual one, a field equal to a text on the items of a
    list (``trace[kind=assistant]``), as a single comprehension."""
    tests: Selector = tuple((_compile_any(t.field), t.predicate(_MISSING)) for t in part.tests)
    if len(part.tests) != 1:
        return lambda value: fan_out(value, tests)
    (test,) = part.tests
    if len(test.field) != 1 or not (test.quoted or isinstance(test.literal, str)):
        return lambda value: fan_out(value, tests)
    name, raw = test.field[0], test.raw
    # the same answers as the general path: a dict's key or an object's attribute (a missing
    # one reads as None, and a method is never equal to a text), compared with the text
    if test.negated:

        def differs(value: Any) -> list[tuple[str, Any]]:
            if type(value) is not list:
                return fan_out(value, tests)
            return [
                (f"[{k}]", x)
                for k, x in enumerate(value)
                if x is not None
                and (x.get(name) if type(x) is dict else getattr(x, name, None)) != raw
            ]

        return differs

    def equals(value: Any) -> list[tuple[str, Any]]:
        if type(value) is not list:
            return fan_out(value, tests)
        return [  # a null item reads as None, which no text equals
            (f"[{k}]", x)
            for k, x in enumerate(value)
            if (x.get(name) if type(x) is dict else getattr(x, name, None)) == raw
        ]

    return equals


def _no_getter(value: Any) -> Any:
    return value


def _compile_any(parts: tuple[str | int, ...]) -> Callable[[Any], Any]:
    """A compiled getter that may start with an index (the items of a list are often lists)."""
    if isinstance(parts[0], int):
        return lambda value: _walk(value, parts)
    return _compile(parts)


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
