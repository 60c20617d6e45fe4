"""The base of the built-in checks: validated, frozen, usable from Python and YAML alike."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal, Self

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from ..core import MISSING as _MISSING
from ..core import Case, FieldPath, PathSyntaxError, Verdict, errored, failed, not_applicable
from ._many import Match, over_values, value_of
from ._text import Normalization, normalizer
from ._watch import Probe, model_probes

Runner = Callable[[Case], Verdict]
Getter = Callable[[Any], Any]
"""A lookup a check's logic is built with: of the case, or of a ``(case, value)`` pair."""


Missing = Literal["not_applicable", "fail", "error"]
"""What a check answers when the case lacks its expectation (``expected_path``,
``values_path``, ``reference_path``): not applicable (the default), failed, or errored."""


def absent(missing: Missing, why: str) -> Verdict:
    """The verdict for a case without its expectation, as ``missing`` asks."""
    if missing == "fail":
        return failed(why)
    if missing == "error":
        return errored(why, reason=why)
    return not_applicable(why)


def missing_needs_a_path(model: BaseModel, path: str | None, names: str) -> None:
    """Refuse ``missing`` on a check whose expectation is written in the suite."""
    if "missing" in model.model_fields_set and path is None:
        raise ValueError(f"'missing' applies to an expectation read from the case ({names})")


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

    def case_probes(self) -> list[Probe]:
        """What this check reads of a case: ``path`` and every ``*_path`` field (a run names
        those no case held, see ``checks._watch``)."""
        return list(model_probes(self))


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
    """Where the value under test lives, e.g. ``final_state.booking.time``, or where the values
    live, e.g. ``trace[kind=assistant].content`` (see :attr:`match`)."""
    match: Match = "any"
    """For a path with ``[*]`` or a filter: pass when some value passes (``any``) or only when
    every value does (``all``). A path that reaches no value fails as missing."""

    _path: FieldPath | None = None

    @field_validator("path")
    @classmethod
    def _valid_path(cls, value: str) -> str:
        return parse_path(value)

    @model_validator(mode="after")
    def _match_needs_many_values(self) -> Self:
        if "match" in self.model_fields_set and not self.field_path().many:
            raise ValueError(
                f"'match' applies to a path with [*] or a filter, such as "
                f"'trace[kind=assistant].content'; {self.path!r} has one value"
            )
        return self

    def field_path(self) -> FieldPath:
        """The parsed :attr:`path` (parsed once)."""
        private: dict[str, Any] = self.__pydantic_private__  # type: ignore[assignment]
        path: FieldPath | None = private["_path"]
        if path is None:
            path = private["_path"] = FieldPath.parse(self.path)
        return path

    def over(
        self,
        build: Callable[[Getter, Getter], Runner],
        expected: Callable[[Case], Any],
    ) -> Runner:
        """The runner of a check whose logic ``build(get, expected_of)`` makes.

        For a plain path, ``build`` gets the path's compiled getter and ``expected`` as they
        are (the hot path: nothing added). For a many-valued path, it gets getters of a
        ``(case, value)`` pair and its runner is applied to each value (see :attr:`match`).
        """
        path = self.field_path()
        if not path.many:
            return build(path.getter, expected)
        per_value = build(value_of, lambda pair: expected(pair[0]))
        return over_values(path, self.match, per_value)


