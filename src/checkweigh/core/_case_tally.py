"""Streaming counts behind the run's two pass dimensions (metrics and cases)."""

from __future__ import annotations

import hashlib

from ._case_pass import CaseState, CaseVerdict, PassPolicy
from ._partial import TallyPart
from ._reliability import Reliability, RepeatTally
from ._result import CaseResult
from ._stats import mean_interval
from ._summary import CaseGates, FailingCase

_FAILING = 20
_PASSED = CaseState.PASSED
_FAILED = CaseState.FAILED
_ERRORED = CaseState.ERRORED


def behaviour(result: CaseResult) -> object:
    """What the agent did on one try, comparable between tries: None for a recorded case (the
    same every try), else a digest of the trace and final state it produced (or its error)."""
    if result.agent_error is not None:
        return ("agent error", result.agent_error)
    if result.body is not None:  # scored as read: the same on every try
        return None
    case = result.case
    if case is None:
        return None
    dumped = case.model_dump_json(include={"trace", "final_state"})
    return hashlib.blake2b(dumped.encode(), digest_size=16).digest()


class CaseTally:
    """Streaming counts behind the run's two dimensions."""

    __slots__ = (
        "errored",
        "executions",
        "failed",
        "failing",
        "passed",
        "policy",
        "repeats",
        "score_n",
        "score_sq",
        "score_sum",
        "scores",
    )

    def __init__(self, policy: PassPolicy, *, repeats: bool = False, journal: bool = False) -> None:
        """``repeats``: also count each task's tries and passes, for pass@k and pass^k;
        ``journal``: keep every score in order, for :meth:`part` (then no ``repeats``)."""
        self.policy = policy
        self.repeats = RepeatTally() if repeats else None
        self.executions = 0
        self.passed = 0
        self.failed = 0
        self.errored = 0
        self.score_n = 0
        self.score_sum = 0.0
        self.score_sq = 0.0
        self.failing: list[FailingCase] = []
        self.scores: list[float] | None = [] if journal else None

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
        if self.repeats is not None:
            self.repeats.add(result.case_id, state is _PASSED, behaviour(result))
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
            self.score_sq += score * score
            if self.scores is not None:
                self.scores.append(score)

    def part(self) -> TallyPart:
        """The counts so far, for :meth:`merge` in another process (``journal`` only)."""
        assert self.scores is not None
        return TallyPart(
            self.executions, self.passed, self.failed, self.errored, self.scores, self.failing
        )

    def merge(self, part: TallyPart) -> None:
        """Count the executions behind ``part``, which came after those counted so far."""
        if self.repeats is not None:
            raise ValueError("a tally of repeated tasks takes executions one by one")
        self.executions += part.executions
        self.passed += part.passed
        self.failed += part.failed
        self.errored += part.errored
        self.score_n += len(part.scores)
        total, total_sq = self.score_sum, self.score_sq
        for score in part.scores:  # in order: float sums are not associative
            total += score
            total_sq += score * score
        self.score_sum, self.score_sq = total, total_sq
        room = _FAILING - len(self.failing)
        if room > 0:
            self.failing.extend(part.failing[:room])

    def reliability(self) -> Reliability | None:
        """pass@k, pass^k and flaky tasks (None unless tasks were repeated)."""
        return self.repeats.summary() if self.repeats is not None else None

    def gates(self) -> CaseGates:
        """The run's metrics and cases dimensions so far."""
        p = self.policy
        metrics = low = high = None
        if self.score_n:
            metrics = self.score_sum / self.score_n
            # the interval is computed on the 0-1 scale it clips to
            _, lo, hi = mean_interval(self.score_n, self.score_sum / 100, self.score_sq / 1e4)
            low, high = lo * 100, hi * 100
        rate = self.passed / self.executions * 100.0 if self.executions else 0.0
        return CaseGates(
            weighted_metrics_score_pct=metrics,
            weighted_metrics_score_low_pct=low,
            weighted_metrics_score_high_pct=high,
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
            pass_policy=p.pass_policy.value,
            case_pass_rule=p.describe(),
            failing=list(self.failing),
        )
