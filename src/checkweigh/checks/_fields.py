"""Checks over field values: equality, membership, patterns, sets, numbers, sizes, schemas."""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal

import jsonschema
from pydantic import Field, model_validator

from ..core import Case, Verdict, failed, not_applicable, passed
from ._model import ExpectedMixin, FieldCheck, is_missing, short


def _missing(path: str) -> Verdict:
    return failed(f"{path} is missing")


def _no_expectation(label: str) -> Verdict:
    return not_applicable(f"no expectation at {label}")


class Equals(FieldCheck, ExpectedMixin):
    """The value at ``path`` equals ``value`` (or the value at ``expected_path``)."""

    type: Literal["equals"] = "equals"
    case_insensitive: bool = False
    """Compare strings without regard to case."""

    _pass: Verdict

    @model_validator(mode="after")
    def _check_expected(self) -> Equals:
        self._init_expected()
        # one shared verdict for every pass: no allocation on the hot path
        self._pass = passed(f"{self.path} == {self.expected_path or short(self.value)}")
        return self

    def evaluate(self, case: Case) -> Verdict:
        actual = self.actual(case)
        if is_missing(actual):
            return _missing(self.path)
        expected = self.expected(case)
        if is_missing(expected):
            return _no_expectation(self.expected_label())
        a, e = actual, expected
        if self.case_insensitive and isinstance(a, str) and isinstance(e, str):
            a, e = a.casefold(), e.casefold()
        if a == e:
            return self.__pydantic_private__["_pass"]  # type: ignore[no-any-return,index]
        return failed(f"{self.path} is {short(actual)}, expected {short(expected)}")


class OneOf(FieldCheck):
    """The value at ``path`` is one of ``values``."""

    type: Literal["one_of"] = "one_of"
    values: list[Any] = Field(min_length=1)
    """The allowed values."""

    def evaluate(self, case: Case) -> Verdict:
        actual = self.actual(case)
        if is_missing(actual):
            return _missing(self.path)
        if actual in self.values:
            return passed(f"{self.path} is {short(actual)}")
        return failed(f"{self.path} is {short(actual)}, expected one of {short(self.values)}")


class Contains(FieldCheck):
    """The text (or list) at ``path`` contains ``any`` / ``all`` / ``none`` of ``values``."""

    type: Literal["contains"] = "contains"
    values: list[str] = Field(min_length=1)
    """Substrings (for text) or items (for a list) to look for."""
    mode: Literal["any", "all", "none"] = "any"
    """Pass when any, all or none of the values occur."""
    case_insensitive: bool = False
    """Match text without regard to case."""

    def evaluate(self, case: Case) -> Verdict:
        actual = self.actual(case)
        if is_missing(actual):
            return _missing(self.path)
        if isinstance(actual, str):
            hay: Any = actual.casefold() if self.case_insensitive else actual
        elif isinstance(actual, list):
            hay = [
                x.casefold() if self.case_insensitive and isinstance(x, str) else x for x in actual
            ]
        else:
            return failed(f"{self.path} is {type(actual).__name__}, expected text or a list")
        found = [v for v in self.values if (v.casefold() if self.case_insensitive else v) in hay]
        if self.mode == "any":
            ok = bool(found)
        elif self.mode == "all":
            ok = len(found) == len(self.values)
        else:
            ok = not found
        missing = [v for v in self.values if v not in found]
        if ok:
            return passed(f"{self.path} contains {short(found)}" if found else "none found")
        if self.mode == "none":
            return failed(f"{self.path} contains {short(found)}")
        return failed(f"{self.path} lacks {short(missing)}")


class Regex(FieldCheck):
    """The text at ``path`` matches ``pattern`` (search, or fullmatch)."""

    type: Literal["regex"] = "regex"
    pattern: str
    """A Python regular expression."""
    fullmatch: bool = False
    """Require the whole text to match."""
    case_insensitive: bool = False
    """Ignore case."""
    _rx: re.Pattern[str]

    @model_validator(mode="after")
    def _compile(self) -> Regex:
        try:
            self._rx = re.compile(self.pattern, re.IGNORECASE if self.case_insensitive else 0)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {self.pattern!r}: {exc}") from None
        return self

    def evaluate(self, case: Case) -> Verdict:
        actual = self.actual(case)
        if is_missing(actual):
            return _missing(self.path)
        if not isinstance(actual, str):
            return failed(f"{self.path} is {type(actual).__name__}, expected text")
        m = self._rx.fullmatch(actual) if self.fullmatch else self._rx.search(actual)
        if m:
            return passed(f"{self.path} matches /{self.pattern}/")
        return failed(f"{self.path} does not match /{self.pattern}/")


