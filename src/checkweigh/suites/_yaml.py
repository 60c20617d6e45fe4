"""YAML loading that remembers the line of every key, so errors can point at it."""

from __future__ import annotations

from typing import Any

import yaml

Loc = tuple[str | int, ...]


class LineMap:
    """Line numbers (1-based) of the values in a loaded YAML document, by location."""

    def __init__(self) -> None:
        self._lines: dict[Loc, int] = {}

    def add(self, loc: Loc, line: int) -> None:
        """Record where ``loc`` sits."""
        self._lines.setdefault(loc, line)

    def line(self, loc: Loc) -> int | None:
        """The line of ``loc``, or of its nearest recorded parent."""
        loc = tuple(loc)
        while loc:
            if loc in self._lines:
                return self._lines[loc]
            loc = loc[:-1]
        return self._lines.get((), None)

    def shifted(self, prefix: Loc) -> LineMap:
        """A view of the entries under ``prefix``, relative to it."""
        out = LineMap()
        n = len(prefix)
        for loc, ln in self._lines.items():
            if loc[:n] == prefix:
                out.add(loc[n:], ln)
        return out


def _walk(node: yaml.Node, loc: Loc, lines: LineMap) -> None:
    lines.add(loc, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                lines.add((*loc, key.value), key.start_mark.line + 1)
                _walk(value, (*loc, key.value), lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*loc, i), lines)


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that rejects duplicate keys instead of keeping the last one."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    loader.flatten_mapping(node)
    return dict(loader.construct_pairs(node))


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)


class YamlSyntaxError(ValueError):
    """Malformed YAML, with the 1-based line where it was found."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


def load_yaml(text: str) -> tuple[Any, LineMap]:
    """Parse one YAML document; return the data and where each key sits.

    Raises:
        YamlSyntaxError: the text is not valid YAML, or repeats a key.
    """
    lines = LineMap()
    try:
        node = yaml.compose(text, Loader=_UniqueKeyLoader)
        if node is None:
            return None, lines
        _walk(node, (), lines)
        loader = _UniqueKeyLoader(text)
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        return _raise(problem, mark.line + 1 if mark else None)
    except yaml.YAMLError as exc:
        return _raise(str(exc), None)
    return data, lines


def _raise(message: str, line: int | None) -> tuple[Any, LineMap]:
    raise YamlSyntaxError(message, line)
