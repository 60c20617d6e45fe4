"""YAML loading that can tell the line of every key, so errors can point at it.

Hostile documents are bounded before anything is built from them: nesting deeper than
:data:`MAX_DEPTH`, aliases that expand to more values than :data:`ALIAS_NODES` plus
:data:`ALIAS_RATIO` per value written (at most :data:`ALIAS_CAP`; the "billion laughs" bomb
needs millions), integers longer than Python converts and impossible values (a 13th month)
are one :class:`YamlSyntaxError` with the line. Merge keys (``<<: *defaults``) are accepted;
duplicate keys are not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.scanner import ScannerError

from .._text import safe_data
from ..errors import CheckweighError, InputError
from ._text import TextFileError, inert, read_text, shown

Loc = tuple[str | int, ...]

MAX_DEPTH = 100
"""The deepest nesting a document may have; no suite or case comes near it."""
ALIAS_NODES = 100_000
"""Values that aliases may add to any document ..."""
ALIAS_RATIO = 50
"""... plus this many per value written in it (cases sharing defaults through ``<<:``) ..."""
ALIAS_CAP = 5_000_000
"""... and never more than this."""
MAX_INT_DIGITS = 4300
"""Python's own limit on converting text to an integer."""

_TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep; expected a flatter document"
_MERGE_TAG = "tag:yaml.org,2002:merge"


class LineMap:
    """Line numbers (1-based) of the values in a loaded YAML document, by location.

    Lines are looked up in the document's nodes when an error asks for one, so a document
    whose aliases expand a lot costs nothing extra to load.
    """

    def __init__(self, root: yaml.Node | None = None) -> None:
        self._root = root

    def line(self, loc: Loc) -> int | None:
        """The line of ``loc`` (of its key, in a mapping), or of its nearest parent found."""
        node = self._root
        if node is None:
            return None
        line = node.start_mark.line + 1
        keys = yaml.constructor.SafeConstructor()
        for part in loc:
            if isinstance(node, yaml.MappingNode):
                # merged keys come first and later keys win, as in the loaded mapping
                for key, value in reversed(node.value):
                    if isinstance(key, yaml.ScalarNode) and (
                        loc_key(keys.construct_object(key)) == part
                    ):
                        line, node = key.start_mark.line + 1, value
                        break
                else:
                    return line
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                if not 0 <= part < len(node.value):
                    return line
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                return line
        return line


def loc_key(key: object) -> str | int:
    """A mapping key as locations hold it: text and whole numbers as they are, others as text
    (as pydantic reports a ``None`` or ``true`` key)."""
    if isinstance(key, str) or (isinstance(key, int) and not isinstance(key, bool)):
        return key
    return str(key)


