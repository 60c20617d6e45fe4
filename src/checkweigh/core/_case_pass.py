"""Case pass/fail, by one of two policies, and the run's two pass dimensions.

``threshold`` (the default): a case passes when every expected outcome passes; a case with no
expected outcome that applies falls back to its score (0-100) against ``pass_threshold``.
``all_checks``: a case passes only when every applicable check of the named rubrics (and every
expected outcome that applies) passes. Under both, a failed required check fails the case and an
errored case is never a pass. The run then has two independent dimensions: *metrics* (the mean
case score of the cases that produced one) and *cases* (the share of executions that passed);
either can fail the run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum, auto
from typing import Any, NamedTuple

from ._result import CaseResult
from ._scoring import EvaluationResult, ScoreStatus
from ._verdict import VerdictState

DEFAULT_PASS_THRESHOLD = 75.0
DEFAULT_METRICS_PASS_THRESHOLD = 80.0
DEFAULT_CASES_PASS_THRESHOLD = 100.0
_SCORED = ScoreStatus.SCORED
_V_FAILED = VerdictState.FAILED
_V_PASSED = VerdictState.PASSED


class PassMode(StrEnum):
    """How a case's pass/fail is decided (the suite's ``thresholds.pass_policy``)."""

    THRESHOLD = "threshold"
    """Expected outcomes when any applies, else the score against ``pass_threshold``."""
    ALL_CHECKS = "all_checks"
    """Every applicable check of the named rubrics (and every expected outcome) passes."""


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
    """The rubrics whose mean score is a case's score (None: all of them); under
    ``all_checks``, also the rubrics whose checks must all pass."""
    pass_policy: PassMode = PassMode.THRESHOLD
    """How a case's pass/fail is decided."""

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
            "pass_policy": self.pass_policy.value,
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
            pass_policy=PassMode(data.get("pass_policy", PassMode.THRESHOLD)),
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
            pass_policy=self.pass_policy,
        )

    def score_only(self, note: str | None, what: str) -> str | None:
        """``note`` (on weights or outcome classes, ``what`` they shape) with, under
        ``all_checks``, that it decides no case's pass/fail: there the score is informational
        (it still makes the run's mean case score)."""
        if note is None or self.pass_policy is not PassMode.ALL_CHECKS:
            return note
        return (
            f"{note} (informational: under pass_policy all_checks {what}, not whether a case "
            f"passes; a case passes when {self.describe()})"
        )

    def describe(self) -> str:
        """When a case passes, in words (for reports)."""
        rubrics = self.score_rubrics
        if self.pass_policy is PassMode.ALL_CHECKS:
            text = "every applicable check passes"
            if rubrics is not None:
                text += f" (rubric{'s' if len(rubrics) > 1 else ''} {', '.join(rubrics)})"
            if self.outcome_checks:
                text += ", expected outcomes included"
            return text
        score = "score" if rubrics is None else f"score of {', '.join(rubrics)}"
        text = f"{score} >= {self.pass_threshold:g} and no required check failed"
        if self.outcome_checks:
            text = f"every expected outcome that applies passes (else {text})"
        return text

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
        state, score, _ = self._decision(result)
        return state, score

    def decide(self, result: CaseResult) -> CaseVerdict:
        """Pass, fail or errored, with the score and the reason."""
        state, score, why = self._decision(result)
        reason, failed = self._explain(result, why, score)
        return CaseVerdict(state, score, reason, failed)

    def _decision(self, result: CaseResult) -> tuple[CaseState, float | None, _Why]:
        """The one place a case's state is decided, and which rule decided it (the reason is
        built from that by :meth:`_explain`, only when asked for)."""
        if result.agent_error is not None:
            return _ERRORED, None, _Why.AGENT_ERROR
        score = self.score_pct(result)
        required_failed = False
        for r in result.results.values():
            if r.errored:
                return _ERRORED, score, _Why.ERRORED
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
                return _ERRORED, score, _Why.ERRORED
            if state is VerdictState.FAILED:
                decided = outcome_failed = True
            elif state is VerdictState.PASSED:
                decided = True
        if self.pass_policy is PassMode.ALL_CHECKS:
            if required_failed or outcome_failed:
                return _FAILED, score, _Why.CHECKS_FAILED
            applied = decided
            for r in self._named(result):
                applied = True
                for v in r.details.values():
                    if v.state is _V_FAILED:
                        return _FAILED, score, _Why.CHECKS_FAILED
            if applied:
                return _PASSED, score, _Why.CHECKS_PASSED
            return _FAILED, score, _Why.NOTHING_APPLIED
        if required_failed:
            return _FAILED, score, _Why.REQUIRED_FAILED
        if outcome_failed:
            return _FAILED, score, _Why.OUTCOMES_FAILED
        if decided:
            return _PASSED, score, _Why.OUTCOMES_PASSED
        if score is None:
            return _FAILED, score, _Why.NO_SCORE
        if score < self.pass_threshold:
            return _FAILED, score, _Why.BELOW_THRESHOLD
        return _PASSED, score, _Why.AT_THRESHOLD

    def _explain(
        self, result: CaseResult, why: _Why, score: float | None
    ) -> tuple[str, tuple[str, ...]]:
        """The reason for the decision ``why`` names, and the checks behind a failure."""
        verdicts = result.verdicts
        if why is _Why.AGENT_ERROR:
            return f"agent error: {result.agent_error}", ()
        if why is _Why.ERRORED:
            errored = tuple(
                f"{name}: {v.error or v.reason}"
                for name, v in verdicts.items()
                if v.state is VerdictState.ERRORED
                and (name in self.outcome_checks or _in_errored_rubric(result, name))
            )
            return "errored: " + "; ".join(errored), errored
        if why in (_Why.CHECKS_FAILED, _Why.CHECKS_PASSED, _Why.NOTHING_APPLIED):
            return self._all_checks_reason(result, why)
        if why is _Why.REQUIRED_FAILED:
            required = tuple(
                f"{name}: {verdicts[name].reason}"
                for r in result.results.values()
                for name in r.required_failed
            )
            return "required check failed: " + "; ".join(required), required
        if why is _Why.OUTCOMES_FAILED:
            failed = tuple(
                f"{name}: {v.reason}"
                for name in self.outcome_checks
                if (v := verdicts.get(name)) is not None and v.state is VerdictState.FAILED
            )
            return "expected outcomes not met: " + "; ".join(failed), failed
        if why is _Why.OUTCOMES_PASSED:
            return "every expected outcome passed", ()
        if why is _Why.NO_SCORE:
            return "no rubric scored this case and no expected outcome applies", ()
        assert score is not None
        if why is _Why.AT_THRESHOLD:
            return f"score {score:.1f} >= pass threshold {self.pass_threshold:g}", ()
        failed = tuple(
            f"{name}: {v.reason}"
            for name, v in verdicts.items()
            if v.state is VerdictState.FAILED and _scored_here(self, result, name)
        )
        return f"score {score:.1f} < pass threshold {self.pass_threshold:g}", failed

    def _named(self, result: CaseResult) -> list[EvaluationResult]:
        """The scored results of the rubrics whose checks must all pass (``all_checks``)."""
        wanted = self.score_rubrics
        return [
            r
            for name, r in result.results.items()
            if r.status is _SCORED and (wanted is None or name in wanted)
        ]

    def _all_checks_reason(self, result: CaseResult, why: _Why) -> tuple[str, tuple[str, ...]]:
        # failures are named once, in rubric order, then required checks of the other
        # rubrics, then the expected outcomes
        failed: dict[str, str] = {}
        passed: set[str] = set()
        skipped: set[str] = set()
        verdicts = result.verdicts
        for r in self._named(result):
            for check, v in r.details.items():
                if v.state is _V_FAILED:
                    failed.setdefault(check, f"{check}: {v.reason}")
                elif v.state is _V_PASSED:
                    passed.add(check)
                else:
                    skipped.add(check)
        for r in result.results.values():
            for check in r.required_failed:
                failed.setdefault(check, f"{check}: {verdicts[check].reason}")
        for check in self.outcome_checks:
            outcome = verdicts.get(check)
            if outcome is not None and outcome.state is _V_FAILED:
                failed.setdefault(check, f"{check}: {outcome.reason}")
            elif outcome is not None and outcome.state is _V_PASSED:
                passed.add(check)
        if why is _Why.CHECKS_FAILED:
            what = tuple(failed.values())
            head = "1 check failed" if len(what) == 1 else f"{len(what)} checks failed"
            return f"{head}: " + "; ".join(what), what
        if why is _Why.NOTHING_APPLIED:
            return "no check applied to this case and no expected outcome", ()
        na = len(skipped - passed)
        tail = f", {na} not applicable" if na else ""
        return f"every applicable check passed ({len(passed)} passed{tail})", ()


class _Why(Enum):
    """Which rule of :meth:`PassPolicy._decision` decided a case."""

    AGENT_ERROR = auto()
    ERRORED = auto()
    REQUIRED_FAILED = auto()
    OUTCOMES_FAILED = auto()
    OUTCOMES_PASSED = auto()
    NO_SCORE = auto()
    BELOW_THRESHOLD = auto()
    AT_THRESHOLD = auto()
    CHECKS_FAILED = auto()
    CHECKS_PASSED = auto()
    NOTHING_APPLIED = auto()


def _in_errored_rubric(result: CaseResult, check: str) -> bool:
    return any(check in r.errored for r in result.results.values())


def _scored_here(policy: PassPolicy, result: CaseResult, check: str) -> bool:
    wanted = policy.score_rubrics
    return any(
        check in r.details and (wanted is None or name in wanted)
        for name, r in result.results.items()
        if r.status is ScoreStatus.SCORED
    )
