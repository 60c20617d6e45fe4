"""Expected calls, argument rules and the pairing of a trace's calls with the reference.

Pairing is a maximum bipartite matching (augmenting paths), so which of several equal calls
pairs with which never changes the verdict.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import orjson
from pydantic import BaseModel, ConfigDict, model_validator

from ..core import Step
from ._argpaths import Trie, compile_paths, drop, keep
from ._matching import align, augment
from ._steps import call_label, parse_json_text
from ._values import ArgMode, count_differences, first_difference, matches

TrajectoryMode = Literal["strict", "unordered", "subset", "superset"]
"""How the trace's calls compare with the reference calls."""

_ARG_KEYS = ("arguments", "kwargs", "args")
_new = tuple.__new__


class ReferenceCall(BaseModel):
    """One expected call written in a suite: a tool name and, optionally, its arguments.

    A bare string is shorthand for ``{name: ...}`` (any arguments match). ``kwargs``
    (tau-bench's spelling) or ``args`` are accepted for ``arguments``; arguments may also be
    given as JSON text.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """The tool's name."""
    arguments: dict[str, Any] | None = None
    """The expected arguments; left out, the call matches whatever its arguments."""

    @model_validator(mode="before")
    @classmethod
    def _spellings(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"name": data}
        if not isinstance(data, dict):
            return data
        given = [k for k in _ARG_KEYS if k in data]
        if len(given) > 1:
            raise ValueError(f"give one of {', '.join(given)}")
        if given and given[0] != "arguments":
            data = {**data, "arguments": data[given[0]]}
            del data[given[0]]
        if isinstance(data.get("arguments"), str):
            data = {**data, "arguments": parse_json_text(data["arguments"])}
        return data


class ArgsOverride(BaseModel):
    """How one tool's arguments are compared, overriding the check's ``arguments_mode``.

    In a suite: a mode (``subset``), a list of argument paths to compare (``[reservation_id,
    flights[*].date]``; everything else is left out), or a mapping with ``mode``, either
    ``compare`` or ``ignore`` (paths left out of the comparison), and ``unordered``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: ArgMode | None = None
    """The argument mode for this tool (default: the check's)."""
    compare: list[str] | None = None
    """Only these argument paths are compared (absent on both sides counts as equal)."""
    ignore: list[str] | None = None
    """These argument paths are left out of the comparison."""
    unordered: list[str] | None = None
    """The lists at these argument paths compare in any order (added to the check's own
    ``unordered``), e.g. ``[item_ids, new_item_ids]``."""

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"mode": data}
        if isinstance(data, list):
            return {"compare": data}
        return data

    @model_validator(mode="after")
    def _check(self) -> ArgsOverride:
        if self.compare is not None and self.ignore is not None:
            raise ValueError("give 'compare' or 'ignore', not both")
        given = (self.mode, self.compare, self.ignore, self.unordered)
        if all(g is None for g in given):
            raise ValueError("give a mode, 'compare', 'ignore' or 'unordered'")
        compile_paths([*(self.compare or []), *(self.ignore or []), *(self.unordered or [])])
        return self

    def rule(self, default: ArgMode, unordered: list[str] | None = None) -> ArgRule:
        """The compiled rule; ``unordered``: the check's own unordered paths."""
        loose = [*(unordered or []), *(self.unordered or [])]
        return ArgRule(
            self.mode or default,
            compile_paths(self.compare) if self.compare is not None else None,
            compile_paths(self.ignore) if self.ignore is not None else None,
            compile_paths(loose) if loose else None,
        )


