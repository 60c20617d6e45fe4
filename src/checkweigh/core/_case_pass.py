"""Case pass/fail and the run's two pass dimensions (metrics and cases).

A case passes when every expected outcome passes. A case with no expected outcome that applies
falls back to its score (0-100) against ``pass_threshold``. A failed required check fails it
either way, and an errored case is never a pass. The run then has two independent dimensions:
*metrics* (the mean case score of the cases that produced one) and *cases* (the share of
executions that passed); either can fail the run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

from ._result import CaseResult
from ._scoring import ScoreStatus
from ._summary import CaseGates, FailingCase
from ._verdict import VerdictState

DEFAULT_PASS_THRESHOLD = 75.0
DEFAULT_METRICS_PASS_THRESHOLD = 80.0
DEFAULT_CASES_PASS_THRESHOLD = 100.0
_FAILING = 20
_SCORED = ScoreStatus.SCORED


class CaseState(StrEnum):
    """How one case execution ended, as a whole."""

    PASSED = "passed"
    FAILED = "failed"
    ERRORED = "errored"
    """The agent or a check errored: counted as not passed, never as a failure of the agent."""


_PASSED = CaseState.PASSED
_FAILED = CaseState.FAILED
_ERRORED = CaseState.ERRORED


class CaseVerdict(NamedTuple):
    """One execution's pass/fail, its score (0-100) and why."""

    state: CaseState
    score_pct: float | None
    """The mean score of its scored rubrics x 100 (None when no rubric scored it)."""
    reason: str
    failed: tuple[str, ...] = ()
    """The checks behind a failure, as ``name: reason``."""

    @property
    def passed(self) -> bool:
        """True only for a pass."""
        return self.state is CaseState.PASSED


@dataclass(frozen=True, slots=True)
class PassPolicy:
    """How a case's pass/fail and the run's two dimensions are decided (snapshotted per run)."""

    pass_threshold: float = DEFAULT_PASS_THRESHOLD
    """0-100: the score a case without expected outcomes needs."""
    metrics_pass_threshold: float = DEFAULT_METRICS_PASS_THRESHOLD
    """0-100: the mean case score the run needs."""
    cases_pass_threshold: float = DEFAULT_CASES_PASS_THRESHOLD
    """0-100: the percentage of executions that must pass."""
    outcome_checks: tuple[str, ...] = ()
    """The expected-outcome checks: when any applies to a case, they decide it."""
    score_rubrics: tuple[str, ...] | None = None
    """The rubrics whose mean score is a case's score (None: all of them)."""

    def __post_init__(self) -> None:
        for name in ("pass_threshold", "metrics_pass_threshold", "cases_pass_threshold"):
            value = getattr(self, name)
            if isinstance(value, bool) or not 0.0 <= value <= 100.0 or math.isnan(value):
                raise ValueError(f"{name} must be a number from 0 to 100, got {value!r}")

    def snapshot(self) -> dict[str, Any]:
        """The JSON form stored with a run."""
        return {
            "pass_threshold": self.pass_threshold,
            "metrics_pass_threshold": self.metrics_pass_threshold,
            "cases_pass_threshold": self.cases_pass_threshold,
            "outcome_checks": list(self.outcome_checks),
            "score_rubrics": None if self.score_rubrics is None else list(self.score_rubrics),
        }

    @classmethod
    def from_snapshot(cls, data: Mapping[str, Any] | None) -> PassPolicy:
        """The policy stored with a run (the defaults for runs stored before it existed)."""
        if not data:
            return cls()
        rubrics = data.get("score_rubrics")
        return cls(
            pass_threshold=float(data.get("pass_threshold", DEFAULT_PASS_THRESHOLD)),
            metrics_pass_threshold=float(
                data.get("metrics_pass_threshold", DEFAULT_METRICS_PASS_THRESHOLD)
            ),
            cases_pass_threshold=float(
                data.get("cases_pass_threshold", DEFAULT_CASES_PASS_THRESHOLD)
            ),
            outcome_checks=tuple(data.get("outcome_checks", ())),
            score_rubrics=None if rubrics is None else tuple(rubrics),
        )

    def with_thresholds(
        self,
        pass_threshold: float | None = None,
        metrics_pass_threshold: float | None = None,
        cases_pass_threshold: float | None = None,
    ) -> PassPolicy:
        """A copy with the given thresholds replaced (per-run overrides)."""
        return PassPolicy(
            pass_threshold=self.pass_threshold if pass_threshold is None else pass_threshold,
            metrics_pass_threshold=self.metrics_pass_threshold
            if metrics_pass_threshold is None
            else metrics_pass_threshold,
            cases_pass_threshold=self.cases_pass_threshold
            if cases_pass_threshold is None
            else cases_pass_threshold,
            outcome_checks=self.outcome_checks,
            score_rubrics=self.score_rubrics,
        )

    def score_pct(self, result: CaseResult) -> float | None:
        """The case's score: the mean of its scored rubrics' scores, x 100."""
        wanted = self.score_rubrics
        total = 0.0
        n = 0
        for name, r in result.results.items():
            if r.status is ScoreStatus.SCORED and (wanted is None or name in wanted):
                assert r.score is not None
                total += r.score
                n += 1
        return total / n * 100.0 if n else None

    def state(self, result: CaseResult) -> tuple[CaseState, float | None]:
        """What :meth:`decide` concludes, without building the reason (per-case fast path)."""
        if result.agent_error is not None:
            return _ERRORED, None
        score = self.score_pct(result)
        required_failed = False
        for r in result.results.values():
            if r.errored:
                return _ERRORED, score
            if r.required_failed:
                required_failed = True
        decided = False
        outcome_failed = False
        verdicts = result.verdicts
        for name in self.outcome_checks:
            v = verdicts.get(name)
            if v is None:
                continue
            state = v.state
            if state is VerdictState.ERRORED:
                return _ERRORED, score
            if state is VerdictState.FAILED:
                decided = outcome_failed = True
            elif state is VerdictState.PASSED:
                decided = True
        if required_failed or outcome_failed:
            return _FAILED, score
        if decided:
            return _PASSED, score
        if score is None or score < self.pass_threshold:
            return _FAILED, score
        return _PASSED, score

    def decide(self, result: CaseResult) -> CaseVerdict:
        """Pass, fail or errored, with the score and the reason."""
        if result.agent_error is not None:
            return CaseVerdict(CaseState.ERRORED, None, f"agent error: {result.agent_error}")
        score = self.score_pct(result)
        errored = [
            f"{name}: {v.error or v.reason}"
            for name, v in result.verdicts.items()
            if v.state is VerdictState.ERRORED
            and (name in self.outcome_checks or _in_errored_rubric(result, name))
        ]
        if errored:
            return CaseVerdict(
                CaseState.ERRORED, score, "errored: " + "; ".join(errored), tuple(errored)
            )
        required = [
            f"{name}: {result.verdicts[name].reason}"
            for r in result.results.values()
            for name in r.required_failed
        ]
        if required:
            return CaseVerdict(
                CaseState.FAILED,
                score,
                "required check failed: " + "; ".join(required),
                tuple(required),
            )
        outcomes = [
            (name, v)
            for name in self.outcome_checks
            if (v := result.verdicts.get(name)) is not None
            and v.state in (VerdictState.PASSED, VerdictState.FAILED)
        ]
        if outcomes:
            failed = tuple(
                f"{n}: {v.reason}" for n, v in outcomes if v.state is VerdictState.FAILED
            )
            if failed:
                return CaseVerdict(
                    CaseState.FAILED,
                    score,
                    "expected outcomes not met: " + "; ".join(failed),
                    failed,
                )
            return CaseVerdict(CaseState.PASSED, score, "every expected outcome passed")
        if score is None:
            return CaseVerdict(
                CaseState.FAILED, None, "no rubric scored this case and no expected outcome applies"
            )
        if score >= self.pass_threshold:
            return CaseVerdict(
                CaseState.PASSED,
                score,
                f"score {score:.1f} >= pass threshold {self.pass_threshold:g}",
            )
        failed = tuple(
            f"{name}: {v.reason}"
            for name, v in result.verdicts.items()
            if v.state is VerdictState.FAILED and _scored_here(self, result, name)
        )
        return CaseVerdict(
            CaseState.FAILED,
            score,
            f"score {score:.1f} < pass threshold {self.pass_threshold:g}",
            failed,
        )