class ExpectedMixin(BaseModel):
    """An expected value given literally (``value``) or by path (``expected_path``, or
    ``values_path`` as ``contains`` and ``one_of`` call it)."""

    value: Any = None
    """The expected value, written in the suite."""
    expected_path: str | None = Field(
        default=None, validation_alias=AliasChoices("expected_path", "values_path")
    )
    """Where the expected value lives, e.g. ``ground_truth.time`` (``values_path`` is accepted
    too, the name ``contains`` and ``one_of`` use)."""
    missing: Missing = "not_applicable"
    """What a case without a value at ``expected_path`` gets: ``not_applicable`` (default),
    ``fail`` or ``error``."""

    @model_validator(mode="before")
    @classmethod
    def _one_name_for_the_path(cls, data: Any) -> Any:
        if isinstance(data, dict) and "values_path" in data and "expected_path" in data:
            raise ValueError("give 'expected_path' or 'values_path', not both")
        return data

    @field_validator("expected_path")
    @classmethod
    def _valid_expected_path(cls, value: str | None) -> str | None:
        return None if value is None else parse_path(value)

    def _init_expected(self) -> None:
        given = {"value", "expected_path"} & self.model_fields_set
        if len(given) != 1:
            raise ValueError("give exactly one of 'value' or 'expected_path' (or 'values_path')")
        missing_needs_a_path(self, self.expected_path, "expected_path")

    def expected_getter(self) -> Callable[[Case], Any]:
        """A function returning the expected value (or the missing marker)."""
        if self.expected_path is None:
            value = self.value
            return lambda _case: value
        return FieldPath.parse(self.expected_path).getter

    def verdicts_when_absent(self) -> tuple[Verdict, Verdict]:
        """The verdicts for a missing value (failed) and a missing expectation (as
        :attr:`missing` asks)."""
        path: str = getattr(self, "path")  # noqa: B009 - the mixin is combined with FieldCheck
        return failed(f"{path} is missing"), absent(
            self.missing, f"no expectation at {self.expected_label()}"
        )

    def expected_label(self) -> str:
        """Where the expectation comes from, for reasons."""
        return self.expected_path or "the expected value"


def _no_expectation(_case: Case) -> Any:
    return None


NO_EXPECTATION: Callable[[Case], Any] = _no_expectation
"""The ``expected`` of :meth:`FieldCheck.over` for a check without a per-case expectation."""


class TextOptions(BaseModel):
    """What a text comparison ignores (see :data:`checks._text.Normalization`)."""

    case_insensitive: bool = False
    """Compare text without regard to case (the same as ``case`` in :attr:`normalize`)."""
    normalize: list[Normalization] = Field(default_factory=list)
    """What else to ignore in text on both sides: ``case``, ``whitespace``,
    ``thousands_separators`` (``1,234`` == ``1234``), ``punctuation``."""

    def text_normalizer(self) -> Callable[[str], str] | None:
        """One function normalising text as configured, or None when nothing is ignored."""
        chosen: list[Normalization] = [*self.normalize]
        if self.case_insensitive:
            chosen.append("case")
        return normalizer(chosen)


class ValuesOptions(BaseModel):
    """Expected values given in the suite (``values``) or read from the case (``values_path``)."""

    values: list[str | bool | int | float] | None = Field(default=None, min_length=1)
    """The expected values, written in the suite."""
    values_path: str | None = None
    """Where the case holds them, e.g. ``ground_truth.required_facts``: a list, or a single
    value. A case without them (missing, null or an empty list) is not applicable (see
    :attr:`missing`)."""
    missing: Missing = "not_applicable"
    """What a case without values at ``values_path`` gets: ``not_applicable`` (default),
    ``fail`` or ``error``."""

    @field_validator("values_path")
    @classmethod
    def _valid_values_path(cls, value: str | None) -> str | None:
        return None if value is None else parse_path(value)

    @model_validator(mode="after")
    def _one_source_of_values(self) -> Self:
        if (self.values is None) == (self.values_path is None):
            raise ValueError("give exactly one of 'values' or 'values_path'")
        missing_needs_a_path(self, self.values_path, "values_path")
        return self

    def no_values(self) -> Verdict:
        """The verdict of a case without values at :attr:`values_path` (see :attr:`missing`)."""
        return absent(self.missing, f"no values at {self.values_label()}")

    def values_label(self) -> str:
        """Where the expected values come from, for reasons."""
        return self.values_path or "the values"

    def values_getter(self) -> Callable[[Case], Any]:
        """A function returning the expected values as a list, or the missing marker."""
        if self.values_path is None:
            values = list(self.values or ())
            return lambda _case: values
        get = FieldPath.parse(self.values_path).getter

        def expected_values(case: Case) -> Any:
            found = get(case)
            if found is _MISSING or found is None or found == []:
                return _MISSING
            return list(found) if isinstance(found, list | tuple) else [found]

        return expected_values
