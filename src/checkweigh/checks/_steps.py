"""Which steps of a trace count: the step matcher shared by every trajectory check."""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, PrivateAttr, field_validator, model_validator
from pydantic_core import from_json

from ..core import MISSING, Case, FieldPath, Step, StepKind, Verdict, failed, not_applicable
from ._model import parse_path, short
from ._values import ArgMode, matches

StepTest = Callable[[Step], bool]
"""A compiled predicate over one step."""

_GLOB_CHARS = frozenset("*?[")
_CALL_KINDS = ("tool_call", "event")
_NAME_MEMO = 4096


def call_label(name: str, arguments: Any, limit: int = 70) -> str:
    """``book_flight(origin='SFO', date='2024-05-18', ...)``, cut to about ``limit`` chars."""
    if not isinstance(arguments, dict) or not arguments:
        return name if arguments is None or arguments == {} else f"{name}({short(arguments, 30)})"
    shown: list[str] = []
    size = len(name) + 2
    for key, value in arguments.items():
        item = f"{key}={short(value, 30)}"
        if shown and size + len(item) > limit:
            shown.append("...")
            break
        shown.append(item)
        size += len(item) + 2
    return f"{name}({', '.join(shown)})"


def name_test(names: list[str], regex: str | None) -> Callable[[str | None], bool]:
    """A test on a step's name: any of ``names`` (exact, or a glob such as ``get_*``), or a
    full match of ``regex``. Answers for patterns are remembered per name: a trace repeats the
    same few tool names, so each is matched once."""
    exact = frozenset(n for n in names if not _GLOB_CHARS & set(n))
    globs = [fnmatch.translate(n) for n in names if _GLOB_CHARS & set(n)]
    parts = [*globs, *([f"(?:{regex})\\Z"] if regex is not None else [])]
    if not parts:
        return exact.__contains__
    rx = re.compile("|".join(f"(?:{p})" for p in parts))
    seen: dict[str | None, bool] = {}

    def test(name: str | None) -> bool:
        known = seen.get(name)
        if known is None:
            known = name in exact or (name is not None and rx.match(name) is not None)
            if len(seen) < _NAME_MEMO:
                seen[name] = known
        return known

    return test


def parse_json_text(value: Any) -> Any:
    """JSON text as its value (tool results are often logged as text); anything else as is."""
    if isinstance(value, str):
        try:
            return from_json(value)
        except ValueError:
            return value
    return value


