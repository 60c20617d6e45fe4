"""Outcome classes and the ordered rules that assign them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ._conditions import Condition, ConditionOp, all_hold
from ._paths import FieldPath


class OutcomeClass(StrEnum):
    """What happened to the task, in the seed's four classes."""

    SUCCESSFUL_COMPLETION = "successful_completion"
    GRACEFUL_FAILURE = "graceful_failure"
    PARTIAL_FAILURE = "partial_failure"
    HARD_FAILURE = "hard_failure"


@dataclass(frozen=True, slots=True)
class OutcomeRule:
    """``outcome`` when the score is in [min_score, max_score] and every state condition holds.

    A rule for successful completion never matches a case that failed a required check.
    """

    outcome: OutcomeClass
    min_score: float | None = None
    max_score: float | None = None
    state: tuple[Condition, ...] = ()

    def matches(self, score: float, case: Any, required_failed: bool) -> bool:
        """Whether this rule applies."""
        if required_failed and self.outcome is OutcomeClass.SUCCESSFUL_COMPLETION:
            return False
        if self.min_score is not None and score < self.min_score:
            return False
        if self.max_score is not None and score > self.max_score:
            return False
        return all_hold(self.state, case)

    def describe(self) -> str:
        """A short human form of the rule."""
        parts = []
        if self.min_score is not None:
            parts.append(f"score >= {self.min_score:g}")
        if self.max_score is not None:
            parts.append(f"score <= {self.max_score:g}")
        parts.extend(c.describe() for c in self.state)
        return f"{self.outcome.value} if " + (" and ".join(parts) if parts else "otherwise")


def default_outcome_rules(
    *,
    success_path: str = "final_state.success",
    stage_path: str = "final_state.stage",
    failed_stage: str = "failed",
    success_min: float = 0.75,
    graceful_min: float = 0.50,
) -> tuple[OutcomeRule, ...]:
    """The seed's rules: success flag and score >= 0.75 is a successful completion; stage
    failed with score 0 a hard failure; score >= 0.5 a graceful failure; otherwise partial."""
    return (
        OutcomeRule(
            OutcomeClass.SUCCESSFUL_COMPLETION,
            min_score=success_min,
            state=(Condition(FieldPath.parse(success_path), ConditionOp.EQUALS, True),),
        ),
        OutcomeRule(
            OutcomeClass.HARD_FAILURE,
            max_score=0.0,
            state=(Condition(FieldPath.parse(stage_path), ConditionOp.EQUALS, failed_stage),),
        ),
        OutcomeRule(OutcomeClass.GRACEFUL_FAILURE, min_score=graceful_min),
        OutcomeRule(OutcomeClass.PARTIAL_FAILURE),
    )


def classify(
    rules: tuple[OutcomeRule, ...], score: float, case: Any, required_failed: bool
) -> OutcomeClass:
    """The outcome of the first matching rule; partial failure when none matches."""
    for rule in rules:
        if rule.matches(score, case, required_failed):
            return rule.outcome
    return OutcomeClass.PARTIAL_FAILURE
