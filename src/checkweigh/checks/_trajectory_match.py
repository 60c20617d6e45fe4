"""``trajectory_match``: the trace's calls against reference calls, with their arguments."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from ..core import Case, FieldPath, Step, StepKind, Verdict, failed, not_applicable, passed
from ._calls import (
    Actual,
    ArgsOverride,
    Expected,
    Pairing,
    ReferenceCall,
    TrajectoryMode,
    parse_reference,
)
from ._model import BuiltinCheck, parse_path, short
from ._steps import StepMatch
from ._values import ArgMode

_TOOL_KINDS: tuple[StepKind, ...] = ("tool_call",)


class TrajectoryMatch(BuiltinCheck):
    """The trace's calls (steps of ``kinds``, filtered by ``select``) match the ``reference``
    calls in ``mode``, their arguments compared by ``arguments_mode`` and ``overrides``.

    strict: the same calls in the same order; unordered: the same calls in any order (a
    multiset: repeats count); subset: every call made is in the reference (nothing unexpected);
    superset: every reference call was made (extra calls allowed). Calls pair one to one by a
    maximum matching, so the order of equal calls never changes the verdict. A reference call
    given by name alone matches any arguments.
    """

    version: ClassVar[str] = "2"

    type: Literal["trajectory_match"] = "trajectory_match"
    reference: list[ReferenceCall] | None = None
    """The expected calls, in order: names, or ``{name, arguments}``."""
    reference_path: str | None = None
    """Or: where the case holds them, e.g. ``ground_truth.actions`` (names, ``{name,
    arguments}``, tau-bench's ``{name, kwargs}`` or OpenAI's ``{function: {name,
    arguments}}``)."""
    mode: TrajectoryMode = "strict"
    """How to compare the sequences."""
    arguments_mode: ArgMode = "exact"
    """How a call's arguments compare with the reference's: ``exact``, ``ignore``, ``subset``
    (the call's arguments are a subset of the reference's) or ``superset`` (at least the
    reference's); objects nested at any depth are compared the same way."""
    overrides: dict[str, ArgsOverride] = Field(default_factory=dict)
    """Per tool name: an argument mode, a list of argument paths to compare, or ``{mode,
    compare | ignore}``."""
    select: StepMatch | None = None
    """Which of the trace's steps count (e.g. ``{name: 'update_*', error: false}``); its name
    criterion filters the reference too."""
    kinds: list[StepKind] = Field(default_factory=lambda: list(_TOOL_KINDS))
    """Which step kinds make up the trajectory."""

    _ref_path: FieldPath | None = None
    _inline: list[Expected] | None = None
    _pairing: Pairing | None = None

    @model_validator(mode="after")
    def _one_reference(self) -> TrajectoryMatch:
        if (self.reference is None) == (self.reference_path is None):
            raise ValueError("give exactly one of 'reference' or 'reference_path'")
        if self.reference_path is not None:
            self._ref_path = FieldPath.parse(parse_path(self.reference_path))
        else:
            assert self.reference is not None
            parsed = parse_reference([r.model_dump() for r in self.reference])
            assert not isinstance(parsed, str)  # validated above
            self._inline = self._filtered(parsed)
        rules = {name: o.rule(self.arguments_mode) for name, o in self.overrides.items()}
        self._pairing = Pairing(ArgsOverride(mode=self.arguments_mode).rule("exact"), rules)
        return self

    def _filtered(self, calls: list[Expected]) -> list[Expected]:
        by_name = self.select.names_only if self.select is not None else None
        return calls if by_name is None else [c for c in calls if by_name(c.name)]

    def evaluate(self, case: Case) -> Verdict:
        expected = self._inline
        if expected is None:
            assert self._ref_path is not None
            ref: Any = self._ref_path.get(case, None)
            if ref is None:
                return not_applicable(f"no reference at {self.reference_path}")
            parsed = parse_reference(ref)
            if isinstance(parsed, str):
                return failed(parsed)
            expected = self._filtered(parsed)
        trace = case.trace
        kinds = self.kinds
        test = self.select.for_case(case) if self.select is not None else None
        if isinstance(test, Verdict):
            return test
        if test is None:
            actual = [Actual.of(i, s) for i, s in enumerate(trace) if s.kind in kinds]
        else:
            actual = [Actual.of(i, s) for i, s in enumerate(trace) if s.kind in kinds and test(s)]
        assert self._pairing is not None

        def unselected(name: str) -> str:
            return _left_out(trace, kinds, name, actual)

        why = self._pairing.compare(self.mode, actual, expected, unselected)
        if why is None:
            return passed(f"trajectory {short([a.name for a in actual])} matches ({self.mode})")
        return failed(why)


def _left_out(trace: list[Step], kinds: list[StepKind], name: str, taken: list[Actual]) -> str:
    """Why a step named ``name`` was not compared (it errored, or the selection left it out)."""
    counted = {a.step for a in taken}
    for i, step in enumerate(trace):
        if step.label == name and step.kind in kinds and i not in counted:
            if step.error is not None:
                return f"{name} at step {i + 1} errored ({short(step.error, 40)}), not counted"
            return f"{name} at step {i + 1} was not selected"
    return ""
