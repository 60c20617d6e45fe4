"""Paths inside a call's arguments (``flights[0].date``, ``passengers[*].dob``), to keep or drop.

A per-tool override lists the argument paths to compare (everything else is left out) or to
ignore (left out of the comparison). ``[*]`` stands for every item of a list. The paths are
compiled once, into a trie, when the check is built.
"""

from __future__ import annotations

import re
from typing import Any

_PART = re.compile(r"([^.\[\]]+)|\[(\d+|\*)\]")
_LEAF = "\x00leaf"
EVERY = "*"
"""The trie key standing for every item of a list."""

Trie = dict[Any, Any]
"""Nested mappings from a key (str), index (int) or :data:`EVERY` to the rest of the paths."""


def parse_arg_path(text: str) -> tuple[str | int, ...]:
    """``a.b[0].c`` -> ``('a', 'b', 0, 'c')``; ``[*]`` becomes :data:`EVERY`.

    Raises:
        ValueError: the text is not such a path.
    """
    parts: list[str | int] = []
    pos = 0
    for match in _PART.finditer(text):
        gap = text[pos : match.start()]
        name, index = match.groups()
        if gap != ("" if index is not None or pos == 0 else "."):
            raise ValueError(f"malformed argument path {text!r}")
        if index is None:
            parts.append(name)
        else:
            parts.append(EVERY if index == EVERY else int(index))
        pos = match.end()
    if not text or pos != len(text) or not parts or not isinstance(parts[0], str):
        raise ValueError(f"malformed argument path {text!r} (expected e.g. flights[0].date)")
    return tuple(parts)


def compile_paths(texts: list[str]) -> Trie:
    """One trie from several paths; a path that is a prefix of another covers it."""
    root: Trie = {}
    for text in texts:
        node = root
        for part in parse_arg_path(text):
            if _LEAF in node:
                break
            node = node.setdefault(part, {})
        else:
            node.clear()
            node[_LEAF] = True
    return root


def is_leaf(trie: Trie) -> bool:
    """Whether ``trie`` ends a path (everything below it is covered)."""
    return _LEAF in trie


def keep(value: Any, trie: Trie) -> Any:
    """A copy of ``value`` with only the paths of ``trie`` (absent ones stay absent)."""
    if _LEAF in trie:
        return value
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, sub in trie.items():
            if isinstance(key, str) and key != EVERY and key in value:
                out[key] = keep(value[key], sub)
        return out
    if isinstance(value, list):
        every = trie.get(EVERY)
        items = []
        for i, item in enumerate(value):
            sub = trie.get(i, every)
            # positions the paths do not name are kept as null so indexes stay aligned
            items.append(keep(item, sub) if sub is not None else None)
        return items
    return value


def drop(value: Any, trie: Trie) -> Any:
    """A copy of ``value`` without the paths of ``trie``."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = trie.get(key)
            if sub is None:
                out[key] = item
            elif _LEAF not in sub:
                out[key] = drop(item, sub)
        return out
    if isinstance(value, list):
        every = trie.get(EVERY)
        items = []
        for i, item in enumerate(value):
            sub = trie.get(i, every)
            if sub is None:
                items.append(item)
            elif _LEAF not in sub:
                items.append(drop(item, sub))
            # a dropped list item is left out; both sides lose it alike
        return items
    return value
