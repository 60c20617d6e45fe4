"""The base of the built-in checks: validated, frozen, usable from Python and YAML alike."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, field_validator

from ..core import Case, FieldPath, PathSyntaxError, Verdict

_MISSING = object()


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


class FieldCheck(BuiltinCheck):
    """A check on the value at ``path``, optionally against another path of the case."""

    path: str
    """Where the value under test lives, e.g. ``final_state.booking.time``."""

    _path: FieldPath

    @field_validator("path")
    @classmethod
    def _valid_path(cls, value: str) -> str:
        return parse_path(value)

    def model_post_init(self, context: Any, /) -> None:
        self._path = FieldPath.parse(self.path)

    def actual(self, case: Case) -> Any:
        """The value under test, or the module's missing marker."""
        # read the private slot directly: pydantic's __getattr__ for private attributes is
        # slow, and this runs once per check per case
        path: FieldPath = self.__pydantic_private__["_path"]  # type: ignore[index]
        return path.get(case, _MISSING)


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

    def expected_label(self) -> str:
        """Where the expectation comes from, for reasons."""
        return self.expected_path or "the expected value"