class StepMatch(BaseModel):
    """Which steps count: by name (a name, a list, a glob or a regex), kind, outcome (errored
    or not), result, arguments (given, or taken from the case) and content.

    Every given criterion must hold. In a suite a bare string is shorthand for ``{name: ...}``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | list[str] | None = None
    """The tool's or event's name; a list of names; or a glob such as ``update_*``."""
    name_regex: str | None = None
    """Or: a regular expression the whole name must match, e.g. ``(book|cancel)_.*``."""
    kind: StepKind | None = None
    """The step kind (user, assistant, tool_call, system, event)."""
    error: bool | None = None
    """``true``: only steps that raised an error; ``false``: only steps that did not."""
    arguments: dict[str, Any] | None = None
    """Arguments the step must have been called with, compared by ``arguments_mode``."""
    arguments_path: str | None = None
    """Or: where the case holds the expected arguments, e.g. ``ground_truth.expected_args``."""
    arguments_mode: ArgMode = "superset"
    """How the step's arguments compare with the expected ones: ``superset`` (default: at
    least these, recursively; other arguments may be present), ``exact``, ``subset`` or
    ``ignore``."""
    result: Any = None
    """A value the step's result must contain: objects match recursively as a superset (the
    result may hold more), other values by equality. A result logged as JSON text is parsed."""
    result_contains: str | None = None
    """A substring of the step's result (of its JSON text when it is structured)."""
    content: str | None = None
    """A regular expression the step's content must contain."""

    _test: StepTest | None = PrivateAttr(default=None)
    _loose: StepTest | None = PrivateAttr(default=None)
    _tester: Callable[[Case], StepTest | Verdict] | None = PrivateAttr(default=None)
    _names: Callable[[str | None], bool] | None = PrivateAttr(default=None)
    _finder: Callable[[Case], list[int] | Verdict] | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        return {"name": data} if isinstance(data, str | list) else data

    @field_validator("name")
    @classmethod
    def _valid_names(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list) and not value:
            raise ValueError("give at least one name")
        for name in [value] if isinstance(value, str) else value or []:
            if not name:
                raise ValueError("a name cannot be empty")
        return value

    @field_validator("arguments_path")
    @classmethod
    def _valid_path(cls, value: str | None) -> str | None:
        return None if value is None else parse_path(value)

    @model_validator(mode="after")
    def _compile(self) -> StepMatch:
        criteria: tuple[Any, ...] = (self.name, self.name_regex, self.kind, self.error)
        criteria += (self.arguments, self.arguments_path, self.result_contains, self.content)
        if all(c is None for c in criteria) and "result" not in self.model_fields_set:
            raise ValueError(
                "a step match needs at least one of name, kind, name_regex, error, arguments, "
                "arguments_path, result, result_contains, content"
            )
        if self.name is not None and self.name_regex is not None:
            raise ValueError("give 'name' or 'name_regex', not both")
        if self.arguments is not None and self.arguments_path is not None:
            raise ValueError("give 'arguments' or 'arguments_path', not both")
        loose = self._loose_tests()
        self._loose = _all(loose)
        if self.arguments_path is not None:
            path = FieldPath.parse(self.arguments_path)
            self._tester = self._case_tester(path, self._loose)
        else:
            if self.arguments is not None:
                self._test = _all([*loose, _arguments_test(self.arguments, self.arguments_mode)])
            else:
                self._test = self._loose
            test = self._test
            self._tester = lambda _case: test
        return self

    def _case_tester(
        self, path: FieldPath, loose: StepTest
    ) -> Callable[[Case], StepTest | Verdict]:
        where, mode = self.arguments_path, self.arguments_mode
        missing = not_applicable(f"no expected arguments at {where}")
        get = path.getter

        def tester(case: Case) -> StepTest | Verdict:
            expected = get(case)
            if expected is MISSING or expected is None:
                return missing
            expected = parse_json_text(expected)
            if not isinstance(expected, dict):
                return failed(
                    f"expected arguments at {where} are {type(expected).__name__}, "
                    "expected an object"
                )
            by_args = _arguments_test(expected, mode)
            return lambda s: loose(s) and by_args(s)

        return tester

    def _loose_tests(self) -> list[StepTest]:
        """Every test but the arguments' (name first: it rules out most steps cheapest)."""
        tests: list[StepTest] = []
        if self.name is not None or self.name_regex is not None:
            names = [self.name] if isinstance(self.name, str) else self.name or []
            by_name = name_test(names, self._regex(self.name_regex, "name_regex"))
            self._names = by_name
            tests.append(lambda s: by_name(s.name))
        if self.kind is not None:
            kind = self.kind
            tests.append(lambda s: s.kind == kind)
        if self.error is not None:
            if self.error:
                tests.append(lambda s: s.error is not None)
            else:
                tests.append(lambda s: s.error is None)
        if "result" in self.model_fields_set:
            want = self.result
            tests.append(lambda s: matches(parse_json_text(s.result), want, "superset"))
        if self.result_contains is not None:
            needle = self.result_contains
            tests.append(lambda s: needle in _result_text(s.result))
        if self.content is not None:
            rx = re.compile(self._regex(self.content, "content") or "")
            tests.append(lambda s: rx.search(s.content or "") is not None)
        return tests

    @staticmethod
    def _regex(pattern: str | None, field: str) -> str | None:
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(
                    f"{field}: invalid regular expression {pattern!r}: {exc}"
                ) from None
        return pattern

    def __eq__(self, other: object) -> bool:
        # the settings decide equality, not the compiled tests
        if not isinstance(other, StepMatch):
            return NotImplemented
        return self.__dict__ == other.__dict__ and self.model_fields_set == other.model_fields_set

    def __hash__(self) -> int:
        return hash(repr(self))

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy, validated again so its compiled tests follow its own settings."""
        data = {k: getattr(self, k) for k in self.model_fields_set}
        return self.model_validate({**data, **(update or {})})

    @property
    def names_only(self) -> Callable[[str | None], bool] | None:
        """The name test alone (None when no name is given): what a trajectory's reference is
        filtered by."""
        private: dict[str, Any] = self.__pydantic_private__  # type: ignore[assignment]
        names: Callable[[str | None], bool] | None = private["_names"]
        return names

    def tester(self) -> Callable[[Case], StepTest | Verdict]:
        """A function giving the step test for a case (or why there is none for that case:
        the expected arguments at ``arguments_path`` are missing or not an object). Checks bind
        it once; it does the per-case work only when arguments come from the case."""
        # read the private slot directly: pydantic's __getattr__ for private attributes is slow
        private: dict[str, Any] = self.__pydantic_private__  # type: ignore[assignment]
        tester: Callable[[Case], StepTest | Verdict] = private["_tester"]
        return tester

    def finder(self) -> Callable[[Case], list[int] | Verdict]:
        """A function giving the positions of a case's matching steps (see :meth:`tester`).

        With a name criterion, only the steps of matching names are tested: the names of a
        trace are indexed once per case and shared by every matcher (see :func:`positions`)."""
        private: dict[str, Any] = self.__pydantic_private__  # type: ignore[assignment]
        made: Callable[[Case], list[int] | Verdict] | None = private["_finder"]
        if made is None:
            made = private["_finder"] = self._make_finder()
        return made

    def _make_finder(self) -> Callable[[Case], list[int] | Verdict]:
        tester = self.tester()
        names = self.names_only
        if names is not None and self._by_name_alone():

            def find_by_name(case: Case) -> list[int] | Verdict:
                return list(positions(case.trace, names))

            return find_by_name

        def find(case: Case) -> list[int] | Verdict:
            test = tester(case)
            if type(test) is Verdict:
                return test
            trace = case.trace
            if names is None:
                return [i for i, s in enumerate(trace) if test(s)]  # type: ignore[operator]
            return [i for i in positions(trace, names) if test(trace[i])]  # type: ignore[operator]

        return find

    def _by_name_alone(self) -> bool:
        """Whether the name is the only criterion (then the name index answers alone)."""
        others: tuple[object, ...] = (self.kind, self.error, self.arguments)
        others += (self.arguments_path, self.result_contains, self.content)
        return all(c is None for c in others) and "result" not in self.model_fields_set

    def matches(self, step: Step) -> bool:
        """Whether ``step`` is one of the steps this describes (arguments given inline)."""
        return self._static()(step)

    def indices(self, trace: list[Step]) -> list[int]:
        """Positions of the matching steps (arguments given inline)."""
        test = self._static()
        return [i for i, s in enumerate(trace) if test(s)]

    def _static(self) -> StepTest:
        if self._test is None:
            raise ValueError(f"{self.describe()} takes its arguments from the case: use for_case")
        return self._test

    def for_case(self, case: Case) -> StepTest | Verdict:
        """The test for ``case``'s steps (see :meth:`tester`)."""
        return self.tester()(case)

    def find(self, case: Case) -> list[int] | Verdict:
        """Positions of the steps of ``case`` that match (or why the question does not arise)."""
        return self.finder()(case)

    def unparsed_note(self, trace: list[Step]) -> str:
        """``'; step 4 has unparsed arguments ...'`` when a step that would match but for its
        arguments has arguments that are not a JSON object (so they could not be compared)."""
        if self.arguments is None and self.arguments_path is None:
            return ""
        if self.arguments_mode == "ignore" or self._loose is None:
            return ""
        for i, step in enumerate(trace):
            if isinstance(step.arguments, str) and self._loose(step):
                return (
                    f"; step {i + 1} {step.label} has unparsed arguments "
                    f"{short(step.arguments, 40)} (not a JSON object)"
                )
        return ""

    def describe(self) -> str:
        """A short label such as ``book_meeting(duration=30)`` or ``update_* (succeeded)``."""
        if isinstance(self.name, list):
            label = "|".join(self.name)
        elif self.name is not None:
            label = self.name
        elif self.name_regex is not None:
            label = f"/{self.name_regex}/"
        else:
            label = self.kind or "step"
        if self.arguments:
            label = call_label(label, self.arguments, 80)
        elif self.arguments_path is not None:
            label += f"(arguments from {self.arguments_path})"
        if self.content:
            label += f" ~/{self.content}/"
        if self.result_contains is not None:
            label += f" result~{short(self.result_contains, 30)}"
        if "result" in self.model_fields_set:
            label += f" result={short(self.result, 30)}"
        if self.error is not None:
            label += " (errored)" if self.error else " (succeeded)"
        return label


