"""Predicates over the ordered steps of a trace: what was called, in what order, how often."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..core import Case, FieldPath, Step, StepKind, Verdict, failed, not_applicable, passed
from ._model import BuiltinCheck, parse_path, short

_TOOL_KINDS: tuple[StepKind, ...] = ("tool_call",)


class StepMatch(BaseModel):
    """Which steps count: by name (tool or event), kind, argument subset and content pattern.

    In a suite a bare string is shorthand for ``{name: ...}``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    """The tool's or event's name."""
    kind: StepKind | None = None
    """The step kind (user, assistant, tool_call, system, event)."""
    arguments: dict[str, Any] | None = None
    """Arguments that must be present with these values (others may be present too)."""
    content: str | None = None
    """A regular expression the step's content must contain."""
    _rx: re.Pattern[str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        return {"name": data} if isinstance(data, str) else data

    @model_validator(mode="after")
    def _compile(self) -> StepMatch:
        if not (self.name or self.kind or self.arguments or self.content):
            raise ValueError("a step match needs at least one of name, kind, arguments, content")
        if self.content is not None:
            try:
                self._rx = re.compile(self.content)
            except re.error as exc:
                raise ValueError(f"invalid regular expression {self.content!r}: {exc}") from None
        return self

    def matches(self, step: Step) -> bool:
        """Whether ``step`` is one of the steps this describes."""
        if self.name is not None and step.name != self.name:
            return False
        if self.kind is not None and step.kind != self.kind:
            return False
        if self.arguments is not None:
            args = step.arguments
            if not isinstance(args, dict):  # none, or text that is not a JSON object
                return False
            if any(k not in args or args[k] != v for k, v in self.arguments.items()):
                return False
        return not (self._rx is not None and not self._rx.search(step.content or ""))

    def indices(self, trace: list[Step]) -> list[int]:
        """Positions of the matching steps."""
        return [i for i, s in enumerate(trace) if self.matches(s)]

    def describe(self) -> str:
        """A short label such as ``book_meeting(duration=30)``."""
        label = self.name or self.kind or "step"
        if self.arguments:
            label += "(" + ", ".join(f"{k}={v!r}" for k, v in self.arguments.items()) + ")"
        if self.content:
            label += f" ~/{self.content}/"
        return label


class ToolCalled(BuiltinCheck):
    """A step matching ``step`` (usually a tool call, optionally with arguments) occurred."""

    type: Literal["tool_called"] = "tool_called"
    step: StepMatch
    """The step to look for."""

    def evaluate(self, case: Case) -> Verdict:
        hits = self.step.indices(case.trace)
        if hits:
            return passed(f"{self.step.describe()} at step {hits[0] + 1}")
        return failed(f"{self.step.describe()} never happened")


class Before(BuiltinCheck):
    """``first`` happened before ``then``: its first occurrence precedes ``then``'s first.

    Not applicable when ``then`` never happened (unless ``then_required``).
    """

    type: Literal["before"] = "before"
    first: StepMatch
    """The step that must come first (e.g. check_availability)."""
    then: StepMatch
    """The step that must come after (e.g. book_meeting)."""
    then_required: bool = False
    """Fail, rather than not apply, when ``then`` never happened."""

    def evaluate(self, case: Case) -> Verdict:
        a, b = self.first.indices(case.trace), self.then.indices(case.trace)
        fd, td = self.first.describe(), self.then.describe()
        if not b:
            if self.then_required:
                return failed(f"{td} never happened")
            return not_applicable(f"{td} never happened")
        if a and a[0] < b[0]:
            return passed(f"{fd} (step {a[0] + 1}) before {td} (step {b[0] + 1})")
        if not a:
            return failed(f"{td} at step {b[0] + 1} without any {fd}")
        return failed(f"{td} at step {b[0] + 1} came before {fd} at step {a[0] + 1}")


class WithinFirst(BuiltinCheck):
    """``step`` happened within the first ``n`` steps."""

    type: Literal["within_first"] = "within_first"
    step: StepMatch
    """The step to look for."""
    n: int = Field(ge=1)
    """How many leading steps to search."""

    def evaluate(self, case: Case) -> Verdict:
        hits = self.step.indices(case.trace)
        if hits and hits[0] < self.n:
            return passed(f"{self.step.describe()} at step {hits[0] + 1} <= {self.n}")
        if hits:
            return failed(f"{self.step.describe()} first at step {hits[0] + 1}, after {self.n}")
        return failed(f"{self.step.describe()} never happened")


class NeverAfter(BuiltinCheck):
    """No ``step`` after ``after`` happened, unless an ``unless`` step came in between.

    For example: never book_meeting after conflict_detected unless user_confirmed.
    """

    type: Literal["never_after"] = "never_after"
    step: StepMatch
    """The step that must not follow."""
    after: StepMatch
    """The step after which it is forbidden."""
    unless: StepMatch | None = None
    """A step that lifts the ban for what follows it (e.g. a confirmation)."""

    def evaluate(self, case: Case) -> Verdict:
        trace = case.trace
        trigger = self.after.indices(trace)
        if not trigger:
            return not_applicable(f"{self.after.describe()} never happened")
        start = trigger[0]
        for i in range(start + 1, len(trace)):
            if self.unless is not None and self.unless.matches(trace[i]):
                later = [j for j in self.after.indices(trace) if j > i]
                if not later:
                    return passed(f"{self.unless.describe()} at step {i + 1} lifted the ban")
                start = later[0]
                continue
            if i > start and self.step.matches(trace[i]):
                return failed(
                    f"{self.step.describe()} at step {i + 1} after "
                    f"{self.after.describe()} at step {start + 1}"
                )
        return passed(f"no {self.step.describe()} after {self.after.describe()}")


class Count(BuiltinCheck):
    """``step`` happened at least ``min`` and at most ``max`` times."""

    type: Literal["count"] = "count"
    step: StepMatch
    """The step to count."""
    min: int | None = Field(default=None, ge=0)
    """At least this many times."""
    max: int | None = Field(default=None, ge=0)
    """At most this many times."""

    @model_validator(mode="after")
    def _bounds(self) -> Count:
        if self.min is None and self.max is None:
            raise ValueError("give 'min', 'max' or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")
        return self

    def evaluate(self, case: Case) -> Verdict:
        n = len(self.step.indices(case.trace))
        label = self.step.describe()
        if self.min is not None and n < self.min:
            return failed(f"{label} happened {n} time(s), fewer than {self.min}")
        if self.max is not None and n > self.max:
            return failed(f"{label} happened {n} time(s), more than {self.max}")
        return passed(f"{label} happened {n} time(s)")


class TrajectoryMatch(BuiltinCheck):
    """The names of the trace's steps of ``kinds`` match ``reference`` in the given ``mode``.

    strict: same sequence; unordered: same multiset; subset: every step taken is in the
    reference; superset: every reference step was taken (extra steps allowed).
    """

    type: Literal["trajectory_match"] = "trajectory_match"
    reference: list[str] | None = None
    """The expected names, in order."""
    reference_path: str | None = None
    """Or: where the case holds them, e.g. ``ground_truth.tools``."""
    mode: Literal["strict", "unordered", "subset", "superset"] = "strict"
    """How to compare."""
    kinds: list[StepKind] = Field(default_factory=lambda: list(_TOOL_KINDS))
    """Which step kinds make up the trajectory."""
    _ref_path: FieldPath | None = None

    @model_validator(mode="after")
    def _one_reference(self) -> TrajectoryMatch:
        if (self.reference is None) == (self.reference_path is None):
            raise ValueError("give exactly one of 'reference' or 'reference_path'")
        if self.reference_path is not None:
            self._ref_path = FieldPath.parse(parse_path(self.reference_path))
        return self

    def evaluate(self, case: Case) -> Verdict:
        ref: Any = self.reference
        if self._ref_path is not None:
            ref = self._ref_path.get(case, None)
            if ref is None:
                return not_applicable(f"no reference at {self.reference_path}")
        if not isinstance(ref, list):
            return failed(f"reference is {type(ref).__name__}, expected a list of names")
        actual = [s.label for s in case.trace if s.kind in self.kinds]
        if self.mode == "strict":
            ok = actual == ref
        elif self.mode == "unordered":
            ok = Counter(actual) == Counter(ref)
        elif self.mode == "subset":
            ok = set(actual) <= set(ref)
        else:
            ok = set(ref) <= set(actual)
        if ok:
            return passed(f"trajectory {short(actual)} matches ({self.mode})")
        return failed(
            f"trajectory {short(actual, 100)} vs reference {short(ref, 100)} ({self.mode})"
        )