def _in_errored_rubric(result: CaseResult, check: str) -> bool:
    return any(check in r.errored for r in result.results.values())


def _scored_here(policy: PassPolicy, result: CaseResult, check: str) -> bool:
    wanted = policy.score_rubrics
    return any(
        check in r.details and (wanted is None or name in wanted)
        for name, r in result.results.items()
        if r.status is ScoreStatus.SCORED
    )


class CaseTally:
    """Streaming counts behind the run's two dimensions."""

    __slots__ = (
        "errored",
        "executions",
        "failed",
        "failing",
        "passed",
        "policy",
        "score_n",
        "score_sum",
    )

    def __init__(self, policy: PassPolicy) -> None:
        self.policy = policy
        self.executions = 0
        self.passed = 0
        self.failed = 0
        self.errored = 0
        self.score_n = 0
        self.score_sum = 0.0
        self.failing: list[FailingCase] = []

    def add(self, result: CaseResult) -> CaseVerdict:
        """Count one execution; returns its verdict with the reason."""
        verdict = self.policy.decide(result)
        self._count(result, verdict.state, verdict.score_pct, verdict)
        return verdict

    def count(self, result: CaseResult) -> CaseState:
        """Count one execution, building a reason only for the first failing ones (fast)."""
        state, score = self.policy.state(result)
        self._count(result, state, score, None)
        return state

    def _count(
        self,
        result: CaseResult,
        state: CaseState,
        score: float | None,
        verdict: CaseVerdict | None,
    ) -> None:
        self.executions += 1
        if state is _PASSED:
            self.passed += 1
        elif state is _FAILED:
            self.failed += 1
        else:
            self.errored += 1
        if state is not _PASSED and len(self.failing) < _FAILING:
            verdict = verdict or self.policy.decide(result)
            self.failing.append(
                FailingCase(
                    case_id=result.case_id,
                    repeat=result.repeat,
                    state=verdict.state.value,
                    score_pct=verdict.score_pct,
                    reason=verdict.reason,
                )
            )
        # "the mean score of the cases that produced a verdict": errored cases did not
        if score is not None and state is not _ERRORED:
            self.score_n += 1
            self.score_sum += score

    def gates(self) -> CaseGates:
        """The run's metrics and cases dimensions so far."""
        p = self.policy
        metrics = self.score_sum / self.score_n if self.score_n else None
        rate = self.passed / self.executions * 100.0 if self.executions else 0.0
        return CaseGates(
            weighted_metrics_score_pct=metrics,
            metrics_pass_threshold=p.metrics_pass_threshold,
            metrics_passed=metrics is not None and metrics >= p.metrics_pass_threshold,
            cases_pass_rate_pct=rate,
            cases_pass_threshold=p.cases_pass_threshold,
            cases_passed=self.executions > 0 and rate >= p.cases_pass_threshold,
            executions=self.executions,
            passed=self.passed,
            failed=self.failed,
            errored=self.errored,
            pass_threshold=p.pass_threshold,
            failing=list(self.failing),
        )
