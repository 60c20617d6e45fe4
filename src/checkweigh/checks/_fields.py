"""Checks over field values: equality, membership, patterns, sets, numbers, sizes, schemas."""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import Field, model_validator

from ..core import MISSING, Case, Verdict, failed, passed, strict_equal
from ._contains import Contains
from ._model import (
    NO_EXPECTATION,
    Compiled,
    ExpectedMixin,
    FieldCheck,
    Getter,
    Runner,
    TextOptions,
    ValuesOptions,
    short,
)
from ._text import normalized

__all__ = [
    "Contains",
    "Equals",
    "JsonSchema",
    "Length",
    "OneOf",
    "Regex",
    "SetEquals",
    "WithinTolerance",
    "WordCount",
]


def _missing(path: str) -> Verdict:
    return failed(f"{path} is missing")


class Equals(Compiled, FieldCheck, ExpectedMixin, TextOptions):
    """The value at ``path`` equals ``value`` (or the value at ``expected_path``)."""

    type: Literal["equals"] = "equals"

    @model_validator(mode="after")
    def _check_expected(self) -> Equals:
        self._init_expected()
        return self

    def compile(self) -> Runner:
        return self.over(self._build, self.expected_getter())

    def _build(self, get: Getter, expected_of: Getter) -> Runner:
        path, norm = self.path, self.text_normalizer()
        missing, no_expectation = self.verdicts_when_absent()
        ok = passed(f"{path} == {self.expected_path or short(self.value)}")

        if norm is None:

            def run(case: Any) -> Verdict:
                actual = get(case)
                if actual is MISSING:
                    return missing
                expected = expected_of(case)
                if expected is MISSING:
                    return no_expectation
                # strict_equal, inlined: this comparison runs for most checks of most cases
                if actual == expected and (type(actual) is bool) is (type(expected) is bool):
                    return ok
                return failed(f"{path} is {short(actual)}, expected {short(expected)}")

            return run

        def run_normalized(case: Any) -> Verdict:
            actual = get(case)
            if actual is MISSING:
                return missing
            expected = expected_of(case)
            if expected is MISSING:
                return no_expectation
            if strict_equal(normalized(actual, norm), normalized(expected, norm)):
                return ok
            return failed(f"{path} is {short(actual)}, expected {short(expected)}")

        return run_normalized


_COLLECTIONS = (list, tuple, set, frozenset)


