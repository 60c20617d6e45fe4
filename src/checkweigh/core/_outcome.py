"""Outcome classes and the ordered rules that assign them.

The default rules read a success flag in the case (``final_state.success``). A case that has
no flag there is classed by its score alone, so that a perfect case without a flag is a
successful completion, not a "graceful failure"; every rule says which of the two it belongs
to (its :class:`OutcomeBasis`), and the report counts how many cases each classed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

from ._conditions import Condition, ConditionOp
from ._paths import FieldPath


class OutcomeBasis(StrEnum):
    """Which rule set classed a case."""

    SUCCESS_FLAG = "success_flag"
    """The default rules, for a case that has the success flag."""
    SCORE = "score"
    """The default rules, for a case that has no success flag: its score alone decides."""
    RULES = "rules"
    """The suite's own ``outcome_rules``."""


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
    basis: OutcomeBasis = OutcomeBasis.RULES
    """The rule set this rule belongs to, for the report."""

    def matches(self, score: float, case: Any, required_failed: bool) -> bool:
        """Whether this rule applies (decided by :func:`first_match`, as for scoring)."""
        return first_match(compile_rules((self,)), score, case, required_failed)[1] == 0

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
    """The seed's rules for a case with a success flag, then rules by score for one without.

    With the flag: flag true and score >= 0.75 is a successful completion; stage failed with
    score 0 a hard failure; score >= 0.5 a graceful failure; otherwise partial. Without it
    (nothing at ``success_path``): every counted check passed (score 1) is a successful
    completion, then the same stage, graceful and partial rules.
    """
    flag = FieldPath.parse(success_path)
    has_flag = Condition(flag, ConditionOp.EXISTS, True)
    no_flag = Condition(flag, ConditionOp.EXISTS, False)
    failed = Condition(FieldPath.parse(stage_path), ConditionOp.EQUALS, failed_stage)
    by_flag = OutcomeBasis.SUCCESS_FLAG
    by_score = OutcomeBasis.SCORE
    success, hard = OutcomeClass.SUCCESSFUL_COMPLETION, OutcomeClass.HARD_FAILURE
    graceful, partial = OutcomeClass.GRACEFUL_FAILURE, OutcomeClass.PARTIAL_FAILURE
    # each class's rule for a case with the flag, then its rule for one without: ordered so
    # that the score rules out most rules before the flag is looked up (a miss costs most)
    return (
        OutcomeRule(
            success,
            min_score=success_min,
            state=(Condition(flag, ConditionOp.EQUALS, True),),
            basis=by_flag,
        ),
        OutcomeRule(success, min_score=1.0, state=(no_flag,), basis=by_score),
        OutcomeRule(hard, max_score=0.0, state=(has_flag, failed), basis=by_flag),
        OutcomeRule(hard, max_score=0.0, state=(failed,), basis=by_score),
        OutcomeRule(graceful, min_score=graceful_min, state=(has_flag,), basis=by_flag),
        OutcomeRule(graceful, min_score=graceful_min, basis=by_score),
        OutcomeRule(partial, state=(has_flag,), basis=by_flag),
        OutcomeRule(partial, basis=by_score),
    )


def basis_note(rules: tuple[OutcomeRule, ...], counts: Mapping[OutcomeBasis, int]) -> str | None:
    """Which rule set classed a rubric's cases and why, in words (None when none was classed).

    ``counts`` holds how many scored cases each rule set classed.
    """
    by_flag = counts.get(OutcomeBasis.SUCCESS_FLAG, 0)
    by_score = counts.get(OutcomeBasis.SCORE, 0)
    own = counts.get(OutcomeBasis.RULES, 0)
    flag = next((r.state[0].path for r in rules if r.basis is OutcomeBasis.SUCCESS_FLAG), None)
    parts = []
    if own:
        parts.append("by the suite's outcome_rules")
    if flag is not None and by_flag and not by_score:
        parts.append(f"by the success flag at {flag} (every scored case has one)")
    elif flag is not None and by_score and not by_flag:
        parts.append(f"by score, since no case has a success flag at {flag}: {_bands(rules)}")
    elif flag is not None and by_flag and by_score:
        parts.append(
            f"by the success flag at {flag} in {by_flag} case(s), and by score in the "
            f"{by_score} without one: {_bands(rules)}"
        )
    return "classed " + "; ".join(parts) if parts else None


def _bands(rules: tuple[OutcomeRule, ...]) -> str:
    """The score rules in words: ``successful completion at score 1, graceful failure from
    0.5, hard failure at 0 with final_state.stage == 'failed', else partial failure``."""
    words = []
    for r in rules:
        if r.basis is not OutcomeBasis.SCORE:
            continue
        name = r.outcome.value.replace("_", " ")
        if r.outcome is OutcomeClass.SUCCESSFUL_COMPLETION:
            words.append(f"{name} at score {r.min_score:g}")
        elif r.outcome is OutcomeClass.HARD_FAILURE:
            stage = " and ".join(c.describe() for c in r.state)
            words.append(f"{name} at {r.max_score:g} with {stage}")
        elif r.min_score is not None:
            words.append(f"{name} from {r.min_score:g}")
        else:
            words.append(f"else {name}")
    return ", ".join(words)


class RuleStep(NamedTuple):
    """An :class:`OutcomeRule` compiled for :func:`first_match` (see :func:`compile_rules`)."""

    outcome: OutcomeClass
    low: float
    """``min_score``, or -inf."""
    high: float
    """``max_score``, or +inf."""
    tests: tuple[Callable[[Any], bool], ...]
    """The state conditions' compiled tests."""
    is_success: bool
    """A successful-completion rule, which a failed required check rules out."""
    rule_index: int
    """The rule's position in its rubric's rules."""


def compile_rules(rules: tuple[OutcomeRule, ...]) -> tuple[RuleStep, ...]:
    """``rules`` in the form :func:`first_match` reads (a rubric keeps its own, built once)."""
    return tuple(
        RuleStep(
            r.outcome,
            -math.inf if r.min_score is None else r.min_score,
            math.inf if r.max_score is None else r.max_score,
            tuple(c.test for c in r.state),
            r.outcome is OutcomeClass.SUCCESSFUL_COMPLETION,
            index,
        )
        for index, r in enumerate(rules)
    )


_PARTIAL = OutcomeClass.PARTIAL_FAILURE


def first_match(
    plan: tuple[RuleStep, ...], score: float, case: Any, required_failed: bool
) -> tuple[OutcomeClass, int]:
    """The outcome class and index of the first rule that matches; partial failure and -1
    when none does.

    A rule matches when the score is within [low, high], each state test holds of ``case``,
    and, for a successful-completion rule, no required check failed. This is the one place
    the outcome rules are applied: :func:`classify`, :meth:`OutcomeRule.matches` and the
    scoring of every case (``score_rubric``) call it.
    """
    for outcome, low, high, tests, is_success, rule_index in plan:
        if (is_success and required_failed) or score < low or score > high:
            continue
        for test in tests:
            if not test(case):
                break
        else:
            return outcome, rule_index
    return _PARTIAL, -1


def classify(
    rules: tuple[OutcomeRule, ...], score: float, case: Any, required_failed: bool
) -> OutcomeClass:
    """The outcome of the first matching rule; partial failure when none matches."""
    return first_match(compile_rules(rules), score, case, required_failed)[0]
