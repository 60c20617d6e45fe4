"""The base of the built-in checks: validated, frozen, usable from Python and YAML alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, field_validator

from ..core import Case, FieldPath, PathSyntaxError, Verdict
from ..core._paths import MISSING as _MISSING

Runner = Callable[[Case], Verdict]


def short(value: Any, limit: int = 60) -> str:
    """A value's repr cut to ``limit`` characters, for verdict reasons."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_path(value: str) -> str:
    """Validate a field path, keeping its text."""
    try:
        FieldPath.parse(value)
    except PathSyntaxError as exc:
        raise ValueError(str(exc)) from None
    return value


class BuiltinCheck(BaseModel):
    """Common ground of the built-in checks: strict fields, a version, compiled paths."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: ClassVar[str] = "1"
    """Bumped whenever a check's logic changes."""

    def evaluate(self, case: Case) -> Verdict:
        """Judge one case."""
        raise NotImplementedError

    def runner(self) -> Runner:
        """A function equivalent to :meth:`evaluate`; checks on the hot path return a closure
        with their settings bound (see :class:`Compiled`)."""
        return self.evaluate


class Compiled(BuiltinCheck):
    """A check that builds its logic once, as a closure, when it is validated.

    Subclasses implement :meth:`compile`; :meth:`evaluate` and :meth:`runner` use its result,
    built on first use (after every validator has run) and kept.
    """

    _run: Runner | None = None

    def compile(self) -> Runner:
        """Build the evaluation function."""
        raise NotImplementedError

    def evaluate(self, case: Case) -> Verdict:
        """Judge one case."""
        return self.runner()(case)

    def runner(self) -> Runner:
        """The compiled evaluation function."""
        private: dict[str, Any] = self.__pydantic_private__  # type: ignore[assignment]
        run: Runner | None = private["_run"]
        if run is None:
            run = private["_run"] = self.compile()
        return run


class FieldCheck(BuiltinCheck):
    """A check on the value at ``path``, optionally against another path of the case."""

    path: str
    """Where the value under test lives, e.g. ``final_state.booking.time``."""

    _path: FieldPath | None = None

    @field_validator("path")
    @classmethod
    def _valid_path(cls, value: str) -> str:
        return parse_path(value)

    def actual(self, case: Case) -> Any:
        """The value under test, or the module's missing marker."""
        # read the private slot directly: pydantic's __getattr__ for private attributes is
        # slow, and this runs once per check per case
        private: dict[str, Any] = self.__pydantic_private__  # type: ignore[assignment]
        path: FieldPath | None = private["_path"]
        if path is None:
            path = private["_path"] = FieldPath.parse(self.path)
        return path.getter(case)


def is_missing(value: Any) -> bool:
    """Whether a lookup found nothing."""
    return value is _MISSING


class ExpectedMixin(BaseModel):
    """An expected value given literally (``value``) or by path (``expected_path``)."""

    value: Any = None
    """The expected value, written in the suite."""
    expected_path: str | None = None
    """Where the expected value lives, e.g. ``ground_truth.time``."""

    _expected_path: FieldPath | None = None

    @field_validator("expected_path")
    @classmethod
    def _valid_expected_path(cls, value: str | None) -> str | None:
        return None if value is None else parse_path(value)

    def _init_expected(self) -> None:
        given = {"value", "expected_path"} & self.model_fields_set
        if len(given) != 1:
            raise ValueError("give exactly one of 'value' or 'expected_path'")
        if self.expected_path is not None:
            self._expected_path = FieldPath.parse(self.expected_path)

    def expected(self, case: Case) -> Any:
        """The expected value, or the missing marker when its path is absent."""
        path: FieldPath | None = self.__pydantic_private__["_expected_path"]  # type: ignore[index]
        if path is None:
            return self.value
        return path.get(case, _MISSING)

    def expected_getter(self) -> Callable[[Case], Any]:
        """A function returning the expected value (or the missing marker)."""
        if self.expected_path is None:
            value = self.value
            return lambda _case: value
        return FieldPath.parse(self.expected_path).getter

    def expected_label(self) -> str:
        """Where the expectation comes from, for reasons."""
        return self.expected_path or "the expected value"
