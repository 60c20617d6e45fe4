"""The common ground of judge checks: one class is both the suite entry and the behaviour.

A judge check is a validated model (its fields are its YAML keys) whose
``async evaluate(case, judge)`` receives the run's judge when it evaluates; the engine finds
it needs a judge from that signature. It may answer one verdict or several named ones
(a ``Mapping[str, Verdict]``, its own under :data:`~checkweigh.checks.OVERALL`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..checks import Probe, model_probes
from ..core import MISSING, Case, FieldPath, Verdict, errored
from ._answers import AnswerError
from ._context import ContextLimitError
from ._metered import BudgetSpent
from ._model import JudgeError, JudgeModel
from ._view import TraceView


def judge_failure(exc: JudgeError | AnswerError) -> Verdict:
    """The errored verdict of a judge call that failed or an answer that did not fit (never
    read as "no"); a prompt over the judge's context names it as its reason, a call past
    the run's judge budget gives "budget"."""
    if isinstance(exc, BudgetSpent):
        return errored(str(exc), reason="budget")
    if isinstance(exc, ContextLimitError):
        return errored(str(exc), reason=str(exc))
    if isinstance(exc, JudgeError):
        return errored(str(exc), reason="judge call failed")
    return errored(str(exc), reason="judge answer invalid")


def _held(path: FieldPath) -> Callable[[Case], bool]:
    get = path.getter

    def held(case: Case) -> bool:
        value = get(case)
        return value is not MISSING and value is not None

    return held


class Trust(BaseModel):
    """What a judge check must show against people's labels before a gate may rest on it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_kappa: float | None = Field(default=None, ge=-1.0, le=1.0)
    """The lowest Cohen's kappa between the judge and the labels a gate accepts."""
    min_labels: int | None = Field(default=None, ge=1)
    """The fewest labelled executions (of this run's verdicts) a gate accepts."""


class JudgedCheck(BaseModel):
    """Base of the built-in judge checks: strict frozen fields and a versioned ``evaluate``
    that asks the judge it is given. Subclasses set ``type`` and implement :meth:`evaluate`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    trust: Trust | None = None
    """Agreement with people's labels that gates resting on this check require (else they
    are not decided); None: gates read it as they read any check."""

    trace: TraceView | None = None
    """What of the case the judge is shown (``last_turns``, ``steps`` or
    ``tool_calls_only``, ``max_steps``, ``max_chars``, ``fields``); None: every step and the
    whole final state, as before. Set, it becomes part of the check's version."""

    decides_pass: ClassVar[bool] = False
    """True for checks that decide a case's pass/fail beside the score (expected outcomes)."""

    @model_validator(mode="after")
    def _view_in_formatter(self) -> JudgedCheck:
        # the formatter renders the case for every request of every check type, and its
        # ident is in the version and the cache key: the view goes there, and only when set
        formatter = getattr(self, "formatter", None)
        if self.trace is not None and formatter is not None and formatter.view != self.trace:
            object.__setattr__(self, "formatter", replace(formatter, view=self.trace))
        return self

    @property
    def version(self) -> str:
        """The check's logic and what the judge reads, recorded with every run."""
        raise NotImplementedError

    def verdict_names(self) -> tuple[str, ...]:
        """The named verdicts it answers besides its own (rubrics may weigh ``check.name``)."""
        return ()

    def case_probes(self) -> list[Probe]:
        """The case paths it reads (``path``, ``*_path``, ``trace.fields``): a run names those
        no case held."""
        probes = list(model_probes(self))
        fields = self.trace.fields if self.trace is not None else None
        for text in fields or ():
            probes.append(Probe("trace.fields", text, _held(FieldPath.parse(text))))
        return probes

    async def evaluate(self, case: Case, judge: JudgeModel) -> Verdict | Mapping[str, Verdict]:
        """Judge one case by asking ``judge``."""
        raise NotImplementedError
