"""Run-level gates: thresholds on a run's aggregates that decide the CI exit code."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ._outcome import OutcomeClass
from ._summary import GateResult, RunSummary


class GateMetric(StrEnum):
    """What a gate measures."""

    TCR = "tcr"
    """A rubric's Task Completion Rate (mean score)."""
    TCR_LOWER = "tcr_lower"
    """The lower end of the TCR's 95% interval: a stricter, noise-aware gate."""
    CHECK_PASS_RATE = "check_pass_rate"
    """One check's pass rate within a rubric."""
    OUTCOME_RATE = "outcome_rate"
    """The share of scored executions in one outcome class."""
    ERRORED_EXECUTIONS = "errored_executions"
    """How many executions errored (agent or check)."""


@dataclass(frozen=True, slots=True)
class Gate:
    """``metric`` (of ``rubric``, ``check`` or ``outcome`` where it needs one) within bounds."""

    metric: GateMetric
    minimum: float | None = None
    maximum: float | None = None
    rubric: str | None = None
    check: str | None = None
    outcome: OutcomeClass | None = None

    def describe(self) -> str:
        """The gate in words, e.g. ``completion tcr >= 0.7``."""
        subject = " ".join(
            x
            for x in (
                self.rubric,
                self.check,
                self.outcome.value if self.outcome else None,
                self.metric.value,
            )
            if x
        )
        bounds = []
        if self.minimum is not None:
            bounds.append(f">= {self.minimum:g}")
        if self.maximum is not None:
            bounds.append(f"<= {self.maximum:g}")
        return f"{subject} {' and '.join(bounds)}"

    def measure(self, summary: RunSummary) -> float | None:
        """The gate's metric on ``summary``; None when it cannot be measured."""
        if self.metric is GateMetric.ERRORED_EXECUTIONS:
            return float(summary.errored_executions)
        assert self.rubric is not None
        rubric = summary.rubric(self.rubric)
        if self.metric is GateMetric.TCR:
            return rubric.tcr
        if self.metric is GateMetric.TCR_LOWER:
            return rubric.tcr_low
        if self.metric is GateMetric.OUTCOME_RATE:
            assert self.outcome is not None
            if not rubric.scored:
                return None
            return rubric.outcomes.get(self.outcome.value, 0) / rubric.scored
        for stats in rubric.checks:
            if stats.check == self.check:
                return stats.pass_rate
        return None

    def evaluate(self, summary: RunSummary) -> GateResult:
        """Whether ``summary`` meets the gate; an unmeasurable metric fails it."""
        actual = self.measure(summary)
        ok = actual is not None
        if actual is not None and self.minimum is not None:
            ok = ok and actual >= self.minimum - 1e-12
        if actual is not None and self.maximum is not None:
            ok = ok and actual <= self.maximum + 1e-12
        return GateResult(gate=self.describe(), passed=ok, actual=actual)


DEFAULT_GATES: tuple[Gate, ...] = ()
"""Used when a suite names no gates: none beyond the run's metrics and cases dimensions
(errored executions count as not passed there)."""


def apply_gates(summary: RunSummary, gates: tuple[Gate, ...]) -> RunSummary:
    """A copy of ``summary`` with its gate results filled in."""
    return summary.model_copy(update={"gates": [g.evaluate(summary) for g in gates]})