class SetEquals(FieldCheck, ExpectedMixin):
    """The list at ``path`` holds the same items as the expected list, in any order."""

    type: Literal["set_equals"] = "set_equals"
    case_insensitive: bool = False
    """Compare string items without regard to case."""

    _pass: Verdict

    @model_validator(mode="after")
    def _check_expected(self) -> SetEquals:
        self._init_expected()
        self._pass = passed(f"{self.path} has the items of {self.expected_label()}")
        return self

    def _as_set(self, value: Any) -> frozenset[Any] | None:
        if not isinstance(value, list | tuple | set | frozenset):
            return None
        if self.case_insensitive:
            return frozenset(x.casefold() if isinstance(x, str) else x for x in value)
        return frozenset(value)

    def evaluate(self, case: Case) -> Verdict:
        actual = self.actual(case)
        if is_missing(actual):
            return _missing(self.path)
        expected = self.expected(case)
        if is_missing(expected):
            return _no_expectation(self.expected_label())
        a, e = self._as_set(actual), self._as_set(expected)
        if a is None or e is None:
            return failed(f"{self.path} or {self.expected_label()} is not a list")
        if a == e:
            return self.__pydantic_private__["_pass"]  # type: ignore[no-any-return,index]
        extra, lacking = sorted(map(str, a - e)), sorted(map(str, e - a))
        return failed(f"{self.path}: unexpected {extra}, missing {lacking}")


class WithinTolerance(FieldCheck, ExpectedMixin):
    """The number at ``path`` is within ``abs_tol`` or ``rel_tol`` of the expected number."""

    type: Literal["within_tolerance"] = "within_tolerance"
    abs_tol: float = Field(default=0.0, ge=0)
    """Absolute tolerance."""
    rel_tol: float = Field(default=0.0, ge=0)
    """Relative tolerance (a fraction of the expected value)."""

    @model_validator(mode="after")
    def _check_expected(self) -> WithinTolerance:
        self._init_expected()
        return self

    def evaluate(self, case: Case) -> Verdict:
        actual = self.actual(case)
        if is_missing(actual):
            return _missing(self.path)
        expected = self.expected(case)
        if is_missing(expected):
            return _no_expectation(self.expected_label())
        if not _is_number(actual) or not _is_number(expected):
            return failed(f"{self.path} is {short(actual)}, expected a number")
        if math.isclose(actual, expected, rel_tol=self.rel_tol, abs_tol=self.abs_tol):
            return passed(f"{self.path} = {actual} ~ {expected}")
        return failed(f"{self.path} = {actual}, expected {expected} within tolerance")


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


class _Bounds(FieldCheck):
    min: int | None = Field(default=None, ge=0)
    """Smallest allowed size."""
    max: int | None = Field(default=None, ge=0)
    """Largest allowed size."""

    @model_validator(mode="after")
    def _check_bounds(self) -> _Bounds:
        if self.min is None and self.max is None:
            raise ValueError("give 'min', 'max' or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")
        return self

    def _within(self, size: int, unit: str) -> Verdict:
        if self.min is not None and size < self.min:
            return failed(f"{self.path} has {size} {unit}, fewer than {self.min}")
        if self.max is not None and size > self.max:
            return failed(f"{self.path} has {size} {unit}, more than {self.max}")
        return passed(f"{self.path} has {size} {unit}")


class Length(_Bounds):
    """The text or list at ``path`` has between ``min`` and ``max`` characters / items."""

    type: Literal["length"] = "length"

    def evaluate(self, case: Case) -> Verdict:
        actual = self.actual(case)
        if is_missing(actual):
            return _missing(self.path)
        if not isinstance(actual, str | list | dict):
            return failed(f"{self.path} is {type(actual).__name__}, which has no length")
        return self._within(len(actual), "items" if not isinstance(actual, str) else "chars")


class WordCount(_Bounds):
    """The text at ``path`` has between ``min`` and ``max`` words."""

    type: Literal["word_count"] = "word_count"

    def evaluate(self, case: Case) -> Verdict:
        actual = self.actual(case)
        if is_missing(actual):
            return _missing(self.path)
        if not isinstance(actual, str):
            return failed(f"{self.path} is {type(actual).__name__}, expected text")
        return self._within(len(actual.split()), "words")


class JsonSchema(FieldCheck):
    """The value at ``path`` (or the JSON text there) is valid against ``json_schema``."""

    type: Literal["json_schema"] = "json_schema"
    json_schema: dict[str, Any]
    """A JSON Schema (draft 2020-12 unless it names its own ``$schema``)."""
    parse_text: bool = True
    """When the value is a string, parse it as JSON first."""
    _validator: Any

    @model_validator(mode="after")
    def _compile(self) -> JsonSchema:
        cls = jsonschema.validators.validator_for(self.json_schema)
        try:
            cls.check_schema(self.json_schema)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"invalid JSON schema: {exc.message}") from None
        self._validator = cls(self.json_schema)
        return self

    def evaluate(self, case: Case) -> Verdict:

        actual = self.actual(case)
        if is_missing(actual):
            return _missing(self.path)
        if isinstance(actual, str) and self.parse_text:
            try:
                actual = json.loads(actual)
            except json.JSONDecodeError as exc:
                return failed(f"{self.path} is not valid JSON: {exc.msg} at char {exc.pos}")
        error = jsonschema.exceptions.best_match(self._validator.iter_errors(actual))
        if error is None:
            return passed(f"{self.path} is valid against the schema")
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return failed(f"{self.path} at {where}: {error.message}")