def _canonical(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return json.dumps(value, sort_keys=True, default=str)
    return value


class OneOf(Compiled, FieldCheck, ValuesOptions, TextOptions):
    """The value at ``path`` is one of ``values`` (or of the values at ``values_path``)."""

    type: Literal["one_of"] = "one_of"
    values: list[Any] | None = Field(default=None, min_length=1)
    """The allowed values."""

    def compile(self) -> Runner:
        return self.over(self._build, self.values_getter())

    def _build(self, get: Getter, allowed_of: Getter) -> Runner:
        path, label, norm = self.path, self.values_label(), self.text_normalizer()
        missing = failed(f"{path} is missing")
        no_expectation = self.no_values()
        inline = self.values_path is None

        def run(case: Any) -> Verdict:
            actual = get(case)
            if actual is MISSING:
                return missing
            allowed = allowed_of(case)
            if allowed is MISSING:
                return no_expectation
            value = normalized(actual, norm)
            if any(strict_equal(value, normalized(x, norm)) for x in allowed):
                return passed(f"{path} is one of {short(allowed) if inline else label}")
            return failed(f"{path} is {short(actual)}, expected one of {short(allowed)}")

        return run


class Regex(Compiled, FieldCheck, TextOptions):
    """The text at ``path`` matches ``pattern`` (search, or fullmatch). Normalisation applies
    to the text, not to the pattern (``case_insensitive`` also makes the pattern ignore case)."""

    type: Literal["regex"] = "regex"
    pattern: str
    """A Python regular expression."""
    fullmatch: bool = False
    """Require the whole text to match."""
    _rx: re.Pattern[str]

    @model_validator(mode="after")
    def _compile(self) -> Regex:
        folded = self.case_insensitive or "case" in self.normalize
        try:
            self._rx = re.compile(self.pattern, re.IGNORECASE if folded else 0)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {self.pattern!r}: {exc}") from None
        return self

    def compile(self) -> Runner:
        if self.field_path().many and self.match == "any":
            return self._any_text()
        return self.over(self._build, NO_EXPECTATION)

    def _any_text(self) -> Runner:
        """``match: any`` over many texts (every reply, say): the verdicts and reasons of
        :func:`over_values`, without a verdict made for each text on the way."""
        path, pattern, norm = self.field_path(), self.pattern, self.text_normalizer()
        search = self._rx.fullmatch if self.fullmatch else self._rx.search
        nothing = failed(f"{path} matched nothing")

        def run(case: Case) -> Verdict:
            found = path.locate(case)
            if not found:
                return nothing
            first = ""
            for where, value in found:
                if isinstance(value, str):
                    if search(value if norm is None else norm(value)):
                        return passed(f"{where} matches /{pattern}/")
                    if not first:
                        first = f"{where} does not match /{pattern}/"
                elif not first:
                    first = f"{where} is {type(value).__name__}, expected text"
            return failed(f"none of {len(found)} values at {path} passes; first: {first}")

        return run

    def _build(self, get: Getter, _expected: Getter) -> Runner:
        path, pattern, norm = self.path, self.pattern, self.text_normalizer()
        search = self._rx.fullmatch if self.fullmatch else self._rx.search
        # made once: on a path with many values this runs for every reply of every case
        missing = failed(f"{path} is missing")
        matches = passed(f"{path} matches /{pattern}/")
        differs = failed(f"{path} does not match /{pattern}/")

        def run(case: Any) -> Verdict:
            actual = get(case)
            if actual is MISSING:
                return missing
            if not isinstance(actual, str):
                return failed(f"{path} is {type(actual).__name__}, expected text")
            if norm is not None:
                actual = norm(actual)
            return matches if search(actual) else differs

        return run


class SetEquals(Compiled, FieldCheck, ExpectedMixin, TextOptions):
    """The list at ``path`` holds the same items as the expected list, in any order; text
    items are compared after the normalisation chosen (``case_insensitive``, ``normalize``)."""

    type: Literal["set_equals"] = "set_equals"

    @model_validator(mode="after")
    def _check_expected(self) -> SetEquals:
        self._init_expected()
        return self

    def compile(self) -> Runner:
        return self.over(self._build, self.expected_getter())

    def _build(self, get: Getter, expected_of: Getter) -> Runner:
        path, label, norm = self.path, self.expected_label(), self.text_normalizer()
        missing, no_expectation = self.verdicts_when_absent()
        ok = passed(f"{path} has the items of {label}")
        not_lists = failed(f"{path} or {label} is not a list")

        def as_set(value: Any) -> frozenset[Any] | None:
            if not isinstance(value, _COLLECTIONS):
                return None
            items = value if norm is None else [normalized(x, norm) for x in value]
            try:
                return frozenset(items)
            except TypeError:  # objects (dicts, lists) compare by their canonical JSON
                return frozenset(_canonical(x) for x in items)

        def run(case: Any) -> Verdict:
            actual = get(case)
            if actual is MISSING:
                return missing
            expected = expected_of(case)
            if expected is MISSING:
                return no_expectation
            a, e = as_set(actual), as_set(expected)
            if a is None or e is None:
                return not_lists
            if a == e:
                return ok
            extra, lacking = sorted(map(str, a - e)), sorted(map(str, e - a))
            return failed(f"{path}: unexpected {extra}, missing {lacking}")

        return run


class WithinTolerance(Compiled, FieldCheck, ExpectedMixin):
    """The number at ``path`` is within ``abs_tol``, or within ``rel_tol`` times the expected
    number, of the expected number."""

    type: Literal["within_tolerance"] = "within_tolerance"
    abs_tol: float = Field(default=0.0, ge=0)
    """Absolute tolerance."""
    rel_tol: float = Field(default=0.0, ge=0)
    """Relative tolerance, as a fraction of the expected value (0.05 = within 5%)."""

    @model_validator(mode="after")
    def _check_expected(self) -> WithinTolerance:
        self._init_expected()
        return self

    def compile(self) -> Runner:
        return self.over(self._build, self.expected_getter())

    def _build(self, get: Getter, expected_of: Getter) -> Runner:
        path, abs_tol, rel_tol = self.path, self.abs_tol, self.rel_tol
        missing, no_expectation = self.verdicts_when_absent()

        def run(case: Any) -> Verdict:
            actual = get(case)
            if actual is MISSING:
                return missing
            expected = expected_of(case)
            if expected is MISSING:
                return no_expectation
            if not _is_number(actual) or not _is_number(expected):
                return failed(f"{path} is {short(actual)}, expected a number")
            allowed = max(abs_tol, rel_tol * abs(expected))
            if abs(actual - expected) <= allowed:
                return passed(f"{path} = {actual}, within {allowed:g} of {expected}")
            return failed(f"{path} = {actual}, expected {expected} within {allowed:g}")

        return run


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


class _Bounds(Compiled, FieldCheck):
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

    def _size(self, value: Any) -> tuple[int, str] | Verdict:
        raise NotImplementedError

    def compile(self) -> Runner:
        return self.over(self._build, NO_EXPECTATION)

    def _build(self, get: Getter, _expected: Getter) -> Runner:
        path, size_of = self.path, self._size
        low, high = self.min, self.max
        missing = _missing(path)

        def run(case: Any) -> Verdict:
            actual = get(case)
            if actual is MISSING:
                return missing
            measured = size_of(actual)
            if isinstance(measured, Verdict):
                return measured
            size, unit = measured
            if low is not None and size < low:
                return failed(f"{path} has {size} {unit}, fewer than {low}")
            if high is not None and size > high:
                return failed(f"{path} has {size} {unit}, more than {high}")
            return passed(f"{path} has {size} {unit}")

        return run


class Length(_Bounds):
    """The text or list at ``path`` has between ``min`` and ``max`` characters / items."""

    type: Literal["length"] = "length"

    def _size(self, value: Any) -> tuple[int, str] | Verdict:
        if isinstance(value, str):
            return len(value), "chars"
        if isinstance(value, list | dict):
            return len(value), "items"
        return failed(f"{self.path} is {type(value).__name__}, which has no length")


class WordCount(_Bounds):
    """The text at ``path`` has between ``min`` and ``max`` words."""

    type: Literal["word_count"] = "word_count"

    def _size(self, value: Any) -> tuple[int, str] | Verdict:
        if isinstance(value, str):
            return len(value.split()), "words"
        return failed(f"{self.path} is {type(value).__name__}, expected text")


class JsonSchema(Compiled, FieldCheck):
    """The value at ``path`` (or the JSON text there) is valid against ``json_schema``."""

    type: Literal["json_schema"] = "json_schema"
    json_schema: dict[str, Any]
    """A JSON Schema (draft 2020-12 unless it names its own ``$schema``)."""
    parse_text: bool = True
    """When the value is a string, parse it as JSON first."""
    _validator: Any

    @model_validator(mode="after")
    def _compile(self) -> JsonSchema:
        import jsonschema  # 0.1 s to import: only for suites that use this check

        cls = jsonschema.validators.validator_for(self.json_schema)
        try:
            cls.check_schema(self.json_schema)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"invalid JSON schema: {exc.message}") from None
        self._validator = cls(self.json_schema)
        return self

    def compile(self) -> Runner:
        return self.over(self._build, NO_EXPECTATION)

    def _build(self, get: Getter, _expected: Getter) -> Runner:
        from jsonschema.exceptions import best_match

        path, parse_text, validator = self.path, self.parse_text, self._validator

        def run(case: Any) -> Verdict:
            actual = get(case)
            if actual is MISSING:
                return _missing(path)
            if isinstance(actual, str) and parse_text:
                try:
                    actual = json.loads(actual)
                except json.JSONDecodeError as exc:
                    return failed(f"{path} is not valid JSON: {exc.msg} at char {exc.pos}")
            error = best_match(validator.iter_errors(actual))
            if error is None:
                return passed(f"{path} is valid against the schema")
            where = "/".join(str(p) for p in error.absolute_path) or "(root)"
            return failed(f"{path} at {where}: {error.message}")

        return run
