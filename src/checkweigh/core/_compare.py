"""Run-to-run comparison: suite-level regression thresholds, case-level flips and score changes,
per-check pass-rate changes, and paired significance tests so that judge noise on a small
suite reads as "not significant" rather than as a regression.

Executions are paired by (case id, repeat); each run's own snapshotted :class:`PassPolicy`
decides its cases. Cases in only one run are counted, not compared.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, Field

from ._case_pass import CaseState, CaseVerdict, PassPolicy
from ._result import CaseResult
from ._stats import mcnemar_exact, paired_bootstrap
from ._verdict import VerdictState


@dataclass(frozen=True, slots=True)
class CompareThresholds:
    """What counts as a regression (defaults from the seed), and the significance level."""

    max_pass_rate_drop: float = 0.0
    """Percentage points of case pass rate the candidate may lose."""
    max_avg_score_drop: float = 5.0
    """Points (0-100) of mean case score the candidate may lose."""
    max_latency_increase_pct: float = 20.0
    """Percent the mean latency may grow."""
    min_latency_increase_ms: float = 50.0
    """An increase below this many milliseconds is jitter, whatever its percentage (a fast
    local agent can double its 3 ms latency between two runs)."""
    case_score_delta: float = 5.0
    """Points a case's score must move, without a pass/fail flip, to count as changed."""
    alpha: float = 0.05
    """Significance level of the paired tests."""
    resamples: int = 4000
    """Bootstrap resamples."""
    seed: int = 0
    """Seed of the bootstrap, so a comparison is reproducible."""

    def __post_init__(self) -> None:
        for name in (
            "max_pass_rate_drop",
            "max_avg_score_drop",
            "max_latency_increase_pct",
            "min_latency_increase_ms",
        ):
            value = getattr(self, name)
            if not value >= 0 or math.isinf(value):
                raise ValueError(f"{name} must be a number >= 0, got {value!r}")
        if not self.case_score_delta >= 0:
            raise ValueError(f"case_score_delta must be >= 0, got {self.case_score_delta!r}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be between 0 and 1, got {self.alpha!r}")


class CaseChangeKind(StrEnum):
    """How one paired execution changed."""

    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    UNCHANGED = "unchanged"


class CaseChange(BaseModel):
    """One paired execution in both runs."""

    case_id: str
    repeat: int
    kind: CaseChangeKind
    base_state: str
    candidate_state: str
    base_score: float | None
    candidate_score: float | None
    flipped: bool
    """Pass/fail changed (errored counts as not passed)."""
    reason: str
    """The candidate's verdict reason (for regressions: what now fails)."""


class SuiteDelta(BaseModel):
    """One suite-level figure in both runs."""

    metric: str
    base: float | None
    candidate: float | None
    change: float | None
    """candidate - base (percent change for latency)."""
    allowed: float
    """The threshold on the drop (or increase, for latency)."""
    exceeded: bool
    """The change went past the threshold: the seed's ``regression_detected``."""
    p_value: float | None
    """The paired test's p-value (None: no test applies)."""
    test: str
    """Which test: exact McNemar, paired bootstrap."""


class CheckDelta(BaseModel):
    """A check's pass rate in both runs, over the paired executions where it decided."""

    check: str
    base_rate: float | None
    candidate_rate: float | None
    change: float | None
    worse: int
    """Executions where it went passed -> failed."""
    better: int
    """Executions where it went failed -> passed."""
    p_value: float
    """Exact McNemar on those flips."""


class CompareVerdict(StrEnum):
    """The comparison's conclusion."""

    REGRESSION = "regression"
    """A threshold was exceeded and the change is significant (or --strict)."""
    NOT_SIGNIFICANT = "not_significant"
    """A threshold was exceeded, but the paired test cannot tell it from noise."""
    NO_REGRESSION = "no_regression"


class Comparison(BaseModel):
    """Everything ``checkweigh compare`` reports."""

    paired: int
    only_base: int
    only_candidate: int
    suite: list[SuiteDelta]
    regression_detected: bool
    """Some suite-level threshold was exceeded (the seed's flag, before significance)."""
    significant: bool
    """Some exceeded threshold is backed by a paired test with p < alpha."""
    verdict: CompareVerdict
    alpha: float
    strict: bool
    regressions: list[CaseChange] = Field(default_factory=list)
    improvements: list[CaseChange] = Field(default_factory=list)
    unchanged: int = 0
    checks: list[CheckDelta] = Field(default_factory=list)
    judged_differently: list[str] = Field(default_factory=list)
    """How the two runs' verdicts were decided differently (another judge, judge mode or check
    version): a change may then be the judge's, not the agent's. Empty when alike."""