class _Loader(yaml.SafeLoader):
    """A safe loader with limits on depth, alias expansion and integer size, that rejects
    duplicate keys instead of keeping the last one."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._depth = 0
        self._own = 0
        self._aliased = 0
        self._sizes: dict[int, int] = {}

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:
        # the scanner reads a whole flow collection ahead: stop '[[[[...' before the composer
        if self.flow_level >= MAX_DEPTH:
            raise ScannerError(None, None, _TOO_DEEP, self.get_mark())
        super().fetch_flow_collection_start(TokenClass)

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            node: yaml.Node = super().compose_node(parent, index)  # type: ignore[assignment]
            size = self._sizes.get(id(node))
            if size is None:
                raise ComposerError(
                    None,
                    None,
                    f"alias *{event.anchor} is used inside its own anchor",
                    event.start_mark,
                )
            # an alias shares its node; count what it adds once expanded, not what it costs here
            self._aliased += size
            limit = min(ALIAS_CAP, ALIAS_NODES + ALIAS_RATIO * self._own)
            if self._aliased > limit:
                raise ComposerError(
                    None,
                    None,
                    f"aliases expand to more than {limit:,} values; expected far fewer "
                    "(is this an alias bomb?)",
                    event.start_mark,
                )
            return node
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise ComposerError(
                None,
                None,
                _TOO_DEEP,
                self.peek_event().start_mark,  # type: ignore[no-untyped-call]
            )
        try:
            node = super().compose_node(parent, index)  # type: ignore[assignment]
        finally:
            self._depth -= 1
        self._own += 1
        self._sizes[id(node)] = 1 + self._children_size(node)
        return node

    def _children_size(self, node: yaml.Node) -> int:
        sizes = self._sizes
        if isinstance(node, yaml.MappingNode):
            _reject_duplicates(node)
            return sum(sizes[id(k)] + sizes[id(v)] for k, v in node.value)
        if isinstance(node, yaml.SequenceNode):
            return sum(sizes[id(item)] for item in node.value)
        return 0

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError) as exc:  # a 13th month, a date out of range
            raise ConstructorError(
                None, None, f"cannot read {shown(node.value, 40)}: {exc}", node.start_mark
            ) from None

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        # longer integers are refused by int() and, in base 60, would take quadratic time
        digits = sum(c.isdigit() for c in node.value)
        if digits > MAX_INT_DIGITS:
            raise ConstructorError(
                None,
                None,
                f"a number with {digits} digits; expected at most {MAX_INT_DIGITS}",
                node.start_mark,
            )
        value: int = super().construct_yaml_int(node)
        return value


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)


def _reject_duplicates(node: yaml.MappingNode) -> None:
    seen: set[tuple[str, str]] = set()
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE_TAG:
            continue
        if (key.tag, key.value) in seen:
            raise ConstructorError(None, None, f"duplicate key {shown(key.value)}", key.start_mark)
        seen.add((key.tag, key.value))


class YamlSyntaxError(CheckweighError, ValueError):
    """Malformed YAML, with the 1-based line where it was found."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


def load_yaml(text: str) -> tuple[Any, LineMap]:
    """Parse one YAML document; return the data and where each key sits.

    Raises:
        YamlSyntaxError: the text is not valid YAML, repeats a key or exceeds a limit.
    """
    try:
        loader = _Loader(text)  # reading the text already rejects control characters
        try:
            node = loader.get_single_node()
            if node is None:
                return None, LineMap()
            data = loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if problem == "found unhashable key":
            problem = "a list or mapping used as a key; expected text keys"
        if exc.context and problem.startswith("but "):  # "expected a single document, but..."
            problem = f"{exc.context}, {problem}"
        raise YamlSyntaxError(inert(problem), mark.line + 1 if mark else None) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise YamlSyntaxError(
            f"unacceptable character #x{exc.character:04x} (control characters are not "
            "allowed in YAML)",
            line,
        ) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(" ".join(str(exc).split()), None) from None
    except RecursionError:  # pragma: no cover - MAX_DEPTH stops nesting well before this
        raise YamlSyntaxError("nested too deeply", None) from None
    # a double-quoted "\ud800" is a lone surrogate: made storable where the file is read
    return safe_data(data), LineMap(node)


def read_yaml_file(
    path: Path,
    *,
    limit: int,
    what: str,
    error: type[InputError] = InputError,
    missing: str,
    unreadable: str,
    field: str | None = None,
) -> tuple[Any, LineMap]:
    """A small YAML file (a suite, a monitor, a field mapping) and where its keys sit, every
    failure as one ``error`` naming the file and, where known, the line.

    Args:
        path: the file.
        limit: its largest size in bytes.
        what: what it is, for the messages (``suite file (YAML)``).
        error: the error raised.
        missing: the message when there is no such file (``suite file not found``).
        unreadable: the message's start when it cannot be read (``cannot read suite file``).
        field: the flag or key that named the file, for the missing-file error.

    Raises:
        InputError: as ``error``: missing, unreadable, too large, not UTF-8, not YAML.
    """
    try:
        text = read_text(path, limit=limit, what=what)
    except FileNotFoundError:
        raise error(missing, file=path, field=field) from None
    except TextFileError as exc:
        raise error(str(exc), file=path, line=exc.line) from None
    except OSError as exc:
        raise error(f"{unreadable}: {exc.strerror or exc}", file=path) from None
    try:
        return load_yaml(text)
    except YamlSyntaxError as exc:
        raise error(f"invalid YAML: {exc}", file=path, line=exc.line) from None