@dataclass(frozen=True, slots=True)
class ArgRule:
    """A compiled argument comparison: a mode, the paths kept or dropped first, and the paths
    whose lists compare in any order."""

    mode: ArgMode
    keep: Trie | None = None
    drop: Trie | None = None
    unordered: Trie | None = None

    def project(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The part of ``arguments`` this rule compares."""
        if self.keep is not None:
            kept: dict[str, Any] = keep(arguments, self.keep)
            return kept
        if self.drop is not None:
            dropped: dict[str, Any] = drop(arguments, self.drop)
            return dropped
        return arguments

    def sides(self, got: Any, want: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """Both argument objects as compared: projected, and the actual one's unordered lists
        put in the order that pairs their items with the expected ones."""
        want = self.project(want)
        if not isinstance(got, dict):
            return got, want
        got = self.project(got)
        if self.unordered is not None:
            got = align(got, want, self.unordered, self.mode)
        return got, want


class Expected(NamedTuple):
    """A reference call, normalised: name, arguments (None: not compared) and its own list of
    argument paths to compare (tau2-bench's ``compare_args``), if any."""

    name: str
    arguments: dict[str, Any] | None
    keep: Trie | None = None

    def label(self) -> str:
        """``name(arg=..., ...)``."""
        return call_label(self.name, self.arguments)


class Actual(NamedTuple):
    """A call of the trace under comparison: its position, name and arguments."""

    step: int
    name: str
    arguments: dict[str, Any] | str

    @classmethod
    def of(cls, index: int, step: Step) -> Actual:
        """The call made at ``trace[index]``."""
        args = step.arguments
        name = step.name
        # tuple.__new__ skips the NamedTuple's Python-level __new__: made for every call of
        # every case a trajectory check reads
        return _new(cls, (index, step.kind if name is None else name, {} if args is None else args))

    def label(self) -> str:
        """``name(arg=..., ...)``."""
        return call_label(self.name, self.arguments)


@functools.lru_cache(maxsize=256)
def _compare_paths(paths: tuple[str, ...]) -> Trie:
    return compile_paths(list(paths))


def parse_reference(
    items: Any, wanted: Callable[[str], bool] | None = None
) -> list[Expected] | str:
    """Reference calls from a case: names, ``{name, arguments}`` (or ``kwargs`` / ``args``,
    arguments as an object or JSON text), or OpenAI's ``{function: {name, arguments}}``.
    Other keys (``action_id``, ``requestor``, ...) are ignored; tau2-bench's ``compare_args``
    limits the comparison to those argument paths. Only the calls whose name is ``wanted``
    are kept (an item left out is not looked at further). Returns why when ``items`` is not
    that."""
    if not isinstance(items, list):
        return f"reference is {type(items).__name__}, expected a list of calls"
    calls: list[Expected] = []
    for name, call in _parsed_items(items):
        if name is None or wanted is None or wanted(name):
            if isinstance(call, str):
                return call
            calls.append(call)
    return calls


# the reference last parsed, and its items: a case's trajectory checks usually read the same
# reference (``ground_truth.actions``), so each case parses it once. One slot holding a
# (list, size, items) tuple, replaced whole, so threads never see half an update; a list
# changed in place to the same size is not expected of a case's ground truth.
_LAST: list[tuple[list[Any], int, list[tuple[str | None, Expected | str]]] | None] = [None]


def _parsed_items(items: list[Any]) -> list[tuple[str | None, Expected | str]]:
    """Each item's name (None when it has none) and its call, or why it is not one."""
    last = _LAST[0]
    if last is not None and last[0] is items and last[1] == len(items):
        return last[2]
    parsed = [_parse_item(i, item) for i, item in enumerate(items)]
    _LAST[0] = (items, len(items), parsed)
    return parsed


def _parse_item(i: int, item: Any) -> tuple[str | None, Expected | str]:
    if isinstance(item, str):
        return item, Expected(item, None)
    if isinstance(item, dict) and isinstance(item.get("function"), dict):
        item = item["function"]
    name = item.get("name") if isinstance(item, dict) else None
    if not isinstance(name, str) or not name:
        return None, f"reference item {i} is not a name or a {{name, arguments}} object"
    assert isinstance(item, dict)
    given = [k for k in _ARG_KEYS if k in item]
    args = parse_json_text(item[given[0]]) if len(given) == 1 else None
    if len(given) > 1 or not (args is None or isinstance(args, dict)):
        return name, f"reference item {i} ({name}): arguments are not one JSON object"
    paths = item.get("compare_args")
    trie = None
    if paths is not None:
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            return name, f"reference item {i} ({name}): compare_args is not a list of paths"
        try:
            trie = _compare_paths(tuple(paths))
        except ValueError as exc:
            return name, f"reference item {i} ({name}): {exc}"
    return name, Expected(name, args, trie)


class Pairing:
    """How a trace's calls pair with the reference's under one argument policy."""

    def __init__(self, default: ArgRule, overrides: dict[str, ArgRule]) -> None:
        self.default = default
        self.overrides = overrides
        self._plain = default.unordered is None  # the default rule compares arguments as-is

    def _sides(self, a: Actual, e: Expected) -> tuple[ArgRule, Any, Any] | None:
        """The rule and the two projected argument objects; None when not compared."""
        if e.arguments is None:
            return None
        rule = self.overrides.get(e.name, self.default)
        if rule.mode == "ignore":
            return None
        got, want = a.arguments, e.arguments
        if e.keep is not None:
            want = keep(want, e.keep)
            got = keep(got, e.keep) if isinstance(got, dict) else got
        got, want = rule.sides(got, want)
        return rule, got, want

    def compatible(self, a: Actual, e: Expected) -> bool:
        """Whether call ``a`` counts as the expected call ``e``."""
        if a.name != e.name:
            return False
        if e.arguments is None:
            return True
        if e.keep is None and self._plain and e.name not in self.overrides:
            # the usual case: the default rule has no paths to keep or drop
            got, want, mode = a.arguments, e.arguments, self.default.mode
            return mode == "ignore" or (type(got) is dict and matches(got, want, mode))
        sides = self._sides(a, e)
        if sides is None:
            return True
        rule, got, want = sides
        if isinstance(got, str):
            return False
        return matches(got, want, rule.mode)

    def why_not(self, a: Actual, e: Expected) -> str:
        """Why call ``a`` (of the same name) is not ``e``: the first differing path."""
        sides = self._sides(a, e)
        if sides is None:
            return "matches"
        rule, got, want = sides
        if isinstance(got, str):
            return f"has unparsed arguments {_short_text(got)} (not a JSON object)"
        diff = first_difference(got, want, rule.mode)
        return "matches" if diff is None else f"differs at {diff.describe()}"

    def distance(self, a: Actual, e: Expected) -> int:
        """How many argument paths differ (unparsed arguments count as far)."""
        sides = self._sides(a, e)
        if sides is None:
            return 0
        rule, got, want = sides
        if isinstance(got, str):
            return 1000
        return count_differences(got, want, rule.mode)

    def pair(self, actual: Sequence[Actual], expected: Sequence[Expected]) -> list[int | None]:
        """For each actual call, the index of the reference call it pairs with (or None), in a
        maximum matching."""
        by_name: dict[str, list[int]] = {}
        for j, e in enumerate(expected):
            by_name.setdefault(e.name, []).append(j)
        compatible = self.compatible
        # calls that are the same (a tool polled a thousand times) share one list of partners;
        # a short trace is not worth the keys
        rows: dict[tuple[str, bytes], list[int]] = {}
        edges: list[list[int]] = []
        keyed = len(actual) > _KEYED_FROM
        for a in actual:
            key = _call_key(a) if keyed else None
            row = rows.get(key) if key is not None else None
            if row is None:
                row = [j for j in by_name.get(a.name, ()) if compatible(a, expected[j])]
                if key is not None:
                    rows[key] = row
            edges.append(row)
        owner: list[int | None] = [None] * len(expected)
        # first each call takes a free partner, then the calls left over look for augmenting
        # paths: a maximum matching either way, without long paths through equal calls
        left = []
        for i, row in enumerate(edges):
            free = next((j for j in row if owner[j] is None), None)
            if free is not None:
                owner[free] = i
            elif row:
                left.append(i)
        for i in left:
            augment(i, edges, owner)
        partner: list[int | None] = [None] * len(actual)
        for j, holder in enumerate(owner):
            if holder is not None:
                partner[holder] = j
        return partner

    def compare(
        self,
        mode: TrajectoryMode,
        actual: Sequence[Actual],
        expected: Sequence[Expected],
        unselected: Callable[[str], str],
    ) -> str | None:
        """None when the calls match in ``mode``; else the reason, naming the first missing,
        extra or mismatched call. ``unselected(name)`` says why a call of that name that the
        trace has was left out of the comparison (e.g. it errored), or ''."""
        if mode == "strict":
            return self._strict(actual, expected, unselected)
        partner = self.pair(actual, expected)
        taken = {j for j in partner if j is not None}
        missing = [j for j in range(len(expected)) if j not in taken]
        extra = [i for i, j in enumerate(partner) if j is None]
        check_missing = mode in ("unordered", "superset")
        check_extra = mode in ("unordered", "subset")
        if not (check_missing and missing) and not (check_extra and extra):
            return None
        counts = []
        if check_missing:
            counts.append(f"{len(missing)} missing")
        if check_extra:
            counts.append(f"{len(extra)} extra")
        if check_missing and missing:
            first = self._missing(expected[missing[0]], actual, partner, unselected)
        else:
            first = self._extra(actual[extra[0]], expected)
        return f"{first} ({mode}: {', '.join(counts)})"

    def _missing(
        self,
        e: Expected,
        actual: Sequence[Actual],
        partner: list[int | None],
        unselected: Callable[[str], str],
    ) -> str:
        same = [i for i, a in enumerate(actual) if a.name == e.name]
        head = f"missing call {e.label()}"
        if not same:
            note = unselected(e.name)
            return f"{head}: {note}" if note else f"{head}: no {e.name} call"
        # the closest call: fewest differing paths, a free one before a paired one
        best = min(same, key=lambda i: (self.distance(actual[i], e), partner[i] is not None, i))
        why = self.why_not(actual[best], e)
        if why == "matches":
            return f"{head}: every matching {e.name} call is paired with another expected call"
        return f"{head}: closest call (step {actual[best].step + 1}) {why}"

    def _extra(self, a: Actual, expected: Sequence[Expected]) -> str:
        head = f"extra call {a.label()} at step {a.step + 1}"
        same = [e for e in expected if e.name == a.name]
        if not same:
            return head
        best = min(same, key=lambda e: self.distance(a, e))
        why = self.why_not(a, best)
        if why == "matches":
            return f"{head}: every expected {a.name} call is paired with another call"
        return f"{head}: {why}"

    def _strict(
        self,
        actual: Sequence[Actual],
        expected: Sequence[Expected],
        unselected: Callable[[str], str],
    ) -> str | None:
        for n, (a, e) in enumerate(zip(actual, expected, strict=False)):
            if a.name != e.name:
                return (
                    f"call {n + 1} (step {a.step + 1}) is {a.label()}, expected {e.label()} "
                    "(strict)"
                )
            if not self.compatible(a, e):
                return f"call {n + 1} (step {a.step + 1}) {a.name} {self.why_not(a, e)} (strict)"
        if len(actual) > len(expected):
            a = actual[len(expected)]
            return f"extra call {a.label()} at step {a.step + 1} (strict)"
        if len(expected) > len(actual):
            e = expected[len(actual)]
            note = unselected(e.name)
            return f"missing call {e.label()}{': ' + note if note else ''} (strict)"
        return None


def _short_text(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(text[:37]) + "..."


_KEYED_FROM = 32
"""Calls in a trace from which equal calls share their partners (see :meth:`Pairing.pair`)."""


def _call_key(a: Actual) -> tuple[str, bytes] | None:
    """A key equal for calls with the same name and the same arguments (None: not keyed)."""
    try:
        return a.name, orjson.dumps(a.arguments, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # a big integer or a key orjson does not take: compared on its own
        return None