def _passed(v: CaseVerdict) -> bool:
    return v.state is CaseState.PASSED


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _classify(
    b: CaseResult, bv: CaseVerdict, c: CaseResult, cv: CaseVerdict, t: CompareThresholds
) -> CaseChange:
    flipped = _passed(bv) != _passed(cv)
    kind = CaseChangeKind.UNCHANGED
    if flipped:
        kind = CaseChangeKind.REGRESSION if _passed(bv) else CaseChangeKind.IMPROVEMENT
    elif bv.score_pct is not None and cv.score_pct is not None:
        delta = cv.score_pct - bv.score_pct
        if abs(delta) > t.case_score_delta:
            kind = CaseChangeKind.IMPROVEMENT if delta > 0 else CaseChangeKind.REGRESSION
    return CaseChange(
        case_id=c.case_id,
        repeat=c.repeat,
        kind=kind,
        base_state=bv.state.value,
        candidate_state=cv.state.value,
        base_score=bv.score_pct,
        candidate_score=cv.score_pct,
        flipped=flipped,
        reason=cv.reason,
    )


def _check_deltas(pairs: list[tuple[CaseResult, CaseResult]]) -> list[CheckDelta]:
    counts: dict[str, list[int]] = {}  # base passed, base decided, cand passed, cand decided,
    # worse, better
    decided = (VerdictState.PASSED, VerdictState.FAILED)
    for b, c in pairs:
        for name, bv in b.verdicts.items():
            cv = c.verdicts.get(name)
            if cv is None:
                continue
            slot = counts.setdefault(name, [0, 0, 0, 0, 0, 0])
            if bv.state in decided:
                slot[0] += bv.state is VerdictState.PASSED
                slot[1] += 1
            if cv.state in decided:
                slot[2] += cv.state is VerdictState.PASSED
                slot[3] += 1
            if bv.state is VerdictState.PASSED and cv.state is VerdictState.FAILED:
                slot[4] += 1
            elif bv.state is VerdictState.FAILED and cv.state is VerdictState.PASSED:
                slot[5] += 1
    out = []
    for name, (bp, bn, cp, cn, worse, better) in counts.items():
        base = bp / bn if bn else None
        cand = cp / cn if cn else None
        change = cand - base if base is not None and cand is not None else None
        out.append(
            CheckDelta(
                check=name,
                base_rate=base,
                candidate_rate=cand,
                change=change,
                worse=worse,
                better=better,
                p_value=mcnemar_exact(worse, better),
            )
        )
    out.sort(key=lambda d: (d.change if d.change is not None else 0.0, d.check))
    return out