# the trace last read: its list, its length, and each name's positions. The checks of a case
# look for steps by name many times over the same trace; one slot holding a whole tuple,
# replaced at once, so threads never see half an update (a trace appended to in place, as a
# conversation is, has a new length and is read afresh)
_LAST: list[tuple[list[Step], int, dict[str | None, list[int]], frozenset[str | None]] | None]
_LAST = [None]
# which of a set of distinct names a name test accepts: traces of one suite share the same
# few sets of tool names, so each test answers for a set once (bounded: cleared when full)
_WANTED: dict[tuple[Callable[[str | None], bool], frozenset[str | None]], tuple[str | None, ...]]
_WANTED = {}
_NONE: list[int] = []


def positions(trace: list[Step], names: Callable[[str | None], bool]) -> list[int]:
    """The positions, in order, of the steps whose name passes ``names``. The list may be
    shared: it is not to be changed."""
    last = _LAST[0]
    if last is not None and last[0] is trace and last[1] == len(trace):
        _, _, index, distinct = last
    else:
        index = {}
        for i, step in enumerate(trace):
            at = index.get(step.name)
            if at is None:
                index[step.name] = [i]
            else:
                at.append(i)
        distinct = frozenset(index)
        _LAST[0] = (trace, len(trace), index, distinct)
    key = (names, distinct)
    wanted = _WANTED.get(key)
    if wanted is None:
        wanted = tuple(name for name in distinct if names(name))
        if len(_WANTED) >= _NAME_MEMO:
            _WANTED.clear()
        _WANTED[key] = wanted
    if len(wanted) == 1:
        return index[wanted[0]]
    if not wanted:
        return _NONE
    return sorted(i for name in wanted for i in index[name])


def _all(tests: list[StepTest]) -> StepTest:
    if not tests:
        return lambda _s: True
    if len(tests) == 1:
        return tests[0]
    if len(tests) == 2:
        first, second = tests
        return lambda s: first(s) and second(s)
    chain = tuple(tests)
    return lambda s: all(t(s) for t in chain)


def _arguments_test(expected: dict[str, Any], mode: ArgMode) -> StepTest:
    def test(step: Step) -> bool:
        args = step.arguments
        if args is None:
            if step.kind not in _CALL_KINDS:  # a message has no arguments to compare
                return False
            args = {}
        elif not isinstance(args, dict):  # text that is not a JSON object
            return mode == "ignore"
        return matches(args, expected, mode)

    return test


def _result_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    if result is None:
        return ""
    return json.dumps(result, ensure_ascii=False, default=str)
