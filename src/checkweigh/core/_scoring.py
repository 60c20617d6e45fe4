"""The scoring formula: sum of the normalized weights of the passed checks.

This is the one place that turns verdicts into a score and an outcome class.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, NamedTuple

from ._conditions import all_hold
from ._outcome import OutcomeClass
from ._rubric import NotApplicablePolicy, Rubric
from ._verdict import Verdict, VerdictState

_PASSED = VerdictState.PASSED
_NA = VerdictState.NOT_APPLICABLE
_ERRORED = VerdictState.ERRORED
_PASS_POLICY = NotApplicablePolicy.PASS


class ScoreStatus(StrEnum):
    """Whether a rubric produced a score for a case."""

    SCORED = "scored"
    ERRORED = "errored"
    """A check errored, so no honest score exists (an error is never read as 'no')."""
    NOT_APPLICABLE = "not_applicable"
    """The rubric's ``when`` guard was false, or every check was excluded as not applicable."""


class EvaluationResult(NamedTuple):
    """One rubric's result on one case: score, per-check verdicts, outcome and explanation."""

    rubric: str
    status: ScoreStatus
    score: float | None
    outcome: OutcomeClass | None
    details: Mapping[str, Verdict]
    excluded: tuple[str, ...] = ()
    required_failed: tuple[str, ...] = ()
    errored: tuple[str, ...] = ()

    @property
    def explanation(self) -> str:
        """A sentence naming the outcome and what failed, errored or was excluded."""
        if self.status is ScoreStatus.NOT_APPLICABLE:
            return f"{self.rubric}: not applicable to this case"
        if self.status is ScoreStatus.ERRORED:
            errs = "; ".join(
                f"{name} errored: {self.details[name].error or self.details[name].reason}"
                for name in self.errored
            )
            return f"{self.rubric}: not scored ({errs})"
        assert self.score is not None
        assert self.outcome is not None
        head = f"{self.rubric}: score {self.score:.2f}, {self.outcome.value.replace('_', ' ')}"
        failed = [
            f"{name} ({v.reason})" if v.reason else name
            for name, v in self.details.items()
            if v.state is VerdictState.FAILED
        ]
        parts = [head]
        if failed:
            parts.append("failed: " + "; ".join(failed))
        if self.required_failed:
            parts.append("required check failed: " + ", ".join(self.required_failed))
        if self.excluded:
            parts.append("not applicable (excluded): " + ", ".join(self.excluded))
        if not failed:
            parts.append("all checks passed")
        return ". ".join(parts)


def score_rubric(rubric: Rubric, verdicts: Mapping[str, Verdict], case: Any) -> EvaluationResult:
    """Score ``case`` on ``rubric`` from the verdicts of its checks.

    The score is the sum of the weights of the passed checks divided by the sum of the weights
    that count: a not-applicable check counts as passed under the ``pass`` policy and is dropped
    under ``exclude``. Any errored check leaves the case unscored for this rubric.
    """
    names = rubric.check_names
    if len(names) == len(verdicts):  # the rubric covers every verdict: share the mapping
        details: Mapping[str, Verdict] = verdicts
    else:
        details = {name: verdicts[name] for name in names}
    if rubric.when and not all_hold(rubric.when, case):
        return EvaluationResult(rubric.name, ScoreStatus.NOT_APPLICABLE, None, None, details)
    earned = 0.0
    counted = 0.0
    excluded: list[str] | tuple[()] = ()
    errored: list[str] | tuple[()] = ()
    required_failed: list[str] | tuple[()] = ()
    for check, weight, required, na_passes in rubric.plan:
        state = details[check].state
        if state is _PASSED or (state is _NA and na_passes):
            earned += weight
            counted += weight
        elif state is _NA:
            excluded = [*excluded, check]
        elif state is _ERRORED:
            errored = [*errored, check]
            if required:
                required_failed = [*required_failed, check]
        else:
            counted += weight
            if required:
                required_failed = [*required_failed, check]
    if errored:
        return EvaluationResult(
            rubric.name,
            ScoreStatus.ERRORED,
            None,
            None,
            details,
            tuple(excluded),
            tuple(required_failed),
            tuple(errored),
        )
    if counted <= 0.0:
        return EvaluationResult(
            rubric.name, ScoreStatus.NOT_APPLICABLE, None, None, details, tuple(excluded)
        )
    # Rounding keeps sums like 0.25 + 0.25 + 0.25 from landing just under a 0.75 threshold.
    score = round(earned / counted, 9)
    # the first matching rule (see classify); inlined with precompiled tests for speed
    outcome = OutcomeClass.PARTIAL_FAILURE
    for rule_outcome, low, high, tests, is_success in rubric.rule_plan:
        if (is_success and required_failed) or score < low or score > high:
            continue
        for test in tests:
            if not test(case):
                break
        else:
            outcome = rule_outcome
            break
    return EvaluationResult(
        rubric.name,
        ScoreStatus.SCORED,
        score,
        outcome,
        details,
        tuple(excluded),
        tuple(required_failed),
    )