def compare_runs(
    base: Iterable[CaseResult],
    candidate: Iterable[CaseResult],
    *,
    base_policy: PassPolicy,
    candidate_policy: PassPolicy,
    thresholds: CompareThresholds | None = None,
    strict: bool = False,
) -> Comparison:
    """Compare two runs' results (see the module docstring)."""
    t = thresholds or CompareThresholds()
    base_by_key = {(r.case_id, r.repeat): r for r in base}
    pairs: list[tuple[CaseResult, CaseResult]] = []
    only_candidate = 0
    for r in candidate:
        b = base_by_key.pop((r.case_id, r.repeat), None)
        if b is None:
            only_candidate += 1
        else:
            pairs.append((b, r))
    only_base = len(base_by_key)

    changes: list[CaseChange] = []
    base_pass = cand_pass = worse = better = 0
    score_pairs: list[tuple[float, float]] = []
    latency_pairs: list[tuple[float, float]] = []
    for b, c in pairs:
        bv, cv = base_policy.decide(b), candidate_policy.decide(c)
        changes.append(_classify(b, bv, c, cv, t))
        base_pass += _passed(bv)
        cand_pass += _passed(cv)
        if _passed(bv) and not _passed(cv):
            worse += 1
        elif _passed(cv) and not _passed(bv):
            better += 1
        # "cases that produced a verdict": errored executions have no score to compare
        if (
            bv.score_pct is not None
            and cv.score_pct is not None
            and CaseState.ERRORED not in (bv.state, cv.state)
        ):
            score_pairs.append((bv.score_pct, cv.score_pct))
        if b.latency_ms is not None and c.latency_ms is not None:
            latency_pairs.append((b.latency_ms, c.latency_ms))

    rng = random.Random(t.seed)
    n = len(pairs)
    suite: list[SuiteDelta] = []
    base_rate = base_pass / n * 100.0 if n else None
    cand_rate = cand_pass / n * 100.0 if n else None
    rate_change = cand_rate - base_rate if base_rate is not None and cand_rate is not None else None
    suite.append(
        SuiteDelta(
            metric="case pass rate (%)",
            base=base_rate,
            candidate=cand_rate,
            change=rate_change,
            allowed=t.max_pass_rate_drop,
            exceeded=rate_change is not None and -rate_change > t.max_pass_rate_drop + 1e-9,
            p_value=mcnemar_exact(worse, better) if n else None,
            test=f"exact McNemar on {worse} pass->fail, {better} fail->pass",
        )
    )
    base_avg = _mean([s for s, _ in score_pairs])
    cand_avg = _mean([s for _, s in score_pairs])
    score_change = cand_avg - base_avg if base_avg is not None and cand_avg is not None else None
    boot = paired_bootstrap([c - b for b, c in score_pairs], rng, t.resamples)
    suite.append(
        SuiteDelta(
            metric="average case score",
            base=base_avg,
            candidate=cand_avg,
            change=score_change,
            allowed=t.max_avg_score_drop,
            exceeded=score_change is not None and -score_change > t.max_avg_score_drop + 1e-9,
            p_value=boot.p_value if score_pairs else None,
            test=f"paired bootstrap over {len(score_pairs)} cases, 95% CI of the change "
            f"[{boot.low:+.1f}, {boot.high:+.1f}]",
        )
    )
    base_ms = _mean([b for b, _ in latency_pairs])
    cand_ms = _mean([c for _, c in latency_pairs])
    pct: float | None = None
    if base_ms is not None and cand_ms is not None and base_ms > 0:
        pct = (cand_ms - base_ms) / base_ms * 100.0
    lat = paired_bootstrap([c - b for b, c in latency_pairs], rng, t.resamples)
    suite.append(
        SuiteDelta(
            metric="mean latency (ms)",
            base=base_ms,
            candidate=cand_ms,
            change=pct,
            allowed=t.max_latency_increase_pct,
            exceeded=pct is not None
            and pct > t.max_latency_increase_pct + 1e-9
            and cand_ms is not None
            and base_ms is not None
            and cand_ms - base_ms >= t.min_latency_increase_ms,
            p_value=lat.p_value if latency_pairs else None,
            test=f"paired bootstrap over {len(latency_pairs)} executions; increases under "
            f"{t.min_latency_increase_ms:g} ms are not counted",
        )
    )
    exceeded = [d for d in suite if d.exceeded]
    significant = any(d.p_value is not None and d.p_value < t.alpha for d in exceeded)
    if not exceeded:
        verdict = CompareVerdict.NO_REGRESSION
    elif significant or strict:
        verdict = CompareVerdict.REGRESSION
    else:
        verdict = CompareVerdict.NOT_SIGNIFICANT
    regressions = [c for c in changes if c.kind is CaseChangeKind.REGRESSION]
    improvements = [c for c in changes if c.kind is CaseChangeKind.IMPROVEMENT]
    regressions.sort(key=lambda c: (not c.flipped, c.case_id, c.repeat))
    improvements.sort(key=lambda c: (not c.flipped, c.case_id, c.repeat))
    return Comparison(
        paired=n,
        only_base=only_base,
        only_candidate=only_candidate,
        suite=suite,
        regression_detected=bool(exceeded),
        significant=significant,
        verdict=verdict,
        alpha=t.alpha,
        strict=strict,
        regressions=regressions,
        improvements=improvements,
        unchanged=len(changes) - len(regressions) - len(improvements),
        checks=_check_deltas(pairs),
    )
