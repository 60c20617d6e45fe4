"""A rubric: checks with weights, and the policies that turn verdicts into a score."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..errors import CheckweighError
from ._conditions import Condition
from ._outcome import OutcomeClass, OutcomeRule, default_outcome_rules


class RubricError(CheckweighError, ValueError):
    """A rubric that cannot score anything: empty, bad weights, unknown checks."""


class NotApplicablePolicy(StrEnum):
    """What a not-applicable verdict does to the score."""

    PASS = "pass"
    """Count the check as passed (the seed: no conflict means alternatives are 'ok')."""
    EXCLUDE = "exclude"
    """Drop the check and renormalize the weights over the rest."""


@dataclass(frozen=True, slots=True)
class RubricItem:
    """One weighted check in a rubric."""

    check: str
    weight: float
    required: bool = False
    not_applicable: NotApplicablePolicy = NotApplicablePolicy.EXCLUDE


@dataclass(frozen=True, slots=True)
class Bands:
    """Readiness bands on the Task Completion Rate."""

    production_ready: float = 0.85
    needs_improvement: float = 0.70

    def label(self, tcr: float) -> str:
        """The band a TCR falls in."""
        if tcr >= self.production_ready:
            return "production ready"
        if tcr >= self.needs_improvement:
            return "needs improvement"
        return "not ready"


@dataclass(frozen=True)
class Rubric:
    """Weighted yes/no checks that score a case from 0 to 1.

    Build one with :meth:`build`, which validates the weights. Weights need not sum to 1:
    they are normalized, and :attr:`normalized` says when that changed them.
    """

    name: str
    items: tuple[RubricItem, ...]
    outcome_rules: tuple[OutcomeRule, ...]
    when: tuple[Condition, ...] = ()
    bands: Bands = field(default_factory=Bands)

    @classmethod
    def build(
        cls,
        name: str,
        items: Iterable[RubricItem],
        *,
        outcome_rules: Iterable[OutcomeRule] | None = None,
        when: Iterable[Condition] = (),
        bands: Bands | None = None,
    ) -> Rubric:
        """Validate and build a rubric.

        Raises:
            RubricError: the rubric is empty, repeats a check, or has a weight that is not a
                finite non-negative number, or all weights are zero.
        """
        items = tuple(items)
        if not items:
            raise RubricError(f"rubric {name!r} has no checks")
        seen: set[str] = set()
        for item in items:
            w = item.weight
            if isinstance(w, bool) or not isinstance(w, int | float):
                raise RubricError(
                    f"rubric {name!r}: weight of {item.check!r} must be a number, got {w!r}"
                )
            if not math.isfinite(w) or w < 0:
                raise RubricError(
                    f"rubric {name!r}: weight of {item.check!r} must be a finite number >= 0, "
                    f"got {w!r}"
                )
            if item.check in seen:
                raise RubricError(f"rubric {name!r} lists check {item.check!r} twice")
            seen.add(item.check)
        if sum(i.weight for i in items) <= 0:
            raise RubricError(f"rubric {name!r}: weights sum to 0; give at least one weight > 0")
        rules = tuple(outcome_rules) if outcome_rules is not None else default_outcome_rules()
        return cls(name, items, rules, tuple(when), bands or Bands())

    @property
    def weight_total(self) -> float:
        """The sum of the weights as written."""
        return math.fsum(i.weight for i in self.items)

    @property
    def normalized(self) -> bool:
        """True when the written weights do not sum to 1.0 and were rescaled."""
        return not math.isclose(self.weight_total, 1.0, abs_tol=1e-9)

    @property
    def normalized_weights(self) -> dict[str, float]:
        """Each check's weight divided by the total, so they sum to 1."""
        total = self.weight_total
        return {i.check: i.weight / total for i in self.items}

    @functools.cached_property
    def plan(self) -> tuple[tuple[str, float, bool, bool], ...]:
        """(check, weight, required, not-applicable counts as passed) per item, for scoring."""
        return tuple(
            (i.check, i.weight, i.required, i.not_applicable is NotApplicablePolicy.PASS)
            for i in self.items
        )

    @functools.cached_property
    def tally_memo(self) -> dict[tuple[Any, ...], Any]:
        """Tallies already computed, by verdict-state combination (see ``score_rubric``)."""
        return {}

    @functools.cached_property
    def rule_plan(self) -> tuple[tuple[Any, float, float, tuple[Any, ...], bool, int], ...]:
        """(outcome, min score, max score, state tests, is success, index) per outcome rule."""
        return tuple(
            (
                r.outcome,
                -math.inf if r.min_score is None else r.min_score,
                math.inf if r.max_score is None else r.max_score,
                tuple(c.test for c in r.state),
                r.outcome is OutcomeClass.SUCCESSFUL_COMPLETION,
                index,
            )
            for index, r in enumerate(self.outcome_rules)
        )

    @functools.cached_property
    def check_names(self) -> tuple[str, ...]:
        """The checks this rubric scores, in order."""
        return tuple(i.check for i in self.items)

    def unknown_checks(self, known: Iterable[str]) -> list[str]:
        """The checks this rubric names that are not in ``known``."""
        known_set = set(known)
        return [i.check for i in self.items if i.check not in known_set]

    def normalization_note(self) -> str | None:
        """A sentence for reports when the weights were rescaled, else None."""
        if not self.normalized:
            return None
        return (
            f"weights of rubric '{self.name}' sum to {self.weight_total:.4g}, "
            "not 1.0; they were normalized"
        )
