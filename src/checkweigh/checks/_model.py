"""The base of the built-in checks: validated, frozen, usable from Python and YAML alike."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, field_validator

from ..core import Case, FieldPath, PathSyntaxError, Verdict, failed, not_applicable
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

    _CACHES: ClassVar[tuple[str, ...]] = ("_run", "_path")

    def __eq__(self, other: object) -> bool:
        # settings decide equality; the private caches filled on first use do not
        if not isinstance(other, BaseModel):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((type(self), tuple(repr(v) for v in self.__dict__.values())))

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; caches built from the old settings are dropped so the copy judges by its own."""
        copy = super().model_copy(update=update, deep=deep)
        private = copy.__pydantic_private__
        if private:
            for name in self._CACHES:
                if name in private:
                    private[name] = None
        return copy

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

    @field_validator("expected_path")
    @classmethod
    def _valid_expected_path(cls, value: str | None) -> str | None:
        return None if value is None else parse_path(value)

    def _init_expected(self) -> None:
        given = {"value", "expected_path"} & self.model_fields_set
        if len(given) != 1:
            raise ValueError("give exactly one of 'value' or 'expected_path'")

    def expected_getter(self) -> Callable[[Case], Any]:
        """A function returning the expected value (or the missing marker)."""
        if self.expected_path is None:
            value = self.value
            return lambda _case: value
        return FieldPath.parse(self.expected_path).getter

    def lookups(self) -> tuple[Callable[[Case], Any], Callable[[Case], Any], Verdict, Verdict]:
        """What a compiled comparison needs: the actual and expected getters, and the verdicts
        for a missing value (failed) and a missing expectation (not applicable)."""
        path: str = getattr(self, "path")  # noqa: B009 - the mixin is combined with FieldCheck
        return (
            FieldPath.parse(path).getter,
            self.expected_getter(),
            failed(f"{path} is missing"),
            not_applicable(f"no expectation at {self.expected_label()}"),
        )

    def expected_label(self) -> str:
        """Where the expectation comes from, for reasons."""
        return self.expected_path or "the expected value"
