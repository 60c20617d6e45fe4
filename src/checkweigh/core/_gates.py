"""Run-level gates: thresholds on a run's aggregates that decide the CI exit code."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ._judge_calibration import CheckCalibration
from ._label_budget import labels_to_decide
from ._outcome import OutcomeClass
from ._summary import GateResult, RunSummary
from ._trust import TrustStatus


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
    PASS_AT_K = "pass_at_k"
    """The chance that at least one of ``k`` tries of a task passes (runs with repeats)."""
    PASS_HAT_K = "pass_hat_k"
    """The chance that all ``k`` tries of a task pass: pass^k (runs with repeats)."""
    FLAKY_RATE = "flaky_rate"
    """The share of repeated tasks that passed on some tries and not on others."""
    CALIBRATED_PASS_RATE = "calibrated_pass_rate"
    """A judge check's pass rate corrected by people's labels (see
    :class:`~checkweigh.core.Calibration`): the gate passes when its 95% interval is within
    the bounds, fails when it is wholly outside, and is not decided while it holds a bound."""


RUN_METRICS = frozenset(
    {
        GateMetric.ERRORED_EXECUTIONS,
        GateMetric.PASS_AT_K,
        GateMetric.PASS_HAT_K,
        GateMetric.FLAKY_RATE,
    }
)
"""Metrics of the whole run, not of one rubric."""


@dataclass(frozen=True, slots=True)
class Gate:
    """``metric`` (of ``rubric``, ``check`` or ``outcome`` where it needs one) within bounds."""

    metric: GateMetric
    minimum: float | None = None
    maximum: float | None = None
    rubric: str | None = None
    check: str | None = None
    outcome: OutcomeClass | None = None
    k: int | None = None
    """Tries per task, for pass_at_k and pass_hat_k."""

    def describe(self) -> str:
        """The gate in words, e.g. ``completion tcr >= 0.7`` or ``pass^4 >= 0.6``."""
        if self.metric is GateMetric.PASS_HAT_K:
            subject = f"pass^{self.k}"
        elif self.metric is GateMetric.PASS_AT_K:
            subject = f"pass@{self.k}"
        else:
            parts = (
                self.rubric,
                self.check,
                self.outcome.value if self.outcome else None,
                self.metric.value,
            )
            subject = " ".join(x for x in parts if x)
        bounds = []
        if self.minimum is not None:
            bounds.append(f">= {self.minimum:g}")
        if self.maximum is not None:
            bounds.append(f"<= {self.maximum:g}")
        return f"{subject} {' and '.join(bounds)}"

    def measure(self, summary: RunSummary) -> float | None:
        """The gate's metric on ``summary``; None when it cannot be measured."""
        if self.metric is GateMetric.CALIBRATED_PASS_RATE:
            found = self._calibration(summary)
            return None if found is None else found.figures.calibrated_pass_rate
        if self.metric is GateMetric.ERRORED_EXECUTIONS:
            return float(summary.errored_executions)
        if self.metric in RUN_METRICS:  # reliability: unmeasurable without repeats
            return self._reliability(summary)
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

    def _reliability(self, summary: RunSummary) -> float | None:
        found = summary.reliability
        if found is None:
            return None
        if self.metric is GateMetric.FLAKY_RATE:
            return found.flaky_rate
        assert self.k is not None
        row = found.at(self.k)
        if row is None:
            return None
        return row.pass_hat_k if self.metric is GateMetric.PASS_HAT_K else row.pass_at_k

    def _calibration(self, summary: RunSummary) -> CheckCalibration | None:
        for found in summary.calibration:
            if found.check == self.check:
                return found
        return None

    def rests_on(self, summary: RunSummary) -> set[str]:
        """The checks whose verdicts the gate's metric is made of."""
        if self.metric in (GateMetric.CHECK_PASS_RATE, GateMetric.CALIBRATED_PASS_RATE):
            return {self.check} if self.check else set()
        if self.metric is GateMetric.ERRORED_EXECUTIONS:
            return set()
        rubrics = summary.rubrics
        if self.metric not in RUN_METRICS and self.rubric is not None:
            rubrics = [r for r in rubrics if r.rubric == self.rubric]
        return {stats.check for r in rubrics for stats in r.checks}

    def evaluate(self, summary: RunSummary) -> GateResult:
        """Whether ``summary`` meets the gate; an unmeasurable metric fails it. A gate resting
        on a judge check below its ``trust:`` bar, or reading a calibrated rate whose interval
        holds a bound, is not decided."""
        actual = self.measure(summary)
        ok = actual is not None
        if actual is not None and self.minimum is not None:
            ok = ok and actual >= self.minimum - 1e-12
        if actual is not None and self.maximum is not None:
            ok = ok and actual <= self.maximum + 1e-12
        result = GateResult(gate=self.describe(), passed=ok, actual=actual)
        short = [
            f"{c.check}'s agreement with people is {c.trust.status.value}: {c.trust.needs}"
            for c in summary.calibration
            if c.trust is not None
            and c.trust.status is not TrustStatus.TRUSTED
            and c.check in self.rests_on(summary)
        ]
        if short:
            return result.model_copy(
                update={"passed": False, "decided": False, "needs": "; ".join(short)}
            )
        if self.metric is GateMetric.CALIBRATED_PASS_RATE and actual is not None:
            return self._by_interval(result, summary)
        return result

    def _by_interval(self, result: GateResult, summary: RunSummary) -> GateResult:
        found = self._calibration(summary)
        assert found is not None  # measured
        cal = found.figures
        low, high = cal.calibrated_low, cal.calibrated_high
        assert low is not None
        assert high is not None
        update: dict[str, object] = {"low": low, "high": high}
        bounds = [b for b in (self.minimum, self.maximum) if b is not None]
        outside = (self.minimum is not None and high < self.minimum) or (
            self.maximum is not None and low > self.maximum
        )
        inside = all(not low <= b <= high for b in bounds)
        if outside:
            update["passed"] = False
        elif inside:
            update["passed"] = True
        else:
            held = [b for b in bounds if low <= b <= high]
            more = [labels_to_decide(cal, b) for b in held]
            if any(n is None for n in more):
                needs = (
                    f"its 95% interval {low:.3f}-{high:.3f} holds the bound, and labelling the "
                    f"rest of this run ({cal.labels} of {cal.judged_yes + cal.judged_no} "
                    "labelled) would not settle it: a run of more cases might, unless the rate "
                    "sits on the bound"
                )
            else:
                needs = (
                    f"its 95% interval {low:.3f}-{high:.3f} holds the bound: about "
                    f"{max(n for n in more if n is not None)} more label(s) of "
                    f"{self.check} would decide it ({cal.labels} made)"
                )
            update.update(passed=False, decided=False, needs=needs)
        return result.model_copy(update=update)


DEFAULT_GATES: tuple[Gate, ...] = ()
"""Used when a suite names no gates: none beyond the run's metrics and cases dimensions
(errored executions count as not passed there)."""


def apply_gates(summary: RunSummary, gates: tuple[Gate, ...]) -> RunSummary:
    """A copy of ``summary`` with its gate results filled in, and its pass dimensions not
    decided when a judge check weighed in a rubric is below its ``trust:`` bar."""
    weighed = {stats.check for r in summary.rubrics for stats in r.checks}
    short = [
        f"{c.check}'s agreement with people is {c.trust.status.value}: {c.trust.needs}"
        for c in summary.calibration
        if c.trust is not None and c.trust.status is not TrustStatus.TRUSTED and c.check in weighed
    ]
    return summary.model_copy(
        update={
            "gates": [g.evaluate(summary) for g in gates],
            "case_gates_undecided": "; ".join(short) or None,
        }
    )
