"""The scoring formula: sum of the normalized weights of the passed checks.

This is the one place that turns verdicts into a score and an outcome class.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, NamedTuple

from ._conditions import all_hold
from ._outcome import OutcomeClass, first_match
from ._rubric import NotApplicablePolicy, Rubric
from ._verdict import Verdict, VerdictState

_PASSED = VerdictState.PASSED
_NA = VerdictState.NOT_APPLICABLE
_ERRORED = VerdictState.ERRORED
_PASS_POLICY = NotApplicablePolicy.PASS
_new = tuple.__new__


class ScoreStatus(StrEnum):
    """Whether a rubric produced a score for a case."""

    SCORED = "scored"
    ERRORED = "errored"
    """A check errored, so no honest score exists (an error is never read as 'no')."""
    NOT_APPLICABLE = "not_applicable"
    """The rubric's ``when`` guard was false, or every check was excluded as not applicable."""


_SCORED = ScoreStatus.SCORED


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
    rule: int = -1
    """The index of the outcome rule that classed the case (-1: none, or not recorded)."""

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


class Tally(NamedTuple):
    """What the verdict states alone decide: status, score and the checks that shaped it."""

    status: ScoreStatus
    score: float | None
    excluded: tuple[str, ...]
    required_failed: tuple[str, ...]
    errored: tuple[str, ...]


def tally(rubric: Rubric, states: tuple[VerdictState, ...]) -> Tally:
    """The scoring formula, over the states of the rubric's checks (in rubric order).

    score = sum of the weights of the passed checks / sum of the weights that count. A
    not-applicable check counts as passed under the ``pass`` policy and is dropped under
    ``exclude``; any errored check leaves the case unscored.
    """
    earned = counted = 0.0
    excluded: list[str] = []
    errored: list[str] = []
    required_failed: list[str] = []
    for (check, weight, required, na_passes), state in zip(rubric.plan, states, strict=True):
        if state is _PASSED or (state is _NA and na_passes):
            earned += weight
            counted += weight
        elif state is _NA:
            excluded.append(check)
        else:
            if state is _ERRORED:
                errored.append(check)
            else:
                counted += weight
            if required:
                required_failed.append(check)
    lists = (tuple(excluded), tuple(required_failed), tuple(errored))
    if errored:
        return Tally(ScoreStatus.ERRORED, None, *lists)
    if counted <= 0.0:
        return Tally(ScoreStatus.NOT_APPLICABLE, None, *lists)
    # Rounding keeps sums like 0.25 + 0.25 + 0.25 from landing just under a 0.75 threshold.
    return Tally(ScoreStatus.SCORED, round(earned / counted, 9), *lists)


_MEMO_LIMIT = 4096
_state_of = operator.attrgetter("state")


def score_rubric(rubric: Rubric, verdicts: Mapping[str, Verdict], case: Any) -> EvaluationResult:
    """Score ``case`` on ``rubric`` from the verdicts of its checks (see :func:`tally`), then
    classify the outcome by the rubric's ordered rules."""
    names = rubric.check_names
    if len(names) == len(verdicts):  # the rubric covers every verdict: share the mapping
        details: Mapping[str, Verdict] = verdicts
    else:
        details = {name: verdicts[name] for name in names}
    if rubric.when and not all_hold(rubric.when, case):
        return EvaluationResult(rubric.name, ScoreStatus.NOT_APPLICABLE, None, None, details)
    states = tuple(map(_state_of, map(details.__getitem__, names)))
    # the tally depends on the states alone: a rubric sees few distinct combinations, so it is
    # remembered per rubric (bounded), which takes the weight loop off the per-case path
    memo = rubric.tally_memo
    t = memo.get(states)
    if t is None:
        t = tally(rubric, states)
        if len(memo) < _MEMO_LIMIT:
            memo[states] = t
    status, score, excluded, required_failed, errored = t
    if status is not _SCORED:
        return _new(
            EvaluationResult,
            (rubric.name, status, None, None, details, excluded, required_failed, errored, -1),
        )
    assert score is not None
    outcome, rule = first_match(rubric.rule_plan, score, case, bool(required_failed))
    # built with tuple.__new__ directly: this runs once per rubric per case
    return _new(
        EvaluationResult,
        (rubric.name, _SCORED, score, outcome, details, excluded, required_failed, (), rule),
    )
