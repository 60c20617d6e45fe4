"""Predicates over the ordered steps of a trace: what was called, in what order, how often.

The steps each check looks for are described by a :class:`StepMatch` (``_steps.py``); the
comparison of a whole trajectory with a reference is :class:`TrajectoryMatch`
(``_trajectory_match.py``).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from ..core import Case, Verdict, failed, not_applicable, passed
from ._calls import ArgsOverride, ReferenceCall
from ._model import BuiltinCheck, Compiled, Runner
from ._steps import StepMatch
from ._trajectory_match import TrajectoryMatch

__all__ = [
    "ArgsOverride",
    "Before",
    "Count",
    "NeverAfter",
    "ReferenceCall",
    "StepMatch",
    "ToolCalled",
    "TrajectoryMatch",
    "WithinFirst",
]


def _never(match: StepMatch, case: Case) -> str:
    """``'X never happened'``, saying so when a candidate's arguments were unparsed text."""
    return f"{match.describe()} never happened{match.unparsed_note(case.trace)}"


class ToolCalled(Compiled):
    """A step matching ``step`` (usually a tool call, optionally with arguments) occurred."""

    version: ClassVar[str] = "2"  # arguments compared recursively, booleans not numbers
    type: Literal["tool_called"] = "tool_called"
    step: StepMatch
    """The step to look for."""

    def compile(self) -> Runner:
        match, find, label = self.step, self.step.finder(), self.step.describe()

        def run(case: Case) -> Verdict:
            hits = find(case)
            if isinstance(hits, Verdict):
                return hits
            if hits:
                return passed(f"{label} at step {hits[0] + 1}")
            return failed(_never(match, case))

        return run


class Before(BuiltinCheck):
    """``first`` happened before ``then``: its first occurrence precedes ``then``'s first.

    Not applicable when ``then`` never happened (unless ``then_required``).
    """

    version: ClassVar[str] = "2"
    type: Literal["before"] = "before"
    first: StepMatch
    """The step that must come first (e.g. check_availability)."""
    then: StepMatch
    """The step that must come after (e.g. book_meeting)."""
    then_required: bool = False
    """Fail, rather than not apply, when ``then`` never happened."""

    def evaluate(self, case: Case) -> Verdict:
        a, b = self.first.find(case), self.then.find(case)
        if isinstance(a, Verdict):
            return a
        if isinstance(b, Verdict):
            return b
        fd, td = self.first.describe(), self.then.describe()
        if not b:
            if self.then_required:
                return failed(f"{td} never happened")
            return not_applicable(f"{td} never happened")
        if a and a[0] < b[0]:
            return passed(f"{fd} (step {a[0] + 1}) before {td} (step {b[0] + 1})")
        if not a:
            return failed(
                f"{td} at step {b[0] + 1} without any {fd}{self.first.unparsed_note(case.trace)}"
            )
        return failed(f"{td} at step {b[0] + 1} came before {fd} at step {a[0] + 1}")


class WithinFirst(Compiled):
    """``step`` happened within the first ``n`` steps."""

    version: ClassVar[str] = "2"
    type: Literal["within_first"] = "within_first"
    step: StepMatch
    """The step to look for."""
    n: int = Field(ge=1)
    """How many leading steps to search."""

    def compile(self) -> Runner:
        match, find, label, n = self.step, self.step.finder(), self.step.describe(), self.n

        def run(case: Case) -> Verdict:
            hits = find(case)
            if isinstance(hits, Verdict):
                return hits
            if not hits:
                return failed(_never(match, case))
            i = hits[0]
            if i < n:
                return passed(f"{label} at step {i + 1} <= {n}")
            return failed(f"{label} first at step {i + 1}, after {n}")

        return run


class NeverAfter(BuiltinCheck):
    """No ``step`` after ``after`` happened, unless an ``unless`` step came in between.

    For example: never book_meeting after conflict_detected unless user_confirmed.
    """

    version: ClassVar[str] = "2"
    type: Literal["never_after"] = "never_after"
    step: StepMatch
    """The step that must not follow."""
    after: StepMatch
    """The step after which it is forbidden."""
    unless: StepMatch | None = None
    """A step that lifts the ban for what follows it (e.g. a confirmation)."""

    def evaluate(self, case: Case) -> Verdict:
        found: list[list[int]] = []
        for match in (self.step, self.after, self.unless):
            at = match.find(case) if match is not None else []
            if isinstance(at, Verdict):
                return at
            found.append(at)
        steps, trigger, lifts = set(found[0]), found[1], set(found[2])
        if not trigger:
            return not_applicable(f"{self.after.describe()} never happened")
        start = trigger[0]
        for i in range(start + 1, len(case.trace)):
            if i in lifts:
                later = [j for j in trigger if j > i]
                if not later:
                    assert self.unless is not None
                    return passed(f"{self.unless.describe()} at step {i + 1} lifted the ban")
                start = later[0]
                continue
            if i > start and i in steps:
                return failed(
                    f"{self.step.describe()} at step {i + 1} after "
                    f"{self.after.describe()} at step {start + 1}"
                )
        return passed(f"no {self.step.describe()} after {self.after.describe()}")


class Count(Compiled):
    """``step`` happened at least ``min`` and at most ``max`` times."""

    version: ClassVar[str] = "2"
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

    def compile(self) -> Runner:
        match, find, label = self.step, self.step.finder(), self.step.describe()
        low, high = self.min, self.max

        def run(case: Case) -> Verdict:
            hits = find(case)
            if type(hits) is Verdict:
                return hits
            n = len(hits)
            if low is not None and n < low:
                note = match.unparsed_note(case.trace)
                return failed(f"{label} happened {n} time(s), fewer than {low}{note}")
            if high is not None and n > high:
                return failed(f"{label} happened {n} time(s), more than {high}")
            return passed(f"{label} happened {n} time(s)")

        return run
